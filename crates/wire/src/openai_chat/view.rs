//! The request view: calls and results of a Chat Completions body.
//!
//! Calls: `tool_calls` of assistant messages (`function` and `custom`
//! tools) and legacy `function_call`s, whose synthetic id is
//! `function:<name>#<n>` (`n` counts legacy calls from 0). Results:
//! `role: tool` messages (string or text-part content) and legacy
//! `role: function` messages, which answer the latest legacy call of their
//! name. A client that answers calls in text (Hugging Face smolagents: the
//! calls in an assistant's text, `Observation:` or `Error:` in a user's)
//! adds the calls its texts name and the answers its user texts hold
//! ([`crate::text_answers`]; such an error is an explicit failure). Chat
//! has no error flag: the verdict comes from MCP `isError`
//! inside the content, else the content [`crate::Detector`]
//! (`Basis::Heuristic` when it reads as a failure, `Basis::None`
//! otherwise), decided when the result is read ([`read_result`]); message
//! contents stay raw JSON except those of the first turn (hashed). The tool name is
//! resolved from the latest earlier call with the result's id (ids may be
//! reused across turns, as tau-bench's are).

use std::borrow::Cow;

use ahash::AHashMap;

use toolwarden_core::Verdict;

use super::{
    layout::Msg,
    model::{Message, Request, legacy_id},
    validate::defects,
};
use crate::{
    CallView, RequestView, ResultView, WireError,
    content::FlatContent,
    raw_result::RawResult,
    scan::Bail,
    text::{Fnv64, Judge, flagless_verdict},
    text_answers::{self, TextSteps},
};

/// See [`crate::request_view`]; verdicts are decided by [`read_result`].
pub(crate) fn request_view<'a>(body: &'a [u8]) -> Result<RequestView<'a>, WireError> {
    read(body, false).map(|(view, _)| view)
}

/// See [`crate::inspect`]: the view and, from the same parse, the roles
/// and ids validation looks at. A body the view refuses is validated on
/// its own, so the defects are always those [`super::validate()`] finds.
pub(crate) fn inspect(body: &[u8]) -> crate::Inspection<'_> {
    crate::Inspection::of(read(body, true), || super::validate(body))
}

/// The view; with `check`, also the defects of each message's role and ids.
/// The fast path ([`super::fast`]) reads the body first; a body it does
/// not take is read by serde, from the start.
fn read<'a>(body: &'a [u8], check: bool) -> crate::Pass<'a> {
    let text = crate::splice::utf8(body)?;
    let req = match super::fast::request(text) {
        Ok(req) => req,
        Err(Bail) => serde_json::from_str(text)?,
    };
    view_of(req, check)
}

/// See [`crate::fast_path_agrees`].
pub(crate) fn fast_path_agrees(body: &[u8]) -> Result<(), String> {
    let Ok(text) = crate::splice::utf8(body) else {
        return Ok(());
    };
    fast_then_serde(text).unwrap_or(Ok(()))
}

/// `None` when the fast path does not take `text`; else whether serde
/// reads the same view and defects (see [`crate::same_pass`]).
pub(super) fn fast_then_serde(text: &str) -> Option<Result<(), String>> {
    let fast = super::fast::request(text)
        .ok()
        .map(|req| view_of(req, true));
    crate::same_pass(fast, || {
        let full = serde_json::from_str(text).map_err(WireError::from);
        format!("{:?}", full.and_then(|req| view_of(req, true)))
    })
}

/// The view of a read body.
pub(super) fn view_of<'a>(req: Request<'a>, check: bool) -> crate::Pass<'a> {
    let found = check.then(|| {
        let outline: Vec<Msg<'_>> = req
            .messages
            .iter()
            .map(|m| Msg {
                role: m.role.clone(),
                calls: m
                    .tool_calls
                    .iter()
                    .flatten()
                    .map(|c| (c.id.clone().unwrap_or_default(), None))
                    .collect(),
                answers: (m.role == "tool")
                    .then(|| (m.tool_call_id.clone().unwrap_or_default(), None)),
            })
            .collect();
        defects(&outline)
    });
    let mut assistants = req
        .messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| m.role == "assistant")
        .map(|(i, _)| i);
    let last_assistant = assistants.next();
    let last_assistant =
        crate::view::new_after(last_assistant, assistants.next(), req.messages.len());
    let first_user = req.messages.iter().position(|m| m.role == "user");
    let mut view = RequestView {
        model: req.model,
        stream: req.stream.unwrap_or(false),
        message_count: req.messages.len(),
        choices: req.n.and_then(|n| n.0.parse().ok()),
        ..RequestView::default()
    };
    let mut hash = Fnv64::default();
    // Per call id: its latest call (by index into `view.calls`) and how
    // many of its calls no tool message has answered yet. A tool message
    // with none open is a second answer (the API refuses it: "Duplicate
    // value for 'tool_call_id' …"), or a second one with no call at all:
    // not a result of its own, the call's result counts once.
    let mut names: AHashMap<Cow<'a, str>, (Option<usize>, u32)> = AHashMap::new();
    let mut legacy: AHashMap<Cow<'a, str>, String> = AHashMap::new();
    // A client that answers calls in text (`crate::text_answers`).
    let mut steps = TextSteps::default();
    for (i, msg) in req.messages.into_iter().enumerate() {
        if first_user.is_some_and(|u| i <= u) {
            hash_message(&mut hash, &msg)?;
        }
        let new = last_assistant.is_none_or(|a| i > a);
        match &*msg.role {
            "assistant" if msg.tool_calls.is_none() && msg.function_call.is_none() => {
                steps.assistant(msg.content.map(|r| r.0), i, &mut view.calls);
            }
            "user" => steps.user(msg.content.map(|r| r.0), i, new, &mut view.results),
            _ => steps.other(),
        }
        match &*msg.role {
            "assistant" => {
                for tc in msg.tool_calls.into_iter().flatten() {
                    let id = tc.id.clone().unwrap_or_default();
                    let (name, arguments) = tc.parts();
                    let entry = names.entry(id.clone()).or_default();
                    *entry = (Some(view.calls.len()), entry.1.saturating_add(1));
                    view.calls.push(CallView {
                        id,
                        name,
                        arguments,
                        message_index: i,
                    });
                }
                if let Some(f) = msg.function_call {
                    let name = f.name.unwrap_or_default();
                    let id = legacy_id(&name, legacy.len());
                    legacy.insert(name.clone(), id.clone());
                    view.calls.push(CallView {
                        id: Cow::Owned(id),
                        name,
                        arguments: f.arguments.unwrap_or_default(),
                        message_index: i,
                    });
                }
            }
            "tool" => {
                let call_id = msg.tool_call_id.unwrap_or_default();
                let (call, first) = match names.get_mut(&call_id) {
                    Some((call, open)) => {
                        let first = *open > 0;
                        *open = open.saturating_sub(1);
                        (*call, first)
                    }
                    None => {
                        names.insert(call_id.clone(), (None, 0));
                        (None, true)
                    }
                };
                let tool = call.map(|c| view.calls[c].name.clone()).or(msg.name);
                view.results.push(ResultView {
                    call_id,
                    tool,
                    message_index: i,
                    new: new && first,
                    raw: RawResult::Chat {
                        content: msg.content.map(|r| r.0),
                    },
                });
            }
            "function" => {
                let name = msg.name.unwrap_or_default();
                let call_id = legacy
                    .get(&name)
                    .cloned()
                    .unwrap_or_else(|| format!("function:{name}"));
                view.results.push(ResultView {
                    call_id: Cow::Owned(call_id),
                    tool: Some(name),
                    message_index: i,
                    new,
                    raw: RawResult::Chat {
                        content: msg.content.map(|r| r.0),
                    },
                });
            }
            _ => {}
        }
    }
    if first_user.is_some() {
        view.first_turn_hash = Some(hash.finish());
    }
    Ok((view, found))
}

/// The first turn (system/developer messages and the first user message):
/// roles and text only, so attributes that move between turns do not count;
/// of a user's text, the user's words alone (smolagents joins a failed
/// step's error to the task: [`text_answers::user_words`]).
fn hash_message(hash: &mut Fnv64, m: &Message<'_>) -> Result<(), WireError> {
    hash.field(m.role.as_bytes());
    if let Some(c) = m.content {
        let text = crate::opening::opening_text(Some(c.0))?;
        let words = match &*m.role {
            "user" if text_answers::may_hold_errors(c.0) => text_answers::user_words(&text),
            _ => &text,
        };
        hash.field(words.as_bytes());
    }
    Ok(())
}

/// Read a result (see [`ResultView::read`]): Chat has no error flag, so
/// MCP `isError` inside the content, else the detector.
pub(crate) fn read_result<'a>(
    content: Option<&'a str>,
    judge: Judge<'_>,
) -> Result<(Cow<'a, str>, Verdict), WireError> {
    let text = FlatContent::parse(content)?.text;
    let verdict = flagless_verdict(&text, judge);
    Ok((text, verdict))
}
