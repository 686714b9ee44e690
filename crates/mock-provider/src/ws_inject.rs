//! The Responses WebSocket beta's `response.inject` (openai-python
//! `ResponsesResponseResource.inject`; the API's `ResponseInjectEvent`,
//! `ResponseInjectCreatedEvent` and `ResponseInjectFailedEvent`): a
//! response that calls a client-owned tool waits for its outputs, which the
//! client commits to it with
//! `{"type":"response.inject","response_id":…,"input":[…]}`; the server
//! answers `response.inject.created` and the response goes on, or
//! `response.inject.failed` with the items it did not commit and the
//! reason (`response_not_found`, `response_already_completed`).
//!
//! A scripted WebSocket answer that holds a `response.inject.created`
//! event plays as such a response: the events before it go at once, that
//! event and those up to the next one once the client injects into the
//! response (the id of its `response.created`), and so on. Two
//! `response.inject.created` in a row are answered together, once the
//! second inject has come: a server that commits the injects in flight
//! at once (no document gives the order or the timing of its answers,
//! openai-python `BetaResponseInjectCreatedEvent`), so that a client can
//! have two injects in flight for certain. With
//! [`crate::MockOptions::validate`], an inject whose items the pairing
//! rules refuse against the response's calls so far and the outputs
//! committed before it (`rules::inject_violation`: an output for a call it
//! never made, a second output for one call) is answered with an `error` event
//! (status 400, `param: input`, as a refused `response.create` is) and
//! commits nothing: the response still waits. (The API documents only
//! that the items "are validated and committed atomically"; the failed
//! event's codes name no validation error.)

use bytes::Bytes;
use serde_json::{Value, json};

/// A response waiting for its client's outputs: the events it sends once
/// they come (up to its next `response.inject.created`, where it waits
/// again).
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    response_id: String,
    /// Its call items so far (each `call_id` once), then the items the
    /// injects into it committed, for the rules.
    context: Vec<Value>,
    rest: Vec<Bytes>,
    /// Answers to injects held until the next inject comes (a
    /// `response.inject.created` followed by another).
    held: Vec<Bytes>,
}

/// A client message's inject, if it is one: its response id and items.
pub(crate) fn read(message: &[u8]) -> Option<(String, Value)> {
    #[derive(serde::Deserialize)]
    struct Inject {
        #[serde(rename = "type")]
        kind: String,
        response_id: String,
        #[serde(default)]
        input: Value,
    }
    let inject = serde_json::from_slice::<Inject>(message).ok()?;
    (inject.kind == "response.inject").then_some((inject.response_id, inject.input))
}

/// `events` up to a `response.inject.created`, the rest kept in
/// `waiting` (the response's id, from its `response.created`); all of
/// them when none is there.
pub(crate) fn hold(mut events: Vec<Bytes>, waiting: &mut Option<Waiting>) -> Vec<Bytes> {
    let Some(at) = events.iter().position(is_inject_created) else {
        return events;
    };
    let response_id = events
        .iter()
        .filter_map(|e| serde_json::from_slice::<Value>(e).ok())
        .find(|v| v["type"] == "response.created")
        .and_then(|v| v["response"]["id"].as_str().map(str::to_string))
        .unwrap_or_default();
    let rest = events.split_off(at);
    let mut context = Vec::new();
    calls_of(&events, &mut context);
    *waiting = Some(Waiting {
        response_id,
        context,
        rest,
        held: Vec::new(),
    });
    events
}

/// Whether `event` is a `response.inject.created`.
fn is_inject_created(event: &Bytes) -> bool {
    serde_json::from_slice::<Value>(event).is_ok_and(|v| v["type"] == "response.inject.created")
}

/// The call items the events hold (`response.output_item.added` and
/// `.done`), added to `calls`, each `call_id` once: the first seen.
fn calls_of(events: &[Bytes], calls: &mut Vec<Value>) {
    for event in events
        .iter()
        .filter_map(|e| serde_json::from_slice::<Value>(e).ok())
    {
        if !matches!(
            event["type"].as_str(),
            Some("response.output_item.added" | "response.output_item.done")
        ) {
            continue;
        }
        let item = &event["item"];
        let is_call = item["type"].as_str().is_some_and(|t| t.ends_with("_call"));
        let Some(id) = item["call_id"].as_str().filter(|_| is_call) else {
            continue;
        };
        if !calls.iter().any(|c| c["call_id"] == id) {
            calls.push(item.clone());
        }
    }
}

/// The answer to an inject into `response_id` of `input`: the waiting
/// response's events up to its next `response.inject.created` (where it
/// waits for another inject, the items committed now part of what the
/// rules judge it against), else its rest; with `validate`, an `error`
/// event for items the rules refuse (the response still waiting); or
/// `response.inject.failed` (`response_not_found`, or
/// `response_already_completed` for a response `ended` says it made).
pub(crate) fn answer(
    waiting: &mut Option<Waiting>,
    (response_id, input): (&str, Value),
    ended: impl Fn(&str) -> bool,
    validate: bool,
) -> Vec<Bytes> {
    if let Some(w) = waiting.as_mut().filter(|w| w.response_id == response_id) {
        let items = input.as_array().map_or(&[][..], Vec::as_slice);
        let mut out = std::mem::take(&mut w.held);
        if validate && let Some(message) = crate::rules::inject_violation(&w.context, items) {
            out.push(crate::envelope::ws_error_event(None, "input", &message));
            return out;
        }
        let Some(next) = (w.rest.iter().skip(1)).position(is_inject_created) else {
            out.extend(waiting.take().map(|w| w.rest).unwrap_or_default());
            return out;
        };
        let later = w.rest.split_off(next + 1);
        let now = std::mem::replace(&mut w.rest, later);
        w.context.extend_from_slice(items);
        calls_of(&now, &mut w.context);
        out.extend(now);
        if next == 0 {
            // Another wait right after this one: answered with the next.
            w.held = out;
            return Vec::new();
        }
        return out;
    }
    let (code, message) = if ended(response_id) {
        (
            "response_already_completed",
            format!("Response '{response_id}' has already completed."),
        )
    } else {
        (
            "response_not_found",
            format!("Response '{response_id}' was not found."),
        )
    };
    let failed = json!({
        "type": "response.inject.failed",
        "response_id": response_id,
        "input": input,
        "error": {"code": code, "message": message},
        "sequence_number": 0,
    });
    vec![Bytes::from(failed.to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `resp_1` created with two calls whole (`call_1`, `call_2`), then
    /// `rest`: a script's events.
    fn after_two_calls(rest: Vec<Value>) -> Vec<Bytes> {
        let call = |id: &str| json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}"});
        [
            json!({"type": "response.created", "response": {"id": "resp_1"}}),
            json!({"type": "response.output_item.done", "item": call("call_1")}),
            json!({"type": "response.output_item.done", "item": call("call_2")}),
        ]
        .into_iter()
        .chain(rest)
        .map(event)
        .collect()
    }

    fn event(v: Value) -> Bytes {
        Bytes::from(v.to_string())
    }

    #[test]
    fn an_inject_the_rules_refuse_commits_nothing() {
        let call =
            json!({"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"});
        let events = vec![
            event(json!({"type": "response.created", "response": {"id": "resp_1"}})),
            event(json!({"type": "response.output_item.added", "item": call})),
            event(json!({"type": "response.output_item.done", "item": call})),
            event(json!({"type": "response.inject.created", "response_id": "resp_1"})),
            event(json!({"type": "response.completed"})),
        ];
        let out = |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
        let mut waiting = None;
        hold(events.clone(), &mut waiting);
        let refused = answer(
            &mut waiting,
            ("resp_1", json!([out("call_1"), out("call_9")])),
            |_| false,
            true,
        );
        let refused: Value = serde_json::from_slice(&refused[0]).unwrap();
        assert_eq!(
            (refused["type"].as_str(), refused["status"].as_u64()),
            (Some("error"), Some(400))
        );
        assert_eq!(
            refused["error"]["message"],
            "No tool call found for function call output with call_id call_9."
        );
        let twice = answer(
            &mut waiting,
            ("resp_1", json!([out("call_1"), out("call_1")])),
            |_| false,
            true,
        );
        let twice: Value = serde_json::from_slice(&twice[0]).unwrap();
        assert_eq!(
            twice["error"]["message"],
            "Duplicate item found with id call_1. Remove duplicate items from your input and try again."
        );
        // Still waiting: the items the rules take commit.
        let taken = answer(
            &mut waiting,
            ("resp_1", json!([out("call_1")])),
            |_| false,
            true,
        );
        assert_eq!(taken, events[3..]);
    }

    /// A script with two `response.inject.created`: the response waits at
    /// each, and an output the first inject committed is a second output
    /// in the next.
    #[test]
    fn a_response_waits_at_each_inject_and_a_committed_output_is_a_repeat() {
        let events = after_two_calls(vec![
            json!({"type": "response.inject.created", "response_id": "resp_1"}),
            json!({"type": "response.output_text.delta"}),
            json!({"type": "response.inject.created", "response_id": "resp_1"}),
            json!({"type": "response.completed"}),
        ]);
        let out = |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
        let mut waiting = None;
        assert_eq!(hold(events.clone(), &mut waiting), events[..3]);
        let first = answer(
            &mut waiting,
            ("resp_1", json!([out("call_1")])),
            |_| false,
            true,
        );
        assert_eq!(first, events[3..5]);
        let repeat = answer(
            &mut waiting,
            ("resp_1", json!([out("call_1"), out("call_2")])),
            |_| false,
            true,
        );
        let repeat: Value = serde_json::from_slice(&repeat[0]).unwrap();
        assert_eq!(
            repeat["error"]["message"],
            "Duplicate item found with id call_1. Remove duplicate items from your input and try again."
        );
        let second = answer(
            &mut waiting,
            ("resp_1", json!([out("call_2")])),
            |_| false,
            true,
        );
        assert_eq!(second, events[5..]);
        assert!(waiting.is_none());
    }

    /// Two `response.inject.created` in a row: the first inject gets no
    /// answer until the second comes, then both answers go together (a
    /// refusal of the second after the first's answer).
    #[test]
    fn injects_awaited_in_a_row_are_answered_together() {
        let events = after_two_calls(vec![
            json!({"type": "response.inject.created", "response_id": "resp_1"}),
            json!({"type": "response.inject.created", "response_id": "resp_1"}),
            json!({"type": "response.output_text.delta"}),
            json!({"type": "response.completed"}),
        ]);
        let out = |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
        let mut waiting = None;
        hold(events.clone(), &mut waiting);
        let inject = |waiting: &mut Option<Waiting>, id: &str| {
            answer(waiting, ("resp_1", json!([out(id)])), |_| false, true)
        };
        assert!(inject(&mut waiting, "call_1").is_empty());
        let refused = inject(&mut waiting, "call_1");
        assert_eq!(refused[0], events[3]);
        let refused: Value = serde_json::from_slice(&refused[1]).unwrap();
        assert_eq!(
            refused["error"]["message"],
            "Duplicate item found with id call_1. Remove duplicate items from your input and try again."
        );
        assert_eq!(inject(&mut waiting, "call_2"), events[4..]);
        assert!(waiting.is_none());
    }

    #[test]
    fn a_response_waits_at_its_inject_and_goes_on_after_it() {
        let events = vec![
            event(json!({"type": "response.created", "response": {"id": "resp_1"}})),
            event(json!({"type": "response.output_item.done"})),
            event(json!({"type": "response.inject.created", "response_id": "resp_1"})),
            event(json!({"type": "response.completed"})),
        ];
        let mut waiting = None;
        let first = hold(events.clone(), &mut waiting);
        assert_eq!(first, events[..2]);
        let wrong = answer(&mut waiting, ("resp_2", json!([1])), |_| false, true);
        let wrong: Value = serde_json::from_slice(&wrong[0]).unwrap();
        assert_eq!(wrong["type"], "response.inject.failed");
        assert_eq!(wrong["error"]["code"], "response_not_found");
        assert_eq!(wrong["input"], json!([1]));
        assert_eq!(
            answer(&mut waiting, ("resp_1", json!([])), |_| false, true),
            events[2..]
        );
        let again = answer(
            &mut waiting,
            ("resp_1", json!([])),
            |id| id == "resp_1",
            true,
        );
        let again: Value = serde_json::from_slice(&again[0]).unwrap();
        assert_eq!(again["error"]["code"], "response_already_completed");
        // No inject in the script: all of it at once.
        assert_eq!(hold(events[..2].to_vec(), &mut waiting), events[..2]);
        assert!(waiting.is_none());
    }
}
