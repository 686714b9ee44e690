//! Message threads (`thread`): a `continue` sends only the new messages,
//! so its first message answers calls of the reply the API holds. Those
//! results are not orphans for the view, validation or repair; anywhere
//! else, and without a `continue`, they still are.

use crate::{ChangeKind, DefectKind, Dialect};

use super::{
    super::{repair, validate, view::fast_then_seeds},
    inspected,
};

/// A request whose `thread` is `thread` (raw JSON, or none) and whose
/// messages are `messages` (raw JSON).
fn body(thread: Option<&str>, messages: &str) -> String {
    let thread = thread.map_or(String::new(), |t| format!(r#""thread": {t}, "#));
    format!(r#"{{"model": "claude-x", "max_tokens": 10, {thread}"messages": [{messages}]}}"#)
}

const CONTINUE: &str = r#"{"type": "continue", "previous_message_id": "msg_1"}"#;

/// The answers to the held reply's two calls, then the user's next words.
const ANSWERS: &str = r#"{"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"},
    {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": "ENOENT"}]}"#;

fn defects(body: &str) -> Vec<(DefectKind, usize)> {
    validate(body.as_bytes())
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index))
        .collect()
}

#[test]
fn a_continue_answers_the_held_reply() {
    let b = body(Some(CONTINUE), ANSWERS);
    assert_eq!(defects(&b), []);
    assert_eq!(inspected(&b), []);
    let repaired = repair(b.as_bytes()).unwrap();
    assert!(repaired.changes.is_empty(), "{:?}", repaired.changes);
    assert_eq!(repaired.body.as_ref(), b.as_bytes());
    let view = crate::request_view(Dialect::Anthropic, b.as_bytes()).unwrap();
    assert_eq!(view.previous_response_id.as_deref(), Some("msg_1"));
    assert!(view.threaded);
    let results: Vec<(&str, bool, bool)> = view
        .results
        .iter()
        .map(|r| (&*r.call_id, r.tool.is_none(), r.new))
        .collect();
    assert_eq!(results, [("toolu_a", true, true), ("toolu_b", true, true)]);
    assert_eq!(fast_then_seeds(&b), Some(Ok(())));
}

#[test]
fn without_a_continue_the_same_results_are_orphans() {
    for thread in [None, Some(r#"{"type": "create"}"#), Some("null")] {
        let b = body(thread, ANSWERS);
        let orphans = vec![(DefectKind::OrphanResult, 0); 2];
        assert_eq!(defects(&b), orphans, "{b}");
        assert_eq!(inspected(&b), orphans, "{b}");
        let view = crate::request_view(Dialect::Anthropic, b.as_bytes()).unwrap();
        assert_eq!(view.previous_response_id, None);
        assert_eq!(view.threaded, thread == Some(r#"{"type": "create"}"#));
        let kinds: Vec<ChangeKind> = repair(b.as_bytes())
            .unwrap()
            .changes
            .iter()
            .map(|c| c.kind)
            .collect();
        assert_eq!(kinds, [ChangeKind::ConvertedResultToText; 2], "{b}");
    }
}

#[test]
fn only_the_first_message_answers_the_held_reply() {
    // A later user message's result answers no call: an orphan still.
    let later = r#"{"role": "assistant", "content": "done"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_c", "content": "x"}]}"#;
    let b = body(Some(CONTINUE), &format!("{ANSWERS}, {later}"));
    assert_eq!(defects(&b), [(DefectKind::OrphanResult, 2)]);
    assert_eq!(inspected(&b), [(DefectKind::OrphanResult, 2)]);
    let repaired = repair(b.as_bytes()).unwrap();
    let changes: Vec<(ChangeKind, usize)> = repaired
        .changes
        .iter()
        .map(|c| (c.kind, c.message_index))
        .collect();
    assert_eq!(changes, [(ChangeKind::ConvertedResultToText, 2)]);
    // The held reply's answers are as they came.
    let out: serde_json::Value = serde_json::from_slice(&repaired.body).unwrap();
    let first: serde_json::Value = serde_json::from_str(ANSWERS).unwrap();
    assert_eq!(out["messages"][0], first);
    assert_eq!(defects(std::str::from_utf8(&repaired.body).unwrap()), []);
}

#[test]
fn a_held_call_answered_twice_keeps_its_first_answer() {
    let twice = r#"{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "first"},
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "second"}]}"#;
    let b = body(Some(CONTINUE), twice);
    assert_eq!(defects(&b), [(DefectKind::DuplicateCallId, 0)]);
    assert_eq!(inspected(&b), [(DefectKind::DuplicateCallId, 0)]);
    let repaired = repair(b.as_bytes()).unwrap();
    let kinds: Vec<ChangeKind> = repaired.changes.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [ChangeKind::RemovedDuplicate]);
    let out: serde_json::Value = serde_json::from_slice(&repaired.body).unwrap();
    assert_eq!(
        out["messages"][0]["content"],
        serde_json::json!([{"type": "tool_result", "tool_use_id": "toolu_a", "content": "first"}])
    );
}

/// An empty error among the held reply's answers is filled where it
/// stands, and that fill is reported: a repair whose changes were empty
/// was taken for none, and the empty error reached the API.
#[test]
fn a_held_answer_left_empty_is_filled_and_reported() {
    let empty = r#"{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"},
        {"type": "text", "text": "go on"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": null}]}"#;
    let b = body(Some(CONTINUE), empty);
    assert_eq!(defects(&b), [(DefectKind::EmptyErrorResult, 0)]);
    let repaired = repair(b.as_bytes()).unwrap();
    let changes: Vec<(ChangeKind, usize, Option<&str>)> = repaired
        .changes
        .iter()
        .map(|c| (c.kind, c.message_index, c.call_id.as_deref()))
        .collect();
    assert_eq!(
        changes,
        [(ChangeKind::FilledErrorResult, 0, Some("toolu_b"))]
    );
    assert_eq!(defects(std::str::from_utf8(&repaired.body).unwrap()), []);
    let out: serde_json::Value = serde_json::from_slice(&repaired.body).unwrap();
    assert_eq!(out["messages"][0]["content"][0]["content"], "ok");
    assert!(
        out["messages"][0]["content"][2]["content"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    );
}

/// A `thread` given twice is refused alike by the view, the one pass and
/// validation (serde's derived outline refuses a repeated field).
#[test]
fn a_thread_given_twice_is_refused_by_every_reader() {
    let b = format!(
        r#"{{"model": "m", "max_tokens": 1, "thread": {{"type": "create"}}, "thread": {CONTINUE}, "messages": [{ANSWERS}]}}"#
    );
    assert!(crate::request_view(Dialect::Anthropic, b.as_bytes()).is_err());
    assert!(validate(b.as_bytes()).is_err());
    let one = crate::inspect(Dialect::Anthropic, b.as_bytes());
    assert!(one.view.is_err() && one.defects.is_err());
    assert_eq!(fast_then_seeds(&b).unwrap_or(Ok(())), Ok(()));
}

#[test]
fn the_fast_path_and_serde_read_a_thread_alike() {
    let threads = [
        CONTINUE,
        r#"{"previous_message_id": "msg_2", "type": "continue", "extra": [1]}"#,
        r#"{"type": "create"}"#,
        r#"{"type": "continue"}"#,
        r#"{"type": null, "previous_message_id": null}"#,
        "null",
        "{}",
        // Refused by serde's derived struct: the fast path must give way.
        r#"{"type": "continue", "type": "create"}"#,
        r#""continue""#,
        "7",
    ];
    for t in threads {
        let b = body(Some(t), ANSWERS);
        assert_eq!(fast_then_seeds(&b).unwrap_or(Ok(())), Ok(()), "{b}");
        // Validation alone reads the same as the one pass.
        if let Ok(d) = validate(b.as_bytes()) {
            let d: Vec<_> = d.into_iter().map(|d| (d.kind, d.message_index)).collect();
            assert_eq!(d, inspected(&b), "{b}");
        }
    }
}

/// The tool runner's `system` messages (`tool_addition` / `tool_removal`
/// blocks, beta `inline-tools-2026-09-15`), which it sends after the
/// results that answer a turn: neither user nor assistant, they change no
/// pairing, in a thread's `continue` or in a whole history.
#[test]
fn the_runners_system_messages_change_no_pairing() {
    let tools = r#"{"role": "system", "content": [
        {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": {"name": "g", "input_schema": {"type": "object"}}}},
        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "f"}}]}"#;
    let whole = format!(
        r#"{{"role": "user", "content": "go"}},
        {{"role": "assistant", "content": [{{"type": "tool_use", "id": "toolu_a", "name": "f", "input": {{}}}},
            {{"type": "tool_use", "id": "toolu_b", "name": "f", "input": {{}}}}]}},
        {ANSWERS}, {tools}"#
    );
    for b in [
        body(Some(CONTINUE), &format!("{ANSWERS}, {tools}")),
        body(None, &whole),
    ] {
        assert_eq!(defects(&b), [], "{b}");
        assert_eq!(inspected(&b), [], "{b}");
        let repaired = repair(b.as_bytes()).unwrap();
        assert!(repaired.changes.is_empty(), "{:?}", repaired.changes);
        let view = crate::request_view(Dialect::Anthropic, b.as_bytes()).unwrap();
        let named: Vec<Option<&str>> = view.results.iter().map(|r| r.tool.as_deref()).collect();
        let held = view.previous_response_id.is_some();
        assert_eq!(
            named,
            if held {
                [None, None]
            } else {
                [Some("f"), Some("f")]
            }
        );
        assert_eq!(fast_then_seeds(&b), Some(Ok(())), "{b}");
    }
}
