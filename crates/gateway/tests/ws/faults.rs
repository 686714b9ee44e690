//! Faults through real sockets: nothing panics, the other side is closed
//! cleanly, the record keeps what was seen, the gateway goes on serving.

use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use toolwarden_mock_provider::{Fault, MockOptions, RawResponse, Scripted};

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

/// A client handshake the gateway cannot accept (no key) is answered 400
/// before any upstream socket is opened: none carries its credentials.
#[tokio::test]
async fn a_bad_client_handshake_opens_no_upstream_socket() {
    let h = Harness::with(MockOptions::default(), |_| {}).await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "GET /v1/responses HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
         sec-websocket-version: 13\r\nauthorization: Bearer sk-test\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut tcp, head.as_bytes())
        .await
        .unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read(&mut tcp, &mut answer),
    )
    .await
    .expect("answered")
    .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(h.mock.received().is_empty(), "{:?}", h.mock.received());
    still_serves(&h).await;
}

/// A handshake of another WebSocket version is answered 400 with the
/// version the gateway speaks (RFC 6455 §4.4: `Sec-WebSocket-Version:
/// 13`), which a client reads to retry with it; no upstream socket opens.
#[tokio::test]
async fn a_handshake_of_another_version_is_told_the_version_spoken() {
    let h = Harness::with(MockOptions::default(), |_| {}).await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    for version in ["8", "14", ""] {
        let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "GET /v1/responses HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
             sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: {version}\r\n\
             authorization: Bearer sk-test\r\n\r\n"
        );
        tokio::io::AsyncWriteExt::write_all(&mut tcp, head.as_bytes())
            .await
            .unwrap();
        let mut answer = vec![0u8; 4096];
        let n = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::io::AsyncReadExt::read(&mut tcp, &mut answer),
        )
        .await
        .expect("answered")
        .unwrap();
        let answer = String::from_utf8_lossy(&answer[..n]).to_ascii_lowercase();
        assert!(answer.starts_with("http/1.1 400"), "{answer}");
        assert!(
            answer.contains("\r\nsec-websocket-version: 13\r\n"),
            "{version:?}: {answer}"
        );
    }
    // A handshake refused for another reason (no key) names no version.
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "GET /v1/responses HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
         sec-websocket-version: 13\r\nauthorization: Bearer sk-test\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut tcp, head.as_bytes())
        .await
        .unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read(&mut tcp, &mut answer),
    )
    .await
    .expect("answered")
    .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 400"), "{answer}");
    assert!(!answer.contains("sec-websocket-version"), "{answer}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(h.mock.received().is_empty(), "{:?}", h.mock.received());
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

/// A close without a code (a browser's `ws.close()`) reaches the upstream
/// without one (1005 "no status" to the upstream's library), not as 1000.
#[tokio::test]
async fn a_close_without_a_code_is_passed_on_without_one() {
    let h = Harness::start().await;
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    raw.frame(0x88, b"").await;
    let (op, payload) = raw.read_frame().await.expect("the close is answered");
    assert_eq!((op, payload.as_slice()), (0x88, &b""[..]));
    assert_eq!(upstream_ends(&h, 1).await, vec![Some(1005)]);
    still_serves(&h).await;
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
    // A message of exactly the limit is not larger: relayed.
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    raw.frame(0x81, &vec![b' '; 64 << 10]).await;
    let relayed = || h.mock.received().iter().any(|r| r.body.len() == 64 << 10);
    for _ in 0..100 {
        if relayed() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        relayed(),
        "a message of exactly ws_max_message_bytes is relayed"
    );
}

/// How the mock's sockets that their client ended did end, once `n` have.
async fn upstream_ends(h: &Harness, n: usize) -> Vec<Option<u16>> {
    // Generous: a bound only for a gateway that never closes (the suite
    // runs in parallel on two cores).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        let ends = h.mock.websocket_ends();
        if ends.len() >= n {
            return ends;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.mock.websocket_ends()
}

#[tokio::test]
async fn an_upstream_closing_mid_response_passes_its_close_and_keeps_the_turn() {
    let mut h = Harness::start().await;
    // After the function call's item is done, the upstream closes (gpt-5
    // reasons first: its reasoning item's two events come before the call).
    h.mock.set_fault(Fault::CloseMidStream(9, 4002));
    let mut ws = connect(&h.gw(), &[AUTH], true).await;
    send_text(
        &mut ws,
        json!({"type": "response.create", "model": "gpt-5", "input": "Book TP123"}).to_string(),
    )
    .await;
    let mut seen = Vec::new();
    let close = loop {
        match next(&mut ws).await {
            Ok(event) => seen.push(event),
            Err(code) => break code,
        }
    };
    assert_eq!(seen.len(), 9, "every event sent before the close");
    assert!(String::from_utf8_lossy(&seen[8]).contains("response.output_item.done"));
    assert_eq!(close, Some(4002), "the upstream's close code, passed on");
    h.mock.set_fault(Fault::None);
    still_serves(&h).await;
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (2, 1));
    let events = h.events();
    let calls = events.iter().filter(|e| e["type"] == "tool_call").count();
    assert_eq!(calls, 2, "the cut turn's call is recorded: {events:#?}");
    assert!(
        events.iter().any(|e| e
            .to_string()
            .contains("the upstream closed the websocket before the response finished")),
        "{events:#?}"
    );
}

#[tokio::test]
async fn an_unreadable_upstream_message_is_relayed_and_counted() {
    let h = Harness::start().await;
    h.mock.set_fault(Fault::MalformedSse);
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    send_text(
        &mut ws,
        json!({"type": "response.create", "model": "gpt-5", "input": "hi"}).to_string(),
    )
    .await;
    let first = next(&mut ws).await.expect("the unreadable message");
    assert_eq!(
        first.as_ref(),
        b"{\"type\":\"response.output_text.delta\",\"delta\":\"x",
        "relayed unchanged"
    );
    let mut last = Bytes::new();
    while !String::from_utf8_lossy(&last).contains("response.completed") {
        last = next(&mut ws).await.expect("the rest of the events");
    }
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_unparsed_responses_total", &[]) >= 1.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_unparsed_responses_total", &[]),
        1.0,
        "{m}"
    );
}

#[tokio::test]
async fn an_oversize_upstream_message_closes_both_sides_with_1009() {
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.ws_max_message_bytes = 64 << 10
    })
    .await;
    let created = json!({"type": "response.created", "response": {"id": "resp_big", "status": "in_progress"}});
    let big = json!({"type": "response.output_text.delta", "delta": "x".repeat(100 << 10)});
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: Vec::new(),
        chunks: vec![
            Bytes::from(created.to_string()),
            Bytes::from(big.to_string()),
        ],
        delay: Duration::ZERO,
    }));
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    send_text(
        &mut ws,
        json!({"type": "response.create", "model": "gpt-5", "input": "hi"}).to_string(),
    )
    .await;
    let first = next(&mut ws).await.expect("the first event");
    assert_eq!(first.as_ref(), created.to_string().as_bytes());
    assert_eq!(
        next(&mut ws).await,
        Err(Some(1009)),
        "the client: too large"
    );
    assert_eq!(
        upstream_ends(&h, 1).await,
        vec![Some(1009)],
        "the upstream: too large"
    );
    still_serves(&h).await;
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (2, 1));
}

#[tokio::test]
async fn faults_from_the_client_close_the_upstream_cleanly() {
    let h = Harness::with(MockOptions::default(), |c| {
        c.ws_max_message_bytes = 64 << 10
    })
    .await;
    // A close with a code, an oversize message, bad deflate data, a
    // connection dropped without a close: each socket's upstream gets a
    // close frame.
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    raw.frame(0x88, &4000u16.to_be_bytes()).await;
    assert_eq!(raw.close_code().await, Some(4000));
    assert_eq!(upstream_ends(&h, 1).await, vec![Some(4000)]);

    let mut raw = Raw::connect(&h.gw(), &[]).await;
    raw.frame(0x81, &vec![b' '; 100 << 10]).await;
    assert_eq!(raw.close_code().await, Some(1009));
    assert_eq!(upstream_ends(&h, 2).await[1], Some(1009));

    let mut raw = Raw::connect(&h.gw(), &["sec-websocket-extensions: permessage-deflate"]).await;
    raw.frame(0xC1, b"\xff\xff\xff\xff not deflate").await;
    assert!(raw.close_code().await.is_some());
    assert_eq!(
        upstream_ends(&h, 3).await[2],
        Some(1001),
        "going away: the library reads bad deflate data as the connection failing"
    );

    let raw = Raw::connect(&h.gw(), &[]).await;
    drop(raw);
    assert_eq!(upstream_ends(&h, 4).await[3], Some(1001), "going away");
    still_serves(&h).await;
}

/// A client that stops reading while its turn streams: the write to it
/// waits `client_body_timeout`, then the socket counts as broken by the
/// client. The upstream gets a close, the turn is recorded with the error,
/// and the connection is let go; before, the relay waited on the write
/// for good, holding both sockets and, at shutdown, the gateway.
#[tokio::test]
async fn a_client_that_stops_reading_is_let_go() {
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.client_body_timeout = Duration::from_millis(500)
    })
    .await;
    // ~32 MB of events: more than the sockets' buffers hold.
    let delta = json!({"type": "response.output_text.delta", "delta": "x".repeat(16 << 10)});
    let mut sse = vec![Bytes::from(
        "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_big\"}}\n\n",
    )];
    sse.extend((0..2000).map(|_| Bytes::from(format!("data: {delta}\n\n"))));
    h.mock.push_response(Scripted::Sse(sse, Duration::ZERO));
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    assert!(raw.head.contains(" 101 "), "{}", raw.head);
    let mut message = create();
    message["type"] = json!("response.create");
    raw.frame(0x81, message.to_string().as_bytes()).await;
    // Read nothing until the gateway has given the client up: it closes
    // the upstream's socket going away (the upstream's stream alone never
    // ends it). Reading earlier would let a slow gateway's writes through.
    assert_eq!(upstream_ends(&h, 1).await, vec![Some(1001)]);
    // Then: what was buffered, then EOF (the gateway has let the
    // connection go).
    let mut buf = vec![0u8; 1 << 20];
    let eof = tokio::time::timeout(Duration::from_secs(30), async {
        use tokio::io::AsyncReadExt;
        while raw.tcp.read(&mut buf).await.is_ok_and(|n| n > 0) {}
    })
    .await;
    assert!(eof.is_ok(), "the client's connection is still open");
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (1, 1));
    assert!(
        h.events()
            .iter()
            .any(|e| e.to_string().contains("nothing read for 500 ms")),
        "{:#?}",
        h.events()
    );
}

/// A client that sends pings and reads nothing: each pong is written
/// before its next frame is read, so once the pongs fill the sockets'
/// buffers the gateway stops reading, and after `client_body_timeout`
/// lets the connection go; before, it read on and queued a pong per ping
/// without bound.
#[tokio::test]
async fn a_ping_flood_from_a_client_that_reads_nothing_is_let_go() {
    let h = Harness::with(MockOptions::default(), |c| {
        c.client_body_timeout = Duration::from_millis(500)
    })
    .await;
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    assert!(raw.head.contains(" 101 "), "{}", raw.head);
    // 256 masked pings of 125 bytes per write.
    let mut pings = Vec::new();
    for _ in 0..256 {
        pings.extend_from_slice(&[0x89, 0x80 | 125, 1, 2, 3, 4]);
        pings.extend((0..125).map(|i| 0x5a ^ [1u8, 2, 3, 4][i % 4]));
    }
    // Seconds in the fixed gateway (the buffers fill, then the timeout);
    // the old one read on for good.
    let flood = tokio::time::timeout(Duration::from_secs(60), async {
        for sent in 0u64.. {
            use tokio::io::AsyncWriteExt;
            if raw.tcp.write_all(&pings).await.is_err() {
                return sent * 256;
            }
        }
        unreachable!()
    })
    .await;
    let sent = flood.expect("the gateway still reads pings after 60 s");
    assert!(sent > 1000, "cut off after {sent} pings");
    assert_eq!(upstream_ends(&h, 1).await, vec![Some(1001)]);
    still_serves(&h).await;
}

/// More turns open on one socket than the gateway keeps: the oldest is
/// recorded as it stands, with an error saying why, not as complete.
#[tokio::test]
async fn past_the_open_turns_bound_the_oldest_is_recorded_with_why() {
    let mut h = Harness::with(MockOptions::default(), |_| {}).await;
    // The upstream reads every message and answers none.
    h.mock.set_fault(Fault::Hang);
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    let mut message = create();
    message["type"] = json!("response.create");
    for _ in 0..65 {
        send_text(&mut ws, message.to_string()).await;
    }
    // The gateway reads each message and sends it on.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(ws);
    h.finish().await;
    let errors: Vec<String> = h
        .events()
        .into_iter()
        .filter(|e| e["type"] == "request")
        .filter_map(|e| e["error"].as_str().map(String::from))
        .collect();
    assert_eq!(errors.len(), 65, "{errors:?}");
    let evicted = errors
        .iter()
        .filter(|e| e.contains("more than 64 turns open"))
        .count();
    assert_eq!(evicted, 1, "{errors:?}");
}

/// An upstream that accepts the upgrade and then reads nothing: a large
/// message to it fills the sockets' buffers and its write waits.
pub(super) async fn deaf_upstream() -> String {
    use http_body_util::Full;
    use hyper::{Request, Response, body::Incoming, service::service_fn};
    use hyper_util::rt::TokioIo;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service_fn(|mut req: Request<Incoming>| async move {
                let (response, upgrade) = yawc::WebSocket::upgrade(&mut req).expect("an upgrade");
                tokio::spawn(async move {
                    if let Ok(socket) = upgrade.await {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                        drop(socket);
                    }
                });
                let (parts, _) = response.into_parts();
                Ok::<_, std::convert::Infallible>(Response::from_parts(
                    parts,
                    Full::new(Bytes::new()),
                ))
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

/// A `response.create` of ~8 MB (more than the sockets' buffers hold: a
/// deaf upstream's receive buffer stays at its first size, and the
/// gateway's send buffer is at most 4 MiB by Linux's default `tcp_wmem`)
/// answering one call, `call_deaf`.
pub(super) fn large_turn() -> serde_json::Value {
    json!({"type": "response.create", "model": "gpt-5", "input": [
        {"role": "user", "content": "x".repeat(8 << 20)},
        {"type": "function_call", "call_id": "call_deaf", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_deaf", "output": "found it"},
    ]})
}

/// The request records and the results of the JSONL log: a turn whose
/// write was cut is recorded with `why` (not as the client's 499) and its
/// result is counted.
pub(super) fn assert_cut_turn_recorded(h: &Harness, stats: &toolwarden_store::Stats, why: &str) {
    let events = h.events();
    let requests: Vec<_> = events.iter().filter(|e| e["type"] == "request").collect();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let error = requests[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains(why), "{error}");
    assert_ne!(requests[0]["status"], 499, "{:#?}", requests[0]);
    let results: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["call_id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(results, ["call_deaf"], "its result is counted once");
    assert_eq!((stats.requests.total, stats.requests.errors), (1, 1));
}

/// A turn whose message the upstream stops reading: after
/// `client_body_timeout` the socket counts as broken by the upstream and
/// the turn is recorded with that, and with its result. Before, the cut
/// dropped the turn unread: a 499 "client disconnected" without its result.
#[tokio::test]
async fn a_turn_cut_by_an_upstream_that_stops_reading_is_recorded_with_why() {
    let upstream = deaf_upstream().await;
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
        c.client_body_timeout = Duration::from_millis(500);
    })
    .await;
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    send_text(&mut ws, large_turn().to_string()).await;
    // The gateway closes the client's socket once the write is given up.
    assert_eq!(next(&mut ws).await, Err(Some(1001)));
    let stats = h.finish().await;
    assert_cut_turn_recorded(&h, &stats, "nothing read for 500 ms");
}

/// A close wait far longer than any scheduling delay: a side that was
/// kept waiting for it is told from one that was not by half of it.
const LONG_CLOSE_WAIT: Duration = Duration::from_secs(30);

/// A client's close is answered at once, whatever the upstream does with
/// it (RFC 6455 §5.5.1: "as soon as practical"): an upstream that never
/// answers it does not hold the client. Before, the client waited for the
/// upstream's answer (`ws_close_wait_ms`, or the upstream's stall bound)
/// before its own.
#[tokio::test]
async fn a_clients_close_is_answered_without_waiting_for_the_upstreams() {
    let upstream = deaf_upstream().await;
    let h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
        c.ws_close_wait = LONG_CLOSE_WAIT;
    })
    .await;
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    assert!(raw.head.starts_with("HTTP/1.1 101"), "{}", raw.head);
    let started = std::time::Instant::now();
    raw.frame(0x88, &4000u16.to_be_bytes()).await;
    assert_eq!(raw.close_code().await, Some(4000), "the close is answered");
    let waited = started.elapsed();
    assert!(
        waited < LONG_CLOSE_WAIT / 2,
        "answered after {waited:?}, not at once"
    );
    // The library's answer is the one close frame (RFC 6455 §5.5.1): the
    // connection's shutdown sends no other.
    assert_eq!(raw.read_frame().await, None, "one close frame");
}

/// What [`closing_upstream`] saw of the gateway after sending its close:
/// how long the gateway took to answer it, and the close frames it got
/// before the connection ended.
struct UpstreamSaw {
    answered_after: Option<Duration>,
    closes: usize,
}

/// The next connection to `listener`, its WebSocket upgrade accepted as a
/// raw upstream does (no extension): the socket, past the `101`.
pub(super) async fn accept_upgrade(listener: &tokio::net::TcpListener) -> tokio::net::TcpStream {
    use base64::Engine;
    use sha1::Digest;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut tcp, _) = listener.accept().await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        assert_eq!(tcp.read(&mut byte).await.unwrap(), 1, "the upgrade's head");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let key = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("sec-websocket-key")
                .then(|| value.trim())
        })
        .expect("a key");
    let mut sha = sha1::Sha1::new();
    sha.update(key.as_bytes());
    sha.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    let accept = base64::engine::general_purpose::STANDARD.encode(sha.finalize());
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-accept: {accept}\r\n\r\n"
    );
    tcp.write_all(answer.as_bytes()).await.unwrap();
    tcp
}

/// A raw upstream that accepts the upgrade and reads the first bytes the
/// gateway writes after it (a message's start), then nothing more; the
/// channel says when those bytes came: the gateway has begun a write that
/// will wait (a large message fills the sockets' buffers).
pub(super) async fn deaf_upstream_after_a_start() -> (String, tokio::sync::oneshot::Receiver<()>) {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut tcp = accept_upgrade(&listener).await;
        let mut start = [0u8; 2];
        if tcp.read_exact(&mut start).await.is_ok() {
            let _ = tx.send(());
        }
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(tcp);
    });
    (format!("http://{addr}"), rx)
}

/// A raw upstream that accepts the upgrade (no extension), sends a close
/// with code 4001 at once and reads the gateway's frames (masked) until it
/// closes the connection; what it saw comes on the channel.
async fn closing_upstream() -> (String, tokio::sync::oneshot::Receiver<UpstreamSaw>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut tcp = accept_upgrade(&listener).await;
        let sent = std::time::Instant::now();
        tcp.write_all(&[0x88, 2, 0x0f, 0xa1]).await.unwrap();
        let mut saw = UpstreamSaw {
            answered_after: None,
            closes: 0,
        };
        let read = async {
            loop {
                let mut h = [0u8; 2];
                if tcp.read_exact(&mut h).await.is_err() {
                    break;
                }
                let len = match h[1] & 0x7f {
                    126 => {
                        let mut l = [0u8; 2];
                        tcp.read_exact(&mut l).await.unwrap();
                        u16::from_be_bytes(l) as usize
                    }
                    127 => {
                        let mut l = [0u8; 8];
                        tcp.read_exact(&mut l).await.unwrap();
                        u64::from_be_bytes(l) as usize
                    }
                    n => n as usize,
                };
                let mut rest = vec![0u8; 4 + len];
                if tcp.read_exact(&mut rest).await.is_err() {
                    break;
                }
                if h[0] & 0x0f == 0x8 {
                    saw.answered_after.get_or_insert(sent.elapsed());
                    saw.closes += 1;
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
        let _ = tx.send(saw);
    });
    (format!("http://{addr}"), rx)
}

/// An upstream's close is answered at once, whatever the client does with
/// the close passed on to it (RFC 6455 §5.5.1), and each side gets one
/// close frame. Before, the gateway waited for the client's answer
/// (`ws_close_wait_ms` when it never came) before answering the upstream.
#[tokio::test]
async fn an_upstreams_close_is_answered_without_waiting_for_the_clients() {
    let (upstream, saw) = closing_upstream().await;
    let h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
        c.ws_close_wait = LONG_CLOSE_WAIT;
    })
    .await;
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    assert!(raw.head.starts_with("HTTP/1.1 101"), "{}", raw.head);
    // The client reads the close and does not answer it while the
    // upstream waits for the gateway's answer.
    let (op, payload) = raw.read_frame().await.expect("the upstream's close");
    assert_eq!((op, payload.as_slice()), (0x88, &4001u16.to_be_bytes()[..]));
    let saw = saw.await.unwrap();
    let answered = saw
        .answered_after
        .expect("the upstream's close is answered");
    assert!(
        answered < LONG_CLOSE_WAIT / 2,
        "answered after {answered:?}, not at once"
    );
    assert_eq!(saw.closes, 1, "one close frame to the upstream");
    // Answered now, the client's connection ends.
    raw.frame(0x88, &4001u16.to_be_bytes()).await;
    assert_eq!(
        raw.read_frame().await,
        None,
        "one close frame to the client"
    );
}

/// A side that broke does not hold the other's close: an upstream that
/// stops reading a turn's message is given up after `client_body_timeout`
/// (500 ms), and the client is closed then, while the gateway waits on
/// the broken side. Before, the client's close waited for the deaf
/// upstream's last frame (`ws_close_wait_ms`), then for its close to it
/// (as long again).
#[tokio::test]
async fn a_side_that_broke_does_not_hold_the_others_close() {
    let upstream = deaf_upstream().await;
    let h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
        c.client_body_timeout = Duration::from_millis(500);
        c.ws_close_wait = LONG_CLOSE_WAIT;
    })
    .await;
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    // Binary (relayed unread): no parse of its 24 MB in the time taken.
    let large = Bytes::from(vec![b'x'; 24 << 20]);
    futures_util::SinkExt::send(&mut ws, yawc::Frame::binary(large))
        .await
        .expect("send");
    // The write upstream stalls about now and is given up 500 ms later.
    let sent = std::time::Instant::now();
    assert_eq!(next(&mut ws).await, Err(Some(1001)));
    let waited = sent.elapsed();
    assert!(
        waited < LONG_CLOSE_WAIT / 2,
        "closed after {waited:?}: held by the broken side"
    );
}
