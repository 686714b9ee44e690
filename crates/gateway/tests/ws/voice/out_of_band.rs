//! A Realtime `response.create` with a context of its own
//! (`response.input`, openai-python `RealtimeResponseCreateParams.input`:
//! any conversation items, a function call's output among them): its
//! outputs are results, as a `conversation.item.create` of one is. Before,
//! only the latter was read, and such a result was never counted.

use serde_json::{Value, json};

use super::{
    REALTIME, exchange, is, read_until, realtime_gateway, realtime_script, scripted, text,
};
use crate::e2e::support::metric;
use crate::ws::client::connect_path;

#[tokio::test]
async fn outputs_in_a_responses_own_context_are_results() {
    let greeting = vec![text(
        json!({"type": "session.created", "event_id": "e0", "session": {"type": "realtime"}}),
    )];
    let (upstream, wire) = scripted(greeting, realtime_script()).await;
    let mut h = realtime_gateway(&upstream).await;
    let headers = [
        ("authorization", "Bearer sk-test"),
        ("session_id", "out-of-band"),
    ];
    let mut ws = connect_path(&h.gw(), REALTIME, &headers, false)
        .await
        .unwrap();
    read_until(&mut ws, is("session.created")).await;
    // The first response calls `get_weather` and `book_table`.
    let create = text(json!({"type": "response.create"}));
    exchange(&mut ws, create, is("response.done")).await;
    // The booking's failure, given to a response of its own context.
    let call = json!({"type": "function_call", "call_id": "call_b", "name": "book_table",
        "arguments": "{\"at\":\"19:00\"}"});
    let output = json!({"type": "function_call_output", "call_id": "call_b",
        "output": "Error: no table free at 19:00"});
    let out_of_band = json!({"type": "response.create", "response": {"conversation": "none",
        "output_modalities": ["text"], "input": [call, output]}});
    exchange(&mut ws, text(out_of_band.clone()), is("response.done")).await;
    drop(ws);

    let m = h
        .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 1.0)
        .await;
    assert_eq!(metric(&m, "toolwarden_tool_calls_total", &[]), 2.0, "{m}");
    assert_eq!(metric(&m, "toolwarden_tool_results_total", &[]), 1.0, "{m}");
    let booking = [("tool", "book_table")];
    assert_eq!(
        metric(&m, "toolwarden_tool_failures_total", &booking),
        1.0,
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(
        (stats.totals.calls, stats.totals.failures),
        (2, 1),
        "{:?}",
        stats.totals
    );
    // It went upstream as it was sent.
    let wire = wire.lock().unwrap();
    let sent: Vec<Value> = (wire.received.iter())
        .filter_map(|(_, b)| serde_json::from_slice(b).ok())
        .collect();
    assert_eq!(sent.last(), Some(&out_of_band));
}
