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

/// What the injects into one response committed, as far as the gateway can
/// tell from the server's answers: the calls (by their position among the
/// calls the response has begun) whose output a confirmed inject carried.
/// The server confirms an inject with `response.inject.created`, which
/// names the response but not the inject, and no document says its
/// answers keep the order of the injects (openai-python
/// `BetaResponseInjectCreatedEvent`), so an answer is tied to no inject
/// of its own: once every inject in flight into the response since none
/// was has been answered, and each answer was `response.inject.created`,
/// they all committed, in whatever order; one refused among them
/// (`response.inject.failed`), and nothing is learned of them. After a
/// refusal of a client message that names no response (an `error` with no
/// `sequence_number`) while one is in flight, nothing more is learned of
/// the response. What is not learned is not judged a repeat: an output
/// taken out of an inject that the server had not committed would be lost.
///
/// Bounded by the response's calls (two bits each, those the parse keeps,
/// `response_parse_limit`), freed with the turn.
#[derive(Debug, Default)]
pub(crate) struct Commits {
    /// Bit `i`: the output of call `i` is committed.
    committed: Vec<u64>,
    /// Injects sent into the response, not yet answered.
    in_flight: u32,
    /// The calls the injects in flight since none was carry, together.
    carried: Vec<u64>,
    /// Each of those answered so far committed.
    all_committed: bool,
    /// An answer may have been tied to the wrong inject: nothing more is
    /// learned.
    lost: bool,
}

// === impl Commits ===

impl Commits {
    /// Whether an inject the server confirmed answered call `at`.
    pub(crate) fn answered(&self, at: usize) -> bool {
        bit(&self.committed, at)
    }

    /// An inject carrying the outputs of `calls` (set bits) was sent; `None`:
    /// its calls are not known (the parse may have missed one).
    pub(crate) fn sent(&mut self, calls: Option<Vec<u64>>) {
        if self.lost {
            return;
        }
        let Some(calls) = calls else {
            return self.lose();
        };
        if self.in_flight == 0 {
            self.carried.clear();
            self.all_committed = true;
        }
        self.in_flight += 1;
        if self.carried.is_empty() {
            self.carried = calls;
        } else {
            or_into(&mut self.carried, &calls);
        }
    }

    /// The server answered an inject into the response: `committed`
    /// (`response.inject.created`) or not (`response.inject.failed`).
    pub(crate) fn answered_inject(&mut self, committed: bool) {
        if self.lost || self.in_flight == 0 {
            return;
        }
        self.in_flight -= 1;
        self.all_committed &= committed;
        if self.in_flight == 0 {
            if self.all_committed {
                or_into(&mut self.committed, &self.carried);
            }
            self.carried = Vec::new();
        }
    }

    /// A client message was refused with no response named: if an inject
    /// into this response is in flight, it may be the one.
    pub(crate) fn refusal(&mut self) {
        if self.in_flight > 0 {
            self.lose();
        }
    }

    /// Nothing more is learned; what was stays.
    fn lose(&mut self) {
        self.lost = true;
        self.in_flight = 0;
        self.carried = Vec::new();
    }
}

/// `bits |= new`, growing `bits`.
fn or_into(bits: &mut Vec<u64>, new: &[u64]) {
    if bits.len() < new.len() {
        bits.resize(new.len(), 0);
    }
    for (word, new) in bits.iter_mut().zip(new) {
        *word |= new;
    }
}

/// Bit `at` of `bits`.
pub(crate) fn bit(bits: &[u64], at: usize) -> bool {
    bits.get(at / 64).is_some_and(|w| w & (1 << (at % 64)) != 0)
}

/// Set bit `at` of `bits`, growing it.
pub(crate) fn set_bit(bits: &mut Vec<u64>, at: usize) {
    if bits.len() <= at / 64 {
        bits.resize(at / 64 + 1, 0);
    }
    bits[at / 64] |= 1 << (at % 64);
}

/// The `response_id` an inject's answer names (`response.inject.created`,
/// `.failed`).
pub(crate) fn answer_response_id(payload: &[u8]) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        response_id: Cow<'a, str>,
    }
    (serde_json::from_slice::<Answer<'_>>(payload).ok()).map(|a| a.response_id)
}

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

    fn bits(at: &[usize]) -> Vec<u64> {
        let mut bits = Vec::new();
        at.iter().for_each(|&at| set_bit(&mut bits, at));
        bits
    }

    /// The injects in flight since none was are learned together, once
    /// each is answered and every answer says committed, whatever their
    /// order; a refusal among them, or one naming no response while one is
    /// in flight, and they are not.
    #[test]
    fn commits_are_learned_once_every_inject_in_flight_committed() {
        let mut c = Commits::default();
        c.sent(Some(bits(&[0, 70])));
        assert!(!c.answered(0), "not before the server's answer");
        c.answered_inject(true);
        assert!(c.answered(0) && c.answered(70) && !c.answered(1));
        // Refused: nothing committed.
        c.sent(Some(bits(&[1])));
        c.answered_inject(false);
        assert!(!c.answered(1));
        // Two in flight, both committed: both learned, only once the
        // second answer came.
        c.sent(Some(bits(&[2])));
        c.sent(Some(bits(&[3, 130])));
        c.answered_inject(true);
        assert!(!c.answered(2) && !c.answered(3), "one of them is in flight");
        c.answered_inject(true);
        assert!(c.answered(2) && c.answered(3) && c.answered(130));
        // Three in flight, one refused: which one is not known.
        c.sent(Some(bits(&[4])));
        c.sent(Some(bits(&[5])));
        c.sent(Some(bits(&[6])));
        c.answered_inject(true);
        c.answered_inject(false);
        c.answered_inject(true);
        assert!(!c.answered(4) && !c.answered(5) && !c.answered(6));
        // Alone again: learned.
        c.sent(Some(bits(&[7])));
        c.answered_inject(true);
        assert!(c.answered(7));
        // An answer with none in flight (an inject the gateway did not
        // follow) teaches nothing.
        c.answered_inject(true);
        // A refusal naming no response while one is in flight: it may be
        // that inject's, and a later answer may not be; nothing more is
        // learned, what was learned stays.
        c.sent(Some(bits(&[8])));
        c.refusal();
        c.sent(Some(bits(&[9])));
        c.answered_inject(true);
        assert!(!c.answered(8) && !c.answered(9) && c.answered(7));
        // A refusal with none in flight concerns another message.
        let mut c = Commits::default();
        c.refusal();
        c.sent(Some(bits(&[0])));
        c.answered_inject(true);
        assert!(c.answered(0));
        // Calls the parse may have missed: nothing more is learned.
        c.sent(None);
        c.sent(Some(bits(&[1])));
        c.answered_inject(true);
        assert!(!c.answered(1));
    }

    #[test]
    fn reads_an_answers_response_id() {
        let created =
            br#"{"type":"response.inject.created","response_id":"resp_1","sequence_number":4}"#;
        assert_eq!(answer_response_id(created).as_deref(), Some("resp_1"));
        assert_eq!(
            answer_response_id(br#"{"type":"response.inject.created"}"#),
            None
        );
        assert_eq!(answer_response_id(b"not json"), None);
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
        /// Whatever the order the server answers the injects in flight:
        /// a call learned as committed was carried by an inject the server
        /// committed; when it commits every inject, every call carried is
        /// learned once all are answered.
        #[test]
        fn what_is_learned_was_committed_in_any_answer_order(
            injects in proptest::collection::vec(
                (proptest::collection::vec(0usize..8, 0..3), any::<bool>()), 1..6),
            steps in proptest::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 0..24),
            all_commit in any::<bool>(),
        ) {
            let mut c = Commits::default();
            let mut next = 0;
            let mut in_flight: Vec<usize> = Vec::new();
            let mut truly: Vec<u64> = Vec::new();
            let commits = |i: usize| all_commit || injects[i].1;
            // The steps, then answers (the oldest first) until all are in.
            let ends = (steps.iter().map(|&(send, pick)| (send, Some(pick))))
                .chain(std::iter::repeat((false, None)));
            for (send, pick) in ends {
                if send && next < injects.len() || in_flight.is_empty() {
                    if next == injects.len() {
                        break;
                    }
                    c.sent(Some(bits(&injects[next].0)));
                    in_flight.push(next);
                    next += 1;
                } else {
                    let i = in_flight.remove(pick.map_or(0, |p| p.index(in_flight.len())));
                    if commits(i) {
                        injects[i].0.iter().for_each(|&at| set_bit(&mut truly, at));
                    }
                    c.answered_inject(commits(i));
                }
                for at in 0..8 {
                    prop_assert!(!c.answered(at) || bit(&truly, at), "call {} learned, never committed", at);
                }
            }
            if all_commit {
                for (calls, _) in &injects {
                    for &at in calls {
                        prop_assert!(c.answered(at), "call {} committed, not learned", at);
                    }
                }
            }
        }

        /// Any bytes: read or not, never a panic.
        #[test]
        fn any_bytes_are_read_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = read(&bytes);
            let _ = answer_response_id(&bytes);
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
