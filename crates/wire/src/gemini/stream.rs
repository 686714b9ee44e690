//! The Gemini stream: the chunks of `streamGenerateContent` (SSE or a
//! streamed JSON array), also what a whole body is read as (`response`).
//!
//! A chunk is a `GenerateContentResponse`; only `candidates[0]`'s
//! `functionCall` parts, `finishReason`, `usageMetadata`, `modelVersion`,
//! `responseId` and `error` are read, into small borrowed structs, and
//! which candidates have begun and finished (`index`, `finishReason`).

use std::borrow::Cow;

use ahash::AHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use super::{
    call::{StreamCall, Update, UpdateValue},
    partial::{PartialArgs, Value},
    scan,
    turns::synthetic_id,
};
use crate::{
    ResponseView, Usage,
    budget::{Budget, ENTRY_COST},
    choices::ChoiceEnds,
    event_sink::EventSink,
};

#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow, default)]
    candidates: Vec<Candidate<'a>>,
    #[serde(default, rename = "usageMetadata")]
    usage: Option<UsageMetadata>,
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "modelVersion"
    )]
    model: Option<Cow<'a, str>>,
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "responseId"
    )]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "promptFeedback")]
    feedback: Option<Feedback<'a>>,
    #[serde(borrow, default)]
    error: Option<ErrorBody<'a>>,
}

#[derive(Deserialize)]
struct Candidate<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    content: Option<CandidateContent<'a>>,
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "finishReason"
    )]
    finish: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CandidateContent<'a> {
    #[serde(borrow, default)]
    parts: Vec<OutPart<'a>>,
}

#[derive(Deserialize)]
struct OutPart<'a> {
    #[serde(borrow, default, rename = "functionCall", alias = "function_call")]
    call: Option<OutCall<'a>>,
}

#[derive(Deserialize)]
struct OutCall<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "partialArgs")]
    partial: Option<Vec<PartialArg<'a>>>,
    #[serde(default, rename = "willContinue")]
    will_continue: Option<bool>,
}

#[derive(Deserialize)]
struct PartialArg<'a> {
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "jsonPath"
    )]
    path: Option<Cow<'a, str>>,
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "stringValue"
    )]
    string: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "numberValue")]
    number: Option<&'a RawValue>,
    #[serde(default, rename = "boolValue")]
    boolean: Option<bool>,
    #[serde(borrow, default, rename = "nullValue")]
    null: Option<&'a RawValue>,
    #[serde(default, rename = "willContinue")]
    will_continue: Option<bool>,
}

impl<'a> From<OutCall<'a>> for StreamCall<'a> {
    fn from(c: OutCall<'a>) -> StreamCall<'a> {
        StreamCall {
            name: c.name,
            id: c.id,
            args: c.args.map(RawValue::get),
            partial: c
                .partial
                .unwrap_or_default()
                .into_iter()
                .map(|u| Update {
                    value: if let Some(s) = u.string {
                        Some(UpdateValue::Str(s))
                    } else if let Some(n) = u.number {
                        Some(UpdateValue::Raw(n.get()))
                    } else if let Some(b) = u.boolean {
                        Some(UpdateValue::Raw(if b { "true" } else { "false" }))
                    } else {
                        u.null.map(|_| UpdateValue::Raw("null"))
                    },
                    path: u.path,
                    will_continue: u.will_continue == Some(true),
                })
                .collect(),
            will_continue: c.will_continue,
        }
    }
}

#[derive(Deserialize)]
struct UsageMetadata {
    #[serde(default, rename = "promptTokenCount")]
    prompt: Option<u64>,
    #[serde(default, rename = "candidatesTokenCount")]
    candidates: Option<u64>,
}

#[derive(Deserialize)]
struct Feedback<'a> {
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "blockReason"
    )]
    block_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorBody<'a> {
    #[serde(default)]
    code: Option<i64>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    message: Option<Cow<'a, str>>,
}

/// Stream state for Gemini (SSE chunks or a streamed JSON array).
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    /// The previous chunk's tail (see `scan::chunk_fields`).
    tail: Vec<u8>,
    id: Option<String>,
    model: Option<String>,
    calls: Vec<Call>,
    usage: Usage,
    finish: Option<String>,
    error: Option<String>,
    budget: Budget,
    /// Which candidates have begun and finished: with several
    /// (`candidateCount` > 1) the response ends when the last one does.
    candidates: ChoiceEnds,
    /// A `promptFeedback.blockReason` came: the prompt was blocked, and
    /// the response is whole.
    blocked: bool,
}

#[derive(Debug, Clone)]
struct Call {
    name: String,
    id: Option<String>,
    args: Args,
    /// More `partialArgs` for it may follow.
    open: bool,
}

#[derive(Debug, Clone)]
enum Args {
    Whole(String),
    Partial(PartialArgs),
}

impl StreamState {
    /// Whether the response is whole: every candidate named so far (and
    /// every one the request asked for) has given its `finishReason` (and
    /// one has), or the prompt was blocked.
    pub(crate) fn is_whole(&self) -> bool {
        self.blocked || self.candidates.all_finished()
    }

    /// A chunk too large or too broken to read named a `finishReason`:
    /// whether it ended the response (see [`ChoiceEnds::finished_unread`]).
    pub(crate) fn finished_unread(&mut self) -> bool {
        self.candidates.finished_unread()
    }

    /// At the stream's end: whether the prompt was blocked or every
    /// candidate named has finished, however many the request asked for.
    pub(crate) fn is_whole_at_end(&self) -> bool {
        self.blocked || self.candidates.all_named_finished()
    }

    /// The request asked for `n` candidates (`candidateCount`): with
    /// several, the stream is whole once each has finished (see
    /// [`ChoiceEnds`]; only candidate 0's calls are read in any case).
    pub(crate) fn expect_candidates(&mut self, n: u64) {
        self.candidates.expect(n);
    }

    pub(super) fn on_chunk(&mut self, c: Chunk<'_>) {
        if let Some(id) = c.id
            && self.id.as_deref() != Some(&id)
        {
            self.id = Some(id.into_owned());
        }
        if let Some(m) = c.model
            && self.model.as_deref() != Some(&m)
        {
            self.model = Some(m.into_owned());
        }
        if let Some(u) = c.usage {
            self.usage = Usage {
                input_tokens: u.prompt.or(self.usage.input_tokens),
                output_tokens: u.candidates.or(self.usage.output_tokens),
            };
        }
        if let Some(r) = c.feedback.and_then(|f| f.block_reason) {
            self.finish = Some(r.into_owned());
            self.blocked = true;
        }
        if let Some(e) = c.error {
            self.error = Some(error_text(&e));
        }
        for cand in &c.candidates {
            let index = cand.index.unwrap_or(0);
            if cand.finish.is_some() {
                self.candidates.finished(index);
            } else {
                self.candidates.begun(index);
            }
        }
        let Some(cand) = c.candidates.into_iter().find(|c| c.index.unwrap_or(0) == 0) else {
            return;
        };
        if let Some(f) = cand.finish {
            self.finish = Some(f.into_owned());
        }
        for part in cand.content.map(|c| c.parts).unwrap_or_default() {
            if let Some(call) = part.call {
                self.on_call(call.into());
            }
        }
    }

    /// Read a chunk by looking only at the fields that matter, in one pass
    /// over its strings (see `scan`). `false` when the chunk needs a full
    /// parse: an error, several candidates, snake_case keys, or anything
    /// that does not read cleanly. Nothing is applied unless all of it read.
    fn on_chunk_fast(&mut self, data: &[u8]) -> bool {
        let Some(found) = scan::chunk_fields(data, &self.tail) else {
            self.tail.clear();
            return false;
        };
        if !found.tail_reused {
            self.tail.clear();
            if let Some(from) = found.tail_from {
                self.tail.extend_from_slice(&data[from..]);
            }
        }
        let calls = found.calls;
        let usage = (found.prompt_tokens.is_some() || found.output_tokens.is_some()).then_some(
            UsageMetadata {
                prompt: found.prompt_tokens,
                candidates: found.output_tokens,
            },
        );
        if let Some(m) = found.model
            && self.model.as_deref() != Some(m)
        {
            self.model = Some(m.to_owned());
        }
        if let Some(i) = found.id
            && self.id.as_deref() != Some(i)
        {
            self.id = Some(i.to_owned());
        }
        if let Some(u) = usage {
            self.usage = Usage {
                input_tokens: u.prompt.or(self.usage.input_tokens),
                output_tokens: u.candidates.or(self.usage.output_tokens),
            };
        }
        if let Some(b) = found.block_reason {
            self.finish = Some(b.to_owned());
            self.blocked = true;
        }
        // The fast path reads only chunks whose one candidate is candidate 0.
        if let Some(f) = found.finish {
            self.finish = Some(f.to_owned());
            self.candidates.finished(0);
        } else if found.candidate {
            self.candidates.begun(0);
        }
        for call in calls.into_vec_iter() {
            self.on_call(call);
        }
        true
    }

    fn on_call(&mut self, call: StreamCall<'_>) {
        let continuing = call.name.is_none() && call.args.is_none();
        if !continuing {
            self.close();
            let len = |s: Option<&str>| s.map_or(0, str::len);
            let cost =
                ENTRY_COST + len(call.name.as_deref()) + len(call.id.as_deref()) + len(call.args);
            if !self.budget.take(cost) {
                return;
            }
            self.calls.push(Call {
                name: call.name.map(Cow::into_owned).unwrap_or_default(),
                id: call.id.as_deref().map(str::to_owned),
                args: match call.args {
                    Some(a) => Args::Whole(a.to_owned()),
                    None => Args::Partial(PartialArgs::default()),
                },
                open: true,
            });
        }
        let Some(current) = self.calls.last_mut().filter(|c| c.open) else {
            return;
        };
        if current.id.is_none()
            && let Some(id) = call.id
            && self.budget.take(id.len())
        {
            current.id = Some(id.into_owned());
        }
        if let Args::Partial(acc) = &mut current.args {
            for u in call.partial {
                let (Some(path), Some(value)) = (u.path, u.value) else {
                    continue;
                };
                let value = match &value {
                    UpdateValue::Str(s) => Value::Str(s),
                    UpdateValue::Raw(r) => Value::Raw(r),
                };
                acc.apply_within(&path, value, u.will_continue, &mut self.budget);
            }
        }
        if call.will_continue != Some(true) {
            self.close();
        }
    }

    fn close(&mut self) {
        if let Some(c) = self.calls.last_mut() {
            c.open = false;
        }
    }

    pub(super) fn view(self) -> ResponseView {
        // Ordinals per name for calls without an id (`<name>#<n>`); a map:
        // a scan per call made many id-less calls quadratic.
        let mut seen: AHashMap<String, usize> = AHashMap::new();
        let mut calls = Vec::with_capacity(self.calls.len());
        for c in self.calls {
            let id = match c.id.filter(|s| !s.is_empty()) {
                Some(id) => id,
                None => {
                    let n = match seen.get_mut(c.name.as_str()) {
                        Some(k) => {
                            *k += 1;
                            *k - 1
                        }
                        None => {
                            seen.insert(c.name.clone(), 1);
                            0
                        }
                    };
                    synthetic_id(&c.name, n)
                }
            };
            calls.push(ToolCall {
                id,
                name: c.name,
                arguments: match c.args {
                    Args::Whole(a) => a,
                    Args::Partial(p) => p.to_json(),
                },
            });
        }
        ResponseView {
            id: self.id,
            model: self.model,
            calls,
            usage: self.usage,
            stop_reason: self.finish,
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
}

fn error_text(e: &ErrorBody<'_>) -> String {
    let mut out = String::new();
    if let Some(c) = e.code {
        out.push_str(&c.to_string());
    }
    if let Some(s) = &e.status {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(s);
    }
    if let Some(m) = &e.message {
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(m);
    }
    out
}

impl EventSink for StreamState {
    fn on_event(&mut self, _event: &[u8], data: &[u8]) {
        if self.on_chunk_fast(data) {
            return;
        }
        if let Ok(chunk) = serde_json::from_slice::<Chunk<'_>>(data) {
            self.on_chunk(chunk);
            return;
        }
        // A chunk that is not one readable object is taken at its word.
        let find = |needle: &[u8]| memchr::memmem::find(data, needle).is_some();
        if find(b"\"blockReason\"") {
            self.blocked = true;
        } else if find(b"\"finishReason\"") {
            self.finished_unread();
        }
    }

    fn finish(self) -> ResponseView {
        self.view()
    }

    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn kept(&self) -> usize {
        self.budget.kept()
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
