//! Nested calls: a tool that calls its own executor and waits for the
//! answer. Each test is bounded by a timer, so a deadlock fails it rather
//! than hanging it.

use std::sync::atomic::AtomicUsize;

use futures_util::future::join_all;
use tokio::time::Instant;
use toolwarden_core::Status;

use super::*;
use crate::{RetryPolicy, TimeoutPolicy};

/// Longer than any test here needs (the clock is paused: a deadlock
/// advances it to this at once).
const BOUND: Duration = Duration::from_secs(3600);

/// No timeout, no retry, no breaker: a deadlock is a hang, not a timeout.
fn patient() -> ToolPolicy {
    ToolPolicy::new()
        .timeout(TimeoutPolicy::try_new(Duration::MAX).unwrap())
        .retry(RetryPolicy::none())
        .no_breaker()
}

/// Calls that run at once, and the most there were.
#[derive(Default)]
struct Running {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// `inner`: takes a second, counted in `running`.
fn inner(running: Arc<Running>) -> impl Tool {
    tool_fn(
        "inner",
        "Takes a second.",
        json!({"type": "object"}),
        move |_a, _c| {
            let running = Arc::clone(&running);
            async move {
                let now = running.now.fetch_add(1, Ordering::SeqCst) + 1;
                running.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(SEC).await;
                running.now.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, BoxError>(json!("inner done"))
            }
        },
    )
}

/// `outer`: after `{"wait_ms": ms}`, calls `{"tool": name}` (`inner` by
/// default) `{"n": n}` times at once on the executor in its context, and
/// answers with their outputs.
fn outer() -> impl Tool {
    tool_fn(
        "outer",
        "Calls inner.",
        json!({"type": "object"}),
        |args: Value, ctx: Context| async move {
            let ex = ctx.get::<Arc<Executor>>().expect("the executor").clone();
            let n = args["n"].as_u64().unwrap_or(1);
            let wait = args["wait_ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let tool = args["tool"].as_str().unwrap_or("inner");
            let calls: Vec<ToolCall> = (0..n)
                .map(|i| call(&format!("in{i}"), tool, r#"{"path": "x"}"#))
                .collect();
            let outcomes = join_all(calls.iter().map(|c| ex.execute(c, &ctx))).await;
            let outputs: Vec<Value> = outcomes
                .into_iter()
                .map(|o| o.output.unwrap_or(Value::Null))
                .collect();
            Ok::<_, BoxError>(Value::Array(outputs))
        },
    )
}

fn nesting(concurrency: usize, running: &Arc<Running>) -> Arc<Executor> {
    let r = Registry::new();
    r.register_with(inner(Arc::clone(running)), patient())
        .unwrap();
    r.register_with(outer(), patient()).unwrap();
    // Refused once with a rate limit (retried after a second), then done.
    let flaky = scripted("flaky", counter(), |n| async move {
        match n {
            1 => Err(crate::HttpError::new(429)
                .with_retry_after(Some(SEC))
                .into()),
            _ => Ok(json!("flaky done")),
        }
    });
    r.register_with(flaky, ToolPolicy::new().no_breaker())
        .unwrap();
    Arc::new(Executor::with_config(
        Arc::new(r),
        ExecutorConfig::default()
            .with_concurrency(concurrency)
            .unwrap(),
    ))
}

/// Regression: with every slot held by a call whose tool waited for a
/// nested call, each nested call waited for a slot only its parent could
/// free: a deadlock (with no timeout, forever; with one, every parent
/// timed out). A nested call runs in its parent's slot.
#[tokio::test(start_paused = true)]
async fn nested_calls_run_when_every_slot_is_held_by_their_parents() {
    let running = Arc::new(Running::default());
    let ex = nesting(2, &running);
    let ctx = Context::new().with(Arc::clone(&ex));
    // Each parent waits until both hold their slots.
    let calls = [
        call("a", "outer", r#"{"n": 1, "wait_ms": 10}"#),
        call("b", "outer", r#"{"n": 1, "wait_ms": 10}"#),
    ];
    let start = Instant::now();
    let outcomes = tokio::time::timeout(BOUND, ex.execute_batch(&calls, &ctx))
        .await
        .expect("nested calls deadlocked");
    for o in &outcomes {
        assert_eq!(o.status, Status::Success, "{o:?}");
        assert_eq!(o.output, Some(json!(["inner done"])));
    }
    assert_eq!(
        start.elapsed(),
        SEC + Duration::from_millis(10),
        "both nested calls ran at once"
    );
    assert_eq!(ex.registry().stats_of("inner").unwrap().calls, 2);
}

/// A parent lends its slot to one nested call at a time: with one slot,
/// four nested calls made at once run one after another, never two at
/// once.
#[tokio::test(start_paused = true)]
async fn a_parent_lends_its_slot_to_one_nested_call_at_a_time() {
    let running = Arc::new(Running::default());
    let ex = nesting(1, &running);
    let ctx = Context::new().with(Arc::clone(&ex));
    let start = Instant::now();
    let o = tokio::time::timeout(BOUND, ex.execute(&call("a", "outer", r#"{"n": 4}"#), &ctx))
        .await
        .expect("nested calls deadlocked");
    assert_eq!(o.status, Status::Success, "{o:?}");
    assert_eq!(
        o.output,
        Some(json!([
            "inner done",
            "inner done",
            "inner done",
            "inner done"
        ]))
    );
    assert_eq!(running.most.load(Ordering::SeqCst), 1);
    assert_eq!(start.elapsed(), 4 * SEC);
}

/// Nested calls take the executor's free slots too: with three slots, the
/// parent's and two free ones run three of its four nested calls at once,
/// and never more than the executor's limit.
#[tokio::test(start_paused = true)]
async fn nested_calls_take_free_slots_within_the_limit() {
    let running = Arc::new(Running::default());
    let ex = nesting(3, &running);
    let ctx = Context::new().with(Arc::clone(&ex));
    let start = Instant::now();
    let o = tokio::time::timeout(BOUND, ex.execute(&call("a", "outer", r#"{"n": 4}"#), &ctx))
        .await
        .expect("nested calls deadlocked");
    assert_eq!(
        o.output,
        Some(json!([
            "inner done",
            "inner done",
            "inner done",
            "inner done"
        ]))
    );
    assert_eq!(running.most.load(Ordering::SeqCst), 3);
    assert_eq!(start.elapsed(), 2 * SEC);
}

/// A call made on another executor from a tool is not nested there: it
/// waits for that executor's slots like any call.
#[tokio::test(start_paused = true)]
async fn a_call_on_another_executor_waits_for_its_slots() {
    let running = Arc::new(Running::default());
    let other = nesting(1, &running);
    let this = nesting(2, &Arc::new(Running::default()));
    // The other executor's one slot is held for a second.
    let busy = call("busy", "inner", "{}");
    let nested = call("a", "outer", r#"{"n": 1}"#);
    let other_ctx = Context::new().with(Arc::clone(&other));
    let start = Instant::now();
    let (_, o) = tokio::time::timeout(BOUND, async {
        tokio::join!(
            other.execute(&busy, &other_ctx),
            // `outer` on this executor calls `inner` on the other.
            this.execute(&nested, &other_ctx),
        )
    })
    .await
    .expect("deadlocked");
    assert_eq!(o.output, Some(json!(["inner done"])));
    assert_eq!(running.most.load(Ordering::SeqCst), 1);
    assert_eq!(start.elapsed(), 2 * SEC);
}

/// A nested call gives its slot back while it waits to retry, and takes
/// its parent's again after: not one of the executor's, which its parent
/// holds.
#[tokio::test(start_paused = true)]
async fn a_nested_retry_takes_its_parents_slot_again() {
    let ex = nesting(1, &Arc::new(Running::default()));
    let ctx = Context::new().with(Arc::clone(&ex));
    let start = Instant::now();
    let o = tokio::time::timeout(
        BOUND,
        ex.execute(&call("a", "outer", r#"{"tool": "flaky"}"#), &ctx),
    )
    .await
    .expect("nested calls deadlocked");
    assert_eq!(o.output, Some(json!(["flaky done"])));
    assert_eq!(start.elapsed(), SEC);
    assert_eq!(ex.registry().stats_of("flaky").unwrap().retries, 1);
}

/// `name`: with `{"call": tool, "with": args}`, calls `tool` with `args`
/// on the executor in its context and answers with its output, or its
/// error's code; without, answers "done".
fn caller(name: &'static str) -> impl Tool {
    tool_fn(
        name,
        "Calls another tool.",
        json!({"type": "object"}),
        |args: Value, ctx: Context| async move {
            let Some(tool) = args["call"].as_str() else {
                return Ok::<_, BoxError>(json!("done"));
            };
            let ex = ctx.get::<Arc<Executor>>().expect("the executor").clone();
            let with = args["with"].as_str().unwrap_or("{}");
            let o = ex.execute(&call("nested", tool, with), &ctx).await;
            Ok(match (o.output, o.error) {
                (Some(v), None) => v,
                (_, e) => json!(e.and_then(|e| e.code)),
            })
        },
    )
}

/// Regression: a `sequential` tool called from within its own running
/// call (directly, or through another tool) waited for the lock its
/// caller held until it ended: a deadlock (with no timeout, forever). It
/// is refused at once (`sequential_reentry`); another `sequential` tool
/// still runs nested.
#[tokio::test(start_paused = true)]
async fn a_sequential_tool_called_from_its_own_call_is_refused() {
    let r = Registry::new();
    r.register_with(caller("seq"), patient().sequential(true))
        .unwrap();
    r.register_with(caller("seq2"), patient().sequential(true))
        .unwrap();
    r.register_with(caller("relay"), patient()).unwrap();
    let ex = Arc::new(executor(r));
    let ctx = Context::new().with(Arc::clone(&ex));
    for (args, answer) in [
        (r#"{"call": "seq"}"#, json!("sequential_reentry")),
        (
            r#"{"call": "relay", "with": "{\"call\": \"seq\"}"}"#,
            json!("sequential_reentry"),
        ),
        (r#"{"call": "seq2"}"#, json!("done")),
        (
            r#"{"call": "seq2", "with": "{\"call\": \"seq\"}"}"#,
            json!("sequential_reentry"),
        ),
    ] {
        let o = tokio::time::timeout(BOUND, ex.execute(&call("top", "seq", args), &ctx))
            .await
            .unwrap_or_else(|_| panic!("{args}: deadlocked"));
        assert_eq!(o.output, Some(answer), "{args}");
    }
    // The refused calls are the tool's failures, with the reason.
    let stats = ex.registry().stats_of("seq").unwrap();
    assert_eq!((stats.calls, stats.failures), (7, 3));
    assert!(
        stats.recent_errors[0]
            .message
            .contains("called from within its own running call"),
        "{:?}",
        stats.recent_errors
    );
}

/// Two slots, `outer` (no timeout) and `seq`, registered `sequential`.
fn with_sequential(seq: impl Tool) -> Arc<Executor> {
    let r = Registry::new();
    r.register_with(outer(), patient()).unwrap();
    r.register_with(seq, ToolPolicy::new().no_breaker().sequential(true))
        .unwrap();
    Arc::new(Executor::with_config(
        Arc::new(r),
        ExecutorConfig::default().with_concurrency(2).unwrap(),
    ))
}

/// Regression: a `sequential` tool's call took its lock, then waited for
/// a slot. With both slots held by parents whose nested calls of that
/// tool waited for the lock, and a top-level call of it holding the lock
/// while it waited for a slot, each waited for another (until a parent's
/// timeout dropped its nested call; with none, forever). A call takes
/// its slot first, then the lock.
#[tokio::test(start_paused = true)]
async fn a_sequential_call_waits_for_its_slot_before_its_lock() {
    let ex = with_sequential(caller("seq"));
    let ctx = Context::new().with(Arc::clone(&ex));
    // The parents take both slots; the top-level call of `seq` comes
    // next; 10 ms later the parents call `seq`.
    let parent = r#"{"tool": "seq", "wait_ms": 10}"#;
    let calls = [
        call("a", "outer", parent),
        call("b", "outer", parent),
        call("top", "seq", "{}"),
    ];
    let (a, b, top) = tokio::time::timeout(BOUND, async {
        tokio::join!(
            ex.execute(&calls[0], &ctx),
            ex.execute(&calls[1], &ctx),
            ex.execute(&calls[2], &ctx),
        )
    })
    .await
    .expect("the calls waited for each other");
    assert_eq!(a.output, Some(json!(["done"])), "{a:?}");
    assert_eq!(b.output, Some(json!(["done"])), "{b:?}");
    assert_eq!(top.output, Some(json!("done")), "{top:?}");
    assert_eq!(ex.registry().stats_of("seq").unwrap().calls, 3);
}

/// Regression: a `sequential` tool's call waiting to retry gave its slot
/// back and took one again holding its lock: parents that took both slots
/// meanwhile, their nested calls of the tool waiting for the lock, kept
/// it waiting (with no timeout, forever). It keeps its slot while it
/// waits to retry.
#[tokio::test(start_paused = true)]
async fn a_sequential_call_keeps_its_slot_while_it_waits_to_retry() {
    // Refused once with a rate limit (retried after a second), then done.
    let seq = scripted("seq", counter(), |n| async move {
        match n {
            1 => Err(crate::HttpError::new(429)
                .with_retry_after(Some(SEC))
                .into()),
            _ => Ok(json!("done")),
        }
    });
    let ex = with_sequential(seq);
    let ctx = Context::new().with(Arc::clone(&ex));
    let parent = r#"{"tool": "seq", "wait_ms": 10}"#;
    let calls = [
        call("top", "seq", r#"{"path": "x"}"#),
        call("a", "outer", parent),
        call("b", "outer", parent),
    ];
    let start = Instant::now();
    let (top, a, b) = tokio::time::timeout(BOUND, async {
        tokio::join!(
            ex.execute(&calls[0], &ctx),
            ex.execute(&calls[1], &ctx),
            ex.execute(&calls[2], &ctx),
        )
    })
    .await
    .expect("the calls waited for each other");
    assert_eq!(top.output, Some(json!("done")), "{top:?}");
    assert_eq!(top.attempts, 2);
    assert_eq!(a.output, Some(json!(["done"])), "{a:?}");
    assert_eq!(b.output, Some(json!(["done"])), "{b:?}");
    // `b` waited for the slot `top` kept (a second), then 10 ms; nothing
    // waited for a timeout.
    assert_eq!(start.elapsed(), SEC + Duration::from_millis(10));
}

/// Executor A and executor B, for tools that call one from the other.
struct ExecutorA(Arc<Executor>);
struct ExecutorB(Arc<Executor>);

/// `name`: calls `tool` on executor A (`on_a`) or B and answers with its
/// output, or its error's code.
fn hop(name: &'static str, on_a: bool, tool: &'static str) -> impl Tool {
    tool_fn(
        name,
        "Calls a tool on another executor.",
        json!({"type": "object"}),
        move |_args: Value, ctx: Context| async move {
            let ex = match on_a {
                true => Arc::clone(&ctx.get::<ExecutorA>().expect("executor A").0),
                false => Arc::clone(&ctx.get::<ExecutorB>().expect("executor B").0),
            };
            let o = ex.execute(&call("hop", tool, "{}"), &ctx).await;
            Ok::<_, BoxError>(match (o.output, o.error) {
                (Some(v), None) => v,
                (_, e) => json!(e.and_then(|e| e.code)),
            })
        },
    )
}

/// Regression: a call on executor A made by a tool of executor B that a
/// tool of A had called (A → B → A) was not told apart as nested in A's
/// call: it waited for one of A's slots, held by its own ancestor (with
/// no timeout, forever), and a `sequential` tool of A called so waited
/// for the lock its ancestor held. It runs in its ancestor's slot, and
/// such a `sequential` call is refused, as on one executor.
#[tokio::test(start_paused = true)]
async fn a_call_back_through_another_executor_is_nested() {
    let a = Registry::new();
    a.register_with(hop("to_b", false, "to_a"), patient())
        .unwrap();
    a.register_with(hop("seq_to_b", false, "to_seq"), patient().sequential(true))
        .unwrap();
    a.register_with(caller("leaf"), patient()).unwrap();
    let b = Registry::new();
    b.register_with(hop("to_a", true, "leaf"), patient())
        .unwrap();
    b.register_with(hop("to_seq", true, "seq_to_b"), patient())
        .unwrap();
    let one_slot = || ExecutorConfig::default().with_concurrency(1).unwrap();
    let ex_a = Arc::new(Executor::with_config(Arc::new(a), one_slot()));
    let ex_b = Arc::new(Executor::with_config(Arc::new(b), one_slot()));
    let ctx = Context::new()
        .with(ExecutorA(Arc::clone(&ex_a)))
        .with(ExecutorB(Arc::clone(&ex_b)));
    for (tool, answer) in [
        ("to_b", json!("done")),
        ("seq_to_b", json!("sequential_reentry")),
    ] {
        let o = tokio::time::timeout(BOUND, ex_a.execute(&call("top", tool, "{}"), &ctx))
            .await
            .unwrap_or_else(|_| panic!("{tool}: A → B → A deadlocked"));
        assert_eq!(o.output, Some(answer), "{tool}: {o:?}");
    }
}

/// Regression: a `sequential` tool whose call reached, through another
/// executor sharing its registry, a call of itself waited for the lock
/// its own ancestor held (the lock is the registry's, shared by its
/// executors). It is refused at once.
#[tokio::test(start_paused = true)]
async fn a_sequential_tool_reached_again_through_another_executor_is_refused() {
    let r = Arc::new(Registry::new());
    r.register_with(hop("seq", false, "seq"), patient().sequential(true))
        .unwrap();
    let ex_a = Arc::new(Executor::new(Arc::clone(&r)));
    let ex_b = Arc::new(Executor::new(r));
    let ctx = Context::new()
        .with(ExecutorA(Arc::clone(&ex_a)))
        .with(ExecutorB(Arc::clone(&ex_b)));
    // `seq` on A calls `seq` on B, which would call it on B again.
    let o = tokio::time::timeout(BOUND, ex_a.execute(&call("top", "seq", "{}"), &ctx))
        .await
        .expect("the nested call waited for its ancestor's lock");
    assert_eq!(o.output, Some(json!("sequential_reentry")), "{o:?}");
}

/// The circle of two executors sharing a registry (README, "The runtime
/// library"): `seq` (`sequential`) on executor A calls `leaf` on executor
/// B, whose one slot is held by `outer`, whose nested call of `seq` waits
/// for the lock `seq`'s call on A holds. `seq` runs under `policy`.
fn across_executors(policy: ToolPolicy) -> (Arc<Executor>, Arc<Executor>, Context) {
    let r = Arc::new(Registry::new());
    r.register_with(caller("leaf"), patient()).unwrap();
    r.register_with(hop("seq", false, "leaf"), policy.sequential(true))
        .unwrap();
    r.register_with(outer(), patient()).unwrap();
    let ex_a = Arc::new(Executor::with_config(
        Arc::clone(&r),
        ExecutorConfig::default().with_seed(42),
    ));
    let ex_b = Arc::new(Executor::with_config(
        r,
        ExecutorConfig::default().with_concurrency(1).unwrap(),
    ));
    // `outer` calls on the executor in the context: B.
    let ctx = Context::new()
        .with(Arc::clone(&ex_b))
        .with(ExecutorB(Arc::clone(&ex_b)));
    (ex_a, ex_b, ctx)
}

/// The documented limit: a circle through two executors is not refused.
/// `seq`'s call on A holds its lock and waits (through its tool's call of
/// `leaf`) for B's one slot; `outer` holds that slot and waits for its
/// nested call of `seq`, queued for the lock. It lasts until a timeout in
/// it fires: `seq`'s attempt fails `timeout` after its 30 s, and each of
/// its retries, the lock still held, meets the circle again; then the
/// nested call runs. With no timeout anywhere it lasts forever.
#[tokio::test(start_paused = true)]
async fn a_circle_through_two_executors_lasts_until_a_timeout_in_it() {
    let thirty = TimeoutPolicy::try_new(30 * SEC).unwrap();
    for (attempts, retry) in [(1, RetryPolicy::none()), (4, RetryPolicy::default())] {
        let policy = ToolPolicy::new().timeout(thirty).retry(retry).no_breaker();
        let (ex_a, ex_b, ctx) = across_executors(policy);
        let parent = call("parent", "outer", r#"{"tool": "seq", "wait_ms": 10}"#);
        let top = call("top", "seq", "{}");
        let start = Instant::now();
        let (parent, top) = tokio::time::timeout(BOUND, async {
            tokio::join!(ex_b.execute(&parent, &ctx), ex_a.execute(&top, &ctx))
        })
        .await
        .expect("no timeout ended the circle");
        assert_eq!(top.status, Status::Timeout, "{top:?}");
        assert_eq!(top.attempts, attempts, "{top:?}");
        let waited = start.elapsed();
        assert!(
            waited >= attempts * thirty.duration() && waited < attempts * thirty.duration() + SEC,
            "{attempts} attempt(s): {waited:?}"
        );
        // Then the nested call got the lock, and its `leaf` ran in the
        // parent's slot.
        assert_eq!(parent.output, Some(json!(["done"])), "{parent:?}");
    }
    // No timeout: each waits for another, forever.
    let (ex_a, ex_b, ctx) = across_executors(patient());
    let parent = call("parent", "outer", r#"{"tool": "seq", "wait_ms": 10}"#);
    let top = call("top", "seq", "{}");
    let hung = tokio::time::timeout(BOUND, async {
        tokio::join!(ex_b.execute(&parent, &ctx), ex_a.execute(&top, &ctx))
    })
    .await;
    assert!(hung.is_err(), "the circle ended: {hung:?}");
}
