//! The default, deterministic reply: what the mock "model" says to a
//! request.
//!
//! If the request's last message carries tool results, the model answers
//! with text; otherwise it calls tools named in the request's `tools` (or
//! [`crate::MockOptions::default_tool`]). Ids derive from a hash of the
//! request body, so the same request always gets the same bytes back (a
//! direct and a proxied request can be compared byte for byte) and each turn
//! of a conversation gets fresh ids.

use serde_json::Value;
use toolwarden_wire::Dialect;

/// What the mock model answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub model: String,
    /// FNV-1a of the request body: the seed of every id.
    pub seed: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Text said before the calls (or the whole answer when no calls).
    pub text: Option<String>,
    pub calls: Vec<PlannedCall>,
    /// Gemini: give each `functionCall` an `id` (the API usually does not).
    pub gemini_ids: bool,
    /// Chat: the request's `stream_options.include_usage` is `true`, so a
    /// stream ends with a usage chunk and every other chunk says
    /// `"usage": null` (without it no chunk has usage, as the API streams).
    pub stream_usage: bool,
    /// Responses: a reasoning model's reply starts its calls with a
    /// `reasoning` item, as the real ones do (see [`crate::rules::reasoning`]).
    pub reasoning: Option<Reasoning>,
    /// How many deltas each call's arguments are streamed in
    /// ([`MockOptions::arg_pieces`]).
    ///
    /// [`MockOptions::arg_pieces`]: crate::MockOptions::arg_pieces
    pub arg_pieces: usize,
    /// Zeros after the response id's prefix ([`MockOptions::response_id_pad`]).
    ///
    /// [`MockOptions::response_id_pad`]: crate::MockOptions::response_id_pad
    pub response_id_pad: usize,
}

/// The `reasoning` item a Responses reply puts before its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reasoning {
    /// The request's `include` asks for `reasoning.encrypted_content` (a
    /// `store: false` client keeps its reasoning that way).
    pub encrypted: bool,
}

/// One tool call the mock model makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedCall {
    pub name: String,
    /// The arguments as JSON object text (a custom tool's: its raw input;
    /// a built-in tool's: its `action` or `operation` object).
    pub arguments: String,
    /// The Responses item the call is (other dialects: always a function
    /// call, whatever this says).
    pub kind: CallKind,
}

/// What a Responses call is: a function call, a custom (freeform) tool's,
/// or one of the built-in tools the client runs, which a request declares
/// by `type` alone (`{"type":"shell"}`) and whose calls carry no name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// `function_call`: `arguments` is JSON text.
    Function,
    /// `custom_tool_call`: `input` is the raw text.
    Custom,
    /// `shell_call`: `action` is `{"commands": […], "timeout_ms": …, …}`.
    Shell,
    /// `apply_patch_call`: `operation` is `{"type": "create_file" |
    /// "update_file" | "delete_file", "path": …, "diff": …}`.
    ApplyPatch,
    /// `local_shell_call`: `action` is `{"type": "exec", "command": […], …}`.
    LocalShell,
    /// `computer_call`: `action` is `{"type": "click", …}` and the like.
    Computer,
}

impl CallKind {
    /// The built-in tool a request offers as `tools[] = {"type": TYPE}` that
    /// a script's step names `name` (`None`: not a built-in tool's name).
    pub(crate) fn builtin(name: &str) -> Option<CallKind> {
        Some(match name {
            "shell" => CallKind::Shell,
            "apply_patch" => CallKind::ApplyPatch,
            "local_shell" => CallKind::LocalShell,
            "computer" => CallKind::Computer,
            _ => return None,
        })
    }

    /// The `type`s of the tool declarations that offer this built-in tool.
    pub(crate) fn tool_types(self) -> &'static [&'static str] {
        match self {
            CallKind::Function | CallKind::Custom => &[],
            CallKind::Shell => &["shell"],
            CallKind::ApplyPatch => &["apply_patch"],
            CallKind::LocalShell => &["local_shell"],
            CallKind::Computer => &["computer", "computer_use_preview"],
        }
    }

    /// The call item's `type`.
    pub(crate) fn item_type(self) -> &'static str {
        match self {
            CallKind::Function => "function_call",
            CallKind::Custom => "custom_tool_call",
            CallKind::Shell => "shell_call",
            CallKind::ApplyPatch => "apply_patch_call",
            CallKind::LocalShell => "local_shell_call",
            CallKind::Computer => "computer_call",
        }
    }

    /// The prefix of the call item's `id`, as the API's.
    pub(crate) fn id_prefix(self) -> &'static str {
        match self {
            CallKind::Function => "fc_",
            CallKind::Custom => "ctc_",
            CallKind::Shell => "sh_",
            CallKind::ApplyPatch => "apc_",
            CallKind::LocalShell => "lsh_",
            CallKind::Computer => "cu_",
        }
    }

    /// As the agent log names it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CallKind::Function => "function",
            CallKind::Custom => "custom",
            CallKind::Shell => "shell",
            CallKind::ApplyPatch => "apply_patch",
            CallKind::LocalShell => "local_shell",
            CallKind::Computer => "computer",
        }
    }
}

impl Plan {
    /// Call id `i` with the dialect's prefix (`toolu_`, `call_`).
    pub(crate) fn call_id(&self, prefix: &str, i: usize) -> String {
        format!("{prefix}{:016x}{i:02}", self.seed)
    }

    /// The item id of Responses call `i` (`fc_`, `ctc_`, `sh_`, … by its
    /// kind): one naming its reasoning item when the reply reasoned first.
    pub(crate) fn call_item_id(&self, i: usize) -> String {
        let prefix = self
            .calls
            .get(i)
            .map_or(CallKind::Function, |c| c.kind)
            .id_prefix();
        match self.reasoning {
            Some(_) => crate::rules::reasoning::call_item_id(prefix, self.seed, i),
            None => self.call_id(prefix, i),
        }
    }

    /// The response id with the dialect's prefix (`msg_`, `chatcmpl-`, `resp_`).
    pub(crate) fn response_id(&self, prefix: &str) -> String {
        let pad = "0".repeat(self.response_id_pad);
        format!("{prefix}{pad}mock{:016x}", self.seed)
    }
}

/// Plan the reply to `body` (already known to be valid JSON for `dialect`).
/// `model_from_path` is Gemini's model; `calls` how many calls to make when
/// calling tools.
pub(crate) fn plan(
    dialect: Dialect,
    body: &[u8],
    model_from_path: Option<&str>,
    default_tool: &str,
    calls: usize,
) -> Plan {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let model = model_from_path
        .map(str::to_string)
        .or_else(|| v.get("model").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "mock-model".to_string());
    let seed = fnv1a(body);
    let input_tokens = (body.len() as u64 / 4).max(1);
    let answered = last_turn_has_results(dialect, &v);
    if answered {
        return Plan {
            model,
            seed,
            input_tokens,
            output_tokens: 12,
            text: Some(format!(
                "Thanks, I have the tool results (request {seed:016x}). Here is my answer."
            )),
            calls: Vec::new(),
            gemini_ids: false,
            stream_usage: stream_usage(&v),
            reasoning: None,
            response_id_pad: 0,
            arg_pieces: 2,
        };
    }
    let tools = tool_names(dialect, &v);
    let n = calls.max(1);
    let planned = (0..n)
        .map(|i| {
            let name = if tools.is_empty() {
                default_tool.to_string()
            } else {
                tools[i % tools.len()].clone()
            };
            PlannedCall {
                name,
                arguments: arguments(seed, i),
                kind: CallKind::Function,
            }
        })
        .collect();
    Plan {
        stream_usage: stream_usage(&v),
        reasoning: reasoning(dialect, &v, &model),
        model,
        seed,
        input_tokens,
        output_tokens: 20 * n as u64,
        text: Some("Let me call a tool for that.".to_string()),
        calls: planned,
        gemini_ids: false,
        response_id_pad: 0,
        arg_pieces: 2,
    }
}

/// The arguments of call `i`: what real models write and a parser can
/// trip on — a nested object, escaped quotes and backslashes, a newline,
/// non-ASCII text and an emoji, and `"tool_calls"` inside a string.
fn arguments(seed: u64, i: usize) -> String {
    serde_json::json!({
        "query": format!("q{seed:08x}-{i}"),
        "n": i,
        "filter": {
            "tags": ["a\"b", "c\\d"],
            "note": "line 1\nline 2: café 🌍, not \"tool_calls\":[]",
        },
    })
    .to_string()
}

/// `stream_options.include_usage: true` (Chat's opt-in to stream usage).
pub(crate) fn stream_usage(v: &Value) -> bool {
    v.get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The reasoning item a Responses reply to `v` from `model` starts with.
pub(crate) fn reasoning(dialect: Dialect, v: &Value, model: &str) -> Option<Reasoning> {
    if dialect != Dialect::OpenAiResponses || !crate::rules::reasoning::is_reasoning_model(model) {
        return None;
    }
    let encrypted = v
        .get("include")
        .and_then(Value::as_array)
        .is_some_and(|inc| inc.iter().any(|i| i == "reasoning.encrypted_content"));
    Some(Reasoning { encrypted })
}

/// Whether the last message (item, content) is tool output.
fn last_turn_has_results(dialect: Dialect, v: &Value) -> bool {
    match dialect {
        Dialect::Anthropic => v
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .is_some_and(|blocks| {
                blocks.iter().any(|b| {
                    b.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t == "tool_result" || t.ends_with("_tool_result"))
                })
            }),
        Dialect::OpenAiChat => v
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            .is_some_and(|r| r == "tool" || r == "function"),
        Dialect::OpenAiResponses => v
            .get("input")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with("_call_output")),
        Dialect::Gemini => v
            .get("contents")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("parts"))
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some())),
        Dialect::BedrockConverse => v
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .is_some_and(|blocks| blocks.iter().any(|b| b.get("toolResult").is_some())),
    }
}

/// Bedrock Converse declares tools in `toolConfig.tools[].toolSpec`.
pub(crate) fn converse_tool_names(v: &Value) -> Vec<String> {
    v.get("toolConfig")
        .and_then(|c| c.get("tools"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("toolSpec")?.get("name")?.as_str().map(str::to_string))
        .collect()
}

/// The function tools the request offers, in order.
fn tool_names(dialect: Dialect, v: &Value) -> Vec<String> {
    if dialect == Dialect::BedrockConverse {
        return converse_tool_names(v);
    }
    let Some(tools) = v.get("tools").and_then(Value::as_array) else {
        return legacy_functions(v);
    };
    let name = |t: &Value, path: &[&str]| {
        let mut cur = t;
        for p in path {
            cur = cur.get(*p)?;
        }
        cur.as_str().map(str::to_string)
    };
    match dialect {
        Dialect::Gemini => tools
            .iter()
            .filter_map(|t| {
                // The API takes either case (LiteLLM sends snake_case).
                t.get("functionDeclarations")
                    .or_else(|| t.get("function_declarations"))
                    .and_then(Value::as_array)
            })
            .flatten()
            .filter_map(|d| name(d, &["name"]))
            .collect(),
        Dialect::OpenAiChat => tools
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
            .filter_map(|t| name(t, &["function", "name"]))
            .collect(),
        Dialect::OpenAiResponses => tools
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
            .filter_map(|t| name(t, &["name"]))
            .collect(),
        Dialect::Anthropic => tools
            .iter()
            // Client tools have no `type` or `type: "custom"`; server tools
            // (web_search_…) are run by the provider itself.
            .filter(|t| {
                t.get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|ty| ty == "custom")
            })
            .filter_map(|t| name(t, &["name"]))
            .collect(),
        Dialect::BedrockConverse => converse_tool_names(v),
    }
}

fn legacy_functions(v: &Value) -> Vec<String> {
    v.get("functions")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f.get("name").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// 64-bit FNV-1a.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_the_offered_tool_then_answers_with_text() {
        let first = br#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],
            "tools":[{"type":"function","function":{"name":"lookup"}},{"type":"function","function":{"name":"book"}}]}"#;
        let p = plan(Dialect::OpenAiChat, first, None, "get_weather", 3);
        assert_eq!(p.model, "gpt-4o");
        let names: Vec<_> = p.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lookup", "book", "lookup"]);
        assert_eq!(p, plan(Dialect::OpenAiChat, first, None, "get_weather", 3));
        let second = br#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"},
            {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"ok"}]}"#;
        let p2 = plan(Dialect::OpenAiChat, second, None, "get_weather", 3);
        assert!(p2.calls.is_empty());
        assert!(p2.text.is_some());
        assert_ne!(p.call_id("call_", 0), p2.call_id("call_", 0));
    }

    #[test]
    fn default_tool_and_other_dialects() {
        let a = br#"{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]}"#;
        assert!(plan(Dialect::Anthropic, a, None, "d", 1).calls.is_empty());
        let a2 = br#"{"model":"claude","messages":[{"role":"user","content":"go"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}"#;
        assert_eq!(
            plan(Dialect::Anthropic, a2, None, "d", 1).calls[0].name,
            "d"
        );
        let g = br#"{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"gf"}]}]}"#;
        let p = plan(Dialect::Gemini, g, Some("gemini-2.0-flash"), "d", 1);
        assert_eq!(
            (p.model.as_str(), p.calls[0].name.as_str()),
            ("gemini-2.0-flash", "gf")
        );
        let r = br#"{"model":"gpt-5","input":[{"type":"function_call_output","call_id":"c","output":"x"}],"previous_response_id":"resp_1"}"#;
        assert!(
            plan(Dialect::OpenAiResponses, r, None, "d", 1)
                .calls
                .is_empty()
        );
        let args: Value = serde_json::from_str(&p.calls[0].arguments).unwrap();
        assert!(args.is_object());
    }

    #[test]
    fn reasoning_models_reason_in_the_responses_api_only() {
        let r = br#"{"model":"o3","input":"hi","include":["reasoning.encrypted_content"]}"#;
        let p = plan(Dialect::OpenAiResponses, r, None, "d", 1);
        assert_eq!(p.reasoning, Some(Reasoning { encrypted: true }));
        assert!(p.call_item_id(0).ends_with("r00"), "{}", p.call_item_id(0));
        let plain = br#"{"model":"gpt-4.1","input":"hi"}"#;
        let p = plan(Dialect::OpenAiResponses, plain, None, "d", 1);
        assert_eq!(p.reasoning, None);
        assert_eq!(p.call_item_id(0), p.call_id("fc_", 0));
        let chat = br#"{"model":"o3","messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(
            plan(Dialect::OpenAiChat, chat, None, "d", 1).reasoning,
            None
        );
    }

    #[test]
    fn chat_stream_usage_is_opt_in() {
        let asked = br#"{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[]}"#;
        assert!(plan(Dialect::OpenAiChat, asked, None, "d", 1).stream_usage);
        let not = br#"{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":false},"messages":[]}"#;
        assert!(!plan(Dialect::OpenAiChat, not, None, "d", 1).stream_usage);
        let silent = br#"{"model":"gpt-4o","stream":true,"messages":[]}"#;
        assert!(!plan(Dialect::OpenAiChat, silent, None, "d", 1).stream_usage);
    }
}
