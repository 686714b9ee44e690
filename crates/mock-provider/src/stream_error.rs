//! Errors reported inside a stream that began with 200
//! ([`crate::Fault::ErrorEventAfter`]): the first events of the reply, then
//! the dialect's own error event, then the body ends normally, as the real
//! APIs report a failure once streaming has begun:
//!
//! - Anthropic: `event: error` with `{"type":"error","error":{"type":…,
//!   "message":…}}` (`overloaded_error` "Overloaded", `api_error`
//!   "Internal server error"), which anthropic-sdk-python raises on
//!   (`_streaming.py`);
//! - OpenAI Responses: an `error` event (`ResponseErrorEvent`: `code`,
//!   `message`, `param`, `sequence_number`), then `response.failed` whose
//!   response has `status: "failed"` and its `error` (`ResponseError`,
//!   code `server_error`); over WebSocket the same two events as messages;
//! - OpenAI Chat: a `data: {"error":{…}}` chunk (`server_error`);
//! - Gemini: an `{"error":{"code","message","status"}}` element, in the
//!   SSE or the streamed JSON array (503 `UNAVAILABLE` "The model is
//!   overloaded. Please try again later.", 500 `INTERNAL`);
//! - Bedrock (`invoke-with-response-stream`, `converse-stream`): an
//!   exception frame (`:message-type: exception`, `throttlingException` or
//!   `internalServerException`, `{"message":…}`).

use bytes::Bytes;
use serde_json::{Value, json};
use toolwarden_wire::Dialect;

use crate::render::{sse_data, sse_event};

/// Which failure a mid-stream error reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamError {
    /// The provider is overloaded (Anthropic `overloaded_error`, Gemini
    /// 503 `UNAVAILABLE`, Bedrock `throttlingException`).
    Overloaded,
    /// An internal error (Anthropic `api_error`, Gemini 500 `INTERNAL`,
    /// Bedrock `internalServerException`).
    Internal,
}

/// How a reply's body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// SSE events of this dialect (Gemini's `?alt=sse` included).
    Sse(Dialect),
    /// Gemini's streamed JSON array.
    GeminiArray,
    /// Bedrock's event-stream frames.
    EventStream,
}

/// OpenAI's text for a server error.
const OPENAI_SERVER_ERROR: &str =
    "The server had an error while processing your request. Sorry about that!";

/// The first `n` chunks of a streamed reply, then the error.
pub(crate) fn inject(
    framing: Framing,
    mut chunks: Vec<Bytes>,
    n: usize,
    kind: StreamError,
) -> Vec<Bytes> {
    chunks.truncate(n);
    match framing {
        Framing::Sse(Dialect::Anthropic) => chunks.push(sse_event("error", &anthropic(kind))),
        Framing::Sse(Dialect::OpenAiResponses) => {
            let messages = crate::sse::sse_to_messages(&chunks.concat());
            for (name, event) in responses(&messages, kind) {
                chunks.push(sse_event(name, &event.to_string()));
            }
        }
        Framing::Sse(Dialect::OpenAiChat) => {
            let error = json!({"error": {"message": OPENAI_SERVER_ERROR, "type": "server_error",
                "param": null, "code": null}});
            chunks.push(sse_data(&error.to_string()));
        }
        Framing::Sse(Dialect::Gemini) => {
            chunks.push(Bytes::from(format!("data: {}\r\n\r\n", gemini(kind))));
        }
        Framing::GeminiArray => {
            let error = gemini(kind);
            match chunks.last_mut() {
                None => chunks.push(Bytes::from(format!("[{error}\n]"))),
                Some(last) => {
                    // The array reopened after its last element, if closed.
                    if last.ends_with(b"]") {
                        *last = last.slice(..last.len() - 1);
                    }
                    chunks.push(Bytes::from(format!(",\r\n{error}\n]")));
                }
            }
        }
        Framing::Sse(Dialect::BedrockConverse) | Framing::EventStream => {
            let (name, message) = match kind {
                StreamError::Overloaded => (
                    "throttlingException",
                    "Too many requests, please wait before trying again.",
                ),
                StreamError::Internal => (
                    "internalServerException",
                    "The server encountered an internal error while processing the request.",
                ),
            };
            let payload = json!({"message": message}).to_string();
            chunks.push(Bytes::from(toolwarden_wire::eventstream::encode_exception(
                name,
                payload.as_bytes(),
            )));
        }
    }
    chunks
}

/// A WebSocket turn's first `n` events, then the Responses error events.
pub(crate) fn inject_messages(mut events: Vec<Bytes>, n: usize, kind: StreamError) -> Vec<Bytes> {
    events.truncate(n);
    let more: Vec<Bytes> = responses(&events, kind)
        .into_iter()
        .map(|(_, e)| Bytes::from(e.to_string()))
        .collect();
    events.extend(more);
    events
}

fn anthropic(kind: StreamError) -> String {
    let (kind, message) = match kind {
        StreamError::Overloaded => ("overloaded_error", "Overloaded"),
        StreamError::Internal => ("api_error", "Internal server error"),
    };
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

fn gemini(kind: StreamError) -> String {
    let (code, status, message) = match kind {
        StreamError::Overloaded => (
            503,
            "UNAVAILABLE",
            "The model is overloaded. Please try again later.",
        ),
        StreamError::Internal => (
            500,
            "INTERNAL",
            "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
        ),
    };
    json!({"error": {"code": code, "message": message, "status": status}}).to_string()
}

/// `error` and `response.failed` after `sent` (the events already sent,
/// each one JSON event): numbered after the last one, the failed response
/// being the one `response.created` announced.
fn responses(sent: &[Bytes], kind: StreamError) -> [(&'static str, Value); 2] {
    let parsed: Vec<Value> = sent
        .iter()
        .filter_map(|e| serde_json::from_slice(e).ok())
        .collect();
    let next = parsed
        .iter()
        .filter_map(|e| e.get("sequence_number").and_then(Value::as_u64))
        .max()
        .map_or(0, |n| n + 1);
    let message = match kind {
        StreamError::Overloaded => "The server is overloaded. Please try again later.",
        StreamError::Internal => OPENAI_SERVER_ERROR,
    };
    let error = json!({"type": "error", "sequence_number": next, "code": "server_error",
        "message": message, "param": null});
    let mut response = parsed
        .iter()
        .find_map(|e| e.get("response").cloned())
        .unwrap_or_else(|| json!({"object": "response", "output": []}));
    if let Some(r) = response.as_object_mut() {
        r.insert("status".into(), json!("failed"));
        r.insert(
            "error".into(),
            json!({"code": "server_error", "message": message}),
        );
    }
    let failed =
        json!({"type": "response.failed", "sequence_number": next + 1, "response": response});
    [("error", error), ("response.failed", failed)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(chunks: &[Bytes]) -> String {
        String::from_utf8_lossy(&chunks.concat()).into_owned()
    }

    #[test]
    fn each_dialect_ends_with_its_own_error() {
        let sse = vec![
            Bytes::from_static(b"event: message_start\ndata: {}\n\n"),
            Bytes::from_static(b"event: ping\ndata: {}\n\n"),
        ];
        let out = inject(
            Framing::Sse(Dialect::Anthropic),
            sse,
            1,
            StreamError::Overloaded,
        );
        assert_eq!(
            text(&out),
            "event: message_start\ndata: {}\n\nevent: error\ndata: {\"error\":{\"message\":\"Overloaded\",\"type\":\"overloaded_error\"},\"type\":\"error\"}\n\n"
        );
        let chat = inject(
            Framing::Sse(Dialect::OpenAiChat),
            vec![Bytes::from_static(b"data: {}\n\n")],
            5,
            StreamError::Internal,
        );
        assert!(text(&chat).ends_with("\"type\":\"server_error\"}}\n\n"));
        let gemini = inject(
            Framing::Sse(Dialect::Gemini),
            Vec::new(),
            0,
            StreamError::Overloaded,
        );
        assert!(text(&gemini).contains("\"status\":\"UNAVAILABLE\""));
    }

    #[test]
    fn responses_fail_the_response_they_began() {
        let created = json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_1", "status": "in_progress"}});
        let chunks = vec![sse_event("response.created", &created.to_string())];
        let out = inject(
            Framing::Sse(Dialect::OpenAiResponses),
            chunks,
            1,
            StreamError::Internal,
        );
        let events = crate::sse::sse_to_messages(&out.concat());
        let v: Vec<Value> = events
            .iter()
            .map(|e| serde_json::from_slice(e).unwrap())
            .collect();
        assert_eq!(v[1]["type"], "error");
        assert_eq!(v[1]["sequence_number"], 1);
        assert_eq!(v[1]["code"], "server_error");
        assert_eq!(v[2]["type"], "response.failed");
        assert_eq!(v[2]["sequence_number"], 2);
        assert_eq!(v[2]["response"]["id"], "resp_1");
        assert_eq!(v[2]["response"]["status"], "failed");
        assert!(text(&out).contains("event: response.failed\n"));
    }

    #[test]
    fn a_gemini_array_stays_an_array() {
        let pieces = vec![
            Bytes::from_static(b"[{\"a\":1}\n"),
            Bytes::from_static(b",\r\n{\"a\":2}\n]"),
        ];
        for n in [0, 1, 2] {
            let out = inject(
                Framing::GeminiArray,
                pieces.clone(),
                n,
                StreamError::Internal,
            );
            let v: Value = serde_json::from_slice(&out.concat())
                .unwrap_or_else(|e| panic!("{n}: {e}: {}", text(&out)));
            let items = v.as_array().unwrap();
            assert_eq!(items.len(), n + 1);
            assert_eq!(items[n]["error"]["status"], "INTERNAL");
        }
    }

    #[test]
    fn bedrock_gets_an_exception_frame() {
        let out = inject(
            Framing::EventStream,
            vec![Bytes::from_static(b"frame")],
            1,
            StreamError::Overloaded,
        );
        assert_eq!(out.len(), 2);
        let mut decoder = toolwarden_wire::eventstream::Decoder::new();
        decoder.push(&out[1]);
        let message = decoder.next_message().unwrap().unwrap();
        assert_eq!(message.message_type(), Some("exception"));
        assert_eq!(message.exception_type(), Some("throttlingException"));
    }
}
