use serde_json::{Value, json};
use toolwarden_core::{ToolCall, Verdict};

use crate::{
    ChangeKind, DefectKind, Detector, Dialect, StreamParser,
    eventstream::{encode_event, encode_exception, encode_invoke_chunk},
    inspect,
    pairing::{EMPTY_ERROR_TEXT, MISSING_RESULT_TEXT},
    render_results, repair, request_view, response_view,
    testutil::starts_with_error,
    validate,
};

/// Each change a repair made: its kind, the defect and the message.
pub(super) fn changes_of(r: &crate::Repaired<'_>) -> Vec<(ChangeKind, DefectKind, usize)> {
    (r.changes.iter())
        .map(|c| (c.kind, c.defect, c.message_index))
        .collect()
}

/// A two-turn conversation as boto3 sends it: one failed, one good result.
const BODY: &str = r#"{"messages":[
  {"role":"user","content":[{"text":"list and read"}]},
  {"role":"assistant","content":[{"text":"ok"},
    {"toolUse":{"toolUseId":"tooluse_a","name":"ls","input":{"path":"/x"}}},
    {"toolUse":{"toolUseId":"tooluse_b","name":"cat","input":{}}}]},
  {"role":"user","content":[
    {"toolResult":{"toolUseId":"tooluse_a","content":[{"text":"no such dir"}],"status":"error"}},
    {"toolResult":{"toolUseId":"tooluse_b","content":[{"json":{"lines":3}}],"status":"success"}}]}
 ],
 "system":[{"text":"be brief"}],
 "toolConfig":{"tools":[{"toolSpec":{"name":"ls","inputSchema":{"json":{"type":"object"}}}}]},
 "inferenceConfig":{"maxTokens":100}}"#;

#[test]
fn the_view_reads_calls_results_and_status() {
    let view = request_view(Dialect::BedrockConverse, BODY.as_bytes()).unwrap();
    assert_eq!(view.model, None);
    assert_eq!(view.message_count, 3);
    assert_eq!(view.calls.len(), 2);
    assert_eq!(
        (
            &*view.calls[0].id,
            &*view.calls[0].name,
            &*view.calls[0].arguments
        ),
        ("tooluse_a", "ls", r#"{"path":"/x"}"#)
    );
    let d = Detector::default();
    let a = view.results[0].read(&d).unwrap();
    assert_eq!(
        (a.text.as_ref(), a.verdict),
        ("no such dir", Verdict::explicit(true))
    );
    let b = view.results[1].read(&d).unwrap();
    assert_eq!(
        (b.text.as_ref(), b.verdict),
        (r#"{"lines":3}"#, Verdict::explicit(false))
    );
    assert_eq!(view.results[0].tool.as_deref(), Some("ls"));
    assert!(view.results.iter().all(|r| r.new));
    assert!(view.first_turn_hash.is_some());
    assert_eq!(
        Dialect::sniff(BODY.as_bytes()),
        Some(Dialect::BedrockConverse)
    );
    assert!(
        validate(Dialect::BedrockConverse, BODY.as_bytes())
            .unwrap()
            .is_empty()
    );
    let both = inspect(Dialect::BedrockConverse, BODY.as_bytes());
    assert_eq!(both.defects.unwrap(), Vec::new());
}

/// A `json` block that only wraps its tool's text (Agno's `{"result":
/// "…"}`) is read as that text; other JSON stays JSON.
#[test]
fn a_json_block_wrapping_a_text_is_read_as_the_text() {
    let d = Detector::default();
    for (block, text, failed) in [
        (
            json!({"result": "[Errno 2] No such file or directory: 'a'"}),
            "[Errno 2] No such file or directory: 'a'",
            true,
        ),
        (
            json!({"output": "'NoneType' object has no attribute 'value'"}),
            "'NoneType' object has no attribute 'value'",
            true,
        ),
        (json!({"result": "e2e-ok\n"}), "e2e-ok\n", false),
        (json!({"result": "Error: x", "code": 1}), "", false),
        (json!({"result": {"error": "x"}}), "", false),
        (json!({"error": "disk full"}), "", true),
    ] {
        let body = json!({"messages":[
            {"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},
            {"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"json": block}]}}]}]});
        let bytes = serde_json::to_vec(&body).unwrap();
        let view = request_view(Dialect::BedrockConverse, &bytes).unwrap();
        let r = view.results[0].read(&d).unwrap();
        // (empty: the block's JSON itself)
        if text.is_empty() {
            let read: Value = serde_json::from_str(&r.text).unwrap();
            assert_eq!(read, block);
        } else {
            assert_eq!(r.text.as_ref(), text, "{block}");
        }
        assert_eq!(r.verdict.failed, failed, "{block}");
    }
}

#[test]
fn without_any_status_the_detector_decides() {
    let body = json!({"messages":[
        {"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},
        {"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"Error: boom"}]}}]}]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let view = request_view(Dialect::BedrockConverse, &bytes).unwrap();
    let read = view.results[0].read_with(&starts_with_error).unwrap();
    assert!(read.verdict.failed);
    // With a status elsewhere in the conversation, an unflagged one is a success.
    let body = json!({"messages":[
        {"role":"assistant","content":[
            {"toolUse":{"toolUseId":"t1","name":"f","input":{}}},
            {"toolUse":{"toolUseId":"t2","name":"f","input":{}}}]},
        {"role":"user","content":[
            {"toolResult":{"toolUseId":"t1","content":[{"text":"Error: boom"}]}},
            {"toolResult":{"toolUseId":"t2","content":[{"text":"ok"}],"status":"success"}}]}]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let view = request_view(Dialect::BedrockConverse, &bytes).unwrap();
    assert_eq!(
        view.results[0]
            .read_with(&starts_with_error)
            .unwrap()
            .verdict,
        Verdict::NONE
    );
}

#[test]
fn bad_bodies_are_errors() {
    for bad in [
        &b"{"[..],
        b"[]",
        b"{\"messages\":3}",
        b"{\"messages\":[{\"role\":\"user\"}]}",
        b"\xff",
    ] {
        assert!(request_view(Dialect::BedrockConverse, bad).is_err());
        assert!(validate(Dialect::BedrockConverse, bad).is_err());
        assert!(repair(Dialect::BedrockConverse, bad).is_err());
    }
}

#[test]
fn defects_are_worded_as_bedrock_words_them() {
    let body = r#"{"messages":[
      {"role":"user","content":[{"text":"go"}]},
      {"role":"assistant","content":[
        {"toolUse":{"toolUseId":"tooluse_nBge","name":"f","input":{}}},
        {"toolUse":{"toolUseId":"tooluse_041Y","name":"g","input":{}}}]},
      {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_nBge","content":[{"text":"a"}]}}]},
      {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_041Y","content":[{"text":"b"}]}}]}]}"#;
    let defects = validate(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let texts: Vec<(&str, DefectKind)> = defects
        .iter()
        .map(|d| (d.message.as_str(), d.kind))
        .collect();
    assert_eq!(
        texts,
        [
            (
                "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_041Y",
                DefectKind::MissingResult
            ),
            (
                "The number of toolResult blocks at messages.3.content exceeds the number of toolUse blocks of previous turn.",
                DefectKind::OrphanResult
            ),
        ]
    );
}

#[test]
fn repair_inserts_error_results_and_keeps_every_other_byte() {
    // The assistant's second call is unanswered; an orphan follows later.
    let body = "{\"messages\": [\n  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}]},\n  {\"role\":\"assistant\",\"content\":[{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}},{\"toolUse\":{\"toolUseId\":\"b\",\"name\":\"f\",\"input\":{}}}]},\n  {\"role\":\"user\",\"content\":[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"text\":\"fine\"}],\"status\":\"success\"}}]},\n  {\"role\":\"assistant\",\"content\":[{\"toolUse\":{\"toolUseId\":\"c\",\"name\":\"f\",\"input\":{}}}]}\n ], \"x\": {\"keep\" : 1}}";
    let r = repair(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let kinds: Vec<(ChangeKind, Option<&str>)> = r
        .changes
        .iter()
        .map(|c| (c.kind, c.call_id.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            (ChangeKind::InsertedResult, Some("b")),
            (ChangeKind::InsertedResult, Some("c"))
        ]
    );
    let out = std::str::from_utf8(&r.body).unwrap();
    assert!(
        validate(Dialect::BedrockConverse, out.as_bytes())
            .unwrap()
            .is_empty(),
        "{out}"
    );
    assert!(out.ends_with("\n ], \"x\": {\"keep\" : 1}}"), "{out}");
    assert!(out.contains(
        "{\"role\":\"user\",\"content\":[{\"text\":\"go\"}]},\n  {\"role\":\"assistant\""
    ));
    let v: Value = serde_json::from_str(out).unwrap();
    let inserted = &v["messages"][2]["content"][0]["toolResult"];
    assert_eq!(
        (inserted["toolUseId"].as_str(), inserted["status"].as_str()),
        (Some("b"), Some("error"))
    );
    assert_eq!(
        v["messages"][2]["content"][1]["toolResult"]["toolUseId"],
        "a"
    );
    assert_eq!(v["messages"][4]["role"], "user");
    assert_eq!(
        v["messages"][4]["content"][0]["toolResult"]["toolUseId"],
        "c"
    );
    // The inserted results read as explicit failures.
    let view = request_view(Dialect::BedrockConverse, &r.body).unwrap();
    let d = Detector::default();
    assert!(
        view.results
            .iter()
            .filter(|r| r.call_id != "a")
            .all(|r| r.read(&d).unwrap().verdict == Verdict::explicit(true))
    );
    // Clean bodies come back borrowed; a repaired body needs nothing more.
    let again = repair(Dialect::BedrockConverse, &r.body).unwrap();
    assert!(!again.is_changed());
    assert!(matches!(again.body, std::borrow::Cow::Borrowed(_)));
}

/// Only some models take a result's `status` (Bedrock documents it for
/// Amazon Nova and Anthropic Claude 3 and 4; others refuse the body): an
/// inserted result has one only when the client's own results do.
#[test]
fn inserted_results_take_a_status_only_when_the_clients_results_do() {
    let inserted = |body: Value| -> Value {
        let bytes = serde_json::to_vec(&body).unwrap();
        let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
        assert!(r.is_changed());
        assert!(
            validate(Dialect::BedrockConverse, &r.body)
                .unwrap()
                .is_empty()
        );
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().clone())
            .map(|b| b["toolResult"].clone())
            .find(|r| r["toolUseId"] == "b")
            .unwrap_or_else(|| panic!("no result for b: {v}"))
    };
    let calls = json!({"role":"assistant","content":[
        {"toolUse":{"toolUseId":"a","name":"f","input":{}}},
        {"toolUse":{"toolUseId":"b","name":"f","input":{}}}]});
    let user = json!({"role":"user","content":[{"text":"go"}]});
    let answered = |status: Option<&str>| {
        let mut r = json!({"toolUseId":"a","content":[{"text":"fine"}]});
        if let Some(s) = status {
            r["status"] = json!(s);
        }
        json!({"role":"user","content":[{"toolResult": r}]})
    };
    // A client that never writes a status (a Llama or Mistral model's).
    let plain = inserted(json!({"messages":[user, calls, answered(None)]}));
    assert_eq!(plain.get("status"), None, "{plain}");
    assert_eq!(plain["content"][0]["text"], MISSING_RESULT_TEXT);
    let first = inserted(json!({"messages":[user, calls]}));
    assert_eq!(first.get("status"), None, "{first}");
    // A client that does (a Claude or Nova model's).
    let flagged = inserted(json!({"messages":[user, calls, answered(Some("success"))]}));
    assert_eq!(flagged["status"], "error", "{flagged}");
}

/// Claude on Bedrock refuses an answering message that does not open with
/// its results ("messages.2: Did not find 1 `tool_result` block(s) at the
/// beginning of this message"): a result turned into text goes after the
/// results, and a client's text before them is a defect, repaired.
#[test]
fn results_open_the_answering_message() {
    let calls = json!({"role":"assistant","content":[
        {"toolUse":{"toolUseId":"a","name":"f","input":{}}}]});
    let result = |id: &str| json!({"toolResult":{"toolUseId":id,"content":[{"text":"ok"}]}});
    let repaired = |answer: Value| -> (Value, Vec<ChangeKind>) {
        let body = json!({"messages":[{"role":"user","content":[{"text":"go"}]}, calls, answer]});
        let bytes = serde_json::to_vec(&body).unwrap();
        let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
        assert!(
            validate(Dialect::BedrockConverse, &r.body)
                .unwrap()
                .is_empty()
        );
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        let kinds = r.changes.iter().map(|c| c.kind).collect();
        (v["messages"][2]["content"].clone(), kinds)
    };
    // An orphan before the answer: its text follows the answer.
    let (content, kinds) =
        repaired(json!({"role":"user","content":[result("ghost"), result("a")]}));
    assert_eq!(content[0], result("a"), "{content}");
    assert!(content[1]["text"].as_str().unwrap().contains("ghost"));
    assert!(kinds.contains(&ChangeKind::ConvertedResultToText));
    // The client's own text first: found, and the result moved before it.
    let text_first = json!({"role":"user","content":[{"text":"here"}, result("a")]});
    let body = json!({"messages":[{"role":"user","content":[{"text":"go"}]}, calls, text_first]});
    let found = validate(
        Dialect::BedrockConverse,
        &serde_json::to_vec(&body).unwrap(),
    )
    .unwrap();
    assert_eq!(
        found
            .iter()
            .map(|d| (d.kind, d.message_index))
            .collect::<Vec<_>>(),
        [(DefectKind::ResultsNotFirst, 2)]
    );
    let (content, kinds) = repaired(text_first);
    assert_eq!(content, json!([result("a"), {"text": "here"}]));
    assert_eq!(kinds, [ChangeKind::MovedResult]);
}

#[test]
fn repair_turns_orphans_into_text_and_drops_second_results() {
    let body = json!({"messages":[
        {"role":"user","content":[{"toolResult":{"toolUseId":"ghost","content":[{"text":"old"}]}}]},
        {"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},
        {"role":"user","content":[
            {"toolResult":{"toolUseId":"a","content":[{"text":"1"}]}},
            {"toolResult":{"toolUseId":"a","content":[{"text":"2"}]}}]}]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
    let kinds: Vec<ChangeKind> = r.changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            ChangeKind::ConvertedResultToText,
            ChangeKind::RemovedDuplicate
        ]
    );
    assert!(
        validate(Dialect::BedrockConverse, &r.body)
            .unwrap()
            .is_empty()
    );
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert!(
        v["messages"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("\nold")
    );
    assert_eq!(v["messages"][2]["content"].as_array().unwrap().len(), 1);
}

#[test]
fn the_response_view_reads_tool_use_stop_reason_and_usage() {
    let body = br#"{"output":{"message":{"role":"assistant","content":[
        {"text":"Let me look."},
        {"toolUse":{"toolUseId":"tooluse_x","name":"ls","input":{"path":"."}}}]}},
      "stopReason":"tool_use","usage":{"inputTokens":12,"outputTokens":7,"totalTokens":19},
      "metrics":{"latencyMs":300}}"#;
    let v = response_view(Dialect::BedrockConverse, body).unwrap();
    assert_eq!(
        v.calls,
        [ToolCall {
            id: "tooluse_x".into(),
            name: "ls".into(),
            arguments: r#"{"path":"."}"#.into()
        }]
    );
    assert_eq!(v.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        (v.usage.input_tokens, v.usage.output_tokens),
        (Some(12), Some(7))
    );
    let err = response_view(
        Dialect::BedrockConverse,
        br#"{"message":"Malformed input request"}"#,
    )
    .unwrap();
    assert_eq!(err.error.as_deref(), Some("Malformed input request"));
}

/// A system tool Bedrock runs itself (Nova's `nova_grounding`) is a
/// `toolUse` of `type: "server_tool_use"`, its `toolResult` in the same
/// message: a server call, in a whole body and a stream alike. It was a
/// call the client had to run (the runtime ran and answered it).
#[test]
fn system_tools_bedrock_runs_are_server_calls() {
    let body = br#"{"output":{"message":{"role":"assistant","content":[
        {"toolUse":{"toolUseId":"tooluse_s","name":"nova_grounding","input":{"query":"q"},"type":"server_tool_use"}},
        {"toolResult":{"toolUseId":"tooluse_s","content":[{"text":"found"}],"type":"nova_grounding_result"}},
        {"toolUse":{"toolUseId":"tooluse_c","name":"ls","input":{}}}]}},
      "stopReason":"tool_use"}"#;
    let v = response_view(Dialect::BedrockConverse, body).unwrap();
    assert_eq!(v.calls.len(), 2);
    assert_eq!(v.server_calls, [0]);
    let client: Vec<_> = v.client_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(client, ["tooluse_c"]);

    let events: [(&str, &str); 8] = [
        ("messageStart", r#"{"role":"assistant"}"#),
        (
            "contentBlockStart",
            r#"{"contentBlockIndex":0,"start":{"toolUse":{"name":"nova_grounding","toolUseId":"tooluse_s","type":"server_tool_use"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"query\":\"q\"}"}}}"#,
        ),
        (
            "contentBlockStart",
            r#"{"contentBlockIndex":1,"start":{"toolResult":{"toolUseId":"tooluse_s","type":"nova_grounding_result"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":1,"delta":{"toolResult":[{"text":"found"}]}}"#,
        ),
        (
            "contentBlockStart",
            r#"{"contentBlockIndex":2,"start":{"toolUse":{"name":"ls","toolUseId":"tooluse_c"}}}"#,
        ),
        ("contentBlockStop", r#"{"contentBlockIndex":2}"#),
        ("messageStop", r#"{"stopReason":"tool_use"}"#),
    ];
    let stream: Vec<u8> = events
        .iter()
        .flat_map(|(e, p)| encode_event(e, p.as_bytes()))
        .collect();
    let mut p = StreamParser::new(Dialect::BedrockConverse);
    p.feed(&stream);
    let v = p.finish();
    assert_eq!(v.calls[0].arguments, r#"{"query":"q"}"#);
    assert_eq!(v.server_calls, [0]);
    let client: Vec<_> = v.client_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(client, ["tooluse_c"]);
}

/// A ConverseStream as Bedrock frames it: text, then one tool call whose
/// input arrives in pieces.
pub(super) fn converse_stream() -> Vec<u8> {
    let events: [(&str, &str); 10] = [
        ("messageStart", r#"{"p":"abcd","role":"assistant"}"#),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"Let me "},"p":"abc"}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"check."},"p":"ab"}"#,
        ),
        (
            "contentBlockStop",
            r#"{"contentBlockIndex":0,"p":"abcdef"}"#,
        ),
        (
            "contentBlockStart",
            r#"{"contentBlockIndex":1,"p":"a","start":{"toolUse":{"name":"ls","toolUseId":"tooluse_1"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"path\":"}},"p":"abcd"}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"/tmp\"}"}},"p":"ab"}"#,
        ),
        ("contentBlockStop", r#"{"contentBlockIndex":1,"p":"abc"}"#),
        ("messageStop", r#"{"p":"abcdefg","stopReason":"tool_use"}"#),
        (
            "metadata",
            r#"{"metrics":{"latencyMs":420},"p":"abc","usage":{"inputTokens":30,"outputTokens":12,"totalTokens":42}}"#,
        ),
    ];
    events
        .iter()
        .flat_map(|(e, p)| encode_event(e, p.as_bytes()))
        .collect()
}

/// A history replaying a system tool Bedrock ran (its `toolUse` of
/// `type: "server_tool_use"` and its `toolResult` in the same assistant
/// message) is a valid request: it was reported as a result answering no
/// call of the turn before and a call left unanswered, and `fix` mode
/// turned the server's result into text and answered the call with an
/// error result the client never sent.
#[test]
fn a_replayed_system_tool_is_no_defect() {
    let body = br#"{"messages":[
        {"role":"user","content":[{"text":"news?"}]},
        {"role":"assistant","content":[
            {"toolUse":{"toolUseId":"tooluse_s","name":"nova_grounding","input":{"query":"q"},"type":"server_tool_use"}},
            {"toolResult":{"toolUseId":"tooluse_s","content":[{"text":"found"}],"type":"nova_grounding_result"}},
            {"toolUse":{"toolUseId":"tooluse_c","name":"ls","input":{}}}]},
        {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_c","content":[{"text":"a b"}]}}]},
        {"role":"assistant","content":[
            {"toolUse":{"toolUseId":"tooluse_t","name":"nova_grounding","input":{"query":"r"},"type":"server_tool_use"}},
            {"toolResult":{"toolUseId":"tooluse_t","content":[{"text":"more"}],"type":"nova_grounding_result"}},
            {"text":"done"}]}]}"#;
    assert_eq!(validate(Dialect::BedrockConverse, body).unwrap(), []);
    let r = repair(Dialect::BedrockConverse, body).unwrap();
    assert!(r.changes.is_empty(), "{:?}", r.changes);
    assert_eq!(&*r.body, &body[..]);
    // The client's own call is still owed its result.
    let owed = body_without_last_user_result(body);
    let d = validate(Dialect::BedrockConverse, owed.as_bytes()).unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].call_ids, ["tooluse_c"]);
}

/// The body of [`a_replayed_system_tool_is_no_defect`] with its client
/// result's message replaced by text.
fn body_without_last_user_result(body: &[u8]) -> String {
    let text = std::str::from_utf8(body).unwrap();
    text.replace(
        r#"{"toolResult":{"toolUseId":"tooluse_c","content":[{"text":"a b"}]}}"#,
        r#"{"text":"no answer"}"#,
    )
}

#[test]
fn the_stream_parser_reads_converse_stream_frames() {
    let stream = converse_stream();
    let mut p = StreamParser::new(Dialect::BedrockConverse);
    let mut complete_at = None;
    for (i, b) in stream.iter().enumerate() {
        p.feed(std::slice::from_ref(b));
        if p.is_complete() && complete_at.is_none() {
            complete_at = Some(i);
        }
    }
    assert!(complete_at.is_some_and(|i| i < stream.len() - 1));
    assert!(p.framing_error().is_none());
    let v = p.finish();
    assert_eq!(
        v.calls,
        [ToolCall {
            id: "tooluse_1".into(),
            name: "ls".into(),
            arguments: r#"{"path":"/tmp"}"#.into()
        }]
    );
    assert_eq!(v.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        (v.usage.input_tokens, v.usage.output_tokens),
        (Some(30), Some(12))
    );
    assert_eq!(v.error, None);
}

#[test]
fn exceptions_and_broken_frames_become_the_views_error() {
    let mut stream = converse_stream()[..0].to_vec();
    stream.extend(encode_event("messageStart", br#"{"role":"assistant"}"#));
    stream.extend(encode_exception(
        "throttlingException",
        br#"{"message":"Too many tokens"}"#,
    ));
    let mut p = StreamParser::new(Dialect::BedrockConverse);
    p.feed(&stream);
    assert_eq!(
        p.finish().error.as_deref(),
        Some("throttlingException: Too many tokens")
    );
    // A corrupt CRC: counted, the parse goes on with the next frame.
    let mut stream = converse_stream();
    stream[20] ^= 0x40;
    let mut p = StreamParser::new(Dialect::BedrockConverse);
    p.feed(&stream);
    assert!(p.framing_error().is_some());
    let v = p.finish();
    assert!(v.error.as_deref().unwrap().contains("CRC"), "{v:?}");
    // Cut in the middle of a frame.
    let stream = converse_stream();
    let mut p = StreamParser::new(Dialect::BedrockConverse);
    p.feed(&stream[..stream.len() - 3]);
    assert!(
        p.framing_error().is_some(),
        "a cut frame is a framing error"
    );
    let v = p.finish();
    assert!(v.error.as_deref().unwrap().contains("ended"), "{v:?}");
    // SSE bytes are not frames: an error, no panic.
    let mut p = StreamParser::new(Dialect::BedrockConverse);
    p.feed(b"data: {\"x\":1}\n\n");
    assert!(p.framing_error().is_some());
}

#[test]
fn invoke_with_response_stream_feeds_the_anthropic_parser() {
    let events = [
        r#"{"type":"message_start","message":{"id":"msg_bdrk_1","model":"claude-x","usage":{"input_tokens":5,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"p\":1}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
        r#"{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":5}}"#,
    ];
    let stream: Vec<u8> = events
        .iter()
        .flat_map(|e| encode_invoke_chunk(e.as_bytes()))
        .collect();
    let mut p = StreamParser::bedrock_invoke(Dialect::Anthropic);
    for piece in stream.chunks(7) {
        p.feed(piece);
    }
    assert!(p.is_complete());
    let v = p.finish();
    assert_eq!(v.calls.len(), 1);
    assert_eq!(
        (v.calls[0].id.as_str(), v.calls[0].arguments.as_str()),
        ("toolu_1", r#"{"p":1}"#)
    );
    assert_eq!(v.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(v.id.as_deref(), Some("msg_bdrk_1"));
}

#[test]
fn rendered_results_read_back_with_their_verdicts() {
    use toolwarden_core::{ErrorKind, ToolFailure, ToolOutcome};
    let ok = ToolOutcome::success("a", "ls", json!("file.txt"));
    let failure = ToolFailure {
        kind: ErrorKind::Timeout,
        code: None,
        technical_message: "deadline 5s".into(),
        model_message: "The tool timed out.".into(),
        retryable: true,
        fatal: false,
    };
    let bad = ToolOutcome::failure("b", "cat", failure);
    let msgs = render_results(Dialect::BedrockConverse, &[ok, bad]);
    assert_eq!(msgs.len(), 1);
    let body = json!({"messages":[
        {"role":"assistant","content":[
            {"toolUse":{"toolUseId":"a","name":"ls","input":{}}},
            {"toolUse":{"toolUseId":"b","name":"cat","input":{}}}]},
        msgs[0]]});
    let bytes = serde_json::to_vec(&body).unwrap();
    assert!(
        validate(Dialect::BedrockConverse, &bytes)
            .unwrap()
            .is_empty()
    );
    let view = request_view(Dialect::BedrockConverse, &bytes).unwrap();
    let d = Detector::default();
    let verdicts: Vec<bool> = view
        .results
        .iter()
        .map(|r| r.read(&d).unwrap().verdict.failed)
        .collect();
    assert_eq!(verdicts, [false, true]);
}

/// Bedrock refuses an assistant message repeating a `toolUse` id ("The
/// toolUse blocks at messages.2.content contain duplicate Ids: …",
/// double16/Cyber-AutoAgent-ng#27); one id in two turns is not refused so.
#[test]
fn a_tool_use_id_repeated_in_one_message_is_a_defect() {
    let call = |id: &str| json!({"toolUse": {"toolUseId": id, "name": "f", "input": {}}});
    let result = |id: &str| json!({"toolResult": {"toolUseId": id, "content": [{"text": "ok"}]}});
    let body = json!({"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [call("b"), call("a"), call("b"), call("a"), call("a")]},
        {"role": "user", "content": [result("b"), result("a"), result("b"), result("a"), result("a")]},
    ]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let found = validate(Dialect::BedrockConverse, &bytes).unwrap();
    let repeated = found
        .iter()
        .find(|d| d.message.starts_with("The toolUse blocks"))
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(repeated.kind, DefectKind::DuplicateCallId);
    assert_eq!(repeated.message_index, 1);
    assert_eq!(repeated.call_ids, ["b", "a"]);
    assert_eq!(
        repeated.message,
        "The toolUse blocks at messages.1.content contain duplicate Ids: b, a"
    );
    // The gateway's one pass finds the same.
    let inspected = crate::inspect(Dialect::BedrockConverse, &bytes);
    assert_eq!(inspected.defects.unwrap(), found);
    let turns = json!({"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [call("a")]},
        {"role": "user", "content": [result("a")]},
        {"role": "assistant", "content": [call("a")]},
        {"role": "user", "content": [result("a")]},
    ]});
    let bytes = serde_json::to_vec(&turns).unwrap();
    assert_eq!(validate(Dialect::BedrockConverse, &bytes).unwrap(), []);
}

/// The repair renames a repeated `toolUse` id `{id}_dup{n}`, with the
/// result that answered that occurrence (the k-th result with the id for
/// the k-th call), in place: every other byte is kept, the spacing of the
/// arrays included.
#[test]
fn repair_renames_a_repeated_tool_use_id_with_its_result_in_place() {
    let body = concat!(
        "{\"messages\": [\n",
        "  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}]},\n",
        "  {\"role\":\"assistant\",\"content\":[ {\"toolUse\": {\"toolUseId\": \"a\", \"name\":\"f\",\"input\":{\"n\": 1}}} ,\n",
        "     {\"toolUse\":{\"input\":{\"n\":2},\"toolUseId\":\"a\",\"name\":\"f\"}},{\"toolUse\":{\"toolUseId\":\"b\",\"name\":\"f\",\"input\":{}}} ]},\n",
        "  {\"role\":\"user\",\"content\":[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"text\":\"one\"}],\"status\":\"success\"}},\n",
        "     {\"toolResult\":{\"toolUseId\":\"b\",\"content\":[{\"text\":\"bee\"}]}} ,  {\"toolResult\": {\"content\":[{\"text\":\"two\"}], \"toolUseId\" : \"a\"}}, {\"text\":\"more\"}]}\n",
        " ], \"x\": {\"keep\" : 1}}"
    );
    let r = repair(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let out = std::str::from_utf8(&r.body).unwrap();
    let want = body
        .replace(
            "{\"input\":{\"n\":2},\"toolUseId\":\"a\"",
            "{\"input\":{\"n\":2},\"toolUseId\":\"a_dup1\"",
        )
        .replace("\"toolUseId\" : \"a\"}", "\"toolUseId\" : \"a_dup1\"}");
    assert_eq!(out, want);
    let changes: Vec<(ChangeKind, DefectKind, usize, Option<&str>)> = r
        .changes
        .iter()
        .map(|c| (c.kind, c.defect, c.message_index, c.call_id.as_deref()))
        .collect();
    assert_eq!(
        changes,
        [(
            ChangeKind::RenamedDuplicateId,
            DefectKind::DuplicateCallId,
            1,
            Some("a")
        )]
    );
    assert!(
        validate(Dialect::BedrockConverse, &r.body)
            .unwrap()
            .is_empty()
    );
    assert!(
        !repair(Dialect::BedrockConverse, &r.body)
            .unwrap()
            .is_changed()
    );
}

/// A repeat without its own result is renamed and answered with an error
/// result; a name already in the body is skipped; an id near Bedrock's 64
/// characters is cut before its suffix.
#[test]
fn a_renamed_repeat_is_answered_and_stays_within_64_characters() {
    let call = |id: &str| json!({"toolUse": {"toolUseId": id, "name": "f", "input": {}}});
    let result = |id: &str| json!({"toolResult": {"toolUseId": id, "content": [{"text": "ok"}]}});
    let long = format!("tooluse_{}", "x".repeat(56));
    let body = json!({"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [call("a_dup1")]},
        {"role": "user", "content": [result("a_dup1")]},
        {"role": "assistant", "content": [call("a"), call("a"), call(&long), call(&long)]},
        {"role": "user", "content": [result("a"), result(&long), result(&long)]},
    ]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
    assert!(
        validate(Dialect::BedrockConverse, &r.body)
            .unwrap()
            .is_empty()
    );
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    let ids = |m: usize, kind: &str| -> Vec<String> {
        v["messages"][m]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[kind]["toolUseId"].as_str().unwrap().to_string())
            .collect()
    };
    let cut = format!("tooluse_{}_dup1", "x".repeat(51));
    assert_eq!(cut.len(), 64);
    assert_eq!(ids(3, "toolUse"), ["a", "a_dup2", &long, &cut]);
    assert_eq!(ids(4, "toolResult"), ["a_dup2", "a", &long, &cut]);
    let kinds: Vec<ChangeKind> = r.changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            ChangeKind::RenamedDuplicateId,
            ChangeKind::RenamedDuplicateId,
            ChangeKind::InsertedResult
        ]
    );
}

/// A result repeated in one message is refused as Bedrock words it ("The
/// toolResult blocks at messages.N.content contain duplicate Ids: …",
/// BerriAI/litellm#20048), before the count: it was worded with a text of
/// the gateway's own, or as a count Bedrock does not give for it.
#[test]
fn a_result_repeated_in_one_message_is_worded_as_bedrock_words_it() {
    let call = |id: &str| json!({"toolUse": {"toolUseId": id, "name": "f", "input": {}}});
    let result = |id: &str| json!({"toolResult": {"toolUseId": id, "content": [{"text": "ok"}]}});
    let defects = |calls: &[&str], results: &[&str]| {
        let body = json!({"messages": [
            {"role": "user", "content": [{"text": "go"}]},
            {"role": "assistant", "content": calls.iter().map(|c| call(c)).collect::<Vec<_>>()},
            {"role": "user", "content": results.iter().map(|r| result(r)).collect::<Vec<_>>()},
        ]});
        let bytes = serde_json::to_vec(&body).unwrap();
        let found = validate(Dialect::BedrockConverse, &bytes).unwrap();
        assert_eq!(
            crate::inspect(Dialect::BedrockConverse, &bytes)
                .defects
                .unwrap(),
            found
        );
        found
            .into_iter()
            .map(|d| (d.kind, d.message_index, d.call_ids, d.message))
            .collect::<Vec<_>>()
    };
    let dup = |ids: &[&str]| {
        (
            DefectKind::DuplicateCallId,
            2,
            ids.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            format!(
                "The toolResult blocks at messages.2.content contain duplicate Ids: {}",
                ids.join(", ")
            ),
        )
    };
    // More results than calls, each naming one.
    assert_eq!(defects(&["a"], &["a", "a"]), [dup(&["a"])]);
    // As many results as calls.
    assert_eq!(defects(&["a", "b"], &["b", "a", "b"]), [dup(&["b"])]);
    assert_eq!(
        defects(&["a", "b", "c"], &["b", "a", "b", "a", "c"]),
        [dup(&["b", "a"])]
    );
    // The count takes each id once: one extra is an orphan beside it.
    assert_eq!(
        defects(&["a"], &["a", "a", "x"]),
        [
            dup(&["a"]),
            (
                DefectKind::OrphanResult,
                2,
                vec!["x".to_string()],
                "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn.".to_string()
            )
        ]
    );
}

/// A system tool use Bedrock ran (Nova's `nova_grounding`: a `toolUse` of
/// `type: "server_tool_use"`, its `toolResult` in the same message).
fn system_tool(id: &str, query: &str) -> [Value; 2] {
    [
        json!({"toolUse": {"toolUseId": id, "name": "nova_grounding", "input": {"query": query}, "type": "server_tool_use"}}),
        json!({"toolResult": {"toolUseId": id, "content": [{"text": query}], "type": "nova_grounding_result"}}),
    ]
}

/// A system tool's `toolUseId` repeated in one assistant message is
/// refused as a client call's is (Bedrock's rule takes every `toolUse`
/// block, and every `toolResult` one): it was no defect, and went upstream
/// as it came. `fix` renames the repeat and the result that answered it
/// in the same message, in place.
#[test]
fn a_system_tool_use_id_repeated_in_one_message_is_renamed_with_its_result() {
    let [s1, r1] = system_tool("tooluse_s", "q");
    let [s2, r2] = system_tool("tooluse_s", "r");
    let body = json!({"messages": [
        {"role": "user", "content": [{"text": "news?"}]},
        {"role": "assistant", "content": [s1, r1, s2, r2, {"text": "done"}]},
    ]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let found = validate(Dialect::BedrockConverse, &bytes).unwrap();
    let texts: Vec<(DefectKind, &str)> = found.iter().map(|d| (d.kind, &*d.message)).collect();
    assert_eq!(
        texts,
        [
            (
                DefectKind::DuplicateCallId,
                "The toolUse blocks at messages.1.content contain duplicate Ids: tooluse_s"
            ),
            (
                DefectKind::DuplicateCallId,
                "The toolResult blocks at messages.1.content contain duplicate Ids: tooluse_s"
            ),
        ]
    );
    assert_eq!(
        crate::inspect(Dialect::BedrockConverse, &bytes)
            .defects
            .unwrap(),
        found
    );
    let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
    let text = std::str::from_utf8(&bytes).unwrap();
    let second = text.rfind("\"toolUseId\":\"tooluse_s\"").unwrap();
    let second_use = text[..second].rfind("\"toolUseId\":\"tooluse_s\"").unwrap();
    let want = format!(
        "{}\"toolUseId\":\"tooluse_s_dup1\"{}\"toolUseId\":\"tooluse_s_dup1\"{}",
        &text[..second_use],
        &text[second_use + 23..second],
        &text[second + 23..]
    );
    assert_eq!(std::str::from_utf8(&r.body).unwrap(), want);
    let changes: Vec<(ChangeKind, usize)> = r
        .changes
        .iter()
        .map(|c| (c.kind, c.message_index))
        .collect();
    assert_eq!(changes, [(ChangeKind::RenamedDuplicateId, 1)]);
    assert_eq!(validate(Dialect::BedrockConverse, &r.body).unwrap(), []);
}

/// A body with a replayed system tool and a defect elsewhere: the repair
/// keeps the system tool's result where it was. It was turned into text
/// (a result answering no call of the turn before), which left Bedrock's
/// own call without its result.
#[test]
fn a_system_tools_result_stays_when_the_body_is_repaired() {
    let [s, r] = system_tool("tooluse_s", "q");
    let body = json!({"messages": [
        {"role": "user", "content": [{"text": "news?"}]},
        {"role": "assistant", "content": [s, r, {"toolUse": {"toolUseId": "tooluse_c", "name": "ls", "input": {}}}]},
        {"role": "user", "content": [{"text": "never mind"}]},
    ]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
    let changes: Vec<(ChangeKind, Option<&str>)> = r
        .changes
        .iter()
        .map(|c| (c.kind, c.call_id.as_deref()))
        .collect();
    assert_eq!(changes, [(ChangeKind::InsertedResult, Some("tooluse_c"))]);
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["messages"][1], body["messages"][1]);
    assert_eq!(validate(Dialect::BedrockConverse, &r.body).unwrap(), []);
    // A second result for the system tool's call is dropped.
    let mut twice = body.clone();
    let again = twice["messages"][1]["content"][1].clone();
    twice["messages"][1]["content"]
        .as_array_mut()
        .unwrap()
        .push(again);
    let bytes = serde_json::to_vec(&twice).unwrap();
    let r = repair(Dialect::BedrockConverse, &bytes).unwrap();
    let kinds: Vec<ChangeKind> = r.changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [ChangeKind::RemovedDuplicate, ChangeKind::InsertedResult]
    );
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["messages"][1], body["messages"][1]);
    assert_eq!(validate(Dialect::BedrockConverse, &r.body).unwrap(), []);
}

/// Bedrock refuses a `text` block that is empty or only whitespace ("The
/// text field in the ContentBlock object at messages.N.content.J is blank.
/// Add text to the text field, and try again.", continuedev/continue#9767);
/// it went upstream as it came. `fix` removes it in place from a message
/// holding other blocks, and gives it the text `[empty]` when it is all its
/// message holds (the message stays: turns alternate as they did).
#[test]
fn blank_text_blocks_are_removed_or_filled_in_place() {
    let body = concat!(
        "{\"messages\": [\n",
        "  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}, {\"text\": \"\"}]},\n",
        "  {\"role\":\"assistant\",\"content\":[ {\"text\":\" \\n\"} , {\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}}]},\n",
        "  {\"role\":\"user\",\"content\":[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"text\":\"\"}]}}]},\n",
        "  {\"role\":\"assistant\",\"content\": [ {\"text\" : \"\\t\"} ]},\n",
        "  {\"role\":\"user\",\"content\":[{\"text\":\"\\u0020x\"}]}\n",
        " ], \"x\": {\"keep\" : 1}}"
    );
    let found = validate(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let texts: Vec<(DefectKind, usize, &str)> = found
        .iter()
        .map(|d| (d.kind, d.message_index, &*d.message))
        .collect();
    let blank = |i: usize, j: usize| {
        format!(
            "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the text field, and try again."
        )
    };
    assert_eq!(
        texts,
        [
            (DefectKind::BlankText, 0, &*blank(0, 1)),
            (DefectKind::BlankText, 1, &*blank(1, 0)),
            (DefectKind::BlankText, 3, &*blank(3, 0)),
        ]
    );
    assert_eq!(
        crate::inspect(Dialect::BedrockConverse, body.as_bytes())
            .defects
            .unwrap(),
        found
    );
    let r = repair(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let want = body
        .replace("{\"text\":\"go\"}, {\"text\": \"\"}", "{\"text\":\"go\"}")
        .replace("[ {\"text\":\" \\n\"} , {\"toolUse\"", "[ {\"toolUse\"")
        .replace("{\"text\" : \"\\t\"}", "{\"text\" : \"[empty]\"}");
    assert_eq!(std::str::from_utf8(&r.body).unwrap(), want);
    let changes = changes_of(&r);
    assert_eq!(
        changes,
        [
            (ChangeKind::RemovedBlankText, DefectKind::BlankText, 0),
            (ChangeKind::RemovedBlankText, DefectKind::BlankText, 1),
            (ChangeKind::FilledBlankText, DefectKind::BlankText, 3),
        ]
    );
    assert_eq!(validate(Dialect::BedrockConverse, &r.body).unwrap(), []);
    // Several blank blocks alone: the first is filled, the others go.
    let alone = br#"{"messages":[{"role":"user","content":[{"text":""},{"text":" "}]}]}"#;
    let r = repair(Dialect::BedrockConverse, alone).unwrap();
    assert_eq!(
        std::str::from_utf8(&r.body).unwrap(),
        r#"{"messages":[{"role":"user","content":[{"text":"[empty]"}]}]}"#
    );
    // A last assistant message is a prefill: blank, it goes whole, and
    // the model is not made to go on from a placeholder.
    let prefill = br#"{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"text":" "}]}]}"#;
    let r = repair(Dialect::BedrockConverse, prefill).unwrap();
    assert_eq!(
        std::str::from_utf8(&r.body).unwrap(),
        r#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#
    );
    let kinds: Vec<ChangeKind> = r.changes.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [ChangeKind::RemovedBlankText]);
}

/// Bedrock refuses a message without blocks ("The content field in the
/// Message object at messages.N is empty. Add a ContentBlock object to the
/// content field and try again.", earendil-works/pi#3443); it went upstream
/// as it came. `fix` gives it the text `[empty]` (the turns alternate as
/// they did), unless it is a last assistant message, a prefill of nothing,
/// which goes whole; a user message owed results gets them and no text.
#[test]
fn a_message_without_blocks_is_filled_or_dropped() {
    let body = concat!(
        "{\"messages\": [\n",
        "  {\"role\":\"user\",\"content\":[ ]},\n",
        "  {\"role\":\"assistant\",\"content\":[]},\n",
        "  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}]},\n",
        "  {\"role\":\"assistant\",\"content\":[{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}}]},\n",
        "  {\"role\":\"user\",\"content\":[]},\n",
        "  {\"role\":\"assistant\",\"content\":[]}\n",
        " ], \"x\": {\"keep\" : 1}}"
    );
    let found = validate(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let texts: Vec<(DefectKind, usize)> = found.iter().map(|d| (d.kind, d.message_index)).collect();
    assert_eq!(
        texts,
        [
            (DefectKind::EmptyMessage, 0),
            (DefectKind::EmptyMessage, 1),
            (DefectKind::MissingResult, 4),
            (DefectKind::EmptyMessage, 4),
            (DefectKind::EmptyMessage, 5),
        ]
    );
    assert_eq!(
        found[0].message,
        "The content field in the Message object at messages.0 is empty. Add a ContentBlock object to the content field and try again."
    );
    let r = repair(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let want = body
        .replace(
            "{\"role\":\"user\",\"content\":[ ]}",
            "{\"role\":\"user\",\"content\":[{\"text\":\"[empty]\"}]}",
        )
        .replace(
            "{\"role\":\"assistant\",\"content\":[]},\n  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}]}",
            "{\"role\":\"assistant\",\"content\":[{\"text\":\"[empty]\"}]},\n  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}]}",
        )
        .replace(
            "{\"role\":\"user\",\"content\":[]},\n  {\"role\":\"assistant\",\"content\":[]}\n",
            &format!(
                "{{\"role\":\"user\",\"content\":[{{\"toolResult\":{{\"toolUseId\":\"a\",\"content\":[{{\"text\":{}}}]}}}}]}}\n",
                serde_json::to_string(MISSING_RESULT_TEXT).unwrap()
            ),
        );
    assert_eq!(std::str::from_utf8(&r.body).unwrap(), want);
    let changes = changes_of(&r);
    assert_eq!(
        changes,
        [
            (ChangeKind::FilledEmptyMessage, DefectKind::EmptyMessage, 0),
            (ChangeKind::FilledEmptyMessage, DefectKind::EmptyMessage, 1),
            (ChangeKind::InsertedResult, DefectKind::MissingResult, 3),
            (ChangeKind::RemovedEmptyMessage, DefectKind::EmptyMessage, 5),
        ]
    );
    assert_eq!(validate(Dialect::BedrockConverse, &r.body).unwrap(), []);
}

/// Bedrock refuses a `toolResult` of `status: "error"` whose `content` is
/// `[]` ("The content field at messages.N.content.J.toolResult cannot be
/// empty when status value is error.", aws-samples/
/// sample-multi-agent-orchestration-chat-on-agentcore#15); it went upstream
/// as it came. `fix` gives it one text saying so, in place, renamed or not;
/// without the status, `[]` is taken and kept.
#[test]
fn an_error_result_with_nothing_in_it_is_given_a_text() {
    let body = concat!(
        "{\"messages\": [\n",
        "  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}]},\n",
        "  {\"role\":\"assistant\",\"content\":[{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}},",
        "{\"toolUse\":{\"toolUseId\":\"b\",\"name\":\"f\",\"input\":{}}},",
        "{\"toolUse\":{\"toolUseId\":\"b\",\"name\":\"f\",\"input\":{}}}]},\n",
        "  {\"role\":\"user\",\"content\":[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[ ],\"status\":\"error\"}},",
        "{\"toolResult\":{\"toolUseId\":\"b\",\"content\":[],\"status\":\"success\"}},",
        "{\"toolResult\":{\"toolUseId\":\"b\",\"status\":\"error\",\"content\":[]}}]}\n",
        " ]}"
    );
    let found = validate(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let empty: Vec<(usize, &[String], &str)> = found
        .iter()
        .filter(|d| d.kind == DefectKind::EmptyErrorResult)
        .map(|d| (d.message_index, &*d.call_ids, &*d.message))
        .collect();
    let text = |j: usize| {
        format!(
            "The content field at messages.2.content.{j}.toolResult cannot be empty when status value is error."
        )
    };
    assert_eq!(
        empty,
        [
            (2, &["a".to_string()][..], &*text(0)),
            (2, &["b".to_string()][..], &*text(2)),
        ]
    );
    let r = repair(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let said = format!(
        "[{{\"text\":{}}}]",
        serde_json::to_string(EMPTY_ERROR_TEXT).unwrap()
    );
    let want = body
        .replace(
            "{\"toolUse\":{\"toolUseId\":\"b\",\"name\":\"f\",\"input\":{}}}]}",
            "{\"toolUse\":{\"toolUseId\":\"b_dup1\",\"name\":\"f\",\"input\":{}}}]}",
        )
        .replace(
            "\"toolUseId\":\"a\",\"content\":[ ]",
            &format!("\"toolUseId\":\"a\",\"content\":{said}"),
        )
        .replace(
            "{\"toolUseId\":\"b\",\"status\":\"error\",\"content\":[]}",
            &format!("{{\"toolUseId\":\"b_dup1\",\"status\":\"error\",\"content\":{said}}}"),
        );
    assert_eq!(std::str::from_utf8(&r.body).unwrap(), want);
    let changes = changes_of(&r);
    assert_eq!(
        changes,
        [
            (
                ChangeKind::RenamedDuplicateId,
                DefectKind::DuplicateCallId,
                1
            ),
            (
                ChangeKind::FilledErrorResult,
                DefectKind::EmptyErrorResult,
                2
            ),
            (
                ChangeKind::FilledErrorResult,
                DefectKind::EmptyErrorResult,
                2
            ),
        ]
    );
    assert_eq!(validate(Dialect::BedrockConverse, &r.body).unwrap(), []);
}

/// A `json` block whose key is written with an escape is a `json` block
/// (serde reads the key decoded), checked as one.
#[test]
fn a_json_key_written_with_an_escape_is_checked() {
    let body = concat!(
        r#"{"messages":[{"role":"user","content":[{"text":"go"}]},"#,
        r#"{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},"#,
        r#"{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"js\u006fn":[1]}]}}]}]}"#
    );
    let found = validate(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let kinds: Vec<DefectKind> = found.iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DefectKind::NonObjectJson]);
}

/// Bedrock takes a `toolUse`'s `input`, and a `json` block of a
/// `toolResult`'s `content`, only as a JSON object ("The format of the
/// value at messages.N.content.J.toolUse.input is invalid. Provide a json
/// object for the field and try again.", vercel/ai#19023;
/// aws/aws-sdk-js-v3#7330); they went upstream as they came. `fix` makes
/// an input the object its string holds, else `{"rawInvalidInput": …}`,
/// and a `json` block that is no object a text block, in place.
#[test]
fn values_bedrock_takes_only_as_objects_are_made_objects() {
    let body = concat!(
        "{\"messages\": [\n",
        "  {\"role\":\"user\",\"content\":[{\"text\":\"go\"}]},\n",
        "  {\"role\":\"assistant\",\"content\":[",
        "{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\": \"{\\\"path\\\": \\\"/x\\\"}\" }},",
        "{\"toolUse\":{\"toolUseId\":\"b\",\"name\":\"f\",\"input\":\"{\\\"path\"}},",
        "{\"toolUse\":{\"toolUseId\":\"c\",\"name\":\"f\",\"input\":{\"ok\":[1]}}}]},\n",
        "  {\"role\":\"user\",\"content\":[",
        "{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"json\":[1, 2]}, {\"text\":\"t\"}, {\"json\": \"two\\nlines\"}]}},",
        "{\"toolResult\":{\"toolUseId\":\"b\",\"content\":[{\"json\":{\"k\":[]}}]}},",
        "{\"toolResult\":{\"toolUseId\":\"c\",\"content\":[{\"json\":null}]}}]}\n",
        " ]}"
    );
    let found = validate(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let texts: Vec<(DefectKind, usize, &str)> = found
        .iter()
        .map(|d| (d.kind, d.message_index, &*d.message))
        .collect();
    let text = |at: &str| {
        format!(
            "The format of the value at {at} is invalid. Provide a json object for the field and try again."
        )
    };
    assert_eq!(
        texts,
        [
            (
                DefectKind::NonObjectJson,
                1,
                &*text("messages.1.content.0.toolUse.input")
            ),
            (
                DefectKind::NonObjectJson,
                1,
                &*text("messages.1.content.1.toolUse.input")
            ),
            (
                DefectKind::NonObjectJson,
                2,
                &*text("messages.2.content.0.toolResult.content.0.json")
            ),
            (
                DefectKind::NonObjectJson,
                2,
                &*text("messages.2.content.0.toolResult.content.2.json")
            ),
        ]
    );
    let r = repair(Dialect::BedrockConverse, body.as_bytes()).unwrap();
    let want = body
        .replace(
            "\"input\": \"{\\\"path\\\": \\\"/x\\\"}\" }",
            "\"input\": {\"path\": \"/x\"} }",
        )
        .replace(
            "\"input\":\"{\\\"path\"}",
            "\"input\":{\"rawInvalidInput\":\"{\\\"path\"}}",
        )
        .replace(
            "[{\"json\":[1, 2]}, {\"text\":\"t\"}, {\"json\": \"two\\nlines\"}]",
            "[{\"text\":\"[1, 2]\"}, {\"text\":\"t\"}, {\"text\":\"two\\nlines\"}]",
        );
    assert_eq!(std::str::from_utf8(&r.body).unwrap(), want);
    let changes: Vec<(ChangeKind, usize, Option<&str>)> = r
        .changes
        .iter()
        .map(|c| (c.kind, c.message_index, c.call_id.as_deref()))
        .collect();
    assert_eq!(
        changes,
        [
            (ChangeKind::MadeInputObject, 1, Some("a")),
            (ChangeKind::MadeInputObject, 1, Some("b")),
            (ChangeKind::ConvertedJsonToText, 2, Some("a")),
            (ChangeKind::ConvertedJsonToText, 2, Some("a")),
        ]
    );
    assert!(
        r.changes
            .iter()
            .all(|c| c.defect == DefectKind::NonObjectJson)
    );
    assert_eq!(validate(Dialect::BedrockConverse, &r.body).unwrap(), []);
}

mod by_model;
mod fast_agrees_with_serde;
