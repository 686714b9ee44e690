//! [`Recorder`]: takes events on the request path without ever blocking
//! (`try_send` into a bounded queue; full → dropped and counted) and writes
//! them from one task, in batches, each in one transaction.
//!
//! The writer takes up to `batch_max` events, or what arrived within
//! `flush_interval` of the first, writes them in order (a call and its result
//! in one batch pair up), then tells the [`Observer`] about the events that
//! were new to the store and appends them to the JSONL log. When the database is lost it
//! keeps the batch, retries with backoff (100 ms doubling to 5 s) and keeps
//! taking events into its backlog; the queue and the backlog together hold
//! at most `queue_capacity` events beyond the batch being written, past
//! which `record` drops, counted in `events_dropped`. A batch lost with its
//! COMMIT's answer (it may have committed) is told to the [`Observer`] and
//! the JSONL log once, on its retry, whether it had committed or not
//! (`unsure`).
//! A batch the database refuses twice for its content (not for being
//! unreachable, read-only or otherwise unable to write:
//! [`crate::StoreError::is_rejected`]) is written event by event, and only
//! the refused events are dropped and counted. [`Recorder::shutdown`]
//! drains the queue and writes everything it can within a deadline ([`SHUTDOWN_DEADLINE`] by default,
//! [`Recorder::shutdown_within`] to choose): past it, a write still in its
//! statements is abandoned (its transaction rolls back), the events not
//! written are counted as dropped and reported, and shutdown returns: a
//! slow or unreachable database never holds it longer. A COMMIT already on
//! the way is awaited to its answer instead (within the shutdown's slack),
//! so that what is reported written is what the database holds
//! (`crate::stop`).
//!
//! What cannot be written in detail (queue full, refused, past the
//! deadline) is still counted per tool: folded into a bounded
//! [`Aggregate`] that the writer appends to `dropped_tool_counts` whenever
//! it has room, and told to the [`Observer`] at once (see `aggregate`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::aggregate::{Aggregate, DEFAULT_AGGREGATE_KEYS, DroppedCounts};
use crate::event::{Event, RequestRecord, ToolCallRecord, ToolResultRecord};
use crate::jsonl::{JsonlLog, JsonlSink};
use crate::store::Store;

mod pending;
mod unsure;
mod writer;

use pending::Pending;
use unsure::UnsureCommits;
use writer::Writer;

/// How long [`Recorder::shutdown`] keeps writing (or retrying an
/// unreachable database) before it gives up on what is left.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(5);
/// How long `shutdown` keeps retrying an unreachable database (the default
/// deadline; kept for callers of the earlier name).
pub const SHUTDOWN_RETRY: Duration = SHUTDOWN_DEADLINE;
/// What `shutdown` waits beyond its deadline for the writer to stop (it is
/// told to give up at the deadline; this covers a COMMIT on the way and
/// its last bookkeeping).
const SHUTDOWN_SLACK: Duration = Duration::from_millis(500);

/// Recorder settings.
#[derive(Debug, Clone)]
pub struct RecorderOptions {
    /// Events the queue and the writer's backlog (while the database is away) hold together at most, beyond the batch being written (65536).
    pub queue_capacity: usize,
    /// Events per transaction at most (1024).
    pub batch_max: usize,
    /// How long the writer waits to fill a batch (50 ms).
    pub flush_interval: Duration,
    /// Append new events to this JSONL log.
    pub jsonl: Option<JsonlLog>,
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
    /// The recorder's writer is done (a shutdown drained it): what the
    /// observer holds for later (an export queue) should go now.
    fn on_close(&self) {}
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
    /// Times the JSONL log reached its bound and was rotated.
    pub jsonl_rotations: u64,
    /// Lines of batches whose append to the JSONL log failed (a full disk,
    /// a directory that cannot be written): missing from the log, not from
    /// the database.
    pub jsonl_lines_lost: u64,
}

/// The recording handle. Cheap to clone; all clones feed one writer task.
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::Sender<Queued>,
    shared: Arc<Shared>,
    observer: Arc<dyn Observer>,
    close: Arc<watch::Sender<bool>>,
    done: watch::Receiver<bool>,
    /// It writes to a store, which keeps duplicates out.
    judges: bool,
}

/// An event on its way to the writer, with whether its call was known when
/// it was recorded (see [`Recorder::record_result`]; `false` for a result
/// given to [`Recorder::record`], meaningless for the other events): if it
/// is folded into the aggregate later (refused by the database, or still
/// pending at the shutdown deadline), it counts as a call of its own exactly
/// when the store would have made it one.
#[derive(Debug)]
struct Queued {
    event: Event,
    call_known: bool,
}

/// What the writer's wait ended with (short-lived; boxing would cost an
/// allocation per event).
#[allow(clippy::large_enum_variant)]
enum Next {
    Event(Queued),
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
    jsonl_rotations: AtomicU64,
    jsonl_lines_lost: AtomicU64,
    in_hand: AtomicU64,
    /// When the writer gives up (the first `shutdown_within` call's time
    /// plus its deadline), set before the close signal is sent: one instant
    /// for every write, retry and wait of the drain, so the drain as a
    /// whole keeps to it.
    give_up_at: std::sync::OnceLock<tokio::time::Instant>,
    /// The writer's batch bound: the batch it fills or writes is not part
    /// of the backlog that shares the queue's bound.
    batch_max: u64,
    /// Told when a fold makes the aggregate non-empty: an idle writer,
    /// waiting for events with no timer set, writes it within a flush
    /// interval instead of at the next event (maybe never before a kill).
    folded: tokio::sync::Notify,
    /// Told by `record` once the writer's hands and the queue hold a
    /// batch's worth, or the queue is half full: the writer filling a
    /// batch sleeps until its flush interval ends or this (see
    /// `Writer::fill`), not in slices.
    filled: tokio::sync::Notify,
    /// Half the queue's capacity (at least one): queued events that wake
    /// the filling writer whatever it holds, so that a queue smaller than
    /// a batch never fills while the writer sleeps.
    queue_wake: u64,
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
    /// if it outlived the deadline and its slack: its backlog is counted in
    /// `abandoned`, though a COMMIT it was waiting for may still land).
    pub finished: bool,
    /// Counts folded into the per-tool aggregate that were not written by
    /// the deadline (reported in the log line per tool).
    pub unwritten: DroppedCounts,
    /// Requests whose record its caller had not handed to the recorder
    /// when the drain began (the gateway: still being read or recorded by
    /// a worker busy past the shutdown's bound), and does not hand
    /// afterwards, so never written; not part of the event counts above,
    /// so that a request is counted once: its record among them, or the
    /// request here. The recorder itself leaves it 0.
    pub unrecorded_requests: u64,
}

/// Events per transaction at most, by default.
pub const DEFAULT_BATCH_MAX: usize = 4096;
/// How long the writer waits to fill a batch, by default. 200 ms, not less:
/// under sustained load each commit costs SQLite a write of the pages it
/// dirtied and a checkpoint of them, whatever the batch holds, and at 50 ms
/// those commits took enough of a 2-CPU machine to hold the proxy below
/// 0.6× the direct throughput (BENCHMARKS.md, "The recording limit"). What
/// it costs: a `kill -9` loses the events of up to one interval (and the
/// batch being written), so up to 200 ms of them where 50 ms lost 50.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(200);

// === impl RecorderOptions ===

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            queue_capacity: 65536,
            batch_max: DEFAULT_BATCH_MAX,
            flush_interval: DEFAULT_FLUSH_INTERVAL,
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
        let judges = store.is_some();
        let capacity = opts.queue_capacity.max(1);
        let (tx, rx) = mpsc::channel(capacity);
        let (done_tx, done) = watch::channel(false);
        let (close, close_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            agg: Aggregate::new(aggregate_keys),
            written: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
            jsonl_rotations: AtomicU64::new(0),
            jsonl_lines_lost: AtomicU64::new(0),
            in_hand: AtomicU64::new(0),
            give_up_at: std::sync::OnceLock::new(),
            batch_max: opts.batch_max.max(1) as u64,
            folded: tokio::sync::Notify::new(),
            filled: tokio::sync::Notify::new(),
            queue_wake: (capacity / 2).max(1) as u64,
        });
        let writer = Writer {
            rx,
            close: close_rx,
            store,
            jsonl: opts.jsonl.map(JsonlSink::new),
            observer: observer.clone(),
            shared: shared.clone(),
            batch_max: opts.batch_max.max(1),
            batch_limit: opts.batch_max.max(1),
            backlog_max: capacity,
            flush_interval: opts.flush_interval,
            pending: Pending::default(),
            closing: false,
            give_up_at: None,
            unsure: None,
            unsure_commits: UnsureCommits::default(),
            jsonl_failing: false,
            aggregate_retry_at: None,
            aggregate_backoff: writer::BACKOFF_MIN,
        };
        let closing = observer.clone();
        tokio::spawn(async move {
            writer.run().await;
            // Before `done`: a shutdown that waited for the writer finds
            // the observer told.
            closing.on_close();
            let _ = done_tx.send(true);
        });
        Recorder {
            tx,
            shared,
            observer,
            close: Arc::new(close),
            done,
            judges,
        }
    }

    /// Whether what is queued goes to a store, which counts a duplicate
    /// (an event already written) once; without one every queued event
    /// counts as new.
    pub fn judges_duplicates(&self) -> bool {
        self.judges
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
        // The queue and the writer's backlog share one bound; the batch the
        // writer fills or writes is not backlog.
        let queued = (self.tx.max_capacity() - self.tx.capacity()) as u64;
        let in_hand = self.shared.in_hand.load(Ordering::Relaxed);
        let backlog = in_hand.saturating_sub(self.shared.batch_max);
        if queued + backlog >= self.tx.max_capacity() as u64 {
            self.fold(&event, call_known);
            return false;
        }
        match self.tx.try_send(Queued { event, call_known }) {
            Ok(()) => {
                // Every send past a mark (not only the one that reaches
                // it, which concurrent senders may step over): while a
                // wake-up is already stored this changes nothing. Past
                // the first mark during a write (its batch is in hand)
                // the wake-up waits, stored, and costs the next fill one
                // more turn.
                let held = queued + 1;
                if held + in_hand >= self.shared.batch_max || held >= self.shared.queue_wake {
                    self.shared.filled.notify_one();
                }
                true
            }
            Err(e) => {
                let q = e.into_inner();
                self.fold(&q.event, q.call_known);
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
            jsonl_rotations: self.shared.jsonl_rotations.load(Ordering::Relaxed),
            jsonl_lines_lost: self.shared.jsonl_lines_lost.load(Ordering::Relaxed),
        }
    }

    /// Drains the queue, writes what it can within [`SHUTDOWN_DEADLINE`]
    /// and stops the writer; see [`Recorder::shutdown_within`].
    pub async fn shutdown(&self) -> ShutdownReport {
        self.shutdown_within(SHUTDOWN_DEADLINE).await
    }

    /// Drains the queue, writes what it can within `deadline` and stops the
    /// writer: past the deadline the write in progress is abandoned before
    /// its COMMIT (its transaction rolls back; a COMMIT on the way is
    /// awaited to its answer) and the events not written are dropped,
    /// counted and reported (an error in the log and
    /// [`ShutdownReport::abandoned`]). Returns within `deadline` plus a
    /// moment, whatever the database does. Later `record` calls are dropped
    /// (and counted). Safe to call more than once.
    pub async fn shutdown_within(&self, deadline: Duration) -> ShutdownReport {
        let before = self.shared.dropped.load(Ordering::Relaxed);
        // Only the first call's deadline counts.
        let _ = self
            .shared
            .give_up_at
            .set(tokio::time::Instant::now() + deadline);
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
            unrecorded_requests: 0,
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

/// Folds an event not written in detail into the aggregate and tells the
/// observer, which would otherwise never hear of it (its metrics stay exact).
fn fold(shared: &Shared, observer: &dyn Observer, event: &Event, call_known: bool) {
    if shared.agg.fold(event, call_known) {
        shared.folded.notify_one();
    }
    match event {
        Event::Request(r) => observer.on_request(r),
        Event::ToolCall(c) => observer.on_tool_call(c),
        Event::ToolResult(r) => {
            observer.on_tool_result_timed(r, r.tool.as_deref().unwrap_or("unknown"), r.exec_ms)
        }
    }
}
