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

use std::borrow::Cow;

use ahash::AHashMap;
use toolwarden_core::{ErrorKind, ToolFailure, ToolOutcome};

use super::{
    layout::{Layout, layout, outline},
    validate::defects,
};
use crate::{
    Change, ChangeKind, DefectKind, Repaired, WireError,
    pairing::{CallSite, Fate, FreshIds, MISSING_RESULT_TEXT, ResultSite, assign},
    splice::{Piece, json_string, leading_member, locate, rebuild_array, replace},
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
    let run_end = l.run_ends();
    let renames = rename_duplicates(&l, &run_end, &mut changes);
    let id_of = |i: usize, k: usize| -> String {
        renames
            .new_id(i, k)
            .map_or_else(|| id_at(&l, i, k).to_string(), str::to_string)
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
    // A call's slot: the run of tool messages after its message.
    let plan = assign(&calls, &results, |c| c.msg + 1..run_end[c.msg] + 1);
    let mut out: Vec<Piece<'_>> = Vec::with_capacity(l.raws.len() + 4);
    let mut ci = 0;
    for (i, m) in l.msgs.iter().enumerate() {
        if m.is_tool() {
            let ri = result_of[i];
            let id = &results[ri].id;
            match plan.fate[ri] {
                Fate::Answers(c) if calls[c].msg < i && run_end[calls[c].msg] >= i => {} // emitted with its call
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
        let end = run_end[i];
        let mine = ci..ci + m.calls.len();
        ci += m.calls.len();
        // The run stays as it is when it answers exactly these calls.
        let exact = end - i == mine.len()
            && (i + 1..=end).all(|t| {
                let ri = result_of[t];
                matches!(plan.fate[ri], Fate::Answers(c) if mine.contains(&c))
                    && !renames.touches(t)
            });
        if exact {
            out.extend((i + 1..=end).map(|t| Piece::Raw(l.raws[t].get())));
            continue;
        }
        for c in mine {
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

/// The renamed ids of a body, indexed by position and by message: looked
/// up per call and per message, never searched (a client controls how many
/// there are).
#[derive(Default)]
struct Renames {
    /// By message, in the order they were made.
    by_msg: AHashMap<usize, Vec<Rename>>,
    /// The new id by (message, position); the first made wins.
    by_pos: AHashMap<(usize, usize), String>,
}

// === impl Renames ===

impl Renames {
    fn push(&mut self, r: Rename) {
        self.by_pos
            .entry((r.msg, r.pos))
            .or_insert_with(|| r.new.clone());
        self.by_msg.entry(r.msg).or_default().push(r);
    }

    /// The new id at position `k` of message `i`, if renamed.
    fn new_id(&self, i: usize, k: usize) -> Option<&str> {
        self.by_pos.get(&(i, k)).map(String::as_str)
    }

    /// Whether message `i` has a renamed id.
    fn touches(&self, i: usize) -> bool {
        self.by_msg.contains_key(&i)
    }

    /// The renames of message `i`, in the order they were made.
    fn of(&self, i: usize) -> &[Rename] {
        self.by_msg.get(&i).map_or(&[], Vec::as_slice)
    }
}

fn id_at<'l>(l: &'l Layout<'_>, i: usize, k: usize) -> &'l str {
    let m = &l.msgs[i];
    if m.is_tool() {
        m.answers.as_ref().map_or("", |a| &a.0)
    } else {
        m.calls.get(k).map_or("", |c| &c.0)
    }
}

/// The longest `tool_calls[].id` the API takes ("Expected a string with
/// maximum length 40").
const MAX_ID_LEN: usize = 40;

/// Fresh ids for ids repeated inside one `tool_calls` array, and for the
/// tool message answering each repeated occurrence.
///
/// Linear in the messages and calls (a client controls how many repeats a
/// body holds): fresh names come from [`FreshIds`], the occurrence count of
/// an id from a running count, and the tool message answering the n-th
/// occurrence from a per-run index. `run_end` is [`Layout::run_ends`].
fn rename_duplicates(l: &Layout<'_>, run_end: &[usize], changes: &mut Vec<Change>) -> Renames {
    let mut fresh = FreshIds::new(
        MAX_ID_LEN,
        l.msgs.iter().flat_map(|m| {
            m.calls
                .iter()
                .map(|c| &*c.0)
                .chain(m.answers.iter().map(|a| &*a.0))
        }),
    );
    let mut renames = Renames::default();
    for (i, m) in l.msgs.iter().enumerate() {
        let end = run_end[i];
        // Calls so far in this message, by id.
        let mut earlier: AHashMap<&str, usize> = AHashMap::new();
        // The run's tool messages by the id they answer, in order (read
        // once, when this message has a repeat).
        let mut answers: Option<AHashMap<&str, Vec<usize>>> = None;
        for (k, (id, _)) in m.calls.iter().enumerate() {
            let count = earlier.entry(id).or_insert(0);
            let n = *count;
            *count += 1;
            if n == 0 {
                continue;
            }
            let new = fresh.next(id);
            changes.push(change(
                ChangeKind::RenamedDuplicateId,
                DefectKind::DuplicateCallId,
                i,
                id,
                format!("repeated tool call id {id} renamed to {new}"),
            ));
            // The n-th tool message answering this id in the run answered it.
            let answers = answers.get_or_insert_with(|| tools_by_id(l, i + 1..=end));
            if let Some(&t) = answers.get(&**id).and_then(|at| at.get(n)) {
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

/// The messages of `run` by the id each answers (see [`id_at`]), in order.
fn tools_by_id<'l>(
    l: &'l Layout<'_>,
    run: std::ops::RangeInclusive<usize>,
) -> AHashMap<&'l str, Vec<usize>> {
    let mut by_id: AHashMap<&str, Vec<usize>> = AHashMap::new();
    for t in run {
        by_id.entry(id_at(l, t, 0)).or_default().push(t);
    }
    by_id
}

/// Message `i`, with its renamed ids replaced in place: in one pass, as
/// the ids' spans are apart (copying the message once per rename was
/// quadratic in the repeats of one `tool_calls` array).
fn with_renames<'a>(l: &Layout<'a>, i: usize, renames: &Renames) -> Piece<'a> {
    let raw = l.raws[i].get();
    let m = &l.msgs[i];
    let mut spans: Vec<(std::ops::Range<usize>, &str)> = renames
        .of(i)
        .iter()
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
    spans.sort_by_key(|(s, _)| s.start);
    let apart = spans.windows(2).all(|w| w[0].0.end <= w[1].0.start);
    let key = if m.is_tool() { "tool_call_id" } else { "id" };
    if !apart {
        return Piece::New(replace_overlapping(raw, spans, key));
    }
    let mut text = String::with_capacity(raw.len() + 8 * spans.len());
    let mut at = 0;
    for (span, new) in spans {
        text.push_str(&raw[at..span.start]);
        text.push_str(&renamed(raw, &span, key, new));
        at = span.end;
    }
    text.push_str(&raw[at..]);
    Piece::New(text)
}

/// What replaces `span` of `raw` for the id `new`: the id's JSON string;
/// for an empty span (an object without the id, just inside its `{`), the
/// member `key: new` (see `layout::Located`).
fn renamed(raw: &str, span: &std::ops::Range<usize>, key: &str, new: &str) -> String {
    if !span.is_empty() {
        return json_string(new);
    }
    leading_member(&raw[span.start..], key, &json_string(new))
}

/// Spans that overlap (ids of one message never do): replaced one after
/// the other from the last, as before the one-pass replacement, so that
/// any body repairs as it did.
fn replace_overlapping(
    raw: &str,
    mut spans: Vec<(std::ops::Range<usize>, &str)>,
    key: &str,
) -> String {
    spans.sort_by_key(|(s, _)| std::cmp::Reverse(s.start));
    let mut text = raw.to_string();
    for (span, new) in spans {
        let with = renamed(&text, &span, key, new);
        text = replace(&text, span, &with);
    }
    text
}
