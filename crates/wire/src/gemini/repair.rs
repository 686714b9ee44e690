//! Repair of a Gemini body: only `contents` (and inside it, the `parts` of
//! the turns that change) is rebuilt.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    model::{Body, Content},
    turns::{Turn, defects, turns},
    view::read_response,
};
use crate::{
    Change, ChangeKind, DefectKind, Repaired, WireError, WireErrorKind,
    splice::{
        json_string, replace,
        span::{ArraySpan, Piece, array_span},
        utf8,
    },
};

/// The text of an inserted error response.
const NO_RESULT: &str = "The tool produced no result for this call.";

/// The user turn inserted before a function call turn that has none.
const PLACEHOLDER_TURN: &str =
    r#"{"role":"user","parts":[{"text":"(earlier conversation omitted)"}]}"#;

/// See [`crate::repair()`].
pub(crate) fn repair(bytes: &[u8]) -> Result<Repaired<'_>, WireError> {
    crate::splice::expect_object(bytes)?;
    let body: Body<'_> = serde_json::from_str(crate::splice::utf8(bytes)?)?;
    let contents = &body.contents.list;
    let paired = turns(contents);
    if defects(&paired).is_empty() {
        return Ok(Repaired {
            body: Cow::Borrowed(bytes),
            changes: Vec::new(),
        });
    }
    let text = utf8(bytes)?;
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        contents: &'a RawValue,
    }
    let top: Top<'_> = serde_json::from_str(text)?;
    let span = array_span(text, top.contents)?;
    if span.raws.len() != contents.len() {
        return Err(WireError::new(
            WireErrorKind::Shape,
            "internal: contents changed between two reads",
        ));
    }

    let mut changes = Vec::new();
    let mut pieces = Vec::with_capacity(contents.len() + 2);
    // Error responses to put at the start of turn k (its previous turn's
    // unanswered calls), when turn k is a user turn without responses.
    let mut prepend: Option<(usize, Vec<String>)> = None;
    for (k, turn) in paired.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| &paired[p]);
        if turn.model && !turn.calls.is_empty() {
            let misplaced = prev.is_none_or(|p| p.model && p.calls.is_empty());
            if misplaced {
                pieces.push(Piece::New(PLACEHOLDER_TURN.to_owned()));
                changes.push(Change {
                    kind: ChangeKind::InsertedTurn,
                    defect: DefectKind::MisplacedCallTurn,
                    message_index: k,
                    call_id: None,
                    description: format!(
                        "inserted a user turn before the function call turn at contents[{k}]"
                    ),
                });
            }
        }
        let inserted = if prepend.as_ref().is_some_and(|(at, _)| *at == k) {
            prepend.take().map(|(_, parts)| parts)
        } else {
            None
        };
        let fixed = if !turn.model && !turn.responses.is_empty() {
            fix_response_turn(
                text,
                span.raws[k],
                &contents[k],
                turn,
                prev,
                k,
                &mut changes,
            )?
        } else if let Some(parts) = inserted {
            Some(with_parts(text, span.raws[k], &[], &parts, 0)?)
        } else {
            None
        };
        pieces.push(match fixed {
            Some(t) => Piece::New(t),
            None => Piece::Orig(k),
        });

        // A call turn not followed by a response turn: answer it.
        if turn.model && !turn.calls.is_empty() {
            let next = paired.get(k + 1);
            if next.is_some_and(|n| !n.model && !n.responses.is_empty()) {
                continue;
            }
            let parts = error_parts(turn, k, None, &mut changes);
            let next_is_plain_user =
                next.is_some_and(|n| !n.model) && has_parts_array(span.raws[k + 1]);
            if next_is_plain_user {
                prepend = Some((k + 1, parts));
            } else {
                pieces.push(Piece::New(format!(
                    "{{\"role\":\"user\",\"parts\":[{}]}}",
                    parts.join(",")
                )));
            }
        }
    }
    changes.sort_by_key(|c| c.message_index);
    let array = span.render(text, &pieces);
    Ok(Repaired {
        body: Cow::Owned(replace(text, span.range.clone(), &array).into_bytes()),
        changes,
    })
}

/// Error responses for the calls of `turn` not answered yet.
fn error_parts(
    turn: &Turn<'_>,
    k: usize,
    answered: Option<&[bool]>,
    changes: &mut Vec<Change>,
) -> Vec<String> {
    let mut parts = Vec::new();
    for (i, c) in turn.calls.iter().enumerate() {
        if answered.is_some_and(|a| a[i]) {
            continue;
        }
        let id = match c.real_id {
            Some(id) => format!(",\"id\":{}", json_string(id)),
            None => String::new(),
        };
        parts.push(format!(
            "{{\"functionResponse\":{{\"name\":{}{id},\"response\":{{\"error\":{{\"message\":{}}}}}}}}}",
            json_string(c.name),
            json_string(NO_RESULT)
        ));
        changes.push(Change {
            kind: ChangeKind::InsertedResult,
            defect: DefectKind::MissingResult,
            message_index: k,
            call_id: Some(c.id.to_string()),
            description: format!(
                "inserted an error response for call {} ({}) of contents[{k}]",
                c.id, c.name
            ),
        });
    }
    parts
}

/// A response turn: answer the previous turn's unanswered calls and turn
/// responses that answer nothing into text. `None` when nothing changes.
fn fix_response_turn(
    text: &str,
    raw: &RawValue,
    content: &Content<'_>,
    turn: &Turn<'_>,
    prev: Option<&Turn<'_>>,
    k: usize,
    changes: &mut Vec<Change>,
) -> Result<Option<String>, WireError> {
    let prev = prev.filter(|p| p.model && !p.calls.is_empty());
    let count_ok = prev.is_some_and(|p| p.calls.len() == turn.responses.len());
    if count_ok {
        return Ok(None);
    }
    // Orphans: every response when there is no call turn before, else the
    // ones that answer no call.
    let mut replaced: Vec<(usize, String)> = Vec::new();
    for r in &turn.responses {
        if prev.is_some() && r.answers.is_some() {
            continue;
        }
        let resp = content.parts[r.part].response.as_ref();
        let said = read_response(resp.and_then(|f| f.response).map(|r| r.0))?;
        let note = format!(
            "[result of tool {} with no matching call] {}",
            r.name, said.text
        );
        replaced.push((r.part, format!("{{\"text\":{}}}", json_string(&note))));
        changes.push(Change {
            kind: ChangeKind::ConvertedResultToText,
            defect: if prev.is_some() {
                DefectKind::CountMismatch
            } else {
                DefectKind::OrphanResult
            },
            message_index: k,
            call_id: Some(r.id.to_string()),
            description: format!(
                "turned the response {} ({}) of contents[{k}], which answers no call, into text",
                r.id, r.name
            ),
        });
    }
    let inserted = match prev {
        Some(p) => {
            let mut answered = vec![false; p.calls.len()];
            for r in &turn.responses {
                if let Some(c) = r.answers {
                    answered[c] = true;
                }
            }
            error_parts(p, k - 1, Some(&answered), changes)
        }
        None => Vec::new(),
    };
    let after = turn.responses.iter().map(|r| r.part + 1).max().unwrap_or(0);
    Ok(Some(with_parts(text, raw, &replaced, &inserted, after)?))
}

fn has_parts_array(raw: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct P<'a> {
        #[serde(borrow, default)]
        parts: Option<&'a RawValue>,
    }
    serde_json::from_str::<P<'_>>(raw.get())
        .ok()
        .and_then(|p| p.parts)
        .is_some_and(|p| p.get().starts_with('['))
}

/// The content `raw` with some parts replaced and new ones inserted before
/// part index `at`.
fn with_parts(
    text: &str,
    raw: &RawValue,
    replaced: &[(usize, String)],
    inserted: &[String],
    at: usize,
) -> Result<String, WireError> {
    #[derive(Deserialize)]
    struct P<'a> {
        #[serde(borrow)]
        parts: &'a RawValue,
    }
    let p: P<'_> = serde_json::from_str(raw.get())?;
    let parts: ArraySpan<'_> = array_span(text, p.parts)?;
    let mut pieces = Vec::with_capacity(parts.elems.len() + inserted.len());
    for i in 0..=parts.elems.len() {
        if i == at {
            pieces.extend(inserted.iter().cloned().map(Piece::New));
        }
        if i < parts.elems.len() {
            pieces.push(match replaced.iter().find(|(p, _)| *p == i) {
                Some((_, t)) => Piece::New(t.clone()),
                None => Piece::Orig(i),
            });
        }
    }
    let start = crate::splice::span::offset_in(text, raw.get())?;
    let content = &text[start..start + raw.get().len()];
    let rel = parts.range.start - start..parts.range.end - start;
    Ok(replace(content, rel, &parts.render(text, &pieces)))
}
