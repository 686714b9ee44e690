//! An open WebSocket keeps its client connection's place under
//! `max_client_connections`: hyper's connection task ends when it hands the
//! upgraded socket over, and the relay that outlives it holds the place
//! until the socket closes.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwarden_mock_provider::MockOptions;

use super::client::{connect, turn};
use crate::e2e::support::Harness;

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

/// The status line a new connection gets for `GET /healthz`.
async fn healthz_status(gw: &str) -> String {
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
    let text = String::from_utf8_lossy(&reply);
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
