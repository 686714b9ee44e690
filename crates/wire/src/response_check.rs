//! Whether a body is a whole, non-streaming response of a dialect at all:
//! the top-level shape only. [`crate::response_view`] reads what it can of
//! any JSON (the gateway forwards everything); a program that acts on "no
//! tool calls" (an agent loop ending its run) checks this first, so another
//! dialect's body, an API error or a stream is not taken for a final turn.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::{Dialect, WireError, WireErrorKind};

/// `Ok` when `body` has the top-level shape of a non-streaming response in
/// `dialect`; the fields' contents are not checked (an empty `content` or
/// `choices` array, a response without tool calls, are responses):
///
/// | dialect | a JSON object with |
/// |---|---|
/// | Anthropic | `"type": "message"` or a `content` array |
/// | OpenAI Chat | a `choices` array, or `"object": "chat.completion"` |
/// | OpenAI Responses | an `output` array, or `"object": "response"` |
/// | Gemini | a `candidates` array or `promptFeedback` (or a non-empty JSON array of them: `streamGenerateContent` without SSE) |
/// | Bedrock Converse | an `output` object or a `stopReason` |
///
/// Otherwise a [`WireErrorKind::Shape`] error (an SSE stream:
/// [`WireErrorKind::InvalidJson`]) that says what was expected and what the
/// body is: an API error (with its message; for AWS's `{"message": …}`
/// bodies with the type from `__type` or `code` when the body has one — AWS
/// puts it in the `x-amzn-errortype` header, which this does not see), a
/// stream, an empty array, or an object with which top-level keys.
///
/// ```
/// use toolwarden_wire::{check_response, Dialect, WireErrorKind};
///
/// let chat = br#"{"object":"chat.completion","choices":[]}"#;
/// assert!(check_response(Dialect::OpenAiChat, chat).is_ok());
/// let err = check_response(Dialect::Anthropic, chat).unwrap_err();
/// assert_eq!(err.kind(), WireErrorKind::Shape);
/// assert!(err.to_string().contains("`choices`"), "{err}");
/// ```
pub fn check_response(dialect: Dialect, body: &[u8]) -> Result<(), WireError> {
    let start = body.iter().position(|b| !b.is_ascii_whitespace());
    let rest = start.map_or(&[][..], |i| &body[i..]);
    if is_sse(rest) {
        return Err(WireError::new(
            WireErrorKind::InvalidJson,
            format!(
                "{}; this is a server-sent event stream (StreamParser reads streams)",
                expected(dialect)
            ),
        ));
    }
    if dialect == Dialect::Gemini && rest.first() == Some(&b'[') {
        let chunks: Vec<&RawValue> = serde_json::from_slice(body)?;
        if chunks.is_empty() {
            // A streamed array holds at least one chunk: `[]` is no answer.
            return Err(WireError::new(
                WireErrorKind::Shape,
                format!("{}; found an empty JSON array", expected(dialect)),
            ));
        }
        return chunks
            .iter()
            .try_for_each(|c| check_object(dialect, c.get().as_bytes()));
    }
    check_object(dialect, body)
}

/// One JSON object's top-level keys against the dialect's markers.
fn check_object(dialect: Dialect, body: &[u8]) -> Result<(), WireError> {
    let top: BTreeMap<String, &RawValue> = serde_json::from_slice(body).map_err(|e| {
        let e = WireError::from(e);
        if e.kind() == WireErrorKind::Shape {
            // Valid JSON, but not an object.
            WireError::new(
                WireErrorKind::Shape,
                format!("{}; found JSON that is not an object", expected(dialect)),
            )
        } else {
            e
        }
    })?;
    let is = |key: &str, first: u8| top.get(key).is_some_and(|v| v.get().as_bytes()[0] == first);
    let string = |key: &str, want: &str| {
        top.get(key)
            .and_then(|v| serde_json::from_str::<&str>(v.get()).ok())
            == Some(want)
    };
    let ok = match dialect {
        Dialect::Anthropic => string("type", "message") || is("content", b'['),
        Dialect::OpenAiChat => is("choices", b'[') || string("object", "chat.completion"),
        Dialect::OpenAiResponses => is("output", b'[') || string("object", "response"),
        Dialect::Gemini => is("candidates", b'[') || is("promptFeedback", b'{'),
        Dialect::BedrockConverse => is("output", b'{') || top.contains_key("stopReason"),
    };
    if ok {
        return Ok(());
    }
    let found = if top.get("error").is_some_and(|v| v.get() != "null") || string("type", "error") {
        let said = crate::response_view(dialect, body)
            .ok()
            .and_then(|v| v.error)
            .unwrap_or_default();
        format!("found the provider's error response: {said}")
    } else if let Some(said) = aws_error(dialect, &top) {
        said
    } else if top.is_empty() {
        "found an empty object".to_string()
    } else {
        let keys: Vec<String> = top.keys().take(8).map(|k| format!("`{k}`")).collect();
        let more = if top.len() > 8 { ", …" } else { "" };
        format!(
            "found an object with {}{more} (another dialect's response?)",
            keys.join(", ")
        )
    };
    Err(WireError::new(
        WireErrorKind::Shape,
        format!("{}; {found}", expected(dialect)),
    ))
}

/// An AWS error body (Bedrock's, also for Anthropic models through Bedrock
/// `invoke`): `{"message": "…"}` or `Message`, with at most the type beside
/// it (`__type`, `code`). For Bedrock Converse, any object with a string
/// `message` (a Converse response has none at the top), since some
/// exceptions add fields of their own (`originalStatusCode`).
fn aws_error(dialect: Dialect, top: &BTreeMap<String, &RawValue>) -> Option<String> {
    let text = |key: &str| {
        top.get(key)
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
    };
    let message = text("message").or_else(|| text("Message"))?;
    let only_error_keys = top
        .keys()
        .all(|k| ["message", "Message", "__type", "code", "Code"].contains(&k.as_str()));
    if dialect != Dialect::BedrockConverse && !only_error_keys {
        return None;
    }
    let whose = if dialect == Dialect::BedrockConverse {
        "Bedrock's"
    } else {
        "an AWS"
    };
    let kind = text("__type")
        .or_else(|| text("code"))
        .or_else(|| text("Code"))
        .map(|t| aws_error_type(&t).to_string())
        .filter(|t| !t.is_empty());
    Some(match kind {
        Some(kind) => format!("found {whose} error response: {kind}: {message}"),
        None => format!(
            "found {whose} error response: {message} (its type is in the response's `x-amzn-errortype` header)"
        ),
    })
}

/// The error's name in an AWS error type, as the `x-amzn-errortype` header
/// and the `__type` field write it: `ValidationException`, from
/// `ValidationException:http://internal.amazon.com/coral/…` or
/// `com.amazonaws.bedrock#ValidationException`.
fn aws_error_type(raw: &str) -> &str {
    let name = raw.split(':').next().unwrap_or(raw);
    name.rsplit('#').next().unwrap_or(name).trim()
}

/// What a response of `dialect` looks like, for the error message.
fn expected(dialect: Dialect) -> String {
    let shape = match dialect {
        Dialect::Anthropic => {
            "an Anthropic Messages response: a JSON object with `\"type\": \"message\"` and a `content` array"
        }
        Dialect::OpenAiChat => {
            "an OpenAI Chat Completions response: a JSON object with a `choices` array"
        }
        Dialect::OpenAiResponses => {
            "an OpenAI Responses response: a JSON object with an `output` array"
        }
        Dialect::Gemini => {
            "a Gemini generateContent response: a JSON object with `candidates` or `promptFeedback`"
        }
        Dialect::BedrockConverse => {
            "a Bedrock Converse response: a JSON object with `output` and `stopReason`"
        }
    };
    format!("expected a whole (non-streaming) body of {shape}")
}

/// Whether the body starts as an SSE stream does.
fn is_sse(rest: &[u8]) -> bool {
    [&b"data:"[..], b"event:", b"id:", b"retry:", b":"]
        .iter()
        .any(|p| rest.starts_with(p))
}

#[cfg(test)]
mod tests;
