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
    let flag = down.clone();
    let mut registry = Registry::new();
    registry
        .register_with(
            tool_fn(
                "weather",
                "Weather.",
                json!({"type": "object"}),
                move |_a, _c| {
                    let down = flag.load(Ordering::Relaxed);
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
    let registry = Arc::new(registry);
    let executor = Executor::new(registry.clone());
    let heard = Arc::new(Mutex::new(Vec::new()));
    let keep = heard.clone();
    let thresholds = HealthThresholds {
        max_failure_rate: 0.5,
        flag_breaker_trips: false,
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
    let first = watch.check();
    assert_eq!(
        first,
        [
            HealthEvent::BreakerOpened { tool: tool() },
            HealthEvent::Unhealthy {
                tool: tool(),
                reasons: first
                    .get(1)
                    .and_then(|e| match e {
                        HealthEvent::Unhealthy { reasons, .. } => Some(reasons.clone()),
                        _ => None,
                    })
                    .unwrap_or_default(),
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
