//! Set-based statements: one round trip per step of a batch, whatever its
//! size. The same operations, with the same Rust signatures, for each
//! backend: PostgreSQL binds one array per column and reads them with
//! `UNNEST`; SQLite binds each value as a parameter of a `VALUES` list, in
//! statements of a few fixed row counts ([`shaped`]). The batch planner in
//! [`crate::write`] calls them.
//!
//! Lookups drive the loop from the batch's rows into an index of
//! `tool_calls` (`CROSS JOIN` fixes SQLite's join order, `LATERAL`
//! PostgreSQL's), so a batch never scans the table.
//!
//! Bounded whatever the history: a pairing lookup reads the partial indexes
//! of calls still open (`tool_calls_open`, then `tool_calls_parked` for
//! calls open for long: [`crate::parking`]) and results still waiting for
//! their call (`tool_calls_orphan` by session number,
//! `tool_calls_orphan_by_time` across sessions: migration 0011), in time
//! order, and takes at most
//! [`Lookup::limit`] rows per probe: as many as the batch has rows for the
//! same (session, call id), which is all the greedy pairing in
//! [`crate::write`] can use, and never more than [`MAX_PROBE_ROWS`]. A call id reused in one session for months
//! costs the same as a fresh one.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::deltas::{SessionDeltas, int};
use crate::event::{RequestRecord, ToolCallRecord, ToolResultRecord};
use crate::session_nos::{BatchSessions, STALE_SESSION_MS, SessionNos};

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

/// The most rows one probe of a lookup reads. Enough for every batch
/// except those with many rows of one (session, call id) pair — a client or
/// provider reusing one id many times within 50 ms — where exact pairing
/// would cost the square of their number; there the later rows of the pair
/// may pair with a call other than the newest open one (or, past all
/// candidates, get a row of their own), and every result is still
/// recorded and counted under its tool.
pub(crate) const MAX_PROBE_ROWS: i64 = 8;

/// [`MAX_PROBE_ROWS`] as a literal, for `concat!` into SQL texts.
macro_rules! max_probe_rows {
    () => {
        "8"
    };
}
pub(crate) use max_probe_rows;

/// How much earlier than its call a result may have been recorded and still
/// be that call's (a late call completes only such a result-only row). A
/// result answers a call the model made before it, so it is recorded after
/// the call unless the two went through gateways whose clocks differ; an
/// older result-only row with the same id (a client that reuses `call_0`,
/// a result whose call was never seen, weeks ago) belongs to another call.
/// The same literal as [`result_lead_ms!`], which the SQL texts use.
pub(crate) const RESULT_LEAD_MS: i64 = 60_000;

/// [`RESULT_LEAD_MS`] as a literal, for `concat!` into SQL texts.
macro_rules! result_lead_ms {
    () => {
        "60000"
    };
}
pub(crate) use result_lead_ms;

/// One pairing lookup: the (session, call id) of a batch's row, its time,
/// how many rows of the batch share the pair (the most rows the batch's
/// pairing can take from one probe), and how many of them come up to this
/// one, itself included (`need`: the most candidates the rows before it
/// can have taken when its turn comes, plus one for itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lookup {
    pub session_id: String,
    pub call_id: String,
    pub at_ms: i64,
    pub limit: i64,
    pub need: i64,
}

/// The lookups for a batch's (session, call id, time) rows, in the order
/// the batch pairs them: one per distinct row, each with the count of rows
/// sharing its pair and its place among them (the last, for a repeat).
pub(crate) fn lookups<'a>(items: impl Iterator<Item = (&'a str, &'a str, i64)>) -> Vec<Lookup> {
    let items: Vec<_> = items.collect();
    let mut per_pair: HashMap<(&str, &str), i64> = HashMap::new();
    for &(s, c, _) in &items {
        *per_pair.entry((s, c)).or_default() += 1;
    }
    let mut place: HashMap<(&str, &str), i64> = HashMap::new();
    let mut index: HashMap<(&str, &str, i64), usize> = HashMap::new();
    let mut out: Vec<Lookup> = Vec::new();
    for (s, c, a) in items {
        let limit = per_pair
            .get(&(s, c))
            .copied()
            .unwrap_or(1)
            .min(MAX_PROBE_ROWS);
        let up_to = place.entry((s, c)).or_default();
        *up_to += 1;
        let need = (*up_to).min(limit);
        match index.get(&(s, c, a)) {
            Some(&i) => out[i].need = need,
            None => {
                index.insert((s, c, a), out.len());
                out.push(Lookup {
                    session_id: s.to_owned(),
                    call_id: c.to_owned(),
                    at_ms: a,
                    limit,
                    need,
                });
            }
        }
    }
    out
}

/// For each call id of a batch's late calls, one more than the number of
/// times it occurs: how many result-only rows with that id the batch must
/// see to tell "exactly one left" from "more" ([`crate::write::Elsewhere`]).
pub(crate) fn limits_per_id(call_ids: &[&str]) -> Vec<i64> {
    let mut n: HashMap<&str, i64> = HashMap::new();
    for c in call_ids {
        *n.entry(c).or_default() += 1;
    }
    call_ids
        .iter()
        .map(|c| (n.get(c).copied().unwrap_or(0) + 1).min(MAX_PROBE_ROWS))
        .collect()
}

/// What the probes of a batch's results that paired with nothing found
/// (`open_ids_and_recorded_turns`, one per backend).
#[derive(Debug, Default)]
pub(crate) struct RestProbes {
    /// Call ids with an open call anywhere.
    pub open: HashSet<String>,
    /// (session id, turn fingerprint) pairs with a recorded model turn.
    pub turns: HashSet<(String, i64)>,
    /// Positions, in the slice probed, of results [`may_be_resent`]
    /// already answered in their session.
    pub resent: HashSet<usize>,
}

/// Call ids shorter than this are not trusted to be unique across sessions
/// (test fixtures' `c1`, ids a client or the wire layer synthesizes for
/// Gemini): they are matched within their session or response only.
pub(crate) const MIN_GLOBAL_CALL_ID_LEN: usize = 12;

/// The most answered calls of one (session, call id) that the probe for a
/// resent result reads, the newest first (an id reused in one session for
/// months costs no more than a fresh one): 64, as a literal for `concat!`
/// into SQL texts.
macro_rules! resent_probe_rows {
    () => {
        "64"
    };
}
pub(crate) use resent_probe_rows;

/// The same answer resent in another form. A result's key in the ledger is
/// its session, call id and position in the conversation, and the same
/// result can come again at another position: a Responses turn sent as a
/// continuation (its results alone, after `previous_response_id`) and then
/// again as the whole history, after `previous_response_not_found` or over
/// HTTP once a WebSocket broke, or the other way round; in any dialect, a
/// request retried with its oldest turns cut (after a context-length 400)
/// or sent to another provider's dialect (a failover: every position
/// shifts). Such a result finds no open call of its id in its session (the
/// first copy answered it), and is counted once: it is resent when its
/// session holds a recorded call of that id, among the newest
/// [`resent_probe_rows!`], already answered with a result of the same
/// size, verdict and excerpt, **and** that call is the one this result
/// answers by another token: the call of the response it continues
/// (`previous_response_id`), or a call of the model turn it replays (its
/// turn fingerprint, [`crate::turns`]). Only for call ids long
/// enough to be unique ([`MIN_GLOBAL_CALL_ID_LEN`]) and not
/// made up by the gateway (`name#n`, for Gemini calls without ids: the same
/// on every turn); short ones (`call_0` every turn) name another call each
/// time. Only calls the store saw are matched, not result-only rows.
pub(crate) fn may_be_resent(r: &ToolResultRecord) -> bool {
    is_unique_call_id(&r.call_id) && (r.previous_response_id.is_some() || r.answers.is_some())
}

/// How many sessions with a result's first turn the probe for a fork's
/// resend reads ([`fork_of`]), the newest first: a first turn that
/// thousands of automated runs share costs no more than one a single
/// session has. A literal for `concat!` into SQL texts.
macro_rules! kin_probe_rows {
    () => {
        "8"
    };
}
pub(crate) use kin_probe_rows;

/// The first turn by which a result that paired with nothing may be found
/// answered in another session: a fork of its conversation. A parent cut
/// after it sent its results, before the model's answer to them (an API
/// error, an interrupt), holds them after its last model turn; a fork of
/// it (Claude Code's `--fork-session`, `codex exec fork`) replays the
/// transcript under a new session id, so they are new there, and their
/// calls are in the parent. Such a result is counted already when one of
/// the newest [`kin_probe_rows!`] sessions with its first turn (its own
/// among them, where the same probe finds what `may_be_resent` finds)
/// (`sessions_by_first_turn`, migration 0022) holds a call of its id, among
/// the newest [`resent_probe_rows!`], answered with the same size, verdict
/// and excerpt, at its place in a turn with the fingerprint of the turn it
/// replays (`call_turns`' key): the same call, answered once. Only for
/// unique ids ([`is_unique_call_id`]: another run of the same first turn
/// makes `call_0` again, never the provider's `toolu_…`) and results
/// that name the turn they replay.
pub(crate) fn fork_of(r: &ToolResultRecord) -> Option<i64> {
    r.answers?;
    is_unique_call_id(&r.call_id).then_some(r.first_turn?)
}

/// Of a batch's numbered sessions (id, number, first turn of the row),
/// those whose row has no first turn yet while a result of the batch names
/// one: (number, first turn), for an `UPDATE` each (SQLite; PostgreSQL's
/// numbering statement sets it on its conflict). At most once in a
/// session's life (a session first numbered by its calls or its request,
/// or recorded before migration 0022 and still going): a new session's
/// row takes the batch's first turn as it is inserted.
pub(crate) fn fill_first_turns<'a>(
    sessions: &'a BatchSessions<'_>,
    numbered: impl Iterator<Item = (&'a str, i64, Option<i64>)> + 'a,
) -> impl Iterator<Item = (i64, i64)> + 'a {
    numbered.filter_map(|(id, no, stored)| match stored {
        Some(_) => None,
        None => Some((no, sessions.first_turn(id)?)),
    })
}

/// Whether a call id names one call only: a provider's id, of
/// 12 characters or more, not made up by the
/// gateway (`name#n`, for Gemini calls without ids). Any other id (`call_0`
/// every turn, `name#0`) can name another call of the same session later:
/// another run of the same conversation (automated runs sharing a first
/// turn, so a fingerprinted session), a branch from an edited message.
pub fn is_unique_call_id(call_id: &str) -> bool {
    call_id.len() >= MIN_GLOBAL_CALL_ID_LEN && !call_id.contains('#')
}

/// Expands `claim_keys_of_later_calls(conn, results, nos)` for one
/// backend's connection type and placeholder sigil (`?` or `$`).
///
/// A result whose key (session, call id, position) is recorded already is
/// still new when its id is not unique ([`is_unique_call_id`]) and its
/// session holds an open call of that id that finished after the recorded
/// key's result arrived and no later than this one: the same position
/// answered again in another run of the conversation. The key then names
/// this result (its request and time), so that this run's own resends are
/// duplicates. Two runs interleaved in one session, one resending while the
/// other's call is open, cannot be told apart: the resend is taken for the
/// other run's answer — unless the result names the model turn it
/// replays ([`ToolResultRecord::answers`]): then the open call must sit at
/// the result's position of a response with that turn's fingerprint (or of
/// one whose turn is not recorded), so a run's resend is not taken for the
/// answer of another run's call made with other arguments. Runs whose
/// turns are alike (the same calls, the same arguments) still cannot be
/// told apart. One statement per result: such results reach the store
/// rarely.
macro_rules! claim_keys_of_later_calls_fn {
    ($conn:ty, $p:literal) => {
        /// Of `results`, the positions of those that answer a later call
        /// of their id, each key claimed for its result.
        pub(crate) async fn claim_keys_of_later_calls(
            conn: &mut $conn,
            results: &[&ToolResultRecord],
            nos: &SessionNos,
        ) -> Result<HashSet<usize>, sqlx::Error> {
            // Binds: session number, call id, position, the result's time
            // and request, the fingerprint of the turn it replays and its
            // place there (both NULL when it names none).
            const CLAIM: &str = concat!(
                "UPDATE tool_results SET at_ms = ",
                $p,
                "4, request_id = ",
                $p,
                "5 \
                 WHERE session_no = ",
                $p,
                "1 AND call_id = ",
                $p,
                "2 \
                 AND message_index = ",
                $p,
                "3 AND at_ms < ",
                $p,
                "4 \
                 AND EXISTS (SELECT 1 FROM tool_calls t WHERE t.session_no = ",
                $p,
                "1 \
                 AND t.call_id = ",
                $p,
                "2 AND t.call_at_ms > tool_results.at_ms \
                 AND t.call_at_ms <= ",
                $p,
                "4 AND t.result_at_ms IS NULL \
                 AND (CAST(",
                $p,
                "6 AS BIGINT) IS NULL OR NOT EXISTS (SELECT 1 FROM call_turns ct \
                 WHERE ct.request_id = t.request_id AND NOT (ct.turn_fp = ",
                $p,
                "6 AND t.call_index = ",
                $p,
                "7))))"
            );
            let mut claimed = HashSet::new();
            for (k, r) in results.iter().enumerate() {
                let done = sqlx::query(CLAIM)
                    .bind(nos.of(&r.session_id)?)
                    .bind(r.call_id.as_str())
                    .bind(i64::from(r.message_index))
                    .bind(r.at_ms)
                    .bind(r.request_id.as_str())
                    .bind(r.answers.map(|a| a.turn))
                    .bind(r.answers.map(|a| i64::from(a.call_index)))
                    .execute(&mut *conn)
                    .await?;
                if done.rows_affected() > 0 {
                    claimed.insert(k);
                }
            }
            Ok(claimed)
        }
    };
}
pub(crate) use claim_keys_of_later_calls_fn;

/// The positions in `recorded` (results whose keys were recorded already)
/// of those that may answer a later call of their id: ids that are not
/// unique, with no call of the id after them in their request
/// ([`ToolResultRecord::latest_of_its_id`]). Claimed in order, one by one: a claim moves its key's time to
/// its result's, so a repeat of the key claims only for a call newer still.
pub(crate) fn may_answer_a_later_call(recorded: &[(usize, &ToolResultRecord)]) -> Vec<usize> {
    recorded
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| r.latest_of_its_id && !is_unique_call_id(&r.call_id))
        .map(|(k, _)| k)
        .collect()
}

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

/// Finite or zero: a NaN must not poison a batch (SQLite stores a bound NaN
/// as NULL, which a `NOT NULL` column refuses).
fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

pub(crate) mod postgres;
mod shaped;
pub(crate) mod sqlite;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_count_the_rows_of_each_pair_and_drop_repeats() {
        let got = lookups([("s", "a", 5), ("s", "a", 7), ("s", "a", 5), ("t", "a", 1)].into_iter());
        let short: Vec<_> = got
            .iter()
            .map(|l| {
                (
                    l.session_id.as_str(),
                    l.call_id.as_str(),
                    l.at_ms,
                    l.limit,
                    l.need,
                )
            })
            .collect();
        assert_eq!(
            short,
            vec![
                ("s", "a", 5, 3, 3),
                ("s", "a", 7, 3, 2),
                ("t", "a", 1, 1, 1)
            ]
        );
        assert_eq!(limits_per_id(&["x", "y", "x"]), vec![3, 2, 3]);
    }

    #[test]
    fn the_sql_texts_use_the_probe_bound() {
        assert_eq!(max_probe_rows!().parse::<i64>().unwrap(), MAX_PROBE_ROWS);
    }
}
