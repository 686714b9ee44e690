//! OpenAI Chat Completions: `invalid_request_error` texts (`param:
//! messages`), worded as the API words them:
//!
//! - an assistant message whose `tool_calls` are not all answered by the
//!   run of `tool` messages right after it: "An assistant message with
//!   'tool_calls' must be followed by tool messages responding to each
//!   'tool_call_id'. The following tool_call_ids did not have response
//!   messages: ID" (openai/openai-python#1351 and many agent threads);
//! - a `tool` message outside such a run: "Invalid parameter: messages with
//!   role 'tool' must be a response to a preceeding message with
//!   'tool_calls'." (OpenAI's spelling);
//! - in the run, a `tool_call_id` of no call of that message: "Invalid
//!   parameter: 'tool_call_id' of 'ID' not found in 'tool_calls' of previous
//!   message.";
//! - one id twice: "Invalid parameter: Duplicate value for 'tool_call_id'
//!   of 'ID' in messages\[A\] and messages\[B\]." / "… for 'id' of 'ID' in
//!   messages\[N\].tool_calls." (the second is ours, in the same style);
//! - a `tool_calls[].id` over 40 characters, judged before any pairing (a
//!   schema check): "Invalid 'messages\[N\].tool_calls\[K\].id': string too
//!   long. Expected a string with maximum length 40, but got a string with
//!   length L instead." (microsoft/autogen#6377, Portkey-AI/gateway#1062
//!   from Azure OpenAI, openclaw/openclaw#875).
//!
//! Ids are unique per assistant message only: reusing one in a later turn
//! is accepted (tau-bench's recorded traffic does it). Legacy
//! `function_call` / `role: function` pairs are not checked.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{list, text};

pub(crate) const ORPHAN_TOOL_TEXT: &str = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";

/// The longest `tool_calls[].id` the API takes, in characters.
const MAX_CALL_ID_CHARS: usize = 40;

pub(super) fn violation(body: &Value) -> Option<String> {
    let msgs = list(body, "messages");
    if let Some(problem) = id_too_long(msgs) {
        return Some(problem);
    }
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        if text(m, "role") == "tool" {
            return Some(ORPHAN_TOOL_TEXT.to_string());
        }
        let calls: Vec<&str> = list(m, "tool_calls")
            .iter()
            .map(|c| text(c, "id"))
            .collect();
        if text(m, "role") != "assistant" || calls.is_empty() {
            i += 1;
            continue;
        }
        let mut unique = HashSet::new();
        for id in &calls {
            if !unique.insert(*id) {
                return Some(format!(
                    "Invalid parameter: Duplicate value for 'id' of '{id}' in messages[{i}].tool_calls."
                ));
            }
        }
        let run: Vec<(usize, &str)> = msgs
            .iter()
            .enumerate()
            .skip(i + 1)
            .take_while(|(_, t)| text(t, "role") == "tool")
            .map(|(t, tool)| (t, text(tool, "tool_call_id")))
            .collect();
        let responded: HashSet<&str> = run.iter().map(|r| r.1).collect();
        let missing: Vec<&str> = calls
            .iter()
            .copied()
            .filter(|c| !responded.contains(c))
            .collect();
        if !missing.is_empty() {
            return Some(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                missing.join(", ")
            ));
        }
        let mut first: HashMap<&str, usize> = HashMap::new();
        for &(t, id) in &run {
            if !unique.contains(id) {
                return Some(format!(
                    "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
                ));
            }
            if let Some(f) = first.insert(id, t) {
                return Some(format!(
                    "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in messages[{f}] and messages[{t}]."
                ));
            }
        }
        i += 1 + run.len();
    }
    None
}

/// The first `tool_calls[].id` longer than the API takes.
fn id_too_long(msgs: &[Value]) -> Option<String> {
    msgs.iter().enumerate().find_map(|(i, m)| {
        list(m, "tool_calls").iter().enumerate().find_map(|(k, c)| {
            let len = text(c, "id").chars().count();
            (len > MAX_CALL_ID_CHARS).then(|| {
                format!(
                    "Invalid 'messages[{i}].tool_calls[{k}].id': string too long. Expected a string with maximum length {MAX_CALL_ID_CHARS}, but got a string with length {len} instead."
                )
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(messages: Value) -> Option<String> {
        violation(&json!({"model": "gpt-4o", "messages": messages}))
    }

    fn calls(ids: &[&str]) -> Value {
        let calls: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}}))
            .collect();
        json!({"role": "assistant", "content": null, "tool_calls": calls})
    }

    fn tool(id: &str) -> Value {
        json!({"role": "tool", "tool_call_id": id, "content": "ok"})
    }

    #[test]
    fn answered_calls_pass_and_ids_may_repeat_across_turns() {
        let ok = check(json!([
            {"role": "user", "content": "go"},
            calls(&["call_0", "call_1"]), tool("call_1"), tool("call_0"),
            {"role": "user", "content": "more"},
            calls(&["call_0"]), tool("call_0"),
        ]));
        assert_eq!(ok, None);
    }

    #[test]
    fn a_call_without_its_response() {
        let got = check(json!([
            {"role": "user", "content": "go"},
            calls(&["call_a", "call_b"]), tool("call_a"),
            {"role": "user", "content": "never mind"},
        ]));
        assert_eq!(
            got.as_deref(),
            Some(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_b"
            )
        );
    }

    #[test]
    fn a_tool_message_without_its_call_or_after_a_user_message() {
        let orphan = check(json!([{"role": "user", "content": "go"}, tool("call_x")]));
        assert_eq!(orphan.as_deref(), Some(ORPHAN_TOOL_TEXT));
        let late = check(json!([
            {"role": "user", "content": "go"},
            calls(&["call_a"]),
            {"role": "user", "content": "hm"},
            tool("call_a"),
        ]));
        assert!(
            late.unwrap()
                .starts_with("An assistant message with 'tool_calls' must be followed")
        );
        let stranger = check(
            json!([{"role": "user", "content": "go"}, calls(&["call_a"]), tool("call_a"), tool("call_z")]),
        );
        assert_eq!(
            stranger.as_deref(),
            Some(
                "Invalid parameter: 'tool_call_id' of 'call_z' not found in 'tool_calls' of previous message."
            )
        );
    }

    #[test]
    fn duplicate_ids_in_one_turn() {
        let calls_twice =
            check(json!([{"role": "user", "content": "go"}, calls(&["c", "c"]), tool("c")]));
        assert_eq!(
            calls_twice.as_deref(),
            Some("Invalid parameter: Duplicate value for 'id' of 'c' in messages[1].tool_calls.")
        );
        let answered_twice =
            check(json!([{"role": "user", "content": "go"}, calls(&["c"]), tool("c"), tool("c")]));
        assert_eq!(
            answered_twice.as_deref(),
            Some(
                "Invalid parameter: Duplicate value for 'tool_call_id' of 'c', in messages[2] and messages[3]."
            )
        );
    }

    #[test]
    fn a_call_id_over_40_characters() {
        let forty = "call_0123456789abcdefghijklmnopqrstuvwxy";
        assert_eq!(forty.len(), 40);
        assert_eq!(
            check(json!([{"role": "user", "content": "go"}, calls(&[forty]), tool(forty)])),
            None
        );
        let long = format!("{forty}z");
        let got = check(json!([
            {"role": "user", "content": "go"},
            calls(&["call_a"]), tool("call_a"),
            calls(&["call_b", &long]),
        ]));
        assert_eq!(
            got.as_deref(),
            Some(
                "Invalid 'messages[3].tool_calls[1].id': string too long. Expected a string with maximum length 40, but got a string with length 41 instead."
            )
        );
        // Characters, not bytes.
        let wide = "é".repeat(40);
        assert_eq!(
            check(json!([{"role": "user", "content": "go"}, calls(&[&wide]), tool(&wide)])),
            None
        );
    }
}
