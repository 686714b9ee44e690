//! Borrowed serde shapes of an Anthropic Messages request.
//!
//! One flat [`Block`] struct serves every content block kind (no tagged or
//! untagged enums: serde would buffer each block into an intermediate tree).
//! Fields we do not need (thinking text, signatures, image data, tool
//! schemas) are skipped by serde without allocating.

use std::borrow::Cow;

use serde::Deserialize;

// Whitespace as the prefill rule takes it (shared with Bedrock Converse's
// Claude models).
pub(super) use crate::prefill::{ends_in_space, is_js_space};

pub(crate) use crate::splice::Raw;

pub(crate) use crate::content::FlatContent;

/// `metadata`.
#[derive(Deserialize)]
pub(super) struct Metadata<'a> {
    #[serde(borrow, default)]
    pub user_id: Option<Cow<'a, str>>,
}

/// `thread` (the message threads beta): `{"type": "create"}` has the API
/// hold the conversation under the response's `id`; `{"type":
/// "continue", "previous_message_id": …}` resumes from that response, the
/// request carrying only the new messages.
#[derive(Deserialize)]
pub(super) struct Thread<'a> {
    #[serde(borrow, default, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub previous_message_id: Option<Cow<'a, str>>,
}

impl<'a> Thread<'a> {
    /// The response a `continue` resumes from.
    pub fn continues(self) -> Option<Cow<'a, str>> {
        (self.kind.as_deref() == Some("continue"))
            .then_some(self.previous_message_id)
            .flatten()
    }
}

/// Any content block; which fields are set depends on `kind`.
#[derive(Deserialize)]
pub(super) struct Block<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Cow<'a, str>,
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub input: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub tool_use_id: Option<Cow<'a, str>>,
    /// Raw: decoded only when the result is read.
    #[serde(borrow, default)]
    pub content: Option<Raw<'a>>,
    #[serde(default)]
    pub is_error: Option<bool>,
    #[serde(borrow, default)]
    pub text: Option<Cow<'a, str>>,
}

/// What kind of block, as far as tool use is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockClass {
    /// `tool_use`: a client tool call, answered in the next user message.
    Call,
    /// `server_tool_use`, `mcp_tool_use`: run by Anthropic, answered in the
    /// same assistant message.
    ServerCall,
    /// `tool_result`.
    Result,
    /// `web_search_tool_result`, `mcp_tool_result`, …
    ServerResult,
    /// Text, thinking, images, documents, …
    Other,
}

/// Classify a block type name.
pub(super) fn classify(kind: &str) -> BlockClass {
    match kind {
        "tool_use" => BlockClass::Call,
        "tool_result" => BlockClass::Result,
        "server_tool_use" | "mcp_tool_use" => BlockClass::ServerCall,
        k if k.ends_with("_tool_result") => BlockClass::ServerResult,
        _ => BlockClass::Other,
    }
}

/// The API's refusal of a prefill ending in whitespace (a last message of
/// role `assistant` whose content is a string, or ends with a `text`
/// block, ending in whitespace).
pub(super) const TRAILING_WHITESPACE: &str =
    "messages: final assistant content cannot end with trailing whitespace";
