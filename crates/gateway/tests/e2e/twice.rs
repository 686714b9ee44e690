//! Bodies and messages holding the same tool output twice, and the check
//! that its call's result counted once (the `duplicates` tests of the
//! HTTP and WebSocket suites share them).

use serde_json::{Value, json};
use toolwarden_gateway::RepairMode;
use toolwarden_mock_provider::MockOptions;

use super::support::{Harness, metric, tool_counts};

pub const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

pub fn tools() -> Value {
    let params = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    json!([
        {"type": "function", "name": "lookup", "parameters": params},
        {"type": "function", "name": "book", "parameters": params},
    ])
}

pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// `lookup` succeeds, `book` fails.
pub fn output(id: &str, name: &str) -> Value {
    let output = match name {
        "book" => "Error: seat 12A is no longer available for flight TP123",
        _ => "Flight TP123 found: departs 09:05, 189 EUR",
    };
    json!({"type": "function_call_output", "call_id": id, "output": output})
}

fn call_item(id: &str, name: &str) -> Value {
    json!({"type": "function_call", "call_id": id, "name": name, "arguments": "{\"q\":\"TP123\"}"})
}

/// Where the second copy of the first call's output goes.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// A continuation (`previous_response_id`): the calls are on the
    /// API's side, both outputs in the message.
    Continued,
    /// The whole history: the calls, their outputs, the first again last.
    Whole,
}

/// The body answering `calls` (of the response `id`) laid out as
/// `layout` says, the first call answered twice: again after all, as a
/// client that ran it once more writes it (the same call, another text).
pub fn answer(layout: Layout, calls: &[(String, String)], id: &str) -> Value {
    let outs: Vec<Value> = calls.iter().map(|(id, name)| output(id, name)).collect();
    let mut again = outs[0].clone();
    again["output"] = json!("Flight TP123 found: departs 09:05, 189 EUR (checked again)");
    match layout {
        Layout::Continued => {
            let mut input = outs;
            input.push(again);
            json!({"model": "gpt-5", "tools": tools(), "input": input, "previous_response_id": id})
        }
        Layout::Whole => {
            let mut input = vec![user("Book TP123")];
            input.extend(calls.iter().map(|(id, name)| call_item(id, name)));
            input.extend(outs);
            input.push(again);
            json!({"model": "gpt-5", "tools": tools(), "input": input, "store": false})
        }
    }
}

pub async fn harness(mode: RepairMode) -> Harness {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    Harness::with(opts, |c| c.repair = mode).await
}

/// The JSONL log's `tool_result` events: what the store found new.
fn results_logged(h: &Harness) -> usize {
    (h.events().iter())
        .filter(|e| e["type"] == "tool_result")
        .count()
}

/// Two calls, two results, `book`'s failure, once each; one
/// `duplicate_call_id` repair recorded (applied only in `fix` mode).
pub async fn check_counted_once(h: &mut Harness, mode: RepairMode, what: &str) {
    let settled = |m: &str| {
        metric(m, "toolwarden_tool_results_total", &[]) >= 2.0
            && metric(m, "toolwarden_upstream_requests_total", &[]) >= 2.0
    };
    let m = h.metrics_when(settled).await;
    assert_eq!(tool_counts(&m, &[]), (2.0, 2.0, 1.0), "{what}: {m}");
    let applied = metric(
        &m,
        "toolwarden_repairs_total",
        &[("defect", "duplicate_call_id")],
    );
    let want = if mode == RepairMode::Fix { 1.0 } else { 0.0 };
    assert_eq!(applied, want, "{what}: {m}");
    let stats = h.finish().await;
    assert_eq!(
        (stats.totals.calls, stats.totals.failures),
        (2, 1),
        "{what}: {:?}",
        stats.totals
    );
    assert_eq!(results_logged(h), 2, "{what}: {:?}", h.events());
    let repairs: Vec<(&str, u64)> = (stats.repairs.iter())
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repairs, [("duplicate_call_id", 1)], "{what}");
}
