//! Pairing defects Chat Completions rejects, worded as OpenAI words them.
//!
//! An assistant message with `tool_calls` must be followed by one `tool`
//! message per call id (the run of tool messages right after it); a tool
//! message must answer a call of the assistant message before its run.
//! Ids are checked per assistant message: reusing an id in a later turn is
//! accepted by OpenAI (tau-bench's recorded traffic does it). Legacy
//! `function_call` / `role: function` pairs are not checked (the API never
//! paired them strictly).
//!
//! The texts of the missing-response and no-preceding-`tool_calls` defects
//! and of a repeated `tool_call_id` are OpenAI's (including its spelling
//! "preceeding"); the text for a repeated id inside one `tool_calls` array
//! is ours, in the same style.

use ahash::{AHashMap, AHashSet};

use super::layout::{Msg, outline, run_end};
use crate::{Defect, DefectKind, WireError};

pub(crate) fn validate(body: &[u8]) -> Result<Vec<Defect>, WireError> {
    Ok(defects(&outline(body)?))
}

pub(super) fn defects(msgs: &[Msg<'_>]) -> Vec<Defect> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        if m.is_tool() {
            // A tool message not in the run of an assistant's tool_calls.
            let id = m.answers.as_ref().map_or("", |a| &a.0);
            out.push(orphan(i, id, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into()));
            i += 1;
            continue;
        }
        if !m.is_assistant() || m.calls.is_empty() {
            i += 1;
            continue;
        }
        // Each id once, in call order; membership by set, as a client
        // controls how many calls a message holds.
        let mut calls: Vec<&str> = Vec::new();
        let mut unique: AHashSet<&str> = AHashSet::new();
        for (id, _) in &m.calls {
            if !unique.insert(id) {
                out.push(Defect {
                    kind: DefectKind::DuplicateCallId,
                    message_index: i,
                    call_ids: vec![id.to_string()],
                    message: format!(
                        "Invalid parameter: Duplicate value for 'id' of '{id}' in messages[{i}].tool_calls."
                    ),
                });
            } else {
                calls.push(id);
            }
        }
        let end = run_end(msgs, i);
        // The first tool message answering each id.
        let mut answered: AHashMap<&str, usize> = AHashMap::new();
        for (t, tool) in msgs.iter().enumerate().take(end + 1).skip(i + 1) {
            let id = tool.answers.as_ref().map_or("", |a| &*a.0);
            if let Some(&first) = answered.get(id) {
                out.push(Defect {
                    kind: DefectKind::DuplicateCallId,
                    message_index: t,
                    call_ids: vec![id.to_string()],
                    message: format!(
                        "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in messages[{first}] and messages[{t}]."
                    ),
                });
            } else if !unique.contains(id) {
                out.push(orphan(
                    t,
                    id,
                    format!("Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."),
                ));
            } else {
                answered.insert(id, t);
            }
        }
        let missing: Vec<&str> = calls
            .iter()
            .copied()
            .filter(|c| !answered.contains_key(c))
            .collect();
        if !missing.is_empty() {
            out.push(Defect {
                kind: DefectKind::MissingResult,
                message_index: i,
                call_ids: missing.iter().map(|s| s.to_string()).collect(),
                message: format!(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                    missing.join(", ")
                ),
            });
        }
        i = end + 1;
    }
    out.sort_by_key(|d| d.message_index);
    out
}

fn orphan(i: usize, id: &str, message: String) -> Defect {
    Defect {
        kind: DefectKind::OrphanResult,
        message_index: i,
        call_ids: vec![id.to_string()],
        message,
    }
}
