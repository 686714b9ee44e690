//! Tests of the Responses dialect: hand-written bodies and recorded
//! streams (fixtures copied from the corpus).

use toolwarden_core::{Basis, ErrorKind, ToolCall, ToolFailure, ToolOutcome, Verdict};

use crate::testutil::{EagerView, eager_view};

pub(super) fn request_view_with<'a>(
    b: &'a [u8],
    judge: crate::text::Judge<'_>,
) -> Result<EagerView<'a>, crate::WireError> {
    eager_view(crate::Dialect::OpenAiResponses, b, judge)
}
use crate::{ChangeKind, DefectKind, Dialect, StreamParser, Usage};

/// A `.chunks.txt` recording (an in-repository fixture) as the SSE bytes
/// OpenAI sends.
pub(crate) fn sse_from_chunks(rel: &str, with_event_lines: bool) -> Vec<u8> {
    let text = String::from_utf8(crate::testutil::fixture(rel)).expect("UTF-8 fixture");
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if with_event_lines {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON event");
            out.push_str(&format!("event: {}\n", v["type"].as_str().unwrap_or("")));
        }
        out.push_str("data: ");
        out.push_str(line);
        out.push_str("\n\n");
    }
    out.into_bytes()
}

/// Each result of `v`: call id, tool, content, failed, basis, new.
pub(super) type ResultRow<'v> = (&'v str, Option<&'v str>, &'v str, bool, Basis, bool);

pub(super) fn result_rows<'v>(v: &'v EagerView<'_>) -> Vec<ResultRow<'v>> {
    (v.results.iter())
        .map(|r| {
            let (failed, basis) = (r.verdict.failed, r.verdict.basis);
            (
                &*r.call_id,
                r.tool.as_deref(),
                &*r.content,
                failed,
                basis,
                r.new,
            )
        })
        .collect()
}

pub(super) fn never(_: &str) -> Verdict {
    Verdict::NONE
}

fn starts_with_fail(s: &str) -> Verdict {
    if s.starts_with("FAIL") {
        Verdict::heuristic_failure()
    } else {
        Verdict::NONE
    }
}

const CONVERSATION: &str = r#"{
  "model": "gpt-5.1",
  "instructions": "Be brief.",
  "stream": true,
  "input": [
    {"role": "user", "content": "weather in SF and NYC?"},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "weather", "arguments": "{\"city\":\"SF\"}"},
    {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "weather", "arguments": "{\"city\":\"NYC\"}"},
    {"type": "function_call_output", "call_id": "call_a", "output": "18C"},
    {"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "FAIL: no"}, {"type": "input_text", "text": "station"}]},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "SF 18C"}]},
    {"role": "user", "content": "and LA?"},
    {"type": "custom_tool_call", "call_id": "call_c", "name": "sql", "input": "SELECT 1"},
    {"type": "custom_tool_call_output", "call_id": "call_c", "output": "1", "status": "incomplete"}
  ]
}"#;

#[test]
fn request_view_reads_calls_results_and_new() {
    let v = request_view_with(CONVERSATION.as_bytes(), &starts_with_fail).unwrap();
    assert_eq!(v.model.as_deref(), Some("gpt-5.1"));
    assert!(v.stream);
    assert_eq!(v.message_count, 10);
    let calls: Vec<(&str, &str, &str, usize)> = v
        .calls
        .iter()
        .map(|c| (&*c.id, &*c.name, &*c.arguments, c.message_index))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_a", "weather", "{\"city\":\"SF\"}", 2),
            ("call_b", "weather", "{\"city\":\"NYC\"}", 3),
            ("call_c", "sql", "SELECT 1", 8),
        ]
    );
    let results = result_rows(&v);
    assert_eq!(
        results,
        vec![
            ("call_a", Some("weather"), "18C", false, Basis::None, false),
            (
                "call_b",
                Some("weather"),
                "FAIL: no\nstation",
                true,
                Basis::Heuristic,
                false
            ),
            ("call_c", Some("sql"), "1", true, Basis::Explicit, true),
        ]
    );
    assert!(
        crate::validate(Dialect::OpenAiResponses, CONVERSATION.as_bytes())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn outputs_after_the_last_model_item_are_new() {
    let body = br#"{"input":[
      {"type":"function_call","call_id":"c1","name":"ls","arguments":"{}"},
      {"type":"function_call_output","call_id":"c1","output":"{\"isError\":true,\"content\":[]}"}]}"#;
    let v = request_view_with(body, &never).unwrap();
    assert!(v.results[0].new);
    assert_eq!(
        v.results[0].verdict,
        toolwarden_core::Verdict::explicit(true)
    );
    assert!(!v.stream && v.model.is_none());
    // The model's stored items sent as references (the AI SDK with
    // `store: true`) end the turn as the items would: the earlier output
    // is history.
    let body = br#"{"input":[
      {"role":"user","content":"go"},
      {"type":"item_reference","id":"rs_1"},
      {"type":"function_call","call_id":"c1","name":"ls","arguments":"{}"},
      {"type":"function_call_output","call_id":"c1","output":"a"},
      {"type":"item_reference","id":"msg_1"},
      {"role":"user","content":"again"},
      {"type":"item_reference","id":"rs_2"},
      {"type":"function_call","call_id":"c2","name":"ls","arguments":"{}"},
      {"type":"function_call_output","call_id":"c2","output":"b"}]}"#;
    let v = request_view_with(body, &never).unwrap();
    let new: Vec<(&str, bool)> = v.results.iter().map(|r| (&*r.call_id, r.new)).collect();
    assert_eq!(new, [("c1", false), ("c2", true)]);
}

#[test]
fn string_input_has_no_calls_and_a_turn_hash() {
    let a = request_view_with(
        br#"{"model":"m","input":"hello","instructions":"x"}"#,
        &never,
    )
    .unwrap();
    let b = request_view_with(
        br#"{"input":"hello","instructions":"x","model":"n"}"#,
        &never,
    )
    .unwrap();
    let c = request_view_with(br#"{"input":"hello!","instructions":"x"}"#, &never).unwrap();
    assert!(a.calls.is_empty() && a.results.is_empty());
    assert_eq!(a.message_count, 1);
    assert_eq!(a.first_turn_hash, b.first_turn_hash);
    assert_ne!(a.first_turn_hash, c.first_turn_hash);
}

/// The first turn counts by role and text: the forms a conversation's
/// first message takes between its requests (a string `input`, a user
/// message, `input_text` parts with the `id` and `status` the
/// Conversations API lists it with) hash alike; another text, role or
/// instructions do not, and a first item that is no message counts by its
/// raw text.
#[test]
fn the_first_turn_hash_reads_a_message_by_role_and_text() {
    let hash = |body: &str| {
        request_view_with(body.as_bytes(), &never)
            .unwrap()
            .first_turn_hash
            .unwrap()
    };
    let same = [
        r#"{"instructions":"x","input":"Run it."}"#,
        r#"{"instructions":"x","input":[{"role":"user","content":"Run it."}]}"#,
        r#"{"instructions":"x","input":[{"content":"Run it.","role":"user"},{"role":"user","content":"more"}]}"#,
        r#"{"instructions":"x","input":[{"type":"message","id":"msg_1","status":"completed","role":"user",
            "content":[{"type":"input_text","text":"Run it."}]}]}"#,
        r#"{"instructions":"x","input":[{"type":"message","role":"user",
            "content":[{"type":"input_text","text":"Run \u0069t."}]}]}"#,
    ];
    let first = hash(same[0]);
    for body in same {
        assert_eq!(hash(body), first, "{body}");
    }
    let other = [
        r#"{"instructions":"y","input":"Run it."}"#,
        r#"{"instructions":"x","input":"Run it!"}"#,
        r#"{"instructions":"x","input":[{"role":"developer","content":"Run it."}]}"#,
        r#"{"instructions":"x","input":[{"role":"user","content":[{"type":"input_text","text":"Run"},
            {"type":"input_text","text":"it."}]}]}"#,
        r#"{"input":"Run it."}"#,
    ];
    for body in other {
        assert_ne!(hash(body), first, "{body}");
    }
    let output = |id: &str| {
        hash(&format!(
            r#"{{"input":[{{"type":"function_call_output","call_id":"{id}","output":"ok"}}]}}"#
        ))
    };
    assert_ne!(output("call_1"), output("call_2"));
    assert_eq!(output("call_1"), output("call_1"));
}

#[test]
fn the_first_turn_hash_reads_system_and_developer_items_and_the_first_turn_after_them() {
    // LangChain's `ChatOpenAI` on the Responses API sends its system prompt
    // as the first item: two conversations with one prompt are two
    // sessions, as they are on Chat Completions.
    let hash = |body: &str| {
        assert_eq!(
            crate::fast_path_agrees(Dialect::OpenAiResponses, body.as_bytes()),
            Ok(())
        );
        request_view_with(body.as_bytes(), &never)
            .unwrap()
            .first_turn_hash
            .unwrap()
    };
    let a = hash(
        r#"{"input":[{"role":"system","content":"Be brief."},{"role":"user","content":"Task A"}]}"#,
    );
    let b = hash(
        r#"{"input":[{"role":"system","content":"Be brief."},{"role":"user","content":"Task B"}]}"#,
    );
    assert_ne!(a, b);
    // The same conversation later: its items in another form, a call and
    // its output after the first turn.
    let later = hash(
        r#"{"input":[{"type":"message","role":"system","content":[{"type":"input_text","text":"Be brief."}]},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"Task A"}]},
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
    );
    assert_eq!(later, a);
    // Several leading messages all count; the instructions still do.
    let developer = hash(
        r#"{"input":[{"role":"developer","content":"Be brief."},{"role":"system","content":"Be kind."},
            {"role":"user","content":"Task A"}]}"#,
    );
    assert_ne!(developer, a);
    assert_ne!(
        hash(
            r#"{"instructions":"x","input":[{"role":"system","content":"Be brief."},{"role":"user","content":"Task A"}]}"#
        ),
        a
    );
    // Without leading system messages the hash is what it was: the
    // instructions and the first item.
    assert_eq!(
        hash(r#"{"input":[{"role":"user","content":"Task A"},{"role":"user","content":"more"}]}"#),
        hash(r#"{"input":"Task A"}"#)
    );
}

#[test]
fn previous_response_id_makes_unknown_outputs_server_side() {
    let body = br#"{"previous_response_id":"resp_1","input":[
      {"type":"function_call_output","call_id":"call_x","output":"ok"}]}"#;
    let v = request_view_with(body, &never).unwrap();
    assert_eq!(v.previous_response_id.as_deref(), Some("resp_1"));
    assert_eq!(v.results.len(), 1);
    assert_eq!(v.results[0].tool, None);
    assert!(v.results[0].new);
    assert!(
        crate::validate(Dialect::OpenAiResponses, body)
            .unwrap()
            .is_empty()
    );
    let r = crate::repair(Dialect::OpenAiResponses, body).unwrap();
    assert!(matches!(r.body, std::borrow::Cow::Borrowed(_)));
}

/// One output twice in a body: with its call on the provider's side (a
/// continuation), in the body, or nowhere. The API refuses the second
/// output for a call ("Duplicate item found with id …"): it is a defect,
/// `fix` mode takes it out, and it is no result of its own, so the call's
/// result counts once.
#[test]
fn an_output_given_twice_is_one_result() {
    let out = |id: &str, text: &str| {
        format!(r#"{{"type":"function_call_output","call_id":"{id}","output":"{text}"}}"#)
    };
    let call = |id: &str| {
        format!(r#"{{"type":"function_call","call_id":"{id}","name":"f","arguments":"{{}}"}}"#)
    };
    let user = r#"{"role":"user","content":"go"}"#;
    let (x1, y, x2) = (
        out("call_x", "ok"),
        out("call_y", "ok"),
        out("call_x", "again"),
    );
    let continued = format!(r#"{{"previous_response_id":"resp_1","input":[{x1},{y},{x2}]}}"#);
    let (cx, cy) = (call("call_x"), call("call_y"));
    let whole = format!(r#"{{"input":[{user},{cx},{cy},{x1},{y},{x2}]}}"#);
    for (body, at) in [(&continued, 2), (&whole, 5)] {
        let body = body.as_bytes();
        let defects = crate::validate(Dialect::OpenAiResponses, body).unwrap();
        let dups: Vec<(DefectKind, usize, &str)> = (defects.iter())
            .filter(|d| d.kind == DefectKind::DuplicateCallId)
            .map(|d| (d.kind, d.message_index, d.message.as_str()))
            .collect();
        assert_eq!(
            dups,
            [(
                DefectKind::DuplicateCallId,
                at,
                "Duplicate item found with id call_x. Remove duplicate items from your input and try again."
            )]
        );
        let r = crate::repair(Dialect::OpenAiResponses, body).unwrap();
        let kept: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        let outputs: Vec<&str> = (kept["input"].as_array().unwrap().iter())
            .filter_map(|i| i["output"].as_str())
            .collect();
        assert_eq!(outputs, ["ok", "ok"], "{}", String::from_utf8_lossy(body));
        let v = request_view_with(body, &never).unwrap();
        let new: Vec<(&str, bool)> = (v.results.iter()).map(|r| (&*r.call_id, r.new)).collect();
        assert_eq!(new, [("call_x", true), ("call_y", true), ("call_x", false)]);
    }
    // No call anywhere: each copy is refused as an orphan, the first alone
    // is read as a result.
    let orphans = format!(r#"{{"input":[{user},{x1},{x2}]}}"#);
    let defects = crate::validate(Dialect::OpenAiResponses, orphans.as_bytes()).unwrap();
    let kinds: Vec<(DefectKind, usize)> =
        defects.iter().map(|d| (d.kind, d.message_index)).collect();
    assert_eq!(
        kinds,
        [(DefectKind::OrphanResult, 1), (DefectKind::OrphanResult, 2)]
    );
    let v = request_view_with(orphans.as_bytes(), &never).unwrap();
    let new: Vec<bool> = v.results.iter().map(|r| r.new).collect();
    assert_eq!(new, [true, false]);
}

/// A request adding to a stored conversation (`conversation`, as the
/// OpenAI Agents SDK sends it) carries only its new items: outputs whose
/// calls the conversation holds are no defects and nothing to repair, and
/// the view names the conversation, given as its id or as `{"id": …}`.
#[test]
fn a_stored_conversation_makes_unknown_outputs_server_side() {
    for conversation in [
        r#""conv_1""#,
        r#"{"id":"conv_1"}"#,
        r#"{"x":[{}],"id":"conv_1"}"#,
    ] {
        let text = format!(
            r#"{{"conversation":{conversation},"input":[
      {{"type":"function_call_output","call_id":"call_x","output":"ok"}}]}}"#
        );
        let body = text.as_bytes();
        let v = request_view_with(body, &never).unwrap();
        assert_eq!(v.conversation.as_deref(), Some("conv_1"), "{text}");
        assert_eq!(v.previous_response_id, None);
        assert_eq!((v.results.len(), v.results[0].new), (1, true));
        assert!(
            crate::validate(Dialect::OpenAiResponses, body)
                .unwrap()
                .is_empty(),
            "{text}"
        );
        let r = crate::repair(Dialect::OpenAiResponses, body).unwrap();
        assert!(matches!(r.body, std::borrow::Cow::Borrowed(_)), "{text}");
    }
    // A value that names none is read all the same, as no conversation:
    // the output is an orphan again.
    for conversation in ["null", "7", r#"{"id":7}"#, "[]"] {
        let text = format!(
            r#"{{"conversation":{conversation},"input":[
      {{"type":"function_call_output","call_id":"call_x","output":"ok"}}]}}"#
        );
        let v = request_view_with(text.as_bytes(), &never).unwrap();
        assert_eq!(v.conversation, None, "{text}");
        assert_eq!(
            crate::validate(Dialect::OpenAiResponses, text.as_bytes())
                .unwrap()
                .len(),
            1,
            "{text}"
        );
    }
}

#[test]
fn validation_uses_openai_texts() {
    let body = br#"{"input":[
      {"role":"user","content":"hi"},
      {"type":"function_call","call_id":"call_a","name":"f","arguments":"{}"},
      {"type":"custom_tool_call","call_id":"call_c","name":"g","input":"x"},
      {"type":"function_call_output","call_id":"call_zz","output":"?"},
      {"type":"custom_tool_call_output","call_id":"call_yy","output":"?"},
      {"type":"function_call","id":"fc_9","call_id":"call_d","name":"f","arguments":"{}"},
      {"type":"function_call_output","call_id":"call_d","output":"1"},
      {"type":"function_call_output","call_id":"call_d","output":"2"}
    ]}"#;
    let d = crate::validate(Dialect::OpenAiResponses, body).unwrap();
    let got: Vec<(DefectKind, usize, &str)> = d
        .iter()
        .map(|d| (d.kind, d.message_index, d.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                DefectKind::MissingResult,
                1,
                "No tool output found for function call call_a."
            ),
            (
                DefectKind::MissingResult,
                2,
                "No tool output found for custom tool call call_c."
            ),
            (
                DefectKind::OrphanResult,
                3,
                "No tool call found for function call output with call_id call_zz."
            ),
            (
                DefectKind::OrphanResult,
                4,
                "No tool call found for custom tool call output with call_id call_yy."
            ),
            (
                DefectKind::DuplicateCallId,
                7,
                "Duplicate item found with id call_d. Remove duplicate items from your input and try again."
            ),
        ]
    );
}

pub(super) fn repaired(body: &str) -> (String, Vec<(ChangeKind, usize)>) {
    let r = crate::repair(Dialect::OpenAiResponses, body.as_bytes()).unwrap();
    let out = String::from_utf8(r.body.into_owned()).unwrap();
    assert!(
        crate::validate(Dialect::OpenAiResponses, out.as_bytes())
            .unwrap()
            .is_empty(),
        "repaired body still has defects: {out}"
    );
    (
        out,
        r.changes
            .iter()
            .map(|c| (c.kind, c.message_index))
            .collect(),
    )
}

#[test]
fn repair_inserts_an_output_after_the_run_of_calls() {
    let body = r#"{"x":1,"input":[{"role":"user","content":"hi"},
 {"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
 {"type":"function_call","call_id":"b","name":"f","arguments":"{}"},
 {"type":"function_call_output","call_id":"b","output":"ok"}] ,"tail":  true}"#;
    let (out, changes) = repaired(body);
    assert_eq!(changes, vec![(ChangeKind::InsertedResult, 1)]);
    let expected = format!(
        r#"{{"x":1,"input":[{{"role":"user","content":"hi"}},
 {{"type":"function_call","call_id":"a","name":"f","arguments":"{{}}"}},
 {{"type":"function_call","call_id":"b","name":"f","arguments":"{{}}"}},
 {{"type":"function_call_output","call_id":"a","output":{}}},
 {{"type":"function_call_output","call_id":"b","output":"ok"}}] ,"tail":  true}}"#,
        serde_json::to_string(&super::repair::no_result_text()).unwrap()
    );
    assert_eq!(out, expected);
}

#[test]
fn a_renamed_call_id_stays_within_64_characters() {
    // Two distinct calls reusing a 64-character id (the API's most).
    let long = format!("call_{}", "x".repeat(59));
    let body = serde_json::json!({"input": [
        {"type": "function_call", "call_id": long, "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": long, "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": long, "output": "f's"}]})
    .to_string();
    let (out, _) = repaired(&body);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let renamed = format!("call_{}_2", "x".repeat(57));
    assert_eq!(renamed.len(), 64);
    assert_eq!(v["input"][1]["call_id"], renamed.as_str(), "{out}");
    assert_eq!(v["input"][2]["call_id"], renamed.as_str(), "{out}");
    assert_eq!(v["input"][3]["call_id"], long.as_str(), "{out}");
    // Cut at a character's boundary, within 64 bytes.
    assert_eq!(
        super::repair::numbered(&"é".repeat(32), 2),
        "é".repeat(31) + "_2"
    );
}

#[test]
fn repair_moves_early_outputs_and_drops_orphans_and_duplicates() {
    let body = r#"{"input":[
 {"type":"function_call_output","call_id":"a","output":"early"},
 {"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
 {"type":"function_call_output","call_id":"zz","output":"orphan"},
 {"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
 {"type":"function_call_output","call_id":"a","output":"again"},
 {"type":"function_call","call_id":"b","name":"f","arguments":"{\"n\":1}"},
 {"type":"function_call","call_id":"b","name":"g","arguments":"{\"n\":2}"},
 {"type":"function_call_output","call_id":"b","output":"first b"}]}"#;
    let (out, changes) = repaired(body);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let items: Vec<String> = v["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{} {}",
                i["type"].as_str().unwrap(),
                i["call_id"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        items,
        vec![
            "function_call a",
            "function_call_output a",
            "function_call b",
            "function_call b_2",
            "function_call_output b_2",
            "function_call_output b",
        ]
    );
    assert_eq!(v["input"][1]["output"], "early");
    assert_eq!(
        changes,
        vec![
            (ChangeKind::MovedResult, 0),
            (ChangeKind::RemovedResult, 2),
            (ChangeKind::RemovedDuplicate, 3),
            (ChangeKind::RemovedDuplicate, 4),
            (ChangeKind::RenamedDuplicateId, 6),
            (ChangeKind::InsertedResult, 6),
        ]
    );
}

#[test]
fn repair_of_a_clean_body_is_borrowed() {
    let r = crate::repair(Dialect::OpenAiResponses, CONVERSATION.as_bytes()).unwrap();
    assert!(matches!(r.body, std::borrow::Cow::Borrowed(_)));
    assert!(r.changes.is_empty());
}

#[test]
fn bad_input_is_a_clear_error() {
    for body in [
        &b"{"[..],
        b"[]",
        b"{\"input\":5}",
        b"{\"input\":[{\"call_id\":3}]}",
        b"\xff",
    ] {
        assert!(crate::validate(Dialect::OpenAiResponses, body).is_err());
        assert!(request_view_with(body, &never).is_err());
        assert!(crate::repair(Dialect::OpenAiResponses, body).is_err());
    }
}

pub(super) fn stream(bytes: &[u8], split: usize) -> crate::ResponseView {
    let mut p = StreamParser::new(Dialect::OpenAiResponses);
    for chunk in bytes.chunks(split.max(1)) {
        p.feed(chunk);
    }
    p.finish()
}

#[test]
fn stream_reassembles_the_recorded_function_call() {
    for events in [true, false] {
        let bytes = sse_from_chunks("sse/vercel-ai__azure-tool-call.1.chunks.txt", events);
        for split in [bytes.len(), 1, 7, 64] {
            let v = stream(&bytes, split);
            assert_eq!(
                v.calls,
                vec![ToolCall {
                    id: "call_H5DxLSFnsGhiROnUiDHmgyc8".into(),
                    name: "weather".into(),
                    arguments: "{\"location\":\"San Francisco\"}".into(),
                }]
            );
            assert_eq!(
                v.id.as_deref(),
                Some("resp_04041325ab8ae30400698c519fb7fc81979972618138fc336d")
            );
            assert_eq!(v.model.as_deref(), Some("gpt-5.1"));
            assert_eq!(
                v.usage,
                Usage {
                    input_tokens: Some(45),
                    output_tokens: Some(24)
                }
            );
            assert_eq!(v.stop_reason.as_deref(), Some("completed"));
            assert_eq!(v.error, None);
        }
    }
}

#[test]
fn stream_reassembles_the_recorded_custom_tool_call() {
    let bytes = sse_from_chunks("sse/vercel-ai__openai-custom-tool.1.chunks.txt", true);
    let v = stream(&bytes, 5);
    assert_eq!(
        v.calls,
        vec![ToolCall {
            id: "call_custom_sql_001".into(),
            name: "write_sql".into(),
            arguments: "SELECT * FROM users WHERE age > 25".into(),
        }]
    );
    assert_eq!(
        v.usage,
        Usage {
            input_tokens: Some(50),
            output_tokens: Some(20)
        }
    );
}

#[test]
fn a_stream_cut_before_done_keeps_the_deltas() {
    let bytes = sse_from_chunks("sse/vercel-ai__azure-tool-call.1.chunks.txt", true);
    let text = String::from_utf8(bytes).unwrap();
    let cut = text
        .find("event: response.function_call_arguments.done")
        .unwrap();
    let v = stream(&text.as_bytes()[..cut], 3);
    assert_eq!(v.calls[0].arguments, "{\"location\":\"San Francisco\"}");
    assert_eq!(v.stop_reason, None);
}

#[test]
fn stream_errors_are_reported() {
    let failed = b"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n";
    let v = stream(failed, 4);
    assert_eq!(v.error.as_deref(), Some("server_error: boom"));
    assert_eq!(v.stop_reason.as_deref(), Some("failed"));
    let err = b"event: error\ndata: {\"type\":\"error\",\"code\":null,\"message\":\"rate limited\",\"param\":null}\n\n";
    assert_eq!(stream(err, 4).error.as_deref(), Some("rate limited"));
    assert_eq!(stream(err, 4).error_status, None);
    // Over a WebSocket the error is wrapped, with its HTTP status.
    let wrapped = b"data: {\"type\":\"error\",\"status\":429,\"error\":{\"type\":\"rate_limit_error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\"},\"headers\":{}}\n\n";
    let v = stream(wrapped, 5);
    assert_eq!(v.error.as_deref(), Some("rate_limit_exceeded: Slow down"));
    assert_eq!(v.error_status, Some(429));
    let typed = b"data: {\"type\":\"error\",\"status\":400,\"error\":{\"type\":\"invalid_request_error\",\"message\":\"No tool output\"}}\n\n";
    let v = stream(typed, 3);
    assert_eq!(
        v.error.as_deref(),
        Some("invalid_request_error: No tool output")
    );
    assert_eq!(v.error_status, Some(400));
    // `error` as a plain message, or as something else: still an error.
    let text = b"data: {\"type\":\"error\",\"error\":\"boom\"}\n\n";
    assert_eq!(stream(text, 64).error.as_deref(), Some("boom"));
    let odd = b"data: {\"type\":\"error\",\"error\":[1]}\n\n";
    assert_eq!(stream(odd, 64).error.as_deref(), Some("error"));
    // A status that is not an error's is not taken.
    let odd = b"data: {\"type\":\"error\",\"status\":200,\"message\":\"m\"}\n\n";
    assert_eq!(stream(odd, 64).error_status, None);
}

#[test]
fn response_view_reads_a_body() {
    let body = br#"{"id":"resp_1","object":"response","status":"completed","model":"gpt-5",
      "output":[{"type":"reasoning","id":"rs"},{"type":"message","role":"assistant","content":[]},
        {"type":"function_call","id":"fc","call_id":"call_1","name":"f","arguments":"{\"a\":1}"},
        {"type":"custom_tool_call","id":"ct","call_id":"call_2","name":"g","input":"raw"}],
      "usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7},"error":null}"#;
    let v = crate::response_view(Dialect::OpenAiResponses, body).unwrap();
    assert_eq!(v.calls.len(), 2);
    assert_eq!(v.calls[1].arguments, "raw");
    assert_eq!(
        v.usage,
        Usage {
            input_tokens: Some(3),
            output_tokens: Some(4)
        }
    );
    assert_eq!(v.stop_reason.as_deref(), Some("completed"));
    assert_eq!(v.id.as_deref(), Some("resp_1"));
}

#[test]
fn render_frames_failures_without_a_flag() {
    let ok = ToolOutcome::success("call_1", "f", serde_json::json!({"a": 1}));
    let failure = ToolFailure {
        kind: ErrorKind::Timeout,
        code: None,
        technical_message: "deadline 5s".into(),
        model_message: "The tool timed out.".into(),
        retryable: true,
        fatal: false,
    };
    let bad = ToolOutcome::failure("call_2", "f", failure);
    let out = crate::render_results(Dialect::OpenAiResponses, &[ok, bad]);
    assert_eq!(
        out,
        vec![
            serde_json::json!({"type":"function_call_output","call_id":"call_1","output":"{\"a\":1}"}),
            serde_json::json!({"type":"function_call_output","call_id":"call_2",
                "output":"Tool error (timeout): The tool timed out."}),
        ]
    );
}

/// A turn of the built-in client tools (`shell`, `apply_patch`,
/// `local_shell`, `computer`), in the shapes the OpenAI Agents SDK sends.
const BUILTINS: &str = r#"{"model":"gpt-5.1","input":[
  {"role":"user","content":"fix the build"},
  {"type":"shell_call","id":"sh_1","call_id":"call_sh1","status":"completed","action":{"commands":["ls -la"],"timeout_ms":1000}},
  {"type":"shell_call","id":"sh_2","call_id":"call_sh2","status":"completed","action":{"commands":["make"]}},
  {"type":"shell_call","id":"sh_3","call_id":"call_sh3","status":"completed","action":{"commands":["sleep 99"]}},
  {"type":"apply_patch_call","id":"ap_1","call_id":"call_ap1","status":"completed","operation":{"type":"update_file","path":"a.py","diff":"@@\n-x\n+y"}},
  {"type":"apply_patch_call","id":"ap_2","call_id":"call_ap2","status":"completed","operation":{"type":"delete_file","path":"b.py"}},
  {"type":"local_shell_call","id":"ls_1","call_id":"call_ls1","status":"completed","action":{"type":"exec","command":["pwd"],"env":{}}},
  {"type":"computer_call","id":"cu_1","call_id":"call_cu1","status":"completed","action":{"type":"screenshot"},"pending_safety_checks":[]},
  {"type":"shell_call_output","call_id":"call_sh1","output":[{"stdout":"a.py\nb.py","stderr":"","outcome":{"type":"exit","exit_code":0}}],"status":"completed"},
  {"type":"shell_call_output","call_id":"call_sh2","output":[{"stdout":"","stderr":"make: *** No rule to make target","outcome":{"type":"exit","exit_code":2}}],"status":"completed"},
  {"type":"shell_call_output","call_id":"call_sh3","output":[{"stdout":"","stderr":"","outcome":{"type":"timeout"}}]},
  {"type":"apply_patch_call_output","call_id":"call_ap1","status":"completed","output":"Updated a.py"},
  {"type":"apply_patch_call_output","call_id":"call_ap2","status":"failed","output":"FAIL b.py not found"},
  {"type":"local_shell_call_output","call_id":"call_ls1","output":"{\"stdout\":\"/work\"}"},
  {"type":"computer_call_output","call_id":"call_cu1","output":{"type":"computer_screenshot","image_url":"data:image/png;base64,AAAA"}}
]}"#;

#[test]
fn builtin_tool_calls_and_outputs_are_read() {
    let v = request_view_with(BUILTINS.as_bytes(), &starts_with_fail).unwrap();
    let calls: Vec<(&str, &str, &str)> = v
        .calls
        .iter()
        .map(|c| (&*c.id, &*c.name, &*c.arguments))
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "call_sh1",
                "shell",
                r#"{"commands":["ls -la"],"timeout_ms":1000}"#
            ),
            ("call_sh2", "shell", r#"{"commands":["make"]}"#),
            ("call_sh3", "shell", r#"{"commands":["sleep 99"]}"#),
            (
                "call_ap1",
                "apply_patch",
                r#"{"type":"update_file","path":"a.py","diff":"@@\n-x\n+y"}"#
            ),
            (
                "call_ap2",
                "apply_patch",
                r#"{"type":"delete_file","path":"b.py"}"#
            ),
            (
                "call_ls1",
                "local_shell",
                r#"{"type":"exec","command":["pwd"],"env":{}}"#
            ),
            ("call_cu1", "computer", r#"{"type":"screenshot"}"#),
        ]
    );
    let results: Vec<_> = (result_rows(&v).into_iter())
        .map(|(id, tool, content, failed, basis, _new)| (id, tool, content, failed, basis))
        .collect();
    assert_eq!(
        results,
        vec![
            (
                "call_sh1",
                Some("shell"),
                "a.py\nb.py",
                false,
                Basis::Explicit
            ),
            (
                "call_sh2",
                Some("shell"),
                "make: *** No rule to make target",
                true,
                Basis::Explicit
            ),
            ("call_sh3", Some("shell"), "", true, Basis::Explicit),
            (
                "call_ap1",
                Some("apply_patch"),
                "Updated a.py",
                false,
                Basis::Explicit
            ),
            (
                "call_ap2",
                Some("apply_patch"),
                "FAIL b.py not found",
                true,
                Basis::Explicit
            ),
            (
                "call_ls1",
                Some("local_shell"),
                "{\"stdout\":\"/work\"}",
                false,
                Basis::None
            ),
            ("call_cu1", Some("computer"), "", false, Basis::None),
        ]
    );
    assert!(v.results.iter().all(|r| r.new));
    assert!(
        crate::validate(Dialect::OpenAiResponses, BUILTINS.as_bytes())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        super::view::fast_then_serde(BUILTINS.as_bytes()),
        Some(Ok(()))
    );
}

/// A `local_shell_call_output` as the API's type writes it names its call
/// by `id` (the Agents SDK writes `call_id`); any other output's `id` is
/// its own item id and answers nothing.
#[test]
fn a_local_shell_output_names_its_call_by_id() {
    let body = r#"{"input":[{"role":"user","content":"where am I"},
 {"type":"local_shell_call","id":"ls_1","call_id":"call_ls1","status":"completed","action":{"type":"exec","command":["pwd"]}},
 {"type":"local_shell_call_output","id":"call_ls1","output":"{\"output\":\"/work\"}"}]}"#;
    let v = request_view_with(body.as_bytes(), &never).unwrap();
    let results: Vec<_> = (result_rows(&v).into_iter())
        .map(|(id, tool, ..)| (id, tool))
        .collect();
    assert_eq!(results, vec![("call_ls1", Some("local_shell"))]);
    assert!(
        crate::validate(Dialect::OpenAiResponses, body.as_bytes())
            .unwrap()
            .is_empty()
    );
    assert_eq!(super::view::fast_then_serde(body.as_bytes()), Some(Ok(())));

    let other = r#"{"input":[{"role":"user","content":"go"},
 {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
 {"type":"function_call_output","id":"c1","output":"x"}]}"#;
    let d = crate::validate(Dialect::OpenAiResponses, other.as_bytes()).unwrap();
    assert!(
        d.iter().any(|d| d.call_ids == ["c1"]),
        "a function_call_output's own id answers nothing: {d:?}"
    );
}

#[test]
fn builtin_calls_without_outputs_are_defects_and_repaired_in_their_own_shapes() {
    let body = r#"{"input":[{"role":"user","content":"go"},
 {"type":"shell_call","call_id":"s","action":{"commands":["ls"]}},
 {"type":"apply_patch_call","call_id":"p","operation":{"type":"create_file","path":"x","diff":"+x"}},
 {"type":"local_shell_call","call_id":"l","action":{"type":"exec","command":["ls"]}},
 {"type":"shell_call_output","call_id":"zz","output":[]}]}"#;
    let d = crate::validate(Dialect::OpenAiResponses, body.as_bytes()).unwrap();
    let got: Vec<(DefectKind, &str)> = d.iter().map(|d| (d.kind, d.message.as_str())).collect();
    assert_eq!(
        got,
        vec![
            (
                DefectKind::MissingResult,
                "No tool output found for shell call s."
            ),
            (
                DefectKind::MissingResult,
                "No tool output found for apply patch call p."
            ),
            (
                DefectKind::MissingResult,
                "No tool output found for local shell call l."
            ),
            (
                DefectKind::OrphanResult,
                "No tool call found for shell call output with call_id zz."
            ),
        ]
    );
    let (out, changes) = repaired(body);
    assert_eq!(
        changes,
        vec![
            (ChangeKind::InsertedResult, 1),
            (ChangeKind::InsertedResult, 2),
            (ChangeKind::InsertedResult, 3),
            (ChangeKind::RemovedResult, 4),
        ]
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let items = v["input"].as_array().unwrap();
    let text = super::repair::no_result_text();
    assert_eq!(
        items[4],
        serde_json::json!({"type":"shell_call_output","call_id":"s","output":[
            {"stdout":"","stderr":text,"outcome":{"type":"exit","exit_code":1}}]})
    );
    assert_eq!(
        items[5],
        serde_json::json!({"type":"apply_patch_call_output","call_id":"p","status":"failed","output":text})
    );
    assert_eq!(
        items[6],
        serde_json::json!({"type":"local_shell_call_output","call_id":"l","output":text})
    );
    assert_eq!(items.len(), 7);
    // The shell and patch outputs read as the failures they report, by
    // their own flags (the local shell's has none: the detector's).
    let v = request_view_with(out.as_bytes(), &never).unwrap();
    let flagged: Vec<Verdict> = v.results.iter().map(|r| r.verdict).collect();
    assert_eq!(
        flagged,
        vec![
            Verdict::explicit(true),
            Verdict::explicit(true),
            Verdict::NONE
        ]
    );
}

#[test]
fn a_computer_call_without_output_gets_a_blank_incomplete_screenshot() {
    let body = r#"{"input":[{"role":"user","content":"go"},
 {"type":"computer_call","call_id":"c","action":{"type":"click","x":1,"y":2}}]}"#;
    let d = crate::validate(Dialect::OpenAiResponses, body.as_bytes()).unwrap();
    assert_eq!(d[0].message, "No tool output found for computer call c.");
    let (out, changes) = repaired(body);
    assert_eq!(changes, vec![(ChangeKind::InsertedResult, 1)]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let output = &v["input"][2];
    assert_eq!(output["type"], "computer_call_output");
    assert_eq!(output["status"], "incomplete");
    let url = output["output"]["image_url"].as_str().unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );
    // Read back: a failure, by its status.
    let v = request_view_with(out.as_bytes(), &never).unwrap();
    assert_eq!(v.results[0].verdict, Verdict::explicit(true));
    assert_eq!(v.results[0].tool.as_deref(), Some("computer"));
}

#[test]
fn builtin_calls_are_read_from_bodies_and_streams() {
    let body = br#"{"id":"resp_b","object":"response","status":"completed","model":"gpt-5.1",
      "output":[{"type":"web_search_call","id":"ws","status":"completed","action":{"type":"search"}},
        {"type":"shell_call","id":"sh","call_id":"call_s","status":"in_progress","action":{"commands":["ls"]}},
        {"type":"apply_patch_call","id":"ap","call_id":"call_p","status":"in_progress","operation":{"type":"delete_file","path":"x"}}]}"#;
    let v = crate::response_view(Dialect::OpenAiResponses, body).unwrap();
    let calls: Vec<(&str, &str, &str)> = v
        .calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    let expected = vec![
        ("call_s", "shell", r#"{"commands":["ls"]}"#),
        (
            "call_p",
            "apply_patch",
            r#"{"type":"delete_file","path":"x"}"#,
        ),
    ];
    assert_eq!(calls, expected);
    let events = [
        r#"{"type":"response.created","response":{"id":"resp_b","model":"gpt-5.1","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"shell_call","id":"sh","call_id":"call_s","status":"in_progress","action":{"commands":[]}}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"shell_call","id":"sh","call_id":"call_s","status":"in_progress","action":{"commands":["ls"]}}}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"apply_patch_call","id":"ap","call_id":"call_p","status":"in_progress","operation":{"type":"delete_file","path":"x"}}}"#,
        r#"{"type":"response.completed","response":{"id":"resp_b","model":"gpt-5.1","status":"completed"}}"#,
    ];
    let sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    for split in [sse.len(), 1, 13] {
        let v = stream(sse.as_bytes(), split);
        let calls: Vec<(&str, &str, &str)> = v
            .calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(calls, expected, "split {split}");
        assert!(!v.ended_early);
    }
}

/// The GA computer tool writes a call's arguments as batched `actions`
/// (the preview's one `action` absent): read from a body, a stream and a
/// request's history alike (they were empty), so the turn's fingerprint
/// is the same on both sides.
#[test]
fn a_computer_calls_batched_actions_are_its_arguments() {
    let actions = r#"[{"type":"click","button":"left","x":1,"y":2},{"type":"type","text":"hi"}]"#;
    let item = format!(
        r#"{{"type":"computer_call","id":"cu","call_id":"call_c","status":"completed","actions":{actions},"pending_safety_checks":[]}}"#
    );
    let body =
        format!(r#"{{"id":"r","object":"response","status":"completed","output":[{item}]}}"#);
    let v = crate::response_view(Dialect::OpenAiResponses, body.as_bytes()).unwrap();
    assert_eq!(
        (v.calls[0].name.as_str(), v.calls[0].arguments.as_str()),
        ("computer", actions)
    );
    let sse = format!(
        "data: {{\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{item}}}\n\n"
    );
    for split in [sse.len(), 7] {
        let v = stream(sse.as_bytes(), split);
        assert_eq!(v.calls[0].arguments, actions, "split {split}");
    }
    let request = format!(
        r#"{{"input":[{{"role":"user","content":"go"}},{item},{{"type":"computer_call_output","call_id":"call_c","output":{{"type":"computer_screenshot","image_url":"data:image/png;base64,AA"}}}}]}}"#
    );
    let view = request_view_with(request.as_bytes(), &never).unwrap();
    assert_eq!(view.calls[0].arguments, actions);
    let defects = crate::validate(Dialect::OpenAiResponses, request.as_bytes()).unwrap();
    assert!(defects.is_empty(), "{defects:?}");
}

/// The multi-agent beta (`responses_multi_agent=v1`) tags each event with
/// the agent that owns it (openai-python `BetaResponseOutputItemAddedEvent
/// .agent`, "The agent that owns this multi-agent streaming event"); the
/// spec does not say that `output_index` is unique across agents. Two
/// calls at one output index, their events interleaved, are told apart by
/// their item ids: before, an event went to the latest call of its item
/// id or its index, so the sub-agent's call took the main agent's
/// arguments and `call_id`, and the main call was lost.
#[test]
fn calls_of_two_agents_at_one_output_index_stay_apart() {
    use serde_json::json;
    let agent = |name: &str| json!({"agent_name": name});
    let call = |id: &str, call_id: &str, args: &str, status: &str| {
        json!({"type": "function_call", "id": id, "call_id": call_id, "name": "lookup",
            "arguments": args, "status": status})
    };
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "agent": agent("main"),
            "item": call("fc_main", "call_main", "", "in_progress")}),
        json!({"type": "response.output_item.added", "output_index": 0, "agent": agent("researcher"),
            "item": call("fc_sub", "call_sub", "", "in_progress")}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0,
            "item_id": "fc_main", "agent": agent("main"), "delta": "{\"q\":"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0,
            "item_id": "fc_sub", "agent": agent("researcher"), "delta": "{\"q\":\"sub\"}"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0,
            "item_id": "fc_main", "agent": agent("main"), "delta": "\"main\"}"}),
        json!({"type": "response.output_item.done", "output_index": 0, "agent": agent("main"),
            "item": call("fc_main", "call_main", "{\"q\":\"main\"}", "completed")}),
        json!({"type": "response.output_item.done", "output_index": 0, "agent": agent("researcher"),
            "item": call("fc_sub", "call_sub", "{\"q\":\"sub\"}", "completed")}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}),
    ];
    let bytes: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    for split in [bytes.len(), 1, 13] {
        let v = stream(bytes.as_bytes(), split);
        let calls: Vec<(&str, &str)> = (v.calls.iter())
            .map(|c| (c.id.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_main", "{\"q\":\"main\"}"),
                ("call_sub", "{\"q\":\"sub\"}")
            ],
            "split {split}"
        );
    }
    // Without the final items, from the deltas alone.
    let deltas: String = events[..6]
        .iter()
        .map(|e| format!("data: {e}\n\n"))
        .collect();
    let mut p = StreamParser::new(Dialect::OpenAiResponses);
    p.feed(deltas.as_bytes());
    let v = p.view_so_far();
    let args: Vec<&str> = v.calls.iter().map(|c| c.arguments.as_str()).collect();
    assert_eq!(args, ["{\"q\":\"main\"}", "{\"q\":\"sub\"}"]);
}
