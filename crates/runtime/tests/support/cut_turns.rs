//! Turns with two `write` calls, in every dialect, as a whole body and as
//! a stream, ended by the model or cut by the provider (`Stop`): what the
//! cut suites (token_limit.rs, stop_cuts.rs) step.

#![allow(dead_code)]

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use serde_json::{Value, json};
use toolwarden_runtime::{BoxError, Executor, Registry, tool_fn};
use toolwarden_wire::{Dialect, StreamParser, eventstream};

pub const DIALECTS: [Dialect; 5] = [
    Dialect::Anthropic,
    Dialect::OpenAiChat,
    Dialect::OpenAiResponses,
    Dialect::Gemini,
    Dialect::BedrockConverse,
];

/// The whole call's arguments, and what the limit left of the last one.
pub const WHOLE: &str = r#"{"path":"a.txt","text":"hello"}"#;
pub const CUT: &str = r#"{"path":"b.txt","te"#;

/// A `write` tool that takes any object and counts its runs.
pub fn executor() -> (Executor, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let registry = Registry::new();
    registry
        .register(tool_fn(
            "write",
            "Write a file.",
            json!({"type": "object"}),
            move |_args: Value, _ctx| {
                counted.fetch_add(1, Ordering::SeqCst);
                async { Ok::<_, BoxError>(json!("written")) }
            },
        ))
        .unwrap();
    (Executor::new(Arc::new(registry)), runs)
}

/// How a turn ended, in each dialect's own words.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    pub anthropic: &'static str,
    pub chat: &'static str,
    /// `incomplete_details.reason` (the status `incomplete`), or `None`
    /// for a `completed` response.
    pub responses: Option<&'static str>,
    pub gemini: &'static str,
    pub bedrock: &'static str,
}

/// A turn the model ended with its calls.
pub const CALLS: Stop = Stop {
    anthropic: "tool_use",
    chat: "tool_calls",
    responses: None,
    gemini: "STOP",
    bedrock: "tool_use",
};

/// A turn the output token limit stopped.
pub const TOKEN_LIMIT: Stop = Stop {
    anthropic: "max_tokens",
    chat: "length",
    responses: Some("max_output_tokens"),
    gemini: "MAX_TOKENS",
    bedrock: "max_tokens",
};

/// A turn a content filter, the model's safety classifiers or a
/// guardrail stopped.
pub const FILTERED: Stop = Stop {
    anthropic: "refusal",
    chat: "content_filter",
    responses: Some("content_filter"),
    gemini: "SAFETY",
    bedrock: "guardrail_intervened",
};

impl Stop {
    fn reason(self, dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::Anthropic => self.anthropic,
            Dialect::OpenAiChat => self.chat,
            Dialect::OpenAiResponses => self.responses.map_or("completed", |_| "incomplete"),
            Dialect::Gemini => self.gemini,
            Dialect::BedrockConverse => self.bedrock,
        }
    }

    fn incomplete_details(self) -> Value {
        self.responses
            .map_or(Value::Null, |reason| json!({"reason": reason}))
    }
}

/// A whole body with a text, one whole `write` call and a last one whose
/// arguments are `last` (Gemini's calls come whole: `last` parsed, or an
/// empty object), ended as `stop` says. A Responses call the turn's cut
/// may have touched is `incomplete`.
pub fn body(dialect: Dialect, last: &str, stop: Stop) -> Vec<u8> {
    let reason = stop.reason(dialect);
    let parsed = |args: &str| serde_json::from_str(args).unwrap_or_else(|_| json!({}));
    let body = match dialect {
        Dialect::Anthropic => json!({"id": "msg_1", "type": "message", "role": "assistant",
            "stop_reason": reason, "content": [
                {"type": "text", "text": "Writing."},
                {"type": "tool_use", "id": "toolu_0", "name": "write", "input": parsed(WHOLE)},
                {"type": "tool_use", "id": "toolu_1", "name": "write", "input": parsed(last)}]}),
        Dialect::OpenAiChat => json!({"id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": reason,
                "message": {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "write", "arguments": WHOLE}},
                    {"id": "call_1", "type": "function", "function": {"name": "write", "arguments": last}}]}}]}),
        Dialect::OpenAiResponses => json!({"id": "resp_1", "object": "response",
            "status": reason, "incomplete_details": stop.incomplete_details(),
            "output": [
                {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": "write",
                    "arguments": WHOLE, "status": "completed"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write",
                    "arguments": last, "status": if stop.responses.is_some() { "incomplete" } else { "completed" }}]}),
        Dialect::Gemini => {
            json!({"candidates": [{"finishReason": reason,
            "content": {"role": "model", "parts": [
                {"functionCall": {"name": "write", "args": parsed(WHOLE)}},
                {"functionCall": {"name": "write", "args": parsed(last)}}]}}]})
        }
        Dialect::BedrockConverse => json!({"stopReason": reason,
            "output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_0", "name": "write", "input": parsed(WHOLE)}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "write", "input": parsed(last)}}]}}}),
    };
    serde_json::to_vec(&body).unwrap()
}

/// The same turn streamed: the last call's arguments arrive as `CUT` (no
/// Responses `output_item.done` for it), and the stream ends as `stop`
/// says.
pub fn stream(dialect: Dialect, stop: Stop) -> StreamParser {
    let reason = stop.reason(dialect);
    let sse = |events: Vec<(&str, Value)>| -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in events {
            if !name.is_empty() {
                out.extend(format!("event: {name}\n").into_bytes());
            }
            out.extend(format!("data: {data}\n\n").into_bytes());
        }
        out
    };
    let bytes = match dialect {
        Dialect::Anthropic => {
            let start = |i: usize| {
                json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": format!("toolu_{i}"), "name": "write", "input": {}}})
            };
            let delta = |i: usize, part: &str| {
                json!({"type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta", "partial_json": part}})
            };
            sse(vec![
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "msg_1",
                    "type": "message", "role": "assistant", "content": [], "stop_reason": null}}),
                ),
                ("content_block_start", start(0)),
                ("content_block_delta", delta(0, WHOLE)),
                (
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                ("content_block_start", start(1)),
                ("content_block_delta", delta(1, CUT)),
                // The API closes the block the limit cut as well: its
                // `content_block_stop` does not say the call is whole.
                (
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 1}),
                ),
                (
                    "message_delta",
                    json!({"type": "message_delta",
                    "delta": {"stop_reason": reason}, "usage": {"output_tokens": 64}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ])
        }
        Dialect::OpenAiChat => {
            let chunk = |delta: Value, finish: Value| {
                json!({"id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let call = |i: usize, args: &str| {
                json!({"tool_calls": [{"index": i,
                "id": format!("call_{i}"), "type": "function",
                "function": {"name": "write", "arguments": args}}]})
            };
            let mut out = sse(vec![
                ("", chunk(call(0, WHOLE), Value::Null)),
                ("", chunk(call(1, CUT), Value::Null)),
                ("", chunk(json!({}), json!(reason))),
            ]);
            out.extend(b"data: [DONE]\n\n");
            out
        }
        Dialect::OpenAiResponses => {
            let item = |i: usize, args: &str, status: &str| {
                json!({"type": "function_call",
                "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": "write",
                "arguments": args, "status": status})
            };
            sse(vec![
                (
                    "response.output_item.added",
                    json!({"type": "response.output_item.added",
                    "output_index": 0, "item": item(0, "", "in_progress")}),
                ),
                (
                    "response.output_item.done",
                    json!({"type": "response.output_item.done",
                    "output_index": 0, "item": item(0, WHOLE, "completed")}),
                ),
                (
                    "response.output_item.added",
                    json!({"type": "response.output_item.added",
                    "output_index": 1, "item": item(1, "", "in_progress")}),
                ),
                (
                    "response.function_call_arguments.delta",
                    json!({
                    "type": "response.function_call_arguments.delta",
                    "item_id": "fc_1", "output_index": 1, "delta": CUT}),
                ),
                (
                    if stop.responses.is_some() {
                        "response.incomplete"
                    } else {
                        "response.completed"
                    },
                    json!({"type": if stop.responses.is_some() { "response.incomplete" } else { "response.completed" },
                    "response": {
                    "id": "resp_1", "object": "response", "status": reason,
                    "incomplete_details": stop.incomplete_details(),
                    "output": [item(0, WHOLE, "completed"), item(1, CUT, "incomplete")]}}),
                ),
            ])
        }
        Dialect::Gemini => sse(vec![
            (
                "",
                json!({"candidates": [{"content": {"role": "model",
                "parts": [{"functionCall": {"name": "write", "args": serde_json::from_str::<Value>(WHOLE).unwrap()}}]}}]}),
            ),
            (
                "",
                json!({"candidates": [{"finishReason": reason, "content": {"role": "model",
                "parts": [{"functionCall": {"name": "write", "args": {"path": "b.txt"}}}]}}]}),
            ),
        ]),
        Dialect::BedrockConverse => {
            let events = [
                ("messageStart", json!({"role": "assistant"})),
                (
                    "contentBlockStart",
                    json!({"contentBlockIndex": 0,
                    "start": {"toolUse": {"toolUseId": "tooluse_0", "name": "write"}}}),
                ),
                (
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 0,
                    "delta": {"toolUse": {"input": WHOLE}}}),
                ),
                ("contentBlockStop", json!({"contentBlockIndex": 0})),
                (
                    "contentBlockStart",
                    json!({"contentBlockIndex": 1,
                    "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "write"}}}),
                ),
                (
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 1,
                    "delta": {"toolUse": {"input": CUT}}}),
                ),
                ("contentBlockStop", json!({"contentBlockIndex": 1})),
                ("messageStop", json!({"stopReason": reason})),
            ];
            events
                .iter()
                .flat_map(|(name, data)| {
                    eventstream::encode_event(name, data.to_string().as_bytes())
                })
                .collect()
        }
    };
    let mut parser = StreamParser::new(dialect);
    for piece in bytes.chunks(7) {
        parser.feed(piece);
    }
    parser
}

/// Server-sent events, each `(event name, data)`.
pub fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in events {
        if !name.is_empty() {
            out.extend(format!("event: {name}\n").into_bytes());
        }
        out.extend(format!("data: {data}\n\n").into_bytes());
    }
    out
}

/// A parser of `dialect` fed `bytes` in small pieces.
pub fn fed(dialect: Dialect, bytes: &[u8]) -> StreamParser {
    let mut parser = StreamParser::new(dialect);
    for piece in bytes.chunks(7) {
        parser.feed(piece);
    }
    parser
}
