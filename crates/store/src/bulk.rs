//! Set-based statements: one round trip per step of a batch, whatever its
//! size. The same operations, with the same Rust signatures, for each
//! backend: PostgreSQL binds one array per column and reads them with
//! `UNNEST`; SQLite binds the rows as one JSON text and reads it with
//! `json_each`. The batch planner in [`crate::write`] calls them.

use std::collections::HashSet;

use crate::event::{RequestRecord, ToolCallRecord, ToolResultRecord};
use crate::write::{SessionDeltas, int};

/// A `tool_calls` row that a call or a result may complete: `at_ms` is the
/// call's time for an unpaired call, the result's time for an orphan result.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub id: i64,
    pub session_id: String,
    pub call_id: String,
    pub tool: String,
    pub at_ms: Option<i64>,
}

/// A result to store in its call's row.
#[derive(Debug)]
pub(crate) struct Pairing<'a> {
    pub id: i64,
    pub rec: &'a ToolResultRecord,
    pub exec_ms: Option<f64>,
}

pub(crate) type CallKey = (String, i64);
pub(crate) type ResultKey = (String, String, i64);

type CandidateRow = (i64, String, String, String, Option<i64>);

fn candidates(rows: Vec<CandidateRow>) -> Vec<Candidate> {
    rows.into_iter()
        .map(|(id, session_id, call_id, tool, at_ms)| Candidate {
            id,
            session_id,
            call_id,
            tool,
            at_ms,
        })
        .collect()
}

/// Finite or zero: a NaN must not poison a batch (SQLite's JSON has no NaN).
fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

pub(crate) mod postgres {
    use super::*;
    use sqlx::PgConnection;

    pub(crate) async fn insert_requests(
        conn: &mut PgConnection,
        reqs: &[&RequestRecord],
    ) -> Result<HashSet<String>, sqlx::Error> {
        let col = |f: fn(&RequestRecord) -> String| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
        let opt =
            |f: fn(&RequestRecord) -> Option<String>| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
        let num = |f: fn(&RequestRecord) -> i64| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
        let onum =
            |f: fn(&RequestRecord) -> Option<i64>| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
        let flt = |f: fn(&RequestRecord) -> f64| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
        let rows: Vec<(String,)> = sqlx::query_as(
            "INSERT INTO requests (request_id, session_id, at_ms, provider, dialect, path, model, \
             status, streaming, upstream_latency_ms, first_byte_ms, overhead_us, input_tokens, \
             output_tokens, response_id, repair_mode, repairs, parse_error, error) \
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::text[], $5::text[], \
             $6::text[], $7::text[], $8::int8[], $9::int8[], $10::float8[], $11::float8[], \
             $12::float8[], $13::int8[], $14::int8[], $15::text[], $16::text[], $17::int8[], \
             $18::text[], $19::text[]) ON CONFLICT (request_id) DO NOTHING RETURNING request_id",
        )
        .bind(col(|r| r.request_id.clone()))
        .bind(col(|r| r.session_id.clone()))
        .bind(num(|r| r.at_ms))
        .bind(col(|r| r.provider.clone()))
        .bind(opt(|r| r.dialect.clone()))
        .bind(col(|r| r.path.clone()))
        .bind(opt(|r| r.model.clone()))
        .bind(num(|r| i64::from(r.status)))
        .bind(num(|r| i64::from(r.streaming)))
        .bind(flt(|r| r.upstream_latency_ms))
        .bind(reqs.iter().map(|r| r.first_byte_ms).collect::<Vec<_>>())
        .bind(flt(|r| r.overhead_us))
        .bind(onum(|r| r.input_tokens.map(int)))
        .bind(onum(|r| r.output_tokens.map(int)))
        .bind(opt(|r| r.response_id.clone()))
        .bind(col(|r| r.repair_mode.clone()))
        .bind(num(|r| int(r.repairs.len() as u64)))
        .bind(opt(|r| r.parse_error.clone()))
        .bind(opt(|r| r.error.clone()))
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    pub(crate) async fn insert_repairs(
        conn: &mut PgConnection,
        repairs: &[(String, i64, String)],
    ) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO request_repairs (request_id, idx, defect) \
             SELECT * FROM UNNEST($1::text[], $2::int8[], $3::text[]) \
             ON CONFLICT (request_id, idx) DO NOTHING",
        )
        .bind(repairs.iter().map(|r| r.0.clone()).collect::<Vec<_>>())
        .bind(repairs.iter().map(|r| r.1).collect::<Vec<_>>())
        .bind(repairs.iter().map(|r| r.2.clone()).collect::<Vec<_>>())
        .execute(&mut *conn)
        .await?;
        Ok(())
    }

    pub(crate) async fn upsert_sessions(
        conn: &mut PgConnection,
        sessions: &SessionDeltas,
    ) -> Result<(), sqlx::Error> {
        let (mut ids, mut sources, mut first, mut last, mut n) =
            (vec![], vec![], vec![], vec![], vec![]);
        for (id, d) in sessions.iter() {
            ids.push(id.clone());
            sources.push(d.source.clone());
            first.push(d.first_ms);
            last.push(d.last_ms);
            n.push(d.requests);
        }
        sqlx::query(
            "INSERT INTO sessions (session_id, source, first_ms, last_ms, requests) \
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[]) \
             ON CONFLICT (session_id) DO UPDATE SET \
             first_ms = LEAST(sessions.first_ms, excluded.first_ms), \
             last_ms = GREATEST(sessions.last_ms, excluded.last_ms), \
             requests = sessions.requests + excluded.requests",
        )
        .bind(ids)
        .bind(sources)
        .bind(first)
        .bind(last)
        .bind(n)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }

    /// Result-only rows (no call recorded yet) for these (session, call id) pairs.
    pub(crate) async fn find_orphans(
        conn: &mut PgConnection,
        pairs: &[(String, String)],
    ) -> Result<Vec<Candidate>, sqlx::Error> {
        let rows: Vec<CandidateRow> = sqlx::query_as(
            "SELECT t.id, t.session_id, t.call_id, t.tool, t.result_at_ms FROM tool_calls t \
             JOIN UNNEST($1::text[], $2::text[]) AS u(s, c) ON t.session_id = u.s AND t.call_id = u.c \
             WHERE t.request_id IS NULL",
        )
        .bind(pairs.iter().map(|p| p.0.clone()).collect::<Vec<_>>())
        .bind(pairs.iter().map(|p| p.1.clone()).collect::<Vec<_>>())
        .fetch_all(&mut *conn)
        .await?;
        Ok(candidates(rows))
    }

    /// Calls without a result for these (session, call id) pairs.
    pub(crate) async fn unpaired_calls(
        conn: &mut PgConnection,
        pairs: &[(String, String)],
    ) -> Result<Vec<Candidate>, sqlx::Error> {
        let rows: Vec<CandidateRow> = sqlx::query_as(
            "SELECT t.id, t.session_id, t.call_id, t.tool, t.call_at_ms FROM tool_calls t \
             JOIN UNNEST($1::text[], $2::text[]) AS u(s, c) ON t.session_id = u.s AND t.call_id = u.c \
             WHERE t.result_at_ms IS NULL",
        )
        .bind(pairs.iter().map(|p| p.0.clone()).collect::<Vec<_>>())
        .bind(pairs.iter().map(|p| p.1.clone()).collect::<Vec<_>>())
        .fetch_all(&mut *conn)
        .await?;
        Ok(candidates(rows))
    }

    pub(crate) async fn insert_calls(
        conn: &mut PgConnection,
        calls: &[&ToolCallRecord],
    ) -> Result<HashSet<CallKey>, sqlx::Error> {
        let rows: Vec<CallKey> = sqlx::query_as(
            "INSERT INTO tool_calls (session_id, call_id, tool, provider, model, at_ms, request_id, \
             call_index, response_id, arguments_bytes, call_at_ms) \
             SELECT s, c, t, p, m, a, r, i, rs, ab, a FROM UNNEST($1::text[], $2::text[], \
             $3::text[], $4::text[], $5::text[], $6::int8[], $7::text[], $8::int8[], $9::text[], \
             $10::int8[]) AS u(s, c, t, p, m, a, r, i, rs, ab) \
             ON CONFLICT (request_id, call_index) DO NOTHING RETURNING request_id, call_index",
        )
        .bind(calls.iter().map(|c| c.session_id.clone()).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| c.call_id.clone()).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| c.tool.clone()).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| c.provider.clone()).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| c.model.clone()).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| c.at_ms).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| c.request_id.clone()).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| i64::from(c.call_index)).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| c.response_id.clone()).collect::<Vec<_>>())
        .bind(calls.iter().map(|c| int(c.arguments_bytes)).collect::<Vec<_>>())
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().collect())
    }

    pub(crate) async fn insert_result_keys(
        conn: &mut PgConnection,
        results: &[&ToolResultRecord],
    ) -> Result<HashSet<ResultKey>, sqlx::Error> {
        let rows: Vec<ResultKey> = sqlx::query_as(
            "INSERT INTO tool_results (session_id, call_id, message_index, request_id, at_ms) \
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::text[], $5::int8[]) \
             ON CONFLICT (session_id, call_id, message_index) DO NOTHING \
             RETURNING session_id, call_id, message_index",
        )
        .bind(
            results
                .iter()
                .map(|r| r.session_id.clone())
                .collect::<Vec<_>>(),
        )
        .bind(
            results
                .iter()
                .map(|r| r.call_id.clone())
                .collect::<Vec<_>>(),
        )
        .bind(
            results
                .iter()
                .map(|r| i64::from(r.message_index))
                .collect::<Vec<_>>(),
        )
        .bind(
            results
                .iter()
                .map(|r| r.request_id.clone())
                .collect::<Vec<_>>(),
        )
        .bind(results.iter().map(|r| r.at_ms).collect::<Vec<_>>())
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().collect())
    }

    pub(crate) async fn pair_results(
        conn: &mut PgConnection,
        pairs: &[Pairing<'_>],
    ) -> Result<(), sqlx::Error> {
        sqlx::query(
            "UPDATE tool_calls t SET result_request_id = u.rq, message_index = u.mi, failed = u.f, \
             basis = u.b, content_bytes = u.cb, excerpt = u.ex, result_at_ms = u.a, exec_ms = u.e \
             FROM UNNEST($1::int8[], $2::text[], $3::int8[], $4::int8[], $5::text[], $6::int8[], \
             $7::text[], $8::int8[], $9::float8[]) AS u(id, rq, mi, f, b, cb, ex, a, e) \
             WHERE t.id = u.id",
        )
        .bind(pairs.iter().map(|p| p.id).collect::<Vec<_>>())
        .bind(
            pairs
                .iter()
                .map(|p| p.rec.request_id.clone())
                .collect::<Vec<_>>(),
        )
        .bind(
            pairs
                .iter()
                .map(|p| i64::from(p.rec.message_index))
                .collect::<Vec<_>>(),
        )
        .bind(
            pairs
                .iter()
                .map(|p| i64::from(p.rec.failed))
                .collect::<Vec<_>>(),
        )
        .bind(
            pairs
                .iter()
                .map(|p| p.rec.basis.clone())
                .collect::<Vec<_>>(),
        )
        .bind(
            pairs
                .iter()
                .map(|p| int(p.rec.content_bytes))
                .collect::<Vec<_>>(),
        )
        .bind(
            pairs
                .iter()
                .map(|p| p.rec.excerpt.clone())
                .collect::<Vec<_>>(),
        )
        .bind(pairs.iter().map(|p| p.rec.at_ms).collect::<Vec<_>>())
        .bind(pairs.iter().map(|p| p.exec_ms).collect::<Vec<_>>())
        .execute(&mut *conn)
        .await?;
        Ok(())
    }
}

pub(crate) mod sqlite {
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
        let rows: Vec<(String,)> = sqlx::query_as(
            "INSERT INTO requests (request_id, session_id, at_ms, provider, dialect, path, model, \
             status, streaming, upstream_latency_ms, first_byte_ms, overhead_us, input_tokens, \
             output_tokens, response_id, repair_mode, repairs, parse_error, error) \
             SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, \
             value->>7, value->>8, value->>9, value->>10, value->>11, value->>12, value->>13, \
             value->>14, value->>15, value->>16, value->>17, value->>18 FROM json_each($1) \
             WHERE true ON CONFLICT (request_id) DO NOTHING RETURNING request_id",
        )
        .bind(data)
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    pub(crate) async fn insert_repairs(
        conn: &mut SqliteConnection,
        repairs: &[(String, i64, String)],
    ) -> Result<(), sqlx::Error> {
        let data = rows(repairs.iter().map(|r| json!([r.0, r.1, r.2])).collect());
        sqlx::query(
            "INSERT INTO request_repairs (request_id, idx, defect) \
             SELECT value->>0, value->>1, value->>2 FROM json_each($1) \
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
            "INSERT INTO sessions (session_id, source, first_ms, last_ms, requests) \
             SELECT value->>0, value->>1, value->>2, value->>3, value->>4 FROM json_each($1) \
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

    pub(crate) async fn find_orphans(
        conn: &mut SqliteConnection,
        pairs: &[(String, String)],
    ) -> Result<Vec<Candidate>, sqlx::Error> {
        let rows: Vec<CandidateRow> = sqlx::query_as(
            "SELECT t.id, t.session_id, t.call_id, t.tool, t.result_at_ms \
             FROM (SELECT value->>0 AS s, value->>1 AS c FROM json_each($1)) AS u \
             JOIN tool_calls t ON t.session_id = u.s AND t.call_id = u.c \
             WHERE t.request_id IS NULL",
        )
        .bind(pair_rows(pairs))
        .fetch_all(&mut *conn)
        .await?;
        Ok(candidates(rows))
    }

    pub(crate) async fn unpaired_calls(
        conn: &mut SqliteConnection,
        pairs: &[(String, String)],
    ) -> Result<Vec<Candidate>, sqlx::Error> {
        let rows: Vec<CandidateRow> = sqlx::query_as(
            "SELECT t.id, t.session_id, t.call_id, t.tool, t.call_at_ms \
             FROM (SELECT value->>0 AS s, value->>1 AS c FROM json_each($1)) AS u \
             JOIN tool_calls t ON t.session_id = u.s AND t.call_id = u.c \
             WHERE t.result_at_ms IS NULL",
        )
        .bind(pair_rows(pairs))
        .fetch_all(&mut *conn)
        .await?;
        Ok(candidates(rows))
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
        let rows: Vec<CallKey> = sqlx::query_as(
            "INSERT INTO tool_calls (session_id, call_id, tool, provider, model, at_ms, request_id, \
             call_index, response_id, arguments_bytes, call_at_ms) \
             SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, \
             value->>7, value->>8, value->>9, value->>5 FROM json_each($1) \
             WHERE true ON CONFLICT (request_id, call_index) DO NOTHING \
             RETURNING request_id, call_index",
        )
        .bind(data)
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().collect())
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
        let rows: Vec<ResultKey> = sqlx::query_as(
            "INSERT INTO tool_results (session_id, call_id, message_index, request_id, at_ms) \
             SELECT value->>0, value->>1, value->>2, value->>3, value->>4 FROM json_each($1) \
             WHERE true ON CONFLICT (session_id, call_id, message_index) DO NOTHING \
             RETURNING session_id, call_id, message_index",
        )
        .bind(data)
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().collect())
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
            "UPDATE tool_calls SET result_request_id = u.rq, message_index = u.mi, failed = u.f, \
             basis = u.b, content_bytes = u.cb, excerpt = u.ex, result_at_ms = u.a, exec_ms = u.e \
             FROM (SELECT value->>0 AS id, value->>1 AS rq, value->>2 AS mi, value->>3 AS f, \
             value->>4 AS b, value->>5 AS cb, value->>6 AS ex, value->>7 AS a, value->>8 AS e \
             FROM json_each($1)) AS u WHERE tool_calls.id = u.id",
        )
        .bind(data)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }
}
