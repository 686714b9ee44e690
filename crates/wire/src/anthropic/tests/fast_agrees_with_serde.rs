//! The fast path gives what the serde seeds give, whenever it answers
//! (proptest over bodies with fields in any order, repeated, `null`,
//! escaped, of the wrong type, then damaged); and it answers on the bodies
//! agents send.

use proptest::prelude::*;

use crate::testutil::pick;

use super::super::view::{fast_path_agrees, fast_then_seeds};

const STRINGS: &[&str] = &[
    r#""t1""#,
    r#""t2""#,
    r#""a \"quoted\"\nline""#,
    r#""caf\u00e9 \ud83d\ude00""#,
    r#""\ud800""#,
    "null",
    "7",
    r#""é""#,
    // Ending in whitespace, which a prefill must not.
    r#""so \u3000""#,
    r#""\t ""#,
];

/// One block as text: the fields of a well-formed block of one kind (the
/// first choice), then fields from the rest (a field index and a value
/// choice each), in that order, repeats allowed.
fn block(fields: &[(u8, u8)]) -> String {
    let Some(((kind, v), rest)) = fields.split_first() else {
        return "{}".into();
    };
    let id = pick(*v, &[r#""toolu_01""#, r#""toolu_02""#, r#""t"1""#]);
    let mut members: Vec<String> = match kind % 4 {
        0 => vec![
            r#""type":"tool_use""#.into(),
            format!(r#""id":{id}"#),
            r#""name":"Bash""#.into(),
            r#""input":{"command":"ls\n"}"#.into(),
        ],
        1 => vec![
            r#""type":"tool_result""#.into(),
            format!(r#""tool_use_id":{id}"#),
            r#""content":"total 0\n""#.into(),
        ],
        2 => vec![r#""type":"text""#.into(), r#""text":"hello\n""#.into()],
        _ => vec![],
    };
    if kind & 4 != 0 {
        members.reverse();
    }
    members.extend(rest.iter().map(|&(f, v)| match f % 11 {
        0 | 1 => format!(
            r#""type":{}"#,
            pick(
                v,
                &[
                    r#""tool_use""#,
                    r#""tool_result""#,
                    r#""text""#,
                    r#""server_tool_use""#,
                    r#""web_search_tool_result""#,
                    r#""tool_\u0075se""#,
                    "null",
                ]
            )
        ),
        2 => format!(r#""id":{}"#, pick(v, STRINGS)),
        3 => format!(r#""name":{}"#, pick(v, STRINGS)),
        4 => format!(
            r#""input":{}"#,
            pick(
                v,
                &[
                    "{}",
                    r#"{"path":"a\\b","n":[1,2.5e3,{}]}"#,
                    "null",
                    "[]",
                    "3"
                ]
            )
        ),
        5 => format!(r#""tool_use_id":{}"#, pick(v, STRINGS)),
        6 => format!(
            r#""content":{}"#,
            pick(
                v,
                &[
                    r#""out\nput""#,
                    r#"[{"type":"text","text":"x"}]"#,
                    "null",
                    r#"{"a":"\ud800"}"#,
                    "-0.5",
                ]
            )
        ),
        7 => format!(
            r#""is_error":{}"#,
            pick(v, &["true", "false", "null", "1", r#""true""#])
        ),
        8 => format!(r#""text":{}"#, pick(v, STRINGS)),
        9 => format!(
            r#""cache_control":{}"#,
            pick(v, &[r#"{"type":"ephemeral"}"#, "[[[]]]", "null"])
        ),
        _ => format!(r#""\u0069d":{}"#, pick(v, STRINGS)),
    }));
    format!("{{{}}}", members.join(","))
}

fn message(role: u8, content: u8, blocks: &[Vec<(u8, u8)>], extra: u8) -> String {
    let role = pick(
        role,
        &[r#""user""#, r#""assistant""#, r#""\u0075ser""#, "null", "1"],
    );
    let content = match content % 16 {
        0 => "null".to_string(),
        1 => "{}".to_string(),
        2..=4 => r#""Read the modules.\n""#.to_string(),
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
    match extra % 16 {
        0 => members.push(r#""role":"user""#.into()),
        1 => members.truncate(1),
        2..=5 => members.insert(1, r#""name":{"nested":[1,"\ud800"]}"#.into()),
        6..=9 => members.reverse(),
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
            0 => format!(r#""model":{}"#, pick(v, STRINGS)),
            1 => format!(r#""stream":{}"#, pick(v, &["true", "false", "null", "0"])),
            2 => format!(
                r#""system":{}"#,
                pick(
                    v,
                    &[
                        r#""You are a coding agent.""#,
                        r#"[{"type":"text","text":"a","cache_control":{}},{"text":"b\n"}]"#,
                        "null",
                        "[1]",
                    ]
                )
            ),
            3 => format!(
                r#""metadata":{}"#,
                pick(
                    v,
                    &[
                        r#"{"user_id":"user_abc_session_1"}"#,
                        r#"{"user_id":null,"x":[]}"#,
                        r#"{"user_id":"a","user_id":"b"}"#,
                        "null",
                        "[]",
                    ]
                )
            ),
            4 => r#""tools":[{"name":"read","input_schema":{"type":"object"}}]"#.to_string(),
            5 => r#""max_tokens":1024"#.to_string(),
            6 => format!(
                r#""thread":{}"#,
                pick(
                    v,
                    &[
                        r#"{"type":"continue","previous_message_id":"msg_1"}"#,
                        r#"{"previous_message_id":"msg_2","type":"continue","x":{}}"#,
                        r#"{"type":"create"}"#,
                        r#"{"type":"continue","type":"create"}"#,
                        r#"{"type":null}"#,
                        "null",
                        r#""continue""#,
                    ]
                )
            ),
            _ => format!(r#""messages":{messages}"#),
        })
        .collect();
    if !top.iter().any(|&(f, _)| f % 8 == 7) {
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
                prop::collection::vec((any::<u8>(), any::<u8>()), 1..4),
                0..4,
            ),
            any::<u8>(),
        ),
        0..5,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Whenever the fast path answers, the seeds answer the same; and
    /// damaged bodies too.
    #[test]
    fn fast_answers_as_the_seeds_do(
        top in prop::collection::vec((any::<u8>(), any::<u8>()), 0..7),
        msgs in msgs(),
        damage in any::<(usize, u8, u8)>(),
    ) {
        let text = body(&top, &msgs);
        crate::testutil::agrees_whole_and_damaged(fast_path_agrees, &text, damage)?;
    }

    /// On well-formed bodies of the shapes agents send, the fast path
    /// answers (it is not only ever bailing to the seeds).
    #[test]
    fn fast_takes_ordinary_bodies(
        msgs in prop::collection::vec(
            (0..2u8, prop::collection::vec((0..3u8, any::<bool>()), 0..4)),
            0..6,
        ),
    ) {
        let messages: Vec<serde_json::Value> = msgs.iter().map(|(role, blocks)| {
            let blocks: Vec<serde_json::Value> = blocks.iter().enumerate().map(|(k, (kind, flag))| match kind {
                0 => serde_json::json!({"type":"tool_use","id":format!("toolu_{k}"),"name":"Bash","input":{"command":"ls -la\n"}}),
                1 => serde_json::json!({"type":"tool_result","tool_use_id":format!("toolu_{k}"),"content":"total 0\n\"é\"\t","is_error":flag}),
                _ => serde_json::json!({"type":"text","text":"Sure — let me look.\n","cache_control":{"type":"ephemeral"}}),
            }).collect();
            serde_json::json!({"role": if *role == 0 { "user" } else { "assistant" }, "content": blocks})
        }).collect();
        let text = serde_json::to_string(&serde_json::json!({
            "model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": true,
            "system": [{"type":"text","text":"You are Claude Code.\n"}],
            "metadata": {"user_id": "user_x_account__session_y"},
            "tools": [{"name":"Bash","input_schema":{"type":"object","properties":{}}}],
            "messages": messages,
        })).unwrap();
        prop_assert_eq!(fast_then_seeds(&text), Some(Ok(())), "{}", text);
    }
}

/// The corpus's Claude Code conversations: read by the fast path, as the
/// seeds read them.
#[test]
fn corpus_conversations_take_the_fast_path() {
    for rel in [
        "conversations/conv_anthropic_messages_claudecode_spotter_258c7280.json",
        "conversations/conv_anthropic_messages_claudecode_spotter_short.json",
    ] {
        let Some(bytes) = crate::testutil::corpus(rel) else {
            return;
        };
        assert!(
            crate::request_view(crate::Dialect::Anthropic, &bytes).is_ok(),
            "{rel}"
        );
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(fast_then_seeds(&text), Some(Ok(())), "{rel}");
    }
}
