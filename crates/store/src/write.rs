//! Writing a batch of events in one transaction, the same logic for both
//! backends (the body is expanded once per backend by a macro; only a few SQL
//! texts differ, see [`Sql`]).
//!
//! Exactness: requests are unique on `request_id`, calls on
//! `(request_id, call_index)`, results on `(session_id, call_id,
//! message_index)`; every insert is `ON CONFLICT DO NOTHING` and only an
//! inserted row counts as new. On PostgreSQL the batch first takes
//! transaction-scoped advisory locks on the hashes of its call ids (in sorted
//! order, so batches never deadlock on them): a call and its result written
//! by two gateways at the same moment are then applied one after the other,
//! and the second sees the first's row.

use crate::event::{Event, RequestRecord, ToolResultRecord};

/// What writing one event did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Already in the store: nothing changed.
    Duplicate,
    /// A new request or call.
    New,
    /// A new result, with its resolved tool name and execution time.
    NewResult { tool: String, exec_ms: Option<f64> },
}

/// The SQL texts that differ between backends.
#[derive(Debug)]
pub(crate) struct Sql {
    pub upsert_session: &'static str,
}

pub(crate) const SQLITE: Sql = Sql {
    upsert_session: "INSERT INTO sessions (session_id, source, first_ms, last_ms, requests) \
        VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id) DO UPDATE SET \
        first_ms = min(sessions.first_ms, excluded.first_ms), \
        last_ms = max(sessions.last_ms, excluded.last_ms), \
        requests = sessions.requests + excluded.requests",
};

pub(crate) const POSTGRES: Sql = Sql {
    upsert_session: "INSERT INTO sessions (session_id, source, first_ms, last_ms, requests) \
        VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id) DO UPDATE SET \
        first_ms = LEAST(sessions.first_ms, excluded.first_ms), \
        last_ms = GREATEST(sessions.last_ms, excluded.last_ms), \
        requests = sessions.requests + excluded.requests",
};

/// Locks the call ids of a batch (PostgreSQL only; SQLite writers are
/// serialized by `BEGIN IMMEDIATE`).
pub(crate) const PG_LOCK_CALL_IDS: &str = "SELECT pg_advisory_xact_lock(h) FROM \
    (SELECT DISTINCT hashtext(x) AS h FROM unnest($1::text[]) AS x ORDER BY h) AS s";

pub(crate) const INSERT_REQUEST: &str = "INSERT INTO requests (request_id, session_id, at_ms, \
    provider, dialect, path, model, status, streaming, upstream_latency_ms, first_byte_ms, \
    overhead_us, input_tokens, output_tokens, response_id, repair_mode, repairs, parse_error, \
    error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
    $18, $19) ON CONFLICT (request_id) DO NOTHING";

pub(crate) const INSERT_REPAIR: &str = "INSERT INTO request_repairs (request_id, idx, defect) \
    VALUES ($1, $2, $3) ON CONFLICT (request_id, idx) DO NOTHING";

/// A late call (its result was recorded first) completes the result's row.
pub(crate) const MERGE_CALL_INTO_ORPHAN: &str = "UPDATE tool_calls SET request_id = $1, \
    call_index = $2, response_id = $3, arguments_bytes = $4, call_at_ms = $5, at_ms = $5, \
    tool = $6, model = COALESCE(model, $7), \
    exec_ms = COALESCE(exec_ms, CASE WHEN result_at_ms >= $5 THEN result_at_ms - $5 ELSE 0 END) \
    WHERE id = (SELECT id FROM tool_calls WHERE session_id = $8 AND call_id = $9 \
      AND request_id IS NULL ORDER BY (result_at_ms >= $5) DESC, result_at_ms ASC, id ASC LIMIT 1) \
    AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE request_id = $1 AND call_index = $2)";

pub(crate) const INSERT_CALL: &str = "INSERT INTO tool_calls (session_id, call_id, tool, \
    provider, model, at_ms, request_id, call_index, response_id, arguments_bytes, call_at_ms) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $6) \
    ON CONFLICT (request_id, call_index) DO NOTHING";

pub(crate) const INSERT_RESULT_KEY: &str = "INSERT INTO tool_results (session_id, call_id, \
    message_index, request_id, at_ms) VALUES ($1, $2, $3, $4, $5) \
    ON CONFLICT (session_id, call_id, message_index) DO NOTHING";

/// Unpaired calls: prefer those that finished before the result arrived,
/// then the most recent (tau-bench reuses call ids across turns).
pub(crate) const FIND_CALL_IN_SESSION: &str = "SELECT id, tool, call_at_ms FROM tool_calls \
    WHERE session_id = $1 AND call_id = $2 AND result_at_ms IS NULL \
    ORDER BY (call_at_ms <= $3) DESC, call_at_ms DESC, id DESC LIMIT 1";

pub(crate) const FIND_CALL_BY_RESPONSE: &str = "SELECT id, tool, call_at_ms FROM tool_calls \
    WHERE response_id = $1 AND call_id = $2 AND result_at_ms IS NULL \
    ORDER BY (call_at_ms <= $3) DESC, call_at_ms DESC, id DESC LIMIT 1";

/// Across sessions, only when the result's own session never saw this call id.
pub(crate) const FIND_CALL_ANYWHERE: &str = "SELECT id, tool, call_at_ms FROM tool_calls \
    WHERE call_id = $1 AND result_at_ms IS NULL \
    AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE session_id = $2 AND call_id = $1) \
    ORDER BY (call_at_ms <= $3) DESC, call_at_ms DESC, id DESC LIMIT 1";

pub(crate) const PAIR_RESULT: &str = "UPDATE tool_calls SET result_request_id = $1, \
    message_index = $2, failed = $3, basis = $4, content_bytes = $5, excerpt = $6, \
    result_at_ms = $7, exec_ms = $8 WHERE id = $9";

pub(crate) const NAME_IN_SESSION: &str = "SELECT tool FROM tool_calls WHERE session_id = $1 \
    AND call_id = $2 AND request_id IS NOT NULL ORDER BY call_at_ms DESC LIMIT 1";

pub(crate) const NAME_BY_RESPONSE: &str = "SELECT tool FROM tool_calls WHERE response_id = $1 \
    AND call_id = $2 AND request_id IS NOT NULL LIMIT 1";

pub(crate) const NAME_ANYWHERE: &str = "SELECT tool FROM tool_calls WHERE call_id = $1 \
    AND request_id IS NOT NULL ORDER BY call_at_ms DESC LIMIT 1";

pub(crate) const INSERT_ORPHAN_RESULT: &str = "INSERT INTO tool_calls (session_id, call_id, \
    tool, provider, model, at_ms, result_request_id, message_index, failed, basis, \
    content_bytes, excerpt, result_at_ms, exec_ms) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $6, $13)";

/// Sessions touched by the new requests of a batch, folded per session.
#[derive(Debug, Default)]
pub(crate) struct SessionDeltas(std::collections::BTreeMap<String, SessionDelta>);

#[derive(Debug)]
pub(crate) struct SessionDelta {
    pub source: String,
    pub first_ms: i64,
    pub last_ms: i64,
    pub requests: i64,
}

/// Saturating conversion for sizes and counts.
pub(crate) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The call ids a batch touches, for the advisory locks.
pub(crate) fn call_ids(events: &[Event]) -> Vec<String> {
    let mut ids: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some(c.call_id.clone()),
            Event::ToolResult(r) => Some(r.call_id.clone()),
            Event::Request(_) => None,
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// exec_ms from the record, else from the call's finish time (never negative).
pub(crate) fn exec_ms(rec: &ToolResultRecord, call_at_ms: Option<i64>) -> Option<f64> {
    rec.exec_ms
        .or_else(|| call_at_ms.map(|c| rec.at_ms.saturating_sub(c).max(0) as f64))
}

// === impl SessionDeltas ===

impl SessionDeltas {
    pub(crate) fn add(&mut self, r: &RequestRecord) {
        let d = self
            .0
            .entry(r.session_id.clone())
            .or_insert_with(|| SessionDelta {
                source: r.session_source.clone(),
                first_ms: r.at_ms,
                last_ms: r.at_ms,
                requests: 0,
            });
        d.first_ms = d.first_ms.min(r.at_ms);
        d.last_ms = d.last_ms.max(r.at_ms);
        d.requests += 1;
    }

    /// In session-id order, so concurrent batches lock rows in one order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &SessionDelta)> {
        self.0.iter()
    }
}

/// Expands `async fn $name(conn, sql, events) -> Result<Vec<Outcome>, sqlx::Error>`
/// for one backend's connection type. The caller owns the transaction.
macro_rules! write_batch_fn {
    ($name:ident, $conn:ty) => {
        pub(crate) async fn $name(
            conn: &mut $conn,
            sql: &$crate::write::Sql,
            events: &[$crate::event::Event],
        ) -> Result<Vec<$crate::write::Outcome>, sqlx::Error> {
            use $crate::event::Event;
            use $crate::write::*;

            let mut sessions = SessionDeltas::default();
            let mut out = Vec::with_capacity(events.len());
            for event in events {
                let outcome = match event {
                    Event::Request(r) => {
                        let done = sqlx::query(INSERT_REQUEST)
                            .bind(&r.request_id)
                            .bind(&r.session_id)
                            .bind(r.at_ms)
                            .bind(&r.provider)
                            .bind(&r.dialect)
                            .bind(&r.path)
                            .bind(&r.model)
                            .bind(i64::from(r.status))
                            .bind(i64::from(r.streaming))
                            .bind(r.upstream_latency_ms)
                            .bind(r.first_byte_ms)
                            .bind(r.overhead_us)
                            .bind(r.input_tokens.map(int))
                            .bind(r.output_tokens.map(int))
                            .bind(&r.response_id)
                            .bind(&r.repair_mode)
                            .bind(int(r.repairs.len() as u64))
                            .bind(&r.parse_error)
                            .bind(&r.error)
                            .execute(&mut *conn)
                            .await?;
                        if done.rows_affected() == 0 {
                            Outcome::Duplicate
                        } else {
                            for (i, defect) in r.repairs.iter().enumerate() {
                                sqlx::query(INSERT_REPAIR)
                                    .bind(&r.request_id)
                                    .bind(int(i as u64))
                                    .bind(defect)
                                    .execute(&mut *conn)
                                    .await?;
                            }
                            sessions.add(r);
                            Outcome::New
                        }
                    }
                    Event::ToolCall(c) => {
                        let merged = sqlx::query(MERGE_CALL_INTO_ORPHAN)
                            .bind(&c.request_id)
                            .bind(i64::from(c.call_index))
                            .bind(&c.response_id)
                            .bind(int(c.arguments_bytes))
                            .bind(c.at_ms)
                            .bind(&c.tool)
                            .bind(&c.model)
                            .bind(&c.session_id)
                            .bind(&c.call_id)
                            .execute(&mut *conn)
                            .await?;
                        let new = merged.rows_affected() > 0
                            || sqlx::query(INSERT_CALL)
                                .bind(&c.session_id)
                                .bind(&c.call_id)
                                .bind(&c.tool)
                                .bind(&c.provider)
                                .bind(&c.model)
                                .bind(c.at_ms)
                                .bind(&c.request_id)
                                .bind(i64::from(c.call_index))
                                .bind(&c.response_id)
                                .bind(int(c.arguments_bytes))
                                .execute(&mut *conn)
                                .await?
                                .rows_affected()
                                > 0;
                        if new { Outcome::New } else { Outcome::Duplicate }
                    }
                    Event::ToolResult(r) => {
                        let inserted = sqlx::query(INSERT_RESULT_KEY)
                            .bind(&r.session_id)
                            .bind(&r.call_id)
                            .bind(i64::from(r.message_index))
                            .bind(&r.request_id)
                            .bind(r.at_ms)
                            .execute(&mut *conn)
                            .await?;
                        if inserted.rows_affected() == 0 {
                            Outcome::Duplicate
                        } else {
                            let mut found: Option<(i64, String, Option<i64>)> =
                                sqlx::query_as(FIND_CALL_IN_SESSION)
                                    .bind(&r.session_id)
                                    .bind(&r.call_id)
                                    .bind(r.at_ms)
                                    .fetch_optional(&mut *conn)
                                    .await?;
                            if found.is_none() {
                                if let Some(prev) = &r.previous_response_id {
                                    found = sqlx::query_as(FIND_CALL_BY_RESPONSE)
                                        .bind(prev)
                                        .bind(&r.call_id)
                                        .bind(r.at_ms)
                                        .fetch_optional(&mut *conn)
                                        .await?;
                                }
                            }
                            if found.is_none() {
                                found = sqlx::query_as(FIND_CALL_ANYWHERE)
                                    .bind(&r.call_id)
                                    .bind(&r.session_id)
                                    .bind(r.at_ms)
                                    .fetch_optional(&mut *conn)
                                    .await?;
                            }
                            match found {
                                Some((id, call_tool, call_at)) => {
                                    let exec = exec_ms(r, call_at);
                                    sqlx::query(PAIR_RESULT)
                                        .bind(&r.request_id)
                                        .bind(i64::from(r.message_index))
                                        .bind(i64::from(r.failed))
                                        .bind(&r.basis)
                                        .bind(int(r.content_bytes))
                                        .bind(&r.excerpt)
                                        .bind(r.at_ms)
                                        .bind(exec)
                                        .bind(id)
                                        .execute(&mut *conn)
                                        .await?;
                                    Outcome::NewResult { tool: call_tool, exec_ms: exec }
                                }
                                None => {
                                    let tool = match &r.tool {
                                        Some(t) => t.clone(),
                                        None => {
                                            let mut name: Option<String> =
                                                sqlx::query_scalar(NAME_IN_SESSION)
                                                    .bind(&r.session_id)
                                                    .bind(&r.call_id)
                                                    .fetch_optional(&mut *conn)
                                                    .await?;
                                            if name.is_none() {
                                                if let Some(prev) = &r.previous_response_id {
                                                    name = sqlx::query_scalar(NAME_BY_RESPONSE)
                                                        .bind(prev)
                                                        .bind(&r.call_id)
                                                        .fetch_optional(&mut *conn)
                                                        .await?;
                                                }
                                            }
                                            if name.is_none() {
                                                name = sqlx::query_scalar(NAME_ANYWHERE)
                                                    .bind(&r.call_id)
                                                    .fetch_optional(&mut *conn)
                                                    .await?;
                                            }
                                            name.unwrap_or_else(|| {
                                                tracing::warn!(
                                                    call_id = %r.call_id,
                                                    session_id = %r.session_id,
                                                    "tool result without a recorded call or tool name; recorded as `unknown`"
                                                );
                                                "unknown".to_owned()
                                            })
                                        }
                                    };
                                    sqlx::query(INSERT_ORPHAN_RESULT)
                                        .bind(&r.session_id)
                                        .bind(&r.call_id)
                                        .bind(&tool)
                                        .bind(&r.provider)
                                        .bind(&r.model)
                                        .bind(r.at_ms)
                                        .bind(&r.request_id)
                                        .bind(i64::from(r.message_index))
                                        .bind(i64::from(r.failed))
                                        .bind(&r.basis)
                                        .bind(int(r.content_bytes))
                                        .bind(&r.excerpt)
                                        .bind(r.exec_ms)
                                        .execute(&mut *conn)
                                        .await?;
                                    Outcome::NewResult { tool, exec_ms: r.exec_ms }
                                }
                            }
                        }
                    }
                };
                out.push(outcome);
            }
            for (session_id, d) in sessions.iter() {
                sqlx::query(sql.upsert_session)
                    .bind(session_id)
                    .bind(&d.source)
                    .bind(d.first_ms)
                    .bind(d.last_ms)
                    .bind(d.requests)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok(out)
        }
    };
}

write_batch_fn!(write_batch_sqlite, sqlx::SqliteConnection);
write_batch_fn!(write_batch_postgres, sqlx::PgConnection);
