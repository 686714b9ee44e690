//! Policies through the executor, under a paused clock with seeded jitter.

use std::{
    io,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use tokio::time::Instant;
use toolwarden_core::{ErrorKind, Status};

use super::*;
use crate::{
    BreakerConfig, BreakerState, Fallback, HealthThresholds, HttpError, RetryPolicy, TimeoutPolicy,
    User,
};

/// A tool failing with a network error `failures` times, then succeeding;
/// it records when each attempt started.
fn recording(name: &'static str, failures: u32, times: Arc<Mutex<Vec<Instant>>>) -> impl Tool {
    scripted(name, counter(), move |n| {
        times.lock().unwrap().push(Instant::now());
        async move {
            if n <= failures {
                Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset").into())
            } else {
                Ok(json!("ok"))
            }
        }
    })
}

fn gaps(times: &[Instant]) -> Vec<Duration> {
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

#[tokio::test(start_paused = true)]
async fn backoff_delays_are_exact_with_a_seed() {
    let times = Arc::new(Mutex::new(Vec::new()));
    let ex = single(recording("net", 3, times.clone()), ToolPolicy::new());
    let o = ex
        .execute(&call("c1", "net", r#"{"path":"x"}"#), &ctx())
        .await;
    assert_eq!(o.status, Status::Success);
    assert_eq!(o.attempts, 4);
    // The executor was seeded with 42: the same draws give the same delays.
    let policy = RetryPolicy::default();
    let mut rng = fastrand::Rng::with_seed(42);
    let expected: Vec<Duration> = (1..=3).map(|r| policy.backoff(r, &mut rng)).collect();
    assert_eq!(gaps(&times.lock().unwrap()), expected);
    let bases = [100u64, 200, 400].map(Duration::from_millis);
    for (d, base) in expected.iter().zip(bases) {
        assert!(*d >= base.mul_f64(0.9) && *d <= base.mul_f64(1.1));
    }
    assert_ne!(expected, bases, "jitter applied");
    assert_eq!(o.elapsed, expected.iter().sum::<Duration>());

    // Without jitter: exactly 100 / 200 / 400 ms.
    let times = Arc::new(Mutex::new(Vec::new()));
    let exact = RetryPolicy::try_new(4, Duration::from_millis(100), 0.0).unwrap();
    let ex = single(
        recording("net", 10, times.clone()),
        ToolPolicy::new().retry(exact),
    );
    let o = ex
        .execute(&call("c2", "net", r#"{"path":"x"}"#), &ctx())
        .await;
    assert_eq!(o.attempts, 4);
    assert_eq!(
        gaps(&times.lock().unwrap()),
        vec![
            Duration::from_millis(100),
            Duration::from_millis(200),
            Duration::from_millis(400)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured() {
    let times = Arc::new(Mutex::new(Vec::new()));
    let t = times.clone();
    let tool = scripted("api", counter(), move |n| {
        t.lock().unwrap().push(Instant::now());
        async move {
            if n == 1 {
                Err(HttpError::new(429)
                    .with_retry_after(toolwarden_core::classify::retry_after_secs("3"))
                    .into())
            } else {
                Ok(json!("done"))
            }
        }
    });
    let ex = single(tool, ToolPolicy::new());
    let o = ex
        .execute(&call("c1", "api", r#"{"path":"x"}"#), &ctx())
        .await;
    assert_eq!(o.output, Some(json!("done")));
    assert_eq!(gaps(&times.lock().unwrap()), vec![Duration::from_secs(3)]);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_drops_the_tool_future() {
    struct Flag(Arc<AtomicBool>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let (d, f) = (dropped.clone(), finished.clone());
    let tool = scripted("hang", counter(), move |_| {
        let flag = Flag(d.clone());
        let finished = f.clone();
        async move {
            let _flag = flag;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            finished.store(true, Ordering::SeqCst);
            Ok(Value::Null)
        }
    });
    let policy = ToolPolicy::new()
        .timeout(TimeoutPolicy::try_new(Duration::from_secs(5)).unwrap())
        .retry(RetryPolicy::none());
    let ex = single(tool, policy);
    let start = Instant::now();
    let o = ex
        .execute(&call("c1", "hang", r#"{"path":"x"}"#), &ctx())
        .await;
    assert_eq!(o.status, Status::Timeout);
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the future was dropped at the deadline"
    );
    tokio::time::advance(Duration::from_secs(7200)).await;
    assert!(!finished.load(Ordering::SeqCst), "and never resumed");
}

#[tokio::test(start_paused = true)]
async fn breaker_closed_open_half_open_closed_and_reopened() {
    let healthy = Arc::new(AtomicBool::new(false));
    let h = healthy.clone();
    let runs = counter();
    let tool = scripted("svc", runs.clone(), move |_| {
        let ok = h.load(Ordering::SeqCst);
        async move {
            if ok {
                Ok(json!("up"))
            } else {
                Err(io::Error::new(io::ErrorKind::ConnectionRefused, "refused").into())
            }
        }
    });
    let policy = ToolPolicy::new()
        .retry(RetryPolicy::none())
        .breaker(BreakerConfig::try_new(3, Duration::from_secs(10), 1).unwrap());
    let ex = single(tool, policy);
    let state = || ex.registry().stats_of("svc").unwrap().breaker.unwrap();
    let c = ctx();
    let calls: Vec<_> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|id| call(id, "svc", &format!(r#"{{"path":"{id}"}}"#)))
        .collect();
    let run = |id: &str| {
        let i = calls.iter().position(|c| c.id == id).unwrap();
        ex.execute(&calls[i], &c)
    };
    for id in ["a", "b", "c"] {
        run(id).await;
    }
    assert_eq!(state(), BreakerState::Open);
    let o = run("d").await;
    assert!(matches!(
        o.error.unwrap().kind,
        ErrorKind::CircuitOpen { .. }
    ));
    assert_eq!(count(&runs), 3);
    // Half-open after 10 s: the probe fails → open again.
    tokio::time::advance(Duration::from_secs(10)).await;
    run("e").await;
    assert_eq!(count(&runs), 4);
    assert_eq!(state(), BreakerState::Open);
    let svc_reasons = || {
        let health = ex.registry().health(&HealthThresholds::default());
        let svc = health.tools.iter().find(|t| t.name == "svc").unwrap();
        svc.reasons.clone()
    };
    // The call the open breaker refused ("d") is not one health judges.
    assert_eq!(
        svc_reasons(),
        [
            "failure rate 100.0 % over 5.0 % (4 of the last 4 calls)",
            "circuit breaker open"
        ]
    );
    // The next probe succeeds → closed.
    tokio::time::advance(Duration::from_secs(10)).await;
    healthy.store(true, Ordering::SeqCst);
    assert_eq!(run("f").await.status, Status::Success);
    assert_eq!(state(), BreakerState::Closed);
    let stats = ex.registry().stats_of("svc").unwrap();
    assert_eq!((stats.breaker_trips, stats.breaker_recoveries), (2, 1));
    // Closed again: the breaker is no reason any more, the failures of
    // the last calls still are.
    assert_eq!(
        svc_reasons(),
        ["failure rate 80.0 % over 5.0 % (4 of the last 5 calls)"]
    );
}

/// A half-open probe is decided only by what says something about the
/// backend: arguments the tool refused before calling it leave the
/// breaker half-open for the next call, a missing resource (the backend
/// answered) closes it, a refused connection opens it again.
#[tokio::test(start_paused = true)]
async fn a_probe_that_never_reached_the_backend_decides_nothing() {
    // What the tool does on each attempt: 0 refused, 1 refuses its
    // arguments, 2 a missing resource.
    let mode = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let m = mode.clone();
    let runs = counter();
    let tool = scripted("svc", runs.clone(), move |_| {
        let mode = m.load(Ordering::SeqCst);
        async move {
            Err(match mode {
                0 => io::Error::new(io::ErrorKind::ConnectionRefused, "refused").into(),
                1 => toolwarden_core::ToolError::invalid_arguments("limit: expected u32").into(),
                _ => toolwarden_core::ToolError::not_found("a.txt").into(),
            })
        }
    });
    let policy = ToolPolicy::new()
        .retry(RetryPolicy::none())
        .breaker(BreakerConfig::try_new(2, Duration::from_secs(10), 1).unwrap());
    let ex = single(tool, policy);
    let state = || ex.registry().stats_of("svc").unwrap().breaker.unwrap();
    let c = ctx();
    let run = |id: &'static str| {
        let ex = &ex;
        let c = &c;
        async move {
            // Arguments of their own: the loop guard stops repeats.
            ex.execute(&call(id, "svc", &format!(r#"{{"path":"{id}"}}"#)), c)
                .await
                .error
                .unwrap()
                .kind
        }
    };
    run("a").await;
    run("b").await;
    assert_eq!(state(), BreakerState::Open);
    tokio::time::advance(Duration::from_secs(10)).await;
    mode.store(1, Ordering::SeqCst);
    assert_eq!(run("c").await, ErrorKind::InvalidArguments);
    assert_eq!(state(), BreakerState::HalfOpen, "the probe decided nothing");
    // Its slot is free: the next call probes, and is refused again.
    mode.store(0, Ordering::SeqCst);
    assert_eq!(run("d").await, ErrorKind::Network);
    assert_eq!(count(&runs), 4);
    assert_eq!(state(), BreakerState::Open);
    // A missing resource is the backend's answer: the probe closes it.
    tokio::time::advance(Duration::from_secs(10)).await;
    mode.store(2, Ordering::SeqCst);
    assert!(matches!(run("e").await, ErrorKind::ResourceNotFound { .. }));
    assert_eq!(state(), BreakerState::Closed);
    // Closed, refused arguments neither reset nor raise the count of
    // consecutive failures: refused, refused arguments, refused opens it.
    for (m, id) in [(0, "f"), (1, "g"), (0, "h")] {
        mode.store(m, Ordering::SeqCst);
        run(id).await;
    }
    assert_eq!(state(), BreakerState::Open);
}

#[tokio::test(start_paused = true)]
async fn the_loop_guard_stops_identical_failing_calls() {
    let runs = counter();
    let ex = single(
        failing("grep", runs.clone(), || {
            toolwarden_core::ToolError::not_found("src/mian.rs")
        }),
        ToolPolicy::new(),
    );
    let args = r#"{"path": "src/mian.rs", "limit": 5}"#;
    // `5.0` is `5`, as the tool takes it: still the same call (regression:
    // the first failure, when the guard held none, was counted under the
    // arguments' text as sent).
    let m1 = ex
        .execute(
            &call("c1", "grep", r#"{"path": "src/mian.rs", "limit": 5.0}"#),
            &ctx(),
        )
        .await
        .error
        .unwrap()
        .model_message;
    assert_eq!(m1, "Resource not found: src/mian.rs");
    ex.execute(&call("c2", "grep", args), &ctx()).await;
    // Same arguments, other key order and spacing: still the same call.
    let m3 = ex
        .execute(
            &call("c3", "grep", r#"{ "limit":5,"path":"src/mian.rs" }"#),
            &ctx(),
        )
        .await;
    assert!(m3.error.unwrap().model_message.ends_with(
        "This call has now failed 3 times with the same arguments; change your approach instead of repeating it."
    ));
    let o4 = ex.execute(&call("c4", "grep", args), &ctx()).await;
    assert_eq!(o4.attempts, 0);
    let e4 = o4.error.unwrap();
    assert_eq!(e4.code.as_deref(), Some("repeated_failure"));
    assert!(
        e4.model_message
            .starts_with("This exact call has already failed 3 times")
    );
    assert_eq!(count(&runs), 3, "the fourth identical call did not run");
    // Other arguments still run.
    ex.execute(&call("c5", "grep", r#"{"path": "src/main.rs"}"#), &ctx())
        .await;
    assert_eq!(count(&runs), 4);
}

/// Regression: calls whose arguments the executor refused (not JSON, or
/// not matching the schema) were counted by the loop guard but never
/// blocked: the thousandth identical call got the same refusal, "failed
/// 1000 times" appended. Like any failing call, the call after the
/// limit's number of identical failures is refused as repeated.
#[tokio::test(start_paused = true)]
async fn the_loop_guard_stops_calls_with_the_same_invalid_arguments() {
    let runs = counter();
    let ex = single(
        scripted("grep", runs.clone(), |_| async { Ok(json!("found")) }),
        ToolPolicy::new(),
    );
    for (args, same, code) in [
        // `limit` below its minimum; `5.0` is `5`, in any key order.
        (
            r#"{"path": "a", "limit": 0}"#,
            r#"{"limit": 0.0, "path": "a"}"#,
            "schema_violation",
        ),
        // Not JSON: the same text.
        (r#"{"path": "a""#, r#"{"path": "a""#, "invalid_json"),
    ] {
        for i in 1..=3 {
            let a = if i == 2 { same } else { args };
            let e = ex.execute(&call("c", "grep", a), &ctx()).await.error;
            assert_eq!(e.unwrap().code.as_deref(), Some(code), "{args} #{i}");
        }
        let o = ex.execute(&call("c4", "grep", same), &ctx()).await;
        assert_eq!(o.attempts, 0);
        let e = o.error.unwrap();
        assert_eq!(e.code.as_deref(), Some("repeated_failure"), "{args}");
        assert!(
            e.model_message
                .starts_with("This exact call has already failed 3 times"),
            "{}",
            e.model_message
        );
    }
    // Other arguments are checked (and run) as before.
    let e = ex
        .execute(&call("c5", "grep", r#"{"path": "a", "limit": -1}"#), &ctx())
        .await
        .error
        .unwrap();
    assert_eq!(e.code.as_deref(), Some("schema_violation"));
    let o = ex
        .execute(&call("c6", "grep", r#"{"path": "a", "limit": 1}"#), &ctx())
        .await;
    assert_eq!(o.output, Some(json!("found")));
    assert_eq!(count(&runs), 1);
}

/// The loop guard's warning follows a text without a final stop (the
/// default unexpected-error text has none) as a sentence of its own.
#[tokio::test(start_paused = true)]
async fn the_loop_guards_warning_is_a_sentence_of_its_own() {
    let ex = single(
        failing("flaky", counter(), || std::io::Error::other("boom")),
        ToolPolicy::new().retry(RetryPolicy::none()),
    );
    let mut last = String::new();
    for id in ["c1", "c2", "c3"] {
        let outcome = ex
            .execute(&call(id, "flaky", r#"{"path": "p"}"#), &ctx())
            .await;
        last = outcome.error.unwrap().model_message;
    }
    assert_eq!(
        last,
        "An unexpected error occurred while executing this tool. This call has now failed 3 times with the same arguments; change your approach instead of repeating it."
    );
}

#[tokio::test(start_paused = true)]
async fn fallbacks_to_a_tool_or_a_fixed_output() {
    let r = Registry::new();
    r.register(ok_tool("cache")).unwrap();
    r.register_with(
        failing("live", counter(), || {
            io::Error::new(io::ErrorKind::ConnectionRefused, "down")
        }),
        ToolPolicy::new()
            .retry(RetryPolicy::none())
            .fallback(Fallback::tool("cache")),
    )
    .unwrap();
    r.register_with(
        failing("news", counter(), || {
            io::Error::new(io::ErrorKind::TimedOut, "slow")
        }),
        ToolPolicy::new()
            .retry(RetryPolicy::none())
            .fallback(Fallback::output(json!([]))),
    )
    .unwrap();
    r.register_with(
        failing("auth", counter(), || HttpError::new(401)),
        ToolPolicy::new().fallback(Fallback::output(json!("never"))),
    )
    .unwrap();
    let ex = executor(r);
    let o = ex
        .execute(&call("c1", "live", r#"{"path":"p"}"#), &ctx())
        .await;
    assert_eq!(o.status, Status::Success);
    assert_eq!(o.output, Some(json!({"echo": "p"})));
    assert_eq!(o.fallback_used.as_deref(), Some("cache"));
    // Each tool's own attempts.
    assert_eq!((o.attempts, o.fallback_attempts), (1, 1));
    let o = ex
        .execute(&call("c2", "news", r#"{"path":"p"}"#), &ctx())
        .await;
    assert_eq!(o.output, Some(json!([])));
    assert_eq!(o.fallback_used.as_deref(), Some("fixed_output"));
    assert_eq!((o.attempts, o.fallback_attempts), (1, 0));
    // Fatal failures are not hidden behind a fallback.
    let o = ex
        .execute(&call("c3", "auth", r#"{"path":"p"}"#), &ctx())
        .await;
    assert!(o.is_fatal());
    assert_eq!(o.fallback_used, None);
    let live = ex.registry().stats_of("live").unwrap();
    assert_eq!((live.failures, live.fallbacks), (1, 1));
}

/// A call the fallback answers did not fail as far as the model knows:
/// the loop guard does not count it, and the same call keeps getting the
/// fallback's answer instead of a refusal.
#[tokio::test(start_paused = true)]
async fn calls_a_fallback_answers_are_not_refused_by_the_loop_guard() {
    let ex = single(
        failing("weather", counter(), || {
            io::Error::new(io::ErrorKind::ConnectionRefused, "down")
        }),
        ToolPolicy::new()
            .retry(RetryPolicy::none())
            .fallback(Fallback::output(json!("cached"))),
    );
    for n in 1..=5 {
        let o = ex
            .execute(
                &call(&format!("c{n}"), "weather", r#"{"path":"p"}"#),
                &ctx(),
            )
            .await;
        assert_eq!(o.output, Some(json!("cached")), "call {n}: {o:?}");
    }
    // Regression: arguments the executor rewrites before validation (an
    // integer written `2.0`) were forgotten under another key than the one
    // their failure was counted under, so the fourth call was refused.
    // (A failure the guard remembers makes it look at every call; no
    // breaker, whose opening would answer the calls before the tool.)
    let ex = single(
        failing("weather", counter(), || {
            io::Error::new(io::ErrorKind::ConnectionRefused, "down")
        }),
        ToolPolicy::new()
            .retry(RetryPolicy::none())
            .no_breaker()
            .fallback(Fallback::output(json!("cached"))),
    );
    let bad = ex.execute(&call("bad", "weather", "{}"), &ctx()).await;
    assert_eq!(bad.error.unwrap().kind, ErrorKind::InvalidArguments);
    for n in 1..=5 {
        let o = ex
            .execute(
                &call(&format!("i{n}"), "weather", r#"{"path":"p","limit":2.0}"#),
                &ctx(),
            )
            .await;
        assert_eq!(o.output, Some(json!("cached")), "call {n}: {o:?}");
    }
}

/// An HTTP client's error names the URL it fetched, API key and all; the
/// model is told the URL without its query or credentials.
#[tokio::test(start_paused = true)]
async fn the_model_never_sees_a_urls_query_or_credentials() {
    let ex = executor({
        let r = Registry::new();
        r.register(failing("weather", counter(), || {
            HttpError::new(404).with_url("https://api.x/w?q=Paris&appid=SECRET")
        }))
        .unwrap();
        r.register(failing("backend", counter(), || {
            io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "error sending request for url (https://bot:hunter2@api.y/v1?token=SECRET)",
            )
        }))
        .unwrap();
        r
    });
    for tool in ["weather", "backend"] {
        let o = ex
            .execute(&call("c", tool, r#"{"path":"p"}"#), &ctx())
            .await;
        let failure = o.error.expect("it failed");
        let text = failure.model_message;
        assert!(
            !text.contains("SECRET") && !text.contains("hunter2"),
            "{tool}: {text}"
        );
        assert!(text.contains("https://api."), "{tool}: {text}");
    }
}

/// Regression: the resource of a not-found failure (a URL, `?appid=…`
/// and all) and the error of a failed attempt before its retry were
/// logged as the tool gave them, and the recent errors of `stats` kept
/// them so: no log line, and nothing the metrics keep, holds a
/// credential.
#[tokio::test(start_paused = true)]
async fn no_log_line_or_recent_error_holds_a_credential() {
    let (cap, _g) = Capture::install();
    let ex = executor({
        let r = Registry::new();
        r.register(failing("weather", counter(), || {
            HttpError::new(404).with_url("https://api.x/w?q=Paris&appid=SECRET")
        }))
        .unwrap();
        r.register(failing("backend", counter(), || {
            io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "error sending request for url (https://bot:hunter2@api.y/v1?token=SECRET)",
            )
        }))
        .unwrap();
        r
    });
    for tool in ["weather", "backend"] {
        ex.execute(&call("c", tool, r#"{"path":"p"}"#), &ctx())
            .await;
    }
    let events = cap.events();
    assert!(
        events
            .iter()
            .any(|e| e.message == "attempt failed; retrying"),
        "{events:#?}"
    );
    for event in &events {
        let text = format!(
            "{} {:?} {:?}",
            event.message, event.fields, event.span_fields
        );
        assert!(
            !text.contains("SECRET") && !text.contains("hunter2"),
            "{text}"
        );
    }
    for stats in ex.registry().stats() {
        for recent in &stats.recent_errors {
            assert!(
                !recent.message.contains("SECRET") && !recent.message.contains("hunter2"),
                "{}: {}",
                stats.name,
                recent.message
            );
            assert!(
                recent.message.contains("https://api."),
                "{}",
                recent.message
            );
        }
    }
}

/// A tool whose effect may stand when it fails midway runs once on a
/// timeout or a broken connection; a rate limit is still retried.
#[tokio::test(start_paused = true)]
async fn a_tool_that_is_not_idempotent_is_not_retried_after_a_timeout() {
    let midway: [fn() -> io::Error; 2] = [
        || io::Error::new(io::ErrorKind::TimedOut, "midway"),
        || io::Error::new(io::ErrorKind::ConnectionReset, "midway"),
    ];
    for make in midway {
        let runs = counter();
        let ex = single(
            failing("send_email", runs.clone(), make),
            ToolPolicy::new().not_idempotent(),
        );
        let o = ex
            .execute(&call("c1", "send_email", r#"{"path":"p"}"#), &ctx())
            .await;
        assert_eq!(count(&runs), 1, "{:?}", make().kind());
        // Regression: the model was told "Retrying will not help", as if
        // the call had surely failed; the email may have gone out.
        let text = o.error.unwrap().model_message;
        assert!(
            text.ends_with("after 1 attempt(s): midway. It was not retried, as it may have done its work before it stopped: check whether it did before calling it again.")
                || text == "The tool timed out (midway) after 1 attempt(s). It was not retried, as it may have done its work before it stopped: check whether it did before calling it again.",
            "{text}"
        );
    }
    let runs = counter();
    let ex = single(
        failing("send_email", runs.clone(), || HttpError::new(429)),
        ToolPolicy::new().not_idempotent(),
    );
    ex.execute(&call("c1", "send_email", r#"{"path":"p"}"#), &ctx())
        .await;
    assert_eq!(count(&runs), 4, "a rate limit is still retried");
    // The default retries a timeout.
    let runs = counter();
    let ex = single(
        failing("search", runs.clone(), || {
            io::Error::new(io::ErrorKind::TimedOut, "slow")
        }),
        ToolPolicy::new(),
    );
    ex.execute(&call("c1", "search", r#"{"path":"p"}"#), &ctx())
        .await;
    assert_eq!(count(&runs), 4);
}

#[tokio::test]
async fn aliases_run_the_tool_and_logs_show_both_names() {
    let (cap, _g) = Capture::install();
    let r = Registry::new();
    r.register(failing("read_file", counter(), || {
        toolwarden_core::ToolError::not_found("x")
    }))
    .unwrap();
    r.alias("cat", "read_file").unwrap();
    let ex = executor(r);
    let o = ex
        .execute(&call("c1", "cat", r#"{"path":"x"}"#), &ctx())
        .await;
    assert_eq!(o.tool, "cat");
    let ev = cap.find("tool resource not found");
    // The OpenTelemetry GenAI `execute_tool` span's attributes.
    assert_eq!(ev.span_fields["gen_ai.tool.name"], "read_file");
    assert_eq!(ev.span_fields["called_as"], "cat");
    assert_eq!(ev.span_fields["gen_ai.tool.call.id"], "c1");
    assert_eq!(ev.span_fields["gen_ai.operation.name"], "execute_tool");
    assert_eq!(
        ex.registry()
            .error_summary()
            .get("read_file:ResourceNotFound"),
        Some(&1)
    );
}

#[tokio::test]
async fn context_values_reach_the_tool_and_not_the_schema() {
    let r = Registry::new();
    r.register(tool_fn(
        "whoami",
        "Who runs this.",
        json!({"type": "object"}),
        |_a, ctx: Context| async move {
            Ok::<_, BoxError>(json!(ctx.get::<User>().map(|u| u.0.clone())))
        },
    ))
    .unwrap();
    let ex = executor(r);
    let c = Context::builder().with(User("ada".into())).build();
    let o = ex.execute(&call("c1", "whoami", ""), &c).await;
    assert_eq!(o.output, Some(json!("ada")));
    let defs = ex
        .registry()
        .definitions(toolwarden_wire::Dialect::OpenAiChat);
    assert_eq!(defs[0]["function"]["parameters"], json!({"type": "object"}));
}

#[tokio::test(start_paused = true)]
async fn metrics_count_calls_errors_retries_and_latency() {
    let r = Registry::new();
    let slow_ok = scripted("work", counter(), |n| async move {
        tokio::time::sleep(Duration::from_millis(10 * u64::from(n))).await;
        if n % 4 == 0 {
            Err(io::Error::new(io::ErrorKind::NotFound, "gone").into())
        } else {
            Ok(Value::Null)
        }
    });
    r.register(slow_ok).unwrap();
    let ex = executor(r);
    for i in 0..8 {
        ex.execute(&call(&format!("c{i}"), "work", r#"{"path":"x"}"#), &ctx())
            .await;
    }
    let s = ex.registry().stats_of("work").unwrap();
    assert_eq!((s.calls, s.successes, s.failures), (8, 6, 2));
    assert_eq!(s.errors_by_kind, vec![("ResourceNotFound", 2)]);
    assert_eq!(s.failure_rate, 0.25);
    assert_eq!(s.latency_mean, Duration::from_millis(45));
    assert!(
        s.latency_p95 >= Duration::from_millis(70) && s.latency_p95 <= Duration::from_millis(85),
        "{:?}",
        s.latency_p95
    );
    assert_eq!(s.recent_errors.len(), 2);
    let report = ex.registry().health(&HealthThresholds::default());
    assert!(report.tools[0].reasons[0].starts_with("failure rate 25.0 %"));
}

/// A hand-written tool that panics while making its future, or whose
/// future panics when dropped at the deadline.
struct Unruly {
    name: &'static str,
    schema: Value,
}

#[async_trait::async_trait]
impl Tool for Unruly {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Panics where it hurts."
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn call<'a, 'b, 'c>(
        &'a self,
        _args: Value,
        _ctx: &'b Context,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Value, BoxError>> + Send + 'c>>
    where
        'a: 'c,
        'b: 'c,
        Self: 'c,
    {
        struct PanicOnDrop;
        impl Drop for PanicOnDrop {
            fn drop(&mut self) {
                panic!("dropped at the deadline");
            }
        }
        if self.name == "eager" {
            panic!("before any future exists");
        }
        Box::pin(async move {
            let _bomb = PanicOnDrop;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(Value::Null)
        })
    }
}

#[tokio::test(start_paused = true)]
async fn panics_outside_the_tools_poll_are_caught_too() {
    let r = Registry::new();
    for name in ["eager", "bomb"] {
        let tool = Unruly {
            name,
            schema: json!({"type": "object"}),
        };
        let policy = ToolPolicy::new()
            .retry(RetryPolicy::none())
            .timeout(TimeoutPolicy::try_new(SEC).unwrap());
        r.register_with(tool, policy).unwrap();
    }
    let ex = executor(r);
    for name in ["eager", "bomb"] {
        let o = ex.execute(&call("c", name, "{}"), &ctx()).await;
        let e = o.error.unwrap();
        assert_eq!(
            e.code.as_deref(),
            Some("panic"),
            "{name}: {}",
            e.technical_message
        );
        assert_eq!(e.model_message, crate::UNEXPECTED_MESSAGE);
    }
}

/// Regression: at the run's `Deadline` the call's future was dropped
/// outside every panic guard, so a tool whose future panics when dropped
/// lost its own outcome and every sibling's in the batch.
#[tokio::test(start_paused = true)]
async fn a_panic_on_drop_at_the_run_deadline_keeps_every_outcome() {
    let r = Registry::new();
    r.register(Unruly {
        name: "bomb",
        schema: json!({"type": "object"}),
    })
    .unwrap();
    r.register(ok_tool("ok")).unwrap();
    let ex = executor(r);
    let calls = [call("a", "bomb", "{}"), call("b", "ok", r#"{"path":"p"}"#)];
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC));
    let outcomes = ex.execute_batch(&calls, &c).await;
    let ids: Vec<&str> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    let a = outcomes[0].error.as_ref().expect("a failed");
    assert_eq!(a.kind, ErrorKind::Internal);
    assert_eq!(a.code.as_deref(), Some("panic"), "{}", a.technical_message);
    assert!(a.technical_message.contains("dropped at the deadline"));
    assert_eq!(a.model_message, crate::UNEXPECTED_MESSAGE);
    assert_eq!(outcomes[1].status, Status::Success);
}

/// An error whose `Display` or `Drop` panics: the tool's code, run while
/// the runtime reads (classifies) and drops the error.
#[derive(Debug)]
struct Treacherous {
    panic_in_display: bool,
}

impl std::fmt::Display for Treacherous {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.panic_in_display {
            panic!("Display of the error");
        }
        f.write_str("an error that panics when dropped")
    }
}

impl std::error::Error for Treacherous {}

impl Drop for Treacherous {
    fn drop(&mut self) {
        if !self.panic_in_display && !std::thread::panicking() {
            panic!("Drop of the error");
        }
    }
}

/// Regression: the tool's error was classified (`Display`, `source`) and
/// dropped outside the panic guard, so `execute` itself panicked.
#[tokio::test(start_paused = true)]
async fn a_panic_while_reading_or_dropping_the_error_is_the_calls_panic() {
    for (name, panic_in_display) in [("display", true), ("drop", false)] {
        let tool = scripted(name, counter(), move |_| async move {
            Err(Box::new(Treacherous { panic_in_display }) as BoxError)
        });
        let ex = single(tool, ToolPolicy::new());
        let o = ex
            .execute(&call("c", name, r#"{"path":"p"}"#), &ctx())
            .await;
        let e = o.error.expect("failed");
        assert_eq!(e.kind, ErrorKind::Internal, "{name}");
        assert_eq!(
            e.code.as_deref(),
            Some("panic"),
            "{name}: {}",
            e.technical_message
        );
        assert_eq!(e.model_message, crate::UNEXPECTED_MESSAGE);
        assert_eq!(o.attempts, 1, "{name}: internal errors are not retried");
        let s = ex.registry().stats_of(name).unwrap();
        assert_eq!(s.errors_by_kind, vec![("Internal", 1)], "{name}");
    }
}

/// Regression: a retry slept past the run's deadline, so the model was told
/// "the run's time is up" instead of the rate limit that actually stopped
/// the tool.
#[tokio::test(start_paused = true)]
async fn no_retry_waits_past_the_run_deadline() {
    let runs = counter();
    let tool = scripted("limited", runs.clone(), |_| async {
        Err(HttpError::new(429)
            .with_retry_after(Some(Duration::from_secs(30)))
            .into())
    });
    let ex = single(tool, ToolPolicy::new());
    let start = Instant::now();
    let c = Context::new().with(crate::Deadline(start + Duration::from_secs(5)));
    let o = ex
        .execute(&call("c1", "limited", r#"{"path":"p"}"#), &c)
        .await;
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "no wait for a retry that cannot run"
    );
    assert_eq!(o.attempts, 1);
    assert_eq!(count(&runs), 1);
    let e = o.error.unwrap();
    assert!(
        matches!(e.kind, ErrorKind::RateLimited { .. }),
        "{:?}",
        e.kind
    );
    assert!(
        e.model_message.contains("Retry after 30 s"),
        "{}",
        e.model_message
    );

    // Backoffs of about 100 and 200 ms: the second retry would start after
    // a deadline 250 ms away, so it is not made.
    let times = Arc::new(Mutex::new(Vec::new()));
    let ex = single(recording("net", 3, times.clone()), ToolPolicy::new());
    let start = Instant::now();
    let c = Context::new().with(crate::Deadline(start + Duration::from_millis(250)));
    let o = ex.execute(&call("c2", "net", r#"{"path":"p"}"#), &c).await;
    assert_eq!(o.attempts, 2);
    assert_eq!(o.error.unwrap().kind, ErrorKind::Network);
    assert_eq!(times.lock().unwrap().len(), 2);
    assert!(start.elapsed() < Duration::from_millis(250));
}

/// Regression: a retry whose backoff ended before the run's deadline but
/// whose concurrency slot came only after it (freed by another call the
/// deadline cut) still started the tool.
#[tokio::test(start_paused = true)]
async fn a_retry_that_gets_its_slot_after_the_deadline_does_not_start() {
    let runs = counter();
    let flaky = scripted("flaky", runs.clone(), |n| async move {
        if n == 1 {
            return Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset").into());
        }
        tokio::time::sleep(10 * SEC).await;
        Ok(json!("late"))
    });
    let r = Registry::new();
    r.register(flaky).unwrap();
    r.register(scripted("hold", counter(), |_| async {
        tokio::time::sleep(10 * SEC).await;
        Ok(json!("held"))
    }))
    .unwrap();
    let ex = Executor::with_config(
        Arc::new(r),
        ExecutorConfig::default()
            .with_concurrency(1)
            .unwrap()
            .with_seed(42),
    );
    let c = Context::new().with(crate::Deadline(Instant::now() + SEC));
    let flaky_call = call("f", "flaky", r#"{"path":"p"}"#);
    let hold_call = call("h", "hold", r#"{"path":"p"}"#);
    // `hold` is polled first at every wake: cut at the deadline, it frees
    // the one slot for `flaky`'s retry, waiting since its ~100 ms backoff.
    let (hold, flaky) = futures_util::future::join(
        async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ex.execute(&hold_call, &c).await
        },
        ex.execute(&flaky_call, &c),
    )
    .await;
    assert_eq!(hold.error.unwrap().code.as_deref(), Some("run_deadline"));
    assert_eq!(count(&runs), 1, "the retry did not start: {flaky:?}");
    // As for a retry whose backoff ends too late: what stopped the tool.
    assert_eq!(flaky.attempts, 1);
    assert_eq!(flaky.error.unwrap().kind, ErrorKind::Network);
}

/// Regression: a fallback tool failing fatally (its credentials rejected)
/// was reduced to a note in the primary's message, and the run went on.
#[tokio::test(start_paused = true)]
async fn a_fatal_failure_of_the_fallback_tool_is_fatal() {
    let r = Registry::new();
    r.register(failing("cache", counter(), || {
        HttpError::new(401).with_message("token expired")
    }))
    .unwrap();
    r.register_with(
        failing("live", counter(), || {
            io::Error::new(io::ErrorKind::ConnectionRefused, "down")
        }),
        ToolPolicy::new()
            .retry(RetryPolicy::none())
            .fallback(Fallback::tool("cache")),
    )
    .unwrap();
    let ex = executor(r);
    let o = ex
        .execute(&call("c1", "live", r#"{"path":"p"}"#), &ctx())
        .await;
    assert!(o.is_fatal(), "{:?}", o.error);
    assert_eq!((o.call_id.as_str(), o.tool.as_str()), ("c1", "live"));
    assert_eq!(o.status, Status::Error);
    assert_eq!(o.fallback_used.as_deref(), Some("cache"));
    assert_eq!((o.attempts, o.fallback_attempts), (1, 1));
    let e = o.error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::Authentication);
    assert!(
        e.technical_message.contains("token expired"),
        "{}",
        e.technical_message
    );
    assert!(
        e.technical_message.contains("down"),
        "{}",
        e.technical_message
    );
    let fatal = crate::FatalError::from_outcome(&o).expect("the run must stop");
    assert_eq!(fatal.kind, ErrorKind::Authentication);
}

/// Regression: while a half-open breaker's probe ran, the calls it
/// rejected told the model to retry after 1 s, though the probe could run
/// its whole timeout. The wait is now until the probe's timeout, when it
/// has answered for sure; with no timeout, no time is promised.
#[tokio::test(start_paused = true)]
async fn a_half_open_rejection_waits_for_the_probes_timeout() {
    for (timeout, told) in [
        (Duration::from_secs(30), "retry after 20 s."),
        (Duration::MAX, "with no known time it will be back"),
    ] {
        let runs = counter();
        let tool = scripted("svc", runs.clone(), |n| async move {
            if n == 1 {
                return Err(io::Error::from(io::ErrorKind::ConnectionRefused).into());
            }
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(json!("late"))
        });
        let policy = ToolPolicy::new()
            .retry(RetryPolicy::none())
            .timeout(TimeoutPolicy::try_new(timeout).unwrap())
            .breaker(BreakerConfig::try_new(1, Duration::from_secs(5), 1).unwrap());
        let ex = single(tool, policy);
        let c = ctx();
        ex.execute(&call("a", "svc", r#"{"path":"a"}"#), &c).await;
        tokio::time::advance(Duration::from_secs(5)).await;
        let probe = call("probe", "svc", r#"{"path":"b"}"#);
        let other = call("other", "svc", r#"{"path":"c"}"#);
        let rejected = async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            ex.execute(&other, &c).await
        };
        let probe_run = ex.execute(&probe, &c);
        tokio::pin!(probe_run);
        let o = tokio::select! {
            o = rejected => o,
            _ = &mut probe_run => panic!("the probe ended first"),
        };
        let e = o.error.unwrap();
        assert!(matches!(e.kind, ErrorKind::CircuitOpen { .. }), "{e:?}");
        assert!(e.model_message.contains(told), "{}", e.model_message);
        assert_eq!(count(&runs), 2);
    }
}

/// Regression: a fallback tool whose future panicked when the run's
/// deadline dropped it made a panic outcome of the tool's own: the tool's
/// metrics counted the call a second time (its failure had been counted
/// when it went on to the fallback), and so did the loop guard (two of
/// its three failures for one call), while the fallback's counted nothing
/// and the outcome named no fallback. The panic is the fallback's.
#[tokio::test(start_paused = true)]
async fn a_fallback_that_panics_when_dropped_at_the_deadline_is_counted_as_the_fallback() {
    let r = Registry::new();
    r.register(Unruly {
        name: "bomb",
        schema: json!({"type": "object"}),
    })
    .unwrap();
    let down = failing("down", counter(), || {
        io::Error::new(io::ErrorKind::ConnectionRefused, "refused")
    });
    let policy = ToolPolicy::new()
        .retry(RetryPolicy::none())
        .no_breaker()
        .fallback(Fallback::tool("bomb"));
    r.register_with(down, policy).unwrap();
    let ex = executor(r);
    // Each call's run ends a second after it starts.
    let run = || Context::new().with(crate::Deadline(Instant::now() + SEC));
    let same = call("a", "down", r#"{"path": "p"}"#);
    for n in 1..=2 {
        let o = ex.execute(&same, &run()).await;
        assert_eq!(o.call_id, "a");
        let e = o.error.as_ref().expect("the call failed");
        assert_eq!(e.code.as_deref(), Some("panic"), "{}", e.technical_message);
        assert!(
            e.technical_message
                .starts_with("fallback 'bomb' failed: the tool panicked: dropped at the deadline"),
            "{}",
            e.technical_message
        );
        assert_eq!(o.fallback_used.as_deref(), Some("bomb"), "{o:?}");
        assert_eq!((o.attempts, o.fallback_attempts), (1, 1), "{o:?}");
        let (tool, fallback) = (
            ex.registry().stats_of("down").unwrap(),
            ex.registry().stats_of("bomb").unwrap(),
        );
        assert_eq!((tool.calls, tool.failures), (n, n), "the tool's count");
        assert_eq!(
            (fallback.calls, fallback.failures),
            (n, n),
            "the fallback's count"
        );
    }
    // Two calls, two failures of the tool: the loop guard (3) lets a
    // third through.
    let o = ex.execute(&same, &run()).await;
    assert_ne!(o.error.unwrap().code.as_deref(), Some("repeated_failure"));
}
