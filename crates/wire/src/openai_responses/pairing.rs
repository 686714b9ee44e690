//! Which output answers which call, and what is wrong with the pairing.
//!
//! Calls and outputs are paired by `call_id`: an output answers the first
//! earlier call with its id that has no output yet; failing that, a later
//! one (the output is then out of order). The same plan drives the request
//! view, validation and repair, so they always agree.

use std::collections::HashMap;

use super::model::{Item, Role};
use crate::{Defect, DefectKind};

/// One item reduced to what pairing needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot<'s> {
    pub role: Role,
    pub call_id: &'s str,
    pub item_id: Option<&'s str>,
    pub name: &'s str,
    pub args: &'s str,
}

impl<'s> Slot<'s> {
    pub fn of(item: &'s Item<'_>) -> Slot<'s> {
        Slot {
            role: item.role(),
            call_id: item.call_id().map_or("", |id| id.as_ref()),
            item_id: item.id.as_deref(),
            name: item.name.as_deref().unwrap_or(""),
            args: match (&item.arguments, &item.input, item.builtin_arguments()) {
                (Some(a), _, _) => &a.0,
                (None, Some(i), _) => &i.0,
                (None, None, Some(raw)) => raw.0,
                (None, None, None) => "",
            },
        }
    }
}

/// What happened to each output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OutputFate {
    /// Answers the call at this index, which comes before it.
    Answers(usize),
    /// Answers the call at this index, which comes *after* it.
    Early(usize),
    /// A second output for a call that already has one.
    Duplicate,
    /// No call with its id in the body, and the history may be on the
    /// provider's side (`previous_response_id`, `conversation` or
    /// `item_reference`).
    ServerSide,
    /// No call with its id anywhere.
    Orphan,
}

/// What is wrong with a duplicate call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DupCall {
    /// The same item again (same item id, or same name and arguments).
    Exact,
    /// A different call reusing the id.
    Distinct,
}

/// The pairing of one body's items.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// For each call index: its output's index.
    pub output_of: HashMap<usize, usize>,
    /// For each output index: its fate.
    pub fate: HashMap<usize, OutputFate>,
    /// Calls that reuse an earlier call's id, by index.
    pub dup_calls: HashMap<usize, DupCall>,
    /// Calls (not exact duplicates) without any output, in order.
    pub missing: Vec<usize>,
    /// Outputs with no call anywhere ([`OutputFate::Orphan`]) whose id an
    /// earlier such output has, in order.
    pub repeated_orphans: Vec<usize>,
}

impl Plan {
    /// Pair the calls and outputs of `slots`.
    pub fn new(slots: &[Slot<'_>], server_side_history: bool) -> Plan {
        let mut plan = Plan::default();
        let mut calls: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, s) in slots.iter().enumerate() {
            if let Role::Call(_) = s.role {
                let same = calls.entry(s.call_id).or_default();
                if let Some(&first) = same.first() {
                    let f = &slots[first];
                    let exact = match (f.item_id, s.item_id) {
                        (Some(a), Some(b)) => a == b || (f.name == s.name && f.args == s.args),
                        _ => f.name == s.name && f.args == s.args,
                    };
                    plan.dup_calls.insert(
                        i,
                        if exact {
                            DupCall::Exact
                        } else {
                            DupCall::Distinct
                        },
                    );
                }
                same.push(i);
            }
        }
        // One pass in item order: an output answers the first earlier call
        // with its id that has none yet; an output seen before any such
        // call waits for the next one.
        let mut answered: Vec<bool> = vec![false; slots.len()];
        let mut open: HashMap<&str, std::collections::VecDeque<usize>> = HashMap::new();
        let mut waiting: HashMap<&str, std::collections::VecDeque<usize>> = HashMap::new();
        for (i, s) in slots.iter().enumerate() {
            match s.role {
                Role::Call(_) => match waiting.get_mut(s.call_id).and_then(|w| w.pop_front()) {
                    Some(j) => {
                        answered[i] = true;
                        plan.output_of.insert(i, j);
                        plan.fate.insert(j, OutputFate::Early(i));
                    }
                    None => open.entry(s.call_id).or_default().push_back(i),
                },
                Role::Output(_) => match open.get_mut(s.call_id).and_then(|o| o.pop_front()) {
                    Some(c) => {
                        answered[c] = true;
                        plan.output_of.insert(c, i);
                        plan.fate.insert(i, OutputFate::Answers(c));
                    }
                    None => waiting.entry(s.call_id).or_default().push_back(i),
                },
                _ => {}
            }
        }
        // Outputs no call in the body took. With the history on the
        // provider's side, the first of an id answers a call there and the
        // others are second outputs for it, which the API refuses as it
        // refuses them with the call in the body ("Duplicate item found
        // with id …").
        for (id, outputs) in waiting {
            let fate = if calls.contains_key(id) {
                OutputFate::Duplicate
            } else if server_side_history {
                OutputFate::ServerSide
            } else {
                OutputFate::Orphan
            };
            for (n, j) in outputs.into_iter().enumerate() {
                let fate = match fate {
                    OutputFate::ServerSide if n > 0 => OutputFate::Duplicate,
                    OutputFate::Orphan if n > 0 => {
                        plan.repeated_orphans.push(j);
                        fate
                    }
                    fate => fate,
                };
                plan.fate.insert(j, fate);
            }
        }
        plan.repeated_orphans.sort_unstable();
        for (i, s) in slots.iter().enumerate() {
            if matches!(s.role, Role::Call(_))
                && !answered[i]
                && plan.dup_calls.get(&i) != Some(&DupCall::Exact)
            {
                plan.missing.push(i);
            }
        }
        plan
    }

    /// Whether the output at `index`, of `fate` (its entry in
    /// [`Plan::fate`]), is a result of its own: not a second output for a
    /// call another output of the body answers (or, with no call anywhere,
    /// names before it). One call's result counts once.
    pub fn is_first_output(&self, fate: Option<&OutputFate>, index: usize) -> bool {
        fate != Some(&OutputFate::Duplicate)
            && (self.repeated_orphans.is_empty()
                || self.repeated_orphans.binary_search(&index).is_err())
    }

    /// The defects a strict provider rejects, in item order.
    pub fn defects(&self, slots: &[Slot<'_>]) -> Vec<Defect> {
        let mut out = Vec::new();
        for (i, s) in slots.iter().enumerate() {
            match s.role {
                Role::Call(kind) => {
                    if self.dup_calls.contains_key(&i) {
                        out.push(duplicate(i, s));
                    }
                    if self.missing.binary_search(&i).is_ok() {
                        let what = kind.noun();
                        out.push(Defect {
                            kind: DefectKind::MissingResult,
                            message_index: i,
                            call_ids: vec![s.call_id.to_owned()],
                            message: format!("No tool output found for {what} {}.", s.call_id),
                        });
                    }
                }
                Role::Output(kind) => match self.fate.get(&i) {
                    Some(OutputFate::Orphan) | Some(OutputFate::Early(_)) => {
                        let what = format!("{} output", kind.noun());
                        out.push(Defect {
                            kind: DefectKind::OrphanResult,
                            message_index: i,
                            call_ids: vec![s.call_id.to_owned()],
                            message: format!(
                                "No tool call found for {what} with call_id {}.",
                                s.call_id
                            ),
                        });
                    }
                    Some(OutputFate::Duplicate) => out.push(duplicate(i, s)),
                    Some(OutputFate::Answers(c))
                        if self.dup_calls.get(c) == Some(&DupCall::Exact) =>
                    {
                        out.push(duplicate(i, s))
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        out
    }
}

fn duplicate(i: usize, s: &Slot<'_>) -> Defect {
    Defect {
        kind: DefectKind::DuplicateCallId,
        message_index: i,
        call_ids: vec![s.call_id.to_owned()],
        message: format!(
            "Duplicate item found with id {}. Remove duplicate items from your input and try again.",
            s.item_id.unwrap_or(s.call_id)
        ),
    }
}
