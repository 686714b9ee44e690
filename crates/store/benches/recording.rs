//! Recording throughput (events/s) through the real `Recorder`: into SQLite
//! (one recorder, then two on one file) and into PostgreSQL (two recorders
//! at once, like two gateways; only when `TOOLWARDEN_TEST_POSTGRES_URL` is
//! set), batched. Baseline in the same run: a Recorder with no sink (queue
//! and writer task only). Event mix per turn: 1 request, 3 tool results
//! (names resolved by the store from the previous turn's calls), 3 calls.
//! Then retention on each backend: one recorder alone, and the same while
//! a retention pass (paced as the gateway paces it) deletes as much
//! history, with what the pass did and its longest step.
//!
//! ```text
//! URL=$(.ci/pg.sh start)
//! TOOLWARDEN_TEST_POSTGRES_URL=$URL CARGO_TARGET_DIR=... cargo bench -p toolwarden-store --bench recording
//! ```
//! `TW_BENCH_TURNS` sets turns per recorder (default 20000 = 140k events).
//! `TW_BENCH_SHORT_IDS=1` gives calls ids shorter than 12 bytes, which the
//! store matches within their session only: a new call then costs no
//! lookup of its own across sessions (one round trip each), so the run
//! measures the batched statements alone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Connection;
use toolwarden_store::*;

const TURNS_PER_SESSION: u64 = 8;
/// When the events of [`events`] start (unix ms).
const HISTORY_FROM_MS: i64 = 1_700_000_000_000;

fn events(gw: usize, turns: u64) -> Vec<Event> {
    events_from(gw, turns, HISTORY_FROM_MS)
}

/// [`events`] with the first turn at `from_ms` and the next ones 10 ms apart.
fn events_from(gw: usize, turns: u64, from_ms: i64) -> Vec<Event> {
    let short = std::env::var_os("TW_BENCH_SHORT_IDS").is_some();
    // `t{n}_{k}` stays under 12 bytes up to 10^8 turns.
    let call_id = |n: u64, k: u32| {
        if short {
            format!("t{n}_{k}")
        } else {
            format!("toolu_{gw}_{n}_{k}")
        }
    };
    let mut out = Vec::with_capacity(turns as usize * 7);
    for n in 0..turns {
        let session = format!("bench{gw}_{}", n / TURNS_PER_SESSION);
        let turn = n % TURNS_PER_SESSION;
        let req = format!("{gw:02}{n:030x}");
        let at = from_ms + (n as i64) * 10;
        out.push(Event::Request(RequestRecord {
            request_id: req.clone(),
            session_id: session.clone(),
            session_source: "fingerprint".into(),
            at_ms: at,
            provider: "anthropic".into(),
            dialect: Some("anthropic".into()),
            path: "/v1/messages".into(),
            model: Some("claude-test".into()),
            status: 200,
            streaming: n % 2 == 0,
            upstream_latency_ms: 840.0,
            first_byte_ms: Some(120.0),
            overhead_us: 31.0,
            input_tokens: Some(5000),
            output_tokens: Some(300),
            response_id: Some(format!("msg_{req}")),
            repairs: vec![],
            repair_mode: "fix".into(),
            parse_error: None,
            calls_incomplete: false,
            error: None,
            trace_parent: None,
            trace_state: None,
            server_address: None,
            server_port: None,
        }));
        if turn > 0 {
            for k in 0..3u32 {
                let failed = (n + u64::from(k)) % 7 == 0;
                out.push(Event::ToolResult(ToolResultRecord {
                    request_id: req.clone(),
                    session_id: session.clone(),
                    provider: "anthropic".into(),
                    model: Some("claude-test".into()),
                    call_id: call_id(n - 1, k),
                    message_index: (turn * 2 - 1) as u32 * 10 + k,
                    tool: None,
                    failed,
                    basis: if failed { "explicit" } else { "none" }.into(),
                    content_bytes: 2048,
                    excerpt: failed.then(|| "Error: file not found: /tmp/x".to_owned()),
                    at_ms: at,
                    exec_ms: None,
                    previous_response_id: None,
                    answers: None,
                    trace_parent: None,
                    trace_state: None,
                    latest_of_its_id: false,
                    first_turn: None,
                }));
            }
        }
        for k in 0..3u32 {
            out.push(Event::ToolCall(ToolCallRecord {
                threaded: false,
                request_id: req.clone(),
                session_id: session.clone(),
                provider: "anthropic".into(),
                model: Some("claude-test".into()),
                response_id: Some(format!("msg_{req}")),
                dialect: Some("anthropic".into()),
                call_index: k,
                call_id: call_id(n, k),
                tool: ["Read", "Bash", "Edit"][k as usize].into(),
                arguments_bytes: 180,
                at_ms: at + 5,
                turn: None,
            }));
        }
    }
    out
}

/// CPU time (user + system) of the whole process so far, from
/// `/proc/self/stat` (clock ticks of 10 ms; the runs last seconds), or
/// `None` where there is no procfs.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the line, the 12th and 13th after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ').skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// Throughput and cost of one run.
struct Measured {
    events_per_s: f64,
    /// Process CPU time per event, µs (NaN without procfs).
    cpu_us: f64,
}

impl std::fmt::Display for Measured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:>10.0} events/s {:>7.2} µs CPU/event",
            self.events_per_s, self.cpu_us
        )
    }
}

/// Feeds each event list through its own Recorder concurrently (pacing the
/// producers so the queue never overflows): events/s and process CPU per event.
async fn run(stores: Vec<Option<Store>>, lists: Vec<Vec<Event>>) -> Measured {
    let total: usize = lists.iter().map(Vec::len).sum();
    let cpu0 = process_cpu();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (store, list) in stores.into_iter().zip(lists) {
        tasks.push(tokio::spawn(async move {
            let rec = Recorder::start(store, RecorderOptions::default(), Arc::new(NoopObserver));
            for (i, e) in list.into_iter().enumerate() {
                rec.record(e);
                if i % 1024 == 0 {
                    while rec.counters().backlog > 32_768 {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
            }
            rec.shutdown().await;
            rec.counters()
        }));
    }
    for t in tasks {
        let c = t.await.expect("recorder task");
        assert_eq!((c.events_dropped, c.write_errors), (0, 0), "{c:?}");
    }
    let wall = start.elapsed();
    let cpu = match (cpu0, process_cpu()) {
        (Some(a), Some(b)) => (b - a).as_secs_f64() * 1e6 / total as f64,
        _ => f64::NAN,
    };
    Measured {
        events_per_s: total as f64 / wall.as_secs_f64(),
        cpu_us: cpu,
    }
}

/// A retention pass over what `store` holds before `cutoff_ms`, paced as
/// the gateway paces it (`gateway/src/retention.rs`: steps of 2,000 rows,
/// each followed by a rest as long as the step, at least 10 ms).
async fn retention_pass(store: Store, cutoff_ms: i64) -> PassMeasured {
    let start = Instant::now();
    let mut prune = store.prune(cutoff_ms, 2000);
    let mut longest = Duration::ZERO;
    let mut steps = 0;
    loop {
        let step = Instant::now();
        let more = prune.step().await.expect("retention step");
        longest = longest.max(step.elapsed());
        steps += 1;
        if !more {
            break;
        }
        tokio::time::sleep(step.elapsed().max(Duration::from_millis(10))).await;
    }
    PassMeasured {
        rows: prune.deleted().total(),
        wall: start.elapsed(),
        steps,
        longest,
    }
}

/// What a retention pass did and took.
struct PassMeasured {
    rows: u64,
    wall: Duration,
    steps: u32,
    longest: Duration,
}

impl std::fmt::Display for PassMeasured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rows deleted in {:.2} s ({:.0} rows/s, paced), {} steps, the longest {:.1} ms",
            self.rows,
            self.wall.as_secs_f64(),
            self.rows as f64 / self.wall.as_secs_f64(),
            self.steps,
            self.longest.as_secs_f64() * 1e3
        )
    }
}

/// Recording with and without a retention pass under way, on one store:
/// `turns` turns of history before the cutoff, then `turns` recorded
/// alone, then `turns` recorded while a pass deletes the history.
async fn with_retention(label: &str, store: Store, gw: usize, turns: u64) {
    let span = turns as i64 * 10;
    let cutoff = HISTORY_FROM_MS + span;
    run(
        vec![Some(store.clone())],
        vec![events_from(gw, turns, HISTORY_FROM_MS)],
    )
    .await;
    let alone = run(
        vec![Some(store.clone())],
        vec![events_from(gw + 1, turns, cutoff)],
    )
    .await;
    let pass = tokio::spawn(retention_pass(store.clone(), cutoff));
    let during = run(
        vec![Some(store)],
        vec![events_from(gw + 2, turns, cutoff + span)],
    )
    .await;
    let pass = pass.await.expect("retention task");
    println!("{label} 1 recorder, alone             {alone}");
    println!(
        "{label} 1 recorder, retention under way {during}  ({:.3} of alone; CPU includes the pass)",
        during.events_per_s / alone.events_per_s
    );
    println!("{label} the retention pass             {pass}");
}

async fn fresh_pg_schema(base: &str) -> String {
    let schema = format!("bench_{}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(base)
        .await
        .expect("connect to PostgreSQL");
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .execute(&mut conn)
        .await
        .expect("drop schema");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut conn)
        .await
        .expect("create schema");
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options[search_path]={schema}")
}

fn main() {
    let turns: u64 = std::env::var("TW_BENCH_TURNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let per = turns as usize * 7 - 3 * turns.div_ceil(TURNS_PER_SESSION) as usize;
        let ids = if std::env::var_os("TW_BENCH_SHORT_IDS").is_some() {
            ", call ids under 12 bytes"
        } else {
            ""
        };
        println!("recording benchmark: {per} events per recorder (1 request : 3 calls : 3 results{ids})");
        let base = run(vec![None], vec![events(0, turns)]).await;
        println!("baseline  no sink, 1 recorder        {base}");
        let base = base.events_per_s;

        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("bench.db").display());
        let store = Store::open(&url).await.expect("open sqlite");
        let lite1 = run(vec![Some(store.clone())], vec![events(0, turns)]).await;
        println!("sqlite    1 recorder                 {lite1}  ({:.3} of baseline)", lite1.events_per_s / base);
        let other = Store::open(&url).await.expect("open sqlite");
        let lite2 = run(vec![Some(store), Some(other)], vec![events(1, turns), events(2, turns)]).await;
        println!("sqlite    2 recorders, one file      {lite2}  ({:.3} of baseline)", lite2.events_per_s / base);
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("retention.db").display());
        with_retention("sqlite   ", Store::open(&url).await.expect("open sqlite"), 10, turns).await;

        match std::env::var("TOOLWARDEN_TEST_POSTGRES_URL") {
            Ok(base_url) => {
                let url = fresh_pg_schema(&base_url).await;
                let a = Store::open(&url).await.expect("open postgres");
                let b = Store::open(&url).await.expect("open postgres");
                let pg2 = run(vec![Some(a.clone()), Some(b)], vec![events(1, turns), events(2, turns)]).await;
                println!(
                    "postgres  2 recorders, one database  {pg2}  ({:.3} of baseline, {:.2}x sqlite 2 recorders)",
                    pg2.events_per_s / base,
                    pg2.events_per_s / lite2.events_per_s
                );
                let pg1 = run(vec![Some(a)], vec![events(3, turns)]).await;
                println!("postgres  1 recorder                 {pg1}  ({:.3} of baseline; CPU is this process only)", pg1.events_per_s / base);
                let url = fresh_pg_schema(&base_url).await;
                with_retention("postgres ", Store::open(&url).await.expect("open postgres"), 10, turns).await;
            }
            Err(_) => println!(
                "postgres  SKIPPED: set TOOLWARDEN_TEST_POSTGRES_URL (URL=$(.ci/pg.sh start)) to measure it"
            ),
        }
    });
}
