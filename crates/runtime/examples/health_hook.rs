//! The application hears about tool health transitions: a flaky tool's
//! breaker opens, the tool turns unhealthy; the service recovers, the
//! breaker closes, the tool is healthy again. A [`HealthWatch`] calls a
//! callback and feeds a channel with each transition.
//!
//! ```text
//! cargo run -p toolwarden-runtime --example health_hook
//! ```

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use serde_json::{Value, json};
use toolwarden_runtime::{
    BreakerConfig, Context, ErrorKind, Executor, HealthThresholds, HealthWatch, Registry,
    RetryPolicy, ToolCall, ToolError, ToolPolicy, tool_fn,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let down = Arc::new(AtomicBool::new(true));
    let flag = down.clone();
    let registry = Registry::new();
    registry.register_with(
        tool_fn(
            "weather",
            "Current weather.",
            json!({"type": "object"}),
            move |_args, _ctx| {
                let down = flag.load(Ordering::Relaxed);
                async move {
                    if down {
                        Err(ToolError::new(ErrorKind::Internal, "weather service: 503"))
                    } else {
                        Ok::<Value, ToolError>(json!({"forecast": "sunny"}))
                    }
                }
            },
        ),
        ToolPolicy::new()
            .retry(RetryPolicy::none())
            .breaker(BreakerConfig::try_new(2, Duration::from_millis(200), 1)?),
    )?;
    let registry = Arc::new(registry);
    let executor = Executor::new(registry.clone());

    // Flag a failure rate over 50 % in the last calls, or an open breaker.
    let thresholds = HealthThresholds {
        max_failure_rate: 0.5,
        ..HealthThresholds::default()
    };
    let mut watch =
        HealthWatch::new(registry, thresholds).on_event(|event| println!("hook:    {event}"));
    let mut events = watch.channel(16);

    let call = |i: u32| ToolCall {
        id: format!("call_{i}"),
        name: "weather".into(),
        arguments: "{}".into(),
    };
    for i in 0..3 {
        executor.execute(&call(i), &Context::new()).await;
    }
    watch.check();
    println!("-- the service comes back");
    down.store(false, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(250)).await;
    for i in 3..9 {
        executor.execute(&call(i), &Context::new()).await;
    }
    watch.check();
    drop(watch);
    while let Some(event) = events.recv().await {
        println!("channel: {event}");
    }
    Ok(())
}
