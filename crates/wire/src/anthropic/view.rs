//! The request view: calls and results of an Anthropic Messages body.
//!
//! Verdicts: the Messages API has an error flag, so it decides.
//! `is_error: true` is an explicit failure, `is_error: false` an explicit
//! success. An absent `is_error` is decided **per conversation** (one
//! request body, which carries the whole history):
//!
//! - if any result in the conversation carries `is_error: false`, the
//!   client flags its successes too — Claude Code sets `is_error: true` on
//!   every failure and `is_error: false` on many successes (Bash), from its
//!   first turns — so an unflagged result is a success (`Basis::None`) and
//!   the content detector is *not* run (it would only add false positives
//!   on the main client, and cost more than the parse itself), except for
//!   the harness's refusals;
//! - else the client flags nothing, or its errors alone: the Vercel AI SDK
//!   (and OpenCode on it) sets `is_error: true` on a tool that threw, but a
//!   tool that returns its failure as text (the output of a shell command
//!   that failed) goes unflagged. Unflagged results go to the content
//!   detector like a flagless dialect's (`client` or `heuristic` basis).
//!
//! MCP-style `isError` carried inside the content is honoured first
//! (explicit).
//! Server tool results (`web_search_tool_result`, …) are explicit: their
//! content is either results or a `*_tool_result_error` object.
//!
//! These rules run when a result is read ([`read_result`], called by
//! [`crate::ResultView::read`]), not while the body is parsed.
//!
//! Speed: the body is validated as UTF-8 once (SIMD) and read by the fast
//! path (`fast`: the SIMD scanner of [`crate::scan`], which skips and
//! checks long strings 64 bytes at a time), or, for a body it does not take
//! (invalid, or a shape only serde accepts), by serde seeds that hand each
//! content block (one flat borrowed struct, see `model`) to the view as
//! soon as it is parsed. Both feed the same [`Builder`]: no intermediate
//! `Value`, no per-message vectors, no per-string UTF-8 checks, and result
//! contents kept as raw JSON (syntax checked, not decoded).

use std::{borrow::Cow, fmt};

use ahash::AHashMap;

use serde::{
    Deserializer,
    de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor},
};
use serde_json::value::RawValue;
use toolwarden_core::Verdict;

use super::{
    layout::{Blk, Shape, empty_content},
    model::{Block, BlockClass, FlatContent, Metadata, Thread, classify, ends_in_space},
    validate::defects,
};
use crate::{
    CallView, RequestView, ResultView, WireError, WireErrorKind,
    opening::OpeningHash,
    raw_result::RawResult,
    scan::{Bail, Fast},
    splice::{Str, utf8},
    text::{Fnv64, mcp_is_error},
    text_answers::{self, TextSteps},
};

/// See [`crate::request_view`]; verdicts are decided by [`read_result`].
pub(crate) fn request_view<'a>(body: &'a [u8]) -> Result<RequestView<'a>, WireError> {
    read(body, false).map(|(view, _)| view)
}

/// See [`crate::inspect`]: the view and, from the same pass, the roles,
/// block classes and ids validation looks at (the outline `validate`
/// reads on its own). A body the view refuses is validated on its own, so
/// the defects are always those [`super::validate()`] finds.
pub(crate) fn inspect(body: &[u8]) -> crate::Inspection<'_> {
    crate::Inspection::of(read(body, true), || super::validate(body))
}

/// The view; with `check`, also the defects of the shapes collected on the way.
/// The fast path ([`super::fast`]) reads the body first; a body it does
/// not take is read again by the serde seeds below, from the start.
fn read(body: &[u8], check: bool) -> crate::Pass<'_> {
    let text = utf8(body)?;
    match fast(text, check) {
        Ok(b) => b.finish(),
        Err(Bail) => seeds(text, check)?.finish(),
    }
}

/// See [`crate::fast_path_agrees`].
pub(crate) fn fast_path_agrees(body: &[u8]) -> Result<(), String> {
    let Ok(text) = utf8(body) else {
        return Ok(());
    };
    fast_then_seeds(text).unwrap_or(Ok(()))
}

/// `None` when the fast path does not take `text`; else whether the serde
/// seeds read the same view and defects (see [`crate::same_pass`]).
pub(super) fn fast_then_seeds(text: &str) -> Option<Result<(), String>> {
    let fast = fast(text, true).ok().map(Builder::finish);
    crate::same_pass(fast, || {
        format!("{:?}", seeds(text, true).and_then(Builder::finish))
    })
}

/// The body read by the fast path.
fn fast(text: &str, check: bool) -> Fast<Builder<'_>> {
    let mut b = Builder::new(check);
    super::fast::read(text, &mut b)?;
    Ok(b)
}

/// The body read by the serde seeds.
fn seeds(text: &str, check: bool) -> Result<Builder<'_>, WireError> {
    let mut b = Builder::new(check);
    let mut de = serde_json::Deserializer::from_str(text);
    (Top(&mut b)).deserialize(&mut de)?;
    de.end()?;
    Ok(b)
}

/// The view under construction, fed one block at a time by either reader
/// (the fast path in `fast`, the serde seeds here).
#[derive(Default)]
pub(super) struct Builder<'a> {
    pub view: RequestView<'a>,
    names: AHashMap<Cow<'a, str>, usize>,
    /// The raw `system` value.
    pub system: Option<&'a str>,
    last_assistant: Option<usize>,
    /// The assistant message before `last_assistant`.
    assistant_before_last: Option<usize>,
    /// The text hash of the first user message, once seen.
    first_user_hash: Option<u64>,
    pub has_messages: bool,
    /// A `thread` was read (a second one is refused).
    pub has_thread: bool,
    /// Each message's role and blocks, when inspecting (see [`inspect`]).
    shapes: Option<Vec<Shape<'a>>>,
    /// The blocks of the message being read, when inspecting.
    blocks: Vec<Blk<'a>>,
    /// Whether the content read so far of the message being read ends in
    /// whitespace (see [`Shape::ends_in_space`]), when inspecting.
    ends_in_space: bool,
    /// Whether the message being read holds calls or results of the API's
    /// own (else it is text alone, which may answer calls in text).
    api_blocks: bool,
    /// A client that answers calls in text ([`crate::text_answers`]).
    steps: TextSteps,
}

impl<'a> Builder<'a> {
    fn new(check: bool) -> Builder<'a> {
        Builder {
            shapes: check.then(Vec::new),
            ..Builder::default()
        }
    }

    /// A hasher for a message's text while the first user message is not
    /// known (text is hashed only until then).
    pub fn text_hasher(&self) -> Option<OpeningHash> {
        self.first_user_hash.is_none().then(OpeningHash::default)
    }

    /// The message at index `i` has been read: its role, its text's hash
    /// from [`Builder::text_hasher`], and its content's raw JSON.
    pub fn message(
        &mut self,
        role: Cow<'a, str>,
        i: usize,
        text: Option<OpeningHash>,
        content: &'a str,
    ) {
        let assistant = role == "assistant";
        let user = role == "user";
        match (assistant, user, std::mem::take(&mut self.api_blocks)) {
            (true, _, false) => self.steps.assistant(Some(content), i, &mut self.view.calls),
            // `new` is decided once the whole body is read (`finish`).
            (_, true, false) => self
                .steps
                .user(Some(content), i, false, &mut self.view.results),
            _ => self.steps.other(),
        }
        if let Some(shapes) = &mut self.shapes {
            shapes.push(Shape {
                role,
                blocks: std::mem::take(&mut self.blocks),
                ends_in_space: std::mem::take(&mut self.ends_in_space),
            });
        }
        if assistant {
            self.assistant_before_last = self.last_assistant;
            self.last_assistant = Some(i);
        } else if user && self.first_user_hash.is_none() {
            self.first_user_hash = text.map(|text| first_user_hash(text, content));
        }
    }

    /// The body's `thread`.
    pub fn thread(&mut self, thread: Option<Thread<'a>>) {
        self.has_thread = true;
        self.view.threaded = thread.is_some();
        self.view.previous_response_id = thread.and_then(Thread::continues);
    }

    /// The view and the defects, once the whole body is read.
    pub fn finish(self) -> crate::Pass<'a> {
        if !self.has_messages {
            return Err(WireError::new(
                WireErrorKind::Shape,
                "missing field `messages`",
            ));
        }
        let mut view = self.view;
        let last_assistant = crate::view::new_after(
            self.last_assistant,
            self.assistant_before_last,
            view.message_count,
        );
        // Does this conversation's client flag its successes (see the
        // module docs)?
        let flags_successes = view.results.iter().any(|r| {
            matches!(
                r.raw,
                RawResult::Anthropic {
                    is_error: Some(false),
                    ..
                }
            )
        });
        for r in &mut view.results {
            r.new = last_assistant.is_none_or(|a| r.message_index > a);
            if let RawResult::Anthropic {
                client_flags_successes,
                ..
            } = &mut r.raw
            {
                *client_flags_successes = flags_successes;
            }
        }
        let mut hash = Fnv64::default();
        if let Some(system) = self.system {
            hash_system(&mut hash, system);
        }
        if let Some(first) = self.first_user_hash {
            hash.write(&first.to_le_bytes());
        }
        view.first_turn_hash = Some(hash.finish());
        // A thread's `continue`: its first message may answer calls the
        // API holds (see [`mod@super::validate`]).
        let held = view.previous_response_id.is_some();
        Ok((view, self.shapes.as_deref().map(|s| defects(s, held))))
    }

    /// The content of the message being read is the string `text`.
    pub fn string_content(&mut self, text: &str) {
        if self.shapes.is_some() {
            self.ends_in_space = ends_in_space(text);
        }
    }

    /// One content block of the message at index `i`.
    pub fn block(&mut self, block: Block<'a>, i: usize) {
        let class = classify(&block.kind);
        self.api_blocks |= class != BlockClass::Other;
        if self.shapes.is_some() {
            // Only the last block's counts: each one overwrites it.
            self.ends_in_space =
                block.kind == "text" && block.text.as_deref().is_some_and(ends_in_space);
            let id = match class {
                BlockClass::Call | BlockClass::ServerCall => block.id.clone(),
                BlockClass::Result | BlockClass::ServerResult => block.tool_use_id.clone(),
                BlockClass::Other => None,
            };
            let empty_error = class == BlockClass::Result
                && block.is_error == Some(true)
                && empty_content(block.content.as_ref().map(|r| r.0));
            self.blocks.push(Blk {
                class,
                id: id.unwrap_or_default(),
                id_raw: None,
                empty_error,
                content_raw: None,
            });
        }
        match class {
            BlockClass::Call | BlockClass::ServerCall => {
                let id = block.id.unwrap_or_default();
                self.names.insert(id.clone(), self.view.calls.len());
                self.view.calls.push(CallView {
                    id,
                    name: block.name.unwrap_or_default(),
                    arguments: Cow::Borrowed(block.input.map_or("{}", |r| r.0)),
                    message_index: i,
                });
            }
            BlockClass::Result | BlockClass::ServerResult => {
                let result = result_view(block, i, false, &self.names, &self.view.calls);
                self.view.results.push(result);
            }
            BlockClass::Other => {}
        }
    }
}

/// The first user message's hash: that of its text parts ([`OpeningHash`]),
/// or, when a client joined a failed step's error to it, that of the
/// user's words alone ([`text_answers::user_words`]), as it was before.
fn first_user_hash(parts: OpeningHash, content: &str) -> u64 {
    if !text_answers::may_hold_errors(content) {
        return parts.finish();
    }
    let Ok(text) = crate::opening::opening_text(Some(content)) else {
        return parts.finish();
    };
    let mut words = OpeningHash::default();
    words.part(text_answers::user_words(&text));
    words.finish()
}

/// The top-level object.
struct Top<'b, 'a>(&'b mut Builder<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for Top<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Top<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Messages request object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let b = self.0;
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "model" => b.view.model = map.next_value::<Option<Str<'de>>>()?.map(|s| s.0),
                "stream" => b.view.stream = map.next_value::<Option<bool>>()?.unwrap_or(false),
                "system" => {
                    b.system = map.next_value::<Option<&RawValue>>()?.map(RawValue::get);
                }
                "metadata" => {
                    b.view.metadata_user_id = map
                        .next_value::<Option<Metadata<'de>>>()?
                        .and_then(|m| m.user_id)
                }
                "thread" => {
                    // As validation's outline reads it: once.
                    if b.has_thread {
                        return Err(A::Error::duplicate_field("thread"));
                    }
                    b.thread(map.next_value::<Option<Thread<'de>>>()?);
                }
                "messages" => {
                    if b.has_messages {
                        return Err(A::Error::duplicate_field("messages"));
                    }
                    map.next_value_seed(Messages(&mut *b))?;
                    b.has_messages = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `messages`.
struct Messages<'b, 'a>(&'b mut Builder<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for Messages<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Messages<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let b = self.0;
        let mut i = 0;
        while seq
            .next_element_seed(MessageSeed { b: &mut *b, i })?
            .is_some()
        {
            i += 1;
        }
        b.view.message_count = i;
        Ok(())
    }
}

/// One message: `role` and `content` in either order.
struct MessageSeed<'b, 'a> {
    b: &'b mut Builder<'a>,
    i: usize,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for MessageSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for MessageSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let MessageSeed { b, i } = self;
        let mut role: Option<Str<'de>> = None;
        let mut raw: Option<&'de str> = None;
        // Text is hashed only while the first user message is not known.
        let mut text = b.text_hasher();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "role" if role.is_some() => return Err(A::Error::duplicate_field("role")),
                "role" => role = Some(map.next_value()?),
                "content" if raw.is_some() => return Err(A::Error::duplicate_field("content")),
                "content" => {
                    // Kept raw as the fast path keeps it (a text answer's
                    // content), then read block by block.
                    let content = map.next_value::<&'de RawValue>()?.get();
                    let mut de = serde_json::Deserializer::from_str(content);
                    ContentSeed {
                        b: &mut *b,
                        i,
                        text: text.as_mut(),
                    }
                    .deserialize(&mut de)
                    .map_err(A::Error::custom)?;
                    raw = Some(content);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let role = role.ok_or_else(|| A::Error::missing_field("role"))?;
        let Some(raw) = raw else {
            return Err(A::Error::missing_field("content"));
        };
        b.message(role.0, i, text, raw);
        Ok(())
    }
}

/// `content`: a string or blocks, each handed to the builder as parsed.
struct ContentSeed<'b, 'a, 'h> {
    b: &'b mut Builder<'a>,
    i: usize,
    text: Option<&'h mut OpeningHash>,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for ContentSeed<'_, 'a, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ContentSeed<'_, 'a, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an array of content blocks")
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        if let Some(h) = self.text {
            h.part(v);
        }
        self.b.string_content(v);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let ContentSeed { b, i, mut text } = self;
        while let Some(block) = seq.next_element::<Block<'de>>()? {
            if let (Some(h), Some(t)) = (text.as_deref_mut(), &block.text) {
                h.part(t);
            }
            b.block(block, i);
        }
        Ok(())
    }
}

fn result_view<'a>(
    block: Block<'a>,
    message_index: usize,
    new: bool,
    names: &AHashMap<Cow<'a, str>, usize>,
    calls: &[CallView<'a>],
) -> ResultView<'a> {
    let call_id = block.tool_use_id.unwrap_or_default();
    let tool = names.get(&call_id).map(|&c| calls[c].name.clone());
    ResultView {
        call_id,
        tool,
        message_index,
        new,
        raw: RawResult::Anthropic {
            content: block.content.map(|r| r.0),
            is_error: block.is_error,
            server: classify(&block.kind) == BlockClass::ServerResult,
            client_flags_successes: true,
        },
    }
}

/// Read a result (see [`ResultView::read`]): the verdict rules of the
/// module docs.
pub(crate) fn read_result<'a>(
    content: Option<&'a str>,
    is_error: Option<bool>,
    server: bool,
    client_flags_successes: bool,
    judge: crate::text::Judge<'_>,
) -> Result<(Cow<'a, str>, Verdict), WireError> {
    let content = FlatContent::parse(content)?;
    let verdict =
        if is_error == Some(true) || content.is_error == Some(true) || content.is_error_object() {
            Verdict::explicit(true)
        } else if is_error == Some(false) || content.is_error == Some(false) || server {
            Verdict::explicit(false)
        } else {
            match mcp_is_error(&content.text) {
                Some(flag) => Verdict::explicit(flag),
                None if client_flags_successes => Verdict::NONE,
                None => judge(&content.text),
            }
        };
    Ok((content.text, verdict))
}

/// The system prompt's text: a string or text blocks (attributes such as
/// `cache_control` move between turns, so they are left out of the hash).
fn hash_system(hash: &mut Fnv64, raw: &str) {
    #[derive(serde::Deserialize)]
    struct Part<'a> {
        #[serde(borrow, default)]
        text: Option<Cow<'a, str>>,
    }
    if let Ok(s) = serde_json::from_str::<Cow<'_, str>>(raw) {
        hash.field(s.as_bytes());
    } else if let Ok(parts) = serde_json::from_str::<Vec<Part<'_>>>(raw) {
        for t in parts.iter().filter_map(|p| p.text.as_deref()) {
            hash.field(t.as_bytes());
        }
    } else {
        hash.field(raw.as_bytes());
    }
    hash.write(b"\x00system-end");
}
