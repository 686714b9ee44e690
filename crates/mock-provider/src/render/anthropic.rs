//! Anthropic Messages: the message object and its event stream
//! (`message_start`, `content_block_*`, `message_delta`, `message_stop`).

use bytes::Bytes;

use super::{halves, pieces, sse_event};
use crate::{
    json::{Obj, array},
    plan::Plan,
};

fn anthropic_usage(plan: &Plan, output: u64) -> String {
    Obj::new()
        .num("input_tokens", plan.input_tokens)
        .num("cache_creation_input_tokens", 0)
        .num("cache_read_input_tokens", 0)
        .num("output_tokens", output)
        .done()
}

pub(super) fn anthropic_message(plan: &Plan, complete: bool) -> String {
    let mut blocks = Vec::new();
    if complete {
        if let Some(text) = &plan.text {
            blocks.push(Obj::new().str("type", "text").str("text", text).done());
        }
        for (i, c) in plan.calls.iter().enumerate() {
            blocks.push(
                Obj::new()
                    .str("type", "tool_use")
                    .str("id", &plan.call_id("toolu_", i))
                    .str("name", &c.name)
                    .raw("input", &c.arguments)
                    .done(),
            );
        }
    }
    let stop = if plan.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    Obj::new()
        .str("id", &plan.response_id("msg_"))
        .str("type", "message")
        .str("role", "assistant")
        .str("model", &plan.model)
        .raw("content", &array(blocks))
        .opt_str("stop_reason", complete.then_some(stop))
        .raw("stop_sequence", "null")
        .raw(
            "usage",
            &anthropic_usage(plan, if complete { plan.output_tokens } else { 1 }),
        )
        .done()
}

pub(super) fn anthropic_stream(plan: &Plan) -> Vec<Bytes> {
    let mut out = vec![sse_event(
        "message_start",
        &Obj::new()
            .str("type", "message_start")
            .raw("message", &anthropic_message(plan, false))
            .done(),
    )];
    let mut index = 0u64;
    let block_stop = |index: u64| {
        sse_event(
            "content_block_stop",
            &Obj::new()
                .str("type", "content_block_stop")
                .num("index", index)
                .done(),
        )
    };
    let delta = |index: u64, delta: String| {
        sse_event(
            "content_block_delta",
            &Obj::new()
                .str("type", "content_block_delta")
                .num("index", index)
                .raw("delta", &delta)
                .done(),
        )
    };
    let start = |index: u64, block: String| {
        sse_event(
            "content_block_start",
            &Obj::new()
                .str("type", "content_block_start")
                .num("index", index)
                .raw("content_block", &block)
                .done(),
        )
    };
    if let Some(text) = &plan.text {
        out.push(start(
            index,
            Obj::new().str("type", "text").str("text", "").done(),
        ));
        out.push(sse_event("ping", r#"{"type": "ping"}"#));
        for piece in halves(text) {
            out.push(delta(
                index,
                Obj::new()
                    .str("type", "text_delta")
                    .str("text", piece)
                    .done(),
            ));
        }
        out.push(block_stop(index));
        index += 1;
    }
    for (i, c) in plan.calls.iter().enumerate() {
        out.push(start(
            index,
            Obj::new()
                .str("type", "tool_use")
                .str("id", &plan.call_id("toolu_", i))
                .str("name", &c.name)
                .raw("input", "{}")
                .done(),
        ));
        for piece in [""]
            .into_iter()
            .chain(pieces(&c.arguments, plan.arg_pieces))
        {
            out.push(delta(
                index,
                Obj::new()
                    .str("type", "input_json_delta")
                    .str("partial_json", piece)
                    .done(),
            ));
        }
        out.push(block_stop(index));
        index += 1;
    }
    let stop = if plan.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(sse_event(
        "message_delta",
        &Obj::new()
            .str("type", "message_delta")
            .raw(
                "delta",
                &Obj::new()
                    .str("stop_reason", stop)
                    .raw("stop_sequence", "null")
                    .done(),
            )
            .raw(
                "usage",
                &Obj::new().num("output_tokens", plan.output_tokens).done(),
            )
            .done(),
    ));
    out.push(sse_event("message_stop", r#"{"type":"message_stop"}"#));
    out
}
