//! A property of `step` in every dialect: whatever mix of outcomes a turn's
//! calls get (success, an empty output, a failure, a panic, an error
//! without a message, an unknown tool, arguments that break the schema or
//! are not JSON), the result messages answer each call once, the
//! conversation with them appended validates clean, and each result reads
//! back with the right failure flag.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolwarden_runtime::{
    BoxError, Context, Executor, Registry, RetryPolicy, ToolError, ToolPolicy, tool_fn,
};
use toolwarden_wire::{Detector, Dialect};

#[path = "support/next_request.rs"]
mod next_request;
use next_request::next_request;

/// What the call asks of the tool; `Unknown` calls a tool that does not
/// exist, `Invalid` breaks the schema, `Malformed` sends text that is not
/// JSON where the dialect carries arguments as text (else it breaks the
/// schema).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Ok,
    Empty,
    Fail,
    Panic,
    Blank,
    Unknown,
    Invalid,
    Malformed,
}

const MODES: [Mode; 8] = [
    Mode::Ok,
    Mode::Empty,
    Mode::Fail,
    Mode::Panic,
    Mode::Blank,
    Mode::Unknown,
    Mode::Invalid,
    Mode::Malformed,
];

fn executor() -> Executor {
    let schema = json!({
        "type": "object",
        "properties": {"mode": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["mode"]
    });
    let tool = tool_fn(
        "t",
        "A scripted tool.",
        schema,
        |args: Value, _c| async move {
            match args["mode"].as_str() {
                Some("ok") => Ok(json!({"n": args["n"]})),
                Some("empty") => Ok(json!("")),
                Some("fail") => Err(BoxError::from(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "reset",
                ))),
                Some("panic") => panic!("told to panic"),
                _ => Err(ToolError::invalid_arguments("").into()),
            }
        },
    );
    let r = Registry::new();
    r.register_with(
        tool,
        ToolPolicy::new().retry(RetryPolicy::none()).no_breaker(),
    )
    .unwrap();
    Executor::new(Arc::new(r))
}

/// The name and arguments (as JSON, or as text when not JSON) of call `i`.
fn call_of(mode: Mode, i: usize, text_args: bool) -> (&'static str, Result<Value, &'static str>) {
    let args = |m: &str| Ok(json!({"mode": m, "n": i}));
    match mode {
        Mode::Ok => ("t", args("ok")),
        Mode::Empty => ("t", args("empty")),
        Mode::Fail => ("t", args("fail")),
        Mode::Panic => ("t", args("panic")),
        Mode::Blank => ("t", args("blank")),
        Mode::Unknown => ("nope", args("ok")),
        Mode::Malformed if text_args => ("t", Err("{\"mode\": ")),
        Mode::Invalid | Mode::Malformed => ("t", Ok(json!({"mode": 5, "n": i}))),
    }
}

fn text(args: &Result<Value, &str>) -> String {
    match args {
        Ok(v) => v.to_string(),
        Err(raw) => raw.to_string(),
    }
}

fn response(dialect: Dialect, modes: &[Mode]) -> Value {
    let text_args = matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses);
    let calls: Vec<_> = (modes.iter().enumerate())
        .map(|(i, m)| call_of(*m, i, text_args))
        .collect();
    let obj = |a: &Result<Value, &str>| a.clone().unwrap_or_else(|_| json!({}));
    match dialect {
        Dialect::OpenAiChat => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": calls.iter().enumerate().map(|(i, (n, a))| json!({
                    "id": format!("call_{i}"), "type": "function",
                    "function": {"name": n, "arguments": text(a)}
                })).collect::<Vec<_>>()
            }}]
        }),
        Dialect::OpenAiResponses => json!({
            "id": "resp_1", "object": "response", "model": "gpt-4.1", "status": "completed",
            "output": calls.iter().enumerate().map(|(i, (n, a))| json!({
                "type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"),
                "name": n, "arguments": text(a), "status": "completed"
            })).collect::<Vec<_>>()
        }),
        Dialect::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "stop_reason": "tool_use",
            "content": calls.iter().enumerate().map(|(i, (n, a))| json!({
                "type": "tool_use", "id": format!("toolu_{i}"), "name": n, "input": obj(a)
            })).collect::<Vec<_>>()
        }),
        Dialect::Gemini => json!({
            "candidates": [{"finishReason": "STOP", "content": {"role": "model",
                "parts": calls.iter().map(|(n, a)| json!({"functionCall": {"name": n, "args": obj(a)}}))
                    .collect::<Vec<_>>()
            }}]
        }),
        Dialect::BedrockConverse => json!({
            "output": {"message": {"role": "assistant",
                "content": calls.iter().enumerate().map(|(i, (n, a))| json!({"toolUse": {
                    "toolUseId": format!("tooluse_{i}"), "name": n, "input": obj(a)
                }})).collect::<Vec<_>>()
            }},
            "stopReason": "tool_use"
        }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_call_is_answered_once_in_a_conversation_that_validates(
        picks in proptest::collection::vec(0..MODES.len(), 1..8),
    ) {
        let modes: Vec<Mode> = picks.iter().map(|&i| MODES[i]).collect();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        for dialect in Dialect::ALL {
            let resp = response(dialect, &modes);
            let body = serde_json::to_vec(&resp).unwrap();
            let step = rt
                .block_on(executor().step(dialect, &body, &Context::new()))
                .unwrap();
            prop_assert_eq!(step.outcomes.len(), modes.len(), "{}", dialect);
            for (o, c) in step.outcomes.iter().zip(&step.calls) {
                prop_assert_eq!(&o.call_id, &c.id);
            }
            let failed: Vec<bool> = modes.iter().map(|m| !matches!(m, Mode::Ok | Mode::Empty)).collect();
            let got: Vec<bool> = step.outcomes.iter().map(|o| o.is_failure()).collect();
            prop_assert_eq!(&got, &failed, "{}", dialect);

            let request = serde_json::to_vec(&next_request(dialect, &resp, &step.messages)).unwrap();
            let defects = toolwarden_wire::validate(dialect, &request).unwrap();
            prop_assert!(defects.is_empty(), "{}: {:?}", dialect, defects);
            let view = toolwarden_wire::request_view(dialect, &request).unwrap();
            prop_assert_eq!(view.results.len(), modes.len(), "{}", dialect);
            for (i, r) in view.results.iter().enumerate() {
                let read = r.read(&Detector::default()).unwrap();
                prop_assert_eq!(read.verdict.failed, failed[i], "{} result {}: {:?}", dialect, i, read.text);
                // Anthropic refuses an error result with empty content.
                if dialect == Dialect::Anthropic && failed[i] {
                    prop_assert!(!read.text.trim().is_empty(), "result {}", i);
                }
            }
        }
    }
}
