//! A `response.inject`'s items (the Responses WebSocket beta
//! `responses_multi_agent=v1`: client-owned tool outputs committed to a
//! response under way, `{"type":"response.inject","response_id":…,
//! "input":[…]}`) judged against the calls of the response they go to.
//!
//! The API says only that the items "are validated and committed
//! atomically" (openai-python `BetaResponseInjectEvent`); what it refuses
//! is not documented. A response's context is its input and its output so
//! far, the injected items after it, so the rules of a `response.create`'s
//! input are the ones that soundly apply: an output with no call of its
//! id ("No tool call found for function call output with call_id …") and
//! a second output for one call ("Duplicate item found with id …") are
//! refused, and the one refusal keeps every item out; an output for a
//! call an earlier inject into the response committed is such a second
//! output. An output for a
//! call of the response's input or of the response it continued answers
//! a call already answered (the `response.create` was refused otherwise):
//! a second output too. A call of the response that the message leaves
//! unanswered is no defect: the response waits for it, and another inject
//! may bring it.

use std::{borrow::Cow, collections::HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{Item, Role};
use crate::{
    Change, ChangeKind, Defect, DefectKind, Repaired, WireError,
    splice::{
        expect_object, replace,
        span::{Piece, array_span},
        utf8,
    },
};

/// What the response an inject goes to knows of a call its output names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectedCall {
    /// The response has not begun a call of this id: its output is
    /// refused ("No tool call found for … output with call_id …").
    NotMade,
    /// A call the response has begun and no committed output answers yet.
    Open,
    /// A call an earlier inject into the response already answered (its
    /// commit confirmed, `response.inject.created`): another output for
    /// it is refused as a second one ("Duplicate item found with id …").
    Answered,
}

/// The inject `message` with the outputs the API refuses removed: each
/// output whose call the response never made (`call(call_id)` is
/// [`InjectedCall::NotMade`]: `call` must know every call the response has
/// begun, whole or not), each output for a call an earlier inject answered
/// ([`InjectedCall::Answered`]), and each output after the first for one
/// call. Other items (and the bytes around them) stay as they came. A
/// message with nothing to remove, or with nothing left once they are
/// removed (an inject of no items is no repair of it), comes back borrowed
/// and unchanged. `call` is asked once for each output with a `call_id`,
/// in order. An error: `message` is not a JSON object with an `input`
/// array, or holds more than [`crate::MAX_REQUEST_ITEMS`] items
/// ([`crate::check_items`]).
pub fn repair_inject<'a>(
    message: &'a [u8],
    call: impl FnMut(&str) -> InjectedCall,
) -> Result<Repaired<'a>, WireError> {
    let judged = judge(message, call)?;
    if judged.changes.is_empty() || judged.pieces.is_empty() {
        return Ok(Repaired {
            body: Cow::Borrowed(message),
            changes: Vec::new(),
        });
    }
    let array = judged.span.render(judged.text, &judged.pieces);
    Ok(Repaired {
        body: Cow::Owned(replace(judged.text, judged.span.range.clone(), &array).into_bytes()),
        changes: judged.changes,
    })
}

/// The defects of the inject `message` that [`repair_inject`] would take
/// out, each with the text the API refuses it with: also when nothing
/// would be left (the API refuses the message then all the same). `call`
/// as for [`repair_inject`]. An error: as for [`repair_inject`].
pub fn inject_defects(
    message: &[u8],
    call: impl FnMut(&str) -> InjectedCall,
) -> Result<Vec<Defect>, WireError> {
    let judged = judge(message, call)?;
    Ok((judged.changes.into_iter())
        .zip(judged.refusals)
        .map(|(change, message)| Defect {
            kind: change.defect,
            message_index: change.message_index,
            call_ids: change.call_id.into_iter().collect(),
            message,
        })
        .collect())
}

/// An inject's items judged: the changes a repair makes (each with the
/// API's refusal of what it takes out) and the items it keeps.
struct Judged<'a> {
    text: &'a str,
    span: crate::splice::span::ArraySpan<'a>,
    pieces: Vec<Piece>,
    changes: Vec<Change>,
    refusals: Vec<String>,
}

fn judge<'a>(
    message: &'a [u8],
    mut call: impl FnMut(&str) -> InjectedCall,
) -> Result<Judged<'a>, WireError> {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        input: &'a RawValue,
    }
    expect_object(message)?;
    crate::check_items(message)?;
    let text = utf8(message)?;
    let top: Message<'_> = serde_json::from_str(text)?;
    let span = array_span(text, top.input)?;
    let mut answered: HashSet<Cow<'_, str>> = HashSet::new();
    let mut changes = Vec::new();
    let mut refusals = Vec::new();
    let mut pieces = Vec::with_capacity(span.raws.len());
    for (i, raw) in span.raws.iter().enumerate() {
        // An item that is not an object of the API's shape is no output:
        // kept (the API judges it).
        let item = serde_json::from_str::<Item<'_>>(raw.get()).unwrap_or_default();
        let (Role::Output(kind), Some(id)) = (item.role(), item.call_id()) else {
            pieces.push(Piece::Orig(i));
            continue;
        };
        let what = kind.noun();
        let state = call(id);
        let repeat = state == InjectedCall::Answered || !answered.insert(id.clone());
        let (change, refusal) = if state == InjectedCall::NotMade {
            let change = Change {
                kind: ChangeKind::RemovedResult,
                defect: DefectKind::OrphanResult,
                message_index: i,
                call_id: Some(id.to_string()),
                description: format!(
                    "removed the {what} output for call id {id} (item {i}): the response made no such call"
                ),
            };
            let refusal = format!("No tool call found for {what} output with call_id {id}.");
            (change, refusal)
        } else if repeat {
            let earlier = match state {
                InjectedCall::Answered => "an earlier inject answered it",
                _ => "this inject answers it before",
            };
            let change = Change {
                kind: ChangeKind::RemovedDuplicate,
                defect: DefectKind::DuplicateCallId,
                message_index: i,
                call_id: Some(id.to_string()),
                description: format!("removed a second output for call {id} (item {i}): {earlier}"),
            };
            let item_id = item.id.as_deref().unwrap_or(id);
            let refusal = format!(
                "Duplicate item found with id {item_id}. Remove duplicate items from your input and try again."
            );
            (change, refusal)
        } else {
            pieces.push(Piece::Orig(i));
            continue;
        };
        changes.push(change);
        refusals.push(refusal);
    }
    Ok(Judged {
        text,
        span,
        pieces,
        changes,
        refusals,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    fn made(ids: &'static [&'static str]) -> impl Fn(&str) -> InjectedCall {
        move |id| match ids.contains(&id) {
            true => InjectedCall::Open,
            false => InjectedCall::NotMade,
        }
    }

    #[test]
    fn outputs_of_no_call_and_second_outputs_are_removed() {
        let message = br#"{"type":"response.inject","response_id":"resp_1","input":[
            {"type":"function_call_output","call_id":"call_1","output":"ok"},
            {"type":"function_call_output","call_id":"call_9","output":"stray"},
            {"type":"function_call_output","call_id":"call_1","output":"again"},
            {"type":"custom_tool_call_output","call_id":"call_2","output":"patched"},
            {"type":"message","role":"user","content":"hi"}
        ]}"#;
        let repaired = repair_inject(message, made(&["call_1", "call_2"])).unwrap();
        let kinds: Vec<_> = (repaired.changes.iter())
            .map(|c| (c.kind, c.defect, c.message_index, c.call_id.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    ChangeKind::RemovedResult,
                    DefectKind::OrphanResult,
                    1,
                    Some("call_9")
                ),
                (
                    ChangeKind::RemovedDuplicate,
                    DefectKind::DuplicateCallId,
                    2,
                    Some("call_1")
                ),
            ]
        );
        // The rest as it came: the same bytes, the same whitespace between
        // neighbours kept.
        let body = std::str::from_utf8(&repaired.body).unwrap();
        let expected = r#"{"type":"response.inject","response_id":"resp_1","input":[
            {"type":"function_call_output","call_id":"call_1","output":"ok"},
            {"type":"custom_tool_call_output","call_id":"call_2","output":"patched"},
            {"type":"message","role":"user","content":"hi"}
        ]}"#;
        assert_eq!(body, expected);
    }

    #[test]
    fn a_clean_inject_or_one_left_empty_comes_back_unchanged() {
        let clean = br#"{"type":"response.inject","response_id":"r","input":[{"type":"function_call_output","call_id":"c","output":"x"}]}"#;
        let repaired = repair_inject(clean, made(&["c"])).unwrap();
        assert!(matches!(repaired.body, Cow::Borrowed(_)) && repaired.changes.is_empty());
        // Every item an output of no call: nothing would be left.
        let repaired = repair_inject(clean, made(&[])).unwrap();
        assert!(matches!(repaired.body, Cow::Borrowed(_)) && repaired.changes.is_empty());
        // A call the message leaves unanswered is no defect; nor is an
        // item that is no output, or an output naming no call.
        let other = br#"{"input":[{"type":"function_call","call_id":"z","name":"f","arguments":"{}"},{"type":"function_call_output","output":"x"},3]}"#;
        assert!(
            repair_inject(other, made(&["c"]))
                .unwrap()
                .changes
                .is_empty()
        );
    }

    /// An output for a call an earlier inject answered is a second output
    /// too; the defects are what a repair takes out, each with the API's
    /// refusal, also when nothing would be left to send.
    #[test]
    fn an_output_an_earlier_inject_committed_is_a_repeat() {
        let message = br#"{"type":"response.inject","response_id":"resp_1","input":[
            {"type":"function_call_output","call_id":"call_1","output":"again"},
            {"type":"function_call_output","call_id":"call_2","output":"new"}
        ]}"#;
        let state = |id: &str| match id {
            "call_1" => InjectedCall::Answered,
            _ => InjectedCall::Open,
        };
        let repaired = repair_inject(message, state).unwrap();
        let body = std::str::from_utf8(&repaired.body).unwrap();
        assert_eq!(
            body,
            r#"{"type":"response.inject","response_id":"resp_1","input":[
            {"type":"function_call_output","call_id":"call_2","output":"new"}
        ]}"#
        );
        assert_eq!(
            (repaired.changes.iter())
                .map(|c| (c.defect, c.message_index))
                .collect::<Vec<_>>(),
            [(DefectKind::DuplicateCallId, 0)]
        );
        // Every output refused: nothing repaired, every defect found.
        let lone = br#"{"input":[{"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"x"},{"type":"custom_tool_call_output","call_id":"c9","output":"y"}]}"#;
        let state = |id: &str| match id {
            "call_1" => InjectedCall::Answered,
            _ => InjectedCall::NotMade,
        };
        assert!(repair_inject(lone, state).unwrap().changes.is_empty());
        let defects = inject_defects(lone, state).unwrap();
        let found: Vec<_> = (defects.iter())
            .map(|d| {
                (
                    d.kind,
                    d.message_index,
                    d.call_ids.clone(),
                    d.message.as_str(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    DefectKind::DuplicateCallId,
                    0,
                    vec!["call_1".to_string()],
                    "Duplicate item found with id fco_1. Remove duplicate items from your input and try again."
                ),
                (
                    DefectKind::OrphanResult,
                    1,
                    vec!["c9".to_string()],
                    "No tool call found for custom tool call output with call_id c9."
                ),
            ]
        );
    }

    /// What `made` is told from: every call the stream began, whole or
    /// not; nothing once the parse may have missed one.
    #[test]
    fn the_calls_an_inject_is_judged_against() {
        use crate::{Dialect, StreamParser};
        let event = |v: Value| format!("data: {v}\n\n");
        let call = |id: &str, status: &str| {
            json!({"type": "function_call", "id": format!("fc_{id}"),
            "call_id": id, "name": "f", "arguments": "", "status": status})
        };
        let stream = [
            event(json!({"type": "response.created", "response": {"id": "resp_1"}})),
            event(json!({"type": "response.output_item.added", "output_index": 0, "item": call("call_1", "in_progress")})),
            event(json!({"type": "response.output_item.done", "output_index": 0, "item": call("call_1", "completed")})),
            // Begun, its arguments still streaming.
            event(json!({"type": "response.output_item.added", "output_index": 1, "item": call("call_2", "in_progress")})),
        ]
        .concat();
        let mut parser = StreamParser::new(Dialect::OpenAiResponses);
        parser.feed(stream.as_bytes());
        let ids: Vec<&str> = parser.begun_calls().expect("all seen").collect();
        assert_eq!(ids, ["call_1", "call_2"]);
        // A budget that cut a call off: the calls are not known.
        let mut cut = StreamParser::new(Dialect::OpenAiResponses).limit(100);
        cut.feed(stream.as_bytes());
        assert!(cut.begun_calls().is_none());
        // An event dropped for its size: nor are they.
        let mut dropped = StreamParser::new(Dialect::OpenAiResponses);
        let big = json!({"type": "response.output_item.added", "output_index": 2,
            "item": {"type": "function_call", "call_id": "call_3", "name": "f", "arguments": "x".repeat(20 << 20)}});
        dropped.feed(format!("{stream}{}", event(big)).as_bytes());
        assert!(dropped.begun_calls().is_none());
        // A parse stopped (not read further): nor are they.
        parser.stop();
        assert!(parser.begun_calls().is_none());
        // Another dialect has none to give.
        assert!(
            StreamParser::new(Dialect::OpenAiChat)
                .begun_calls()
                .is_none()
        );
    }

    #[test]
    fn what_is_not_an_inject_is_an_error() {
        for message in [
            &b""[..],
            b"[]",
            b"not json",
            br#"{"input":{}}"#,
            br#"{"response_id":"r"}"#,
            br#"{"input":[1,"#,
        ] {
            assert!(
                repair_inject(message, |_| InjectedCall::Open).is_err()
                    && inject_defects(message, |_| InjectedCall::Open).is_err(),
                "{}",
                String::from_utf8_lossy(message)
            );
        }
    }

    proptest! {
        /// Any bytes: repaired or refused, never a panic.
        #[test]
        fn any_bytes_are_judged_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let state = |id: &str| [InjectedCall::NotMade, InjectedCall::Open, InjectedCall::Answered][id.len() % 3];
            let _ = repair_inject(&bytes, state);
            let _ = inject_defects(&bytes, state);
        }

        /// Any inject: what is left is JSON, its items those that came
        /// (in order, each as it was), less exactly the outputs of calls
        /// not made, of calls an earlier inject answered, and the repeats
        /// of an output's call; nothing removed when nothing would be
        /// left. Its defects are what a repair takes out, left or not.
        #[test]
        fn an_inject_keeps_exactly_the_outputs_the_api_takes(
            items in proptest::collection::vec((0u8..4, 0u8..5, "\\PC{0,12}"), 0..10),
            states in proptest::collection::vec(0u8..3, 5),
        ) {
            let input: Vec<Value> = items
                .iter()
                .map(|(ty, id, text)| match ty {
                    0 => json!({"type": "function_call_output", "call_id": format!("call_{id}"), "output": text}),
                    1 => json!({"type": "shell_call_output", "call_id": format!("call_{id}"), "output": []}),
                    2 => json!({"type": "message", "role": "user", "content": text}),
                    _ => json!({"type": "function_call", "call_id": format!("call_{id}"), "name": text, "arguments": "{}"}),
                })
                .collect();
            let message = json!({"type": "response.inject", "response_id": "r", "input": input}).to_string();
            let state = |id: &str| {
                let n: usize = id.strip_prefix("call_").and_then(|n| n.parse().ok()).unwrap_or(0);
                [InjectedCall::NotMade, InjectedCall::Open, InjectedCall::Answered][usize::from(states[n])]
            };
            let repaired = repair_inject(message.as_bytes(), state).expect("an inject");
            let defects = inject_defects(message.as_bytes(), state).expect("an inject");
            let mut seen = HashSet::new();
            let kept: Vec<&Value> = input
                .iter()
                .filter(|item| {
                    let output = item["type"].as_str().is_some_and(|t| t.ends_with("_output"));
                    let id = item["call_id"].as_str().unwrap_or("");
                    !output || (state(id) == InjectedCall::Open && seen.insert(id.to_string()))
                })
                .collect();
            prop_assert_eq!(defects.len(), input.len() - kept.len());
            for d in &defects {
                let id = &d.call_ids[0];
                let refusal = match d.kind {
                    DefectKind::OrphanResult => "No tool call found for",
                    _ => "Duplicate item found with id",
                };
                prop_assert!(d.message.starts_with(refusal) && d.message.contains(id.as_str()), "{:?}", d);
            }
            let body: Value = serde_json::from_slice(&repaired.body).expect("JSON");
            let got: Vec<&Value> = body["input"].as_array().expect("input").iter().collect();
            if kept.is_empty() {
                prop_assert_eq!(&got, &input.iter().collect::<Vec<_>>());
                prop_assert!(repaired.changes.is_empty());
            } else {
                prop_assert_eq!(&got, &kept);
                prop_assert_eq!(repaired.changes.len(), input.len() - kept.len());
            }
        }
    }
}
