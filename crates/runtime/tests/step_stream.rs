//! `Executor::step_stream`: a streamed response, fed to a `StreamParser`
//! in chunks (down to one byte, so every call and its arguments are split
//! across many), gives what `step` gives for the same response as a whole
//! body, in every dialect with a stream parser: Anthropic SSE (and on
//! Bedrock's InvokeModelWithResponseStream), OpenAI Chat SSE, Responses
//! SSE, Gemini's streamed array and SSE, Bedrock ConverseStream. The
//! provider's server tools are not run; a stream cut short, over the
//! parser's limit, carrying an error or with a malformed frame is a typed
//! error and runs nothing.

use serde_json::{Value, json};
use toolwarden_runtime::{Context, Executor, StepErrorKind, StepResult};
use toolwarden_wire::{Dialect, StreamParser, eventstream};

#[path = "support/read_file.rs"]
mod read_file;
use read_file::{CALLS, FAILED, args, executor};

/// The arguments in pieces of at most 4 bytes, as providers stream them.
fn pieces(i: usize) -> Vec<&'static str> {
    let s = CALLS[i].1;
    (0..s.len())
        .step_by(4)
        .map(|at| &s[at..(at + 4).min(s.len())])
        .collect()
}

/// How a stream is framed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stream {
    Anthropic,
    Chat,
    Responses,
    GeminiArray,
    GeminiSse,
    Converse,
    /// Anthropic events in InvokeModelWithResponseStream frames.
    BedrockInvoke,
}

const STREAMS: [Stream; 7] = [
    Stream::Anthropic,
    Stream::Chat,
    Stream::Responses,
    Stream::GeminiArray,
    Stream::GeminiSse,
    Stream::Converse,
    Stream::BedrockInvoke,
];

impl Stream {
    fn dialect(self) -> Dialect {
        match self {
            Stream::Anthropic | Stream::BedrockInvoke => Dialect::Anthropic,
            Stream::Chat => Dialect::OpenAiChat,
            Stream::Responses => Dialect::OpenAiResponses,
            Stream::GeminiArray | Stream::GeminiSse => Dialect::Gemini,
            Stream::Converse => Dialect::BedrockConverse,
        }
    }

    fn parser(self) -> StreamParser {
        match self {
            Stream::BedrockInvoke => StreamParser::bedrock_invoke(Dialect::Anthropic),
            _ => StreamParser::new(self.dialect()),
        }
    }

    /// The events of the stream (data, with the SSE event name), before
    /// framing.
    fn events(self, server_tool: bool) -> Vec<(String, Value)> {
        let ev = |name: &str, data: Value| (name.to_string(), data);
        let mut out = Vec::new();
        match self.dialect() {
            Dialect::Anthropic => {
                let block = |out: &mut Vec<(String, Value)>,
                             index: usize,
                             start: Value,
                             deltas: Vec<Value>| {
                    out.push(ev("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": start})));
                    for delta in deltas {
                        out.push(ev(
                            "content_block_delta",
                            json!({"type": "content_block_delta", "index": index, "delta": delta}),
                        ));
                    }
                    out.push(ev(
                        "content_block_stop",
                        json!({"type": "content_block_stop", "index": index}),
                    ));
                };
                let json_deltas = |parts: Vec<&str>| -> Vec<Value> {
                    parts
                        .into_iter()
                        .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                        .collect()
                };
                out.push(ev("message_start", json!({"type": "message_start", "message": {
                    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                    "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}})));
                out.push(ev("ping", json!({"type": "ping"})));
                block(
                    &mut out,
                    0,
                    json!({"type": "text", "text": ""}),
                    vec![json!({"type": "text_delta", "text": "Let me look."})],
                );
                let mut index = 1;
                if server_tool {
                    block(
                        &mut out,
                        1,
                        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
                        json_deltas(vec![r#"{"query": "#, r#""rust"}"#]),
                    );
                    block(
                        &mut out,
                        2,
                        json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
                        vec![],
                    );
                    index = 3;
                }
                for (i, call) in CALLS.iter().enumerate() {
                    block(
                        &mut out,
                        index + i,
                        json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": call.0, "input": {}}),
                        json_deltas(pieces(i)),
                    );
                }
                out.push(ev(
                    "message_delta",
                    json!({"type": "message_delta",
                    "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}}),
                ));
                out.push(ev("message_stop", json!({"type": "message_stop"})));
            }
            Dialect::OpenAiChat => {
                let chunk = |delta: Value, finish: Value| {
                    json!({"id": "chatcmpl-1",
                    "object": "chat.completion.chunk", "model": "gpt-4o",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                };
                out.push(ev(
                    "",
                    chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                ));
                for (i, call) in CALLS.iter().enumerate() {
                    out.push(ev(
                        "",
                        chunk(
                            json!({"tool_calls": [{"index": i, "id": format!("call_{i}"),
                        "type": "function", "function": {"name": call.0, "arguments": ""}}]}),
                            Value::Null,
                        ),
                    ));
                    for p in pieces(i) {
                        out.push(ev(
                            "",
                            chunk(
                                json!({"tool_calls": [{"index": i,
                            "function": {"arguments": p}}]}),
                                Value::Null,
                            ),
                        ));
                    }
                }
                out.push(ev("", chunk(json!({}), json!("tool_calls"))));
            }
            Dialect::OpenAiResponses => {
                let item = |i: usize, done: bool| {
                    json!({"type": "function_call", "id": format!("fc_{i}"),
                    "call_id": format!("call_{i}"), "name": CALLS[i].0,
                    "arguments": if done { CALLS[i].1 } else { "" },
                    "status": if done { "completed" } else { "in_progress" }})
                };
                let hosted = |done: bool| {
                    json!({"type": "web_search_call", "id": "ws_1",
                    "status": if done { "completed" } else { "in_progress" }})
                };
                out.push(ev("response.created", json!({"type": "response.created", "response": {
                    "id": "resp_1", "object": "response", "model": "gpt-4.1", "status": "in_progress", "output": []}})));
                let mut index = 0;
                let mut output = Vec::new();
                if server_tool {
                    out.push(ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": hosted(false)})));
                    out.push(ev("response.output_item.done", json!({"type": "response.output_item.done", "output_index": 0, "item": hosted(true)})));
                    output.push(hosted(true));
                    index = 1;
                }
                for (i, call) in CALLS.iter().enumerate() {
                    let at = index + i;
                    out.push(ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": at, "item": item(i, false)})));
                    for p in pieces(i) {
                        out.push(ev(
                            "response.function_call_arguments.delta",
                            json!({"type": "response.function_call_arguments.delta",
                            "item_id": format!("fc_{i}"), "output_index": at, "delta": p}),
                        ));
                    }
                    out.push(ev(
                        "response.function_call_arguments.done",
                        json!({"type": "response.function_call_arguments.done",
                        "item_id": format!("fc_{i}"), "output_index": at, "arguments": call.1}),
                    ));
                    out.push(ev("response.output_item.done", json!({"type": "response.output_item.done", "output_index": at, "item": item(i, true)})));
                    output.push(item(i, true));
                }
                out.push(ev(
                    "response.completed",
                    json!({"type": "response.completed", "response": {
                    "id": "resp_1", "object": "response", "model": "gpt-4.1", "status": "completed",
                    "output": output, "usage": {"input_tokens": 10, "output_tokens": 5}}}),
                ));
            }
            Dialect::Gemini => {
                out.push(ev(
                    "",
                    json!({"candidates": [{"content": {"role": "model",
                    "parts": [{"text": "Let me look."}]}}], "modelVersion": "gemini-2.5-flash"}),
                ));
                for (i, call) in CALLS.iter().enumerate() {
                    out.push(ev(
                        "",
                        json!({"candidates": [{"content": {"role": "model",
                        "parts": [{"functionCall": {"name": call.0, "args": args(i)}}]}}],
                        "modelVersion": "gemini-2.5-flash"}),
                    ));
                }
                out.push(ev("", json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                    "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
                    "modelVersion": "gemini-2.5-flash"})));
            }
            Dialect::BedrockConverse => {
                out.push(ev("messageStart", json!({"role": "assistant"})));
                out.push(ev(
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 0, "delta": {"text": "Let me look."}}),
                ));
                out.push(ev("contentBlockStop", json!({"contentBlockIndex": 0})));
                for (i, call) in CALLS.iter().enumerate() {
                    let at = i + 1;
                    out.push(ev(
                        "contentBlockStart",
                        json!({"contentBlockIndex": at, "start": {"toolUse": {
                        "toolUseId": format!("tooluse_{i}"), "name": call.0}}}),
                    ));
                    for p in pieces(i) {
                        out.push(ev(
                            "contentBlockDelta",
                            json!({"contentBlockIndex": at, "delta": {"toolUse": {"input": p}}}),
                        ));
                    }
                    out.push(ev("contentBlockStop", json!({"contentBlockIndex": at})));
                }
                out.push(ev("messageStop", json!({"stopReason": "tool_use"})));
                out.push(ev("metadata", json!({"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 9}})));
            }
        }
        out
    }

    /// The stream's bytes.
    fn bytes(self, server_tool: bool) -> Vec<u8> {
        self.frame(&self.events(server_tool))
    }

    fn frame(self, events: &[(String, Value)]) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Stream::Anthropic | Stream::Responses => {
                for (name, data) in events {
                    out.extend(format!("event: {name}\ndata: {data}\n\n").into_bytes());
                }
            }
            Stream::Chat | Stream::GeminiSse => {
                for (_, data) in events {
                    out.extend(format!("data: {data}\n\n").into_bytes());
                }
                if self == Stream::Chat {
                    out.extend(b"data: [DONE]\n\n");
                }
            }
            Stream::GeminiArray => {
                out.push(b'[');
                for (i, (_, data)) in events.iter().enumerate() {
                    if i > 0 {
                        out.extend(b",\r\n");
                    }
                    out.extend(serde_json::to_vec_pretty(data).unwrap());
                }
                out.push(b']');
            }
            Stream::Converse => {
                for (name, data) in events {
                    out.extend(eventstream::encode_event(name, data.to_string().as_bytes()));
                }
            }
            Stream::BedrockInvoke => {
                for (_, data) in events {
                    out.extend(eventstream::encode_invoke_chunk(
                        data.to_string().as_bytes(),
                    ));
                }
            }
        }
        out
    }
}

/// The same response as a whole body.
fn body(dialect: Dialect, server_tool: bool) -> Vec<u8> {
    let body = match dialect {
        Dialect::OpenAiChat => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "",
                "tool_calls": (0..3).map(|i| json!({
                    "id": format!("call_{i}"), "type": "function",
                    "function": {"name": CALLS[i].0, "arguments": CALLS[i].1}
                })).collect::<Vec<_>>()
            }}]
        }),
        Dialect::OpenAiResponses => {
            let mut output: Vec<Value> = Vec::new();
            if server_tool {
                output
                    .push(json!({"type": "web_search_call", "id": "ws_1", "status": "completed"}));
            }
            output.extend((0..3).map(|i| json!({
                "type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"),
                "name": CALLS[i].0, "arguments": CALLS[i].1, "status": "completed"
            })));
            json!({"id": "resp_1", "object": "response", "model": "gpt-4.1", "status": "completed", "output": output})
        }
        Dialect::Anthropic => {
            let mut content = vec![json!({"type": "text", "text": "Let me look."})];
            if server_tool {
                content.push(json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}}));
                content.push(json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}));
            }
            content.extend((0..3).map(|i| json!({
                "type": "tool_use", "id": format!("toolu_{i}"), "name": CALLS[i].0, "input": args(i)
            })));
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                "stop_reason": "tool_use", "content": content})
        }
        Dialect::Gemini => json!({
            "modelVersion": "gemini-2.5-flash",
            "candidates": [{"finishReason": "STOP", "content": {"role": "model",
                "parts": (0..3).map(|i| json!({"functionCall": {"name": CALLS[i].0, "args": args(i)}}))
                    .collect::<Vec<_>>()
            }}]
        }),
        Dialect::BedrockConverse => json!({
            "output": {"message": {"role": "assistant",
                "content": (0..3).map(|i| json!({"toolUse": {
                    "toolUseId": format!("tooluse_{i}"), "name": CALLS[i].0, "input": args(i)
                }})).collect::<Vec<_>>()
            }},
            "stopReason": "tool_use"
        }),
    };
    serde_json::to_vec(&body).unwrap()
}

/// A parser fed `bytes` in chunks of `chunk` bytes.
fn fed(stream: Stream, bytes: &[u8], chunk: usize) -> StreamParser {
    let mut parser = stream.parser();
    for piece in bytes.chunks(chunk) {
        parser.feed(piece);
    }
    parser
}

fn failed(step: &StepResult) -> Vec<bool> {
    step.outcomes.iter().map(|o| o.error.is_some()).collect()
}

fn tool_calls_run(ex: &Executor) -> u64 {
    ex.registry().stats_of("read_file").unwrap().calls
}

#[tokio::test]
async fn every_dialect_streamed_in_any_chunks_steps_as_the_whole_body() {
    for stream in STREAMS {
        let dialect = stream.dialect();
        let ex = executor();
        let whole = ex
            .step(dialect, &body(dialect, false), &Context::default())
            .await
            .unwrap();
        assert_eq!(whole.calls.len(), 3, "{stream:?}");
        let bytes = stream.bytes(false);
        for chunk in [1, 3, 64, bytes.len()] {
            // A new run each time (the loop guard's memory is the run's).
            let ex = executor();
            let step = ex
                .step_stream(fed(stream, &bytes, chunk), &Context::default())
                .await
                .unwrap_or_else(|e| panic!("{stream:?} in {chunk}-byte chunks: {e}"));
            let at = format!("{stream:?} in {chunk}-byte chunks");
            // The same calls (Gemini's streamed array keeps the
            // arguments' JSON as sent, pretty-printed here).
            let ids =
                |s: &StepResult| -> Vec<String> { s.calls.iter().map(|c| c.id.clone()).collect() };
            assert_eq!(ids(&step), ids(&whole), "{at}");
            for (i, call) in step.calls.iter().enumerate() {
                assert_eq!(call.name, CALLS[i].0, "{at}");
                let got: Value = serde_json::from_str(&call.arguments).unwrap();
                assert_eq!(got, args(i), "{at}");
            }
            assert_eq!(failed(&step), FAILED, "{at}");
            assert_eq!(step.messages, whole.messages, "{at}");
            assert!(step.fatal.is_none() && !step.is_final(), "{at}");
            assert!(step.response.stop_reason.is_some(), "{at}");
            assert!(!step.response.ended_early, "{at}");
        }
    }
}

/// Anthropic's `server_tool_use` (answered by Anthropic in the same
/// message) and a Responses hosted tool are neither run nor answered: the
/// step's calls and messages are those of the whole body's step.
#[tokio::test]
async fn server_tools_in_the_stream_are_not_run() {
    for stream in [Stream::Anthropic, Stream::BedrockInvoke, Stream::Responses] {
        let dialect = stream.dialect();
        let ex = executor();
        let whole = ex
            .step(dialect, &body(dialect, true), &Context::default())
            .await
            .unwrap();
        let bytes = stream.bytes(true);
        let step = ex
            .step_stream(fed(stream, &bytes, 5), &Context::default())
            .await
            .unwrap();
        let ids: Vec<&str> = step.calls.iter().map(|c| c.id.as_str()).collect();
        assert!(
            ids.iter()
                .all(|id| !id.starts_with("srvtoolu") && !id.starts_with("ws_")),
            "{stream:?}: {ids:?}"
        );
        assert_eq!(step.calls.len(), 3, "{stream:?}");
        assert_eq!(step.calls, whole.calls, "{stream:?}");
        assert_eq!(step.messages, whole.messages, "{stream:?}");
        assert!(
            !step
                .messages
                .iter()
                .any(|m| m.to_string().contains("srvtoolu"))
        );
        if dialect == Dialect::Anthropic {
            // The view keeps the server call, marked.
            assert_eq!(step.response.calls.len(), 4, "{stream:?}");
            assert_eq!(step.response.server_calls, [0], "{stream:?}");
            assert_eq!(step.response.calls[0].name, "web_search");
        }
    }
}

/// A stream cut anywhere before its final event (a dropped connection)
/// is `EndedEarly`, with what it held, and runs nothing, in every
/// dialect: never a final step.
#[tokio::test]
async fn a_stream_cut_short_is_an_error_and_runs_nothing() {
    for stream in STREAMS {
        let ex = executor();
        let bytes = stream.bytes(false);
        // Cut in the middle of the calls, and just before the end.
        for cut in [bytes.len() / 2, bytes.len() * 9 / 10] {
            let err = ex
                .step_stream(fed(stream, &bytes[..cut], 7), &Context::default())
                .await
                .expect_err(&format!("{stream:?} cut at {cut}"));
            assert_eq!(
                err.kind(),
                StepErrorKind::EndedEarly,
                "{stream:?} at {cut}: {err}"
            );
            assert!(
                err.to_string().contains("ended before its final event"),
                "{err}"
            );
            assert!(err.to_string().contains("no call was run"), "{err}");
            let seen = err.response().expect("what the stream held");
            assert!(seen.ended_early, "{stream:?}");
        }
        assert_eq!(tool_calls_run(&ex), 0, "{stream:?}");
    }
    // Another dialect's stream never ends as this dialect's does.
    let chat = Stream::Chat.bytes(false);
    let err = executor()
        .step_stream(fed(Stream::Anthropic, &chat, 16), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), StepErrorKind::EndedEarly);
    assert!(err.to_string().contains("`message_stop`"), "{err}");
}

/// The provider's error in the stream (Anthropic `error`, Chat's error
/// chunk, Responses `response.failed`, Gemini's error object, a Bedrock
/// exception frame) is `ProviderError`, even after whole calls.
#[tokio::test]
async fn an_error_in_the_stream_is_a_provider_error() {
    let cases: [(Stream, Vec<u8>); 5] = [
        (Stream::Anthropic, {
            let mut b = Stream::Anthropic.frame(&Stream::Anthropic.events(false)[..8]);
            b.extend(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
            b
        }),
        (Stream::Chat, {
            let mut b = Stream::Chat.frame(&Stream::Chat.events(false)[..4]);
            b.truncate(b.len() - b"data: [DONE]\n\n".len());
            b.extend(b"data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n");
            b
        }),
        (Stream::Responses, {
            let events = Stream::Responses.events(false);
            let mut b = Stream::Responses.frame(&events[..events.len() - 1]);
            b.extend(b"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"Something went wrong\"}}}\n\n");
            b
        }),
        (Stream::GeminiArray, {
            let mut b =
                br#"[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}"#
                    .to_vec();
            b.extend(br#",{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]"#);
            b
        }),
        (Stream::Converse, {
            let events = Stream::Converse.events(false);
            let mut b = Stream::Converse.frame(&events[..6]);
            b.extend(eventstream::encode_exception(
                "throttlingException",
                br#"{"message":"Too many requests, please wait."}"#,
            ));
            b
        }),
    ];
    for (stream, bytes) in cases {
        let ex = executor();
        let err = ex
            .step_stream(fed(stream, &bytes, 9), &Context::default())
            .await
            .expect_err(&format!("{stream:?}"));
        assert_eq!(
            err.kind(),
            StepErrorKind::ProviderError,
            "{stream:?}: {err}"
        );
        assert!(err.to_string().contains("carried an error"), "{err}");
        assert!(err.response().unwrap().error.is_some());
        assert_eq!(tool_calls_run(&ex), 0, "{stream:?}");
    }
}

/// Over the parser's byte budget: `Truncated`, not a step with cut
/// arguments.
#[tokio::test]
async fn a_stream_over_the_parsers_limit_is_truncated() {
    for stream in STREAMS {
        let ex = executor();
        let bytes = stream.bytes(false);
        let mut parser = stream.parser().limit(24);
        for piece in bytes.chunks(11) {
            parser.feed(piece);
        }
        let err = ex
            .step_stream(parser, &Context::default())
            .await
            .expect_err(&format!("{stream:?}"));
        assert_eq!(err.kind(), StepErrorKind::Truncated, "{stream:?}: {err}");
        assert!(err.response().unwrap().truncated);
        assert_eq!(tool_calls_run(&ex), 0, "{stream:?}");
    }
}

/// A Bedrock frame whose checksum is wrong: `Unreadable`.
#[tokio::test]
async fn a_malformed_bedrock_frame_is_unreadable() {
    let mut bytes = Stream::Converse.bytes(false);
    bytes[8] ^= 0xff; // the first frame's prelude CRC
    let err = executor()
        .step_stream(fed(Stream::Converse, &bytes, 64), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), StepErrorKind::Unreadable, "{err}");
    assert!(
        err.to_string().contains("cannot read the model's stream"),
        "{err}"
    );
}

/// A stream with text only is a final step, as in `step`.
#[tokio::test]
async fn a_whole_stream_without_calls_is_final() {
    let events = Stream::Anthropic.events(false);
    let text_only: Vec<_> = events
        .iter()
        .filter(|(_, data)| {
            !data.to_string().contains("tool_use") && !data.to_string().contains("input_json")
        })
        .cloned()
        .collect();
    let bytes = Stream::Anthropic.frame(&text_only);
    let step = executor()
        .step_stream(fed(Stream::Anthropic, &bytes, 4), &Context::default())
        .await
        .unwrap();
    assert!(step.is_final());
    assert!(step.messages.is_empty());
    assert_eq!(step.response.id.as_deref(), Some("msg_1"));
}
