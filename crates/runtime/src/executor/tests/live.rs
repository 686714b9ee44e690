//! A registry that changes while executors run (review L4): tools
//! registered after the executor exists, removed while a call of theirs
//! is in flight, and both from many tasks at once.

use std::sync::atomic::AtomicBool;

use tokio::sync::Notify;
use toolwarden_core::{ErrorKind, ToolOutcome};

use super::*;

/// Code and model-facing text of a failed outcome.
fn unknown(outcome: &ToolOutcome) -> (&str, ErrorKind, &str) {
    let e = outcome.error.as_ref().expect("a failure");
    (
        e.code.as_deref().unwrap_or_default(),
        e.kind.clone(),
        &e.model_message,
    )
}

#[tokio::test]
async fn a_tool_registered_after_the_executor_exists_is_called() {
    let r = Registry::new();
    r.register(ok_tool("ok")).unwrap();
    let ex = executor(r);
    let late = call("c1", "late", r#"{"path": "x"}"#);
    let before = ex.execute(&late, &ctx()).await;
    assert_eq!(unknown(&before).0, "unknown_tool");

    ex.registry()
        .register(tool_fn(
            "late",
            "Registered late.",
            schema(),
            |args: Value, _c| async move { Ok::<_, BoxError>(json!({"late": args["path"]})) },
        ))
        .unwrap();
    let after = ex.execute(&late, &ctx()).await;
    assert_eq!(after.output, Some(json!({"late": "x"})), "{after:?}");
    assert_eq!(ex.registry().available(), ["ok", "late"]);
}

/// The call in flight finishes with its tool; the next one gets what a
/// call to a name never registered gets; the tool's metrics are gone.
#[tokio::test]
async fn removing_a_tool_while_its_call_runs() {
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let r = Registry::new();
    r.register(ok_tool("ok")).unwrap();
    let (s, g) = (started.clone(), release.clone());
    r.register(tool_fn(
        "slow",
        "Waits to be released.",
        schema(),
        move |_a, _c| {
            let (s, g) = (s.clone(), g.clone());
            async move {
                s.notify_one();
                g.notified().await;
                Ok::<_, BoxError>(json!("finished with the old tool"))
            }
        },
    ))
    .unwrap();
    let ex = Arc::new(executor(r));

    let running = tokio::spawn({
        let ex = ex.clone();
        async move {
            ex.execute(&call("c1", "slow", r#"{"path": "p"}"#), &ctx())
                .await
        }
    });
    started.notified().await;
    ex.registry().remove("slow").unwrap();
    assert_eq!(
        ex.registry()
            .definitions(toolwarden_wire::Dialect::Anthropic)[0]["name"],
        "ok"
    );
    assert!(ex.registry().stats_of("slow").is_none());

    let next = ex
        .execute(&call("c2", "slow", r#"{"path": "p"}"#), &ctx())
        .await;
    let never = ex
        .execute(&call("c3", "never", r#"{"path": "p"}"#), &ctx())
        .await;
    assert_eq!(
        unknown(&next),
        (
            "unknown_tool",
            ErrorKind::NotAvailable,
            "Tool 'slow' is not available. Available tools: ok."
        )
    );
    assert_eq!(
        unknown(&never),
        (
            "unknown_tool",
            ErrorKind::NotAvailable,
            "Tool 'never' is not available. Available tools: ok."
        )
    );

    release.notify_one();
    let first = running.await.unwrap();
    assert_eq!(first.output, Some(json!("finished with the old tool")));
    assert!(first.error.is_none(), "{first:?}");
    assert_eq!(
        ex.registry().error_summary().get("<unknown>:NotAvailable"),
        Some(&2)
    );
}

/// A tool registered again under a removed tool's name starts afresh:
/// its metrics (and breaker) are its own.
#[tokio::test]
async fn a_tool_registered_again_starts_afresh() {
    let r = Registry::new();
    r.register_with(
        failing("flaky", counter(), || std::io::Error::other("down")),
        ToolPolicy::new().retry(crate::RetryPolicy::none()),
    )
    .unwrap();
    let ex = executor(r);
    let c = call("c1", "flaky", r#"{"path": "p"}"#);
    assert!(ex.execute(&c, &ctx()).await.error.is_some());
    assert_eq!(ex.registry().stats_of("flaky").unwrap().failures, 1);

    ex.registry().remove("flaky").unwrap();
    ex.registry().register(ok_tool("flaky")).unwrap();
    let stats = ex.registry().stats_of("flaky").unwrap();
    assert_eq!((stats.calls, stats.failures), (0, 0));
    assert!(ex.execute(&c, &ctx()).await.error.is_none());
}

/// Many tasks registering, removing, listing and calling at once on a
/// multi-threaded runtime: no deadlock (the whole test has a time limit),
/// no panic, and every outcome is the tool's answer or `unknown_tool`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_register_remove_and_execute() {
    const TOOLS: usize = 8;
    const ROUNDS: usize = 200;
    let names: Vec<&'static str> = (0..TOOLS)
        .map(|i| &*Box::leak(format!("tool_{i}").into_boxed_str()))
        .collect();
    let r = Registry::new();
    r.register(ok_tool("stable")).unwrap();
    let ex = Arc::new(executor(r));
    let done = Arc::new(AtomicBool::new(false));

    let mut tasks = tokio::task::JoinSet::new();
    for (t, &name) in names.iter().enumerate() {
        let ex = ex.clone();
        tasks.spawn(async move {
            for round in 0..ROUNDS {
                ex.registry().register(ok_tool(name)).unwrap();
                if round % 3 == t % 3 {
                    tokio::task::yield_now().await;
                }
                ex.registry().remove(name).unwrap();
            }
            0
        });
    }
    for t in 0..TOOLS {
        let (ex, done, names) = (ex.clone(), done.clone(), names.clone());
        tasks.spawn(async move {
            let mut calls = 0;
            let mut i = t;
            while !done.load(Ordering::Relaxed) || calls < ROUNDS {
                let name = if i % 4 == 0 {
                    "stable"
                } else {
                    names[i % TOOLS]
                };
                let c = call(&format!("c{t}-{i}"), name, r#"{"path": "p"}"#);
                let o = ex.execute(&c, &ctx()).await;
                match &o.error {
                    None => assert_eq!(o.output, Some(json!({"echo": "p"}))),
                    Some(e) => assert_eq!(e.code.as_deref(), Some("unknown_tool"), "{o:?}"),
                }
                let defs = ex
                    .registry()
                    .definitions(toolwarden_wire::Dialect::OpenAiChat);
                assert!(!defs.as_array().unwrap().is_empty(), "`stable` stays");
                i += 1;
                calls += 1;
                if calls % 16 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            calls
        });
    }
    let all = async {
        let mut writers = 0;
        while let Some(joined) = tasks.join_next().await {
            if joined.expect("no task panics") == 0 {
                writers += 1;
                if writers == TOOLS {
                    done.store(true, Ordering::Relaxed);
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("no deadlock");
    assert_eq!(ex.registry().available(), ["stable"]);
    assert_eq!(ex.registry().len(), 1);
}

/// A call stopped at the run's deadline after its tool was removed and
/// registered again counts in the metrics of the tool it ran, not in the
/// new one's.
#[tokio::test(start_paused = true)]
async fn a_call_cut_at_the_deadline_counts_in_the_tool_it_started_with() {
    let hangs = || {
        tool_fn("hangs", "Never answers.", schema(), |_a, _c| async move {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, BoxError>(Value::Null)
        })
    };
    let r = Registry::new();
    r.register_with(hangs(), ToolPolicy::new().no_breaker())
        .unwrap();
    let ex = Arc::new(executor(r));
    let deadline = crate::Deadline(tokio::time::Instant::now() + SEC);
    let running = tokio::spawn({
        let ex = ex.clone();
        async move {
            let ctx = Context::new().with(deadline);
            ex.execute(&call("c1", "hangs", r#"{"path": "p"}"#), &ctx)
                .await
        }
    });
    tokio::time::sleep(SEC / 2).await;
    ex.registry().remove("hangs").unwrap();
    ex.registry().register(hangs()).unwrap();
    let outcome = running.await.unwrap();
    assert_eq!(outcome.error.unwrap().code.as_deref(), Some("run_deadline"));
    assert_eq!(ex.registry().stats_of("hangs").unwrap().calls, 0);
}

/// A `sequential` tool removed while a call of it runs, and registered
/// again under its name: the new registration's call waits for the old
/// one's, so the name's calls never overlap.
#[tokio::test(start_paused = true)]
async fn a_sequential_tool_registered_again_waits_for_the_removed_ones_call() {
    let running = Arc::new(AtomicU32::new(0));
    let most = Arc::new(AtomicU32::new(0));
    let release = Arc::new(Notify::new());
    let writer = |release: Option<Arc<Notify>>| {
        let (running, most) = (running.clone(), most.clone());
        tool_fn("write", "Writes the file.", schema(), move |_a, _c| {
            let (running, most, release) = (running.clone(), most.clone(), release.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                match release {
                    Some(release) => release.notified().await,
                    None => tokio::time::sleep(SEC).await,
                }
                running.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, BoxError>(Value::Null)
            }
        })
    };
    let sequential = || ToolPolicy::new().sequential(true);
    let r = Registry::new();
    r.register_with(writer(Some(release.clone())), sequential())
        .unwrap();
    let ex = Arc::new(executor(r));
    let spawn_call = |id: &'static str| {
        let ex = ex.clone();
        tokio::spawn(async move {
            ex.execute(&call(id, "write", r#"{"path": "p"}"#), &ctx())
                .await
        })
    };
    let old = spawn_call("c1");
    while running.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    ex.registry().remove("write").unwrap();
    ex.registry()
        .register_with(writer(None), sequential())
        .unwrap();
    let new = spawn_call("c2");
    tokio::time::sleep(10 * SEC).await;
    assert_eq!(running.load(Ordering::SeqCst), 1, "the new call waits");
    release.notify_one();
    assert!(old.await.unwrap().error.is_none());
    assert!(new.await.unwrap().error.is_none());
    assert_eq!(most.load(Ordering::SeqCst), 1, "the calls never overlapped");
}
