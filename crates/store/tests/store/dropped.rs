//! Issue 14: events folded into the recorder's per-tool counts (not
//! written in detail) are written to `dropped_tool_counts` and added to
//! the stats, on both backends.

use std::sync::Arc;

use toolwarden_store::*;

use crate::support::{TestDb, all, call, opts, record_all, request, result};

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
