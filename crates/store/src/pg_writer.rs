//! One batch written to PostgreSQL ([`write_batch`]): one transaction
//! whose server-side bounds and client-side deadline keep a lost or
//! half-open connection from stalling the recorder.
//!
//! A connection can go half-open: the server or a NAT between them drops
//! it without a reset reaching this side (a failover to a standby behind
//! the same address, a paused VM, a firewall's expired state). Its next
//! statement then waits for an answer until the kernel gives up
//! retransmitting, about 15 minutes by Linux's defaults, and the recorder
//! with it. So every batch has a deadline of its own, apart from the
//! server's `statement_timeout`: past it the connection is closed (not
//! returned to the pool, where the next batch would take it again) and
//! the batch is retried on a fresh one.
//!
//! A connection idle in the pool can go half-open too, and then every user
//! of the pool that takes it waits as long: a continued response's session
//! looked up for a request, the alerts' queries, the dashboard's. So one
//! idle for a while answers a ping within a bound before it is handed out
//! ([`answers_ping`]), else it is closed and the pool opens another.
//!
//! And one can go half-open as it is given back: sqlx pings each
//! connection returned to the pool, with no bound, and one that went
//! half-open then held its place in the pool until the kernel gave up
//! (with `max_connections` places, the others' users waited for one). So
//! it first answers a ping of ours within the same bound
//! ([`answers_ping_on_release`]), else it is closed and its place freed.

use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgPool, Postgres};
use sqlx::{Connection, Executor};

use crate::error::StoreError;
use crate::event::Event;
use crate::parking::{self, Pass};
use crate::pg_text::pg_text;
use crate::stop::Stop;
use crate::write::{self, BatchError, Found};

/// The writer's transactions run without PostgreSQL's JIT compiler
/// (PostgreSQL 11 and later; `SET LOCAL`, so it holds behind a pooler such
/// as PgBouncer and ends with the transaction). The planner cannot see the
/// pairing lookups' `LIMIT` per probe: with many rows under one (session,
/// call id) pair its estimates pass `jit_above_cost`, and each lookup spent
/// about 2 s compiling to run for 50 ms; recording with 1 M rows of a
/// reused id was 2.4–3.6× slower than with none (BENCHMARKS.md, issue 14).
/// Statements this short never gain from JIT.
const PG_WRITE_WITHOUT_JIT: &str = "; SET LOCAL jit = off";

/// The writer's transactions are READ COMMITTED whatever the server's or
/// the role's default: the lock protocol (`write.rs`) needs each statement
/// after a lock to see what another gateway committed while this one
/// waited for it.
const PG_WRITE_BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";

/// Default of [`crate::StoreOptions::pg_write_timeout`]: 15 s. Batches
/// take milliseconds (tens of them with 10 M rows stored: BENCHMARKS.md);
/// a batch waits 10 s at most for a lock.
pub const DEFAULT_PG_WRITE_TIMEOUT: Duration = Duration::from_secs(15);

/// How much longer than the server's `statement_timeout` the client waits
/// for an answer, at most: a statement the server stops in time answers
/// with SQLSTATE 57014 before the client's deadline passes.
const CLIENT_GRACE: Duration = Duration::from_secs(5);

/// A pooled connection idle this long is pinged before it is handed out.
/// Under load the writer's connection is never idle this long, so the
/// ping costs nothing on the recording path.
const PING_WHEN_IDLE: Duration = Duration::from_secs(5);

/// How long that ping may take: the server answers a ping at once, a
/// connection that has not answered in this time is taken for lost.
const PING_TIMEOUT: Duration = Duration::from_secs(2);

/// The pool's check of a connection before it is handed out
/// (`PgPoolOptions::before_acquire`): `true` if it was used in the last
/// [`PING_WHEN_IDLE`] or answers a ping within [`PING_TIMEOUT`]; an error
/// (the pool then drops the connection without a goodbye, which a
/// half-open connection would never read) if not.
pub(crate) async fn answers_ping(
    conn: &mut sqlx::PgConnection,
    meta: sqlx::pool::PoolConnectionMetadata,
) -> Result<bool, sqlx::Error> {
    if meta.idle_for < PING_WHEN_IDLE {
        return Ok(true);
    }
    bounded_ping(conn, "an idle pooled").await
}

/// The pool's check of a connection given back
/// (`PgPoolOptions::after_release`): `true` if it answers a ping within
/// [`PING_TIMEOUT`]; an error (the pool drops it without a goodbye and
/// frees its place) if not. sqlx's own ping of a connection given back,
/// which follows, has no bound: a connection half-open by now would hold
/// a place in the pool until the kernel gave up on it (~15 minutes).
/// What is left is one round trip: a connection that goes half-open
/// between this ping's answer and sqlx's ping still waits on sqlx's.
pub(crate) async fn answers_ping_on_release(
    conn: &mut sqlx::PgConnection,
    _meta: sqlx::pool::PoolConnectionMetadata,
) -> Result<bool, sqlx::Error> {
    bounded_ping(conn, "a returned").await
}

/// A ping answered within [`PING_TIMEOUT`] (`true`), else a timeout error
/// naming the connection as `which` ("an idle pooled").
async fn bounded_ping(conn: &mut sqlx::PgConnection, which: &str) -> Result<bool, sqlx::Error> {
    match tokio::time::timeout(PING_TIMEOUT, conn.ping()).await {
        Ok(answered) => answered.map(|()| true),
        Err(_) => Err(sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "{which} PostgreSQL connection did not answer a ping within {} s: \
                 closed as lost",
                PING_TIMEOUT.as_secs()
            ),
        ))),
    }
}

/// How long the client waits for an answer: `timeout` and as much again,
/// at most [`CLIENT_GRACE`] more.
pub(crate) fn client_deadline(timeout: Duration) -> Duration {
    timeout.saturating_add(timeout.min(CLIENT_GRACE))
}

/// The writer's transactions are bounded in time (`SET LOCAL`: they end
/// with the transaction), so that one gateway stalled in the middle of one
/// (a paused VM, a network partition, a half-open connection) cannot hold
/// the locks every other gateway's batches wait for: the server ends its
/// transaction once it has been idle 30 s; a batch waits 10 s at most for
/// a lock; a statement is stopped at `timeout` (they take milliseconds).
/// Each error is retried with the batch (SQLSTATE 55P03, 57014, or the
/// connection's loss); after 57014 as half as many events
/// (`recorder::writer`), since the same batch could take as long again.
fn bounds(timeout: Duration) -> String {
    format!(
        "SET LOCAL lock_timeout = '10s'; SET LOCAL statement_timeout = '{}ms'; \
         SET LOCAL idle_in_transaction_session_timeout = '30s'",
        timeout.as_millis().max(1)
    )
}

/// Writes `events` in one transaction on a connection of `pool`, the
/// parking `pass` last; what the statements found and how many calls were
/// parked. See [`crate::Store::write_batch`] for `ask` and the errors.
///
/// The statements up to the COMMIT, then the COMMIT, each have `timeout`
/// and a few seconds more ([`client_deadline`]); past either, the connection is closed and the
/// error is a timeout ([`StoreError::is_too_slow`]): before the COMMIT
/// [`BatchError::Failed`] (nothing was committed: a server still waiting
/// rolls the transaction back when it learns the connection is gone, or at
/// its idle timeout), at the COMMIT [`BatchError::Unsure`]. `stop` cuts it
/// off before the COMMIT ([`BatchError::Stopped`], the connection closed
/// the same way), never during it ([`Stop`]).
pub(crate) async fn write_batch(
    pool: &PgPool,
    events: &[Event],
    ask: &[usize],
    pass: Option<Pass>,
    timeout: Duration,
    stop: &mut Stop<'_>,
) -> Result<(Found, u64), BatchError> {
    let Some(conn) = stop.before(pool.acquire()).await else {
        return Err(BatchError::Stopped);
    };
    let mut conn = conn.map_err(StoreError::query)?;
    match write_on(&mut conn, events, ask, pass, timeout, stop).await {
        Ok(written) => Ok(written),
        Err(Failure { error, close }) => {
            if close {
                // Out of the pool and dropped: its socket is closed now, and
                // the pool opens a fresh connection for the retry.
                drop(conn.detach());
            }
            Err(error)
        }
    }
}

/// How [`write_on`] failed, and whether the connection is to be closed
/// (a deadline passed, or the stop came, with a statement on the way).
struct Failure {
    error: BatchError,
    close: bool,
}

async fn write_on(
    conn: &mut PoolConnection<Postgres>,
    events: &[Event],
    ask: &[usize],
    pass: Option<Pass>,
    timeout: Duration,
    stop: &mut Stop<'_>,
) -> Result<(Found, u64), Failure> {
    let deadline = client_deadline(timeout);
    let events = pg_text(events);
    let statements = stop
        .before(tokio::time::timeout(
            deadline,
            statements(conn, &events, ask, pass, timeout),
        ))
        .await;
    let (tx, found, parked) = match statements {
        Some(Ok(Ok(written))) => written,
        Some(Ok(Err(error))) => {
            return Err(Failure {
                error: error.into(),
                close: false,
            });
        }
        Some(Err(_)) => {
            return Err(Failure {
                error: StoreError::no_answer(deadline).into(),
                close: true,
            });
        }
        None => {
            return Err(Failure {
                error: BatchError::Stopped,
                close: true,
            });
        }
    };
    match tokio::time::timeout(deadline, tx.commit()).await {
        Ok(Ok(())) => Ok((found, parked)),
        Ok(Err(e)) => Err(Failure {
            error: BatchError::Unsure {
                error: StoreError::query(e),
                found,
            },
            close: false,
        }),
        Err(_) => Err(Failure {
            error: BatchError::Unsure {
                error: StoreError::no_answer(deadline),
                found,
            },
            close: true,
        }),
    }
}

/// The transaction up to its COMMIT: the bounds, the batch's locks, its
/// statements, the own-key check, the parking pass.
async fn statements<'c>(
    conn: &'c mut sqlx::PgConnection,
    events: &[Event],
    ask: &[usize],
    pass: Option<Pass>,
    timeout: Duration,
) -> Result<(sqlx::Transaction<'c, Postgres>, Found, u64), StoreError> {
    let mut tx = conn
        .begin_with(PG_WRITE_BEGIN)
        .await
        .map_err(StoreError::query)?;
    let jit = match tx.server_version_num() {
        Some(v) if v >= 110_000 => PG_WRITE_WITHOUT_JIT,
        _ => "",
    };
    // One round trip: the bounds, JIT off, and the batch's lock on the
    // schema (shared, or alone for a large batch).
    let ids = write::call_ids(events);
    let alone = ids.len() > write::PG_MAX_ID_LOCKS;
    let schema_lock = if alone {
        write::PG_LOCK_SCHEMA_ALONE
    } else {
        write::PG_LOCK_SCHEMA_SHARED
    };
    tx.execute(sqlx::raw_sql(&format!(
        "{}{jit}; {schema_lock}",
        bounds(timeout)
    )))
    .await
    .map_err(StoreError::query)?;
    if !alone && !ids.is_empty() {
        tx.execute(sqlx::query(write::PG_LOCK_CALL_IDS).bind(ids))
            .await
            .map_err(StoreError::query)?;
    }
    let outcomes = write::write_batch_postgres(&mut tx, events)
        .await
        .map_err(StoreError::query)?;
    // After the batch's own inserts, which waited for an earlier attempt's
    // transaction should it still be ending.
    let own_keys = if ask.is_empty() {
        Vec::new()
    } else {
        crate::bulk::postgres::own_result_keys(&mut tx, events, ask)
            .await
            .map_err(StoreError::query)?
    };
    let parked = match pass {
        Some(pass) => parking::park_postgres(&mut tx, pass)
            .await
            .map_err(StoreError::query)?,
        None => 0,
    };
    Ok((tx, Found { outcomes, own_keys }, parked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_statement_timeout_is_the_writes() {
        let sql = bounds(Duration::from_millis(1500));
        assert!(sql.contains("statement_timeout = '1500ms'"), "{sql}");
        assert!(
            bounds(Duration::ZERO).contains("statement_timeout = '1ms'"),
            "0 would turn PostgreSQL's timeout off"
        );
    }

    #[test]
    fn the_client_waits_a_little_longer_than_the_server() {
        let s = Duration::from_secs;
        assert_eq!(client_deadline(s(1)), s(2));
        assert_eq!(client_deadline(s(15)), s(20));
        assert_eq!(client_deadline(Duration::MAX), Duration::MAX);
    }
}
