//! Rules that depend on the model: Claude's refusal of a prefill ending in
//! whitespace, which Bedrock passes on (aws/aws-sdk-net#4015), judged and
//! repaired only for a Claude model; and an `input` of `null`, which
//! Bedrock refuses whatever the model (aaif-goose/goose#8050).

use serde_json::{Value, json};

use crate::{
    ChangeKind, DefectKind, Dialect, ModelFamily, Target, inspect, repair, request_view, validate,
};

const REFUSAL: &str = "The model returned the following errors: messages: final assistant content cannot end with trailing whitespace";

fn claude() -> Target {
    Target::new(Dialect::BedrockConverse, ModelFamily::Claude)
}

/// A body whose last message is `last`, after a user message.
fn with_last(last: Value) -> Vec<u8> {
    let body = json!({"messages": [{"role": "user", "content": [{"text": "go"}]}, last]});
    serde_json::to_vec(&body).unwrap()
}

fn assistant(blocks: Value) -> Value {
    json!({"role": "assistant", "content": blocks})
}

fn defects(t: Target, body: &[u8]) -> Vec<(DefectKind, usize, String)> {
    let found: Vec<_> = validate(t, body)
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index, d.message))
        .collect();
    let inspected: Vec<_> = inspect(t, body)
        .defects
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index, d.message))
        .collect();
    assert_eq!(found, inspected);
    found
}

#[test]
fn a_claude_prefill_ending_in_whitespace_is_a_defect_for_claude_only() {
    let refused = [
        json!([{"text": "The answer is "}]),
        json!([{"text": "{\n  \"flight\": "}]),
        json!([{"text": "x\u{a0}"}]),
        json!([{"text": "x\u{feff}"}]),
        json!([{"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}}, {"text": "so\n"}]),
        // A blank block after it goes (Bedrock refuses it first).
        json!([{"text": "so "}, {"text": " "}]),
    ];
    for last in refused {
        let b = with_last(assistant(last.clone()));
        let found = defects(claude(), &b);
        assert!(
            found.contains(&(DefectKind::TrailingWhitespace, 1, REFUSAL.to_string())),
            "{last}: {found:?}"
        );
        assert!(
            defects(Dialect::BedrockConverse.into(), &b)
                .iter()
                .all(|d| d.0 != DefectKind::TrailingWhitespace),
            "{last}"
        );
    }
    let taken = [
        json!([{"text": "The answer is"}]),
        json!([{"text": "so "}, {"toolUse": {"toolUseId": "a", "name": "f", "input": {}}}]),
        json!([{"text": "x\u{85}"}]),
        // Blank alone: refused as blank, and removed whole.
        json!([{"text": "  "}]),
    ];
    for last in taken {
        let b = with_last(assistant(last.clone()));
        assert!(
            defects(claude(), &b)
                .iter()
                .all(|d| d.0 != DefectKind::TrailingWhitespace),
            "{last}"
        );
    }
    // Not last, or not the assistant's: no prefill.
    let body = json!({"messages": [
        {"role": "user", "content": [{"text": "go "}]},
        {"role": "assistant", "content": [{"text": "so "}]},
        {"role": "user", "content": [{"text": "and "}]}]});
    assert_eq!(defects(claude(), &serde_json::to_vec(&body).unwrap()), []);
}

#[test]
fn a_claude_prefill_is_trimmed_in_place() {
    let body = br#"{"messages": [ {"role": "user", "content": [{"text": "go"}]},
  {"role": "assistant", "content": [ {"text" : "{\n  \"flight\": " } ] } ], "inferenceConfig": {"maxTokens": 5}}"#;
    let r = repair(claude(), body).unwrap();
    let want = String::from_utf8_lossy(body)
        .replace(r#""{\n  \"flight\": " }"#, r#""{\n  \"flight\":" }"#);
    assert_eq!(String::from_utf8_lossy(&r.body), want);
    let changes = super::changes_of(&r);
    assert_eq!(
        changes,
        [(
            ChangeKind::TrimmedPrefill,
            DefectKind::TrailingWhitespace,
            1
        )]
    );
    assert_eq!(validate(claude(), &r.body).unwrap(), []);
    // Another model takes it: nothing changes.
    let other = repair(Dialect::BedrockConverse, body).unwrap();
    assert!(!other.is_changed());
}

#[test]
fn what_a_prefill_trim_leaves_is_trimmed_in_turn() {
    // "so " before a blank block and a text of JavaScript's whitespace
    // alone: both go, and "so " is trimmed.
    let b = with_last(assistant(json!([
        {"text": "so "}, {"text": "\u{feff}"}, {"text": "\n"}
    ])));
    let r = repair(claude(), &b).unwrap();
    let sent: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(sent["messages"][1]["content"], json!([{"text": "so"}]));
    let changes: Vec<_> = r.changes.iter().map(|c| (c.kind, c.defect)).collect();
    assert_eq!(
        changes,
        [
            (ChangeKind::TrimmedPrefill, DefectKind::TrailingWhitespace),
            (ChangeKind::RemovedBlankText, DefectKind::TrailingWhitespace),
            (ChangeKind::RemovedBlankText, DefectKind::BlankText),
        ]
    );
    // A last message of blank blocks alone goes whole; the prefill before
    // it, after a tool's result, is then the last, and trimmed.
    let body = json!({"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"text": "The answer is "}]},
        {"role": "assistant", "content": [{"text": " "}]}]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let found = defects(claude(), &bytes);
    assert_eq!(
        found,
        [
            (DefectKind::TrailingWhitespace, 1, REFUSAL.to_string()),
            (
                DefectKind::BlankText,
                2,
                "The text field in the ContentBlock object at messages.2.content.0 is blank. Add text to the text field, and try again.".to_string()
            ),
        ]
    );
    let r = repair(claude(), &bytes).unwrap();
    let sent: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"text": "go"}]},
            {"role": "assistant", "content": [{"text": "The answer is"}]}])
    );
    assert_eq!(validate(claude(), &r.body).unwrap(), []);
}

#[test]
fn a_null_input_is_refused_and_made_an_empty_object() {
    let body = json!({"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "a", "name": "now", "input": null}}]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "a", "content": [{"text": "12:00"}]}}]}]});
    let bytes = serde_json::to_vec(&body).unwrap();
    // The view's arguments are `{}`, as for an absent input.
    let view = request_view(Dialect::BedrockConverse, &bytes).unwrap();
    assert_eq!(&*view.calls[0].arguments, "{}");
    for t in [Dialect::BedrockConverse.into(), claude()] {
        assert_eq!(
            defects(t, &bytes),
            [(
                DefectKind::NonObjectJson,
                1,
                "The value at messages.1.content.0.toolUse.input is empty.".to_string()
            )]
        );
        let r = repair(t, &bytes).unwrap();
        let sent: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            sent["messages"][1]["content"][0]["toolUse"]["input"],
            json!({})
        );
        let changes: Vec<_> = r.changes.iter().map(|c| (c.kind, c.defect)).collect();
        assert_eq!(
            changes,
            [(ChangeKind::MadeInputObject, DefectKind::NonObjectJson)]
        );
        assert_eq!(
            String::from_utf8_lossy(&r.body),
            String::from_utf8_lossy(&bytes).replace(r#""input":null"#, r#""input":{}"#)
        );
    }
    // An absent input is not judged.
    let absent = br#"{"messages":[{"role":"user","content":[{"text":"go"}]},
        {"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"now"}}]},
        {"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"text":"x"}]}}]}]}"#;
    assert_eq!(validate(Dialect::BedrockConverse, absent).unwrap(), []);
}
