//! Parking open calls (issue 14, migration 0009): calls open for longer
//! than [`PARK_AFTER_MS`] leave the index of open calls
//! (`tool_calls_open`) for one of their own (`tool_calls_parked`).
//!
//! Why: every call is written into the open calls' index, led by its random
//! call id, and out of it again when its result pairs it; once that index
//! is larger than a batch, each call costs a page of it written twice. The
//! calls that are never answered (abandoned runs) stayed in it for ever, so
//! its size, and the cost of recording an event, grew with the history:
//! 2.9–3.2× the empty database's cost at 1 M rows of history with random
//! ids, against 1.35–1.46× with a history whose calls are all answered
//! (BENCHMARKS.md). Parked, they are out of the way of the live traffic:
//! the open calls' index holds the calls of the last minute or so.
//!
//! Nothing is lost: every lookup of open calls also reads the parked ones
//! (`bulk`, `write`; by the pair, only when the open calls have too few),
//! so a result that comes after its call was parked pairs with it, and the
//! counts stay exact. One preference is approximate: when a session has
//! two open calls with one id, one parked and one still in the open index
//! but older (it reached the store more than the parking age after it was
//! made, and the next pass has not run), a result takes the open one,
//! where the newest would be the parked one. Which row it completes
//! changes; the counts do not.
//!
//! Time here is the events' own (their `at_ms`, the gateway's clock when it
//! saw them), not the writer's: a writer that is behind does not park calls
//! whose results are in its queue.

use std::sync::Mutex;

use sqlx::{PgConnection, SqliteConnection};

use crate::event::Event;

/// A call open this long (by the events' clock) is parked.
pub(crate) const PARK_AFTER_MS: i64 = 60_000;
/// The events' time between two parking passes.
pub(crate) const PARK_EVERY_MS: i64 = 10_000;
/// The most calls one pass parks (one batch's transaction); a pass that
/// parks this many is followed by another with the next batch.
pub(crate) const PARK_BATCH: i64 = 4_096;

/// Calls open since before `$1`, at most `$2` of them. The whole open
/// calls' index is read (it is led by the call id), which is the point of
/// keeping it small.
const PARK_SQLITE: &str = "UPDATE tool_calls SET parked = 1 WHERE id IN \
    (SELECT id FROM tool_calls INDEXED BY tool_calls_open \
    WHERE result_at_ms IS NULL AND parked = 0 AND call_at_ms < $1 LIMIT $2)";
/// [`PARK_SQLITE`] for PostgreSQL. `SKIP LOCKED`: a call another gateway's
/// batch is pairing right now is left for the next pass, so parking never
/// waits on a row (and never joins a deadlock). `= ANY(ARRAY(…))`: the ids
/// are found first and then updated through the primary key.
const PARK_POSTGRES: &str = "UPDATE tool_calls SET parked = 1 WHERE id = ANY(ARRAY(\
    SELECT id FROM tool_calls WHERE result_at_ms IS NULL AND parked = 0 \
    AND call_at_ms < $1 LIMIT $2 FOR UPDATE SKIP LOCKED))";
/// Before [`PARK_POSTGRES`], for it alone (it is the batch's last
/// statement; `SET LOCAL` ends with the transaction). The planner takes
/// the columns of `tool_calls_open`'s predicate as independent and
/// believes a tenth of the open calls' share of the table matches; with
/// the `LIMIT` it then expected a scan of the table to stop early, and
/// each pass read the whole table (220–490 ms at 1 M rows in the history
/// bench, which halved its throughput). Without sequential scans it reads
/// the open calls' index: 3,068 calls parked in 72 ms there.
const PG_PARK_THROUGH_THE_INDEX: &str = "SET LOCAL enable_seqscan = off";

/// When the next parking pass is due, by the events' clock. One per store;
/// only its writer uses it.
#[derive(Debug, Default)]
pub(crate) struct ParkingClock(Mutex<Clock>);

#[derive(Debug, Default)]
struct Clock {
    /// The newest event time written.
    newest_ms: Option<i64>,
    /// The event time of the last pass.
    last_pass_ms: Option<i64>,
    /// The last pass parked a full [`PARK_BATCH`]: more are waiting.
    behind: bool,
}

/// A parking pass to run in a batch's transaction: calls open since before
/// `cutoff_ms` are parked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pass {
    pub cutoff_ms: i64,
    at_ms: i64,
}

// === impl ParkingClock ===

impl ParkingClock {
    /// The pass due with this batch, if any: the first batch's, then one
    /// every [`PARK_EVERY_MS`] of event time, or at once while behind.
    pub(crate) fn due(&self, events: &[Event]) -> Option<Pass> {
        let mut clock = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = events.iter().map(Event::at_ms).max() {
            clock.newest_ms = Some(clock.newest_ms.map_or(at, |n| n.max(at)));
        }
        let now = clock.newest_ms?;
        let due = clock.behind
            || clock
                .last_pass_ms
                .is_none_or(|last| now.saturating_sub(last) >= PARK_EVERY_MS);
        due.then(|| Pass {
            cutoff_ms: now.saturating_sub(PARK_AFTER_MS),
            at_ms: now,
        })
    }

    /// Records a pass that committed, having parked `parked` calls.
    pub(crate) fn passed(&self, pass: Pass, parked: u64) {
        let mut clock = self.0.lock().unwrap_or_else(|p| p.into_inner());
        clock.last_pass_ms = Some(pass.at_ms);
        clock.behind = parked >= PARK_BATCH as u64;
    }
}

/// Parks the calls `pass` names, in the caller's transaction (SQLite).
pub(crate) async fn park_sqlite(
    conn: &mut SqliteConnection,
    pass: Pass,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(PARK_SQLITE)
        .bind(pass.cutoff_ms)
        .bind(PARK_BATCH)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

/// Parks the calls `pass` names, in the caller's transaction (PostgreSQL).
/// Run last in a batch: the rows it locks are held only until the commit.
pub(crate) async fn park_postgres(conn: &mut PgConnection, pass: Pass) -> Result<u64, sqlx::Error> {
    sqlx::query(PG_PARK_THROUGH_THE_INDEX)
        .execute(&mut *conn)
        .await?;
    let done = sqlx::query(PARK_POSTGRES)
        .bind(pass.cutoff_ms)
        .bind(PARK_BATCH)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RequestRecord;

    fn at(ms: i64) -> Event {
        Event::Request(RequestRecord::for_test(
            &format!("r{ms}"),
            "s",
            "fingerprint",
            ms,
        ))
    }

    #[test]
    fn passes_follow_the_events_clock() {
        let clock = ParkingClock::default();
        assert_eq!(clock.due(&[]), None, "no event time yet");
        let first = clock.due(&[at(100_000), at(90_000)]).unwrap();
        assert_eq!(first.cutoff_ms, 100_000 - PARK_AFTER_MS);
        clock.passed(first, 3);
        assert_eq!(clock.due(&[at(100_000 + PARK_EVERY_MS - 1)]), None);
        // An older event does not move the clock back.
        assert_eq!(clock.due(&[at(5)]), None);
        let next = clock.due(&[at(100_000 + PARK_EVERY_MS)]).unwrap();
        assert_eq!(next.cutoff_ms, 100_000 + PARK_EVERY_MS - PARK_AFTER_MS);
        // A full pass: the next batch parks again, whatever its time.
        clock.passed(next, PARK_BATCH as u64);
        assert!(clock.due(&[]).is_some());
        clock.passed(next, 0);
        assert_eq!(clock.due(&[]), None);
    }
}
