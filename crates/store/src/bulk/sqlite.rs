//! The bulk operations on SQLite: the rows as one JSON text, read with `jsonb_each`.

use super::*;
use serde_json::{Value, json};
use sqlx::SqliteConnection;

fn rows(v: Vec<Value>) -> String {
    Value::Array(v).to_string()
}

pub(crate) async fn insert_requests(
    conn: &mut SqliteConnection,
    reqs: &[&RequestRecord],
) -> Result<HashSet<String>, sqlx::Error> {
    let data = rows(
        reqs.iter()
            .map(|r| {
                json!([
                    r.request_id,
                    r.session_id,
                    r.at_ms,
                    r.provider,
                    r.dialect,
                    r.path,
                    r.model,
                    r.status,
                    i64::from(r.streaming),
                    finite(r.upstream_latency_ms),
                    r.first_byte_ms.map(finite),
                    finite(r.overhead_us),
                    r.input_tokens.map(int),
                    r.output_tokens.map(int),
                    r.response_id,
                    r.repair_mode,
                    r.repairs.len(),
                    r.parse_error,
                    r.error
                ])
            })
            .collect(),
    );
    // Which keys exist already (usually none: few rows come back through
    // sqlx's per-row channel), then one INSERT without RETURNING. Exact:
    // `BEGIN IMMEDIATE` holds the write lock for the whole batch.
    let old: Vec<(String,)> = sqlx::query_as(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         SELECT t.request_id FROM (SELECT value->>0 AS k FROM u0) AS u \
         CROSS JOIN requests t ON t.request_id = u.k",
    )
    .bind(&data)
    .fetch_all(&mut *conn)
    .await?;
    let old: HashSet<&str> = old.iter().map(|r| r.0.as_str()).collect();
    let new = reqs
        .iter()
        .filter(|r| !old.contains(r.request_id.as_str()))
        .map(|r| r.request_id.clone())
        .collect();
    sqlx::query(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         INSERT INTO requests (request_id, session_id, at_ms, provider, dialect, path, model, \
         status, streaming, upstream_latency_ms, first_byte_ms, overhead_us, input_tokens, \
         output_tokens, response_id, repair_mode, repairs, parse_error, error) \
         SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, \
         value->>7, value->>8, value->>9, value->>10, value->>11, value->>12, value->>13, \
         value->>14, value->>15, value->>16, value->>17, value->>18 FROM u0 \
         WHERE true ON CONFLICT (request_id) DO NOTHING",
    )
    .bind(data)
    .execute(&mut *conn)
    .await?;
    Ok(new)
}

pub(crate) async fn insert_repairs(
    conn: &mut SqliteConnection,
    repairs: &[(String, i64, String)],
) -> Result<(), sqlx::Error> {
    let data = rows(repairs.iter().map(|r| json!([r.0, r.1, r.2])).collect());
    sqlx::query(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         INSERT INTO request_repairs (request_id, idx, defect) \
         SELECT value->>0, value->>1, value->>2 FROM u0 \
         WHERE true ON CONFLICT (request_id, idx) DO NOTHING",
    )
    .bind(data)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(crate) async fn upsert_sessions(
    conn: &mut SqliteConnection,
    sessions: &SessionDeltas,
) -> Result<(), sqlx::Error> {
    let data = rows(
        sessions
            .iter()
            .map(|(id, d)| json!([id, d.source, d.first_ms, d.last_ms, d.requests]))
            .collect(),
    );
    sqlx::query(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         INSERT INTO sessions (session_id, source, first_ms, last_ms, requests) \
         SELECT value->>0, value->>1, value->>2, value->>3, value->>4 FROM u0 \
         WHERE true ON CONFLICT (session_id) DO UPDATE SET \
         first_ms = min(sessions.first_ms, excluded.first_ms), \
         last_ms = max(sessions.last_ms, excluded.last_ms), \
         requests = sessions.requests + excluded.requests",
    )
    .bind(data)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

fn pair_rows(pairs: &[(String, String)]) -> String {
    rows(pairs.iter().map(|p| json!([p.0, p.1])).collect())
}

/// The candidates come back as one JSON row: one message through sqlx's
/// worker channel instead of one per row.
fn candidate_rows(json: &str) -> Result<Vec<Candidate>, sqlx::Error> {
    let rows: Vec<CandidateRow> =
        serde_json::from_str(json).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(candidates(rows))
}

pub(crate) async fn find_orphans(
    conn: &mut SqliteConnection,
    pairs: &[(String, String)],
) -> Result<Vec<Candidate>, sqlx::Error> {
    let rows: String = sqlx::query_scalar(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         SELECT json_group_array(json_array(t.id, t.session_id, t.call_id, t.tool, t.result_at_ms)) \
         FROM (SELECT value->>0 AS s, value->>1 AS c FROM u0) AS u \
         CROSS JOIN tool_calls t ON t.session_id = u.s AND t.call_id = u.c \
         WHERE t.request_id IS NULL",
    )
    .bind(pair_rows(pairs))
    .fetch_one(&mut *conn)
    .await?;
    candidate_rows(&rows)
}

pub(crate) async fn unpaired_calls(
    conn: &mut SqliteConnection,
    pairs: &[(String, String)],
) -> Result<Vec<Candidate>, sqlx::Error> {
    let rows: String = sqlx::query_scalar(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         SELECT json_group_array(json_array(t.id, t.session_id, t.call_id, t.tool, t.call_at_ms)) \
         FROM (SELECT value->>0 AS s, value->>1 AS c FROM u0) AS u \
         CROSS JOIN tool_calls t ON t.session_id = u.s AND t.call_id = u.c \
         WHERE t.result_at_ms IS NULL",
    )
    .bind(pair_rows(pairs))
    .fetch_one(&mut *conn)
    .await?;
    candidate_rows(&rows)
}

pub(crate) async fn insert_calls(
    conn: &mut SqliteConnection,
    calls: &[&ToolCallRecord],
) -> Result<HashSet<CallKey>, sqlx::Error> {
    let data = rows(
        calls
            .iter()
            .map(|c| {
                json!([
                    c.session_id,
                    c.call_id,
                    c.tool,
                    c.provider,
                    c.model,
                    c.at_ms,
                    c.request_id,
                    c.call_index,
                    c.response_id,
                    int(c.arguments_bytes)
                ])
            })
            .collect(),
    );
    let old: Vec<CallKey> = sqlx::query_as(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         SELECT t.request_id, t.call_index \
         FROM (SELECT value->>6 AS r, value->>7 AS i FROM u0) AS u \
         CROSS JOIN tool_calls t ON t.request_id = u.r AND t.call_index = u.i",
    )
    .bind(&data)
    .fetch_all(&mut *conn)
    .await?;
    let old: HashSet<CallKey> = old.into_iter().collect();
    let new = calls
        .iter()
        .map(|c| (c.request_id.clone(), i64::from(c.call_index)))
        .filter(|k| !old.contains(k))
        .collect();
    sqlx::query(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         INSERT INTO tool_calls (session_id, call_id, tool, provider, model, at_ms, request_id, \
         call_index, response_id, arguments_bytes, call_at_ms) \
         SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, \
         value->>7, value->>8, value->>9, value->>5 FROM u0 \
         WHERE true ON CONFLICT (request_id, call_index) DO NOTHING",
    )
    .bind(data)
    .execute(&mut *conn)
    .await?;
    Ok(new)
}

pub(crate) async fn insert_result_keys(
    conn: &mut SqliteConnection,
    results: &[&ToolResultRecord],
) -> Result<HashSet<ResultKey>, sqlx::Error> {
    let data = rows(
        results
            .iter()
            .map(|r| {
                json!([
                    r.session_id,
                    r.call_id,
                    r.message_index,
                    r.request_id,
                    r.at_ms
                ])
            })
            .collect(),
    );
    let old: Vec<ResultKey> = sqlx::query_as(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         SELECT t.session_id, t.call_id, t.message_index \
         FROM (SELECT value->>0 AS s, value->>1 AS c, value->>2 AS m FROM u0) AS u \
         CROSS JOIN tool_results t \
         ON t.session_id = u.s AND t.call_id = u.c AND t.message_index = u.m",
    )
    .bind(&data)
    .fetch_all(&mut *conn)
    .await?;
    let old: HashSet<ResultKey> = old.into_iter().collect();
    let new = results
        .iter()
        .map(|r| {
            (
                r.session_id.clone(),
                r.call_id.clone(),
                i64::from(r.message_index),
            )
        })
        .filter(|k| !old.contains(k))
        .collect();
    sqlx::query(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         INSERT INTO tool_results (session_id, call_id, message_index, request_id, at_ms) \
         SELECT value->>0, value->>1, value->>2, value->>3, value->>4 FROM u0 \
         WHERE true ON CONFLICT (session_id, call_id, message_index) DO NOTHING",
    )
    .bind(data)
    .execute(&mut *conn)
    .await?;
    Ok(new)
}

pub(crate) async fn pair_results(
    conn: &mut SqliteConnection,
    pairs: &[Pairing<'_>],
) -> Result<(), sqlx::Error> {
    let data = rows(
        pairs
            .iter()
            .map(|p| {
                json!([
                    p.id,
                    p.rec.request_id,
                    p.rec.message_index,
                    i64::from(p.rec.failed),
                    p.rec.basis,
                    int(p.rec.content_bytes),
                    p.rec.excerpt,
                    p.rec.at_ms,
                    p.exec_ms.map(finite)
                ])
            })
            .collect(),
    );
    sqlx::query(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         UPDATE tool_calls SET result_request_id = u.rq, message_index = u.mi, failed = u.f, \
         basis = u.b, content_bytes = u.cb, excerpt = u.ex, result_at_ms = u.a, exec_ms = u.e \
         FROM (SELECT value->>0 AS id, value->>1 AS rq, value->>2 AS mi, value->>3 AS f, \
         value->>4 AS b, value->>5 AS cb, value->>6 AS ex, value->>7 AS a, value->>8 AS e \
         FROM u0) AS u WHERE tool_calls.id = u.id",
    )
    .bind(data)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(crate) async fn call_ids_with_unpaired_calls(
    conn: &mut SqliteConnection,
    call_ids: &[&str],
) -> Result<HashSet<String>, sqlx::Error> {
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT t.call_id FROM (SELECT value AS c FROM json_each($1)) AS u \
         CROSS JOIN tool_calls t ON t.call_id = u.c WHERE t.result_at_ms IS NULL",
    )
    .bind(rows(call_ids.iter().map(|c| json!(c)).collect()))
    .fetch_all(&mut *conn)
    .await?;
    Ok(ids.into_iter().collect())
}

/// Results that pair with no call, each a row of its own under its
/// resolved tool name.
pub(crate) async fn insert_orphan_results(
    conn: &mut SqliteConnection,
    results: &[(&ToolResultRecord, &str)],
) -> Result<(), sqlx::Error> {
    let data = rows(
        results
            .iter()
            .map(|(r, tool)| {
                json!([
                    r.session_id,
                    r.call_id,
                    tool,
                    r.provider,
                    r.model,
                    r.at_ms,
                    r.request_id,
                    r.message_index,
                    i64::from(r.failed),
                    r.basis,
                    int(r.content_bytes),
                    r.excerpt,
                    r.exec_ms.map(finite)
                ])
            })
            .collect(),
    );
    sqlx::query(
        "WITH u0 AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each($1)) \
         INSERT INTO tool_calls (session_id, call_id, tool, provider, model, at_ms, \
         result_request_id, message_index, failed, basis, content_bytes, excerpt, result_at_ms, \
         exec_ms) \
         SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, \
         value->>7, value->>8, value->>9, value->>10, value->>11, value->>5, value->>12 FROM u0",
    )
    .bind(data)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
