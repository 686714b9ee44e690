//! The recorder's one writing task ([`Writer`]): fills batches from the
//! queue, writes each in one transaction, retries an unreachable database
//! with backoff, isolates what the database refuses, appends what was new to
//! the JSONL log, writes the per-tool aggregate of what was dropped, and
//! drains within the shutdown deadline (see the parent module). A batch
//! whose COMMIT's outcome is unknown is reported once on its retry, whether
//! or not it landed ([`UnsureCommits`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::{Next, Observer, Pending, Queued, SHUTDOWN_DEADLINE, Shared, UnsureCommits, fold};
use crate::aggregate::DroppedFlush;
use crate::event::Event;
use crate::jsonl::{JsonlError, JsonlSink};
use crate::stop::Stop;
use crate::store::Store;
use crate::write::{BatchError, Outcome};

pub(super) const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Refusals of one batch before its events are written one by one.
const REJECTIONS_BEFORE_ISOLATING: u32 = 2;

pub(super) struct Writer {
    pub(super) rx: mpsc::Receiver<Queued>,
    pub(super) close: watch::Receiver<bool>,
    pub(super) store: Option<Store>,
    pub(super) jsonl: Option<JsonlSink>,
    pub(super) observer: Arc<dyn Observer>,
    pub(super) shared: Arc<Shared>,
    pub(super) batch_max: usize,
    /// The most events the next batch holds: `batch_max`, less after a
    /// batch stopped by the statement timeout ([`Writer::flush`]).
    pub(super) batch_limit: usize,
    pub(super) backlog_max: usize,
    pub(super) flush_interval: Duration,
    pub(super) pending: Pending,
    pub(super) closing: bool,
    /// When closing began + [`super::SHUTDOWN_RETRY`]: past it, an unreachable
    /// database makes the writer give up (and count the loss).
    pub(super) give_up_at: Option<Instant>,
    /// Folded counts whose write failed and may have committed, written
    /// again under the same flush id ([`Writer::write_aggregate`]).
    pub(super) unsure: Option<DroppedFlush>,
    /// What attempts whose COMMIT may have landed found for the pending
    /// events in front, for their next write ([`Writer::write`]).
    pub(super) unsure_commits: UnsureCommits,
    /// Whether the last append to the JSONL log failed.
    pub(super) jsonl_failing: bool,
    /// After a failed write of folded counts: not before this instant
    /// again (backing off as a batch does), unless closing.
    pub(super) aggregate_retry_at: Option<Instant>,
    /// The wait after the next failed write of folded counts.
    pub(super) aggregate_backoff: Duration,
}

// === impl Writer ===

impl Writer {
    pub(super) async fn run(mut self) {
        loop {
            if self.pending.is_empty() && !self.closing {
                // Folded counts waiting: come back for them within a flush interval.
                let waiting = !self.shared.agg.is_empty() || self.unsure.is_some();
                let until = waiting.then(|| {
                    let soon = Instant::now() + self.flush_interval;
                    self.aggregate_retry_at.map_or(soon, |t| t.max(soon))
                });
                match self.next(until).await {
                    Next::Event(e) => self.take(e),
                    Next::Closing => self.set_closing(),
                    Next::Timeout => {}
                }
            }
            self.fill().await;
            self.flush().await;
            self.write_aggregate().await;
            if self.closing && self.pending.is_empty() {
                break;
            }
        }
        // Late `record` calls after this point are dropped and counted.
        self.rx.close();
        self.set_closing();
        self.drain_ready();
        while !self.pending.is_empty() {
            self.flush().await;
        }
        self.write_aggregate().await;
        self.put_back_unsure();
    }

    /// Appends the folded counts to the store when there is room (nothing
    /// pending in detail beyond a batch), within the shutdown deadline; on
    /// failure they are put back for the next time, except when the
    /// database refuses them: then row by row ([`Writer::write_aggregate_rows`]).
    /// Without a store there is nowhere to write them: they were counted
    /// and observed.
    ///
    /// A write that failed otherwise may have committed (the connection
    /// lost around the commit): its rows are written again as they were,
    /// under the same [`DroppedFlush`] id, before anything folded since,
    /// so that they count once either way. It is tried again after a
    /// backoff (100 ms doubling to 5 s, as a batch), not at every turn of
    /// the writer: a database that takes no writes would otherwise cost an
    /// error (logged, counted) every flush interval for as long as it
    /// lasts. The shutdown's drain does not wait for it.
    async fn write_aggregate(&mut self) {
        if (self.shared.agg.is_empty() && self.unsure.is_none())
            || self.pending.len() >= self.batch_max
        {
            return;
        }
        let Some(store) = self.store.clone() else {
            self.shared.agg.take();
            self.unsure = None;
            return;
        };
        if self.give_up_at.is_some_and(|t| Instant::now() >= t) {
            self.put_back_unsure();
            return;
        }
        if !self.closing && self.aggregate_retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        let flush = match self.unsure.take() {
            Some(flush) => flush,
            None => DroppedFlush::new(self.shared.agg.take()),
        };
        match self.write_dropped_by_deadline(&store, &flush).await {
            Some(Ok(())) => {}
            Some(Err(e)) if e.is_rejected() => {
                self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "the database refuses the counts of dropped events; writing them row by row");
                self.write_aggregate_rows(&store, flush).await;
            }
            Some(Err(e)) => {
                self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "cannot write the counts of dropped events; will retry");
                self.unsure = Some(flush);
            }
            None => self.shared.agg.restore(flush.into_rows()),
        }
        if self.unsure.is_some() {
            self.aggregate_retry_at = Some(Instant::now() + self.aggregate_backoff);
            self.aggregate_backoff = (self.aggregate_backoff * 2).min(BACKOFF_MAX);
        } else {
            self.aggregate_retry_at = None;
            self.aggregate_backoff = BACKOFF_MIN;
        }
    }

    /// Past the deadline, or at the end: counts whose write may have
    /// failed go back to the aggregate, which the shutdown report lists as
    /// not written.
    fn put_back_unsure(&mut self) {
        if let Some(flush) = self.unsure.take() {
            self.shared.agg.restore(flush.into_rows());
        }
    }

    /// Writes folded counts that the database refused together one row at a
    /// time, so that a row it refuses (dropped, logged, counted in
    /// `write_errors`) does not keep the others out for good: retried
    /// together, they would be refused together at every turn. Any other
    /// failure, or the deadline, puts back the rows not written yet.
    async fn write_aggregate_rows(&mut self, store: &Store, flush: DroppedFlush) {
        let DroppedFlush { id, rows } = flush;
        let mut rows = rows.into_iter();
        while let Some((no, row)) = rows.next() {
            let one = DroppedFlush {
                id: id.clone(),
                rows: vec![(no, row)],
            };
            match self.write_dropped_by_deadline(store, &one).await {
                Some(Ok(())) => {}
                Some(Err(e)) if e.is_rejected() => {
                    let row = &one.rows[0].1;
                    self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(
                        error = %e,
                        tool = row.tool.as_str(),
                        calls = row.counts.calls,
                        failures = row.counts.failures,
                        "the database refuses these counts of dropped events: lost"
                    );
                }
                Some(Err(e)) => {
                    self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "cannot write the counts of dropped events; will retry");
                    self.unsure = Some(DroppedFlush {
                        id,
                        rows: one.rows.into_iter().chain(rows).collect(),
                    });
                    return;
                }
                None => {
                    let left = one.rows.into_iter().chain(rows).map(|(_, r)| r);
                    self.shared.agg.restore(left.collect());
                    return;
                }
            }
        }
    }

    /// [`Store::write_dropped`], abandoned at the shutdown deadline (`None`),
    /// also when the shutdown begins during the write.
    async fn write_dropped_by_deadline(
        &mut self,
        store: &Store,
        flush: &DroppedFlush,
    ) -> Option<Result<(), crate::StoreError>> {
        let mut passing = std::pin::pin!(self.deadline_passing());
        let out = store
            .write_dropped_before(flush, &mut Stop::at(passing.as_mut()))
            .await;
        self.settle(out)
    }

    fn set_closing(&mut self) {
        if !self.closing {
            self.closing = true;
            self.give_up_at = Some(Self::deadline(&self.shared));
        }
    }

    /// Closing when the close signal was sent (a write or a wait that ended
    /// meanwhile did not see it).
    fn see_closing(&mut self) {
        if *self.close.borrow() {
            self.set_closing();
        }
    }

    /// Past the shutdown deadline: drops (counts) everything pending.
    fn abandon(&mut self, why: &str) {
        let lost = self.pending.len() as u64;
        tracing::error!(
            lost,
            "{why}: the events not written are dropped (counted in events_dropped)"
        );
        for q in self.pending.drain() {
            fold(&self.shared, &*self.observer, &q.event, q.call_known);
        }
        self.unsure_commits.forget(usize::MAX);
        self.shared.in_hand.fetch_sub(lost, Ordering::Relaxed);
        self.shared.dropped.fetch_add(lost, Ordering::Relaxed);
    }

    /// The shutdown deadline: the instant `shutdown_within` fixed, else
    /// (the handles went away without it) [`SHUTDOWN_DEADLINE`] from now.
    fn deadline(shared: &Shared) -> Instant {
        *shared
            .give_up_at
            .get_or_init(|| Instant::now() + SHUTDOWN_DEADLINE)
    }

    /// The shutdown deadline passing: `give_up_at` when closing already,
    /// else pending until the close signal, then until the deadline (for
    /// good if the handles went away without a shutdown: then the queue's
    /// closing ends the wait instead). The deadline is one instant for the
    /// whole drain, whenever the work raced against it began.
    fn deadline_passing(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let give_up_at = self.give_up_at;
        let mut close = self.close.clone();
        let shared = self.shared.clone();
        async move {
            let t = match give_up_at {
                Some(t) => t,
                None => {
                    if close.wait_for(|c| *c).await.is_err() {
                        std::future::pending::<()>().await;
                    }
                    Self::deadline(&shared)
                }
            };
            tokio::time::sleep_until(t).await;
        }
    }

    /// `work`, abandoned at the shutdown deadline: `None` when the deadline
    /// passed first (also for work that began before shutdown did). Only
    /// for work that may stop anywhere (a wait); a write stops short of its
    /// COMMIT instead ([`Writer::write_by_deadline`]).
    async fn by_deadline<T>(&mut self, work: impl std::future::Future<Output = T>) -> Option<T> {
        let mut passing = std::pin::pin!(self.deadline_passing());
        let out = Stop::at(passing.as_mut()).before(work).await;
        self.settle(out)
    }

    /// `write`, abandoned at the shutdown deadline up to its COMMIT, never
    /// during it ([`Stop`]): `None` when nothing of it was written. A
    /// COMMIT on the way when the deadline passes is awaited to its answer,
    /// so what the shutdown reports as written is what the database holds.
    async fn write_by_deadline(
        &mut self,
        batch: &mut [Event],
    ) -> Option<Result<(), crate::StoreError>> {
        let mut passing = std::pin::pin!(self.deadline_passing());
        let out = self.write(batch, &mut Stop::at(passing.as_mut())).await;
        self.settle(out)
    }

    /// After work against the deadline: closing once the deadline passed
    /// (`None`) or the close signal came meanwhile.
    fn settle<T>(&mut self, out: Option<T>) -> Option<T> {
        match out {
            Some(_) => self.see_closing(),
            None => self.set_closing(),
        }
        out
    }

    /// The next event, the shutdown signal, or `until` passing (or
    /// counts folded into an empty aggregate: a timeout, to write them).
    async fn next(&mut self, until: Option<Instant>) -> Next {
        let timer = async {
            match until {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            e = self.rx.recv() => match e {
                Some(e) => Next::Event(e),
                None => Next::Closing,
            },
            _ = self.close.wait_for(|c| *c) => Next::Closing,
            _ = timer => Next::Timeout,
            _ = self.shared.folded.notified() => Next::Timeout,
        }
    }

    fn take(&mut self, q: Queued) {
        self.pending.push_back(q);
        self.shared.in_hand.fetch_add(1, Ordering::Relaxed);
    }

    /// Waits up to `flush_interval` for a full batch; when closing, takes
    /// everything queued without waiting. It does not wake per event, nor
    /// in slices: it sleeps until the interval ends or `record` says a
    /// batch's worth is held, queued and in hand, or the queue is half
    /// full (`Shared::filled`), so a batch costs the writer two wake-ups
    /// (its first event, then the end of its interval or a full batch)
    /// whatever the traffic, each a cross-thread wake-up. (It slept in
    /// 10 ms slices before: twenty wake-ups a batch, about one in eight of
    /// the recording threads' context switches at one connection;
    /// BENCHMARKS.md, "One connection at full speed".)
    async fn fill(&mut self) {
        let deadline = Instant::now() + self.flush_interval;
        loop {
            while self.pending.len() < self.batch_max && self.take_ready(self.batch_max) > 0 {}
            if self.pending.len() >= self.batch_max || self.closing {
                break;
            }
            if Instant::now() >= deadline {
                break;
            }
            let closing = tokio::select! {
                biased;
                _ = self.close.wait_for(|c| *c) => true,
                _ = self.shared.filled.notified() => false,
                _ = tokio::time::sleep_until(deadline) => false,
            };
            if closing {
                self.set_closing();
            }
        }
        if self.closing {
            self.drain_ready();
        }
    }

    /// Takes what is queued right now (all of it when closing, else up to
    /// the backlog bound).
    fn drain_ready(&mut self) {
        let bound = if self.closing {
            usize::MAX
        } else {
            self.backlog_max
        };
        while self.take_ready(bound) > 0 {}
    }

    /// Moves up to 256 queued events into `pending` while it holds fewer
    /// than `bound`; how many it took.
    fn take_ready(&mut self, bound: usize) -> usize {
        let mut n = 0;
        while n < 256 && self.pending.len() < bound {
            match self.rx.try_recv() {
                Ok(q) => self.pending.push_back(q),
                Err(_) => break,
            }
            n += 1;
        }
        self.shared.in_hand.fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Once a backlog is written, gives back what it had grown to: a
    /// `VecDeque` never shrinks by itself, and one stall would otherwise
    /// keep up to `queue_capacity` events' worth of memory for the rest
    /// of the process's life.
    fn release_backlog(&mut self) {
        self.pending.release(self.batch_max);
    }

    /// Writes the pending events batch by batch; on failure backs off and
    /// retries, taking new events into the backlog meanwhile. Past
    /// `give_up_at` (closing), drops what is left (counted).
    ///
    /// A batch stopped by PostgreSQL's `statement_timeout`, or left
    /// without an answer past the writer's deadline, is retried as half as
    /// many events (down to one): retried whole, a batch too large
    /// to finish in time would time out at every turn and recording would
    /// stall for good. Each batch written doubles the size again, up to
    /// `batch_max`. Nothing is dropped for it.
    async fn flush(&mut self) {
        let mut backoff = BACKOFF_MIN;
        let mut rejected = 0;
        while !self.pending.is_empty() {
            let n = self.pending.len().min(self.batch_limit);
            if rejected >= REJECTIONS_BEFORE_ISOLATING {
                // The database refuses something in this batch: write its
                // events one by one and drop (count) only those refused.
                self.isolate(n).await;
                rejected = 0;
                continue;
            }
            // Written in place (no copy of the events): `write` gets a slice
            // of `pending`, never adds or removes events.
            let mut pending = std::mem::take(&mut self.pending);
            let result = self.write_by_deadline(pending.front_mut(n)).await;
            self.pending = pending;
            let Some(result) = result else {
                self.abandon("shutdown deadline passed while writing");
                return;
            };
            match result {
                Ok(()) => {
                    self.pending.remove_front(n);
                    self.shared.in_hand.fetch_sub(n as u64, Ordering::Relaxed);
                    self.shared.written.fetch_add(n as u64, Ordering::Relaxed);
                    backoff = BACKOFF_MIN;
                    self.batch_limit = self.batch_limit.saturating_mul(2).min(self.batch_max);
                    if !self.closing && self.pending.len() < self.batch_max {
                        self.release_backlog();
                        return;
                    }
                }
                Err(e) => {
                    self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                    if e.is_rejected() {
                        rejected += 1;
                    }
                    if e.is_too_slow() {
                        self.batch_limit = (n / 2).max(1);
                    }
                    if self.give_up_at.is_some_and(|t| Instant::now() >= t) {
                        tracing::error!(error = %e, "database unreachable at shutdown");
                        self.abandon("shutdown deadline passed");
                        return;
                    }
                    tracing::warn!(
                        error = %e,
                        retry_in_ms = backoff.as_millis() as u64,
                        backlog = self.pending.len(),
                        "recording failed; will retry"
                    );
                    let wake = Instant::now() + backoff;
                    while self.pending.len() < self.backlog_max && !self.closing {
                        match self.next(Some(wake)).await {
                            Next::Event(e) => self.take(e),
                            Next::Closing => self.set_closing(),
                            Next::Timeout => break,
                        }
                    }
                    // The rest of the backoff, cut short by the deadline:
                    // also one that a shutdown beginning now sets.
                    let wake = self.give_up_at.map_or(wake, |t| wake.min(t));
                    self.by_deadline(tokio::time::sleep_until(wake)).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
    }

    /// Writes the first `n` pending events one by one; an event the
    /// database refuses is dropped and counted, any other failure leaves the
    /// rest pending for the normal retry.
    async fn isolate(&mut self, n: usize) {
        for _ in 0..n {
            let Some(mut q) = self.pending.pop_front() else {
                return;
            };
            let Some(result) = self
                .write_by_deadline(std::slice::from_mut(&mut q.event))
                .await
            else {
                self.pending.push_front(q);
                self.abandon("shutdown deadline passed while writing");
                return;
            };
            match result {
                Ok(()) => self.shared.written.fetch_add(1, Ordering::Relaxed),
                Err(e) if e.is_rejected() => {
                    tracing::error!(error = %e, kind = q.event.kind(), "the database refuses this event: dropped");
                    self.unsure_commits.forget(1);
                    fold(&self.shared, &*self.observer, &q.event, q.call_known);
                    self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                    self.shared.dropped.fetch_add(1, Ordering::Relaxed)
                }
                Err(_) => {
                    self.pending.push_front(q);
                    return;
                }
            };
            self.shared.in_hand.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// One batch: the store (one transaction), then the observer and JSONL
    /// for what was new. JSONL failures are counted, not retried. Once the
    /// store has taken the batch, a new result gets its resolved tool and
    /// execution time in place (the batch is written; its events go next),
    /// so the JSONL lines are written from the batch itself, not from copies.
    /// No await point follows the store's: a write cut off at the shutdown
    /// deadline has left its events as they were.
    ///
    /// A write whose COMMIT failed may have landed: what its statements
    /// found is kept, and the next write of the same events (the retry)
    /// reports it if it did, else what the retry found
    /// ([`UnsureCommits`]), so each new event is reported once.
    async fn write(
        &mut self,
        batch: &mut [Event],
        stop: &mut Stop<'_>,
    ) -> Option<Result<(), crate::StoreError>> {
        let outcomes = match &self.store {
            Some(store) => match store
                .write_batch(batch, &self.unsure_commits.to_ask(batch), stop)
                .await
            {
                Ok(found) => self.unsure_commits.committed(batch, found),
                Err(BatchError::Unsure { error, found }) => {
                    self.unsure_commits.unsure(batch, found);
                    return Some(Err(error));
                }
                Err(BatchError::Failed(error)) => return Some(Err(error)),
                Err(BatchError::Stopped) => return None,
            },
            None => batch
                .iter()
                .map(|e| match e {
                    Event::ToolResult(r) => Outcome::NewResult {
                        tool: r.tool.clone().unwrap_or_else(|| "unknown".to_owned()),
                        exec_ms: r.exec_ms,
                    },
                    _ => Outcome::New,
                })
                .collect(),
        };
        let mut fresh: Vec<&Event> = Vec::new();
        for (event, outcome) in batch.iter_mut().zip(outcomes) {
            match (&mut *event, outcome) {
                (_, Outcome::Duplicate) => continue,
                (Event::Request(r), _) => self.observer.on_request(r),
                (Event::ToolCall(c), _) => self.observer.on_tool_call(c),
                (Event::ToolResult(r), Outcome::NewResult { tool, exec_ms }) => {
                    self.observer.on_tool_result_timed(r, &tool, exec_ms);
                    r.tool = Some(tool);
                    r.exec_ms = exec_ms;
                }
                (Event::ToolResult(r), Outcome::New) => self.observer.on_tool_result(r, "unknown"),
            }
            if self.jsonl.is_some() {
                fresh.push(event);
            }
        }
        if let Some(sink) = &mut self.jsonl {
            let lines = fresh.len() as u64;
            let in_log = match sink.write(fresh.into_iter()) {
                Err(JsonlError::Append { error: e, appended }) => {
                    self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                    self.shared
                        .jsonl_lines_lost
                        .fetch_add(lines.saturating_sub(appended), Ordering::Relaxed);
                    // Logged once per outage (a full disk fails every batch).
                    if !std::mem::replace(&mut self.jsonl_failing, true) {
                        tracing::error!(error = %e, "cannot append to the JSONL log; its lines are lost until it can (counted in toolwarden_jsonl_lines_lost_total)");
                    }
                    false
                }
                Err(JsonlError::Rotate(e)) => {
                    // The lines are in the live file; the rotation is tried
                    // again once it has grown by another bound.
                    self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(error = %e, "cannot rotate the JSONL log; its lines go on to the live file");
                    true
                }
                Ok(()) => true,
            };
            if in_log && std::mem::replace(&mut self.jsonl_failing, false) {
                tracing::info!("the JSONL log is written again");
            }
            self.shared
                .jsonl_rotations
                .store(sink.rotations(), Ordering::Relaxed);
        }
        Some(Ok(()))
    }
}
