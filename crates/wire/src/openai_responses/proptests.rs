//! Property tests: random splits, random pairings, random bytes.

use proptest::prelude::*;

use super::tests::sse_from_chunks;
use crate::{Detector, Dialect, StreamParser};

fn item() -> impl Strategy<Value = String> {
    let id = prop::sample::select(vec!["a", "b", "c", "z"]);
    let name = prop::sample::select(vec!["f", "g"]);
    let args = prop::sample::select(vec!["{}", "{\\\"n\\\":1}"]);
    prop_oneof![
        Just(r#"{"role":"user","content":"hi"}"#.to_owned()),
        Just(r#"{"type":"message","role":"assistant","content":[]}"#.to_owned()),
        Just(r#"{"type":"reasoning","id":"rs","summary":[]}"#.to_owned()),
        (id.clone(), name, args).prop_map(|(i, n, a)| format!(
            r#"{{"type":"function_call","call_id":"{i}","name":"{n}","arguments":"{a}"}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"custom_tool_call","call_id":"{i}","name":"sql","input":"x"}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"function_call_output","call_id":"{i}","output":"ok"}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"custom_tool_call_output","call_id":"{i}","output":[{{"type":"input_text","text":"t"}}]}}"#
        )),
        // The built-in client tools.
        id.clone().prop_map(|i| format!(
            r#"{{"type":"computer_call","call_id":"{i}","action":{{"type":"screenshot"}}}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"shell_call","call_id":"{i}","action":{{"commands":["ls"]}}}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"apply_patch_call","call_id":"{i}","operation":{{"type":"delete_file","path":"x"}}}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"shell_call_output","call_id":"{i}","output":[{{"stdout":"","stderr":"e","outcome":{{"type":"exit","exit_code":1}}}}]}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"apply_patch_call_output","call_id":"{i}","status":"completed"}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"local_shell_call","id":"lsh","call_id":"{i}","action":{{"type":"exec","command":["ls"]}}}}"#
        )),
        // A tool search the client runs, and the provider's own.
        id.clone().prop_map(|i| format!(
            r#"{{"type":"tool_search_call","execution":"client","call_id":"{i}","arguments":{{"q":"x"}}}}"#
        )),
        id.clone().prop_map(|i| format!(
            r#"{{"type":"tool_search_output","execution":"client","call_id":"{i}","tools":[]}}"#
        )),
        Just(r#"{"type":"tool_search_call","execution":"server","call_id":null,"arguments":{"q":"x"}}"#.to_owned()),
        // A local shell output names its call by `id` in the API's type.
        id.prop_map(|i| format!(
            r#"{{"type":"local_shell_call_output","id":"{i}","output":"{{}}"}}"#
        )),
    ]
}

fn body() -> impl Strategy<Value = String> {
    (prop::collection::vec(item(), 0..12), any::<bool>()).prop_map(|(items, prev)| {
        let prev = if prev {
            r#""previous_response_id":"resp_1","#
        } else {
            ""
        };
        format!(
            "{{{prev}\"model\":\"m\",\"input\":[\n  {}\n]}}",
            items.join(",\n  ")
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn repair_output_validates_clean(b in body()) {
        let r = crate::repair(Dialect::OpenAiResponses, b.as_bytes()).unwrap();
        let defects = crate::validate(Dialect::OpenAiResponses, &r.body).unwrap();
        prop_assert!(defects.is_empty(), "{defects:?}\n{}", String::from_utf8_lossy(&r.body));
        let was_clean = crate::validate(Dialect::OpenAiResponses, b.as_bytes()).unwrap().is_empty();
        prop_assert_eq!(was_clean, !r.is_changed());
        let again = crate::repair(Dialect::OpenAiResponses, &r.body).unwrap();
        prop_assert!(matches!(again.body, std::borrow::Cow::Borrowed(_)));
        prop_assert_eq!(&*again.body, &*r.body);
        serde_json::from_slice::<serde_json::Value>(&r.body).unwrap();
        crate::request_view(Dialect::OpenAiResponses, &r.body).unwrap();
    }

    /// No call's result counts twice: the outputs read as results of their
    /// own (new, as no earlier turn holds them) of one id are at most the
    /// calls of that id in the body, or one when the body has none.
    #[test]
    fn no_call_is_answered_by_two_counted_outputs(b in body()) {
        let view = crate::request_view(Dialect::OpenAiResponses, b.as_bytes()).unwrap();
        let mut counted: std::collections::HashMap<&str, usize> = Default::default();
        for r in view.results.iter().filter(|r| r.new) {
            *counted.entry(&*r.call_id).or_default() += 1;
        }
        for (id, n) in counted {
            let calls = view.calls.iter().filter(|c| c.id == id).count();
            prop_assert!(n <= calls.max(1), "{} counted {} times, {} calls: {}", id, n, calls, b);
        }
    }

    #[test]
    fn random_splits_give_the_same_calls(cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12)) {
        for file in ["sse/vercel-ai__azure-tool-call.1.chunks.txt", "sse/vercel-ai__openai-custom-tool.1.chunks.txt"] {
            let bytes = sse_from_chunks(file, true);
            let whole = {
                let mut p = StreamParser::new(Dialect::OpenAiResponses);
                p.feed(&bytes);
                p.finish()
            };
            // Recorded streams: the call's `output_item.done` says it is
            // whole, however the bytes are split.
            prop_assert!(whole.last_call_completed, "{}", file);
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len())).collect();
            at.sort_unstable();
            let mut p = StreamParser::new(Dialect::OpenAiResponses);
            let mut prev = 0;
            for a in at {
                p.feed(&bytes[prev..a]);
                prev = a;
            }
            p.feed(&bytes[prev..]);
            prop_assert_eq!(p.finish(), whole);
        }
    }

    /// However a stream of calls is split, the calls counted whole so far
    /// (`whole_calls`: what a client may answer before the response ends,
    /// the WebSocket beta's `response.inject`) never shrink, and are the
    /// first calls of the finished view, as they will be.
    #[test]
    fn whole_calls_so_far_are_the_first_calls_of_the_end(
        calls in prop::collection::vec((prop::sample::select(vec!["f", "g"]), 1..4usize, any::<bool>()), 0..5),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut events = vec![r#"{"type":"response.created","response":{"id":"resp_1"}}"#.to_owned()];
        let mut done = Vec::new();
        for (i, (name, pieces, item_done)) in calls.iter().enumerate() {
            events.push(format!(
                r#"{{"type":"response.output_item.added","output_index":{i},"item":{{"type":"function_call","id":"fc_{i}","call_id":"c{i}","name":"{name}","arguments":""}}}}"#
            ));
            for _ in 0..*pieces {
                events.push(format!(
                    r#"{{"type":"response.function_call_arguments.delta","output_index":{i},"item_id":"fc_{i}","delta":"x"}}"#
                ));
            }
            let args = "x".repeat(*pieces);
            // The arguments' own `.done`, or the item's.
            done.push(if *item_done {
                format!(
                    r#"{{"type":"response.output_item.done","output_index":{i},"item":{{"type":"function_call","id":"fc_{i}","call_id":"c{i}","name":"{name}","arguments":"{args}","status":"completed"}}}}"#
                )
            } else {
                format!(
                    r#"{{"type":"response.function_call_arguments.done","output_index":{i},"item_id":"fc_{i}","arguments":"{args}"}}"#
                )
            });
        }
        // The calls stream interleaved: each begun before any is whole.
        events.extend(done);
        events.push(r#"{"type":"response.completed","response":{"id":"resp_1","status":"completed"}}"#.to_owned());
        let bytes: Vec<u8> = events.iter().flat_map(|e| format!("data: {e}\n\n").into_bytes()).collect();
        let end = {
            let mut p = StreamParser::new(Dialect::OpenAiResponses);
            p.feed(&bytes);
            p.finish()
        };
        prop_assert_eq!(end.calls.len(), calls.len());
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len())).collect();
        at.sort_unstable();
        at.push(bytes.len());
        let mut p = StreamParser::new(Dialect::OpenAiResponses);
        let (mut prev, mut whole) = (0, 0);
        for a in at {
            p.feed(&bytes[prev..a]);
            prev = a;
            let now = p.whole_calls();
            prop_assert!(now >= whole, "{} after {}", now, whole);
            whole = now;
            let so_far = p.view_so_far();
            prop_assert_eq!(&so_far.calls[..whole], &end.calls[..whole]);
            if whole > 0 {
                prop_assert_eq!(p.response_id(), Some("resp_1"));
            }
        }
        prop_assert_eq!(whole, calls.len());
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(v) = crate::request_view(Dialect::OpenAiResponses, &bytes) {
            for r in &v.results {
                let _ = r.read(&Detector::default());
            }
        }
        let _ = crate::validate(Dialect::OpenAiResponses, &bytes);
        let _ = crate::repair(Dialect::OpenAiResponses, &bytes);
        let _ = crate::response_view(Dialect::OpenAiResponses, &bytes);
        let mut p = StreamParser::new(Dialect::OpenAiResponses);
        p.feed(&bytes);
        let _ = p.finish();
    }

    #[test]
    fn mutated_bodies_never_panic(b in body(), at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<bool>()) {
        let mut bytes = b.into_bytes();
        let i = at.index(bytes.len());
        if cut { bytes.truncate(i) } else { bytes[i] = byte }
        if let Ok(v) = crate::request_view(Dialect::OpenAiResponses, &bytes) {
            for r in &v.results {
                let _ = r.read(&Detector::default());
            }
        }
        let _ = crate::repair(Dialect::OpenAiResponses, &bytes);
        let mut p = StreamParser::new(Dialect::OpenAiResponses);
        p.feed(&sse_from_chunks("sse/vercel-ai__azure-tool-call.1.chunks.txt", true)[..i.min(100)]);
        p.feed(&bytes);
        let _ = p.finish();
    }

    /// The gateway's one pass ([`crate::inspect`]) finds what
    /// `request_view` and `validate` find on their own, on intact and
    /// damaged bodies alike.
    #[test]
    fn inspect_agrees_with_view_and_validate(b in body(), at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<bool>()) {
        let intact = b.into_bytes();
        let mut bad = intact.clone();
        let i = at.index(bad.len());
        if cut { bad.truncate(i) } else { bad[i] = byte }
        for bytes in [&intact, &bad] {
            crate::testutil::inspect_agrees(Dialect::OpenAiResponses, bytes)?;
        }
    }
}

/// Items with their fields in any order, repeated, `null`, escaped or of
/// the wrong type, for the fast path against serde.
mod fast_agrees_with_serde {
    use proptest::prelude::*;

    use super::super::view::{fast_path_agrees, fast_then_serde};
    use crate::testutil::pick;

    const STRINGS: &[&str] = &[
        r#""call_1""#,
        r#""call_2""#,
        r#""a \"quoted\"\nline""#,
        r#""caf\u00e9 \ud83d\ude00""#,
        r#""\ud800""#,
        "null",
        "7",
    ];

    const TEXTS: &[&str] = &[
        r#""{\"path\":\"a.rs\"}""#,
        r#"[{"type":"input_text","text":"one"},{"type":"input_image"},{"text":"two\n"}]"#,
        "null",
        "[]",
        r#"[{"text":"a","text":"b"}]"#,
        r#"{"text":"x"}"#,
        "3",
    ];

    fn item(kind: u8, fields: &[(u8, u8)]) -> String {
        let kind = pick(
            kind,
            &[
                r#""function_call""#,
                r#""function_call_output""#,
                r#""message""#,
                r#""custom_tool_call""#,
                r#""item_reference""#,
                r#""reasoning""#,
                r#""function_\u0063all""#,
                "null",
                r#""shell_call""#,
                r#""shell_call_output""#,
                r#""apply_patch_call""#,
                r#""computer_call_output""#,
            ],
        );
        let mut members = vec![format!(r#""type":{kind}"#)];
        members.extend(fields.iter().map(|&(f, v)| match f % 13 {
            0 => format!(r#""call_id":{}"#, pick(v, STRINGS)),
            1 => format!(r#""name":{}"#, pick(v, STRINGS)),
            2 => format!(r#""arguments":{}"#, pick(v, TEXTS)),
            3 => format!(r#""input":{}"#, pick(v, TEXTS)),
            4 => format!(
                r#""output":{}"#,
                pick(
                    v,
                    &[
                        r#""ok\n""#,
                        r#"[{"type":"output_text","text":"x"}]"#,
                        "null",
                        "{}",
                        r#"[{"stdout":"a","stderr":"","outcome":{"type":"exit","exit_code":0}}]"#,
                        r#"[{"stdout":"","stderr":"e","outcome":{"type":"timeout"}}]"#,
                        r#"{"type":"computer_screenshot","image_url":"data:"}"#
                    ]
                )
            ),
            5 => format!(
                r#""status":{}"#,
                pick(v, &[r#""completed""#, r#""incomplete""#, "null", "false"])
            ),
            6 => format!(
                r#""role":{}"#,
                pick(v, &[r#""assistant""#, r#""user""#, "null"])
            ),
            7 => format!(r#""id":{}"#, pick(v, STRINGS)),
            8 => format!(
                r#""content":{}"#,
                pick(
                    v,
                    &[
                        r#"[{"type":"input_text","text":"hi"}]"#,
                        r#""hi""#,
                        "[[[]]]"
                    ]
                )
            ),
            9 => format!(r#""type":{}"#, pick(v, &[r#""message""#, "null"])),
            10 => format!(
                r#""action":{}"#,
                pick(v, &[r#"{"commands":["ls"]}"#, "null", r#""x""#, "[]"])
            ),
            11 => format!(
                r#""operation":{}"#,
                pick(v, &[r#"{"type":"delete_file","path":"x"}"#, "null", "7"])
            ),
            _ => format!(r#""\u0063all_id":{}"#, pick(v, STRINGS)),
        }));
        if fields.len() % 3 == 1 {
            members.reverse();
        }
        format!("{{{}}}", members.join(","))
    }

    type It = (u8, Vec<(u8, u8)>);

    fn body(top: &[(u8, u8)], items: &[It]) -> String {
        let input = format!(
            "[{}]",
            items
                .iter()
                .map(|(k, f)| item(*k, f))
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut members: Vec<String> = top
            .iter()
            .map(|&(f, v)| match f % 8 {
                0 => format!(r#""model":{}"#, pick(v, STRINGS)),
                1 => format!(r#""stream":{}"#, pick(v, &["true", "false", "null", "0"])),
                2 => format!(
                    r#""instructions":{}"#,
                    pick(v, &[r#""Be brief.\n""#, "null", r#"[{"x":1}]"#])
                ),
                3 => format!(
                    r#""previous_response_id":{}"#,
                    pick(v, &["null", r#""resp_1""#, "1"])
                ),
                4 => format!(
                    r#""input":{}"#,
                    pick(v, &[input.as_str(), r#""just text\n""#, "null", "{}"])
                ),
                5 => r#""tools":[{"type":"function","name":"f","parameters":{}}]"#.to_string(),
                6 => format!(
                    r#""conversation":{}"#,
                    pick(
                        v,
                        &[
                            r#""conv_1""#,
                            r#"{"id":"conv_1"}"#,
                            r#"{"x":[1],"id":"c1"}"#,
                            r#"{"id":7}"#,
                            "null",
                            "1",
                        ]
                    )
                ),
                _ => r#""store":false"#.to_string(),
            })
            .collect();
        if !top.iter().any(|&(f, _)| f % 8 == 4) {
            members.push(format!(r#""input":{input}"#));
        }
        format!("{{{}}}", members.join(","))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Whenever the fast path answers, serde answers the same; damaged
        /// bodies too.
        #[test]
        fn fast_answers_as_serde_does(
            top in prop::collection::vec((any::<u8>(), any::<u8>()), 0..5),
            items in prop::collection::vec((any::<u8>(), prop::collection::vec((any::<u8>(), any::<u8>()), 0..5)), 0..6),
            damage in any::<(usize, u8, u8)>(),
        ) {
            let text = body(&top, &items);
            crate::testutil::agrees_whole_and_damaged(fast_path_agrees, &text, damage)?;
        }

        /// The bodies of the pairing tests above: all taken by the fast
        /// path, and read as serde reads them.
        #[test]
        fn fast_takes_ordinary_bodies(b in super::body()) {
            prop_assert_eq!(fast_then_serde(b.as_bytes()), Some(Ok(())), "{}", b);
        }
    }
}

proptest! {
    /// Calls of several agents (the multi-agent beta) at the same output
    /// indexes, their argument deltas interleaved in any order and the
    /// stream cut anywhere: each call gets its own arguments, whole.
    #[test]
    fn calls_sharing_output_indexes_keep_their_own_arguments(
        calls in 1usize..5,
        order in proptest::collection::vec(0usize..5, 0..40),
        split in 1usize..200,
    ) {
        use serde_json::json;
        let mut events = vec![json!({"type": "response.created", "response": {"id": "r"}})];
        for n in 0..calls {
            events.push(json!({"type": "response.output_item.added", "output_index": n % 2,
                "agent": {"agent_name": format!("agent{n}")},
                "item": {"type": "function_call", "id": format!("fc_{n}"),
                    "call_id": format!("call_{n}"), "name": "f", "arguments": ""}}));
        }
        // Each call's arguments `[n,n,…]`, one piece per turn it gets.
        let mut pieces = vec![0usize; calls];
        for n in order.into_iter().filter(|n| *n < calls) {
            let delta = if pieces[n] == 0 { format!("[{n}") } else { format!(",{n}") };
            pieces[n] += 1;
            events.push(json!({"type": "response.function_call_arguments.delta",
                "output_index": n % 2, "item_id": format!("fc_{n}"), "delta": delta}));
        }
        let bytes: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        let mut p = StreamParser::new(Dialect::OpenAiResponses);
        for chunk in bytes.as_bytes().chunks(split) {
            p.feed(chunk);
        }
        let v = p.view_so_far();
        prop_assert_eq!(v.calls.len(), calls);
        for (n, call) in v.calls.iter().enumerate() {
            prop_assert_eq!(&call.id, &format!("call_{n}"));
            let want = match pieces[n] {
                0 => String::new(),
                k => format!("[{}", vec![n.to_string(); k].join(",")),
            };
            prop_assert_eq!(&call.arguments, &want);
        }
    }
}
