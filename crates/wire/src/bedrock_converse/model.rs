//! Borrowed serde shapes of a Bedrock Converse request.
//!
//! A content block is an object with one key naming its kind (`text`,
//! `toolUse`, `toolResult`, `image`, `reasoningContent`, …): one flat
//! struct reads the kinds tool use needs and skips the others.

use std::borrow::Cow;

use ahash::AHashSet;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::splice::{Raw, opt_cow};

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
    /// `input` as it came: `null` too, which Bedrock refuses ("The value at
    /// messages.N.content.J.toolUse.input is empty.").
    #[serde(borrow, default, deserialize_with = "present")]
    pub input: Option<Raw<'a>>,
    /// `server_tool_use` for a system tool Bedrock runs itself (Nova's
    /// `nova_grounding`); absent for a tool the client runs.
    #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
    pub kind: Option<Cow<'a, str>>,
}

impl ToolUse<'_> {
    /// A system tool Bedrock runs itself: its `toolResult` is in the same
    /// assistant message, and the client answers nothing.
    pub fn is_server(&self) -> bool {
        self.kind.as_deref() == Some("server_tool_use")
    }
}

/// `toolResult`: `content` kept raw until read.
#[derive(Deserialize)]
pub(super) struct ToolResult<'a> {
    #[serde(borrow, rename = "toolUseId")]
    pub id: Cow<'a, str>,
    #[serde(borrow, default)]
    pub content: Option<Raw<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub status: Option<Cow<'a, str>>,
}

/// Whether the raw JSON value `v` is an object.
pub(super) fn is_object(v: &str) -> bool {
    v.starts_with('{')
}

/// Whether the raw JSON value `v` is `null`.
pub(super) fn is_null(v: &str) -> bool {
    v == "null"
}

/// For `#[serde(deserialize_with)]` on an `Option<Raw>` field: a `null`
/// is `Some` (serde's `Option` reads it as `None`); only an absent field,
/// by `default`, is `None`.
fn present<'de: 'a, 'a, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Raw<'a>>, D::Error> {
    Raw::deserialize(d).map(Some)
}

impl<'a> ToolUse<'a> {
    /// `input` is an object, or absent.
    pub fn input_is_object(&self) -> bool {
        self.input.is_none_or(|v| is_object(v.0))
    }

    /// `input`, `null` read as absent (the view's arguments are `{}`
    /// either way).
    pub fn input_value(&self) -> Option<Raw<'a>> {
        self.input.filter(|v| !is_null(v.0))
    }
}

/// Whether a `toolResult`'s raw `content` may hold a `json` block: it
/// holds the key as written, or an escape that may spell it (`"js\u006fn"`).
/// Most contents are text blocks alone, and need no parse to say so.
fn may_hold_json(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    memchr::memmem::find(bytes, b"\"json\"").is_some()
        || memchr::memmem::find(bytes, b"\\u").is_some()
}

/// One block of a `toolResult`'s `content`, for its `json`.
#[derive(Deserialize)]
struct JsonPart<'a> {
    #[serde(borrow, default)]
    json: Option<&'a RawValue>,
}

impl ToolResult<'_> {
    /// The index of each `json` block of `content` that is not an object
    /// (none when `content` is not an array of blocks: read elsewhere).
    pub fn json_not_objects(&self) -> Vec<usize> {
        let parts: Vec<JsonPart<'_>> = self
            .content
            .filter(|c| may_hold_json(c.0))
            .and_then(|c| serde_json::from_str(c.0).ok())
            .unwrap_or_default();
        let not = |p: &JsonPart<'_>| p.json.is_some_and(|v| !is_object(v.get()));
        parts
            .iter()
            .enumerate()
            .filter(|(_, p)| not(p))
            .map(|(k, _)| k)
            .collect()
    }

    /// `status: "error"` with `content: []`.
    pub fn is_empty_error(&self) -> bool {
        let empty = self.content.is_some_and(|c| {
            let c = c.0;
            // A raw array, `[` and `]` around JSON whitespace alone.
            c.len() >= 2 && c.starts_with('[') && c[1..c.len() - 1].trim().is_empty()
        });
        empty && self.status.as_deref() == Some("error")
    }
}

/// A message's role and its tool blocks, as pairing needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shape<'a> {
    pub role: Cow<'a, str>,
    /// (block index, id, is a call) of each `toolUse` / `toolResult` the
    /// pairing judges.
    pub tools: Vec<(usize, Cow<'a, str>, bool)>,
    /// The same of each system tool Bedrock ran itself and the results
    /// answering them in this message (see [`Shape::from_blocks`]): the
    /// pairing leaves them alone, their ids are still the message's.
    pub server: Vec<(usize, Cow<'a, str>, bool)>,
    /// The index of each `text` block that is empty or only whitespace
    /// (Bedrock refuses it: "The text field in the ContentBlock object at
    /// messages.N.content.J is blank").
    pub blank: Vec<usize>,
    /// The message holds no block at all (`"content": []`; Bedrock refuses
    /// it: "The content field in the Message object at messages.N is
    /// empty").
    pub empty: bool,
    /// The index of each `toolResult` of `status: "error"` whose `content`
    /// is `[]` (Bedrock refuses it: "The content field at
    /// messages.N.content.J.toolResult cannot be empty when status value is
    /// error.").
    pub empty_errors: Vec<usize>,
    /// Each JSON value Bedrock takes only as an object that is not one, in
    /// block order: a `toolUse`'s `input` (block, `None`), a `json` block
    /// of a `toolResult`'s `content` (block, `Some(part)`). Bedrock refuses
    /// it: "The format of the value at messages.N.content.J.toolUse.input is
    /// invalid. Provide a json object for the field and try again."
    pub not_objects: Vec<(usize, Option<usize>)>,
    /// The index of each `toolUse` whose `input` is `null` (among
    /// `not_objects`, refused in other words: "The value at
    /// messages.N.content.J.toolUse.input is empty.").
    pub null_inputs: Vec<usize>,
    /// The message's last block that is not blank is a `text` block whose
    /// text ends in whitespace ([`crate::prefill::ends_in_space`]): Claude
    /// refuses it in a last `assistant` message, a prefill.
    pub ends_in_space: bool,
    /// Every block of the message is a blank `text` block, or it has none.
    pub only_blank: bool,
}

impl<'a> Shape<'a> {
    pub fn of(m: &Message<'a>) -> Self {
        Shape::from_blocks(m.role.clone(), &m.content)
    }

    /// The shape of a message of `role` holding `blocks`. A system tool
    /// Bedrock runs itself (a `toolUse` of `type: "server_tool_use"`) and
    /// the `toolResult` answering it in the same message are neither a
    /// call the next message must answer nor a result of the turn before:
    /// Bedrock wrote both. Taken for a call and an orphan, a replayed one
    /// was reported as two defects, and `fix` mode turned the server's
    /// result into text and answered the call with an error result.
    ///
    /// Only an assistant message holds them: elsewhere the blocks are
    /// taken as they look.
    pub fn from_blocks(role: Cow<'a, str>, blocks: &[Block<'a>]) -> Self {
        let assistant = role == "assistant";
        let is_server = |u: &ToolUse<'_>| assistant && u.is_server();
        // A set: a client controls how many blocks a message holds.
        let server_ids: AHashSet<&str> = blocks
            .iter()
            .filter_map(|b| b.tool_use.as_ref().filter(|u| is_server(u)))
            .map(|u| &*u.id)
            .collect();
        let (mut tools, mut server, mut blank) = (Vec::new(), Vec::new(), Vec::new());
        let (mut empty_errors, mut not_objects, mut null_inputs) =
            (Vec::new(), Vec::new(), Vec::new());
        for (j, b) in blocks.iter().enumerate() {
            if b.text.as_deref().is_some_and(|t| t.trim().is_empty()) {
                blank.push(j);
            }
            if b.tool_result
                .as_ref()
                .is_some_and(ToolResult::is_empty_error)
            {
                empty_errors.push(j);
            }
            if let Some(u) = b.tool_use.as_ref().filter(|u| !u.input_is_object()) {
                not_objects.push((j, None));
                if u.input.is_some_and(|v| is_null(v.0)) {
                    null_inputs.push(j);
                }
            }
            if let Some(r) = &b.tool_result {
                not_objects.extend(r.json_not_objects().into_iter().map(|k| (j, Some(k))));
            }
            match (&b.tool_use, &b.tool_result) {
                (Some(u), _) if is_server(u) => server.push((j, u.id.clone(), true)),
                (Some(u), _) => tools.push((j, u.id.clone(), true)),
                (None, Some(r)) if server_ids.contains(&*r.id) => {
                    server.push((j, r.id.clone(), false));
                }
                (None, Some(r)) => tools.push((j, r.id.clone(), false)),
                _ => {}
            }
        }
        // The last block that stays: a text ending in whitespace?
        let last = blocks
            .iter()
            .enumerate()
            .rev()
            .find(|(j, _)| blank.binary_search(j).is_err());
        let ends_in_space = last.is_some_and(|(_, b)| {
            b.tool_use.is_none()
                && b.tool_result.is_none()
                && b.text.as_deref().is_some_and(crate::prefill::ends_in_space)
        });
        Shape {
            role,
            tools,
            server,
            only_blank: last.is_none(),
            blank,
            empty: blocks.is_empty(),
            empty_errors,
            not_objects,
            null_inputs,
            ends_in_space,
        }
    }

    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }

    pub fn is_user(&self) -> bool {
        self.role == "user"
    }

    /// (block index, id) of each `toolUse` the pairing judges.
    pub fn calls(&self) -> impl Iterator<Item = (usize, &str)> {
        self.tools.iter().filter(|t| t.2).map(|t| (t.0, &*t.1))
    }

    /// (block index, id) of each `toolResult` the pairing judges.
    pub fn results(&self) -> impl Iterator<Item = (usize, &str)> {
        self.tools.iter().filter(|t| !t.2).map(|t| (t.0, &*t.1))
    }

    /// The id of block `j` when it is the result of a system tool
    /// Bedrock ran.
    pub fn server_result_at(&self, j: usize) -> Option<&str> {
        let at = self.server.binary_search_by_key(&j, |t| t.0).ok()?;
        let (_, id, call) = &self.server[at];
        (!call).then_some(&**id)
    }

    /// (block index, id, is a system tool's) of every `toolUse` block, or
    /// every `toolResult` block (`calls`), in block order: Bedrock's rule
    /// of distinct ids takes them all.
    pub fn all(&self, calls: bool) -> Vec<(usize, &str, bool)> {
        let mut all: Vec<(usize, &str, bool)> = self
            .tools
            .iter()
            .map(|t| (t, false))
            .chain(self.server.iter().map(|t| (t, true)))
            .filter(|(t, _)| t.2 == calls)
            .map(|(t, server)| (t.0, &*t.1, server))
            .collect();
        all.sort_unstable_by_key(|t| t.0);
        all
    }
}
