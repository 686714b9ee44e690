//! The gateway's repair (`toolwarden_wire::repair`) judged by these rules,
//! not by the wire crate's own validator: each defective body must come
//! out of repair as one the real API accepts.

use serde_json::{Value, json};
use toolwarden_wire::Dialect;

use super::{reasoning, violation};

fn repaired(dialect: Dialect, body: &Value) -> Vec<u8> {
    let bytes = serde_json::to_vec(body).unwrap();
    assert!(
        violation(dialect, None, &bytes).is_some(),
        "not defective: {body}"
    );
    toolwarden_wire::repair(dialect, &bytes)
        .unwrap()
        .body
        .into_owned()
}

fn accepted(dialect: Dialect, body: Value) {
    let fixed = repaired(dialect, &body);
    let problem = violation(dialect, None, &fixed);
    assert_eq!(
        problem,
        None,
        "{dialect}: {}",
        String::from_utf8_lossy(&fixed)
    );
}

fn rs(seed: u64) -> Value {
    json!({"type": "reasoning", "id": reasoning::reasoning_id(seed), "summary": [], "encrypted_content": "gAAAA"})
}

fn fc(seed: u64, i: usize) -> Value {
    json!({"type": "function_call", "id": reasoning::call_item_id("fc_", seed, i), "call_id": format!("call_{seed}_{i}"), "name": "f", "arguments": "{}"})
}

fn out(seed: u64, i: usize) -> Value {
    json!({"type": "function_call_output", "call_id": format!("call_{seed}_{i}"), "output": "ok"})
}

fn user() -> Value {
    json!({"role": "user", "content": "go"})
}

#[test]
fn missing_results_are_repaired_into_accepted_bodies() {
    accepted(
        Dialect::Anthropic,
        json!({"model": "c", "max_tokens": 5, "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
            {"role": "user", "content": "never mind"},
        ]}),
    );
    accepted(
        Dialect::OpenAiChat,
        json!({"model": "gpt-4o", "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": "never mind"},
        ]}),
    );
    accepted(
        Dialect::Gemini,
        json!({"contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ]}),
    );
    accepted(
        Dialect::BedrockConverse,
        json!({"messages": [
            {"role": "user", "content": [{"text": "go"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]},
            {"role": "user", "content": [{"text": "never mind"}]},
        ]}),
    );
}

#[test]
fn responses_repairs_keep_reasoning_before_its_calls() {
    // A parallel call left unanswered, then a new user turn.
    accepted(
        Dialect::OpenAiResponses,
        json!({"model": "gpt-5", "input": [
            user(), rs(1), fc(1, 0), fc(1, 1), out(1, 0), user(),
        ]}),
    );
    // An output sent before its call.
    accepted(
        Dialect::OpenAiResponses,
        json!({"model": "gpt-5", "input": [
            user(), out(2, 0), rs(2), fc(2, 0), user(),
        ]}),
    );
    // A call with no output, and a later reasoning turn.
    accepted(
        Dialect::OpenAiResponses,
        json!({"model": "gpt-5", "input": [
            user(), rs(3), fc(3, 0), user(), rs(4), fc(4, 0), out(4, 0),
        ]}),
    );
}

/// A resent reasoning turn: repair removes the repeated call, its output
/// and its repeated `reasoning` item, which the API would refuse
/// ("Duplicate item found with id rs_0000000000000005. …").
#[test]
fn a_resent_reasoning_turn_is_repaired_into_an_accepted_body() {
    accepted(
        Dialect::OpenAiResponses,
        json!({"model": "gpt-5", "input": [
            user(), rs(5), fc(5, 0), out(5, 0), rs(5), fc(5, 0), out(5, 0),
        ]}),
    );
}

/// The built-in tools' calls the client runs: an unanswered one gets an
/// output of its own kind, an output before its call or without one is
/// dealt with, and a reasoning model's built-in call keeps its reasoning.
#[test]
fn responses_built_in_calls_are_repaired_into_accepted_bodies() {
    let shell = |seed: u64, i: usize| {
        json!({"type": "shell_call", "id": reasoning::call_item_id("sh_", seed, i),
            "call_id": format!("call_{seed}_{i}"), "status": "completed",
            "action": {"commands": ["ls missing-dir"], "timeout_ms": 5000}})
    };
    let patch = |seed: u64, i: usize| {
        json!({"type": "apply_patch_call", "id": reasoning::call_item_id("apc_", seed, i),
            "call_id": format!("call_{seed}_{i}"), "status": "completed",
            "operation": {"type": "delete_file", "path": "gone.txt"}})
    };
    let shell_out = |seed: u64, i: usize| {
        json!({"type": "shell_call_output", "call_id": format!("call_{seed}_{i}"), "output": [
            {"stdout": "", "stderr": "no", "outcome": {"type": "exit", "exit_code": 2}}]})
    };
    let patch_out = |seed: u64, i: usize| json!({"type": "apply_patch_call_output", "call_id": format!("call_{seed}_{i}"), "status": "failed"});
    // Unanswered, then a new user turn: answered by an output of its kind.
    let unanswered = json!({"model": "gpt-5", "input": [user(), rs(1), shell(1, 0), user()]});
    accepted(Dialect::OpenAiResponses, unanswered.clone());
    let fixed: Value =
        serde_json::from_slice(&repaired(Dialect::OpenAiResponses, &unanswered)).unwrap();
    let answer = fixed["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["call_id"] == "call_1_0" && i["type"] != "shell_call")
        .unwrap_or_else(|| panic!("no answer: {fixed}"));
    assert_eq!(answer["type"], "shell_call_output", "{answer}");
    accepted(
        Dialect::OpenAiResponses,
        json!({"model": "gpt-5", "input": [user(), rs(2), patch(2, 0), patch(2, 1), patch_out(2, 1), user()]}),
    );
    // An output sent before its call; an output with no call.
    accepted(
        Dialect::OpenAiResponses,
        json!({"model": "gpt-5", "input": [user(), shell_out(3, 0), rs(3), shell(3, 0), user()]}),
    );
    accepted(
        Dialect::OpenAiResponses,
        json!({"model": "gpt-5", "input": [user(), patch_out(4, 0), user()]}),
    );
}

/// A resent turn that searched the web: the repeated server tool use is
/// renamed together with its result, which sits in the same message.
#[test]
fn a_resent_server_tool_turn_is_repaired_into_an_accepted_body() {
    let searched = json!({"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "text", "text": "found"}
    ]});
    accepted(
        Dialect::Anthropic,
        json!({"model": "c", "max_tokens": 5, "messages": [
            user(), searched.clone(), {"role": "user", "content": "again"}, searched, user(),
        ]}),
    );
}
