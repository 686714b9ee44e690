//! The fast path gives what serde gives, whenever it answers (proptest
//! over bodies with fields in any order, repeated, `null`, escaped, of the
//! wrong type, then damaged); and it answers on the bodies clients send.

use proptest::prelude::*;

use crate::testutil::pick;

use super::super::view::{fast_path_agrees, fast_then_serde};

const STRINGS: &[&str] = &[
    r#""tooluse_1""#,
    r#""tooluse_2""#,
    r#""a \"quoted\"\nline""#,
    r#""caf\u00e9 \ud83d\ude00""#,
    r#""\ud800""#,
    "null",
    "7",
    r#""   ""#,
    r#""so \u3000""#,
];

const VALUES: &[&str] = &[
    r#"{"path":"a\\b","n":[1,2.5e3,{}]}"#,
    "null",
    "{}",
    "[]",
    r#""{\"p\":1}""#,
    "3",
];

/// One member of a `toolUse` or `toolResult` object: a field index and a
/// value choice (a repeated or escaped key, which serde refuses or reads
/// as another, now and then).
fn member(f: u8, v: u8, result: bool) -> String {
    match (f % 16, result) {
        (0, _) => format!(r#""toolUseId":{}"#, pick(v, STRINGS)),
        (1, _) => format!(r#""toolUs\u0065Id":{}"#, pick(v, STRINGS)),
        (2, false) => format!(r#""name":{}"#, pick(v, STRINGS)),
        (3, false) => format!(
            r#""type":{}"#,
            pick(v, &[r#""server_tool_use""#, "null", r#""tool_use""#, "1"])
        ),
        (_, false) => format!(r#""input":{}"#, pick(v, VALUES)),
        (2..=8, true) => format!(
            r#""content":{}"#,
            pick(
                v,
                &[
                    r#"[{"text":"total 0\n"}]"#,
                    "null",
                    r#"[{"json":{"a":1}},{"json":[1]}]"#,
                    "[]",
                    r#""out""#,
                ]
            )
        ),
        (_, true) => format!(
            r#""status":{}"#,
            pick(v, &[r#""error""#, "null", r#""success""#, "0"])
        ),
    }
}

/// One block: a well-formed block of one kind (the first choice), then
/// members from the rest, repeats allowed.
fn block(fields: &[(u8, u8)]) -> String {
    let Some(((kind, v), rest)) = fields.split_first() else {
        return "{}".into();
    };
    let id = pick(*v, &[r#""tooluse_1""#, r#""tooluse_2""#]);
    let inner = |result: bool| -> String {
        let mut members = vec![format!(r#""toolUseId":{id}"#)];
        members.extend(
            rest.iter()
                .filter(|(f, _)| f % 3 == 0)
                .map(|&(f, v)| member(f / 3, v, result)),
        );
        format!("{{{}}}", members.join(","))
    };
    let mut members: Vec<String> = match kind % 5 {
        0 => vec![format!(r#""toolUse":{}"#, inner(false))],
        1 => vec![format!(r#""toolResult":{}"#, inner(true))],
        2 => vec![r#""text":"hello\n""#.into()],
        3 => vec![r#""image":{"format":"png","source":{"bytes":"AAAA"}}"#.into()],
        _ => vec![],
    };
    members.extend(
        rest.iter()
            .filter(|(f, _)| f % 3 != 0)
            .map(|&(f, v)| match f % 16 {
                0 => format!(r#""toolUse":{}"#, pick(v, &["null", "{}", "[]"])),
                1 => format!(r#""toolResult":{}"#, pick(v, &["null", "{}", "1"])),
                2 => format!(r#""t\u0065xt":{}"#, pick(v, STRINGS)),
                3 => format!(r#""text":{}"#, pick(v, STRINGS)),
                _ => format!(
                    r#""cachePoint":{}"#,
                    pick(v, &[r#"{"type":"default"}"#, "null"])
                ),
            }),
    );
    if kind & 8 != 0 {
        members.reverse();
    }
    format!("{{{}}}", members.join(","))
}

fn message(role: u8, content: u8, blocks: &[Vec<(u8, u8)>], extra: u8) -> String {
    let role = pick(
        role,
        &[r#""user""#, r#""assistant""#, r#""\u0075ser""#, "null", "1"],
    );
    let content = match content % 48 {
        0 => "null".to_string(),
        1 => "{}".to_string(),
        2 => r#""Read the modules.""#.to_string(),
        _ => format!(
            "[{}]",
            blocks
                .iter()
                .map(|b| block(b))
                .collect::<Vec<_>>()
                .join(",")
        ),
    };
    let mut members = vec![
        format!(r#""role":{role}"#),
        format!(r#""content":{content}"#),
    ];
    match extra % 48 {
        0 => members.push(r#""role":"user""#.into()),
        1 => members.truncate(1),
        2..=5 => members.insert(1, r#""x":{"nested":[1,"\ud800"]}"#.into()),
        6..=9 => members.reverse(),
        10 => members.push(r#""content":[]"#.into()),
        _ => {}
    }
    format!("{{{}}}", members.join(","))
}

type Msg = (u8, u8, Vec<Vec<(u8, u8)>>, u8);

fn body(top: &[(u8, u8)], msgs: &[Msg]) -> String {
    let messages = format!(
        "[{}]",
        msgs.iter()
            .map(|(r, c, b, e)| message(*r, *c, b, *e))
            .collect::<Vec<_>>()
            .join(",")
    );
    let mut members: Vec<String> = top
        .iter()
        .map(|&(f, v)| match f % 8 {
            0 => format!(
                r#""system":{}"#,
                pick(
                    v,
                    &[
                        r#"[{"text":"You are a coding agent."},{"cachePoint":{"type":"default"}}]"#,
                        "null",
                        r#"[{"text":null}]"#,
                        r#""system""#,
                        "[1]",
                    ]
                )
            ),
            1 => {
                r#""toolConfig":{"tools":[{"toolSpec":{"name":"read","inputSchema":{"json":{}}}}]}"#
                    .to_string()
            }
            2 => r#""inferenceConfig":{"maxTokens":1024}"#.to_string(),
            3 => format!(r#""m\u0065ssages":{messages}"#),
            4 => format!(r#""messages":{messages}"#),
            _ => r#""additionalModelRequestFields":{"top_k":5}"#.to_string(),
        })
        .collect();
    if !top.iter().any(|&(f, _)| f % 8 == 4) {
        members.push(format!(r#""messages":{messages}"#));
    }
    format!("{{{}}}", members.join(","))
}

fn msgs() -> impl Strategy<Value = Vec<Msg>> {
    prop::collection::vec(
        (
            any::<u8>(),
            any::<u8>(),
            prop::collection::vec(
                prop::collection::vec((any::<u8>(), any::<u8>()), 1..5),
                0..4,
            ),
            any::<u8>(),
        ),
        0..5,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Whenever the fast path answers, serde answers the same; and
    /// damaged bodies too.
    #[test]
    fn fast_answers_as_serde_does(
        top in prop::collection::vec((any::<u8>(), any::<u8>()), 0..6),
        msgs in msgs(),
        damage in any::<(usize, u8, u8)>(),
    ) {
        let text = body(&top, &msgs);
        crate::testutil::agrees_whole_and_damaged(fast_path_agrees, &text, damage)?;
    }

    /// On well-formed bodies of the shapes clients send, the fast path
    /// answers (it is not only ever bailing to serde).
    #[test]
    fn fast_takes_ordinary_bodies(
        msgs in prop::collection::vec(
            (0..2u8, prop::collection::vec((0..3u8, any::<bool>()), 0..4)),
            0..6,
        ),
    ) {
        let messages: Vec<serde_json::Value> = msgs.iter().map(|(role, blocks)| {
            let blocks: Vec<serde_json::Value> = blocks.iter().enumerate().map(|(k, (kind, flag))| match kind {
                0 => serde_json::json!({"toolUse":{"toolUseId":format!("tooluse_{k}"),"name":"shell","input":{"command":"ls -la\n"}}}),
                1 => serde_json::json!({"toolResult":{"toolUseId":format!("tooluse_{k}"),"content":[{"text":"total 0\n\"é\"\t"}],"status":if *flag {"error"} else {"success"}}}),
                _ => serde_json::json!({"text":"Sure — let me look.\n"}),
            }).collect();
            serde_json::json!({"role": if *role == 0 { "user" } else { "assistant" }, "content": blocks})
        }).collect();
        let text = serde_json::to_string(&serde_json::json!({
            "system": [{"text":"You are a coding agent.\n"}],
            "inferenceConfig": {"maxTokens": 4096},
            "toolConfig": {"tools":[{"toolSpec":{"name":"shell","inputSchema":{"json":{"type":"object"}}}}]},
            "messages": messages,
        })).unwrap();
        prop_assert_eq!(fast_then_serde(&text), Some(Ok(())), "{}", text);
    }
}

/// A call whose `input` is `null` (which Bedrock refuses) is read as
/// present, as serde's `present` reads it.
#[test]
fn a_null_input_is_present() {
    let text = r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"ls","input":null}}]}]}"#;
    assert_eq!(fast_then_serde(text), Some(Ok(())));
}
