//! The Chat Completions stream: `chat.completion.chunk` events whose
//! `delta.tool_calls` carry index-based fragments (the first with id and
//! name, the rest with argument text), parallel calls interleaved by index;
//! a `finish_reason`; a last chunk with `usage`; `data: [DONE]`.
//!
//! Once the id and model are known, a chunk without a non-null
//! `tool_calls`, `function_call`, `finish_reason`, `usage` or `error` key
//! (a content delta) is skipped before any JSON parsing. The others are
//! read by serde seeds that write straight into the state: no intermediate
//! structs, keys borrowed, argument fragments appended to the call's buffer.

use std::fmt;

use ahash::AHashMap;
use serde::{
    Deserializer,
    de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor},
};
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use super::model::{ApiError, ChatUsage, FunctionIn, legacy_id};
use crate::{
    ResponseView, Usage,
    budget::{Budget, ENTRY_COST},
    choices::ChoiceEnds,
    event_sink::EventSink,
    seed::{AppendStr, Needle},
    splice::Str,
};

/// Stream state for OpenAI Chat Completions.
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    id: Option<String>,
    model: Option<String>,
    usage: Usage,
    stop_reason: Option<String>,
    error: Option<String>,
    calls: Vec<Pending>,
    /// Which choices have begun and finished: with several (`n` > 1) the
    /// response ends when the last one finishes.
    choices: ChoiceEnds,
    /// The latest call at each `(choice, index)`: its position in `calls`
    /// (a scan of `calls` per fragment made a stream of many calls
    /// quadratic).
    latest: AHashMap<(u64, u64), usize>,
    /// Argument text of the tool call being read.
    scratch: String,
    budget: Budget,
    /// `data: [DONE]` has been read: nothing of the response follows.
    done: bool,
}

#[derive(Debug, Clone)]
struct Pending {
    choice: u64,
    index: u64,
    id: String,
    name: String,
    args: String,
}

/// Where legacy `function_call` deltas collect.
const LEGACY: u64 = u64::MAX;

static TOOL_CALLS: Needle = Needle::new("\"tool_calls\"");
static FUNCTION_CALL: Needle = Needle::new("\"function_call\"");
static FINISH: Needle = Needle::new("\"finish_reason\"");
static USAGE: Needle = Needle::new("\"usage\"");
static ERROR: Needle = Needle::new("\"error\"");
static CHOICES: Needle = Needle::new("\"choices\"");

fn relevant(data: &[u8]) -> bool {
    TOOL_CALLS.non_null_in(data)
        || FINISH.non_null_in(data)
        || USAGE.non_null_in(data)
        || FUNCTION_CALL.non_null_in(data)
        || ERROR.non_null_in(data)
}

impl StreamState {
    /// The position in `calls` of the call a fragment at `(choice, index)`
    /// with `id` belongs to, started if new; `None` when a new call does
    /// not fit the budget.
    fn slot(&mut self, choice: u64, index: u64, id: Option<&str>) -> Option<usize> {
        let found = self.latest.get(&(choice, index)).copied();
        // Some servers send every parallel call at index 0, each with its
        // own id: a new id at a used index starts a new call.
        let fresh = match (found, id) {
            (None, _) => true,
            (Some(at), Some(id)) => {
                !id.is_empty() && !self.calls[at].id.is_empty() && self.calls[at].id != id
            }
            (Some(_), None) => false,
        };
        if !fresh {
            return found;
        }
        if !self.budget.take(ENTRY_COST) {
            return None;
        }
        self.calls.push(Pending {
            choice,
            index,
            id: String::new(),
            name: String::new(),
            args: String::new(),
        });
        let at = self.calls.len() - 1;
        self.latest.insert((choice, index), at);
        Some(at)
    }

    /// Give the call at `at` its id and name if it has none yet, and
    /// append `args` to its arguments, as far as the budget allows.
    fn fill(&mut self, at: usize, id: Option<&str>, name: Option<&str>, args: &str) {
        let p = &mut self.calls[at];
        if let Some(id) = id
            && p.id.is_empty()
        {
            self.budget.append(&mut p.id, id);
        }
        if let Some(n) = name
            && p.name.is_empty()
        {
            self.budget.append(&mut p.name, n);
        }
        self.budget.append(&mut p.args, args);
    }
}

impl StreamState {
    /// Whether every choice named so far has given its `finish_reason`
    /// (and one has): the response is whole.
    pub(crate) fn all_choices_finished(&self) -> bool {
        self.choices.all_finished()
    }

    /// At the stream's end: whether every choice named has finished,
    /// however many the request asked for.
    pub(crate) fn all_named_choices_finished(&self) -> bool {
        self.choices.all_named_finished()
    }

    /// The request asked for `n` choices (`n`): with several, the stream
    /// is whole once each has finished, and only the first one's calls
    /// are read (see [`ChoiceEnds`]).
    pub(crate) fn expect_choices(&mut self, n: u64) {
        self.choices.expect(n);
    }

    /// Whether `choice`'s calls and finish reason are not the response's:
    /// the request asked for several choices and it is not the first.
    fn passed_over(&self, choice: u64) -> bool {
        choice != 0 && self.choices.only_first()
    }

    /// Whether `data: [DONE]` has not been read: after the last
    /// `finish_reason` a stream that asked for usage
    /// (`stream_options.include_usage`) still sends it, in a chunk of its
    /// own before `[DONE]`.
    pub(crate) fn trailer_pending(&self) -> bool {
        !self.done
    }

    /// An event too large to read named a `finish_reason`: whether it
    /// ended the response (see [`ChoiceEnds::finished_unread`]).
    pub(crate) fn finished_unread(&mut self) -> bool {
        self.choices.finished_unread()
    }

    /// Once id and model are known, only `choices` can matter in a chunk
    /// without `usage` or `error`: where its array starts, when everything
    /// before the key is flat (`"id":"…","object":"…",…`) so the key found
    /// is the top-level one.
    fn choices_only(&self, data: &[u8]) -> Option<usize> {
        if self.id.is_none() || self.model.is_none() || data.first() != Some(&b'{') {
            return None;
        }
        if USAGE.non_null_in(data) || ERROR.non_null_in(data) {
            return None;
        }
        let key_end = CHOICES.end_in(data)?;
        let before = data.get(1..key_end)?;
        if memchr::memchr3(b'{', b'[', b'\\', before).is_some() {
            return None;
        }
        let mut at = key_end;
        while let Some(b' ' | b'\t' | b'\r' | b'\n' | b':') = data.get(at) {
            at += 1;
        }
        (data.get(at) == Some(&b'[')).then_some(at)
    }
}

impl EventSink for StreamState {
    fn on_event(&mut self, _event: &[u8], data: &[u8]) {
        if data == b"[DONE]" {
            self.done = true;
            return;
        }
        if self.model.is_some() && !relevant(data) {
            // A content delta: read no further than the choices it names.
            self.choices.begun_in(data);
            return;
        }
        let Ok(text) = simdutf8::basic::from_utf8(data) else {
            return;
        };
        // A malformed chunk is skipped; what it held before the error stays.
        if let Some(at) = self.choices_only(data) {
            let mut de = serde_json::Deserializer::from_str(&text[at..]);
            let _ = Choices(self).deserialize(&mut de);
            return;
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let _ = Chunk(self).deserialize(&mut de);
    }

    fn finish(self) -> ResponseView {
        let mut calls = self.calls;
        if self.choices.only_first() {
            calls.retain(|p| p.choice == 0);
        }
        calls.sort_by_key(|p| (p.choice, p.index));
        ResponseView {
            id: self.id,
            model: self.model,
            calls: calls
                .into_iter()
                .map(|p| ToolCall {
                    id: p.id,
                    name: p.name,
                    arguments: p.args,
                })
                .collect(),
            usage: self.usage,
            stop_reason: self.stop_reason,
            incomplete_reason: None,
            last_call_completed: false,
            error: self.error,
            error_status: None,
            truncated: self.budget.is_cut(),
            ended_early: false,
            server_calls: Vec::new(),
            call_kinds: Vec::new(),
        }
    }

    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn kept(&self) -> usize {
        self.budget.kept()
    }
}

// === seeds ===

macro_rules! map_seed {
    ($name:ident, $what:literal) => {
        impl<'de> DeserializeSeed<'de> for $name<'_> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_any(self)
            }
        }
        impl $name<'_> {
            fn expect(f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($what)
            }
        }
    };
}

/// A whole chunk.
struct Chunk<'s>(&'s mut StreamState);
map_seed!(Chunk, "a chat.completion.chunk object");

impl<'de> Visitor<'de> for Chunk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Self::expect(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let s = self.0;
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "id" if s.id.is_none() => {
                    s.id = map
                        .next_value::<Option<Str<'de>>>()?
                        .map(|v| v.0.into_owned());
                }
                "model" if s.model.is_none() => {
                    s.model = map
                        .next_value::<Option<Str<'de>>>()?
                        .map(|v| v.0.into_owned());
                }
                "choices" => map.next_value_seed(Choices(s))?,
                "usage" => {
                    if let Some(u) = map.next_value::<Option<ChatUsage>>()? {
                        s.usage = Usage {
                            input_tokens: u.prompt_tokens,
                            output_tokens: u.completion_tokens,
                        };
                    }
                }
                "error" => {
                    if let Some(e) = map.next_value::<Option<ApiError<'de>>>()? {
                        s.error = Some(e.describe());
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `choices`.
struct Choices<'s>(&'s mut StreamState);
map_seed!(Choices, "choices");

impl<'de> Visitor<'de> for Choices<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Self::expect(f)
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Choice(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// One choice: `index`, `delta` (or `message`), `finish_reason`.
struct Choice<'s>(&'s mut StreamState);
map_seed!(Choice, "a choice");

impl<'de> Visitor<'de> for Choice<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Self::expect(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let s = self.0;
        let mut index = None;
        // A delta written before its choice's `index` (openai-python's
        // models put `delta` first) waits for it: read as choice 0, the
        // calls of every choice but the first would land in it.
        let mut waiting: Option<&'de RawValue> = None;
        let mut finished = false;
        let mut reason = None;
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "index" => index = Some(map.next_value::<Option<u64>>()?.unwrap_or(0)),
                "delta" | "message" => match index {
                    Some(choice) => map.next_value_seed(Delta { s: &mut *s, choice })?,
                    None => waiting = Some(map.next_value()?),
                },
                "finish_reason" => {
                    // Some servers send `""` in every chunk: no reason.
                    if let Some(r) = map.next_value::<Option<Str<'de>>>()?
                        && !r.0.is_empty()
                    {
                        reason = Some(r.0);
                        finished = true;
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let choice = index.unwrap_or(0);
        if let Some(reason) = reason
            && !s.passed_over(choice)
        {
            s.stop_reason = Some(reason.into_owned());
        }
        if finished {
            s.choices.finished(choice);
        } else {
            s.choices.begun(choice);
        }
        if let Some(delta) = waiting {
            let mut de = serde_json::Deserializer::from_str(delta.get());
            Delta {
                s,
                choice: index.unwrap_or(0),
            }
            .deserialize(&mut de)
            .map_err(A::Error::custom)?;
        }
        Ok(())
    }
}

/// A delta (or message): `tool_calls`, legacy `function_call`.
struct Delta<'s> {
    s: &'s mut StreamState,
    choice: u64,
}
map_seed!(Delta, "a delta");

impl<'de> Visitor<'de> for Delta<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Self::expect(f)
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Delta { s, choice } = self;
        if s.passed_over(choice) {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "tool_calls" => map.next_value_seed(Calls { s: &mut *s, choice })?,
                "function_call" => {
                    if let Some(f) = map.next_value::<Option<FunctionIn<'de>>>()? {
                        legacy(s, choice, f);
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

fn legacy(s: &mut StreamState, choice: u64, f: FunctionIn<'_>) {
    let Some(at) = s.slot(choice, LEGACY, None) else {
        return;
    };
    let p = &mut s.calls[at];
    if let Some(n) = f.name
        && p.name.is_empty()
    {
        let id = legacy_id(&n, 0);
        if s.budget.take(id.len() + n.len()) {
            p.id = id;
            p.name = n.into_owned();
        }
    }
    s.budget
        .append(&mut p.args, &f.arguments.unwrap_or_default());
}

/// `tool_calls`.
struct Calls<'s> {
    s: &'s mut StreamState,
    choice: u64,
}
map_seed!(Calls, "tool_calls");

impl<'de> Visitor<'de> for Calls<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Self::expect(f)
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let choice = self.choice;
        while seq
            .next_element_seed(Call {
                s: &mut *self.s,
                choice,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// One tool-call fragment: `index`, `id`, `function`/`custom` with `name`
/// and `arguments`/`input`.
struct Call<'s> {
    s: &'s mut StreamState,
    choice: u64,
}
map_seed!(Call, "a tool call");

impl<'de> Visitor<'de> for Call<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Self::expect(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Call { s, choice } = self;
        let mut index = 0;
        let mut id: Option<Str<'de>> = None;
        let mut name: Option<Str<'de>> = None;
        s.scratch.clear();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "index" => index = map.next_value::<Option<u64>>()?.unwrap_or(0),
                "id" => id = map.next_value()?,
                "function" | "custom" => map.next_value_seed(Function {
                    name: &mut name,
                    args: &mut s.scratch,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let mut args = std::mem::take(&mut s.scratch);
        let id = id.as_ref().map(|i| &*i.0);
        if let Some(at) = s.slot(choice, index, id) {
            s.fill(at, id, name.as_ref().map(|n| &*n.0), &args);
        }
        args.clear();
        s.scratch = args;
        Ok(())
    }
}

/// `function` / `custom` of a fragment.
struct Function<'s, 'de> {
    name: &'s mut Option<Str<'de>>,
    args: &'s mut String,
}

impl<'de> DeserializeSeed<'de> for Function<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Function<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a function")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "name" => *self.name = map.next_value()?,
                "arguments" | "input" => map.next_value_seed(AppendStr(&mut *self.args))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}
