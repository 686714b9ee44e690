//! `response.inject`: the Responses WebSocket beta's client message that
//! commits input items to a response still under way (`responses_multi_agent=v1`;
//! openai-python `ResponsesResponseResource.inject`, the API's
//! `ResponseInjectEvent`: "Currently, the server accepts client-owned tool
//! outputs that resume a waiting agent"):
//!
//! ```json
//! {"type":"response.inject","response_id":"resp_123",
//!  "input":[{"type":"function_call_output","call_id":"call_123","output":"…"}]}
//! ```
//!
//! Its outputs answer calls of that same response, which has not ended: no
//! `response.create` carries them, so they are read here, as a request
//! body of their own ([`results_body`]: the response's calls whole so far,
//! then the items) for the turn whose response it names
//! ([`super::turns::Turns`]). The server answers `response.inject.created`
//! once it committed them, or `response.inject.failed` with the items (a
//! response that ended or is unknown): a client may send those again in
//! a later `response.create`, where they are read as a resent answer is.

use std::borrow::Cow;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_wire::{ResponseView, openai_responses::CallKind};

/// A `response.inject` message, read.
#[derive(Debug)]
pub(crate) struct Inject<'a> {
    /// The response it commits its items to.
    pub(crate) response_id: Cow<'a, str>,
    /// Its items, each as the client wrote it.
    pub(crate) input: Vec<&'a RawValue>,
}

/// Read a `response.inject` message: `None` when it is not one JSON
/// object with a string `response_id` and an `input` array.
pub(crate) fn read(payload: &[u8]) -> Option<Inject<'_>> {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        response_id: Cow<'a, str>,
        #[serde(borrow)]
        input: Vec<&'a RawValue>,
    }
    let message = serde_json::from_slice::<Message<'_>>(payload).ok()?;
    Some(Inject {
        response_id: message.response_id,
        input: message.input,
    })
}

/// A Responses request body holding `input` after the calls of `calls`
/// (the response's calls whole so far, in order; those of a kind the body
/// cannot restate, a built-in tool's, left out): the request the HTTP
/// path's analysis reads, each output beside the call it answers (its
/// tool, its command for the failure detection, the turn it replays).
/// The calls are items of the body, not new answers: only the outputs
/// are results.
pub(crate) fn results_body(calls: Option<&ResponseView>, input: &[&RawValue]) -> Bytes {
    let text = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut out = String::from(r#"{"input":["#);
    let mut first = true;
    let mut item = |out: &mut String, text: &str| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        out.push_str(text);
    };
    if let Some(view) = calls {
        let kind_of = |i: usize| {
            (view.call_kinds.iter())
                .find(|(at, _)| *at == i)
                .map_or(CallKind::Function, |(_, kind)| *kind)
        };
        for (i, call) in view.calls.iter().enumerate() {
            let (kind, key) = match kind_of(i) {
                CallKind::Function => ("function_call", "arguments"),
                CallKind::Custom => ("custom_tool_call", "input"),
                _ => continue,
            };
            let call = format!(
                r#"{{"type":"{kind}","call_id":{},"name":{},"{key}":{}}}"#,
                text(&call.id),
                text(&call.name),
                text(&call.arguments)
            );
            item(&mut out, &call);
        }
    }
    for raw in input {
        item(&mut out, raw.get());
    }
    out.push_str("]}");
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};
    use toolwarden_core::ToolCall;

    use super::*;

    fn view(calls: &[(&str, &str, &str)], kinds: Vec<(usize, CallKind)>) -> ResponseView {
        ResponseView {
            calls: calls
                .iter()
                .map(|(id, name, arguments)| ToolCall {
                    id: (*id).into(),
                    name: (*name).into(),
                    arguments: (*arguments).into(),
                })
                .collect(),
            call_kinds: kinds,
            ..ResponseView::default()
        }
    }

    #[test]
    fn reads_the_apis_example() {
        // The API's own example (openapi `BetaResponseInjectEvent`).
        let message = json!({"type": "response.inject", "response_id": "resp_123",
            "input": [{"type": "function_call_output", "call_id": "call_123",
                "output": "{\"temperature\":72}"}]})
        .to_string();
        let inject = read(message.as_bytes()).expect("an inject");
        assert_eq!(inject.response_id, "resp_123");
        assert_eq!(inject.input.len(), 1);
        let body = results_body(
            Some(&view(
                &[
                    ("call_123", "weather", r#"{"city":"Oslo"}"#),
                    ("c2", "patch", "*** Begin"),
                ],
                vec![(1, CallKind::Custom)],
            )),
            &inject.input,
        );
        let body: Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(
            body,
            json!({"input": [
                {"type": "function_call", "call_id": "call_123", "name": "weather",
                    "arguments": "{\"city\":\"Oslo\"}"},
                {"type": "custom_tool_call", "call_id": "c2", "name": "patch", "input": "*** Begin"},
                {"type": "function_call_output", "call_id": "call_123",
                    "output": "{\"temperature\":72}"},
            ]})
        );
        // A built-in tool's call is left out; no calls, the items alone.
        let shell = view(&[("s1", "", "")], vec![(0, CallKind::Shell)]);
        let body: Value = serde_json::from_slice(&results_body(Some(&shell), &[])).unwrap();
        assert_eq!(body, json!({"input": []}));
    }

    #[test]
    fn what_is_not_an_inject_is_none() {
        for message in [
            &b"not json"[..],
            br#"{"type":"response.inject","input":[]}"#,
            br#"{"type":"response.inject","response_id":"r","input":{}}"#,
            br#"{"type":"response.inject","response_id":1,"input":[]}"#,
            br#"{"type":"response.inject","response_id":"r","input":[1,"#,
            br#"[]"#,
        ] {
            assert!(
                read(message).is_none(),
                "{}",
                String::from_utf8_lossy(message)
            );
        }
    }

    proptest! {
        /// Any bytes: read or not, never a panic.
        #[test]
        fn any_bytes_are_read_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = read(&bytes);
        }

        /// Any inject (any id, any items, in any order of its members) is
        /// read back, and its body is JSON holding the calls and then the
        /// items as they came.
        #[test]
        fn an_inject_is_read_back_into_a_body_of_json(
            id in "\\PC{0,40}",
            outputs in proptest::collection::vec(("\\PC{0,20}", "\\PC{0,60}"), 0..6),
            calls in proptest::collection::vec(("\\PC{0,20}", "\\PC{0,20}", "\\PC{0,60}"), 0..4),
            id_last in any::<bool>(),
        ) {
            let input: Vec<Value> = outputs
                .iter()
                .map(|(call_id, output)| json!({"type": "function_call_output",
                    "call_id": call_id, "output": output}))
                .collect();
            let message = if id_last {
                json!({"type": "response.inject", "input": input, "response_id": id})
            } else {
                json!({"response_id": id, "input": input, "type": "response.inject"})
            };
            let message = message.to_string();
            let inject = read(message.as_bytes()).expect("an inject");
            prop_assert_eq!(&*inject.response_id, id.as_str());
            let calls: Vec<(&str, &str, &str)> =
                calls.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
            let body = results_body(Some(&view(&calls, Vec::new())), &inject.input);
            let body: Value = serde_json::from_slice(&body).expect("JSON");
            let items = body["input"].as_array().expect("an array");
            prop_assert_eq!(items.len(), calls.len() + input.len());
            for (item, (id, name, arguments)) in items.iter().zip(&calls) {
                prop_assert_eq!(item, &json!({"type": "function_call", "call_id": id,
                    "name": name, "arguments": arguments}));
            }
            prop_assert_eq!(&items[calls.len()..], &input[..]);
        }
    }
}
