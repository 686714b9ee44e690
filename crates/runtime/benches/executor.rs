//! Executor overhead against calling the tool function directly, measured
//! in the same run.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/tgt-runtime cargo bench -p toolwarden-runtime --bench executor
//! ```
//!
//! 1. One successful call of a no-op tool with a 3-property schema, through
//!    `Executor::execute` (parse, validation, loop guard, breaker, timeout,
//!    panic guard, retries policy, metrics, outcome) vs the direct call:
//!    (a) parse the same argument text, then call the function; (b) call the
//!    function with already-parsed arguments.
//! 2. A batch of 1,000 no-op calls (`execute_batch`) vs 1,000 direct calls.
//! 3. Memory: RSS and the metrics' size after 10 million calls (1 % failing).

use std::{
    hint::black_box,
    sync::Arc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use toolwarden_core::ToolCall;
use toolwarden_runtime::{BoxError, Context, Executor, Registry, tool_fn};

const ROUNDS: usize = 7;

async fn noop(args: Value, _ctx: Context) -> Result<Value, BoxError> {
    if args.get("verbose") == Some(&Value::Bool(true)) {
        return Err("asked to fail".into());
    }
    black_box(&args);
    Ok(Value::Null)
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1},
            "verbose": {"type": "boolean"}
        },
        "required": ["path"]
    })
}

fn executor() -> Executor {
    let registry = Registry::new();
    registry
        .register(tool_fn("noop", "Does nothing.", schema(), noop))
        .expect("valid tool");
    Executor::new(Arc::new(registry))
}

/// The median of `ROUNDS` timings of `f`, which runs `n` iterations.
fn median_per_iter(n: u32, mut f: impl FnMut() -> Duration) -> Duration {
    let mut t: Vec<Duration> = (0..ROUNDS).map(|_| f()).collect();
    t.sort();
    t[ROUNDS / 2] / n
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn ns(d: Duration) -> f64 {
    d.as_secs_f64() * 1e9
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let ex = executor();
    let ctx = Context::new();
    let args = r#"{"path": "src/main.rs", "limit": 20, "verbose": false}"#;
    let call = ToolCall {
        id: "call_0001".into(),
        name: "noop".into(),
        arguments: args.into(),
    };
    let parsed: Value = serde_json::from_str(args).expect("json");

    {
        let f = ex.execute(&call, &ctx);
        println!("(execute future: {} bytes)", std::mem::size_of_val(&f));
    }

    // --- 1. one call ---
    let n = 200_000u32;
    rt.block_on(async {
        for _ in 0..n {
            black_box(ex.execute(&call, &ctx).await);
        }
    });
    let direct_parse = median_per_iter(n, || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                let v: Value = serde_json::from_str(black_box(args)).expect("json");
                black_box(noop(v, ctx.clone()).await.ok());
            }
            start.elapsed()
        })
    });
    let direct_value = median_per_iter(n, || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                black_box(noop(black_box(parsed.clone()), ctx.clone()).await.ok());
            }
            start.elapsed()
        })
    });
    let executed = median_per_iter(n, || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                black_box(ex.execute(black_box(&call), &ctx).await);
            }
            start.elapsed()
        })
    });
    println!(
        "== one successful call of a no-op tool (3-property schema), median of {ROUNDS} x {n}"
    );
    println!(
        "direct: parse + call         {:>9.0} ns/call",
        ns(direct_parse)
    );
    println!(
        "direct: call with parsed args{:>9.0} ns/call",
        ns(direct_value)
    );
    println!("executor.execute             {:>9.0} ns/call", ns(executed));
    println!(
        "overhead vs parse + call     {:>9.0} ns/call  (ratio {:.2}x; target <= 2000 ns)",
        ns(executed) - ns(direct_parse),
        ns(executed) / ns(direct_parse)
    );
    println!(
        "overhead vs call only        {:>9.0} ns/call  (ratio {:.2}x)",
        ns(executed) - ns(direct_value),
        ns(executed) / ns(direct_value)
    );

    // What one clock read costs here: the executor reads tokio's clock 2
    // times per call, and benches are built with the dev-dependency
    // feature `test-util`, whose pausable clock is slower than in a
    // normal build.
    let clock = median_per_iter(n, || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                black_box(tokio::time::Instant::now());
            }
            start.elapsed()
        })
    });
    println!("(one tokio clock read here: {:.0} ns)", ns(clock));

    // --- 2. a batch of 1,000 ---
    let calls: Vec<ToolCall> = (0..1000)
        .map(|i| ToolCall {
            id: format!("call_{i:04}"),
            name: "noop".into(),
            arguments: args.into(),
        })
        .collect();
    let reps = 100u32;
    let batch = median_per_iter(reps, || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..reps {
                let out = ex.execute_batch(black_box(&calls), &ctx).await;
                assert_eq!(out.len(), 1000);
                black_box(out);
            }
            start.elapsed()
        })
    });
    let direct_1000 = median_per_iter(reps, || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..reps {
                for c in &calls {
                    let v: Value = serde_json::from_str(black_box(&c.arguments)).expect("json");
                    black_box(noop(v, ctx.clone()).await.ok());
                }
            }
            start.elapsed()
        })
    });
    println!("== a batch of 1,000 no-op calls, median of {ROUNDS} x {reps}");
    println!(
        "1,000 direct calls (parse + call) {:>9.1} us",
        ns(direct_1000) / 1e3
    );
    println!(
        "execute_batch(1,000)              {:>9.1} us",
        ns(batch) / 1e3
    );
    println!(
        "ratio {:.2}x, overhead {:.0} ns per call",
        ns(batch) / ns(direct_1000),
        (ns(batch) - ns(direct_1000)) / 1000.0
    );

    // --- 3. memory after 10 million calls ---
    let ex = executor();
    let fail = ToolCall {
        id: "call_fail".into(),
        name: "noop".into(),
        arguments: r#"{"path": "x", "verbose": true}"#.into(),
    };
    let rss_before = rss_kib();
    let start = Instant::now();
    let mut rss_1m = None;
    rt.block_on(async {
        for i in 0..10_000_000u32 {
            let c = if i % 100 == 99 { &fail } else { &call };
            black_box(ex.execute(c, &ctx).await);
            if i == 999_999 {
                rss_1m = rss_kib();
            }
        }
    });
    let rss_after = rss_kib();
    let stats = ex.registry().stats_of("noop").expect("registered");
    println!(
        "== memory, one tool, 10,000,000 calls (1 % failing) in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    println!(
        "calls {} failures {} p50 {:?} p95 {:?} recent errors kept {}",
        stats.calls,
        stats.failures,
        stats.latency_p50,
        stats.latency_p95,
        stats.recent_errors.len()
    );
    println!(
        "metrics heap per tool (fixed cap) {} bytes",
        ex.registry().max_metrics_bytes_per_tool()
    );
    match (rss_before, rss_1m, rss_after) {
        (Some(b), Some(m), Some(a)) => println!(
            "RSS before {b} KiB, after 1M calls {m} KiB, after 10M calls {a} KiB (growth 1M→10M: {} KiB)",
            a as i64 - m as i64
        ),
        _ => println!("RSS unavailable (no /proc/self/status)"),
    }
}
