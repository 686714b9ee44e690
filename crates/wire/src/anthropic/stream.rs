//! The Messages stream: `message_start`, `content_block_start` /
//! `content_block_delta` (`input_json_delta`) / `content_block_stop`,
//! `message_delta`, `error`.
//!
//! Each event is classified from its `event:` name (or the leading
//! `"type"` of its data) and skipped before any JSON parsing when it cannot
//! matter: text and thinking deltas, pings, deltas while no tool block is
//! open. Only tool calls and their arguments are kept, within the parser's
//! budget (`crate::budget`).

use std::{borrow::Cow, fmt};

use ahash::AHashMap;
use serde::{
    Deserialize, Deserializer,
    de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor},
};
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use super::{
    model::{BlockClass, classify},
    response::{ApiError, WireUsage},
};
use crate::{
    ResponseView, Usage,
    budget::{Budget, ENTRY_COST},
    event_sink::EventSink,
    seed::{AppendStr, Needle},
    splice::Str,
    text::leading_type,
};

static INPUT_JSON_DELTA: Needle = Needle::new("input_json_delta\"");
static DELTA_TYPE: Needle = Needle::new("\"delta\":{\"type\":\"");
static TOOL_USE: Needle = Needle::new("tool_use\"");

static INDEX: Needle = Needle::new("\"index\"");
static PARTIAL_JSON: Needle = Needle::new("\"partial_json\"");

/// After `"key"` at `end`: the position of its value (past blanks and the
/// colon).
fn value_at(data: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\r' | b'\n' | b':') = data.get(at) {
        at += 1;
    }
    at
}

/// The top-level `index` of a content block event, read without parsing
/// when it precedes any nested value or escape (the providers' form).
fn top_index(data: &[u8]) -> Option<u64> {
    let end = INDEX.end_in(data)?;
    if data.first() != Some(&b'{') || memchr::memchr3(b'{', b'[', b'\\', &data[1..end]).is_some() {
        return None;
    }
    let at = value_at(data, end);
    let digits = data[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    match data.get(at + digits) {
        Some(b',' | b'}' | b' ' | b'\n' | b'\r' | b'\t') if digits > 0 => {
            std::str::from_utf8(&data[at..at + digits])
                .ok()?
                .parse()
                .ok()
        }
        _ => None,
    }
}

/// Where the string value of the `partial_json` key starts.
fn partial_json_at(data: &[u8]) -> Option<usize> {
    let at = value_at(data, PARTIAL_JSON.end_in(data)?);
    (data.get(at) == Some(&b'"')).then_some(at)
}

/// Whether a `content_block_delta` is an `input_json_delta`: read from the
/// delta's `type` when the event is in the providers' compact canonical
/// form, else searched for anywhere.
fn is_json_delta(data: &[u8]) -> bool {
    let head = &data[..data.len().min(96)];
    match DELTA_TYPE.end_in(head) {
        Some(at) => data[at..].starts_with(b"input_json_delta\""),
        None => INPUT_JSON_DELTA.in_(data),
    }
}

/// Stream state for Anthropic Messages.
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    id: Option<String>,
    model: Option<String>,
    usage: Usage,
    stop_reason: Option<String>,
    error: Option<String>,
    calls: Vec<Pending>,
    /// The tool blocks not yet stopped: the position in `calls` of the
    /// latest started at each index (deltas go to it; a stop closes every
    /// block at its index). A map: a scan per event made many open blocks
    /// quadratic.
    open: AHashMap<u64, usize>,
    /// The argument fragment being read.
    scratch: String,
    budget: Budget,
}

#[derive(Debug, Clone)]
struct Pending {
    index: u64,
    /// A `server_tool_use` or `mcp_tool_use` block.
    server: bool,
    id: String,
    name: String,
    /// `input` of the block start when not `{}` (deltas normally follow).
    initial: Option<String>,
    args: String,
}

#[derive(Deserialize)]
struct Typed<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Start<'a> {
    index: u64,
    #[serde(borrow)]
    content_block: StartBlock<'a>,
}

#[derive(Deserialize)]
struct StartBlock<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Stop {
    index: u64,
}

#[derive(Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow)]
    message: StartMessage<'a>,
}

#[derive(Deserialize)]
struct StartMessage<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct MessageDelta<'a> {
    #[serde(borrow, default)]
    delta: Option<StopDelta<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct StopDelta<'a> {
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorEvent<'a> {
    #[serde(borrow)]
    error: ApiError<'a>,
}

/// Parse an event's data (validated as UTF-8 in one SIMD pass, then read
/// without per-string checks).
fn parse<'a, T: Deserialize<'a>>(data: &'a [u8]) -> Result<T, ()> {
    let text = simdutf8::basic::from_utf8(data).map_err(|_| ())?;
    serde_json::from_str(text).map_err(|_| ())
}

impl StreamState {
    fn dispatch(&mut self, kind: &[u8], data: &[u8]) {
        match kind {
            b"content_block_delta" => {
                if self.open.is_empty() || !is_json_delta(data) {
                    return;
                }
                let Ok(text) = simdutf8::basic::from_utf8(data) else {
                    return;
                };
                let mut part = std::mem::take(&mut self.scratch);
                part.clear();
                let index = match (top_index(data), partial_json_at(data)) {
                    // Flat canonical form: read just the index and the string.
                    (Some(index), Some(at)) => {
                        let mut de = serde_json::Deserializer::from_str(&text[at..]);
                        AppendStr(&mut part)
                            .deserialize(&mut de)
                            .ok()
                            .map(|()| index)
                    }
                    _ => {
                        let mut de = serde_json::Deserializer::from_str(text);
                        (DeltaSeed { part: &mut part }).deserialize(&mut de).ok()
                    }
                };
                if let Some(&at) = index.and_then(|i| self.open.get(&i)) {
                    self.budget.append(&mut self.calls[at].args, &part);
                }
                self.scratch = part;
            }
            b"content_block_start" => {
                if !TOOL_USE.in_(data) {
                    return;
                }
                let Ok(s) = parse::<Start<'_>>(data) else {
                    return;
                };
                let b = s.content_block;
                let server = match classify(&b.kind) {
                    BlockClass::Call => false,
                    BlockClass::ServerCall => true,
                    _ => return,
                };
                let id = b.id.unwrap_or_default();
                let name = b.name.unwrap_or_default();
                let initial = b.input.map(|r| r.get()).filter(|r| *r != "{}");
                let cost = ENTRY_COST + id.len() + name.len() + initial.map_or(0, str::len);
                if !self.budget.take(cost) {
                    return;
                }
                self.open.insert(s.index, self.calls.len());
                self.calls.push(Pending {
                    index: s.index,
                    server,
                    id: id.into_owned(),
                    name: name.into_owned(),
                    initial: initial.map(str::to_string),
                    args: String::new(),
                });
            }
            b"content_block_stop" => {
                if self.open.is_empty() {
                    return;
                }
                let index = top_index(data).or_else(|| parse::<Stop>(data).ok().map(|s| s.index));
                if let Some(index) = index {
                    self.open.remove(&index);
                }
            }
            b"message_start" => {
                if let Ok(m) = parse::<MessageStart<'_>>(data) {
                    let m = m.message;
                    if self.id.as_deref() != m.id.as_deref() {
                        self.id = m.id.map(Cow::into_owned);
                    }
                    if self.model.as_deref() != m.model.as_deref() {
                        self.model = m.model.map(Cow::into_owned);
                    }
                    if let Some(u) = m.usage {
                        self.add_usage(u);
                    }
                }
            }
            b"message_delta" => {
                if let Ok(m) = parse::<MessageDelta<'_>>(data) {
                    if let Some(r) = m.delta.and_then(|d| d.stop_reason) {
                        self.stop_reason = Some(r.into_owned());
                    }
                    if let Some(u) = m.usage {
                        self.add_usage(u);
                    }
                }
            }
            b"error" => {
                let error = parse::<ErrorEvent<'_>>(data)
                    .map(|e| e.error.describe())
                    .unwrap_or_else(|_| String::from_utf8_lossy(data).into_owned());
                self.error = Some(error);
            }
            _ => {}
        }
    }

    /// `message_delta` usage is cumulative: the latest value wins.
    fn add_usage(&mut self, u: WireUsage) {
        if u.input_tokens.is_some() {
            self.usage.input_tokens = u.input_tokens;
        }
        if u.output_tokens.is_some() {
            self.usage.output_tokens = u.output_tokens;
        }
    }
}

impl EventSink for StreamState {
    fn on_event(&mut self, event: &[u8], data: &[u8]) {
        if !event.is_empty() {
            return self.dispatch(event, data);
        }
        if let Some(kind) = leading_type(data) {
            return self.dispatch(kind, data);
        }
        if let Ok(t) = parse::<Typed<'_>>(data) {
            self.dispatch(t.kind.as_bytes(), data);
        }
    }

    fn finish(self) -> ResponseView {
        let mut calls = self.calls;
        calls.sort_by_key(|p| p.index);
        let server_calls = (calls.iter().enumerate())
            .filter(|(_, p)| p.server)
            .map(|(i, _)| i)
            .collect();
        ResponseView {
            id: self.id,
            model: self.model,
            calls: calls
                .into_iter()
                .map(|p| ToolCall {
                    id: p.id,
                    name: p.name,
                    arguments: match (p.args.is_empty(), p.initial) {
                        (false, _) => p.args,
                        (true, Some(initial)) => initial,
                        (true, None) => "{}".to_string(),
                    },
                })
                .collect(),
            server_calls,
            call_kinds: Vec::new(),
            usage: self.usage,
            stop_reason: self.stop_reason,
            incomplete_reason: None,
            last_call_completed: false,
            error: self.error,
            error_status: None,
            truncated: self.budget.is_cut(),
            ended_early: false,
        }
    }

    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn kept(&self) -> usize {
        self.budget.kept()
    }
}

/// A `content_block_delta`: appends `delta.partial_json` to the buffer and
/// returns `index`.
struct DeltaSeed<'s> {
    part: &'s mut String,
}

impl<'de> DeserializeSeed<'de> for DeltaSeed<'_> {
    type Value = u64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DeltaSeed<'_> {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content_block_delta event")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let mut index = None;
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "index" => index = Some(map.next_value::<u64>()?),
                "delta" => map.next_value_seed(PartialJson {
                    part: &mut *self.part,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        index.ok_or_else(|| A::Error::missing_field("index"))
    }
}

/// `delta` of an `input_json_delta`.
///
/// The only such visitor in the crate (the string append itself is
/// `seed::AppendStr`, shared). Chat's `Function` visitor looks alike but is
/// not the same shape: it also keeps `name`, appends `arguments` or `input`,
/// and accepts `null`, where a non-object `delta` is an error here.
struct PartialJson<'s> {
    part: &'s mut String,
}

impl<'de> DeserializeSeed<'de> for PartialJson<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PartialJson<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a delta object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Str<'de>>()? {
            if &*key.0 == "partial_json" {
                map.next_value_seed(AppendStr(&mut *self.part))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}
