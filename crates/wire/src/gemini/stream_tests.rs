//! Tests of the Gemini stream state: the fast path against the full parse.

use super::*;

mod recorded {
    use super::*;

    /// The fast path reads exactly what a full parse reads.
    #[test]
    fn fast_path_matches_full_parse() {
        let recorded = String::from_utf8(crate::testutil::fixture(
            "sse/vercel-ai__google-stream-tool-call-arguments.chunks.txt",
        ))
        .expect("UTF-8 fixture");
        let extra = [
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"\"functionCall\": {"},{"functionCall":{"name":"a","args":{"functionCall":{"x":"}"}}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1},"modelVersion":"m","responseId":"r"}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"b"}}]},"index":1}]}"#,
            r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}"#,
            r#"{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}"#,
        ];
        let chunks: Vec<&str> = recorded.lines().chain(extra).collect();
        let mut fast = StreamState::default();
        let mut full = StreamState::default();
        let mut fast_taken = 0;
        for c in &chunks {
            if fast.on_chunk_fast(c.as_bytes()) {
                fast_taken += 1;
            } else {
                fast.on_chunk(serde_json::from_str(c).unwrap());
            }
            full.on_chunk(serde_json::from_str(c).unwrap());
        }
        assert_eq!(fast_taken, chunks.len() - 2);
        assert_eq!(fast.view(), full.view());
    }
}

mod props {
    use proptest::prelude::*;

    use super::*;

    fn part() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(r#"{"text":"hi \"there\" {"}"#.to_owned()),
            Just(r#"{"functionCall":{"name":"f","args":{"a":[1,"}"]}},"thoughtSignature":"c2ln"}"#.to_owned()),
            Just(r#"{"functionCall":{"name":"g","id":"id-1"}}"#.to_owned()),
            Just(r#"{"functionCall":{"name":"h","willContinue":true}}"#.to_owned()),
            Just(r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.q","stringValue":"a\nb","willContinue":true}],"willContinue":true}}"#.to_owned()),
            Just(r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.q","stringValue":"c"},{"jsonPath":"$.n","numberValue":2}],"willContinue":true}}"#.to_owned()),
            Just(r#"{"functionCall":{}}"#.to_owned()),
        ]
    }

    fn chunk() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(part(), 0..3),
            prop::option::of(prop::sample::select(vec!["STOP", "MAX_TOKENS"])),
            prop::option::of(0u64..5),
            prop::sample::select(vec!["r1", "r2"]),
            any::<bool>(),
        )
            .prop_map(|(parts, finish, tokens, id, error)| {
                if error {
                    return r#"{"error":{"code":500,"message":"x","status":"INTERNAL"}}"#.to_owned();
                }
                let finish = finish.map(|f| format!(",\"finishReason\":\"{f}\"")).unwrap_or_default();
                let usage = match tokens {
                    Some(t) => format!("{{\"promptTokenCount\":{t},\"candidatesTokenCount\":{}}}", t + 1),
                    None => r#"{"trafficType":"ON_DEMAND"}"#.to_owned(),
                };
                format!(
                    r#"{{"candidates":[{{"content":{{"role":"model","parts":[{}]}}{finish},"index":0}}],"usageMetadata":{usage},"modelVersion":"m","responseId":"{id}"}}"#,
                    parts.join(",")
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The fast path (hand reader, tail reuse) reads exactly what a
        /// full serde parse reads, chunk after chunk.
        #[test]
        fn fast_path_equals_full_parse(chunks in prop::collection::vec(chunk(), 0..10)) {
            let mut fast = StreamState::default();
            let mut full = StreamState::default();
            for c in &chunks {
                fast.on_event(b"", c.as_bytes());
                full.on_chunk(serde_json::from_str(c).unwrap());
            }
            prop_assert_eq!(fast.view(), full.view());
        }
    }
}
