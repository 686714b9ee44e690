//! toolwarden-store: the events the gateway records and where they go.
//!
//! - [`Event`] (`Request`, `ToolCall`, `ToolResult`): serde-tagged records;
//!   their JSON is also the JSONL line format.
//! - [`Store`]: SQLite (default, WAL) or PostgreSQL, opened from a URL, with
//!   one schema (`migrations/`) and exact, race-safe writes: results are
//!   unique on (session, `call_id`, `message_index`), calls on
//!   `(request_id, call_index)`, and a result completes its call's row in
//!   `tool_calls`.
//! - [`Recorder`]: the non-blocking front door: a bounded queue, a batching
//!   writer task, JSONL, an [`Observer`] for metrics, counters, a backlog
//!   while the database is away, and a draining [`Recorder::shutdown`].
//! - [`Store::stats`] / [`Stats`]: what `toolwarden stats` and `/api/stats`
//!   show, the same SQL on both backends; [`parse_since`] for `--since`.
//! - [`Store::prune`] / [`Prune`]: retention, deleting what was recorded
//!   before a cutoff in short steps through time-led indexes.
//!
//! ## Several gateways on one PostgreSQL
//!
//! Point every gateway at the same `--database postgres://user:pw@host/db`.
//! No per-instance state is needed for exact numbers: dedup happens on the
//! unique keys above, and a batch takes advisory locks on its call ids so a
//! call recorded by one gateway and its result recorded by another are
//! applied one after the other (the result finds the call, or the late call
//! completes the result's row). Tool names of results are resolved from the
//! shared tables, also for Responses API continuations
//! (`previous_response_id`). For tests, `.ci/pg.sh start` starts a
//! throwaway cluster and prints its URL.
//!
//! ## Known limits
//!
//! - When a result is written before its call (another gateway's queue was
//!   slower), the [`Observer`] and the JSONL line say `unknown` for its tool;
//!   the table row is corrected when the call arrives.
//! - Without a store (`Recorder::start(None, ..)`) nothing can be
//!   deduplicated: the JSONL log then has every event, resends included.
//! - Call ids shorter than 12 characters are matched only within their
//!   session or response, never across sessions.
//! - A batch retried after its COMMIT's answer was lost (PostgreSQL) is told
//!   to the [`Observer`] and the JSONL log once, whether it had committed or
//!   not; but a batch of results alone that had not, all of whose results
//!   another gateway wrote before the retry, is told by both gateways
//!   (see `recorder/unsure.rs`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolwarden_store::StoreError> {
//! use std::sync::Arc;
//! use toolwarden_store::*;
//! let store = Store::open("sqlite://toolwarden.db").await?;
//! let recorder = Recorder::start(Some(store.clone()), RecorderOptions::default(), Arc::new(NoopObserver));
//! // recorder.record(Event::ToolCall(...)) on the request path, then:
//! recorder.shutdown().await;
//! let stats = store.stats(&StatsQuery::default()).await?;
//! println!("{} requests, {} tools", stats.requests.total, stats.tools.len());
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

mod aggregate;
mod alert_repeats;
mod alerts;
mod bulk;
mod deltas;
mod error;
mod event;
mod jsonl;
mod migrate;
mod parking;
mod pg_text;
mod pg_writer;
mod pool;
#[cfg(test)]
mod query_plan;
mod recorder;
mod retention;
mod session_nos;
mod since;
mod sqlite_writer;
mod stats;
mod stop;
mod store;
mod turns;
pub mod utc;
mod write;

pub use aggregate::{DEFAULT_AGGREGATE_KEYS, DroppedCounts, DroppedFlush, DroppedRow, OTHER};
pub use alert_repeats::AlertRepeat;
pub use alerts::{
    AlertTransition, AlertWindow, DEFAULT_RESOLVED_STATES, DEFAULT_WINDOW_ROWS, LONGEST_TOOL_MS,
    RequestWindowRow, ToolWindowRow,
};
pub use bulk::is_unique_call_id;
pub use error::{StoreError, StoreErrorKind, redact_url};
pub use event::{
    Event, FINGERPRINT_SESSION_PREFIX, RequestRecord, ToolCallRecord, ToolResultRecord, TurnRef,
    is_fingerprint_session, stored_fingerprint,
};
pub use jsonl::{JsonlClaim, JsonlLog};
pub use migrate::SCHEMA_VERSION;
pub use pg_writer::DEFAULT_PG_WRITE_TIMEOUT;
pub use recorder::{
    DEFAULT_BATCH_MAX, DEFAULT_FLUSH_INTERVAL, NoopObserver, Observer, Recorder, RecorderCounters,
    RecorderOptions, SHUTDOWN_DEADLINE, SHUTDOWN_RETRY, ShutdownReport,
};
pub use retention::{PG_STEP_LOCK, Prune, Pruned};
pub use since::{SinceError, parse_since};
pub use sqlite_writer::{CHECKPOINT_WAIT, SQLITE_PAGE_SIZE};
pub use stats::{
    CallRow, CallTotals, FailureRow, ModelRow, RepairRow, RequestTotals, SessionCalls, SessionRow,
    Stats, StatsQuery, TOOL_ROWS, TimelineRow, ToolRow, failure_rate,
};
pub use store::{
    DEFAULT_SQLITE_CACHE_KIB, DEFAULT_SQLITE_WRITER_CACHE_KIB, DEFAULT_SQLITE_WRITER_IDLE, Store,
    StoreOptions, sqlite_path,
};

/// This crate's README, whose snippet is compiled (and run) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[derive(Debug)]
pub struct ReadmeDoctest;
