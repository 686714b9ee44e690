//! Property tests: random pairings repair to bodies Bedrock accepts,
//! streams split anywhere read the same, random bytes never panic.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::tests::converse_stream;
use crate::{Dialect, StreamParser, repair, request_view, validate};

/// A message: a role and blocks that are text, calls or results of ids
/// drawn from a small set (so pairs, orphans and duplicates all occur).
fn message() -> impl Strategy<Value = Value> {
    let id = prop::sample::select(vec!["a", "b", "c"]);
    let block = prop_oneof![
        Just(vec![json!({"text": "t"})]),
        // Blank text, which Bedrock refuses.
        prop::sample::select(vec!["", " ", "\n\t"]).prop_map(|t| vec![json!({"text": t})]),
        // At times an input that is not an object, which Bedrock refuses.
        (
            id.clone(),
            prop::sample::select(vec![
                json!({}),
                json!({"k": 1}),
                json!("{\"k\": 1}"),
                json!("{bad"),
                json!([1]),
                json!(2)
            ])
        )
            .prop_map(|(i, input)| vec![
                json!({"toolUse": {"toolUseId": i, "name": "f", "input": input}})
            ]),
        // A result holding `json` blocks, at times not objects.
        (
            id.clone(),
            prop::sample::select(vec![
                json!({"k": 1}),
                json!([1, 2]),
                json!("s"),
                json!(""),
                json!(true)
            ])
        )
            .prop_map(|(i, v)| vec![json!({"toolResult": {"toolUseId": i,
                "content": [{"json": v}, {"text": "r"}, {"json": {}}]}})]),
        // At times with nothing in it, which Bedrock refuses of an error.
        (id.clone(), any::<bool>(), any::<bool>()).prop_map(|(i, err, empty)| vec![
            json!({"toolResult": {
            "toolUseId": i,
            "content": if empty { json!([]) } else { json!([{"text": "r"}]) },
            "status": if err { "error" } else { "success" }}})
        ]),
        // A system tool Bedrock ran, at times without its result or with
        // it twice (its id may be a client call's too).
        (id, 0..3usize).prop_map(|(i, results)| {
            let mut blocks = vec![json!({"toolUse": {"toolUseId": i, "name": "nova_grounding",
                "input": {}, "type": "server_tool_use"}})];
            blocks.extend((0..results).map(|k| {
                // The second at times an error with nothing in it.
                if k == 1 {
                    json!({"toolResult": {"toolUseId": i,
                    "content": [], "status": "error", "type": "nova_grounding_result"}})
                } else {
                    json!({"toolResult": {"toolUseId": i,
                    "content": [{"text": "found"}], "type": "nova_grounding_result"}})
                }
            }));
            blocks
        }),
    ];
    (
        prop::sample::select(vec!["user", "assistant"]),
        // At times no block at all, which Bedrock refuses.
        prop::collection::vec(block, 0..4),
    )
        .prop_map(|(role, content)| {
            let content: Vec<Value> = content.into_iter().flatten().collect();
            json!({"role": role, "content": content})
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn repaired_bodies_validate_clean(msgs in prop::collection::vec(message(), 0..6), pretty in any::<bool>()) {
        let body = json!({"messages": msgs, "inferenceConfig": {"maxTokens": 5}});
        let bytes = if pretty { serde_json::to_vec_pretty(&body) } else { serde_json::to_vec(&body) }.unwrap();
        let defects = validate(Dialect::BedrockConverse, &bytes).unwrap();
        let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
        prop_assert_eq!(r.is_changed(), !defects.is_empty());
        let after = validate(Dialect::BedrockConverse, &r.body).unwrap();
        prop_assert!(after.is_empty(), "{:?}\n{}", after, String::from_utf8_lossy(&r.body));
        // Still valid JSON, still the other fields.
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        prop_assert_eq!(&v["inferenceConfig"], &body["inferenceConfig"]);
        prop_assert!(request_view(Dialect::BedrockConverse, &r.body).is_ok());
        let twice = repair(Dialect::BedrockConverse, &r.body).unwrap();
        prop_assert!(!twice.is_changed());
    }

    #[test]
    fn streams_split_anywhere_read_the_same(cuts in prop::collection::vec(any::<usize>(), 0..10)) {
        let stream = converse_stream();
        let mut whole = StreamParser::new(Dialect::BedrockConverse);
        whole.feed(&stream);
        let whole = whole.finish();
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
        points.sort_unstable();
        points.push(stream.len());
        let mut p = StreamParser::new(Dialect::BedrockConverse);
        let mut at = 0;
        for q in points {
            p.feed(&stream[at..q]);
            at = q;
        }
        prop_assert_eq!(p.finish(), whole);
    }

    #[test]
    fn corrupt_streams_and_random_bodies_never_panic(
        at in any::<usize>(),
        flip in 1u8..=255,
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut stream = converse_stream();
        let i = at % stream.len();
        stream[i] ^= flip;
        let mut p = StreamParser::new(Dialect::BedrockConverse);
        p.feed(&stream);
        let v = p.finish();
        prop_assert!(v.error.is_some());
        let d = Dialect::BedrockConverse;
        let _ = request_view(d, &bytes);
        let _ = validate(d, &bytes);
        let _ = repair(d, &bytes);
        let mut p = StreamParser::new(d);
        p.feed(&bytes);
        let _ = p.finish();
        let mut p = StreamParser::bedrock_invoke(Dialect::Anthropic);
        p.feed(&bytes);
        let _ = p.finish();
    }
}
