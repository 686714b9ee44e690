//! Gemini: `generateContent` chunks, streamed as SSE or as a JSON array.

use bytes::Bytes;

use crate::{
    json::{Obj, array},
    plan::Plan,
};

pub(super) fn gemini_chunk(plan: &Plan, with_text: bool, last: bool) -> String {
    let mut parts = Vec::new();
    if with_text
        && (plan.calls.is_empty() || !last)
        && let Some(text) = &plan.text
    {
        parts.push(Obj::new().str("text", text).done());
    }
    if last {
        for (i, c) in plan.calls.iter().enumerate() {
            let mut call = Obj::new();
            if plan.gemini_ids {
                call = call.str("id", &plan.call_id("call_", i));
            }
            let call = call.str("name", &c.name).raw("args", &c.arguments).done();
            parts.push(Obj::new().raw("functionCall", &call).done());
        }
    }
    let mut candidate = Obj::new().raw(
        "content",
        &Obj::new()
            .raw("parts", &array(parts))
            .str("role", "model")
            .done(),
    );
    if last {
        candidate = candidate.str("finishReason", "STOP");
    }
    let candidate = candidate.num("index", 0).done();
    let usage = Obj::new()
        .num("promptTokenCount", plan.input_tokens)
        .num(
            "candidatesTokenCount",
            if last { plan.output_tokens } else { 0 },
        )
        .num(
            "totalTokenCount",
            plan.input_tokens + if last { plan.output_tokens } else { 0 },
        )
        .done();
    Obj::new()
        .raw("candidates", &array([candidate]))
        .raw("usageMetadata", &usage)
        .str("modelVersion", &plan.model)
        .str("responseId", &plan.response_id(""))
        .done()
}

pub(super) fn gemini_stream(plan: &Plan, sse: bool) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    if !plan.calls.is_empty() && plan.text.is_some() {
        chunks.push(gemini_chunk(plan, true, false));
        chunks.push(gemini_chunk(plan, false, true));
    } else {
        chunks.push(gemini_chunk(plan, true, true));
    }
    if sse {
        return chunks
            .iter()
            .map(|c| Bytes::from(format!("data: {c}\r\n\r\n")))
            .collect();
    }
    // The streamed JSON array, as the API writes it: `[{…}\n,\r\n{…}\n]`.
    let n = chunks.len();
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let lead = if i == 0 { "[" } else { ",\r\n" };
            let tail = if i + 1 == n { "\n]" } else { "\n" };
            Bytes::from(format!("{lead}{c}{tail}"))
        })
        .collect()
}
