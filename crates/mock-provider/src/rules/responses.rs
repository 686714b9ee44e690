//! OpenAI Responses: `invalid_request_error` texts (`param: input`),
//! worded as the API words them:
//!
//! - a call with no output after it: "No tool output found for function
//!   call CALL_ID." (bytedance/trae-agent#245; "custom tool call" for a
//!   `custom_tool_call`);
//! - an output with no call before it: "No tool call found for function
//!   call output with call_id CALL_ID." (continuedev/continue#10092,
//!   vercel/ai#8216) — unless the body refers to history kept by the API
//!   that the mock cannot see (an `item_reference`, or a
//!   `previous_response_id` left in the body: the server judges a
//!   continuation with its previous response's context in place instead,
//!   see `crate::continuation`) and names no call with that id;
//! - the built-in tools' calls the client runs (`shell_call`,
//!   `apply_patch_call`, `local_shell_call`, `computer_call`) and their
//!   `…_output` items are paired the same way, their texts naming "shell
//!   call", "apply patch call", "local shell call", "computer call" ("No
//!   tool output found for shell call CALL_ID.", "No tool call found for
//!   shell call output with call_id CALL_ID."): these texts follow the
//!   documented function and custom tool call pattern, not a recorded API
//!   error;
//! - two items with one id, of any type: "Duplicate item found with id
//!   ID. …" (github/copilot-cli#3560 and agent threads); a second call or
//!   output for one `call_id` is rejected the same way;
//! - the reasoning adjacency rules of [`super::reasoning`];
//! - a call's or output's `call_id` over 64 characters, judged before all
//!   else (a schema check): "Invalid 'input\[N\].call_id': string too long.
//!   Expected a string with maximum length 64, but got a string with length
//!   L instead." (AnswerDotAI/fastllm#45, NousResearch/hermes-agent#72006,
//!   V1ki/dsh-plugin-subscriptions#29, all from the Codex endpoint;
//!   decolua/9router#393).
//!
//! Item rules (ids, reasoning) are checked before pairing; within each,
//! the first item in order is the one named.
//!
//! A WebSocket `response.inject` (the `responses_multi_agent=v1` beta) is
//! judged by [`inject_violation`]: its items after the calls of the
//! response they are committed to, by the same rules less the one for a
//! call without an output (the response waits for it). The API documents
//! only that the items "are validated and committed atomically"
//! (openai-python `BetaResponseInjectEvent`), not its refusals: these are
//! the `response.create` rules the items' place implies.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{list, reasoning, text};

/// The longest `call_id` the API takes, in characters.
const MAX_CALL_ID_CHARS: usize = 64;

pub(super) fn violation(body: &Value) -> Option<String> {
    let items = list(body, "input");
    if let Some(problem) = call_id_too_long(items) {
        return Some(problem);
    }
    let mut found = duplicate_ids(items);
    if body.get("store") != Some(&Value::Bool(false)) {
        found.extend(reasoning::broken(items));
    }
    if found.is_empty() {
        found = pairing(body, items, true);
    }
    found.into_iter().min_by_key(|f| f.0).map(|f| f.1)
}

/// The text of the refusal of a `response.inject` of `items` into a
/// response that has made `calls` (its call items so far), or `None`.
pub(super) fn inject_violation(calls: &[Value], items: &[Value]) -> Option<String> {
    let all: Vec<Value> = calls.iter().chain(items).cloned().collect();
    if let Some(problem) = call_id_too_long(&all) {
        return Some(problem);
    }
    let mut found = duplicate_ids(&all);
    if found.is_empty() {
        found = pairing(&Value::Null, &all, false);
    }
    found.into_iter().min_by_key(|f| f.0).map(|f| f.1)
}

/// The first call or output whose `call_id` is longer than the API takes.
fn call_id_too_long(items: &[Value]) -> Option<String> {
    items.iter().enumerate().find_map(|(k, item)| {
        if matches!(kind(item), Kind::Other) {
            return None;
        }
        let len = text(item, "call_id").chars().count();
        (len > MAX_CALL_ID_CHARS).then(|| {
            format!(
                "Invalid 'input[{k}].call_id': string too long. Expected a string with maximum length {MAX_CALL_ID_CHARS}, but got a string with length {len} instead."
            )
        })
    })
}

fn duplicate(id: &str) -> String {
    format!(
        "Duplicate item found with id {id}. Remove duplicate items from your input and try again."
    )
}

/// Items that repeat an earlier item's id.
fn duplicate_ids(items: &[Value]) -> Vec<(usize, String)> {
    let mut seen = HashSet::new();
    items
        .iter()
        .enumerate()
        .map(|(k, item)| (k, text(item, "id")))
        .filter(|(_, id)| !id.is_empty() && !seen.insert(*id))
        .map(|(k, id)| (k, duplicate(id)))
        .collect()
}

/// What an item is to pairing: a call or an output, and the call in the
/// API's texts ("function call", "shell call", …).
enum Kind {
    Call(&'static str),
    Output(&'static str),
    Other,
}

/// The call item types the client answers, and their names in the texts.
const CALLS: [(&str, &str); 6] = [
    ("function_call", "function call"),
    ("custom_tool_call", "custom tool call"),
    ("shell_call", "shell call"),
    ("apply_patch_call", "apply patch call"),
    ("local_shell_call", "local shell call"),
    ("computer_call", "computer call"),
];

/// The call an item names: its `call_id`; a `local_shell_call_output`
/// without one names it by `id`, as the API's type for it has it.
fn call_id(item: &Value) -> &str {
    match text(item, "call_id") {
        "" if text(item, "type") == "local_shell_call_output" => text(item, "id"),
        id => id,
    }
}

fn kind(item: &Value) -> Kind {
    let ty = text(item, "type");
    // A tool search the client runs (`execution: "client"`, or a
    // `call_id` without it); the provider's own answers itself.
    let client = match item.get("execution").and_then(Value::as_str) {
        Some(e) => e == "client",
        None => !text(item, "call_id").is_empty(),
    };
    match ty {
        "tool_search_call" if client => return Kind::Call("tool search call"),
        "tool_search_output" if client => return Kind::Output("tool search call"),
        _ => {}
    }
    let named = |t: &str| CALLS.iter().find(|(call, _)| *call == t).map(|c| c.1);
    if let Some(what) = named(ty) {
        return Kind::Call(what);
    }
    match ty.strip_suffix("_output").and_then(named) {
        Some(what) => Kind::Output(what),
        None => Kind::Other,
    }
}

/// Calls and outputs paired by `call_id`, in item order; `whole`: a call
/// left without an output is refused too.
fn pairing(body: &Value, items: &[Value], whole: bool) -> Vec<(usize, String)> {
    let stored_history = body
        .get("previous_response_id")
        .is_some_and(|v| !v.is_null())
        || items.iter().any(|i| text(i, "type") == "item_reference");
    let all_calls: HashSet<&str> = items
        .iter()
        .filter(|i| matches!(kind(i), Kind::Call(_)))
        .map(|i| text(i, "call_id"))
        .collect();
    let mut out = Vec::new();
    let mut called: HashSet<&str> = HashSet::new();
    let mut open: HashMap<&str, (usize, &str)> = HashMap::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for (k, item) in items.iter().enumerate() {
        let call_id = call_id(item);
        let id = Some(text(item, "id"))
            .filter(|i| !i.is_empty())
            .unwrap_or(call_id);
        match kind(item) {
            Kind::Call(what) => {
                if called.insert(call_id) {
                    open.insert(call_id, (k, what));
                } else {
                    out.push((k, duplicate(id)));
                }
            }
            Kind::Output(what) => {
                if open.remove(call_id).is_some() {
                    answered.insert(call_id);
                } else if answered.contains(call_id) {
                    out.push((k, duplicate(id)));
                } else if all_calls.contains(call_id) || !stored_history {
                    out.push((
                        k,
                        format!("No tool call found for {what} output with call_id {call_id}."),
                    ));
                }
            }
            Kind::Other => {}
        }
    }
    for (call_id, (k, what)) in open.into_iter().filter(|_| whole) {
        out.push((k, format!("No tool output found for {what} {call_id}.")));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(input: Value) -> Option<String> {
        violation(&json!({"model": "gpt-4.1", "input": input}))
    }

    fn fc(call_id: &str) -> Value {
        json!({"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"})
    }

    fn out(call_id: &str) -> Value {
        json!({"type": "function_call_output", "call_id": call_id, "output": "ok"})
    }

    fn user() -> Value {
        json!({"role": "user", "content": "go"})
    }

    #[test]
    fn paired_calls_pass_in_either_layout() {
        assert_eq!(
            check(json!([user(), fc("a"), out("a"), fc("b"), out("b")])),
            None
        );
        assert_eq!(
            check(json!([
                user(),
                fc("a"),
                fc("b"),
                out("b"),
                out("a"),
                user()
            ])),
            None
        );
        assert_eq!(check(json!("just text")), None);
    }

    #[test]
    fn a_call_without_its_output() {
        assert_eq!(
            check(json!([user(), fc("call_a"), user()])).as_deref(),
            Some("No tool output found for function call call_a.")
        );
        let custom = json!({"type": "custom_tool_call", "call_id": "call_c", "name": "apply_patch", "input": "x"});
        assert_eq!(
            check(json!([user(), custom])).as_deref(),
            Some("No tool output found for custom tool call call_c.")
        );
    }

    #[test]
    fn built_in_calls_pair_with_their_own_outputs() {
        let shell = json!({"type": "shell_call", "id": "sh_1", "call_id": "call_s", "status": "completed",
            "action": {"commands": ["ls"], "timeout_ms": 1000}});
        let shell_out = json!({"type": "shell_call_output", "call_id": "call_s", "output": [
            {"stdout": "", "stderr": "no", "outcome": {"type": "exit", "exit_code": 2}}]});
        let patch = json!({"type": "apply_patch_call", "id": "apc_1", "call_id": "call_p", "status": "completed",
            "operation": {"type": "delete_file", "path": "gone.txt"}});
        let patch_out =
            json!({"type": "apply_patch_call_output", "call_id": "call_p", "status": "failed"});
        assert_eq!(
            check(json!([
                user(),
                shell.clone(),
                shell_out.clone(),
                patch.clone(),
                patch_out.clone()
            ])),
            None
        );
        assert_eq!(
            check(json!([user(), shell, user()])).as_deref(),
            Some("No tool output found for shell call call_s.")
        );
        assert_eq!(
            check(json!([user(), patch.clone()])).as_deref(),
            Some("No tool output found for apply patch call call_p.")
        );
        let local = json!({"type": "local_shell_call", "id": "lsh_1", "call_id": "call_l", "status": "completed",
            "action": {"type": "exec", "command": ["ls"], "env": {}}});
        assert_eq!(
            check(json!([user(), local.clone()])).as_deref(),
            Some("No tool output found for local shell call call_l.")
        );
        let search = json!({"type": "tool_search_call", "id": "ts_1", "execution": "client",
            "call_id": "call_t", "status": "completed", "arguments": {"query": "weather"}});
        let search_out = json!({"type": "tool_search_output", "execution": "client",
            "call_id": "call_t", "status": "completed", "tools": []});
        assert_eq!(check(json!([user(), search.clone(), search_out])), None);
        assert_eq!(
            check(json!([user(), search])).as_deref(),
            Some("No tool output found for tool search call call_t.")
        );
        let hosted = json!({"type": "tool_search_call", "id": "ts_2", "execution": "server",
            "call_id": null, "status": "completed", "arguments": {"query": "weather"}});
        assert_eq!(check(json!([user(), hosted])), None);
        // Its output names the call by `id`, as the API's type has it, or by
        // `call_id`, as the Agents SDK writes it.
        for named in ["id", "call_id"] {
            let local_out =
                json!({"type": "local_shell_call_output", named: "call_l", "output": "{}"});
            assert_eq!(check(json!([user(), local.clone(), local_out])), None);
        }
        let computer = json!({"type": "computer_call", "id": "cu_1", "call_id": "call_c", "status": "completed",
            "action": {"type": "screenshot"}, "pending_safety_checks": []});
        assert_eq!(
            check(json!([user(), computer])).as_deref(),
            Some("No tool output found for computer call call_c.")
        );
        assert_eq!(
            check(json!([user(), shell_out])).as_deref(),
            Some("No tool call found for shell call output with call_id call_s.")
        );
        assert_eq!(
            check(json!([user(), patch_out.clone(), patch])).as_deref(),
            Some("No tool call found for apply patch call output with call_id call_p.")
        );
    }

    #[test]
    fn an_output_without_its_call_or_before_it() {
        let orphan = "No tool call found for function call output with call_id call_x.";
        assert_eq!(
            check(json!([user(), out("call_x")])).as_deref(),
            Some(orphan)
        );
        assert_eq!(
            check(json!([user(), out("call_x"), fc("call_x")])).as_deref(),
            Some(orphan)
        );
        // History the API keeps may hold the call.
        let continued =
            json!({"model": "gpt-4.1", "previous_response_id": "resp_1", "input": [out("call_x")]});
        assert_eq!(violation(&continued), None);
        let early = json!({"model": "gpt-4.1", "previous_response_id": "resp_1", "input": [out("call_x"), fc("call_x")]});
        assert_eq!(violation(&early).as_deref(), Some(orphan));
    }

    #[test]
    fn an_inject_answers_its_responses_calls_once_each() {
        let calls = [fc("call_a"), fc("call_b")];
        // Some of the calls answered: the response waits for the others.
        assert_eq!(inject_violation(&calls, &[out("call_b")]), None);
        assert_eq!(
            inject_violation(&calls, &[out("call_a"), out("call_x")]).as_deref(),
            Some("No tool call found for function call output with call_id call_x.")
        );
        assert_eq!(
            inject_violation(&calls, &[out("call_a"), out("call_a")]).as_deref(),
            Some(
                "Duplicate item found with id call_a. Remove duplicate items from your input and try again."
            )
        );
    }

    #[test]
    fn duplicates() {
        let mut a = fc("call_a");
        a["id"] = json!("fc_1");
        assert_eq!(
            check(json!([user(), a.clone(), out("call_a"), a])).as_deref(),
            Some(
                "Duplicate item found with id fc_1. Remove duplicate items from your input and try again."
            )
        );
        let rs = json!({"type": "reasoning", "id": "rs_1", "summary": []});
        assert!(
            check(json!([user(), rs.clone(), fc("c"), out("c"), rs]))
                .unwrap()
                .contains("id rs_1.")
        );
        assert!(
            check(json!([user(), fc("c"), out("c"), out("c")]))
                .unwrap()
                .contains("id c.")
        );
    }

    #[test]
    fn reasoning_rules_apply_unless_store_is_false() {
        let items =
            json!([user(), {"type": "reasoning", "id": reasoning::reasoning_id(1), "summary": []}]);
        assert!(
            check(items.clone())
                .unwrap()
                .contains("without its required following item")
        );
        assert_eq!(
            violation(&json!({"model": "gpt-5", "store": false, "input": items})),
            None
        );
    }

    #[test]
    fn a_call_id_over_64_characters() {
        let most = format!("call_{}", "x".repeat(59));
        assert_eq!(most.len(), 64);
        assert_eq!(check(json!([user(), fc(&most), out(&most)])), None);
        let long = format!("{most}y");
        let want = "Invalid 'input[3].call_id': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.";
        assert_eq!(
            check(json!([user(), fc("a"), out("a"), fc(&long), out(&long)])).as_deref(),
            Some(want)
        );
        // An output alone is judged too, before its pairing.
        assert_eq!(
            check(json!([user(), fc("a"), out("a"), out(&long)])).as_deref(),
            Some(want)
        );
        // Characters, not bytes.
        let wide = "é".repeat(64);
        assert_eq!(check(json!([user(), fc(&wide), out(&wide)])), None);
    }
}
