//! A whole Responses response body, and the response-side shapes (`CallItem`,
//! `ResponseObject`, …) the stream reads too.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use crate::{ResponseView, Usage, WireError};

/// An output item (in the body's `output`, or a stream's
/// `response.output_item.*` event): a call when [`CallItem::is_call`].
///
/// Declared once, for the body and the stream. Not the request side's
/// `model::Item`: output items carry `arguments` / `input` as plain strings
/// (an input item's may be content parts, `model::Text`) and none of
/// `role`, `output`, `status`, which `Item` reads for pairing.
#[derive(Deserialize)]
pub(super) struct CallItem<'a> {
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "type"
    )]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub call_id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub arguments: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub input: Option<Cow<'a, str>>,
}

impl CallItem<'_> {
    /// A `function_call` or a `custom_tool_call`.
    pub fn is_call(&self) -> bool {
        matches!(
            self.kind.as_deref(),
            Some("function_call") | Some("custom_tool_call")
        )
    }
}

/// A Response object (the body, or `response` in stream events).
#[derive(Deserialize)]
pub(super) struct ResponseObject<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub status: Option<Cow<'a, str>>,
    #[serde(default)]
    pub usage: Option<RawUsage>,
    #[serde(borrow, default)]
    pub error: Option<ErrorObject<'a>>,
}

#[derive(Deserialize, Default)]
pub(super) struct RawUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

impl From<RawUsage> for Usage {
    fn from(u: RawUsage) -> Usage {
        Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

/// `{"code": …, "message": …}`.
#[derive(Deserialize)]
pub(super) struct ErrorObject<'a> {
    #[serde(borrow, default)]
    code: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    message: Option<Cow<'a, str>>,
}

impl ErrorObject<'_> {
    /// `code: message`, or whichever is present.
    pub fn text(&self) -> Option<String> {
        let code = self
            .code
            .and_then(|c| match serde_json::from_str::<String>(c.get()) {
                Ok(s) => Some(s),
                Err(_) if c.get() == "null" => None,
                Err(_) => Some(c.get().to_owned()),
            });
        match (&code, &self.message) {
            (Some(c), Some(m)) => Some(format!("{c}: {m}")),
            (None, Some(m)) => Some(m.to_string()),
            (Some(c), None) => Some(c.to_string()),
            (None, None) => None,
        }
    }
}

/// The event type of a stream event's data: the leading `"type"` when the
/// object starts with it (as OpenAI writes them), else a parse of `type`.
pub(super) fn type_of(data: &[u8]) -> Option<&[u8]> {
    const LEAD: &[u8] = b"{\"type\":\"";
    if let Some(rest) = data.strip_prefix(LEAD) {
        let end = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[end] == b'"' {
            return Some(&rest[..end]);
        }
    }
    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(borrow, rename = "type")]
        kind: &'a str,
    }
    let t: T<'_> = serde_json::from_slice(data).ok()?;
    // Re-find the slice inside `data` so it borrows from it.
    let at = memchr::memmem::find(data, t.kind.as_bytes())?;
    Some(&data[at..at + t.kind.len()])
}

/// See [`crate::response_view`].
pub(crate) fn response_view(body: &[u8]) -> Result<ResponseView, WireError> {
    #[derive(Deserialize)]
    struct Body<'a> {
        #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
        id: Option<Cow<'a, str>>,
        #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
        model: Option<Cow<'a, str>>,
        #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
        status: Option<Cow<'a, str>>,
        #[serde(default)]
        usage: Option<RawUsage>,
        #[serde(borrow, default)]
        error: Option<ErrorObject<'a>>,
        #[serde(borrow, default)]
        output: Vec<CallItem<'a>>,
    }
    let b: Body<'_> = serde_json::from_slice(body)?;
    Ok(ResponseView {
        id: b.id.map(Cow::into_owned),
        model: b.model.map(Cow::into_owned),
        calls: b
            .output
            .into_iter()
            .filter(CallItem::is_call)
            .map(|i| ToolCall {
                id: i.call_id.map(Cow::into_owned).unwrap_or_default(),
                name: i.name.map(Cow::into_owned).unwrap_or_default(),
                arguments: i
                    .arguments
                    .or(i.input)
                    .map(Cow::into_owned)
                    .unwrap_or_default(),
            })
            .collect(),
        usage: b.usage.map(Usage::from).unwrap_or_default(),
        stop_reason: b.status.map(Cow::into_owned),
        error: b.error.and_then(|e| e.text()),
        error_status: None,
        truncated: false,
        ended_early: false,
        server_calls: Vec::new(),
    })
}
