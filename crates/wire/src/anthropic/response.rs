//! The response view of a non-streaming Messages response (or error body).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use super::model::{BlockClass, classify};
use crate::{ResponseView, Usage, WireError};

/// `usage` of a message or a `message_delta`.
#[derive(Deserialize, Default)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
}

pub(super) use crate::api_error::ApiError;

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Vec<RespBlock<'a>>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(borrow, default)]
    error: Option<ApiError<'a>>,
}

#[derive(Deserialize)]
struct RespBlock<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

pub(super) fn usage(u: Option<WireUsage>) -> Usage {
    let u = u.unwrap_or_default();
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
    }
}

/// The response's view: `tool_use` blocks and the server tools'
/// (`server_tool_use`, `mcp_tool_use`, which Anthropic answers in the same
/// message; a result for one of them would be refused) as its calls, the
/// latter marked in `server_calls`.
pub(crate) fn response_view(body: &[u8]) -> Result<ResponseView, WireError> {
    let b: Body<'_> = serde_json::from_slice(body)?;
    let mut calls = Vec::new();
    let mut server_calls = Vec::new();
    for blk in b.content.unwrap_or_default() {
        match classify(&blk.kind) {
            BlockClass::Call => {}
            BlockClass::ServerCall => server_calls.push(calls.len()),
            _ => continue,
        }
        calls.push(ToolCall {
            id: blk.id.unwrap_or_default().into_owned(),
            name: blk.name.unwrap_or_default().into_owned(),
            arguments: blk
                .input
                .map_or_else(|| "{}".to_string(), |r| r.get().to_string()),
        });
    }
    Ok(ResponseView {
        id: b.id.map(Cow::into_owned),
        model: b.model.map(Cow::into_owned),
        calls,
        server_calls,
        call_kinds: Vec::new(),
        usage: usage(b.usage),
        stop_reason: b.stop_reason.map(Cow::into_owned),
        incomplete_reason: None,
        last_call_completed: false,
        error: b.error.map(|e| e.describe()),
        error_status: None,
        truncated: false,
        ended_early: false,
    })
}
