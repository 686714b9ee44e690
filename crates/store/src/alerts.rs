//! What the gateway's alert rules read and write (issue 19): the numbers of
//! a sliding window ([`Store::alert_window`]), the current state of the
//! alerts firing and of those resolved last ([`Store::alert_states`]; one
//! alert's: [`Store::alert_latest`]), the claim of a transition
//! ([`Store::claim_alert_transition`]) and which gateways evaluate
//! ([`Store::alert_heartbeat`]). The same SQL on SQLite and
//! PostgreSQL, so gateways sharing one database see the same numbers, and
//! the `alert_transitions` primary key lets exactly one of them record (and
//! announce) each transition.

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::store::{Pool, Store};

/// Tool results in the window, per (tool, model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolWindowRow {
    /// The tool.
    pub tool: String,
    /// The model that called it (`unknown` when not known).
    pub model: String,
    /// Results received in the window.
    pub results: u64,
    /// Of which failed.
    pub failures: u64,
    /// Sum of the estimated client-side execution times (ms) known.
    pub exec_ms_sum: f64,
    /// How many results have an execution time.
    pub exec_count: u64,
}

/// Requests in the window, per model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestWindowRow {
    /// The requested model (`unknown` when not known).
    pub model: String,
    /// Requests proxied.
    pub requests: u64,
    /// Upstream errors: status 429 or ≥ 500, or the gateway's own error.
    pub upstream_errors: u64,
    /// Repair changes applied (pairing defects found).
    pub repairs: u64,
}

/// The numbers of one window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AlertWindow {
    /// Per (tool, model).
    pub tools: Vec<ToolWindowRow>,
    /// Per model.
    pub requests: Vec<RequestWindowRow>,
}

impl AlertWindow {
    /// Whether either half of a window read with `rows` rows a half
    /// ([`Store::alert_window`]) holds that many: the store may have left
    /// the quietest pairs or models out ([`Store::alert_window_of`]).
    pub fn is_cut(&self, rows: i64) -> bool {
        self.tools_cut(rows) || self.requests_cut(rows)
    }

    /// Whether the tools half holds `rows` rows.
    pub fn tools_cut(&self, rows: i64) -> bool {
        full(self.tools.len(), rows)
    }

    /// Whether the requests half holds `rows` rows.
    pub fn requests_cut(&self, rows: i64) -> bool {
        full(self.requests.len(), rows)
    }
}

/// Whether `len` rows are as many as a window's half holds.
fn full(len: usize, rows: i64) -> bool {
    i64::try_from(len).unwrap_or(i64::MAX) >= rows
}

/// One row of `alert_transitions`: an alert turning `firing` or `resolved`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertTransition {
    /// `rule|tool|model|instance`: identifies the alert.
    pub alert_key: String,
    /// The alert's transition number: odd = firing, even = resolved.
    pub seq: i64,
    /// `firing` or `resolved`.
    pub state: String,
    /// The rule's name (`tool_failure_rate`, …).
    pub rule: String,
    /// The tool, or `*` for rules over requests.
    pub tool: String,
    /// The model, or `*` for all models.
    pub model: String,
    /// The gateway instance, for rules over one gateway's own counters; empty otherwise.
    pub instance: String,
    /// The measured value when the transition was decided.
    pub value: f64,
    /// The threshold it was compared with.
    pub threshold: f64,
    /// The volume behind the value (results, requests, events).
    pub volume: i64,
    /// When the alert started firing (unix ms).
    pub started_ms: i64,
    /// When this transition was decided (unix ms).
    pub at_ms: i64,
    /// The gateway that recorded it.
    pub gateway: String,
}

/// Results are counted by their own time; `at_ms >= $2` (a bound a little
/// older than the window) lets the `tool_calls_at` index narrow the scan.
/// The results the recorder could not write in detail (folded into
/// `dropped_tool_counts` per minute, by their own time: `crate::aggregate`)
/// count too, those of the minutes that end in the window (through
/// `dropped_tool_counts_at`; `$3` is the start of the minute the window
/// starts in): an overloaded gateway, which drops events, would otherwise
/// show its alerts a fraction of the results, and a tool failing then could
/// stay under `min_results`. A minute's counts have no time within it, so
/// the window's first minute counts whole: leaving it out missed the
/// failures counted in its part of the window. They have no execution
/// time.
/// The tools half; `filter` narrows both its sources to some tools
/// ([`names_in`]).
fn tools_sql(filter: &str) -> String {
    format!(
        "SELECT tool, model, CAST(SUM(n) AS BIGINT), CAST(SUM(f) AS BIGINT), \
         SUM(e), CAST(SUM(timed) AS BIGINT) FROM (\
         SELECT tool, COALESCE(model, 'unknown') AS model, COUNT(*) AS n, \
         SUM(CASE WHEN failed = 1 THEN 1 ELSE 0 END) AS f, COALESCE(SUM(exec_ms), 0.0) AS e, \
         COUNT(exec_ms) AS timed \
         FROM tool_calls WHERE result_at_ms >= $1 AND at_ms >= $2 AND failed IS NOT NULL{filter} \
         GROUP BY tool, COALESCE(model, 'unknown') \
         UNION ALL SELECT tool, COALESCE(model, 'unknown'), results, failures, 0.0, 0 \
         FROM dropped_tool_counts WHERE at_ms >= $3 AND results > 0{filter}) AS w \
         GROUP BY tool, model ORDER BY SUM(n) DESC, tool, model LIMIT $4"
    )
}

/// The requests half; `filter` narrows it to some models ([`names_in`]).
fn requests_sql(filter: &str) -> String {
    format!(
        "SELECT COALESCE(model, 'unknown'), COUNT(*), \
         SUM(CASE WHEN status >= 500 OR status = 429 OR error IS NOT NULL THEN 1 ELSE 0 END), \
         CAST(COALESCE(SUM(repairs), 0) AS BIGINT) \
         FROM requests WHERE at_ms >= $1{filter} GROUP BY COALESCE(model, 'unknown') \
         ORDER BY COUNT(*) DESC, COALESCE(model, 'unknown') LIMIT $2"
    )
}

/// ` AND {column} IN ($first, …)` for `names` bound from `$first` on;
/// nothing for `None` (the whole window).
fn names_in(column: &str, first: usize, names: Option<&[String]>) -> String {
    let Some(names) = names else {
        return String::new();
    };
    let marks: Vec<String> = (first..first + names.len())
        .map(|i| format!("${i}"))
        .collect();
    format!(" AND {column} IN ({})", marks.join(", "))
}

/// Names bound in one statement of [`Store::alert_window_of`].
const NAMES_PER_STATEMENT: usize = 500;

/// Most rows of each half of a window by default ([`Store::alert_window`]):
/// its busiest (tool, model) pairs and models. Tools and models are named
/// by clients, so the pairs in a window are not a bounded set; past the
/// busiest 10,000 they are left out (too few results each to fire a rule
/// that asks for any volume, in all but a flood of names); the rows of the
/// alerts firing are read by name then ([`Store::alert_window_of`]).
pub const DEFAULT_WINDOW_ROWS: i64 = 10_000;
const COLUMNS: &str = "alert_key, seq, state, rule, tool, model, instance, value, threshold, \
    volume, started_ms, at_ms, gateway";
const INSERT_SQL: &str = "INSERT INTO alert_transitions (alert_key, seq, state, rule, tool, \
    model, instance, value, threshold, volume, started_ms, at_ms, gateway) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
    ON CONFLICT (alert_key, seq) DO NOTHING";
/// The claimed transition as its alert's latest, unless the alert holds a
/// later one (claims of one alert's steps may commit out of order).
const LATEST_SQL: &str = "INSERT INTO alert_latest (alert_key, seq, state, rule, tool, \
    model, instance, value, threshold, volume, started_ms, at_ms, gateway) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
    ON CONFLICT (alert_key) DO UPDATE SET seq = excluded.seq, state = excluded.state, \
    rule = excluded.rule, tool = excluded.tool, model = excluded.model, \
    instance = excluded.instance, value = excluded.value, threshold = excluded.threshold, \
    volume = excluded.volume, started_ms = excluded.started_ms, at_ms = excluded.at_ms, \
    gateway = excluded.gateway WHERE excluded.seq > alert_latest.seq";
/// One alert's latest transition.
const LATEST_OF_SQL: &str = "SELECT alert_key, seq, state, rule, tool, model, instance, value, \
    threshold, volume, started_ms, at_ms, gateway FROM alert_latest WHERE alert_key = $1";

/// How many resolved alerts [`Store::alert_states`] gives by default
/// besides the firing ones: the latest resolved, as many as `/metrics`
/// shows.
pub const DEFAULT_RESOLVED_STATES: i64 = 1000;

const HEARTBEAT_SQL: &str = "INSERT INTO alert_heartbeats (instance, seen_ms) VALUES ($1, $2) \
    ON CONFLICT (instance) DO UPDATE SET seen_ms = excluded.seen_ms";
const FORGET_SQL: &str = "DELETE FROM alert_heartbeats WHERE seen_ms < $1";
const SEEN_SQL: &str = "SELECT instance, seen_ms FROM alert_heartbeats";

/// How much older than the window a call may be for its result to count:
/// tools that run longer than this are not seen by the window query.
pub const LONGEST_TOOL_MS: i64 = 3_600_000;

type TransitionRow = (
    String,
    i64,
    String,
    String,
    String,
    String,
    String,
    f64,
    f64,
    i64,
    i64,
    i64,
    String,
);

/// The latest transition of every firing alert and of the latest `$1`
/// resolved ones, newest first, ties by the bytes of `alert_key` on
/// either backend (`byte_order`: what follows a name in `ORDER BY` for
/// that, `crate::stats`' `PG_BYTE_ORDER` on PostgreSQL). Both halves read
/// `alert_latest` by its `(state, at_ms)` index: the cost follows the
/// alerts firing, not the history.
fn states_sql(byte_order: &str) -> String {
    format!(
        "SELECT {COLUMNS} FROM (SELECT {COLUMNS} FROM alert_latest WHERE state = 'firing' \
         UNION ALL SELECT {COLUMNS} FROM (SELECT {COLUMNS} FROM alert_latest \
         WHERE state = 'resolved' ORDER BY at_ms DESC LIMIT $1) AS r) AS s \
         ORDER BY at_ms DESC, alert_key{byte_order}"
    )
}

/// The latest `$1` transitions, ties ordered as [`states_sql`]'s.
fn recent_sql(byte_order: &str) -> String {
    format!(
        "SELECT {COLUMNS} FROM alert_transitions \
         ORDER BY at_ms DESC, alert_key{byte_order}, seq LIMIT $1"
    )
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn transition(r: TransitionRow) -> AlertTransition {
    AlertTransition {
        alert_key: r.0,
        seq: r.1,
        state: r.2,
        rule: r.3,
        tool: r.4,
        model: r.5,
        instance: r.6,
        value: r.7,
        threshold: r.8,
        volume: r.9,
        started_ms: r.10,
        at_ms: r.11,
        gateway: r.12,
    }
}

/// `$query` with the 13 columns of `$t` bound in `COLUMNS`' order.
macro_rules! bind_transition {
    ($query:expr, $t:expr) => {
        $query
            .bind(&$t.alert_key)
            .bind($t.seq)
            .bind(&$t.state)
            .bind(&$t.rule)
            .bind(&$t.tool)
            .bind(&$t.model)
            .bind(&$t.instance)
            .bind($t.value)
            .bind($t.threshold)
            .bind($t.volume)
            .bind($t.started_ms)
            .bind($t.at_ms)
            .bind(&$t.gateway)
    };
}

macro_rules! alert_fns {
    ($window:ident, $latest:ident, $latest_of:ident, $recent:ident, $claim:ident, $beat:ident, $pool:ty, $byte_order:expr) => {
        async fn $window(
            pool: &$pool,
            since_ms: i64,
            only: Option<(&[String], &[String])>,
            rows: i64,
        ) -> Result<AlertWindow, sqlx::Error> {
            let (tool_names, model_names): (Vec<_>, Vec<_>) = match only {
                None => (vec![None], vec![None]),
                Some((tools, models)) => (
                    tools.chunks(NAMES_PER_STATEMENT).map(Some).collect(),
                    models.chunks(NAMES_PER_STATEMENT).map(Some).collect(),
                ),
            };
            let mut window = AlertWindow::default();
            for names in tool_names {
                let sql = tools_sql(&names_in("tool", 5, names));
                let mut query = sqlx::query_as::<_, (String, String, i64, i64, f64, i64)>(&sql)
                    .bind(since_ms)
                    .bind(since_ms.saturating_sub(LONGEST_TOOL_MS))
                    .bind(since_ms - since_ms.rem_euclid(crate::aggregate::MINUTE_MS))
                    .bind(rows);
                for name in names.unwrap_or_default() {
                    query = query.bind(name);
                }
                let rows = query.fetch_all(pool).await?;
                window
                    .tools
                    .extend(rows.into_iter().map(|(tool, model, n, f, sum, timed)| {
                        ToolWindowRow {
                            tool,
                            model,
                            results: count(n),
                            failures: count(f),
                            exec_ms_sum: sum,
                            exec_count: count(timed),
                        }
                    }));
            }
            for names in model_names {
                let sql = requests_sql(&names_in("COALESCE(model, 'unknown')", 3, names));
                let mut query = sqlx::query_as::<_, (String, i64, i64, i64)>(&sql)
                    .bind(since_ms)
                    .bind(rows);
                for name in names.unwrap_or_default() {
                    query = query.bind(name);
                }
                let rows = query.fetch_all(pool).await?;
                window
                    .requests
                    .extend(
                        rows.into_iter()
                            .map(|(model, n, errors, repairs)| RequestWindowRow {
                                model,
                                requests: count(n),
                                upstream_errors: count(errors),
                                repairs: count(repairs),
                            }),
                    );
            }
            Ok(window)
        }

        async fn $latest(pool: &$pool, resolved: i64) -> Result<Vec<AlertTransition>, sqlx::Error> {
            let rows: Vec<TransitionRow> = sqlx::query_as(&states_sql($byte_order))
                .bind(resolved)
                .fetch_all(pool)
                .await?;
            Ok(rows.into_iter().map(transition).collect())
        }

        async fn $latest_of(
            pool: &$pool,
            alert_key: &str,
        ) -> Result<Option<AlertTransition>, sqlx::Error> {
            let row: Option<TransitionRow> = sqlx::query_as(LATEST_OF_SQL)
                .bind(alert_key)
                .fetch_optional(pool)
                .await?;
            Ok(row.map(transition))
        }

        async fn $recent(pool: &$pool, limit: i64) -> Result<Vec<AlertTransition>, sqlx::Error> {
            let rows: Vec<TransitionRow> = sqlx::query_as(&recent_sql($byte_order))
                .bind(limit)
                .fetch_all(pool)
                .await?;
            Ok(rows.into_iter().map(transition).collect())
        }

        async fn $claim(pool: &$pool, t: &AlertTransition) -> Result<bool, sqlx::Error> {
            let mut tx = pool.begin().await?;
            let done = bind_transition!(sqlx::query(INSERT_SQL), t)
                .execute(&mut *tx)
                .await?;
            let claimed = done.rows_affected() == 1;
            if claimed {
                bind_transition!(sqlx::query(LATEST_SQL), t)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(claimed)
        }

        async fn $beat(
            pool: &$pool,
            instance: &str,
            now_ms: i64,
            forget_before_ms: i64,
        ) -> Result<Vec<(String, i64)>, sqlx::Error> {
            sqlx::query(HEARTBEAT_SQL)
                .bind(instance)
                .bind(now_ms)
                .execute(pool)
                .await?;
            sqlx::query(FORGET_SQL)
                .bind(forget_before_ms)
                .execute(pool)
                .await?;
            sqlx::query_as(SEEN_SQL).fetch_all(pool).await
        }
    };
}

alert_fns!(
    window_sqlite,
    latest_sqlite,
    latest_of_sqlite,
    recent_sqlite,
    claim_sqlite,
    heartbeat_sqlite,
    sqlx::SqlitePool,
    ""
);
alert_fns!(
    window_postgres,
    latest_postgres,
    latest_of_postgres,
    recent_postgres,
    claim_postgres,
    heartbeat_postgres,
    sqlx::PgPool,
    crate::stats::PG_BYTE_ORDER
);

// === impl Store (alerts) ===

impl Store {
    /// Tool results (by their time) and requests since `since_ms`: the
    /// `rows` busiest (tool, model) pairs and models ([`DEFAULT_WINDOW_ROWS`]
    /// by default), busiest first.
    pub async fn alert_window(&self, since_ms: i64, rows: i64) -> Result<AlertWindow, StoreError> {
        self.window(since_ms, None, rows).await
    }

    /// The rows of [`Store::alert_window`] for these `tools` (with each of
    /// their models) and these `models` only, however few results they
    /// have: what a window cut at `rows` (see [`AlertWindow::is_cut`])
    /// may have left out of the alerts firing. Each statement binds 500
    /// names and gives at most `rows` rows.
    pub async fn alert_window_of(
        &self,
        since_ms: i64,
        (tools, models): (&[String], &[String]),
        rows: i64,
    ) -> Result<AlertWindow, StoreError> {
        self.window(since_ms, Some((tools, models)), rows).await
    }

    async fn window(
        &self,
        since_ms: i64,
        only: Option<(&[String], &[String])>,
        rows: i64,
    ) -> Result<AlertWindow, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => window_sqlite(p, since_ms, only, rows).await,
            Pool::Postgres(p) => window_postgres(p, since_ms, only, rows).await,
        }
        .map_err(StoreError::query)
    }

    /// The latest transition of every alert firing now and of the
    /// `resolved` alerts resolved last ([`DEFAULT_RESOLVED_STATES`] by
    /// default), newest first. An alert resolved before those:
    /// [`Store::alert_latest`].
    pub async fn alert_states(&self, resolved: i64) -> Result<Vec<AlertTransition>, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => latest_sqlite(p, resolved).await,
            Pool::Postgres(p) => latest_postgres(p, resolved).await,
        }
        .map_err(StoreError::query)
    }

    /// The latest transition of the alert `alert_key`, if it was ever raised
    /// (and retention has not removed it since it resolved).
    pub async fn alert_latest(
        &self,
        alert_key: &str,
    ) -> Result<Option<AlertTransition>, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => latest_of_sqlite(p, alert_key).await,
            Pool::Postgres(p) => latest_of_postgres(p, alert_key).await,
        }
        .map_err(StoreError::query)
    }

    /// The latest `limit` transitions, newest first.
    pub async fn alert_history(&self, limit: usize) -> Result<Vec<AlertTransition>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        match self.pool() {
            Pool::Sqlite(p) => recent_sqlite(p, limit).await,
            Pool::Postgres(p) => recent_postgres(p, limit).await,
        }
        .map_err(StoreError::query)
    }

    /// Records `t` unless another gateway recorded the same transition
    /// (`alert_key`, `seq`) first: `true` when this call recorded it, i.e.
    /// the caller is the one that announces it. In the same transaction,
    /// `t` becomes its alert's latest unless the alert holds a later step.
    pub async fn claim_alert_transition(&self, t: &AlertTransition) -> Result<bool, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => claim_sqlite(p, t).await,
            Pool::Postgres(p) => claim_postgres(p, t).await,
        }
        .map_err(StoreError::query)
    }

    /// Records that the gateway `instance` evaluates alerts at `now_ms`,
    /// forgets the instances not seen since `forget_before_ms`, and answers
    /// the instances left, each with when it was last seen.
    pub async fn alert_heartbeat(
        &self,
        instance: &str,
        now_ms: i64,
        forget_before_ms: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        match self.pool() {
            Pool::Sqlite(p) => heartbeat_sqlite(p, instance, now_ms, forget_before_ms).await,
            Pool::Postgres(p) => heartbeat_postgres(p, instance, now_ms, forget_before_ms).await,
        }
        .map_err(StoreError::query)
    }
}
