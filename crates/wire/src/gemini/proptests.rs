//! Property tests: random splits (SSE and JSON array), random turns,
//! random bytes.

use proptest::prelude::*;

use super::tests::recorded;
use crate::{Detector, Dialect, StreamParser};

fn part(model: bool) -> BoxedStrategy<String> {
    let name = prop::sample::select(vec!["f", "g", "h"]);
    let id = prop::option::of(prop::sample::select(vec!["i1", "i2"]));
    let id_field = |id: Option<&str>| id.map(|i| format!(",\"id\":\"{i}\"")).unwrap_or_default();
    if model {
        prop_oneof![
            Just(r#"{"text":"t"}"#.to_owned()),
            (name, id).prop_map(move |(n, i)| format!(
                r#"{{"functionCall":{{"name":"{n}"{},"args":{{}}}}}}"#,
                id_field(i)
            )),
        ]
        .boxed()
    } else {
        prop_oneof![
            Just(r#"{"text":"t"}"#.to_owned()),
            (name, id, any::<bool>()).prop_map(move |(n, i, err)| format!(
                r#"{{"functionResponse":{{"name":"{n}"{},"response":{}}}}}"#,
                id_field(i),
                if err {
                    r#"{"error":"x"}"#
                } else {
                    r#"{"output":1}"#
                }
            )),
        ]
        .boxed()
    }
}

fn content() -> impl Strategy<Value = String> {
    any::<bool>().prop_flat_map(|model| {
        prop::collection::vec(part(model), 0..4).prop_map(move |parts| {
            format!(
                "{{\"role\":\"{}\",\"parts\":[{}]}}",
                if model { "model" } else { "user" },
                parts.join(",")
            )
        })
    })
}

fn body() -> impl Strategy<Value = String> {
    prop::collection::vec(content(), 0..8)
        .prop_map(|c| format!("{{\"contents\": [\n  {}\n]}}", c.join(",\n  ")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn repair_output_validates_clean(b in body()) {
        let r = crate::repair(Dialect::Gemini, b.as_bytes()).unwrap();
        let defects = crate::validate(Dialect::Gemini, &r.body).unwrap();
        prop_assert!(defects.is_empty(), "{defects:?}\nfrom {b}\nto {}", String::from_utf8_lossy(&r.body));
        let was_clean = crate::validate(Dialect::Gemini, b.as_bytes()).unwrap().is_empty();
        prop_assert_eq!(was_clean, !r.is_changed());
        let again = crate::repair(Dialect::Gemini, &r.body).unwrap();
        prop_assert!(matches!(again.body, std::borrow::Cow::Borrowed(_)));
        serde_json::from_slice::<serde_json::Value>(&r.body).unwrap();
        crate::request_view(Dialect::Gemini, &r.body).unwrap();
    }

    #[test]
    fn random_splits_give_the_same_calls(cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12)) {
        let (sse, array) = recorded();
        for bytes in [sse, array] {
            let whole = {
                let mut p = StreamParser::new(Dialect::Gemini);
                p.feed(&bytes);
                p.finish()
            };
            prop_assert_eq!(whole.calls.len(), 2);
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len())).collect();
            at.sort_unstable();
            let mut p = StreamParser::new(Dialect::Gemini);
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
        if let Ok(v) = crate::request_view(Dialect::Gemini, &bytes) {
            for r in &v.results {
                let _ = r.read(&Detector::default());
            }
        }
        let _ = crate::validate(Dialect::Gemini, &bytes);
        let _ = crate::repair(Dialect::Gemini, &bytes);
        let _ = crate::response_view(Dialect::Gemini, &bytes);
        let mut p = StreamParser::new(Dialect::Gemini);
        p.feed(&bytes);
        let _ = p.finish();
        let mut p = StreamParser::new(Dialect::Gemini);
        p.feed(b"[");
        p.feed(&bytes);
        let _ = p.finish();
    }

    #[test]
    fn mutated_inputs_never_panic(b in body(), at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<bool>()) {
        let (_, array) = recorded();
        for mut bytes in [b.into_bytes(), array] {
            let i = at.index(bytes.len());
            if cut { bytes.truncate(i) } else { bytes[i] = byte }
            if let Ok(v) = crate::request_view(Dialect::Gemini, &bytes) {
            for r in &v.results {
                let _ = r.read(&Detector::default());
            }
        }
            let _ = crate::repair(Dialect::Gemini, &bytes);
            let _ = crate::response_view(Dialect::Gemini, &bytes);
            let mut p = StreamParser::new(Dialect::Gemini);
            p.feed(&bytes);
            let _ = p.finish();
        }
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
            crate::testutil::inspect_agrees(Dialect::Gemini, bytes)?;
        }
    }
}
