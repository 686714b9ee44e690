//! A request's conversation, read the mock's own way (independent of the
//! gateway's parser, so it can serve as ground truth): user text, model
//! turns with tool calls, and tool results, in order, for each dialect.

use serde_json::Value;
use toolwarden_wire::Dialect;

/// One call of a model turn as the client replays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeenCall {
    /// The id as replayed (`None` for id-less Gemini calls).
    pub id: Option<String>,
    pub name: String,
}

/// One tool result as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeenResult {
    /// The id of the call it answers, when the dialect carries one.
    pub id: Option<String>,
    /// The tool's name, when the dialect carries it (Gemini).
    pub name: Option<String>,
    /// The result's content as text.
    pub text: String,
    /// The API's own error flag, where the dialect has one.
    pub is_error: Option<bool>,
}

/// A turn of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Turn {
    /// The user's words (all text parts of one message, joined).
    User(String),
    /// A model turn that called tools.
    Calls(Vec<SeenCall>),
    /// Tool results sent back.
    Results(Vec<SeenResult>),
}

/// The turns of `body`, in order.
pub(crate) fn turns(dialect: Dialect, body: &Value) -> Vec<Turn> {
    let mut out = Vec::new();
    match dialect {
        Dialect::Anthropic => anthropic(body, &mut out),
        Dialect::OpenAiChat => chat(body, &mut out),
        Dialect::OpenAiResponses => responses(body, &mut out),
        Dialect::Gemini => gemini(body, &mut out),
        Dialect::BedrockConverse => converse(body, &mut out),
    }
    merge(out)
}

/// Consecutive calls (or results) form one turn.
fn merge(turns: Vec<Turn>) -> Vec<Turn> {
    let mut out: Vec<Turn> = Vec::with_capacity(turns.len());
    for t in turns {
        match (out.last_mut(), t) {
            (Some(Turn::Calls(a)), Turn::Calls(b)) => a.extend(b),
            (Some(Turn::Results(a)), Turn::Results(b)) => a.extend(b),
            (_, t) => out.push(t),
        }
    }
    out
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn arr<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Text of a content value: a string, or the `text` of each part.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn anthropic(body: &Value, out: &mut Vec<Turn>) {
    for m in arr(body, "messages") {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let content = m.get("content").unwrap_or(&Value::Null);
        let Some(blocks) = content.as_array() else {
            if role == "user" {
                out.push(Turn::User(text_of(content)));
            }
            continue;
        };
        let mut texts = Vec::new();
        for b in blocks {
            match b.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" if role == "user" => texts.push(s(b, "text").unwrap_or_default()),
                "tool_use" if role == "assistant" => out.push(Turn::Calls(vec![SeenCall {
                    id: s(b, "id"),
                    name: s(b, "name").unwrap_or_default(),
                }])),
                "tool_result" => out.push(Turn::Results(vec![SeenResult {
                    id: s(b, "tool_use_id"),
                    name: None,
                    text: text_of(b.get("content").unwrap_or(&Value::Null)),
                    is_error: Some(b.get("is_error").and_then(Value::as_bool).unwrap_or(false)),
                }])),
                _ => {}
            }
        }
        if !texts.is_empty() {
            out.push(Turn::User(texts.join("\n")));
        }
    }
}

fn converse(body: &Value, out: &mut Vec<Turn>) {
    for m in arr(body, "messages") {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let mut texts = Vec::new();
        for b in arr(m, "content") {
            if let (Some(t), "user") = (s(b, "text"), role) {
                texts.push(t);
            } else if let (Some(u), "assistant") = (b.get("toolUse"), role) {
                out.push(Turn::Calls(vec![SeenCall {
                    id: s(u, "toolUseId"),
                    name: s(u, "name").unwrap_or_default(),
                }]));
            } else if let Some(r) = b.get("toolResult") {
                let text: Vec<String> = arr(r, "content")
                    .iter()
                    .filter_map(|p| s(p, "text").or_else(|| p.get("json").map(Value::to_string)))
                    .collect();
                out.push(Turn::Results(vec![SeenResult {
                    id: s(r, "toolUseId"),
                    name: None,
                    text: text.join("\n"),
                    is_error: Some(s(r, "status").as_deref() == Some("error")),
                }]));
            }
        }
        if !texts.is_empty() {
            out.push(Turn::User(texts.join("\n")));
        }
    }
}

fn chat(body: &Value, out: &mut Vec<Turn>) {
    for m in arr(body, "messages") {
        match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "user" => out.push(Turn::User(text_of(
                m.get("content").unwrap_or(&Value::Null),
            ))),
            "assistant" => {
                let calls: Vec<SeenCall> = arr(m, "tool_calls")
                    .iter()
                    .map(|c| SeenCall {
                        id: s(c, "id"),
                        name: c
                            .get("function")
                            .and_then(|f| s(f, "name"))
                            .unwrap_or_default(),
                    })
                    .collect();
                if !calls.is_empty() {
                    out.push(Turn::Calls(calls));
                }
            }
            "tool" => out.push(Turn::Results(vec![SeenResult {
                id: s(m, "tool_call_id"),
                name: None,
                text: text_of(m.get("content").unwrap_or(&Value::Null)),
                is_error: None,
            }])),
            _ => {}
        }
    }
}

/// The Responses API's built-in tools' call items the client runs (each
/// named after its tool: `shell_call` is a call of `shell`).
const BUILTIN_CALLS: [&str; 4] = [
    "shell_call",
    "apply_patch_call",
    "local_shell_call",
    "computer_call",
];

fn responses(body: &Value, out: &mut Vec<Turn>) {
    let input = body.get("input").unwrap_or(&Value::Null);
    let Some(items) = input.as_array() else {
        if let Some(text) = input.as_str() {
            out.push(Turn::User(text.to_string()));
        }
        return;
    };
    for item in items {
        let kind = item.get("type").and_then(Value::as_str);
        let role = item.get("role").and_then(Value::as_str);
        match (kind, role) {
            (Some("message") | None, Some("user")) => {
                out.push(Turn::User(text_of(
                    item.get("content").unwrap_or(&Value::Null),
                )));
            }
            (Some("function_call" | "custom_tool_call"), _) => {
                out.push(Turn::Calls(vec![SeenCall {
                    id: s(item, "call_id"),
                    name: s(item, "name").unwrap_or_default(),
                }]))
            }
            (Some("function_call_output" | "custom_tool_call_output"), _) => {
                out.push(Turn::Results(vec![SeenResult {
                    id: s(item, "call_id"),
                    name: None,
                    text: text_of(item.get("output").unwrap_or(&Value::Null)),
                    is_error: None,
                }]));
            }
            // The built-in tools' calls carry no name: their tool's.
            (Some(call), _) if BUILTIN_CALLS.contains(&call) => {
                out.push(Turn::Calls(vec![SeenCall {
                    id: s(item, "call_id"),
                    name: call.trim_end_matches("_call").to_string(),
                }]))
            }
            (Some("shell_call_output"), _) => out.push(Turn::Results(vec![shell_output(item)])),
            (Some("apply_patch_call_output"), _) => {
                out.push(Turn::Results(vec![SeenResult {
                    id: s(item, "call_id"),
                    name: None,
                    text: s(item, "output").unwrap_or_default(),
                    is_error: Some(s(item, "status").as_deref() == Some("failed")),
                }]));
            }
            (Some(kind @ ("local_shell_call_output" | "computer_call_output")), _) => {
                let output = item.get("output").unwrap_or(&Value::Null);
                // The API's type for a local shell output names its call by `id`.
                let id = match s(item, "call_id") {
                    None if kind == "local_shell_call_output" => s(item, "id"),
                    id => id,
                };
                out.push(Turn::Results(vec![SeenResult {
                    id,
                    name: None,
                    text: output
                        .as_str()
                        .map_or_else(|| output.to_string(), str::to_string),
                    is_error: None,
                }]));
            }
            _ => {}
        }
    }
}

/// A `shell_call_output`: the text its commands wrote (each part's stdout,
/// then its stderr), failed when a command timed out or exited non-zero.
fn shell_output(item: &Value) -> SeenResult {
    let parts = arr(item, "output");
    let text: Vec<String> = parts
        .iter()
        .flat_map(|p| [s(p, "stdout"), s(p, "stderr")])
        .flatten()
        .filter(|t| !t.is_empty())
        .collect();
    let failed = parts.iter().any(|p| {
        let outcome = p.get("outcome").unwrap_or(&Value::Null);
        match outcome.get("type").and_then(Value::as_str) {
            Some("timeout") => true,
            Some("exit") => outcome.get("exit_code").and_then(Value::as_i64) != Some(0),
            _ => false,
        }
    });
    SeenResult {
        id: s(item, "call_id"),
        name: None,
        text: text.join("\n"),
        is_error: Some(failed),
    }
}

fn gemini(body: &Value, out: &mut Vec<Turn>) {
    for c in arr(body, "contents") {
        let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
        let mut texts = Vec::new();
        for p in arr(c, "parts") {
            if let Some(f) = p.get("functionCall") {
                out.push(Turn::Calls(vec![SeenCall {
                    id: s(f, "id"),
                    name: s(f, "name").unwrap_or_default(),
                }]));
            } else if let Some(r) = p.get("functionResponse") {
                let response = r.get("response").unwrap_or(&Value::Null);
                out.push(Turn::Results(vec![SeenResult {
                    id: s(r, "id"),
                    name: s(r, "name"),
                    text: response.to_string(),
                    is_error: Some(response.get("error").is_some()),
                }]));
            } else if role == "user"
                && let Some(t) = p.get("text").and_then(Value::as_str)
            {
                texts.push(t.to_string());
            }
        }
        if !texts.is_empty() {
            out.push(Turn::User(texts.join("\n")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_dialect_reads_as_turns() {
        let a = json!({"messages":[
            {"role":"user","content":"go [[e2e:x]]"},
            {"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"Read","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"nope"}],"is_error":true},{"type":"text","text":"reminder"}]}
        ]});
        assert_eq!(
            turns(Dialect::Anthropic, &a),
            vec![
                Turn::User("go [[e2e:x]]".into()),
                Turn::Calls(vec![SeenCall {
                    id: Some("t1".into()),
                    name: "Read".into()
                }]),
                Turn::Results(vec![SeenResult {
                    id: Some("t1".into()),
                    name: None,
                    text: "nope".into(),
                    is_error: Some(true)
                }]),
                Turn::User("reminder".into()),
            ]
        );
        let g = json!({"contents":[
            {"role":"user","parts":[{"text":"hi"}]},
            {"role":"model","parts":[{"functionCall":{"name":"a","args":{}}},{"functionCall":{"name":"b","args":{}}}]},
            {"role":"user","parts":[{"functionResponse":{"name":"a","response":{"error":"x"}}},{"functionResponse":{"name":"b","response":{"output":"y"}}}]}
        ]});
        let t = turns(Dialect::Gemini, &g);
        assert_eq!(t.len(), 3);
        let Turn::Results(r) = &t[2] else {
            panic!("{t:?}")
        };
        assert_eq!(
            (r.len(), r[0].is_error, r[1].is_error),
            (2, Some(true), Some(false))
        );
        let r = json!({"input":[
            {"role":"user","content":[{"type":"input_text","text":"q"}]},
            {"type":"function_call","call_id":"c1","name":"shell","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"done"}
        ]});
        assert_eq!(turns(Dialect::OpenAiResponses, &r).len(), 3);
        let c = json!({"messages":[
            {"role":"user","content":"q"},
            {"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c","content":"r"}
        ]});
        assert_eq!(turns(Dialect::OpenAiChat, &c).len(), 3);
    }

    #[test]
    fn responses_built_in_calls_and_their_outputs() {
        let r = json!({"input":[
            {"role":"user","content":"go [[e2e:x]]"},
            {"type":"shell_call","id":"sh_1","call_id":"c1","status":"completed","action":{"commands":["ls x"]}},
            {"type":"shell_call_output","call_id":"c1","output":[
                {"stdout":"","stderr":"ls: x: No such file","outcome":{"type":"exit","exit_code":2}}]},
            {"type":"shell_call","id":"sh_2","call_id":"c2","status":"completed","action":{"commands":["echo a","echo b"]}},
            {"type":"shell_call_output","call_id":"c2","output":[
                {"stdout":"a\n","stderr":"","outcome":{"type":"exit","exit_code":0}},
                {"stdout":"b\n","stderr":"","outcome":{"type":"exit","exit_code":0}}]},
            {"type":"shell_call","id":"sh_3","call_id":"c3","status":"completed","action":{"commands":["sleep 9"]}},
            {"type":"shell_call_output","call_id":"c3","output":[
                {"stdout":"","stderr":"","outcome":{"type":"timeout"}}]},
            {"type":"apply_patch_call","id":"apc_1","call_id":"p1","status":"completed",
                "operation":{"type":"update_file","path":"a.txt","diff":"@@\n-a\n+b\n"}},
            {"type":"apply_patch_call_output","call_id":"p1","status":"completed","output":"Updated a.txt"},
            {"type":"apply_patch_call","id":"apc_2","call_id":"p2","status":"completed",
                "operation":{"type":"delete_file","path":"gone.txt"}},
            {"type":"apply_patch_call_output","call_id":"p2","status":"failed","output":"gone.txt: not found"},
            {"type":"local_shell_call","id":"lsh_1","call_id":"l1","status":"completed",
                "action":{"type":"exec","command":["ls"],"env":{}}},
            {"type":"local_shell_call_output","id":"l1","output":"{\"output\":\"a.txt\"}"}
        ]});
        let t = turns(Dialect::OpenAiResponses, &r);
        let mut calls = Vec::new();
        let mut results = Vec::new();
        let mut ids = Vec::new();
        for turn in &t[1..] {
            match turn {
                Turn::Calls(c) => {
                    calls.extend(c.iter().map(|c| (c.id.clone().unwrap(), c.name.clone())))
                }
                Turn::Results(r) => {
                    results.extend(r.iter().map(|r| (r.text.clone(), r.is_error)));
                    ids.extend(r.iter().map(|r| r.id.clone().unwrap_or_default()));
                }
                Turn::User(u) => panic!("{u}"),
            }
        }
        let names: Vec<&str> = calls.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(
            names,
            [
                "shell",
                "shell",
                "shell",
                "apply_patch",
                "apply_patch",
                "local_shell"
            ]
        );
        assert_eq!(
            results,
            [
                ("ls: x: No such file".to_string(), Some(true)),
                ("a\n\nb\n".to_string(), Some(false)),
                (String::new(), Some(true)),
                ("Updated a.txt".to_string(), Some(false)),
                ("gone.txt: not found".to_string(), Some(true)),
                (r#"{"output":"a.txt"}"#.to_string(), None),
            ]
        );
        // The local shell output names its call by `id`, as the API's type has it.
        assert_eq!(ids, ["c1", "c2", "c3", "p1", "p2", "l1"]);
    }
}
