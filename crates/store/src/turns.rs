//! Pairing a result with its call through the model turn its request
//! replays, for clients that rewrite call ids (see
//! `migrations/*/0003_call_turns.sql` and `toolwarden_wire::turn`).
//!
//! A batch's new calls leave one `call_turns` row per response: the
//! fingerprint of the response's calls. A new result that no recorded call
//! of its session answers by id, and whose request replayed the turn its
//! call came from ([`ToolResultRecord::answers`]), takes the unpaired call
//! at that position of the most recent response of its session with that
//! fingerprint — one indexed lookup, made only for such results. The call
//! keeps its own id (`name#n` for Gemini's id-less calls); the result brings
//! it its verdict, so the call is counted once and its result meets it.
//!
//! A result whose fingerprint session recorded nothing before it (a
//! session's first requests) may answer a call of another session: a
//! client that compressed its history changed its first turn, and with it
//! its fingerprint session. It takes the unpaired call at its position of the
//! newest turns with its fingerprint in any session, from the last hour
//! ([`FIND_CALL_BY_TURN_ELSEWHERE`]).

use std::collections::BTreeMap;

use crate::event::{ToolCallRecord, ToolResultRecord};

/// Rows per `INSERT` (five parameters each, well under SQLite's limit).
const ROWS_PER_INSERT: usize = 1000;

/// How many of a session's newest turns with one fingerprint
/// [`FIND_CALL_BY_TURN`] reads (as a literal for `concat!`): a session
/// that repeats one call turn a thousand times costs no more than one that
/// made it once. The call a result answers is of one of the newest turns
/// unless that many identical turns came after it unanswered.
macro_rules! turn_probe_rows {
    () => {
        "8"
    };
}

/// The unpaired call at a position of a session's newest responses with a
/// fingerprint (`$1` the session's number; [`turn_probe_rows!`] of them,
/// the index's last entries): one that finished before the result
/// arrived if any, the most recent first.
pub(crate) const FIND_CALL_BY_TURN: &str = concat!(
    "SELECT c.id, c.tool, c.call_at_ms FROM (SELECT t.request_id FROM call_turns t \
     WHERE t.session_no = $1 AND t.turn_fp = $2 ORDER BY t.at_ms DESC LIMIT ",
    turn_probe_rows!(),
    ") AS newest JOIN tool_calls c ON c.request_id = newest.request_id AND c.call_index = $3 \
     WHERE c.result_at_ms IS NULL \
     ORDER BY (c.call_at_ms <= $4) DESC, c.call_at_ms DESC, c.id DESC LIMIT 1"
);

/// How far back (ms) a result looks for its call in another session, and
/// the width of the hours `call_turns_by_hour` is led by (migration 0020,
/// which writes it out): a call made more than an hour before its result
/// is not a live run's. A literal for `concat!`.
macro_rules! elsewhere_window_ms {
    () => {
        "3600000"
    };
}

/// The newest turns with fingerprint `$2` of one hour — the hour of `$4`
/// (time / [`elsewhere_window_ms!`]) less `$hours_back` — at most
/// [`elsewhere_window_ms!`] before `$4`: [`turn_probe_rows!`] of them, read from the end of
/// `call_turns_by_hour`'s range. The hour is written as the index's
/// expression, so the planner uses it.
macro_rules! newest_of_hour {
    ($alias:literal, $hours_back:literal) => {
        concat!(
            "SELECT request_id FROM (SELECT t.request_id FROM call_turns t \
             WHERE t.at_ms / ",
            elsewhere_window_ms!(),
            " = $4 / ",
            elsewhere_window_ms!(),
            $hours_back,
            " AND t.turn_fp = $2 AND t.at_ms >= $4 - ",
            elsewhere_window_ms!(),
            " ORDER BY t.at_ms DESC LIMIT ",
            turn_probe_rows!(),
            ") AS ",
            $alias
        )
    };
}

/// The unpaired call at position `$3` of the newest turns with
/// fingerprint `$2` in another session than `$1` (a session number), one
/// the provider gave no id (`name#n`: a provider's id finds its call in
/// any session by id, and a result under another id than its call's is
/// then another conversation's — its call not written yet), made
/// at most [`elsewhere_window_ms!`] before the result's time `$4` — asked
/// only for a result whose session recorded no call or result before it
/// (`tool_calls_session_newest`: one index probe). The turns are read in
/// the result's hour and the one before, [`turn_probe_rows!`] of each.
/// One made before the result if any, the most recent first.
pub(crate) const FIND_CALL_BY_TURN_ELSEWHERE: &str = concat!(
    "SELECT c.id, c.tool, c.call_at_ms FROM (",
    newest_of_hour!("this_hour", ""),
    " UNION ALL ",
    newest_of_hour!("hour_before", " - 1"),
    ") AS newest JOIN tool_calls c ON c.request_id = newest.request_id AND c.call_index = $3 \
     WHERE c.result_at_ms IS NULL AND c.session_no <> $1 AND c.call_id LIKE '%#%' \
     AND NOT EXISTS (SELECT 1 FROM tool_calls o WHERE o.session_no = $1 AND o.at_ms < $4) \
     ORDER BY (c.call_at_ms <= $4) DESC, c.call_at_ms DESC, c.id DESC LIMIT 1"
);

/// Whether a result was recorded already: its session (`$1`, its number)
/// holds a result of its id `$7` at another position than `$8`, and the
/// call at its position `$3` of the session's newest responses with its
/// turn's fingerprint `$2` ([`turn_probe_rows!`] of them) is answered with
/// the same result: size `$4`, verdict `$5`, excerpt `$6`. Asked only once
/// no unpaired call there takes the result ([`FIND_CALL_BY_TURN`]): the
/// same answer resent at another position under an id its call does not
/// have (a client that rewrote it). A first answer of a repeated turn
/// whose call is not written yet is none: no result of its id came before.
pub(crate) const ANSWERED_IN_TURN: &str = concat!(
    "SELECT c.id FROM (SELECT t.request_id FROM call_turns t \
     WHERE t.session_no = $1 AND t.turn_fp = $2 ORDER BY t.at_ms DESC LIMIT ",
    turn_probe_rows!(),
    ") AS newest JOIN tool_calls c ON c.request_id = newest.request_id AND c.call_index = $3 \
     WHERE c.result_at_ms IS NOT NULL AND c.content_bytes = $4 AND c.failed = $5 \
     AND (c.excerpt = $6 OR (c.excerpt IS NULL AND $6 IS NULL)) \
     AND EXISTS (SELECT 1 FROM tool_results k WHERE k.session_no = $1 AND k.call_id = $7 \
     AND k.message_index <> $8) LIMIT 1"
);

/// One `call_turns` row: request id, session id, fingerprint, time.
pub(crate) type TurnRow<'a> = (&'a str, &'a str, i64, i64);

/// The distinct (request id, session id, fingerprint) of calls that carry
/// one, each with its earliest call's time.
pub(crate) fn turn_rows<'a>(calls: impl Iterator<Item = &'a ToolCallRecord>) -> Vec<TurnRow<'a>> {
    let mut rows: BTreeMap<(&str, &str, i64), i64> = BTreeMap::new();
    for c in calls {
        if let Some(turn) = c.turn {
            let at = rows
                .entry((c.request_id.as_str(), c.session_id.as_str(), turn))
                .or_insert(c.at_ms);
            *at = (*at).min(c.at_ms);
        }
    }
    rows.into_iter()
        .map(|((request, session, turn), at)| (request, session, turn, at))
        .collect()
}

/// The lock keys of a batch's turns (PostgreSQL): a call and a result
/// answering it through its turn, written at once by two gateways, are
/// applied one after the other, as calls and results with one id are.
pub(crate) fn lock_keys<'a>(
    calls: impl Iterator<Item = &'a ToolCallRecord>,
    results: impl Iterator<Item = &'a ToolResultRecord>,
) -> impl Iterator<Item = String> {
    calls
        .filter_map(|c| Some((c.session_id.as_str(), c.turn?)))
        .chain(results.filter_map(|r| Some((r.session_id.as_str(), r.answers?.turn))))
        .map(|(session, turn)| format!("turn:{turn:x}:{session}"))
}

/// Expands `async fn $insert(conn, rows)` and `async fn $find(conn, result)`
/// for one backend's connection type; `$verb` starts the `INSERT` (SQLite's
/// `INSERT OR FAIL`: see the statement-journal note in `bulk/shaped.rs`).
/// [`FIND_CALL_BY_TURN`] or [`FIND_CALL_BY_TURN_ELSEWHERE`] (`$sql`) for
/// the result `$r` of session `$session_no`, on `$conn` (either backend's
/// connection): `None` for a result that replays no turn.
macro_rules! call_by_turn {
    ($conn:expr, $sql:expr, $r:expr, $session_no:expr) => {{
        let Some(answers) = $r.answers else {
            return Ok(None);
        };
        sqlx::query_as($sql)
            .bind($session_no)
            .bind(answers.turn)
            .bind(i64::from(answers.call_index))
            .bind($r.at_ms)
            .fetch_optional(&mut *$conn)
            .await
    }};
}

macro_rules! turn_fns {
    ($insert:ident, $find:ident, $elsewhere:ident, $answered:ident, $conn:ty, $db:ty, $verb:literal) => {
        /// Records the fingerprints of new responses' calls.
        pub(crate) async fn $insert(
            conn: &mut $conn,
            rows: &[TurnRow<'_>],
            nos: &crate::session_nos::SessionNos,
        ) -> Result<(), sqlx::Error> {
            for chunk in rows.chunks(ROWS_PER_INSERT) {
                let mut query = sqlx::QueryBuilder::<$db>::new(concat!(
                    $verb,
                    " call_turns (request_id, session_id, turn_fp, session_no, at_ms) "
                ));
                let numbered = chunk
                    .iter()
                    .map(|&(request, session, turn, at)| {
                        Ok((request, session, turn, nos.of(session)?, at))
                    })
                    .collect::<Result<Vec<_>, sqlx::Error>>()?;
                query.push_values(numbered, |mut row, (request, session, turn, no, at)| {
                    row.push_bind(request)
                        .push_bind(session)
                        .push_bind(turn)
                        .push_bind(no)
                        .push_bind(at);
                });
                query.push(" ON CONFLICT DO NOTHING");
                query.build().execute(&mut *conn).await?;
            }
            Ok(())
        }

        /// The unpaired call `r` answers through its replayed turn:
        /// (row id, tool, call's finish time).
        pub(crate) async fn $find(
            conn: &mut $conn,
            r: &ToolResultRecord,
            session_no: i64,
        ) -> Result<Option<(i64, String, Option<i64>)>, sqlx::Error> {
            call_by_turn!(conn, FIND_CALL_BY_TURN, r, session_no)
        }

        /// The unpaired call of another session `r` answers through its
        /// replayed turn ([`FIND_CALL_BY_TURN_ELSEWHERE`]), when `r`'s
        /// session recorded nothing before it: (row id, tool, call's
        /// finish time).
        pub(crate) async fn $elsewhere(
            conn: &mut $conn,
            r: &ToolResultRecord,
            session_no: i64,
        ) -> Result<Option<(i64, String, Option<i64>)>, sqlx::Error> {
            call_by_turn!(conn, FIND_CALL_BY_TURN_ELSEWHERE, r, session_no)
        }

        /// Whether `r` is the answer already stored in the call it
        /// answers through its replayed turn ([`ANSWERED_IN_TURN`]): a
        /// resend at another position, under an id the call does not have.
        pub(crate) async fn $answered(
            conn: &mut $conn,
            r: &ToolResultRecord,
            session_no: i64,
        ) -> Result<bool, sqlx::Error> {
            let Some(answers) = r.answers else {
                return Ok(false);
            };
            let found: Option<i64> = sqlx::query_scalar(ANSWERED_IN_TURN)
                .bind(session_no)
                .bind(answers.turn)
                .bind(i64::from(answers.call_index))
                .bind(crate::deltas::int(r.content_bytes))
                .bind(i64::from(r.failed))
                .bind(r.excerpt.as_deref())
                .bind(r.call_id.as_str())
                .bind(i64::from(r.message_index))
                .fetch_optional(&mut *conn)
                .await?;
            Ok(found.is_some())
        }
    };
}

turn_fns!(
    insert_turns_sqlite,
    find_call_by_turn_sqlite,
    find_call_by_turn_elsewhere_sqlite,
    answered_in_turn_sqlite,
    sqlx::SqliteConnection,
    sqlx::Sqlite,
    "INSERT OR FAIL INTO"
);
turn_fns!(
    insert_turns_postgres,
    find_call_by_turn_postgres,
    find_call_by_turn_elsewhere_postgres,
    answered_in_turn_postgres,
    sqlx::PgConnection,
    sqlx::Postgres,
    "INSERT INTO"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query_plan::{Param, sqlite_plan};

    /// The lookups read the newest turns of their fingerprint from the end
    /// of the index and stop at the limit: the subquery neither sorts
    /// nor reads the session's other turns, however many repeats it has.
    #[tokio::test]
    async fn the_turn_lookup_reads_the_newest_turns_only() {
        let find = [Param::Int(1), Param::Int(2), Param::Int(0), Param::Int(0)];
        let answered = [
            Param::Int(1),
            Param::Int(2),
            Param::Int(0),
            Param::Int(9),
            Param::Int(1),
            Param::Text("Error"),
            Param::Text("read_file_1795610246552_0"),
            Param::Int(4),
        ];
        for (sql, params) in [
            (FIND_CALL_BY_TURN, &find[..]),
            (ANSWERED_IN_TURN, &answered[..]),
        ] {
            reads_the_newest_turns_only(sql, params).await;
        }
    }

    /// A result looking for its call in another session reads, of each of
    /// its two hours, the newest turns of its fingerprint from the end of
    /// `call_turns_by_hour`'s range, under the limit, without sorting them;
    /// and asks whether its session recorded anything before it with one
    /// probe of the session's newest rows.
    #[tokio::test]
    async fn the_lookup_elsewhere_reads_two_hours_newest_turns_only() {
        let at = 1_796_000_000_000;
        let params = [Param::Int(1), Param::Int(2), Param::Int(0), Param::Int(at)];
        let plan = sqlite_plan(FIND_CALL_BY_TURN_ELSEWHERE, &params).await;
        let reads: Vec<_> = plan
            .iter()
            .filter(|p| p.3.contains("call_turns_by_hour"))
            .collect();
        assert_eq!(reads.len(), 2, "{plan:?}");
        for read in reads {
            assert!(
                read.3.contains("(<expr>=? AND turn_fp=?") && read.3.contains("at_ms>?"),
                "{plan:?}"
            );
            assert!(
                !plan
                    .iter()
                    .any(|p| p.1 == read.1 && p.3.contains("TEMP B-TREE")),
                "{plan:?}"
            );
        }
        assert!(
            plan.iter()
                .any(|p| p.3.contains("tool_calls_session_newest")
                    && p.3.contains("session_no=? AND at_ms<?")),
            "{plan:?}"
        );
        assert!(
            plan.iter()
                .filter_map(|p| p.3.strip_prefix("SCAN "))
                .all(|read| ["this_hour", "hour_before", "newest"].contains(&read)),
            "no table read whole, only the subqueries' few rows: {plan:?}"
        );
    }

    async fn reads_the_newest_turns_only(sql: &str, params: &[Param<'_>]) {
        let plan = sqlite_plan(sql, params).await;
        let read = plan
            .iter()
            .find(|p| p.3.contains("call_turns_by_fingerprint"))
            .unwrap_or_else(|| panic!("{plan:?}"));
        assert!(read.3.contains("(session_no=? AND turn_fp=?)"), "{plan:?}");
        // The subquery's steps: the index read and nothing that sorts.
        let subquery = read.1;
        assert!(
            plan.iter()
                .any(|p| p.0 == subquery && p.3.contains("newest")),
            "the turns are read in a subquery of their own, under its LIMIT: {plan:?}"
        );
        assert!(
            !plan
                .iter()
                .any(|p| p.1 == subquery && p.3.contains("TEMP B-TREE")),
            "{plan:?}"
        );
    }
}
