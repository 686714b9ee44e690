//! Calls and results without their id (which the providers refuse for the
//! missing field) read as the id "": a repeat of one is renamed like any
//! repeated id, by giving the call (and the result answering that
//! occurrence) the member it lacked. Found by the `repair` fuzz target:
//! the rename used to replace nothing, leaving a body that did not validate
//! clean after repair.

use toolwarden_wire::{Dialect, repair, validate};

/// Repaired: clean, a repair of itself, and holding `expect`.
fn repairs_clean(dialect: Dialect, body: &str, expect: &[&str]) {
    let r = repair(dialect, body.as_bytes()).unwrap();
    let out = String::from_utf8(r.body.to_vec()).unwrap();
    let defects = validate(dialect, out.as_bytes()).unwrap();
    assert!(defects.is_empty(), "{dialect}: {defects:?}\n{out}");
    assert!(
        !repair(dialect, out.as_bytes()).unwrap().is_changed(),
        "{dialect}: {out}"
    );
    serde_json::from_str::<serde_json::Value>(&out).unwrap();
    for e in expect {
        assert!(out.contains(e), "{dialect}: no {e} in\n{out}");
    }
}

#[test]
fn anthropic_calls_and_results_without_ids() {
    // Two id-less calls in one turn, answered by two id-less results.
    let body = r#"{"model":"m","max_tokens":1,"messages":[
{"role":"user","content":"hi"},
{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}},{"type":"tool_use","name":"g","input":{}}]},
{"role":"user","content":[{"type":"tool_result","content":"a"},{"type":"tool_result","content":"b"}]}]}"#;
    repairs_clean(
        Dialect::Anthropic,
        body,
        &[
            r#"{"id":"_dup1","type":"tool_use""#,
            r#"{"tool_use_id":"_dup1","type":"tool_result","content":"b"}"#,
        ],
    );
    // Id-less calls in two turns, unanswered.
    let body = r#"{"model":"m","max_tokens":1,"messages":[
{"role":"user","content":"hi"},
{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]},
{"role":"user","content":[{"type":"text","text":"x"}]},
{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]},
{"role":"user","content":[{"type":"text","text":"y"}]}]}"#;
    repairs_clean(Dialect::Anthropic, body, &[r#""id":"_dup1""#]);
}

#[test]
fn chat_calls_and_tool_messages_without_ids() {
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"},
{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}},{"type":"function","function":{"name":"g","arguments":"{}"}}]},
{"role":"tool","content":"a"},
{"role":"tool","content":"b"}]}"#;
    repairs_clean(
        Dialect::OpenAiChat,
        body,
        &[
            r#"{"id":"_dup1","type":"function""#,
            r#"{"tool_call_id":"_dup1","role":"tool","content":"b"}"#,
        ],
    );
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"},
{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}},{}]}]}"#;
    repairs_clean(Dialect::OpenAiChat, body, &[r#"{"id":"_dup1"}"#]);
}

#[test]
fn responses_calls_and_outputs_without_call_ids() {
    let body = r#"{"model":"m","input":[{"role":"user","content":"hi"},
{"type":"function_call","name":"f","arguments":"{}"},
{"type":"function_call","name":"g","arguments":"{}"},
{"type":"function_call_output","output":"a"},
{"type":"function_call_output","output":"b"}]}"#;
    repairs_clean(
        Dialect::OpenAiResponses,
        body,
        &[r#"{"call_id":"_2","type":"function_call","name":"g""#],
    );
}
