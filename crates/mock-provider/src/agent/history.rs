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
            _ => {}
        }
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
}
