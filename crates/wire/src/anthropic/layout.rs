//! Where everything sits in an Anthropic body: each message's raw text and
//! each block's class and id, for validation and byte-exact repair.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{BlockClass, classify};
use crate::{
    WireError,
    splice::{Str, elements, utf8},
};

/// The messages of a body, located.
pub(super) struct Layout<'a> {
    /// The whole body.
    pub text: &'a str,
    /// The `messages` array.
    pub array: &'a RawValue,
    /// Its elements.
    pub raws: Vec<&'a RawValue>,
    /// Each message, read.
    pub msgs: Vec<Msg<'a>>,
}

/// One message, located.
pub(super) struct Msg<'a> {
    pub role: Cow<'a, str>,
    /// The `content` value.
    pub content: &'a RawValue,
    /// The content blocks; empty when the content is a string.
    pub blocks: Vec<Blk<'a>>,
    /// The raw text of each block.
    pub block_raws: Vec<&'a RawValue>,
    /// `true` when the content is an array.
    pub is_array: bool,
}

/// One content block, located.
pub(super) struct Blk<'a> {
    pub class: BlockClass,
    /// `id` of a call, `tool_use_id` of a result.
    pub id: Cow<'a, str>,
    /// The raw JSON string of that id (for renaming in place).
    pub id_raw: Option<&'a RawValue>,
}

impl Msg<'_> {
    pub fn is_user(&self) -> bool {
        self.role == "user"
    }

    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }

    /// Client `tool_use` blocks: (block index, id).
    pub fn calls(&self) -> impl Iterator<Item = (usize, &str)> {
        self.of(BlockClass::Call)
    }

    /// `tool_result` blocks: (block index, id).
    pub fn results(&self) -> impl Iterator<Item = (usize, &str)> {
        self.of(BlockClass::Result)
    }

    fn of(&self, class: BlockClass) -> impl Iterator<Item = (usize, &str)> {
        self.blocks
            .iter()
            .enumerate()
            .filter(move |(_, b)| b.class == class)
            .map(|(i, b)| (i, &*b.id))
    }
}

pub(super) fn layout(body: &[u8]) -> Result<Layout<'_>, WireError> {
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        messages: &'a RawValue,
    }
    #[derive(Deserialize)]
    struct RawMsg<'a> {
        #[serde(borrow)]
        role: Cow<'a, str>,
        #[serde(borrow)]
        content: &'a RawValue,
    }
    #[derive(Deserialize)]
    struct RawBlock<'a> {
        #[serde(borrow, rename = "type")]
        kind: Cow<'a, str>,
        #[serde(borrow, default)]
        id: Option<&'a RawValue>,
        #[serde(borrow, default)]
        tool_use_id: Option<&'a RawValue>,
    }
    let text = utf8(body)?;
    let top: Top<'_> = serde_json::from_str(text)?;
    let raws = elements(top.messages)?;
    let mut msgs = Vec::with_capacity(raws.len());
    for raw in &raws {
        let m: RawMsg<'_> = serde_json::from_str(raw.get())?;
        let is_array = m.content.get().starts_with('[');
        let block_raws = if is_array {
            elements(m.content)?
        } else {
            Vec::new()
        };
        let mut blocks = Vec::with_capacity(block_raws.len());
        for b in &block_raws {
            let rb: RawBlock<'_> = serde_json::from_str(b.get())?;
            let class = classify(&rb.kind);
            let id_raw = match class {
                BlockClass::Call | BlockClass::ServerCall => rb.id,
                BlockClass::Result | BlockClass::ServerResult => rb.tool_use_id,
                BlockClass::Other => None,
            };
            let id = match id_raw {
                Some(r) => serde_json::from_str::<Option<Str<'_>>>(r.get())?
                    .map(|s| s.0)
                    .unwrap_or_default(),
                None => Cow::Borrowed(""),
            };
            blocks.push(Blk { class, id, id_raw });
        }
        msgs.push(Msg {
            role: m.role,
            content: m.content,
            blocks,
            block_raws,
            is_array,
        });
    }
    Ok(Layout {
        text,
        array: top.messages,
        raws,
        msgs,
    })
}
