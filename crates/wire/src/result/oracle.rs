//! A reference reading of every tool result of a body, written plainly over
//! a `serde_json::Value` (no borrowing, no raw values, no seeds): the text
//! and verdict each dialect's rules give, for the tests to compare the lazy
//! [`super::ResultView::read`] against.
//!
//! `Value` objects keep their keys sorted, so bodies compared with it must
//! have sorted keys where order matters (an object content with both
//! `error_code` and `text`; a Gemini `response` read as its JSON).

use serde_json::Value;
use toolwarden_core::Verdict;

use crate::Dialect;

/// (call id, text, verdict) of every result of `body`, in order.
pub(super) fn results(
    dialect: Dialect,
    body: &Value,
    judge: &dyn Fn(&str) -> Verdict,
) -> Vec<(String, String, Verdict)> {
    match dialect {
        Dialect::Anthropic => anthropic(body, judge),
        Dialect::OpenAiChat => chat(body, judge),
        Dialect::OpenAiResponses => responses(body, judge),
        Dialect::Gemini => gemini(body, judge),
        Dialect::BedrockConverse => converse(body, judge),
    }
}

fn converse(body: &Value, judge: &dyn Fn(&str) -> Verdict) -> Vec<(String, String, Verdict)> {
    let results: Vec<&Value> = array(&body["messages"])
        .iter()
        .flat_map(|m| array(&m["content"]))
        .filter_map(|b| b.get("toolResult"))
        .collect();
    let flags_successes = results
        .iter()
        .any(|r| r["status"].as_str().is_some_and(|s| s != "error"));
    results
        .into_iter()
        .map(|r| {
            let text = array(&r["content"])
                .iter()
                .filter_map(|p| match (p.get("text"), p.get("json")) {
                    (Some(Value::String(t)), _) => Some(t.clone()),
                    (_, Some(j)) => Some(j.to_string()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let verdict = match r["status"].as_str() {
                Some(s) => Verdict::explicit(s == "error"),
                None => match mcp(&text) {
                    Some(flag) => Verdict::explicit(flag),
                    None if flags_successes => Verdict::NONE,
                    None => judge(&text),
                },
            };
            (id(&r["toolUseId"]), text, verdict)
        })
        .collect()
}

fn anthropic(body: &Value, judge: &dyn Fn(&str) -> Verdict) -> Vec<(String, String, Verdict)> {
    let mut out = Vec::new();
    let is_result = |b: &Value| {
        let kind = b["type"].as_str().unwrap_or("");
        kind.ends_with("tool_result")
    };
    // Does the conversation's client flag its successes?
    let flags_successes = array(&body["messages"])
        .iter()
        .flat_map(|m| array(&m["content"]))
        .any(|b| is_result(b) && b["is_error"] == false);
    for m in array(&body["messages"]) {
        for b in array(&m["content"]) {
            let kind = b["type"].as_str().unwrap_or("");
            let server = kind != "tool_result" && kind.ends_with("_tool_result");
            if kind != "tool_result" && !server {
                continue;
            }
            let content = &b["content"];
            let text = flatten(content);
            let inner_flag = content.get("isError").and_then(Value::as_bool);
            let error_object = content
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("_error"));
            let flag = b["is_error"].as_bool();
            let verdict = if flag == Some(true) || inner_flag == Some(true) || error_object {
                Verdict::explicit(true)
            } else if flag == Some(false) || inner_flag == Some(false) || server {
                Verdict::explicit(false)
            } else {
                match mcp(&text) {
                    Some(flag) => Verdict::explicit(flag),
                    None if flags_successes => Verdict::NONE,
                    None => judge(&text),
                }
            };
            out.push((id(&b["tool_use_id"]), text, verdict));
        }
    }
    out
}

fn chat(body: &Value, judge: &dyn Fn(&str) -> Verdict) -> Vec<(String, String, Verdict)> {
    let mut out = Vec::new();
    // Legacy `function_call`s: the latest id given to each name.
    let mut legacy = std::collections::HashMap::new();
    for m in array(&body["messages"]) {
        let id = match m["role"].as_str() {
            Some("tool") => id(&m["tool_call_id"]),
            Some("function") => {
                let name = m["name"].as_str().unwrap_or("");
                legacy
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| format!("function:{name}"))
            }
            Some("assistant") => {
                if let Some(f) = m.get("function_call").filter(|f| !f.is_null()) {
                    let name = f["name"].as_str().unwrap_or("").to_string();
                    let id = format!("function:{name}#{}", legacy.len());
                    legacy.insert(name, id);
                }
                continue;
            }
            _ => continue,
        };
        let text = flatten(&m["content"]);
        let verdict = flagless(&text, judge);
        out.push((id, text, verdict));
    }
    out
}

fn responses(body: &Value, judge: &dyn Fn(&str) -> Verdict) -> Vec<(String, String, Verdict)> {
    const OUTPUTS: [&str; 6] = [
        "function_call_output",
        "custom_tool_call_output",
        "shell_call_output",
        "local_shell_call_output",
        "apply_patch_call_output",
        "computer_call_output",
    ];
    let mut out = Vec::new();
    for item in array(&body["input"]) {
        if !OUTPUTS.contains(&item["type"].as_str().unwrap_or("")) {
            continue;
        }
        let output = &item["output"];
        let mut parts = Vec::new();
        let mut outcomes = Vec::new();
        match output {
            Value::Array(a) => {
                for p in a {
                    if let Some(t) = p["text"].as_str() {
                        parts.push(t.to_owned());
                    }
                    for key in ["stdout", "stderr"] {
                        match p[key].as_str() {
                            Some(t) if !t.is_empty() => parts.push(t.to_owned()),
                            _ => {}
                        }
                    }
                    if let Some(o) = p.get("outcome").filter(|o| !o.is_null()) {
                        let exited_0 = o["type"] == "exit" && o["exit_code"].as_i64() == Some(0);
                        outcomes.push(!exited_0);
                    }
                }
            }
            Value::String(s) => parts.push(s.clone()),
            _ => {}
        }
        let text = parts.join("\n");
        let patched = item["type"] == "apply_patch_call_output" && item["status"] == "completed";
        let verdict = if matches!(item["status"].as_str(), Some("incomplete" | "failed")) {
            Verdict::explicit(true)
        } else if !outcomes.is_empty() {
            Verdict::explicit(outcomes.contains(&true))
        } else if patched {
            Verdict::explicit(false)
        } else {
            flagless(&text, judge)
        };
        out.push((id(&item["call_id"]), text, verdict));
    }
    out
}

/// A Gemini `response.error` that states an error (not `null`, `false`, a
/// number, `""`, `"none"`, `[]` or `{}`).
fn states_an_error(e: &Value) -> bool {
    match e {
        Value::String(s) => !s.is_empty() && !s.eq_ignore_ascii_case("none"),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Bool(b) => *b,
        Value::Null | Value::Number(_) => false,
    }
}

fn gemini(body: &Value, judge: &dyn Fn(&str) -> Verdict) -> Vec<(String, String, Verdict)> {
    let mut out = Vec::new();
    for c in array(&body["contents"]) {
        for p in array(&c["parts"]) {
            let Some(f) = p.get("functionResponse") else {
                continue;
            };
            let r = &f["response"];
            let (text, flag) = if r.is_null() {
                (String::new(), None)
            } else if let Some(e) = r.get("error").filter(|e| states_an_error(e)) {
                let text = e
                    .as_str()
                    .or_else(|| e.get("message").and_then(Value::as_str))
                    .map_or_else(|| e.to_string(), String::from);
                (text, Some(true))
            } else {
                let text = ["output", "result", "content"]
                    .iter()
                    .find_map(|k| r.get(*k))
                    .map_or_else(
                        || r.to_string(),
                        |v| v.as_str().map_or_else(|| v.to_string(), String::from),
                    );
                (text, r.get("isError").and_then(Value::as_bool))
            };
            let verdict = match flag.or_else(|| mcp(&text)) {
                Some(failed) => Verdict::explicit(failed),
                None => judge(&text),
            };
            // The id is the body's, or `<name>#<n>` when it has none: only
            // bodies with ids are compared.
            out.push((id(&f["id"]), text, verdict));
        }
    }
    out
}

/// Content as text: a string, text parts joined with newlines, an object's
/// `error_code` and `text`, or nothing.
fn flatten(v: &Value) -> String {
    let parts: Vec<&str> = match v {
        Value::String(s) => vec![s],
        Value::Array(a) => a.iter().filter_map(|p| p["text"].as_str()).collect(),
        Value::Object(o) => ["error_code", "text"]
            .iter()
            .filter_map(|k| o.get(*k).and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    };
    parts.join("\n")
}

fn flagless(text: &str, judge: &dyn Fn(&str) -> Verdict) -> Verdict {
    match mcp(text) {
        Some(flag) => Verdict::explicit(flag),
        None => judge(text),
    }
}

/// MCP `isError` of a text that is a JSON object.
fn mcp(text: &str) -> Option<bool> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()?
        .get("isError")?
        .as_bool()
}

fn array(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn id(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}
