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

use std::collections::BTreeSet;

use crate::event::{ToolCallRecord, ToolResultRecord};

/// Rows per `INSERT` (four parameters each, well under SQLite's limit).
const ROWS_PER_INSERT: usize = 1000;

/// The unpaired call at a position of a session's responses with a
/// fingerprint (`$1` the session's number): one that finished before the
/// result arrived if any, the most recent first.
pub(crate) const FIND_CALL_BY_TURN: &str = "SELECT c.id, c.tool, c.call_at_ms \
    FROM call_turns t JOIN tool_calls c ON c.request_id = t.request_id AND c.call_index = $3 \
    WHERE t.session_no = $1 AND t.turn_fp = $2 AND c.result_at_ms IS NULL \
    ORDER BY (c.call_at_ms <= $4) DESC, c.call_at_ms DESC, c.id DESC LIMIT 1";

/// The distinct (request id, session id, fingerprint) of calls that carry one.
pub(crate) fn turn_rows<'a>(
    calls: impl Iterator<Item = &'a ToolCallRecord>,
) -> Vec<(&'a str, &'a str, i64)> {
    let rows: BTreeSet<(&str, &str, i64)> = calls
        .filter_map(|c| Some((c.request_id.as_str(), c.session_id.as_str(), c.turn?)))
        .collect();
    rows.into_iter().collect()
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
macro_rules! turn_fns {
    ($insert:ident, $find:ident, $conn:ty, $db:ty, $verb:literal) => {
        /// Records the fingerprints of new responses' calls.
        pub(crate) async fn $insert(
            conn: &mut $conn,
            rows: &[(&str, &str, i64)],
            nos: &crate::session_nos::SessionNos,
        ) -> Result<(), sqlx::Error> {
            for chunk in rows.chunks(ROWS_PER_INSERT) {
                let mut query = sqlx::QueryBuilder::<$db>::new(concat!(
                    $verb,
                    " call_turns (request_id, session_id, turn_fp, session_no) "
                ));
                let numbered = chunk
                    .iter()
                    .map(|&(request, session, turn)| Ok((request, session, turn, nos.of(session)?)))
                    .collect::<Result<Vec<_>, sqlx::Error>>()?;
                query.push_values(numbered, |mut row, (request, session, turn, no)| {
                    row.push_bind(request)
                        .push_bind(session)
                        .push_bind(turn)
                        .push_bind(no);
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
            let Some(answers) = r.answers else {
                return Ok(None);
            };
            sqlx::query_as(FIND_CALL_BY_TURN)
                .bind(session_no)
                .bind(answers.turn)
                .bind(i64::from(answers.call_index))
                .bind(r.at_ms)
                .fetch_optional(&mut *conn)
                .await
        }
    };
}

turn_fns!(
    insert_turns_sqlite,
    find_call_by_turn_sqlite,
    sqlx::SqliteConnection,
    sqlx::Sqlite,
    "INSERT OR FAIL INTO"
);
turn_fns!(
    insert_turns_postgres,
    find_call_by_turn_postgres,
    sqlx::PgConnection,
    sqlx::Postgres,
    "INSERT INTO"
);
