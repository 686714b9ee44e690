//! Byte-exact repair of a Converse body's call/result pairing.
//!
//! A `toolUse` id an assistant message repeats (Bedrock refuses it: "The
//! toolUse blocks at messages.N.content contain duplicate Ids: …") is
//! renamed `{id}_dup{n}`, cut to Bedrock's 64 characters, and so is the
//! `toolResult` of the next message that answered that occurrence (the
//! k-th with the id answers the k-th call), as the other dialects' repairs
//! rename them; a system tool's (`type: "server_tool_use"`, whose result
//! Bedrock wrote in the same message) is renamed with the k-th result of
//! its own message with the id. A system tool's result stays where it
//! was, once: a repeat of it is dropped. Each unanswered `toolUse` gets an
//! error `toolResult` at the start of the next user message (in a new user
//! message when the next message is not one), with `status: "error"` when
//! the client's own
//! results carry a `status` (only some models take the field: Bedrock
//! documents it for Amazon Nova and Anthropic Claude 3 and 4, and SDKs drop
//! it for the others), else said in its text alone; a `toolResult` that
//! answers no `toolUse` of the previous turn becomes a text block; a second
//! result for the same call is dropped; the results open their message,
//! its other blocks after them. A `text` block empty or only whitespace
//! (Bedrock refuses it: "The text field in the ContentBlock object at
//! messages.N.content.J is blank") is removed; when it is all its message
//! holds, it is given the text `[empty]` instead (a message without blocks
//! is refused too, and one removed whole would join the turns around it),
//! unless the message is a last assistant message: a prefill the model
//! would go on from, which goes whole (nothing in it is no prefill). A
//! message that came without blocks (`"content": []`, which Bedrock refuses:
//! "The content field in the Message object at messages.N is empty") is
//! given the text `[empty]` the same way, or goes whole when it is a last
//! assistant message.
//! A kept `toolResult` of `status: "error"` whose `content` is `[]`
//! (Bedrock refuses it: "The content field at
//! messages.N.content.J.toolResult cannot be empty when status value is
//! error.") is given one text block saying the tool gave no message.
//! A `toolUse`'s `input` that is not a JSON object (Bedrock refuses it:
//! "The format of the value at messages.N.content.J.toolUse.input is
//! invalid. Provide a json object for the field and try again.") is made
//! one: the object a string holds, else `{"rawInvalidInput": …}`; a
//! `toolResult`'s `json` block that is not an object becomes a text block;
//! an `input` of `null` (refused as "The value at
//! messages.N.content.J.toolUse.input is empty.") becomes `{}`, what
//! Bedrock itself gives a call without arguments (aaif-goose/goose#8121).
//! With a Claude model, a prefill ending in whitespace (which Claude
//! refuses: "final assistant content cannot end with trailing
//! whitespace") is trimmed as on Anthropic's API ([`crate::prefill`]), its
//! blank blocks going as above.
//! Only the `content` arrays that change (and the
//! `messages` array when a message is inserted) are rewritten: every other
//! byte is copied.

use std::borrow::Cow;

use ahash::{AHashMap, AHashSet};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    model::{Block, Shape},
    rewrite::{BLANK_TEXT, filled_blank, filled_error, made_objects, renamed_block, trimmed_text},
    validate,
    view::read_result,
};
use crate::{
    Change, ChangeKind, DefectKind, ModelFamily, Repaired, WireError,
    pairing::{FreshIds, MISSING_RESULT_TEXT},
    prefill::{self, End, Prefills, Trim},
    splice::{
        json_string, replace,
        span::{ArraySpan, Piece, array_span},
        utf8,
    },
};

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow)]
    messages: &'a RawValue,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: &'a RawValue,
}

/// The longest `toolUseId` Bedrock takes (the API reference: 1 to 64).
const MAX_ID_LEN: usize = 64;

/// One message, located: its content array and blocks.
struct Located<'a> {
    content: ArraySpan<'a>,
    blocks: Vec<Block<'a>>,
    shape: Shape<'a>,
}

pub(crate) fn repair(body: &[u8], model: ModelFamily) -> Result<Repaired<'_>, WireError> {
    if validate::validate(body, model)?.is_empty() {
        return Ok(Repaired {
            body: Cow::Borrowed(body),
            changes: Vec::new(),
        });
    }
    let text = utf8(body)?;
    let top: Top<'_> = serde_json::from_str(text)?;
    let messages = array_span(text, top.messages)?;
    let mut located = Vec::with_capacity(messages.raws.len());
    for raw in &messages.raws {
        let m: Msg<'_> = serde_json::from_str(raw.get())?;
        let content = array_span(text, m.content)?;
        let blocks = content
            .raws
            .iter()
            .map(|b| serde_json::from_str::<Block<'_>>(b.get()))
            .collect::<Result<Vec<_>, _>>()?;
        let shape = Shape::from_blocks(m.role, &blocks);
        located.push(Located {
            content,
            blocks,
            shape,
        });
    }
    // Claude's prefill: what of it goes, and the text that is trimmed.
    let trim: Option<Trim<'_>> = match model {
        ModelFamily::Claude => prefill::plan(&Ends(&located))?,
        _ => None,
    };
    let mut changes = Vec::new();
    let renames = rename_repeats(&mut located, &mut changes);
    // Inserted results take `status` only if the client's do.
    let with_status = located
        .iter()
        .flat_map(|m| &m.blocks)
        .any(|b| b.tool_result.as_ref().is_some_and(|r| r.status.is_some()));
    let error_result = |id: &str| synthetic_result(id, with_status);
    let mut msg_pieces: Vec<Piece> = Vec::new();
    for (i, m) in located.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &located[p].shape);
        // Sets, not lists: a client controls how many calls a turn holds.
        let calls: AHashSet<&str> = match prev {
            Some(p) if p.is_assistant() && m.shape.is_user() => {
                p.calls().map(|(_, id)| id).collect()
            }
            _ => AHashSet::new(),
        };
        // Results owed to the previous assistant message, to open this one.
        let owed = match prev {
            Some(p) if p.is_assistant() && m.shape.is_user() => missing(p, &m.shape),
            _ => Vec::new(),
        };
        // The results open the message (Claude refuses one that does not:
        // "Did not find N `tool_result` block(s) at the beginning of this
        // message"); its other blocks, and results turned into text, follow.
        let mut pieces: Vec<Piece> = Vec::new();
        let mut rest: Vec<Piece> = Vec::new();
        for id in &owed {
            pieces.push(Piece::New(error_result(id)));
            changes.push(inserted(i - 1, id));
        }
        let mut answered: AHashSet<&str> = AHashSet::new();
        let mut changed = !owed.is_empty();
        // Block `j` as it came, or rewritten: renamed, an empty error
        // result given a text, a value Bedrock takes only as an object
        // made one; with the changes made to it beyond the renaming.
        let block = |j: usize| -> (Piece, Vec<Change>) {
            let raw = m.content.raws[j].get();
            let renamed = renames.get(&(i, j));
            let mut text = renamed.map(|r| r.text.clone());
            let id = || match renamed {
                Some(r) => r.id.clone(),
                None => block_id(&m.blocks[j]),
            };
            let mut made = Vec::new();
            if m.shape.empty_errors.binary_search(&j).is_ok() {
                text = Some(filled_error(text.as_deref().unwrap_or(raw)));
                made.push(filled_error_change(i, &id()));
            }
            let not = &m.shape.not_objects;
            let parts = &not[not.partition_point(|t| t.0 < j)..not.partition_point(|t| t.0 <= j)];
            if !parts.is_empty() {
                let from = text.as_deref().unwrap_or(raw);
                text = Some(made_objects(from, parts).unwrap_or_else(|| from.to_string()));
                made.extend(
                    parts
                        .iter()
                        .map(|&(_, part)| not_object_change(i, &id(), j, part)),
                );
            }
            let piece = match text {
                Some(text) => Piece::Edited(j, text),
                None => Piece::Orig(j),
            };
            (piece, made)
        };
        // The system tools Bedrock ran (renamed, if so) and their results
        // so far, by id.
        let server_calls: AHashSet<&str> = m
            .shape
            .server
            .iter()
            .filter(|t| t.2)
            .map(|t| &*t.1)
            .collect();
        let mut server_answered: AHashSet<&str> = AHashSet::new();
        // Claude's prefill: this message whole, or its end.
        let prefill_drops = trim.as_ref().is_some_and(|t| i >= t.keep_messages);
        let cut = trim
            .as_ref()
            .and_then(|t| t.cut.as_ref())
            .filter(|c| c.msg == i);
        // The last message that stays, an assistant one, to Claude.
        let ends_prefill = model == ModelFamily::Claude
            && m.shape.is_assistant()
            && i + 1 == trim.as_ref().map_or(located.len(), |t| t.keep_messages);
        // The last result turned into text, by its place in `rest`.
        let mut last_orphan: Option<(usize, String)> = None;
        for (j, b) in m.blocks.iter().enumerate() {
            changed |= renames.contains_key(&(i, j));
            let blank = m.shape.blank.binary_search(&j).is_ok();
            if let Some(c) = cut.filter(|c| j >= c.keep_blocks && !blank) {
                // Blank blocks are removed below, as any other.
                changes.push(prefill_change(
                    ChangeKind::RemovedBlankText,
                    c.msg,
                    format!("text block {j} of the prefill, only whitespace, removed"),
                ));
                changed = true;
                continue;
            }
            if let Some(t) = cut
                .and_then(|c| c.text.as_ref())
                .filter(|t| t.block == Some(j))
            {
                rest.push(trimmed_text(m.content.raws[j].get(), j, t));
                changes.push(prefill_change(
                    ChangeKind::TrimmedPrefill,
                    i,
                    "whitespace at the end of the prefill removed".to_string(),
                ));
                changed = true;
                continue;
            }
            if b.tool_result.is_some()
                && let Some(id) = m.shape.server_result_at(j)
            {
                // Where it was, once: Bedrock refuses a repeat (one left
                // without its call by the renaming was a repeat too).
                if server_calls.contains(id) && server_answered.insert(id) {
                    let (piece, made) = block(j);
                    rest.push(piece);
                    changed |= !made.is_empty();
                    changes.extend(made);
                } else {
                    changes.push(change(
                        ChangeKind::RemovedDuplicate,
                        DefectKind::DuplicateCallId,
                        i,
                        id,
                        format!("second result for system tool call {id} removed"),
                    ));
                    changed = true;
                }
                continue;
            }
            if blank {
                changed = true;
                continue;
            }
            let Some(r) = &b.tool_result else {
                let (piece, made) = block(j);
                rest.push(piece);
                changed |= !made.is_empty();
                changes.extend(made);
                continue;
            };
            let id = renames.get(&(i, j)).map_or(&*r.id, |r| r.id.as_str());
            if !calls.contains(id) {
                let content = read_result(r.content.map(|c| c.0), None, true, &|_| {
                    toolwarden_core::Verdict::NONE
                })
                .map(|(t, _)| t.into_owned())
                .unwrap_or_default();
                let text = format!(
                    "[Result of tool call {id}, whose call is not in the previous turn]\n{content}"
                );
                rest.push(Piece::New(format!("{{\"text\":{}}}", json_string(&text))));
                last_orphan = Some((rest.len() - 1, text));
                changes.push(change(
                    ChangeKind::ConvertedResultToText,
                    DefectKind::OrphanResult,
                    i,
                    id,
                    format!("result for unknown call {id} turned into text"),
                ));
                changed = true;
            } else if !answered.insert(id) {
                changes.push(change(
                    ChangeKind::RemovedDuplicate,
                    DefectKind::DuplicateCallId,
                    i,
                    id,
                    format!("second result for {id} removed"),
                ));
                changed = true;
            } else {
                let (piece, made) = block(j);
                pieces.push(piece);
                changed |= !made.is_empty();
                changes.extend(made);
                if !rest.is_empty() {
                    changes.push(change(
                        ChangeKind::MovedResult,
                        DefectKind::ResultsNotFirst,
                        i,
                        id,
                        format!("result for {id} moved to the start of message {i}"),
                    ));
                    changed = true;
                }
            }
        }
        // Ending Claude's prefill, such a text does not end in whitespace.
        if let Some((k, text)) = last_orphan.filter(|o| ends_prefill && o.0 + 1 == rest.len()) {
            let kept = prefill::trim_end_js(&text);
            rest[k] = Piece::New(format!("{{\"text\":{}}}", json_string(kept)));
        }
        pieces.extend(rest);
        // Blank text blocks go; one that is all its message holds is
        // given a text instead: the message stays, and the turns alternate
        // as they did.
        // But a last assistant message is a prefill the model goes on
        // from: nothing in it is no prefill, so it goes whole.
        // A message that came without blocks is given one the same way.
        let only_blank = pieces.is_empty() && !m.shape.blank.is_empty();
        let nothing = pieces.is_empty() && m.shape.empty;
        let drop_prefill =
            (only_blank || nothing) && m.shape.is_assistant() && i > 0 && i + 1 == located.len();
        let fill = m
            .shape
            .blank
            .first()
            .filter(|_| only_blank && !drop_prefill);
        if let Some(&j) = fill {
            pieces.push(filled_blank(m.content.raws[j].get(), j));
        }
        for &j in &m.shape.blank {
            changes.push(blank_change(i, j, fill == Some(&j)));
        }
        if nothing {
            changed = true;
            changes.push(empty_change(i, drop_prefill));
            if !drop_prefill {
                pieces.push(Piece::New(format!(
                    "{{\"text\":{}}}",
                    json_string(BLANK_TEXT)
                )));
            }
        }
        if prefill_drops && !drop_prefill {
            changes.push(prefill_change(
                ChangeKind::RemovedEmptyMessage,
                i,
                "assistant message (a prefill) of only whitespace removed".to_string(),
            ));
        }
        if drop_prefill || prefill_drops {
            continue;
        }
        if changed {
            let content = m.content.render(text, &pieces);
            let msg_range = messages.elems[i].clone();
            let inner =
                m.content.range.start - msg_range.start..m.content.range.end - msg_range.start;
            msg_pieces.push(Piece::New(replace(&text[msg_range], inner, &content)));
        } else {
            msg_pieces.push(Piece::Orig(i));
        }
        // Calls whose next message is not a user message: a new one.
        let next_is_user = located.get(i + 1).is_some_and(|n| n.shape.is_user());
        if m.shape.is_assistant() && !next_is_user {
            let owed = missing(
                &m.shape,
                &Shape {
                    role: "".into(),
                    tools: Vec::new(),
                    server: Vec::new(),
                    blank: Vec::new(),
                    empty: true,
                    empty_errors: Vec::new(),
                    not_objects: Vec::new(),
                    null_inputs: Vec::new(),
                    ends_in_space: false,
                    only_blank: true,
                },
            );
            if !owed.is_empty() {
                let results: Vec<String> = owed.iter().map(|id| error_result(id)).collect();
                for id in &owed {
                    changes.push(inserted(i, id));
                }
                msg_pieces.push(Piece::New(format!(
                    "{{\"role\":\"user\",\"content\":[{}]}}",
                    results.join(",")
                )));
            }
        }
    }
    let new_messages = messages.render(text, &msg_pieces);
    let out = replace(text, messages.range.clone(), &new_messages);
    Ok(Repaired {
        body: Cow::Owned(out.into_bytes()),
        changes,
    })
}

/// The located messages as Claude's prefill rule reads them: a blank
/// `text` block goes whatever the rule says, and so does a last assistant
/// message of them alone (see [`repair`]).
struct Ends<'l, 'a>(&'l [Located<'a>]);

impl<'a> Prefills<'a> for Ends<'_, 'a> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn ends_in_space(&self, i: usize) -> bool {
        let s = &self.0[i].shape;
        let dropped = s.only_blank && i > 0 && i + 1 == self.0.len();
        s.is_assistant() && (s.ends_in_space || dropped)
    }

    fn string(&self, _: usize) -> Option<&'a str> {
        None
    }

    fn blocks(&self, i: usize) -> usize {
        self.0[i].blocks.len()
    }

    fn block(&self, i: usize, j: usize) -> Result<End<'a>, WireError> {
        #[derive(Deserialize)]
        struct TextOf<'a> {
            #[serde(borrow)]
            text: &'a RawValue,
        }
        let m = &self.0[i];
        if m.shape.blank.binary_search(&j).is_ok() {
            return Ok(End::Gone);
        }
        let b = &m.blocks[j];
        if b.text.is_none() || b.tool_use.is_some() || b.tool_result.is_some() {
            return Ok(End::Other);
        }
        let t: TextOf<'a> = serde_json::from_str(m.content.raws[j].get())?;
        Ok(End::Text(t.text.get()))
    }
}

/// A change made to Claude's prefill.
fn prefill_change(kind: ChangeKind, i: usize, description: String) -> Change {
    Change {
        kind,
        defect: DefectKind::TrailingWhitespace,
        message_index: i,
        call_id: None,
        description,
    }
}

/// A block given a new `toolUseId`: the id and the block's new text.
struct Renamed {
    id: String,
    text: String,
}

/// Give each `toolUse` id repeated within its assistant message a fresh
/// one ([`FreshIds`]), and the same to the `toolResult` of the next
/// message that answered that occurrence: the k-th call with an id is
/// answered by the k-th result with it. The shapes take the new ids, so
/// the pairing that follows sees distinct calls; `changes` gets one
/// change per renamed call. Renamed blocks by (message, block).
///
/// Linear in the blocks: a client controls how many repeats a body holds.
fn rename_repeats(
    located: &mut [Located<'_>],
    changes: &mut Vec<Change>,
) -> AHashMap<(usize, usize), Renamed> {
    let mut renames: AHashMap<(usize, usize), Renamed> = AHashMap::new();
    // Planned while the shapes are borrowed, applied to them after.
    let mut planned: Vec<((usize, usize), String)> = Vec::new();
    {
        // Every id of the body is taken, a system tool's included.
        let ids = located.iter().flat_map(|m| &m.blocks).filter_map(|b| {
            let use_id = b.tool_use.as_ref().map(|u| &*u.id);
            use_id.or(b.tool_result.as_ref().map(|r| &*r.id))
        });
        let mut fresh = FreshIds::new(MAX_ID_LEN, ids);
        for (i, m) in located.iter().enumerate() {
            if !m.shape.is_assistant() {
                continue;
            }
            // Per id: how many calls so far in this message, and how many
            // of the client's and of system tools'.
            let mut count: AHashMap<&str, (usize, usize, usize)> = AHashMap::new();
            // The results by id, in block order, of the next message (for
            // the client's calls) and of this one (for system tools'):
            // read once, when this message has a repeat.
            let mut answers: Option<AHashMap<&str, Vec<usize>>> = None;
            let mut server_answers: Option<AHashMap<&str, Vec<usize>>> = None;
            for (j, id, server) in m.shape.all(true) {
                let (k, client_k, server_k) = count.entry(id).or_insert((0, 0, 0));
                *k += 1;
                let nth = if server { server_k } else { client_k };
                *nth += 1;
                let nth = *nth;
                if *k == 1 {
                    continue;
                }
                let new = fresh.next(id);
                changes.push(change(
                    ChangeKind::RenamedDuplicateId,
                    DefectKind::DuplicateCallId,
                    i,
                    id,
                    format!("duplicate toolUse id {id} renamed to {new}"),
                ));
                let answer = if server {
                    server_answers
                        .get_or_insert_with(|| by_id(m.shape.server.iter().filter(|t| !t.2)))
                        .get(id)
                        .and_then(|at| at.get(nth - 1))
                        .map(|&rj| (i, rj))
                } else {
                    let next = located.get(i + 1).filter(|n| n.shape.is_user());
                    next.and_then(|n| {
                        answers
                            .get_or_insert_with(|| by_id(n.shape.tools.iter().filter(|t| !t.2)))
                            .get(id)
                            .and_then(|at| at.get(nth - 1))
                            .map(|&rj| (i + 1, rj))
                    })
                };
                if let Some(at) = answer {
                    planned.push((at, new.clone()));
                }
                planned.push(((i, j), new));
            }
        }
    }
    for ((i, j), new) in planned {
        let m = &mut located[i];
        let raw = m.content.raws[j].get();
        let Some(text) = renamed_block(raw, &new) else {
            continue;
        };
        // The shape lists its blocks in order.
        for list in [&mut m.shape.tools, &mut m.shape.server] {
            if let Ok(at) = list.binary_search_by_key(&j, |t| t.0) {
                list[at].1 = Cow::Owned(new.clone());
            }
        }
        renames.insert((i, j), Renamed { id: new, text });
    }
    renames
}

/// The change for blank text block `j` of message `i`: removed, or
/// `filled`.
fn blank_change(i: usize, j: usize, filled: bool) -> Change {
    let (kind, description) = if filled {
        (
            ChangeKind::FilledBlankText,
            format!("blank text block {j} given the text \"{BLANK_TEXT}\", all its message held"),
        )
    } else {
        (
            ChangeKind::RemovedBlankText,
            format!("blank text block {j} removed"),
        )
    };
    Change {
        kind,
        defect: DefectKind::BlankText,
        message_index: i,
        call_id: None,
        description,
    }
}

/// The id of block `b`, a `toolUse` or a `toolResult` (empty for any
/// other).
fn block_id(b: &Block<'_>) -> String {
    let use_id = b.tool_use.as_ref().map(|u| &*u.id);
    let id = use_id.or(b.tool_result.as_ref().map(|r| &*r.id));
    id.unwrap_or_default().to_string()
}

fn not_object_change(i: usize, id: &str, j: usize, part: Option<usize>) -> Change {
    let (kind, what) = match part {
        None => (
            ChangeKind::MadeInputObject,
            format!("input of call {id} (block {j}) made a JSON object"),
        ),
        Some(k) => (
            ChangeKind::ConvertedJsonToText,
            format!(
                "json block {k} of the result for {id} (block {j}), not an object, made a text block"
            ),
        ),
    };
    change(kind, DefectKind::NonObjectJson, i, id, what)
}

fn filled_error_change(i: usize, id: &str) -> Change {
    change(
        ChangeKind::FilledErrorResult,
        DefectKind::EmptyErrorResult,
        i,
        id,
        format!("empty error result for {id} given a text"),
    )
}

/// The change for message `i`, which came without blocks: given the
/// text [`BLANK_TEXT`], or `removed` (a last assistant message).
fn empty_change(i: usize, removed: bool) -> Change {
    let (kind, description) = if removed {
        (
            ChangeKind::RemovedEmptyMessage,
            format!("last assistant message {i}, without blocks, removed"),
        )
    } else {
        (
            ChangeKind::FilledEmptyMessage,
            format!("message {i}, without blocks, given the text \"{BLANK_TEXT}\""),
        )
    };
    Change {
        kind,
        defect: DefectKind::EmptyMessage,
        message_index: i,
        call_id: None,
        description,
    }
}

/// Block indices by id, in block order, of the `(block, id, _)` given.
fn by_id<'s, 'a: 's>(
    blocks: impl Iterator<Item = &'s (usize, Cow<'a, str>, bool)>,
) -> AHashMap<&'s str, Vec<usize>> {
    let mut by_id: AHashMap<&str, Vec<usize>> = AHashMap::new();
    for (j, id, _) in blocks {
        by_id.entry(id).or_default().push(*j);
    }
    by_id
}

/// The distinct call ids of `calls` (an assistant message) that `next`
/// does not answer.
fn missing<'s>(calls: &'s Shape<'_>, next: &Shape<'_>) -> Vec<&'s str> {
    let answered: AHashSet<&str> = next.results().map(|(_, id)| id).collect();
    let mut listed: AHashSet<&str> = AHashSet::new();
    calls
        .calls()
        .map(|(_, id)| id)
        .filter(|&id| !answered.contains(id) && listed.insert(id))
        .collect()
}

/// An error result for call `id`; `status` only `with_status` (see the
/// module's doc).
fn synthetic_result(id: &str, with_status: bool) -> String {
    let status = if with_status {
        ",\"status\":\"error\""
    } else {
        ""
    };
    format!(
        "{{\"toolResult\":{{\"toolUseId\":{},\"content\":[{{\"text\":{}}}]{status}}}}}",
        json_string(id),
        json_string(MISSING_RESULT_TEXT)
    )
}

fn inserted(call_message: usize, id: &str) -> Change {
    change(
        ChangeKind::InsertedResult,
        DefectKind::MissingResult,
        call_message,
        id,
        format!("error result inserted for unanswered call {id}"),
    )
}

fn change(kind: ChangeKind, defect: DefectKind, msg: usize, id: &str, what: String) -> Change {
    Change {
        kind,
        defect,
        message_index: msg,
        call_id: Some(id.to_string()),
        description: what,
    }
}
