//! Repair of a Responses body: only the `input` array is rebuilt.

use std::{
    borrow::Cow,
    collections::{HashMap, HashSet},
};

use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::{ErrorKind, FLAGLESS_ERROR_PREFIX};

use super::{
    model::{CallKind, Role},
    pairing::{DupCall, OutputFate, Plan, Slot},
    view::Parsed,
};
use crate::{
    Change, ChangeKind, DefectKind, Repaired, WireError, WireErrorKind,
    splice::{
        json_string, replace,
        span::{Piece, array_span, offset_in},
        utf8, with_first_member,
    },
};

/// The output inserted for a call that has none.
pub(crate) fn no_result_text() -> String {
    format!(
        "{FLAGLESS_ERROR_PREFIX}{}): the tool produced no result for this call.",
        ErrorKind::Cancelled.as_str()
    )
}

/// The longest `call_id` the API takes, bytes (it counts characters:
/// "Invalid 'input\[N\].call_id': string too long. Expected a string with
/// maximum length 64").
const MAX_CALL_ID_LEN: usize = 64;

/// `{id}_{n}`, the id cut at its end (at a character's boundary) when the
/// name would be longer than the API takes.
pub(super) fn numbered(id: &str, n: usize) -> String {
    crate::pairing::suffixed(id, &format!("_{n}"), MAX_CALL_ID_LEN)
}

/// See [`crate::repair()`].
pub(crate) fn repair(bytes: &[u8]) -> Result<Repaired<'_>, WireError> {
    let parsed = Parsed::new(bytes)?;
    let slots = parsed.slots();
    let plan = Plan::new(&slots, parsed.server_side);
    if plan.defects(&slots).is_empty() {
        return Ok(Repaired {
            body: Cow::Borrowed(bytes),
            changes: Vec::new(),
        });
    }
    let text = utf8(bytes)?;
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        input: &'a RawValue,
    }
    let top: Top<'_> = serde_json::from_str(text)?;
    let span = array_span(text, top.input)?;
    if span.raws.len() != slots.len() {
        return Err(WireError::new(
            crate::WireErrorKind::Shape,
            "internal: input items changed between two reads",
        ));
    }

    // Fresh ids for distinct calls that reuse an id. Each id remembers
    // where its probing stopped (a client controls how many calls reuse
    // one: probing from 2 for each was quadratic in them); the names it
    // skipped stay taken, so resuming gives the same names.
    let mut taken: HashSet<String> = slots.iter().map(|s| s.call_id.to_owned()).collect();
    let mut next: HashMap<&str, usize> = HashMap::new();
    let mut renamed: Vec<Option<String>> = vec![None; slots.len()];
    for (i, s) in slots.iter().enumerate() {
        if plan.dup_calls.get(&i) == Some(&DupCall::Distinct) {
            let n = next.entry(s.call_id).or_insert(2);
            let fresh = loop {
                let candidate = numbered(s.call_id, *n);
                *n += 1;
                if !taken.contains(&candidate) {
                    break candidate;
                }
            };
            taken.insert(fresh.clone());
            if let Some(&o) = plan.output_of.get(&i) {
                renamed[o] = Some(fresh.clone());
            }
            renamed[i] = Some(fresh);
        }
    }

    let repeated_reasoning = reasoning_of_repeated_calls(&slots, &span.raws, &plan);

    let mut changes = Vec::new();
    let mut pieces: Vec<Piece> = Vec::with_capacity(slots.len() + 4);
    // Calls whose outputs go after the current run of calls.
    let mut pending: Vec<usize> = Vec::new();
    let item_piece = |i: usize| -> Result<Piece, WireError> {
        match &renamed[i] {
            None => Ok(Piece::Orig(i)),
            Some(id) => Ok(Piece::New(with_call_id(span.raws[i], id)?)),
        }
    };
    let flush = |pending: &mut Vec<usize>,
                 pieces: &mut Vec<Piece>,
                 changes: &mut Vec<Change>|
     -> Result<(), WireError> {
        for c in pending.drain(..) {
            let s = &slots[c];
            let id = renamed[c].as_deref().unwrap_or(s.call_id);
            match plan.output_of.get(&c) {
                Some(&o) => {
                    pieces.push(item_piece(o)?);
                    changes.push(Change {
                        kind: ChangeKind::MovedResult,
                        defect: DefectKind::OrphanResult,
                        message_index: o,
                        call_id: Some(id.to_owned()),
                        description: format!(
                            "moved the output for {id} from item {o} to after its call (item {c})"
                        ),
                    });
                }
                None => {
                    let Role::Call(kind) = s.role else {
                        continue;
                    };
                    pieces.push(Piece::New(error_output(kind, id)));
                    changes.push(Change {
                        kind: ChangeKind::InsertedResult,
                        defect: DefectKind::MissingResult,
                        message_index: c,
                        call_id: Some(id.to_owned()),
                        description: format!(
                            "inserted an error output for call {id} (item {c}), which had none"
                        ),
                    });
                }
            }
        }
        Ok(())
    };

    for (i, s) in slots.iter().enumerate() {
        match s.role {
            Role::Call(_) => {
                if plan.dup_calls.get(&i) == Some(&DupCall::Exact) {
                    changes.push(Change {
                        kind: ChangeKind::RemovedDuplicate,
                        defect: DefectKind::DuplicateCallId,
                        message_index: i,
                        call_id: Some(s.call_id.to_owned()),
                        description: format!(
                            "removed a repeated copy of call {} (item {i})",
                            s.call_id
                        ),
                    });
                    continue;
                }
                if let Some(id) = &renamed[i] {
                    changes.push(Change {
                        kind: ChangeKind::RenamedDuplicateId,
                        defect: DefectKind::DuplicateCallId,
                        message_index: i,
                        call_id: Some(s.call_id.to_owned()),
                        description: format!(
                            "renamed the reused call id {} of item {i} to {id}",
                            s.call_id
                        ),
                    });
                }
                pieces.push(item_piece(i)?);
                let answered_later_in_place = matches!(
                    plan.output_of.get(&i).map(|o| plan.fate.get(o)),
                    Some(Some(OutputFate::Answers(_)))
                );
                if !answered_later_in_place {
                    pending.push(i);
                }
            }
            Role::Output(_) => {
                flush(&mut pending, &mut pieces, &mut changes)?;
                match plan.fate.get(&i) {
                    Some(OutputFate::Answers(c))
                        if plan.dup_calls.get(c) == Some(&DupCall::Exact) =>
                    {
                        changes.push(removed(
                            i,
                            s,
                            ChangeKind::RemovedDuplicate,
                            DefectKind::DuplicateCallId,
                            "removed the output of a repeated call",
                        ));
                    }
                    Some(OutputFate::Answers(_)) | Some(OutputFate::ServerSide) | None => {
                        pieces.push(item_piece(i)?)
                    }
                    Some(OutputFate::Early(c))
                        if plan.dup_calls.get(c) == Some(&DupCall::Exact) =>
                    {
                        changes.push(removed(
                            i,
                            s,
                            ChangeKind::RemovedDuplicate,
                            DefectKind::DuplicateCallId,
                            "removed the output of a repeated call",
                        ));
                    }
                    Some(OutputFate::Early(_)) => {} // emitted after its call
                    Some(OutputFate::Duplicate) => changes.push(removed(
                        i,
                        s,
                        ChangeKind::RemovedDuplicate,
                        DefectKind::DuplicateCallId,
                        "removed a second output for call",
                    )),
                    Some(OutputFate::Orphan) => changes.push(removed(
                        i,
                        s,
                        ChangeKind::RemovedResult,
                        DefectKind::OrphanResult,
                        "removed the output without a call, for call id",
                    )),
                }
            }
            _ => {
                flush(&mut pending, &mut pieces, &mut changes)?;
                if repeated_reasoning.contains(&i) {
                    changes.push(Change {
                        kind: ChangeKind::RemovedDuplicate,
                        defect: DefectKind::DuplicateCallId,
                        message_index: i,
                        call_id: None,
                        description: format!(
                            "removed a repeated copy of the item before a repeated call (item {i}): \
                             the API refuses an item id twice"
                        ),
                    });
                    continue;
                }
                pieces.push(Piece::Orig(i));
            }
        }
    }
    flush(&mut pending, &mut pieces, &mut changes)?;
    changes.sort_by_key(|c| c.message_index);
    let array = span.render(text, &pieces);
    Ok(Repaired {
        body: Cow::Owned(replace(text, span.range.clone(), &array).into_bytes()),
        changes,
    })
}

/// The items that go with a repeated call removed whole: the run of
/// other items (a `reasoning` item, in a reasoning model's turn) right
/// before it, each an exact copy of an earlier item. Kept, such a copy
/// repeats its id, which the API refuses ("Duplicate item found with id
/// rs_…"), and a reasoning item would lose the call that must follow it.
fn reasoning_of_repeated_calls(
    slots: &[Slot<'_>],
    raws: &[&RawValue],
    plan: &Plan,
) -> HashSet<usize> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, raw) in raws.iter().enumerate() {
        first.entry(raw.get()).or_insert(i);
    }
    let mut out = HashSet::new();
    for (i, s) in slots.iter().enumerate() {
        if !matches!(s.role, Role::Call(_)) || plan.dup_calls.get(&i) != Some(&DupCall::Exact) {
            continue;
        }
        let mut j = i;
        while j > 0 {
            j -= 1;
            let other = !matches!(slots[j].role, Role::Call(_) | Role::Output(_));
            if !other || first.get(raws[j].get()).is_none_or(|&f| f >= j) {
                break;
            }
            out.insert(j);
        }
    }
    out
}

fn removed(i: usize, s: &Slot<'_>, kind: ChangeKind, defect: DefectKind, what: &str) -> Change {
    Change {
        kind,
        defect,
        message_index: i,
        call_id: Some(s.call_id.to_owned()),
        description: format!("{what} {} (item {i})", s.call_id),
    }
}

/// The item's text with its `call_id` value replaced (given, when the
/// item had none).
fn with_call_id(raw: &RawValue, id: &str) -> Result<String, WireError> {
    #[derive(Deserialize)]
    struct CallId<'a> {
        #[serde(borrow, default)]
        call_id: Option<&'a RawValue>,
    }
    let item = raw.get();
    let c: CallId<'_> = serde_json::from_str(item)?;
    let Some(call_id) = c.call_id else {
        return with_first_member(item, "call_id", &json_string(id))
            .ok_or_else(|| WireError::new(WireErrorKind::Shape, "an input item is not an object"));
    };
    let at = offset_in(item, call_id.get())?;
    Ok(replace(
        item,
        at..at + call_id.get().len(),
        &json_string(id),
    ))
}

/// A blank screenshot: a PNG of one transparent pixel (also what a failed
/// computer call is answered with: `render`).
pub(super) const BLANK_PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// An output item of `kind` answering call `id` with the gateway's error
/// text, in the shape the API takes for that kind (the forms the OpenAI
/// Agents SDK writes for a rejected call). A computer call's output must
/// be a screenshot: it gets a blank one, its `status` `incomplete`; a
/// client tool search's lists the tools it loaded: none, `incomplete`.
fn error_output(kind: CallKind, id: &str) -> String {
    let (id, text) = (json_string(id), json_string(&no_result_text()));
    match kind {
        CallKind::Function => {
            format!("{{\"type\":\"function_call_output\",\"call_id\":{id},\"output\":{text}}}")
        }
        CallKind::Custom => {
            format!("{{\"type\":\"custom_tool_call_output\",\"call_id\":{id},\"output\":{text}}}")
        }
        CallKind::LocalShell => {
            format!("{{\"type\":\"local_shell_call_output\",\"call_id\":{id},\"output\":{text}}}")
        }
        CallKind::Shell => format!(
            "{{\"type\":\"shell_call_output\",\"call_id\":{id},\"output\":[{{\"stdout\":\"\",\"stderr\":{text},\"outcome\":{{\"type\":\"exit\",\"exit_code\":1}}}}]}}"
        ),
        CallKind::ApplyPatch => format!(
            "{{\"type\":\"apply_patch_call_output\",\"call_id\":{id},\"status\":\"failed\",\"output\":{text}}}"
        ),
        CallKind::Computer => format!(
            "{{\"type\":\"computer_call_output\",\"call_id\":{id},\"status\":\"incomplete\",\"output\":{{\"type\":\"computer_screenshot\",\"image_url\":\"{BLANK_PNG}\"}}}}"
        ), // A tool search's output lists the tools it loaded: none.
        CallKind::ToolSearch => format!(
            "{{\"type\":\"tool_search_output\",\"execution\":\"client\",\"call_id\":{id},\"status\":\"incomplete\",\"tools\":[]}}"
        ),
    }
}
