//! `ws-bench`: the Responses API's WebSocket mode through the gateway
//! against the HTTP path, in one run on loopback, for the same body.
//!
//! - added latency per turn: a `response.create` over one socket (through
//!   the gateway, and straight to the mock) vs the same body as a streaming
//!   `POST /v1/responses` on one keep-alive connection (both ways), each up
//!   to the response's last event;
//! - the gateway's CPU per turn (user + system, its process) on each path;
//! - 1,000 idle sockets held through the gateway: its RSS before and after.
//!
//! The gateway runs as a child (`toolwarden-bench --serve-gateway`, the
//! binary beside this one) recording to SQLite + JSONL, as in
//! `toolwarden-bench`. Prints a markdown table.
//!
//! ```text
//! cargo build --release -p toolwarden-bench
//! target/release/ws-bench [--turns 2000] [--idle 1000]
//! ```

#![forbid(unsafe_code)]

#[allow(dead_code)]
#[path = "../child.rs"]
mod child;

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

/// One turn: send, read to the last event.
async fn ws_turn(ws: &mut WebSocket<TcpStream>, message: &Bytes) {
    ws.send(Frame::text(message.clone())).await.expect("send");
    loop {
        let frame = ws.next_frame().await.expect("frame");
        if frame.opcode() == OpCode::Text
            && frame
                .payload()
                .windows(18)
                .any(|w| w == b"response.completed")
        {
            return;
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

fn median_ms(samples: &mut [Duration]) -> f64 {
    samples.sort_unstable();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

fn p99_ms(samples: &mut [Duration]) -> f64 {
    samples.sort_unstable();
    samples[(samples.len() * 99 / 100).min(samples.len() - 1)].as_secs_f64() * 1e3
}

struct Row {
    name: &'static str,
    direct: Vec<Duration>,
    gateway: Vec<Duration>,
    cpu_us: f64,
}

async fn run(turns: usize, idle: usize) -> Result<(), String> {
    let mock = MockProvider::start(MockOptions {
        record: false,
        ..MockOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let exe = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name("toolwarden-bench");
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

    // Interleaved, so that both paths see the same machine state.
    let mut rows = Vec::new();
    {
        let (mut d, mut g) = (http_connect(direct).await, http_connect(through).await);
        let (mut dw, mut gw_ws) = (ws_connect(direct).await, ws_connect(through).await);
        for _ in 0..50 {
            http_turn(&mut d, direct, &http_body).await;
            http_turn(&mut g, through, &http_body).await;
            ws_turn(&mut dw, &ws_message).await;
            ws_turn(&mut gw_ws, &ws_message).await;
        }
        let mut http = Row {
            name: "HTTP `POST /v1/responses` (SSE)",
            direct: vec![],
            gateway: vec![],
            cpu_us: 0.0,
        };
        let mut ws = Row {
            name: "WebSocket `response.create`",
            direct: vec![],
            gateway: vec![],
            cpu_us: 0.0,
        };
        for _ in 0..turns {
            let t = Instant::now();
            http_turn(&mut d, direct, &http_body).await;
            http.direct.push(t.elapsed());
            let t = Instant::now();
            ws_turn(&mut dw, &ws_message).await;
            ws.direct.push(t.elapsed());
        }
        let cpu = gw.cpu_secs();
        for _ in 0..turns {
            let t = Instant::now();
            http_turn(&mut g, through, &http_body).await;
            http.gateway.push(t.elapsed());
        }
        http.cpu_us = (gw.cpu_secs() - cpu) * 1e6 / turns as f64;
        let cpu = gw.cpu_secs();
        for _ in 0..turns {
            let t = Instant::now();
            ws_turn(&mut gw_ws, &ws_message).await;
            ws.gateway.push(t.elapsed());
        }
        ws.cpu_us = (gw.cpu_secs() - cpu) * 1e6 / turns as f64;
        rows.push(http);
        rows.push(ws);
    }
    println!(
        "| path ({turns} turns, {} B body) | direct p50 ms | through p50 ms | added p50 ms | direct p99 | through p99 | gateway CPU µs/turn |",
        http_body.len()
    );
    println!("|---|---|---|---|---|---|---|");
    for mut r in rows {
        let (d50, g50) = (median_ms(&mut r.direct), median_ms(&mut r.gateway));
        println!(
            "| {} | {d50:.3} | {g50:.3} | {:.3} | {:.3} | {:.3} | {:.0} |",
            r.name,
            g50 - d50,
            p99_ms(&mut r.direct),
            p99_ms(&mut r.gateway),
            r.cpu_us
        );
    }

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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut turns = 2000;
    let mut idle = 1000;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<usize>().ok());
        match (flag.as_str(), value) {
            ("--turns", Some(n)) => turns = n.max(10),
            ("--idle", Some(n)) => idle = n,
            _ => {
                eprintln!("usage: ws-bench [--turns N] [--idle N]");
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
    match runtime.block_on(run(turns, idle)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ws-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
