//! Voice sockets read: an OpenAI Realtime socket and a Gemini Live socket
//! through the gateway to a scripted upstream speaking the real event
//! shapes (echoes of the client's items, audio, a failing tool output, a
//! failed response, an `error` event; Gemini's JSON in binary frames, the
//! Python SDK's `tool_response`). Every message passes byte for byte, in
//! order, both ways; the calls, results and failures are recorded and
//! counted exactly once.

use std::{
    collections::HashMap,
    convert::Infallible,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use futures_util::SinkExt;
use http_body_util::Full;
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use proptest::{prelude::*, test_runner::TestRunner};
use serde_json::{Value, json};
use toolwarden_gateway::{
    Config, Upstream,
    cloud::{aws::AwsEnv, google::GoogleAuth},
};
use toolwarden_mock_provider::{GOOGLE_TEST_PRIVATE_KEY_PEM, GoogleTestKey, MockOptions, MockTls};
use yawc::{Frame, OpCode, WebSocket};

use super::client::{Socket, connect_path};
use crate::e2e::support::{Harness, metric, tool_counts};

mod generator;
mod out_of_band;
mod vertex;

/// A message as it went: binary or text, and its bytes.
pub(super) type Message = (bool, Bytes);

/// What a scripted upstream answers one client message with.
pub(super) type Script = Arc<dyn Fn(&Message) -> Vec<Message> + Send + Sync>;

/// Both directions as the upstream saw them: what it received, what it sent.
#[derive(Default)]
pub(super) struct Wire {
    pub(super) received: Vec<Message>,
    pub(super) sent: Vec<Message>,
    /// Each upgrade's path and query, and its `Authorization`.
    upgrades: Vec<(String, Option<String>)>,
    /// Each upgrade's `Host`, and the name its TLS handshake asked for.
    hosts: Vec<(String, Option<String>)>,
    /// Hosts whose upgrade is refused: the status and body.
    refuse: HashMap<String, (u16, String)>,
    /// Hosts whose refusal names this transfer coding (not applied: the
    /// body goes as it is, chunked by hyper).
    refusal_coding: HashMap<String, &'static str>,
}

pub(super) fn text(v: Value) -> Message {
    (false, Bytes::from(v.to_string()))
}

pub(super) fn binary(v: Value) -> Message {
    (true, Bytes::from(v.to_string()))
}

/// An upstream WebSocket server that sends `greeting` on connect and
/// answers each client message (read as JSON) with what `script` says.
pub(super) async fn scripted(greeting: Vec<Message>, script: Script) -> (String, Arc<Mutex<Wire>>) {
    let (addr, wire) = scripted_on(None, greeting, script).await;
    (format!("http://{addr}"), wire)
}

/// [`scripted`], over TLS with `tls`'s certificate when given; its address.
async fn scripted_on(
    tls: Option<&MockTls>,
    greeting: Vec<Message>,
    script: Script,
) -> (SocketAddr, Arc<Mutex<Wire>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let wire: Arc<Mutex<Wire>> = Arc::default();
    let seen = wire.clone();
    let acceptor = tls.map(MockTls::acceptor);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (seen, script, greeting) = (seen.clone(), script.clone(), greeting.clone());
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                match acceptor {
                    Some(acceptor) => {
                        let Ok(stream) = acceptor.accept(stream).await else {
                            return;
                        };
                        let sni = stream.get_ref().1.server_name().map(str::to_string);
                        serve(stream, sni, seen, script, greeting).await;
                    }
                    None => serve(stream, None, seen, script, greeting).await,
                }
            });
        }
    });
    (addr, wire)
}

/// One connection of a [`scripted`] upstream (`sni`: the name its TLS
/// handshake asked for).
async fn serve<I>(
    io: I,
    sni: Option<String>,
    seen: Arc<Mutex<Wire>>,
    script: Script,
    greeting: Vec<Message>,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |mut req: Request<Incoming>| {
        let header =
            |name: &str| (req.headers().get(name)).map(|v| v.to_str().unwrap().to_string());
        let authorization = header("authorization");
        let host = header("host").unwrap_or_default();
        let target = req.uri().path_and_query().unwrap().to_string();
        let refusal = {
            let mut wire = seen.lock().unwrap();
            wire.upgrades.push((target, authorization));
            wire.hosts.push((host.clone(), sni.clone()));
            let coding = wire.refusal_coding.get(&host).copied();
            wire.refuse.get(&host).cloned().map(|r| (r, coding))
        };
        if let Some(((status, body), coding)) = refusal {
            let mut response = Response::new(Full::new(Bytes::from(body)));
            *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
            if let Some(coding) = coding {
                let value = hyper::header::HeaderValue::from_static(coding);
                response.headers_mut().insert("transfer-encoding", value);
            }
            return std::future::ready(Ok::<_, Infallible>(response));
        }
        let (response, upgrade) = WebSocket::upgrade(&mut req).expect("an upgrade");
        let (seen, script, greeting) = (seen.clone(), script.clone(), greeting.clone());
        tokio::spawn(async move {
            let Ok(mut socket) = upgrade.await else {
                return;
            };
            let mut out = greeting;
            loop {
                for (bin, bytes) in out.drain(..) {
                    seen.lock().unwrap().sent.push((bin, bytes.clone()));
                    let frame = if bin {
                        Frame::binary(bytes)
                    } else {
                        Frame::text(bytes)
                    };
                    if socket.send(frame).await.is_err() {
                        return;
                    }
                }
                let Ok(frame) = socket.next_frame().await else {
                    return;
                };
                let bin = match frame.opcode() {
                    OpCode::Text => false,
                    OpCode::Binary => true,
                    _ => return,
                };
                let message = (bin, frame.into_payload());
                seen.lock().unwrap().received.push(message.clone());
                out = script(&message);
            }
        });
        let (parts, _) = response.into_parts();
        std::future::ready(Ok::<_, Infallible>(Response::from_parts(
            parts,
            Full::new(Bytes::new()),
        )))
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .with_upgrades()
        .await;
}

/// [`exchange`], `message` kept in `sent`.
pub(super) async fn step(
    ws: &mut Socket,
    sent: &mut Vec<Message>,
    message: Message,
    until: &dyn Fn(&Value) -> bool,
) -> Vec<Message> {
    sent.push(message.clone());
    exchange(ws, message, until).await
}

/// Send `message` and read what comes back until `until` matches one
/// (each message as it came).
pub(super) async fn exchange(
    ws: &mut Socket,
    message: Message,
    until: impl Fn(&Value) -> bool,
) -> Vec<Message> {
    let (bin, bytes) = message;
    let frame = if bin {
        Frame::binary(bytes)
    } else {
        Frame::text(bytes)
    };
    ws.send(frame).await.unwrap();
    read_until(ws, until).await
}

pub(super) async fn read_until(ws: &mut Socket, until: impl Fn(&Value) -> bool) -> Vec<Message> {
    let mut got = Vec::new();
    loop {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next_frame())
            .await
            .expect("an answer in time")
            .expect("a frame");
        let bin = match frame.opcode() {
            OpCode::Text => false,
            OpCode::Binary => true,
            _ => continue,
        };
        let payload = frame.into_payload();
        let value: Value = serde_json::from_slice(&payload).unwrap_or(Value::Null);
        got.push((bin, payload));
        if until(&value) {
            return got;
        }
    }
}

/// The OpenAI Realtime path.
pub(super) const REALTIME: &str = "/v1/realtime?model=gpt-realtime";

/// The Gemini Live path of the Developer API (its key in the query).
pub(super) const LIVE: &str =
    "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=AIza-test";

/// A gateway reading the Realtime upstream `upstream`.
pub(super) async fn realtime_gateway(upstream: &str) -> Harness {
    let upstream = upstream.to_string();
    Harness::with(MockOptions::default(), move |c| {
        c.upstreams.openai = Upstream::parse(&upstream).unwrap();
    })
    .await
}

/// A gateway reading the Gemini Live upstream `upstream`.
pub(super) async fn live_gateway(upstream: &str) -> Harness {
    let upstream = upstream.to_string();
    Harness::with(MockOptions::default(), move |c| {
        c.upstreams.gemini = Upstream::parse(&upstream).unwrap();
    })
    .await
}

/// Sets a Live socket up (to `setupComplete`) and asks it `ask` (a
/// `clientContent` message, in either spelling), to its `toolCall`.
pub(super) async fn live_ask(ws: &mut Socket, ask: Value) {
    let has = |key: &'static str| move |v: &Value| v.get(key).is_some();
    let setup = json!({"setup": {"model": "models/gemini-live-2.5-flash"}});
    exchange(ws, text(setup), has("setupComplete")).await;
    exchange(ws, text(ask), has("toolCall")).await;
}

/// Base64-ish audio, large as a real chunk is.
pub(super) fn audio() -> String {
    "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=".repeat(400)
}

pub(super) fn function_call(call_id: &str, name: &str, args: &str) -> Value {
    json!({"id": format!("item_{call_id}"), "object": "realtime.item", "type": "function_call",
        "status": "completed", "name": name, "call_id": call_id, "arguments": args})
}

/// The Realtime server: GA events (`conversation.item.added`/`.done`)
/// and the beta echo (`conversation.item.created`) for each item the client
/// creates; three responses: two calls, a spoken answer, a failure.
fn realtime_script() -> Script {
    let responses = Arc::new(Mutex::new(0));
    Arc::new(move |(_, bytes): &Message| {
        let m: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        let m = &m;
        let ty = m["type"].as_str().unwrap_or("");
        match ty {
            "session.update" => vec![text(json!({"type": "session.updated", "event_id": "e1",
                "session": {"type": "realtime", "tools": m["session"]["tools"]}}))],
            "conversation.item.create" => {
                let item = &m["item"];
                if item["call_id"] == "nope" {
                    return vec![text(json!({"type": "error", "event_id": "e9", "error": {
                        "type": "invalid_request_error", "code": "invalid_value",
                        "message": "no call nope", "param": "item.call_id", "event_id": null}}))];
                }
                let mut echoed = item.clone();
                echoed["object"] = json!("realtime.item");
                echoed["status"] = json!("completed");
                vec![
                    text(
                        json!({"type": "conversation.item.created", "event_id": "e2", "previous_item_id": null, "item": echoed}),
                    ),
                    text(
                        json!({"type": "conversation.item.added", "event_id": "e3", "previous_item_id": null, "item": echoed}),
                    ),
                    text(
                        json!({"type": "conversation.item.done", "event_id": "e4", "previous_item_id": null, "item": echoed}),
                    ),
                ]
            }
            "response.create" => {
                let mut n = responses.lock().unwrap();
                *n += 1;
                let id = format!("resp_{n}");
                let created = text(json!({"type": "response.created", "event_id": "e5",
                    "response": {"object": "realtime.response", "id": id, "status": "in_progress", "output": []}}));
                let (output, status, details) = match *n {
                    1 => (
                        vec![
                            function_call("call_w", "get_weather", r#"{"city":"Oslo"}"#),
                            function_call("call_b", "book_table", r#"{"at":"19:00"}"#),
                        ],
                        "completed",
                        Value::Null,
                    ),
                    2 => (
                        vec![
                            json!({"id": "item_m", "type": "message", "role": "assistant",
                            "content": [{"type": "output_audio", "transcript": "Rain, and no table."}]}),
                        ],
                        "completed",
                        Value::Null,
                    ),
                    _ => (
                        vec![],
                        "failed",
                        json!({"type": "failed", "error": {"type": "server_error", "code": "overloaded", "message": "try again"}}),
                    ),
                };
                let mut events = vec![created];
                for (i, item) in output.iter().enumerate() {
                    events.push(text(
                        json!({"type": "response.output_item.added", "event_id": "e6",
                        "response_id": id, "output_index": i, "item": item}),
                    ));
                    if item["type"] == "function_call" {
                        events.push(text(json!({"type": "response.function_call_arguments.delta",
                            "event_id": "e7", "response_id": id, "item_id": item["id"],
                            "output_index": i, "call_id": item["call_id"], "delta": item["arguments"]})));
                        events.push(text(
                            json!({"type": "response.function_call_arguments.done",
                            "event_id": "e8", "response_id": id, "item_id": item["id"],
                            "output_index": i, "call_id": item["call_id"], "name": item["name"],
                            "arguments": item["arguments"]}),
                        ));
                    } else {
                        for _ in 0..3 {
                            events.push(text(
                                json!({"type": "response.output_audio.delta", "event_id": "e10",
                                "response_id": id, "item_id": item["id"], "output_index": i,
                                "content_index": 0, "delta": audio()}),
                            ));
                        }
                    }
                    events.push(text(
                        json!({"type": "response.output_item.done", "event_id": "e11",
                        "response_id": id, "output_index": i, "item": item}),
                    ));
                    events.push(text(
                        json!({"type": "conversation.item.done", "event_id": "e12",
                        "previous_item_id": null, "item": item}),
                    ));
                }
                events.push(text(json!({"type": "response.done", "event_id": "e13", "response": {
                    "object": "realtime.response", "id": id, "status": status, "status_details": details,
                    "output": output, "conversation_id": "conv_1",
                    "usage": {"total_tokens": 30, "input_tokens": 20, "output_tokens": 10}}})));
                events
            }
            _ => vec![],
        }
    })
}

pub(super) fn is(ty: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == ty
}

#[tokio::test]
async fn a_realtime_socket_is_relayed_byte_for_byte_and_its_tools_recorded_once() {
    let greeting = vec![text(
        json!({"type": "session.created", "event_id": "e0", "session": {"type": "realtime"}}),
    )];
    let (upstream, wire) = scripted(greeting, realtime_script()).await;
    let mut h = realtime_gateway(&upstream).await;
    let headers = [("authorization", "Bearer sk-test")];
    let mut ws = connect_path(&h.gw(), REALTIME, &headers, false)
        .await
        .unwrap();
    let mut got = read_until(&mut ws, is("session.created")).await;
    let mut sent: Vec<Message> = Vec::new();
    let tools = json!([{"type": "function", "name": "get_weather"}, {"type": "function", "name": "book_table"}]);
    got.extend(
        step(
            &mut ws,
            &mut sent,
            text(
                json!({"type": "session.update", "session": {"type": "realtime", "tools": tools}}),
            ),
            &is("session.updated"),
        )
        .await,
    );
    let user = json!({"type": "conversation.item.create", "item": {"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "Weather in Oslo, and book a table"}]}});
    got.extend(
        step(
            &mut ws,
            &mut sent,
            text(user),
            &is("conversation.item.done"),
        )
        .await,
    );
    // Audio the client streams: passed, not read.
    let append = text(json!({"type": "input_audio_buffer.append", "audio": audio()}));
    sent.push(append.clone());
    ws.send(Frame::text(append.1)).await.unwrap();
    got.extend(
        step(
            &mut ws,
            &mut sent,
            text(json!({"type": "response.create"})),
            &is("response.done"),
        )
        .await,
    );
    // The two outputs: one fine, one failing; each echoed three times.
    for (call_id, output) in [
        ("call_w", r#"{"forecast":"rain","temp_c":9}"#),
        ("call_b", "Error: no table free at 19:00"),
    ] {
        let item = json!({"type": "conversation.item.create", "item": {"type": "function_call_output",
            "call_id": call_id, "output": output}});
        got.extend(
            step(
                &mut ws,
                &mut sent,
                text(item),
                &is("conversation.item.done"),
            )
            .await,
        );
    }
    let bad = json!({"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "nope", "output": "x"}});
    got.extend(step(&mut ws, &mut sent, text(bad), &is("error")).await);
    got.extend(
        step(
            &mut ws,
            &mut sent,
            text(json!({"type": "response.create"})),
            &is("response.done"),
        )
        .await,
    );
    got.extend(
        step(
            &mut ws,
            &mut sent,
            text(json!({"type": "response.create"})),
            &is("response.done"),
        )
        .await,
    );
    ws.send(Frame::close(yawc::close::CloseCode::Normal, ""))
        .await
        .unwrap();
    drop(ws);

    // Byte for byte, in order, both ways.
    {
        let wire = wire.lock().unwrap();
        assert_eq!(wire.received, sent);
        assert_eq!(wire.sent, got);
    }

    // Three results sent (the third answers no call: the server refused
    // it, as an HTTP upstream would), each echoed three times, counted once.
    let expected = |m: &str| metric(m, "toolwarden_tool_results_total", &[]) == 3.0;
    let m = h.metrics_when(expected).await;
    let count = |name: &str, labels: &[(&str, &str)]| metric(&m, name, labels);
    assert_eq!(count("toolwarden_tool_calls_total", &[]), 2.0, "{m}");
    assert_eq!(
        count("toolwarden_tool_results_total", &[("tool", "unknown")]),
        1.0,
        "{m}"
    );
    assert_eq!(
        count(
            "toolwarden_tool_calls_total",
            &[
                ("provider", "openai"),
                ("model", "gpt-realtime"),
                ("tool", "book_table")
            ]
        ),
        1.0,
        "{m}"
    );
    assert_eq!(count("toolwarden_tool_results_total", &[]), 3.0, "{m}");
    assert_eq!(count("toolwarden_tool_failures_total", &[]), 1.0, "{m}");
    assert_eq!(
        count("toolwarden_tool_failures_total", &[("tool", "book_table")]),
        1.0,
        "{m}"
    );
    assert_eq!(count("toolwarden_unparsed_requests_total", &[]), 0.0, "{m}");
    assert_eq!(
        count("toolwarden_unparsed_responses_total", &[]),
        0.0,
        "{m}"
    );

    let stats = h.finish().await;
    // The upgrade, three responses, the `error` event.
    assert_eq!(stats.requests.total, 5, "{:?}", stats.requests);
    assert_eq!(stats.requests.errors, 2, "{:?}", stats.requests);
    // The store keeps a result whose call it never saw as a call of its
    // own (as for HTTP).
    assert_eq!((stats.totals.calls, stats.totals.failures), (3, 1));
    let events = h.events();
    let of = |ty: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == ty).collect() };
    assert_eq!((of("tool_call").len(), of("tool_result").len()), (2, 3));
    let requests = of("request");
    let turns: Vec<_> = (requests.iter())
        .filter(|r| r["dialect"] == "openai-responses")
        .collect();
    assert_eq!(turns.len(), 4, "{requests:?}");
    assert!(
        turns
            .iter()
            .all(|r| r["path"] == "/v1/realtime" && r["model"] == "gpt-realtime")
    );
    // One session: the socket's, the upgrade's record included.
    let sessions: std::collections::BTreeSet<_> = (events.iter())
        .filter_map(|e| e["session_id"].as_str())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let errors: Vec<_> = turns.iter().filter_map(|r| r["error"].as_str()).collect();
    assert_eq!(
        errors,
        ["invalid_value: no call nope", "overloaded: try again"],
        "{turns:?}"
    );
    // Each result belongs to the turn that followed it, after its call.
    let failed = of("tool_result")
        .into_iter()
        .find(|r| r["failed"] == true)
        .expect("a failed result");
    assert_eq!(failed["tool"], "book_table");
    assert_eq!(failed["call_id"], "call_b");
}

/// The Gemini Live server: JSON in binary frames, as Google's sends it.
pub(super) fn live_script() -> Script {
    Arc::new(move |(_, bytes): &Message| {
        let m: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        if m.get("setup").is_some() {
            return vec![binary(json!({"setupComplete": {}}))];
        }
        let content = m.get("clientContent").or_else(|| m.get("client_content"));
        if content.is_some_and(|c| c.to_string().contains("Thanks")) {
            // A turn without calls: its usage comes with its end.
            return vec![
                binary(
                    json!({"serverContent": {"modelTurn": {"parts": [{"text": "You're welcome."}]}}}),
                ),
                binary(json!({"serverContent": {"turnComplete": true},
                    "usageMetadata": {"promptTokenCount": 40, "responseTokenCount": 3, "totalTokenCount": 43}})),
            ];
        }
        if content.is_some() {
            let chunk = json!({"serverContent": {"modelTurn": {"parts": [{"inlineData":
                {"mimeType": "audio/pcm;rate=24000", "data": audio()}}]}}});
            return vec![
                binary(chunk.clone()),
                binary(chunk),
                binary(json!({"toolCall": {"functionCalls": [
                    {"id": "fc_1", "name": "lookup_order", "args": {"order": "A17"}},
                    {"id": "fc_2", "name": "refund", "args": {"order": "A17", "cents": 1299}}]}})),
                // The generation's usage, in a message of its own.
                binary(
                    json!({"usageMetadata": {"promptTokenCount": 12, "responseTokenCount": 30,
                    "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": 30}]}}),
                ),
            ];
        }
        if m.get("tool_response").is_some() || m.get("toolResponse").is_some() {
            return vec![
                binary(json!({"serverContent": {"modelTurn": {"parts": [{"text": "Done."}]}}})),
                binary(
                    json!({"toolCall": {"functionCalls": [{"id": "fc_3", "name": "notify", "args": {}}]}}),
                ),
                binary(json!({"toolCallCancellation": {"ids": ["fc_3"]}})),
                binary(json!({"serverContent": {"turnComplete": true},
                    "usageMetadata": {"promptTokenCount": 20, "responseTokenCount": 5}})),
            ];
        }
        vec![]
    })
}

/// What the Python SDK sends on a Live socket, setup naming `model`: the
/// `setup`, snake_case `client_content`, `realtime_input` audio, then
/// `tool_response` with camelCase `functionResponses`; what was sent and
/// what came back.
pub(super) async fn drive_live(ws: &mut Socket, model: &str) -> (Vec<Message>, Vec<Message>) {
    let mut sent: Vec<Message> = Vec::new();
    let mut got: Vec<Message> = Vec::new();
    let has = |key: &'static str| move |v: &Value| v.get(key).is_some();
    let turn_complete = |v: &Value| v["serverContent"]["turnComplete"] == true;
    let setup = json!({"setup": {"model": model,
        "tools": [{"functionDeclarations": [{"name": "lookup_order"}, {"name": "refund"}]}]}});
    got.extend(step(ws, &mut sent, text(setup), &has("setupComplete")).await);
    let ask = json!({"client_content": {"turns": [{"role": "user", "parts": [{"text": "Refund order A17"}]}],
        "turn_complete": true}});
    got.extend(step(ws, &mut sent, text(ask), &has("usageMetadata")).await);
    let audio_in = text(
        json!({"realtime_input": {"audio": {"data": audio(), "mime_type": "audio/pcm;rate=16000"}}}),
    );
    sent.push(audio_in.clone());
    ws.send(Frame::text(audio_in.1)).await.unwrap();
    let results = text(json!({"tool_response": {"functionResponses": [
        {"id": "fc_1", "name": "lookup_order", "response": {"output": {"status": "delivered"}}},
        {"id": "fc_2", "name": "refund", "response": {"error": "refunds are disabled for this order"}}]}}));
    sent.push(results.clone());
    got.extend(exchange(ws, results, turn_complete).await);
    let thanks = json!({"client_content": {"turns": [{"role": "user", "parts": [{"text": "Thanks"}]}],
        "turn_complete": true}});
    got.extend(step(ws, &mut sent, text(thanks), &turn_complete).await);
    (sent, got)
}

/// Whether [`drive_live`]'s socket is all in `/metrics` (`m`): its two
/// results and the last turn's usage, which comes after them (waiting for
/// the results alone read the metrics before that turn's tokens at times).
fn live_recorded(m: &str) -> bool {
    metric(m, "toolwarden_tool_results_total", &[]) >= 2.0
        && metric(m, "toolwarden_tokens_total", &[("type", "input")]) >= 72.0
}

/// What [`drive_live`]'s socket leaves in `/metrics` (`m`), under
/// `provider`: its three calls, two results (one failed) and each
/// generation's usage, counted once, Live's token names read; nothing
/// unparsed.
fn live_metrics(m: &str, provider: &str) {
    let count = |name: &str, labels: &[(&str, &str)]| metric(m, name, labels);
    let model = ("model", "gemini-live-2.5-flash");
    let on = ("provider", provider);
    assert_eq!(count("toolwarden_tool_calls_total", &[]), 3.0, "{m}");
    assert_eq!(
        count("toolwarden_tool_calls_total", &[on, model]),
        3.0,
        "{m}"
    );
    let refund = ("tool", "refund");
    assert_eq!(
        count("toolwarden_tool_calls_total", &[on, model, refund]),
        1.0,
        "{m}"
    );
    assert_eq!(count("toolwarden_tool_results_total", &[]), 2.0, "{m}");
    assert_eq!(count("toolwarden_tool_results_total", &[on]), 2.0, "{m}");
    assert_eq!(count("toolwarden_tool_failures_total", &[]), 1.0, "{m}");
    assert_eq!(
        count("toolwarden_tool_failures_total", &[on, refund]),
        1.0,
        "{m}"
    );
    assert_eq!(count("toolwarden_unparsed_requests_total", &[]), 0.0, "{m}");
    assert_eq!(
        count("toolwarden_unparsed_responses_total", &[]),
        0.0,
        "{m}"
    );
    let tokens = |kind: &str| count("toolwarden_tokens_total", &[on, ("type", kind)]);
    assert_eq!((tokens("input"), tokens("output")), (72.0, 38.0), "{m}");
}

#[tokio::test]
async fn a_gemini_live_socket_is_relayed_byte_for_byte_and_its_tools_recorded_once() {
    let (upstream, wire) = scripted(Vec::new(), live_script()).await;
    let mut h = live_gateway(&upstream).await;
    let mut ws = connect_path(&h.gw(), LIVE, &[("session_id", "live-1")], false)
        .await
        .unwrap();
    let (sent, got) = drive_live(&mut ws, "models/gemini-live-2.5-flash").await;
    drop(ws);

    {
        let wire = wire.lock().unwrap();
        assert_eq!(wire.received, sent);
        assert_eq!(wire.sent, got);
        assert!(
            got.iter().all(|(bin, _)| *bin),
            "the server's frames stay binary"
        );
    }

    let m = h.metrics_when(live_recorded).await;
    live_metrics(&m, "gemini");

    let stats = h.finish().await;
    // The upgrade, the two `toolCall` turns and the turn without calls.
    assert_eq!(stats.requests.total, 4, "{:?}", stats.requests);
    assert_eq!((stats.totals.calls, stats.totals.failures), (3, 1));
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    assert_eq!(stats.sessions[0].session_id, "live-1");
    let events = h.events();
    let turns: Vec<_> = (events.iter())
        .filter(|e| e["type"] == "request" && e["dialect"] == "gemini")
        .collect();
    assert_eq!(turns.len(), 3, "{events:?}");
}

/// Calls without ids (as older Live models send them), two of one tool,
/// answered by results without ids: each result is its own call's
/// (`<name>#<n>` by position, as over HTTP), both recorded, the failing
/// one counted. Before, both took the tool's name for their id and the
/// second was taken for a resend of the first and not recorded.
#[tokio::test]
async fn gemini_live_results_without_ids_are_each_recorded() {
    let script: Script = Arc::new(|(_, bytes): &Message| {
        let m: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        if m.get("setup").is_some() {
            return vec![binary(json!({"setupComplete": {}}))];
        }
        if m.get("clientContent").is_some() {
            return vec![binary(json!({"toolCall": {"functionCalls": [
                {"name": "lookup_order", "args": {"order": "A17"}},
                {"name": "lookup_order", "args": {"order": "B22"}}]},
                "usageMetadata": {"promptTokenCount": 12, "responseTokenCount": 8}}))];
        }
        if m.get("toolResponse").is_some() {
            return vec![binary(json!({"serverContent": {"turnComplete": true},
                "usageMetadata": {"promptTokenCount": 30, "responseTokenCount": 4}}))];
        }
        vec![]
    });
    let (upstream, _wire) = scripted(Vec::new(), script).await;
    let mut h = live_gateway(&upstream).await;
    let mut ws = connect_path(&h.gw(), LIVE, &[("session_id", "live-idless")], false)
        .await
        .unwrap();
    let ask = json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Where are A17 and B22?"}]}],
        "turnComplete": true}});
    live_ask(&mut ws, ask).await;
    let results = json!({"toolResponse": {"functionResponses": [
        {"name": "lookup_order", "response": {"output": {"status": "delivered"}}},
        {"name": "lookup_order", "response": {"error": "order B22 not found"}}]}});
    exchange(&mut ws, text(results), |v: &Value| {
        v["serverContent"]["turnComplete"] == true
    })
    .await;
    drop(ws);

    let m = h
        .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 2.0)
        .await;
    assert_eq!(tool_counts(&m, &[]), (2.0, 2.0, 1.0), "{m}");
    h.finish().await;
    let events = h.events();
    let mut answered: Vec<(String, bool)> = (events.iter())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| {
            let id = e["call_id"].as_str().unwrap_or_default().to_string();
            (id, e["failed"] == true)
        })
        .collect();
    answered.sort();
    assert_eq!(
        answered,
        [
            ("lookup_order#0".to_string(), false),
            ("lookup_order#1".to_string(), true)
        ],
        "{events:#?}"
    );
}

const GATEWAY_TOKEN: &str = "ya29.gateway-own-token";
const VERTEX_LIVE: &str = "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent";

/// A gateway whose `vertex_upstream` is `upstream` and whose Google
/// credentials (a service account's, in a file, as the environment names
/// it) get their token from the mock.
async fn vertex_gateway(upstream: &str, dir: &std::path::Path) -> Harness {
    let upstream = Upstream::parse(upstream).unwrap();
    google_gateway(dir, move |c| c.cloud.vertex = Some(upstream)).await
}

/// A gateway whose Google credentials (a service account's, in a file, as
/// the environment names it) get their token from the mock, its settings
/// then changed by `tweak`.
async fn google_gateway(dir: &std::path::Path, tweak: impl FnOnce(&mut Config)) -> Harness {
    let dir = dir.to_path_buf();
    let mock = MockOptions {
        google_key: Some(GoogleTestKey::test(GATEWAY_TOKEN)),
        ..MockOptions::default()
    };
    Harness::with(mock, move |c| {
        tweak(c);
        let file = json!({
            "type": "service_account",
            "project_id": "p1",
            "private_key_id": "test-key-1",
            "private_key": GOOGLE_TEST_PRIVATE_KEY_PEM,
            "client_email": "gateway@p1.iam.gserviceaccount.com",
            "token_uri": format!("{}/token", c.upstreams.gemini.to_string().trim_end_matches('/')),
        });
        let path = dir.join("service_account.json");
        std::fs::write(&path, file.to_string()).unwrap();
        let mut env = AwsEnv::default();
        env.insert(
            "GOOGLE_APPLICATION_CREDENTIALS".into(),
            path.display().to_string(),
        );
        let auth = GoogleAuth::from_env(&env, &mut Vec::new())
            .unwrap()
            .expect("credentials");
        c.cloud.google = Some(Arc::new(auth));
    })
    .await
}

#[tokio::test]
async fn a_vertex_live_socket_is_relayed_with_the_right_credential_and_read_as_gemini_live() {
    let (upstream, wire) = scripted(Vec::new(), live_script()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut h = vertex_gateway(&upstream, dir.path()).await;
    // google-genai with `vertexai=True` and no credential of its own
    // (the gateway's is lent), under the `/vertex` prefix.
    let path = format!("/vertex{VERTEX_LIVE}");
    let mut ws = connect_path(&h.gw(), &path, &[("session_id", "vertex-live-1")], false)
        .await
        .unwrap();
    let model = "projects/p1/locations/us-central1/publishers/google/models/gemini-live-2.5-flash";
    let (sent, got) = drive_live(&mut ws, model).await;
    drop(ws);
    {
        let wire = wire.lock().unwrap();
        assert_eq!(wire.received, sent);
        assert_eq!(wire.sent, got);
    }
    // A client's own token passes unchanged; a web page elsewhere (a
    // foreign Origin, which browsers send with every WebSocket) is not
    // lent the gateway's.
    for headers in [
        &[("authorization", "Bearer ya29.the-clients-own")][..],
        &[("origin", "https://evil.example")][..],
    ] {
        let mut ws = connect_path(&h.gw(), VERTEX_LIVE, headers, false)
            .await
            .unwrap();
        let setup = text(json!({"setup": {"model": model}}));
        exchange(&mut ws, setup, |v| v.get("setupComplete").is_some()).await;
    }
    let upgrades = wire.lock().unwrap().upgrades.clone();
    let gateway_bearer = format!("Bearer {GATEWAY_TOKEN}");
    assert_eq!(
        upgrades,
        [
            (VERTEX_LIVE.to_string(), Some(gateway_bearer)),
            (
                VERTEX_LIVE.to_string(),
                Some("Bearer ya29.the-clients-own".to_string())
            ),
            (VERTEX_LIVE.to_string(), None),
        ]
    );

    let m = h.metrics_when(live_recorded).await;
    live_metrics(&m, "vertex");
    let stats = h.finish().await;
    // Three upgrades and the first socket's three turns.
    assert_eq!(stats.requests.total, 6, "{:?}", stats.requests);
    assert_eq!((stats.totals.calls, stats.totals.failures), (3, 1));
    let events = h.events();
    let turns: Vec<_> = (events.iter())
        .filter(|e| e["type"] == "request" && e["dialect"] == "gemini")
        .collect();
    assert_eq!(turns.len(), 3, "{events:?}");
    assert!(turns.iter().all(|e| e["provider"] == "vertex"), "{turns:?}");
    // The token is never recorded.
    let recorded = format!("{events:?}");
    assert!(!recorded.contains(GATEWAY_TOKEN), "{recorded}");
    assert!(!recorded.contains("the-clients-own"), "{recorded}");
}

/// The locations the property test's Vertex AI `setup` messages name.
const SETUP_LOCATIONS: [&str; 3] = ["global", "us-central1", "europe-west4"];

/// The host of a Vertex AI location's endpoint.
fn vertex_host(location: &str) -> String {
    match location {
        "global" => "aiplatform.googleapis.com".into(),
        _ => format!("{location}-aiplatform.googleapis.com"),
    }
}

/// The location of a `setup` message [`any_message`] made.
fn setup_location_of((_, bytes): &Message) -> Option<&'static str> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let model = v["setup"]["model"].as_str()?;
    SETUP_LOCATIONS
        .into_iter()
        .find(|l| model.starts_with(&format!("projects/p/locations/{l}/")))
}

/// Messages of either protocol, real shapes with any values, and garbage:
/// text or binary.
fn any_message() -> impl Strategy<Value = Message> {
    let id = "[a-z_0-9\"\\\\]{0,8}";
    let text_message = prop_oneof![
        (id, "\\PC{0,30}").prop_map(|(id, out)| json!({"type": "conversation.item.create",
            "item": {"type": "function_call_output", "call_id": id, "output": out}}).to_string()),
        (id, "[a-z_]{0,8}").prop_map(|(id, name)| json!({"type": "response.done", "response": {
            "id": "r", "status": "failed", "output": [{"type": "function_call", "call_id": id, "name": name, "arguments": "{"}]}}).to_string()),
        (id, "[a-z_]{0,8}").prop_map(|(id, name)| json!({"type": "response.output_item.done", "response_id": "r",
            "output_index": 0, "item": {"type": "function_call", "status": "completed", "call_id": id, "name": name, "arguments": "{"}}).to_string()),
        (id, "[a-z_]{0,8}").prop_map(|(id, name)| json!({"toolCall": {"functionCalls": [{"id": id, "name": name, "args": {}}]}}).to_string()),
        (id, "\\PC{0,20}").prop_map(|(id, e)| json!({"tool_response": {"functionResponses": [{"id": id, "response": {"error": e}}]}}).to_string()),
        "[a-z.]{1,20}".prop_map(|t| format!(r#"{{"type":"{t}","response":{{"id":"#)),
        "[ \\r\\n{}\\[\\]\":,a-zA-Z_\u{e9}\u{1F600}]{0,60}",
        "\\PC{0,40}",
    ];
    let setup = prop::sample::select(SETUP_LOCATIONS.to_vec()).prop_map(|l| {
        json!({"setup": {"model": format!("projects/p/locations/{l}/publishers/google/models/m")}})
            .to_string()
    });
    prop_oneof![
        1 => setup.prop_map(|t| (false, Bytes::from(t))),
        4 => text_message.prop_map(|t| (false, Bytes::from(t))),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(|b| (true, Bytes::from(b))),
    ]
}

#[test]
fn any_messages_on_a_voice_socket_pass_byte_for_byte_both_ways() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    // The upstream answers each message with itself; Vertex AI's, over
    // TLS, stands for the hosts of the locations the setups name.
    let echo: Script = Arc::new(|m: &Message| vec![m.clone()]);
    let (upstream, wire) = rt.block_on(scripted(Vec::new(), echo.clone()));
    let tls = MockTls::generate_for(&["*.googleapis.com"]).expect("a test certificate");
    let (vertex, vertex_wire) = rt.block_on(scripted_on(Some(&tls), Vec::new(), echo));
    let h = rt.block_on(Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = Upstream::parse(&upstream).unwrap();
        c.upstreams.gemini = Upstream::parse(&upstream).unwrap();
        c.upstream_roots.push(tls.ca_der());
        for location in SETUP_LOCATIONS {
            c.resolve.insert(&vertex_host(location), 443, vertex);
        }
    }));
    let paths = vec![
        "/v1/realtime?model=gpt-realtime",
        "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
        VERTEX_LIVE,
    ];
    let mut runner = TestRunner::new(ProptestConfig::with_cases(36));
    runner
        .run(
            &(
                prop::sample::select(paths),
                prop::collection::vec(any_message(), 1..8),
            ),
            |(path, messages)| {
                rt.block_on(async {
                    let wire = if path == VERTEX_LIVE {
                        &vertex_wire
                    } else {
                        &wire
                    };
                    *wire.lock().unwrap() = Wire::default();
                    let mut ws = connect_path(&h.gw(), path, &[], false).await.unwrap();
                    let mut got = Vec::new();
                    for m in &messages {
                        got.extend(exchange(&mut ws, m.clone(), |_| true).await);
                    }
                    drop(ws);
                    prop_assert_eq!(&got, &messages);
                    let wire = wire.lock().unwrap();
                    prop_assert_eq!(&wire.received, &messages);
                    if path == VERTEX_LIVE {
                        // The first message's location, else `global`.
                        let location = setup_location_of(&messages[0]).unwrap_or("global");
                        let host = vertex_host(location);
                        prop_assert_eq!(&wire.hosts, &[(host.clone(), Some(host))]);
                    }
                    Ok(())
                })
            },
        )
        .unwrap();
}
