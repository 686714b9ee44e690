//! `toolwarden-bench --soak SECONDS`: sustained load through all four
//! dialects, streaming and not, against a gateway child recording to
//! SQLite, or to the empty database `TOOLWARDEN_SOAK_DATABASE` names
//! (PostgreSQL) (issue 14). Every 10 s it prints the gateway's RSS, the
//! recorder's backlog, written and dropped counts (`/healthz`) and the
//! load's rate, errors and worst latency; at the end it drains the
//! recorder, stops the gateway (SIGTERM-equivalent graceful shutdown) and
//! checks the database's counts against what was sent. Exit status 1 when
//! any check fails: an error or a request over [`SLOW`], a dropped event,
//! a count that is not exact, or (runs of 2 minutes or more) an RSS at the
//! end more than 10 % above the RSS after the first minute.
//!
//! Each request has its own session (`x-session-id`) and so its own call
//! ids: every request adds exactly one request row and, per result in its
//! body, one result (one of the four failed); the mock answers tool
//! results with text (no call of its own).

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use crate::{
    bodies, child,
    load::{Conn, Shape},
};
use toolwarden_mock_provider::{MockOptions, MockProvider};

/// A request slower than this counts as a failure (wrk's default timeout
/// is 2 s; the gateway's p99 is well under 10 ms here).
pub const SLOW: Duration = Duration::from_secs(1);
/// How long the gateway idles after the load before its RSS is read: the
/// writer's cache is given back after `database_writer_idle_ms` without
/// writes (5 s: `toolwarden_store::DEFAULT_SQLITE_WRITER_IDLE`), and
/// jemalloc purges freed pages ~1 s later.
pub const IDLE_SETTLE: Duration = Duration::from_secs(7);
/// How often the gateway is sampled.
const SAMPLE_EVERY: Duration = Duration::from_secs(10);
/// Results in each request body, one of them failed (see `bodies`).
const RESULTS_PER_REQUEST: u64 = 4;

/// What the load did, shared by its tasks.
#[derive(Debug, Default)]
struct Tally {
    ok: AtomicU64,
    /// Of which streaming.
    streaming: AtomicU64,
    errors: AtomicU64,
    slow: AtomicU64,
    /// Worst latency in the current sample window, µs.
    worst_us: AtomicU64,
}

/// One line of the report.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at_s: u64,
    rss_mb: f64,
    backlog: u64,
    written: u64,
    dropped: u64,
    rate: f64,
    worst_ms: f64,
}

/// The database the soak's gateway records to, instead of a fresh SQLite
/// file in a temporary directory: a URL of an empty database.
pub const SOAK_DATABASE_VAR: &str = "TOOLWARDEN_SOAK_DATABASE";

/// A path for the soak's gateway to write its JSONL log to (bounded as
/// `TOOLWARDEN_JSONL_ROTATE_MIB` and `TOOLWARDEN_JSONL_KEEP` say); unset,
/// it writes none.
pub const SOAK_JSONL_VAR: &str = "TOOLWARDEN_SOAK_JSONL";

/// Run the soak for `seconds` with `conns` connections.
pub async fn run(seconds: u64, conns: usize) -> Result<(), String> {
    let mock = MockProvider::start(MockOptions {
        record: false,
        ..MockOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    // A fresh SQLite file, or the empty database `SOAK_DATABASE_VAR` names
    // (PostgreSQL: the end check compares everything it holds with what
    // was sent).
    let db = match std::env::var(SOAK_DATABASE_VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => format!("sqlite://{}", dir.path().join("soak.db").display()),
    };
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let jsonl = std::env::var(SOAK_JSONL_VAR).ok().filter(|p| !p.is_empty());
    let gw =
        child::GatewayChild::spawn(&exe, &mock.base_url(), &db, jsonl.as_deref().unwrap_or("-"))?;
    let shapes = Arc::new(shapes());
    println!(
        "soak: {seconds} s, {conns} connections, {} request shapes (4 dialects × streaming and not), gateway pid {}",
        shapes.len(),
        gw.pid()
    );
    println!("| t (s) | RSS MB | backlog | written | dropped | req/s | worst ms |");
    println!("|---|---|---|---|---|---|---|");

    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for c in 0..conns {
        let (shapes, tally, stop) = (shapes.clone(), tally.clone(), stop.clone());
        let addr = gw.addr;
        tasks.push(tokio::spawn(async move {
            drive(addr, c, &shapes, &tally, &stop).await
        }));
    }

    let start = Instant::now();
    let mut samples: Vec<Sample> = Vec::new();
    let mut last_ok = 0;
    let mut next = start + SAMPLE_EVERY;
    while start.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep_until(next.into()).await;
        next += SAMPLE_EVERY;
        let ok = tally.ok.load(Ordering::Relaxed);
        let worst_ms = tally.worst_us.swap(0, Ordering::Relaxed) as f64 / 1e3;
        let h = healthz(gw.addr).await.unwrap_or_default();
        let s = Sample {
            at_s: start.elapsed().as_secs_f64().round() as u64,
            rss_mb: gw.rss_bytes() as f64 / (1024.0 * 1024.0),
            backlog: h.backlog,
            written: h.written,
            dropped: h.dropped,
            rate: (ok - last_ok) as f64 / SAMPLE_EVERY.as_secs_f64(),
            worst_ms,
        };
        last_ok = ok;
        println!(
            "| {} | {:.1} | {} | {} | {} | {:.0} | {:.1} |",
            s.at_s, s.rss_mb, s.backlog, s.written, s.dropped, s.rate, s.worst_ms
        );
        samples.push(s);
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.map_err(|e| format!("load task: {e}"))??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let sent = tally.ok.load(Ordering::Relaxed);
    let errors = tally.errors.load(Ordering::Relaxed);
    let slow = tally.slow.load(Ordering::Relaxed);

    // Drained, then the RSS once the load is over.
    let mut drained = Health::default();
    for _ in 0..100 {
        drained = healthz(gw.addr).await?;
        if drained.backlog == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rss_drained = gw.rss_bytes() as f64 / (1024.0 * 1024.0);
    // What an idle gateway keeps: the recorder gives its page cache back
    // after `database_writer_idle_ms` without writes, jemalloc purges
    // about a second later.
    tokio::time::sleep(IDLE_SETTLE).await;
    let rss_after = gw.rss_bytes() as f64 / (1024.0 * 1024.0);
    let peak = gw.peak_rss_bytes() as f64 / (1024.0 * 1024.0);
    let upstream = mock.request_count();
    gw.stop();
    let counts = crate::soak_check::counts(&db).await?;

    let mut failures = Vec::new();
    println!();
    println!(
        "sent {sent} requests in {elapsed:.0} s ({:.0} req/s); errors {errors}; over {} ms: {slow}; the mock answered {upstream}",
        sent as f64 / elapsed,
        SLOW.as_millis()
    );
    if errors > 0 || slow > 0 {
        failures.push(format!("{errors} errors, {slow} requests over {SLOW:?}"));
    }
    if upstream != sent {
        failures.push(format!(
            "the mock answered {upstream} requests, the load sent {sent}"
        ));
    }
    println!(
        "recorder: {} written, {} dropped, {} write errors, backlog {}",
        drained.written, drained.dropped, drained.write_errors, drained.backlog
    );
    if drained.dropped > 0 {
        failures.push(format!("{} events dropped", drained.dropped));
    }
    let expected = crate::soak_check::Counts {
        requests: sent,
        streaming: tally.streaming.load(Ordering::Relaxed),
        // Each body's results; the mock answers tool results with text.
        tool_rows: sent * RESULTS_PER_REQUEST,
        failed: sent,
    };
    println!("database: {counts:?}; expected {expected:?}");
    if counts != expected {
        failures.push("the database's counts are not what was sent".into());
    }
    if let Some(path) = &jsonl {
        println!("jsonl: {}", jsonl_files(std::path::Path::new(path)));
    }
    let first_minute = samples.iter().find(|s| s.at_s >= 60).map(|s| s.rss_mb);
    let end = samples.last().map(|s| s.rss_mb);
    println!(
        "RSS: after 1 min {}, at the end of the load {}, drained {rss_drained:.1} MB, after {} s idle {rss_after:.1} MB, peak {peak:.1} MB",
        first_minute.map_or("–".into(), |m| format!("{m:.1} MB")),
        end.map_or("–".into(), |m| format!("{m:.1} MB")),
        IDLE_SETTLE.as_secs(),
    );
    if let (Some(first), Some(end), true) = (first_minute, end, seconds >= 120) {
        let growth = end / first - 1.0;
        println!("RSS growth from 1 min to the end: {:+.1} %", growth * 100.0);
        if growth > 0.10 {
            failures.push(format!(
                "RSS grew {:.1} % after the first minute",
                growth * 100.0
            ));
        }
    }
    if failures.is_empty() {
        println!("soak: PASS");
        Ok(())
    } else {
        Err(format!("soak: FAIL: {}", failures.join("; ")))
    }
}

/// The JSONL log's files (`PATH`, `PATH.1`, …) and their sizes.
fn jsonl_files(path: &std::path::Path) -> String {
    let log = toolwarden_store::JsonlLog::unbounded(path);
    let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).ok();
    let mut files = vec![size(path).unwrap_or(0)];
    files.extend((1..).map_while(|n| size(&log.rotated(n))));
    let mb = |b: u64| b as f64 / 1e6;
    format!(
        "{} files, {:.1} MB in all, the largest {:.1} MB",
        files.len(),
        mb(files.iter().sum()),
        mb(files.iter().copied().max().unwrap_or(0)),
    )
}

/// The eight request shapes, each dialect non-streaming then streaming.
fn shapes() -> Vec<Shape> {
    let texts = bodies::result_texts();
    let json = ("content-type", "application/json".to_string());
    let anthropic = vec![
        ("x-api-key", "sk-ant-soak".to_string()),
        ("anthropic-version", "2023-06-01".to_string()),
        json.clone(),
    ];
    let openai = vec![
        ("authorization", "Bearer sk-soak".to_string()),
        json.clone(),
    ];
    let gemini = vec![("x-goog-api-key", "soak".to_string()), json];
    let responses = bodies::responses(&texts);
    let gemini_body = bodies::gemini(&texts);
    vec![
        Shape::new(
            "/v1/messages",
            anthropic.clone(),
            bodies::anthropic(&texts, false),
        ),
        Shape::new("/v1/messages", anthropic, bodies::anthropic(&texts, true)),
        Shape::new(
            "/v1/chat/completions",
            openai.clone(),
            bodies::chat(&texts, false),
        ),
        Shape::new(
            "/v1/chat/completions",
            openai.clone(),
            bodies::chat(&texts, true),
        ),
        Shape::new("/v1/responses", openai.clone(), responses.clone()),
        Shape::new("/v1/responses", openai, bodies::streaming(&responses)),
        Shape::new(
            "/v1beta/models/gemini-2.5-flash:generateContent",
            gemini.clone(),
            gemini_body.clone(),
        ),
        Shape::new(
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            gemini,
            gemini_body,
        ),
    ]
}

/// One connection's loop: every request a new session, the shapes in turn.
async fn drive(
    addr: SocketAddr,
    c: usize,
    shapes: &[Shape],
    tally: &Tally,
    stop: &AtomicBool,
) -> Result<(), String> {
    let mut conn = Conn::open(addr).await?;
    let mut k = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let i = (c + k) % shapes.len();
        let shape = &shapes[i];
        // `shapes` alternates: non-streaming, streaming.
        let streaming = i % 2 == 1;
        let session = format!("soak-{c}-{k}");
        let t = Instant::now();
        match conn.roundtrip(shape, Some(&session)).await {
            Ok(_) => {
                tally.ok.fetch_add(1, Ordering::Relaxed);
                if streaming {
                    tally.streaming.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) => {
                if tally.errors.fetch_add(1, Ordering::Relaxed) < 5 {
                    eprintln!("soak: request {c}/{k}: {e}");
                }
                conn = Conn::open(addr).await?;
            }
        }
        let took = t.elapsed();
        if took > SLOW {
            tally.slow.fetch_add(1, Ordering::Relaxed);
        }
        tally
            .worst_us
            .fetch_max(took.as_micros() as u64, Ordering::Relaxed);
        k += 1;
    }
    Ok(())
}

/// The recorder's numbers from `/healthz`.
#[derive(Debug, Default, Clone, Copy)]
struct Health {
    written: u64,
    dropped: u64,
    write_errors: u64,
    backlog: u64,
}

async fn healthz(addr: SocketAddr) -> Result<Health, String> {
    let body = crate::admin::get(addr, "/healthz").await?;
    let v: serde_json::Value =
        serde_json::from_str(&body).map_err(|e| format!("/healthz: {e}: {body}"))?;
    let n = |k: &str| v["recorder"][k].as_u64().unwrap_or(0);
    Ok(Health {
        written: n("events_written"),
        dropped: n("events_dropped"),
        write_errors: n("write_errors"),
        backlog: n("backlog"),
    })
}
