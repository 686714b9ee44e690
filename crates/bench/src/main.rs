//! `toolwarden-bench`: the gateway's overhead against a direct connection to
//! the same mock provider, measured in one run on loopback.
//!
//! The mock provider runs in this process; the gateway runs in a child
//! process (this binary re-executed with `--serve-gateway`) recording to a
//! temporary SQLite database and JSONL file (`--record sqlite`: the database
//! only; `--record off`: neither), so its CPU time and RSS are the kernel's
//! accounting of the gateway alone. Beside it, in the same run: the floor
//! processes (`floor.rs`), the same gateway without recording, and the least
//! a SQLite row per event costs (`append_floor.rs`), from which it prints
//! recording's cost and its budget under issue 14's CPU targets. Prints a
//! markdown table.
//!
//! ```text
//! cargo run --release -p toolwarden-bench -- [--requests 20000] [--conns 32]
//!     [--throughput-requests 40000] [--ttfb-requests 5000] [--streams 1000]
//!     [--record on|sqlite|off] [--rounds N]
//! cargo run --release -p toolwarden-bench -- --soak SECONDS [--conns 8]
//! TOOLWARDEN_SOAK_DATABASE=postgres://… toolwarden-bench --soak SECONDS
//! ```
//!
//! `--soak` runs the endurance soak instead (see `soak.rs`, `scripts/soak.sh`).

#![forbid(unsafe_code)]

/// jemalloc returns freed memory to the system (a background thread purges
/// pages unused for a second: `.cargo/config.toml`), where glibc's malloc
/// kept the peak of a burst of streams resident for good (issue 14,
/// BENCHMARKS.md "Memory and soak").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod admin;
mod alerts;
mod append_floor;
mod bodies;
mod budget;
mod child;
mod floor;
mod handshakes;
mod host;
mod load;
mod rounds;
mod schema_floor;
mod soak;
mod soak_check;
mod tls;

use std::{process::ExitCode, time::Duration};

use admin::{drain, overhead_totals, recorder_counts};
use floor::Floor;
use load::{Conn, Shape, percentile_ms, sequential, throughput};
use toolwarden_mock_provider::{Fault, MockOptions, MockProvider};

/// After a phase's requests, before the gateway's CPU or counts are read:
/// the recorder's flush interval (200 ms) and a margin, so the phase's
/// events are written in it.
const RECORDER_FLUSH: Duration = Duration::from_millis(300);
/// Then, before a recording gateway's CPU is read: the longest the store
/// waits to checkpoint the last few events it committed
/// ([`toolwarden_store::CHECKPOINT_WAIT`]) and a margin, so that the
/// checkpoint is counted in the phase whose events it copies (without it a
/// round of 1,000 requests left ~2.4 µs a request of the gateway's CPU to
/// after its reading: BENCHMARKS.md, "The recorder's wake-ups at low
/// traffic, and flume's lock").
const CHECKPOINT_LAG: Duration =
    toolwarden_store::CHECKPOINT_WAIT.saturating_add(Duration::from_millis(200));

/// Waits after a phase's requests until what they cost the gateway is
/// spent: their events written and, when it records, the checkpoint that
/// copies them run.
async fn settle(records: bool) {
    tokio::time::sleep(RECORDER_FLUSH).await;
    if records {
        tokio::time::sleep(CHECKPOINT_LAG).await;
    }
}

#[derive(Debug, Clone)]
struct Args {
    requests: usize,
    conns: usize,
    throughput_requests: usize,
    ttfb_requests: usize,
    streams: usize,
    /// What the gateway records to: SQLite + JSONL (the default and the
    /// measure that counts), SQLite only (`serve`'s default), or nothing
    /// (`--record off` shows what recording costs).
    record: Record,
    /// Requests per gateway in the alerts off/on comparison (0: skipped).
    alerts_requests: usize,
    /// Requests per gateway, each on a new connection, in the HTTPS
    /// against plain handshake comparison (0: skipped).
    handshake_requests: usize,
    /// Issue 14: seconds of soak instead of the benchmark (0: benchmark).
    soak: u64,
    /// Issue 14: alternated rounds of the ratios to floor 0 (`rounds.rs`;
    /// 0: none).
    rounds: usize,
}

const USAGE: &str = "usage: toolwarden-bench [--requests N] [--conns N] [--throughput-requests N] [--ttfb-requests N] [--streams N] [--record on|sqlite|off] [--alerts-requests N] [--handshake-requests N] [--rounds N] [--soak SECONDS]";

/// What the measured gateway records to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Record {
    SqliteAndJsonl,
    Sqlite,
    Off,
}

impl Record {
    /// How the summary line names it.
    fn describe(self) -> &'static str {
        match self {
            Record::SqliteAndJsonl => "recording to SQLite + JSONL",
            Record::Sqlite => "recording to SQLite only (no JSONL, as `serve` by default)",
            Record::Off => "with recording OFF (no database, no JSONL)",
        }
    }

    /// How the CPU row names it ("recording …").
    fn short(self) -> &'static str {
        match self {
            Record::SqliteAndJsonl => "on",
            Record::Sqlite => "on, SQLite only",
            Record::Off => "OFF",
        }
    }

    /// Whether the measured gateway records at all.
    fn records(self) -> bool {
        self != Record::Off
    }
}

/// What `parse` found: the arguments, or a request for the usage.
#[derive(Debug)]
enum Parsed {
    Run(Args),
    Help,
}

fn parse(args: &[String]) -> Result<Parsed, String> {
    let mut a = Args {
        requests: 20_000,
        conns: 32,
        throughput_requests: 40_000,
        ttfb_requests: 5_000,
        streams: 1_000,
        record: Record::SqliteAndJsonl,
        alerts_requests: 0,
        handshake_requests: 0,
        soak: 0,
        rounds: 0,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if matches!(flag.as_str(), "--help" | "-h") {
            return Ok(Parsed::Help);
        }
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        if flag == "--record" {
            a.record = match value.as_str() {
                "on" => Record::SqliteAndJsonl,
                "sqlite" => Record::Sqlite,
                "off" => Record::Off,
                other => {
                    return Err(format!(
                        "--record {other}: expected on, sqlite or off\n{USAGE}"
                    ));
                }
            };
            continue;
        }
        let n: usize = value
            .parse()
            .map_err(|e| format!("{flag} {value}: {e}\n{USAGE}"))?;
        match flag.as_str() {
            "--requests" => a.requests = n,
            "--conns" => a.conns = n.max(1),
            "--throughput-requests" => a.throughput_requests = n,
            "--ttfb-requests" => a.ttfb_requests = n,
            "--streams" => a.streams = n,
            "--alerts-requests" => a.alerts_requests = n,
            "--handshake-requests" => a.handshake_requests = n,
            "--soak" => a.soak = n as u64,
            "--rounds" => a.rounds = n,
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    // The latency, throughput and first-byte phases divide by their counts
    // (and their ratios by each other's): an empty one would print NaN rows.
    for (flag, n) in [
        ("--requests", a.requests),
        ("--throughput-requests", a.throughput_requests),
        ("--ttfb-requests", a.ttfb_requests),
    ] {
        if n == 0 && a.soak == 0 {
            return Err(format!(
                "{flag} 0: each phase needs at least one request\n{USAGE}"
            ));
        }
    }
    Ok(Parsed::Run(a))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let serving = args.first().map(String::as_str) == Some("--serve-gateway");
    // The gateway child's own runtime is the control runtime, as in
    // `toolwarden serve` (one thread; the proxy runs on the gateway's workers).
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(if serving { 1 } else { 2 })
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(kind) = args.first().and_then(|f| child::RelayKind::from_flag(f)) {
        let [_, up] = args.as_slice() else {
            eprintln!("{} UPSTREAM_ADDR", kind.flag());
            return ExitCode::from(2);
        };
        let served = match kind {
            child::RelayKind::Blocking => child::serve_blocking_relay(up),
            // One event loop on one thread, as a gateway worker.
            child::RelayKind::Tcp | child::RelayKind::Http => {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) if kind == child::RelayKind::Tcp => rt.block_on(child::serve_relay(up)),
                    Ok(rt) => rt.block_on(child::serve_http_relay(up)),
                    Err(e) => Err(format!("relay runtime: {e}")),
                }
            }
        };
        return match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    if serving {
        let [_, up, db, jsonl, extra @ ..] = args.as_slice() else {
            eprintln!("--serve-gateway UPSTREAM DATABASE JSONL [off|on:WEBHOOK]");
            return ExitCode::from(2);
        };
        let alerts = extra.first().map(String::as_str);
        return match rt.block_on(child::serve(up, db, jsonl, alerts)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let parsed = match parse(&args) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let work = async move {
        if parsed.soak > 0 {
            // 8 connections unless `--conns` says otherwise.
            let conns = if args.iter().any(|a| a == "--conns") {
                parsed.conns
            } else {
                8
            };
            soak::run(parsed.soak, conns).await
        } else {
            run(parsed).await
        }
    };
    match rt.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolwarden-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// zstd as the Codex CLI compresses its requests (level 3).
fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap_or_default()
}

/// One table row.
struct Row {
    what: String,
    direct: String,
    gateway: String,
    delta: String,
    target: &'static str,
}

fn ms(v: f64) -> String {
    format!("{v:.3} ms")
}

async fn run(args: Args) -> Result<(), String> {
    let cpu_before = host::CpuTimes::now();
    let mock = MockProvider::start(MockOptions {
        record: false,
        ..MockOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let db = format!("sqlite://{}", dir.path().join("bench.db").display());
    let jsonl = dir.path().join("events.jsonl");
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let (db, jsonl) = match args.record {
        Record::SqliteAndJsonl => (db, jsonl.display().to_string()),
        Record::Sqlite => (db, "-".to_string()),
        Record::Off => ("-".to_string(), "-".to_string()),
    };
    let gw = child::GatewayChild::spawn(&exe, &mock.base_url(), &db, &jsonl)?;
    let direct = mock.addr();
    let proxied = gw.addr;
    let mut blocking_relay = Floor::new(child::GatewayChild::spawn_relay(
        &exe,
        direct,
        child::RelayKind::Blocking,
    )?);
    let mut relay = Floor::new(child::GatewayChild::spawn_relay(
        &exe,
        direct,
        child::RelayKind::Tcp,
    )?);
    let mut http_relay = Floor::new(child::GatewayChild::spawn_relay(
        &exe,
        direct,
        child::RelayKind::Http,
    )?);
    // The same gateway without recording, measured beside the recording one
    // (issue 14: recording's cost and budget in the same run).
    let unrecorded = match args.record {
        Record::Off => None,
        _ => Some(child::GatewayChild::spawn_unrecorded(
            &exe,
            &mock.base_url(),
            child::gateway_workers(true),
        )?),
    };

    let texts = bodies::result_texts();
    let anthropic_headers = vec![
        ("x-api-key", "sk-ant-bench".to_string()),
        ("anthropic-version", "2023-06-01".to_string()),
        ("content-type", "application/json".to_string()),
    ];
    let openai_headers = vec![
        ("authorization", "Bearer sk-bench".to_string()),
        ("content-type", "application/json".to_string()),
    ];
    let shapes = [
        (
            "Anthropic",
            Shape::new(
                "/v1/messages",
                anthropic_headers.clone(),
                bodies::anthropic(&texts, false),
            ),
        ),
        (
            "Chat",
            Shape::new(
                "/v1/chat/completions",
                openai_headers.clone(),
                bodies::chat(&texts, false),
            ),
        ),
    ];
    // The Codex CLI's requests: Responses API, zstd-compressed.
    let codex = Shape::new("/v1/responses", openai_headers, bodies::responses(&texts))
        .encoded("zstd", zstd);
    let stream_shape = Shape::new(
        "/v1/messages",
        anthropic_headers,
        bodies::anthropic(&texts, true),
    );
    let body_kb = shapes[0].1.body.len() as f64 / 1024.0;
    let mut rows = Vec::new();

    // Warm up both paths.
    for (_, shape) in &shapes {
        sequential(direct, shape, 300, &|_| None).await?;
        sequential(proxied, shape, 300, &|i| Some(format!("warm-{i}"))).await?;
        if let Some(u) = &unrecorded {
            sequential(u.addr, shape, 300, &|i| Some(format!("warm-{i}"))).await?;
        }
    }
    let mut unrecorded = unrecorded.map(Floor::new);

    // 1. RSS with many open streams (the mock holds them open), on a
    // freshly warmed-up gateway.
    let rss_idle = gw.rss_bytes();
    mock.set_fault(Fault::StallAfter(1));
    let mut open = Vec::with_capacity(args.streams);
    let mut pending = Vec::new();
    for _ in 0..args.streams {
        let shape = stream_shape.clone();
        pending.push(tokio::spawn(async move {
            let mut conn = Conn::open(proxied).await?;
            let body = conn.open_stream(&shape).await?;
            Ok::<_, String>((conn, body))
        }));
    }
    for p in pending {
        open.push(p.await.map_err(|e| format!("task: {e}"))??);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let held = mock.open_streams();
    let rss_streams = gw.rss_bytes();
    drop(open);
    mock.set_fault(Fault::None);
    let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
    rows.push(Row {
        what: format!(
            "gateway RSS with {} concurrent open streams (mock holding {held})",
            args.streams
        ),
        direct: "–".into(),
        gateway: format!("{:.1} MB", mb(rss_streams)),
        delta: format!("idle {:.1} MB", mb(rss_idle)),
        target: "≤ 100 MB",
    });

    // 2. Latency at one connection, interleaved blocks so drift hits both.
    let block = 1_000.min(args.requests.max(1));
    let overhead_start = overhead_totals(proxied).await?;
    let cpu_start = gw.cpu_secs_fine();
    let mut gw_requests = 0usize;
    for (name, shape) in &shapes {
        let (mut d_all, mut g_all) = (Vec::new(), Vec::new());
        let mut done = 0;
        while done < args.requests {
            let n = block.min(args.requests - done);
            let session = |i: usize| Some(format!("lat-{name}-{}", (done + i) / 4));
            let (d, _) = sequential(direct, shape, n, &session).await?;
            let (g, _) = sequential(proxied, shape, n, &session).await?;
            d_all.extend(d.iter().copied());
            g_all.extend(g);
            // The floors' added time, against the direct block just before.
            let d_p50 = percentile_ms(&mut d.clone(), 50.0);
            for floor in [&mut blocking_relay, &mut relay, &mut http_relay] {
                floor.block(shape, n, &session, d_p50).await?;
            }
            if let Some(u) = &mut unrecorded {
                u.block(shape, n, &session, d_p50).await?;
            }
            done += n;
        }
        gw_requests += g_all.len();
        for p in [50.0, 99.0] {
            let d = percentile_ms(&mut d_all, p);
            let g = percentile_ms(&mut g_all, p);
            rows.push(Row {
                what: format!("{name} {body_kb:.0} KB with tool results, p{p:.0} latency, 1 connection ({} requests)", args.requests),
                direct: ms(d),
                gateway: ms(g),
                delta: format!("+{}", ms(g - d)),
                target: if p == 50.0 { "≤ +0.050 ms" } else { "" },
            });
        }
    }
    settle(args.record.records()).await;
    let cpu_us = (gw.cpu_secs_fine() - cpu_start) * 1e6 / gw_requests.max(1) as f64;
    let after_latency = recorder_counts(proxied).await?;
    let overhead_end = overhead_totals(proxied).await?;
    let own_us =
        (overhead_end.0 - overhead_start.0) * 1e6 / (overhead_end.1 - overhead_start.1).max(1.0);
    rows.push(Row {
        what: format!(
            "gateway CPU per proxied request, 1 connection ({gw_requests} requests, recording {})",
            args.record.short()
        ),
        direct: "–".into(),
        gateway: format!("{cpu_us:.1} µs"),
        delta: String::new(),
        target: "≤ 40 µs",
    });
    rows.push(Row {
        what: "the gateway's own time per request by its clock (parse, check, analysis; `toolwarden_gateway_overhead_seconds` mean)".into(),
        direct: "–".into(),
        gateway: format!("{own_us:.1} µs"),
        delta: String::new(),
        target: "",
    });
    rows.push(blocking_relay.row(
        "floor 0: the fewest syscalls a proxy can make (blocking sockets, a thread per direction, one read and one write per message, no HTTP)",
    ));
    rows.push(relay.row(
        "floor: a plain TCP relay (one event loop, copy_bidirectional, no HTTP) on the same requests",
    ));
    rows.push(http_relay.row(
        "floor: an HTTP pass-through built as the gateway is (hyper server, hyper-util pooled client, one event loop; no parsing, no recording)",
    ));
    if let Some(u) = &mut unrecorded {
        rows.push(u.row(budget::UNRECORDED));
    }
    // Issue 14's CPU budget at one connection, from this run's numbers.
    let one_conn = unrecorded.as_ref().map(|u| budget::CpuAt {
        floor0: blocking_relay.cpu_us(),
        gateway: cpu_us,
        unrecorded: u.cpu_us(),
    });

    // 2b. The Codex CLI's zstd-compressed Responses requests: decoded by
    // the gateway (and by the mock, on both paths) before reading.
    let cpu_start = gw.cpu_secs_fine();
    let (mut d_all, mut g_all) = (Vec::new(), Vec::new());
    let mut done = 0;
    while done < args.requests {
        let n = block.min(args.requests - done);
        let session = |i: usize| Some(format!("codex-{}", (done + i) / 4));
        let (d, _) = sequential(direct, &codex, n, &session).await?;
        let (g, _) = sequential(proxied, &codex, n, &session).await?;
        d_all.extend(d);
        g_all.extend(g);
        done += n;
    }
    settle(args.record.records()).await;
    let codex_cpu_us = (gw.cpu_secs_fine() - cpu_start) * 1e6 / g_all.len().max(1) as f64;
    let zstd_kb = zstd(&codex.body).len() as f64 / 1024.0;
    for p in [50.0, 99.0] {
        let d = percentile_ms(&mut d_all, p);
        let g = percentile_ms(&mut g_all, p);
        rows.push(Row {
            what: format!(
                "Responses {:.0} KB as the Codex CLI sends it (zstd, {zstd_kb:.1} KB on the wire), p{p:.0} latency, 1 connection ({} requests)",
                codex.body.len() as f64 / 1024.0,
                args.requests
            ),
            direct: ms(d),
            gateway: ms(g),
            delta: format!("+{}", ms(g - d)),
            target: "",
        });
    }
    rows.push(Row {
        what: "gateway CPU per proxied zstd Responses request, 1 connection".into(),
        direct: "–".into(),
        gateway: format!("{codex_cpu_us:.1} µs"),
        delta: String::new(),
        target: "",
    });

    // 3. Streaming time to first byte.
    let (mut d_first, mut g_first) = (Vec::new(), Vec::new());
    let mut done = 0;
    while done < args.ttfb_requests {
        let n = block.min(args.ttfb_requests - done);
        let session = |i: usize| Some(format!("ttfb-{}", (done + i) / 4));
        let (_, d) = sequential(direct, &stream_shape, n, &session).await?;
        let (_, g) = sequential(proxied, &stream_shape, n, &session).await?;
        d_first.extend(d);
        g_first.extend(g);
        done += n;
    }
    for p in [50.0, 99.0] {
        let d = percentile_ms(&mut d_first, p);
        let g = percentile_ms(&mut g_first, p);
        rows.push(Row {
            what: format!(
                "streaming (Anthropic SSE) time to first byte, p{p:.0} ({} requests)",
                args.ttfb_requests
            ),
            direct: ms(d),
            gateway: ms(g),
            delta: format!("+{}", ms(g - d)),
            target: if p == 50.0 { "≤ +0.100 ms" } else { "" },
        });
    }

    // 4. Throughput at N connections (direct, gateway, direct again).
    let (name, shape) = &shapes[0];
    let before_throughput = recorder_counts(proxied).await?;
    let d1 = throughput(direct, shape, args.conns, args.throughput_requests, "tp-d1").await?;
    let cpu_tp_start = gw.cpu_secs_fine();
    let g = throughput(proxied, shape, args.conns, args.throughput_requests, "tp-g").await?;
    settle(args.record.records()).await;
    let cpu_tp = (gw.cpu_secs_fine() - cpu_tp_start) * 1e6 / args.throughput_requests as f64;
    let after_throughput = recorder_counts(proxied).await?;
    let d2 = throughput(direct, shape, args.conns, args.throughput_requests, "tp-d2").await?;
    let d = (d1 + d2) / 2.0;
    rows.push(Row {
        what: format!(
            "{name} throughput, {} connections ({} requests)",
            args.conns, args.throughput_requests
        ),
        direct: format!("{d:.0} req/s"),
        gateway: format!("{g:.0} req/s"),
        delta: format!("{:.2} × direct", g / d),
        target: "report",
    });
    rows.push(Row {
        what: format!(
            "gateway CPU per proxied request at {} connections",
            args.conns
        ),
        direct: "–".into(),
        gateway: format!("{cpu_tp:.1} µs"),
        delta: String::new(),
        target: "≤ 40 µs",
    });

    // The relay floors at the same load: the kernel's share of a hop, and
    // what HTTP alone adds to it (the pass-through built as the gateway is).
    // Each one's CPU per request, where the budget needs it.
    let (mut floor0_n, mut unrecorded_n) = (None, None);
    for (floor, what, cpu_to) in [
        (
            Some(&blocking_relay),
            "floor 0 (blocking relay)",
            Some(&mut floor0_n),
        ),
        (Some(&relay), "floor: the plain TCP relay", None),
        (
            Some(&http_relay),
            "floor: the HTTP pass-through (hyper, no parsing, no recording)",
            None,
        ),
        (
            unrecorded.as_ref(),
            budget::UNRECORDED,
            Some(&mut unrecorded_n),
        ),
    ] {
        let Some(floor) = floor else { continue };
        let cpu_start = floor.child.cpu_secs_fine();
        let tp = throughput(
            floor.child.addr,
            shape,
            args.conns,
            args.throughput_requests,
            "tp-relay",
        )
        .await?;
        let cpu = (floor.child.cpu_secs_fine() - cpu_start) * 1e6 / args.throughput_requests as f64;
        if let Some(slot) = cpu_to {
            *slot = Some(cpu);
        }
        rows.push(Row {
            what: format!(
                "{what} at {} connections: throughput / CPU per request",
                args.conns
            ),
            direct: "–".into(),
            gateway: format!("{cpu:.1} µs CPU"),
            delta: format!("{tp:.0} req/s = {:.2} × direct", tp / d),
            target: "reference",
        });
    }

    // 5. Events dropped, from the gateway's own metrics.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let end = recorder_counts(proxied).await?;
    let phase = |(d, w): (f64, f64), (d0, w0): (f64, f64)| {
        format!("{:.0} dropped / {:.0} written", d - d0, w - w0)
    };
    rows.push(Row {
        what: "events dropped by the recorder (whole run)".into(),
        direct: "–".into(),
        gateway: format!("{:.0}", end.0),
        delta: format!(
            "{:.0} written; latency phase {}; throughput phase {}",
            end.1,
            phase(after_latency, (0.0, 0.0)),
            phase(after_throughput, after_latency),
        ),
        target: "0",
    });
    // Issue 14's CPU budget for recording, and the least a row per event
    // costs in SQLite (`append_floor.rs`), in this run.
    if let (Some(one), Some(floor0), Some(unrecorded)) = (one_conn, floor0_n, unrecorded_n) {
        let many = budget::CpuAt {
            floor0,
            gateway: cpu_tp,
            unrecorded,
        };
        let events_per_request = (end.1 - before_throughput.1) / args.throughput_requests as f64;
        let appended = args.throughput_requests.max(20_000);
        let append_us =
            append_floor::cpu_us_per_request(dir.path(), events_per_request, appended).await?;
        // The same run's rows in the store's own schema, when it records to
        // SQLite (`schema_floor.rs`).
        let mix = match args.record {
            Record::Off => None,
            _ => schema_floor::RowMix::of(&dir.path().join("bench.db")).await?,
        };
        let schema = match mix {
            Some(mix) => {
                let cache = toolwarden_store::DEFAULT_SQLITE_WRITER_CACHE_KIB;
                let us = schema_floor::cpu_us_per_request(dir.path(), mix, appended, cache).await?;
                Some((mix, us))
            }
            None => None,
        };
        rows.extend(budget::rows(
            one,
            many,
            args.conns,
            events_per_request,
            append_us,
            schema,
        ));
    }
    if args.alerts_requests > 0 {
        let shape = &shapes[0].1;
        let n = args.alerts_requests;
        rows.extend(alerts::compare(&exe, &mock.base_url(), dir.path(), shape, n).await?);
    }
    if args.handshake_requests > 0 {
        let shape = &shapes[0].1;
        let n = args.handshake_requests;
        rows.extend(handshakes::compare(&exe, &mock.base_url(), dir.path(), shape, n).await?);
    }
    // Issue 14: what the gateway keeps once the load is over (the recorder
    // drained, the connections closed).
    rows.push(settled_rss(proxied, &gw, "the load", "≤ 30 MB").await);
    if args.rounds > 0 {
        let before = recorder_counts(proxied).await?;
        let sides = rounds::Sides {
            direct,
            gateway: &gw,
            gateway_records: args.record.records(),
            floor0: &blocking_relay.child,
            unrecorded: unrecorded.as_ref().map(|u| &u.child),
        };
        let load = rounds::Load {
            sequential: block,
            concurrent: args.throughput_requests,
            conns: args.conns,
        };
        rows.extend(rounds::run(&sides, &shapes[0].1, load, args.rounds).await?);
        let after = recorder_counts(proxied).await?;
        rows.push(Row {
            what: "events dropped by the recorder during the rounds".into(),
            direct: "–".into(),
            gateway: format!("{:.0}", after.0 - before.0),
            delta: format!("{:.0} written", after.1 - before.1),
            target: "0",
        });
        // After the benchmark's load (above, the target's figure), the
        // rounds' load is several times more.
        rows.push(settled_rss(proxied, &gw, "the rounds", "").await);
    }
    let peak = gw.peak_rss_bytes();
    rows.push(Row {
        what: "gateway peak RSS over the whole run".into(),
        direct: "–".into(),
        gateway: format!("{:.1} MB", mb(peak)),
        delta: String::new(),
        target: "",
    });
    gw.stop();

    println!("| measure | direct | gateway | added / ratio | target |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.what, r.direct, r.gateway, r.delta, r.target
        );
    }
    println!();
    println!(
        "{} CPUs; mock provider in the bench process, gateway in a child process {} with {} proxy workers{}; loopback, HTTP/1.1 keep-alive.",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        args.record.describe(),
        child::gateway_workers(args.record.records()),
        if args.record.records() {
            " (the gateway without recording as many)"
        } else {
            ""
        }
    );
    println!("{}", host::describe(cpu_before, host::CpuTimes::now()));
    Ok(())
}

/// The gateway's RSS once the load `after` names is over: the recorder
/// drained, the connections closed, [`soak::IDLE_SETTLE`] idle.
async fn settled_rss(
    proxied: std::net::SocketAddr,
    gw: &child::GatewayChild,
    after: &str,
    target: &'static str,
) -> Row {
    drain(proxied).await;
    tokio::time::sleep(soak::IDLE_SETTLE).await;
    let mb = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let (anon, file) = gw.rss_anon_file_bytes();
    Row {
        what: format!(
            "gateway RSS after {after} (recording drained, {} s idle)",
            soak::IDLE_SETTLE.as_secs()
        ),
        direct: "–".into(),
        gateway: format!("{:.1} MB", mb(gw.rss_bytes())),
        delta: format!("anon {:.1} MB, file {:.1} MB", mb(anon), mb(file)),
        target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Args, String> {
        match parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())? {
            Parsed::Run(a) => Ok(a),
            Parsed::Help => Err("help".into()),
        }
    }

    #[test]
    fn help_asks_for_the_usage_and_empty_phases_are_refused() {
        assert_eq!(args(&["--help"]).unwrap_err(), "help");
        assert_eq!(args(&["--requests", "10", "-h"]).unwrap_err(), "help");
        for flag in ["--requests", "--throughput-requests", "--ttfb-requests"] {
            let err = args(&[flag, "0"]).unwrap_err();
            assert!(
                err.contains(&format!("{flag} 0: each phase needs")),
                "{err}"
            );
        }
        // A soak runs none of those phases.
        assert_eq!(args(&["--soak", "60", "--requests", "0"]).unwrap().soak, 60);
        assert_eq!(args(&["--rounds", "5"]).unwrap().rounds, 5);
        assert_eq!(args(&[]).unwrap().rounds, 0);
        assert_eq!(args(&["--streams", "0"]).unwrap().streams, 0);
    }

    #[test]
    fn record_takes_on_sqlite_or_off() {
        assert_eq!(args(&[]).unwrap().record, Record::SqliteAndJsonl);
        assert_eq!(
            args(&["--record", "on"]).unwrap().record,
            Record::SqliteAndJsonl
        );
        assert_eq!(
            args(&["--record", "sqlite"]).unwrap().record,
            Record::Sqlite
        );
        assert_eq!(args(&["--record", "off"]).unwrap().record, Record::Off);
        let err = args(&["--record", "jsonl"]).unwrap_err();
        assert!(err.contains("expected on, sqlite or off"), "{err}");
    }
}
