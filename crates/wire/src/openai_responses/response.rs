//! A whole Responses response body, and the response-side shapes (`CallItem`,
//! `ResponseObject`, …) the stream reads too.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use super::model::{Args, CallKind};
use crate::{ResponseView, Usage, WireError, splice::Raw};

/// An output item (in the body's `output`, or a stream's
/// `response.output_item.*` event): a call when it has a [`CallItem::call_kind`].
///
/// Declared once, for the body and the stream. Not the request side's
/// `model::Item`: output items carry none of `role` and `output`, which
/// `Item` reads for pairing. Their `arguments` are read as
/// [`Args`]: a string for calls, but an object in a `tool_search_call`
/// (which must not make the whole body unreadable).
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
    #[serde(borrow, default)]
    pub arguments: Option<Args<'a>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub input: Option<Cow<'a, str>>,
    /// A built-in `shell`, `local_shell` or `computer` call's arguments.
    #[serde(borrow, default)]
    pub action: Option<Raw<'a>>,
    /// A built-in `computer` call's batched actions (the GA computer
    /// tool's form of its arguments, in place of `action`).
    #[serde(borrow, default)]
    pub actions: Option<Raw<'a>>,
    /// A built-in `apply_patch` call's arguments.
    #[serde(borrow, default)]
    pub operation: Option<Raw<'a>>,
    /// A tool search's: `client` or `server`.
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub execution: Option<Cow<'a, str>>,
    /// `in_progress`, `completed` or `incomplete` (a call the response's
    /// cut left unfinished).
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub status: Option<Cow<'a, str>>,
}

impl<'a> CallItem<'a> {
    /// The kind of call the client must run and answer (a function, custom
    /// or built-in tool's); `None` for anything else, hosted tools' calls
    /// included.
    pub fn call_kind(&self) -> Option<CallKind> {
        let kind = self.kind.as_deref()?;
        CallKind::of_call(kind).or_else(|| {
            let search =
                CallKind::of_tool_search(kind, self.execution.as_deref(), self.call_id.as_deref());
            (search == Some(false)).then_some(CallKind::ToolSearch)
        })
    }

    /// The tool's name: `name`, or a built-in tool's own.
    pub fn take_name(&mut self) -> Option<Cow<'a, str>> {
        match (
            self.name.take(),
            self.call_kind().and_then(CallKind::builtin_name),
        ) {
            (Some(name), _) => Some(name),
            (None, builtin) => builtin.map(Cow::Borrowed),
        }
    }

    /// Whether the provider says the call was written whole (`status:
    /// "completed"`).
    pub fn is_completed(&self) -> bool {
        self.status.as_deref() == Some("completed")
    }

    /// The arguments: `arguments`, a custom tool's `input`, a built-in's
    /// `action` (a computer call's batched `actions`) or `operation` as
    /// JSON text, read as the request side reads a call in the history
    /// (`model::Item::builtin_arguments`), so that a turn's fingerprint is
    /// the same on both sides.
    pub fn take_arguments(&mut self) -> Option<Cow<'a, str>> {
        (self.arguments.take().map(|t| t.0))
            .or_else(|| self.input.take())
            .or_else(|| {
                (self.action.or(self.actions).or(self.operation)).map(|r| Cow::Borrowed(r.0))
            })
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
    #[serde(borrow, default)]
    pub incomplete_details: Option<IncompleteDetails<'a>>,
}

/// A response's `incomplete_details`: why its `status` is `incomplete`
/// (`max_output_tokens`, `content_filter`).
#[derive(Deserialize)]
pub(super) struct IncompleteDetails<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub reason: Option<Cow<'a, str>>,
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
        incomplete_details: Option<IncompleteDetails<'a>>,
        #[serde(borrow, default)]
        output: Vec<CallItem<'a>>,
    }
    let b: Body<'_> = serde_json::from_slice(body)?;
    let mut calls = Vec::new();
    let mut call_kinds = Vec::new();
    let mut last_call_completed = false;
    for mut i in b.output {
        let Some(kind) = i.call_kind() else { continue };
        if kind != CallKind::Function {
            call_kinds.push((calls.len(), kind));
        }
        last_call_completed = i.is_completed();
        calls.push(ToolCall {
            name: i.take_name().map(Cow::into_owned).unwrap_or_default(),
            arguments: i.take_arguments().map(Cow::into_owned).unwrap_or_default(),
            id: i.call_id.map(Cow::into_owned).unwrap_or_default(),
        });
    }
    Ok(ResponseView {
        id: b.id.map(Cow::into_owned),
        model: b.model.map(Cow::into_owned),
        calls,
        call_kinds,
        last_call_completed,
        usage: b.usage.map(Usage::from).unwrap_or_default(),
        stop_reason: b.status.map(Cow::into_owned),
        incomplete_reason: b
            .incomplete_details
            .and_then(|d| d.reason)
            .map(Cow::into_owned),
        error: b.error.and_then(|e| e.text()),
        error_status: None,
        truncated: false,
        ended_early: false,
        server_calls: Vec::new(),
    })
}
