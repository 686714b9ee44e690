//! The bulk operations on SQLite: the rows bound as parameters of
//! [`Shaped`] statements (a `VALUES` list `u`, in a few fixed sizes), each
//! lookup a `CROSS JOIN` from `u` into an index.

use super::shaped::{Args, Shaped};
use super::*;
use sqlx::Arguments;
use sqlx::SqliteConnection;
use sqlx::error::BoxDynError;

static INSERT_REQUESTS: Shaped = Shaped::insert_after_match(
    "requests",
    &[
        "request_id",
        "session_id",
        "session_no",
        "at_ms",
        "provider",
        "dialect",
        "path",
        "model",
        "status",
        "streaming",
        "upstream_latency_ms",
        "first_byte_ms",
        "overhead_us",
        "input_tokens",
        "output_tokens",
        "response_id",
        "repair_mode",
        "repairs",
        "parse_error",
        "error",
        "calls_incomplete",
    ],
    1,
    "requests t ON t.request_id = u.request_id",
    "ON CONFLICT (request_id) DO NOTHING",
);

static INSERT_REPAIRS: Shaped = Shaped::insert(
    "request_repairs",
    &["request_id", "idx", "defect"],
    "ON CONFLICT (request_id, idx) DO NOTHING",
);

/// Numbers a batch's sessions ([`crate::session_nos`]): inserts the ones
/// not seen yet, with no requests, then answers every one's row index,
/// number and last time, with its first turn (a new row's is the batch's,
/// see [`super::fill_first_turns`]), as one JSON array a chunk. (It
/// answered with `RETURNING` before, a row and so a wake-up of the
/// recorder's task per session: most of the SQLite thread's steps on
/// traffic where each request is a session of its own; BENCHMARKS.md,
/// "Sessions numbered in one answer".)
static NUMBER_SESSIONS: Shaped = Shaped::insert_then_answer(
    "sessions",
    &[
        "session_id",
        "source",
        "first_ms",
        "last_ms",
        "requests",
        "first_turn",
    ],
    "ON CONFLICT (session_id) DO NOTHING",
    1,
    "SELECT json_group_array(json_array(u.n, s.no, s.last_ms, s.first_turn)) \
     FROM u CROSS JOIN sessions s ON s.session_id = u.session_id",
);

/// A session first numbered by a batch without its request (its tool
/// events came first) has the `none` source; its first new request's
/// source replaces it.
static UPSERT_SESSIONS: Shaped = Shaped::insert(
    "sessions",
    &["session_id", "source", "first_ms", "last_ms", "requests"],
    "ON CONFLICT (session_id) DO UPDATE SET \
     source = CASE WHEN sessions.requests = 0 THEN excluded.source ELSE sessions.source END, \
     first_ms = min(sessions.first_ms, excluded.first_ms), \
     last_ms = max(sessions.last_ms, excluded.last_ms), \
     requests = sessions.requests + excluded.requests",
);

/// Per call: the oldest result-only rows of its pair that arrived after it,
/// then the oldest of those recorded at most [`super::RESULT_LEAD_MS`]
/// before it (what `Candidates::take_orphan` prefers), each probe at most
/// the batch's count for the pair (`k`). `s` is the session's number.
static ORPHANS: Shaped = Shaped::new(
    &["s", "c", "a", "k"],
    concat!(
        "SELECT json_group_array(json_array(u.n, t.id, t.tool, t.result_at_ms)) \
     FROM u CROSS JOIN tool_calls t ON t.id IN (\
     SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_orphan WHERE session_no = u.s AND call_id = u.c \
     AND request_id IS NULL AND result_at_ms >= u.a ORDER BY result_at_ms, id \
     LIMIT (SELECT max(k) FROM u)) \
     UNION ALL \
     SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_orphan WHERE session_no = u.s AND call_id = u.c \
     AND request_id IS NULL AND result_at_ms >= u.a - ",
        super::result_lead_ms!(),
        " ORDER BY result_at_ms, id LIMIT (SELECT max(k) FROM u)))"
    ),
);

/// Per late call (its id `c`, its time `a`): up to `k` result-only rows
/// with its id in any session, recorded from [`super::RESULT_LEAD_MS`]
/// before it on (the index's runs are by the id's last two characters).
static ORPHANS_ANYWHERE: Shaped = Shaped::new(
    &["c", "a", "k"],
    concat!(
        "SELECT json_group_array(json_array(u.n, t.id, t.result_at_ms)) \
     FROM u CROSS JOIN tool_calls t ON t.id IN (\
     SELECT id FROM tool_calls INDEXED BY tool_calls_orphan_by_time \
     WHERE substr(call_id, -2) = substr(u.c, -2) AND result_at_ms >= u.a - ",
        super::result_lead_ms!(),
        " AND call_id = u.c AND request_id IS NULL LIMIT (SELECT max(k) FROM u))"
    ),
);

/// Per result (`g`, its rows with `o`, counted once a row: how many open
/// calls of its pair finished before it, up to the batch's most rows of one
/// pair, `m.k`): the newest of those calls (what `Candidates::take_call`
/// prefers) when there are any; when there are fewer than the rows of its
/// pair up to it (`p`: each of those may have taken one), the newest open
/// calls of the pair whatever their time and the same two probes of the
/// parked calls (`crate::parking`); each probe at most `m.k` rows. A probe
/// not wanted has a NULL key, which SQLite checks before it searches the
/// index, so a result whose call is open (nearly all) costs two searches of
/// the open calls' index (its count and its calls), and one whose call the
/// store never saw four. The newest of all also when `p` is at
/// [`super::MAX_PROBE_ROWS`] (it may stand for more rows than that). Why
/// skipping it changes no pairing: a row whose first probe found `p` calls
/// finds one of them still free when its turn comes, and prefers it to any
/// call the newest of all would add (one after it, or one older than all
/// `p`); the rows of its pair that need it read the same calls.
static UNPAIRED_CALLS: Shaped = Shaped::new(
    &["s", "c", "a", "k", "p"],
    concat!(
        ", m AS MATERIALIZED (SELECT max(k) AS k FROM u), \
     g AS MATERIALIZED (SELECT n, s, c, a, p, (SELECT count(*) FROM (SELECT 1 FROM tool_calls \
     INDEXED BY tool_calls_open WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL \
     AND parked = 0 AND call_at_ms <= u.a LIMIT (SELECT k FROM m))) AS o FROM u) \
     SELECT json_group_array(json_array(g.n, t.id, t.tool, t.call_at_ms)) \
     FROM g CROSS JOIN tool_calls t ON t.id IN (\
     SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_open \
     WHERE call_id = (CASE WHEN g.o > 0 THEN g.c END) AND session_id = g.s \
     AND result_at_ms IS NULL AND parked = 0 AND call_at_ms <= g.a ORDER BY call_at_ms DESC, id DESC \
     LIMIT (SELECT k FROM m)) \
     UNION ALL \
     SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_open \
     WHERE call_id = (CASE WHEN g.o < g.p OR g.p >= ",
        super::max_probe_rows!(),
        " THEN g.c END) AND session_id = g.s \
     AND result_at_ms IS NULL AND parked = 0 ORDER BY call_at_ms DESC, id DESC LIMIT (SELECT k FROM m)) \
     UNION ALL \
     SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_parked \
     WHERE call_id = (CASE WHEN g.o < g.p THEN g.c END) AND session_id = g.s \
     AND result_at_ms IS NULL AND parked = 1 AND call_at_ms <= g.a ORDER BY call_at_ms DESC, id DESC \
     LIMIT (SELECT k FROM m)) \
     UNION ALL \
     SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_parked \
     WHERE call_id = (CASE WHEN g.o < g.p THEN g.c END) AND session_id = g.s \
     AND result_at_ms IS NULL AND parked = 1 ORDER BY call_at_ms DESC, id DESC LIMIT (SELECT k FROM m)))"
    ),
);

static INSERT_CALLS: Shaped = Shaped::insert_after_match(
    "tool_calls",
    &[
        "request_id",
        "call_index",
        "session_id",
        "session_no",
        "call_id",
        "tool",
        "provider",
        "model",
        "at_ms",
        "response_id",
        "arguments_bytes",
        "call_at_ms",
    ],
    2,
    "tool_calls t ON t.request_id = u.request_id AND t.call_index = u.call_index",
    "ON CONFLICT (request_id, call_index) DO NOTHING",
);

static INSERT_RESULT_KEYS: Shaped = Shaped::insert_after_match(
    "tool_results",
    &[
        "session_no",
        "call_id",
        "message_index",
        "session_id",
        "request_id",
        "at_ms",
    ],
    3,
    "tool_results t ON t.session_no = u.session_no AND t.call_id = u.call_id \
     AND t.message_index = u.message_index",
    "ON CONFLICT (session_no, call_id, message_index) DO NOTHING",
);

static PAIR_RESULTS: Shaped = Shaped::new(
    &["id", "rq", "mi", "f", "b", "cb", "ex", "a", "e"],
    "UPDATE OR FAIL tool_calls SET result_request_id = u.rq, message_index = u.mi, failed = u.f, \
     basis = u.b, content_bytes = u.cb, excerpt = u.ex, result_at_ms = u.a, exec_ms = u.e \
     FROM u WHERE tool_calls.id = u.id",
);

/// Three `EXISTS` probes per result in one statement (one round trip),
/// over results (`c`, `s`, `t`: call id, session number, turn fingerprint
/// or NULL; `g`, `b`, `f`, `e`, `p`: 1 when it [`super::may_be_resent`]
/// else NULL, its size, verdict, excerpt and `previous_response_id`): is
/// there an open call with its id anywhere (one probe of the open calls'
/// index, however many there are, and of the parked calls' if none), a
/// recorded turn of its session it answers (one probe of
/// `call_turns_by_fingerprint`), and a recorded call of its session with
/// its id, of the response it continues or of the turn it replays, already
/// answered with the same result (the newest [`super::resent_probe_rows!`]
/// of `tool_calls_call_session`, each with one probe of `call_turns`' key).
/// The last is also true when the result is a fork's resend of an answer
/// counted in the parent ([`super::fork_of`]; `k` its first turn or NULL):
/// the newest [`super::kin_probe_rows!`] sessions of that first turn
/// (`sessions_by_first_turn`, its own among them), each probed as its own
/// session is. `k` is bound only once one of them holds the turn it
/// replays ([`KIN_TURNS`], once per distinct pair of the batch), so
/// results of one first turn whose calls no session made (automated runs
/// of one prompt) cost one such probe per batch, not per result.
/// Per row that finds any: its index, then 0/1 for each.
static REST_PROBES: Shaped = Shaped::new(
    &["c", "s", "t", "g", "b", "f", "e", "p", "k"],
    concat!(
        "SELECT json_group_array(json_array(n, o, r, d)) FROM (SELECT u.n AS n, \
         (EXISTS (SELECT 1 FROM tool_calls t INDEXED BY tool_calls_open \
         WHERE t.call_id = u.c AND t.result_at_ms IS NULL AND t.parked = 0) \
         OR EXISTS (SELECT 1 FROM tool_calls t INDEXED BY tool_calls_parked \
         WHERE t.call_id = u.c AND t.result_at_ms IS NULL AND t.parked = 1)) AS o, \
         (u.t IS NOT NULL AND EXISTS (SELECT 1 FROM call_turns ct \
         WHERE ct.session_no = u.s AND ct.turn_fp = u.t)) AS r, \
         (u.g IS NOT NULL AND EXISTS (SELECT 1 FROM (SELECT t.content_bytes, t.failed, t.excerpt, \
         t.result_at_ms, t.response_id, t.request_id \
         FROM tool_calls t INDEXED BY tool_calls_call_session \
         WHERE t.session_no = u.s AND t.call_id = u.c \
         AND t.request_id IS NOT NULL AND t.call_at_ms IS NOT NULL \
         ORDER BY t.call_at_ms DESC LIMIT ",
        super::resent_probe_rows!(),
        ") AS newest WHERE newest.result_at_ms IS NOT NULL AND newest.content_bytes = u.b \
         AND newest.failed = u.f AND newest.excerpt IS u.e \
         AND (newest.response_id = u.p OR EXISTS (SELECT 1 FROM call_turns ct \
         WHERE ct.request_id = newest.request_id AND ct.turn_fp = u.t)))) \
         OR (u.k IS NOT NULL AND EXISTS (SELECT 1 FROM (SELECT ks.no FROM sessions ks \
         INDEXED BY sessions_by_first_turn WHERE ks.first_turn = u.k \
         ORDER BY ks.no DESC LIMIT ",
        super::kin_probe_rows!(),
        ") AS kin WHERE EXISTS (SELECT 1 FROM (SELECT t.content_bytes, t.failed, t.excerpt, \
         t.result_at_ms, t.request_id FROM tool_calls t INDEXED BY tool_calls_call_session \
         WHERE t.session_no = kin.no AND t.call_id = u.c \
         AND t.request_id IS NOT NULL AND t.call_at_ms IS NOT NULL \
         ORDER BY t.call_at_ms DESC LIMIT ",
        super::resent_probe_rows!(),
        ") AS newest WHERE newest.result_at_ms IS NOT NULL AND newest.content_bytes = u.b \
         AND newest.failed = u.f AND newest.excerpt IS u.e \
         AND EXISTS (SELECT 1 FROM call_turns ct \
         WHERE ct.request_id = newest.request_id AND ct.turn_fp = u.t)))) AS d \
         FROM u) WHERE o OR r OR d"
    ),
);

/// Of distinct (first turn `k`, replayed turn `t`) pairs, those whose turn
/// one of the newest [`super::kin_probe_rows!`] sessions of the first turn
/// holds (`sessions_by_first_turn`, then one probe of
/// `call_turns_by_fingerprint` per session): the pairs whose results
/// [`REST_PROBES`] probes as a fork's resends ([`super::fork_of`]).
static KIN_TURNS: Shaped = Shaped::new(
    &["k", "t"],
    concat!(
        "SELECT json_group_array(u.n) FROM u WHERE EXISTS (SELECT 1 FROM (SELECT ks.no \
         FROM sessions ks INDEXED BY sessions_by_first_turn WHERE ks.first_turn = u.k \
         ORDER BY ks.no DESC LIMIT ",
        super::kin_probe_rows!(),
        ") AS kin WHERE EXISTS (SELECT 1 FROM call_turns ct \
         WHERE ct.session_no = kin.no AND ct.turn_fp = u.t))"
    ),
);

/// Of results (`t`: the fingerprint of the turn they replay, `a`: their
/// time), those with a call turn of that fingerprint in any session in the
/// hour before them: two probes of `call_turns_by_hour` each (their hour
/// and the one before; keep the hour in step with
/// `turns::elsewhere_window_ms!`).
static TURNS_OF_THE_LAST_HOUR: Shaped = Shaped::new(
    &["t", "a"],
    "SELECT json_group_array(n) FROM u WHERE EXISTS (SELECT 1 FROM call_turns ct \
     WHERE ct.at_ms / 3600000 = u.a / 3600000 AND ct.turn_fp = u.t AND ct.at_ms >= u.a - 3600000) \
     OR EXISTS (SELECT 1 FROM call_turns ct \
     WHERE ct.at_ms / 3600000 = u.a / 3600000 - 1 AND ct.turn_fp = u.t AND ct.at_ms >= u.a - 3600000)",
);

static INSERT_ORPHAN_RESULTS: Shaped = Shaped::insert(
    "tool_calls",
    &[
        "session_id",
        "session_no",
        "call_id",
        "tool",
        "provider",
        "model",
        "at_ms",
        "result_request_id",
        "message_index",
        "failed",
        "basis",
        "content_bytes",
        "excerpt",
        "result_at_ms",
        "exec_ms",
    ],
    "",
);

pub(crate) async fn insert_requests(
    conn: &mut SqliteConnection,
    reqs: &[&RequestRecord],
    nos: &SessionNos,
) -> Result<HashSet<String>, sqlx::Error> {
    // Which keys exist already (usually none: one row comes back, not one
    // per key through sqlx's per-row channel), then the INSERT, in one
    // round trip. Exact: `BEGIN IMMEDIATE` holds the write lock for the
    // whole batch.
    let old = INSERT_REQUESTS
        .insert_reporting_stored(
            conn,
            reqs,
            |a, r| a.add(r.request_id.as_str()),
            |a, r| {
                a.add(r.request_id.as_str())?;
                a.add(r.session_id.as_str())?;
                a.add(nos.of(&r.session_id)?)?;
                a.add(r.at_ms)?;
                a.add(r.provider.as_str())?;
                a.add(r.dialect.as_deref())?;
                a.add(r.path.as_str())?;
                a.add(r.model.as_deref())?;
                a.add(i64::from(r.status))?;
                a.add(i64::from(r.streaming))?;
                a.add(finite(r.upstream_latency_ms))?;
                a.add(r.first_byte_ms.map(finite))?;
                a.add(finite(r.overhead_us))?;
                a.add(r.input_tokens.map(int))?;
                a.add(r.output_tokens.map(int))?;
                a.add(r.response_id.as_deref())?;
                a.add(r.repair_mode.as_str())?;
                a.add(int(r.repairs.len() as u64))?;
                a.add(r.parse_error.as_deref())?;
                a.add(r.error.as_deref())?;
                a.add(i64::from(r.calls_incomplete))
            },
        )
        .await?;
    Ok(unmatched(reqs, &old)
        .map(|r| r.request_id.clone())
        .collect())
}

pub(crate) async fn insert_repairs(
    conn: &mut SqliteConnection,
    repairs: &[(String, i64, String)],
) -> Result<(), sqlx::Error> {
    INSERT_REPAIRS
        .execute(conn, repairs, |a, r| {
            a.add(r.0.as_str())?;
            a.add(r.1)?;
            a.add(r.2.as_str())
        })
        .await
}

/// The numbers of a batch's sessions, inserting those not seen yet. A
/// known session quiet for [`STALE_SESSION_MS`] before the batch's events
/// has its `last_ms` moved to them (rare, so one statement each), so that
/// retention does not take it for quiet when its request came in another
/// batch.
pub(crate) async fn number_sessions(
    conn: &mut SqliteConnection,
    sessions: &BatchSessions<'_>,
) -> Result<SessionNos, sqlx::Error> {
    let rows: Vec<_> = sessions.iter().collect();
    let answered: Vec<(usize, i64, i64, Option<i64>)> = NUMBER_SESSIONS
        .insert_answering_json(
            conn,
            &rows,
            |a, (id, source, at, first_turn)| {
                a.add(*id)?;
                a.add(*source)?;
                a.add(*at)?;
                a.add(*at)?;
                a.add(0i64)?;
                a.add(*first_turn)
            },
            |a, (id, ..)| a.add(*id),
        )
        .await?;
    if answered.len() != rows.len() {
        return Err(sqlx::Error::Protocol(format!(
            "{} sessions numbered of {}",
            answered.len(),
            rows.len()
        )));
    }
    let mut numbered = Vec::with_capacity(answered.len());
    for (n, no, last_ms, first_turn) in answered {
        let (id, ..) = rows.get(n).ok_or_else(|| {
            sqlx::Error::Decode(
                format!("row index {n} outside the {} rows bound", rows.len()).into(),
            )
        })?;
        numbered.push((*id, no, last_ms, first_turn));
    }
    for (no, first_turn) in super::fill_first_turns(
        sessions,
        numbered.iter().map(|&(id, no, _, ft)| (id, no, ft)),
    ) {
        sqlx::query(
            "UPDATE OR FAIL sessions SET first_turn = ?1 WHERE no = ?2 AND first_turn IS NULL",
        )
        .bind(first_turn)
        .bind(no)
        .execute(&mut *conn)
        .await?;
    }
    let mut stale = Vec::new();
    for (id, no, last_ms, _) in &numbered {
        if let Some(at) = sessions.earliest(id)
            && *last_ms < at - STALE_SESSION_MS
        {
            stale.push((*no, at));
        }
    }
    for (no, at) in stale {
        sqlx::query("UPDATE OR FAIL sessions SET last_ms = ?1 WHERE no = ?2 AND last_ms < ?1")
            .bind(at)
            .bind(no)
            .execute(&mut *conn)
            .await?;
    }
    let mut nos = SessionNos::default();
    nos.extend(
        numbered
            .into_iter()
            .map(|(id, no, _, _)| (id.to_owned(), no)),
    );
    Ok(nos)
}

pub(crate) async fn upsert_sessions(
    conn: &mut SqliteConnection,
    sessions: &SessionDeltas,
) -> Result<(), sqlx::Error> {
    let rows: Vec<_> = sessions.iter().collect();
    UPSERT_SESSIONS
        .execute(conn, &rows, |a, (id, d)| {
            a.add(id.as_str())?;
            a.add(d.source.as_str())?;
            a.add(d.first_ms)?;
            a.add(d.last_ms)?;
            a.add(d.requests)
        })
        .await
}

/// The rows whose index is not in `matched`.
fn unmatched<'a, T>(rows: &'a [T], matched: &[usize]) -> impl Iterator<Item = &'a T> {
    let mut hit = vec![false; rows.len()];
    for &n in matched {
        if let Some(h) = hit.get_mut(n) {
            *h = true;
        }
    }
    rows.iter().zip(hit).filter(|(_, hit)| !hit).map(|(r, _)| r)
}

/// A candidate as a lookup gives it: the index of its lookup, then id,
/// tool and time.
type Found = (usize, i64, String, Option<i64>);

fn candidates_of(wanted: &[Lookup], rows: Vec<Found>) -> Result<Vec<Candidate>, sqlx::Error> {
    rows.into_iter()
        .map(|(n, id, tool, at_ms)| {
            let w = wanted.get(n).ok_or_else(|| {
                sqlx::Error::Decode(format!("candidate for lookup {n} of {}", wanted.len()).into())
            })?;
            Ok(Candidate {
                id,
                session_id: w.session_id.clone(),
                call_id: w.call_id.clone(),
                tool,
                at_ms,
            })
        })
        .collect()
}

fn bind_lookup<'q>(a: &mut Args<'q>, w: &'q Lookup) -> Result<(), BoxDynError> {
    a.add(w.session_id.as_str())?;
    a.add(w.call_id.as_str())?;
    a.add(w.at_ms)?;
    a.add(w.limit)?;
    a.add(w.need)
}

/// Result-only rows (no call recorded yet) that these calls may complete.
pub(crate) async fn find_orphans(
    conn: &mut SqliteConnection,
    wanted: &[Lookup],
    nos: &SessionNos,
) -> Result<Vec<Candidate>, sqlx::Error> {
    let rows = ORPHANS
        .fetch_json(conn, wanted, |a, w| {
            a.add(nos.of(&w.session_id)?)?;
            a.add(w.call_id.as_str())?;
            a.add(w.at_ms)?;
            a.add(w.limit)
        })
        .await?;
    candidates_of(wanted, rows)
}

/// Result-only rows in any session with these late calls' ids (id, time),
/// recorded from [`super::RESULT_LEAD_MS`] before the call on: (index of
/// the call, row id, result time), up to one more per id than the id occurs.
pub(crate) async fn orphans_anywhere(
    conn: &mut SqliteConnection,
    calls: &[(&str, i64)],
) -> Result<Vec<(usize, i64, i64)>, sqlx::Error> {
    let ids: Vec<&str> = calls.iter().map(|c| c.0).collect();
    let rows: Vec<(&str, i64, i64)> = calls
        .iter()
        .zip(limits_per_id(&ids))
        .map(|(&(c, a), k)| (c, a, k))
        .collect();
    ORPHANS_ANYWHERE
        .fetch_json(conn, &rows, |a, (c, at, k)| {
            a.add(*c)?;
            a.add(*at)?;
            a.add(*k)
        })
        .await
}

/// Open calls that these results may pair with.
pub(crate) async fn unpaired_calls(
    conn: &mut SqliteConnection,
    wanted: &[Lookup],
) -> Result<Vec<Candidate>, sqlx::Error> {
    let rows = UNPAIRED_CALLS.fetch_json(conn, wanted, bind_lookup).await?;
    candidates_of(wanted, rows)
}

pub(crate) async fn insert_calls<'q>(
    conn: &mut SqliteConnection,
    calls: &'q [&'q ToolCallRecord],
    nos: &SessionNos,
) -> Result<HashSet<CallKey>, sqlx::Error> {
    let key = |a: &mut Args<'q>, c: &&'q ToolCallRecord| {
        a.add(c.request_id.as_str())?;
        a.add(i64::from(c.call_index))
    };
    let old = INSERT_CALLS
        .insert_reporting_stored(conn, calls, key, |a, c| {
            key(a, c)?;
            a.add(c.session_id.as_str())?;
            a.add(nos.of(&c.session_id)?)?;
            a.add(c.call_id.as_str())?;
            a.add(c.tool.as_str())?;
            a.add(c.provider.as_str())?;
            a.add(c.model.as_deref())?;
            a.add(c.at_ms)?;
            a.add(c.continuable_response_id())?;
            a.add(int(c.arguments_bytes))?;
            a.add(c.at_ms)
        })
        .await?;
    Ok(unmatched(calls, &old)
        .map(|c| (c.request_id.clone(), i64::from(c.call_index)))
        .collect())
}

pub(crate) async fn insert_result_keys<'q>(
    conn: &mut SqliteConnection,
    results: &'q [&'q ToolResultRecord],
    nos: &SessionNos,
) -> Result<HashSet<ResultKey>, sqlx::Error> {
    let key = |a: &mut Args<'q>, r: &&'q ToolResultRecord| {
        a.add(nos.of(&r.session_id)?)?;
        a.add(r.call_id.as_str())?;
        a.add(i64::from(r.message_index))
    };
    let old = INSERT_RESULT_KEYS
        .insert_reporting_stored(conn, results, key, |a, r| {
            key(a, r)?;
            a.add(r.session_id.as_str())?;
            a.add(r.request_id.as_str())?;
            a.add(r.at_ms)
        })
        .await?;
    Ok(unmatched(results, &old)
        .map(|r| {
            (
                r.session_id.clone(),
                r.call_id.clone(),
                i64::from(r.message_index),
            )
        })
        .collect())
}

pub(crate) async fn pair_results(
    conn: &mut SqliteConnection,
    pairs: &[Pairing<'_>],
) -> Result<(), sqlx::Error> {
    PAIR_RESULTS
        .execute(conn, pairs, |a, p| {
            a.add(p.id)?;
            a.add(p.rec.request_id.as_str())?;
            a.add(i64::from(p.rec.message_index))?;
            a.add(i64::from(p.rec.failed))?;
            a.add(p.rec.basis.as_str())?;
            a.add(int(p.rec.content_bytes))?;
            a.add(p.rec.excerpt.as_deref())?;
            a.add(p.rec.at_ms)?;
            a.add(p.exec_ms.map(finite))
        })
        .await
}

/// Of `asks` (position, turn fingerprint, time), the positions of those
/// with a call turn of that fingerprint in any session in the hour before
/// them, in one round trip ([`TURNS_OF_THE_LAST_HOUR`]).
pub(crate) async fn turns_of_the_last_hour(
    conn: &mut SqliteConnection,
    asks: &[(usize, i64, i64)],
) -> Result<HashSet<usize>, sqlx::Error> {
    let found: Vec<usize> = TURNS_OF_THE_LAST_HOUR
        .fetch_json(conn, asks, |a, &(_, turn, at)| {
            a.add(turn)?;
            a.add(at)
        })
        .await?;
    found
        .into_iter()
        .map(|n| {
            asks.get(n).map(|x| x.0).ok_or_else(|| {
                sqlx::Error::Decode(
                    format!("row index {n} outside the {} rows bound", asks.len()).into(),
                )
            })
        })
        .collect()
}

/// Of `results`' (first turn, replayed turn) pairs of possible forks'
/// resends ([`super::fork_of`]), those a session of the first turn holds
/// the turn of ([`KIN_TURNS`]): one statement for the batch's distinct
/// pairs, none when it has none.
async fn kin_turns(
    conn: &mut SqliteConnection,
    results: &[&ToolResultRecord],
) -> Result<HashSet<(i64, i64)>, sqlx::Error> {
    let mut pairs: Vec<(i64, i64)> = results
        .iter()
        .filter_map(|r| Some((super::fork_of(r)?, r.answers?.turn)))
        .collect();
    if pairs.is_empty() {
        return Ok(HashSet::new());
    }
    pairs.sort_unstable();
    pairs.dedup();
    let found: Vec<usize> = KIN_TURNS
        .fetch_json(conn, &pairs, |a, &(k, t)| {
            a.add(k)?;
            a.add(t)
        })
        .await?;
    found
        .into_iter()
        .map(|n| {
            pairs.get(n).copied().ok_or_else(|| {
                sqlx::Error::Decode(
                    format!("row index {n} outside the {} rows bound", pairs.len()).into(),
                )
            })
        })
        .collect()
}

/// For results that paired with no call of their session, what
/// [`super::RestProbes`] holds, in two round trips at most ([`KIN_TURNS`]
/// when the batch has a fork's possible resend, [`REST_PROBES`]).
pub(crate) async fn open_ids_and_recorded_turns(
    conn: &mut SqliteConnection,
    results: &[&ToolResultRecord],
    nos: &SessionNos,
) -> Result<RestProbes, sqlx::Error> {
    let held = kin_turns(conn, results).await?;
    let found: Vec<(usize, i64, i64, i64)> = REST_PROBES
        .fetch_json(conn, results, |a, r| {
            a.add(r.call_id.as_str())?;
            a.add(nos.of(&r.session_id)?)?;
            a.add(r.answers.map(|x| x.turn))?;
            a.add(super::may_be_resent(r).then_some(1_i64))?;
            a.add(int(r.content_bytes))?;
            a.add(i64::from(r.failed))?;
            a.add(r.excerpt.as_deref())?;
            a.add(r.previous_response_id.as_deref())?;
            a.add(
                super::fork_of(r)
                    .filter(|&k| r.answers.is_some_and(|x| held.contains(&(k, x.turn)))),
            )
        })
        .await?;
    let mut probes = RestProbes::default();
    for (n, o, t, d) in found {
        let r = results.get(n).ok_or_else(|| {
            sqlx::Error::Decode(
                format!("row index {n} outside the {} rows bound", results.len()).into(),
            )
        })?;
        if o != 0 {
            probes.open.insert(r.call_id.clone());
        }
        if let (true, Some(a)) = (t != 0, r.answers) {
            probes.turns.insert((r.session_id.clone(), a.turn));
        }
        if d != 0 {
            probes.resent.insert(n);
        }
    }
    Ok(probes)
}

/// Results that pair with no call, each a row of its own under its
/// resolved tool name.
pub(crate) async fn insert_orphan_results(
    conn: &mut SqliteConnection,
    results: &[(&ToolResultRecord, &str)],
    nos: &SessionNos,
) -> Result<(), sqlx::Error> {
    INSERT_ORPHAN_RESULTS
        .execute(conn, results, |a, (r, tool)| {
            a.add(r.session_id.as_str())?;
            a.add(nos.of(&r.session_id)?)?;
            a.add(r.call_id.as_str())?;
            a.add(*tool)?;
            a.add(r.provider.as_str())?;
            a.add(r.model.as_deref())?;
            a.add(r.at_ms)?;
            a.add(r.request_id.as_str())?;
            a.add(i64::from(r.message_index))?;
            a.add(i64::from(r.failed))?;
            a.add(r.basis.as_str())?;
            a.add(int(r.content_bytes))?;
            a.add(r.excerpt.as_deref())?;
            a.add(r.at_ms)?;
            a.add(r.exec_ms.map(finite))
        })
        .await
}

super::claim_keys_of_later_calls_fn!(SqliteConnection, "?");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Pool, Store};

    /// The open calls' lookup as it was before its rows' count decided
    /// which probes run: all four for every row (the parked ones behind
    /// the same count, computed twice).
    static EVERY_PROBE: Shaped = Shaped::new(
        &["s", "c", "a", "k", "p"],
        "SELECT json_group_array(json_array(u.n, t.id, t.tool, t.call_at_ms)) \
         FROM u CROSS JOIN tool_calls t ON t.id IN (\
         SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_open WHERE call_id = u.c AND session_id = u.s \
         AND result_at_ms IS NULL AND parked = 0 AND call_at_ms <= u.a ORDER BY call_at_ms DESC, id DESC \
         LIMIT (SELECT max(k) FROM u)) \
         UNION ALL \
         SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_open WHERE call_id = u.c AND session_id = u.s \
         AND result_at_ms IS NULL AND parked = 0 ORDER BY call_at_ms DESC, id DESC LIMIT (SELECT max(k) FROM u)) \
         UNION ALL \
         SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_parked \
         WHERE call_id = (CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM tool_calls INDEXED BY tool_calls_open \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 AND call_at_ms <= u.a \
         LIMIT (SELECT max(k) FROM u))) < u.p THEN u.c END) AND session_id = u.s \
         AND result_at_ms IS NULL AND parked = 1 AND call_at_ms <= u.a ORDER BY call_at_ms DESC, id DESC \
         LIMIT (SELECT max(k) FROM u)) \
         UNION ALL \
         SELECT id FROM (SELECT id FROM tool_calls INDEXED BY tool_calls_parked \
         WHERE call_id = (CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM tool_calls INDEXED BY tool_calls_open \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 AND call_at_ms <= u.a \
         LIMIT (SELECT max(k) FROM u))) < u.p THEN u.c END) AND session_id = u.s \
         AND result_at_ms IS NULL AND parked = 1 ORDER BY call_at_ms DESC, id DESC LIMIT (SELECT max(k) FROM u)))",
    );

    /// PostgreSQL's open calls' lookup as it was before its rows' count
    /// decided which probes run (its limits are the pair's count, not the
    /// batch's most, so it is the reference for PostgreSQL's lookup only).
    const EVERY_PROBE_PG: &str = "SELECT DISTINCT t.id, t.session_id, t.call_id, t.tool, t.call_at_ms \
         FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[]) AS u(s, c, a, k, p) \
         CROSS JOIN LATERAL ((SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 \
         AND call_at_ms <= u.a ORDER BY call_at_ms DESC, id DESC LIMIT u.k) \
         UNION ALL (SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 \
         ORDER BY call_at_ms DESC, id DESC LIMIT u.k) \
         UNION ALL (SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 1 \
         AND call_at_ms <= u.a AND (SELECT count(*) FROM (SELECT 1 FROM tool_calls \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 \
         AND call_at_ms <= u.a LIMIT u.p) AS o) < u.p \
         ORDER BY call_at_ms DESC, id DESC LIMIT u.k) \
         UNION ALL (SELECT id, session_id, call_id, tool, call_at_ms FROM tool_calls \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 1 \
         AND (SELECT count(*) FROM (SELECT 1 FROM tool_calls \
         WHERE call_id = u.c AND session_id = u.s AND result_at_ms IS NULL AND parked = 0 \
         AND call_at_ms <= u.a LIMIT u.p) AS o) < u.p \
         ORDER BY call_at_ms DESC, id DESC LIMIT u.k)) AS t";

    /// For any open and parked calls and any batch of results, the pairing
    /// (`Candidates::take_call`, in the batch's order) takes the same calls
    /// from [`UNPAIRED_CALLS`], which reads the newest of all only for the
    /// rows whose first probe came up short, as from [`EVERY_PROBE`]; and
    /// from PostgreSQL's lookup (`bulk::postgres::unpaired_calls`) as from
    /// [`EVERY_PROBE_PG`] when the test PostgreSQL is set
    /// (`TOOLWARDEN_TEST_POSTGRES_URL`, a schema of its own). One pair, or
    /// two sessions and two call ids; times with ties; up to 23 results:
    /// pairs repeated past [`super::super::MAX_PROBE_ROWS`] and calls after
    /// their results are common.
    #[test]
    fn the_lookup_that_skips_probes_pairs_as_every_probe_does() {
        use crate::write::Candidates;
        use proptest::prelude::*;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (_store, pool) = rt.block_on(sqlite_store(dir.path()));
        let pg_store = std::env::var("TOOLWARDEN_TEST_POSTGRES_URL")
            .ok()
            .map(|base| rt.block_on(postgres_schema(&base)));
        let pg = pg_store.as_ref().map(|s| match s.pool() {
            Pool::Postgres(p) => p,
            Pool::Sqlite(_) => unreachable!(),
        });
        const SESSIONS: [&str; 2] = ["s1", "s2"];
        const IDS: [&str; 2] = ["call_0", "call_1"];
        // One pair for all rows, or up to four.
        let batch = (1..=2usize).prop_flat_map(|spread| {
            (
                proptest::collection::vec((0..spread, 0..spread, 0i64..12, any::<bool>()), 0..24),
                proptest::collection::vec((0..spread, 0..spread, 0i64..12), 1..24),
            )
        });
        // Nine results of one pair after eight open calls, a ninth call
        // after them: every row's first probe finds enough calls, yet the
        // ninth result takes the later call (the lookup's `p` stops at the
        // probe bound, and the newest of all is read there).
        let bound = (1..=8)
            .map(|at| (0, 0, at, false))
            .chain([(0, 0, 11, false)]);
        let crowd = (bound.collect::<Vec<_>>(), vec![(0, 0, 10); 9]);
        let batch = prop_oneof![1 => Just(crowd), 9 => batch];
        // The calls into an empty table on `$conn`: their ids, in order.
        macro_rules! fill {
            ($conn:expr, $calls:expr) => {{
                sqlx::query("DELETE FROM tool_calls").execute(&mut *$conn).await.unwrap();
                let mut ids: Vec<i64> = Vec::new();
                for &(s, c, at, parked) in $calls {
                    let id = sqlx::query_scalar(
                        "INSERT INTO tool_calls (session_id, call_id, tool, provider, at_ms, \
                         call_at_ms, parked) VALUES ($1, $2, 't', 'p', $3, $3, $4) RETURNING id",
                    )
                    .bind(SESSIONS[s])
                    .bind(IDS[c])
                    .bind(at)
                    .bind(i64::from(parked))
                    .fetch_one(&mut *$conn)
                    .await
                    .unwrap();
                    ids.push(id);
                }
                ids
            }};
        }
        proptest!(|((calls, results) in batch)| {
            let keys = super::super::lookups(
                results.iter().map(|&(s, c, at)| (SESSIONS[s], IDS[c], at)),
            );
            let (gated, whole, on_pg) = rt.block_on(async {
                let mut conn = pool.acquire().await.unwrap();
                let ids = fill!(conn, &calls);
                let gated = unpaired_calls(&mut conn, &keys).await.unwrap();
                let rows = EVERY_PROBE.fetch_json(&mut conn, &keys, bind_lookup).await.unwrap();
                let whole = candidates_of(&keys, rows).unwrap();
                let mut on_pg = None;
                if let Some(pg) = pg {
                    let mut conn = pg.acquire().await.unwrap();
                    let pg_ids = fill!(conn, &calls);
                    let found = super::super::postgres::unpaired_calls(&mut conn, &keys)
                        .await
                        .unwrap();
                    let rows = super::super::postgres::lookup(&mut conn, &keys, EVERY_PROBE_PG)
                        .await
                        .unwrap();
                    on_pg = Some(((found, pg_ids.clone()), (super::super::candidates(rows), pg_ids)));
                }
                ((gated, ids.clone()), (whole, ids), on_pg)
            });
            // Which calls, by their place in `calls` (the backends number
            // rows their own way).
            let taken = |(found, ids): (Vec<Candidate>, Vec<i64>)| {
                let mut open = Candidates::new(found);
                results
                    .iter()
                    .map(|&(s, c, at)| {
                        let id = open.take_call(SESSIONS[s], IDS[c], at)?.id;
                        ids.iter().position(|&x| x == id)
                    })
                    .collect::<Vec<_>>()
            };
            prop_assert_eq!(taken(gated), taken(whole));
            if let Some((found, whole)) = on_pg {
                prop_assert_eq!(taken(found), taken(whole));
            }
        });
    }

    /// A store in a fresh schema of the test PostgreSQL at `base`.
    async fn postgres_schema(base: &str) -> Store {
        use sqlx::Connection;
        let schema = format!("tw_pairs_{}", std::process::id());
        let mut conn = sqlx::PgConnection::connect(base).await.unwrap();
        let fresh = format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}");
        sqlx::raw_sql(&fresh).execute(&mut conn).await.unwrap();
        let sep = if base.contains('?') { '&' } else { '?' };
        Store::open(&format!("{base}{sep}options[search_path]={schema}"))
            .await
            .unwrap()
    }

    /// A store migrated on a fresh SQLite file in `dir`, and its pool.
    async fn sqlite_store(dir: &std::path::Path) -> (Store, sqlx::SqlitePool) {
        let url = format!("sqlite://{}", dir.join("test.db").display());
        let store = Store::open(&url).await.unwrap();
        let Pool::Sqlite(pool) = store.pool() else {
            unreachable!()
        };
        let pool = pool.clone();
        (store, pool)
    }

    /// `INSERT OR FAIL` (no statement journal) still refuses a violated
    /// constraint, and the batch's rollback takes back the rows the
    /// statement had written before it: nothing is skipped in silence.
    #[tokio::test]
    async fn a_violated_constraint_fails_the_batch_and_keeps_nothing() {
        use sqlx::Connection;
        let mut conn = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (a TEXT PRIMARY KEY, b TEXT NOT NULL)")
            .execute(&mut conn)
            .await
            .unwrap();
        static INS: Shaped = Shaped::insert("t", &["a", "b"], "ON CONFLICT (a) DO NOTHING");
        let bind = |a: &mut Args<'_>, r: &(&'static str, Option<&'static str>)| {
            a.add(r.0)?;
            a.add(r.1)
        };
        let mut tx = conn.begin().await.unwrap();
        let bad = [("x", Some("1")), ("y", None)];
        let err = INS.execute(&mut tx, &bad, bind).await.unwrap_err();
        assert!(err.to_string().contains("NOT NULL"), "{err}");
        drop(tx);
        let mut tx = conn.begin().await.unwrap();
        let good = [("x", Some("2")), ("z", Some("3")), ("x", Some("4"))];
        INS.execute(&mut tx, &good, bind).await.unwrap();
        tx.commit().await.unwrap();
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT a, b FROM t ORDER BY a")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        let rows: Vec<(&str, &str)> = rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(rows, [("x", "2"), ("z", "3")]);
    }

    /// The pairing lookups read only the rows a pairing can still use:
    /// open calls (and parked ones), result-only rows (partial indexes), in
    /// time order.
    #[tokio::test]
    async fn pairing_lookups_read_the_partial_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let (_store, pool) = sqlite_store(dir.path()).await;
        const OPEN: &[&str] = &["tool_calls_open", "tool_calls_parked"];
        let cases: [(String, &[&str]); 4] = [
            (UNPAIRED_CALLS.sql_for(4), OPEN),
            (
                REST_PROBES.sql_for(4),
                &[
                    "tool_calls_open",
                    "tool_calls_parked",
                    "tool_calls_call_session",
                ],
            ),
            (ORPHANS.sql_for(4), &["tool_calls_orphan"]),
            (ORPHANS_ANYWHERE.sql_for(4), &["tool_calls_orphan_by_time"]),
        ];
        for (sql, indexes) in cases {
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            let steps: Vec<&str> = plan.iter().map(|p| p.3.as_str()).collect();
            let probes: Vec<&&str> = steps
                .iter()
                .filter(|s| {
                    (s.starts_with("SEARCH tool_calls ") || s.starts_with("SEARCH t "))
                        && !s.contains("PRIMARY KEY")
                })
                .collect();
            assert!(!probes.is_empty(), "{steps:?}");
            assert!(
                probes.iter().all(|s| indexes
                    .iter()
                    .any(|index| s.contains(&format!("INDEX {index} ")))),
                "{indexes:?}: {steps:?}"
            );
            for index in indexes {
                assert!(
                    probes
                        .iter()
                        .any(|s| s.contains(&format!("INDEX {index} "))),
                    "{index}: {steps:?}"
                );
            }
            // A late call's probes seek by the result's time: rows older
            // than the lead are never read (migration 0011).
            if indexes.iter().any(|i| i.starts_with("tool_calls_orphan")) {
                assert!(
                    probes.iter().all(|s| s.contains("result_at_ms>")),
                    "{steps:?}"
                );
            }
            assert!(
                !steps.iter().any(|s| s.contains("TEMP B-TREE")),
                "no sort: {steps:?}"
            );
        }
        // The one-by-one lookups: each probe through the index that holds
        // the rows it asks for (a session's calls: `tool_calls_call_session`,
        // led by the session, migrations 0008 and 0024; its result-only
        // rows: `tool_calls_orphan`; by call id alone, the open and the
        // parked calls' indexes).
        for (sql, indexes) in [
            (
                crate::write::NAME_IN_SESSION,
                &["tool_calls_call_session"][..],
            ),
            (
                crate::write::FIND_CALL_ANYWHERE_SQLITE,
                &[
                    "tool_calls_open",
                    "tool_calls_parked",
                    "tool_calls_call_session",
                    "tool_calls_orphan",
                ][..],
            ),
            (
                crate::write::FIND_CALL_BY_RESPONSE,
                &["tool_calls_response"][..],
            ),
            (crate::write::NAME_BY_RESPONSE, &["tool_calls_response"][..]),
            (
                crate::write::NAME_ANYWHERE,
                &["tool_calls_open", "tool_calls_parked"][..],
            ),
        ] {
            let sql = format!("EXPLAIN QUERY PLAN {sql}");
            let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&sql)
                .bind("a")
                .bind("b")
                .bind(1i64)
                .fetch_all(&pool)
                .await
                .unwrap();
            let steps: Vec<&str> = plan.iter().map(|p| p.3.as_str()).collect();
            assert!(
                !steps.iter().any(|s| s.starts_with("SCAN tool_calls")),
                "{sql}: {steps:?}"
            );
            for index in indexes {
                assert!(
                    steps.iter().any(|s| s.contains(index)),
                    "{index}: {sql}: {steps:?}"
                );
            }
        }
    }

    /// The batch's probe for turns in other sessions seeks
    /// `call_turns_by_hour` by (hour, fingerprint, time), twice per result,
    /// and reads no table whole: its cost does not grow with the history.
    #[tokio::test]
    async fn the_probe_for_turns_elsewhere_seeks_the_hour_index() {
        use crate::query_plan::sqlite_plan;
        let sql = TURNS_OF_THE_LAST_HOUR.sql_for(4);
        let plan = sqlite_plan(&sql, &[]).await;
        let steps: Vec<&str> = plan.iter().map(|p| p.3.as_str()).collect();
        let seeks: Vec<&&str> = steps
            .iter()
            .filter(|s| s.contains("call_turns_by_hour (<expr>=? AND turn_fp=? AND at_ms>?)"))
            .collect();
        assert_eq!(seeks.len(), 2, "{steps:?}");
        assert!(
            !steps
                .iter()
                .any(|s| s.starts_with("SCAN") && s.contains("call_turns")),
            "{steps:?}"
        );
    }

    /// The steps of SQLite's plan for `sql` with one bound text parameter,
    /// on a freshly migrated database.
    async fn plan_of(sql: &str, param: &str) -> Vec<String> {
        use crate::query_plan::{Param, sqlite_plan};
        let plan = sqlite_plan(sql, &[Param::Text(param)]).await;
        plan.into_iter().map(|p| p.3).collect()
    }

    /// `sql`'s plan with `param` bound uses `index` and scans no table.
    async fn searches_only(sql: &str, param: &str, index: &str) {
        let steps = plan_of(sql, param).await;
        assert!(steps.iter().any(|s| s.contains(index)), "{steps:?}");
        assert!(!steps.iter().any(|s| s.starts_with("SCAN")), "{steps:?}");
    }

    /// A continuation's session lookup searches the partial index.
    #[tokio::test]
    async fn the_session_of_a_response_is_found_through_its_index() {
        searches_only(
            crate::stats::SESSION_OF_RESPONSE,
            "resp_1",
            "requests_response",
        )
        .await;
        searches_only(
            crate::stats::SESSION_OF_CALLING_REPLY,
            "msg_1",
            "tool_calls_response",
        )
        .await;
    }

    /// The calls of a session (the dashboard's and `stats`' session view)
    /// are read through the index led by the session, not the whole table,
    /// and in its order (migration 0015): the newest rows of a session of
    /// weeks are read without sorting all of it, every 2 s.
    #[tokio::test]
    async fn the_calls_of_a_session_are_read_through_its_index() {
        let (sql, index) = (crate::stats::SESSION_CALLS_SQL, "tool_calls_session_newest");
        searches_only(sql, "s1", index).await;
        let steps = plan_of(sql, "s1").await;
        assert!(
            !steps.iter().any(|s| s.contains("TEMP B-TREE")),
            "{steps:?}"
        );
    }

    /// Sessions are numbered from one answer a chunk: across chunks (over
    /// 256 sessions), each session its own number, the one the table holds;
    /// a known session keeps its number, a new one gets a new number, and a
    /// known one quiet for over an hour has its `last_ms` moved to the
    /// batch's events.
    #[tokio::test]
    async fn a_batch_numbers_its_sessions_across_chunks() {
        use crate::event::{Event, RequestRecord};
        use crate::session_nos::BatchSessions;
        use sqlx::Connection;
        let dir = tempfile::tempdir().unwrap();
        let (_store, pool) = sqlite_store(dir.path()).await;
        let mut conn = pool.acquire().await.unwrap();
        let batch = |ids: std::ops::Range<usize>, at_ms: i64| -> Vec<Event> {
            ids.map(|i| {
                Event::Request(RequestRecord::for_test(
                    &format!("r{i}-{at_ms}"),
                    &format!("s{i:03}"),
                    "header",
                    at_ms,
                ))
            })
            .collect()
        };
        let table = |nos: SessionNos, ids: std::ops::Range<usize>| {
            ids.map(|i| nos.of(&format!("s{i:03}")).unwrap())
                .collect::<Vec<i64>>()
        };
        let stored = async |conn: &mut SqliteConnection| -> Vec<(String, i64, i64)> {
            sqlx::query_as("SELECT session_id, no, last_ms FROM sessions ORDER BY session_id")
                .fetch_all(conn)
                .await
                .unwrap()
        };

        let numbered = async |conn: &mut SqliteConnection, events: &[Event]| -> SessionNos {
            let mut tx = conn.begin().await.unwrap();
            let nos = number_sessions(&mut tx, &BatchSessions::of(events))
                .await
                .unwrap();
            tx.commit().await.unwrap();
            nos
        };

        let first = batch(0..300, 1_000);
        let numbers = table(numbered(&mut conn, &first).await, 0..300);
        let rows = stored(&mut conn).await;
        assert_eq!(rows.len(), 300);
        let held: Vec<i64> = rows.iter().map(|r| r.1).collect();
        assert_eq!(numbers, held, "each session's number is the table's");
        let mut distinct = held.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 300);

        // 100 known sessions, 200 new ones, an hour and a bit later.
        let later = 1_000 + STALE_SESSION_MS + 1;
        let second = batch(200..500, later);
        let again = table(numbered(&mut conn, &second).await, 200..500);
        assert_eq!(
            again[..100],
            numbers[200..],
            "known sessions keep their numbers"
        );
        let rows = stored(&mut conn).await;
        assert_eq!(rows.len(), 500);
        assert_eq!(again, rows[200..].iter().map(|r| r.1).collect::<Vec<_>>());
        assert!(again[100..].iter().all(|n| !numbers.contains(n)));
        assert!(rows[..200].iter().all(|r| r.2 == 1_000));
        assert!(
            rows[200..].iter().all(|r| r.2 == later),
            "stale sessions moved"
        );
    }

    /// Every lookup drives from `u` into an index: no statement scans a table.
    #[tokio::test]
    async fn lookups_search_indexes_from_the_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (_store, pool) = sqlite_store(dir.path()).await;
        let mut conn = pool.acquire().await.unwrap();
        let lookups: [(&Shaped, &str); 9] = [
            (&INSERT_REQUESTS, "requests"),
            (&ORPHANS, "tool_calls"),
            (&UNPAIRED_CALLS, "tool_calls"),
            (&INSERT_CALLS, "tool_calls"),
            (&INSERT_RESULT_KEYS, "tool_results"),
            (&PAIR_RESULTS, "tool_calls"),
            (&REST_PROBES, "tool_calls"),
            (&ORPHANS_ANYWHERE, "tool_calls"),
            (&KIN_TURNS, "call_turns"),
        ];
        for (stmt, table) in lookups {
            // The lookup: an insert's key match is its first statement.
            let text = stmt.sql_for(16);
            let first = text.split("; ").next().unwrap_or_default();
            let sql = format!("EXPLAIN QUERY PLAN {first}");
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(&sql).fetch_all(&mut *conn).await.unwrap();
            let steps: Vec<&str> = plan.iter().map(|p| p.3.as_str()).collect();
            let scans: Vec<&&str> = steps
                .iter()
                .filter(|s| {
                    s.starts_with("SCAN")
                        && !s.starts_with("SCAN v")
                        && !s.starts_with("SCAN u")
                        // The open calls' lookup: its rows with their count, and its bound.
                        && !s.starts_with("SCAN g")
                        && !s.starts_with("SCAN m")
                        && !s.starts_with("SCAN (subquery")
                        // The resent probe's newest calls: a bounded search first.
                        && !s.starts_with("SCAN newest")
                        // The fork probe's sessions of a first turn: the
                        // newest few of an index search first.
                        && !s.starts_with("SCAN kin")
                        && !s.contains("CONSTANT ROWS")
                })
                .collect();
            assert!(scans.is_empty(), "{table}: {steps:?}");
            assert!(
                steps
                    .iter()
                    .any(|s| s.starts_with("SEARCH") && (s.contains(" t ") || s.contains(table))),
                "{table}: {steps:?}"
            );
        }
    }
}
