//! An open WebSocket keeps its client connection's place under
//! `max_client_connections`: hyper's connection task ends when it hands the
//! upgraded socket over, and the relay that outlives it holds the place
//! until the socket closes. A client's messages are held against
//! `max_buffered_request_bytes` as HTTP bodies are, an upstream's against
//! `max_buffered_response_bytes` as the response copies are.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use toolwarden_mock_provider::MockOptions;

use super::client::{Raw, connect, turn};
use super::faults::accept_upgrade;
use crate::e2e::support::{Harness, metric};

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

/// `bound` of `/healthz` (`request_bodies`, `response_copies`).
async fn held(gw: &str, bound: &str) -> serde_json::Value {
    let text = healthz(gw).await;
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(body).expect("healthz json");
    json[bound].clone()
}

/// `request_bodies` of `/healthz`.
async fn request_bodies(gw: &str) -> serde_json::Value {
    held(gw, "request_bodies").await
}

/// Waits until `/healthz`'s `held_bytes` of the request bodies is in
/// `range`; the last value.
async fn held_within(gw: &str, range: std::ops::RangeInclusive<u64>) -> u64 {
    bound_within(gw, "request_bodies", range).await
}

/// Waits until `/healthz`'s `held_bytes` of `bound` is in `range`; the
/// last value.
async fn bound_within(gw: &str, bound: &str, range: std::ops::RangeInclusive<u64>) -> u64 {
    let mut held_bytes = 0;
    for _ in 0..200 {
        held_bytes = held(gw, bound).await["held_bytes"]
            .as_u64()
            .expect("held_bytes");
        if range.contains(&held_bytes) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    held_bytes
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

/// A raw upstream: every WebSocket upgrade it accepts comes on the
/// channel, past its `101`.
async fn upstream_sockets() -> (String, mpsc::UnboundedReceiver<TcpStream>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let tcp = accept_upgrade(&listener).await;
            if tx.send(tcp).is_err() {
                break;
            }
        }
    });
    (format!("http://{addr}"), rx)
}

/// The next upstream socket the gateway opens, within 5 s.
async fn next_upstream(sockets: &mut mpsc::UnboundedReceiver<TcpStream>) -> Raw {
    let tcp = tokio::time::timeout(Duration::from_secs(5), sockets.recv())
        .await
        .expect("an upstream socket within 5 s")
        .expect("the upstream listens");
    Raw {
        tcp,
        head: String::new(),
    }
}

/// An upstream's half-sent message holds the bound on responses held at
/// once; another upstream's message with no room left is refused: its
/// client closed with 1013 (try again later) before any message, the
/// upstream with 1001; once the first message is whole and relayed, its
/// room is back and another upstream's message is relayed.
#[tokio::test]
async fn upstream_websocket_messages_are_held_against_the_responses_bound() {
    let (upstream, mut sockets) = upstream_sockets().await;
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
        c.ws_max_message_bytes = 256 << 10;
        c.response_parse_limit = 256 << 10;
        c.max_buffered_response_bytes = 256 << 10;
    })
    .await;
    let gw = h.gw();

    let mut holding = Raw::connect(&gw, &[]).await;
    assert!(holding.head.starts_with("HTTP/1.1 101"), "{}", holding.head);
    let mut first_upstream = next_upstream(&mut sockets).await;
    let whole = Raw::encode_unmasked(0x81, &vec![b'a'; 200 << 10]);
    let (start, rest) = whole.split_at(190 << 10);
    first_upstream.tcp.write_all(start).await.expect("write");
    let held_bytes = bound_within(&gw, "response_copies", (180 << 10)..=(256 << 10)).await;
    assert!(
        (180 << 10..=256 << 10).contains(&held_bytes),
        "{held_bytes}"
    );

    let mut refused = Raw::connect(&gw, &[]).await;
    let mut refused_upstream = next_upstream(&mut sockets).await;
    let message = Raw::encode_unmasked(0x81, &vec![b'b'; 100 << 10]);
    refused_upstream
        .tcp
        .write_all(&message)
        .await
        .expect("write");
    let (op, payload) = refused.read_frame().await.expect("a close");
    assert_eq!(op & 0x0f, 0x8, "a close first, not the message");
    assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1013);
    let reason = String::from_utf8_lossy(&payload[2..]).into_owned();
    assert!(reason.contains("max_buffered_response_bytes"), "{reason}");
    assert_eq!(refused_upstream.close_code().await, Some(1001));
    assert!(held(&gw, "response_copies").await["refused"].as_u64() >= Some(1));

    first_upstream.tcp.write_all(rest).await.expect("write");
    let (op, payload) = holding.read_frame().await.expect("the held message");
    assert_eq!((op, payload.len()), (0x81, 200 << 10), "relayed whole");
    let held_bytes = bound_within(&gw, "response_copies", 0..=(16 << 10)).await;
    assert!(held_bytes <= 16 << 10, "given back once read: {held_bytes}");

    let mut later = Raw::connect(&gw, &[]).await;
    let mut later_upstream = next_upstream(&mut sockets).await;
    let message = Raw::encode_unmasked(0x81, &vec![b'c'; 100 << 10]);
    later_upstream.tcp.write_all(&message).await.expect("write");
    let (op, payload) = later.read_frame().await.expect("room again");
    assert_eq!((op, payload.len()), (0x81, 100 << 10));
    drop((holding, later, first_upstream, later_upstream));
    h.finish().await;
}

/// An upstream event `{"type": …}` with `fields`, as one unmasked frame.
fn server_event(kind: &str, fields: serde_json::Value) -> Vec<u8> {
    let mut event = json!({"type": kind});
    event
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    Raw::encode_unmasked(0x81, event.to_string().as_bytes())
}

/// A turn whose parse finds no room is not read further, and what it kept
/// is not all its calls: a `response.inject` into it goes on as the client
/// sent it in `fix` mode, since an output for a call read after the stop
/// would otherwise be taken out as having no call. Another socket's
/// half-sent message holds most of the bound on responses; the turn's
/// first call is relayed (its message fits) but its parse, grown by the
/// call's arguments beside it, is refused room.
#[tokio::test]
async fn an_inject_into_a_turn_whose_parse_found_no_room_goes_as_sent() {
    const BOUND: usize = 64 << 10;
    let (upstream, mut sockets) = upstream_sockets().await;
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
        c.repair = toolwarden_gateway::RepairMode::Fix;
        c.ws_max_message_bytes = BOUND;
        c.response_parse_limit = BOUND;
        c.max_buffered_response_bytes = BOUND;
    })
    .await;
    let gw = h.gw();

    let _holding = Raw::connect(&gw, &[]).await;
    let mut holding_upstream = next_upstream(&mut sockets).await;
    let whole = Raw::encode_unmasked(0x81, &vec![b'a'; 60 << 10]);
    holding_upstream
        .tcp
        .write_all(&whole[..48 << 10])
        .await
        .expect("write");
    let held_bytes = bound_within(&gw, "response_copies", (48 << 10)..=(52 << 10)).await;
    assert!((48 << 10..=52 << 10).contains(&held_bytes), "{held_bytes}");

    let mut client = Raw::connect(&gw, &[]).await;
    let mut turn_upstream = next_upstream(&mut sockets).await;
    let create = json!({"type": "response.create", "model": "gpt-5",
        "input": [{"role": "user", "content": "Book TP123"}]});
    client.frame(0x81, create.to_string().as_bytes()).await;
    let (_, got) = turn_upstream.read_frame().await.expect("the create");
    assert_eq!(got, create.to_string().as_bytes());

    let response = json!({"id": "resp_1", "object": "response", "model": "gpt-5",
        "status": "in_progress", "output": []});
    let call = |id: &str, arguments: String| {
        json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
            "name": "lookup", "arguments": arguments, "status": "completed"})
    };
    let events = [
        server_event(
            "response.created",
            json!({"sequence_number": 0, "response": response}),
        ),
        // Its message fits beside the held one; its parse, holding the
        // arguments as well, does not.
        server_event(
            "response.output_item.done",
            json!({"sequence_number": 1, "output_index": 0,
                "item": call("call_1", json!({"q": "x".repeat(10 << 10)}).to_string())}),
        ),
        server_event(
            "response.output_item.done",
            json!({"sequence_number": 2, "output_index": 1,
                "item": call("call_2", json!({"q": "TP123"}).to_string())}),
        ),
    ];
    for event in &events {
        turn_upstream.tcp.write_all(event).await.expect("write");
        let (op, _) = client.read_frame().await.expect("the event");
        assert_eq!(op, 0x81, "relayed");
    }
    let no_room = |m: &str| {
        metric(
            m,
            "toolwarden_unparsed_responses_total",
            &[("reason", "no_room")],
        )
    };
    let m = h.metrics_when(|m| no_room(m) >= 1.0).await;
    assert_eq!(no_room(&m), 1.0, "the turn's parse is refused room: {m}");

    let out = |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
    let inject = format!(
        r#"{{"type": "response.inject", "response_id": "resp_1", "input": [{}, {}]}}"#,
        out("call_1"),
        out("call_2")
    );
    client.frame(0x81, inject.as_bytes()).await;
    let (_, got) = turn_upstream.read_frame().await.expect("the inject");
    assert_eq!(String::from_utf8_lossy(&got), inject, "sent on as it came");
    let m = h.metrics().await;
    assert_eq!(metric(&m, "toolwarden_repairs_total", &[]), 0.0, "{m}");
    drop((client, turn_upstream, holding_upstream));
    h.finish().await;
}
