//! The response view of a non-streaming Converse response (or error body).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use crate::{ResponseView, Usage, WireError, splice::opt_cow};

/// `usage` of a response or a stream's `metadata` event.
#[derive(Deserialize, Default)]
pub(super) struct WireUsage {
    #[serde(default, rename = "inputTokens")]
    pub input_tokens: Option<u64>,
    #[serde(default, rename = "outputTokens")]
    pub output_tokens: Option<u64>,
}

impl WireUsage {
    pub fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        }
    }
}

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    output: Option<Output<'a>>,
    #[serde(borrow, default, rename = "stopReason", deserialize_with = "opt_cow")]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// An error body: `{"message": "…"}` (AWS JSON protocol; the type is in
    /// the `x-amzn-ErrorType` header).
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "Message", deserialize_with = "opt_cow")]
    message_upper: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Output<'a> {
    #[serde(borrow, default)]
    message: Option<OutMessage<'a>>,
}

#[derive(Deserialize)]
struct OutMessage<'a> {
    #[serde(borrow, default)]
    content: Vec<OutBlock<'a>>,
}

#[derive(Deserialize)]
struct OutBlock<'a> {
    #[serde(borrow, default, rename = "toolUse")]
    tool_use: Option<OutToolUse<'a>>,
}

#[derive(Deserialize)]
struct OutToolUse<'a> {
    #[serde(borrow, default, rename = "toolUseId", deserialize_with = "opt_cow")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    /// `server_tool_use` for a system tool Bedrock runs itself (Nova's
    /// `nova_grounding`, `nova_code_interpreter`), whose `toolResult`
    /// follows in the same message; absent for the client's tools.
    #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
    kind: Option<Cow<'a, str>>,
}

/// Whether a `toolUse` (or a stream's `start.toolUse`) `type` marks a
/// call Bedrock runs itself.
pub(super) fn is_server_tool(kind: Option<&str>) -> bool {
    kind == Some("server_tool_use")
}

pub(crate) fn response_view(body: &[u8]) -> Result<ResponseView, WireError> {
    let b: Body<'_> = serde_json::from_slice(body)?;
    let uses = b
        .output
        .and_then(|o| o.message)
        .map(|m| m.content)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|blk| blk.tool_use);
    let mut calls = Vec::new();
    let mut server_calls = Vec::new();
    for u in uses {
        if is_server_tool(u.kind.as_deref()) {
            server_calls.push(calls.len());
        }
        calls.push(ToolCall {
            id: u.id.unwrap_or_default().into_owned(),
            name: u.name.unwrap_or_default().into_owned(),
            arguments: u
                .input
                .map_or_else(|| "{}".to_string(), |r| r.get().to_string()),
        });
    }
    Ok(ResponseView {
        id: None,
        model: None,
        calls,
        usage: b.usage.as_ref().map(WireUsage::usage).unwrap_or_default(),
        stop_reason: b.stop_reason.map(Cow::into_owned),
        incomplete_reason: None,
        last_call_completed: false,
        error: b.message.or(b.message_upper).map(Cow::into_owned),
        error_status: None,
        truncated: false,
        ended_early: false,
        server_calls,
        call_kinds: Vec::new(),
    })
}
