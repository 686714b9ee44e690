//! Pairing Gemini calls and responses by turn, id and name order.
//!
//! A model turn's `functionCall`s are answered by the `functionResponse`s
//! of the next turn: by `id` when both have one, else the n-th response
//! named X answers the n-th call named X. A call without an id gets the
//! synthetic id `<name>#<n>` (its ordinal among the calls of that name in
//! its turn), the same rule as in response views, so a call read from a
//! response and its result in the next request share an id.

use std::borrow::Cow;

use ahash::AHashMap;

use super::model::Content;
use crate::{Defect, DefectKind};

/// Gemini's 400 texts.
pub(super) const COUNT_TEXT: &str = "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
pub(super) const RESPONSE_TURN_TEXT: &str =
    "Please ensure that function response turn comes immediately after a function call turn.";
pub(super) const CALL_TURN_TEXT: &str = "Please ensure that function call turn comes immediately after a user turn or after a function response turn.";

/// The synthetic id of the `ordinal`-th call named `name` in its turn.
pub fn synthetic_id(name: &str, ordinal: usize) -> String {
    format!("{name}#{ordinal}")
}

/// `true` when `id` has the synthetic form for `name`.
pub fn is_synthetic(id: &str, name: &str) -> bool {
    id.strip_prefix(name)
        .and_then(|r| r.strip_prefix('#'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// One call of a model turn.
#[derive(Debug)]
pub(super) struct CallSlot<'s> {
    pub part: usize,
    pub name: &'s str,
    pub real_id: Option<&'s str>,
    pub id: Cow<'s, str>,
    pub answered: bool,
}

/// One response of a user turn.
#[derive(Debug)]
pub(super) struct RespSlot<'s> {
    pub part: usize,
    pub name: &'s str,
    pub real_id: Option<&'s str>,
    /// Index of the call it answers in the previous turn's calls.
    pub answers: Option<usize>,
    pub id: Cow<'s, str>,
}

/// One turn reduced to its calls and responses.
#[derive(Debug)]
pub(super) struct Turn<'s> {
    pub model: bool,
    pub calls: Vec<CallSlot<'s>>,
    pub responses: Vec<RespSlot<'s>>,
}

/// Every turn of `contents`, paired.
pub(super) fn turns<'s>(contents: &'s [Content<'_>]) -> Vec<Turn<'s>> {
    let mut out: Vec<Turn<'s>> = Vec::with_capacity(contents.len());
    for content in contents {
        let mut calls = Vec::new();
        let mut responses = Vec::new();
        // Calls so far of each name (a running count, not a search: a
        // client controls how many calls a turn holds).
        let mut named: AHashMap<&str, usize> = AHashMap::new();
        for (p, part) in content.parts.iter().enumerate() {
            if let Some(c) = &part.call {
                let name = c.name.as_deref().unwrap_or("");
                let real_id = c.id.as_deref().filter(|s| !s.is_empty());
                // Counted among the id-less calls of the name only, as the
                // response's view names them (`stream.rs`): a call of the
                // name with an id before it does not move the ordinal.
                let id = match real_id {
                    Some(id) => Cow::Borrowed(id),
                    None => {
                        let count = named.entry(name).or_insert(0);
                        *count += 1;
                        Cow::Owned(synthetic_id(name, *count - 1))
                    }
                };
                calls.push(CallSlot {
                    part: p,
                    name,
                    real_id,
                    id,
                    answered: false,
                });
            }
            if let Some(r) = &part.response {
                responses.push(RespSlot {
                    part: p,
                    name: r.name.as_deref().unwrap_or(""),
                    real_id: r.id.as_deref().filter(|s| !s.is_empty()),
                    answers: None,
                    id: Cow::Borrowed(""),
                });
            }
        }
        let mut turn = Turn {
            model: content.is_model(),
            calls,
            responses,
        };
        if !turn.responses.is_empty() {
            let prev = out.last_mut().filter(|t| t.model);
            pair(prev, &mut turn.responses);
        }
        out.push(turn);
    }
    out
}

/// Pair `responses` with the calls of the model turn before them (`prev`):
/// by id first, then the n-th response named X with the n-th unanswered
/// call named X. Calls are looked up through [`Queues`], not searched: a
/// client controls how many calls and responses a turn holds.
fn pair<'s>(prev: Option<&mut Turn<'s>>, responses: &mut [RespSlot<'s>]) {
    if let Some(prev) = prev {
        let mut by_id = Queues::default();
        let mut by_name = Queues::default();
        let mut idless_by_name = Queues::default();
        for (c, call) in prev.calls.iter().enumerate().filter(|(_, c)| !c.answered) {
            if let Some(id) = call.real_id {
                by_id.push(id, c);
            } else {
                idless_by_name.push(call.name, c);
            }
            by_name.push(call.name, c);
        }
        // By id first, then by name order.
        for r in responses.iter_mut() {
            if let Some(id) = r.real_id
                && let Some(c) = by_id.first_unanswered(id, &prev.calls)
            {
                prev.calls[c].answered = true;
                r.answers = Some(c);
            }
        }
        for r in responses.iter_mut().filter(|r| r.answers.is_none()) {
            // A response with an id takes only a call without one.
            let queue = match r.real_id {
                None => &mut by_name,
                Some(_) => &mut idless_by_name,
            };
            if let Some(c) = queue.first_unanswered(r.name, &prev.calls) {
                prev.calls[c].answered = true;
                r.answers = Some(c);
            }
        }
        for r in responses.iter_mut() {
            r.id = match (r.answers, r.real_id) {
                (_, Some(id)) => Cow::Borrowed(id),
                (Some(c), None) => prev.calls[c].id.clone(),
                (None, None) => Cow::Borrowed(""),
            };
        }
    } else {
        for r in responses.iter_mut() {
            if let Some(id) = r.real_id {
                r.id = Cow::Borrowed(id);
            }
        }
    }
    // Unpaired responses without an id: `<name>#<n>` among the turn's
    // id-less responses of that name, as the calls they answer are named.
    let mut named: AHashMap<&str, usize> = AHashMap::new();
    for r in responses.iter_mut() {
        if r.real_id.is_some() {
            continue;
        }
        let count = named.entry(r.name).or_insert(0);
        if r.id.is_empty() {
            r.id = Cow::Owned(synthetic_id(r.name, *count));
        }
        *count += 1;
    }
}

/// Call indices by key (an id or a name), in call order, each with a cursor
/// past the calls already answered: finding the first unanswered call of a
/// key costs, over a whole turn, one step per call.
#[derive(Default)]
struct Queues<'s> {
    by_key: AHashMap<&'s str, (usize, Vec<usize>)>,
}

// === impl Queues ===

impl<'s> Queues<'s> {
    fn push(&mut self, key: &'s str, call: usize) {
        self.by_key.entry(key).or_default().1.push(call);
    }

    /// The first call of `key` not yet answered; calls are only ever
    /// marked answered, so the cursor never needs to move back.
    fn first_unanswered(&mut self, key: &str, calls: &[CallSlot<'_>]) -> Option<usize> {
        let (cursor, queue) = self.by_key.get_mut(key)?;
        while let Some(&c) = queue.get(*cursor) {
            if !calls[c].answered {
                return Some(c);
            }
            *cursor += 1;
        }
        None
    }
}

/// The defects Gemini rejects, in content order.
pub(super) fn defects(turns: &[Turn<'_>]) -> Vec<Defect> {
    let mut out = Vec::new();
    for (k, t) in turns.iter().enumerate() {
        if t.model && !t.calls.is_empty() {
            let prev = k.checked_sub(1).map(|p| &turns[p]);
            let misplaced = match prev {
                None => true,
                Some(p) => p.model && p.calls.is_empty(),
            };
            if misplaced {
                out.push(Defect {
                    kind: DefectKind::MisplacedCallTurn,
                    message_index: k,
                    call_ids: t.calls.iter().map(|c| c.id.to_string()).collect(),
                    message: CALL_TURN_TEXT.to_owned(),
                });
            }
            let next = turns.get(k + 1);
            match next {
                Some(n) if !n.model && !n.responses.is_empty() => {
                    let unanswered = t.calls.iter().filter(|c| !c.answered);
                    if n.responses.len() != t.calls.len() {
                        let mut ids: Vec<String> = unanswered.map(|c| c.id.to_string()).collect();
                        ids.extend(
                            n.responses
                                .iter()
                                .filter(|r| r.answers.is_none())
                                .map(|r| r.id.to_string()),
                        );
                        out.push(Defect {
                            kind: DefectKind::CountMismatch,
                            message_index: k + 1,
                            call_ids: ids,
                            message: COUNT_TEXT.to_owned(),
                        });
                    }
                }
                _ => out.push(Defect {
                    kind: DefectKind::MissingResult,
                    message_index: k,
                    call_ids: t.calls.iter().map(|c| c.id.to_string()).collect(),
                    message: if next.is_some_and(|n| n.model && !n.calls.is_empty()) {
                        CALL_TURN_TEXT.to_owned()
                    } else {
                        COUNT_TEXT.to_owned()
                    },
                }),
            }
        }
        if !t.model && !t.responses.is_empty() {
            let after_calls = k
                .checked_sub(1)
                .is_some_and(|p| turns[p].model && !turns[p].calls.is_empty());
            if !after_calls {
                out.push(Defect {
                    kind: DefectKind::OrphanResult,
                    message_index: k,
                    call_ids: t.responses.iter().map(|r| r.id.to_string()).collect(),
                    message: RESPONSE_TURN_TEXT.to_owned(),
                });
            }
        }
    }
    out.sort_by_key(|d| d.message_index);
    out
}
