//! Memory bounds (issue 14): every cache and queue the gateway keeps
//! between requests, with its default. Read as top-level keys of
//! [`super::RawConfig`] (TOML, `TOOLWARDEN_*`, `serve` flags),
//! validated here into [`MemoryBounds`].

use std::time::Duration;

use super::RawConfig;

/// SQLite page cache per pooled connection, KiB.
pub(crate) const DEFAULT_DATABASE_CACHE_KIB: u64 =
    toolwarden_store::DEFAULT_SQLITE_CACHE_KIB as u64;
/// SQLite page cache of the recorder's connection, KiB (given back when
/// it is idle).
pub(crate) const DEFAULT_DATABASE_WRITER_CACHE_KIB: u64 =
    toolwarden_store::DEFAULT_SQLITE_WRITER_CACHE_KIB as u64;
/// How long the recorder's SQLite connection stays open without a write,
/// ms (why 5 s: [`toolwarden_store::DEFAULT_SQLITE_WRITER_IDLE`]).
pub(crate) const DEFAULT_DATABASE_WRITER_IDLE_MS: u64 =
    toolwarden_store::DEFAULT_SQLITE_WRITER_IDLE.as_millis() as u64;
/// Pooled database connections (the recorder's writer uses one; the
/// dashboard, `/api/*` and alerts the others).
pub(crate) const DEFAULT_DATABASE_MAX_CONNECTIONS: u64 = 4;
/// PostgreSQL: how long a batch's write may take, ms (why 15 s:
/// [`toolwarden_store::DEFAULT_PG_WRITE_TIMEOUT`]). Not a memory bound,
/// but a bound on how long a lost connection holds the recorder's backlog.
pub(crate) const DEFAULT_DATABASE_WRITE_TIMEOUT_MS: u64 =
    toolwarden_store::DEFAULT_PG_WRITE_TIMEOUT.as_millis() as u64;
/// Events queued for the recorder, and the writer's backlog while the
/// database is away.
pub(crate) const DEFAULT_RECORD_QUEUE_CAPACITY: u64 = 65_536;
/// Events per transaction at most.
pub(crate) const DEFAULT_RECORD_BATCH_MAX: u64 = toolwarden_store::DEFAULT_BATCH_MAX as u64;
/// How long the writer waits to fill a batch (why 200 ms:
/// [`toolwarden_store::DEFAULT_FLUSH_INTERVAL`]).
pub(crate) const DEFAULT_RECORD_FLUSH_MS: u64 =
    toolwarden_store::DEFAULT_FLUSH_INTERVAL.as_millis() as u64;
/// Distinct keys of the per-tool counts of events not recorded in detail.
pub(crate) const DEFAULT_RECORD_AGGREGATE_KEYS: u64 =
    toolwarden_store::DEFAULT_AGGREGATE_KEYS as u64;
/// Recently seen calls (tool name by session and call id) and the
/// sessions of recent Responses API responses, each: ~4.5 MB per map when
/// full (two tables of 32,768 buckets of 64 bytes, and the values'
/// strings), never more under any churn (`observe::generations`). A miss
/// costs little: the history in the request names most results, and the
/// store resolves the rest from the database.
pub(crate) const DEFAULT_RECENT_CALLS: u64 = 32_768;
/// Keys of results already queued, per generation (two generations).
pub(crate) const DEFAULT_RECENT_RESULTS: u64 = 65_536;
/// Idle upstream connections per upstream and proxy worker, on both HTTP
/// paths (`h1::pool`, hyper's pool): a burst of 1,000 concurrent requests
/// leaves at most this many open once it is over (each a socket and, over
/// TLS, its session's buffers), until they idle out.
pub(crate) const DEFAULT_UPSTREAM_MAX_IDLE: u64 = 256;

/// The validated bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBounds {
    /// SQLite page cache per connection, KiB.
    pub database_cache_kib: u32,
    /// SQLite page cache of the recorder's connection, KiB.
    pub database_writer_cache_kib: u32,
    /// How long the recorder's SQLite connection stays open without a
    /// write before its memory is given back.
    pub database_writer_idle: Duration,
    /// Pooled database connections.
    pub database_max_connections: u32,
    /// PostgreSQL: how long a batch's write may take before its
    /// connection is taken for lost.
    pub database_write_timeout: Duration,
    /// Recorder queue (and backlog) bound, in events.
    pub record_queue_capacity: usize,
    /// Events per transaction at most.
    pub record_batch_max: usize,
    /// How long the writer waits to fill a batch: also the most a
    /// `kill -9` can lose of what was already queued.
    pub record_flush: Duration,
    /// Keys of the per-tool counts of events not recorded in detail
    /// (issue 14; beyond, folded into `(other)`).
    pub record_aggregate_keys: usize,
    /// Entries of each recent-calls map.
    pub recent_calls: usize,
    /// Result keys per generation.
    pub recent_results: usize,
    /// Idle upstream connections per upstream and proxy worker.
    pub upstream_max_idle: usize,
}

impl Default for MemoryBounds {
    fn default() -> Self {
        let mut problems = Vec::new();
        validate(&RawConfig::default(), &mut problems)
    }
}

/// The bounds of `raw`, defaults applied; a zero or out-of-range value is
/// reported in `problems` by its key.
pub(super) fn validate(raw: &RawConfig, problems: &mut Vec<String>) -> MemoryBounds {
    let mut bound = |key: &str, value: Option<u64>, default: u64, max: u64| {
        let v = value.unwrap_or(default);
        if v == 0 {
            problems.push(format!("{key} must be greater than 0"));
        } else if v > max {
            problems.push(format!("{key} {v}: at most {max}"));
        }
        v.clamp(1, max)
    };
    const MAX_CACHE_KIB: u64 = 1 << 22; // 4 GiB
    MemoryBounds {
        database_cache_kib: bound(
            "database_cache_kib",
            raw.database_cache_kib,
            DEFAULT_DATABASE_CACHE_KIB,
            MAX_CACHE_KIB,
        ) as u32,
        database_writer_cache_kib: bound(
            "database_writer_cache_kib",
            raw.database_writer_cache_kib,
            DEFAULT_DATABASE_WRITER_CACHE_KIB,
            MAX_CACHE_KIB,
        ) as u32,
        database_writer_idle: Duration::from_millis(bound(
            "database_writer_idle_ms",
            raw.database_writer_idle_ms,
            DEFAULT_DATABASE_WRITER_IDLE_MS,
            3_600_000,
        )),
        database_max_connections: bound(
            "database_max_connections",
            raw.database_max_connections,
            DEFAULT_DATABASE_MAX_CONNECTIONS,
            1024,
        ) as u32,
        database_write_timeout: Duration::from_millis(bound(
            "database_write_timeout_ms",
            raw.database_write_timeout_ms,
            DEFAULT_DATABASE_WRITE_TIMEOUT_MS,
            3_600_000,
        )),
        record_queue_capacity: bound(
            "record_queue_capacity",
            raw.record_queue_capacity,
            DEFAULT_RECORD_QUEUE_CAPACITY,
            1 << 24,
        ) as usize,
        record_batch_max: bound(
            "record_batch_max",
            raw.record_batch_max,
            DEFAULT_RECORD_BATCH_MAX,
            1 << 16,
        ) as usize,
        record_flush: Duration::from_millis(bound(
            "record_flush_ms",
            raw.record_flush_ms,
            DEFAULT_RECORD_FLUSH_MS,
            60_000,
        )),
        record_aggregate_keys: bound(
            "record_aggregate_keys",
            raw.record_aggregate_keys,
            DEFAULT_RECORD_AGGREGATE_KEYS,
            1 << 20,
        ) as usize,
        recent_calls: bound(
            "recent_calls_capacity",
            raw.recent_calls_capacity,
            DEFAULT_RECENT_CALLS,
            1 << 26,
        ) as usize,
        recent_results: bound(
            "recent_results_capacity",
            raw.recent_results_capacity,
            DEFAULT_RECENT_RESULTS,
            1 << 26,
        ) as usize,
        upstream_max_idle: bound(
            "upstream_max_idle",
            raw.upstream_max_idle,
            DEFAULT_UPSTREAM_MAX_IDLE,
            1 << 16,
        ) as usize,
    }
}
