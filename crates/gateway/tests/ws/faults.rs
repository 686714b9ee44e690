//! Faults through real sockets: nothing panics, the other side is closed
//! cleanly, the record keeps what was seen, the gateway goes on serving.

use std::time::Duration;

use serde_json::json;
use toolwarden_mock_provider::{Fault, MockOptions};

use super::client::{Raw, connect, next, send_text, try_connect, turn};
use crate::e2e::support::{Harness, metric};

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

fn create() -> serde_json::Value {
    json!({"model": "gpt-5", "input": [{"role": "user", "content": "Book TP123"}]})
}

/// The gateway still serves a whole turn.
async fn still_serves(h: &Harness) {
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    let events = turn(&mut ws, &create()).await;
    assert!(String::from_utf8_lossy(events.last().unwrap()).contains("response.completed"));
}

#[tokio::test]
async fn an_upstream_refusing_the_upgrade_gives_the_client_its_answer() {
    let opts = MockOptions {
        api_key: Some("sk-right".into()),
        ..MockOptions::default()
    };
    let h = Harness::with(opts, |_| {}).await;
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    assert!(raw.head.starts_with("HTTP/1.1 401"), "{}", raw.head);
    let mut body = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        tokio::io::AsyncReadExt::read_to_end(&mut raw.tcp, &mut body),
    )
    .await;
    assert!(
        String::from_utf8_lossy(&body).contains("Incorrect API key"),
        "{body:?}"
    );
    h.mock
        .set_fault(Fault::Status(503, r#"{"error":"overloaded"}"#.into()));
    let raw = Raw::connect(&h.gw(), &[]).await;
    assert!(raw.head.starts_with("HTTP/1.1 503"), "{}", raw.head);
    let m = h
        .metrics_when(|m| {
            metric(
                m,
                "toolwarden_upstream_requests_total",
                &[("status", "503")],
            ) == 1.0
        })
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_upstream_requests_total",
            &[("status", "401")]
        ),
        1.0,
        "{m}"
    );
    assert!(try_connect(&h.gw(), &[AUTH], false).await.is_err());
}

#[tokio::test]
async fn an_upstream_breaking_mid_response_closes_the_client() {
    let mut h = Harness::start().await;
    h.mock.set_fault(Fault::ResetMidStream(2));
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    send_text(
        &mut ws,
        json!({"type": "response.create", "model": "gpt-5", "input": "hi"}).to_string(),
    )
    .await;
    assert!(next(&mut ws).await.is_ok());
    assert!(next(&mut ws).await.is_ok());
    assert_eq!(
        next(&mut ws).await,
        Err(Some(1001)),
        "the client is closed: going away"
    );
    h.mock.set_fault(Fault::None);
    still_serves(&h).await;
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 2);
    assert_eq!(
        stats.requests.errors, 1,
        "the broken turn is recorded with its error"
    );
}

#[tokio::test]
async fn a_close_from_either_side_is_passed_on_with_its_code() {
    let mut h = Harness::start().await;
    // The client closes mid-response (the model still thinking).
    h.mock.set_fault(Fault::StallAfter(1));
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    let create = json!({"type": "response.create", "model": "gpt-5", "input": "hi"}).to_string();
    raw.frame(0x81, create.as_bytes()).await;
    let (op, _) = raw.read_frame().await.expect("one event");
    assert_eq!(op, 0x81);
    let mut close = 4000u16.to_be_bytes().to_vec();
    close.extend_from_slice(b"bye");
    raw.frame(0x88, &close).await;
    assert_eq!(raw.close_code().await, Some(4000), "the close is answered");
    h.mock.set_fault(Fault::None);
    still_serves(&h).await;
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (2, 1));
}

#[tokio::test]
async fn oversize_messages_bad_deflate_and_unreadable_messages() {
    let h = Harness::with(MockOptions::default(), |c| {
        c.ws_max_message_bytes = 64 << 10
    })
    .await;
    // Oversize: closed with 1009.
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    raw.frame(0x81, &vec![b' '; 100 << 10]).await;
    assert_eq!(raw.close_code().await, Some(1009));

    // Bad deflate data on a socket that agreed permessage-deflate: a
    // compressed (RSV1) frame that does not inflate.
    let mut raw = Raw::connect(&h.gw(), &["sec-websocket-extensions: permessage-deflate"]).await;
    assert!(raw.head.contains("permessage-deflate"), "{}", raw.head);
    raw.frame(0xC1, b"\xff\xff\xff\xff not deflate").await;
    let code = raw.close_code().await;
    assert!(matches!(code, Some(1002 | 1007 | 1011)), "{code:?}");

    // A fragmented message, masked, with a ping between its fragments; and
    // a message that is not JSON (relayed unread, counted).
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    raw.frame(0x01, b"not json ").await;
    raw.frame(0x89, b"are you there").await;
    let (op, payload) = raw.read_frame().await.expect("pong");
    assert_eq!((op, payload.as_slice()), (0x8A, &b"are you there"[..]));
    raw.frame(0x80, b"at all").await;
    let create = json!({"type": "response.create", "model": "gpt-5", "input": "hi"}).to_string();
    let (first, rest) = create.as_bytes().split_at(10);
    raw.frame(0x01, first).await;
    raw.frame(0x80, rest).await;
    let mut last = String::new();
    while let Some((op, payload)) = raw.read_frame().await {
        assert_eq!(op, 0x81);
        last = String::from_utf8_lossy(&payload).into_owned();
        if last.contains("response.completed") {
            break;
        }
    }
    assert!(last.contains("response.completed"), "{last}");
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_unparsed_requests_total", &[]) == 1.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_unparsed_requests_total", &[]),
        1.0,
        "{m}"
    );
    still_serves(&h).await;
    // The mock received the unread message as it was sent.
    assert!(
        h.mock
            .received()
            .iter()
            .any(|r| r.body.as_ref() == b"not json at all")
    );
}
