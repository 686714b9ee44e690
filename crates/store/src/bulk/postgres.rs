//! The bulk operations on PostgreSQL: one array per column, read with `UNNEST`.

use super::*;
use crate::event::Event;
use sqlx::PgConnection;

pub(crate) async fn insert_requests(
    conn: &mut PgConnection,
    reqs: &[&RequestRecord],
    nos: &SessionNos,
) -> Result<HashSet<String>, sqlx::Error> {
    let col = |f: fn(&RequestRecord) -> String| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
    let opt =
        |f: fn(&RequestRecord) -> Option<String>| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
    let num = |f: fn(&RequestRecord) -> i64| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
    let onum = |f: fn(&RequestRecord) -> Option<i64>| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
    let flt = |f: fn(&RequestRecord) -> f64| reqs.iter().map(|r| f(r)).collect::<Vec<_>>();
    let rows: Vec<(String,)> = sqlx::query_as(
        "INSERT INTO requests (request_id, session_id, at_ms, provider, dialect, path, model, \
         status, streaming, upstream_latency_ms, first_byte_ms, overhead_us, input_tokens, \
         output_tokens, response_id, repair_mode, repairs, parse_error, error, session_no, \
         calls_incomplete) \
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::text[], $5::text[], \
         $6::text[], $7::text[], $8::int8[], $9::int8[], $10::float8[], $11::float8[], \
         $12::float8[], $13::int8[], $14::int8[], $15::text[], $16::text[], $17::int8[], \
         $18::text[], $19::text[], $20::int8[], $21::int8[]) ON CONFLICT (request_id) DO NOTHING \
         RETURNING request_id",
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
    .bind(nos.all(reqs.iter().map(|r| r.session_id.as_str()))?)
    .bind(num(|r| i64::from(r.calls_incomplete)))
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

/// The numbers of a batch's sessions, inserting those not seen yet
/// ([`crate::session_nos`]). The sessions the statement inserts answer
/// through `RETURNING`, the others from the table as the statement began
/// (not those it inserted: a session retention deleted while the statement
/// waited is still in that snapshot under its old number);
/// one inserted by another gateway in the meantime answers by neither,
/// and is read again once it has committed.
///
/// A session's first turn is the batch's when its row has none yet (a new
/// row's, and once a known row's, by the conflict's update).
///
/// A known session whose `last_ms` is more than [`STALE_SESSION_MS`]
/// before the batch's events is moved to them, and every known session's
/// row is locked until the batch commits (`ON CONFLICT DO UPDATE` locks
/// the rows it finds). So retention, which deletes sessions quiet since
/// its cutoff and checks `last_ms` again on the row it deletes, never
/// deletes a session under a batch writing rows for it. Sessions active
/// within that hour are not written: their requests keep `last_ms`
/// current.
pub(crate) async fn number_sessions(
    conn: &mut PgConnection,
    sessions: &BatchSessions<'_>,
) -> Result<SessionNos, sqlx::Error> {
    let (mut ids, mut sources, mut at, mut first_turns) = (vec![], vec![], vec![], vec![]);
    for (id, source, a, first_turn) in sessions.iter() {
        ids.push(id);
        sources.push(source);
        at.push(a);
        first_turns.push(first_turn);
    }
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "WITH new AS (INSERT INTO sessions (session_id, source, first_ms, last_ms, requests, \
         first_turn) \
         SELECT s, src, a, a, 0, ft FROM UNNEST($1::text[], $2::text[], $3::int8[], $5::int8[]) \
         AS u(s, src, a, ft) \
         ON CONFLICT (session_id) DO UPDATE SET last_ms = CASE \
         WHEN sessions.last_ms < excluded.last_ms - $4 THEN excluded.last_ms \
         ELSE sessions.last_ms END, \
         first_turn = COALESCE(sessions.first_turn, excluded.first_turn) \
         WHERE sessions.last_ms < excluded.last_ms - $4 \
         OR (sessions.first_turn IS NULL AND excluded.first_turn IS NOT NULL) \
         RETURNING session_id, no) \
         SELECT session_id, no FROM new \
         UNION ALL SELECT session_id, no FROM sessions WHERE session_id = ANY($1::text[]) \
         AND session_id NOT IN (SELECT session_id FROM new)",
    )
    .bind(&ids)
    .bind(&sources)
    .bind(&at)
    .bind(STALE_SESSION_MS)
    .bind(&first_turns)
    .fetch_all(&mut *conn)
    .await?;
    let mut nos = SessionNos::default();
    let known: HashSet<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    if known.len() < sessions.len() {
        let missing: Vec<&str> = ids.into_iter().filter(|id| !known.contains(id)).collect();
        let more: Vec<(String, i64)> = sqlx::query_as(
            "SELECT session_id, no FROM sessions WHERE session_id = ANY($1::text[])",
        )
        .bind(&missing)
        .fetch_all(&mut *conn)
        .await?;
        nos.extend(more);
    }
    nos.extend(rows);
    Ok(nos)
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
         source = CASE WHEN sessions.requests = 0 THEN excluded.source ELSE sessions.source END, \
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

/// Result-only rows (no call recorded yet) that these calls may complete:
/// per call, the oldest rows of its pair that arrived after it, then the
/// oldest of those recorded at most [`super::RESULT_LEAD_MS`] before
/// it, each probe at most the batch's count for the pair. The session by
/// its number (`tool_calls_orphan` is led by it).
pub(crate) async fn find_orphans(
    conn: &mut PgConnection,
    wanted: &[Lookup],
    nos: &SessionNos,
) -> Result<Vec<Candidate>, sqlx::Error> {
    let session_nos = wanted
        .iter()
        .map(|w| nos.of(&w.session_id))
        .collect::<Result<Vec<i64>, _>>()?;
    let rows: Vec<CandidateRow> = sqlx::query_as(concat!(
        "SELECT DISTINCT t.id, t.session_id, t.call_id, t.tool, t.result_at_ms \
         FROM UNNEST($1::int8[], $2::text[], $3::int8[], $4::int8[]) AS u(s, c, a, k) \
         CROSS JOIN LATERAL ((SELECT id, session_id, call_id, tool, result_at_ms FROM tool_calls \
         WHERE session_no = u.s AND call_id = u.c AND request_id IS NULL \
         AND result_at_ms >= u.a ORDER BY result_at_ms, id LIMIT u.k) \
         UNION ALL (SELECT id, session_id, call_id, tool, result_at_ms FROM tool_calls \
         WHERE session_no = u.s AND call_id = u.c AND request_id IS NULL \
         AND result_at_ms >= u.a - ",
        super::result_lead_ms!(),
        " ORDER BY result_at_ms, id LIMIT u.k)) AS t"
    ))
    .bind(session_nos)
    .bind(wanted.iter().map(|w| w.call_id.clone()).collect::<Vec<_>>())
    .bind(wanted.iter().map(|w| w.at_ms).collect::<Vec<_>>())
    .bind(wanted.iter().map(|w| w.limit).collect::<Vec<_>>())
    .fetch_all(&mut *conn)
    .await?;
    Ok(candidates(rows))
}

/// Binds the lookups' columns as five arrays and fetches the rows.
pub(super) async fn lookup(
    conn: &mut PgConnection,
    wanted: &[Lookup],
    sql: &'static str,
) -> Result<Vec<CandidateRow>, sqlx::Error> {
    sqlx::query_as(sql)
        .bind(
            wanted
                .iter()
                .map(|w| w.session_id.clone())
                .collect::<Vec<_>>(),
        )
        .bind(wanted.iter().map(|w| w.call_id.clone()).collect::<Vec<_>>())
        .bind(wanted.iter().map(|w| w.at_ms).collect::<Vec<_>>())
        .bind(wanted.iter().map(|w| w.limit).collect::<Vec<_>>())
        .bind(wanted.iter().map(|w| w.need).collect::<Vec<_>>())
        .fetch_all(&mut *conn)
        .await
}

/// Result-only rows in any session with these late calls' ids (id, time),
/// recorded from [`super::RESULT_LEAD_MS`] before the call on: (index of
/// the call, row id, result time), up to one more per id than the id
/// occurs (`tool_calls_orphan_by_time`: runs by the id's last two characters,
/// in time order).
pub(crate) async fn orphans_anywhere(
    conn: &mut PgConnection,
    calls: &[(&str, i64)],
) -> Result<Vec<(usize, i64, i64)>, sqlx::Error> {
    let ids: Vec<&str> = calls.iter().map(|c| c.0).collect();
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(concat!(
        "SELECT u.n - 1, t.id, t.result_at_ms \
         FROM UNNEST($1::text[], $2::int8[], $3::int8[]) WITH ORDINALITY AS u(c, a, k, n) \
         CROSS JOIN LATERAL (SELECT id, result_at_ms FROM tool_calls \
         WHERE right(call_id, 2) = right(u.c, 2) AND result_at_ms >= u.a - ",
        super::result_lead_ms!(),
        " AND call_id = u.c AND request_id IS NULL LIMIT u.k) AS t"
    ))
    .bind(&ids)
    .bind(calls.iter().map(|c| c.1).collect::<Vec<_>>())
    .bind(limits_per_id(&ids))
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(n, id, at)| (usize::try_from(n).unwrap_or(usize::MAX), id, at))
        .collect())
}

/// Open calls that these results may pair with: per result (`g.o`, counted
/// once a row: how many open calls of its pair finished before it, up to
/// `p`, the rows of its pair up to it), the newest of those calls when
/// there are any; when there are fewer than `p`, the newest of the pair
/// whatever their time and the same two probes of the parked calls
/// (`crate::parking`); each probe at most the batch's count for the pair.
/// The conditions on `g.o` are one-time filters: a probe not wanted reads
/// no index. Why this pairs as all four probes for every row would: SQLite's
/// `UNPAIRED_CALLS`, the same lookup.
pub(crate) async fn unpaired_calls(
    conn: &mut PgConnection,
    wanted: &[Lookup],
) -> Result<Vec<Candidate>, sqlx::Error> {
    let rows: Vec<CandidateRow> = lookup(
        conn,
        wanted,
        concat!(
            "SELECT DISTINCT t.id, t.session_id, t.call_id, t.tool, t.call_at_ms \
         FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[]) AS u(s, c, a, k, p) \
         CROSS JOIN LATERAL (SELECT count(*) AS o FROM (SELECT 1 FROM tool_calls \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 \
         AND call_at_ms <= u.a LIMIT u.p) AS before) AS g \
         CROSS JOIN LATERAL ((SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE g.o > 0 AND call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 \
         AND call_at_ms <= u.a ORDER BY call_at_ms DESC, id DESC LIMIT u.k) \
         UNION ALL (SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE (g.o < u.p OR u.p >= ",
            super::max_probe_rows!(),
            ") AND call_id = u.c AND session_id = u.s \
         AND result_at_ms IS NULL AND parked = 0 ORDER BY call_at_ms DESC, id DESC LIMIT u.k) \
         UNION ALL (SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE g.o < u.p AND call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 1 \
         AND call_at_ms <= u.a ORDER BY call_at_ms DESC, id DESC LIMIT u.k) \
         UNION ALL (SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE g.o < u.p AND call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 1 \
         ORDER BY call_at_ms DESC, id DESC LIMIT u.k)) AS t"
        ),
    )
    .await?;
    Ok(candidates(rows))
}

pub(crate) async fn insert_calls(
    conn: &mut PgConnection,
    calls: &[&ToolCallRecord],
    nos: &SessionNos,
) -> Result<HashSet<CallKey>, sqlx::Error> {
    let rows: Vec<CallKey> = sqlx::query_as(
        "INSERT INTO tool_calls (session_id, call_id, tool, provider, model, at_ms, request_id, \
         call_index, response_id, arguments_bytes, call_at_ms, session_no) \
         SELECT s, c, t, p, m, a, r, i, rs, ab, a, sn FROM UNNEST($1::text[], $2::text[], \
         $3::text[], $4::text[], $5::text[], $6::int8[], $7::text[], $8::int8[], $9::text[], \
         $10::int8[], $11::int8[]) AS u(s, c, t, p, m, a, r, i, rs, ab, sn) \
         ON CONFLICT (request_id, call_index) DO NOTHING RETURNING request_id, call_index",
    )
    .bind(
        calls
            .iter()
            .map(|c| c.session_id.clone())
            .collect::<Vec<_>>(),
    )
    .bind(calls.iter().map(|c| c.call_id.clone()).collect::<Vec<_>>())
    .bind(calls.iter().map(|c| c.tool.clone()).collect::<Vec<_>>())
    .bind(calls.iter().map(|c| c.provider.clone()).collect::<Vec<_>>())
    .bind(calls.iter().map(|c| c.model.clone()).collect::<Vec<_>>())
    .bind(calls.iter().map(|c| c.at_ms).collect::<Vec<_>>())
    .bind(
        calls
            .iter()
            .map(|c| c.request_id.clone())
            .collect::<Vec<_>>(),
    )
    .bind(
        calls
            .iter()
            .map(|c| i64::from(c.call_index))
            .collect::<Vec<_>>(),
    )
    .bind(
        calls
            .iter()
            .map(|c| c.continuable_response_id())
            .collect::<Vec<_>>(),
    )
    .bind(
        calls
            .iter()
            .map(|c| int(c.arguments_bytes))
            .collect::<Vec<_>>(),
    )
    .bind(nos.all(calls.iter().map(|c| c.session_id.as_str()))?)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().collect())
}

pub(crate) async fn insert_result_keys(
    conn: &mut PgConnection,
    results: &[&ToolResultRecord],
    nos: &SessionNos,
) -> Result<HashSet<ResultKey>, sqlx::Error> {
    let rows: Vec<ResultKey> = sqlx::query_as(
        "INSERT INTO tool_results (session_id, call_id, message_index, request_id, at_ms, \
         session_no) \
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::text[], $5::int8[], \
         $6::int8[]) \
         ON CONFLICT (session_no, call_id, message_index) DO NOTHING \
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
    .bind(nos.all(results.iter().map(|r| r.session_id.as_str()))?)
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

pub(crate) async fn call_ids_with_unpaired_calls(
    conn: &mut PgConnection,
    call_ids: &[&str],
) -> Result<HashSet<String>, sqlx::Error> {
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT t.call_id FROM UNNEST($1::text[]) AS u(c) \
         CROSS JOIN LATERAL ((SELECT call_id FROM tool_calls \
         WHERE call_id = u.c AND result_at_ms IS NULL AND parked = 0 LIMIT 1) \
         UNION ALL (SELECT call_id FROM tool_calls \
         WHERE call_id = u.c AND result_at_ms IS NULL AND parked = 1 LIMIT 1)) AS t",
    )
    .bind(call_ids)
    .fetch_all(&mut *conn)
    .await?;
    Ok(ids.into_iter().collect())
}

/// Of `turns` (session id, turn fingerprint), those some recorded call
/// turn of the session has.
pub(crate) async fn recorded_turns(
    conn: &mut PgConnection,
    turns: &[(&str, i64)],
    nos: &SessionNos,
) -> Result<HashSet<(String, i64)>, sqlx::Error> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT DISTINCT u.s, u.t FROM UNNEST($1::text[], $2::int8[], $3::int8[]) AS u(s, t, sn) \
         WHERE EXISTS (SELECT 1 FROM call_turns t WHERE t.session_no = u.sn AND t.turn_fp = u.t)",
    )
    .bind(turns.iter().map(|(s, _)| *s).collect::<Vec<&str>>())
    .bind(turns.iter().map(|(_, t)| *t).collect::<Vec<i64>>())
    .bind(nos.all(turns.iter().map(|(s, _)| *s))?)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Of `results`, the positions of those [`super::may_be_resent`] whose
/// session holds a recorded call of their id, of the response they continue
/// or of the turn they replay, already answered with the same result (among
/// its newest [`super::resent_probe_rows!`] calls of that id, by
/// `tool_calls_call_session`, each with one probe of `call_turns`' key);
/// or a fork's resend of an answer counted in its parent
/// ([`super::fork_of`]: the same probe in the newest
/// [`super::kin_probe_rows!`] sessions of its first turn, once one of them
/// holds the turn it replays: `kin_turns`, once per distinct pair of the
/// batch).
pub(crate) async fn resent_results(
    conn: &mut PgConnection,
    results: &[&ToolResultRecord],
    nos: &SessionNos,
) -> Result<HashSet<usize>, sqlx::Error> {
    let probed: Vec<(usize, &&ToolResultRecord)> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| super::may_be_resent(r))
        .collect();
    if probed.is_empty() {
        return Ok(HashSet::new());
    }
    let col = |f: &dyn Fn(&ToolResultRecord) -> i64| -> Vec<i64> {
        probed.iter().map(|(_, r)| f(r)).collect()
    };
    let found: Vec<i64> = sqlx::query_scalar(concat!(
        "WITH u AS (SELECT * FROM UNNEST($1::int8[], $2::text[], $3::int8[], $4::int8[], \
         $5::int8[], $6::text[], $7::text[], $8::int8[], $9::int8[]) \
         AS u(n, c, sn, b, f, e, p, tf, k)), \
         kin_turns AS MATERIALIZED (SELECT d.k, d.tf FROM \
         (SELECT DISTINCT k, tf FROM u WHERE k IS NOT NULL AND tf IS NOT NULL) AS d \
         WHERE EXISTS (SELECT 1 FROM (SELECT ks.no FROM sessions ks WHERE ks.first_turn = d.k \
         ORDER BY ks.no DESC LIMIT ",
        super::kin_probe_rows!(),
        ") AS kin WHERE EXISTS (SELECT 1 FROM call_turns ct \
         WHERE ct.session_no = kin.no AND ct.turn_fp = d.tf))) \
         SELECT u.n FROM u WHERE EXISTS (SELECT 1 FROM \
         (SELECT t.content_bytes, t.failed, t.excerpt, t.result_at_ms, t.response_id, \
         t.request_id FROM tool_calls t \
         WHERE t.session_no = u.sn AND t.call_id = u.c \
         AND t.request_id IS NOT NULL AND t.call_at_ms IS NOT NULL \
         ORDER BY t.call_at_ms DESC LIMIT ",
        super::resent_probe_rows!(),
        ") AS a WHERE a.result_at_ms IS NOT NULL AND a.content_bytes = u.b \
         AND a.failed = u.f AND a.excerpt IS NOT DISTINCT FROM u.e \
         AND (a.response_id = u.p OR EXISTS (SELECT 1 FROM call_turns ct \
         WHERE ct.request_id = a.request_id AND ct.turn_fp = u.tf))) \
         OR (u.k IS NOT NULL \
         AND EXISTS (SELECT 1 FROM kin_turns kt WHERE kt.k = u.k AND kt.tf = u.tf) \
         AND EXISTS (SELECT 1 FROM (SELECT ks.no FROM sessions ks \
         WHERE ks.first_turn = u.k ORDER BY ks.no DESC LIMIT ",
        super::kin_probe_rows!(),
        ") AS kin CROSS JOIN LATERAL (SELECT t.content_bytes, t.failed, t.excerpt, \
         t.result_at_ms, t.request_id FROM tool_calls t \
         WHERE t.session_no = kin.no AND t.call_id = u.c \
         AND t.request_id IS NOT NULL AND t.call_at_ms IS NOT NULL \
         ORDER BY t.call_at_ms DESC LIMIT ",
        super::resent_probe_rows!(),
        ") AS a WHERE a.result_at_ms IS NOT NULL AND a.content_bytes = u.b \
         AND a.failed = u.f AND a.excerpt IS NOT DISTINCT FROM u.e \
         AND EXISTS (SELECT 1 FROM call_turns ct \
         WHERE ct.request_id = a.request_id AND ct.turn_fp = u.tf)))"
    ))
    .bind(probed.iter().map(|(n, _)| *n as i64).collect::<Vec<i64>>())
    .bind(
        probed
            .iter()
            .map(|(_, r)| r.call_id.as_str())
            .collect::<Vec<&str>>(),
    )
    .bind(nos.all(probed.iter().map(|(_, r)| r.session_id.as_str()))?)
    .bind(col(&|r| int(r.content_bytes)))
    .bind(col(&|r| i64::from(r.failed)))
    .bind(
        probed
            .iter()
            .map(|(_, r)| r.excerpt.as_deref())
            .collect::<Vec<Option<&str>>>(),
    )
    .bind(
        probed
            .iter()
            .map(|(_, r)| r.previous_response_id.as_deref())
            .collect::<Vec<Option<&str>>>(),
    )
    .bind(
        probed
            .iter()
            .map(|(_, r)| r.answers.map(|a| a.turn))
            .collect::<Vec<Option<i64>>>(),
    )
    .bind(
        probed
            .iter()
            .map(|(_, r)| super::fork_of(r))
            .collect::<Vec<Option<i64>>>(),
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(found.into_iter().map(|n| n as usize).collect())
}

/// Of `asks` (position, turn fingerprint, time), the positions of those
/// with a call turn of that fingerprint in any session in the hour before
/// them: two probes of `call_turns_by_hour` each (their hour and the one
/// before; keep the hour in step with `turns::elsewhere_window_ms!`).
pub(crate) async fn turns_of_the_last_hour(
    conn: &mut PgConnection,
    asks: &[(usize, i64, i64)],
) -> Result<HashSet<usize>, sqlx::Error> {
    let found: Vec<i64> = sqlx::query_scalar(
        "SELECT u.n FROM UNNEST($1::int8[], $2::int8[], $3::int8[]) AS u(n, t, a) \
         WHERE EXISTS (SELECT 1 FROM call_turns ct WHERE ct.at_ms / 3600000 = u.a / 3600000 \
         AND ct.turn_fp = u.t AND ct.at_ms >= u.a - 3600000) \
         OR EXISTS (SELECT 1 FROM call_turns ct WHERE ct.at_ms / 3600000 = u.a / 3600000 - 1 \
         AND ct.turn_fp = u.t AND ct.at_ms >= u.a - 3600000)",
    )
    .bind(asks.iter().map(|x| x.0 as i64).collect::<Vec<i64>>())
    .bind(asks.iter().map(|x| x.1).collect::<Vec<i64>>())
    .bind(asks.iter().map(|x| x.2).collect::<Vec<i64>>())
    .fetch_all(&mut *conn)
    .await?;
    Ok(found.into_iter().map(|n| n as usize).collect())
}

/// For results that paired with no call of their session, what
/// [`super::RestProbes`] holds (the SQLite writer's one-round-trip form;
/// here the lookups above).
pub(crate) async fn open_ids_and_recorded_turns(
    conn: &mut PgConnection,
    results: &[&ToolResultRecord],
    nos: &SessionNos,
) -> Result<RestProbes, sqlx::Error> {
    let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    let open = call_ids_with_unpaired_calls(conn, &ids).await?;
    let answering: Vec<(&str, i64)> = results
        .iter()
        .filter_map(|r| Some((r.session_id.as_str(), r.answers?.turn)))
        .collect();
    let turns = if answering.is_empty() {
        HashSet::new()
    } else {
        recorded_turns(conn, &answering, nos).await?
    };
    let resent = resent_results(conn, results, nos).await?;
    Ok(RestProbes {
        open,
        turns,
        resent,
    })
}

/// Of the results at `ask` (positions in `events`), those whose key
/// (`tool_results`) is stored under the result's own request id: written
/// with this very event, by this write or an earlier attempt of it, not by
/// another gateway given the same result ([`crate::write::Found`]). Only
/// asked on the retry of a batch whose COMMIT's outcome was unknown: one
/// probe of `sessions`' key and of `tool_results`' per result asked.
pub(crate) async fn own_result_keys(
    conn: &mut PgConnection,
    events: &[Event],
    ask: &[usize],
) -> Result<Vec<usize>, sqlx::Error> {
    let asked: Vec<(usize, &ToolResultRecord)> = ask
        .iter()
        .filter_map(|&i| match events.get(i) {
            Some(Event::ToolResult(r)) => Some((i, r)),
            _ => None,
        })
        .collect();
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    let found: Vec<i64> = sqlx::query_scalar(
        "SELECT u.n FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::int8[], $5::text[]) \
         AS u(n, s, c, mi, rq) WHERE EXISTS (SELECT 1 FROM sessions ss \
         JOIN tool_results t ON t.session_no = ss.no WHERE ss.session_id = u.s \
         AND t.call_id = u.c AND t.message_index = u.mi AND t.request_id = u.rq)",
    )
    .bind(asked.iter().map(|(i, _)| *i as i64).collect::<Vec<i64>>())
    .bind(
        asked
            .iter()
            .map(|(_, r)| r.session_id.as_str())
            .collect::<Vec<&str>>(),
    )
    .bind(
        asked
            .iter()
            .map(|(_, r)| r.call_id.as_str())
            .collect::<Vec<&str>>(),
    )
    .bind(
        asked
            .iter()
            .map(|(_, r)| i64::from(r.message_index))
            .collect::<Vec<i64>>(),
    )
    .bind(
        asked
            .iter()
            .map(|(_, r)| r.request_id.as_str())
            .collect::<Vec<&str>>(),
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut own: Vec<usize> = found.into_iter().map(|n| n as usize).collect();
    own.sort_unstable();
    Ok(own)
}

/// Results that pair with no call, each a row of its own under its
/// resolved tool name.
pub(crate) async fn insert_orphan_results(
    conn: &mut PgConnection,
    results: &[(&ToolResultRecord, &str)],
    nos: &SessionNos,
) -> Result<(), sqlx::Error> {
    let col = |f: &dyn Fn(&ToolResultRecord) -> Option<String>| -> Vec<Option<String>> {
        results.iter().map(|(r, _)| f(r)).collect()
    };
    sqlx::query(
        "INSERT INTO tool_calls (session_id, call_id, tool, provider, model, at_ms, \
         result_request_id, message_index, failed, basis, content_bytes, excerpt, result_at_ms, \
         exec_ms, session_no) \
         SELECT s, c, t, p, m, a, rq, mi, f, b, cb, ex, a, e, sn FROM UNNEST($1::text[], \
         $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::text[], $8::int8[], \
         $9::int8[], $10::text[], $11::int8[], $12::text[], $13::float8[], $14::int8[]) \
         AS u(s, c, t, p, m, a, rq, mi, f, b, cb, ex, e, sn)",
    )
    .bind(col(&|r| Some(r.session_id.clone())))
    .bind(col(&|r| Some(r.call_id.clone())))
    .bind(results.iter().map(|(_, tool)| *tool).collect::<Vec<&str>>())
    .bind(col(&|r| Some(r.provider.clone())))
    .bind(col(&|r| r.model.clone()))
    .bind(results.iter().map(|(r, _)| r.at_ms).collect::<Vec<_>>())
    .bind(col(&|r| Some(r.request_id.clone())))
    .bind(
        results
            .iter()
            .map(|(r, _)| i64::from(r.message_index))
            .collect::<Vec<_>>(),
    )
    .bind(
        results
            .iter()
            .map(|(r, _)| i64::from(r.failed))
            .collect::<Vec<_>>(),
    )
    .bind(col(&|r| Some(r.basis.clone())))
    .bind(
        results
            .iter()
            .map(|(r, _)| int(r.content_bytes))
            .collect::<Vec<_>>(),
    )
    .bind(col(&|r| r.excerpt.clone()))
    .bind(
        results
            .iter()
            .map(|(r, _)| r.exec_ms.map(finite))
            .collect::<Vec<_>>(),
    )
    .bind(nos.all(results.iter().map(|(r, _)| r.session_id.as_str()))?)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

super::claim_keys_of_later_calls_fn!(PgConnection, "$");
