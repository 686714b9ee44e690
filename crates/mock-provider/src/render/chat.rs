//! OpenAI Chat Completions: the completion object and its chunk stream
//! ending in `data: [DONE]` (after a usage chunk only when the request set
//! `stream_options.include_usage`).

use bytes::Bytes;

use super::{CREATED, halves, pieces, sse_data};
use crate::{
    json::{Obj, array},
    plan::Plan,
};

fn chat_usage(plan: &Plan) -> String {
    Obj::new()
        .num("prompt_tokens", plan.input_tokens)
        .num("completion_tokens", plan.output_tokens)
        .num("total_tokens", plan.input_tokens + plan.output_tokens)
        .done()
}

fn chat_finish(plan: &Plan) -> &'static str {
    if plan.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

pub(super) fn chat_completion(plan: &Plan) -> String {
    let mut message = Obj::new().str("role", "assistant");
    if plan.calls.is_empty() {
        message = message.opt_str("content", plan.text.as_deref());
    } else {
        let calls = plan.calls.iter().enumerate().map(|(i, c)| {
            Obj::new()
                .str("id", &plan.call_id("call_", i))
                .str("type", "function")
                .raw(
                    "function",
                    &Obj::new()
                        .str("name", &c.name)
                        .str("arguments", &c.arguments)
                        .done(),
                )
                .done()
        });
        message = message
            .opt_str("content", plan.text.as_deref())
            .raw("tool_calls", &array(calls));
    }
    let message = message.raw("refusal", "null").done();
    let choice = Obj::new()
        .num("index", 0)
        .raw("message", &message)
        .raw("logprobs", "null")
        .str("finish_reason", chat_finish(plan))
        .done();
    Obj::new()
        .str("id", &plan.response_id("chatcmpl-"))
        .str("object", "chat.completion")
        .num("created", CREATED)
        .str("model", &plan.model)
        .raw("choices", &array([choice]))
        .raw("usage", &chat_usage(plan))
        .str("system_fingerprint", "fp_mock")
        .done()
}

pub(super) fn chat_stream(plan: &Plan) -> Vec<Bytes> {
    let id = plan.response_id("chatcmpl-");
    let chunk = |delta: String, finish: Option<&str>| {
        let choice = Obj::new()
            .num("index", 0)
            .raw("delta", &delta)
            .raw("logprobs", "null")
            .opt_str("finish_reason", finish)
            .done();
        let mut chunk = Obj::new()
            .str("id", &id)
            .str("object", "chat.completion.chunk")
            .num("created", CREATED)
            .str("model", &plan.model)
            .str("system_fingerprint", "fp_mock")
            .raw("choices", &array([choice]));
        if plan.stream_usage {
            chunk = chunk.raw("usage", "null");
        }
        sse_data(&chunk.done())
    };
    let mut out = vec![chunk(
        Obj::new()
            .str("role", "assistant")
            .raw("content", "null")
            .done(),
        None,
    )];
    if let Some(text) = &plan.text {
        for piece in halves(text) {
            out.push(chunk(Obj::new().str("content", piece).done(), None));
        }
    }
    for (i, c) in plan.calls.iter().enumerate() {
        let first = Obj::new()
            .num("index", i as u64)
            .str("id", &plan.call_id("call_", i))
            .str("type", "function")
            .raw(
                "function",
                &Obj::new().str("name", &c.name).str("arguments", "").done(),
            )
            .done();
        out.push(chunk(
            Obj::new().raw("tool_calls", &array([first])).done(),
            None,
        ));
        for piece in pieces(&c.arguments, plan.arg_pieces) {
            let d = Obj::new()
                .num("index", i as u64)
                .raw("function", &Obj::new().str("arguments", piece).done())
                .done();
            out.push(chunk(
                Obj::new().raw("tool_calls", &array([d])).done(),
                None,
            ));
        }
    }
    out.push(chunk("{}".to_string(), Some(chat_finish(plan))));
    if plan.stream_usage {
        out.push(usage_chunk(plan, &id));
    }
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

/// The last chunk of a stream that asked for usage: no choices.
fn usage_chunk(plan: &Plan, id: &str) -> Bytes {
    sse_data(
        &Obj::new()
            .str("id", id)
            .str("object", "chat.completion.chunk")
            .num("created", CREATED)
            .str("model", &plan.model)
            .str("system_fingerprint", "fp_mock")
            .raw("choices", "[]")
            .raw("usage", &chat_usage(plan))
            .done(),
    )
}
