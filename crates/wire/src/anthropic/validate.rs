//! Pairing defects the Messages API rejects, worded as it words them.
//!
//! - every client `tool_use` id must be answered by a `tool_result` in the
//!   next message, which must be a user message starting with the results;
//! - every `tool_result` must answer a `tool_use` of the previous message;
//! - `tool_use` ids (client and server) are unique in the whole request;
//! - a `tool_result` flagged `is_error: true` has something in it: else
//!   "messages.N.content.J.tool_result: content cannot be empty if
//!   `is_error` is true" (for `""` and `[]`, as the API's 400s quote it;
//!   an absent or `null` content is taken as empty too).
//!
//! - a last message of role `assistant` (a prefill) must not end in
//!   whitespace: its string content, or its last block when that is a
//!   `text` block: "messages: final assistant content cannot end with
//!   trailing whitespace".
//!
//! A request continuing a message thread (`thread.type` `continue`) sends
//! only the new messages: its first message, a user one, answers the calls
//! of the reply the API holds, so its results answer no call of the body
//! and are not orphans (a second result for one id still is a defect).
//!
//! Server tools (`server_tool_use` and their `*_tool_result` blocks) are
//! answered inside the same assistant message by Anthropic itself and are
//! not checked.

use super::{
    layout::{Shape, outline},
    model::TRAILING_WHITESPACE,
};
use crate::{Defect, DefectKind, WireError, id_set::IdSet};

pub(crate) fn validate(body: &[u8]) -> Result<Vec<Defect>, WireError> {
    let o = outline(body)?;
    Ok(defects(&o.msgs, o.held))
}

/// The defects of `msgs`; `held`: the body continues a message thread, so
/// its first message, a user one, answers the calls of the reply the API
/// holds (which are not in the body).
pub(super) fn defects<'a, M: AsRef<Shape<'a>>>(msgs: &[M], held: bool) -> Vec<Defect> {
    let mut out = Vec::new();
    // Every call id of the request: sized once, not grown call by call.
    let calls = msgs.iter().map(|m| m.as_ref().blocks.len()).sum();
    let mut seen: ahash::AHashSet<&str> = ahash::AHashSet::with_capacity(calls);
    let at = |i: usize| msgs.get(i).map(AsRef::as_ref);
    for (i, m) in msgs.iter().map(AsRef::as_ref).enumerate() {
        if m.is_assistant() {
            for (j, b) in m.blocks.iter().enumerate() {
                let is_call = matches!(
                    b.class,
                    super::model::BlockClass::Call | super::model::BlockClass::ServerCall
                );
                if is_call && !seen.insert(&b.id) {
                    out.push(Defect {
                        kind: DefectKind::DuplicateCallId,
                        message_index: i,
                        call_ids: vec![b.id.to_string()],
                        message: format!("messages.{i}.content.{j}: `tool_use` ids must be unique"),
                    });
                }
            }
            check_answered(i, m, at(i + 1), &mut out);
        }
        check_results(i, m, i.checked_sub(1).and_then(at), held, &mut out);
        check_empty_errors(i, m, &mut out);
    }
    if let Some(last) = msgs.last().map(AsRef::as_ref)
        && last.is_assistant()
        && last.ends_in_space
    {
        out.push(Defect {
            kind: DefectKind::TrailingWhitespace,
            message_index: msgs.len() - 1,
            call_ids: Vec::new(),
            message: TRAILING_WHITESPACE.to_string(),
        });
    }
    out.sort_by_key(|d| d.message_index);
    out
}

/// The calls of assistant message `i` against the message after it.
/// Membership is by set: a client controls how many calls a message holds.
fn check_answered(i: usize, m: &Shape<'_>, next: Option<&Shape<'_>>, out: &mut Vec<Defect>) {
    // Each id once, in call order.
    let mut unique = IdSet::default();
    let calls: Vec<&str> = m
        .calls()
        .map(|(_, id)| id)
        .filter(|&id| unique.insert(id))
        .collect();
    if calls.is_empty() {
        return;
    }
    let (leading, all): (IdSet<'_>, IdSet<'_>) = match next {
        Some(n) if n.is_user() => {
            let leading = n
                .blocks
                .iter()
                .take_while(|b| b.class == super::model::BlockClass::Result)
                .map(|b| &*b.id)
                .collect();
            (leading, n.results().map(|(_, id)| id).collect())
        }
        _ => (IdSet::default(), IdSet::default()),
    };
    let missing: Vec<&str> = calls.iter().copied().filter(|c| !all.contains(c)).collect();
    if !missing.is_empty() {
        out.push(Defect {
            kind: DefectKind::MissingResult,
            message_index: i,
            call_ids: missing.iter().map(|s| s.to_string()).collect(),
            message: format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                missing.join(", ")
            ),
        });
    }
    let late: Vec<&str> = calls
        .iter()
        .copied()
        .filter(|c| all.contains(c) && !leading.contains(c))
        .collect();
    if !late.is_empty() {
        let n = i + 1;
        out.push(Defect {
            kind: DefectKind::ResultsNotFirst,
            message_index: n,
            call_ids: late.iter().map(|s| s.to_string()).collect(),
            message: format!(
                "messages.{n}: Did not find {} `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
                calls.len()
            ),
        });
    }
}

/// The error results of message `i` with nothing in them.
fn check_empty_errors(i: usize, m: &Shape<'_>, out: &mut Vec<Defect>) {
    for (j, b) in m.blocks.iter().enumerate().filter(|(_, b)| b.empty_error) {
        out.push(Defect {
            kind: DefectKind::EmptyErrorResult,
            message_index: i,
            call_ids: vec![b.id.to_string()],
            message: format!(
                "messages.{i}.content.{j}.tool_result: content cannot be empty if `is_error` is true"
            ),
        });
    }
}

/// The results of message `i` against the calls of the message before it.
fn check_results(
    i: usize,
    m: &Shape<'_>,
    prev: Option<&Shape<'_>>,
    held: bool,
    out: &mut Vec<Defect>,
) {
    let prev_calls: IdSet<'_> = match prev {
        Some(p) if p.is_assistant() && m.is_user() => p.calls().map(|(_, id)| id).collect(),
        // A thread's held reply: each id may be answered, once.
        None if held && m.is_user() => m.results().map(|(_, id)| id).collect(),
        _ => IdSet::default(),
    };
    crate::defect::check_answers(
        i,
        m.results(),
        &prev_calls,
        |j, id| {
            format!(
                "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            )
        },
        |j, id| {
            format!(
                "messages.{i}.content.{j}: `tool_result` blocks must have unique `tool_use_id`s: {id} is answered more than once"
            )
        },
        out,
    );
}
