//! A turn the model's output token limit cut (Anthropic and Bedrock
//! `max_tokens`, Chat `length`, Responses `incomplete` for
//! `max_output_tokens`, Gemini `MAX_TOKENS`): `step` and `step_stream`
//! say so (`StepResult::hit_token_limit`), run the calls written whole
//! before the cut, and answer the last call, whose arguments the limit
//! may have cut, with an error instead of running it.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use serde_json::{Value, json};
use toolwarden_runtime::{BoxError, Context, Executor, Registry, StepResult, tool_fn};
use toolwarden_wire::{Dialect, StreamParser, eventstream};

const DIALECTS: [Dialect; 5] = [
    Dialect::Anthropic,
    Dialect::OpenAiChat,
    Dialect::OpenAiResponses,
    Dialect::Gemini,
    Dialect::BedrockConverse,
];

/// The whole call's arguments, and what the limit left of the last one.
const WHOLE: &str = r#"{"path":"a.txt","text":"hello"}"#;
const CUT: &str = r#"{"path":"b.txt","te"#;

/// A `write` tool that takes any object and counts its runs.
fn executor() -> (Executor, Arc<AtomicUsize>) {
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

/// The dialect's own token-limit stop.
fn limit_stop(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic | Dialect::BedrockConverse => "max_tokens",
        Dialect::OpenAiChat => "length",
        Dialect::OpenAiResponses => "incomplete",
        Dialect::Gemini => "MAX_TOKENS",
    }
}

/// A whole body with a text, one whole `write` call and a last one whose
/// arguments are `last` (Gemini's calls come whole: `last` parsed, or an
/// empty object), stopped by the token limit when `cut`.
fn body(dialect: Dialect, last: &str, cut: bool) -> Vec<u8> {
    let stop = if cut { limit_stop(dialect) } else { "tool_use" };
    let parsed = |args: &str| serde_json::from_str(args).unwrap_or_else(|_| json!({}));
    let body = match dialect {
        Dialect::Anthropic => json!({"id": "msg_1", "type": "message", "role": "assistant",
            "stop_reason": stop, "content": [
                {"type": "text", "text": "Writing."},
                {"type": "tool_use", "id": "toolu_0", "name": "write", "input": parsed(WHOLE)},
                {"type": "tool_use", "id": "toolu_1", "name": "write", "input": parsed(last)}]}),
        Dialect::OpenAiChat => json!({"id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": if cut { "length" } else { "tool_calls" },
                "message": {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "write", "arguments": WHOLE}},
                    {"id": "call_1", "type": "function", "function": {"name": "write", "arguments": last}}]}}]}),
        Dialect::OpenAiResponses => json!({"id": "resp_1", "object": "response",
            "status": if cut { "incomplete" } else { "completed" },
            "incomplete_details": if cut { json!({"reason": "max_output_tokens"}) } else { Value::Null },
            "output": [
                {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": "write",
                    "arguments": WHOLE, "status": "completed"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write",
                    "arguments": last, "status": if cut { "incomplete" } else { "completed" }}]}),
        Dialect::Gemini => {
            json!({"candidates": [{"finishReason": if cut { "MAX_TOKENS" } else { "STOP" },
            "content": {"role": "model", "parts": [
                {"functionCall": {"name": "write", "args": parsed(WHOLE)}},
                {"functionCall": {"name": "write", "args": parsed(last)}}]}}]})
        }
        Dialect::BedrockConverse => json!({"stopReason": stop,
            "output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_0", "name": "write", "input": parsed(WHOLE)}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "write", "input": parsed(last)}}]}}}),
    };
    serde_json::to_vec(&body).unwrap()
}

/// The same turn streamed: the last call's arguments arrive as `CUT`, and
/// the stream ends as the dialect ends a turn the token limit stopped.
fn stream(dialect: Dialect) -> StreamParser {
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
                // No `content_block_stop`: the limit fell inside the block.
                (
                    "message_delta",
                    json!({"type": "message_delta",
                    "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 64}}),
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
                ("", chunk(json!({}), json!("length"))),
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
                    "response.incomplete",
                    json!({"type": "response.incomplete", "response": {
                    "id": "resp_1", "object": "response", "status": "incomplete",
                    "incomplete_details": {"reason": "max_output_tokens"},
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
                json!({"candidates": [{"finishReason": "MAX_TOKENS", "content": {"role": "model",
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
                ("messageStop", json!({"stopReason": "max_tokens"})),
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

/// The step ran the whole call, and answered the last one, unrun, with an
/// error that tells the model why.
fn assert_last_call_answered_not_run(
    ex: &Executor,
    step: &StepResult,
    runs: &AtomicUsize,
    at: &str,
) {
    assert!(step.hit_token_limit, "{at}");
    assert_eq!(step.calls.len(), 2, "{at}");
    assert_eq!(step.outcomes.len(), 2, "{at}");
    assert!(!step.messages.is_empty(), "{at}");
    assert!(
        step.outcomes[0].error.is_none(),
        "{at}: {:?}",
        step.outcomes[0]
    );
    let cut = step.outcomes[1]
        .error
        .as_ref()
        .expect("the cut call failed");
    assert_eq!(cut.code.as_deref(), Some("cut_by_token_limit"), "{at}");
    assert!(
        cut.model_message.contains("token limit"),
        "{at}: {}",
        cut.model_message
    );
    assert!(!cut.fatal && !cut.retryable, "{at}");
    assert_eq!(step.outcomes[1].attempts, 0, "{at}");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "{at}: only the whole call ran"
    );
    // The tool never saw the cut call: its metrics do not count it.
    let stats = ex.registry().stats_of("write").unwrap();
    assert_eq!((stats.calls, stats.failures), (1, 0), "{at}");
    assert!(step.fatal.is_none(), "{at}");
    // The cut call is answered in the next request, as every call is.
    let answers = step
        .messages
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    assert!(answers.contains("token limit"), "{at}: {answers}");
}

#[tokio::test]
async fn a_streamed_call_cut_by_the_token_limit_is_answered_not_run() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step_stream(stream(dialect), &Context::default())
            .await
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        assert_last_call_answered_not_run(&ex, &step, &runs, &format!("{dialect:?} stream"));
    }
}

/// A whole body's last call may look whole (the provider parsed what
/// the limit left, or gave `{}`): it is not run either.
#[tokio::test]
async fn a_whole_body_cut_by_the_token_limit_runs_only_its_whole_calls() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step(dialect, &body(dialect, "{}", true), &Context::default())
            .await
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        assert_last_call_answered_not_run(&ex, &step, &runs, &format!("{dialect:?} body"));
    }
}

/// Without the limit the same calls all run, and the step says nothing of
/// a limit.
#[tokio::test]
async fn a_turn_the_limit_did_not_stop_runs_every_call() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step(dialect, &body(dialect, WHOLE, false), &Context::default())
            .await
            .unwrap();
        assert!(!step.hit_token_limit, "{dialect:?}");
        assert!(
            step.outcomes.iter().all(|o| o.error.is_none()),
            "{dialect:?}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 2, "{dialect:?}");
    }
}

/// A text-only turn the limit cut is final (no call to answer), and says
/// it was cut: the application may ask the model to go on.
#[tokio::test]
async fn a_text_turn_cut_by_the_limit_is_final_and_flagged() {
    let (ex, _) = executor();
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "stop_reason": "max_tokens", "content": [{"type": "text", "text": "The answer is"}]});
    let step = ex
        .step(
            Dialect::Anthropic,
            body.to_string().as_bytes(),
            &Context::default(),
        )
        .await
        .unwrap();
    assert!(step.is_final());
    assert!(step.hit_token_limit);
}
