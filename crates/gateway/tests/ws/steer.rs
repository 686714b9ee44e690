//! A response the server begins on its own (the beta `response.steer`'s
//! automatic successor: the active response ends `incomplete`, reason
//! `steered`, and a successor's `response.created` follows with no
//! `response.create` of the client's): a turn of its own, its calls and
//! tokens recorded in the session of the turn it follows. Its events had
//! no open turn to go to and were dropped, calls and all.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use toolwarden_mock_provider::{MockOptions, RawResponse, Scripted};

use super::client::{next, send_text};
use crate::e2e::support::Harness;

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

fn call_item() -> Value {
    json!({"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "lookup",
        "arguments": "{\"q\":\"TP123\"}", "status": "completed"})
}

/// The answer to one `response.create`: the response it asked for, cut by
/// the steering (`incomplete`), then the server's own successor with a call.
fn steered_then_successor() -> Vec<Value> {
    let response = |id: &str, status: &str| json!({"id": id, "object": "response", "model": "gpt-5", "status": status, "output": []});
    let mut incomplete = response("resp_1", "incomplete");
    incomplete["incomplete_details"] = json!({"reason": "steered"});
    incomplete["usage"] = json!({"input_tokens": 10, "output_tokens": 1, "total_tokens": 11});
    let mut completed = response("resp_2", "completed");
    completed["output"] = json!([call_item()]);
    completed["usage"] = json!({"input_tokens": 20, "output_tokens": 5, "total_tokens": 25});
    vec![
        json!({"type": "response.created", "sequence_number": 0,
            "response": response("resp_1", "in_progress")}),
        json!({"type": "response.steer.accepted", "sequence_number": 1,
            "steer": {"id": "steer_1", "previous_response_id": "resp_1"}}),
        json!({"type": "response.incomplete", "sequence_number": 2, "response": incomplete}),
        json!({"type": "response.created", "sequence_number": 0,
            "response": response("resp_2", "in_progress")}),
        json!({"type": "response.output_item.done", "sequence_number": 1,
            "output_index": 0, "item": call_item()}),
        json!({"type": "response.completed", "sequence_number": 2, "response": completed}),
    ]
}

#[tokio::test]
async fn a_response_the_server_begins_on_its_own_is_a_turn_with_its_calls() {
    let mut h = Harness::with(MockOptions::default(), |_| {}).await;
    let events = steered_then_successor();
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: Vec::new(),
        chunks: events.iter().map(|e| Bytes::from(e.to_string())).collect(),
        delay: Duration::ZERO,
    }));
    let mut ws = super::client::connect(&h.gw(), &[AUTH, ("session_id", "steered")], false).await;
    // A result whose output the gateway cannot read (a number): the turn's
    // record names it; the successor's own request had no body to fail.
    let create = json!({"type": "response.create", "model": "gpt-5",
        "input": [{"role": "user", "content": "Book TP123"},
            {"type": "function_call", "call_id": "call_0", "name": "lookup", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_0", "output": 5}]});
    send_text(&mut ws, create.to_string()).await;
    // The client steers (its message passes unread), and reads both answers.
    let steer = json!({"type": "response.steer", "previous_response_id": "resp_1",
        "input": [{"role": "user", "content": "Only a window seat"}]});
    send_text(&mut ws, steer.to_string()).await;
    for event in &events {
        let got = next(&mut ws).await.expect("an event");
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
        (2, 0, 1),
        "{:?} {:?}",
        stats.requests,
        stats.totals
    );
    let events = h.events();
    let of = |ty: &'static str| events.iter().filter(move |e| e["type"] == ty);
    let requests: Vec<(&Value, &Value, &Value)> = of("request")
        .map(|r| (&r["response_id"], &r["session_id"], &r["output_tokens"]))
        .collect();
    assert_eq!(
        requests,
        [
            (&json!("resp_1"), &json!("steered"), &json!(1)),
            (&json!("resp_2"), &json!("steered"), &json!(5))
        ],
        "{events:#?}"
    );
    let parse_errors: Vec<bool> = of("request")
        .map(|r| r["parse_error"].is_string())
        .collect();
    assert_eq!(parse_errors, [true, false], "{events:#?}");
    let call = of("tool_call").next().expect("the successor's call");
    assert_eq!(
        (&call["call_id"], &call["response_id"], &call["session_id"]),
        (&json!("call_2"), &json!("resp_2"), &json!("steered"))
    );
}
