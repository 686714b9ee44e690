//! What could not be written in detail, counted: the [`Recorder`] folds an
//! event it cannot queue (queue full, closed), an event the database
//! refuses, and an event still pending at the shutdown deadline into a
//! bounded in-memory [`Aggregate`] of per-tool counts, keyed by
//! (minute, provider, model, tool). The writer appends it to
//! `dropped_tool_counts` whenever it has room ([`Store::write_dropped`]),
//! and [`Store::stats`] adds those rows to the detailed ones, so calls and
//! failures per tool stay exact when events are dropped.
//!
//! The map holds at most `max_keys` keys; an event whose key would exceed
//! that is folded into one `(other)` key (tool, provider and model
//! `(other)`) and counted in [`Aggregate::overflowed`].
//!
//! [`Recorder`]: crate::Recorder

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use sqlx::Connection;

use crate::error::StoreError;
use crate::event::Event;
use crate::pg_text::pg_text;
use crate::stop::Stop;
use crate::store::{Pool, Store};

/// The tool, provider and model of the key that takes what exceeds the bound.
pub const OTHER: &str = "(other)";
/// The default bound on distinct keys.
pub const DEFAULT_AGGREGATE_KEYS: usize = 4096;
/// The length of the minutes counts are folded by.
pub(crate) const MINUTE_MS: i64 = 60_000;

const INSERT: &str = "INSERT INTO dropped_tool_counts \
    (at_ms, provider, model, tool, calls, results, failures, flush_id, flush_row) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING";

/// [`INSERT`] of a whole flush on PostgreSQL, its columns as arrays.
const INSERT_ALL_PG: &str = "INSERT INTO dropped_tool_counts \
    (at_ms, provider, model, tool, calls, results, failures, flush_id, flush_row) \
    SELECT at_ms, provider, model, tool, calls, results, failures, $8, flush_row \
    FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[], \
    $6::BIGINT[], $7::BIGINT[], $9::BIGINT[]) \
    AS u(at_ms, provider, model, tool, calls, results, failures, flush_row) \
    ON CONFLICT DO NOTHING";

/// Counts of events not written in detail.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedCounts {
    /// Rows `tool_calls` would have had: calls, and results whose call was
    /// not known.
    pub calls: u64,
    /// Results.
    pub results: u64,
    /// Failed results.
    pub failures: u64,
}

/// One row of `dropped_tool_counts`: the counts of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedRow {
    /// Start of the minute, unix ms.
    pub at_ms: i64,
    /// The provider.
    pub provider: String,
    /// The model, when known.
    pub model: Option<String>,
    /// The tool (`unknown` when not resolved).
    pub tool: String,
    /// The counts.
    pub counts: DroppedCounts,
}

/// One write of folded counts: its rows, numbered, under an id of its
/// own. Written again after a failure whose outcome is unknown (the
/// connection lost around the commit), a row that the first attempt did
/// write is skipped, not added twice (migration 0017).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedFlush {
    /// Two 64-bit hashes of the time under random keys, in hex: unique
    /// to one flush in practice.
    pub id: String,
    /// The rows with their numbers in the flush.
    pub rows: Vec<(u32, DroppedRow)>,
}

impl DroppedFlush {
    /// `rows` under a new id, numbered in order.
    pub fn new(rows: Vec<DroppedRow>) -> DroppedFlush {
        use std::hash::BuildHasher;
        let half = || std::hash::RandomState::new().hash_one(std::time::SystemTime::now());
        DroppedFlush {
            id: format!("{:016x}{:016x}", half(), half()),
            rows: (0..).zip(rows).collect(),
        }
    }

    /// The rows, without their numbers (put back into the aggregate).
    pub(crate) fn into_rows(self) -> Vec<DroppedRow> {
        self.rows.into_iter().map(|(_, r)| r).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    at_ms: i64,
    provider: String,
    model: Option<String>,
    tool: String,
}

/// The bounded in-memory aggregate (see the module docs).
#[derive(Debug)]
pub(crate) struct Aggregate {
    max_keys: usize,
    map: Mutex<HashMap<Key, DroppedCounts>>,
    /// Events folded in, in all.
    folded: AtomicU64,
    /// Events folded into the `(other)` key.
    overflowed: AtomicU64,
    /// The minute of the first `(other)` key since the map was last
    /// emptied ([`NO_MINUTE`]: none), which takes the `(other)` counts of
    /// later minutes once [`OTHER_MINUTES`] of them are kept (changed
    /// only under the map's lock).
    first_other: AtomicI64,
}

/// `(other)` keys kept beside a full map: one a minute, so that an hour of
/// overflow keeps its times; past it, later minutes' `(other)` counts go
/// to the first one. The map is emptied at each write, but a database that
/// stays away keeps it: without this it gained a key a minute for as long.
const OTHER_MINUTES: usize = 60;

/// No `(other)` key yet.
const NO_MINUTE: i64 = i64::MIN;

// === impl DroppedCounts ===

impl DroppedCounts {
    fn add(&mut self, other: DroppedCounts) {
        self.calls += other.calls;
        self.results += other.results;
        self.failures += other.failures;
    }

    /// Whether all counts are zero.
    pub fn is_empty(&self) -> bool {
        *self == DroppedCounts::default()
    }
}

// === impl Aggregate ===

impl Aggregate {
    pub(crate) fn new(max_keys: usize) -> Aggregate {
        Aggregate {
            max_keys: max_keys.max(1),
            map: Mutex::new(HashMap::new()),
            folded: AtomicU64::new(0),
            overflowed: AtomicU64::new(0),
            first_other: AtomicI64::new(NO_MINUTE),
        }
    }

    /// Folds `event` in. A result counts as a call too unless
    /// `call_known` (its call was recorded, or folded in already), as the
    /// store would have made a row for it. Requests carry no tool counts:
    /// they are only counted as dropped. Whether the aggregate was empty
    /// before (the writer, idle, is to be woken for it).
    pub(crate) fn fold(&self, event: &Event, call_known: bool) -> bool {
        let (at_ms, provider, model, tool, counts) = match event {
            Event::Request(_) => return false,
            Event::ToolCall(c) => (
                c.at_ms,
                &c.provider,
                &c.model,
                c.tool.as_str(),
                DroppedCounts {
                    calls: 1,
                    ..DroppedCounts::default()
                },
            ),
            Event::ToolResult(r) => (
                r.at_ms,
                &r.provider,
                &r.model,
                r.tool.as_deref().unwrap_or("unknown"),
                DroppedCounts {
                    calls: u64::from(!call_known),
                    results: 1,
                    failures: u64::from(r.failed),
                },
            ),
        };
        let key = Key {
            at_ms: at_ms - at_ms.rem_euclid(MINUTE_MS),
            provider: provider.clone(),
            model: model.clone(),
            tool: tool.to_owned(),
        };
        self.folded.fetch_add(1, Ordering::Relaxed);
        self.add(key, counts, true)
    }

    /// Adds `counts` under `key`; whether the map was empty before.
    fn add(&self, key: Key, counts: DroppedCounts, count_overflow: bool) -> bool {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = map.get_mut(&key) {
            c.add(counts);
            return false;
        }
        let was_empty = map.is_empty();
        let key = if map.len() >= self.max_keys {
            if count_overflow {
                self.overflowed.fetch_add(1, Ordering::Relaxed);
            }
            let first = self.first_other.load(Ordering::Relaxed);
            let at_ms = if first == NO_MINUTE {
                self.first_other.store(key.at_ms, Ordering::Relaxed);
                key.at_ms
            } else if map.len() >= self.max_keys + OTHER_MINUTES {
                first
            } else {
                key.at_ms
            };
            Key {
                at_ms,
                provider: OTHER.to_owned(),
                model: Some(OTHER.to_owned()),
                tool: OTHER.to_owned(),
            }
        } else {
            key
        };
        // The `(other)` keys (one per minute) go beyond the bound by
        // `OTHER_MINUTES` at most: only when the map is full.
        map.entry(key).or_default().add(counts);
        was_empty
    }

    /// Takes everything folded so far (for the writer).
    pub(crate) fn take(&self) -> Vec<DroppedRow> {
        let map = {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            if map.is_empty() {
                return Vec::new();
            }
            self.first_other.store(NO_MINUTE, Ordering::Relaxed);
            std::mem::take(&mut *map)
        };
        map.into_iter()
            .map(|(k, counts)| DroppedRow {
                at_ms: k.at_ms,
                provider: k.provider,
                model: k.model,
                tool: k.tool,
                counts,
            })
            .collect()
    }

    /// Puts back rows that could not be written. Keys folded meanwhile may
    /// have filled the map: a row that no longer finds room goes to
    /// `(other)` and is counted in [`Aggregate::overflowed`] like a new
    /// event would be (its tool's attribution is what is lost, and the
    /// count says so).
    /// The rows with a tool of their own go back first, `(other)`'s last:
    /// an `(other)` row taking a place first would push one of them out
    /// (the rows come in the map's order, which is random).
    pub(crate) fn restore(&self, mut rows: Vec<DroppedRow>) {
        rows.sort_by_key(|r| r.tool == OTHER);
        for r in rows {
            let key = Key {
                at_ms: r.at_ms,
                provider: r.provider,
                model: r.model,
                tool: r.tool,
            };
            let own_tool = key.tool != OTHER;
            let _ = self.add(key, r.counts, own_tool);
        }
    }

    /// Whether nothing is waiting to be written.
    pub(crate) fn is_empty(&self) -> bool {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Per tool, what is waiting to be written (for the shutdown report),
    /// most calls first.
    pub(crate) fn pending(&self) -> Vec<(String, DroppedCounts)> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let mut per_tool: HashMap<&str, DroppedCounts> = HashMap::new();
        for (k, c) in map.iter() {
            per_tool.entry(k.tool.as_str()).or_default().add(*c);
        }
        let mut rows: Vec<(String, DroppedCounts)> = per_tool
            .into_iter()
            .map(|(t, c)| (t.to_owned(), c))
            .collect();
        rows.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then_with(|| a.0.cmp(&b.0)));
        rows
    }

    pub(crate) fn folded(&self) -> u64 {
        self.folded.load(Ordering::Relaxed)
    }

    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }
}

// Its text as PostgreSQL can store it (`crate::pg_text`).
crate::pg_text::texts!(DroppedRow { provider, tool; model; });

// === impl Store (dropped counts) ===

impl Store {
    /// Appends the rows of `flush` to `dropped_tool_counts` in one
    /// transaction (on PostgreSQL each NUL in their text as U+FFFD, which
    /// it can store); a row of the flush written before is skipped.
    pub async fn write_dropped(&self, flush: &DroppedFlush) -> Result<(), StoreError> {
        let written = self.write_dropped_before(flush, &mut Stop::never()).await;
        written.unwrap_or_else(|| Err(StoreError::query(sqlx::Error::PoolClosed)))
    }

    /// [`Store::write_dropped`], cut off by `stop` before its COMMIT,
    /// never during it (`None`: nothing written; see [`Stop`]).
    ///
    /// On PostgreSQL the rows go as one statement (`INSERT_ALL_PG`): a
    /// flush holds up to `record_aggregate_keys` rows, and one round trip
    /// each to a server a few milliseconds away took seconds, past the
    /// writer's deadline. It runs in a transaction of its own (two round
    /// trips more, only when events were dropped) so that the stop can
    /// come between it and the COMMIT: a statement of its own commits
    /// as it ends, and one cut off might have. SQLite answers in this
    /// process; a statement per row costs nothing there.
    pub(crate) async fn write_dropped_before(
        &self,
        flush: &DroppedFlush,
        stop: &mut Stop<'_>,
    ) -> Option<Result<(), StoreError>> {
        if flush.rows.is_empty() {
            return Some(Ok(()));
        }
        match self.pool() {
            Pool::Sqlite(p) => {
                let mut conn = match stop.before(p.acquire()).await? {
                    Ok(conn) => conn,
                    Err(e) => return Some(Err(StoreError::query(e))),
                };
                let statements = async {
                    let mut tx = Connection::begin(&mut *conn).await?;
                    for (no, r) in &flush.rows {
                        sqlx::query(INSERT)
                            .bind(r.at_ms)
                            .bind(&r.provider)
                            .bind(&r.model)
                            .bind(&r.tool)
                            .bind(count(r.counts.calls))
                            .bind(count(r.counts.results))
                            .bind(count(r.counts.failures))
                            .bind(flush.id.as_str())
                            .bind(i64::from(*no))
                            .execute(&mut *tx)
                            .await?;
                    }
                    Ok::<_, sqlx::Error>(tx)
                };
                let written = match stop.before(statements).await {
                    Some(Ok(tx)) => Some(tx.commit().await.map_err(StoreError::query)),
                    Some(Err(e)) => Some(Err(StoreError::query(e))),
                    None => None,
                };
                if written.is_none() {
                    // Cut off: out of the pool and dropped, its worker runs
                    // what it was sent and closes it, rolling back what is
                    // open (also a BEGIN cut off before sqlx handed it over).
                    drop(conn.detach());
                }
                written
            }
            Pool::Postgres(p) => {
                let rows: Vec<DroppedRow> = flush.rows.iter().map(|(_, r)| r.clone()).collect();
                let texts = pg_text(&rows);
                let column = |f: fn(&DroppedRow) -> i64| texts.iter().map(f).collect::<Vec<_>>();
                let insert = sqlx::query(INSERT_ALL_PG)
                    .bind(column(|r| r.at_ms))
                    .bind(
                        texts
                            .iter()
                            .map(|r| r.provider.as_str())
                            .collect::<Vec<_>>(),
                    )
                    .bind(texts.iter().map(|r| r.model.as_deref()).collect::<Vec<_>>())
                    .bind(texts.iter().map(|r| r.tool.as_str()).collect::<Vec<_>>())
                    .bind(column(|r| count(r.counts.calls)))
                    .bind(column(|r| count(r.counts.results)))
                    .bind(column(|r| count(r.counts.failures)))
                    .bind(flush.id.as_str())
                    .bind(
                        flush
                            .rows
                            .iter()
                            .map(|(no, _)| i64::from(*no))
                            .collect::<Vec<_>>(),
                    );
                // The recorder's writer waits for it: bounded as its batches
                // are, the connection closed if no answer comes in time
                // (`pg_writer`), should it go half-open meanwhile.
                let mut conn = match stop.before(p.acquire()).await? {
                    Ok(conn) => conn,
                    Err(e) => return Some(Err(StoreError::query(e))),
                };
                let waited = self.pg_answer_deadline();
                let statements = async {
                    let mut tx = Connection::begin(&mut *conn).await?;
                    insert.execute(&mut *tx).await?;
                    Ok::<_, sqlx::Error>(tx)
                };
                let (written, close) =
                    match stop.before(tokio::time::timeout(waited, statements)).await {
                        Some(Ok(Ok(tx))) => match tokio::time::timeout(waited, tx.commit()).await {
                            Ok(committed) => (Some(committed.map_err(StoreError::query)), false),
                            Err(_) => (Some(Err(StoreError::no_answer(waited))), true),
                        },
                        Some(Ok(Err(e))) => (Some(Err(StoreError::query(e))), false),
                        Some(Err(_)) => (Some(Err(StoreError::no_answer(waited))), true),
                        None => (None, true),
                    };
                if close {
                    drop(conn.detach());
                }
                written
            }
        }
    }
}

/// A count as the table's BIGINT holds it.
fn count(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ToolCallRecord, ToolResultRecord};

    fn call(tool: &str, at_ms: i64) -> Event {
        Event::ToolCall(ToolCallRecord {
            threaded: false,
            request_id: "r".into(),
            session_id: "s".into(),
            provider: "anthropic".into(),
            model: Some("m".into()),
            response_id: None,
            dialect: None,
            call_index: 0,
            call_id: "c".into(),
            tool: tool.into(),
            arguments_bytes: 0,
            at_ms,
            turn: None,
        })
    }

    fn result(tool: Option<&str>, failed: bool) -> Event {
        Event::ToolResult(ToolResultRecord {
            request_id: "r".into(),
            session_id: "s".into(),
            provider: "anthropic".into(),
            model: Some("m".into()),
            call_id: "c".into(),
            message_index: 1,
            tool: tool.map(String::from),
            failed,
            basis: "explicit".into(),
            content_bytes: 0,
            excerpt: None,
            at_ms: 61_000,
            exec_ms: None,
            previous_response_id: None,
            answers: None,
            trace_parent: None,
            trace_state: None,
            latest_of_its_id: false,
            first_turn: None,
        })
    }

    #[test]
    fn folds_per_minute_and_tool_and_counts_unknown_calls_of_results() {
        let agg = Aggregate::new(16);
        assert!(agg.fold(&call("Bash", 60_000), true), "the first key");
        assert!(!agg.fold(&call("Bash", 119_999), true));
        agg.fold(&result(Some("Bash"), true), true);
        agg.fold(&result(None, false), false);
        assert_eq!(agg.folded(), 4);
        let mut rows = agg.take();
        rows.sort_by(|a, b| a.tool.cmp(&b.tool));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].tool, "Bash");
        assert_eq!(rows[0].at_ms, 60_000);
        assert_eq!(
            rows[0].counts,
            DroppedCounts {
                calls: 2,
                results: 1,
                failures: 1
            }
        );
        // A result whose call is not known makes a row of its own.
        assert_eq!(rows[1].tool, "unknown");
        assert_eq!(rows[1].counts.calls, 1);
        assert!(agg.is_empty());
    }

    #[test]
    fn beyond_the_bound_events_go_to_other_and_are_counted() {
        let agg = Aggregate::new(2);
        for tool in ["a", "b", "c", "d"] {
            agg.fold(&call(tool, 0), true);
        }
        agg.fold(&call("a", 0), true);
        assert_eq!(agg.overflowed(), 2);
        let pending = agg.pending();
        let other = pending.iter().find(|(t, _)| t == OTHER).expect("(other)");
        assert_eq!(other.1.calls, 2);
        let total: u64 = pending.iter().map(|(_, c)| c.calls).sum();
        assert_eq!(total, 5, "nothing lost: {pending:?}");
        // Put back after a failed write: the same totals.
        agg.restore(agg.take());
        let total: u64 = agg.pending().iter().map(|(_, c)| c.calls).sum();
        assert_eq!(total, 5);
        assert_eq!(agg.overflowed(), 2, "every row found its key again");
    }

    /// A full map that is not emptied (the database away for hours) keeps
    /// an hour of `(other)` minutes, then folds later ones into the first:
    /// bounded, and nothing lost.
    #[test]
    fn a_full_map_keeps_a_bounded_number_of_other_minutes() {
        let agg = Aggregate::new(2);
        agg.fold(&call("a", 0), true);
        agg.fold(&call("b", 0), true);
        for minute in 1..=600 {
            agg.fold(&call("x", minute * MINUTE_MS), true);
        }
        let rows = agg.take();
        assert_eq!(rows.len(), 2 + OTHER_MINUTES, "{} keys", rows.len());
        let total: u64 = rows.iter().map(|r| r.counts.calls).sum();
        assert_eq!(total, 602, "nothing lost");
        let first = rows
            .iter()
            .find(|r| r.tool == OTHER && r.at_ms == MINUTE_MS);
        assert_eq!(
            first.map(|r| r.counts.calls),
            Some(1 + 600 - OTHER_MINUTES as u64)
        );
        // Emptied, the next overflow starts its own minutes.
        agg.fold(&call("a", 0), true);
        agg.fold(&call("b", 0), true);
        agg.fold(&call("x", 700 * MINUTE_MS), true);
        let other = agg.take().into_iter().find(|r| r.tool == OTHER);
        assert_eq!(other.map(|r| r.at_ms), Some(700 * MINUTE_MS));
    }

    /// Rows put back after a failed write into a map that new keys filled
    /// meanwhile: the ones without room go to `(other)`, counted.
    #[test]
    fn rows_put_back_into_a_full_map_are_counted_when_they_lose_their_tool() {
        let agg = Aggregate::new(2);
        agg.fold(&call("a", 0), true);
        agg.fold(&call("b", 0), true);
        let taken = agg.take();
        agg.fold(&call("c", 0), true);
        agg.fold(&call("d", 0), true);
        assert_eq!(agg.overflowed(), 0);
        agg.restore(taken);
        assert_eq!(agg.overflowed(), 2, "a and b lost their tool: counted");
        let total: u64 = agg.pending().iter().map(|(_, c)| c.calls).sum();
        assert_eq!(total, 4, "nothing lost");
    }
}
