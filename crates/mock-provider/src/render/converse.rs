//! Bedrock Converse: the response object and the ConverseStream's
//! event-stream frames (`messageStart`, `contentBlock*`, `messageStop`,
//! `metadata`), written with the wire crate's encoder.

use bytes::Bytes;
use toolwarden_wire::eventstream::encode_event;

use super::{halves, pieces};
use crate::{
    json::{Obj, array},
    plan::Plan,
};

fn stop_reason(plan: &Plan) -> &'static str {
    if plan.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn usage(plan: &Plan) -> String {
    Obj::new()
        .num("inputTokens", plan.input_tokens)
        .num("outputTokens", plan.output_tokens)
        .num("totalTokens", plan.input_tokens + plan.output_tokens)
        .done()
}

pub(super) fn converse_response(plan: &Plan) -> String {
    let mut blocks = Vec::new();
    if let Some(text) = &plan.text {
        blocks.push(Obj::new().str("text", text).done());
    }
    for (i, c) in plan.calls.iter().enumerate() {
        let tool_use = Obj::new()
            .str("toolUseId", &plan.call_id("tooluse_", i))
            .str("name", &c.name)
            .raw("input", &c.arguments)
            .done();
        blocks.push(Obj::new().raw("toolUse", &tool_use).done());
    }
    let message = Obj::new()
        .str("role", "assistant")
        .raw("content", &array(blocks))
        .done();
    Obj::new()
        .raw("output", &Obj::new().raw("message", &message).done())
        .str("stopReason", stop_reason(plan))
        .raw("usage", &usage(plan))
        .raw("metrics", r#"{"latencyMs":1}"#)
        .done()
}

pub(super) fn converse_stream(plan: &Plan) -> Vec<Bytes> {
    let frame = |event: &str, payload: String| Bytes::from(encode_event(event, payload.as_bytes()));
    let mut out = vec![frame(
        "messageStart",
        Obj::new().str("role", "assistant").done(),
    )];
    let mut index = 0u64;
    let stop = |index: u64| {
        frame(
            "contentBlockStop",
            Obj::new().num("contentBlockIndex", index).done(),
        )
    };
    let delta = |index: u64, delta: String| {
        frame(
            "contentBlockDelta",
            Obj::new()
                .num("contentBlockIndex", index)
                .raw("delta", &delta)
                .done(),
        )
    };
    if let Some(text) = &plan.text {
        for piece in halves(text) {
            out.push(delta(index, Obj::new().str("text", piece).done()));
        }
        out.push(stop(index));
        index += 1;
    }
    for (i, c) in plan.calls.iter().enumerate() {
        let tool_use = Obj::new()
            .str("toolUseId", &plan.call_id("tooluse_", i))
            .str("name", &c.name)
            .done();
        out.push(frame(
            "contentBlockStart",
            Obj::new()
                .num("contentBlockIndex", index)
                .raw("start", &Obj::new().raw("toolUse", &tool_use).done())
                .done(),
        ));
        for piece in pieces(&c.arguments, plan.arg_pieces) {
            let input = Obj::new().str("input", piece).done();
            out.push(delta(index, Obj::new().raw("toolUse", &input).done()));
        }
        out.push(stop(index));
        index += 1;
    }
    out.push(frame(
        "messageStop",
        Obj::new().str("stopReason", stop_reason(plan)).done(),
    ));
    out.push(frame(
        "metadata",
        Obj::new()
            .raw("usage", &usage(plan))
            .raw("metrics", r#"{"latencyMs":1}"#)
            .done(),
    ));
    out
}
