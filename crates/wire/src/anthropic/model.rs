//! Borrowed serde shapes of an Anthropic Messages request.
//!
//! One flat [`Block`] struct serves every content block kind (no tagged or
//! untagged enums: serde would buffer each block into an intermediate tree).
//! Fields we do not need (thinking text, signatures, image data, tool
//! schemas) are skipped by serde without allocating.

use std::{borrow::Cow, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{SeqAccess, Visitor},
};
use serde_json::value::RawValue;

pub(crate) use crate::content::ResultContent;

/// The top level of a request body.
#[derive(Deserialize)]
pub(super) struct Request<'a> {
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(borrow, default)]
    pub system: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub metadata: Option<Metadata<'a>>,
    #[serde(borrow)]
    pub messages: Vec<Message<'a>>,
}

/// `metadata`.
#[derive(Deserialize)]
pub(super) struct Metadata<'a> {
    #[serde(borrow, default)]
    pub user_id: Option<Cow<'a, str>>,
}

/// One message.
#[derive(Deserialize)]
pub(super) struct Message<'a> {
    #[serde(borrow)]
    pub role: Cow<'a, str>,
    #[serde(borrow)]
    pub content: Content<'a>,
}

/// A message's content: a string or blocks.
pub(super) enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
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
    pub input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub content: Option<ResultContent<'a>>,
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

// === impl Content ===

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(4));
                while let Some(b) = seq.next_element::<Block<'de>>()? {
                    blocks.push(b);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(V)
    }
}
