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
    // The calls of the last assistant message, when its text named them
    // (smolagents through LiteLLM: see [`text_answers`]).
    let mut in_text: Vec<SeenCall> = Vec::new();
    for m in arr(body, "messages") {
        let named = std::mem::take(&mut in_text);
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let content = m.get("content").unwrap_or(&Value::Null);
        let Some(blocks) = content.as_array() else {
            match role {
                "user" => text_answers(&text_of(content), &named, out),
                "assistant" => in_text = text_turn(&text_of(content), out),
                _ => {}
            }
            continue;
        };
        let mut texts = Vec::new();
        let mut called = false;
        for b in blocks {
            match b.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => texts.push(s(b, "text").unwrap_or_default()),
                "tool_use" if role == "assistant" => {
                    called = true;
                    out.push(Turn::Calls(vec![SeenCall {
                        id: s(b, "id"),
                        name: s(b, "name").unwrap_or_default(),
                    }]))
                }
                "tool_result" => out.push(Turn::Results(vec![SeenResult {
                    id: s(b, "tool_use_id"),
                    name: None,
                    text: text_of(b.get("content").unwrap_or(&Value::Null)),
                    is_error: Some(b.get("is_error").and_then(Value::as_bool).unwrap_or(false)),
                }])),
                _ => {}
            }
        }
        match role {
            "user" if !texts.is_empty() => text_answers(&texts.join("\n"), &named, out),
            "assistant" if !called => in_text = text_turn(&texts.join("\n"), out),
            _ => {}
        }
    }
}

/// An assistant's text without calls of the API's own: the calls it names
/// ([`text_calls`]) as a model turn, returned for the user text after it.
fn text_turn(text: &str, out: &mut Vec<Turn>) -> Vec<SeenCall> {
    let calls = text_calls(text);
    if !calls.is_empty() {
        out.push(Turn::Calls(calls.clone()));
    }
    calls
}

fn converse(body: &Value, out: &mut Vec<Turn>) {
    // The calls of the last assistant message, when its text named them
    // (smolagents through LiteLLM: see [`text_answers`]).
    let mut in_text: Vec<SeenCall> = Vec::new();
    for m in arr(body, "messages") {
        let named = std::mem::take(&mut in_text);
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let mut texts = Vec::new();
        let mut called = false;
        for b in arr(m, "content") {
            if let Some(t) = s(b, "text") {
                texts.push(t);
            } else if let (Some(u), "assistant") = (b.get("toolUse"), role) {
                called = true;
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
        match role {
            "user" if !texts.is_empty() => text_answers(&texts.join("\n"), &named, out),
            "assistant" if !called => in_text = text_turn(&texts.join("\n"), out),
            _ => {}
        }
    }
}

fn chat(body: &Value, out: &mut Vec<Turn>) {
    // The calls of the last assistant message, when its text named them.
    let mut in_text: Vec<SeenCall> = Vec::new();
    for m in arr(body, "messages") {
        let named = std::mem::take(&mut in_text);
        match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "user" => text_answers(
                &text_of(m.get("content").unwrap_or(&Value::Null)),
                &named,
                out,
            ),
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
                } else {
                    in_text = text_turn(&text_of(m.get("content").unwrap_or(&Value::Null)), out);
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

/// The calls an assistant's text names, as smolagents' `ToolCallingAgent`
/// writes a step it replays (`Calling tools:\n[{'id': 'call_…', 'type':
/// 'function', 'function': {'name': 'read_file', …}}]`): the mock's own
/// ids and names, which hold no quotes.
fn text_calls(text: &str) -> Vec<SeenCall> {
    let Some((_, list)) = text.rsplit_once("Calling tools:\n[") else {
        return Vec::new();
    };
    let quoted = |s: &str, key: &str| -> Option<String> {
        let rest = &s[s.find(key)? + key.len()..];
        Some(rest[..rest.find('\'')?].to_string())
    };
    list.split("{'id': '")
        .skip(1)
        .filter_map(|call| {
            Some(SeenCall {
                id: Some(call[..call.find('\'')?].to_string()),
                name: quoted(call, "'function': {'name': '")?,
            })
        })
        .collect()
}

/// A user's text as smolagents' `ToolCallingAgent` writes its steps'
/// answers, read as turns: `Observation:\n…` opening the text answers the
/// calls `named` right before it; each error (a line `Error:\n`, its text
/// up to the agent's `Now let's retry: …`) answers its step: the first
/// one the calls `named` (the agent wrote `Call id: …` before it), any
/// other a step whose calls the agent did not replay (a model turn of one
/// call, the tool its text names). The text before the first answer is the
/// user's.
fn text_answers(text: &str, named: &[SeenCall], out: &mut Vec<Turn>) {
    const RETRY: &str = "\nNow let's retry: take care not to repeat previous errors!";
    let mut errors = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(RETRY).map(|at| from + at) {
        let start = text[from..at]
            .match_indices("Error:\n")
            .map(|(e, _)| from + e)
            .filter(|&e| e == 0 || text.as_bytes()[e - 1] == b'\n')
            .last();
        if let Some(start) = start {
            // From its `Call id:` line, if one is right before it.
            let line = text[..start.saturating_sub(1)]
                .rfind('\n')
                .map_or(0, |l| l + 1);
            let opening = if start > 0 && text[line..].starts_with("Call id: ") {
                line
            } else {
                start
            };
            errors.push((opening, start + "Error:\n".len(), at));
        }
        from = at + RETRY.len();
    }
    let lead_end = errors
        .first()
        .map_or(text.len(), |&(opening, _, _)| opening);
    let lead = text[..lead_end].trim_end_matches('\n');
    let mut named = named;
    match lead.strip_prefix("Observation:\n") {
        Some(observed) if !named.is_empty() => {
            out.push(Turn::Results(
                named
                    .iter()
                    .map(|c| SeenResult {
                        id: c.id.clone(),
                        name: None,
                        text: observed.to_string(),
                        is_error: None,
                    })
                    .collect(),
            ));
            named = &[];
        }
        _ if !lead.is_empty() || errors.is_empty() => out.push(Turn::User(lead.to_string())),
        _ => {}
    }
    for (opening, start, end) in errors {
        let error = &text[start..end];
        if named.is_empty() {
            let tool = error
                .strip_prefix("Error executing tool '")
                .and_then(|t| t.split_once('\''))
                .map_or("", |(tool, _)| tool);
            out.push(Turn::Calls(vec![SeenCall {
                id: None,
                name: tool.to_string(),
            }]));
        }
        let id = (opening < start - "Error:\n".len())
            .then(|| text[opening + "Call id: ".len()..start - "Error:\n".len() - 1].to_string());
        out.push(Turn::Results(vec![SeenResult {
            id,
            name: None,
            text: error.to_string(),
            is_error: None,
        }]));
        named = &[];
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
    // The calls of the last model content, when its text named them
    // (smolagents through LiteLLM: see [`text_answers`]).
    let mut in_text: Vec<SeenCall> = Vec::new();
    for c in arr(body, "contents") {
        let named = std::mem::take(&mut in_text);
        let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
        let mut texts = Vec::new();
        let mut called = false;
        for p in arr(c, "parts") {
            if let Some(f) = p.get("functionCall") {
                called = true;
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
            } else if let Some(t) = p.get("text").and_then(Value::as_str) {
                texts.push(t.to_string());
            }
        }
        match role {
            "model" if !called => in_text = text_turn(&texts.join("\n"), out),
            "model" => {}
            _ if !texts.is_empty() => text_answers(&texts.join("\n"), &named, out),
            _ => {}
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

    /// smolagents' steps replayed as text: each a model turn with calls,
    /// its answer the results; a failed step's calls are not replayed, and
    /// its error may join the user text before it. The same on Chat,
    /// Anthropic, Gemini and Bedrock Converse (as LiteLLM sends them).
    #[test]
    fn steps_replayed_as_text_read_as_turns() {
        let step = |id: &str, name: &str| {
            json!([{"type": "text", "text": format!(
                "Calling tools:\n[{{'id': '{id}', 'type': 'function', 'function': {{'name': '{name}', 'arguments': {{}}}}}}]")}])
        };
        let retry = "\nNow let's retry: take care not to repeat previous errors! If you have retried several times, try a completely different approach.\n";
        let error = |tool: &str| {
            format!("Error:\nError executing tool '{tool}' with arguments {{}}: E{retry}")
        };
        let c = json!({"messages":[
            {"role":"user","content":format!("New task:\ngo [[e2e:x]]\n{}", error("a"))},
            {"role":"assistant","content":step("c1", "read_file")},
            {"role":"user","content":[{"type":"text","text":format!("Observation:\nhello\n{}\n{}", error("b"), error("c"))}]},
            {"role":"assistant","content":step("c2", "run_shell")},
            {"role":"user","content":[{"type":"text","text":format!("Call id: c2\n{}", error("run_shell"))}]},
            {"role":"user","content":"Observation:\nnot after a step"}
        ]});
        let result = |id: Option<&str>, text: &str| {
            Turn::Results(vec![SeenResult {
                id: id.map(str::to_string),
                name: None,
                text: text.into(),
                is_error: None,
            }])
        };
        let call = |id: Option<&str>, name: &str| {
            Turn::Calls(vec![SeenCall {
                id: id.map(str::to_string),
                name: name.into(),
            }])
        };
        let failed = |tool: &str| format!("Error executing tool '{tool}' with arguments {{}}: E");
        let contents: Vec<Value> = arr(&c, "messages")
            .iter()
            .map(|m| {
                let role = if m["role"] == "assistant" {
                    "model"
                } else {
                    "user"
                };
                json!({"role": role, "parts": [{"text": text_of(&m["content"])}]})
            })
            .collect();
        let messages: Vec<Value> = arr(&c, "messages")
            .iter()
            .map(|m| json!({"role": m["role"], "content": [{"text": text_of(&m["content"])}]}))
            .collect();
        let bodies = [
            (Dialect::OpenAiChat, c.clone()),
            (Dialect::Anthropic, c),
            (Dialect::Gemini, json!({ "contents": contents })),
            (Dialect::BedrockConverse, json!({ "messages": messages })),
        ];
        for (dialect, body) in bodies {
            steps_read_as_turns(dialect, &body, result, call, failed);
        }
    }

    fn steps_read_as_turns(
        dialect: Dialect,
        body: &Value,
        result: impl Fn(Option<&str>, &str) -> Turn,
        call: impl Fn(Option<&str>, &str) -> Turn,
        failed: impl Fn(&str) -> String,
    ) {
        assert_eq!(
            turns(dialect, body),
            vec![
                Turn::User("New task:\ngo [[e2e:x]]".into()),
                call(None, "a"),
                result(None, &failed("a")),
                call(Some("c1"), "read_file"),
                result(Some("c1"), "hello"),
                call(None, "b"),
                result(None, &failed("b")),
                call(None, "c"),
                result(None, &failed("c")),
                call(Some("c2"), "run_shell"),
                result(Some("c2"), &failed("run_shell")),
                Turn::User("Observation:\nnot after a step".into()),
            ],
            "{dialect:?}"
        );
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
