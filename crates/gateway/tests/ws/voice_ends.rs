//! How a voice socket's turns end, against a scripted upstream speaking
//! the real event shapes (the openai SDK 3.57's `openai/types/realtime/`):
//! a Realtime response whose calls came (`response.output_item.done`) but
//! whose `response.done` never did, and a result the client sent before it
//! (as the Agents SDK does). Exact counts in `/metrics` and the store.

use std::sync::{Arc, Mutex};

use futures_util::SinkExt;
use serde_json::{Value, json};
use toolwarden_gateway::Upstream;
use toolwarden_mock_provider::MockOptions;
use yawc::{Frame, close::CloseCode};

use super::{
    client::connect_path,
    voice::{Message, Script, exchange, is, scripted, text},
};
use crate::e2e::support::{Harness, metric};

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

/// A gateway reading the Realtime upstream `upstream`.
async fn realtime_gateway(upstream: &str) -> Harness {
    let upstream = upstream.to_string();
    Harness::with(MockOptions::default(), move |c| {
        c.upstreams.openai = Upstream::parse(&upstream).unwrap();
    })
    .await
}

const REALTIME: &str = "/v1/realtime?model=gpt-realtime";

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
