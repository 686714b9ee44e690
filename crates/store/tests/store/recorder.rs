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

/// SQLite "lost": another connection holds the write lock; the writer keeps
/// a backlog, retries, and writes it all once the lock is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_outage_keeps_a_backlog_and_recovers() {
    let db = TestDb::sqlite();
    let store = Store::open_with(
        &db.url,
        StoreOptions {
            busy_timeout: Duration::from_millis(20),
            ..StoreOptions::default()
        },
    )
    .await
    .unwrap();
    let path = db.url.trim_start_matches("sqlite://").to_owned();
    let mut blocker = sqlx::SqliteConnection::connect(&format!("sqlite://{path}"))
        .await
        .unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut blocker)
        .await
        .unwrap();

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

/// PostgreSQL refuses a NUL byte in text: only that event is dropped
/// (counted), the rest of its batch is written, and the writer goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_refused_event_is_isolated_not_blocking() {
    let Some(db) = TestDb::postgres("postgres_refused_event_is_isolated_not_blocking").await else {
        return;
    };
    let store = Store::open(&db.url).await.unwrap();
    let mut bad = result("r1", "s", "c1", 1, Some("t"), true, 10);
    bad.excerpt = Some("nul \0 byte".into());
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

/// A database that never answers in time (another connection holds the
/// write lock and the store would wait 60 s for it, like a statement that
/// runs for minutes): shutdown still returns at its deadline, reporting the
/// events it could not write as dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_gives_up_at_its_deadline_and_reports_the_loss() {
    let db = TestDb::sqlite();
    let store = Store::open_with(
        &db.url,
        StoreOptions {
            busy_timeout: Duration::from_secs(60),
            ..StoreOptions::default()
        },
    )
    .await
    .unwrap();
    let path = db.url.trim_start_matches("sqlite://").to_owned();
    let mut blocker = sqlx::SqliteConnection::connect(&format!("sqlite://{path}"))
        .await
        .unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut blocker)
        .await
        .unwrap();

    let rec = Recorder::start(Some(store), opts(), Arc::new(NoopObserver));
    for i in 0..50 {
        rec.record(Event::ToolCall(call("r", "s", i, &format!("c{i}"), "t", 1)));
    }
    let started = std::time::Instant::now();
    let report = rec.shutdown_within(Duration::from_millis(300)).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "shutdown took {took:?}");
    assert_eq!(
        (
            report.events_written,
            report.abandoned,
            report.events_dropped
        ),
        (0, 50, 50),
        "{report:?}"
    );
    assert!(report.finished, "{report:?}");
    assert_eq!(rec.counters().backlog, 0);
    // Later records are dropped and counted too.
    assert!(!rec.record(request("late", "s", 1)));
    assert_eq!(rec.counters().events_dropped, 51);
    sqlx::query("ROLLBACK").execute(&mut blocker).await.unwrap();
}

/// Within the deadline, everything is written and nothing is reported lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_within_its_deadline_writes_everything() {
    let db = TestDb::sqlite();
    let store = Store::open(&db.url).await.unwrap();
    let rec = Recorder::start(Some(store), opts(), Arc::new(NoopObserver));
    for i in 0..500 {
        rec.record(Event::ToolCall(call("r", "s", i, &format!("c{i}"), "t", 1)));
    }
    let report = rec.shutdown_within(Duration::from_secs(5)).await;
    assert_eq!(
        (
            report.events_written,
            report.abandoned,
            report.events_dropped
        ),
        (500, 0, 0),
        "{report:?}"
    );
    assert!(report.finished);
}
