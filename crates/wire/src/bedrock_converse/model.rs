//! Borrowed serde shapes of a Bedrock Converse request.
//!
//! A content block is an object with one key naming its kind (`text`,
//! `toolUse`, `toolResult`, `image`, `reasoningContent`, …): one flat
//! struct reads the kinds tool use needs and skips the others.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::splice::opt_cow;

/// The request: `messages` and `system`; the model is in the path.
#[derive(Deserialize)]
pub(super) struct Request<'a> {
    #[serde(borrow)]
    pub messages: Vec<Message<'a>>,
    #[serde(borrow, default)]
    pub system: Option<Vec<SystemBlock<'a>>>,
}

/// One `system` block (text only counts for the first-turn hash).
#[derive(Deserialize)]
pub(super) struct SystemBlock<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub text: Option<Cow<'a, str>>,
}

/// One message.
#[derive(Deserialize)]
pub(super) struct Message<'a> {
    #[serde(borrow)]
    pub role: Cow<'a, str>,
    #[serde(borrow)]
    pub content: Vec<Block<'a>>,
}

/// Any content block.
#[derive(Deserialize)]
pub(super) struct Block<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "toolUse")]
    pub tool_use: Option<ToolUse<'a>>,
    #[serde(borrow, default, rename = "toolResult")]
    pub tool_result: Option<ToolResult<'a>>,
}

/// `toolUse`.
#[derive(Deserialize)]
pub(super) struct ToolUse<'a> {
    #[serde(borrow, rename = "toolUseId")]
    pub id: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
}

/// `toolResult`: `content` kept raw until read.
#[derive(Deserialize)]
pub(super) struct ToolResult<'a> {
    #[serde(borrow, rename = "toolUseId")]
    pub id: Cow<'a, str>,
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub status: Option<Cow<'a, str>>,
}

/// A message's role and its tool blocks, as pairing needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shape<'a> {
    pub role: Cow<'a, str>,
    /// (block index, id, is a call) of each `toolUse` / `toolResult`.
    pub tools: Vec<(usize, Cow<'a, str>, bool)>,
}

impl<'a> Shape<'a> {
    pub fn of(m: &Message<'a>) -> Self {
        let tools = m
            .content
            .iter()
            .enumerate()
            .filter_map(|(j, b)| {
                if let Some(u) = &b.tool_use {
                    Some((j, u.id.clone(), true))
                } else {
                    b.tool_result.as_ref().map(|r| (j, r.id.clone(), false))
                }
            })
            .collect();
        Shape {
            role: m.role.clone(),
            tools,
        }
    }

    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }

    pub fn is_user(&self) -> bool {
        self.role == "user"
    }

    /// (block index, id) of each `toolUse`.
    pub fn calls(&self) -> impl Iterator<Item = (usize, &str)> {
        self.tools.iter().filter(|t| t.2).map(|t| (t.0, &*t.1))
    }

    /// (block index, id) of each `toolResult`.
    pub fn results(&self) -> impl Iterator<Item = (usize, &str)> {
        self.tools.iter().filter(|t| !t.2).map(|t| (t.0, &*t.1))
    }
}
