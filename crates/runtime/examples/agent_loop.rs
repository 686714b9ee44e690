//! A scripted model drives tools that fail in every way the runtime knows:
//! missing files, bad arguments, unknown tools, rate limits, network
//! errors, timeouts, panics, an open circuit breaker and a fatal
//! authentication failure.
//!
//! stdout shows what the model is sent back (the tool-result message in
//! the Anthropic Messages dialect); stderr shows what the operator logs.
//!
//! ```text
//! cargo run -p toolwarden-runtime --example agent_loop
//! ```

use std::{
    collections::HashMap,
    io,
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolwarden_runtime::{
    BoxError, BreakerConfig, Context, Dialect, Executor, ExecutorConfig, Fallback,
    HealthThresholds, HttpError, Registry, RetryPolicy, TimeoutPolicy, ToolError, ToolPolicy,
    WorkingDir, tool_fn, typed_fn,
};

/// The files the pretend file system holds.
struct Files(HashMap<&'static str, &'static str>);

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// Path relative to the working directory.
    path: String,
    /// Maximum number of lines.
    #[schemars(range(min = 1))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
struct QueryArgs {
    /// What to look for.
    query: String,
}

fn registry() -> Result<Registry, Box<dyn std::error::Error>> {
    let r = Registry::new();

    r.register(typed_fn(
        "read_file",
        "Read a text file from the working directory.",
        |args: ReadArgs, ctx: Context| async move {
            let files = ctx.get::<Files>().ok_or("no file system in the context")?;
            let dir = ctx
                .get::<WorkingDir>()
                .map(|d| d.0.display().to_string())
                .unwrap_or_default();
            match files.0.get(args.path.as_str()) {
                Some(text) => {
                    let limit = args.limit.unwrap_or(u32::MAX) as usize;
                    Ok::<_, BoxError>(text.lines().take(limit).collect::<Vec<_>>().join("\n"))
                }
                None => Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("open {dir}/{}: no such file", args.path),
                )
                .into()),
            }
        },
    ))?;
    r.alias("cat", "read_file")?;

    // Rate limited once (Retry-After: 1 s), then fine.
    let hits = Arc::new(AtomicU32::new(0));
    r.register(typed_fn(
        "search",
        "Search the web.",
        move |args: QueryArgs, _ctx| {
            let n = hits.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    Err(BoxError::from(
                        HttpError::new(429)
                            .with_url("https://search.example.com/v1")
                            .with_retry_after(Some(Duration::from_secs(1))),
                    ))
                } else {
                    Ok(json!([format!("result for {}", args.query)]))
                }
            }
        },
    ))?;

    // The network is down: retried 4 times, then the model is told.
    r.register(typed_fn(
        "fetch_url",
        "Fetch a web page.",
        |_args: QueryArgs, _ctx| async {
            Err::<Value, _>(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "connect to 203.0.113.9:443 refused",
            ))
        },
    ))?;

    // Hangs; its timeout is 1 s and it is not retried.
    r.register_with(
        tool_fn(
            "slow_report",
            "Build a report.",
            json!({"type": "object"}),
            |_a, _c| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok::<_, BoxError>(Value::Null)
            },
        ),
        ToolPolicy::new()
            .timeout(TimeoutPolicy::try_new(Duration::from_secs(1))?)
            .retry(RetryPolicy::none()),
    )?;

    // A bug: panics.
    r.register(tool_fn(
        "summarize",
        "Summarize text.",
        json!({"type": "object"}),
        |_a, _c| async {
            let empty: Vec<&str> = Vec::new();
            Ok::<_, BoxError>(json!(empty[0]))
        },
    ))?;

    // Fails every time; its breaker opens after 2 failures; a cache answers
    // once the live service is down.
    r.register(tool_fn(
        "weather_cache",
        "Cached weather.",
        json!({"type": "object"}),
        |_a, _c| async { Ok::<_, BoxError>(json!({"forecast": "sunny (cached 2 h ago)"})) },
    ))?;
    r.register_with(
        typed_fn(
            "weather",
            "Current weather.",
            |_args: QueryArgs, _ctx| async {
                Err::<Value, _>(ToolError::new(
                    toolwarden_core::ErrorKind::Internal,
                    "upstream returned garbage",
                ))
            },
        ),
        ToolPolicy::new()
            .retry(RetryPolicy::none())
            .breaker(BreakerConfig::try_new(2, Duration::from_secs(30), 1)?)
            .fallback(Fallback::tool("weather_cache")),
    )?;

    // The deploy token expired: fatal.
    r.register(tool_fn(
        "deploy",
        "Deploy the service.",
        json!({"type": "object"}),
        |_a, _c| async {
            Err::<Value, _>(
                HttpError::new(401)
                    .with_url("https://ci.example.com/api/deploy")
                    .with_message("token expired at 2026-11-22T01:00:00Z"),
            )
        },
    ))?;

    r.register(tool_fn(
        "wipe_disk",
        "Dangerous.",
        json!({"type": "object"}),
        |_a, _c| async { Ok::<_, BoxError>(Value::Null) },
    ))?;
    r.disable("wipe_disk")?;
    Ok(r)
}

/// An Anthropic Messages response that calls these tools.
fn turn(n: usize, calls: &[(&str, Value)]) -> Vec<u8> {
    let content: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"type": "tool_use", "id": format!("toolu_{n}{i}"), "name": name, "input": input})
        })
        .collect();
    let body = json!({
        "id": format!("msg_{n}"),
        "type": "message",
        "role": "assistant",
        "model": "claude-scripted",
        "content": content,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 100, "output_tokens": 20}
    });
    body.to_string().into_bytes()
}

fn script() -> Vec<Vec<u8>> {
    vec![
        turn(
            1,
            &[
                ("read_file", json!({"path": "README.md", "limit": 1})),
                ("cat", json!({"path": "notes/todo.txt"})),
                ("read_file", json!({"limit": 0})),
                ("delete_everything", json!({})),
                ("wipe_disk", json!({})),
            ],
        ),
        turn(
            2,
            &[
                ("search", json!({"query": "rust circuit breaker"})),
                ("fetch_url", json!({"query": "https://example.com"})),
                ("slow_report", json!({})),
                ("summarize", json!({"text": "..."})),
            ],
        ),
        turn(
            3,
            &[
                ("weather", json!({"query": "Oslo"})),
                ("weather", json!({"query": "Bergen"})),
                ("weather", json!({"query": "Tromsø"})),
            ],
        ),
        turn(
            4,
            &[
                ("deploy", json!({})),
                ("read_file", json!({"path": "README.md"})),
            ],
        ),
        turn(5, &[("read_file", json!({"path": "never reached"}))]),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_max_level(tracing::Level::DEBUG)
        .init();
    // The runtime catches the `summarize` tool's panic and logs it; keep
    // the default hook's backtrace out of the way.
    std::panic::set_hook(Box::new(|info| eprintln!("(panic hook) {info}")));

    let registry = Arc::new(registry()?);
    println!(
        "tools field (anthropic):\n{}\n",
        serde_json::to_string_pretty(&registry.definitions(Dialect::Anthropic))?
    );
    let executor = Executor::with_config(registry.clone(), ExecutorConfig::default().with_seed(7));
    let ctx = Context::builder()
        .with(WorkingDir("/srv/project".into()))
        .with(Files(HashMap::from([(
            "README.md",
            "# Project\nIt works.",
        )])))
        .build();

    for (i, body) in script().iter().enumerate() {
        println!("=== model turn {} ===", i + 1);
        let step = executor.step(Dialect::Anthropic, body, &ctx).await?;
        for o in &step.outcomes {
            let shown = o
                .error
                .as_ref()
                .map_or_else(|| o.model_text(), |e| e.model_message.clone());
            let via = o
                .fallback_used
                .as_deref()
                .map(|f| format!(", fallback {f}"))
                .unwrap_or_default();
            println!(
                "  {} {} [{:?}, {} attempt(s){via}]: {}",
                o.call_id, o.tool, o.status, o.attempts, shown
            );
        }
        println!(
            "appended to the conversation:\n{}",
            serde_json::to_string_pretty(&step.messages)?
        );
        if let Some(fatal) = step.fatal {
            println!(
                "\nFATAL — the run stops and the application is told: {}",
                fatal.message
            );
            break;
        }
    }

    println!("\n=== operator view ===");
    for s in registry.stats() {
        println!(
            "{:<14} calls {:>2} ok {:>2} failed {:>2} retries {:>2} p50 {:?} breaker {:?} trips {}",
            s.name,
            s.calls,
            s.successes,
            s.failures,
            s.retries,
            s.latency_p50,
            s.breaker.map(|b| b.as_str()),
            s.breaker_trips
        );
    }
    println!("error summary: {:?}", registry.error_summary());
    for t in registry.health(&HealthThresholds::default()).unhealthy() {
        println!("unhealthy: {} — {}", t.name, t.reasons.join("; "));
    }
    Ok(())
}
