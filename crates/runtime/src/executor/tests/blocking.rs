//! Blocking tools (`blocking_fn`, `typed_blocking_fn`): the timeout answers
//! on time and a batch runs them in parallel. These wait on real threads,
//! so they use real time, bounded: nothing sleeps unless the test fails.

use std::{
    sync::{Condvar, Mutex, mpsc},
    time::Instant,
};

use serde::Deserialize;
use toolwarden_core::{ErrorKind, Status};

use super::*;
use crate::{RetryPolicy, TimeoutPolicy, UNEXPECTED_MESSAGE, blocking_fn, typed_blocking_fn};

#[derive(Deserialize, schemars::JsonSchema)]
struct WaitArgs {
    ms: u64,
}

/// Regression (review L1): a tool that blocks its thread for 1.5 s under a
/// 200 ms timeout used to answer `Success` after 1.5 s.
#[tokio::test]
async fn a_blocking_tool_times_out_on_time() {
    let (release, wait) = mpsc::channel::<()>();
    let wait = Mutex::new(wait);
    let tool = typed_blocking_fn("block", "Blocks.", move |a: WaitArgs, _c: Context| {
        // Blocks like `std::thread::sleep(ms)`, but the test can end it.
        let _ = wait
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_millis(a.ms));
        Ok::<_, BoxError>("done")
    });
    let policy = ToolPolicy::new()
        .timeout(TimeoutPolicy::try_new(Duration::from_millis(200)).unwrap())
        .retry(RetryPolicy::none());
    let ex = single(tool, policy);
    let t = Instant::now();
    let o = ex
        .execute(&call("c1", "block", r#"{"ms": 1500}"#), &ctx())
        .await;
    let took = t.elapsed();
    let _ = release.send(());
    assert_eq!(o.status, Status::Timeout, "{o:?}");
    assert_eq!(o.error.as_ref().unwrap().kind, ErrorKind::Timeout);
    assert!(
        took < Duration::from_millis(1000),
        "answered after {took:?}"
    );
}

/// Regression (review L1): two blocking tools in one batch ran one after
/// the other. Each waits (up to 5 s) until both are running at once.
#[tokio::test]
async fn blocking_tools_in_a_batch_run_concurrently() {
    let running = Arc::new((Mutex::new(0u32), Condvar::new()));
    let tool = blocking_fn("meet", "Waits for the other.", json!({"type": "object"}), {
        let running = running.clone();
        move |_a: Value, _c| {
            let (count, cv) = &*running;
            let mut n = count.lock().unwrap();
            *n += 1;
            cv.notify_all();
            let (n, _) = cv
                .wait_timeout_while(n, Duration::from_secs(5), |n| *n < 2)
                .unwrap();
            Ok::<_, BoxError>(json!(*n >= 2))
        }
    });
    let ex = single(tool, ToolPolicy::new().retry(RetryPolicy::none()));
    let calls = [call("a", "meet", "{}"), call("b", "meet", "{}")];
    let outcomes = ex.execute_batch(&calls, &ctx()).await;
    for o in &outcomes {
        assert_eq!(o.output, Some(json!(true)), "ran alone: {o:?}");
    }
}

/// A blocking tool's panic is the call's panic: the generic text, code
/// `panic`, the message for the operator.
#[tokio::test]
async fn a_blocking_tools_panic_is_caught() {
    let tool = blocking_fn(
        "boom",
        "Panics.",
        json!({"type": "object"}),
        |_a: Value, _c| {
            if true {
                panic!("blocking boom");
            }
            Ok::<_, BoxError>(Value::Null)
        },
    );
    let ex = single(tool, ToolPolicy::new().retry(RetryPolicy::none()));
    let o = ex.execute(&call("c1", "boom", "{}"), &ctx()).await;
    let e = o.error.unwrap();
    assert_eq!(e.model_message, UNEXPECTED_MESSAGE);
    assert_eq!(e.code.as_deref(), Some("panic"));
    assert!(
        e.technical_message.contains("blocking boom"),
        "{}",
        e.technical_message
    );
}
