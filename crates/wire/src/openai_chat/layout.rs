//! Where everything sits in a Chat body: each message's raw text, role,
//! `tool_calls` ids and `tool_call_id`, for validation and repair.

use std::{borrow::Cow, ops::Range};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::{
    WireError,
    splice::{Str, elements, span_in, utf8},
};

/// The messages of a body, located.
pub(super) struct Layout<'a> {
    pub text: &'a str,
    pub array: &'a RawValue,
    pub raws: Vec<&'a RawValue>,
    pub msgs: Vec<Msg<'a>>,
}

/// One message, located.
pub(super) struct Msg<'a> {
    pub role: Cow<'a, str>,
    /// Ids of `tool_calls`, with the span of each id's JSON string inside
    /// the message's raw text.
    pub calls: Vec<Located<'a>>,
    /// `tool_call_id` of a tool message, with its span.
    pub answers: Option<Located<'a>>,
}

impl Msg<'_> {
    pub fn is_tool(&self) -> bool {
        self.role == "tool"
    }
    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }
}

impl Layout<'_> {
    /// [`run_end`] of every message, in one pass from the end (asking
    /// each message would walk a run once per message in it: quadratic in
    /// the tool messages a client sends).
    pub fn run_ends(&self) -> Vec<usize> {
        let mut ends = vec![0; self.msgs.len()];
        for i in (0..self.msgs.len()).rev() {
            ends[i] = match self.msgs.get(i + 1) {
                Some(next) if next.is_tool() => ends[i + 1],
                _ => i,
            };
        }
        ends
    }
}

/// The last index of the run of tool messages right after message `i` of
/// `msgs` (`i` itself when there is none).
pub(super) fn run_end(msgs: &[Msg<'_>], i: usize) -> usize {
    let mut end = i;
    while msgs.get(end + 1).is_some_and(Msg::is_tool) {
        end += 1;
    }
    end
}

/// An id's text and the span of its JSON string inside the message's raw
/// text; an empty span (never an id's: a JSON value is never empty) where
/// the object that lacks the id opens, for a renaming to give it one.
type Located<'a> = (Cow<'a, str>, Option<Range<usize>>);

/// An id's text and its span in `base`; for an absent id, the empty span
/// just inside `object` (the call object, or the message), itself in
/// `base`.
fn id_of<'a>(
    raw: Option<&'a RawValue>,
    object: &str,
    base: &str,
) -> Result<Located<'a>, WireError> {
    let span = match raw {
        Some(r) => span_in(base, r.get()),
        None => span_in(base, object).and_then(|o| {
            let open = o.start + object.find('{')? + 1;
            Some(open..open)
        }),
    };
    Ok((id_text(raw)?, span))
}

/// A message's role and ids, as both readers take it.
#[derive(Deserialize)]
struct RawMsg<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<RawCall<'a>>>,
    #[serde(borrow, default)]
    tool_call_id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawCall<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

/// The messages' roles and ids, read in one pass: the same [`Msg`]s
/// [`layout`] finds, without the spans (`None`), which `layout` gets by
/// re-reading each message. Validation needs only this.
pub(super) fn outline(body: &[u8]) -> Result<Vec<Msg<'_>>, WireError> {
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        messages: Vec<RawMsg<'a>>,
    }
    let top: Top<'_> = serde_json::from_str(utf8(body)?)?;
    let mut msgs = Vec::with_capacity(top.messages.len());
    for m in top.messages {
        let mut calls = Vec::new();
        for c in m.tool_calls.into_iter().flatten() {
            calls.push((id_text(c.id)?, None));
        }
        let answers = match (&*m.role, m.tool_call_id) {
            ("tool", id) => Some((id_text(id)?, None)),
            _ => None,
        };
        msgs.push(Msg {
            role: m.role,
            calls,
            answers,
        });
    }
    Ok(msgs)
}

/// An id's text ("" when absent or `null`).
fn id_text(raw: Option<&RawValue>) -> Result<Cow<'_, str>, WireError> {
    Ok(match raw {
        Some(r) => serde_json::from_str::<Option<Str<'_>>>(r.get())?
            .map(|s| s.0)
            .unwrap_or_default(),
        None => Cow::Borrowed(""),
    })
}

pub(super) fn layout(body: &[u8]) -> Result<Layout<'_>, WireError> {
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        messages: &'a RawValue,
    }
    let text = utf8(body)?;
    let top: Top<'_> = serde_json::from_str(text)?;
    let raws = elements(top.messages)?;
    let mut msgs = Vec::with_capacity(raws.len());
    /// A message with each call's raw text, to find where a call that has
    /// no id opens.
    #[derive(Deserialize)]
    struct LocatedMsg<'a> {
        #[serde(borrow)]
        role: Cow<'a, str>,
        #[serde(borrow, default)]
        tool_calls: Option<Vec<&'a RawValue>>,
        #[serde(borrow, default)]
        tool_call_id: Option<&'a RawValue>,
    }
    for raw in &raws {
        let base = raw.get();
        let m: LocatedMsg<'_> = serde_json::from_str(base)?;
        let mut calls = Vec::new();
        for c in m.tool_calls.into_iter().flatten() {
            let call: RawCall<'_> = serde_json::from_str(c.get())?;
            calls.push(id_of(call.id, c.get(), base)?);
        }
        let answers = match (&*m.role, m.tool_call_id) {
            ("tool", id) => Some(id_of(id, base, base)?),
            _ => None,
        };
        msgs.push(Msg {
            role: m.role,
            calls,
            answers,
        });
    }
    Ok(Layout {
        text,
        array: top.messages,
        raws,
        msgs,
    })
}
