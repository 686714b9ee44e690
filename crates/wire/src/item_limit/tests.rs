use proptest::prelude::*;

use super::*;
use crate::{Dialect, Target};

/// A body of `n` items of `item` inside `head` … `tail`.
fn body(head: &str, item: &str, n: usize, tail: &str) -> Vec<u8> {
    let mut out = String::from(head);
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out.push_str(tail);
    out.into_bytes()
}

/// A Chat body of `n` tool results.
fn chat(n: usize) -> Vec<u8> {
    body(
        r#"{"model":"m","messages":["#,
        r#"{"role":"tool","tool_call_id":"a","content":""}"#,
        n,
        "]}",
    )
}

const DIALECTS: [Dialect; 5] = [
    Dialect::Anthropic,
    Dialect::OpenAiChat,
    Dialect::OpenAiResponses,
    Dialect::Gemini,
    Dialect::BedrockConverse,
];

fn too_large<T: std::fmt::Debug>(r: Result<T, WireError>) -> bool {
    matches!(r, Err(e) if e.kind() == WireErrorKind::TooLarge)
}

#[test]
fn every_reader_refuses_a_body_over_the_bound() {
    // The body's object, its array and the items: one more than the bound.
    let over = body(r#"{"messages":["#, "{}", MAX_REQUEST_ITEMS - 1, "]}");
    for dialect in DIALECTS {
        assert!(
            too_large(crate::request_view(dialect, &over)),
            "{dialect:?}"
        );
        let inspection = crate::inspect(dialect, &over);
        assert!(too_large(inspection.view), "{dialect:?}");
        assert!(too_large(inspection.defects), "{dialect:?}");
        assert!(too_large(crate::validate(dialect, &over)), "{dialect:?}");
        assert!(
            too_large(crate::repair(Target::from(dialect), &over)),
            "{dialect:?}"
        );
    }
    let inject = body(
        r#"{"type":"response.inject","input":["#,
        "{}",
        MAX_REQUEST_ITEMS - 1,
        "]}",
    );
    let answered = |_: &str| crate::openai_responses::InjectedCall::Open;
    assert!(too_large(crate::openai_responses::inject_defects(
        &inject, answered
    )));
    assert!(too_large(crate::openai_responses::repair_inject(
        &inject, answered
    )));
}

#[test]
fn a_body_at_the_bound_is_read() {
    // The body's object, its `messages` array and the messages.
    let at = chat(MAX_REQUEST_ITEMS - 2);
    let view = crate::request_view(Dialect::OpenAiChat, &at).expect("read");
    assert_eq!(view.results.len(), MAX_REQUEST_ITEMS - 2);
    let e = crate::request_view(Dialect::OpenAiChat, &chat(MAX_REQUEST_ITEMS - 1)).unwrap_err();
    assert_eq!(e.kind(), WireErrorKind::TooLarge);
    assert!(e.to_string().contains("more than 200000 messages"), "{e}");
}

#[test]
fn values_deeper_than_items_and_in_strings_are_not_counted() {
    // A result whose content nests objects below the depth bound, and one
    // whose text is made of braces: neither is an item.
    let deep = format!(
        r#"{{"contents":[{{"role":"user","parts":[{{"functionResponse":{{"name":"t","response":{{"rows":[{}]}}}}}}]}}]}}"#,
        vec!["{}"; 3 * MAX_REQUEST_ITEMS].join(",")
    );
    assert!(check_items(deep.as_bytes()).is_ok());
    assert!(crate::request_view(Dialect::Gemini, deep.as_bytes()).is_ok());
    let braces = format!(
        r#"{{"model":"m","messages":[{{"role":"tool","tool_call_id":"a","content":"{}"}}]}}"#,
        "{[".repeat(2 * MAX_REQUEST_ITEMS)
    );
    assert!(check_items(braces.as_bytes()).is_ok());
}

#[test]
fn a_body_too_short_to_be_scanned_is_within_the_bound() {
    // `[]` is the shortest value: k of them, the densest body of its size.
    for k in 0..24 {
        for limit in 0..12 {
            let body = "[]".repeat(k);
            let over = too_large(check_items_within(body.as_bytes(), limit));
            assert_eq!(over, k > limit, "{k} values, limit {limit}");
        }
    }
    // Siblings count, nesting past the depth bound does not.
    assert!(too_large(check_items_within(b"[[],[],[],[],[],[]]", 6)));
    assert!(!too_large(check_items_within(b"[[],[],[],[],[],[]]", 7)));
    assert!(!too_large(check_items_within(&[b'{'; 13], 5)));
}

#[test]
fn an_unended_string_stops_the_count() {
    // A reader refuses the body at the string, having built what came
    // before it: the count stops there too.
    let mut body = br#"{"model":"m","messages":[{"role":"tool","content":""#.to_vec();
    body.extend(std::iter::repeat_n(b'{', 4 * MAX_REQUEST_ITEMS));
    assert!(check_items(&body).is_ok());
    let mut unquoted = br#"{"messages":["#.to_vec();
    unquoted.extend(std::iter::repeat_n(b'{', 4 * MAX_REQUEST_ITEMS));
    assert!(
        check_items(&unquoted).is_ok(),
        "nested past the depth bound"
    );
}

/// The count, by a plain walk over `serde_json::Value`.
fn count_of(value: &serde_json::Value, depth: u32) -> usize {
    use serde_json::Value;
    let inner = |v: &Value| count_of(v, depth + 1);
    let here = usize::from(depth <= ITEM_DEPTH);
    match value {
        Value::Array(items) => here + items.iter().map(inner).sum::<usize>(),
        Value::Object(members) => here + members.values().map(inner).sum::<usize>(),
        _ => 0,
    }
}

fn json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        "[ -~{}\\[\\]\"\\\\\u{e9}]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z{\"]{0,3}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// On valid JSON the scan counts exactly what the walk counts.
    #[test]
    fn the_scan_counts_as_a_walk_of_the_value(value in json(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        let n = count_of(&value, 1);
        prop_assert!(!containers_over(text.as_bytes(), ITEM_DEPTH, n));
        prop_assert!(check_items_within(text.as_bytes(), n).is_ok());
        if n > 0 {
            prop_assert!(containers_over(text.as_bytes(), ITEM_DEPTH, n - 1));
            prop_assert!(too_large(check_items_within(text.as_bytes(), n - 1)));
        }
    }

    /// Runs of backslashes and quotes across the 64-byte blocks' edges,
    /// at every offset: the escapes carried from block to block.
    #[test]
    fn escapes_across_blocks_are_carried(
        pad in 0usize..64,
        strings in prop::collection::vec("[\\\\\"{\\[a]{0,90}", 1..6),
        nested in 0usize..4,
    ) {
        use serde_json::Value;
        let mut value = Value::Array(strings.into_iter().map(Value::String).collect());
        for _ in 0..nested {
            value = Value::Array(vec![value, Value::Array(vec![])]);
        }
        let text = format!("{}{}", " ".repeat(pad), serde_json::to_string(&value).unwrap());
        let n = count_of(&value, 1);
        prop_assert!(!containers_over(text.as_bytes(), ITEM_DEPTH, n));
        prop_assert!(containers_over(text.as_bytes(), ITEM_DEPTH, n - 1));
    }

    /// Any bytes: an answer, never a panic.
    #[test]
    fn any_bytes_are_counted_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = containers_over(&bytes, ITEM_DEPTH, 3);
        let _ = check_items_within(&bytes, 3);
    }
}
