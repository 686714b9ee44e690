//! How a voice socket's turns end, against a scripted upstream speaking
//! the real event shapes (the openai SDK 3.57's `openai/types/realtime/`):
//! a Realtime response whose calls came (`response.output_item.done`) but
//! whose `response.done` never did, a result the client sent before it (as
//! the Agents SDK does), results sent after the socket's last turn, and a
//! Gemini `usageMetadata` that comes after the client's results. Exact
//! counts in `/metrics` and the store.

use std::sync::{Arc, Mutex};

use futures_util::SinkExt;
use serde_json::{Value, json};
use yawc::{Frame, close::CloseCode};

use super::{
    client::connect_path,
    voice::{
        LIVE, Message, REALTIME, Script, binary, exchange, is, live_ask, live_gateway,
        realtime_gateway, scripted, text,
    },
};
use crate::e2e::support::metric;

/// A `function_call` item as the Realtime server writes it, `status`
/// `in_progress` (in `response.output_item.added`) or `completed`.
fn call_item(call_id: &str, status: &str) -> Value {
    let arguments = if status == "completed" {
        r#"{"city":"Oslo"}"#
    } else {
        ""
    };
    json!({"id": format!("item_{call_id}"), "object": "realtime.item", "type": "function_call",
        "status": status, "name": "get_weather", "call_id": call_id, "arguments": arguments})
}

/// `response.done` of `id`, its output the completed call `call_id`.
fn response_done(id: &str, call_id: &str) -> Message {
    text(
        json!({"type": "response.done", "event_id": "e9", "response": {
        "object": "realtime.response", "id": id, "status": "completed", "status_details": null,
        "output": [call_item(call_id, "completed")], "conversation_id": "conv_1",
        "usage": {"total_tokens": 30, "input_tokens": 20, "output_tokens": 10,
            "input_token_details": {"cached_tokens": 0, "text_tokens": 20, "audio_tokens": 0},
            "output_token_details": {"text_tokens": 10, "audio_tokens": 0}}}}),
    )
}

/// A Realtime server whose responses each write one call, `call_<n>`, up
/// to its `response.output_item.done`; the first one's `response.done`
/// comes after the client's output for it (the Agents SDK runs a call on
/// its `response.output_item.done`), the others' never.
fn cut_script() -> Script {
    let responses = Arc::new(Mutex::new(0));
    Arc::new(move |(_, bytes): &Message| {
        let m: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        match m["type"].as_str().unwrap_or("") {
            "response.create" => {
                let mut n = responses.lock().unwrap();
                *n += 1;
                let (id, call_id) = (format!("resp_{n}"), format!("call_{n}"));
                let done = call_item(&call_id, "completed");
                vec![
                    text(
                        json!({"type": "response.created", "event_id": "e1", "response": {
                        "object": "realtime.response", "id": id, "status": "in_progress", "output": []}}),
                    ),
                    text(
                        json!({"type": "response.output_item.added", "event_id": "e2",
                        "response_id": id, "output_index": 0, "item": call_item(&call_id, "in_progress")}),
                    ),
                    text(
                        json!({"type": "response.function_call_arguments.delta", "event_id": "e3",
                        "response_id": id, "item_id": done["id"], "output_index": 0,
                        "call_id": call_id, "delta": done["arguments"]}),
                    ),
                    text(
                        json!({"type": "response.function_call_arguments.done", "event_id": "e4",
                        "response_id": id, "item_id": done["id"], "output_index": 0,
                        "call_id": call_id, "name": "get_weather", "arguments": done["arguments"]}),
                    ),
                    text(
                        json!({"type": "response.output_item.done", "event_id": "e5",
                        "response_id": id, "output_index": 0, "item": done}),
                    ),
                ]
            }
            "conversation.item.create" => {
                let mut echoed = m["item"].clone();
                echoed["object"] = json!("realtime.item");
                echoed["status"] = json!("completed");
                let mut out = vec![text(json!({"type": "conversation.item.added",
                    "event_id": "e6", "previous_item_id": null, "item": echoed}))];
                if m["item"]["call_id"] == "call_1" {
                    out.push(response_done("resp_1", "call_1"));
                }
                out
            }
            _ => vec![],
        }
    })
}

fn output(call_id: &str, output: &str) -> Message {
    text(
        json!({"type": "conversation.item.create", "item": {"type": "function_call_output",
        "call_id": call_id, "output": output}}),
    )
}

#[tokio::test]
async fn a_realtime_response_cut_before_its_response_done_is_recorded_with_its_whole_calls() {
    let (upstream, _wire) = scripted(Vec::new(), cut_script()).await;
    let mut h = realtime_gateway(&upstream).await;
    let mut ws = connect_path(&h.gw(), REALTIME, &[], false).await.unwrap();
    let create = || text(json!({"type": "response.create"}));
    exchange(&mut ws, create(), is("response.output_item.done")).await;
    // The call answered before its response is done; then `response.done`
    // repeats it.
    exchange(&mut ws, output("call_1", "rain, 9 C"), is("response.done")).await;
    // The second response: its call written whole, then the client hangs
    // up before its `response.done`.
    exchange(&mut ws, create(), is("response.output_item.done")).await;
    ws.send(Frame::close(CloseCode::Normal, "")).await.unwrap();
    drop(ws);

    let expected = |m: &str| metric(m, "toolwarden_tool_calls_total", &[]) >= 2.0;
    let m = h.metrics_when(expected).await;
    let count = |name: &str, labels: &[(&str, &str)]| metric(&m, name, labels);
    assert_eq!(count("toolwarden_tool_calls_total", &[]), 2.0, "{m}");
    assert_eq!(count("toolwarden_tool_results_total", &[]), 1.0, "{m}");
    // Named by its call, which the socket awaited from its
    // `response.output_item.done`.
    let named = [("tool", "get_weather")];
    assert_eq!(count("toolwarden_tool_results_total", &named), 1.0, "{m}");
    assert_eq!(
        count("toolwarden_unparsed_responses_total", &[]),
        0.0,
        "{m}"
    );

    let stats = h.finish().await;
    // The upgrade and the two responses, the cut one failed.
    assert_eq!(stats.requests.total, 3, "{:?}", stats.requests);
    assert_eq!(stats.requests.errors, 1, "{:?}", stats.requests);
    assert_eq!(stats.totals.calls, 2);
    let events = h.events();
    let of = |ty: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == ty).collect() };
    let mut calls: Vec<_> = of("tool_call")
        .iter()
        .map(|c| c["call_id"].clone())
        .collect();
    calls.sort_by_key(|c| c.to_string());
    assert_eq!(calls, [json!("call_1"), json!("call_2")]);
    let turns: Vec<_> = (of("request").into_iter())
        .filter(|r| r["dialect"] == "openai-responses")
        .collect();
    assert_eq!(turns.len(), 2, "{turns:?}");
    let cut = turns
        .iter()
        .find(|r| r["response_id"] == "resp_2")
        .expect("the cut response, with its id");
    let error = cut["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("client closed the websocket before the response finished"),
        "{cut:?}"
    );
    assert_eq!(cut["input_tokens"], Value::Null, "{cut:?}");
    let done = turns.iter().find(|r| r["response_id"] == "resp_1").unwrap();
    assert_eq!(
        (done["error"].clone(), done["input_tokens"].clone()),
        (Value::Null, json!(20))
    );
    // The result belongs to the turn that followed it.
    let result = &of("tool_result")[0];
    assert_eq!(result["request_id"], cut["request_id"], "{result:?}");
}

#[tokio::test]
async fn results_sent_after_a_sockets_last_turn_make_a_request_of_their_own() {
    let (upstream, _wire) = scripted(Vec::new(), cut_script()).await;
    let mut h = realtime_gateway(&upstream).await;
    let mut ws = connect_path(&h.gw(), REALTIME, &[], false).await.unwrap();
    exchange(
        &mut ws,
        text(json!({"type": "response.create"})),
        is("response.output_item.done"),
    )
    .await;
    exchange(
        &mut ws,
        output("call_1", "Error: no forecast"),
        is("response.done"),
    )
    .await;
    // The client hangs up without asking for another response.
    ws.send(Frame::close(CloseCode::Normal, "")).await.unwrap();
    drop(ws);

    let expected = |m: &str| metric(m, "toolwarden_tool_results_total", &[]) == 1.0;
    let m = h.metrics_when(expected).await;
    assert_eq!(
        metric(&m, "toolwarden_tool_failures_total", &[]),
        1.0,
        "{m}"
    );
    let stats = h.finish().await;
    // The upgrade, the response, and the request the result was sent in.
    assert_eq!(stats.requests.total, 3, "{:?}", stats.requests);
    let events = h.events();
    let requests: Vec<_> = (events.iter())
        .filter(|e| e["type"] == "request" && e["dialect"] == "openai-responses")
        .collect();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    let carrier = (requests.iter())
        .find(|r| r["request_id"] == result["request_id"])
        .expect("the result's request is recorded");
    // Ended as a turn cut by the socket's end is; no response, no tokens.
    let error = carrier["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("client closed the websocket before the response finished"),
        "{carrier:?}"
    );
    assert_eq!(
        (
            carrier["response_id"].clone(),
            carrier["first_byte_ms"].clone()
        ),
        (Value::Null, Value::Null),
        "{carrier:?}"
    );
}

/// A Gemini Live server whose `toolCall` comes without its usage, which
/// follows the client's `toolResponse` (a client that answers at once),
/// before the next generation's content and usage.
fn late_usage_script() -> Script {
    Arc::new(move |(_, bytes): &Message| {
        let m: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        if m.get("setup").is_some() {
            return vec![binary(json!({"setupComplete": {}}))];
        }
        if m.get("client_content").is_some() {
            return vec![binary(json!({"toolCall": {"functionCalls": [
                {"id": "fc_1", "name": "lookup_order", "args": {"order": "A17"}}]}}))];
        }
        if m.get("tool_response").is_some() {
            return vec![
                // The `toolCall` generation's usage, late.
                binary(
                    json!({"usageMetadata": {"promptTokenCount": 12, "responseTokenCount": 30}}),
                ),
                binary(
                    json!({"serverContent": {"modelTurn": {"parts": [{"text": "Delivered."}]}}}),
                ),
                binary(json!({"serverContent": {"turnComplete": true},
                    "usageMetadata": {"promptTokenCount": 50, "responseTokenCount": 4}})),
            ];
        }
        vec![]
    })
}

#[tokio::test]
async fn a_gemini_usage_after_the_clients_results_is_its_toolcall_turns() {
    let (upstream, _wire) = scripted(Vec::new(), late_usage_script()).await;
    let mut h = live_gateway(&upstream).await;
    let mut ws = connect_path(&h.gw(), LIVE, &[], false).await.unwrap();
    let ask = json!({"client_content": {"turns": [{"role": "user", "parts": [{"text": "Where is A17?"}]}],
        "turn_complete": true}});
    live_ask(&mut ws, ask).await;
    // The tool runs for 100 ms.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let results = json!({"tool_response": {"functionResponses": [
        {"id": "fc_1", "name": "lookup_order", "response": {"output": {"status": "delivered"}}}]}});
    exchange(&mut ws, text(results), |v: &Value| {
        v["serverContent"]["turnComplete"] == true
    })
    .await;
    drop(ws);

    let expected = |m: &str| metric(m, "toolwarden_tool_results_total", &[]) == 1.0;
    h.metrics_when(expected).await;
    let stats = h.finish().await;
    // The upgrade, the `toolCall` turn and the answer's turn: no turn of
    // its own for the late usage.
    assert_eq!(stats.requests.total, 3, "{:?}", stats.requests);
    let events = h.events();
    let turns: Vec<_> = (events.iter())
        .filter(|e| e["type"] == "request" && e["dialect"] == "gemini")
        .collect();
    assert_eq!(turns.len(), 2, "{turns:?}");
    let tokens: Vec<_> = (turns.iter())
        .map(|t| (t["input_tokens"].clone(), t["output_tokens"].clone()))
        .collect();
    assert_eq!(tokens, [(json!(12), json!(30)), (json!(50), json!(4))]);
    // The call's turn first, then the result in the turn that follows it.
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(call["request_id"], turns[0]["request_id"]);
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["request_id"], turns[1]["request_id"]);
    assert_eq!(result["tool"], "lookup_order");
    // The call's time is when it came, not when its late usage did: the
    // result's execution time counts from it.
    let ran = result["at_ms"].as_i64().unwrap() - call["at_ms"].as_i64().unwrap();
    assert!((100..5_000).contains(&ran), "{ran} ms: {call:?} {result:?}");
}
