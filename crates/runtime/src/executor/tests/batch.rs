//! Batches: count, order and ids kept; concurrency limit; `sequential`;
//! siblings never lost. Plus a property test over random mixes.

use std::time::Duration;

use proptest::prelude::*;
use tokio::time::Instant;
use toolwarden_core::Status;

use super::*;
use crate::{RetryPolicy, TimeoutPolicy};

fn sleeper(name: &'static str) -> impl Tool {
    tool_fn(
        name,
        "Sleeps a second.",
        json!({"type": "object"}),
        |_a, _c| async {
            tokio::time::sleep(SEC).await;
            Ok::<_, BoxError>(Value::Null)
        },
    )
}

/// Behaves as `{"mode": ...}` says: ok, fail, panic or hang.
fn mixed() -> impl Tool {
    tool_fn(
        "mixed",
        "Does what it is told.",
        json!({"type": "object"}),
        |args: Value, _c| async move {
            match args["mode"].as_str() {
                Some("ok") => Ok(json!("fine")),
                Some("fail") => Err(BoxError::from(std::io::Error::other("broken"))),
                Some("panic") => panic!("told to panic"),
                _ => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(Value::Null)
                }
            }
        },
    )
}

fn mixed_executor() -> Executor {
    let r = Registry::new();
    let policy = ToolPolicy::new()
        .timeout(TimeoutPolicy::try_new(SEC).unwrap())
        .retry(RetryPolicy::none())
        .no_breaker();
    r.register_with(mixed(), policy).unwrap();
    executor(r)
}

#[tokio::test(start_paused = true)]
async fn concurrency_limit_and_sequential_tools() {
    let r = Registry::new();
    r.register(sleeper("free")).unwrap();
    r.register_with(sleeper("serial"), ToolPolicy::new().sequential(true))
        .unwrap();
    let ex = Executor::with_config(
        Arc::new(r),
        ExecutorConfig::default().with_concurrency(2).unwrap(),
    );
    let calls: Vec<_> = (0..4)
        .map(|i| call(&format!("f{i}"), "free", "{}"))
        .collect();
    let start = Instant::now();
    ex.execute_batch(&calls, &ctx()).await;
    assert_eq!(start.elapsed(), 2 * SEC, "4 calls, 2 at a time");

    let r = Registry::new();
    r.register(sleeper("free")).unwrap();
    r.register_with(sleeper("serial"), ToolPolicy::new().sequential(true))
        .unwrap();
    let ex = executor(r);
    let calls: Vec<_> = (0..3)
        .map(|i| call(&format!("s{i}"), "serial", "{}"))
        .collect();
    let start = Instant::now();
    ex.execute_batch(&calls, &ctx()).await;
    assert_eq!(start.elapsed(), 3 * SEC, "sequential calls do not overlap");
    let calls: Vec<_> = (0..3)
        .map(|i| call(&format!("f{i}"), "free", "{}"))
        .collect();
    let start = Instant::now();
    ex.execute_batch(&calls, &ctx()).await;
    assert_eq!(start.elapsed(), SEC, "the others do");
}

#[tokio::test(start_paused = true)]
async fn one_bad_call_never_loses_its_siblings() {
    let (cap, _g) = Capture::install();
    let ex = mixed_executor();
    let calls = vec![
        call("a", "mixed", r#"{"mode":"ok"}"#),
        call("b", "mixed", r#"{"mode":"panic"}"#),
        call("c", "mixed", r#"{"mode":"hang"}"#),
        call("d", "nope", "{}"),
        call("e", "mixed", r#"{"mode":"fail"}"#),
        call("f", "mixed", r#"{"mode":"ok"}"#),
    ];
    let start = Instant::now();
    let outcomes = ex.execute_batch(&calls, &ctx()).await;
    assert_eq!(
        start.elapsed(),
        SEC,
        "the hang cost its timeout, nothing more"
    );
    let ids: Vec<&str> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c", "d", "e", "f"]);
    let statuses: Vec<Status> = outcomes.iter().map(|o| o.status).collect();
    use Status::*;
    assert_eq!(statuses, [Success, Error, Timeout, Error, Error, Success]);
    assert_eq!(
        cap.find("Processing 6 tool call(s)").level,
        tracing::Level::DEBUG
    );
    let summary = cap.find("Batch complete: 2/6 successful");
    assert_eq!(summary.fields["successful"], "2");
    assert_eq!(summary.fields["total"], "6");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_mixes_keep_count_order_and_ids(modes in proptest::collection::vec(0u8..6, 0..24)) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        let calls: Vec<_> = modes
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let id = format!("call_{i}");
                // Distinct arguments: the run's loop guard would otherwise
                // (rightly) stop the fourth identical failing call.
                let args = |mode: &str| format!(r#"{{"mode":"{mode}","n":{i}}}"#);
                match m {
                    0 => call(&id, "mixed", &args("ok")),
                    1 => call(&id, "mixed", &args("fail")),
                    2 => call(&id, "mixed", &args("panic")),
                    3 => call(&id, "mixed", &args("hang")),
                    4 => call(&id, "unknown_tool", "{}"),
                    _ => call(&id, "mixed", "{not json"),
                }
            })
            .collect();
        let outcomes = rt.block_on(async { mixed_executor().execute_batch(&calls, &ctx()).await });
        prop_assert_eq!(outcomes.len(), calls.len());
        for ((o, c), m) in outcomes.iter().zip(&calls).zip(&modes) {
            prop_assert_eq!(&o.call_id, &c.id);
            prop_assert_eq!(&o.tool, &c.name);
            prop_assert_eq!(o.status == Status::Success, *m == 0);
            prop_assert_eq!(o.status == Status::Timeout, *m == 3);
            prop_assert!(o.is_failure() == o.error.is_some());
            if let Some(e) = &o.error {
                prop_assert!(!e.model_message.is_empty());
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_wait_gives_its_concurrency_slot_back() {
    let r = Registry::new();
    r.register(sleeper("free")).unwrap();
    r.register(scripted("limited", counter(), |n| async move {
        if n == 1 {
            Err(crate::HttpError::new(429)
                .with_retry_after(Some(10 * SEC))
                .into())
        } else {
            Ok(json!("ok"))
        }
    }))
    .unwrap();
    let ex = Executor::with_config(
        Arc::new(r),
        ExecutorConfig::default().with_concurrency(1).unwrap(),
    );
    let (a, b) = (
        call("a", "limited", r#"{"path":"x"}"#),
        call("b", "free", "{}"),
    );
    let c = ctx();
    let start = Instant::now();
    let (oa, ob) = tokio::join!(ex.execute(&a, &c), ex.execute(&b, &c));
    assert_eq!((oa.status, ob.status), (Status::Success, Status::Success));
    assert_eq!(oa.attempts, 2);
    // "free" ran while "limited" waited out its Retry-After.
    assert_eq!(start.elapsed(), 10 * SEC);
}

/// A run's deadline in the context: calls still running then are stopped,
/// and the batch still has one outcome per call (a `cancelled` one for
/// those), in order; the finished ones keep theirs.
#[tokio::test(start_paused = true)]
async fn a_run_deadline_stops_calls_and_answers_each() {
    let r = Registry::new();
    r.register(mixed()).unwrap();
    let ex = executor(r);
    let calls = [
        call("c1", "mixed", r#"{"mode":"ok"}"#),
        call("c2", "mixed", r#"{"mode":"hang"}"#),
        call("c3", "mixed", r#"{"mode":"ok"}"#),
    ];
    let started = Instant::now();
    let ctx = Context::new().with(crate::Deadline(started + Duration::from_millis(50)));
    let outcomes = ex.execute_batch(&calls, &ctx).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    let ids: Vec<&str> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    assert_eq!(outcomes[0].status, Status::Success);
    assert_eq!(outcomes[2].status, Status::Success);
    let stopped = outcomes[1].error.as_ref().expect("stopped");
    assert_eq!(stopped.kind, toolwarden_core::ErrorKind::Cancelled);
    assert_eq!(stopped.code.as_deref(), Some("run_deadline"));
}

/// Regression: a call stopped by the run's deadline was missing from the
/// tool's metrics, so a tool that always hangs looked healthy.
#[tokio::test(start_paused = true)]
async fn a_call_stopped_by_the_run_deadline_is_counted() {
    let r = Registry::new();
    r.register(mixed()).unwrap();
    let ex = executor(r);
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC));
    let o = ex
        .execute(&call("c1", "mixed", r#"{"mode":"hang"}"#), &c)
        .await;
    assert_eq!(o.error.unwrap().code.as_deref(), Some("run_deadline"));
    let s = ex.registry().stats_of("mixed").unwrap();
    assert_eq!((s.calls, s.failures), (1, 1));
    assert_eq!(s.errors_by_kind, vec![("Cancelled", 1)]);
    assert_eq!(s.recent_errors[0].call_id, "c1");
    let health = ex.registry().health(&crate::HealthThresholds::default());
    assert!(!health.is_healthy(), "{:?}", health.tools);
}

/// Regression: a call whose tool failed (counted then) and whose fallback
/// tool was still running at the run's deadline was counted again in the
/// tool's metrics, as a second call, while the fallback that hung got
/// nothing. The cut is the fallback's: the tool counts one failed call,
/// the fallback one call stopped at the deadline.
#[tokio::test(start_paused = true)]
async fn a_call_cut_in_its_fallback_counts_once_in_each_tool() {
    let r = Registry::new();
    r.register(sleeper("slow_cache")).unwrap();
    let down = tool_fn("down", "Down.", json!({"type": "object"}), |_a, _c| async {
        Err::<Value, BoxError>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into())
    });
    let policy = ToolPolicy::new()
        .retry(RetryPolicy::none())
        .fallback(crate::Fallback::tool("slow_cache"));
    r.register_with(down, policy).unwrap();
    let ex = executor(r);
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC / 2));
    let o = ex.execute(&call("c1", "down", "{}"), &c).await;
    assert_eq!(o.error.unwrap().code.as_deref(), Some("run_deadline"));
    assert_eq!(o.fallback_used.as_deref(), Some("slow_cache"));
    let down = ex.registry().stats_of("down").unwrap();
    assert_eq!((down.calls, down.failures), (1, 1));
    assert_eq!(down.errors_by_kind, vec![("Network", 1)]);
    let cache = ex.registry().stats_of("slow_cache").unwrap();
    assert_eq!((cache.calls, cache.failures), (1, 1));
    assert_eq!(cache.errors_by_kind, vec![("Cancelled", 1)]);
}

/// Calls still waiting for their turn at a `sequential` tool when the
/// run's deadline passes never reached it: they are answered, but the
/// tool's metrics count only the one that ran (a tool queued behind itself
/// is not unhealthy).
#[tokio::test(start_paused = true)]
async fn calls_still_queued_at_the_deadline_are_not_the_tools_failures() {
    let r = Registry::new();
    r.register_with(sleeper("serial"), ToolPolicy::new().sequential(true))
        .unwrap();
    let ex = executor(r);
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC / 2));
    let calls: Vec<ToolCall> = (0..5)
        .map(|i| call(&format!("s{i}"), "serial", "{}"))
        .collect();
    let outcomes = ex.execute_batch(&calls, &c).await;
    assert_eq!(outcomes.len(), 5);
    assert!(
        outcomes
            .iter()
            .all(|o| o.error.as_ref().and_then(|e| e.code.as_deref()) == Some("run_deadline"))
    );
    let s = ex.registry().stats_of("serial").unwrap();
    assert_eq!((s.calls, s.failures), (1, 1), "only the call that ran");
}

/// A tool that counts its starts (its effect: before its first `.await`),
/// then works `secs` seconds.
fn effectful(name: &'static str, started: Arc<AtomicU32>, secs: u64) -> impl Tool {
    tool_fn(
        name,
        "Has an effect at once, then works.",
        json!({"type": "object"}),
        move |_a, _c| {
            started.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(Duration::from_secs(secs)).await;
                Ok::<_, BoxError>(json!("done"))
            }
        },
    )
}

/// Regression: a call that got its turn only once the run's deadline had
/// passed (queued behind a `sequential` call the deadline cut, or made
/// after it) still started its tool, whose effect then stood while the
/// model was told the call was stopped.
#[tokio::test(start_paused = true)]
async fn no_tool_starts_after_the_run_deadline() {
    let started = counter();
    let r = Registry::new();
    r.register_with(
        effectful("send", started.clone(), 10),
        ToolPolicy::new().sequential(true),
    )
    .unwrap();
    r.register(effectful("quick", started.clone(), 0)).unwrap();
    let ex = executor(r);
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC));
    let calls = [call("s0", "send", "{}"), call("s1", "send", "{}")];
    let outcomes = ex.execute_batch(&calls, &c).await;
    assert_eq!(
        count(&started),
        1,
        "only the call that had its turn in time"
    );
    for o in &outcomes {
        let code = o.error.as_ref().and_then(|e| e.code.as_deref());
        assert_eq!(code, Some("run_deadline"), "{o:?}");
    }

    // A call made once the deadline has passed does not start either.
    let o = ex.execute(&call("q", "quick", "{}"), &c).await;
    assert_eq!(count(&started), 1);
    assert_eq!(o.error.unwrap().code.as_deref(), Some("run_deadline"));
    let s = ex.registry().stats_of("quick").unwrap();
    assert_eq!(s.calls, 0, "it never reached the tool");
}

/// Sleeps `{"secs": n}` seconds.
fn napper() -> impl Tool {
    tool_fn(
        "nap",
        "Sleeps as long as it is told.",
        json!({"type": "object", "properties": {"secs": {"type": "integer"}}}),
        |args: Value, _c| async move {
            let secs = args["secs"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_secs(secs)).await;
            Ok::<_, BoxError>(json!(secs))
        },
    )
}

fn naps(secs: &[u64]) -> Vec<ToolCall> {
    secs.iter()
        .enumerate()
        .map(|(i, s)| call(&format!("n{i}"), "nap", &format!(r#"{{"secs":{s}}}"#)))
        .collect()
}

/// Regression: with `buffered`, a slow call at the head of the batch kept
/// later calls from starting once `limit` calls had finished behind it,
/// though slots were free.
#[tokio::test(start_paused = true)]
async fn a_slow_first_call_does_not_hold_back_the_rest() {
    let r = Registry::new();
    r.register(napper()).unwrap();
    let ex = Executor::with_config(
        Arc::new(r),
        ExecutorConfig::default().with_concurrency(2).unwrap(),
    );
    let calls = naps(&[10, 1, 1, 1]);
    let start = Instant::now();
    let outcomes = ex.execute_batch(&calls, &ctx()).await;
    assert_eq!(
        start.elapsed(),
        10 * SEC,
        "the 1 s calls ran beside the 10 s one"
    );
    let ids: Vec<&str> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["n0", "n1", "n2", "n3"]);
    let outputs: Vec<Value> = outcomes.iter().map(|o| o.output.clone().unwrap()).collect();
    assert_eq!(outputs, [json!(10), json!(1), json!(1), json!(1)]);

    // With a run deadline at 5 s, only the slow call is cut.
    let c = Context::new().with(crate::Deadline(Instant::now() + 5 * SEC));
    let outcomes = ex.execute_batch(&calls, &c).await;
    let statuses: Vec<Status> = outcomes.iter().map(|o| o.status).collect();
    use Status::*;
    assert_eq!(statuses, [Error, Success, Success, Success]);
    let cut = outcomes[0].error.as_ref().unwrap();
    assert_eq!(cut.code.as_deref(), Some("run_deadline"));
}

/// Fails its first attempt with a broken connection (retried), then hangs.
fn flaky_then_hangs(counter: Arc<AtomicU32>) -> impl Tool {
    scripted("flaky", counter, |n| async move {
        if n == 1 {
            return Err(BoxError::from(std::io::Error::from(
                std::io::ErrorKind::ConnectionReset,
            )));
        }
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(Value::Null)
    })
}

/// Regression: a call the run's deadline cut said `attempts: 0` (and its
/// tool's metrics no retry), though its tool had run: the attempts it
/// made are counted, the tool's in `attempts` and the fallback's in
/// `fallback_attempts`; a call cut before its turn made none.
#[tokio::test(start_paused = true)]
async fn a_call_cut_by_the_run_deadline_counts_its_attempts() {
    let n = counter();
    let r = Registry::new();
    r.register(flaky_then_hangs(n.clone())).unwrap();
    let ex = executor(r);
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC));
    let o = ex
        .execute(&call("c1", "flaky", r#"{"path":"a"}"#), &c)
        .await;
    assert_eq!(
        o.error.as_ref().unwrap().code.as_deref(),
        Some("run_deadline")
    );
    assert_eq!(count(&n), 2);
    assert_eq!(o.attempts, 2, "{o:?}");
    let s = ex.registry().stats_of("flaky").unwrap();
    assert_eq!(s.retries, 1);

    // Cut in the fallback: the tool's one attempt, the fallback's one.
    let r = Registry::new();
    r.register(sleeper("slow_cache")).unwrap();
    let down = tool_fn("down", "Down.", json!({"type": "object"}), |_a, _c| async {
        Err::<Value, BoxError>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into())
    });
    let policy = ToolPolicy::new()
        .retry(RetryPolicy::none())
        .fallback(crate::Fallback::tool("slow_cache"));
    r.register_with(down, policy).unwrap();
    let ex = executor(r);
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC / 2));
    let o = ex.execute(&call("c2", "down", "{}"), &c).await;
    assert_eq!(
        o.error.as_ref().unwrap().code.as_deref(),
        Some("run_deadline")
    );
    assert_eq!((o.attempts, o.fallback_attempts), (1, 1), "{o:?}");

    // Queued behind a `sequential` call: no attempt.
    let r = Registry::new();
    r.register_with(sleeper("serial"), ToolPolicy::new().sequential(true))
        .unwrap();
    let ex = executor(r);
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC / 2));
    let calls = [call("s0", "serial", "{}"), call("s1", "serial", "{}")];
    let outcomes = ex.execute_batch(&calls, &c).await;
    let attempts: Vec<u32> = outcomes.iter().map(|o| o.attempts).collect();
    assert_eq!(attempts, [1, 0]);
}
