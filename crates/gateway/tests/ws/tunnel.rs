//! Any other WebSocket to a provider (the OpenAI Realtime API's
//! `/v1/realtime`, Gemini Live's `BidiGenerateContent`) is relayed: the
//! upgrade goes to the provider it belongs to with the client's path, query
//! and headers, the chosen subprotocol comes back, text and binary messages
//! pass byte for byte both ways, and the upgrade is recorded as one
//! pass-through request (`101`). (It went as a plain `GET`, its upgrade
//! headers dropped, and the provider refused it.) Their messages are read
//! too (`voice`): a binary frame on a Realtime socket is no Realtime
//! message, and counts as unparsed.

use std::{
    convert::Infallible,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use futures_util::SinkExt;
use http_body_util::Full;
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use toolwarden_gateway::Upstream;
use toolwarden_mock_provider::MockOptions;
use yawc::{Frame, OpCode, WebSocket};

use super::client::connect_path;
use crate::e2e::support::{Harness, metric};

/// What an echo upstream was asked: path and query, `authorization`,
/// `x-goog-api-key`, the subprotocols offered.
type Asked = Arc<Mutex<Vec<[String; 4]>>>;

/// The message an [`echo_upstream`] answers with a close without a code.
const CLOSE_WITHOUT_CODE: &[u8] = b"close without a code";

/// An upstream that accepts any WebSocket on any path, chooses the first
/// subprotocol offered, sets two cookies on its `101` (as the Cloudflare in
/// front of the OpenAI API does), and echoes every text and binary message
/// but [`CLOSE_WITHOUT_CODE`].
async fn echo_upstream() -> (String, Asked) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked: Asked = Arc::default();
    let seen = asked.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            let service = service_fn(move |mut req: Request<Incoming>| {
                let header = |n: &str| {
                    (req.headers().get(n))
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string()
                };
                let protocols = header("sec-websocket-protocol");
                seen.lock().unwrap().push([
                    req.uri().to_string(),
                    header("authorization"),
                    header("x-goog-api-key"),
                    protocols.clone(),
                ]);
                let (response, upgrade) = WebSocket::upgrade(&mut req).expect("an upgrade");
                tokio::spawn(async move {
                    let Ok(mut socket) = upgrade.await else {
                        return;
                    };
                    while let Ok(frame) = socket.next_frame().await {
                        if frame.payload().as_ref() == CLOSE_WITHOUT_CODE {
                            let close = Frame::from((OpCode::Close, Bytes::new()));
                            let _ = socket.send(close).await;
                            let _ = socket.next_frame().await;
                            break;
                        }
                        let echo = match frame.opcode() {
                            OpCode::Text => Frame::text(frame.payload().clone()),
                            OpCode::Binary => Frame::binary(frame.payload().clone()),
                            _ => break,
                        };
                        if socket.send(echo).await.is_err() {
                            break;
                        }
                    }
                });
                let (mut parts, _) = response.into_parts();
                for cookie in ["__cf_bm=a; path=/", "_cfuvid=b; path=/"] {
                    parts.headers.append("set-cookie", cookie.parse().unwrap());
                }
                if let Some(first) = protocols.split(',').next().filter(|p| !p.is_empty()) {
                    parts
                        .headers
                        .insert("sec-websocket-protocol", first.trim().parse().unwrap());
                }
                async move { Ok::<_, Infallible>(Response::from_parts(parts, Full::new(Bytes::new()))) }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades(),
            );
        }
    });
    (format!("http://{addr}"), asked)
}

#[tokio::test]
async fn a_realtime_or_live_websocket_is_relayed_to_its_provider() {
    let (openai, asked_openai) = echo_upstream().await;
    let (gemini, asked_gemini) = echo_upstream().await;
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = Upstream::parse(&openai).unwrap();
        c.upstreams.gemini = Upstream::parse(&gemini).unwrap();
    })
    .await;
    let realtime = "/v1/realtime?model=gpt-realtime";
    let headers = [
        ("authorization", "Bearer sk-test"),
        (
            "sec-websocket-protocol",
            "realtime, openai-beta.realtime-v1",
        ),
    ];
    let mut ws = connect_path(&h.gw(), realtime, &headers, false)
        .await
        .expect("the gateway relays the upgrade");
    let update =
        r#"{"type":"session.update","session":{"tools":[{"type":"function","name":"f"}]}}"#;
    ws.send(Frame::text(Bytes::from(update))).await.unwrap();
    let frame = ws.next_frame().await.unwrap();
    assert_eq!(
        (frame.opcode(), frame.payload().as_ref()),
        (OpCode::Text, update.as_bytes())
    );
    let audio: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    ws.send(Frame::binary(audio.clone())).await.unwrap();
    let frame = ws.next_frame().await.unwrap();
    assert_eq!(
        (frame.opcode(), frame.payload().as_ref()),
        (OpCode::Binary, &audio[..])
    );
    drop(ws);

    let live = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=AIza-test";
    let mut ws = connect_path(&h.gw(), live, &[], false)
        .await
        .expect("Gemini Live");
    ws.send(Frame::text(Bytes::from_static(b"{\"setup\":{}}")))
        .await
        .unwrap();
    assert_eq!(
        ws.next_frame().await.unwrap().payload().as_ref(),
        b"{\"setup\":{}}"
    );
    drop(ws);

    let asked = asked_openai.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0][0], realtime);
    assert_eq!(asked[0][1], "Bearer sk-test");
    assert_eq!(asked[0][3], "realtime, openai-beta.realtime-v1");
    let asked = asked_gemini.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0][0], live);

    let m = h.metrics().await;
    let upgrades = |provider| {
        metric(
            &m,
            "toolwarden_upstream_requests_total",
            &[("provider", provider), ("status", "101")],
        )
    };
    assert_eq!((upgrades("openai"), upgrades("gemini")), (1.0, 1.0), "{m}");
    assert_eq!(
        metric(&m, "toolwarden_unparsed_requests_total", &[]),
        1.0,
        "{m}"
    );
    // The echo of it is no Realtime message from the server either.
    assert_eq!(
        metric(&m, "toolwarden_unparsed_responses_total", &[]),
        1.0,
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(
        (stats.requests.total, stats.totals.calls),
        (2, 0),
        "{:?}",
        stats.requests
    );
}

#[tokio::test]
async fn an_azure_realtime_websocket_is_relayed_to_the_azure_upstream_and_read() {
    let (azure, asked) = echo_upstream().await;
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.cloud.azure = Some(Upstream::parse(&azure).unwrap());
    })
    .await;
    // The preview path names the deployment; the GA one (here behind the
    // `/azure` prefix, which is cut) the model.
    let preview = "/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o-realtime";
    let ga = "/azure/openai/v1/realtime?model=gpt-realtime";
    let result = r#"{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_1","output":"Error: no seats"}}"#;
    let done = r#"{"type":"response.done","response":{"id":"resp_1","status":"completed","output":[{"type":"function_call","call_id":"call_2","name":"seat_map","arguments":"{}"}]}}"#;
    for path in [preview, ga] {
        let mut ws = connect_path(&h.gw(), path, &[("api-key", "azure-key")], false)
            .await
            .expect("the gateway relays an Azure upgrade");
        for message in [result, done] {
            ws.send(Frame::text(Bytes::from(message))).await.unwrap();
            let frame = ws.next_frame().await.unwrap();
            assert_eq!(frame.payload().as_ref(), message.as_bytes());
        }
        drop(ws);
    }
    let asked = asked.lock().unwrap().clone();
    let paths: Vec<&str> = asked.iter().map(|a| a[0].as_str()).collect();
    assert_eq!(
        paths,
        [
            "/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o-realtime",
            "/openai/v1/realtime?model=gpt-realtime"
        ]
    );
    // Each socket: its client's result, and the echoed `response.done` read
    // as a turn with a call, labelled Azure with the deployment or model.
    let expected = |m: &str| metric(m, "toolwarden_tool_calls_total", &[]) == 2.0;
    let m = h.metrics_when(expected).await;
    for model in ["gpt-4o-realtime", "gpt-realtime"] {
        let labels = [("provider", "azure"), ("model", model)];
        assert_eq!(
            metric(&m, "toolwarden_tool_calls_total", &labels),
            1.0,
            "{m}"
        );
        assert_eq!(
            metric(&m, "toolwarden_tool_failures_total", &labels),
            1.0,
            "{m}"
        );
    }
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 4, "{:?}", stats.requests);
}

/// The WebSocket path's answer when Azure is not set up: the HTTP path's
/// (which answered every Azure upgrade before).
#[tokio::test]
async fn an_azure_websocket_without_an_azure_upstream_names_the_setting() {
    let h = Harness::start().await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "GET /openai/v1/realtime?model=m HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nconnection: close\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut tcp, head.as_bytes())
        .await
        .unwrap();
    let answer = crate::e2e::support::read_to_close(&mut tcp).await;
    assert!(!answer.starts_with("HTTP/1.1 101"), "{answer}");
    assert!(answer.contains("--azure-upstream"), "{answer}");
}

/// Every value of a header the upstream's `101` repeats reaches the client
/// (the second `set-cookie` was dropped: a name already copied was skipped).
#[tokio::test]
async fn a_header_the_upstreams_101_repeats_reaches_the_client_whole() {
    let (openai, _) = echo_upstream().await;
    let h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = Upstream::parse(&openai).unwrap();
    })
    .await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "GET /v1/realtime?model=gpt-realtime HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-protocol: realtime\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut tcp, head.as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let n = tokio::io::AsyncReadExt::read(&mut tcp, &mut byte)
            .await
            .unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&answer));
        answer.push(byte[0]);
    }
    let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 101"), "{answer}");
    let cookies: Vec<&str> = answer
        .lines()
        .filter_map(|l| l.strip_prefix("set-cookie: "))
        .collect();
    assert_eq!(
        cookies,
        ["__cf_bm=a; path=/", "_cfuvid=b; path=/"],
        "{answer}"
    );
    assert_eq!(
        answer.matches("sec-websocket-protocol: realtime").count(),
        1,
        "{answer}"
    );
}

/// The upstream's close without a code reaches the client without one (it
/// went as 1000).
#[tokio::test]
async fn an_upstreams_close_without_a_code_is_passed_on_without_one() {
    let (openai, _) = echo_upstream().await;
    let h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = Upstream::parse(&openai).unwrap();
    })
    .await;
    let mut ws = connect_path(&h.gw(), "/v1/realtime?model=gpt-realtime", &[], false)
        .await
        .expect("relayed");
    ws.send(Frame::text(Bytes::from_static(CLOSE_WITHOUT_CODE)))
        .await
        .unwrap();
    let close = loop {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next_frame())
            .await
            .expect("a close in time")
            .expect("a close frame, not a broken socket");
        if frame.opcode() == OpCode::Close {
            break frame;
        }
    };
    assert_eq!(close.payload().as_ref(), b"", "no code, no reason");
}
