//! Borrowed serde shapes of a Chat Completions request, response and
//! stream chunk. Flat structs only: no tagged enums on the hot path.

use std::borrow::Cow;

use serde::Deserialize;

use crate::splice::Raw;

/// The top level of a request body.
#[derive(Deserialize)]
pub(super) struct Request<'a> {
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(borrow)]
    pub messages: Vec<Message<'a>>,
    /// How many choices to generate, raw (read as a count when it is one).
    #[serde(borrow, default)]
    pub n: Option<Raw<'a>>,
}

/// One message of any role.
#[derive(Deserialize)]
pub(super) struct Message<'a> {
    #[serde(borrow)]
    pub role: Cow<'a, str>,
    /// Raw: decoded only for the first-turn hash and when a result is
    /// read.
    #[serde(borrow, default)]
    pub content: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<ToolCallIn<'a>>>,
    #[serde(borrow, default)]
    pub tool_call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub function_call: Option<FunctionIn<'a>>,
}

/// An entry of `tool_calls` (request history, response message or stream
/// delta): a `function` or a `custom` tool call.
#[derive(Deserialize)]
pub(super) struct ToolCallIn<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub function: Option<FunctionIn<'a>>,
    #[serde(borrow, default)]
    pub custom: Option<CustomIn<'a>>,
}

/// `function` of a tool call, or a legacy `function_call`.
#[derive(Deserialize)]
pub(super) struct FunctionIn<'a> {
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<Cow<'a, str>>,
}

/// `custom` of a custom tool call: free-text input.
#[derive(Deserialize)]
pub(super) struct CustomIn<'a> {
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub input: Option<Cow<'a, str>>,
}

impl<'a> ToolCallIn<'a> {
    /// (name, arguments) of a function or custom call.
    pub fn parts(self) -> (Cow<'a, str>, Cow<'a, str>) {
        match (self.function, self.custom) {
            (Some(f), _) => (f.name.unwrap_or_default(), f.arguments.unwrap_or_default()),
            (None, Some(c)) => (c.name.unwrap_or_default(), c.input.unwrap_or_default()),
            (None, None) => (Cow::Borrowed(""), Cow::Borrowed("")),
        }
    }
}

/// The synthetic id of the `n`-th legacy `function_call` (0-based), which
/// has no id on the wire.
pub(crate) fn legacy_id(name: &str, n: usize) -> String {
    format!("function:{name}#{n}")
}

/// `usage`.
#[derive(Deserialize, Default)]
pub(super) struct ChatUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
}

pub(super) use crate::api_error::ApiError;

/// A response body or a stream chunk.
#[derive(Deserialize)]
pub(super) struct Completion<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    pub usage: Option<ChatUsage>,
    #[serde(borrow, default)]
    pub error: Option<ApiError<'a>>,
}

/// A choice: `message` in a body, `delta` in a chunk.
#[derive(Deserialize)]
pub(super) struct Choice<'a> {
    #[serde(default)]
    pub index: u64,
    #[serde(borrow, default)]
    pub message: Option<Delta<'a>>,
    #[serde(borrow, default)]
    pub delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    pub finish_reason: Option<Cow<'a, str>>,
}

/// The tool-relevant part of a message or delta.
#[derive(Deserialize)]
pub(super) struct Delta<'a> {
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<ToolCallIn<'a>>>,
    #[serde(borrow, default)]
    pub function_call: Option<FunctionIn<'a>>,
}
