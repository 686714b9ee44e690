//! Tests of the Gemini dialect: hand-written bodies and the corpus's
//! recorded `partialArgs` stream, as SSE and as a streamed JSON array.

use std::borrow::Cow;

use toolwarden_core::{Basis, ErrorKind, ToolCall, ToolFailure, ToolOutcome, Verdict};

use crate::testutil::{EagerView, eager_view};

fn request_view_with<'a>(
    b: &'a [u8],
    judge: crate::text::Judge<'_>,
) -> Result<EagerView<'a>, crate::WireError> {
    eager_view(crate::Dialect::Gemini, b, judge)
}
use crate::{ChangeKind, DefectKind, Dialect, StreamParser, Usage, testutil::fixture};

fn never(_: &str) -> Verdict {
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
  "systemInstruction": {"parts": [{"text": "Be brief."}]},
  "contents": [
    {"role": "user", "parts": [{"text": "weather?"}]},
    {"role": "model", "parts": [
      {"functionCall": {"name": "weather", "args": {"city": "SF"}}},
      {"functionCall": {"name": "time", "args": {}}},
      {"functionCall": {"name": "weather", "args": {"city": "NYC"}}, "thoughtSignature": "abc"}
    ]},
    {"role": "user", "parts": [
      {"functionResponse": {"name": "time", "response": {"output": "noon"}}},
      {"functionResponse": {"name": "weather", "response": {"output": "18C"}}},
      {"functionResponse": {"name": "weather", "response": {"error": {"message": "no station"}}}}
    ]},
    {"role": "model", "parts": [
      {"functionCall": {"name": "lookup", "id": "fc-9", "args": {"q": "x"}}}
    ]},
    {"role": "user", "parts": [
      {"functionResponse": {"name": "lookup", "id": "fc-9", "response": {"result": "FAIL: nothing"}}}
    ]}
  ]
}"#;

#[test]
fn request_view_pairs_by_order_and_name() {
    let v = request_view_with(CONVERSATION.as_bytes(), &starts_with_fail).unwrap();
    assert_eq!(v.model, None);
    assert_eq!(v.message_count, 5);
    let calls: Vec<(&str, &str, &str, usize)> = v
        .calls
        .iter()
        .map(|c| (&*c.id, &*c.name, &*c.arguments, c.message_index))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("weather#0", "weather", "{\"city\": \"SF\"}", 1),
            ("time#0", "time", "{}", 1),
            ("weather#1", "weather", "{\"city\": \"NYC\"}", 1),
            ("fc-9", "lookup", "{\"q\": \"x\"}", 3),
        ]
    );
    let results: Vec<_> = v
        .results
        .iter()
        .map(|r| {
            (
                &*r.call_id,
                r.tool.as_deref(),
                &*r.content,
                r.verdict.failed,
                r.verdict.basis,
                r.new,
                r.message_index,
            )
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("time#0", Some("time"), "noon", false, Basis::None, false, 2),
            (
                "weather#0",
                Some("weather"),
                "18C",
                false,
                Basis::None,
                false,
                2
            ),
            (
                "weather#1",
                Some("weather"),
                "no station",
                true,
                Basis::Explicit,
                false,
                2
            ),
            (
                "fc-9",
                Some("lookup"),
                "FAIL: nothing",
                true,
                Basis::Heuristic,
                true,
                4
            ),
        ]
    );
    assert!(matches!(v.calls[3].id, Cow::Borrowed(_)));
    assert!(
        crate::validate(Dialect::Gemini, CONVERSATION.as_bytes())
            .unwrap()
            .is_empty()
    );
}

/// A response whose `output` is a list of text blocks (Strands Agents'
/// tool results, MCP's content) is read as their text; a list of data is
/// not.
#[test]
fn an_output_of_text_blocks_is_read_as_text() {
    for (output, text, failed) in [
        (
            r#"[{"text": "Error: FileNotFoundError - [Errno 2] No such file or directory: 'a'"}]"#,
            "Error: FileNotFoundError - [Errno 2] No such file or directory: 'a'",
            true,
        ),
        (
            r#"[{"type": "text", "text": "Unknown tool: x"}, {"text": "more"}]"#,
            "Unknown tool: x\nmore",
            true,
        ),
        (r#"[{"text": "e2e-ok\n"}]"#, "e2e-ok\n", false),
        (
            r#"[{"text": "Error: a", "score": 1}]"#,
            r#"[{"text": "Error: a", "score": 1}]"#,
            false,
        ),
        (
            r#"[{"type": "image", "text": "Error: a"}]"#,
            r#"[{"type": "image", "text": "Error: a"}]"#,
            false,
        ),
        ("[]", "[]", false),
    ] {
        let body = format!(
            r#"{{"contents": [
              {{"role": "user", "parts": [{{"text": "go"}}]}},
              {{"role": "model", "parts": [{{"functionCall": {{"name": "f", "id": "a1", "args": {{}}}}}}]}},
              {{"role": "user", "parts": [{{"functionResponse": {{"name": "f", "id": "a1",
                "response": {{"output": {output}}}}}}}]}}
            ]}}"#
        );
        let detector = crate::detect::Detector::default();
        let judge = |text: &str| detector.verdict(text);
        let v = request_view_with(body.as_bytes(), &judge).unwrap();
        let r = &v.results[0];
        assert_eq!(&*r.content, text, "{output}");
        assert_eq!(r.verdict.failed, failed, "{output}");
    }
}

/// An `error` that states nothing (`""`, `false`, `[]`, `{}`, `"none"`, a
/// number) is not an explicit failure, as an `error` key is read in the
/// other dialects; one with content is.
#[test]
fn an_empty_error_field_is_not_a_failure() {
    for (error, failed) in [
        (r#""""#, false),
        ("false", false),
        ("[]", false),
        ("{}", false),
        (r#""None""#, false),
        ("0", false),
        ("null", false),
        (r#""disk full""#, true),
        ("true", true),
        (r#"{"message": "no station"}"#, true),
        (r#"["x"]"#, true),
    ] {
        let body = format!(
            r#"{{"contents": [
              {{"role": "user", "parts": [{{"text": "go"}}]}},
              {{"role": "model", "parts": [{{"functionCall": {{"name": "f", "id": "a1", "args": {{}}}}}}]}},
              {{"role": "user", "parts": [{{"functionResponse": {{"name": "f", "id": "a1",
                "response": {{"result": "ok", "error": {error}}}}}}}]}}
            ]}}"#
        );
        let v = request_view_with(body.as_bytes(), &never).unwrap();
        let r = &v.results[0];
        assert_eq!(r.verdict.failed, failed, "{error}");
        let basis = if failed { Basis::Explicit } else { Basis::None };
        assert_eq!(r.verdict.basis, basis, "{error}");
        if !failed {
            assert_eq!(&*r.content, "ok", "{error}");
        }
    }
}

#[test]
fn the_turn_hash_covers_system_and_first_content_only() {
    let a = br#"{"system_instruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let b = br#"{"system_instruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"yo"}]}]}"#;
    let c = br#"{"system_instruction":{"parts":[{"text":"t"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let h = |b: &[u8]| request_view_with(b, &never).unwrap().first_turn_hash;
    assert!(h(a).is_some());
    assert_eq!(h(a), h(b));
    assert_ne!(h(a), h(c));
}

/// AgentScope's Gemini formatter: the system prompt as the opening user
/// content, the user's message next, the current time in a content of
/// reminders alone; later requests add the model's calls and the results.
fn agentscope_turn(prompt: &str, later: &[&str]) -> String {
    let mut contents = vec![
        r#"{"parts":[{"text":"Run the checks."}],"role":"user"}"#.to_owned(),
        format!(r#"{{"parts":[{{"text":"{prompt}"}}],"role":"user"}}"#),
        r#"{"parts":[{"text":"<system-reminder>\n<current-time>2026-12-08T02:11:11</current-time>\n</system-reminder>"}],"role":"user"}"#.to_owned(),
    ];
    contents.extend(later.iter().map(|c| (*c).to_owned()));
    format!(r#"{{"contents":[{}]}}"#, contents.join(","))
}

#[test]
fn the_turn_hash_covers_every_client_content_before_the_models_first() {
    let h = |b: &str| {
        request_view_with(b.as_bytes(), &never)
            .unwrap()
            .first_turn_hash
    };
    let one = agentscope_turn("task one", &[]);
    let other = agentscope_turn("task two", &[]);
    assert!(h(&one).is_some());
    // The same system prompt first, different messages after it: two
    // conversations, not one.
    assert_ne!(h(&one), h(&other));
    // Stable as the conversation grows.
    let grown = agentscope_turn("task one", &[FC, TWO_RESPONSES, USER]);
    assert_eq!(h(&one), h(&grown));
    // A content of reminders alone is not part of the opening: a later
    // request without the time opens the same.
    let no_time = body(&[
        r#"{"parts":[{"text":"Run the checks."}],"role":"user"}"#,
        r#"{"parts":[{"text":"task one"}],"role":"user"}"#,
        FC,
        TWO_RESPONSES,
    ]);
    assert_eq!(h(&one), h(&no_time));
    // One client content before the model's: the first content alone, as
    // before (the system instruction and its raw text).
    let single = body(&[USER, MODEL, USER]);
    let first = USER.as_bytes();
    assert_eq!(h(&single), Some(crate::splice::fnv1a(&[b"", first])));
    let reminder_after = body(&[
        USER,
        r#"{"role":"user","parts":[{"text":"<system-reminder>t</system-reminder>"}]}"#,
    ]);
    assert_eq!(h(&single), h(&reminder_after));
}

fn kinds(body: &str) -> Vec<(DefectKind, usize, String)> {
    crate::validate(Dialect::Gemini, body.as_bytes())
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index, d.message))
        .collect()
}

const FC: &str = r#"{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}},{"functionCall":{"name":"g","args":{}}}]}"#;
const USER: &str = r#"{"role":"user","parts":[{"text":"hi"}]}"#;
const MODEL: &str = r#"{"role":"model","parts":[{"text":"ok"}]}"#;
const ONE_RESPONSE: &str =
    r#"{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":1}}}]}"#;
const TWO_RESPONSES: &str = r#"{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":1}}},{"functionResponse":{"name":"g","response":{"output":2}}}]}"#;

fn body(contents: &[&str]) -> String {
    format!("{{\"contents\": [\n  {}\n]}}", contents.join(",\n  "))
}

#[test]
fn validation_uses_geminis_texts() {
    let count = super::turns::COUNT_TEXT.to_owned();
    let after_call = super::turns::RESPONSE_TURN_TEXT.to_owned();
    let call_turn = super::turns::CALL_TURN_TEXT.to_owned();
    assert_eq!(
        kinds(&body(&[USER, FC, ONE_RESPONSE])),
        vec![(DefectKind::CountMismatch, 2, count.clone())]
    );
    assert_eq!(
        kinds(&body(&[USER, FC, USER])),
        vec![(DefectKind::MissingResult, 1, count.clone())]
    );
    assert_eq!(
        kinds(&body(&[USER, FC])),
        vec![(DefectKind::MissingResult, 1, count.clone())]
    );
    assert_eq!(
        kinds(&body(&[USER, MODEL, ONE_RESPONSE])),
        vec![(DefectKind::OrphanResult, 2, after_call)]
    );
    assert_eq!(
        kinds(&body(&[FC, TWO_RESPONSES])),
        vec![(DefectKind::MisplacedCallTurn, 0, call_turn.clone())]
    );
    assert_eq!(
        kinds(&body(&[USER, FC, FC, TWO_RESPONSES])),
        vec![(DefectKind::MissingResult, 1, call_turn.clone())]
    );
    assert_eq!(
        kinds(&body(&[USER, MODEL, FC, TWO_RESPONSES])),
        vec![(DefectKind::MisplacedCallTurn, 2, call_turn)]
    );
    assert!(kinds(&body(&[USER, FC, TWO_RESPONSES, MODEL, USER])).is_empty());
}

fn repaired(body: &str) -> (String, Vec<(ChangeKind, usize)>) {
    let r = crate::repair(Dialect::Gemini, body.as_bytes()).unwrap();
    let out = String::from_utf8(r.body.into_owned()).unwrap();
    assert!(
        crate::validate(Dialect::Gemini, out.as_bytes())
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

fn roles_and_parts(out: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    v["contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let parts: Vec<String> = c["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    if let Some(r) = p.get("functionResponse") {
                        let kind = if r["response"].get("error").is_some() {
                            "err"
                        } else {
                            "ok"
                        };
                        format!("resp:{}:{kind}", r["name"].as_str().unwrap())
                    } else if let Some(c) = p.get("functionCall") {
                        format!("call:{}", c["name"].as_str().unwrap())
                    } else {
                        "text".to_owned()
                    }
                })
                .collect();
            format!("{}[{}]", c["role"].as_str().unwrap_or("?"), parts.join(","))
        })
        .collect()
}

#[test]
fn repair_completes_a_short_response_turn_in_place() {
    let input = body(&[USER, FC, ONE_RESPONSE, MODEL]);
    let (out, changes) = repaired(&input);
    assert_eq!(
        roles_and_parts(&out),
        vec![
            "user[text]",
            "model[call:f,call:g]",
            "user[resp:f:ok,resp:g:err]",
            "model[text]"
        ]
    );
    assert_eq!(changes, vec![(ChangeKind::InsertedResult, 1)]);
    // Untouched turns keep their bytes and separators.
    assert!(out.starts_with(&format!("{{\"contents\": [\n  {USER},\n  {FC},\n  ")));
    assert!(out.ends_with(&format!(",\n  {MODEL}\n]}}")));
}

#[test]
fn repair_answers_calls_followed_by_no_response_turn() {
    let (out, changes) = repaired(&body(&[USER, FC, USER]));
    assert_eq!(
        roles_and_parts(&out),
        vec![
            "user[text]",
            "model[call:f,call:g]",
            "user[resp:f:err,resp:g:err,text]"
        ]
    );
    assert_eq!(
        changes,
        vec![
            (ChangeKind::InsertedResult, 1),
            (ChangeKind::InsertedResult, 1)
        ]
    );
    let (out, _) = repaired(&body(&[USER, FC]));
    assert_eq!(
        roles_and_parts(&out),
        vec![
            "user[text]",
            "model[call:f,call:g]",
            "user[resp:f:err,resp:g:err]"
        ]
    );
    let (out, _) = repaired(&body(&[USER, FC, FC, TWO_RESPONSES]));
    assert_eq!(
        roles_and_parts(&out),
        vec![
            "user[text]",
            "model[call:f,call:g]",
            "user[resp:f:err,resp:g:err]",
            "model[call:f,call:g]",
            "user[resp:f:ok,resp:g:ok]"
        ]
    );
}

#[test]
fn repair_turns_orphan_responses_into_text_and_fixes_misplaced_call_turns() {
    let (out, changes) = repaired(&body(&[USER, MODEL, ONE_RESPONSE]));
    assert_eq!(
        roles_and_parts(&out),
        vec!["user[text]", "model[text]", "user[text]"]
    );
    assert_eq!(changes, vec![(ChangeKind::ConvertedResultToText, 2)]);
    assert!(out.contains("[result of tool f with no matching call] 1"));
    let three = r#"{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":1}}},{"functionResponse":{"name":"g","response":{"output":2}}},{"functionResponse":{"name":"h","response":{"output":3}}}]}"#;
    let (out, _) = repaired(&body(&[USER, FC, three]));
    assert_eq!(
        roles_and_parts(&out),
        vec![
            "user[text]",
            "model[call:f,call:g]",
            "user[resp:f:ok,resp:g:ok,text]"
        ]
    );
    let (out, changes) = repaired(&body(&[FC, TWO_RESPONSES]));
    assert_eq!(
        roles_and_parts(&out),
        vec![
            "user[text]",
            "model[call:f,call:g]",
            "user[resp:f:ok,resp:g:ok]"
        ]
    );
    assert_eq!(changes, vec![(ChangeKind::InsertedTurn, 0)]);
}

#[test]
fn repair_keeps_real_ids_on_inserted_responses() {
    let fc = r#"{"role":"model","parts":[{"functionCall":{"name":"f","id":"id-1","args":{}}}]}"#;
    let (out, _) = repaired(&body(&[USER, fc]));
    assert!(out.contains(r#"{"functionResponse":{"name":"f","id":"id-1","response":{"error""#));
}

#[test]
fn repair_of_a_clean_body_is_borrowed() {
    let r = crate::repair(Dialect::Gemini, CONVERSATION.as_bytes()).unwrap();
    assert!(matches!(r.body, Cow::Borrowed(_)));
    assert!(r.changes.is_empty());
}

#[test]
fn bad_input_is_a_clear_error() {
    for body in [
        &b"{\"contents\":"[..],
        b"[]",
        b"{\"contents\":{}}",
        b"{\"contents\":[{\"parts\":7}]}",
        b"",
    ] {
        assert!(crate::validate(Dialect::Gemini, body).is_err());
        assert!(request_view_with(body, &never).is_err());
        assert!(crate::repair(Dialect::Gemini, body).is_err());
    }
}

/// The recorded chunks, as SSE and as a streamed JSON array.
pub(super) fn recorded() -> (Vec<u8>, Vec<u8>) {
    let text = String::from_utf8(fixture(
        "sse/vercel-ai__google-stream-tool-call-arguments.chunks.txt",
    ))
    .expect("UTF-8 fixture");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let sse: String = lines.iter().map(|l| format!("data: {l}\r\n\r\n")).collect();
    let array = format!("[{}]", lines.join(",\r\n"));
    (sse.into_bytes(), array.into_bytes())
}

fn stream(bytes: &[u8], split: usize) -> crate::ResponseView {
    let mut p = StreamParser::new(Dialect::Gemini);
    for chunk in bytes.chunks(split.max(1)) {
        p.feed(chunk);
    }
    p.finish()
}

fn expected_recorded_calls() -> Vec<ToolCall> {
    vec![
        ToolCall {
            id: "getWeather#0".into(),
            name: "getWeather".into(),
            arguments: "{\"location\":\"Boston\"}".into(),
        },
        ToolCall {
            id: "getWeather#1".into(),
            name: "getWeather".into(),
            arguments: "{\"location\":\"San Francisco\"}".into(),
        },
    ]
}

#[test]
fn stream_reassembles_partial_args_from_sse_and_array() {
    let (sse, array) = recorded();
    for bytes in [&sse, &array] {
        for split in [bytes.len(), 1, 3, 50] {
            let v = stream(bytes, split);
            assert_eq!(v.calls, expected_recorded_calls(), "split {split}");
            assert_eq!(v.model.as_deref(), Some("gemini-3.1-pro-preview"));
            assert_eq!(v.id.as_deref(), Some("dqHOab6xGLzWodAPkPuViA4"));
            assert_eq!(
                v.usage,
                Usage {
                    input_tokens: Some(26),
                    output_tokens: Some(23)
                }
            );
            assert_eq!(v.stop_reason.as_deref(), Some("STOP"));
        }
    }
    let v = crate::response_view(Dialect::Gemini, &array).unwrap();
    assert_eq!(v.calls, expected_recorded_calls());
}

#[test]
fn stream_of_whole_calls_and_an_error() {
    let bytes = br#"[{"candidates":[{"content":{"role":"model","parts":[{"text":"hm"},{"functionCall":{"name":"a","args":{"x":[1,"}"]}}},{"functionCall":{"name":"b","id":"id-b"}}]}}]}
,{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}]"#;
    let v = stream(bytes, 2);
    assert_eq!(
        v.calls,
        vec![
            ToolCall {
                id: "a#0".into(),
                name: "a".into(),
                arguments: "{\"x\":[1,\"}\"]}".into()
            },
            ToolCall {
                id: "id-b".into(),
                name: "b".into(),
                arguments: "{}".into()
            },
        ]
    );
    assert_eq!(v.error.as_deref(), Some("503 UNAVAILABLE: overloaded"));
}

#[test]
fn a_response_call_and_its_result_in_the_next_request_share_an_id() {
    let response = br#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"n":1}}},{"functionCall":{"name":"f","args":{"n":2}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":6},"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#;
    let v = crate::response_view(Dialect::Gemini, response).unwrap();
    let ids: Vec<&str> = v.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["f#0", "f#1"]);
    assert_eq!(
        v.usage,
        Usage {
            input_tokens: Some(5),
            output_tokens: Some(6)
        }
    );
    let request = br#"{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{"n":1}}},{"functionCall":{"name":"f","args":{"n":2}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"1"}}},{"functionResponse":{"name":"f","response":{"output":"2"}}}]}]}"#;
    let rv = request_view_with(request, &never).unwrap();
    let rids: Vec<&str> = rv.results.iter().map(|r| &*r.call_id).collect();
    assert_eq!(rids, ids);
}

/// A turn mixing a call with an id and one without, of the same name: the
/// id-less one is `f#0` in the response's view, and the request that
/// replays the turn and answers both names it the same, whether its result
/// is paired with the call or not (the request side counted the call with
/// an id too, and named it `f#1`: its result matched no recorded call).
#[test]
fn an_id_less_call_beside_one_with_an_id_is_named_alike_on_both_sides() {
    let response = br#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"f","args":{"n":1}}},{"functionCall":{"name":"f","args":{"n":2}}}]},"finishReason":"STOP"}]}"#;
    let v = crate::response_view(Dialect::Gemini, response).unwrap();
    let ids: Vec<&str> = v.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "f#0"]);
    let answers = r#"{"role":"user","parts":[{"functionResponse":{"id":"a","name":"f","response":{"output":"1"}}},{"functionResponse":{"name":"f","response":{"output":"2"}}}]}"#;
    let model = r#"{"role":"model","parts":[{"functionCall":{"id":"a","name":"f","args":{"n":1}}},{"functionCall":{"name":"f","args":{"n":2}}}]}"#;
    let replayed = format!(
        r#"{{"contents":[{{"role":"user","parts":[{{"text":"go"}}]}},{model},{answers}]}}"#
    );
    let rv = request_view_with(replayed.as_bytes(), &never).unwrap();
    let calls: Vec<&str> = rv.calls.iter().map(|c| &*c.id).collect();
    assert_eq!(calls, ids, "the replayed calls");
    let results: Vec<&str> = rv.results.iter().map(|r| &*r.call_id).collect();
    assert_eq!(results, ids, "their results");
    // The results alone (the history cut before the model turn).
    let alone = format!(r#"{{"contents":[{answers}]}}"#);
    let rv = request_view_with(alone.as_bytes(), &never).unwrap();
    let results: Vec<&str> = rv.results.iter().map(|r| &*r.call_id).collect();
    assert_eq!(results, ids, "results without their calls");
}

#[test]
fn render_uses_output_and_error_and_real_ids_only() {
    let ok = ToolOutcome::success("f#0", "f", serde_json::json!({"a": 1}));
    let failure = ToolFailure {
        kind: ErrorKind::Network,
        code: None,
        technical_message: "connection reset".into(),
        model_message: "The service could not be reached.".into(),
        retryable: true,
        fatal: false,
    };
    let bad = ToolOutcome::failure("id-7", "g", failure);
    let out = crate::render_results(Dialect::Gemini, &[ok, bad]);
    assert_eq!(
        out,
        vec![serde_json::json!({"role":"user","parts":[
            {"functionResponse":{"name":"f","response":{"output":{"a":1}}}},
            {"functionResponse":{"name":"g","id":"id-7","response":{"error":{
                "kind":"network","message":"The service could not be reached."}}}}
        ]})]
    );
    assert!(crate::render_results(Dialect::Gemini, &[]).is_empty());
}

mod fast_agrees_with_serde;

mod candidates;
