//! `stream_id` lanes: two turns on one socket, answered in parallel by the
//! upstream with their events interleaved, each event echoing its lane.
//! Each turn is recorded with its own events: its calls and its response
//! id, not the other lane's.

use std::convert::Infallible;

use bytes::Bytes;
use futures_util::SinkExt;
use http_body_util::Full;
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use toolwarden_gateway::Upstream;
use toolwarden_mock_provider::MockOptions;
use yawc::{Frame, OpCode, WebSocket};

use super::client::{connect, next, send_text};
use crate::e2e::support::Harness;

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

/// The `n`-th lane's call as a finished output item.
fn call_item(n: usize) -> Value {
    json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
        "name": format!("tool_{n}"), "arguments": "{}", "status": "completed"})
}

/// The events of the `n`-th lane's answer (`lane`): created, its call,
/// completed.
fn events(lane: &str, n: usize) -> [Value; 3] {
    let id = format!("resp_{n}");
    [
        json!({"type": "response.created", "stream_id": lane, "sequence_number": 0,
            "response": {"id": id, "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.done", "stream_id": lane, "sequence_number": 1,
            "output_index": 0, "item": call_item(n)}),
        json!({"type": "response.completed", "stream_id": lane, "sequence_number": 2,
            "response": {"id": id, "object": "response", "status": "completed",
                "model": "gpt-5", "output": [call_item(n)],
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}}),
    ]
}

/// An upstream speaking WebSocket mode with lanes: it reads two
/// `response.create` messages, then answers both at once, their events
/// interleaved (the second lane finishing first).
async fn lane_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service_fn(|mut req: Request<Incoming>| async move {
                let (response, upgrade) = WebSocket::upgrade(&mut req).expect("an upgrade");
                tokio::spawn(async move {
                    if let Ok(mut socket) = upgrade.await {
                        answer_two_lanes(&mut socket).await;
                    }
                });
                let (parts, _) = response.into_parts();
                Ok::<_, Infallible>(Response::from_parts(parts, Full::new(Bytes::new())))
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades(),
            );
        }
    });
    format!("http://{addr}")
}

async fn answer_two_lanes<S>(socket: &mut WebSocket<S>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut lanes = Vec::new();
    while lanes.len() < 2 {
        match socket.next_frame().await {
            Ok(f) if f.opcode() == OpCode::Text => {
                let v: Value = serde_json::from_slice(f.payload()).unwrap_or_default();
                lanes.push(v["stream_id"].as_str().unwrap_or_default().to_string());
            }
            Ok(_) => {}
            Err(_) => return,
        }
    }
    let [a, b] = [events(&lanes[0], 0), events(&lanes[1], 1)];
    for e in [&a[0], &b[0], &a[1], &b[1], &b[2], &a[2]] {
        if socket.send(Frame::text(e.to_string())).await.is_err() {
            return;
        }
    }
    let _ = socket.next_frame().await;
}

#[tokio::test]
async fn each_lanes_events_go_to_its_own_turn() {
    lanes_kept_apart("a", "b").await;
    // Lanes over the 256 bytes a record keeps, alike but for their ends.
    let long = "l".repeat(300);
    lanes_kept_apart(&format!("{long}a"), &format!("{long}b")).await;
}

async fn lanes_kept_apart(a: &str, b: &str) {
    let upstream = lane_upstream().await;
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = Upstream::parse(&upstream).unwrap();
    })
    .await;
    let mut ws = connect(&h.gw(), &[AUTH, ("session_id", "lanes")], false).await;
    for lane in [a, b] {
        let create = json!({"type": "response.create", "stream_id": lane, "model": "gpt-5",
            "input": [{"role": "user", "content": format!("Task {lane}")}]});
        send_text(&mut ws, create.to_string()).await;
    }
    let mut completed = 0;
    while completed < 2 {
        let event = next(&mut ws).await.expect("an event");
        if String::from_utf8_lossy(&event).contains("response.completed") {
            completed += 1;
        }
    }
    drop(ws);
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (2, 0));
    let calls: Vec<(String, String)> = h
        .events()
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| {
            (
                e["call_id"].as_str().unwrap_or_default().to_string(),
                e["response_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let mut calls = calls;
    calls.sort();
    assert_eq!(
        calls,
        [
            ("call_0".to_string(), "resp_0".to_string()),
            ("call_1".to_string(), "resp_1".to_string())
        ],
        "{:#?}",
        h.events()
    );
}
