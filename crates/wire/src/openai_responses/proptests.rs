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
        id.prop_map(|i| format!(
            r#"{{"type":"custom_tool_call_output","call_id":"{i}","output":[{{"type":"input_text","text":"t"}}]}}"#
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

    #[test]
    fn random_splits_give_the_same_calls(cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12)) {
        for file in ["sse/vercel-ai__azure-tool-call.1.chunks.txt", "sse/vercel-ai__openai-custom-tool.1.chunks.txt"] {
            let bytes = sse_from_chunks(file, true);
            let whole = {
                let mut p = StreamParser::new(Dialect::OpenAiResponses);
                p.feed(&bytes);
                p.finish()
            };
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
