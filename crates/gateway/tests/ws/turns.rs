//! Tool conversations over WebSocket mode: counted exactly as over HTTP.

use serde_json::{Value, json};
use toolwarden_mock_provider::MockOptions;

use super::client::{Raw, calls_of, connect, connect_path, turn};
use crate::e2e::support::{Harness, metric, post};

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

fn tools() -> Value {
    let params = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    json!([
        {"type": "function", "name": "lookup", "parameters": params},
        {"type": "function", "name": "book", "parameters": params},
    ])
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// The outputs for a round's calls: `lookup` succeeds, `book` fails.
fn outputs(calls: &[(String, String)]) -> Vec<Value> {
    calls
        .iter()
        .map(|(id, name)| {
            let output = if name == "book" {
                "Error: seat 12A is no longer available for flight TP123"
            } else {
                "Flight TP123 found: departs 09:05, 189 EUR"
            };
            json!({"type": "function_call_output", "call_id": id, "output": output})
        })
        .collect()
}

/// The assistant messages a turn produced, as a client keeps them for
/// its history.
fn output_messages(events: &[bytes::Bytes]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| serde_json::from_slice::<Value>(e).ok())
        .filter(|v| v["type"] == "response.output_item.done" && v["item"]["type"] == "message")
        .map(|v| v["item"].clone())
        .collect()
}

fn call_items(calls: &[(String, String)]) -> Vec<Value> {
    calls
        .iter()
        .map(|(id, name)| {
            json!({"type": "function_call", "call_id": id, "name": name, "arguments": "{\"q\":\"TP123\"}"})
        })
        .collect()
}

#[tokio::test]
async fn a_conversation_over_two_sockets_is_counted_once() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let headers = [AUTH, ("session_id", "ws-e2e")];
    let mut ws = connect(&h.gw(), &headers, false).await;
    let mut history = Vec::new();
    let mut previous: Option<String> = None;
    // Three rounds on one socket, each turn naming the previous response.
    for round in 0..3 {
        let u = user(&format!("Find and book flight TP123, round {round}"));
        history.push(u.clone());
        let mut body = json!({"model": "gpt-5", "tools": tools(), "input": [u]});
        if let Some(id) = &previous {
            body["previous_response_id"] = json!(id);
        }
        let events = turn(&mut ws, &body).await;
        let (calls, id) = calls_of(&events);
        assert_eq!(calls.len(), 2, "round {round}: {events:?}");
        history.extend(call_items(&calls));
        let outs = outputs(&calls);
        history.extend(outs.clone());
        let body =
            json!({"model": "gpt-5", "tools": tools(), "input": outs, "previous_response_id": id});
        let events = turn(&mut ws, &body).await;
        let (calls, id) = calls_of(&events);
        assert!(calls.is_empty(), "a text answer: {events:?}");
        history.extend(output_messages(&events));
        previous = Some(id);
    }
    drop(ws);

    // A second socket resends the whole history (`store: false` style).
    let mut ws = connect(&h.gw(), &headers, false).await;
    history.push(user("And one more for next week"));
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    let events = turn(&mut ws, &body).await;
    let (calls, _) = calls_of(&events);
    assert_eq!(calls.len(), 2);
    history.extend(call_items(&calls));
    history.extend(outputs(&calls));
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    let events = turn(&mut ws, &body).await;
    assert!(calls_of(&events).0.is_empty());

    // Exact counts: 4 rounds of two calls, `book` failing each time.
    let expected = |m: &str| {
        metric(m, "toolwarden_tool_calls_total", &[("tool", "book")]) == 4.0
            && metric(m, "toolwarden_tool_failures_total", &[("tool", "book")]) == 4.0
    };
    let m = h.metrics_when(expected).await;
    assert!(expected(&m), "{m}");
    assert_eq!(metric(&m, "toolwarden_tool_calls_total", &[]), 8.0, "{m}");
    assert_eq!(
        metric(&m, "toolwarden_tool_failures_total", &[]),
        4.0,
        "{m}"
    );
    assert_eq!(
        metric(&m, "toolwarden_unparsed_requests_total", &[]),
        0.0,
        "{m}"
    );
    drop(ws);
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 8, "{:?}", stats.requests);
    assert_eq!(stats.requests.errors, 0);
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    assert_eq!(stats.sessions[0].session_id, "ws-e2e");
    assert_eq!(
        (stats.sessions[0].calls, stats.sessions[0].failures),
        (8, 4)
    );
    let events = h.events();
    let count = |ty: &str| events.iter().filter(|e| e["type"] == ty).count();
    assert_eq!(
        (count("request"), count("tool_call"), count("tool_result")),
        (8, 8, 8)
    );
    // WebSocket mode only: the mock saw upgrades' messages, never a POST.
    let received = h.mock.received();
    assert_eq!(received.len(), 8);
    assert!(
        received
            .iter()
            .all(|r| r.method == http::Method::GET && r.path == "/v1/responses")
    );
}

#[tokio::test]
async fn continuations_on_other_sockets_join_the_session() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let mut a = connect(&h.gw(), &[AUTH], false).await;
    let body = json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")]});
    let (calls, id) = calls_of(&turn(&mut a, &body).await);
    // The answer's outputs go on another socket (a reconnect), by id only.
    let mut b = connect(&h.gw(), &[AUTH], false).await;
    let body = json!({"model": "gpt-5", "tools": tools(), "input": outputs(&calls), "previous_response_id": id});
    turn(&mut b, &body).await;
    drop((a, b));
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 2);
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    assert_eq!(
        (stats.sessions[0].calls, stats.sessions[0].failures),
        (2, 1)
    );
}

#[tokio::test]
async fn events_are_the_mocks_bytes_in_order_with_and_without_deflate() {
    let h = Harness::start().await;
    let body = json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")]});
    let mut direct = connect(&h.direct(), &[AUTH], false).await;
    let expected = turn(&mut direct, &body).await;
    assert!(expected.len() >= 5, "{expected:?}");
    for deflate in [false, true] {
        let mut ws = connect(&h.gw(), &[AUTH], deflate).await;
        assert_eq!(turn(&mut ws, &body).await, expected, "deflate={deflate}");
        // The same socket carries the next turn as well.
        assert_eq!(turn(&mut ws, &body).await, expected, "deflate={deflate}");
    }
    // permessage-deflate is agreed when the client offers it.
    let raw = Raw::connect(
        &h.gw(),
        &["sec-websocket-extensions: permessage-deflate; client_max_window_bits"],
    )
    .await;
    assert!(raw.head.starts_with("HTTP/1.1 101"), "{}", raw.head);
    assert!(
        raw.head.to_ascii_lowercase().contains("permessage-deflate"),
        "{}",
        raw.head
    );
}

/// The client's LZ77 window: an offer of `client_max_window_bits` without
/// a value (Chrome's, Python `websockets`') leaves it to the server, which
/// answers 15 bits (before, the library answered 9: a 512-byte window the
/// client then compressed every message with); a value is kept; an offer
/// without the parameter gets none back (RFC 7692 §7.1.2.2).
#[tokio::test]
async fn a_clients_deflate_window_is_the_largest_it_allows() {
    let h = Harness::start().await;
    for (offer, answer) in [
        (
            "permessage-deflate; client_max_window_bits",
            Some("client_max_window_bits=15"),
        ),
        (
            "permessage-deflate;client_max_window_bits ; server_no_context_takeover",
            Some("client_max_window_bits=15"),
        ),
        (
            "permessage-deflate; client_max_window_bits=12",
            Some("client_max_window_bits=12"),
        ),
        ("permessage-deflate", None),
        ("permessage-deflate; server_max_window_bits=10", None),
    ] {
        let raw = Raw::connect(&h.gw(), &[&format!("sec-websocket-extensions: {offer}")]).await;
        assert!(raw.head.starts_with("HTTP/1.1 101"), "{}", raw.head);
        let head = raw.head.to_ascii_lowercase();
        let agreed = (head.lines())
            .find_map(|l| l.strip_prefix("sec-websocket-extensions:"))
            .unwrap_or_else(|| panic!("{offer}: {head}"));
        assert!(agreed.contains("permessage-deflate"), "{offer}: {agreed}");
        match answer {
            Some(bits) => assert!(agreed.contains(bits), "{offer}: {agreed}"),
            None => assert!(
                !agreed.contains("client_max_window_bits"),
                "{offer}: {agreed}"
            ),
        }
    }
}

#[tokio::test]
async fn a_message_with_a_missing_result_is_repaired() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let h = Harness::with(opts, |_| {}).await;
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    let body = json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")]});
    let (calls, _) = calls_of(&turn(&mut ws, &body).await);
    // Full history with the second call's output missing: the mock (as
    // the API) rejects it unless the gateway repairs it.
    let mut input = vec![user("Book TP123")];
    input.extend(call_items(&calls));
    input.push(outputs(&calls)[0].clone());
    let body = json!({"model": "gpt-5", "tools": tools(), "input": input});
    let mut direct = connect(&h.direct(), &[AUTH], false).await;
    let rejected = turn(&mut direct, &body).await;
    assert!(
        String::from_utf8_lossy(&rejected[0]).contains("\"error\""),
        "{rejected:?}"
    );
    let events = turn(&mut ws, &body).await;
    let last: Value = serde_json::from_slice(events.last().expect("events")).expect("json");
    assert_eq!(last["type"], "response.completed", "{events:?}");
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_repairs_total", &[]) >= 1.0)
        .await;
    assert_eq!(metric(&m, "toolwarden_repairs_total", &[]), 1.0, "{m}");
}

/// The `request` events of the harness's JSONL log.
fn request_events(h: &Harness) -> Vec<Value> {
    h.events()
        .into_iter()
        .filter(|e| e["type"] == "request")
        .collect()
}

/// The API answers a bad turn over a WebSocket with a wrapped `error`
/// event naming the HTTP status; the turn is recorded with that status and
/// the provider's message (as over HTTP), not as a 200.
#[tokio::test]
async fn a_turn_the_api_refuses_is_recorded_with_its_status_and_message() {
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.repair = toolwarden_gateway::RepairMode::Off;
    })
    .await;
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    // A result for a call the history does not hold: the mock, as the API,
    // refuses it.
    let orphan =
        json!({"type": "function_call_output", "call_id": "call_missing_1234", "output": "ok"});
    let body = json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123"), orphan]});
    let events = turn(&mut ws, &body).await;
    let error: Value = serde_json::from_slice(&events[0]).expect("json");
    assert_eq!(
        (error["type"].as_str(), error["status"].as_u64()),
        (Some("error"), Some(400))
    );
    drop(ws);
    let m = h
        .metrics_when(|m| {
            metric(
                m,
                "toolwarden_upstream_requests_total",
                &[("status", "400")],
            ) >= 1.0
        })
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_upstream_requests_total",
            &[("status", "200")]
        ),
        0.0,
        "{m}"
    );
    h.finish().await;
    let requests = request_events(&h);
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["status"], 400, "{requests:?}");
    let text = requests[0]["error"].as_str().unwrap_or_default();
    assert!(text.starts_with("invalid_request_error: "), "{text}");
}

/// An `error` that refuses some other client message (an event type the
/// server does not support: a `status`, no `sequence_number`) while a
/// response is under way ends no turn: the response goes on, its call and
/// its completion are its turn's. Before, the error ended the turn (a
/// failed 400) and the rest of the response went to no turn, its call lost.
/// A `response.create` the server refuses before it begins is still ended
/// by its error (`a_turn_the_api_refuses_is_recorded_with_its_status_and_message`).
#[tokio::test]
async fn an_error_refusing_another_client_message_ends_no_turn() {
    use toolwarden_mock_provider::{RawResponse, Scripted};
    let mut h = Harness::with(MockOptions::default(), |_| {}).await;
    let response = |status: &str| json!({"id": "resp_1", "object": "response", "model": "gpt-5", "status": status, "output": []});
    let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup",
        "arguments": "{\"q\":\"TP123\"}", "status": "completed"});
    let mut completed = response("completed");
    completed["output"] = json!([call.clone()]);
    completed["usage"] = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15});
    let events = [
        json!({"type": "response.created", "sequence_number": 0, "response": response("in_progress")}),
        json!({"type": "error", "status": 400, "error": {"type": "invalid_request_error",
            "code": "unknown_event_type", "message": "Unsupported event type 'response.processed'",
            "param": "type"}}),
        json!({"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": call}),
        json!({"type": "response.completed", "sequence_number": 2, "response": completed}),
    ];
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: Vec::new(),
        chunks: events
            .iter()
            .map(|e| bytes::Bytes::from(e.to_string()))
            .collect(),
        delay: std::time::Duration::ZERO,
    }));
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    let create = json!({"type": "response.create", "model": "gpt-5", "tools": tools(),
        "input": [user("Book TP123")]});
    super::client::send_text(&mut ws, create.to_string()).await;
    let processed = json!({"type": "response.processed", "response_id": "resp_0"});
    super::client::send_text(&mut ws, processed.to_string()).await;
    for event in &events {
        let got = super::client::next(&mut ws).await.expect("an event");
        assert_eq!(got.as_ref(), event.to_string().as_bytes());
    }
    drop(ws);
    let stats = h.finish().await;
    assert_eq!(
        (
            stats.requests.total,
            stats.requests.errors,
            stats.totals.calls
        ),
        (1, 0, 1),
        "{:?} {:?}",
        stats.requests,
        stats.totals
    );
    let requests = request_events(&h);
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(
        (&requests[0]["status"], &requests[0]["response_id"]),
        (&json!(200), &json!("resp_1")),
        "{requests:?}"
    );
    assert!(requests[0]["error"].is_null(), "{requests:?}");
}

/// A WebSocket turn has no response head: its first byte is its first
/// event, however soon the gateway has read the message.
#[tokio::test]
async fn a_turns_first_byte_is_its_first_event() {
    let mut h = Harness::with(MockOptions::default(), |_| {}).await;
    h.mock.set_fault(toolwarden_mock_provider::Fault::Delay(
        std::time::Duration::from_millis(300),
    ));
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    let body = json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")]});
    turn(&mut ws, &body).await;
    drop(ws);
    h.finish().await;
    let requests = request_events(&h);
    assert_eq!(requests.len(), 1, "{requests:?}");
    let first = requests[0]["first_byte_ms"].as_f64().expect("timed");
    assert!(first >= 250.0, "{requests:?}");
}

#[tokio::test]
async fn the_chatgpt_backends_responses_path_is_read_over_http_and_websocket() {
    let mut h = Harness::start().await;
    let path = "/backend-api/codex/responses";
    let body =
        json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")], "stream": true});
    let r = post(&h.client, format!("{}{path}", h.gw()), &[AUTH], &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let mut ws = connect_path(&h.gw(), path, &[AUTH], true)
        .await
        .expect("upgrade");
    let events = turn(
        &mut ws,
        &json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")]}),
    )
    .await;
    assert_eq!(calls_of(&events).0.len(), 1);
    drop(ws);
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_tool_calls_total", &[]) == 2.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_tool_calls_total", &[("tool", "lookup")]),
        2.0,
        "{m}"
    );
    let received = h.mock.received();
    assert!(
        received.iter().all(|r| r.path == path),
        "{:?}",
        received.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    assert_eq!(h.finish().await.requests.total, 2);
}

/// The function calls of a non-streamed Responses reply, as `calls_of`
/// reads them from a socket's events.
fn http_calls(reply: &Value) -> Vec<(String, String)> {
    reply["output"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call")
        .map(|i| {
            let s = |k: &str| i[k].as_str().unwrap_or_default().to_string();
            (s("call_id"), s("name"))
        })
        .collect()
}

/// A client that leaves WebSocket mode mid-conversation (Codex falls back
/// to HTTP when its socket fails) and later takes a socket again, each
/// time resending the whole history: every result counts once, in one
/// session, whichever transport carried it.
#[tokio::test]
async fn a_conversation_moved_between_a_socket_and_http_is_counted_once() {
    moved_between_transports(&[AUTH, ("session_id", "ws-to-http")]).await;
}

/// The same without a session header: the conversation's fingerprint
/// session holds it across the transports.
#[tokio::test]
async fn a_conversation_moved_between_transports_without_a_session_header_is_counted_once() {
    moved_between_transports(&[AUTH]).await;
}

async fn moved_between_transports(headers: &[(&str, &str)]) {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let mut history = Vec::new();
    let round = |history: &mut Vec<Value>, calls: &[(String, String)]| {
        assert_eq!(calls.len(), 2, "{calls:?}");
        history.extend(call_items(calls));
        history.extend(outputs(calls));
    };

    // Round 1 over a socket.
    let mut ws = connect(&h.gw(), headers, false).await;
    history.push(user("Find and book flight TP123"));
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    round(&mut history, &calls_of(&turn(&mut ws, &body).await).0);
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    let events = turn(&mut ws, &body).await;
    assert!(calls_of(&events).0.is_empty(), "a text answer: {events:?}");
    history.extend(output_messages(&events));
    drop(ws);

    // Round 2 over HTTP, the whole history resent.
    let url = format!("{}/v1/responses", h.gw());
    history.push(user("And the return flight"));
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    let r = post(&h.client, url.clone(), headers, &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    round(&mut history, &http_calls(&r.json()));
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    let r = post(&h.client, url, headers, &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        http_calls(&r.json()).is_empty(),
        "a text answer: {}",
        r.text()
    );
    let messages = r.json()["output"].as_array().cloned().unwrap_or_default();
    history.extend(messages.into_iter().filter(|i| i["type"] == "message"));

    // Round 3 over a new socket, the whole history resent again.
    let mut ws = connect(&h.gw(), headers, false).await;
    history.push(user("And a hotel"));
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    round(&mut history, &calls_of(&turn(&mut ws, &body).await).0);
    let body = json!({"model": "gpt-5", "tools": tools(), "input": history, "store": false});
    assert!(calls_of(&turn(&mut ws, &body).await).0.is_empty());
    drop(ws);

    let expected = |m: &str| {
        metric(m, "toolwarden_tool_calls_total", &[("tool", "book")]) == 3.0
            && metric(m, "toolwarden_tool_failures_total", &[("tool", "book")]) == 3.0
    };
    let m = h.metrics_when(expected).await;
    assert!(expected(&m), "{m}");
    assert_eq!(metric(&m, "toolwarden_tool_calls_total", &[]), 6.0, "{m}");
    assert_eq!(
        metric(&m, "toolwarden_tool_failures_total", &[]),
        3.0,
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 6, "{:?}", stats.requests);
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    assert_eq!(
        (stats.sessions[0].calls, stats.sessions[0].failures),
        (6, 3)
    );
    let events = h.events();
    let count = |ty: &str| events.iter().filter(|e| e["type"] == ty).count();
    assert_eq!(
        (count("request"), count("tool_call"), count("tool_result")),
        (6, 6, 6)
    );
}
