//! Anthropic Messages: `invalid_request_error` texts, worded as the API
//! words them (quoted in anthropics/claude-code#3512, #5375, #18947, #20901):
//!
//! - a `tool_use` whose id has no `tool_result` in the next message:
//!   "messages.N: `tool_use` ids were found without `tool_result` blocks
//!   immediately after: ID. Each `tool_use` block must have a corresponding
//!   `tool_result` block in the next message.";
//! - results present but not at the start of that message: "messages.N: Did
//!   not find K `tool_result` block(s) at the beginning of this message.
//!   Messages following `tool_use` blocks must begin with a matching number
//!   of `tool_result` blocks." (langchain-ai/langchain-aws#451);
//! - a `tool_result` answering no `tool_use` of the previous message:
//!   "messages.N.content.J: unexpected `tool_use_id` found in `tool_result`
//!   blocks: ID. Each `tool_result` block must have a corresponding
//!   `tool_use` block in the previous message.";
//! - a `tool_use` id used twice in the request: "messages.N.content.J:
//!   `tool_use` ids must be unique";
//! - a server tool use without its result in the same message:
//!   "messages.N: `web_search` tool use with id `ID` was found without a
//!   corresponding `web_search_tool_result` block" (AnswerDotAI/lisette#108;
//!   an MCP tool use's result is an `mcp_tool_result`).
//!
//! A second `tool_result` for one id is rejected too; that text is ours (no
//! public quote of the real one was found).
//!
//! Before any pairing (schema checks), in any message: a `tool_use` id not
//! of `[a-zA-Z0-9_-]`, or empty: "messages.N.content.J.tool_use.id: String
//! should match pattern '^\[a-zA-Z0-9_-\]+$'" (CommandCodeAI/command-code#323,
//! BlockRunAI/ClawRouter#17, maximhq/bifrost#5097); a `server_tool_use` id
//! not `srvtoolu_` and `[a-zA-Z0-9_]`: "messages.N.content.J.server_tool_use.id:
//! String should match pattern '^srvtoolu_\[a-zA-Z0-9_\]+$'"
//! (ding113/claude-code-hub#470); a `tool_result` with `is_error: true`
//! whose content is empty (`""` or `[]`): "messages.N.content.J.tool_result:
//! content cannot be empty if `is_error` is true" (bytedance/trae-agent#230,
//! jlevy/markform#153, can1357/oh-my-pi#2250); a last message of role
//! `assistant` (a prefill) whose content is a string ending in whitespace,
//! or whose last block is a `text` block whose text does: "messages: final
//! assistant content cannot end with trailing whitespace"
//! (tailcallhq/forgecode#1872; whitespace as JavaScript's `trimEnd` takes
//! it, which the AI SDK's Anthropic provider trims such a prefill with).

use std::collections::HashSet;

use serde_json::Value;

use super::{list, text};

pub(super) fn violation(body: &Value) -> Option<String> {
    let msgs = list(body, "messages");
    if let Some(problem) = id_off_pattern(msgs)
        .or_else(|| empty_error_result(msgs))
        .or_else(|| trailing_whitespace(msgs))
    {
        return Some(problem);
    }
    let mut ids: HashSet<&str> = HashSet::new();
    for (i, m) in msgs.iter().enumerate() {
        if text(m, "role") == "assistant" {
            for (j, b) in blocks(m).iter().enumerate() {
                let call = matches!(
                    text(b, "type"),
                    "tool_use" | "server_tool_use" | "mcp_tool_use"
                );
                if call && !ids.insert(text(b, "id")) {
                    return Some(format!(
                        "messages.{i}.content.{j}: `tool_use` ids must be unique"
                    ));
                }
            }
            if let Some(problem) = server_unanswered(i, m) {
                return Some(problem);
            }
            if let Some(problem) = unanswered(i, m, msgs.get(i + 1)) {
                return Some(problem);
            }
        }
        if text(m, "role") == "user" {
            let prev = i.checked_sub(1).and_then(|p| msgs.get(p));
            if let Some(problem) = unexpected_results(i, m, prev) {
                return Some(problem);
            }
        }
    }
    None
}

/// The first call id the API's id pattern refuses.
fn id_off_pattern(msgs: &[Value]) -> Option<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    msgs.iter().enumerate().find_map(|(i, m)| {
        blocks(m).iter().enumerate().find_map(|(j, b)| {
            let id = text(b, "id");
            let (kind, pattern, fits) = match text(b, "type") {
                "tool_use" => (
                    "tool_use",
                    "^[a-zA-Z0-9_-]+$",
                    !id.is_empty() && id.chars().all(|c| word(c) || c == '-'),
                ),
                "server_tool_use" => (
                    "server_tool_use",
                    "^srvtoolu_[a-zA-Z0-9_]+$",
                    id.strip_prefix("srvtoolu_")
                        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(word)),
                ),
                _ => return None,
            };
            (!fits).then(|| {
                format!(
                    "messages.{i}.content.{j}.{kind}.id: String should match pattern '{pattern}'"
                )
            })
        })
    })
}

/// The first `tool_result` flagged `is_error` with nothing in it.
fn empty_error_result(msgs: &[Value]) -> Option<String> {
    msgs.iter().enumerate().find_map(|(i, m)| {
        blocks(m).iter().enumerate().find_map(|(j, b)| {
            let empty = match b.get("content") {
                Some(Value::String(s)) => s.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                _ => false,
            };
            let flagged = b.get("is_error") == Some(&Value::Bool(true));
            (text(b, "type") == "tool_result" && flagged && empty).then(|| {
                format!(
                    "messages.{i}.content.{j}.tool_result: content cannot be empty if `is_error` is true"
                )
            })
        })
    })
}

/// A last assistant message (a prefill) ending in whitespace.
fn trailing_whitespace(msgs: &[Value]) -> Option<String> {
    let last = msgs.last().filter(|m| text(m, "role") == "assistant")?;
    let end = match last.get("content") {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Array(blocks)) => blocks
            .last()
            .filter(|b| text(b, "type") == "text")
            .map(|b| text(b, "text"))?,
        _ => return None,
    };
    // JavaScript's whitespace: Unicode's but U+0085, and U+FEFF.
    let space = |c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
    end.ends_with(space).then(|| {
        "messages: final assistant content cannot end with trailing whitespace".to_string()
    })
}

/// The content blocks of a message (none when its content is a string).
fn blocks(m: &Value) -> &[Value] {
    list(m, "content")
}

/// The client `tool_use` ids of an assistant message, each once, in order.
fn calls(m: &Value) -> Vec<&str> {
    let mut seen = HashSet::new();
    blocks(m)
        .iter()
        .filter(|b| text(b, "type") == "tool_use")
        .map(|b| text(b, "id"))
        .filter(|id| seen.insert(*id))
        .collect()
}

/// The `tool_use_id` of each `tool_result` block: `(block index, id)`.
fn results(m: &Value) -> impl Iterator<Item = (usize, &str)> {
    blocks(m)
        .iter()
        .enumerate()
        .filter(|(_, b)| text(b, "type") == "tool_result")
        .map(|(j, b)| (j, text(b, "tool_use_id")))
}

/// The server tool uses of assistant message `i` (`server_tool_use`,
/// `mcp_tool_use`) against the results in that same message.
fn server_unanswered(i: usize, m: &Value) -> Option<String> {
    let answered: HashSet<&str> = blocks(m)
        .iter()
        .filter(|b| {
            let kind = text(b, "type");
            kind != "tool_result" && kind.ends_with("_tool_result")
        })
        .map(|b| text(b, "tool_use_id"))
        .collect();
    blocks(m)
        .iter()
        .filter(|b| matches!(text(b, "type"), "server_tool_use" | "mcp_tool_use"))
        .find(|b| !answered.contains(text(b, "id")))
        .map(|b| {
            let name = text(b, "name");
            let result = match text(b, "type") {
                "mcp_tool_use" => "mcp_tool_result".to_string(),
                _ => format!("{name}_tool_result"),
            };
            format!(
                "messages.{i}: `{name}` tool use with id `{}` was found without a corresponding `{result}` block",
                text(b, "id")
            )
        })
}

/// The calls of assistant message `i` against the message after it.
fn unanswered(i: usize, m: &Value, next: Option<&Value>) -> Option<String> {
    let calls = calls(m);
    if calls.is_empty() {
        return None;
    }
    let next = next.filter(|n| text(n, "role") == "user");
    let answered: HashSet<&str> = next
        .map(|n| results(n).map(|r| r.1).collect())
        .unwrap_or_default();
    let missing: Vec<&str> = calls
        .iter()
        .copied()
        .filter(|c| !answered.contains(c))
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            missing.join(", ")
        ));
    }
    let leading: HashSet<&str> = next
        .map(|n| {
            blocks(n)
                .iter()
                .take_while(|b| text(b, "type") == "tool_result")
                .map(|b| text(b, "tool_use_id"))
                .collect()
        })
        .unwrap_or_default();
    if calls.iter().any(|c| !leading.contains(c)) {
        return Some(format!(
            "messages.{}: Did not find {} `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
            i + 1,
            calls.len()
        ));
    }
    None
}

/// The results of user message `i` against the calls of the message before.
fn unexpected_results(i: usize, m: &Value, prev: Option<&Value>) -> Option<String> {
    let calls: HashSet<&str> = prev
        .filter(|p| text(p, "role") == "assistant")
        .map(|p| calls(p).into_iter().collect())
        .unwrap_or_default();
    let mut answered = HashSet::new();
    for (j, id) in results(m) {
        if !calls.contains(id) {
            return Some(format!(
                "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            ));
        }
        if !answered.insert(id) {
            return Some(format!(
                "messages.{i}.content.{j}: `tool_result` blocks must have unique `tool_use_id`s: {id} is answered more than once"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(messages: Value) -> Option<String> {
        violation(&json!({"model": "claude", "max_tokens": 10, "messages": messages}))
    }

    fn call(id: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "f", "input": {}})
    }

    fn result(id: &str) -> Value {
        json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
    }

    #[test]
    fn answered_calls_pass() {
        let ok = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "text", "text": "hm"}, call("toolu_1"), call("toolu_2")]},
            {"role": "user", "content": [result("toolu_2"), result("toolu_1"), {"type": "text", "text": "and?"}]},
        ]));
        assert_eq!(ok, None);
    }

    #[test]
    fn a_call_without_its_result() {
        let got = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call("toolu_1"), call("toolu_2")]},
            {"role": "user", "content": [result("toolu_1")]},
        ]));
        assert_eq!(
            got.as_deref(),
            Some(
                "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
            )
        );
        // A call ending the conversation has no result either.
        let last = check(
            json!([{"role": "user", "content": "go"}, {"role": "assistant", "content": [call("toolu_9")]}]),
        );
        assert!(
            last.unwrap()
                .starts_with("messages.1: `tool_use` ids were found")
        );
    }

    #[test]
    fn a_result_without_its_call_or_two_messages_later() {
        let got = check(json!([{"role": "user", "content": [result("toolu_x")]}]));
        assert_eq!(
            got.as_deref(),
            Some(
                "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            )
        );
        // The call's turn is answered by a text message first.
        let late = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": "wait"},
            {"role": "user", "content": [result("toolu_1")]},
        ]));
        assert!(
            late.unwrap()
                .starts_with("messages.1: `tool_use` ids were found")
        );
    }

    #[test]
    fn results_after_text_are_not_at_the_beginning() {
        let got = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [{"type": "text", "text": "here"}, result("toolu_1")]},
        ]));
        assert_eq!(
            got.as_deref(),
            Some(
                "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
            )
        );
    }

    #[test]
    fn a_server_tool_use_without_its_result() {
        let search = |id: &str| json!({"type": "server_tool_use", "id": id, "name": "web_search", "input": {}});
        let found =
            |id: &str| json!({"type": "web_search_tool_result", "tool_use_id": id, "content": []});
        let ok = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [search("srvtoolu_1"), found("srvtoolu_1"), {"type": "text", "text": "so"}]},
        ]));
        assert_eq!(ok, None);
        let got = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [search("srvtoolu_2"), found("srvtoolu_1"), {"type": "text", "text": "so"}]},
        ]));
        assert_eq!(
            got.as_deref(),
            Some(
                "messages.1: `web_search` tool use with id `srvtoolu_2` was found without a corresponding `web_search_tool_result` block"
            )
        );
    }

    #[test]
    fn duplicate_ids() {
        let reused = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [result("toolu_1")]},
            {"role": "assistant", "content": [{"type": "text", "text": "again"}, call("toolu_1")]},
            {"role": "user", "content": [result("toolu_1")]},
        ]));
        assert_eq!(
            reused.as_deref(),
            Some("messages.3.content.1: `tool_use` ids must be unique")
        );
        let twice = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call("toolu_1")]},
            {"role": "user", "content": [result("toolu_1"), result("toolu_1")]},
        ]));
        assert!(
            twice
                .unwrap()
                .starts_with("messages.2.content.1: `tool_result` blocks must have unique")
        );
    }

    #[test]
    fn ids_off_the_api_pattern() {
        let ok = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [call("toolu_01-A_z9")]},
            {"role": "user", "content": [result("toolu_01-A_z9")]},
        ]));
        assert_eq!(ok, None);
        for bad in ["functions.Bash:0", "", "call 1", "toolué"] {
            let got = check(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "text", "text": "so"}, call(bad)]},
                {"role": "user", "content": [result(bad)]},
            ]));
            assert_eq!(
                got.as_deref(),
                Some(
                    "messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                ),
                "{bad:?}"
            );
        }
        let search = |id: &str| json!({"type": "server_tool_use", "id": id, "name": "web_search", "input": {}});
        let found =
            |id: &str| json!({"type": "web_search_tool_result", "tool_use_id": id, "content": []});
        let ok = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [search("srvtoolu_01_x"), found("srvtoolu_01_x")]},
        ]));
        assert_eq!(ok, None);
        for bad in ["srv_1", "srvtoolu_", "srvtoolu_a-b"] {
            let got = check(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [search(bad), found(bad)]},
            ]));
            assert_eq!(
                got.as_deref(),
                Some(
                    "messages.1.content.0.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'"
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn an_error_result_with_nothing_in_it() {
        let with = |content: Value, is_error: bool| {
            check(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [call("toolu_1"), call("toolu_2")]},
                {"role": "user", "content": [result("toolu_1"),
                    {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": is_error, "content": content}]},
            ]))
        };
        let want =
            "messages.2.content.1.tool_result: content cannot be empty if `is_error` is true";
        assert_eq!(with(json!(""), true).as_deref(), Some(want));
        assert_eq!(with(json!([]), true).as_deref(), Some(want));
        assert_eq!(with(json!("failed"), true), None);
        assert_eq!(
            with(json!([{"type": "text", "text": "failed"}]), true),
            None
        );
        assert_eq!(with(json!(""), false), None);
    }

    #[test]
    fn a_prefill_ending_in_whitespace() {
        let want = "messages: final assistant content cannot end with trailing whitespace";
        let ending = |content: Value| {
            check(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": content},
            ]))
        };
        for refused in [
            json!("The answer is "),
            json!("x\n"),
            json!("x\u{feff}"),
            json!([{"type": "text", "text": "a"}, {"type": "text", "text": "{ "}]),
        ] {
            assert_eq!(ending(refused.clone()).as_deref(), Some(want), "{refused}");
        }
        for taken in [
            json!("The answer is"),
            json!("x\u{85}"),
            json!([{"type": "text", "text": "a "}, call("toolu_1")]),
        ] {
            let got = ending(taken.clone());
            assert!(got.is_none_or(|g| g != want), "{taken}");
        }
        // Not the last message: history.
        let history = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "ok "},
            {"role": "user", "content": "more"},
        ]));
        assert_eq!(history, None);
    }
}
