//! What `toolwarden stats` and `GET /api/stats` report: one set of SQL texts
//! run unchanged on SQLite and PostgreSQL (both read `$1`-style parameters).
//!
//! "Calls" are rows of `tool_calls`: each call the model made, plus results
//! whose call was never seen. A call is counted in the window by its own time
//! (`at_ms`: the call's, else the result's). `failure_rate = failures / calls`.
//! Per-tool numbers (`tools`, `models`, `timeline`) add the counts of
//! events that could not be recorded in detail (`dropped_tool_counts`,
//! by the minute; not under a session filter).
//!
//! Every list is bounded: tool and model names are chosen by clients and
//! models (MCP servers, generated tools, hallucinated names), so `tools`
//! and `models` hold at most [`TOOL_ROWS`] rows (most failures first),
//! `timeline` only the tools `tools` lists, and [`Stats::totals`] keeps the
//! exact sums over all of them.

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::pg_text::pg_str;
use crate::store::{Pool, Store};

/// Rows at most in [`Stats::tools`] and [`Stats::models`] (most failures,
/// then most calls, first); [`Stats::totals`] counts the rest.
pub const TOOL_ROWS: usize = 200;

/// Filters for [`Store::stats`]. `limit` bounds `sessions` and `recent_failures` (0 → 20);
/// `tool_rows` bounds `tools` and `models` (0 → [`TOOL_ROWS`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsQuery {
    /// Only calls/requests at or after this unix ms.
    pub since_ms: Option<i64>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this model.
    pub model: Option<String>,
    /// Only this session.
    pub session: Option<String>,
    /// Rows in the `sessions` and `recent_failures` lists.
    pub limit: usize,
    /// Rows at most in `tools` and `models` (0 → [`TOOL_ROWS`]).
    pub tool_rows: usize,
}

/// The `toolwarden stats --json` / `GET /api/stats` document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Per tool, most failures first; at most [`TOOL_ROWS`] of them.
    pub tools: Vec<ToolRow>,
    /// Per (model, tool), most failures first; at most [`TOOL_ROWS`] of them.
    pub models: Vec<ModelRow>,
    /// Calls and failures of every tool, listed in `tools` or not.
    #[serde(default)]
    pub totals: CallTotals,
    /// Sessions with at least one failure, latest first.
    pub sessions: Vec<SessionRow>,
    /// The latest failures, newest first.
    pub recent_failures: Vec<FailureRow>,
    /// Repairs applied, per defect kind.
    pub repairs: Vec<RepairRow>,
    /// Request totals.
    pub requests: RequestTotals,
    /// Calls and failures per tool per time bucket (hours for windows up to
    /// two days, else UTC days), for the tools listed in `tools` only.
    pub timeline: Vec<TimelineRow>,
}

/// The sums over every tool: `tools` and `models` may list only the first
/// [`TOOL_ROWS`], these count them all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallTotals {
    pub calls: u64,
    pub failures: u64,
    /// Tools with calls (`tools` lists at most [`TOOL_ROWS`] of them).
    pub tools: u64,
    /// (model, tool) pairs with calls (`models` lists at most [`TOOL_ROWS`]).
    pub model_tools: u64,
}

/// One tool's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRow {
    pub tool: String,
    pub calls: u64,
    pub failures: u64,
    pub failure_rate: f64,
}

/// One (model, tool) pair's numbers; `model` is `unknown` when not known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRow {
    pub model: String,
    pub tool: String,
    pub calls: u64,
    pub failures: u64,
    pub failure_rate: f64,
}

/// A session with failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    pub session_id: String,
    pub calls: u64,
    pub failures: u64,
    pub first_ms: i64,
    pub last_ms: i64,
}

/// One failed result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureRow {
    pub at_ms: i64,
    pub session_id: String,
    pub model: Option<String>,
    pub tool: String,
    pub call_id: String,
    pub basis: String,
    pub excerpt: Option<String>,
}

/// How often a defect was repaired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairRow {
    pub defect: String,
    pub count: u64,
}

/// Request totals: `errors` are statuses ≥ 400 or gateway errors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestTotals {
    pub total: u64,
    pub errors: u64,
    pub streaming: u64,
    /// Requests whose response passed `response_parse_limit`: their calls
    /// may be incomplete.
    #[serde(default)]
    pub calls_incomplete: u64,
}

/// Calls and failures of a tool in one time bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineRow {
    pub tool: String,
    pub bucket_ms: i64,
    pub failures: u64,
    pub calls: u64,
}

/// The newest calls of a session ([`Store::session_calls_newest`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionCalls {
    /// At most the limit asked for, oldest first.
    pub calls: Vec<CallRow>,
    /// The session has more calls than the limit: the older ones are left out.
    pub truncated: bool,
}

/// One call of a session, with its result when there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRow {
    pub call_id: String,
    pub tool: String,
    pub model: Option<String>,
    /// The request whose response made the call (`None`: result without a recorded call).
    pub request_id: Option<String>,
    pub call_index: Option<i64>,
    pub at_ms: i64,
    pub result_at_ms: Option<i64>,
    /// `None` while no result was seen.
    pub failed: Option<bool>,
    pub basis: Option<String>,
    pub exec_ms: Option<f64>,
    pub arguments_bytes: Option<i64>,
    pub content_bytes: Option<i64>,
    pub excerpt: Option<String>,
}

/// The window's test on `at_ms` (`$1`, the window's start). With a window
/// it is `at_ms >= $1` alone, so that the time indexes are searched
/// (`tool_calls_at`, `requests_at`, `dropped_tool_counts_at`): neither
/// backend's planner uses an index for `$1 IS NULL OR at_ms >= $1`, and a
/// report of the last 15 minutes read every row ever recorded (the
/// dashboard asks every 2 s). Without one, every row is read anyway.
fn in_window(windowed: bool, column: &str) -> String {
    if windowed {
        format!("{column} >= $1")
    } else {
        format!("($1 IS NULL OR {column} >= $1)")
    }
}

/// Which filters a report's statements carry in their text, so that
/// each can be served by an index: the window (`$1`) and the session;
/// and how the backend orders names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    windowed: bool,
    by_session: bool,
    /// What follows a name in `ORDER BY` so that names tied on their
    /// counts come in the order of their bytes (UTF-8: of their code
    /// points) on either backend: nothing on SQLite, whose text compares
    /// so; [`PG_BYTE_ORDER`] on PostgreSQL, whose text compares by the
    /// database's collation.
    byte_order: &'static str,
}

/// PostgreSQL's byte order of text. A database's own collation is most
/// often a language's (the official image's `en_US.utf8`: `_a`, `ab`,
/// `b`, `B`), so its reports listed tied names in another order than
/// SQLite's (`B`, `_a`, `ab`, `b`), and at the row limit other names.
pub(crate) const PG_BYTE_ORDER: &str = " COLLATE \"C\"";

/// The session's test (`param`, a session id, or NULL for none): by the
/// session's number, which the session indexes (`tool_calls_session_newest`,
/// `requests_session`) lead with; a test of `session_id` is served by none
/// and read every row. Without a session it is `param IS NULL`.
fn in_session(by_session: bool, param: &str, column: &str) -> String {
    if by_session {
        format!("{column} = (SELECT no FROM sessions WHERE session_id = {param})")
    } else {
        format!("{param} IS NULL")
    }
}

/// The filters of a report's `tool_calls` rows. A model filter of
/// `unknown` finds the rows without a model, as the reports name them.
fn filter(s: Shape) -> String {
    format!(
        "{} AND ($2 IS NULL OR tool = $2) \
         AND ($3 IS NULL OR COALESCE(model, 'unknown') = $3) AND {}",
        in_window(s.windowed, "at_ms"),
        in_session(s.by_session, "$4", "session_no")
    )
}
const FAILED: &str = "SUM(CASE WHEN failed = 1 THEN 1 ELSE 0 END)";
/// [`filter`] for `dropped_tool_counts` (issue 14: the per-tool counts of
/// events not written in detail, added to the detailed ones): it has no
/// sessions, so a session filter leaves it out.
fn dropped_filter(s: Shape) -> String {
    format!(
        "{} AND ($2 IS NULL OR tool = $2) \
         AND ($3 IS NULL OR COALESCE(model, 'unknown') = $3) AND $4 IS NULL",
        in_window(s.windowed, "at_ms")
    )
}

/// Calls `c` and failures `f` per tool (`$1`–`$4`), dropped counts included.
fn per_tool(w: Shape) -> String {
    let (filter, dropped_filter) = (filter(w), dropped_filter(w));
    format!(
        "SELECT tool, CAST(SUM(c) AS BIGINT) AS c, CAST(SUM(f) AS BIGINT) AS f FROM (\
         SELECT tool, COUNT(*) AS c, {FAILED} AS f FROM tool_calls WHERE {filter} GROUP BY tool \
         UNION ALL SELECT tool, SUM(calls), SUM(failures) FROM dropped_tool_counts \
         WHERE {dropped_filter} GROUP BY tool) t GROUP BY tool"
    )
}
/// The first `$5` tools (most failures, then calls, then by name), each
/// with the number of tools and the calls and failures of all of them.
fn tools_sql(w: Shape) -> String {
    format!(
        "SELECT tool, c, f, CAST(COUNT(*) OVER () AS BIGINT), \
         CAST(SUM(c) OVER () AS BIGINT), CAST(SUM(f) OVER () AS BIGINT) \
         FROM ({}) g ORDER BY 3 DESC, 2 DESC, tool{} LIMIT $5",
        per_tool(w),
        w.byte_order
    )
}
/// The names [`tools_sql`] lists, `$6` of them (for the timeline).
fn listed_tools(w: Shape) -> String {
    format!(
        "SELECT tool FROM ({}) g ORDER BY f DESC, c DESC, tool{} LIMIT $6",
        per_tool(w),
        w.byte_order
    )
}
/// The first `$5` (model, tool) pairs, each with the number of pairs.
fn models_sql(w: Shape) -> String {
    let (filter, dropped_filter, b) = (filter(w), dropped_filter(w), w.byte_order);
    format!(
        "SELECT m, tool, c, f, CAST(COUNT(*) OVER () AS BIGINT) FROM (\
         SELECT m, tool, CAST(SUM(c) AS BIGINT) AS c, CAST(SUM(f) AS BIGINT) AS f FROM (\
         SELECT COALESCE(model, 'unknown') AS m, tool, COUNT(*) AS c, {FAILED} AS f \
         FROM tool_calls WHERE {filter} GROUP BY COALESCE(model, 'unknown'), tool \
         UNION ALL SELECT COALESCE(model, 'unknown'), tool, SUM(calls), SUM(failures) \
         FROM dropped_tool_counts WHERE {dropped_filter} GROUP BY COALESCE(model, 'unknown'), tool\
         ) t GROUP BY m, tool) g ORDER BY 4 DESC, 3 DESC, m{b}, tool{b} LIMIT $5"
    )
}
fn sessions_sql(w: Shape) -> String {
    let (filter, b) = (filter(w), w.byte_order);
    format!(
        "SELECT session_id, COUNT(*), {FAILED}, MIN(at_ms), MAX(COALESCE(result_at_ms, at_ms)) \
         FROM tool_calls WHERE {filter} GROUP BY session_id HAVING {FAILED} > 0 \
         ORDER BY 5 DESC, session_id{b} LIMIT $5"
    )
}
fn failures_sql(w: Shape) -> String {
    let filter = filter(w);
    format!(
        "SELECT COALESCE(result_at_ms, at_ms), session_id, model, tool, call_id, \
         COALESCE(basis, 'none'), excerpt FROM tool_calls WHERE failed = 1 AND {filter} \
         ORDER BY 1 DESC, id DESC LIMIT $5"
    )
}
/// Per tool and bucket of `$5` ms, for the tools [`tools_sql`] lists.
fn timeline_sql(w: Shape) -> String {
    let (filter, dropped_filter) = (filter(w), dropped_filter(w));
    format!(
        "SELECT tool, b, CAST(SUM(f) AS BIGINT), CAST(SUM(c) AS BIGINT) FROM (\
         SELECT tool, (at_ms / $5) * $5 AS b, {FAILED} AS f, COUNT(*) AS c FROM tool_calls \
         WHERE {filter} GROUP BY tool, (at_ms / $5) * $5 \
         UNION ALL SELECT tool, (at_ms / $5) * $5, SUM(failures), SUM(calls) \
         FROM dropped_tool_counts WHERE {dropped_filter} GROUP BY tool, (at_ms / $5) * $5\
         ) t WHERE tool IN ({}) GROUP BY tool, b ORDER BY 2, tool{}",
        listed_tools(w),
        w.byte_order
    )
}
fn repairs_sql(w: Shape) -> String {
    format!(
        "SELECT rr.defect, COUNT(*) FROM request_repairs rr \
         JOIN requests r ON r.request_id = rr.request_id \
         WHERE {} AND ($2 IS NULL OR COALESCE(r.model, 'unknown') = $2) \
         AND {} GROUP BY rr.defect ORDER BY 2 DESC, rr.defect{}",
        in_window(w.windowed, "r.at_ms"),
        in_session(w.by_session, "$3", "r.session_no"),
        w.byte_order
    )
}
fn requests_sql(w: Shape) -> String {
    format!(
        "SELECT COUNT(*), \
         COALESCE(SUM(CASE WHEN status >= 400 OR error IS NOT NULL THEN 1 ELSE 0 END), 0), \
         COALESCE(SUM(CASE WHEN streaming = 1 THEN 1 ELSE 0 END), 0), \
         COALESCE(SUM(CASE WHEN calls_incomplete = 1 THEN 1 ELSE 0 END), 0) FROM requests \
         WHERE {} AND ($2 IS NULL OR COALESCE(model, 'unknown') = $2) AND {}",
        in_window(w.windowed, "at_ms"),
        in_session(w.by_session, "$3", "session_no")
    )
}
/// A session's newest `$2` rows, newest first, walking back from the end
/// of the session's range of `tool_calls_session_newest` (migration 0015:
/// in this order, so nothing is sorted and only `$2` rows are read). `id` makes the
/// order total, so reversed it is the session's order on either backend
/// (each puts a NULL `call_index` at its own end, both ways round).
pub(crate) const SESSION_CALLS_SQL: &str = "SELECT call_id, tool, model, request_id, call_index, at_ms, \
    result_at_ms, failed, basis, exec_ms, arguments_bytes, content_bytes, excerpt \
    FROM tool_calls WHERE session_no = (SELECT no FROM sessions WHERE session_id = $1) \
    ORDER BY at_ms DESC, call_index DESC, id DESC LIMIT $2";

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

/// Failures over calls, at most 1. A window can hold failures whose calls
/// it does not: a result folded into `dropped_tool_counts` counts at its
/// own time and its request's model, its call at the call's (`failures:
/// 3, calls: 0` is all failures, not none). Every report's rate, and the
/// rate of rows summed from them (`toolwarden stats --by model`).
pub fn failure_rate(failures: u64, calls: u64) -> f64 {
    if failures >= calls {
        if failures == 0 { 0.0 } else { 1.0 }
    } else {
        failures as f64 / calls as f64
    }
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

// === impl StatsQuery ===

impl StatsQuery {
    fn limit(&self) -> i64 {
        if self.limit == 0 {
            20
        } else {
            i64::try_from(self.limit).unwrap_or(i64::MAX)
        }
    }

    /// Hour buckets for windows of two days or less, else day buckets.
    /// `since_ms` may come from a client (`/api/stats?since=`): saturating,
    /// as any `i64` must neither overflow nor wrap around to a short window.
    fn bucket_ms(&self) -> i64 {
        // A minute's slack: `--since 48h` was computed from the clock a
        // moment before this reads it again.
        match self.since_ms {
            Some(since)
                if crate::migrate::now_ms().saturating_sub(since) <= 2 * DAY_MS + MINUTE_MS =>
            {
                HOUR_MS
            }
            _ => DAY_MS,
        }
    }
}

/// The session of a Responses response, through the partial index
/// `requests_response` (its predicate repeated so the planner may use it).
pub(crate) const SESSION_OF_RESPONSE: &str = "SELECT r.session_id, s.source FROM requests r \
    JOIN sessions s ON s.session_id = r.session_id \
    WHERE r.response_id = $1 AND r.dialect = 'openai-responses' \
    AND r.response_id IS NOT NULL LIMIT 1";

/// The session of a reply that made tool calls, by the reply's id, through
/// the calls' partial index `tool_calls_response` (no index on requests
/// but Responses': the other dialects' rows pay for none).
pub(crate) const SESSION_OF_CALLING_REPLY: &str = "SELECT c.session_id, s.source \
    FROM tool_calls c JOIN sessions s ON s.session_id = c.session_id \
    WHERE c.response_id = $1 AND c.response_id IS NOT NULL LIMIT 1";

/// Expands `async fn $name(pool, q) -> Result<Stats, sqlx::Error>` for one
/// backend. Every query of a report reads one snapshot (one read-only
/// transaction; `$snapshot` is the statement that makes it one, if the
/// backend needs it), so its sections agree although recording goes on;
/// `$byte_order` is the backend's [`Shape::byte_order`].
macro_rules! stats_fn {
    ($name:ident, $calls:ident, $pool:ty, $snapshot:expr, $byte_order:expr) => {
        async fn $name(pool: &$pool, q: &StatsQuery) -> Result<Stats, sqlx::Error> {
            let (since, tool, model, session) = (q.since_ms, &q.tool, &q.model, &q.session);
            let w = Shape {
                windowed: since.is_some(),
                by_session: session.is_some(),
                byte_order: $byte_order,
            };
            let mut tx = pool.begin().await?;
            let snapshot: Option<&str> = $snapshot;
            if let Some(sql) = snapshot {
                sqlx::query(sql).execute(&mut *tx).await?;
            }
            let pool = &mut *tx;
            let rows = match q.tool_rows {
                0 => TOOL_ROWS,
                n => n,
            };
            let rows = i64::try_from(rows).unwrap_or(i64::MAX);
            let tools: Vec<(String, i64, i64, i64, i64, i64)> = sqlx::query_as(&tools_sql(w))
                .bind(since)
                .bind(tool)
                .bind(model)
                .bind(session)
                .bind(rows)
                .fetch_all(&mut *pool)
                .await?;
            let models: Vec<(String, String, i64, i64, i64)> = sqlx::query_as(&models_sql(w))
                .bind(since)
                .bind(tool)
                .bind(model)
                .bind(session)
                .bind(rows)
                .fetch_all(&mut *pool)
                .await?;
            let sessions: Vec<(String, i64, i64, i64, i64)> = sqlx::query_as(&sessions_sql(w))
                .bind(since)
                .bind(tool)
                .bind(model)
                .bind(session)
                .bind(q.limit())
                .fetch_all(&mut *pool)
                .await?;
            type Failure = (
                i64,
                String,
                Option<String>,
                String,
                String,
                String,
                Option<String>,
            );
            let failures: Vec<Failure> = sqlx::query_as(&failures_sql(w))
                .bind(since)
                .bind(tool)
                .bind(model)
                .bind(session)
                .bind(q.limit())
                .fetch_all(&mut *pool)
                .await?;
            let timeline: Vec<(String, i64, i64, i64)> = sqlx::query_as(&timeline_sql(w))
                .bind(since)
                .bind(tool)
                .bind(model)
                .bind(session)
                .bind(q.bucket_ms())
                .bind(rows)
                .fetch_all(&mut *pool)
                .await?;
            let repairs: Vec<(String, i64)> = sqlx::query_as(&repairs_sql(w))
                .bind(since)
                .bind(model)
                .bind(session)
                .fetch_all(&mut *pool)
                .await?;
            let (total, errors, streaming, calls_incomplete): (i64, i64, i64, i64) =
                sqlx::query_as(&requests_sql(w))
                    .bind(since)
                    .bind(model)
                    .bind(session)
                    .fetch_one(&mut *pool)
                    .await?;
            tx.commit().await?;
            // Each row repeats the sums over all rows: any row tells them.
            let totals = CallTotals {
                tools: tools.first().map_or(0, |t| count(t.3)),
                calls: tools.first().map_or(0, |t| count(t.4)),
                failures: tools.first().map_or(0, |t| count(t.5)),
                model_tools: models.first().map_or(0, |m| count(m.4)),
            };
            Ok(Stats {
                totals,
                tools: tools
                    .into_iter()
                    .map(|(tool, c, f, ..)| ToolRow {
                        tool,
                        calls: count(c),
                        failures: count(f),
                        failure_rate: failure_rate(count(f), count(c)),
                    })
                    .collect(),
                models: models
                    .into_iter()
                    .map(|(model, tool, c, f, _)| ModelRow {
                        model,
                        tool,
                        calls: count(c),
                        failures: count(f),
                        failure_rate: failure_rate(count(f), count(c)),
                    })
                    .collect(),
                sessions: sessions
                    .into_iter()
                    .map(|(session_id, c, f, first_ms, last_ms)| SessionRow {
                        session_id,
                        calls: count(c),
                        failures: count(f),
                        first_ms,
                        last_ms,
                    })
                    .collect(),
                recent_failures: failures
                    .into_iter()
                    .map(
                        |(at_ms, session_id, model, tool, call_id, basis, excerpt)| FailureRow {
                            at_ms,
                            session_id,
                            model,
                            tool,
                            call_id,
                            basis,
                            excerpt,
                        },
                    )
                    .collect(),
                repairs: repairs
                    .into_iter()
                    .map(|(defect, n)| RepairRow {
                        defect,
                        count: count(n),
                    })
                    .collect(),
                requests: RequestTotals {
                    total: count(total),
                    errors: count(errors),
                    streaming: count(streaming),
                    calls_incomplete: count(calls_incomplete),
                },
                timeline: timeline
                    .into_iter()
                    .map(|(tool, bucket_ms, f, c)| TimelineRow {
                        tool,
                        bucket_ms,
                        failures: count(f),
                        calls: count(c),
                    })
                    .collect(),
            })
        }

        async fn $calls(
            pool: &$pool,
            session_id: &str,
            limit: i64,
        ) -> Result<Vec<CallRow>, sqlx::Error> {
            type Row = (
                String,
                String,
                Option<String>,
                Option<String>,
                Option<i64>,
                i64,
                Option<i64>,
                Option<i64>,
                Option<String>,
                Option<f64>,
                Option<i64>,
                Option<i64>,
                Option<String>,
            );
            let rows: Vec<Row> = sqlx::query_as(SESSION_CALLS_SQL)
                .bind(session_id)
                .bind(limit)
                .fetch_all(pool)
                .await?;
            Ok(rows
                .into_iter()
                .rev()
                .map(|r| CallRow {
                    call_id: r.0,
                    tool: r.1,
                    model: r.2,
                    request_id: r.3,
                    call_index: r.4,
                    at_ms: r.5,
                    result_at_ms: r.6,
                    failed: r.7.map(|f| f != 0),
                    basis: r.8,
                    exec_ms: r.9,
                    arguments_bytes: r.10,
                    content_bytes: r.11,
                    excerpt: r.12,
                })
                .collect())
        }
    };
}

// SQLite: a deferred transaction in WAL mode reads one snapshot from its
// first read. PostgreSQL: `READ COMMITTED` (the default) would give each
// statement its own.
stats_fn!(
    stats_sqlite,
    session_calls_sqlite,
    sqlx::SqlitePool,
    None,
    ""
);
stats_fn!(
    stats_postgres,
    session_calls_postgres,
    sqlx::PgPool,
    Some("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
    PG_BYTE_ORDER
);

// === impl Store (queries) ===

impl Store {
    /// The numbers `toolwarden stats` shows, filtered by `q`.
    /// On PostgreSQL a NUL in a filter reads as U+FFFD, as it was stored
    /// (`pg_text`).
    pub async fn stats(&self, q: &StatsQuery) -> Result<Stats, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => stats_sqlite(p, q).await,
            Pool::Postgres(p) => {
                let clean = |v: &Option<String>| v.as_deref().map(|s| pg_str(s).into_owned());
                let q = StatsQuery {
                    tool: clean(&q.tool),
                    model: clean(&q.model),
                    session: clean(&q.session),
                    ..q.clone()
                };
                stats_postgres(p, &q).await
            }
        }
        .map_err(StoreError::query)
    }

    /// The session (id, source) of the Responses API response `response_id`,
    /// if a request that got it was recorded.
    pub async fn session_of_response(
        &self,
        response_id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        self.session_by(SESSION_OF_RESPONSE, response_id).await
    }

    /// The session (id, source) of the reply `response_id` (any dialect),
    /// if it made a tool call that was recorded: what an Anthropic message
    /// thread's `continue` answering those calls joins.
    pub async fn session_of_calling_reply(
        &self,
        response_id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        self.session_by(SESSION_OF_CALLING_REPLY, response_id).await
    }

    /// `sql`'s one (session id, source) row for `response_id`.
    async fn session_by(
        &self,
        sql: &str,
        response_id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => {
                sqlx::query_as(sql)
                    .bind(response_id)
                    .fetch_optional(p)
                    .await
            }
            Pool::Postgres(p) => {
                sqlx::query_as(sql)
                    .bind(pg_str(response_id))
                    .fetch_optional(p)
                    .await
            }
        }
        .map_err(StoreError::query)
    }

    /// A session's tool calls in order, with their verdicts: all of them,
    /// however many (the dashboard reads [`Store::session_calls_newest`]).
    pub async fn session_calls(&self, session_id: &str) -> Result<Vec<CallRow>, StoreError> {
        self.calls_of(session_id, i64::MAX).await
    }

    /// A session's newest `limit` tool calls, in order, and whether older
    /// ones were left out: one session can hold weeks of a batch job's calls.
    pub async fn session_calls_newest(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<SessionCalls, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // One row more than asked for tells whether there are more.
        let mut calls = self.calls_of(session_id, limit.saturating_add(1)).await?;
        let truncated = i64::try_from(calls.len()).unwrap_or(i64::MAX) > limit;
        if truncated {
            calls.remove(0);
        }
        Ok(SessionCalls { calls, truncated })
    }

    /// The newest `limit` calls of a session, oldest first.
    async fn calls_of(&self, session_id: &str, limit: i64) -> Result<Vec<CallRow>, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => session_calls_sqlite(p, session_id, limit).await,
            Pool::Postgres(p) => session_calls_postgres(p, &pg_str(session_id), limit).await,
        }
        .map_err(StoreError::query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn since(ms: i64) -> StatsQuery {
        StatsQuery {
            since_ms: Some(ms),
            ..StatsQuery::default()
        }
    }

    /// Each statement of a report of `shape` with SQLite's plan of it
    /// (`EXPLAIN QUERY PLAN`, one line per step).
    async fn report_plans(shape: Shape) -> Vec<(String, Vec<String>)> {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("plan.db").display());
        let store = crate::Store::open(&url).await.unwrap();
        let crate::store::Pool::Sqlite(pool) = store.pool() else {
            unreachable!()
        };
        let queries = [
            tools_sql(shape),
            models_sql(shape),
            sessions_sql(shape),
            failures_sql(shape),
            timeline_sql(shape),
            repairs_sql(shape),
            requests_sql(shape),
        ];
        let mut plans = Vec::new();
        for sql in queries {
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .fetch_all(pool)
                    .await
                    .unwrap();
            plans.push((sql, plan.into_iter().map(|p| p.3).collect()));
        }
        plans
    }

    /// Whether a plan step searches one of `indexes`.
    fn searches(step: &str, indexes: &[&str]) -> bool {
        step.starts_with("SEARCH")
            && indexes
                .iter()
                .any(|i| step.contains(&format!("INDEX {i} ")))
    }

    /// A windowed report searches the time indexes: no query of it reads
    /// a whole table (SQLite's plans; PostgreSQL's planner takes the same
    /// index for `at_ms >= $1`).
    #[tokio::test]
    async fn a_windowed_report_reads_the_window_only() {
        let shape = Shape {
            windowed: true,
            by_session: false,
            byte_order: "",
        };
        for (sql, steps) in report_plans(shape).await {
            // `SCAN t`, `SCAN g`, `SCAN (subquery-N)`: the rows of the
            // statement's own subqueries, already filtered and grouped.
            let scans: Vec<&String> = steps
                .iter()
                .filter(|s| {
                    s.starts_with("SCAN")
                        && !(*s == "SCAN t" || *s == "SCAN g" || s.starts_with("SCAN (subquery-"))
                })
                .collect();
            assert!(scans.is_empty(), "{sql}: {steps:?}");
            let by_time = ["tool_calls_at", "requests_at", "dropped_tool_counts_at"];
            assert!(
                steps.iter().any(|s| searches(s, &by_time)),
                "{sql}: {steps:?}"
            );
        }
    }

    /// A report of one session over all time (the dashboard's session
    /// filter, `stats --since all --session X`) searches the session
    /// indexes by the session's number: it reads none of the other
    /// sessions' rows.
    #[tokio::test]
    async fn a_session_report_reads_the_session_only() {
        let shape = Shape {
            windowed: false,
            by_session: true,
            byte_order: "",
        };
        for (sql, steps) in report_plans(shape).await {
            // Only the big tables matter: the dropped counts (no sessions,
            // left out by `$4 IS NULL`) and the union's own rows are small.
            let big = ["tool_calls", "requests", "request_repairs"];
            let scans: Vec<&String> = steps
                .iter()
                .filter(|s| {
                    s.starts_with("SCAN")
                        && big.iter().any(|t| s.split_whitespace().nth(1) == Some(*t))
                })
                .collect();
            assert!(scans.is_empty(), "{sql}: {steps:?}");
            let by_session = [
                "tool_calls_call_session",
                "tool_calls_session_newest",
                "requests_session",
            ];
            assert!(
                steps.iter().any(|s| searches(s, &by_session)),
                "{sql}: {steps:?}"
            );
        }
    }

    #[test]
    fn a_rate_is_at_most_one() {
        assert_eq!(failure_rate(0, 0), 0.0);
        assert_eq!(failure_rate(1, 4), 0.25);
        assert_eq!(failure_rate(3, 0), 1.0);
        assert_eq!(failure_rate(5, 4), 1.0);
    }

    #[test]
    fn bucket_size_holds_for_any_since() {
        let now = crate::migrate::now_ms();
        assert_eq!(since(now - HOUR_MS).bucket_ms(), HOUR_MS);
        assert_eq!(since(now - 3 * DAY_MS).bucket_ms(), DAY_MS);
        // `--since 48h`, read a moment later: still hours.
        assert_eq!(since(now - 2 * DAY_MS - 50).bucket_ms(), HOUR_MS);
        assert_eq!(since(now - 2 * DAY_MS - 2 * MINUTE_MS).bucket_ms(), DAY_MS);
        assert_eq!(StatsQuery::default().bucket_ms(), DAY_MS);
        // Client-supplied (`/api/stats?since=`): no overflow either way.
        assert_eq!(since(i64::MIN).bucket_ms(), DAY_MS);
        assert_eq!(since(i64::MAX).bucket_ms(), HOUR_MS);
    }
}
