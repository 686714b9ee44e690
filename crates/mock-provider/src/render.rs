//! A [`Plan`] as each dialect's response: a JSON body, or the stream of
//! events the real API sends (one `Bytes` per event, written separately).

use bytes::Bytes;
use toolwarden_wire::Dialect;

use crate::{
    json::{Obj, array},
    plan::Plan,
};

/// The fixed `created` timestamp (deterministic bodies).
const CREATED: u64 = 1_763_769_600;

/// The non-streaming response body.
pub(crate) fn json_body(dialect: Dialect, plan: &Plan) -> String {
    match dialect {
        Dialect::Anthropic => anthropic_message(plan, true),
        Dialect::OpenAiChat => chat_completion(plan),
        Dialect::OpenAiResponses => responses_object(plan, true),
        Dialect::Gemini => gemini_chunk(plan, true, true),
    }
}

/// The streamed response, one element per write. Gemini: SSE when
/// `gemini_sse`, else the pieces of a JSON array.
pub(crate) fn stream_events(dialect: Dialect, plan: &Plan, gemini_sse: bool) -> Vec<Bytes> {
    match dialect {
        Dialect::Anthropic => anthropic_stream(plan),
        Dialect::OpenAiChat => chat_stream(plan),
        Dialect::OpenAiResponses => responses_stream(plan),
        Dialect::Gemini => gemini_stream(plan, gemini_sse),
    }
}

/// `event: NAME\ndata: DATA\n\n`.
pub(crate) fn sse_event(name: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// `data: DATA\n\n`.
pub(crate) fn sse_data(data: &str) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

/// Split JSON text in two pieces (at a char boundary) to stream it as deltas.
fn halves(s: &str) -> [&str; 2] {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    [&s[..mid], &s[mid..]]
}

// === Anthropic Messages ===

fn anthropic_usage(plan: &Plan, output: u64) -> String {
    Obj::new()
        .num("input_tokens", plan.input_tokens)
        .num("cache_creation_input_tokens", 0)
        .num("cache_read_input_tokens", 0)
        .num("output_tokens", output)
        .done()
}

fn anthropic_message(plan: &Plan, complete: bool) -> String {
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

fn anthropic_stream(plan: &Plan) -> Vec<Bytes> {
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
        for piece in [""].into_iter().chain(halves(&c.arguments)) {
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

// === OpenAI Chat Completions ===

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

fn chat_completion(plan: &Plan) -> String {
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

fn chat_stream(plan: &Plan) -> Vec<Bytes> {
    let id = plan.response_id("chatcmpl-");
    let chunk = |delta: String, finish: Option<&str>| {
        let choice = Obj::new()
            .num("index", 0)
            .raw("delta", &delta)
            .raw("logprobs", "null")
            .opt_str("finish_reason", finish)
            .done();
        sse_data(
            &Obj::new()
                .str("id", &id)
                .str("object", "chat.completion.chunk")
                .num("created", CREATED)
                .str("model", &plan.model)
                .str("system_fingerprint", "fp_mock")
                .raw("choices", &array([choice]))
                .done(),
        )
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
        for piece in halves(&c.arguments) {
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
    out.push(sse_data(
        &Obj::new()
            .str("id", &id)
            .str("object", "chat.completion.chunk")
            .num("created", CREATED)
            .str("model", &plan.model)
            .str("system_fingerprint", "fp_mock")
            .raw("choices", "[]")
            .raw("usage", &chat_usage(plan))
            .done(),
    ));
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

// === OpenAI Responses ===

fn responses_items(plan: &Plan, status: &str) -> Vec<String> {
    let mut items = Vec::new();
    if plan.calls.is_empty() {
        if let Some(text) = &plan.text {
            items.push(responses_message(plan, text, status));
        }
    }
    for (i, _) in plan.calls.iter().enumerate() {
        items.push(responses_call(plan, i, status, true));
    }
    items
}

fn responses_message(plan: &Plan, text: &str, status: &str) -> String {
    let part = Obj::new()
        .str("type", "output_text")
        .raw("annotations", "[]")
        .str("text", text)
        .done();
    Obj::new()
        .str("id", &plan.response_id("msg_"))
        .str("type", "message")
        .str("status", status)
        .raw("content", &array([part]))
        .str("role", "assistant")
        .done()
}

fn responses_call(plan: &Plan, i: usize, status: &str, with_args: bool) -> String {
    let c = &plan.calls[i];
    Obj::new()
        .str("id", &plan.call_id("fc_", i))
        .str("type", "function_call")
        .str("status", status)
        .str("arguments", if with_args { &c.arguments } else { "" })
        .str("call_id", &plan.call_id("call_", i))
        .str("name", &c.name)
        .done()
}

fn responses_object(plan: &Plan, complete: bool) -> String {
    let status = if complete { "completed" } else { "in_progress" };
    let output = if complete {
        array(responses_items(plan, "completed"))
    } else {
        "[]".to_string()
    };
    let usage = if complete {
        Obj::new()
            .num("input_tokens", plan.input_tokens)
            .raw("input_tokens_details", r#"{"cached_tokens":0}"#)
            .num("output_tokens", plan.output_tokens)
            .raw("output_tokens_details", r#"{"reasoning_tokens":0}"#)
            .num("total_tokens", plan.input_tokens + plan.output_tokens)
            .done()
    } else {
        "null".to_string()
    };
    Obj::new()
        .str("id", &plan.response_id("resp_"))
        .str("object", "response")
        .num("created_at", CREATED)
        .str("status", status)
        .raw("error", "null")
        .raw("incomplete_details", "null")
        .raw("instructions", "null")
        .str("model", &plan.model)
        .raw("output", &output)
        .bool("parallel_tool_calls", true)
        .raw("previous_response_id", "null")
        .bool("store", true)
        .raw("usage", &usage)
        .done()
}

fn responses_stream(plan: &Plan) -> Vec<Bytes> {
    let mut seq = 0u64;
    let mut out = Vec::new();
    // Each event: `type` and `sequence_number` first, then its fields.
    let mut ev = |kind: &str, fields: Obj| {
        let head = Obj::new()
            .str("type", kind)
            .num("sequence_number", seq)
            .done();
        let body = fields.done();
        let joined = if body == "{}" {
            head
        } else {
            format!("{},{}", &head[..head.len() - 1], &body[1..])
        };
        seq += 1;
        out.push(sse_event(kind, &joined));
    };
    let in_progress = responses_object(plan, false);
    ev("response.created", Obj::new().raw("response", &in_progress));
    ev(
        "response.in_progress",
        Obj::new().raw("response", &in_progress),
    );
    let mut index = 0u64;
    if plan.calls.is_empty() {
        let text = plan.text.clone().unwrap_or_default();
        let item_id = plan.response_id("msg_");
        let empty_item = Obj::new()
            .str("id", &item_id)
            .str("type", "message")
            .str("status", "in_progress")
            .raw("content", "[]")
            .str("role", "assistant")
            .done();
        ev(
            "response.output_item.added",
            Obj::new().num("output_index", 0).raw("item", &empty_item),
        );
        let part = |t: &str| {
            Obj::new()
                .str("type", "output_text")
                .raw("annotations", "[]")
                .str("text", t)
                .done()
        };
        ev(
            "response.content_part.added",
            Obj::new()
                .str("item_id", &item_id)
                .num("output_index", 0)
                .num("content_index", 0)
                .raw("part", &part("")),
        );
        for piece in halves(&text) {
            ev(
                "response.output_text.delta",
                Obj::new()
                    .str("item_id", &item_id)
                    .num("output_index", 0)
                    .num("content_index", 0)
                    .str("delta", piece),
            );
        }
        ev(
            "response.output_text.done",
            Obj::new()
                .str("item_id", &item_id)
                .num("output_index", 0)
                .num("content_index", 0)
                .str("text", &text),
        );
        ev(
            "response.content_part.done",
            Obj::new()
                .str("item_id", &item_id)
                .num("output_index", 0)
                .num("content_index", 0)
                .raw("part", &part(&text)),
        );
        ev(
            "response.output_item.done",
            Obj::new()
                .num("output_index", 0)
                .raw("item", &responses_message(plan, &text, "completed")),
        );
    }
    for (i, c) in plan.calls.iter().enumerate() {
        let item_id = plan.call_id("fc_", i);
        ev(
            "response.output_item.added",
            Obj::new()
                .num("output_index", index)
                .raw("item", &responses_call(plan, i, "in_progress", false)),
        );
        for piece in halves(&c.arguments) {
            ev(
                "response.function_call_arguments.delta",
                Obj::new()
                    .str("item_id", &item_id)
                    .num("output_index", index)
                    .str("delta", piece),
            );
        }
        ev(
            "response.function_call_arguments.done",
            Obj::new()
                .str("item_id", &item_id)
                .num("output_index", index)
                .str("arguments", &c.arguments),
        );
        ev(
            "response.output_item.done",
            Obj::new()
                .num("output_index", index)
                .raw("item", &responses_call(plan, i, "completed", true)),
        );
        index += 1;
    }
    ev(
        "response.completed",
        Obj::new().raw("response", &responses_object(plan, true)),
    );
    out
}

// === Gemini ===

fn gemini_chunk(plan: &Plan, with_text: bool, last: bool) -> String {
    let mut parts = Vec::new();
    if with_text && (plan.calls.is_empty() || !last) {
        if let Some(text) = &plan.text {
            parts.push(Obj::new().str("text", text).done());
        }
    }
    if last {
        for c in &plan.calls {
            parts.push(
                Obj::new()
                    .raw(
                        "functionCall",
                        &Obj::new()
                            .str("name", &c.name)
                            .raw("args", &c.arguments)
                            .done(),
                    )
                    .done(),
            );
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

fn gemini_stream(plan: &Plan, sse: bool) -> Vec<Bytes> {
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

#[cfg(test)]
mod tests;
