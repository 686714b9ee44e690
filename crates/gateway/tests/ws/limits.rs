//! An open WebSocket keeps its client connection's place under
//! `max_client_connections`: hyper's connection task ends when it hands the
//! upgraded socket over, and the relay that outlives it holds the place
//! until the socket closes. A client's messages are held against
//! `max_buffered_request_bytes` as HTTP bodies are.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwarden_mock_provider::MockOptions;

use super::client::{Raw, connect, turn};
use crate::e2e::support::Harness;

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

/// What a new connection gets for `GET /healthz`, as far as it was read.
async fn healthz(gw: &str) -> String {
    let addr = gw.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), s.read_to_end(&mut reply))
        .await
        .expect("an answer")
        .ok();
    String::from_utf8_lossy(&reply).into_owned()
}

/// The status line a new connection gets for `GET /healthz`.
async fn healthz_status(gw: &str) -> String {
    let text = healthz(gw).await;
    text.lines().next().unwrap_or_default().to_string()
}

#[tokio::test]
async fn an_open_websocket_keeps_its_connection_slot() {
    let mut h = Harness::with(MockOptions::default(), |c| c.max_client_connections = 1).await;
    let create = json!({"model": "gpt-5", "input": [{"role": "user", "content": "Book TP123"}]});
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    let events = turn(&mut ws, &create).await;
    assert!(String::from_utf8_lossy(events.last().unwrap()).contains("response.completed"));
    tokio::time::sleep(Duration::from_millis(200)).await;

    let refused = healthz_status(&h.gw()).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");

    // Closed: its place is given back.
    drop(ws);
    let started = Instant::now();
    loop {
        let status = healthz_status(&h.gw()).await;
        if status.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "still refused after the socket closed: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h.finish().await;
}

/// `request_bodies` of `/healthz`.
async fn request_bodies(gw: &str) -> serde_json::Value {
    let text = healthz(gw).await;
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(body).expect("healthz json");
    json["request_bodies"].clone()
}

/// Waits until `/healthz`'s `held_bytes` is in `range`; the last value.
async fn held_within(gw: &str, range: std::ops::RangeInclusive<u64>) -> u64 {
    let mut held = 0;
    for _ in 0..200 {
        held = request_bodies(gw).await["held_bytes"]
            .as_u64()
            .expect("held_bytes");
        if range.contains(&held) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    held
}

/// Whether the mock has received a message of `len` bytes, waiting for it
/// up to 5 s.
async fn received(h: &Harness, len: usize) -> bool {
    for _ in 0..100 {
        if h.mock.received().iter().any(|r| r.body.len() == len) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// A client's half-sent message holds the bound on request bodies held at
/// once; another client's message with no room left is refused, its socket
/// closed with 1013 (try again later), cleanly, the message never sent on;
/// once the first message is whole and sent on, its room is back and
/// another client's message is relayed.
#[tokio::test]
async fn websocket_messages_are_held_against_the_buffered_bound() {
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.ws_max_message_bytes = 256 << 10;
        c.max_buffered_request_bytes = 256 << 10;
    })
    .await;
    let gw = h.gw();

    let mut holding = Raw::connect(&gw, &[]).await;
    let whole = Raw::encode(0x81, &vec![b' '; 200 << 10]);
    let (start, rest) = whole.split_at(190 << 10);
    holding.tcp.write_all(start).await.expect("write");
    let held = held_within(&gw, (180 << 10)..=(256 << 10)).await;
    assert!((180 << 10..=256 << 10).contains(&held), "{held}");

    let mut refused = Raw::connect(&gw, &[]).await;
    refused.frame(0x81, &vec![b' '; 100 << 10]).await;
    assert_eq!(refused.close_code().await, Some(1013));
    assert!(request_bodies(&gw).await["refused"].as_u64() >= Some(1));

    holding.tcp.write_all(rest).await.expect("write");
    assert!(received(&h, 200 << 10).await, "the held message is relayed");
    let held = held_within(&gw, 0..=(16 << 10)).await;
    assert!(held <= 16 << 10, "given back once sent on: {held}");

    let mut later = Raw::connect(&gw, &[]).await;
    later.frame(0x81, &vec![b'\t'; 100 << 10]).await;
    assert!(received(&h, 100 << 10).await, "room again");
    let refused_sent = h
        .mock
        .received()
        .iter()
        .filter(|r| r.body.len() == 100 << 10)
        .count();
    assert_eq!(refused_sent, 1, "the refused message never went upstream");
    drop((holding, later));
    h.finish().await;
}
