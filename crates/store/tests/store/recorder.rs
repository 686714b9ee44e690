//! The Recorder: JSONL, the full queue, and the database going away.

use std::sync::Arc;
use std::time::Duration;

use sqlx::Connection;
use toolwarden_store::*;

use crate::support::*;

fn read_jsonl(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn jsonl_has_only_new_events_with_resolved_names() {
    let db = TestDb::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let store = Store::open(&db.url).await.unwrap();
    let rec = Recorder::start(
        Some(store),
        RecorderOptions {
            jsonl: Some(JsonlLog::unbounded(&path)),
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    let res = result("r2", "s", "c1", 2, None, true, 300);
    for e in [
        request("r1", "s", 100),
        Event::ToolCall(call("r1", "s", 0, "c1", "search", 200)),
        request("r2", "s", 300),
        Event::ToolResult(res.clone()),
        Event::ToolResult(res.clone()), // resent
        request("r1", "s", 100),        // duplicate
    ] {
        rec.record(e);
    }
    rec.shutdown().await;
    let lines = read_jsonl(&path);
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["request", "tool_call", "request", "tool_result"]);
    assert_eq!(lines[3]["tool"], "search");
    assert_eq!(lines[3]["exec_ms"], 100.0);
    assert_eq!(lines[3]["message_index"], 2);
    // Every line reads back as an Event.
    for l in &lines {
        serde_json::from_value::<Event>(l.clone()).unwrap();
    }
}

#[tokio::test]
async fn jsonl_without_a_store_writes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let rec = Recorder::start(
        None,
        RecorderOptions {
            jsonl: Some(JsonlLog::unbounded(&path)),
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    let res = Event::ToolResult(result("r2", "s", "c1", 2, None, false, 300));
    rec.record(res.clone());
    rec.record(res);
    rec.shutdown().await;
    let lines = read_jsonl(&path);
    assert_eq!(lines.len(), 2, "no dedup without a store");
    assert_eq!(lines[0]["tool"], "unknown");
    assert_eq!(rec.counters().events_written, 2);
}

/// A JSONL log that cannot be appended to (here its path became a
/// directory) loses those batches' lines, counted; once it can be written
/// again, lines follow again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonl_lines_a_failed_append_loses_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let rec = Recorder::start(
        None,
        RecorderOptions {
            jsonl: Some(JsonlLog::unbounded(&path)),
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    let settle = |rec: &Recorder, written: u64| {
        let rec = rec.clone();
        async move {
            for _ in 0..400 {
                if rec.counters().events_written >= written {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            panic!("{:?}", rec.counters());
        }
    };
    rec.record(request("r1", "s", 1));
    settle(&rec, 1).await;
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    rec.record(request("r2", "s", 2));
    rec.record(request("r3", "s", 3));
    settle(&rec, 3).await;
    let c = rec.counters();
    assert_eq!(c.jsonl_lines_lost, 2, "{c:?}");
    assert!(c.write_errors >= 1, "{c:?}");
    std::fs::remove_dir(&path).unwrap();
    rec.record(request("r4", "s", 4));
    rec.shutdown().await;
    let lines = read_jsonl(&path);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["request_id"], "r4");
    assert_eq!(rec.counters().jsonl_lines_lost, 2);
}

/// A rotation that fails (`PATH.1` cannot be replaced) leaves the batch
/// appended to the live file: its lines are in the log, so they are not
/// counted as lost (they were, as if the append had failed); the failure
/// is counted in `write_errors`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_appended_after_a_failed_rotation_are_not_counted_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let log = JsonlLog {
        path: path.clone(),
        rotate_bytes: 1,
        keep: 1,
    };
    // A non-empty directory where `PATH.1` should go: the rename fails.
    std::fs::create_dir(log.rotated(1)).unwrap();
    std::fs::write(log.rotated(1).join("x"), b"x").unwrap();
    let rec = Recorder::start(
        None,
        RecorderOptions {
            jsonl: Some(log),
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    for n in 1..=3 {
        rec.record(request(&format!("r{n}"), "s", n));
        for _ in 0..400 {
            if rec.counters().events_written >= n as u64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    rec.shutdown().await;
    let lines = read_jsonl(&path);
    assert_eq!(lines.len(), 3, "every batch appended: {lines:?}");
    let c = rec.counters();
    assert_eq!(c.jsonl_lines_lost, 0, "{c:?}");
    assert!(c.write_errors >= 1, "the failed rotation is counted: {c:?}");
    assert_eq!(c.jsonl_rotations, 0, "{c:?}");
}

/// While the database takes no writes (another connection holds the
/// write lock), the queue and the writer's backlog together hold at most
/// `queue_capacity` events beyond the batch being written (`batch_max`);
/// the rest are dropped and counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_and_backlog_share_one_bound() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tw.db").display());
    let options = StoreOptions {
        busy_timeout: std::time::Duration::from_millis(50),
        ..Default::default()
    };
    let store = Store::open_with(&url, options).await.unwrap();
    let mut holder = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut holder)
        .await
        .unwrap();
    let rec = Recorder::start(
        Some(store),
        RecorderOptions {
            queue_capacity: 50,
            batch_max: 10,
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    let mut most = 0;
    for round in 0..20 {
        for i in 0..10 {
            rec.record(request(&format!("r{round}-{i}"), "s", i));
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        most = most.max(rec.counters().backlog);
    }
    let c = rec.counters();
    assert!(most <= 50 + 10, "{most} events held: {c:?}");
    assert_eq!(
        c.events_dropped + c.backlog + c.events_written,
        200,
        "{c:?}"
    );
    assert!(c.events_dropped >= 140, "{c:?}");
    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    rec.shutdown().await;
}

#[tokio::test]
async fn full_queue_drops_and_counts() {
    // current_thread: the writer cannot run until this test awaits.
    let rec = Recorder::start(
        None,
        RecorderOptions {
            queue_capacity: 8,
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    for i in 0..20 {
        rec.record(request(&format!("r{i}"), "s", i));
    }
    let c = rec.counters();
    assert_eq!((c.events_dropped, c.backlog), (12, 8));
    rec.shutdown().await;
    let c = rec.counters();
    assert_eq!((c.events_written, c.events_dropped, c.backlog), (8, 12, 0));
    // After shutdown, records are dropped (and counted), never lost silently.
    rec.record(request("late", "s", 0));
    assert_eq!(rec.counters().events_dropped, 13);
    rec.shutdown().await; // twice is fine
}

/// A writer filling a batch sleeps until its flush interval ends, not in
/// slices: a batch's worth (its first event in hand, the rest queued)
/// wakes it, and is written long before the interval (here a minute).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_batch_is_written_before_its_interval_ends() {
    let rec = Recorder::start(
        None,
        RecorderOptions {
            flush_interval: Duration::from_secs(60),
            batch_max: 8,
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    rec.record(request("r0", "s", 0));
    // The writer takes it and begins to fill its batch.
    tokio::time::sleep(Duration::from_millis(50)).await;
    for i in 1..8 {
        rec.record(request(&format!("r{i}"), "s", i));
    }
    // Long before the minute is up.
    wait_until("the full batch's write", || {
        rec.counters().events_written == 8
    })
    .await;
    rec.shutdown().await;
}

/// A queue smaller than a batch wakes the filling writer when half full,
/// so that it never fills while the writer sleeps: nothing is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_smaller_than_a_batch_is_emptied_while_the_batch_fills() {
    let rec = Recorder::start(
        None,
        RecorderOptions {
            flush_interval: Duration::from_secs(60),
            queue_capacity: 4,
            batch_max: 100,
            ..opts()
        },
        Arc::new(NoopObserver),
    );
    for i in 0..40 {
        rec.record(request(&format!("r{i}"), "s", i));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let c = rec.counters();
    assert_eq!((c.events_dropped, c.backlog), (0, 40), "{c:?}");
    rec.shutdown().await;
    assert_eq!(rec.counters().events_written, 40);
}

/// SQLite "lost": another connection holds the write lock; the writer keeps
/// a backlog, retries, and writes it all once the lock is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_outage_keeps_a_backlog_and_recovers() {
    let (_db, store, mut blocker) = locked_sqlite(Duration::from_millis(20)).await;

    let seen = Arc::new(Seen::default());
    let rec = Recorder::start(Some(store.clone()), opts(), seen.clone());
    for i in 0..50 {
        rec.record(Event::ToolCall(call("r", "s", i, &format!("c{i}"), "t", 1)));
    }
    // Wait (bounded) until a write has failed at least twice.
    for _ in 0..200 {
        if rec.counters().write_errors >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let c = rec.counters();
    assert!(c.write_errors >= 2, "{c:?}");
    assert_eq!((c.events_written, c.backlog), (0, 50));
    sqlx::query("ROLLBACK").execute(&mut blocker).await.unwrap();
    blocker.close().await.unwrap();

    rec.shutdown().await;
    let c = rec.counters();
    assert_eq!(
        (c.events_written, c.events_dropped, c.backlog),
        (50, 0, 0),
        "{c:?}"
    );
    assert_eq!(seen.calls.lock().unwrap().len(), 50);
    assert_eq!(store.stats(&all()).await.unwrap().tools[0].calls, 50);
}

/// Counts folded while the writer waits for events with nothing to do (a
/// result folded with its call after the queue had drained, as the gateway
/// does) are written within a flush interval, not at the next event:
/// with no more traffic they stayed in memory, and a `kill -9` lost them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_folded_while_the_writer_is_idle_are_written_without_another_event() {
    let db = TestDb::sqlite();
    let store = Store::open(&db.url).await.unwrap();
    let rec = Recorder::start(Some(store.clone()), opts(), Arc::new(NoopObserver));
    // The writer has nothing to do: it waits for the next event.
    tokio::time::sleep(Duration::from_millis(200)).await;
    rec.fold(
        &Event::ToolResult(result("r", "s", "c0", 1, Some("Bash"), true, 1)),
        true,
    );
    let mut rows = 0;
    for _ in 0..200 {
        rows = query_i64(&db.url, "SELECT count(*) FROM dropped_tool_counts").await;
        if rows > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(rows, 1, "written without waiting for another event");
    rec.shutdown().await;
}

/// While the database takes no writes, folded counts with nothing else to
/// write are retried with the same backoff as a batch (100 ms doubling to
/// 5 s), not at every flush interval: each attempt was an error in the log
/// and in `write_errors`, hundreds a minute for as long as the outage
/// lasted. Once the database is back they are written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folded_counts_back_off_while_the_database_takes_no_writes() {
    let (_db, store, mut blocker) = locked_sqlite(Duration::from_millis(10)).await;
    let rec = Recorder::start(Some(store.clone()), opts(), Arc::new(NoopObserver));
    tokio::time::sleep(Duration::from_millis(100)).await;
    rec.fold(&Event::ToolCall(call("r", "s", 0, "c0", "Bash", 1)), true);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let c = rec.counters();
    assert!(c.write_errors >= 2, "{c:?}");
    // 100 + 200 + 400 + 800 ms: five attempts in two seconds, not a
    // hundred.
    assert!(c.write_errors <= 8, "retried without backoff: {c:?}");
    sqlx::query("ROLLBACK").execute(&mut blocker).await.unwrap();
    blocker.close().await.unwrap();
    let report = rec.shutdown().await;
    assert!(report.unwritten.is_empty(), "{report:?}");
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(
        calls_and_failures(&stats).get("Bash"),
        Some(&(1, 0)),
        "{stats:?}"
    );
}

/// PostgreSQL refuses an event (a constraint): only that event is dropped
/// (counted), the rest of its batch is written, and the writer goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_refused_event_is_isolated_not_blocking() {
    let Some(db) = TestDb::postgres("postgres_refused_event_is_isolated_not_blocking").await else {
        return;
    };
    let store = Store::open(&db.url).await.unwrap();
    refuse(&db.url, "tool_calls", "excerpt", "refused").await;
    let mut bad = result("r1", "s", "c1", 1, Some("t"), true, 10);
    bad.excerpt = Some("refused".into());
    let mut events: Vec<Event> = (0..20)
        .map(|i| Event::ToolCall(call("r0", "s", i, &format!("c{i}"), "t", 1)))
        .collect();
    events.insert(7, Event::ToolResult(bad));
    let (c, _) = record_all(&store, &events).await;
    assert_eq!(
        (c.events_written, c.events_dropped, c.backlog),
        (20, 1, 0),
        "{c:?}"
    );
    assert!(c.write_errors >= 3, "{c:?}");
    let rows = store.session_calls("s").await.unwrap();
    assert_eq!(rows.len(), 20);
}

/// PostgreSQL text cannot hold U+0000, which a client may put in any name:
/// on PostgreSQL it is written as U+FFFD, in events and in the counts of
/// folded ones alike, and nothing is refused for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_nul_in_text_is_written_as_a_replacement_character() {
    let Some(db) =
        TestDb::postgres("postgres_nul_in_text_is_written_as_a_replacement_character").await
    else {
        return;
    };
    let store = Store::open(&db.url).await.unwrap();
    let mut req = request("r\0-1", "s\0", 10);
    if let Event::Request(r) = &mut req {
        r.model = Some("gpt\0x".into());
        r.error = Some("boom\0".into());
        r.repairs = vec!["orphan\0result".into()];
    }
    let mut c = call("r\0-1", "s\0", 0, "call\0a", "Ba\0sh", 10);
    c.model = Some("gpt\0x".into());
    let mut res = result("r2", "s\0", "call\0a", 1, None, true, 20);
    res.excerpt = Some("exit \0 1".into());
    let mut lone = result("r2", "s\0", "call\0b", 2, Some("Gr\0ep"), true, 20);
    lone.model = Some("gpt\0x".into());
    let mut folded = result("r3", "s\0", "call\0c", 3, Some("Re\0ad"), true, 30);
    folded.model = Some("gpt\0y".into());

    let rec = Recorder::start(Some(store.clone()), opts(), Arc::new(NoopObserver));
    for e in [
        req,
        Event::ToolCall(c),
        Event::ToolResult(res),
        Event::ToolResult(lone),
    ] {
        rec.record(e);
    }
    rec.fold(&Event::ToolResult(folded), false);
    let report = rec.shutdown().await;
    let c = rec.counters();
    assert_eq!(
        (c.events_written, c.events_dropped, c.write_errors),
        (4, 1, 0),
        "{c:?}"
    );
    assert!(report.unwritten.is_empty(), "{report:?}");

    let stats = store.stats(&all()).await.unwrap();
    let tools = calls_and_failures(&stats);
    assert_eq!(
        tools,
        [
            ("Ba\u{FFFD}sh", (1, 1)),
            ("Gr\u{FFFD}ep", (1, 1)),
            ("Re\u{FFFD}ad", (1, 1))
        ]
        .into(),
        "{stats:?}"
    );
    assert!(
        stats.models.iter().any(|m| m.model == "gpt\u{FFFD}y"),
        "{:?}",
        stats.models
    );
    assert_eq!(stats.repairs[0].defect, "orphan\u{FFFD}result");
    let rows = store.session_calls("s\u{FFFD}").await.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows.iter()
            .any(|r| r.excerpt.as_deref() == Some("exit \u{FFFD} 1")),
        "{rows:?}"
    );
    // Read with the names as the client sent them: the same rows, no error.
    assert_eq!(store.session_calls("s\0").await.unwrap().len(), 2);
    let only = StatsQuery {
        tool: Some("Gr\0ep".into()),
        model: Some("gpt\0x".into()),
        session: Some("s\0".into()),
        ..all()
    };
    let stats = store.stats(&only).await.unwrap();
    assert_eq!(
        calls_and_failures(&stats),
        [("Gr\u{FFFD}ep", (1, 1))].into(),
        "{stats:?}"
    );
    assert!(store.session_of_response("resp\0").await.unwrap().is_none());
}

/// A read-only PostgreSQL (a standby after a failover, or
/// `default_transaction_read_only`) is the database's trouble, not the
/// events': they are kept and retried, none dropped, and written once it
/// takes writes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_read_only_keeps_the_backlog_and_recovers() {
    let Some(db) = TestDb::postgres("postgres_read_only_keeps_the_backlog_and_recovers").await
    else {
        return;
    };
    Store::open(&db.url).await.unwrap();
    // A role of the test's own, so that only its sessions become read-only.
    let role = format!("tw_ro_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&db.url).await.unwrap();
    for sql in [
        format!("DROP ROLE IF EXISTS {role}"),
        format!("CREATE ROLE {role} LOGIN SUPERUSER"),
    ] {
        sqlx::query(&sql).execute(&mut admin).await.unwrap();
    }
    // One connection: ending it costs one failed write, the others are
    // the database refusing writes.
    let store = Store::open_with(
        &with_user(&db.url, &role),
        StoreOptions {
            max_connections: 1,
            ..StoreOptions::default()
        },
    )
    .await
    .unwrap();
    // Sessions opened from now on are read-only; end the pool's (as a
    // failover does) so that it opens such sessions.
    let read_only = |on: bool| {
        if on {
            format!("ALTER ROLE {role} SET default_transaction_read_only = on")
        } else {
            format!("ALTER ROLE {role} RESET default_transaction_read_only")
        }
    };
    let end_sessions = format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '{role}'"
    );
    sqlx::query(&read_only(true))
        .execute(&mut admin)
        .await
        .unwrap();
    sqlx::query(&end_sessions)
        .execute(&mut admin)
        .await
        .unwrap();

    let rec = Recorder::start(Some(store.clone()), opts(), Arc::new(NoopObserver));
    for i in 0..50 {
        rec.record(Event::ToolCall(call("r", "s", i, &format!("c{i}"), "t", 1)));
    }
    // More failures than it takes to isolate a batch the database refuses.
    for _ in 0..500 {
        if rec.counters().write_errors >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let c = rec.counters();
    assert!(c.write_errors >= 4, "{c:?}");
    assert_eq!(
        (c.events_written, c.events_dropped, c.backlog),
        (0, 0, 50),
        "{c:?}"
    );

    sqlx::query(&read_only(false))
        .execute(&mut admin)
        .await
        .unwrap();
    sqlx::query(&end_sessions)
        .execute(&mut admin)
        .await
        .unwrap();
    let report = rec.shutdown_within(Duration::from_secs(15)).await;
    let c = rec.counters();
    assert_eq!(
        (c.events_written, c.events_dropped, c.backlog),
        (50, 0, 0),
        "{c:?} {report:?}"
    );
    assert_eq!(store.stats(&all()).await.unwrap().tools[0].calls, 50);
    store.close().await;
    sqlx::query(&format!("DROP ROLE {role}"))
        .execute(&mut admin)
        .await
        .unwrap();
}

/// `url` with its user replaced by `user` (no password: the test cluster
/// trusts local connections).
fn with_user(url: &str, user: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let at = url[start..].find('@').map_or(start, |i| start + i + 1);
    format!("{}{user}@{}", &url[..start], &url[at..])
}

/// A result whose call was never recorded makes a call row of its own in
/// the store; given up at the shutdown deadline, it is folded as one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_result_of_an_unknown_call_counts_as_a_call() {
    let (_db, store, mut blocker) = locked_sqlite(Duration::from_secs(60)).await;

    let rec = Recorder::start(Some(store), opts(), Arc::new(NoopObserver));
    rec.record_result(result("r", "s", "c1", 1, Some("t"), true, 1), false);
    rec.record_result(result("r", "s", "c2", 2, Some("t"), false, 1), true);
    let report = rec.shutdown_within(Duration::from_millis(300)).await;
    assert_eq!(report.abandoned, 2, "{report:?}");
    assert_eq!(
        report.unwritten,
        DroppedCounts {
            calls: 1,
            results: 2,
            failures: 1
        },
        "{report:?}"
    );
    sqlx::query("ROLLBACK").execute(&mut blocker).await.unwrap();
}
