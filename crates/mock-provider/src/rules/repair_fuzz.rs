//! Random conversations in each dialect, repaired by the wire crate and
//! judged by these rules: whatever the body, repair must not fail, and
//! what it sends must be a body the real API accepts.

use serde_json::{Value, json};
use toolwarden_wire::Dialect;

use super::violation;

/// A small deterministic generator (xorshift64*): the same cases on every
/// run, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn id(&mut self) -> String {
        ["a", "b", "c"][self.below(3)].to_string()
    }
    /// [`Rng::id`], or at times one `max` characters long, the longest the
    /// API takes (a renamed copy of it must stay within).
    fn id_within(&mut self, max: usize) -> String {
        let id = self.id();
        if self.chance(30) {
            format!("{id}{}", "x".repeat(max - 1))
        } else {
            id
        }
    }
}

fn anthropic(r: &mut Rng) -> Value {
    let mut msgs = Vec::new();
    for _ in 0..1 + r.below(7) {
        let assistant = r.chance(50);
        // Text ending in whitespace at times: refused ending a prefill.
        let content = if r.chance(15) {
            json!(["some text", "some text \n"][r.below(2)])
        } else {
            let blocks: Vec<Value> = (0..r.below(4))
                .flat_map(|_| match (assistant, r.below(8)) {
                    // A server tool's use and result travel together.
                    (true, 2) => {
                        let id = format!("srvtoolu_{}", r.id());
                        vec![
                            json!({"type": "server_tool_use", "id": id, "name": "web_search", "input": {}}),
                            json!({"type": "web_search_tool_result", "tool_use_id": id, "content": []}),
                        ]
                    }
                    (assistant, k) => vec![match (assistant, k) {
                    (true, 0) => json!({"type": "text", "text": (["hm", "hm\u{3000}"][r.below(2)])}),
                    (true, 1) => json!({"type": "thinking", "thinking": "x", "signature": "s"}),
                    (true, 3) => {
                        json!({"type": "web_search_tool_result", "tool_use_id": format!("srvtoolu_{}", r.id()), "content": []})
                    }
                    (true, 4) => {
                        json!({"type": "tool_result", "tool_use_id": r.id(), "content": "odd"})
                    }
                    (true, _) => {
                        json!({"type": "tool_use", "id": r.id(), "name": "f", "input": {"n": 1.0}})
                    }
                    (false, 0) => json!({"type": "text", "text": "hi"}),
                    (false, 1) => json!({"type": "tool_use", "id": r.id(), "name": "f", "input": {}}),
                    // An error result, at times with nothing in it.
                    (false, 2) => {
                        let mut b = json!({"type": "tool_result", "tool_use_id": r.id(), "is_error": true});
                        match r.below(5) {
                            0 => b["content"] = json!(""),
                            1 => b["content"] = json!([]),
                            2 => b["content"] = Value::Null,
                            3 => {}
                            _ => b["content"] = json!([{"type": "text", "text": "bad"}]),
                        }
                        b
                    }
                    (false, _) => {
                        json!({"type": "tool_result", "tool_use_id": r.id(), "content": "ok"})
                    }
                }],
                })
                .collect();
            Value::Array(blocks)
        };
        let role = if assistant { "assistant" } else { "user" };
        msgs.push(json!({"role": role, "content": content}));
    }
    json!({"model": "claude", "max_tokens": 10, "messages": msgs})
}

fn chat(r: &mut Rng) -> Value {
    let mut msgs = Vec::new();
    for _ in 0..1 + r.below(8) {
        msgs.push(match r.below(4) {
            0 => json!({"role": "user", "content": "hi"}),
            3 => json!({"role": (["system", "developer", "user"][r.below(3)]), "content": [{"type": "text", "text": "sys"}]}),
            1 => {
                let calls: Vec<Value> = (0..r.below(3))
                    .map(|_| json!({"id": r.id_within(40), "type": "function", "function": {"name": "f", "arguments": "{}"}}))
                    .collect();
                if calls.is_empty() {
                    json!({"role": "assistant", "content": "ok"})
                } else {
                    json!({"role": "assistant", "content": null, "tool_calls": calls})
                }
            }
            _ => json!({"role": "tool", "tool_call_id": r.id_within(40), "content": "out"}),
        });
    }
    json!({"model": "gpt-4o", "messages": msgs})
}

fn responses(r: &mut Rng) -> Value {
    let mut items = Vec::new();
    for _ in 0..1 + r.below(8) {
        let kinds = [
            ("function_call", "function_call_output"),
            ("custom_tool_call", "custom_tool_call_output"),
        ];
        let (call, output) = kinds[r.below(kinds.len())];
        items.push(match r.below(5) {
            0 => json!({"role": "user", "content": "hi"}),
            3 => json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "t"}]}),
            4 => json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
            1 if call == "function_call" => {
                json!({"type": call, "call_id": r.id_within(64), "name": "f", "arguments": "{}"})
            }
            1 => json!({"type": call, "call_id": r.id_within(64), "name": "f", "input": "x"}),
            _ => json!({"type": output, "call_id": r.id_within(64), "output": "out"}),
        });
    }
    json!({"model": "gpt-4.1", "input": items})
}

fn gemini(r: &mut Rng) -> Value {
    let mut contents = Vec::new();
    for _ in 0..1 + r.below(7) {
        let model = r.chance(50);
        let names = ["f", "g"];
        let parts: Vec<Value> = (0..1 + r.below(3))
            .map(|_| {
                let name = names[r.below(2)];
                let id = r.chance(30).then(|| r.id());
                match (model, r.below(4)) {
                    (_, 0) => json!({"text": "t"}),
                    (true, 3) => json!({"text": "", "thoughtSignature": "c2ln"}),
                    (true, _) => match id {
                        Some(id) => json!({"functionCall": {"name": name, "args": {}, "id": id}}),
                        None => json!({"functionCall": {"name": name, "args": {}}}),
                    },
                    (false, _) => match id {
                        Some(id) => {
                            json!({"functionResponse": {"name": name, "response": {"x": 1}, "id": id}})
                        }
                        None => json!({"functionResponse": {"name": name, "response": {"x": 1}}}),
                    },
                }
            })
            .collect();
        if !model && r.chance(10) {
            contents.push(json!({"parts": parts}));
        } else {
            let role = if model { "model" } else { "user" };
            contents.push(json!({"role": role, "parts": parts}));
        }
    }
    json!({"contents": contents})
}

fn converse(r: &mut Rng) -> Value {
    let mut msgs = Vec::new();
    for _ in 0..1 + r.below(7) {
        let assistant = r.chance(50);
        // At times no block at all, which Bedrock refuses.
        let n = if r.chance(10) { 0 } else { 1 + r.below(3) };
        let blocks: Vec<Value> = (0..n)
            .flat_map(|_| match (assistant, r.below(5)) {
                // At times blank, which Bedrock refuses.
                (_, 0) => {
                    // Or ending in whitespace, which Claude refuses of a prefill.
                    let t = ["t", "t", "", " \n", "so "][r.below(5)];
                    vec![json!({"text": t})]
                }
                (true, 3) => {
                    vec![json!({"reasoningContent": {"reasoningText": {"text": "r", "signature": "s"}}})]
                }
                // A system tool Bedrock ran, answered in the same message.
                (true, 4) => {
                    let id = format!("tooluse_{}", r.id());
                    vec![
                        json!({"toolUse": {"toolUseId": id, "name": "nova_grounding", "input": {}, "type": "server_tool_use"}}),
                        json!({"toolResult": {"toolUseId": id, "content": [{"text": "found"}], "type": "nova_grounding_result"}}),
                    ]
                }
                // At times an input that is not an object, which Bedrock refuses.
                (true, 2) => {
                    let input = [json!({}), json!("{\"k\": 1}"), json!("{bad"), Value::Null][r.below(4)].clone();
                    vec![json!({"toolUse": {"toolUseId": r.id(), "name": "f", "input": input}})]
                }
                (true, _) => {
                    vec![json!({"toolUse": {"toolUseId": r.id(), "name": "f", "input": {}}})]
                }
                // At times an error with nothing in it, which Bedrock refuses.
                (false, 1) => {
                    vec![json!({"toolResult": {"toolUseId": r.id(), "content": [], "status": "error"}})]
                }
                // At times a json block that is not an object, which Bedrock refuses.
                (false, 2) => {
                    let v = [json!({"k": 1}), json!([1]), json!("s")][r.below(3)].clone();
                    vec![json!({"toolResult": {"toolUseId": r.id(), "content": [{"json": v}]}})]
                }
                (false, _) => {
                    vec![json!({"toolResult": {"toolUseId": r.id(), "content": [{"text": "ok"}]}})]
                }
            })
            .collect();
        let role = if assistant { "assistant" } else { "user" };
        msgs.push(json!({"role": role, "content": blocks}));
    }
    json!({"messages": msgs})
}

/// A message (item, content) of the repaired body without calls or
/// results, equal in value to one of the input but not in bytes.
fn unfaithful(dialect: Dialect, input: &[u8], output: &[u8]) -> Option<String> {
    use serde_json::value::RawValue;
    let key = match dialect {
        Dialect::Anthropic | Dialect::OpenAiChat | Dialect::BedrockConverse => "messages",
        Dialect::OpenAiResponses => "input",
        Dialect::Gemini => "contents",
    };
    let raws = |b: &'_ [u8]| -> Vec<String> {
        let v: std::collections::HashMap<String, &RawValue> = serde_json::from_slice(b).unwrap();
        let list: Vec<&RawValue> = serde_json::from_str(v[key].get()).unwrap();
        list.iter().map(|r| r.get().to_string()).collect()
    };
    let (before, after) = (raws(input), raws(output));
    let plain = |m: &str| {
        let m = m.to_ascii_lowercase();
        !["tool", "function", "call", "result"]
            .iter()
            .any(|w| m.contains(w))
    };
    for a in after.iter().filter(|a| plain(a)) {
        let av: Value = serde_json::from_str(a).unwrap();
        let same_value = before
            .iter()
            .any(|b| serde_json::from_str::<Value>(b).unwrap() == av);
        if same_value && !before.iter().any(|b| b == a) {
            return Some(format!("rewritten though unchanged: {a}"));
        }
    }
    None
}

fn check(dialect: Dialect, make: fn(&mut Rng) -> Value, cases: usize) {
    check_for(dialect, None, make, cases)
}

/// [`check`] for a request whose path names `model` (Bedrock Converse's
/// rules differ by model).
fn check_for(dialect: Dialect, model: Option<&str>, make: fn(&mut Rng) -> Value, cases: usize) {
    let target = toolwarden_wire::Target::of_path(dialect, model);
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    for _ in 0..cases {
        // Pretty-printed, with an escaped letter in every text, so that a
        // message rewritten though unchanged shows.
        let body = serde_json::to_string_pretty(&make(&mut r))
            .unwrap()
            .replace("\"hi\"", "\"h\\u0069\"")
            .into_bytes();
        let repaired = match toolwarden_wire::repair(target, &body) {
            Ok(rep) => rep,
            Err(e) => {
                failures.push(format!("error {e}: {}", String::from_utf8_lossy(&body)));
                continue;
            }
        };
        if let Some(problem) = unfaithful(dialect, &body, &repaired.body) {
            failures.push(format!(
                "{problem}\n  in:  {}\n  out: {}",
                String::from_utf8_lossy(&body),
                String::from_utf8_lossy(&repaired.body)
            ));
        }
        if let Some(problem) = violation(dialect, model, &repaired.body) {
            failures.push(format!(
                "{problem}\n  in:  {}\n  out: {}",
                String::from_utf8_lossy(&body),
                String::from_utf8_lossy(&repaired.body)
            ));
        }
    }
    failures.sort_by_key(String::len);
    assert!(
        failures.is_empty(),
        "{dialect}: {} of {cases} repaired bodies refused; shortest:\n{}",
        failures.len(),
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn random_anthropic_bodies_are_repaired_into_accepted_ones() {
    check(Dialect::Anthropic, anthropic, 5_000);
}

#[test]
fn random_chat_bodies_are_repaired_into_accepted_ones() {
    check(Dialect::OpenAiChat, chat, 5_000);
}

#[test]
fn random_responses_bodies_are_repaired_into_accepted_ones() {
    check(Dialect::OpenAiResponses, responses, 5_000);
}

#[test]
fn random_gemini_bodies_are_repaired_into_accepted_ones() {
    check(Dialect::Gemini, gemini, 5_000);
}

#[test]
fn random_converse_bodies_are_repaired_into_accepted_ones() {
    check(Dialect::BedrockConverse, converse, 5_000);
}

#[test]
fn random_converse_bodies_to_claude_are_repaired_into_accepted_ones() {
    let claude = "us.anthropic.claude-sonnet-4-20250514-v1:0";
    check_for(Dialect::BedrockConverse, Some(claude), converse, 5_000);
}
