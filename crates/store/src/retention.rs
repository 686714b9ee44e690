//! Retention (issue 14): deleting what was recorded before a cutoff, so
//! that a gateway running for months keeps a database of bounded size
//! (deleted pages go to the file's free list and are reused by new rows).
//!
//! [`Store::prune`] starts a pass; each [`Prune::step`] is one short
//! transaction deleting at most a few thousand rows of one table, oldest
//! first, through an index led by the time (`requests_at`,
//! `tool_calls_at`, `dropped_tool_counts_at`, and migration 0012's
//! `tool_results_at` and `sessions_last`), so a step costs the same however
//! large the tables are, and the recorder's batches get the database
//! between two steps (on SQLite the step runs on the recorder's own
//! connection). The same SQL on SQLite and PostgreSQL, but for the address
//! of a row of dropped counts, and for the steps that delete from several
//! tables: on PostgreSQL those are one statement that selects the chunk
//! once (`pg_step!`), on SQLite one statement per table, each selecting it
//! again. What goes, in this order:
//!
//! 1. requests older than the cutoff, with their repairs and call turns;
//! 2. `tool_calls` rows older than it (a call by its time, a result-only
//!    row by its result's time), with the call turns of their requests
//!    (a turn whose request row was never written — its event dropped
//!    under overload — went only with its session before, so never in a
//!    session that goes on);
//! 3. the keys of results first recorded before it (`tool_results`): a
//!    result resent after that is counted again;
//! 4. sessions with nothing recorded since the cutoff (a batch writing for
//!    a session quiet for an hour moves its `last_ms`:
//!    `session_nos::STALE_SESSION_MS`), with their call turns;
//! 5. the counts of dropped events older than it;
//! 6. alert transitions older than it, except each alert's latest
//!    transition (its current state);
//! 7. alerts resolved before it: their latest transition, their row of
//!    `alert_latest` and their row of repeats (`alert_repeats`). Alert
//!    keys name tools and models, which clients choose, so the alerts that
//!    ever fired are not a bounded set (each round reads only the firing
//!    ones and the latest resolved, but the tables keep them all). An
//!    alert that fires again after that starts anew (`seq` 1). Firing
//!    alerts are kept, however old.
//!
//! Several gateways sharing one PostgreSQL database each run passes. Each
//! PostgreSQL step first takes a transaction-scoped advisory lock
//! ([`PG_STEP_LOCK`], one per schema): a gateway that finds another's step
//! under way ends its pass there ([`Prune::yielded`]) instead of deleting
//! the same rows at the same time (the second `DELETE` would wait on the
//! first's row locks, scan again for nothing, or fail on a deadlock).

use serde::Serialize;

use crate::error::StoreError;
use crate::store::{Pool, Store};

/// Rows deleted, by table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Pruned {
    /// `requests`.
    pub requests: u64,
    /// `request_repairs`.
    pub request_repairs: u64,
    /// `call_turns`.
    pub call_turns: u64,
    /// `tool_calls`.
    pub tool_calls: u64,
    /// `tool_results` (the keys that make a resent result count once).
    pub tool_results: u64,
    /// `sessions`.
    pub sessions: u64,
    /// `dropped_tool_counts`.
    pub dropped_tool_counts: u64,
    /// `alert_transitions`.
    pub alert_transitions: u64,
    /// `alert_repeats` (of alerts resolved before the cutoff).
    pub alert_repeats: u64,
}

/// Where a pass is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Requests,
    ToolCalls,
    ToolResults,
    Sessions,
    Dropped,
    Transitions,
    Resolved,
    Done,
}

/// One pass of deleting what was recorded before a cutoff, step by step
/// (see the module's documentation).
#[derive(Debug)]
pub struct Prune {
    store: Store,
    cutoff_ms: i64,
    rows: i64,
    stage: Stage,
    deleted: Pruned,
    /// Another gateway's step held [`PG_STEP_LOCK`]: this pass ended.
    yielded: bool,
}

/// The oldest requests before the cutoff, a chunk: the subquery every
/// statement of the requests step repeats on SQLite (one transaction on
/// its one writer's connection, same rows), and PostgreSQL's step
/// selects once.
macro_rules! old_requests {
    () => {
        "(SELECT request_id FROM requests WHERE at_ms < $1 ORDER BY at_ms LIMIT $2)"
    };
}

const DELETE_REPAIRS: &str = concat!(
    "DELETE FROM request_repairs WHERE request_id IN ",
    old_requests!()
);
const DELETE_REQUEST_TURNS: &str = concat!(
    "DELETE FROM call_turns WHERE request_id IN ",
    old_requests!()
);
const DELETE_REQUESTS: &str = concat!("DELETE FROM requests WHERE request_id IN ", old_requests!());

/// The oldest calls before the cutoff, a chunk (after `SELECT` and a
/// column): the subquery both statements of the calls step repeat (one
/// transaction, same rows).
macro_rules! old_calls {
    () => {
        " FROM tool_calls WHERE at_ms < $1 ORDER BY at_ms LIMIT $2)"
    };
}

/// The call turns of the calls about to go, through their requests' ids
/// (`tool_calls_at`, then `call_turns`' key): a turn is written with its
/// response's new calls, at their time, and normally goes with its request
/// (the requests step). But under overload the recorder may drop a
/// request's own event while its calls were written: that turn has no
/// request row, and in a session that is never quiet the sessions step
/// never comes to it either. It goes with its calls, which are as old
/// as it is (its time is its calls' earliest). The requests step, which
/// came first, has deleted the requests older than the cutoff, and a
/// request arrives before its calls end: a turn whose request is kept is
/// not among these.
const DELETE_CALL_TURNS: &str = concat!(
    "DELETE FROM call_turns WHERE request_id IN (SELECT request_id",
    old_calls!()
);
const DELETE_CALLS: &str = concat!(
    "DELETE FROM tool_calls WHERE id IN (SELECT id",
    old_calls!()
);
const DELETE_RESULT_KEYS: &str = "DELETE FROM tool_results \
    WHERE (session_no, call_id, message_index) IN \
    (SELECT session_no, call_id, message_index FROM tool_results \
     WHERE at_ms < $1 ORDER BY at_ms LIMIT $2)";

/// The sessions quiet longest, a chunk: the subquery of the sessions step.
/// A session none of whose rows are left: its `last_ms` moves with its
/// requests, and with tool events only once it is an hour old
/// ([`crate::session_nos::STALE_SESSION_MS`]), so the calls of a response
/// that ended after the cutoff can be newer than it. The earlier steps
/// deleted the rows older than the cutoff, so a session with any row left
/// is kept (one probe of `tool_calls_session_newest` and of
/// `requests_session`, by the session's number).
macro_rules! quiet_sessions {
    () => {
        "(SELECT no FROM sessions WHERE last_ms < $1 \
         AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.session_no = sessions.no) \
         AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.session_no = sessions.no) \
         ORDER BY last_ms LIMIT $2)"
    };
}

const DELETE_SESSION_TURNS: &str = concat!(
    "DELETE FROM call_turns WHERE session_no IN ",
    quiet_sessions!()
);
/// `last_ms` is checked again on the row itself: on PostgreSQL a batch of
/// another gateway writing for a quiet session moves it and holds the row
/// (`bulk::postgres::number_sessions`); the delete, having waited for that
/// batch, then leaves the row.
const DELETE_SESSIONS: &str = concat!(
    "DELETE FROM sessions WHERE last_ms < $1 AND no IN ",
    quiet_sessions!()
);
/// `dropped_tool_counts` has no key of its own (rows are only appended and
/// deleted): a chunk is found through `dropped_tool_counts_at` by the row's
/// physical address, SQLite's `rowid` and PostgreSQL's `ctid` (a TID scan
/// for the delete; the step lock keeps another gateway's step off these
/// rows). The one statement whose text differs between the backends.
const DELETE_DROPPED_SQLITE: &str = "DELETE FROM dropped_tool_counts WHERE rowid IN \
    (SELECT rowid FROM dropped_tool_counts WHERE at_ms < $1 ORDER BY at_ms LIMIT $2)";
/// [`DELETE_DROPPED_SQLITE`] for PostgreSQL.
const DELETE_DROPPED_PG: &str = "DELETE FROM dropped_tool_counts WHERE ctid = ANY (ARRAY \
    (SELECT ctid FROM dropped_tool_counts WHERE at_ms < $1 ORDER BY at_ms LIMIT $2))";
/// Old transitions, oldest first, a step's rows at a time; each alert keeps
/// its latest.
const DELETE_TRANSITIONS: &str = "DELETE FROM alert_transitions WHERE (alert_key, seq) IN \
    (SELECT t.alert_key, t.seq FROM alert_transitions t WHERE t.at_ms < $1 \
    AND t.seq < (SELECT max(seq) FROM alert_transitions a WHERE a.alert_key = t.alert_key) \
    ORDER BY t.at_ms LIMIT $2)";

/// The alerts resolved before the cutoff, oldest first, a chunk: their
/// latest transition is `resolved` and older than it. The subquery the
/// three statements of the resolved step repeat (one transaction, same
/// rows; the repeats and latest rows go first, while the transitions that
/// find them are there).
macro_rules! resolved_alerts {
    ($columns:literal) => {
        concat!(
            "(SELECT ",
            $columns,
            " FROM alert_transitions t WHERE t.at_ms < $1 AND t.state = 'resolved' \
             AND t.seq = (SELECT max(seq) FROM alert_transitions a WHERE a.alert_key = t.alert_key) \
             ORDER BY t.at_ms, t.alert_key LIMIT $2)"
        )
    };
}

const DELETE_RESOLVED_REPEATS: &str = concat!(
    "DELETE FROM alert_repeats WHERE alert_key IN ",
    resolved_alerts!("t.alert_key")
);
/// By key and step: an alert that fired again meanwhile keeps its row.
const DELETE_RESOLVED_LATEST: &str = concat!(
    "DELETE FROM alert_latest WHERE (alert_key, seq) IN ",
    resolved_alerts!("t.alert_key, t.seq")
);
const DELETE_RESOLVED: &str = concat!(
    "DELETE FROM alert_transitions WHERE (alert_key, seq) IN ",
    resolved_alerts!("t.alert_key, t.seq")
);

/// PostgreSQL: a step of several deletes as one statement, its chunk
/// selected once (`chunk`, materialized) and each delete reading its keys
/// from it (data-modifying CTEs, one snapshot); the rows each deleted, as
/// `bigint` columns in the statements' order. Each separate statement
/// re-ran the chunk's subquery: an index scan of the chunk's rows — and,
/// early in a pass, of the index entries of the rows the pass's earlier
/// steps deleted, not yet vacuumed — per table (BENCHMARKS.md). SQLite,
/// which cannot delete in a `WITH`, runs the separate statements on its
/// one writer's connection.
macro_rules! pg_step {
    ($chunk:expr, $first:literal: $delete:literal $(, $name:literal: $rest:literal)* $(,)?) => {
        concat!(
            "WITH chunk AS MATERIALIZED ", $chunk,
            ", ", $first, " AS (", $delete, " RETURNING 1)",
            $(", ", $name, " AS (", $rest, " RETURNING 1)",)*
            " SELECT (SELECT count(*) FROM ", $first, ")",
            $(", (SELECT count(*) FROM ", $name, ")",)*
        )
    };
}

/// [`DELETE_REPAIRS`], [`DELETE_REQUEST_TURNS`], [`DELETE_REQUESTS`].
const PG_REQUESTS_STEP: &str = pg_step!(
    old_requests!(),
    "d0": "DELETE FROM request_repairs WHERE request_id IN (SELECT request_id FROM chunk)",
    "d1": "DELETE FROM call_turns WHERE request_id IN (SELECT request_id FROM chunk)",
    "d2": "DELETE FROM requests WHERE request_id IN (SELECT request_id FROM chunk)",
);
/// [`DELETE_CALL_TURNS`], [`DELETE_CALLS`].
const PG_CALLS_STEP: &str = pg_step!(
    concat!("(SELECT id, request_id", old_calls!()),
    "d0": "DELETE FROM call_turns WHERE request_id IN (SELECT request_id FROM chunk)",
    "d1": "DELETE FROM tool_calls WHERE id IN (SELECT id FROM chunk)",
);
/// [`DELETE_SESSION_TURNS`], [`DELETE_SESSIONS`] (`last_ms` checked again
/// on the row, as there).
const PG_SESSIONS_STEP: &str = pg_step!(
    quiet_sessions!(),
    "d0": "DELETE FROM call_turns WHERE session_no IN (SELECT no FROM chunk)",
    "d1": "DELETE FROM sessions WHERE last_ms < $1 AND no IN (SELECT no FROM chunk)",
);
/// [`DELETE_RESOLVED_REPEATS`], [`DELETE_RESOLVED_LATEST`], [`DELETE_RESOLVED`].
const PG_RESOLVED_STEP: &str = pg_step!(
    resolved_alerts!("t.alert_key, t.seq"),
    "d0": "DELETE FROM alert_repeats WHERE alert_key IN (SELECT alert_key FROM chunk)",
    "d1": "DELETE FROM alert_latest WHERE (alert_key, seq) IN (SELECT alert_key, seq FROM chunk)",
    "d2": "DELETE FROM alert_transitions WHERE (alert_key, seq) IN (SELECT alert_key, seq FROM chunk)",
);

/// The advisory lock a PostgreSQL step holds for its transaction: a class
/// of toolwarden's own (`twrt`) and the schema, so that stores in
/// different schemas of one database do not wait on each other. `false`
/// when another session holds it.
pub const PG_STEP_LOCK: &str =
    "SELECT pg_try_advisory_xact_lock(1953985140, hashtext(current_schema()))";

/// PostgreSQL: `statements`, each bound to `cutoff` and (when given)
/// `rows`, in one transaction on a pooled connection, once it holds
/// [`PG_STEP_LOCK`]; `None` when another gateway's step holds it. (SQLite
/// runs them on the recorder's connection, which has no other writer:
/// [`crate::sqlite_writer::SqliteWriter::run_bound`].)
async fn run_postgres<const N: usize>(
    pool: &sqlx::PgPool,
    statements: [&'static str; N],
    cutoff: i64,
    rows: Option<i64>,
) -> Result<Option<[u64; N]>, sqlx::Error> {
    let Some(mut tx) = begin_step(pool).await? else {
        return Ok(None);
    };
    let n: [u64; N] = crate::pool::execute_bound!(tx, statements, cutoff, rows);
    tx.commit().await?;
    Ok(Some(n))
}

/// PostgreSQL: one statement of [`pg_step!`] bound to `cutoff` and
/// `rows`, as [`run_postgres`] runs its statements: the rows each of its
/// deletes took.
async fn run_postgres_once<const N: usize>(
    pool: &sqlx::PgPool,
    statement: &'static str,
    cutoff: i64,
    rows: i64,
) -> Result<Option<[u64; N]>, sqlx::Error> {
    use sqlx::Row;
    let Some(mut tx) = begin_step(pool).await? else {
        return Ok(None);
    };
    let row = sqlx::query(statement)
        .bind(cutoff)
        .bind(rows)
        .fetch_one(&mut *tx)
        .await?;
    let mut n = [0u64; N];
    for (i, count) in n.iter_mut().enumerate() {
        *count = u64::try_from(row.try_get::<i64, _>(i)?).unwrap_or(0);
    }
    tx.commit().await?;
    Ok(Some(n))
}

/// A step's transaction once it holds [`PG_STEP_LOCK`]; `None` (rolled
/// back) when another gateway's step holds it.
async fn begin_step(
    pool: &sqlx::PgPool,
) -> Result<Option<sqlx::Transaction<'static, sqlx::Postgres>>, sqlx::Error> {
    // READ COMMITTED, as the writer's: a step re-checks rows a batch may
    // have changed while it waited for them.
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL READ COMMITTED")
        .await?;
    let locked: bool = sqlx::query_scalar(PG_STEP_LOCK).fetch_one(&mut *tx).await?;
    if !locked {
        tx.rollback().await?;
        return Ok(None);
    }
    Ok(Some(tx))
}

// === impl Store (retention) ===

impl Store {
    /// A pass deleting what was recorded before `cutoff_ms` (unix ms), at
    /// most `rows` rows of one table per [`Prune::step`].
    pub fn prune(&self, cutoff_ms: i64, rows: usize) -> Prune {
        Prune {
            store: self.clone(),
            cutoff_ms,
            rows: i64::try_from(rows.max(1)).unwrap_or(i64::MAX),
            stage: Stage::Requests,
            deleted: Pruned::default(),
            yielded: false,
        }
    }
}

// === impl Prune ===

impl Prune {
    /// Deletes the next chunk (one short transaction): `true` while
    /// there is more to do. After an error the same step can be tried
    /// again.
    pub async fn step(&mut self) -> Result<bool, StoreError> {
        let limit = Some(self.rows);
        let chunk = self.rows;
        let full = move |n: u64| i64::try_from(n).unwrap_or(i64::MAX) >= chunk;
        self.stage = match self.stage {
            Stage::Requests => {
                let [repairs, turns, requests] = self
                    .run_chunked(
                        [DELETE_REPAIRS, DELETE_REQUEST_TURNS, DELETE_REQUESTS],
                        PG_REQUESTS_STEP,
                    )
                    .await?;
                let d = &mut self.deleted;
                d.requests += requests;
                d.request_repairs += repairs;
                d.call_turns += turns;
                if full(requests) {
                    Stage::Requests
                } else {
                    Stage::ToolCalls
                }
            }
            Stage::ToolCalls => {
                let [turns, n] = self
                    .run_chunked([DELETE_CALL_TURNS, DELETE_CALLS], PG_CALLS_STEP)
                    .await?;
                self.deleted.call_turns += turns;
                self.deleted.tool_calls += n;
                if full(n) {
                    Stage::ToolCalls
                } else {
                    Stage::ToolResults
                }
            }
            Stage::ToolResults => {
                let [n] = self.run([DELETE_RESULT_KEYS], limit).await?;
                self.deleted.tool_results += n;
                if full(n) {
                    Stage::ToolResults
                } else {
                    Stage::Sessions
                }
            }
            Stage::Sessions => {
                let [turns, sessions] = self
                    .run_chunked([DELETE_SESSION_TURNS, DELETE_SESSIONS], PG_SESSIONS_STEP)
                    .await?;
                self.deleted.sessions += sessions;
                self.deleted.call_turns += turns;
                if full(sessions) {
                    Stage::Sessions
                } else {
                    Stage::Dropped
                }
            }
            Stage::Dropped => {
                let delete = match self.store.pool() {
                    Pool::Sqlite(_) => DELETE_DROPPED_SQLITE,
                    Pool::Postgres(_) => DELETE_DROPPED_PG,
                };
                let [n] = self.run([delete], limit).await?;
                self.deleted.dropped_tool_counts += n;
                if full(n) {
                    Stage::Dropped
                } else {
                    Stage::Transitions
                }
            }
            Stage::Transitions => {
                let [n] = self.run([DELETE_TRANSITIONS], limit).await?;
                self.deleted.alert_transitions += n;
                if full(n) {
                    Stage::Transitions
                } else {
                    Stage::Resolved
                }
            }
            Stage::Resolved => {
                let [repeats, _, n] = self
                    .run_chunked(
                        [
                            DELETE_RESOLVED_REPEATS,
                            DELETE_RESOLVED_LATEST,
                            DELETE_RESOLVED,
                        ],
                        PG_RESOLVED_STEP,
                    )
                    .await?;
                self.deleted.alert_repeats += repeats;
                self.deleted.alert_transitions += n;
                if full(n) {
                    Stage::Resolved
                } else {
                    Stage::Done
                }
            }
            Stage::Done => Stage::Done,
        };
        if self.yielded {
            self.stage = Stage::Done;
        }
        Ok(self.stage != Stage::Done)
    }

    /// One step's statements in one transaction, on either backend. When
    /// another gateway's step holds the lock nothing runs: it counts zero
    /// rows and marks the pass `yielded` (`step` then ends it).
    async fn run<const N: usize>(
        &mut self,
        statements: [&'static str; N],
        rows: Option<i64>,
    ) -> Result<[u64; N], StoreError> {
        match (self.store.pool(), self.store.sqlite_writer()) {
            (Pool::Sqlite(_), Some(writer)) => {
                writer.run_bound(statements, self.cutoff_ms, rows).await
            }
            (Pool::Sqlite(_), None) => Err(StoreError::query(sqlx::Error::Protocol(
                "no SQLite writer".into(),
            ))),
            (Pool::Postgres(p), _) => {
                let ran = run_postgres(p, statements, self.cutoff_ms, rows)
                    .await
                    .map_err(StoreError::query)?;
                self.yielded |= ran.is_none();
                Ok(ran.unwrap_or([0; N]))
            }
        }
    }

    /// A step of several deletes of one chunk: on SQLite `statements`,
    /// each selecting the chunk again ([`Self::run`]); on PostgreSQL `pg`,
    /// their [`pg_step!`] statement, which selects it once.
    async fn run_chunked<const N: usize>(
        &mut self,
        statements: [&'static str; N],
        pg: &'static str,
    ) -> Result<[u64; N], StoreError> {
        let Pool::Postgres(p) = self.store.pool() else {
            return self.run(statements, Some(self.rows)).await;
        };
        let ran = run_postgres_once(p, pg, self.cutoff_ms, self.rows)
            .await
            .map_err(StoreError::query)?;
        self.yielded |= ran.is_none();
        Ok(ran.unwrap_or([0; N]))
    }

    /// Whether this pass ended early because another gateway sharing the
    /// PostgreSQL database was running a step of its own (that gateway's
    /// pass deletes what this one would have).
    pub fn yielded(&self) -> bool {
        self.yielded
    }

    /// What this pass has deleted so far.
    pub fn deleted(&self) -> Pruned {
        self.deleted
    }

    /// The cutoff (unix ms).
    pub fn cutoff_ms(&self) -> i64 {
        self.cutoff_ms
    }
}

// === impl Pruned ===

impl Pruned {
    /// How many tables retention deletes from.
    pub const TABLES: usize = 9;

    /// Each table's count, by table name.
    pub fn by_table(&self) -> [(&'static str, u64); Self::TABLES] {
        [
            ("requests", self.requests),
            ("request_repairs", self.request_repairs),
            ("call_turns", self.call_turns),
            ("tool_calls", self.tool_calls),
            ("tool_results", self.tool_results),
            ("sessions", self.sessions),
            ("dropped_tool_counts", self.dropped_tool_counts),
            ("alert_transitions", self.alert_transitions),
            ("alert_repeats", self.alert_repeats),
        ]
    }

    /// Rows deleted in all.
    pub fn total(&self) -> u64 {
        self.by_table().iter().map(|(_, n)| n).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls step's delete of call turns reads the oldest calls through
    /// `tool_calls_at` and finds each turn by its key: its cost is the
    /// step's rows, not the size of `call_turns`.
    #[tokio::test]
    async fn the_call_turns_of_old_calls_are_found_by_key() {
        use crate::query_plan::{Param, sqlite_plan};
        let plan = sqlite_plan(DELETE_CALL_TURNS, &[Param::Int(1), Param::Int(2)]).await;
        let steps: Vec<&str> = plan.iter().map(|p| p.3.as_str()).collect();
        assert!(
            steps
                .iter()
                .any(|s| s.contains("SEARCH tool_calls USING INDEX tool_calls_at")),
            "{steps:?}"
        );
        assert!(
            steps
                .iter()
                .any(|s| s.starts_with("SEARCH call_turns") && s.contains("(request_id=?)")),
            "{steps:?}"
        );
        assert!(
            !steps.iter().any(|s| s.starts_with("SCAN call_turns")),
            "{steps:?}"
        );
    }
}
