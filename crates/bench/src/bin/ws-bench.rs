//! `ws-bench`: the Responses API's WebSocket mode through the gateway
//! against the HTTP path, in one run on loopback, for the same body.
//!
//! - added latency per turn: a `response.create` over one socket (through
//!   the gateway, and straight to the mock) vs the same body as a streaming
//!   `POST /v1/responses` on one keep-alive connection (both ways), each up
//!   to the response's last event. `--turns` rounds per run, `--runs` runs:
//!   a round times one turn on each of the four paths, in an order that
//!   rotates, and what the gateway adds is taken within the round, so the
//!   machine's slow spells fall on both paths; medians per run;
//! - the gateway's CPU per turn (user + system, its process) on each path,
//!   over alternating blocks of turns, and per message;
//! - 1,000 idle sockets held through the gateway: its RSS before and after.
//!
//! The mock writes a turn's events with one flush on both paths, as hyper
//! writes the SSE events it has ready (`--flush each`: one write per event
//! on both paths, SSE and WebSocket alike, as a provider generating them
//! one by one does, so the gateway reads them in several pieces).
//!
//! The gateway runs as a child (`toolwarden-bench --serve-gateway`, the
//! binary beside this one, or `TOOLWARDEN_BENCH_CHILD`) recording to SQLite + JSONL, as in
//! `toolwarden-bench`. Prints a markdown table.
//!
//! ```text
//! cargo build --release -p toolwarden-bench
//! target/release/ws-bench [--turns 2000] [--idle 1000] [--runs 3] [--flush turn|each]
//! # a profile of one path through the gateway:
//! TOOLWARDEN_BENCH_WRAP="valgrind --tool=callgrind --callgrind-out-file=cg.out" \
//!   target/release/ws-bench --only ws --turns 2000
//! ```

#![forbid(unsafe_code)]

#[allow(dead_code)]
#[path = "../child.rs"]
mod child;
// The HTTPS switch the gateway child reads; its client side is `load.rs`'s.
#[allow(dead_code)]
#[path = "../tls.rs"]
mod tls;

use std::{
    net::SocketAddr,
    process::ExitCode,
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures_util::SinkExt;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use toolwarden_mock_provider::{MockOptions, MockProvider};
use yawc::{Frame, OpCode, Options, WebSocket};

use child::GatewayChild;

/// A Responses body with a conversation and tool results (~8 KB).
fn body() -> serde_json::Value {
    let mut input =
        vec![serde_json::json!({"role": "user", "content": "Find and book flight TP123"})];
    for i in 0..20 {
        input.push(serde_json::json!({"type": "function_call", "call_id": format!("call_{i}"), "name": "lookup", "arguments": "{\"q\":\"TP123\"}"}));
        input.push(serde_json::json!({"type": "function_call_output", "call_id": format!("call_{i}"), "output": "Flight TP123 found: departs 09:05, 189 EUR, seats available in economy and business"}));
    }
    serde_json::json!({"model": "gpt-5", "input": input, "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]})
}

async fn ws_connect(addr: SocketAddr) -> WebSocket<TcpStream> {
    let url: url::Url = format!("ws://{addr}/v1/responses").parse().expect("url");
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let _ = tcp.set_nodelay(true);
    let req = yawc::HttpRequest::builder().header("authorization", "Bearer sk-bench");
    WebSocket::handshake_with_request(url, tcp, Options::default().with_no_delay(), req)
        .await
        .expect("websocket handshake")
}

/// One turn: send, read to the last event; the number of events.
async fn ws_turn(ws: &mut WebSocket<TcpStream>, message: &Bytes) -> usize {
    ws.send(Frame::text(message.clone())).await.expect("send");
    let mut events = 0;
    loop {
        let frame = ws.next_frame().await.expect("frame");
        if frame.opcode() != OpCode::Text {
            continue;
        }
        events += 1;
        if frame
            .payload()
            .windows(18)
            .any(|w| w == b"response.completed")
        {
            return events;
        }
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn http_connect(addr: SocketAddr) -> Sender {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let _ = tcp.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .expect("http handshake");
    tokio::spawn(conn);
    sender
}

async fn http_turn(sender: &mut Sender, addr: SocketAddr, body: &Bytes) {
    let req = Request::post("/v1/responses")
        .header("host", addr.to_string())
        .header("authorization", "Bearer sk-bench")
        .header("content-type", "application/json")
        .body(Full::new(body.clone()))
        .expect("request");
    let resp = sender.send_request(req).await.expect("response");
    assert!(resp.status().is_success(), "status {}", resp.status());
    let _ = resp.into_body().collect().await.expect("body");
}

fn ms(d: f64) -> f64 {
    d * 1e3
}

/// The median of `samples` (seconds).
fn median(samples: &mut [f64]) -> f64 {
    quantile(samples, 0.5)
}

/// The `q` quantile of `samples` (nearest rank).
fn quantile(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_unstable_by(f64::total_cmp);
    let at = ((samples.len() as f64 * q) as usize).min(samples.len() - 1);
    samples[at]
}

/// How often the gateway's threads went to sleep (voluntary context
/// switches, summed over its threads): each is a wake-up to come.
fn wakeups(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .filter_map(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .sum()
}

/// The four ways a turn goes, timed in turn within each round.
#[derive(Clone, Copy)]
enum Path {
    HttpDirect,
    HttpGateway,
    WsDirect,
    WsGateway,
}

const PATHS: [Path; 4] = [
    Path::HttpDirect,
    Path::HttpGateway,
    Path::WsDirect,
    Path::WsGateway,
];

/// One client connection per path.
struct Clients {
    http_direct: Sender,
    http_gateway: Sender,
    ws_direct: WebSocket<TcpStream>,
    ws_gateway: WebSocket<TcpStream>,
    direct: SocketAddr,
    through: SocketAddr,
    http_body: Bytes,
    ws_message: Bytes,
}

impl Clients {
    async fn open(
        direct: SocketAddr,
        through: SocketAddr,
        http_body: Bytes,
        ws_message: Bytes,
    ) -> Clients {
        Clients {
            http_direct: http_connect(direct).await,
            http_gateway: http_connect(through).await,
            ws_direct: ws_connect(direct).await,
            ws_gateway: ws_connect(through).await,
            direct,
            through,
            http_body,
            ws_message,
        }
    }

    /// One turn on `path`; its wall time in seconds.
    async fn turn(&mut self, path: Path) -> f64 {
        let t = Instant::now();
        match path {
            Path::HttpDirect => {
                http_turn(&mut self.http_direct, self.direct, &self.http_body).await;
            }
            Path::HttpGateway => {
                http_turn(&mut self.http_gateway, self.through, &self.http_body).await;
            }
            Path::WsDirect => {
                ws_turn(&mut self.ws_direct, &self.ws_message).await;
            }
            Path::WsGateway => {
                ws_turn(&mut self.ws_gateway, &self.ws_message).await;
            }
        }
        t.elapsed().as_secs_f64()
    }
}

/// One run's latencies: per round, each path once, in an order that
/// rotates from round to round; what the gateway adds is taken within the
/// round (through − direct), so slow spells of the machine fall on both.
struct Latency {
    times: [Vec<f64>; 4],
    added_http: Vec<f64>,
    added_ws: Vec<f64>,
    ws_minus_http: Vec<f64>,
}

async fn latency_run(c: &mut Clients, rounds: usize) -> Latency {
    let mut l = Latency {
        times: Default::default(),
        added_http: Vec::with_capacity(rounds),
        added_ws: Vec::with_capacity(rounds),
        ws_minus_http: Vec::with_capacity(rounds),
    };
    for round in 0..rounds {
        let mut t = [0.0; 4];
        for k in 0..4 {
            let i = (round + k) % 4;
            t[i] = c.turn(PATHS[i]).await;
        }
        for (i, v) in t.iter().enumerate() {
            l.times[i].push(*v);
        }
        let (http, ws) = (t[1] - t[0], t[3] - t[2]);
        l.added_http.push(http);
        l.added_ws.push(ws);
        l.ws_minus_http.push(ws - http);
    }
    l
}

/// Per turn through the gateway, on one path: its CPU (µs) and its
/// threads' wake-ups.
#[derive(Default, Clone, Copy)]
struct Cost {
    cpu_us: f64,
    wakeups: f64,
}

/// The gateway's CPU and wake-ups per turn on each path (HTTP, WebSocket):
/// blocks of `block` turns through the gateway, HTTP and WebSocket
/// alternating, `blocks` of each.
async fn cpu_run(c: &mut Clients, gw: &GatewayChild, blocks: usize, block: usize) -> [Cost; 2] {
    let mut cost = [Cost::default(); 2];
    for b in 0..blocks * 2 {
        let path = if b % 2 == 0 {
            Path::HttpGateway
        } else {
            Path::WsGateway
        };
        let (before, woke) = (gw.cpu_secs_fine(), wakeups(gw.pid()));
        for _ in 0..block {
            c.turn(path).await;
        }
        let sum = &mut cost[b % 2];
        sum.cpu_us += gw.cpu_secs_fine() - before;
        sum.wakeups += wakeups(gw.pid()).saturating_sub(woke) as f64;
    }
    let turns = (blocks * block) as f64;
    cost.map(|c| Cost {
        cpu_us: c.cpu_us * 1e6 / turns,
        wakeups: c.wakeups / turns,
    })
}

/// `--only http|ws`: only `turns` turns through the gateway on that path
/// (after 100 to warm up), for a profile of the gateway child (see
/// `TOOLWARDEN_BENCH_WRAP` in `child.rs`); prints the gateway's CPU per turn.
async fn only(c: &mut Clients, gw: &GatewayChild, path: Path, turns: usize) {
    for _ in 0..100 {
        c.turn(path).await;
    }
    let (before, woke) = (gw.cpu_secs_fine(), wakeups(gw.pid()));
    let mut times = Vec::with_capacity(turns);
    for _ in 0..turns {
        times.push(c.turn(path).await);
    }
    let used = gw.cpu_secs_fine() - before;
    let woke = wakeups(gw.pid()).saturating_sub(woke);
    println!(
        "{turns} turns: p50 {:.3} ms, gateway CPU {:.1} µs/turn, {:.2} wake-ups/turn",
        ms(median(&mut times)),
        used * 1e6 / turns as f64,
        woke as f64 / turns as f64
    );
}

/// What to run (the command line).
struct Args {
    turns: usize,
    idle: usize,
    runs: usize,
    only_path: Option<Path>,
    /// The mock writes each event (SSE and WebSocket) with its own flush.
    flush_each: bool,
}

async fn run(args: Args) -> Result<(), String> {
    let Args {
        turns,
        idle,
        runs,
        only_path,
        flush_each,
    } = args;
    let mock = MockProvider::start(MockOptions {
        record: false,
        flush_each_event: flush_each,
        ..MockOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let exe = child::sibling_gateway_exe()?;
    let db = format!("sqlite://{}", dir.path().join("bench.db").display());
    let jsonl = dir.path().join("events.jsonl").display().to_string();
    let gw = GatewayChild::spawn(&exe, &mock.base_url(), &db, &jsonl)?;
    let direct = mock.addr();
    let through = gw.addr;

    let http_body = {
        let mut b = body();
        b["stream"] = serde_json::json!(true);
        Bytes::from(b.to_string())
    };
    let ws_message = {
        let mut b = body();
        b["type"] = serde_json::json!("response.create");
        Bytes::from(b.to_string())
    };
    let events = {
        let mut ws = ws_connect(direct).await;
        ws_turn(&mut ws, &ws_message).await
    };
    let mut c = Clients::open(direct, through, http_body.clone(), ws_message.clone()).await;
    if let Some(path) = only_path {
        only(&mut c, &gw, path, turns).await;
        drop(c);
        gw.stop();
        return Ok(());
    }
    for _ in 0..50 {
        for path in PATHS {
            c.turn(path).await;
        }
    }

    println!(
        "Latency: {runs} runs of {turns} rounds; a round is one turn on each path (order rotating), {} B body, {events} events per response, the mock's events (SSE and WebSocket) written {}; medians, added = through − direct within each round.",
        http_body.len(),
        if flush_each {
            "each with its own flush"
        } else {
            "with one flush per turn"
        }
    );
    println!();
    println!(
        "| run | HTTP direct p50 ms | HTTP through p50 ms | WS direct p50 ms | WS through p50 ms | HTTP added p50 ms | WS added p50 ms | HTTP added p99 ms | WS added p99 ms | WS added − HTTP added, p50 ms | rounds with WS added ≤ HTTP added |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut all_http, mut all_ws, mut all_diff) = (Vec::new(), Vec::new(), Vec::new());
    for run in 1..=runs {
        let mut l = latency_run(&mut c, turns).await;
        let not_worse = l.ws_minus_http.iter().filter(|d| **d <= 0.0).count();
        let [hd, hg, wd, wg] = &mut l.times;
        let (ah, aw, diff) = (
            median(&mut l.added_http),
            median(&mut l.added_ws),
            median(&mut l.ws_minus_http),
        );
        let (ah99, aw99) = (
            quantile(&mut l.added_http, 0.99),
            quantile(&mut l.added_ws, 0.99),
        );
        println!(
            "| {run} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:+.3} | {:.0} % |",
            ms(median(hd)),
            ms(median(hg)),
            ms(median(wd)),
            ms(median(wg)),
            ms(ah),
            ms(aw),
            ms(ah99),
            ms(aw99),
            ms(diff),
            100.0 * not_worse as f64 / turns as f64
        );
        all_http.push(ah);
        all_ws.push(aw);
        all_diff.push(diff);
    }
    println!(
        "| median of runs | | | | | {:.3} | {:.3} | | | {:+.3} | |",
        ms(median(&mut all_http)),
        ms(median(&mut all_ws)),
        ms(median(&mut all_diff))
    );

    let block = (turns / 10).max(10);
    println!();
    println!(
        "CPU: the gateway process's user + system time over alternating blocks of {block} turns through it (10 blocks per path per run)."
    );
    println!();
    println!(
        "| run | HTTP µs/turn | WebSocket µs/turn | HTTP µs/event | WebSocket µs/message (events + the request) | HTTP gateway wake-ups/turn | WebSocket gateway wake-ups/turn |"
    );
    println!("|---|---|---|---|---|---|---|");
    for run in 1..=runs {
        let [http, ws] = cpu_run(&mut c, &gw, 10, block).await;
        println!(
            "| {run} | {:.0} | {:.0} | {:.1} | {:.1} | {:.2} | {:.2} |",
            http.cpu_us,
            ws.cpu_us,
            http.cpu_us / events as f64,
            ws.cpu_us / (events + 1) as f64,
            http.wakeups,
            ws.wakeups
        );
    }
    drop(c);

    // Idle sockets.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = gw.rss_bytes();
    let mut held = Vec::with_capacity(idle);
    for _ in 0..idle {
        held.push(ws_connect(through).await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = gw.rss_bytes();
    println!();
    println!(
        "| idle sockets through the gateway | gateway RSS before | with them open | per socket (client + upstream side) |"
    );
    println!("|---|---|---|---|");
    println!(
        "| {idle} | {:.1} MiB | {:.1} MiB | {:.1} KiB |",
        before as f64 / (1 << 20) as f64,
        after as f64 / (1 << 20) as f64,
        (after.saturating_sub(before)) as f64 / idle as f64 / 1024.0
    );
    // Every socket still answers.
    for ws in held.iter_mut().take(10) {
        ws_turn(ws, &ws_message).await;
    }
    drop(held);
    gw.stop();
    Ok(())
}

fn main() -> ExitCode {
    let raw_args: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Args {
        turns: 2000,
        idle: 1000,
        runs: 3,
        only_path: None,
        flush_each: false,
    };
    let mut it = raw_args.iter();
    while let Some(flag) = it.next() {
        let raw = it.next();
        let value = raw.and_then(|v| v.parse::<usize>().ok());
        match (flag.as_str(), value, raw.map(String::as_str)) {
            ("--turns", Some(n), _) => args.turns = n.max(10),
            ("--idle", Some(n), _) => args.idle = n,
            ("--runs", Some(n), _) => args.runs = n.max(1),
            ("--only", _, Some("http")) => args.only_path = Some(Path::HttpGateway),
            ("--only", _, Some("ws")) => args.only_path = Some(Path::WsGateway),
            ("--flush", _, Some("turn")) => args.flush_each = false,
            ("--flush", _, Some("each")) => args.flush_each = true,
            _ => {
                eprintln!(
                    "usage: ws-bench [--turns N] [--idle N] [--runs N] [--only http|ws] [--flush turn|each]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ws-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ws-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
