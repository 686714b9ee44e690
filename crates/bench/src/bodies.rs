//! The benchmark's request bodies: ~20 KB conversations whose last message
//! carries tool results (one of them a failure), in the Anthropic and Chat
//! dialects, with result texts taken from the corpus when it is present.

use serde_json::{Value, json};

/// Target size of a request body.
pub const BODY_BYTES: usize = 20 * 1024;

/// Result texts: real tool outputs from the corpus's `tool_results.jsonl`
/// (`TOOLWARDEN_CORPUS`, see `toolwarden_testkit`) if it is there, else
/// synthetic ones (said on stderr).
pub fn result_texts() -> Vec<String> {
    let found = match toolwarden_testkit::corpus_dir() {
        Ok(dir) => std::fs::read_to_string(dir.join("tool_results.jsonl")).ok(),
        Err(e) => {
            eprintln!("toolwarden-bench: {e}: synthetic result texts");
            None
        }
    };
    let mut texts: Vec<String> = found
        .iter()
        .flat_map(|t| t.lines())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["content"].as_str().map(str::to_string))
        .filter(|s| s.len() > 200)
        .take(64)
        .collect();
    if texts.is_empty() {
        texts = (0..16)
            .map(|i| {
                format!("line {i}: fn handler(req: Request) -> Response {{ /* … */ }}\n").repeat(12)
            })
            .collect();
    }
    texts
}

/// Fill `n` result contents so the whole body is about `BODY_BYTES`.
fn contents(texts: &[String], n: usize, budget: usize) -> Vec<String> {
    let per = budget / n;
    (0..n)
        .map(|i| {
            let mut s = String::new();
            let mut k = i;
            while s.len() < per {
                s.push_str(&texts[k % texts.len()]);
                s.push('\n');
                k += 1;
            }
            let mut cut = per;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s
        })
        .collect()
}

const CALLS: usize = 4;

/// Call ids are `bench_` + 12 hex digits naming the session + `_` + the
/// call's index: each conversation has its own ids, as with real agents
/// (ids reused across conversations would make the store's pairing look
/// at every earlier conversation).
pub const ID_MARK: &str = "bench_";
/// The session part of a call id in a built body, filled per request.
pub const ID_BLANK: &str = "000000000000";

/// Where the session part of each call id starts in `body`.
pub fn id_slots(body: &[u8]) -> Vec<usize> {
    let mark = ID_MARK.as_bytes();
    (0..body.len().saturating_sub(mark.len() + ID_BLANK.len()))
        .filter(|&i| body[i..].starts_with(mark))
        .map(|i| i + mark.len())
        .collect()
}

/// An Anthropic Messages request: four `tool_use` calls answered by four
/// `tool_result` blocks (the last with `is_error`).
pub fn anthropic(texts: &[String], stream: bool) -> Vec<u8> {
    let build = |contents: &[String]| {
        let uses: Vec<Value> = (0..CALLS)
            .map(|i| json!({"type":"tool_use","id":format!("{ID_MARK}{ID_BLANK}_{i}"),"name":"read_file","input":{"path":format!("src/mod{i}.rs")}}))
            .collect();
        let results: Vec<Value> = contents
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut r = json!({"type":"tool_result","tool_use_id":format!("{ID_MARK}{ID_BLANK}_{i}"),"content":c});
                if i + 1 == CALLS {
                    r["is_error"] = json!(true);
                }
                r
            })
            .collect();
        let mut body = json!({
            "model": "claude-sonnet-4-20250514", "max_tokens": 1024,
            "system": "You are a coding agent.",
            "tools": [{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],
            "messages": [
                {"role":"user","content":"Read the modules and summarise them."},
                {"role":"assistant","content":uses},
                {"role":"user","content":results}]});
        if stream {
            body["stream"] = json!(true);
        }
        serde_json::to_vec(&body).unwrap_or_default()
    };
    sized(build, texts)
}

/// A Chat Completions request: one assistant message with four
/// `tool_calls`, four `role: tool` messages (the last an `Error: …`).
pub fn chat(texts: &[String], stream: bool) -> Vec<u8> {
    let build = |contents: &[String]| {
        let calls: Vec<Value> = (0..CALLS)
            .map(|i| json!({"id":format!("{ID_MARK}{ID_BLANK}_{i}"),"type":"function","function":{"name":"read_file","arguments":format!("{{\"path\":\"src/mod{i}.rs\"}}")}}))
            .collect();
        let mut messages = vec![
            json!({"role":"system","content":"You are a coding agent."}),
            json!({"role":"user","content":"Read the modules and summarise them."}),
            json!({"role":"assistant","content":null,"tool_calls":calls}),
        ];
        for (i, c) in contents.iter().enumerate() {
            let content = if i + 1 == CALLS {
                format!("Error: permission denied reading src/mod{i}.rs\n{c}")
            } else {
                c.clone()
            };
            messages.push(
                json!({"role":"tool","tool_call_id":format!("{ID_MARK}{ID_BLANK}_{i}"),"content":content}),
            );
        }
        let mut body = json!({"model":"gpt-4o","messages":messages,
            "tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]});
        if stream {
            body["stream"] = json!(true);
        }
        serde_json::to_vec(&body).unwrap_or_default()
    };
    sized(build, texts)
}

/// A Responses API request as the Codex CLI sends it: four `function_call`
/// items answered by four `function_call_output` items (the last an
/// `Error: …`), `store: false`.
pub fn responses(texts: &[String]) -> Vec<u8> {
    let build = |contents: &[String]| {
        let mut input =
            vec![json!({"role":"user","content":"Read the modules and summarise them."})];
        for i in 0..CALLS {
            input.push(json!({"type":"function_call","call_id":format!("{ID_MARK}{ID_BLANK}_{i}"),"name":"read_file","arguments":format!("{{\"path\":\"src/mod{i}.rs\"}}")}));
        }
        for (i, c) in contents.iter().enumerate() {
            let output = if i + 1 == CALLS {
                format!("Error: permission denied reading src/mod{i}.rs\n{c}")
            } else {
                c.clone()
            };
            input.push(json!({"type":"function_call_output","call_id":format!("{ID_MARK}{ID_BLANK}_{i}"),"output":output}));
        }
        let body = json!({"model":"gpt-5-codex","instructions":"You are a coding agent.",
            "store": false, "input": input,
            "tools":[{"type":"function","name":"read_file","parameters":{"type":"object"}}]});
        serde_json::to_vec(&body).unwrap_or_default()
    };
    sized(build, texts)
}

/// Build once to measure the envelope, then fill the contents to size.
fn sized(build: impl Fn(&[String]) -> Vec<u8>, texts: &[String]) -> Vec<u8> {
    let empty = vec![String::new(); CALLS];
    let overhead = build(&empty).len();
    // JSON escaping grows the text a little: aim slightly under.
    let mut budget = BODY_BYTES.saturating_sub(overhead);
    loop {
        let body = build(&contents(texts, CALLS, budget));
        if body.len() <= BODY_BYTES + 256 || budget < 1024 {
            return body;
        }
        budget -= (body.len() - BODY_BYTES) / 2 + 64;
    }
}

/// A Gemini `generateContent` request: four `functionCall` parts (with ids)
/// answered by four `functionResponse` parts (the last an `error`).
pub fn gemini(texts: &[String]) -> Vec<u8> {
    let build = |contents: &[String]| {
        let calls: Vec<Value> = (0..CALLS)
            .map(|i| json!({"functionCall":{"name":"read_file","id":format!("{ID_MARK}{ID_BLANK}_{i}"),"args":{"path":format!("src/mod{i}.rs")}}}))
            .collect();
        let results: Vec<Value> = contents
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let response = if i + 1 == CALLS {
                    json!({"error": {"message": format!("permission denied reading src/mod{i}.rs\n{c}")}})
                } else {
                    json!({"output": c})
                };
                json!({"functionResponse":{"name":"read_file","id":format!("{ID_MARK}{ID_BLANK}_{i}"),"response":response}})
            })
            .collect();
        let body = json!({
            "systemInstruction": {"parts": [{"text": "You are a coding agent."}]},
            "tools": [{"functionDeclarations": [{"name":"read_file","parameters":{"type":"object"}}]}],
            "contents": [
                {"role":"user","parts":[{"text":"Read the modules and summarise them."}]},
                {"role":"model","parts":calls},
                {"role":"user","parts":results}]});
        serde_json::to_vec(&body).unwrap_or_default()
    };
    sized(build, texts)
}

/// The same JSON body with `"stream": true` (Responses API streaming).
pub fn streaming(body: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Value>(body) {
        Ok(mut v) => {
            v["stream"] = json!(true);
            serde_json::to_vec(&v).unwrap_or_default()
        }
        Err(_) => body.to_vec(),
    }
}
