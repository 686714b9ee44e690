//! A Gemini Live `NON_BLOCKING` call answered by a generator: responses
//! with `willContinue: true` ("more responses will be returned", google-genai
//! `FunctionResponse.will_continue`), then the one that ends it. The call
//! has one result, the last; before, the first was its result and each
//! later one a result of no call, counted as a call of its own.

use std::sync::Arc;

use futures_util::SinkExt;

use serde_json::{Value, json};

use super::{LIVE, Message, Script, binary, exchange, live_ask, live_gateway, scripted, text};
use crate::e2e::support::{metric, tool_counts};
use crate::ws::client::connect_path;

#[tokio::test]
async fn a_generators_responses_are_one_result_of_its_call() {
    let script: Script = Arc::new(|(_, bytes): &Message| {
        let m: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        if m.get("setup").is_some() {
            return vec![binary(json!({"setupComplete": {}}))];
        }
        if m.get("clientContent").is_some() {
            return vec![binary(json!({"toolCall": {"functionCalls": [
                {"id": "fc_build", "name": "watch_build", "args": {"job": "ci-17"}}]},
                "usageMetadata": {"promptTokenCount": 12, "responseTokenCount": 8}}))];
        }
        let last = m["toolResponse"]["functionResponses"][0]["willContinue"] == false;
        if last {
            return vec![binary(json!({"serverContent": {"turnComplete": true},
                "usageMetadata": {"promptTokenCount": 30, "responseTokenCount": 4}}))];
        }
        vec![]
    });
    let (upstream, wire) = scripted(Vec::new(), script).await;
    let mut h = live_gateway(&upstream).await;
    let mut ws = connect_path(&h.gw(), LIVE, &[("session_id", "live-generator")], false)
        .await
        .unwrap();
    let ask = json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Watch CI job 17"}]}],
        "turnComplete": true}});
    live_ask(&mut ws, ask).await;
    let response = |output: Value, more: bool| {
        json!({"toolResponse": {"functionResponses": [{"id": "fc_build", "name": "watch_build",
            "response": output, "willContinue": more, "scheduling": "SILENT"}]}})
    };
    let progress = [
        response(json!({"output": "compiling 10/40"}), true),
        response(json!({"output": "testing 3/12"}), true),
    ];
    for message in progress {
        let (_, bytes) = text(message);
        ws.send(yawc::Frame::text(bytes)).await.unwrap();
    }
    let done = response(json!({"error": "3 tests failed"}), false);
    exchange(&mut ws, text(done), |v: &Value| {
        v["serverContent"]["turnComplete"] == true
    })
    .await;
    drop(ws);

    let m = h
        .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 1.0)
        .await;
    assert_eq!(tool_counts(&m, &[]), (1.0, 1.0, 1.0), "{m}");
    let stats = h.finish().await;
    assert_eq!(
        (stats.totals.calls, stats.totals.failures),
        (1, 1),
        "{:?}",
        stats.totals
    );
    let events = h.events();
    let results: Vec<&Value> = (events.iter())
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(
        (&results[0]["call_id"], &results[0]["tool"]),
        (&json!("fc_build"), &json!("watch_build"))
    );
    // All three went upstream as they were sent.
    let wire = wire.lock().unwrap();
    let sent = (wire.received.iter())
        .filter(|(_, b)| memchr_has(b, b"willContinue"))
        .count();
    assert_eq!(sent, 3);
}

fn memchr_has(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
