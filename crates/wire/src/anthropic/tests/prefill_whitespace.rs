//! A prefill (a last assistant message) ending in whitespace: the API
//! refuses it ("final assistant content cannot end with trailing
//! whitespace"); the three readers see it alike, and repair trims it in
//! place.

use crate::{ChangeKind, DefectKind};

use super::{
    super::{repair, validate, view::fast_then_seeds},
    inspected,
};

const REFUSAL: &str = "messages: final assistant content cannot end with trailing whitespace";

/// A body whose last message is `last` (raw JSON), after a user message.
fn with_last(last: &str) -> String {
    format!(
        r#"{{"model": "claude-x", "max_tokens": 10, "messages": [ {{"role": "user", "content": "go"}}, {last} ]}}"#
    )
}

fn defects(body: &str) -> Vec<(DefectKind, usize, String)> {
    validate(body.as_bytes())
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index, d.message))
        .collect()
}

#[test]
fn a_prefill_ending_in_whitespace_is_a_defect() {
    let refused = [
        r#"{"role": "assistant", "content": "The answer is "}"#,
        r#"{"role": "assistant", "content": "line\n"}"#,
        r#"{"role": "assistant", "content": "tab\t"}"#,
        // Escaped: a no-break space, a byte order mark, an ideographic space.
        r#"{"role": "assistant", "content": "x\u00a0"}"#,
        r#"{"role": "assistant", "content": "x\ufeff"}"#,
        "{\"role\": \"assistant\", \"content\": \"x\u{3000}\"}",
        r#"{"role": "assistant", "content": [{"type": "text", "text": "{ "}]}"#,
        r#"{"content": [{"type": "thinking", "thinking": "t", "signature": "s"}, {"text": "so ", "type": "text"}], "role": "assistant"}"#,
        r#"{"role": "assistant", "content": "   "}"#,
    ];
    for last in refused {
        let b = with_last(last);
        assert_eq!(
            defects(&b),
            vec![(DefectKind::TrailingWhitespace, 1, REFUSAL.to_string())],
            "{last}"
        );
        assert_eq!(
            inspected(&b),
            vec![(DefectKind::TrailingWhitespace, 1)],
            "{last}"
        );
        // The serde seeds find what the fast path found.
        assert_eq!(fast_then_seeds(&b), Some(Ok(())), "{last}");
    }
    let accepted = [
        r#"{"role": "assistant", "content": "The answer is"}"#,
        // U+0085 is no whitespace to JavaScript's trimEnd.
        r#"{"role": "assistant", "content": "x\u0085"}"#,
        // A backslash then `n`, or `\u0020` spelled out: no whitespace.
        r#"{"role": "assistant", "content": [{"type": "text", "text": "a\\n"}]}"#,
        r#"{"role": "assistant", "content": [{"type": "text", "text": "a\\u0020"}]}"#,
        r#"{"role": "assistant", "content": "a\\"}"#,
        r#"{"role": "assistant", "content": [{"type": "text", "text": "so "}, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}"#,
        r#"{"role": "assistant", "content": [{"type": "thinking", "thinking": "t ", "signature": "s"}]}"#,
        r#"{"role": "assistant", "content": [{"type": "text", "text": null}]}"#,
        r#"{"role": "assistant", "content": []}"#,
        r#"{"role": "user", "content": "more "}"#,
        r#"{"role": "user", "content": [{"type": "text", "text": "more "}]}"#,
    ];
    for last in accepted {
        let b = with_last(last);
        let d = defects(&b);
        assert!(
            d.iter().all(|d| d.0 != DefectKind::TrailingWhitespace),
            "{last}: {d:?}"
        );
        assert!(
            inspected(&b)
                .iter()
                .all(|d| d.0 != DefectKind::TrailingWhitespace),
            "{last}"
        );
    }
    // Whitespace ending an assistant message that is not the last is history.
    let earlier = r#"{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": "ok "}, {"role": "user", "content": "more"}]}"#;
    assert_eq!(defects(earlier), vec![]);
    assert_eq!(inspected(earlier), vec![]);
}

/// Repair trims the text where it stands; every other byte is kept.
#[test]
fn repair_trims_the_prefill_in_place() {
    let cases = [
        (
            r#"{"role": "assistant", "content": "The answer is \n\t"}"#,
            r#"{"role": "assistant", "content": "The answer is"}"#,
            ChangeKind::TrimmedPrefill,
        ),
        (
            r#"{"role": "assistant", "content": "  lead kept\u00a0"}"#,
            r#"{"role": "assistant", "content": "  lead kept"}"#,
            ChangeKind::TrimmedPrefill,
        ),
        (
            r#"{"role": "assistant", "content": [ {"type": "thinking", "thinking": "t", "signature": "s"} , {"type": "text", "text": "{\"a\": ", "cache_control": {"type": "ephemeral"}} ]}"#,
            r#"{"role": "assistant", "content": [ {"type": "thinking", "thinking": "t", "signature": "s"} , {"type": "text", "text": "{\"a\":", "cache_control": {"type": "ephemeral"}} ]}"#,
            ChangeKind::TrimmedPrefill,
        ),
        // A text block left empty goes; the message keeps its other blocks.
        (
            r#"{"role": "assistant", "content": [{"type": "text", "text": "so"}, {"type": "text", "text": " \n"}]}"#,
            r#"{"role": "assistant", "content": [{"type": "text", "text": "so"}]}"#,
            ChangeKind::RemovedBlankText,
        ),
    ];
    for (last, want, kind) in cases {
        let b = with_last(last);
        let r = repair(b.as_bytes()).unwrap();
        let out = String::from_utf8(r.body.into_owned()).unwrap();
        assert_eq!(out, with_last(want), "{last}");
        assert_eq!(defects(&out), vec![], "{out}");
        assert_eq!(r.changes.len(), 1, "{:?}", r.changes);
        assert_eq!(r.changes[0].kind, kind);
        assert_eq!(r.changes[0].defect, DefectKind::TrailingWhitespace);
        assert_eq!(r.changes[0].message_index, 1);
        assert_eq!(r.changes[0].call_id, None);
    }
}

/// A prefill of nothing but whitespace goes whole (the model answers the
/// user message before it), but not when it is the only message.
#[test]
fn repair_removes_a_prefill_of_only_whitespace() {
    for last in [
        r#"{"role": "assistant", "content": " "}"#,
        r#"{"role": "assistant", "content": [{"type": "text", "text": "\n\n"}]}"#,
    ] {
        let b = with_last(last);
        let r = repair(b.as_bytes()).unwrap();
        let out = String::from_utf8(r.body.into_owned()).unwrap();
        assert_eq!(
            out,
            r#"{"model": "claude-x", "max_tokens": 10, "messages": [ {"role": "user", "content": "go"} ]}"#,
            "{last}"
        );
        assert_eq!(r.changes.len(), 1);
        assert_eq!(r.changes[0].kind, ChangeKind::RemovedEmptyMessage);
        assert_eq!(r.changes[0].defect, DefectKind::TrailingWhitespace);
    }
    let alone = r#"{"messages": [{"role": "assistant", "content": " "}]}"#;
    let r = repair(alone.as_bytes()).unwrap();
    assert_eq!(&*r.body, alone.as_bytes());
    assert!(r.changes.is_empty());
}

/// What goes of a prefill is looked at again: the text block before one
/// that went, the assistant message before one that went (the API joins
/// them), until what ends the body no longer ends in whitespace.
#[test]
fn repair_trims_what_a_removal_leaves_last() {
    let b = with_last(
        r#"{"role": "assistant", "content": [{"type": "text", "text": "so "}, {"type": "text", "text": "\n"}]}"#,
    );
    let r = repair(b.as_bytes()).unwrap();
    let out = String::from_utf8(r.body.into_owned()).unwrap();
    assert_eq!(
        out,
        with_last(r#"{"role": "assistant", "content": [{"type": "text", "text": "so"}]}"#)
    );
    let kinds: Vec<_> = r.changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![ChangeKind::RemovedBlankText, ChangeKind::TrimmedPrefill]
    );

    let b = r#"{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": "The answer is "}, {"role": "assistant", "content": [{"type": "text", "text": " "}]}, {"role": "assistant", "content": " \t"}]}"#;
    assert_eq!(
        defects(b),
        vec![(DefectKind::TrailingWhitespace, 3, REFUSAL.to_string())]
    );
    let r = repair(b.as_bytes()).unwrap();
    let out = String::from_utf8(r.body.into_owned()).unwrap();
    assert_eq!(
        out,
        r#"{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": "The answer is"}]}"#
    );
    assert_eq!(defects(&out), vec![]);
    let kinds: Vec<_> = r
        .changes
        .iter()
        .map(|c| (c.kind, c.message_index))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (ChangeKind::TrimmedPrefill, 1),
            (ChangeKind::RemovedEmptyMessage, 2),
            (ChangeKind::RemovedEmptyMessage, 3)
        ]
    );
    // Down to the first message, which stays as it came.
    let b = r#"{"messages": [{"role": "assistant", "content": " "}, {"role": "assistant", "content": "\n"}]}"#;
    let r = repair(b.as_bytes()).unwrap();
    assert_eq!(
        String::from_utf8(r.body.into_owned()).unwrap(),
        r#"{"messages": [{"role": "assistant", "content": " "}]}"#
    );
}

/// A prefill ending in whitespace after calls left unanswered: the
/// results are inserted and the text trimmed, in one repair.
#[test]
fn repair_trims_the_prefill_with_other_defects() {
    let b = with_last(
        r#"{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}, {"type": "text", "text": "and "}]}"#,
    );
    let r = repair(b.as_bytes()).unwrap();
    let out = String::from_utf8(r.body.into_owned()).unwrap();
    assert!(out.contains(r#"{"type": "text", "text": "and"}"#), "{out}");
    assert_eq!(defects(&out), vec![], "{out}");
    let kinds: Vec<_> = r.changes.iter().map(|c| (c.kind, c.defect)).collect();
    assert!(
        kinds.contains(&(ChangeKind::TrimmedPrefill, DefectKind::TrailingWhitespace)),
        "{kinds:?}"
    );
}

/// A result without its call at the end of a prefill: the text it is
/// turned into ends it, so that text loses its trailing whitespace (the
/// header's newline when the result had no content, or the content's own);
/// elsewhere it is kept whole. Found by the `repair` fuzz target.
#[test]
fn a_result_turned_into_text_does_not_end_a_prefill_in_whitespace() {
    for (content, text) in [
        (
            "",
            "[Result of tool call toolu_9, whose call is not in this conversation]",
        ),
        (
            r#", "content": "done\n\n""#,
            "[Result of tool call toolu_9, whose call is not in this conversation]\ndone",
        ),
    ] {
        let b = with_last(&format!(
            r#"{{"role": "assistant", "content": [{{"type": "text", "text": "\n\n"}}, {{"type": "thinking", "thinking": "t", "signature": "s"}}, {{"type": "tool_result", "tool_use_id": "toolu_9"{content}}}]}}"#
        ));
        let r = repair(b.as_bytes()).unwrap();
        let out = String::from_utf8(r.body.into_owned()).unwrap();
        assert_eq!(defects(&out), vec![], "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["messages"][1]["content"][2]["text"], text, "{out}");
        let kinds: Vec<_> = r.changes.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, vec![ChangeKind::ConvertedResultToText]);
    }
    // Not the prefill's end: the text is whole.
    let b = with_last(
        r#"{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "done\n"}, {"type": "text", "text": "so"}]}"#,
    );
    let out = String::from_utf8(repair(b.as_bytes()).unwrap().body.into_owned()).unwrap();
    assert_eq!(defects(&out), vec![], "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["messages"][1]["content"][0]["text"],
        "[Result of tool call toolu_9, whose call is not in this conversation]\ndone\n"
    );
}
