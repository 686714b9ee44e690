//! Issue 14: events folded into the recorder's per-tool counts (not
//! written in detail) are written to `dropped_tool_counts` and added to
//! the stats, on both backends.

use std::sync::Arc;

use toolwarden_store::*;

use crate::support::{
    TestDb, all, call, calls_and_failures, opts, record_all, refuse, request, result,
};

/// Detail rows plus folded ones: per tool, per model and in the timeline
/// the sums; a session filter leaves the folded ones out, a tool filter
/// keeps them.
async fn folded_counts_add_to_the_stats(db: TestDb) {
    let store = Store::open(&db.url).await.expect("open");
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    record_all(
        &store,
        &[
            request("r1", "s1", at),
            Event::ToolCall(call("r1", "s1", 0, "call_a", "Bash", at)),
            Event::ToolResult(result("r2", "s1", "call_a", 2, None, true, at)),
        ],
    )
    .await;
    let recorder = Recorder::start(Some(store.clone()), opts(), Arc::new(NoopObserver));
    // Two calls folded; a result of a known call (a failure, no row of its
    // own); a result whose call is not known (a row of its own).
    recorder.fold(
        &Event::ToolCall(call("r3", "s2", 0, "call_b", "Bash", at)),
        true,
    );
    recorder.fold(
        &Event::ToolCall(call("r3", "s2", 1, "call_c", "Read", at)),
        true,
    );
    recorder.fold(
        &Event::ToolResult(result("r4", "s2", "call_b", 2, Some("Bash"), true, at)),
        true,
    );
    recorder.fold(
        &Event::ToolResult(result("r4", "s2", "call_x", 3, Some("Read"), false, at)),
        false,
    );
    let report = recorder.shutdown().await;
    assert_eq!(report.events_dropped, 4);
    assert!(report.unwritten.is_empty(), "{report:?}");
    let stats = store.stats(&all()).await.expect("stats");
    let tool = |name: &str| {
        stats
            .tools
            .iter()
            .find(|t| t.tool == name)
            .map(|t| (t.calls, t.failures))
    };
    assert_eq!(tool("Bash"), Some((2, 2)), "{:?}", stats.tools);
    assert_eq!(tool("Read"), Some((2, 0)), "{:?}", stats.tools);
    let bash_model = stats
        .models
        .iter()
        .find(|m| m.tool == "Bash" && m.model == "gpt-test")
        .map(|m| (m.calls, m.failures));
    assert_eq!(bash_model, Some((2, 2)), "{:?}", stats.models);
    let timeline: u64 = stats.timeline.iter().map(|r| r.calls).sum();
    assert_eq!(timeline, 4, "{:?}", stats.timeline);
    // A session filter: the folded counts have no session.
    let s1 = store
        .stats(&StatsQuery {
            session: Some("s1".into()),
            ..all()
        })
        .await
        .expect("stats");
    assert_eq!(s1.tools.len(), 1, "{:?}", s1.tools);
    assert_eq!((s1.tools[0].calls, s1.tools[0].failures), (1, 1));
    let read = store
        .stats(&StatsQuery {
            tool: Some("Read".into()),
            since_ms: Some(at - 120_000),
            ..all()
        })
        .await
        .expect("stats");
    assert_eq!(read.tools.len(), 1, "{:?}", read.tools);
    assert_eq!(read.tools[0].calls, 2);
}

/// Results the database refuses are folded as the store would have counted
/// them: one whose call was known adds a result to its call, one whose call
/// was never recorded a call of its own too.
pub async fn refused_results_count_their_calls(db: TestDb) {
    let store = Store::open(&db.url).await.expect("open");
    refuse(&db.url, "tool_calls", "excerpt", "refused").await;
    // The gateway names a result by its known call.
    let mut known = result("r2", "s", "call_a", 2, Some("Bash"), true, 20);
    known.excerpt = Some("refused".into());
    let mut unknown = result("r2", "s", "call_x", 3, Some("Read"), true, 20);
    unknown.excerpt = Some("refused".into());
    let recorder = Recorder::start(Some(store.clone()), opts(), Arc::new(NoopObserver));
    recorder.record(Event::ToolCall(call("r1", "s", 0, "call_a", "Bash", 10)));
    recorder.record_result(known, true);
    recorder.record_result(unknown, false);
    let report = recorder.shutdown().await;
    let c = recorder.counters();
    assert_eq!((c.events_written, c.events_dropped), (1, 2), "{c:?}");
    assert!(report.unwritten.is_empty(), "{report:?}");
    let stats = store.stats(&all()).await.expect("stats");
    assert_eq!(
        calls_and_failures(&stats),
        [("Bash", (1, 1)), ("Read", (1, 1))].into(),
        "{stats:?}"
    );
}

/// A row of the folded counts that the database refuses is dropped alone:
/// the other rows are written, and the writer does not retry it forever.
pub async fn a_refused_count_row_leaves_the_others_written(db: TestDb) {
    let store = Store::open(&db.url).await.expect("open");
    refuse(&db.url, "dropped_tool_counts", "tool", "refused").await;
    let recorder = Recorder::start(Some(store.clone()), opts(), Arc::new(NoopObserver));
    recorder.fold(
        &Event::ToolCall(call("r1", "s", 0, "call_a", "refused", 10)),
        true,
    );
    recorder.fold(
        &Event::ToolCall(call("r1", "s", 1, "call_b", "Bash", 10)),
        true,
    );
    recorder.fold(
        &Event::ToolCall(call("r1", "s", 2, "call_c", "Read", 10)),
        true,
    );
    let report = recorder
        .shutdown_within(std::time::Duration::from_secs(2))
        .await;
    assert!(report.unwritten.is_empty(), "{report:?}");
    assert!(recorder.counters().write_errors >= 1);
    let stats = store.stats(&all()).await.expect("stats");
    assert_eq!(
        calls_and_failures(&stats),
        [("Bash", (1, 0)), ("Read", (1, 0))].into(),
        "{stats:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    folded_counts_add_to_the_stats(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    if let Some(db) = TestDb::postgres("dropped::postgres").await {
        folded_counts_add_to_the_stats(db).await;
    }
}

/// A write of folded counts that is tried again after a failure whose
/// outcome was unknown (the connection lost around its commit) adds its
/// counts once: the flush's rows are numbered under its id. Another flush
/// of the same counts adds them again.
pub async fn a_flush_written_twice_counts_once(db: TestDb) {
    let store = Store::open(&db.url).await.expect("open");
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
        / 60_000
        * 60_000;
    let row = |tool: &str, calls| DroppedRow {
        at_ms: at,
        provider: "anthropic".into(),
        model: None,
        tool: tool.into(),
        counts: DroppedCounts {
            calls,
            results: calls,
            failures: 1,
        },
    };
    let flush = DroppedFlush::new(vec![row("Bash", 5), row("Read", 2)]);
    store.write_dropped(&flush).await.unwrap();
    store.write_dropped(&flush).await.unwrap();
    // One row of it again, as the row-by-row path writes it.
    let one = DroppedFlush {
        id: flush.id.clone(),
        rows: vec![flush.rows[1].clone()],
    };
    store.write_dropped(&one).await.unwrap();
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(
        calls_and_failures(&stats),
        [("Bash", (5, 1)), ("Read", (2, 1))].into()
    );
    store
        .write_dropped(&DroppedFlush::new(vec![row("Bash", 5)]))
        .await
        .unwrap();
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(calls_and_failures(&stats)["Bash"], (10, 2));
}
