//! `HealthWatch` (issue 19): breaker and health transitions reach the
//! callback and the channel, once each, in order.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use serde_json::{Value, json};
use toolwarden_core::{ErrorKind, ToolCall, ToolError};
use toolwarden_runtime::{
    BreakerConfig, Context, Executor, HealthEvent, HealthThresholds, HealthWatch, Registry,
    RetryPolicy, ToolPolicy, tool_fn,
};

#[tokio::test]
async fn breaker_and_health_transitions_reach_the_hooks() {
    let down = Arc::new(AtomicBool::new(true));
    let registry = flaky_weather(down.clone());
    let executor = Executor::new(registry.clone());
    let heard = Arc::new(Mutex::new(Vec::new()));
    let keep = heard.clone();
    let thresholds = HealthThresholds {
        max_failure_rate: 0.5,
        ..HealthThresholds::default()
    };
    let mut watch = HealthWatch::new(registry, thresholds)
        .on_event(move |e| keep.lock().unwrap().push(e.clone()));
    let mut rx = watch.channel(8);
    let call = |i: u32| ToolCall {
        id: format!("call_{i}"),
        name: "weather".into(),
        arguments: "{}".into(),
    };

    assert!(watch.check().is_empty(), "nothing ran yet");
    for i in 0..2 {
        executor.execute(&call(i), &Context::new()).await;
    }
    let tool = || "weather".to_string();
    assert_eq!(
        watch.check(),
        [
            HealthEvent::BreakerOpened { tool: tool() },
            HealthEvent::Unhealthy {
                tool: tool(),
                reasons: vec![
                    "failure rate 100.0 % over 50.0 % (2 of the last 2 calls)".into(),
                    "circuit breaker open".into(),
                ],
            },
        ]
    );
    assert!(watch.check().is_empty(), "reported once");

    down.store(false, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(150)).await;
    for i in 2..8 {
        executor.execute(&call(i), &Context::new()).await;
    }
    assert_eq!(
        watch.check(),
        [
            HealthEvent::BreakerClosed { tool: tool() },
            HealthEvent::Healthy { tool: tool() },
        ]
    );
    assert_eq!(heard.lock().unwrap().len(), 4);
    let mut from_channel = Vec::new();
    while let Ok(e) = rx.try_recv() {
        from_channel.push(e);
    }
    assert_eq!(from_channel, *heard.lock().unwrap());
}

/// A registry with one tool, `weather`, failing while `down` is set; its
/// breaker opens after 2 failures, for 100 ms.
fn flaky_weather(down: Arc<AtomicBool>) -> Arc<Registry> {
    let registry = Registry::new();
    registry
        .register_with(
            tool_fn(
                "weather",
                "Weather.",
                json!({"type": "object"}),
                move |_a, _c| {
                    let down = down.load(Ordering::Relaxed);
                    async move {
                        if down {
                            Err(ToolError::new(ErrorKind::Internal, "503"))
                        } else {
                            Ok::<Value, ToolError>(json!({"ok": true}))
                        }
                    }
                },
            ),
            ToolPolicy::new()
                .retry(RetryPolicy::none())
                .breaker(BreakerConfig::try_new(2, Duration::from_millis(100), 1).unwrap()),
        )
        .unwrap();
    Arc::new(registry)
}

async fn run(executor: &Executor, calls: std::ops::Range<u32>) {
    for i in calls {
        let call = ToolCall {
            id: format!("call_{i}"),
            name: "weather".into(),
            arguments: "{}".into(),
        };
        executor.execute(&call, &Context::new()).await;
    }
}

/// Regression: breaker trips and the failure rate counted since the start,
/// so under the default thresholds a tool whose breaker had once opened was
/// never healthy again.
#[tokio::test(start_paused = true)]
async fn a_recovered_tool_is_healthy_again_under_the_default_thresholds() {
    let down = Arc::new(AtomicBool::new(true));
    let registry = flaky_weather(down.clone());
    let executor = Executor::new(registry.clone());
    let watch = HealthWatch::new(registry.clone(), HealthThresholds::default());
    let tool = || "weather".to_string();

    run(&executor, 0..2).await;
    let first = watch.check();
    assert_eq!(first[0], HealthEvent::BreakerOpened { tool: tool() });
    assert!(
        matches!(first[1], HealthEvent::Unhealthy { .. }),
        "{first:?}"
    );

    down.store(false, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(150)).await;
    run(&executor, 2..3).await;
    registry.reset_breaker("weather").unwrap();
    run(&executor, 3..1000).await;
    assert_eq!(
        watch.check(),
        [
            HealthEvent::BreakerClosed { tool: tool() },
            HealthEvent::Healthy { tool: tool() },
        ]
    );
}

/// Regression: a breaker that closed and opened again between two looks
/// (open at both) was not reported, though the module doc says it is.
#[tokio::test(start_paused = true)]
async fn a_close_and_reopen_between_two_looks_is_reported() {
    let down = Arc::new(AtomicBool::new(true));
    let registry = flaky_weather(down.clone());
    let executor = Executor::new(registry.clone());
    let watch = HealthWatch::new(registry, HealthThresholds::default());
    let tool = || "weather".to_string();

    run(&executor, 0..2).await;
    assert_eq!(
        watch.check()[0],
        HealthEvent::BreakerOpened { tool: tool() }
    );
    // The probe succeeds (closed), then two failures open it again.
    down.store(false, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(150)).await;
    run(&executor, 2..3).await;
    down.store(true, Ordering::Relaxed);
    run(&executor, 3..5).await;
    assert_eq!(
        watch.check(),
        [
            HealthEvent::BreakerClosed { tool: tool() },
            HealthEvent::BreakerOpened { tool: tool() },
        ]
    );
    // A failed probe re-opens it: still open, nothing closed in between.
    tokio::time::sleep(Duration::from_millis(150)).await;
    run(&executor, 5..6).await;
    assert!(watch.check().is_empty());
}

/// Regression: `spawn(Duration::ZERO)` panicked inside the task (tokio's
/// interval needs a period); it now looks every millisecond.
#[tokio::test(start_paused = true)]
async fn a_zero_period_is_the_shortest_one() {
    let registry = flaky_weather(Arc::new(AtomicBool::new(true)));
    run(&Executor::new(registry.clone()), 0..2).await;
    let mut watch = HealthWatch::new(registry, HealthThresholds::default());
    let mut events = watch.channel(8);
    let task = watch.spawn(Duration::ZERO);
    let first = tokio::time::timeout(Duration::from_secs(1), events.recv())
        .await
        .expect("it looked");
    assert_eq!(
        first,
        Some(HealthEvent::BreakerOpened {
            tool: "weather".into()
        })
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!task.is_finished(), "still looking");
    task.abort();
}

/// Calls refused before the tool did any work (arguments that are not
/// JSON or break the schema, a disabled tool, the loop guard's block) are
/// not the tool's failures: its health and its window of recent calls
/// leave them out, as its breaker does; its lifetime counters keep them.
#[tokio::test]
async fn refused_calls_do_not_make_a_tool_unhealthy() {
    let registry = Arc::new(Registry::new());
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}},
        "required": ["path"]});
    registry
        .register(tool_fn(
            "read",
            "Read a file.",
            schema,
            |args: Value, _c| async move {
                if args["path"] == "a.txt" {
                    Ok::<Value, ToolError>(json!("text"))
                } else {
                    Err(ToolError::new(
                        ErrorKind::ResourceNotFound { resource: None },
                        "ENOENT",
                    ))
                }
            },
        ))
        .unwrap();
    let executor = Executor::new(registry.clone());
    let read = |i: usize, args: &str| ToolCall {
        id: format!("call_{i}"),
        name: "read".into(),
        arguments: args.into(),
    };
    let run = |args: &'static str, n: usize| {
        let executor = &executor;
        async move {
            for i in 0..n {
                executor.execute(&read(i, args), &Context::new()).await;
            }
        }
    };
    run(r#"{"path":"a.txt"}"#, 1).await;
    run("{}", 4).await; // no path: the schema refuses it
    run("{\"path\":", 2).await; // not JSON
    registry.disable("read").unwrap();
    run(r#"{"path":"a.txt"}"#, 2).await; // not available
    let stats = registry.stats_of("read").unwrap();
    assert_eq!(
        (stats.calls, stats.failures),
        (9, 8),
        "lifetime counts keep them"
    );
    assert_eq!((stats.recent.calls, stats.recent.failures), (1, 0));
    let health = registry.health(&HealthThresholds::default());
    assert!(health.is_healthy(), "{:?}", health.tools);

    // The loop guard blocks the fourth identical failure: the three that
    // ran are the tool's, the blocked ones are not.
    registry
        .set_state("read", toolwarden_runtime::ToolState::Enabled)
        .unwrap();
    run(r#"{"path":"b.txt"}"#, 5).await;
    let stats = registry.stats_of("read").unwrap();
    assert_eq!((stats.recent.calls, stats.recent.failures), (4, 3));
    assert_eq!(stats.failures, 13);
}

/// Regression: the watch compared a tool registered again under a name
/// with what it saw of the removed one, whose breaker had tripped more
/// often: the new breaker opening and closing between two looks went
/// unreported.
#[tokio::test]
async fn a_tool_registered_again_is_watched_afresh() {
    let registry = flaky_weather(Arc::new(AtomicBool::new(true)));
    // One run per round: the run's loop guard would refuse the third
    // identical failing call.
    let executor = || Executor::new(registry.clone());
    let watch = HealthWatch::new(registry.clone(), HealthThresholds::default());
    let breaker_events = |events: Vec<HealthEvent>| -> Vec<HealthEvent> {
        events
            .into_iter()
            .filter(|e| {
                matches!(
                    e,
                    HealthEvent::BreakerOpened { .. } | HealthEvent::BreakerClosed { .. }
                )
            })
            .collect()
    };
    let tool = || "weather".to_string();
    let opened_and_closed = [
        HealthEvent::BreakerOpened { tool: tool() },
        HealthEvent::BreakerClosed { tool: tool() },
    ];
    // The first registration trips twice, and is closed at the look.
    for round in 0..2 {
        run(&executor(), round * 2..round * 2 + 2).await;
        registry.reset_breaker("weather").unwrap();
    }
    assert_eq!(breaker_events(watch.check()), opened_and_closed);

    // Registered again: its breaker trips once, and is closed at the look.
    registry.remove("weather").unwrap();
    register_weather(&registry);
    run(&executor(), 10..12).await;
    registry.reset_breaker("weather").unwrap();
    assert_eq!(breaker_events(watch.check()), opened_and_closed);
}

/// `flaky_weather`'s tool, always down, in `registry`.
fn register_weather(registry: &Registry) {
    registry
        .register_with(
            tool_fn(
                "weather",
                "Weather.",
                json!({"type": "object"}),
                |_a, _c| async {
                    Err::<Value, ToolError>(ToolError::new(ErrorKind::Internal, "503"))
                },
            ),
            ToolPolicy::new()
                .retry(RetryPolicy::none())
                .breaker(BreakerConfig::try_new(2, Duration::from_millis(100), 1).unwrap()),
        )
        .unwrap();
}
