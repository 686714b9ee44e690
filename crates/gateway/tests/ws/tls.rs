//! `wss://` to an `https://` upstream: the mock provider serves TLS with a
//! certificate made at run time ([`MockTls`]), trusted by the gateway
//! through `upstream_ca` (its roots) — or not trusted, which the client
//! is told about in the upgrade's answer. And `wss://` to the gateway
//! itself, serving HTTPS (`tls_cert`, `tls_key`).

use serde_json::json;
use toolwarden_mock_provider::{MockOptions, MockTls};

use super::client::{Raw, calls_of, connect, turn};
use crate::e2e::support::Harness;

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

/// A tool conversation's two turns over `ws`: the model calls a tool, the
/// client answers it with `output`, the model finishes.
async fn two_turns<S: super::client::Stream>(ws: &mut yawc::WebSocket<S>, output: &str) {
    let first = json!({"model": "gpt-5", "input": [{"role": "user", "content": "Book TP123"}],
        "tools": [{"type": "function", "name": "book_flight", "parameters": {"type": "object"}}]});
    let events = turn(ws, &first).await;
    let (calls, id) = calls_of(&events);
    assert_eq!(calls.len(), 1, "one tool call");
    let second = json!({"model": "gpt-5", "previous_response_id": id, "input": [
        {"type": "function_call_output", "call_id": calls[0].0, "output": output}]});
    let events = turn(ws, &second).await;
    assert!(String::from_utf8_lossy(events.last().unwrap()).contains("response.completed"));
}

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
    two_turns(&mut ws, "booked").await;
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

/// A client's `wss://` to a gateway serving HTTPS: the upgrade over TLS
/// (HTTP/1.1 by ALPN), two turns of a tool conversation, both recorded.
#[tokio::test]
async fn turns_over_wss_to_a_gateway_serving_https() {
    let tls_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tls");
    let server = toolwarden_gateway::ServerTls::load(
        std::path::Path::new(&format!("{tls_dir}/server.pem")),
        std::path::Path::new(&format!("{tls_dir}/server.key")),
    )
    .unwrap();
    let mut h = Harness::with(MockOptions::default(), |c| c.tls = Some(server)).await;
    let addr = h.gateway.as_ref().unwrap().addr();
    let mut config = crate::e2e::support::test_ca_client_config();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let stream = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    let url: url::Url = format!("wss://localhost:{}/v1/responses", addr.port())
        .parse()
        .unwrap();
    let request = yawc::HttpRequest::builder().header(AUTH.0, AUTH.1);
    let mut ws =
        yawc::WebSocket::handshake_with_request(url, stream, yawc::Options::default(), request)
            .await
            .expect("the upgrade over TLS");
    two_turns(&mut ws, "Error: sold out").await;
    drop(ws);
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (2, 0));
    let (calls, failures): (u64, u64) = stats
        .tools
        .iter()
        .fold((0, 0), |(c, f), t| (c + t.calls, f + t.failures));
    assert_eq!((calls, failures), (1, 1), "{:?}", stats.tools);
}
