//! The one-pass outline and the layout agree with the full parse (proptest).

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::{
    layout::{layout, outline},
    validate::defects,
};

fn block(kind: u8, id: u8) -> Value {
    let id = format!("t{}", id % 4);
    match kind % 10 {
        0 => json!({"type": "tool_use", "id": id, "name": "f", "input": {}}),
        // Error results, with and without anything in them.
        6 => json!({"type": "tool_result", "tool_use_id": id, "is_error": true, "content": ""}),
        7 if (kind / 10).is_multiple_of(2) => {
            json!({"type": "tool_result", "tool_use_id": id, "is_error": true, "content": []})
        }
        7 => {
            json!({"type": "tool_result", "tool_use_id": id, "is_error": true, "content": [{"type": "text", "text": "no"}]})
        }
        8 => json!({"type": "tool_result", "tool_use_id": id, "is_error": true, "content": null}),
        9 => {
            json!({"type": "tool_result", "tool_use_id": id, "is_error": (kind / 10).is_multiple_of(2)})
        }
        1 => json!({"type": "tool_result", "tool_use_id": id, "content": "x\n\"y\""}),
        // Text, at times ending in whitespace (refused ending a prefill).
        2 if (kind / 10).is_multiple_of(2) => json!({"type": "text", "text": "hi", "id": 5}),
        2 => json!({"type": "text", "text": "hi\u{a0}\n", "id": 5}),
        3 => json!({"type": "server_tool_use", "id": id, "name": "web_search", "input": {}}),
        4 => json!({"type": "web_search_tool_result", "tool_use_id": id, "content": []}),
        _ => json!({"type": "tool_result", "tool_use_id": null}),
    }
}

fn message(role: u8, content: u8, blocks: &[(u8, u8)]) -> Value {
    let content = match content % 5 {
        0 if (content / 5).is_multiple_of(2) => json!("plain text"),
        0 => json!("plain text "),
        1 => Value::Null,
        2 => json!({"odd": [1, 2]}),
        _ => Value::Array(blocks.iter().map(|&(k, i)| block(k, i)).collect()),
    };
    let role = if role.is_multiple_of(2) {
        "user"
    } else {
        "assistant"
    };
    json!({"role": role, "content": content})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Validation reads the one-pass outline, repair the layout: they
    /// must see the same conversation, and fail on the same bodies.
    #[test]
    fn same_defects_and_same_failures(
        msgs in prop::collection::vec((any::<u8>(), any::<u8>(), prop::collection::vec((any::<u8>(), any::<u8>()), 0..4)), 0..6),
        cut in any::<usize>(),
        flip in any::<(usize, u8)>(),
    ) {
        let messages: Vec<Value> = msgs.iter().map(|(r, c, b)| message(*r, *c, b)).collect();
        let body = serde_json::to_vec(&json!({"model": "m", "messages": messages})).unwrap();
        let l = layout(&body).unwrap();
        let o = outline(&body).unwrap();
        prop_assert_eq!(defects(&l.msgs, o.held), defects(&o.msgs, o.held));
        // Damaged bodies: both fail or both agree.
        let mut bad = body.clone();
        let at = flip.0 % bad.len();
        bad[at] = flip.1;
        bad.truncate(bad.len() - cut % 3);
        match (layout(&bad), outline(&bad)) {
            (Ok(l), Ok(o)) => prop_assert_eq!(defects(&l.msgs, o.held), defects(&o.msgs, o.held)),
            (Err(_), Err(_)) => {}
            (l, o) => prop_assert!(false, "layout ok: {}, outline ok: {}", l.is_ok(), o.is_ok()),
        }
    }

    /// The gateway's one pass ([`crate::inspect`]) finds what
    /// `validate` and `request_view` find on their own, on intact and
    /// damaged bodies alike.
    #[test]
    fn inspect_agrees_with_validate_and_view(
        msgs in prop::collection::vec((any::<u8>(), any::<u8>(), prop::collection::vec((any::<u8>(), any::<u8>()), 0..4)), 0..6),
        dup in any::<bool>(),
        flip in any::<(usize, u8)>(),
    ) {
        let messages: Vec<Value> = msgs.iter().map(|(r, c, b)| message(*r, *c, b)).collect();
        let mut body = serde_json::to_vec(&json!({"model": "m", "messages": messages})).unwrap();
        if dup && body.len() > 2 {
            // A repeated key (here: the whole `messages`) must be refused alike.
            let tail = format!(r#","messages":{}}}"#, serde_json::to_string(&messages).unwrap());
            body.truncate(body.len() - 1);
            body.extend_from_slice(tail.as_bytes());
        }
        let mut bad = body.clone();
        let at = flip.0 % bad.len();
        bad[at] = flip.1;
        for b in [&body, &bad] {
            crate::testutil::inspect_agrees(crate::Dialect::Anthropic, b)?;
        }
    }
}
