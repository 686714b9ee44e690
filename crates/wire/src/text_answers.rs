//! Tool calls a client answers in text, not with the dialect's result
//! messages: Hugging Face smolagents' `ToolCallingAgent` (1.x).
//!
//! The model calls tools as the API lets it (Chat `tool_calls`; through
//! LiteLLM, Anthropic `tool_use`, Gemini `functionCall`, Converse
//! `toolUse`), but the agent writes each step back as plain messages (its
//! `tool_role_conversions`), consecutive messages of one role joined into
//! one with newlines:
//!
//! - the model's own text, if it wrote any, as an assistant message;
//! - a step whose tools all ran: `Calling tools:\n[{'id': 'call_…',
//!   'type': 'function', 'function': {'name': …, 'arguments': {…}}}]` (a
//!   Python `repr`) ending the assistant's text, then a user message
//!   `Observation:\n<outputs>`: the outputs of all the step's calls,
//!   joined with newlines;
//! - a step where a tool raised: the agent forgets the step's calls, and
//!   writes `Error:\nError executing tool '<name>' with arguments {…}:
//!   <exception>\nPlease try again or use another tool\nNow let's retry: …`
//!   as a user text (with `Call id: <id>\n` before it when it kept the
//!   calls, as for an error it raises after running them). A model that
//!   wrote no text beside its calls leaves no assistant message for such a
//!   step, so the error joins the user message before it: the task, or the
//!   last step's observation, followed by one error per failed step. An
//!   unknown tool (`Unknown tool …`) and arguments the agent refuses
//!   (`Argument … has type …`) are errors that name no call.
//!
//! The view reads the calls of `Calling tools:` (with their ids), and each
//! answer of a user message ([`answers_in`]): an observation answers each
//! of its step's calls with the whole text (nothing marks where one output
//! ends); an error answers the call that failed, as an explicit failure:
//! one of its step's calls (by the tool it names, else by the id), else,
//! the calls forgotten, the call it names by tool and arguments — under a
//! made-up id (`text:<name>#<k>`, `k` its place among the message's
//! errors), naming the model turn of that one call ([`TextAnswer::turn`]),
//! by which the gateway finds the call its response made. An error that
//! names no call answers nothing: its call stays unanswered.

mod python;

use std::borrow::Cow;

use serde_json::Value;
use toolwarden_core::Verdict;

use crate::{
    CallView, ResultView, WireError,
    content::FlatContent,
    raw_result::RawResult,
    seed::Needle,
    text::{Judge, flagless_verdict},
};

/// Where a step's calls start in the assistant's text.
const CALLS: &str = "Calling tools:\n[";

/// [`CALLS`] as it appears inside a JSON string (the newline escaped).
static CALLS_IN_JSON: Needle = Needle::new("Calling tools:\\n[");

/// [`OBSERVATION`] as it appears inside a JSON string.
static OBSERVATION_IN_JSON: Needle = Needle::new("Observation:\\n");

const OBSERVATION: &str = "Observation:\n";
const CALL_ID: &str = "Call id: ";
const ERROR: &str = "Error:\n";
const EXECUTING: &str = "Error executing tool '";

/// What the agent writes after an error, which ends it.
const RETRY: &str = "\nNow let's retry: take care not to repeat previous errors!";

/// [`RETRY`] as it appears inside a JSON string.
static RETRY_IN_JSON: Needle =
    Needle::new("Now let's retry: take care not to repeat previous errors!");

/// A call as a step's text names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextCall {
    pub id: String,
    pub name: String,
    /// As JSON text.
    pub arguments: String,
}

/// A result a user's text holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextAnswer {
    /// The call it answers.
    pub call: TextCall,
    /// Its place among the text's answers ([`answer_text`]).
    pub segment: u32,
    /// For a call read from its error: the fingerprint of the model turn
    /// of that one call ([`crate::turn::fingerprint`]).
    pub turn: Option<u64>,
}

/// A conversation's steps answered in text, as a dialect's view reads its
/// messages in order: each message is either an assistant's text (no
/// calls of the API's own), a user's text (no results of the API's own),
/// or another message. The same for every dialect whose content is a
/// string or text parts (Chat, Anthropic Messages, Gemini, Bedrock
/// Converse).
#[derive(Debug, Default)]
pub(crate) struct TextSteps {
    /// The calls the message right before named, when it was an
    /// assistant's text.
    named: Vec<TextCall>,
}

impl TextSteps {
    /// An assistant's text, `content` its raw JSON, at message `i`: the
    /// calls it names, added to `calls`.
    pub(crate) fn assistant<'a>(
        &mut self,
        content: Option<&str>,
        i: usize,
        calls: &mut Vec<CallView<'a>>,
    ) {
        self.named = calls_of(content);
        calls.extend(self.named.iter().map(|call| CallView {
            id: Cow::Owned(call.id.clone()),
            name: Cow::Owned(call.name.clone()),
            arguments: Cow::Owned(call.arguments.clone()),
            message_index: i,
        }));
    }

    /// A user's text, `content` its raw JSON, at message `i`: the answers
    /// it holds, added to `results` (`new` as the view decides it).
    pub(crate) fn user<'a>(
        &mut self,
        content: Option<&'a str>,
        i: usize,
        new: bool,
        results: &mut Vec<ResultView<'a>>,
    ) {
        let named = std::mem::take(&mut self.named);
        results.extend(
            answers_in(content, &named)
                .into_iter()
                .map(|answer| ResultView {
                    call_id: Cow::Owned(answer.call.id),
                    tool: Some(Cow::Owned(answer.call.name)),
                    message_index: i,
                    new,
                    raw: RawResult::TextAnswer {
                        content,
                        segment: answer.segment,
                        turn: answer.turn,
                    },
                }),
        );
    }

    /// Any other message: the calls named before it are not the step's
    /// right before the next user text.
    pub(crate) fn other(&mut self) {
        self.named.clear();
    }
}

/// The calls an assistant's content (raw JSON: a string or text parts)
/// names, decoded only when its raw text holds the mark (a newline inside
/// a JSON string is always escaped).
pub(crate) fn calls_of(content: Option<&str>) -> Vec<TextCall> {
    match content {
        Some(raw) if CALLS_IN_JSON.in_(raw.as_bytes()) => FlatContent::parse(Some(raw))
            .map(|c| calls_named(&c.text))
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The results a user's content (raw JSON) holds, `named` the calls of
/// the step right before it (empty when the message before it is not an
/// assistant's text naming calls). Decoded only when it may hold one.
pub(crate) fn answers_in(content: Option<&str>, named: &[TextCall]) -> Vec<TextAnswer> {
    let Some(raw) = content else {
        return Vec::new();
    };
    let observed =
        !named.is_empty() && OBSERVATION_IN_JSON.in_(&raw.as_bytes()[..raw.len().min(64)]);
    if !observed && !may_hold_errors(raw) {
        return Vec::new();
    }
    let Ok(content) = FlatContent::parse(content) else {
        return Vec::new();
    };
    let mut answers = Vec::new();
    for (k, segment) in segments(&content.text).into_iter().enumerate() {
        let segment_index = u32::try_from(k).unwrap_or(u32::MAX);
        match segment.kind {
            Kind::Observation if !named.is_empty() && k == 0 => {
                answers.extend(named.iter().map(|call| TextAnswer {
                    call: call.clone(),
                    segment: segment_index,
                    turn: None,
                }));
            }
            Kind::Observation => {}
            Kind::Error { call_id, tool } => {
                // Only the first answer can be the step's before it.
                let step = if k == 0 { named } else { &[] };
                let failed = tool
                    .as_ref()
                    .and_then(|(name, _)| step.iter().find(|c| c.name == *name))
                    .or_else(|| step.iter().find(|c| Some(c.id.as_str()) == call_id));
                let answer = match (failed, tool) {
                    (Some(call), _) => TextAnswer {
                        call: call.clone(),
                        segment: segment_index,
                        turn: None,
                    },
                    (None, Some((name, arguments))) if step.is_empty() => TextAnswer {
                        turn: Some(crate::turn::fingerprint([(name, arguments.as_str())])),
                        call: TextCall {
                            id: format!("text:{name}#{k}"),
                            name: name.to_string(),
                            arguments,
                        },
                        segment: segment_index,
                    },
                    (None, _) => continue,
                };
                answers.push(answer);
            }
        }
    }
    answers
}

/// Whether a content's raw JSON may hold a step's error: its last bytes
/// hold the agent's retry advice, which ends each error, and the last
/// error ends the text the agent joined it to (the next step's text goes
/// to an assistant message). A look at the tail alone: every user message
/// of every Chat request is asked. (A user text the agent joins after an
/// error — a new task on a kept memory — hides the message's errors from
/// later requests; they were read when they ended it.)
pub(crate) fn may_hold_errors(raw: &str) -> bool {
    let tail = &raw.as_bytes()[raw.len().saturating_sub(ERROR_TAIL)..];
    RETRY_IN_JSON.in_(tail)
}

/// Whether a text (decoded) may be a step of a client that answers calls
/// in text: it names calls, opens with an observation, or ends with an
/// error. Every text whose raw JSON [`calls_of`] or [`answers_in`] reads
/// something from passes (a mark in raw JSON is the same mark decoded, no
/// farther from the text's start or end), so a view whose reader does not
/// keep a message's raw content can ask this first, and find the raw only
/// for the texts that pass.
pub(crate) fn may_be_step(text: &str) -> bool {
    let bytes = text.as_bytes();
    CALLS_IN_TEXT.in_(bytes)
        || bytes.starts_with(OBSERVATION.as_bytes())
        || RETRY_IN_JSON.in_(&bytes[bytes.len().saturating_sub(ERROR_TAIL)..])
}

/// [`CALLS`], decoded.
static CALLS_IN_TEXT: Needle = Needle::new(CALLS);

/// How far from a content's end its last error's advice starts, at most
/// (the advice's ~130 bytes, the JSON that closes the content).
const ERROR_TAIL: usize = 256;

/// A user's words: the text before the first answer it holds (an
/// error the agent joined to the task), without the newline that joined
/// them.
pub(crate) fn user_words(text: &str) -> &str {
    let end = segments(text).first().map_or(text.len(), |s| match s.kind {
        Kind::Observation => 0,
        Kind::Error { .. } => opening_of(text, s.output.start - ERROR.len()),
    });
    text[..end].strip_suffix('\n').unwrap_or(&text[..end])
}

/// The calls of the step an assistant's text ends with: the list after
/// the last `Calling tools:` line. Empty when the text names none or the
/// list does not read; a call without a string `id` and `name` is left
/// out.
pub(crate) fn calls_named(text: &str) -> Vec<TextCall> {
    let Some(start) = text
        .rmatch_indices(CALLS)
        .map(|(at, _)| at)
        .find(|&at| at == 0 || text.as_bytes()[at - 1] == b'\n')
    else {
        return Vec::new();
    };
    // From the list's `[`.
    let Some((Value::Array(items), _)) = python::literal(&text[start + CALLS.len() - 1..]) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let function = item.get("function")?;
            Some(TextCall {
                id: item.get("id")?.as_str()?.to_string(),
                name: function.get("name")?.as_str()?.to_string(),
                arguments: arguments_json(function.get("arguments")),
            })
        })
        .collect()
}

/// Arguments as the model wrote them: an object as JSON, a string (the
/// agent keeps one that is not JSON) as it is.
fn arguments_json(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// What an answer in a user's text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind<'t> {
    /// The tools ran: `Observation:`, at the text's start.
    Observation,
    /// A tool failed: `Error:` at a line's start, up to the agent's retry
    /// advice; the step's first call's id before it when the agent kept
    /// its calls, and the tool and arguments (as JSON) the error names
    /// when it names them.
    Error {
        call_id: Option<&'t str>,
        tool: Option<(&'t str, String)>,
    },
}

/// One answer in a user's text: its kind and its output's span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment<'t> {
    pub kind: Kind<'t>,
    pub output: std::ops::Range<usize>,
}

/// The answers in a user's text, in order: an observation that opens it,
/// then each error (a line `Error:`, or `Call id: …` and then `Error:`,
/// whose text runs to the agent's retry advice). An observation runs to
/// the first error.
pub(crate) fn segments(text: &str) -> Vec<Segment<'_>> {
    let mut errors = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(RETRY).map(|at| from + at) {
        // The last `Error:` line before the advice, after the last answer.
        let start = text[from..at]
            .match_indices(ERROR)
            .map(|(e, _)| from + e)
            .filter(|&e| e == 0 || text.as_bytes()[e - 1] == b'\n')
            .last();
        if let Some(start) = start {
            errors.push((start, at));
        }
        from = at + RETRY.len();
    }
    let mut out = Vec::new();
    if text.starts_with(OBSERVATION) {
        let end = errors.first().map_or(text.len(), |&(start, _)| {
            opening_of(text, start)
                .saturating_sub(1)
                .max(OBSERVATION.len())
        });
        out.push(Segment {
            kind: Kind::Observation,
            output: OBSERVATION.len()..end,
        });
    }
    for (start, end) in errors {
        let opening = opening_of(text, start);
        let call_id = (opening < start).then(|| &text[opening + CALL_ID.len()..start - 1]);
        let error = &text[start + ERROR.len()..end];
        out.push(Segment {
            kind: Kind::Error {
                call_id,
                tool: named_tool(error),
            },
            output: start + ERROR.len()..end,
        });
    }
    out
}

/// Where the error at `start` opens: at its `Call id:` line when one is
/// right before it.
fn opening_of(text: &str, start: usize) -> usize {
    let before = &text[..start.saturating_sub(1)];
    let line = before.rfind('\n').map_or(0, |at| at + 1);
    if start > 0 && before[line..].starts_with(CALL_ID) {
        line
    } else {
        start
    }
}

/// `Error executing tool '<name>' with arguments <repr>: <exception>`:
/// the name, and the arguments as JSON.
fn named_tool(error: &str) -> Option<(&str, String)> {
    let rest = error.strip_prefix(EXECUTING)?;
    let (name, rest) = rest.split_once("' with arguments ")?;
    let (arguments, rest) = python::literal(rest)?;
    rest.starts_with(": ")
        .then(|| (name, arguments_json(Some(&arguments))))
}

/// The output of the `segment`-th answer in a user's text, and whether it
/// is an error; the whole text, as no error, when it holds no such answer.
pub(crate) fn answer_text(text: Cow<'_, str>, segment: u32) -> (Cow<'_, str>, bool) {
    let found = segments(&text)
        .into_iter()
        .nth(segment as usize)
        .map(|s| (s.output, matches!(s.kind, Kind::Error { .. })));
    let Some((range, failed)) = found else {
        return (text, false);
    };
    let out = match text {
        Cow::Borrowed(t) => Cow::Borrowed(&t[range]),
        Cow::Owned(t) => Cow::Owned(t[range].to_string()),
    };
    (out, failed)
}

/// Read a text answer (see [`crate::ResultView::read`]): the output, an
/// explicit failure for an error, else as a flagless dialect's result (MCP
/// `isError`, else the detector).
pub(crate) fn read_result<'a>(
    content: Option<&'a str>,
    segment: u32,
    judge: Judge<'_>,
) -> Result<(Cow<'a, str>, Verdict), WireError> {
    let (out, failed) = answer_text(FlatContent::parse(content)?.text, segment);
    let verdict = if failed {
        Verdict::explicit(true)
    } else {
        flagless_verdict(&out, judge)
    };
    Ok((out, verdict))
}

#[cfg(test)]
mod tests;
