//! Where everything sits in an Anthropic body: each message's raw text and
//! each block's class and id, for byte-exact repair ([`layout`]); and the
//! same roles, classes and ids read in one pass without positions, for
//! validation ([`outline`]).

use std::{borrow::Cow, fmt, ops::Deref};

use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, SeqAccess, Visitor},
};
use serde_json::value::RawValue;

use super::model::{BlockClass, classify, ends_in_space, is_js_space};
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

/// One message's role and blocks: what validation looks at.
pub(super) struct Shape<'a> {
    pub role: Cow<'a, str>,
    /// The content blocks; empty when the content is not an array.
    pub blocks: Vec<Blk<'a>>,
    /// The content is a string ending in whitespace, or blocks of which the
    /// last is a `text` block whose text does (see [`ends_in_space`]): the
    /// API refuses it in a last `assistant` message, a prefill.
    pub ends_in_space: bool,
}

/// One message, located.
pub(super) struct Msg<'a> {
    pub shape: Shape<'a>,
    /// The `content` value.
    pub content: &'a RawValue,
    /// The raw text of each block.
    pub block_raws: Vec<&'a RawValue>,
    /// `true` when the content is an array.
    pub is_array: bool,
}

impl<'a> Deref for Msg<'a> {
    type Target = Shape<'a>;

    fn deref(&self) -> &Shape<'a> {
        &self.shape
    }
}

impl<'a> AsRef<Shape<'a>> for Msg<'a> {
    fn as_ref(&self) -> &Shape<'a> {
        &self.shape
    }
}

impl<'a> AsRef<Shape<'a>> for Shape<'a> {
    fn as_ref(&self) -> &Shape<'a> {
        self
    }
}

/// One content block, located.
pub(super) struct Blk<'a> {
    pub class: BlockClass,
    /// `id` of a call, `tool_use_id` of a result.
    pub id: Cow<'a, str>,
    /// The raw JSON string of that id (for renaming in place).
    pub id_raw: Option<&'a RawValue>,
    /// A `tool_result` flagged `is_error: true` with nothing in it (see
    /// [`empty_content`]), which the API refuses.
    pub empty_error: bool,
    /// The raw `content` value of such a result, `null` included (for
    /// filling it in place); `None` when it has none, or when not laid
    /// out.
    pub content_raw: Option<&'a RawValue>,
}

impl Shape<'_> {
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
        let mut space = !is_array && string_ends_in_space(m.content);
        for (j, b) in block_raws.iter().enumerate() {
            let rb: RawBlock<'_> = serde_json::from_str(b.get())?;
            space = j + 1 == block_raws.len() && rb.text_ends_in_space();
            blocks.push(rb.into_blk()?);
        }
        msgs.push(Msg {
            shape: Shape {
                role: m.role,
                blocks,
                ends_in_space: space,
            },
            content: m.content,
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

/// A content block's type and ids, as both readers take it.
#[derive(Deserialize)]
struct RawBlock<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Option<&'a RawValue>,
    /// Raw, `null` kept: the API's `is_error` is a boolean, but reading
    /// it so here would refuse bodies the pairing check took before.
    #[serde(borrow, default, deserialize_with = "present")]
    is_error: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    content: Option<&'a RawValue>,
    /// Raw: decoded only for a message's last block.
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
}

/// A raw value that is a JSON string ending in whitespace. Decoded only
/// when its last character may end an escape (`\n`, `\u3000`, …): any other
/// is the text's own last character, or ends an escape of one that is no
/// whitespace (`\"`, `\\`, `\/`).
fn string_ends_in_space(raw: &RawValue) -> bool {
    let t = raw.get().trim();
    let Some(inner) = t.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return false;
    };
    match inner.chars().next_back() {
        Some(c) if matches!(c, 'n' | 't' | 'r') || c.is_ascii_hexdigit() => {
            serde_json::from_str::<Str<'_>>(t).is_ok_and(|s| ends_in_space(&s.0))
        }
        Some(c) => is_js_space(c),
        None => false,
    }
}

/// A member's raw value when the member is there, `null` included (an
/// `Option<&RawValue>` alone reads `null` as absent).
fn present<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(d).map(Some)
}

/// A result's content with nothing in it: absent or `null` (`None`), `""`
/// or `[]`. The API refuses an error result with such content ("content
/// cannot be empty if `is_error` is true").
pub(super) fn empty_content(raw: Option<&str>) -> bool {
    match raw.map(str::trim) {
        None | Some("null") | Some("\"\"") => true,
        Some(t) => t
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .is_some_and(|inner| inner.trim().is_empty()),
    }
}

impl<'a> RawBlock<'a> {
    /// A `text` block whose text ends in whitespace.
    fn text_ends_in_space(&self) -> bool {
        self.kind == "text" && self.text.is_some_and(string_ends_in_space)
    }

    /// The block's class and the id that matters for it (`id` of a call,
    /// `tool_use_id` of a result; a JSON `null` reads as "").
    fn into_blk(self) -> Result<Blk<'a>, WireError> {
        let class = classify(&self.kind);
        let id_raw = match class {
            BlockClass::Call | BlockClass::ServerCall => self.id,
            BlockClass::Result | BlockClass::ServerResult => self.tool_use_id,
            BlockClass::Other => None,
        };
        let id = match id_raw {
            Some(r) => serde_json::from_str::<Option<Str<'_>>>(r.get())?
                .map(|s| s.0)
                .unwrap_or_default(),
            None => Cow::Borrowed(""),
        };
        let flagged = self.is_error.is_some_and(|r| r.get().trim() == "true");
        let empty_error = class == BlockClass::Result
            && flagged
            && empty_content(self.content.map(RawValue::get));
        Ok(Blk {
            class,
            id,
            id_raw,
            empty_error,
            content_raw: self.content.filter(|_| empty_error),
        })
    }
}

/// What validation reads of a body: each message's shape, and whether it
/// continues a message thread (its first message may answer calls the API
/// holds).
pub(super) struct Outline<'a> {
    pub msgs: Vec<Shape<'a>>,
    pub held: bool,
}

/// The messages' roles and blocks, read in one pass: the same [`Shape`]s
/// [`layout`] finds (and the same errors for the same bodies' messages),
/// without the raw text of each level, which `layout` gets by re-reading
/// it. Validation needs only this.
pub(super) fn outline(body: &[u8]) -> Result<Outline<'_>, WireError> {
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        messages: Vec<OutlineMsg<'a>>,
        #[serde(borrow, default)]
        thread: Option<super::model::Thread<'a>>,
    }
    #[derive(Deserialize)]
    struct OutlineMsg<'a> {
        #[serde(borrow)]
        role: Cow<'a, str>,
        #[serde(borrow)]
        content: Content<'a>,
    }
    let text = utf8(body)?;
    let top: Top<'_> = serde_json::from_str(text)?;
    let held = top
        .thread
        .and_then(super::model::Thread::continues)
        .is_some();
    let mut msgs = Vec::with_capacity(top.messages.len());
    for m in top.messages {
        let (blocks, space) = match m.content.0 {
            Some(raws) => {
                let space = raws.last().is_some_and(RawBlock::text_ends_in_space);
                let blocks = raws
                    .into_iter()
                    .map(RawBlock::into_blk)
                    .collect::<Result<Vec<_>, _>>()?;
                (blocks, space)
            }
            None => (Vec::new(), m.content.1),
        };
        msgs.push(Shape {
            role: m.role,
            blocks,
            ends_in_space: space,
        });
    }
    Ok(Outline { msgs, held })
}

/// A message's `content`: its blocks when it is an array; whether a string
/// ends in whitespace; any other value is skipped (as `layout` does not
/// look inside it).
struct Content<'a>(Option<Vec<RawBlock<'a>>>, bool);

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("message content")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Content<'a>, S::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(4));
                while let Some(b) = seq.next_element::<RawBlock<'a>>()? {
                    blocks.push(b);
                }
                Ok(Content(Some(blocks), false))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Content<'a>, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content(None, false))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Content<'a>, E> {
                Ok(Content(None, ends_in_space(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Content<'a>, E> {
                Ok(Content(None, ends_in_space(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Content<'a>, E> {
                Ok(Content(None, false))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Content<'a>, E> {
                Ok(Content(None, false))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Content<'a>, E> {
                Ok(Content(None, false))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Content<'a>, E> {
                Ok(Content(None, false))
            }
            fn visit_unit<E>(self) -> Result<Content<'a>, E> {
                Ok(Content(None, false))
            }
            fn visit_none<E>(self) -> Result<Content<'a>, E> {
                Ok(Content(None, false))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}
