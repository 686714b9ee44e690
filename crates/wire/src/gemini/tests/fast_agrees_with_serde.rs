//! The fast path reads what serde reads, whenever it answers (proptest
//! over bodies with fields in any order, under either of their names,
//! repeated, `null`, escaped, of the wrong type, then damaged); and it
//! answers on the bodies agents send.

use proptest::prelude::*;

use crate::testutil::pick;

use super::super::view::{fast_path_agrees, fast_then_serde};

const STRINGS: &[&str] = &[
    r#""get_weather""#,
    r#""call_1""#,
    r#""a \"quoted\"\nline""#,
    r#""caf\u00e9 \ud83d\ude00""#,
    r#""\ud800""#,
    "null",
    "7",
];

const ARGS: &[&str] = &[
    r#"{"city":"Paris","days":[1,2]}"#,
    "{}",
    "null",
    r#""not an object""#,
    "[1,2,3]",
    r#"{"deep":{"a":[{"b":null}]}}"#,
];

const RESPONSES: &[&str] = &[
    r#"{"output":"sunny, 21 \u00b0C"}"#,
    r#"{"error":{"message":"city not found"}}"#,
    "null",
    r#""a string""#,
    "[]",
    r#"{"content":[{"type":"text","text":"x"}],"isError":true}"#,
];

fn function_call(fields: &[(u8, u8)]) -> String {
    let members: Vec<String> = fields
        .iter()
        .map(|&(f, v)| match f % 4 {
            0 => format!(r#""name":{}"#, pick(v, STRINGS)),
            1 => format!(r#""args":{}"#, pick(v, ARGS)),
            2 => format!(r#""id":{}"#, pick(v, &STRINGS[1..])),
            _ => format!(r#""willContinue":{}"#, pick(v, &["false", "true", "0"])),
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

fn function_response(fields: &[(u8, u8)]) -> String {
    let members: Vec<String> = fields
        .iter()
        .map(|&(f, v)| match f % 4 {
            0 => format!(r#""name":{}"#, pick(v, STRINGS)),
            1 => format!(r#""response":{}"#, pick(v, RESPONSES)),
            2 => format!(r#""id":{}"#, pick(v, &STRINGS[1..])),
            _ => r#""scheduling":"WHEN_IDLE""#.to_string(),
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

type PartSpec = (u8, Vec<(u8, u8)>);

fn part((kind, fields): &PartSpec) -> String {
    match kind % 8 {
        0 | 1 => format!(r#"{{"functionCall":{}}}"#, function_call(fields)),
        2 | 3 => format!(r#"{{"functionResponse":{}}}"#, function_response(fields)),
        4 => format!(r#"{{"function_call":{}}}"#, function_call(fields)),
        5 => format!(r#"{{"function_response":{}}}"#, function_response(fields)),
        6 => format!(
            r#"{{"text":"ok","functionCall":null,"thought":{}}}"#,
            pick(fields.first().map_or(0, |f| f.1), &["true", "false"])
        ),
        _ => format!(
            r#"{{"functionCall":{},"function_call":{{"name":"x"}}}}"#,
            function_call(fields)
        ),
    }
}

type ContentSpec = (u8, u8, Vec<PartSpec>);

fn content((role, shape, parts): &ContentSpec) -> String {
    let role = pick(
        *role,
        &[
            r#""model""#,
            r#""user""#,
            r#""function""#,
            r#""\u006dodel""#,
            "null",
            "3",
        ],
    );
    let parts = format!("[{}]", parts.iter().map(part).collect::<Vec<_>>().join(","));
    match shape % 6 {
        0 | 1 => format!(r#"{{"role":{role},"parts":{parts}}}"#),
        2 => format!(r#"{{ "parts" : {parts} , "role" : {role} }}"#),
        3 => format!(r#"{{"parts":{parts}}}"#),
        4 => format!(r#"{{"role":{role},"parts":null}}"#),
        _ => format!(r#"{{"role":{role},"parts":{parts},"role":"user"}}"#),
    }
}

fn body(top: &[(u8, u8)], contents: &[ContentSpec]) -> String {
    let list = format!(
        "[{}]",
        contents.iter().map(content).collect::<Vec<_>>().join(",")
    );
    let mut members: Vec<String> = top
        .iter()
        .map(|&(f, v)| match f % 6 {
            0 => format!(
                r#""systemInstruction":{}"#,
                pick(v, &[r#"{"parts":[{"text":"Be brief.\n"}]}"#, "null", r#""text""#])
            ),
            1 => r#""system_instruction":{"parts":[{"text":"x"}]}"#.to_string(),
            2 => r#""tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT"}}]}]"#.into(),
            3 => format!(r#""contents":{list}"#),
            4 => format!(r#""generationConfig":{{"temperature":{}}}"#, pick(v, &["0.2", "-1e3", "1."])),
            _ => format!(r#""contents":{}"#, pick(v, &["null", "{}", "[]"])),
        })
        .collect();
    if !top.iter().any(|&(f, _)| f % 6 == 3) {
        members.push(format!(r#""contents":{list}"#));
    }
    format!("{{{}}}", members.join(","))
}

fn contents() -> impl Strategy<Value = Vec<ContentSpec>> {
    prop::collection::vec(
        (
            any::<u8>(),
            any::<u8>(),
            prop::collection::vec(
                (
                    any::<u8>(),
                    prop::collection::vec((any::<u8>(), any::<u8>()), 0..4),
                ),
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
        contents in contents(),
        damage in any::<(usize, u8, u8)>(),
    ) {
        let text = body(&top, &contents);
        crate::testutil::agrees_whole_and_damaged(fast_path_agrees, &text, damage)?;
    }

    /// On well-formed bodies of the shapes agents send, the fast path
    /// answers.
    #[test]
    fn fast_takes_ordinary_bodies(
        turns in prop::collection::vec((0..3u8, 1..3usize), 0..8),
    ) {
        let mut contents = vec![serde_json::json!({"role":"user","parts":[{"text":"What is the weather — \"today\"?"}]})];
        for (k, (role, calls)) in turns.iter().enumerate() {
            contents.push(match role {
                0 => serde_json::json!({"role":"model","parts":(0..*calls).map(|c| serde_json::json!(
                    {"functionCall":{"name":"get_weather","args":{"city":format!("c{k}{c}")},"id":format!("fc_{k}_{c}")}})).collect::<Vec<_>>()}),
                1 => serde_json::json!({"role":"user","parts":(0..*calls).map(|c| serde_json::json!(
                    {"functionResponse":{"name":"get_weather","id":format!("fc_{k}_{c}"),"response":{"output":"sunny\n"}}})).collect::<Vec<_>>()}),
                _ => serde_json::json!({"role":"model","parts":[{"text":"Done.","thoughtSignature":"abc"}]}),
            });
        }
        let text = serde_json::to_string(&serde_json::json!({
            "contents": contents,
            "systemInstruction": {"parts":[{"text":"You are a helpful assistant.\n"}]},
            "tools": [{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT"}}]}],
            "generationConfig": {"temperature": 0.0},
        })).unwrap();
        prop_assert_eq!(fast_then_serde(&text), Some(Ok(())), "{}", text);
    }
}

/// A `functionResponse.response` object's members, as the fast path and
/// serde read them (`Ok` when the fast path does not take it).
fn entries_agree(text: &str) -> Result<(), String> {
    let Ok(fast) = super::super::fast::entries(text) else {
        return Ok(());
    };
    let full = serde_json::from_str::<super::super::model::Entries<'_>>(text);
    match full {
        Ok(full) if format!("{full:?}") == format!("{fast:?}") => Ok(()),
        other => Err(format!("fast path: {fast:?}\nfull parser: {other:?}")),
    }
}

const MEMBERS: &[&str] = &[
    r#""output":"sunny\n""#,
    r#""error":{"message":"not found","code":404}"#,
    r#""isError":true"#,
    r#""content":[{"type":"text","text":"x \"y\""}]"#,
    r#""output":"again""#,
    r#""\u0065rror":"escaped key""#,
    r#""result":-1.5e3"#,
    r#""error":null"#,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The members of a response object: whenever the fast path answers,
    /// serde reads the same (repeated keys kept, in order); damaged too.
    #[test]
    fn fast_entries_are_serdes(
        members in prop::collection::vec(any::<u8>(), 0..6),
        damage in any::<(usize, u8, u8)>(),
    ) {
        let list: Vec<&str> = members.iter().map(|&m| MEMBERS[usize::from(m) % MEMBERS.len()]).collect();
        let text = format!("{{{}}}", list.join(" , "));
        prop_assert_eq!(entries_agree(&text), Ok(()), "{}", text);
        let bad = crate::testutil::damaged(&text, damage);
        if let Ok(bad) = std::str::from_utf8(&bad) {
            prop_assert_eq!(entries_agree(bad), Ok(()), "{}", bad);
        }
    }
}

/// Ordinary response objects take the fast path.
#[test]
fn fast_takes_ordinary_response_objects() {
    for text in [
        r#"{"output":"sunny, 21 \u00b0C\n"}"#,
        r#"{"error":{"message":"city not found"}}"#,
        r#"{"content":[{"type":"text","text":"x"}],"isError":true}"#,
        "{}",
    ] {
        assert!(super::super::fast::entries(text).is_ok(), "{text}");
        assert_eq!(entries_agree(text), Ok(()), "{text}");
    }
}
