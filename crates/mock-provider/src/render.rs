//! A [`Plan`] as each dialect's response: a JSON body, or the stream of
//! events the real API sends (one `Bytes` per event, written separately).

use bytes::Bytes;
use toolwarden_wire::Dialect;

use crate::plan::Plan;

mod anthropic;
mod chat;
mod converse;
mod gemini;
mod responses;

use anthropic::{anthropic_message, anthropic_stream};
use chat::{chat_completion, chat_stream};
use converse::{converse_response, converse_stream};
use gemini::{gemini_chunk, gemini_stream};
use responses::{responses_object, responses_stream};

/// The fixed `created` timestamp (deterministic bodies).
const CREATED: u64 = 1_763_769_600;

/// The non-streaming response body.
pub(crate) fn json_body(dialect: Dialect, plan: &Plan) -> String {
    match dialect {
        Dialect::Anthropic => anthropic_message(plan, true),
        Dialect::OpenAiChat => chat_completion(plan),
        Dialect::OpenAiResponses => responses_object(plan, true),
        Dialect::Gemini => gemini_chunk(plan, true, true),
        Dialect::BedrockConverse => converse_response(plan),
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
        Dialect::BedrockConverse => converse_stream(plan),
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

/// Split text into `n` pieces (at least 1) of about equal length, cut at
/// char boundaries only (so inside a JSON escape such as `\"` or
/// `\u00e9` too, as token-sized fragments are), to stream it as deltas.
fn pieces(s: &str, n: usize) -> Vec<&str> {
    let n = n.max(1);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..=n {
        let mut end = if k == n { s.len() } else { s.len() * k / n };
        while !s.is_char_boundary(end) {
            end += 1;
        }
        if end > start || (k == n && out.is_empty()) {
            out.push(&s[start..end]);
            start = end;
        }
    }
    out
}

/// Split JSON text in two pieces (at a char boundary) to stream it as deltas.
fn halves(s: &str) -> [&str; 2] {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    [&s[..mid], &s[mid..]]
}

#[cfg(test)]
mod tests;
