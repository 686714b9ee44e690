//! `wss://` to an `https://` upstream: the mock provider serves TLS with a
//! certificate made at run time ([`MockTls`]), trusted by the gateway
//! through `upstream_ca` (its roots) — or not trusted, which the client
//! is told about in the upgrade's answer.

use serde_json::json;
use toolwarden_mock_provider::{MockOptions, MockTls};

use super::client::{Raw, calls_of, connect, turn};
use crate::e2e::support::Harness;

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

fn tls_mock(tls: &MockTls) -> MockOptions {
    MockOptions {
        tls: Some(tls.clone()),
        ..MockOptions::default()
    }
}

#[tokio::test]
async fn turns_reach_an_https_upstream_over_wss() {
    let tls = MockTls::generate().expect("a test certificate");
    let ca = tls.ca_der();
    let mut h = Harness::with(tls_mock(&tls), |c| c.upstream_roots.push(ca)).await;
    assert!(h.mock.base_url().starts_with("https://localhost:"));
    let mut ws = connect(&h.gw(), &[AUTH], true).await;
    let first = json!({"model": "gpt-5", "input": [{"role": "user", "content": "Book TP123"}],
        "tools": [{"type": "function", "name": "book_flight", "parameters": {"type": "object"}}]});
    let events = turn(&mut ws, &first).await;
    let (calls, id) = calls_of(&events);
    assert_eq!(calls.len(), 1, "one tool call");
    let second = json!({"model": "gpt-5", "previous_response_id": id, "input": [
        {"type": "function_call_output", "call_id": calls[0].0, "output": "booked"}]});
    let events = turn(&mut ws, &second).await;
    assert!(String::from_utf8_lossy(events.last().unwrap()).contains("response.completed"));
    drop(ws);
    let received = h.mock.received();
    assert_eq!(received.len(), 2, "both messages went over wss://");
    assert!(received.iter().all(|r| r.method == http::Method::GET));
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (2, 0));
}

#[tokio::test]
async fn an_untrusted_upstream_certificate_is_refused_clearly() {
    let tls = MockTls::generate().expect("a test certificate");
    // The gateway has only the built-in roots: the mock's CA is unknown.
    let mut h = Harness::with(tls_mock(&tls), |_| {}).await;
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    assert!(raw.head.starts_with("HTTP/1.1 502"), "{}", raw.head);
    let mut body = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&body).contains("TLS handshake") {
        let read = tokio::io::AsyncReadExt::read(&mut raw.tcp, &mut chunk);
        match tokio::time::timeout(std::time::Duration::from_secs(5), read).await {
            Ok(Ok(n)) if n > 0 => body.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    let body = String::from_utf8_lossy(&body);
    assert!(body.contains("upstream_tls_error"), "{body}");
    assert!(body.contains("TLS handshake"), "{body}");
    assert_eq!(h.mock.request_count(), 0, "no request got through");
    // The gateway goes on serving.
    let health = h
        .client
        .get(format!("{}/healthz", h.gw()).parse().unwrap())
        .await;
    assert_eq!(health.expect("healthz").status(), 200);
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (1, 1));
}
