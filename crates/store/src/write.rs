//! Writing a batch of events in one transaction, the same plan for both
//! backends (expanded once per backend by a macro over [`crate::bulk`]'s
//! set-based statements, so a batch costs a handful of round trips whatever
//! its size).
//!
//! Exactness: requests are unique on `request_id`, calls on
//! `(request_id, call_index)`, results on `(session_no, call_id,
//! message_index)` (the session by its number, [`crate::session_nos`]);
//! every insert is `ON CONFLICT DO NOTHING` and only a row actually
//! inserted counts as new. Within a batch, requests are applied
//! first, then calls, then results, so a call and its result in one batch
//! always pair. A result pairs with an unpaired call of its session with the
//! same call id, preferring calls that finished before the result arrived,
//! then the most recent (tau-bench reuses call ids across turns); else with
//! the call recorded for its `previous_response_id`; else with the one
//! unpaired call of that id in another session when its own session never
//! saw the id and the id is long enough to be globally unique
//! ([`MIN_GLOBAL_CALL_ID_LEN`]); else, when its client rewrote the call id,
//! with the call at its position in the model turn its request replays
//! ([`crate::turns`]); else it gets a row of its own, which a later call
//! completes if it comes within [`RESULT_LEAD_MS`] of the result.
//!
//! On PostgreSQL the batch first takes transaction-scoped advisory locks on
//! the hashes of its call ids (in sorted order, so batches never deadlock on
//! them): a call and its result written by two gateways at the same moment
//! are applied one after the other, and the second sees the first's row.
//! Before them it takes the schema's batch lock shared. A batch with more
//! than [`PG_MAX_ID_LOCKS`] ids (a backlog written after an outage, or a
//! gateway recording thousands of calls a second) takes that lock alone
//! instead, and no lock per id: every batch holds at most
//! `PG_MAX_ID_LOCKS + 1` locks, so several gateways writing full batches at
//! once cannot fill PostgreSQL's lock table (64 per connection by default,
//! shared by the whole server: about 6,400 with 100 connections). Such a
//! batch runs alone in its schema; smaller ones run side by side. No batch
//! waits for this lock while holding another, so it adds no deadlock.
//! SQLite writers are serialized by `BEGIN IMMEDIATE`.

// The batch's maps hash with foldhash, not SipHash (1–4 % of a batch's CPU;
// BENCHMARKS.md, "One worker fewer than the CPUs"). Their keys are client
// ids, but each map is seeded at random and holds one batch at most.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::bulk::{Candidate, MIN_GLOBAL_CALL_ID_LEN, RESULT_LEAD_MS};
pub(crate) use crate::deltas::{SessionDeltas, int};
use crate::error::StoreError;
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

/// What the statements of a batch's write found
/// ([`crate::Store::write_batch`]).
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// One per event.
    pub outcomes: Vec<Outcome>,
    /// Of the results the write was asked about (positions in the batch),
    /// those whose key is stored under the result's own request id. That
    /// id is one this gateway made, which no other gateway writes: the key
    /// was written by this gateway, with this event (by this write or an
    /// earlier attempt of it), not by another given the same result
    /// (`recorder::unsure`).
    pub own_keys: Vec<usize>,
}

/// How writing a batch failed ([`crate::Store::write_batch`]): whether
/// anything of it can have been written.
#[derive(Debug)]
pub(crate) enum BatchError {
    /// Before its COMMIT: nothing of the batch is written (a statement's
    /// error aborts the transaction; a lost connection's server rolls it
    /// back).
    Failed(StoreError),
    /// Its COMMIT failed: the batch may be written, all of it or none of it
    /// (a transaction is atomic), and nobody can tell which from here.
    /// `found` is what its statements found, one outcome per event: what
    /// happened if it landed (the recorder's writer tells which on the
    /// next write of the same events: `recorder::unsure`).
    Unsure { error: StoreError, found: Found },
    /// Cut off before its COMMIT ([`crate::stop::Stop`]): nothing of the
    /// batch is written (the transaction rolls back).
    Stopped,
}

// === impl Outcome ===

impl Outcome {
    /// The event was not in the store: a request, call or result of its own.
    pub(crate) fn is_new(&self) -> bool {
        !matches!(self, Outcome::Duplicate)
    }
}

// === impl BatchError ===

/// Any failure before the COMMIT.
impl From<StoreError> for BatchError {
    fn from(error: StoreError) -> Self {
        BatchError::Failed(error)
    }
}

/// The most call ids a batch locks one by one; a batch with more locks
/// the schema alone ([`PG_LOCK_SCHEMA_ALONE`]).
pub(crate) const PG_MAX_ID_LOCKS: usize = 1024;

/// The schema's batch lock, shared with other batches: a class of
/// toolwarden's own (`twwr`) and the schema, as retention's step lock.
pub(crate) const PG_LOCK_SCHEMA_SHARED: &str =
    "SELECT pg_advisory_xact_lock_shared(1953986418, hashtext(current_schema()))";

/// The schema's batch lock, held alone (no other batch of the schema runs).
pub(crate) const PG_LOCK_SCHEMA_ALONE: &str =
    "SELECT pg_advisory_xact_lock(1953986418, hashtext(current_schema()))";

/// Locks the call ids of a batch (PostgreSQL only).
pub(crate) const PG_LOCK_CALL_IDS: &str = "SELECT pg_advisory_xact_lock(h) FROM \
    (SELECT DISTINCT hashtext(x) AS h FROM unnest($1::text[]) AS x ORDER BY h) AS s";

/// A late call (its result was recorded first) completes the result's row.
pub(crate) const MERGE_CALL_INTO_ORPHAN: &str = "UPDATE tool_calls SET request_id = $1, \
    call_index = $2, response_id = $3, arguments_bytes = $4, call_at_ms = $5, at_ms = $5, \
    tool = $6, model = COALESCE(model, $7), \
    exec_ms = COALESCE(exec_ms, CASE WHEN result_at_ms >= $5 THEN result_at_ms - $5 ELSE 0 END) \
    WHERE id = $8 AND request_id IS NULL \
    AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE request_id = $1 AND call_index = $2)";

/// Among the newest 64 calls with this id in the response (a
/// response and a call id that repeat thousands of times must not make
/// each lookup read them all).
pub(crate) const FIND_CALL_BY_RESPONSE: &str = "SELECT id, tool, call_at_ms FROM \
    (SELECT id, tool, call_at_ms, result_at_ms FROM tool_calls \
    WHERE response_id = $1 AND call_id = $2 AND call_at_ms IS NOT NULL \
    ORDER BY call_at_ms DESC LIMIT 64) AS recent \
    WHERE result_at_ms IS NULL \
    ORDER BY (call_at_ms <= $3) DESC, call_at_ms DESC, id DESC LIMIT 1";

/// Session `$2` holds no row of call id `$1`: none of its calls
/// (`tool_calls_call_session`, which holds calls only: migration 0024)
/// and none of its result-only rows (`tool_calls_orphan`), one probe of
/// each.
macro_rules! session_never_saw {
    () => {
        "NOT EXISTS (SELECT 1 FROM tool_calls WHERE session_no = $2 AND call_id = $1 \
         AND request_id IS NOT NULL) \
         AND NOT EXISTS (SELECT 1 FROM tool_calls WHERE session_no = $2 AND call_id = $1 \
         AND request_id IS NULL)"
    };
}

/// Across sessions, only when the result's own session never saw this call
/// id, the call finished before the result arrived, and it is the only such
/// call (the caller asks for two rows and accepts one). Read from the open
/// calls' index (`tool_calls_open`; SQLite is told so: its planner does not
/// tell it from the full index of the same columns), then the parked
/// calls' (`tool_calls_parked`, [`crate::parking`]), so calls of this id
/// that have their result cost nothing. "This session never saw the id" is
/// one probe of the session's calls (`tool_calls_call_session`) and one of
/// its result-only rows (`tool_calls_orphan`), by the session's number
/// (`$2`): [`session_never_saw!`].
pub(crate) const FIND_CALL_ANYWHERE_PG: &str = concat!(
    "SELECT id, tool, call_at_ms FROM tool_calls \
     WHERE call_id = $1 AND result_at_ms IS NULL AND parked = 0 AND call_at_ms <= $3 AND ",
    session_never_saw!(),
    " UNION ALL SELECT id, tool, call_at_ms FROM tool_calls \
     WHERE call_id = $1 AND result_at_ms IS NULL AND parked = 1 AND call_at_ms <= $3 AND ",
    session_never_saw!(),
    " LIMIT 2"
);
/// [`FIND_CALL_ANYWHERE_PG`] for SQLite.
pub(crate) const FIND_CALL_ANYWHERE_SQLITE: &str = concat!(
    "SELECT id, tool, call_at_ms FROM tool_calls \
     INDEXED BY tool_calls_open WHERE call_id = $1 AND result_at_ms IS NULL AND parked = 0 \
     AND call_at_ms <= $3 AND ",
    session_never_saw!(),
    " UNION ALL SELECT id, tool, call_at_ms FROM tool_calls \
     INDEXED BY tool_calls_parked WHERE call_id = $1 AND result_at_ms IS NULL AND parked = 1 \
     AND call_at_ms <= $3 AND ",
    session_never_saw!(),
    " LIMIT 2"
);

/// The text of [`PAIR_RESULT`], which [`PAIR_OPEN_CALL`] extends.
macro_rules! pair_result_sql {
    () => {
        "UPDATE tool_calls SET result_request_id = $1, \
         message_index = $2, failed = $3, basis = $4, content_bytes = $5, excerpt = $6, \
         result_at_ms = $7, exec_ms = $8 WHERE id = $9"
    };
}

pub(crate) const PAIR_RESULT: &str = pair_result_sql!();

/// [`PAIR_RESULT`] for a call still open: a call of another session,
/// which another gateway may pair at the same time.
pub(crate) const PAIR_OPEN_CALL: &str = concat!(pair_result_sql!(), " AND result_at_ms IS NULL");

/// `$1` is the session's number.
pub(crate) const NAME_IN_SESSION: &str = "SELECT tool FROM tool_calls WHERE session_no = $1 \
    AND call_id = $2 AND call_at_ms IS NOT NULL AND request_id IS NOT NULL \
    ORDER BY call_at_ms DESC LIMIT 1";

pub(crate) const NAME_BY_RESPONSE: &str = "SELECT tool FROM tool_calls WHERE response_id = $1 \
    AND call_id = $2 AND request_id IS NOT NULL LIMIT 1";

/// The newest of the first 64 open calls with this id in any session the
/// index gives, and of the first 64 parked ones (a long id is normally one
/// call; a reused one need not cost a read of every call it ever named).
/// Open calls only: the indexes of calls by call id alone are theirs
/// (`tool_calls_open`, `tool_calls_parked`; the index of all calls is led
/// by the session, migration 0008), so a call already answered in another
/// session no longer names a result that reaches this lookup (one without
/// a name of its own, its call not in its session nor in a
/// `previous_response_id`).
pub(crate) const NAME_ANYWHERE: &str = "SELECT tool FROM \
    (SELECT tool, call_at_ms FROM (SELECT tool, call_at_ms FROM tool_calls WHERE call_id = $1 \
    AND result_at_ms IS NULL AND parked = 0 AND call_at_ms IS NOT NULL \
    AND request_id IS NOT NULL LIMIT 64) AS open \
    UNION ALL SELECT tool, call_at_ms FROM (SELECT tool, call_at_ms FROM tool_calls \
    WHERE call_id = $1 AND result_at_ms IS NULL AND parked = 1 AND call_at_ms IS NOT NULL \
    AND request_id IS NOT NULL LIMIT 64) AS parked) AS recent \
    ORDER BY call_at_ms DESC LIMIT 1";

/// The call ids a batch touches, and its model turns
/// ([`crate::turns::lock_keys`]), for the advisory locks.
pub(crate) fn call_ids(events: &[Event]) -> Vec<String> {
    let mut ids: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some(c.call_id.clone()),
            Event::ToolResult(r) => Some(r.call_id.clone()),
            Event::Request(_) => None,
        })
        .collect();
    ids.extend(crate::turns::lock_keys(
        events.iter().filter_map(|e| match e {
            Event::ToolCall(c) => Some(c),
            _ => None,
        }),
        events.iter().filter_map(|e| match e {
            Event::ToolResult(r) => Some(r),
            _ => None,
        }),
    ));
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// exec_ms from the record, else from the call's finish time (never negative).
pub(crate) fn exec_ms(rec: &ToolResultRecord, call_at_ms: Option<i64>) -> Option<f64> {
    rec.exec_ms
        .or_else(|| call_at_ms.map(|c| rec.at_ms.saturating_sub(c).max(0) as f64))
}

/// Candidate rows grouped by (session id, call id).
#[derive(Debug, Default)]
pub(crate) struct Candidates(HashMap<(String, String), Vec<Candidate>>);

impl Candidates {
    /// Groups `rows`, each row once (the lookups of several rows of a batch
    /// may find the same row).
    pub(crate) fn new(rows: Vec<Candidate>) -> Self {
        let mut map: HashMap<(String, String), Vec<Candidate>> = HashMap::new();
        let mut seen = HashSet::new();
        for c in rows.into_iter().filter(|c| seen.insert(c.id)) {
            map.entry((c.session_id.clone(), c.call_id.clone()))
                .or_default()
                .push(c);
        }
        Candidates(map)
    }

    /// Takes the unpaired call a result at `at_ms` belongs to: one that
    /// finished before the result arrived if any, the most recent first.
    pub(crate) fn take_call(
        &mut self,
        session: &str,
        call_id: &str,
        at_ms: i64,
    ) -> Option<Candidate> {
        self.take(session, call_id, |c| {
            let t = c.at_ms.unwrap_or(i64::MIN);
            (t <= at_ms, t, c.id)
        })
    }

    /// Takes the orphan result a call at `at_ms` completes: one that arrived
    /// after the call finished if any, the earliest first.
    pub(crate) fn take_orphan(
        &mut self,
        session: &str,
        call_id: &str,
        at_ms: i64,
    ) -> Option<Candidate> {
        self.take(session, call_id, |c| {
            let t = c.at_ms.unwrap_or(i64::MAX);
            (t >= at_ms, std::cmp::Reverse(t), std::cmp::Reverse(c.id))
        })
    }

    fn take<K: Ord>(
        &mut self,
        session: &str,
        call_id: &str,
        key: impl Fn(&Candidate) -> K,
    ) -> Option<Candidate> {
        let list = self.0.get_mut(&(session.to_owned(), call_id.to_owned()))?;
        let best = list
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| key(c))
            .map(|(i, _)| i)?;
        Some(list.swap_remove(best))
    }
}

/// Result-only rows in any session that a batch's late calls may complete
/// when their own session has none (a result written, through another
/// gateway, before its call and under a different session, e.g. a
/// Responses continuation without a session header, which fingerprints
/// differently). Looked up for the whole batch at once; a call takes the
/// row only when exactly one is left with its id among those recorded
/// from [`RESULT_LEAD_MS`] before it on, counting out the rows
/// the batch's earlier calls completed, just as a lookup made right before
/// it would find them.
#[derive(Debug, Default)]
pub(crate) struct Elsewhere {
    /// Per call (position in the batch's calls): the rows found, (id,
    /// result time).
    found: HashMap<usize, Vec<(i64, i64)>>,
    /// Rows completed so far by this batch.
    pub merged: HashSet<i64>,
}

impl Elsewhere {
    /// `rows` are (index into `wanted`, row id, result time); `wanted[n]`
    /// is the call's position.
    pub(crate) fn new(wanted: &[usize], rows: Vec<(usize, i64, i64)>) -> Self {
        let mut found: HashMap<usize, Vec<(i64, i64)>> = HashMap::new();
        for (n, id, at) in rows {
            if let Some(&k) = wanted.get(n) {
                found.entry(k).or_default().push((id, at));
            }
        }
        Elsewhere {
            found,
            merged: HashSet::new(),
        }
    }

    /// The one row still open for call `k` (made at `call_at_ms`) among
    /// those recorded no more than [`RESULT_LEAD_MS`] before the call, if
    /// exactly one is. Older rows cannot be the call's result; the lookup
    /// does not read them (they would cost it a read per row of a reused
    /// id's history), and they do not make the match ambiguous.
    pub(crate) fn only(&self, k: usize, call_at_ms: i64) -> Option<i64> {
        let since = call_at_ms.saturating_sub(RESULT_LEAD_MS);
        let mut open = self
            .found
            .get(&k)?
            .iter()
            .filter(|&&(id, at)| at >= since && !self.merged.contains(&id));
        match (open.next(), open.next()) {
            (Some(&(id, _)), None) => Some(id),
            _ => None,
        }
    }
}

/// [`PAIR_RESULT`] or [`PAIR_OPEN_CALL`] (`$sql`): the result `$r` written
/// into the call row `$id`, with its execution time `$exec`, on `$conn`
/// (either backend's connection); the statement's result.
macro_rules! pair_result {
    ($conn:expr, $sql:expr, $r:expr, $exec:expr, $id:expr) => {
        sqlx::query($sql)
            .bind(&$r.request_id)
            .bind(i64::from($r.message_index))
            .bind(i64::from($r.failed))
            .bind(&$r.basis)
            .bind(int($r.content_bytes))
            .bind(&$r.excerpt)
            .bind($r.at_ms)
            .bind($exec)
            .bind($id)
            .execute(&mut *$conn)
            .await?
    };
}

/// Expands `async fn $name(conn, events) -> Result<Vec<Outcome>, sqlx::Error>`
/// for one backend's connection type and bulk module. The caller owns the
/// transaction.
macro_rules! write_batch_fn {
    (
        $name:ident,
        $single:ident,
        $elsewhere:ident,
        $conn:ty,
        $bulk:path,
        $find_anywhere:expr,
        $insert_turns:path,
        $find_by_turn:path,
        $find_elsewhere_by_turn:path,
        $answered_in_turn:path
    ) => {
        pub(crate) async fn $name(
            conn: &mut $conn,
            events: &[Event],
        ) -> Result<Vec<Outcome>, sqlx::Error> {
            use $bulk as bulk;
            let mut out = vec![Outcome::Duplicate; events.len()];

            // The batch's sessions, numbered first: every row carries its number.
            let sessions = crate::session_nos::BatchSessions::of(events);
            let nos = if sessions.is_empty() {
                crate::session_nos::SessionNos::default()
            } else {
                bulk::number_sessions(conn, &sessions).await?
            };

            // Requests, then their repairs and sessions.
            let reqs: Vec<(usize, &RequestRecord)> = events
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    Event::Request(r) => Some((i, r)),
                    _ => None,
                })
                .collect();
            if !reqs.is_empty() {
                let recs: Vec<&RequestRecord> = reqs.iter().map(|x| x.1).collect();
                let mut new = bulk::insert_requests(conn, &recs, &nos).await?;
                let mut sessions = SessionDeltas::default();
                let mut repairs = Vec::new();
                for (i, r) in &reqs {
                    if new.remove(&r.request_id) {
                        out[*i] = Outcome::New;
                        sessions.add(r);
                        for (k, d) in r.repairs.iter().enumerate() {
                            repairs.push((r.request_id.clone(), int(k as u64), d.clone()));
                        }
                    }
                }
                if !repairs.is_empty() {
                    bulk::insert_repairs(conn, &repairs).await?;
                }
                if !sessions.is_empty() {
                    bulk::upsert_sessions(conn, &sessions).await?;
                }
            }

            // Calls: a late one completes its orphan result's row, the rest are inserted.
            let calls: Vec<(usize, &crate::event::ToolCallRecord)> = events
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    Event::ToolCall(c) => Some((i, c)),
                    _ => None,
                })
                .collect();
            if !calls.is_empty() {
                let keys = crate::bulk::lookups(
                    calls.iter().map(|(_, c)| (c.session_id.as_str(), c.call_id.as_str(), c.at_ms)),
                );
                let mut orphans = Candidates::new(bulk::find_orphans(conn, &keys, &nos).await?);
                let mut own: Vec<Option<i64>> = calls
                    .iter()
                    .map(|(_, c)| orphans.take_orphan(&c.session_id, &c.call_id, c.at_ms).map(|o| o.id))
                    .collect();
                let mut elsewhere = Elsewhere::default();
                let wanted: Vec<usize> = (0..calls.len())
                    .filter(|&k| own[k].is_none() && calls[k].1.call_id.len() >= MIN_GLOBAL_CALL_ID_LEN)
                    .collect();
                if !wanted.is_empty() {
                    let late: Vec<(&str, i64)> =
                        wanted.iter().map(|&k| (calls[k].1.call_id.as_str(), calls[k].1.at_ms)).collect();
                    elsewhere = Elsewhere::new(&wanted, bulk::orphans_anywhere(conn, &late).await?);
                }
                let mut rest = Vec::with_capacity(calls.len());
                for (k, (i, c)) in calls.iter().enumerate() {
                    let orphan = own[k].take().or_else(|| elsewhere.only(k, c.at_ms));
                    if let Some(orphan_id) = orphan {
                        let merged = sqlx::query(MERGE_CALL_INTO_ORPHAN)
                            .bind(&c.request_id)
                            .bind(i64::from(c.call_index))
                            .bind(c.continuable_response_id())
                            .bind(int(c.arguments_bytes))
                            .bind(c.at_ms)
                            .bind(&c.tool)
                            .bind(&c.model)
                            .bind(orphan_id)
                            .execute(&mut *conn)
                            .await?;
                        if merged.rows_affected() > 0 {
                            elsewhere.merged.insert(orphan_id);
                            out[*i] = Outcome::New;
                            continue;
                        }
                    }
                    rest.push((*i, *c));
                }
                if !rest.is_empty() {
                    let recs: Vec<_> = rest.iter().map(|x| x.1).collect();
                    let mut new = bulk::insert_calls(conn, &recs, &nos).await?;
                    for (i, c) in rest {
                        if new.remove(&(c.request_id.clone(), i64::from(c.call_index))) {
                            out[i] = Outcome::New;
                        }
                    }
                }
                let turns = crate::turns::turn_rows(
                    calls.iter().filter(|(i, _)| out[*i] == Outcome::New).map(|(_, c)| *c),
                );
                if !turns.is_empty() {
                    $insert_turns(conn, &turns, &nos).await?;
                }
            }

            // Results: dedup, pair within their session in bulk, then the rest one by one.
            let results: Vec<(usize, &ToolResultRecord)> = events
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    Event::ToolResult(r) => Some((i, r)),
                    _ => None,
                })
                .collect();
            if !results.is_empty() {
                let recs: Vec<_> = results.iter().map(|x| x.1).collect();
                let mut new = bulk::insert_result_keys(conn, &recs, &nos).await?;
                let (mut fresh, recorded): (Vec<(usize, &ToolResultRecord)>, Vec<_>) =
                    results.into_iter().partition(|(_, r)| {
                        new.remove(&(r.session_id.clone(), r.call_id.clone(), i64::from(r.message_index)))
                    });
                // A recorded key of a reused id answering a later call of it
                // (another run of the conversation): new again.
                let again = crate::bulk::may_answer_a_later_call(&recorded);
                if !again.is_empty() {
                    let recs: Vec<&ToolResultRecord> = again.iter().map(|&k| recorded[k].1).collect();
                    let claimed = bulk::claim_keys_of_later_calls(conn, &recs, &nos).await?;
                    fresh.extend(claimed.into_iter().map(|j| recorded[again[j]]));
                    fresh.sort_by_key(|(i, _)| *i);
                }
                if !fresh.is_empty() {
                    let keys = crate::bulk::lookups(
                        fresh.iter().map(|(_, r)| (r.session_id.as_str(), r.call_id.as_str(), r.at_ms)),
                    );
                    let mut open = Candidates::new(bulk::unpaired_calls(conn, &keys).await?);
                    let mut paired = Vec::new();
                    let mut rest = Vec::new();
                    for (i, r) in fresh {
                        match open.take_call(&r.session_id, &r.call_id, r.at_ms) {
                            Some(c) => {
                                let exec = exec_ms(r, c.at_ms);
                                out[i] = Outcome::NewResult { tool: c.tool, exec_ms: exec };
                                paired.push(crate::bulk::Pairing { id: c.id, rec: r, exec_ms: exec });
                            }
                            None => rest.push((i, r)),
                        }
                    }
                    if !paired.is_empty() {
                        bulk::pair_results(conn, &paired).await?;
                    }
                    if !rest.is_empty() {
                        // A result nothing anywhere could pair with (no unpaired
                        // call has its id, and its session recorded no turn it
                        // answers) and whose tool is known gets a row of its own,
                        // in bulk; the rest are looked up one by one. Pairing or
                        // inserting one result never gives another an unpaired
                        // call or a turn, so the order does not matter.
                        let recs: Vec<&ToolResultRecord> = rest.iter().map(|(_, r)| *r).collect();
                        let probes = bulk::open_ids_and_recorded_turns(conn, &recs, &nos).await?;
                        let no_turn = |r: &ToolResultRecord| {
                            r.answers.is_none_or(|a| !probes.turns.contains(&(r.session_id.clone(), a.turn)))
                        };
                        // Of the rest, the fingerprint sessions' results that may
                        // answer a call of another session (a compressed
                        // history): those with a turn of their fingerprint in
                        // the last hour anywhere, one probe for them all.
                        let asks: Vec<(usize, i64, i64)> = rest
                            .iter()
                            .enumerate()
                            .filter_map(|(k, (_, r))| {
                                let a = r.answers?;
                                (r.tool.is_some()
                                    && crate::event::is_fingerprint_session(&r.session_id)
                                    && !probes.open.contains(&r.call_id)
                                    && no_turn(r))
                                .then_some((k, a.turn, r.at_ms))
                            })
                            .collect();
                        let elsewhere = if asks.is_empty() {
                            HashSet::new()
                        } else {
                            bulk::turns_of_the_last_hour(conn, &asks).await?
                        };
                        let mut plain = Vec::new();
                        for (k, (i, r)) in rest.into_iter().enumerate() {
                            if probes.resent.contains(&k) {
                                // The same answer already counted, resent at
                                // another position (`bulk::may_be_resent`).
                                continue;
                            }
                            match &r.tool {
                                Some(tool) if !probes.open.contains(&r.call_id) && no_turn(r) => {
                                    if elsewhere.contains(&k) {
                                        if let Some(o) = $elsewhere(conn, r, &nos).await? {
                                            out[i] = o;
                                            continue;
                                        }
                                    }
                                    out[i] = Outcome::NewResult { tool: tool.clone(), exec_ms: r.exec_ms };
                                    plain.push((r, tool.as_str()));
                                }
                                _ => out[i] = $single(conn, r, &nos).await?,
                            }
                        }
                        if !plain.is_empty() {
                            bulk::insert_orphan_results(conn, &plain, &nos).await?;
                        }
                    }
                }
            }
            Ok(out)
        }

        /// A fingerprint session's first result answering a call of another
        /// session through the turn it replays (a client that compressed
        /// its history, so its fingerprint session changed; a named
        /// session does not change so): paired while that
        /// call is still open, as another gateway may pair it at the same
        /// time. `None`: no such call, nothing written.
        async fn $elsewhere(
            conn: &mut $conn,
            r: &ToolResultRecord,
            nos: &crate::session_nos::SessionNos,
        ) -> Result<Option<Outcome>, sqlx::Error> {
            if r.answers.is_none() || !crate::event::is_fingerprint_session(&r.session_id) {
                return Ok(None);
            }
            let session_no = nos.of(&r.session_id)?;
            let Some((id, tool, call_at)) = $find_elsewhere_by_turn(conn, r, session_no).await? else {
                return Ok(None);
            };
            let exec = exec_ms(r, call_at);
            let paired = pair_result!(conn, PAIR_OPEN_CALL, r, exec, id);
            Ok((paired.rows_affected() > 0).then_some(Outcome::NewResult { tool, exec_ms: exec }))
        }

        /// A new result whose call is not in its session: by response id,
        /// by call id elsewhere, else a row of its own.
        async fn $single(
            conn: &mut $conn,
            r: &ToolResultRecord,
            nos: &crate::session_nos::SessionNos,
        ) -> Result<Outcome, sqlx::Error> {
            let session_no = nos.of(&r.session_id)?;
            let mut found: Option<(i64, String, Option<i64>)> = $find_by_turn(conn, r, session_no).await?;
            if let (None, Some(prev)) = (&found, &r.previous_response_id) {
                found = sqlx::query_as(FIND_CALL_BY_RESPONSE)
                    .bind(prev)
                    .bind(&r.call_id)
                    .bind(r.at_ms)
                    .fetch_optional(&mut *conn)
                    .await?;
            }
            // No unpaired call at its place in the turn it replays, and the
            // call there holds this very answer: the same result resent at
            // another position under an id the call does not have (its
            // client rewrote it), which `bulk::may_be_resent`'s probe by id
            // cannot see.
            if found.is_none()
                && crate::bulk::is_unique_call_id(&r.call_id)
                && $answered_in_turn(conn, r, session_no).await?
            {
                return Ok(Outcome::Duplicate);
            }
            let global_id = r.call_id.len() >= MIN_GLOBAL_CALL_ID_LEN;
            if found.is_none() && global_id {
                let rows: Vec<(i64, String, Option<i64>)> = sqlx::query_as($find_anywhere)
                    .bind(&r.call_id)
                    .bind(session_no)
                    .bind(r.at_ms)
                    .fetch_all(&mut *conn)
                    .await?;
                if rows.len() == 1 {
                    found = rows.into_iter().next();
                }
            }
            if found.is_none() {
                if let Some(o) = $elsewhere(conn, r, nos).await? {
                    return Ok(o);
                }
            }
            if let Some((id, tool, call_at)) = found {
                let exec = exec_ms(r, call_at);
                pair_result!(conn, PAIR_RESULT, r, exec, id);
                return Ok(Outcome::NewResult { tool, exec_ms: exec });
            }
            let tool = match &r.tool {
                Some(t) => t.clone(),
                None => {
                    let mut name: Option<String> = sqlx::query_scalar(NAME_IN_SESSION)
                        .bind(session_no)
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
                    if name.is_none() && global_id {
                        name = sqlx::query_scalar(NAME_ANYWHERE)
                            .bind(&r.call_id)
                            .fetch_optional(&mut *conn)
                            .await?;
                    }
                    name.unwrap_or_else(|| {
                        tracing::warn!(
                            call_id = r.call_id.as_str(),
                            session_id = r.session_id.as_str(),
                            "tool result without a recorded call or tool name; recorded as `unknown`"
                        );
                        "unknown".to_owned()
                    })
                }
            };
            {
                use $bulk as bulk;
                bulk::insert_orphan_results(conn, &[(r, tool.as_str())], nos).await?;
            }
            Ok(Outcome::NewResult { tool, exec_ms: r.exec_ms })
        }
    };
}

write_batch_fn!(
    write_batch_sqlite,
    result_alone_sqlite,
    result_elsewhere_sqlite,
    sqlx::SqliteConnection,
    crate::bulk::sqlite,
    FIND_CALL_ANYWHERE_SQLITE,
    crate::turns::insert_turns_sqlite,
    crate::turns::find_call_by_turn_sqlite,
    crate::turns::find_call_by_turn_elsewhere_sqlite,
    crate::turns::answered_in_turn_sqlite
);
write_batch_fn!(
    write_batch_postgres,
    result_alone_postgres,
    result_elsewhere_postgres,
    sqlx::PgConnection,
    crate::bulk::postgres,
    FIND_CALL_ANYWHERE_PG,
    crate::turns::insert_turns_postgres,
    crate::turns::find_call_by_turn_postgres,
    crate::turns::find_call_by_turn_elsewhere_postgres,
    crate::turns::answered_in_turn_postgres
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sql_texts_use_the_result_lead() {
        assert_eq!(
            crate::bulk::result_lead_ms!().parse::<i64>().unwrap(),
            RESULT_LEAD_MS
        );
    }

    #[test]
    fn an_old_result_elsewhere_is_not_the_calls() {
        let found = |at| Elsewhere::new(&[7], vec![(0, 42, at)]);
        let call_at = 1_000_000;
        assert_eq!(found(call_at - RESULT_LEAD_MS).only(7, call_at), Some(42));
        assert_eq!(found(call_at + 5).only(7, call_at), Some(42));
        assert_eq!(found(call_at - RESULT_LEAD_MS - 1).only(7, call_at), None);
        let old_and_new = Elsewhere::new(&[7], vec![(0, 42, call_at), (0, 43, 0)]);
        assert_eq!(
            old_and_new.only(7, call_at),
            Some(42),
            "the old one is not a candidate"
        );
        let two = Elsewhere::new(&[7], vec![(0, 42, call_at), (0, 43, call_at + 9)]);
        assert_eq!(two.only(7, call_at), None, "two candidates: ambiguous");
    }
}
