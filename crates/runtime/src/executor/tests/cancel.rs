//! Calls the application cancels by dropping `execute`, `execute_batch`
//! or `step` before they end: counted once as `cancelled` in the tool
//! they reached, never as the tool's failure (no breaker, no loop guard),
//! with their slot and `sequential` lock given back.

use std::time::Duration;

use tokio::time::{Instant, timeout};

use super::*;
use crate::{BreakerConfig, Dialect, HealthThresholds, RetryPolicy, TimeoutPolicy};

/// Hangs for an hour on every call, or as many calls as `hang_first` says
/// and then answers at once.
fn hangs(name: &'static str, started: Arc<AtomicU32>, hang_first: u32) -> impl Tool {
    tool_fn(name, "Hangs.", json!({"type": "object"}), move |_a, _c| {
        let n = started.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if n <= hang_first {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Ok::<_, BoxError>(json!("done"))
        }
    })
}

/// Regression: a call the application gave up on (its own timeout around
/// `execute`) was counted nowhere, so a tool that always hangs showed no
/// calls and looked healthy. Each is counted once, as cancelled, with the
/// time it had run; the breaker and the loop guard see no failure.
#[tokio::test(start_paused = true)]
async fn a_call_the_application_drops_is_counted_as_cancelled() {
    let started = counter();
    let policy = ToolPolicy::new()
        .retry(RetryPolicy::none())
        .breaker(BreakerConfig::try_new(2, SEC * 60, 1).unwrap());
    let ex = single(hangs("stuck", started.clone(), u32::MAX), policy);
    let c = call("c1", "stuck", "{}");
    for _ in 0..5 {
        let dropped = timeout(SEC * 10, ex.execute(&c, &ctx())).await;
        assert!(dropped.is_err(), "the tool hangs");
    }
    // Every call ran: no breaker opened, no loop guard refused the sixth.
    assert_eq!(count(&started), 5);
    let s = ex.registry().stats_of("stuck").unwrap();
    assert_eq!((s.calls, s.cancelled, s.failures), (5, 5, 0));
    assert!(s.errors_by_kind.is_empty(), "{:?}", s.errors_by_kind);
    assert!(s.recent_errors.is_empty());
    assert_eq!(s.breaker, Some(crate::BreakerState::Closed));
    assert_eq!(s.latency_p50.as_secs(), 10, "{:?}", s.latency_p50);
    assert_eq!((s.recent.calls, s.recent.cancelled), (5, 5));
    assert_eq!(s.recent.failure_rate, 0.0);
    let health = ex.registry().health(&HealthThresholds::default());
    let stuck = health.tools.iter().find(|t| t.name == "stuck").unwrap();
    assert_eq!(
        stuck.reasons,
        [
            "mean latency 10.00 s over 5.00 s (the last 5 calls)",
            "5 of the last 5 calls cancelled before they ended (100.0 % over 5.0 %)",
        ]
    );
    // A call that ends is not counted again when its future is dropped.
    let ok = ex
        .execute(&call("c2", "ok", r#"{"path":"a"}"#), &ctx())
        .await;
    assert!(ok.error.is_none());
    let s = ex.registry().stats_of("ok").unwrap();
    assert_eq!((s.calls, s.successes, s.cancelled), (1, 1, 0));
}

/// A dropped call gives back its `sequential` lock and its concurrency
/// slot: the next call of the tool runs at once.
#[tokio::test(start_paused = true)]
async fn a_dropped_call_frees_its_lock_and_slot() {
    let started = counter();
    let r = Registry::new();
    r.register_with(
        hangs("serial", started.clone(), 1),
        ToolPolicy::new().sequential(true),
    )
    .unwrap();
    let ex = Executor::with_config(
        Arc::new(r),
        ExecutorConfig::default().with_concurrency(1).unwrap(),
    );
    let c = call("c1", "serial", "{}");
    assert!(timeout(SEC, ex.execute(&c, &ctx())).await.is_err());
    let begun = Instant::now();
    let o = ex.execute(&call("c2", "serial", "{}"), &ctx()).await;
    assert_eq!(o.output, Some(json!("done")));
    assert_eq!(begun.elapsed(), Duration::ZERO);
    let s = ex.registry().stats_of("serial").unwrap();
    assert_eq!((s.calls, s.successes, s.cancelled), (2, 1, 1));
}

/// Dropping a batch (or `step`) counts each call it had started once;
/// a call still queued behind a `sequential` one never reached its tool
/// and says nothing of it.
#[tokio::test(start_paused = true)]
async fn a_dropped_batch_counts_the_calls_that_reached_their_tool() {
    let started = counter();
    let r = Registry::new();
    r.register(hangs("free", started.clone(), u32::MAX))
        .unwrap();
    r.register_with(
        hangs("serial", started.clone(), u32::MAX),
        ToolPolicy::new().sequential(true),
    )
    .unwrap();
    let ex = executor(r);
    let calls = [
        call("f1", "free", "{}"),
        call("f2", "free", "{}"),
        call("s1", "serial", "{}"),
        call("s2", "serial", "{}"),
    ];
    let c = ctx();
    tokio::select! {
        _ = ex.execute_batch(&calls, &c) => panic!("the tools hang"),
        _ = tokio::time::sleep(SEC) => {}
    }
    assert_eq!(count(&started), 3);
    let free = ex.registry().stats_of("free").unwrap();
    assert_eq!((free.calls, free.cancelled), (2, 2));
    let serial = ex.registry().stats_of("serial").unwrap();
    assert_eq!((serial.calls, serial.cancelled), (1, 1));

    let body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "free", "input": {}}],
        "stop_reason": "tool_use"
    })
    .to_string();
    let step = ex.step(Dialect::Anthropic, body.as_bytes(), &c);
    assert!(timeout(SEC, step).await.is_err());
    let free = ex.registry().stats_of("free").unwrap();
    assert_eq!((free.calls, free.cancelled), (3, 3));
}

/// A call dropped after its tool failed and it went on to its fallback
/// tool is the fallback's cancel: the tool counts its failure, the
/// fallback the cancelled call.
#[tokio::test(start_paused = true)]
async fn a_call_dropped_in_its_fallback_is_the_fallbacks() {
    let r = Registry::new();
    r.register(hangs("slow_cache", counter(), u32::MAX))
        .unwrap();
    let down = tool_fn("down", "Down.", json!({"type": "object"}), |_a, _c| async {
        Err::<Value, BoxError>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into())
    });
    let policy = ToolPolicy::new()
        .retry(RetryPolicy::none())
        .timeout(TimeoutPolicy::try_new(SEC * 30).unwrap())
        .fallback(crate::Fallback::tool("slow_cache"));
    r.register_with(down, policy).unwrap();
    let ex = executor(r);
    assert!(
        timeout(SEC, ex.execute(&call("c1", "down", "{}"), &ctx()))
            .await
            .is_err()
    );
    let down = ex.registry().stats_of("down").unwrap();
    assert_eq!((down.calls, down.failures, down.cancelled), (1, 1, 0));
    let cache = ex.registry().stats_of("slow_cache").unwrap();
    assert_eq!((cache.calls, cache.failures, cache.cancelled), (1, 0, 1));
}

/// Regression: the `execute_tool` span of a call dropped before its
/// outcome (the application's timeout around `execute`, the run's
/// deadline) ended with no `outcome`, `error.type` or status: a trace
/// showed neither a failure nor a success. It ends as `cancelled`, with
/// the fields the other outcomes set; a call that ends has its own.
#[tokio::test(start_paused = true)]
async fn a_dropped_calls_span_ends_as_cancelled() {
    let (cap, _g) = Capture::install();
    let started = counter();
    let ex = single(
        hangs("stuck", started.clone(), 2),
        ToolPolicy::new().retry(RetryPolicy::none()),
    );
    let c = call("c1", "stuck", "{}");
    // The application's own timeout.
    assert!(timeout(SEC * 10, ex.execute(&c, &ctx())).await.is_err());
    // The run's deadline.
    let by_deadline = Context::new().with(crate::Deadline(Instant::now() + SEC));
    let cut = ex.execute(&call("c2", "stuck", "{}"), &by_deadline).await;
    assert!(cut.error.is_some());
    // A call that ends.
    let done = ex.execute(&call("c3", "stuck", "{}"), &ctx()).await;
    assert!(done.error.is_none());
    let spans: Vec<_> = cap
        .closed()
        .into_iter()
        .filter(|s| s.name == "execute_tool")
        .collect();
    let ends: Vec<_> = spans
        .iter()
        .map(|s| {
            let f = |k: &str| s.fields.get(k).map(String::as_str);
            (
                f("gen_ai.tool.call.id"),
                f("outcome"),
                f("error.type"),
                f("otel.status_code"),
            )
        })
        .collect();
    assert_eq!(
        ends,
        [
            (
                Some("c1"),
                Some("cancelled"),
                Some("Cancelled"),
                Some("ERROR")
            ),
            (
                Some("c2"),
                Some("cancelled"),
                Some("Cancelled"),
                Some("ERROR")
            ),
            (Some("c3"), Some("success"), None, None),
        ]
    );
}
