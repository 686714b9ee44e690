//! The fast path reads what serde reads, whenever it answers (proptest
//! over bodies with fields in any order, repeated, `null`, escaped, of the
//! wrong type, then damaged); and it answers on the bodies agents send.

use proptest::prelude::*;

use crate::testutil::pick;

use super::super::view::{fast_path_agrees, fast_then_serde};

const STRINGS: &[&str] = &[
    r#""call_1""#,
    r#""call_2""#,
    r#""a \"quoted\"\nline""#,
    r#""caf\u00e9 \ud83d\ude00""#,
    r#""\ud800""#,
    "null",
    "7",
];

/// `{name, arguments}`-like objects, and what else may stand there.
const FUNCTIONS: &[&str] = &[
    r##"{"name":"get_order","arguments":"{\"id\":\"#W1\"}"}"##,
    r#"{"arguments":"{}","name":"search","extra":[1,{"a":null}]}"#,
    "null",
    r#"{"name":"a","name":"b"}"#,
    r#"["get_order","{}"]"#,
    r#"{"name":null,"arguments":7}"#,
];

fn tool_call(fields: &[(u8, u8)]) -> String {
    let members: Vec<String> = fields
        .iter()
        .map(|&(f, v)| match f % 5 {
            0 => format!(r#""id":{}"#, pick(v, STRINGS)),
            1 => format!(
                r#""type":{}"#,
                pick(v, &[r#""function""#, r#""custom""#, "3"])
            ),
            2 => format!(r#""function":{}"#, pick(v, FUNCTIONS)),
            3 => format!(
                r#""custom":{}"#,
                pick(
                    v,
                    &[
                        r#"{"name":"apply_patch","input":"*** Begin\n"}"#,
                        "null",
                        "[]"
                    ]
                )
            ),
            _ => format!(r#""index":{}"#, pick(v, &["0", "-1.5e3", r#""x""#])),
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

type Msg = (u8, Vec<(u8, u8)>, Vec<Vec<(u8, u8)>>);

fn message((role, fields, calls): &Msg) -> String {
    let role = pick(
        *role,
        &[
            r#""assistant""#,
            r#""tool""#,
            r#""user""#,
            r#""system""#,
            r#""function""#,
            r#""\u0074ool""#,
            "null",
        ],
    );
    let mut members = vec![format!(r#""role":{role}"#)];
    members.extend(fields.iter().map(|&(f, v)| match f % 7 {
        0 => format!(
            r#""content":{}"#,
            pick(
                v,
                &[
                    r#""Error: not found\n""#,
                    r#"[{"type":"text","text":"ok"}]"#,
                    "null",
                    r#"{"a":"\ud800"}"#,
                    "12",
                ]
            )
        ),
        1 => format!(
            r#""tool_calls":[{}]"#,
            calls.iter().map(|c| tool_call(c)).collect::<Vec<_>>().join(",")
        ),
        2 => format!(r#""tool_call_id":{}"#, pick(v, STRINGS)),
        3 => format!(r#""name":{}"#, pick(v, STRINGS)),
        4 => format!(r#""function_call":{}"#, pick(v, FUNCTIONS)),
        5 => r#""tool_calls":null"#.to_string(),
        _ => format!(r#""refusal":{}"#, pick(v, &["null", r#"{"deep":[[[]]]}"#])),
    }));
    if role.len().is_multiple_of(2) {
        members.reverse();
    }
    format!("{{{}}}", members.join(","))
}

fn body(top: &[(u8, u8)], msgs: &[Msg]) -> String {
    let messages = format!(
        "[{}]",
        msgs.iter().map(message).collect::<Vec<_>>().join(",")
    );
    let mut members: Vec<String> = top
        .iter()
        .map(|&(f, v)| match f % 5 {
            0 => format!(r#""model":{}"#, pick(v, STRINGS)),
            1 => format!(r#""stream":{}"#, pick(v, &["true", "false", "null", "0"])),
            2 => r#""tools":[{"type":"function","function":{"name":"f","parameters":{}}}]"#.into(),
            3 => format!(r#""messages":{messages}"#),
            _ => r#""temperature":0.2"#.to_string(),
        })
        .collect();
    if !top.iter().any(|&(f, _)| f % 5 == 3) {
        members.push(format!(r#""messages":{messages}"#));
    }
    format!("{{{}}}", members.join(","))
}

fn msgs() -> impl Strategy<Value = Vec<Msg>> {
    prop::collection::vec(
        (
            any::<u8>(),
            prop::collection::vec((any::<u8>(), any::<u8>()), 0..4),
            prop::collection::vec(
                prop::collection::vec((any::<u8>(), any::<u8>()), 0..4),
                0..3,
            ),
        ),
        0..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Whenever the fast path answers, serde answers the same; damaged
    /// bodies too.
    #[test]
    fn fast_answers_as_serde_does(
        top in prop::collection::vec((any::<u8>(), any::<u8>()), 0..5),
        msgs in msgs(),
        damage in any::<(usize, u8, u8)>(),
    ) {
        let text = body(&top, &msgs);
        crate::testutil::agrees_whole_and_damaged(fast_path_agrees, &text, damage)?;
    }

    /// On well-formed bodies of the shapes agents send, the fast path
    /// answers.
    #[test]
    fn fast_takes_ordinary_bodies(
        turns in prop::collection::vec((0..4u8, 0..3usize), 0..8),
    ) {
        let mut messages = vec![serde_json::json!({"role":"system","content":"You are an airline agent.\n"})];
        for (k, (role, calls)) in turns.iter().enumerate() {
            messages.push(match role {
                0 => serde_json::json!({"role":"user","content":[{"type":"text","text":"hi — \"where\" is it?"}]}),
                1 => serde_json::json!({"role":"assistant","content":null,"tool_calls":(0..*calls).map(|c| serde_json::json!(
                    {"id":format!("call_{k}_{c}"),"type":"function","function":{"name":"get_order","arguments":"{\"id\":\"#W1\"}"}})).collect::<Vec<_>>()}),
                2 => serde_json::json!({"role":"tool","tool_call_id":format!("call_{k}_0"),"content":"{\"status\":\"ok\"}\n"}),
                _ => serde_json::json!({"role":"assistant","content":"Done.","refusal":null}),
            });
        }
        let text = serde_json::to_string(&serde_json::json!({
            "model": "gpt-4o", "stream": true, "temperature": 0.0,
            "tools": [{"type":"function","function":{"name":"get_order","parameters":{"type":"object"}}}],
            "messages": messages,
        })).unwrap();
        prop_assert_eq!(fast_then_serde(&text), Some(Ok(())), "{}", text);
    }
}

/// The corpus's tau-bench conversations: read by the fast path, as serde
/// reads them.
#[test]
fn corpus_conversations_take_the_fast_path() {
    for rel in [
        "conversations/conv_openai_chat_taubench_airline_task13_trial0.json",
        "conversations/conv_openai_chat_taubench_airline_task9_trial2.json",
    ] {
        let Some(bytes) = crate::testutil::corpus(rel) else {
            return;
        };
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(fast_then_serde(&text), Some(Ok(())), "{rel}");
    }
}
