//! Byte-exact repair of a Chat body's call/result pairing.
//!
//! A repeated id inside one `tool_calls` array gets a fresh id (and so does
//! the tool message that answered that occurrence); after each assistant
//! message with `tool_calls` comes one tool message per call, in call
//! order: the one that answered it (moved there if it was elsewhere) or an
//! inserted error text framed so the model cannot take it for output. A
//! second answer to the same call and a tool message that answers no call
//! are dropped (a user text would be no safer: the model would read it as
//! the user speaking). Untouched messages are copied verbatim.

use std::{borrow::Cow, collections::HashSet};

use toolwarden_core::{ErrorKind, ToolFailure, ToolOutcome};

use super::{
    layout::{Layout, layout, outline},
    validate::defects,
};
use crate::{
    Change, ChangeKind, DefectKind, Repaired, WireError,
    pairing::{CallSite, Fate, MISSING_RESULT_TEXT, ResultSite, assign},
    splice::{Piece, json_string, locate, rebuild_array, replace},
};

pub(crate) fn repair(body: &[u8]) -> Result<Repaired<'_>, WireError> {
    // The one-pass outline decides; only a body with defects is laid out.
    if defects(&outline(body)?).is_empty() {
        return Ok(Repaired {
            body: Cow::Borrowed(body),
            changes: Vec::new(),
        });
    }
    let l = layout(body)?;
    let mut changes = Vec::new();
    let renames = rename_duplicates(&l, &mut changes);
    let id_of = |i: usize, k: usize| -> String {
        renames
            .iter()
            .find(|r| r.msg == i && r.pos == k)
            .map_or_else(|| id_at(&l, i, k).to_string(), |r| r.new.clone())
    };
    let mut calls = Vec::new();
    let mut results = Vec::new();
    let mut result_of = vec![0; l.msgs.len()];
    for (i, m) in l.msgs.iter().enumerate() {
        if m.is_assistant() {
            for k in 0..m.calls.len() {
                calls.push(CallSite {
                    msg: i,
                    id: id_of(i, k),
                });
            }
        }
        if m.is_tool() {
            result_of[i] = results.len();
            results.push(ResultSite {
                msg: i,
                pos: 0,
                id: id_of(i, 0),
            });
        }
    }
    let plan = assign(&calls, &results, |c, r| {
        r.msg > c.msg && r.msg <= l.run_end(c.msg)
    });
    let mut out: Vec<Piece<'_>> = Vec::with_capacity(l.raws.len() + 4);
    let mut ci = 0;
    for (i, m) in l.msgs.iter().enumerate() {
        if m.is_tool() {
            let ri = result_of[i];
            let id = &results[ri].id;
            match plan.fate[ri] {
                Fate::Answers(c) if calls[c].msg < i && l.run_end(calls[c].msg) >= i => {} // emitted with its call
                Fate::Answers(c) => changes.push(change(
                    ChangeKind::MovedResult,
                    DefectKind::OrphanResult,
                    i,
                    id,
                    format!(
                        "tool message for {id} moved to follow its call in message {}",
                        calls[c].msg
                    ),
                )),
                Fate::Duplicate => changes.push(change(
                    ChangeKind::RemovedDuplicate,
                    DefectKind::DuplicateCallId,
                    i,
                    id,
                    format!("second tool message for {id} removed"),
                )),
                Fate::Orphan => changes.push(change(
                    ChangeKind::RemovedResult,
                    DefectKind::OrphanResult,
                    i,
                    id,
                    format!("tool message for unknown call {id} removed"),
                )),
            }
            continue;
        }
        out.push(with_renames(&l, i, &renames));
        if !m.is_assistant() || m.calls.is_empty() {
            continue;
        }
        let end = l.run_end(i);
        let mine: Vec<usize> = (ci..ci + m.calls.len()).collect();
        ci += m.calls.len();
        // The run stays as it is when it answers exactly these calls.
        let exact = end - i == mine.len()
            && (i + 1..=end).all(|t| {
                let ri = result_of[t];
                matches!(plan.fate[ri], Fate::Answers(c) if mine.contains(&c))
                    && !renames.iter().any(|r| r.msg == t)
            });
        if exact {
            out.extend((i + 1..=end).map(|t| Piece::Raw(l.raws[t].get())));
            continue;
        }
        for &c in &mine {
            let id = &calls[c].id;
            match plan.answer[c] {
                Some(ri) => out.push(with_renames(&l, results[ri].msg, &renames)),
                None => {
                    out.push(Piece::New(format!(
                        r#"{{"role":"tool","tool_call_id":{},"content":{}}}"#,
                        json_string(id),
                        json_string(&missing_text(id))
                    )));
                    changes.push(change(
                        ChangeKind::InsertedResult,
                        DefectKind::MissingResult,
                        i,
                        id,
                        format!("error tool message inserted for unanswered call {id}"),
                    ));
                }
            }
        }
    }
    changes.sort_by_key(|c| c.message_index);
    let array = rebuild_array(l.array.get(), &l.raws, &out);
    let span = locate(l.text, l.array)?;
    Ok(Repaired {
        body: Cow::Owned(replace(l.text, span, &array).into_bytes()),
        changes,
    })
}

/// The flagless error text of an inserted tool message.
fn missing_text(id: &str) -> String {
    let failure = ToolFailure {
        kind: ErrorKind::Internal,
        code: Some("missing_result".into()),
        technical_message: format!("no tool message answered {id}"),
        model_message: MISSING_RESULT_TEXT.into(),
        retryable: false,
        fatal: false,
    };
    ToolOutcome::failure(id, "", failure).flagless_text()
}

fn change(kind: ChangeKind, defect: DefectKind, i: usize, id: &str, description: String) -> Change {
    Change {
        kind,
        defect,
        message_index: i,
        call_id: Some(id.to_string()),
        description,
    }
}

/// A renamed id: position 0 of a tool message is its `tool_call_id`.
struct Rename {
    msg: usize,
    pos: usize,
    new: String,
}

fn id_at<'l>(l: &'l Layout<'_>, i: usize, k: usize) -> &'l str {
    let m = &l.msgs[i];
    if m.is_tool() {
        m.answers.as_ref().map_or("", |a| &a.0)
    } else {
        m.calls.get(k).map_or("", |c| &c.0)
    }
}

/// Fresh ids for ids repeated inside one `tool_calls` array, and for the
/// tool message answering each repeated occurrence.
fn rename_duplicates(l: &Layout<'_>, changes: &mut Vec<Change>) -> Vec<Rename> {
    let taken: HashSet<&str> = l
        .msgs
        .iter()
        .flat_map(|m| {
            m.calls
                .iter()
                .map(|c| &*c.0)
                .chain(m.answers.iter().map(|a| &*a.0))
        })
        .collect();
    let mut renames: Vec<Rename> = Vec::new();
    for (i, m) in l.msgs.iter().enumerate() {
        let end = l.run_end(i);
        for (k, (id, _)) in m.calls.iter().enumerate() {
            let n = m.calls[..k].iter().filter(|c| c.0 == *id).count();
            if n == 0 {
                continue;
            }
            let new = (1..)
                .map(|j| format!("{id}_dup{j}"))
                .find(|c| !taken.contains(c.as_str()) && !renames.iter().any(|r| &r.new == c))
                .unwrap_or_default();
            changes.push(change(
                ChangeKind::RenamedDuplicateId,
                DefectKind::DuplicateCallId,
                i,
                id,
                format!("repeated tool call id {id} renamed to {new}"),
            ));
            // The n-th tool message answering this id in the run answered it.
            if let Some(t) = (i + 1..=end).filter(|&t| id_at(l, t, 0) == id).nth(n) {
                renames.push(Rename {
                    msg: t,
                    pos: 0,
                    new: new.clone(),
                });
            }
            renames.push(Rename {
                msg: i,
                pos: k,
                new,
            });
        }
    }
    renames
}

/// Message `i`, with its renamed ids replaced in place.
fn with_renames<'a>(l: &Layout<'a>, i: usize, renames: &[Rename]) -> Piece<'a> {
    let raw = l.raws[i].get();
    let m = &l.msgs[i];
    let mut spans: Vec<(std::ops::Range<usize>, &str)> = renames
        .iter()
        .filter(|r| r.msg == i)
        .filter_map(|r| {
            let span = if m.is_tool() {
                m.answers.as_ref()?.1.clone()
            } else {
                m.calls.get(r.pos)?.1.clone()
            };
            Some((span?, r.new.as_str()))
        })
        .collect();
    if spans.is_empty() {
        return Piece::Raw(raw);
    }
    spans.sort_by_key(|(s, _)| std::cmp::Reverse(s.start));
    let mut text = raw.to_string();
    for (span, new) in spans {
        text = replace(&text, span, &json_string(new));
    }
    Piece::New(text)
}
