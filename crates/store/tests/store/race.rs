//! Two Recorders (two gateways) on one database at once, each seeing the
//! other's calls' results, with the same results recorded by both.

use std::sync::Arc;

use toolwarden_store::*;

use crate::support::*;

const SESSIONS: i64 = 60;
const TURNS: i64 = 4;
const CALLS: i64 = 3;

/// Gateway (s + t) % 2 serves turn t of session s; a turn carries the
/// results of the previous turn's calls (and resends the one before), and
/// the other gateway records those same results too.
fn workload() -> ([Vec<Event>; 2], u64, u64) {
    let mut per_gw: [Vec<Event>; 2] = [Vec::new(), Vec::new()];
    let (mut results, mut failures) = (0, 0);
    for s in 0..SESSIONS {
        let session = format!("race{s}");
        for t in 0..TURNS {
            let gw = ((s + t) % 2) as usize;
            let at = 10_000 * t + s;
            let req = format!("q{s}_{t}");
            per_gw[gw].push(request(&req, &session, at));
            for back in 1..=2 {
                let pt = t - back;
                if pt < 0 {
                    continue;
                }
                for k in 0..CALLS {
                    let failed = (s + pt + k) % 4 == 0;
                    let index = (pt * CALLS + k) as u32;
                    let r = Event::ToolResult(result(
                        &req,
                        &session,
                        &format!("c{pt}_{k}"),
                        index,
                        None,
                        failed,
                        at,
                    ));
                    if back == 1 {
                        results += 1;
                        failures += u64::from(failed);
                        per_gw[1 - gw].push(r.clone());
                    }
                    per_gw[gw].push(r);
                }
            }
            for k in 0..CALLS {
                let tool = ["alpha", "beta", "gamma"][k as usize];
                per_gw[gw].push(Event::ToolCall(call(
                    &req,
                    &session,
                    k as u32,
                    &format!("c{t}_{k}"),
                    tool,
                    at + 100,
                )));
            }
        }
    }
    (per_gw, results, failures)
}

pub async fn two_recorders(db: TestDb) {
    let ([a, b], results, failures) = workload();
    let mut tasks = Vec::new();
    let mut observers = Vec::new();
    for events in [a, b] {
        let store = Store::open(&db.url).await.unwrap();
        let seen = Arc::new(Seen::default());
        observers.push(seen.clone());
        tasks.push(tokio::spawn(async move {
            let rec = Recorder::start(Some(store), opts(), seen);
            for (i, e) in events.into_iter().enumerate() {
                rec.record(e);
                if i % 16 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            rec.shutdown().await;
            rec.counters()
        }));
    }
    for t in tasks {
        let c = t.await.unwrap();
        assert_eq!((c.events_dropped, c.backlog), (0, 0), "{c:?}");
    }
    let store = Store::open(&db.url).await.unwrap();
    let stats = store
        .stats(&StatsQuery {
            limit: 1000,
            ..all()
        })
        .await
        .unwrap();
    // Every call but the last turn's has exactly its result, paired.
    for s in 0..SESSIONS {
        let rows = store.session_calls(&format!("race{s}")).await.unwrap();
        assert_eq!(rows.len() as i64, TURNS * CALLS, "session {s}: {rows:#?}");
        let with_result = rows.iter().filter(|r| r.failed.is_some()).count() as i64;
        assert_eq!(with_result, (TURNS - 1) * CALLS, "{rows:#?}");
        assert!(rows.iter().all(|r| r.request_id.is_some()));
    }
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    let failed: u64 = stats.tools.iter().map(|t| t.failures).sum();
    assert_eq!(
        calls,
        (SESSIONS * TURNS * CALLS) as u64,
        "{:?}",
        stats.tools
    );
    assert_eq!(failed, failures);
    assert!(
        stats.tools.iter().all(|t| t.tool != "unknown"),
        "{:?}",
        stats.tools
    );
    assert_eq!(stats.requests.total, (SESSIONS * TURNS) as u64);
    let observed: usize = observers
        .iter()
        .map(|o| o.results.lock().unwrap().len())
        .sum();
    assert_eq!(
        observed as u64, results,
        "each result observed exactly once across gateways"
    );
    let observed_calls: usize = observers
        .iter()
        .map(|o| o.calls.lock().unwrap().len())
        .sum();
    assert_eq!(observed_calls as i64, SESSIONS * TURNS * CALLS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_recorders_sqlite() {
    two_recorders(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_recorders_postgres() {
    if let Some(db) = TestDb::postgres("two_recorders_postgres").await {
        two_recorders(db).await;
    }
}

/// PostgreSQL: a batch holds a bounded number of advisory locks (its
/// schema's batch lock and one per call id, or the schema's alone for a
/// large batch), so several gateways writing full batches at once cannot
/// fill the server's lock table. Each batch is caught while it waits on a
/// session row another connection holds, after taking its locks.
pub async fn a_batch_holds_a_bounded_number_of_advisory_locks(db: TestDb) {
    use sqlx::Connection;

    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &[request("r0", "s", 1_000)]).await;
    let mut observer = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let mut written = 0;
    for (n, expected) in [(100usize, 101i64), (2_000, 1)] {
        let mut holder = sqlx::PgConnection::connect(&db.url).await.unwrap();
        sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
        sqlx::query("SELECT 1 FROM sessions WHERE session_id = 's' FOR UPDATE")
            .execute(&mut holder)
            .await
            .unwrap();
        let holder_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut holder)
            .await
            .unwrap();
        let events: Vec<Event> = (0..n)
            .map(|i| {
                let id = format!("call-{n}-{i:06}");
                Event::ToolResult(result("r1", "s", &id, i as u32, Some("t"), false, 2_000))
            })
            .collect();
        let batch = tokio::spawn({
            let store = store.clone();
            async move { record_one_batch(&store, &events).await }
        });
        let mut waiting = None;
        for _ in 0..100 {
            waiting = sqlx::query_scalar::<_, i32>(
                "SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) LIMIT 1",
            )
            .bind(holder_pid)
            .fetch_optional(&mut observer)
            .await
            .unwrap();
            if waiting.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let pid = waiting.expect("the batch waits on the session row");
        let locks: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks WHERE pid = $1 AND locktype = 'advisory' AND granted",
        )
        .bind(pid)
        .fetch_one(&mut observer)
        .await
        .unwrap();
        assert_eq!(locks, expected, "a batch of {n} results");
        sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
        let (counters, _) = batch.await.unwrap();
        assert_eq!(counters.events_dropped, 0, "{counters:?}");
        written += n as i64;
    }
    let rows = query_i64(
        &db.url,
        "SELECT count(*) FROM tool_calls WHERE call_id LIKE 'call-%'",
    )
    .await;
    assert_eq!(rows, written);
}

/// PostgreSQL: a batch that waits for a lock another connection holds
/// without end (a gateway stalled in the middle of its transaction) gives
/// up after the writer's `lock_timeout` and is retried, rather than
/// waiting for good; once the lock is free it is written, whole.
pub async fn a_batch_does_not_wait_for_a_stalled_peer_for_good(db: TestDb) {
    use sqlx::Connection;

    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &[request("r0", "s", 1_000)]).await;
    let mut stalled = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut stalled).await.unwrap();
    sqlx::query("SELECT 1 FROM sessions WHERE session_id = 's' FOR UPDATE")
        .execute(&mut stalled)
        .await
        .unwrap();
    let rec = Recorder::start(
        Some(store.clone()),
        RecorderOptions {
            flush_interval: std::time::Duration::from_millis(10),
            ..RecorderOptions::default()
        },
        Arc::new(Seen::default()),
    );
    assert!(rec.record(Event::ToolResult(result(
        "r1",
        "s",
        "call-late",
        0,
        Some("t"),
        true,
        2_000
    ))));
    let started = std::time::Instant::now();
    while rec.counters().write_errors == 0 && started.elapsed().as_secs() < 20 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let waited = started.elapsed();
    assert!(
        rec.counters().write_errors >= 1,
        "still waiting after {waited:?}"
    );
    assert!(
        waited.as_secs() >= 9,
        "gave up after {waited:?}, before the lock timeout"
    );
    sqlx::query("ROLLBACK").execute(&mut stalled).await.unwrap();
    rec.shutdown().await;
    let counters = rec.counters();
    assert_eq!(counters.events_dropped, 0, "{counters:?}");
    let rows = query_i64(
        &db.url,
        "SELECT count(*) FROM tool_calls WHERE call_id = 'call-late'",
    )
    .await;
    assert_eq!(rows, 1);
}

/// PostgreSQL: a batch too large to finish within the writer's
/// `statement_timeout` (SQLSTATE 57014; here a trigger stands in for a
/// statement that runs past 120 s, refusing any insert of more than two
/// calls at once with that state). Retried whole, it timed out again at
/// every turn: recording stalled for good and everything after it was
/// dropped. The writer now retries it in smaller batches, halved at each
/// timeout, so every event is written and none is dropped.
pub async fn a_batch_past_the_statement_timeout_is_written_in_smaller_ones(db: TestDb) {
    use sqlx::Connection;

    let store = Store::open(&db.url).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    for sql in [
        "CREATE FUNCTION too_slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         IF (SELECT count(*) FROM new_rows) > 2 THEN RAISE EXCEPTION \
         'canceling statement due to statement timeout' USING ERRCODE = '57014'; \
         END IF; RETURN NULL; END $$",
        "CREATE TRIGGER too_slow AFTER INSERT ON tool_calls REFERENCING NEW TABLE AS new_rows \
         FOR EACH STATEMENT EXECUTE FUNCTION too_slow()",
    ] {
        sqlx::query(sql).execute(&mut conn).await.expect(sql);
    }
    let events: Vec<Event> =
        std::iter::once(request("r1", "s", 1_000))
            .chain((0..8).map(|i| {
                Event::ToolCall(call("r1", "s", i, &format!("slow-call-{i}"), "Bash", 1_000))
            }))
            .collect();
    let seen = Arc::new(Seen::default());
    let rec = Recorder::start(
        Some(store.clone()),
        RecorderOptions {
            flush_interval: std::time::Duration::from_millis(50),
            ..RecorderOptions::default()
        },
        seen.clone(),
    );
    for e in &events {
        assert!(rec.record(e.clone()));
    }
    let started = std::time::Instant::now();
    while rec.counters().events_written < events.len() as u64 && started.elapsed().as_secs() < 20 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let counters = rec.counters();
    assert_eq!(
        counters.events_written,
        events.len() as u64,
        "recording stalled on the batch: {counters:?}"
    );
    assert!(counters.write_errors >= 1, "{counters:?}");
    rec.shutdown().await;
    assert_eq!(rec.counters().events_dropped, 0);
    assert_eq!(
        query_i64(&db.url, "SELECT count(*) FROM tool_calls").await,
        8
    );
    assert_eq!(seen.calls.lock().unwrap().len(), 8);
}
