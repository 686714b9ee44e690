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
//! event and the rest once the client injects into the response (the id
//! of its `response.created`).

use bytes::Bytes;
use serde_json::{Value, json};

/// A response waiting for its client's outputs: the events it sends once
/// they come.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    response_id: String,
    rest: Vec<Bytes>,
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
    let kind = |e: &Bytes| {
        serde_json::from_slice::<Value>(e)
            .ok()
            .and_then(|v| v.get("type")?.as_str().map(str::to_string))
    };
    let Some(at) = events
        .iter()
        .position(|e| kind(e).as_deref() == Some("response.inject.created"))
    else {
        return events;
    };
    let response_id = events
        .iter()
        .filter_map(|e| serde_json::from_slice::<Value>(e).ok())
        .find(|v| v["type"] == "response.created")
        .and_then(|v| v["response"]["id"].as_str().map(str::to_string))
        .unwrap_or_default();
    let rest = events.split_off(at);
    *waiting = Some(Waiting { response_id, rest });
    events
}

/// The answer to an inject into `response_id` of `input`: the waiting
/// response's rest, or `response.inject.failed` (`response_not_found`,
/// or `response_already_completed` for a response `ended` says it made).
pub(crate) fn answer(
    waiting: &mut Option<Waiting>,
    response_id: &str,
    input: Value,
    ended: impl Fn(&str) -> bool,
) -> Vec<Bytes> {
    if waiting
        .as_ref()
        .is_some_and(|w| w.response_id == response_id)
        && let Some(w) = waiting.take()
    {
        return w.rest;
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

    fn event(v: Value) -> Bytes {
        Bytes::from(v.to_string())
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
        let wrong = answer(&mut waiting, "resp_2", json!([1]), |_| false);
        let wrong: Value = serde_json::from_slice(&wrong[0]).unwrap();
        assert_eq!(wrong["type"], "response.inject.failed");
        assert_eq!(wrong["error"]["code"], "response_not_found");
        assert_eq!(wrong["input"], json!([1]));
        assert_eq!(
            answer(&mut waiting, "resp_1", json!([]), |_| false),
            events[2..]
        );
        let again = answer(&mut waiting, "resp_1", json!([]), |id| id == "resp_1");
        let again: Value = serde_json::from_slice(&again[0]).unwrap();
        assert_eq!(again["error"]["code"], "response_already_completed");
        // No inject in the script: all of it at once.
        assert_eq!(hold(events[..2].to_vec(), &mut waiting), events[..2]);
        assert!(waiting.is_none());
    }
}
