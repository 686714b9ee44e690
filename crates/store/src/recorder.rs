//! [`Recorder`]: takes events on the request path without ever blocking
//! (`try_send` into a bounded queue; full → dropped and counted) and writes
//! them from one task, in batches, each in one transaction.
//!
//! The writer takes up to `batch_max` events, or what arrived within
//! `flush_interval` of the first, writes them in order (a call and its result
//! in one batch pair up), then appends the events that were new to the store
//! to the JSONL log and tells the [`Observer`]. When the database is lost it
//! keeps the batch, retries with backoff (100 ms doubling to 5 s) and keeps
//! taking events into a backlog of at most `queue_capacity`; beyond that the
//! queue fills and `record` drops, counted in `events_dropped`.
//! A batch the database refuses twice for its content (not for being
//! unreachable) is written event by event, and only the refused events are
//! dropped and counted. [`Recorder::shutdown`] drains the queue and writes
//! everything it can within a deadline ([`SHUTDOWN_DEADLINE`] by default,
//! [`Recorder::shutdown_within`] to choose): past it, a write still running
//! is abandoned (its transaction rolls back), the events not written are
//! counted as dropped and reported, and shutdown returns: a slow or
//! unreachable database never holds it longer.
//!
//! What cannot be written in detail (queue full, refused, past the
//! deadline) is still counted per tool: folded into a bounded
//! [`Aggregate`] that the writer appends to `dropped_tool_counts` whenever
//! it has room, and told to the [`Observer`] at once (see `aggregate`).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::aggregate::{Aggregate, DEFAULT_AGGREGATE_KEYS, DroppedCounts};
use crate::event::{Event, RequestRecord, ToolCallRecord, ToolResultRecord};
use crate::jsonl::JsonlSink;
use crate::store::Store;
use crate::write::Outcome;

/// How long [`Recorder::shutdown`] keeps writing (or retrying an
/// unreachable database) before it gives up on what is left.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(5);
/// How long `shutdown` keeps retrying an unreachable database (the default
/// deadline; kept for callers of the earlier name).
pub const SHUTDOWN_RETRY: Duration = SHUTDOWN_DEADLINE;
/// What `shutdown` waits beyond its deadline for the writer to stop (it is
/// told to give up at the deadline; this covers its last bookkeeping).
const SHUTDOWN_SLACK: Duration = Duration::from_millis(500);
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Refusals of one batch before its events are written one by one.
const REJECTIONS_BEFORE_ISOLATING: u32 = 2;
/// Longest sleep while a batch fills (see `Writer::fill`).
const FILL_SLICE: Duration = Duration::from_millis(10);

/// Recorder settings.
#[derive(Debug, Clone)]
pub struct RecorderOptions {
    /// Bound of the queue, and of the writer's backlog while the database is away (65536).
    pub queue_capacity: usize,
    /// Events per transaction at most (1024).
    pub batch_max: usize,
    /// How long the writer waits to fill a batch (50 ms).
    pub flush_interval: Duration,
    /// Append new events to this JSONL file.
    pub jsonl: Option<PathBuf>,
}

/// Told about each call and result that was new to the store (after dedup
/// and name resolution), in write order. Called on the writer task: keep it cheap.
pub trait Observer: Send + Sync + 'static {
    /// A new request.
    fn on_request(&self, _rec: &RequestRecord) {}
    /// A new tool call.
    fn on_tool_call(&self, _rec: &ToolCallRecord) {}
    /// A new tool result and the tool name it was resolved to.
    fn on_tool_result(&self, _rec: &ToolResultRecord, _resolved_tool: &str) {}
    /// [`Observer::on_tool_result`] with the result's execution time (ms)
    /// as the store computed it, when known; by default calls `on_tool_result`.
    fn on_tool_result_timed(
        &self,
        rec: &ToolResultRecord,
        resolved_tool: &str,
        _exec_ms: Option<f64>,
    ) {
        self.on_tool_result(rec, resolved_tool);
    }
}

/// An [`Observer`] that does nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopObserver;

impl Observer for NoopObserver {}

/// A snapshot of the recorder's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecorderCounters {
    /// Events in committed batches (duplicates included: they were applied, as no-ops).
    pub events_written: u64,
    /// Events lost: queue full, or given up at shutdown.
    pub events_dropped: u64,
    /// Failed write attempts (each retried).
    pub write_errors: u64,
    /// Events accepted and not yet written (queued or held by the writer).
    pub backlog: u64,
    /// Of the dropped events, those folded into the per-tool aggregate
    /// (requests are only counted, not folded).
    pub events_aggregated: u64,
    /// Of those, folded into the `(other)` key: the aggregate was full.
    pub aggregate_overflow: u64,
}

/// The recording handle. Cheap to clone; all clones feed one writer task.
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::Sender<Event>,
    shared: Arc<Shared>,
    observer: Arc<dyn Observer>,
    close: Arc<watch::Sender<bool>>,
    done: watch::Receiver<bool>,
}

/// What the writer's wait ended with (short-lived; boxing would cost an
/// allocation per event).
#[allow(clippy::large_enum_variant)]
enum Next {
    Event(Event),
    Closing,
    Timeout,
}

#[derive(Debug)]
struct Shared {
    /// Per-tool counts of what could not be written in detail.
    agg: Aggregate,
    written: AtomicU64,
    dropped: AtomicU64,
    write_errors: AtomicU64,
    in_hand: AtomicU64,
    /// The shutdown deadline in ms (0: the default), set before the close
    /// signal is sent.
    deadline_ms: AtomicU64,
}

/// What [`Recorder::shutdown`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Events written during the whole life of the recorder.
    pub events_written: u64,
    /// Events dropped during the whole life of the recorder (queue full,
    /// refused, or given up at the deadline).
    pub events_dropped: u64,
    /// Of those, given up at shutdown: not written within the deadline.
    pub abandoned: u64,
    /// Whether the writer had stopped when `shutdown` returned (false only
    /// if it outlived the deadline and its slack: still counted in
    /// `abandoned`).
    pub finished: bool,
    /// Counts folded into the per-tool aggregate that were not written by
    /// the deadline (reported in the log line per tool).
    pub unwritten: DroppedCounts,
}

struct Writer {
    rx: mpsc::Receiver<Event>,
    close: watch::Receiver<bool>,
    store: Option<Store>,
    jsonl: Option<JsonlSink>,
    observer: Arc<dyn Observer>,
    shared: Arc<Shared>,
    batch_max: usize,
    backlog_max: usize,
    flush_interval: Duration,
    pending: VecDeque<Event>,
    closing: bool,
    /// When closing began + [`SHUTDOWN_RETRY`]: past it, an unreachable
    /// database makes the writer give up (and count the loss).
    give_up_at: Option<Instant>,
}

// === impl RecorderOptions ===

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            queue_capacity: 65536,
            batch_max: 1024,
            flush_interval: Duration::from_millis(50),
            jsonl: None,
        }
    }
}

// === impl Recorder ===

impl Recorder {
    /// Spawns the writer task on the current tokio runtime.
    ///
    /// With `store = None` only the JSONL sink (if any) and the observer are
    /// fed, and every event counts as new (no dedup without a store).
    pub fn start(
        store: Option<Store>,
        opts: RecorderOptions,
        observer: Arc<dyn Observer>,
    ) -> Recorder {
        Recorder::start_with_aggregate(store, opts, DEFAULT_AGGREGATE_KEYS, observer)
    }

    /// [`Recorder::start`] with the per-tool aggregate of what cannot be
    /// written in detail bounded to `aggregate_keys` distinct
    /// (minute, provider, model, tool) keys.
    pub fn start_with_aggregate(
        store: Option<Store>,
        opts: RecorderOptions,
        aggregate_keys: usize,
        observer: Arc<dyn Observer>,
    ) -> Recorder {
        let capacity = opts.queue_capacity.max(1);
        let (tx, rx) = mpsc::channel(capacity);
        let (done_tx, done) = watch::channel(false);
        let (close, close_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            agg: Aggregate::new(aggregate_keys),
            written: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
            in_hand: AtomicU64::new(0),
            deadline_ms: AtomicU64::new(0),
        });
        let writer = Writer {
            rx,
            close: close_rx,
            store,
            jsonl: opts.jsonl.as_deref().map(JsonlSink::new),
            observer: observer.clone(),
            shared: shared.clone(),
            batch_max: opts.batch_max.max(1),
            backlog_max: capacity,
            flush_interval: opts.flush_interval,
            pending: VecDeque::new(),
            closing: false,
            give_up_at: None,
        };
        tokio::spawn(async move {
            writer.run().await;
            let _ = done_tx.send(true);
        });
        Recorder {
            tx,
            shared,
            observer,
            close: Arc::new(close),
            done,
        }
    }

    /// Queues an event. Never blocks or awaits; a full queue drops the event
    /// and counts it, and folds its tool counts into the aggregate (a
    /// result as one whose call is not known: see
    /// [`Recorder::record_result`]). Returns whether the event was queued.
    pub fn record(&self, event: Event) -> bool {
        self.record_or_fold(event, false)
    }

    /// Queues a result; `call_known` says whether its call was recorded
    /// (or folded) already, so that a result folded into the aggregate
    /// counts as a call of its own only when the store would have made it one.
    pub fn record_result(&self, rec: ToolResultRecord, call_known: bool) -> bool {
        self.record_or_fold(Event::ToolResult(rec), call_known)
    }

    /// Does not queue `event`: counts it as dropped and folds it into the
    /// aggregate at once (a result whose call was itself folded, so that it
    /// does not make a row of its own).
    pub fn fold(&self, event: &Event, call_known: bool) {
        self.count_drop();
        fold(&self.shared, &*self.observer, event, call_known);
    }

    fn record_or_fold(&self, event: Event, call_known: bool) -> bool {
        match self.tx.try_send(event) {
            Ok(()) => true,
            Err(e) => {
                self.fold(&e.into_inner(), call_known);
                false
            }
        }
    }

    fn count_drop(&self) {
        let n = self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        if n == 0 {
            tracing::warn!(
                "recorder queue full or closed: dropping events (counted in events_dropped, \
                 their tool counts kept in dropped_tool_counts)"
            );
        }
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> RecorderCounters {
        let queued = (self.tx.max_capacity() - self.tx.capacity()) as u64;
        RecorderCounters {
            events_written: self.shared.written.load(Ordering::Relaxed),
            events_dropped: self.shared.dropped.load(Ordering::Relaxed),
            write_errors: self.shared.write_errors.load(Ordering::Relaxed),
            backlog: queued + self.shared.in_hand.load(Ordering::Relaxed),
            events_aggregated: self.shared.agg.folded(),
            aggregate_overflow: self.shared.agg.overflowed(),
        }
    }

    /// Drains the queue, writes what it can within [`SHUTDOWN_DEADLINE`]
    /// and stops the writer; see [`Recorder::shutdown_within`].
    pub async fn shutdown(&self) -> ShutdownReport {
        self.shutdown_within(SHUTDOWN_DEADLINE).await
    }

    /// Drains the queue, writes what it can within `deadline` and stops the
    /// writer: past the deadline the write in progress is abandoned (its
    /// transaction rolls back) and the events not written are dropped,
    /// counted and reported (an error in the log and
    /// [`ShutdownReport::abandoned`]). Returns within `deadline` plus a
    /// moment, whatever the database does. Later `record` calls are dropped
    /// (and counted). Safe to call more than once.
    pub async fn shutdown_within(&self, deadline: Duration) -> ShutdownReport {
        let before = self.shared.dropped.load(Ordering::Relaxed);
        let ms = u64::try_from(deadline.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        // Only the first call's deadline counts (the writer reads it once).
        let _ = self
            .shared
            .deadline_ms
            .compare_exchange(0, ms, Ordering::SeqCst, Ordering::SeqCst);
        // Everything recorded before this call is already queued; the writer
        // drains the queue once it sees the signal.
        let _ = self.close.send(true);
        let mut done = self.done.clone();
        let finished = tokio::time::timeout(deadline + SHUTDOWN_SLACK, done.wait_for(|d| *d))
            .await
            .is_ok();
        let c = self.counters();
        let mut abandoned = c.events_dropped.saturating_sub(before);
        if !finished {
            abandoned += c.backlog;
            tracing::error!(
                backlog = c.backlog,
                "the recorder's writer outlived the shutdown deadline; its backlog is lost"
            );
        }
        let mut unwritten = DroppedCounts::default();
        let pending = self.shared.agg.pending();
        if !pending.is_empty() {
            let per_tool: Vec<String> = pending
                .iter()
                .take(20)
                .map(|(tool, c)| {
                    unwritten.calls += c.calls;
                    unwritten.results += c.results;
                    unwritten.failures += c.failures;
                    format!("{tool}: {} calls {} failures", c.calls, c.failures)
                })
                .collect();
            for (_, c) in pending.iter().skip(20) {
                unwritten.calls += c.calls;
                unwritten.results += c.results;
                unwritten.failures += c.failures;
            }
            tracing::error!(
                calls = unwritten.calls,
                results = unwritten.results,
                failures = unwritten.failures,
                tools = pending.len(),
                "per-tool counts of dropped events not written by the shutdown deadline: {}",
                per_tool.join(", ")
            );
        }
        ShutdownReport {
            events_written: c.events_written,
            events_dropped: c.events_dropped + if finished { 0 } else { c.backlog },
            abandoned,
            finished,
            unwritten,
        }
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("counters", &self.counters())
            .finish()
    }
}

// === impl Writer ===

impl Writer {
    async fn run(mut self) {
        loop {
            if self.pending.is_empty() && !self.closing {
                // Folded counts waiting: come back for them within a flush interval.
                let until =
                    (!self.shared.agg.is_empty()).then(|| Instant::now() + self.flush_interval);
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
    }

    /// Appends the folded counts to the store when there is room (nothing
    /// pending in detail beyond a batch), within the shutdown deadline; on
    /// failure they are put back for the next time. Without a store there
    /// is nowhere to write them: they were counted and observed.
    async fn write_aggregate(&mut self) {
        if self.shared.agg.is_empty() || self.pending.len() >= self.batch_max {
            return;
        }
        let Some(store) = self.store.clone() else {
            self.shared.agg.take();
            return;
        };
        if self.give_up_at.is_some_and(|t| Instant::now() >= t) {
            return;
        }
        let rows = self.shared.agg.take();
        let write = store.write_dropped(&rows);
        let result = match self.give_up_at {
            Some(t) => tokio::time::timeout_at(t, write).await.ok(),
            None => Some(write.await),
        };
        match result {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "cannot write the counts of dropped events; will retry");
                self.shared.agg.restore(rows);
            }
            None => self.shared.agg.restore(rows),
        }
    }

    fn set_closing(&mut self) {
        if !self.closing {
            self.closing = true;
            self.give_up_at = Some(Self::deadline_from(&self.shared, Instant::now()));
        }
    }

    /// Past the shutdown deadline: drops (counts) everything pending.
    fn abandon(&mut self, why: &str) {
        let lost = self.pending.len() as u64;
        tracing::error!(
            lost,
            "{why}: the events not written are dropped (counted in events_dropped)"
        );
        for event in self.pending.drain(..) {
            fold(&self.shared, &*self.observer, &event, true);
        }
        self.shared.in_hand.fetch_sub(lost, Ordering::Relaxed);
        self.shared.dropped.fetch_add(lost, Ordering::Relaxed);
    }

    /// The shutdown deadline, `closing` time plus what `shutdown_within`
    /// asked for.
    fn deadline_from(shared: &Shared, closing: Instant) -> Instant {
        let ms = shared.deadline_ms.load(Ordering::SeqCst);
        closing
            + if ms == 0 {
                SHUTDOWN_DEADLINE
            } else {
                Duration::from_millis(ms)
            }
    }

    /// `write`, abandoned at the shutdown deadline: `None` when the deadline
    /// passed first (also for a write that began before shutdown did).
    async fn write_by_deadline(
        &mut self,
        batch: &[Event],
    ) -> Option<Result<(), crate::StoreError>> {
        if let Some(t) = self.give_up_at {
            return tokio::time::timeout_at(t, self.write(batch)).await.ok();
        }
        let mut close = self.close.clone();
        let shared = self.shared.clone();
        let deadline = async move {
            if close.wait_for(|c| *c).await.is_err() {
                // The handle is gone without a shutdown: no deadline.
                std::future::pending::<()>().await;
            }
            let t = Self::deadline_from(&shared, Instant::now());
            tokio::time::sleep_until(t).await;
            t
        };
        tokio::select! {
            result = self.write(batch) => Some(result),
            t = deadline => {
                self.closing = true;
                self.give_up_at = Some(t);
                None
            }
        }
    }

    /// The next event, the shutdown signal, or `until` passing.
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
        }
    }

    fn take(&mut self, e: Event) {
        self.pending.push_back(e);
        self.shared.in_hand.fetch_add(1, Ordering::Relaxed);
    }

    /// Waits up to `flush_interval` for a full batch; when closing, takes
    /// everything queued without waiting. It does not wake per event: it
    /// sleeps in slices of at most [`FILL_SLICE`] and takes what queued
    /// meanwhile, so a busy gateway costs the writer a few wake-ups per
    /// batch, not one per event (each would be a cross-thread wake-up).
    async fn fill(&mut self) {
        let deadline = Instant::now() + self.flush_interval;
        loop {
            while self.pending.len() < self.batch_max && self.take_ready(self.batch_max) > 0 {}
            if self.pending.len() >= self.batch_max || self.closing {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let wake = deadline.min(now + FILL_SLICE);
            let closing = tokio::select! {
                biased;
                _ = self.close.wait_for(|c| *c) => true,
                _ = tokio::time::sleep_until(wake) => false,
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
                Ok(e) => self.pending.push_back(e),
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
        if self.pending.capacity() > 2 * self.batch_max {
            self.pending.shrink_to(self.batch_max);
        }
    }

    /// Writes the pending events batch by batch; on failure backs off and
    /// retries, taking new events into the backlog meanwhile. Past
    /// `give_up_at` (closing), drops what is left (counted).
    async fn flush(&mut self) {
        let mut backoff = BACKOFF_MIN;
        let mut rejected = 0;
        while !self.pending.is_empty() {
            let n = self.pending.len().min(self.batch_max);
            if rejected >= REJECTIONS_BEFORE_ISOLATING {
                // The database refuses something in this batch: write its
                // events one by one and drop (count) only those refused.
                self.isolate(n).await;
                rejected = 0;
                continue;
            }
            // Written in place (no copy of the events): `write` never touches `pending`.
            let mut pending = std::mem::take(&mut self.pending);
            let result = self
                .write_by_deadline(&pending.make_contiguous()[..n])
                .await;
            self.pending = pending;
            let Some(result) = result else {
                self.abandon("shutdown deadline passed while writing");
                return;
            };
            match result {
                Ok(()) => {
                    self.pending.drain(..n);
                    self.shared.in_hand.fetch_sub(n as u64, Ordering::Relaxed);
                    self.shared.written.fetch_add(n as u64, Ordering::Relaxed);
                    backoff = BACKOFF_MIN;
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
                    let wake = self.give_up_at.map_or(wake, |t| wake.min(t));
                    tokio::time::sleep_until(wake).await;
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
            let Some(event) = self.pending.pop_front() else {
                return;
            };
            let Some(result) = self.write_by_deadline(std::slice::from_ref(&event)).await else {
                self.pending.push_front(event);
                self.abandon("shutdown deadline passed while writing");
                return;
            };
            match result {
                Ok(()) => self.shared.written.fetch_add(1, Ordering::Relaxed),
                Err(e) if e.is_rejected() => {
                    tracing::error!(error = %e, kind = event.kind(), "the database refuses this event: dropped");
                    fold(&self.shared, &*self.observer, &event, true);
                    self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
                    self.shared.dropped.fetch_add(1, Ordering::Relaxed)
                }
                Err(_) => {
                    self.pending.push_front(event);
                    return;
                }
            };
            self.shared.in_hand.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// One batch: the store (one transaction), then JSONL and the observer
    /// for what was new. JSONL failures are counted, not retried.
    async fn write(&mut self, batch: &[Event]) -> Result<(), crate::StoreError> {
        let outcomes = match &self.store {
            Some(store) => store.write_batch(batch).await?,
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
        let mut fresh: Vec<Event> = Vec::new();
        for (event, outcome) in batch.iter().zip(&outcomes) {
            match (event, outcome) {
                (_, Outcome::Duplicate) => continue,
                (Event::Request(r), _) => self.observer.on_request(r),
                (Event::ToolCall(c), _) => self.observer.on_tool_call(c),
                (Event::ToolResult(r), Outcome::NewResult { tool, exec_ms }) => {
                    self.observer.on_tool_result_timed(r, tool, *exec_ms);
                    if self.jsonl.is_some() {
                        let mut r = r.clone();
                        r.tool = Some(tool.clone());
                        r.exec_ms = *exec_ms;
                        fresh.push(Event::ToolResult(r));
                    }
                    continue;
                }
                (Event::ToolResult(r), Outcome::New) => self.observer.on_tool_result(r, "unknown"),
            }
            if self.jsonl.is_some() {
                fresh.push(event.clone());
            }
        }
        if let Some(sink) = &mut self.jsonl
            && let Err(e) = sink.write(fresh.iter())
        {
            self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
            tracing::error!(error = %e, "cannot append to the JSONL log");
        }
        Ok(())
    }
}

/// Folds an event not written in detail into the aggregate and tells the
/// observer, which would otherwise never hear of it (its metrics stay exact).
fn fold(shared: &Shared, observer: &dyn Observer, event: &Event, call_known: bool) {
    shared.agg.fold(event, call_known);
    match event {
        Event::Request(r) => observer.on_request(r),
        Event::ToolCall(c) => observer.on_tool_call(c),
        Event::ToolResult(r) => {
            observer.on_tool_result_timed(r, r.tool.as_deref().unwrap_or("unknown"), r.exec_ms)
        }
    }
}
