use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;
use crate::{Dialect, request_view};

#[test]
fn canonical_arguments_give_one_fingerprint() {
    let a = fingerprint([(
        "read_file",
        r#"{"path":"a.txt","limit":1,"opts":{"x":1.0,"y":"é"}}"#,
    )]);
    let b = fingerprint([(
        "read_file",
        "{ \"opts\" : {\"y\":\"\\u00e9\", \"x\": 1}, \"limit\": 1.0, \"path\": \"a.txt\" }",
    )]);
    assert_eq!(a, b);
    // Missing, empty and null arguments are all `{}`.
    let empty = fingerprint([("ls", "{}")]);
    assert_eq!(fingerprint([("ls", "")]), empty);
    assert_eq!(fingerprint([("ls", "null")]), empty);
    assert_eq!(fingerprint([("ls", " { } ")]), empty);
}

#[test]
fn names_arguments_and_order_tell_turns_apart() {
    let one = fingerprint([("a", r#"{"x":1}"#), ("b", "{}")]);
    assert_ne!(one, fingerprint([("b", "{}"), ("a", r#"{"x":1}"#)]));
    assert_ne!(one, fingerprint([("a", r#"{"x":2}"#), ("b", "{}")]));
    assert_ne!(one, fingerprint([("a", r#"{"x":"1"}"#), ("b", "{}")]));
    assert_ne!(one, fingerprint([("a", r#"{"x":1}"#)]));
    assert_ne!(one, fingerprint([("c", r#"{"x":1}"#), ("b", "{}")]));
    // Text that is not JSON is compared as it is.
    assert_ne!(fingerprint([("a", "{x")]), fingerprint([("a", "{y")]));
    assert_eq!(fingerprint([("a", "{x ")]), fingerprint([("a", "{x")]));
}

/// A Gemini conversation whose client invented ids for id-less calls.
const GEMINI: &str = r#"{"contents":[
  {"role":"user","parts":[{"text":"go"}]},
  {"role":"model","parts":[{"text":"ok"},
    {"functionCall":{"id":"read_file_1795610246552_0","name":"read_file","args":{"path":"a"}}},
    {"functionCall":{"id":"read_file_1795610246552_1","name":"read_file","args":{"path":"b"}}},
    {"functionCall":{"id":"2iSZehzSejz3VSyd","name":"shell","args":{"cmd":"ls"}}}]},
  {"role":"user","parts":[
    {"functionResponse":{"id":"read_file_1795610246552_1","name":"read_file","response":{"output":"b"}}},
    {"functionResponse":{"id":"read_file_1795610246552_0","name":"read_file","response":{"output":"a"}}},
    {"functionResponse":{"id":"2iSZehzSejz3VSyd","name":"shell","response":{"output":""}}}]}]}"#;

#[test]
fn a_gemini_turn_with_invented_ids_matches_the_response_it_replays() {
    let view = request_view(Dialect::Gemini, GEMINI.as_bytes()).unwrap();
    let turn = replayed_turn(&view).expect("a replayed turn");
    assert_eq!(turn.len(), 3);
    // The response as the API sent it: the same calls, without ids, keys in another order.
    let response = fingerprint([
        ("read_file", r#"{ "path": "a" }"#),
        ("read_file", r#"{"path":"b"}"#),
        ("shell", r#"{"cmd": "ls"}"#),
    ]);
    assert_eq!(turn.fingerprint, response);
    assert_eq!(turn.position_of_id("read_file_1795610246552_0"), Some(0));
    assert_eq!(turn.position_of_id("read_file_1795610246552_1"), Some(1));
    assert_eq!(turn.position_of_id("2iSZehzSejz3VSyd"), Some(2));
    assert_eq!(turn.position_of_id("other"), None);
    // An id the turn does not hold: by name and ordinal.
    assert_eq!(turn.position_of_name("read_file", 1), Some(1));
    assert_eq!(turn.position_of_name("shell", 0), Some(2));
    assert_eq!(turn.position_of_name("read_file", 2), None);
}

#[test]
fn the_turn_is_the_last_one_before_the_new_results() {
    // Chat: the earlier assistant turn is not part of the replayed one.
    let body = br#"{"model":"m","messages":[
      {"role":"user","content":"go"},
      {"role":"assistant","tool_calls":[{"id":"x1","type":"function","function":{"name":"a","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"x1","content":"ok"},
      {"role":"assistant","tool_calls":[
        {"id":"y1","type":"function","function":{"name":"b","arguments":"{\"k\":1}"}},
        {"id":"y2","type":"function","function":{"name":"c","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"y2","content":"ok"},
      {"role":"tool","tool_call_id":"y1","content":"ok"}]}"#;
    let view = request_view(Dialect::OpenAiChat, body).unwrap();
    let turn = replayed_turn(&view).unwrap();
    assert_eq!(
        turn.fingerprint,
        fingerprint([("b", r#"{"k":1}"#), ("c", "{}")])
    );
    assert_eq!(turn.position_of_id("y2"), Some(1));
    // Responses: adjacent call items form the turn.
    let body = br#"{"model":"m","input":[
      {"role":"user","content":"go"},
      {"type":"function_call","call_id":"p","name":"a","arguments":"{}"},
      {"type":"function_call_output","call_id":"p","output":"x"},
      {"type":"reasoning","id":"rs","summary":[]},
      {"type":"function_call","call_id":"q1","name":"b","arguments":"{}"},
      {"type":"function_call","call_id":"q2","name":"b","arguments":"{\"n\":2}"},
      {"type":"function_call_output","call_id":"q1","output":"x"},
      {"type":"function_call_output","call_id":"q2","output":"y"}]}"#;
    let view = request_view(Dialect::OpenAiResponses, body).unwrap();
    let turn = replayed_turn(&view).unwrap();
    assert_eq!(
        turn.fingerprint,
        fingerprint([("b", "{}"), ("b", r#"{"n":2}"#)])
    );
    assert_eq!(turn.position_of_id("q2"), Some(1));
    // Responses, each output right after its call: both calls form the
    // turn; the earlier turn and a call past the run do not.
    let body = br#"{"model":"m","input":[
      {"type":"function_call","call_id":"p","name":"a","arguments":"{}"},
      {"type":"function_call_output","call_id":"p","output":"x"},
      {"type":"reasoning","id":"rs","summary":[]},
      {"type":"function_call","call_id":"q1","name":"b","arguments":"{}"},
      {"type":"function_call_output","call_id":"q1","output":"x"},
      {"type":"function_call","call_id":"q2","name":"b","arguments":"{\"n\":2}"},
      {"type":"function_call","call_id":"q3","name":"c","arguments":"{}"},
      {"type":"function_call_output","call_id":"q2","output":"y"},
      {"type":"function_call_output","call_id":"q3","output":"z"},
      {"role":"user","content":"and"},
      {"type":"function_call","call_id":"r","name":"d","arguments":"{}"}]}"#;
    let view = request_view(Dialect::OpenAiResponses, body).unwrap();
    let turn = replayed_turn(&view).unwrap();
    assert_eq!(
        turn.fingerprint,
        fingerprint([("b", "{}"), ("b", r#"{"n":2}"#), ("c", "{}")])
    );
    assert_eq!(
        (turn.position_of_id("q3"), turn.position_of_id("r")),
        (Some(2), None)
    );
    // No new result, no turn.
    let body = br#"{"model":"m","messages":[{"role":"user","content":"go"}]}"#;
    let view = request_view(Dialect::OpenAiChat, body).unwrap();
    assert_eq!(replayed_turn(&view), None);
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z\u{e9}\"\\\\ ]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// `value` written with its object keys in reverse order, spaced out, and
/// integers as floats.
fn rewritten(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.reverse();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{} : {}", json!(k), rewritten(&map[k.as_str()])))
                .collect();
            format!("{{ {} }}", fields.join(" , "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(rewritten).collect();
            format!("[ {} ]", items.join(", "))
        }
        Value::Number(n) => match n.as_i64() {
            Some(i) => format!("{i}.0"),
            None => n.to_string(),
        },
        other => other.to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_reserialised_turn_keeps_its_fingerprint(
        args in prop::collection::vec(json_value(), 1..4),
        name in "[a-z_]{1,8}",
    ) {
        let compact: Vec<String> = args.iter().map(|v| v.to_string()).collect();
        let spaced: Vec<String> = args.iter().map(rewritten).collect();
        let a = fingerprint(compact.iter().map(|s| (name.as_str(), s.as_str())));
        let b = fingerprint(spaced.iter().map(|s| (name.as_str(), s.as_str())));
        prop_assert_eq!(a, b);
    }

    #[test]
    fn fingerprint_never_panics(name in ".{0,8}", args in ".{0,40}") {
        fingerprint([(name.as_str(), args.as_str())]);
    }
}
