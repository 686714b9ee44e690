use serde_json::{Value, json};
use toolwarden_core::{ErrorKind, ToolFailure, ToolOutcome, Verdict};

use super::{repair, response_view, validate};
use crate::{
    ChangeKind, DefectKind, StreamParser,
    testutil::{EagerView, chunks_as_sse, corpus, eager_view, fixture, parse_stream},
};

const BIG: &str = "conversations/conv_anthropic_messages_claudecode_spotter_258c7280.json";
const SHORT: &str = "conversations/conv_anthropic_messages_claudecode_spotter_short.json";

fn body(messages: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"model": "claude-x", "max_tokens": 10, "messages": messages}))
        .unwrap()
}

fn view(b: &[u8]) -> Result<EagerView<'_>, crate::WireError> {
    let detector = crate::Detector::default();
    eager_view(crate::Dialect::Anthropic, b, &|t| detector.verdict(t))
}

fn kinds(b: &[u8]) -> Vec<(DefectKind, usize)> {
    validate(b)
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index))
        .collect()
}

fn user_text(t: &str) -> Value {
    json!({"role": "user", "content": t})
}
fn calls(ids: &[&str]) -> Value {
    let blocks: Vec<Value> = ids
        .iter()
        .map(|id| json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}}))
        .collect();
    json!({"role": "assistant", "content": blocks})
}
fn result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
}
fn results(ids: &[&str]) -> Value {
    json!({"role": "user", "content": ids.iter().map(|i| result(i)).collect::<Vec<_>>()})
}

#[test]
fn corpus_conversation_is_read_completely() {
    let Some(b) = corpus(BIG) else { return };
    let v = view(&b).unwrap();
    assert_eq!(v.message_count, 303);
    assert_eq!(v.model.as_deref(), Some("claude-opus-4-6"));
    assert_eq!(v.calls.len(), 186);
    assert_eq!(v.results.len(), 186);
    let explicit_failures = v
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::explicit(true))
        .count();
    assert_eq!(explicit_failures, 7);
    assert!(
        v.results.iter().all(|r| r.tool.is_some()),
        "every tool name resolves"
    );
    assert_eq!(v.calls[0].name, "Bash");
    let args: Value = serde_json::from_str(&v.calls[0].arguments).unwrap();
    assert!(args["command"].as_str().unwrap().starts_with("bd ready"));
    // Only the results after the last assistant message are new.
    let raw: Value = serde_json::from_slice(&b).unwrap();
    let msgs = raw["messages"].as_array().unwrap();
    let last_assistant = msgs.iter().rposition(|m| m["role"] == "assistant").unwrap();
    for r in &v.results {
        assert_eq!(r.new, r.message_index > last_assistant);
    }
    assert!(v.first_turn_hash.is_some());
    assert!(validate(&b).unwrap().is_empty());
}

#[test]
fn short_corpus_conversation_has_two_rejected_calls() {
    let b = fixture(SHORT);
    let v = view(&b).unwrap();
    assert_eq!(v.calls.len(), 2);
    assert_eq!(v.results.len(), 2);
    for (r, c) in v.results.iter().zip(&v.calls) {
        assert_eq!(r.verdict, Verdict::explicit(true));
        assert!(r.new);
        assert_eq!(r.call_id, c.id);
        assert_eq!(r.tool.as_deref(), Some(&*c.name));
    }
    assert!(validate(&b).unwrap().is_empty());
}

#[test]
fn first_turn_hash_is_stable_as_the_conversation_grows() {
    let Some(big) = corpus(BIG) else { return };
    let full: Value = serde_json::from_slice(&big).unwrap();
    let mut early = full.clone();
    early["messages"].as_array_mut().unwrap().truncate(3);
    // Clients move cache_control markers between turns.
    early["messages"][0]["content"][0]["cache_control"] = json!({"type": "ephemeral"});
    let h = |v: &Value| {
        let b = serde_json::to_vec(v).unwrap();
        view(&b).unwrap().first_turn_hash
    };
    assert_eq!(h(&full), h(&early));
    let mut other = early.clone();
    other["messages"][0]["content"][0]["text"] = json!("Implement something else");
    assert_ne!(h(&full), h(&other));
    let mut with_system = early.clone();
    with_system["system"] = json!([{"type": "text", "text": "You are Claude Code."}]);
    assert_ne!(h(&early), h(&with_system));
}

#[test]
fn result_content_forms_and_verdicts() {
    let b = body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "Shot", "input": {"x": [1, 2]}},
            {"type": "tool_use", "id": "t3", "name": "Mcp", "input": {}},
            {"type": "tool_use", "id": "t4", "name": "Read", "input": {}}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Error: no such file"},
            {"type": "tool_result", "tool_use_id": "t2", "is_error": false, "content": [
                {"type": "text", "text": "line one"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "text", "text": "line \"two\""}
            ]},
            {"type": "tool_result", "tool_use_id": "t3", "content": "{\"content\":[],\"isError\":true}"},
            {"type": "tool_result", "tool_use_id": "t4"},
            {"type": "text", "text": "go on"}
        ]}
    ]));
    let v = view(&b).unwrap();
    let r = &v.results;
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].verdict, Verdict::NONE, "not flagged: no heuristics");
    assert_eq!(r[1].verdict, Verdict::explicit(false));
    assert_eq!(r[1].content, "line one\nline \"two\"");
    assert_eq!(r[1].tool.as_deref(), Some("Shot"));
    assert_eq!(
        r[2].verdict,
        Verdict::explicit(true),
        "MCP isError inside content"
    );
    assert_eq!(r[3].verdict, Verdict::NONE);
    assert_eq!(r[3].content, "");
    assert_eq!(v.calls[1].arguments, r#"{"x":[1,2]}"#);
    assert!(r.iter().all(|r| r.new && r.message_index == 2));
}

#[test]
fn server_tool_results_carry_explicit_verdicts() {
    let fetch: Value = serde_json::from_slice(&fixture(
        "sse/vercel-ai__anthropic-web-fetch-tool.error.json",
    ))
    .unwrap();
    let b = body(json!([
        {"role": "user", "content": "fetch it"},
        {"role": "assistant", "content": fetch["content"]},
        {"role": "user", "content": "thanks"}
    ]));
    let v = view(&b).unwrap();
    assert_eq!(v.calls.len(), 1);
    assert_eq!(v.calls[0].name, "web_fetch");
    assert_eq!(v.results.len(), 1);
    assert_eq!(v.results[0].verdict, Verdict::explicit(true));
    assert_eq!(v.results[0].content, "unavailable");
    assert_eq!(v.results[0].tool.as_deref(), Some("web_fetch"));
    assert!(!v.results[0].new);
    assert!(
        validate(&b).unwrap().is_empty(),
        "server tools pair inside the assistant turn"
    );
    let rv = response_view(&fixture(
        "sse/vercel-ai__anthropic-web-fetch-tool.error.json",
    ))
    .unwrap();
    assert_eq!(rv.calls.len(), 1);
    assert_eq!(rv.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(rv.usage.input_tokens, Some(1902));
}

#[test]
fn bad_bodies_are_errors_not_panics() {
    for bad in [
        &b"{"[..],
        b"[]",
        b"{\"messages\": 3}",
        b"{\"messages\":[{\"role\":\"user\"}]}",
        b"\xff",
    ] {
        assert!(view(bad).is_err());
        assert!(validate(bad).is_err());
        assert!(repair(bad).is_err());
    }
    let e = view(b"{\"messages\":[").unwrap_err();
    assert_eq!(e.kind(), crate::WireErrorKind::Truncated);
}

#[test]
fn defects_are_located_and_worded_like_anthropic() {
    let missing = body(json!([
        user_text("go"),
        calls(&["toolu_A", "toolu_B"]),
        results(&["toolu_A"])
    ]));
    let d = validate(&missing).unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].kind, DefectKind::MissingResult);
    assert_eq!(
        d[0].message,
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    );
    let orphan = body(
        json!([user_text("go"), {"role": "assistant", "content": "hm"}, results(&["toolu_X"])]),
    );
    let d = validate(&orphan).unwrap();
    assert_eq!(
        d[0].message,
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    );
    let dup = body(json!([
        user_text("go"),
        calls(&["a"]),
        results(&["a"]),
        calls(&["a"]),
        results(&["a"])
    ]));
    let d = validate(&dup).unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "messages.3.content.0: `tool_use` ids must be unique"
    );
    let late = body(json!([user_text("go"), calls(&["a"]),
        {"role": "user", "content": [{"type": "text", "text": "first"}, result("a")]}]));
    assert_eq!(kinds(&late), vec![(DefectKind::ResultsNotFirst, 2)]);
    assert!(
        validate(&late).unwrap()[0]
            .message
            .starts_with("messages.2: Did not find 1 `tool_result` block(s) at the beginning")
    );
    let unanswered_last = body(json!([user_text("go"), calls(&["a"])]));
    assert_eq!(
        kinds(&unanswered_last),
        vec![(DefectKind::MissingResult, 1)]
    );
    let twice = body(json!([
        user_text("go"),
        calls(&["a"]),
        results(&["a", "a"])
    ]));
    assert_eq!(kinds(&twice), vec![(DefectKind::DuplicateCallId, 2)]);
}

fn repaired_clean(b: &[u8]) -> (Vec<u8>, Vec<crate::Change>) {
    let r = repair(b).unwrap();
    assert!(r.is_changed());
    let out = r.body.into_owned();
    assert_eq!(
        validate(&out).unwrap(),
        vec![],
        "repaired: {}",
        String::from_utf8_lossy(&out)
    );
    (out, r.changes)
}

/// The message after a call whose `content` is not text or blocks
/// (`null`, a number, an object): the repaired message's `text` blocks
/// are strings all the same (`null` gives none).
#[test]
fn repair_keeps_text_a_string_whatever_the_content_was() {
    for content in [json!(null), json!(42), json!({"k": "v"})] {
        let b = body(json!([
            user_text("go"),
            calls(&["a"]),
            {"role": "user", "content": content.clone()}
        ]));
        let (out, _) = repaired_clean(&b);
        let v: Value = serde_json::from_slice(&out).unwrap();
        let blocks = v["messages"][2]["content"].as_array().unwrap().clone();
        for block in &blocks {
            if block["type"] == "text" {
                assert!(block["text"].is_string(), "{content}: {v}");
            }
        }
        let texts = blocks.iter().filter(|b| b["type"] == "text").count();
        assert_eq!(texts, usize::from(!content.is_null()), "{content}: {v}");
        // And a second repair changes nothing.
        assert!(!repair(&out).unwrap().is_changed(), "{content}");
    }
}

#[test]
fn repair_inserts_error_results() {
    let b = body(json!([
        user_text("go"),
        calls(&["a", "b"]),
        results(&["a"]),
        calls(&["c"]),
        user_text("next")
    ]));
    let (out, changes) = repaired_clean(&b);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["messages"][2]["content"][1]["tool_use_id"], "b");
    assert_eq!(v["messages"][2]["content"][1]["is_error"], true);
    assert_eq!(v["messages"][4]["content"][0]["tool_use_id"], "c");
    assert_eq!(
        v["messages"][4]["content"][1],
        json!({"type": "text", "text": "next"})
    );
    assert_eq!(changes.len(), 2);
    assert!(changes.iter().all(|c| c.kind == ChangeKind::InsertedResult));
    // A trailing unanswered call gets a new user message.
    let b = body(json!([user_text("go"), calls(&["a"])]));
    let (out, _) = repaired_clean(&b);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["messages"][2]["role"], "user");
}

#[test]
fn repair_moves_results_and_converts_orphans() {
    let b = body(json!([
        user_text("go"), calls(&["a"]),
        {"role": "user", "content": [{"type": "text", "text": "wait"}, result("a"), result("zz")]},
        {"role": "assistant", "content": "done"}
    ]));
    let (out, changes) = repaired_clean(&b);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let c = &v["messages"][2]["content"];
    assert_eq!(c[0]["tool_use_id"], "a");
    assert_eq!(c[1]["text"], "wait");
    assert!(c[2]["text"].as_str().unwrap().contains("zz"));
    let kinds: Vec<_> = changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![ChangeKind::MovedResult, ChangeKind::ConvertedResultToText]
    );
    // A result two messages away moves back to its call.
    let b = body(
        json!([user_text("go"), calls(&["a"]), user_text("hmm"), {"role": "assistant", "content": "?"}, results(&["a"])]),
    );
    let (out, _) = repaired_clean(&b);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["messages"][2]["content"][0]["tool_use_id"], "a");
    assert_eq!(
        v["messages"][4]["content"][0]["type"], "text",
        "emptied message keeps a text"
    );
}

#[test]
fn repair_renames_duplicate_ids_with_their_results() {
    let b = body(json!([
        user_text("go"),
        calls(&["a"]),
        results(&["a"]),
        calls(&["a", "b"]),
        results(&["a", "b"])
    ]));
    let (out, changes) = repaired_clean(&b);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["messages"][3]["content"][0]["id"], "a_dup1");
    assert_eq!(v["messages"][4]["content"][0]["tool_use_id"], "a_dup1");
    assert_eq!(changes[0].kind, ChangeKind::RenamedDuplicateId);
    assert_eq!(changes.len(), 1);
    let b = body(json!([
        user_text("go"),
        calls(&["a"]),
        results(&["a", "a"])
    ]));
    let (_, changes) = repaired_clean(&b);
    assert_eq!(changes[0].kind, ChangeKind::RemovedDuplicate);
}

/// A resent turn that searched the web: the repeated `server_tool_use` is
/// renamed, and so is its result in the same message (left with the old
/// id, the API refuses the turn: "`web_search` tool use with id … was
/// found without a corresponding `web_search_tool_result` block").
#[test]
fn repair_renames_a_repeated_server_call_with_its_result() {
    let searched = || {
        json!({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "r"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content": []},
            {"type": "text", "text": "found"}
        ]})
    };
    let b = body(json!([
        user_text("go"),
        searched(),
        user_text("again"),
        searched(),
        user_text("ok")
    ]));
    let (out, changes) = repaired_clean(&b);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let c = &v["messages"][3]["content"];
    assert_eq!(c[0]["id"], "srvtoolu_1_dup1", "{v}");
    assert_eq!(c[1]["tool_use_id"], "srvtoolu_1_dup1", "{v}");
    assert_eq!(c[2]["id"], "srvtoolu_2_dup1", "{v}");
    assert_eq!(c[3]["tool_use_id"], "srvtoolu_2_dup1", "{v}");
    assert_eq!(v["messages"][1], searched(), "the first turn is untouched");
    // One change per renamed call; the results follow them.
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(
        changes
            .iter()
            .all(|c| c.kind == ChangeKind::RenamedDuplicateId)
    );
}

#[test]
fn repair_keeps_every_other_byte() {
    // Pretty-printed corpus body with one result removed: only the message
    // that lost it changes.
    let Some(b) = corpus(BIG) else { return };
    let text = String::from_utf8(b.clone()).unwrap();
    let needle = "\"tool_use_id\": \"toolu_01MGqJNAucDoKPyZKrzvWLmx\"";
    assert!(text.contains(needle));
    let broken = text.replace(needle, "\"tool_use_id\": \"toolu_elsewhere\"");
    let r = repair(broken.as_bytes()).unwrap();
    let out = String::from_utf8(r.body.into_owned()).unwrap();
    assert!(validate(out.as_bytes()).unwrap().is_empty());
    let kinds: Vec<_> = r.changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![
            ChangeKind::InsertedResult,
            ChangeKind::ConvertedResultToText
        ]
    );
    // Everything before messages[2] and after it is identical.
    let start = broken
        .find(
            needle
                .replace("toolu_01MGqJNAucDoKPyZKrzvWLmx", "toolu_elsewhere")
                .as_str(),
        )
        .unwrap();
    assert_eq!(out[..start - 200], broken[..start - 200]);
    let tail = broken.len() - broken.find("\"toolu_01EYNbW6t5ju5bmh3jBTZBUs\"").unwrap();
    assert_eq!(out[out.len() - tail..], broken[broken.len() - tail..]);
    // A clean body is returned as is, without a copy.
    let r = repair(&b).unwrap();
    assert!(matches!(r.body, std::borrow::Cow::Borrowed(_)));
    assert!(!r.is_changed());
}

#[test]
fn stream_reassembles_tool_use() {
    let sse = fixture("sse/anthropic-sdk-python__tool_use_response.sse");
    let whole = parse_stream(crate::Dialect::Anthropic, &sse);
    assert_eq!(whole.id.as_deref(), Some("msg_019Q1hrJbZG26Fb9BQhrkHEr"));
    assert_eq!(whole.model.as_deref(), Some("claude-sonnet-4-20250514"));
    assert_eq!(whole.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(whole.usage.input_tokens, Some(377));
    assert_eq!(whole.usage.output_tokens, Some(65));
    assert_eq!(whole.calls.len(), 1);
    assert_eq!(whole.calls[0].name, "get_weather");
    assert_eq!(whole.calls[0].id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    assert_eq!(whole.calls[0].arguments, r#"{"location": "Paris"}"#);
    for split in (0..sse.len()).step_by(7) {
        let mut p = StreamParser::new(crate::Dialect::Anthropic);
        p.feed(&sse[..split]);
        p.feed(&sse[split..]);
        assert_eq!(p.finish(), whole, "split at {split}");
    }
}

#[test]
fn stream_reads_server_tools_with_and_without_event_lines() {
    let chunks = fixture("sse/vercel-ai__anthropic-web-search-tool.1.chunks.txt");
    let with_events = parse_stream(crate::Dialect::Anthropic, &chunks_as_sse(&chunks));
    let mut bare = Vec::new();
    for line in chunks.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        bare.extend_from_slice(b"data: ");
        bare.extend_from_slice(line);
        bare.extend_from_slice(b"\n\n");
    }
    let without = parse_stream(crate::Dialect::Anthropic, &bare);
    assert_eq!(with_events, without);
    assert_eq!(with_events.calls.len(), 1);
    assert_eq!(with_events.server_calls, [0], "marked the provider's");
    assert_eq!(with_events.client_calls().count(), 0);
    assert_eq!(with_events.calls[0].name, "web_search");
    assert_eq!(
        with_events.calls[0].arguments,
        r#"{"query": "tech news today September 26 2025"}"#
    );
    assert!(with_events.stop_reason.is_some());
}

#[test]
fn stream_errors_and_truncation() {
    let sse = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":3}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let v = parse_stream(crate::Dialect::Anthropic, sse);
    assert_eq!(v.error.as_deref(), Some("overloaded_error: Overloaded"));
    assert_eq!(
        v.calls[0].arguments, "{\"a\":",
        "partial arguments are kept"
    );
    assert_eq!(v.stop_reason, None);
    let junk = parse_stream(
        crate::Dialect::Anthropic,
        b"data: {not json\n\nevent: content_block_start\ndata: [1]\n\n",
    );
    assert_eq!(
        junk,
        crate::ResponseView {
            ended_early: true,
            ..crate::ResponseView::default()
        }
    );
}

/// Anthropic refuses a `tool_result` with `is_error: true` and empty
/// content (400: "content cannot be empty if `is_error` is true"): a
/// failure whose model text is blank (a tool's error with an empty
/// message, an application's empty override) still says it failed.
#[test]
fn a_failure_with_a_blank_message_still_has_content() {
    for blank in ["", "  \n"] {
        let failure = ToolFailure {
            kind: ErrorKind::InvalidArguments,
            code: None,
            technical_message: "refused".into(),
            model_message: blank.into(),
            retryable: false,
            fatal: false,
        };
        let msgs = super::render_results(&[ToolOutcome::failure("t1", "Read", failure)]);
        let block = &msgs[0]["content"][0];
        assert_eq!(block["is_error"], true);
        let text = block["content"].as_str().unwrap();
        assert!(!text.trim().is_empty(), "{block}");
        assert!(text.contains("invalid_arguments"), "{text}");
    }
    // A success may be empty: only an error needs content.
    let empty = ToolOutcome::success("t2", "Read", json!(""));
    assert_eq!(
        super::render_results(&[empty])[0]["content"][0]["content"],
        ""
    );
}

#[test]
fn render_flags_failures() {
    let ok = ToolOutcome::success("t1", "Read", json!("file text"));
    let failure = ToolFailure {
        kind: ErrorKind::Timeout,
        code: None,
        technical_message: "deadline 5s".into(),
        model_message: "The tool timed out.".into(),
        retryable: true,
        fatal: false,
    };
    let bad = ToolOutcome::failure("t2", "Bash", failure);
    let msgs = super::render_results(&[ok, bad]);
    assert_eq!(msgs.len(), 1);
    assert_eq!(
        msgs[0],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "file text"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "The tool timed out.", "is_error": true}
        ]})
    );
    assert!(super::render_results(&[]).is_empty());
    // What we render pairs cleanly after the calls.
    let mut conv = vec![user_text("go"), calls(&["t1", "t2"])];
    conv.extend(msgs);
    assert!(validate(&body(Value::Array(conv))).unwrap().is_empty());
}

#[test]
fn stream_fast_paths_agree_with_full_parsing() {
    let start = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n";
    let deltas = [
        // canonical, reordered (index after a nested value), decoy key value
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
        r#"{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"1,"},"index":1}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","note":"partial_json","partial_json":"\"b\":2}"}}"#,
    ];
    let mut sse = start.to_string();
    for d in deltas {
        sse += &format!("event: content_block_delta\ndata: {d}\n\n");
    }
    sse += "event: content_block_stop\ndata: {\"index\" : 1, \"type\":\"content_block_stop\"}\n\n";
    sse += start.replace("\"id\":\"t\"", "\"id\":\"u\"").as_str();
    sse += "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"extra\":{\"index\":0},\"index\":1}\n\n";
    let v = parse_stream(crate::Dialect::Anthropic, sse.as_bytes());
    assert_eq!(v.calls.len(), 2);
    assert_eq!(v.calls[0].arguments, r#"{"a":1,"b":2}"#);
    assert_eq!(v.calls[1].arguments, "{}");
}

/// The defects the gateway's one pass finds (fast path or serde seeds).
fn inspected(body: &str) -> Vec<(crate::DefectKind, usize)> {
    crate::inspect(crate::Dialect::Anthropic, body.as_bytes())
        .defects
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index))
        .collect()
}

mod fast_agrees_with_serde;
mod outline_agrees_with_layout;
mod prefill_whitespace;
mod threads;

/// A conversation whose client never sets `is_error` (a custom app on the
/// Anthropic API), or sets it on errors alone (the Vercel AI SDK, OpenCode),
/// has its unflagged results judged by the detector; one whose client flags
/// a success anywhere (Claude Code) is trusted.
#[test]
fn unflagged_results_go_to_the_detector_unless_the_client_flags_successes() {
    let messages = |second: Value| {
        json!([
            {"role": "user", "content": "run it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "shell", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "shell", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nboom"},
                second
            ]}
        ])
    };
    let never = body(messages(
        json!({"type": "tool_result", "tool_use_id": "t2", "content": "Tool execution denied by policy."}),
    ));
    let v = view(&never).unwrap();
    assert_eq!(v.results[0].verdict.basis, toolwarden_core::Basis::Client);
    assert!(v.results[0].verdict.failed);
    assert_eq!(v.results[1].verdict, Verdict::heuristic_failure());

    let errors_only = body(messages(
        json!({"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": "boom"}),
    ));
    let v = view(&errors_only).unwrap();
    assert!(
        v.results[0].verdict.failed,
        "errors alone flagged: the detector reads the rest"
    );
    assert_eq!(v.results[1].verdict, Verdict::explicit(true));

    let flagging = body(messages(
        json!({"type": "tool_result", "tool_use_id": "t2", "is_error": false, "content": "ok"}),
    ));
    let v = view(&flagging).unwrap();
    assert_eq!(
        v.results[0].verdict,
        Verdict::NONE,
        "the client flags: trusted"
    );
    assert_eq!(v.results[1].verdict, Verdict::explicit(false));
}

/// The whole body and its stream mark the same calls as the server's, and
/// `client_calls` (the function and the view's method) leaves them out.
#[test]
fn server_calls_are_marked_in_the_body_and_the_stream() {
    let body = br#"{"id":"msg_1","type":"message","role":"assistant","model":"c","content":[
        {"type":"text","text":"Looking."},
        {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},
        {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
        {"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}},
        {"type":"mcp_tool_use","id":"mcptoolu_1","name":"m","server_name":"s","input":{}},
        {"type":"tool_use","id":"toolu_2","name":"read","input":{"path":"b"}}],
        "stop_reason":"tool_use"}"#;
    let whole = response_view(body).unwrap();
    assert_eq!(whole.calls.len(), 4);
    assert_eq!(whole.server_calls, [0, 2]);
    let ids = |calls: Vec<&toolwarden_core::ToolCall>| {
        calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>()
    };
    assert_eq!(ids(whole.client_calls().collect()), ["toolu_1", "toolu_2"]);
    let by_fn = crate::client_calls(crate::Dialect::Anthropic, body).unwrap();
    assert_eq!(ids(by_fn.iter().collect()), ["toolu_1", "toolu_2"]);

    let mut sse = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"c\"}}\n\n",
    );
    let blocks: [(&str, &str, &str, &str); 4] = [
        (
            "server_tool_use",
            "srvtoolu_1",
            "web_search",
            r#"{"query":"q"}"#,
        ),
        ("tool_use", "toolu_1", "read", r#"{"path":"a"}"#),
        ("mcp_tool_use", "mcptoolu_1", "m", "{}"),
        ("tool_use", "toolu_2", "read", r#"{"path":"b"}"#),
    ];
    for (i, (kind, id, name, input)) in blocks.iter().enumerate() {
        let start = json!({"type": "content_block_start", "index": i,
            "content_block": {"type": kind, "id": id, "name": name, "input": {}}});
        let delta = json!({"type": "content_block_delta", "index": i,
            "delta": {"type": "input_json_delta", "partial_json": input}});
        let stop = json!({"type": "content_block_stop", "index": i});
        for e in [start, delta, stop] {
            sse.push_str(&format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap()
            ));
        }
    }
    sse.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    let streamed = parse_stream(crate::Dialect::Anthropic, sse.as_bytes());
    assert_eq!(streamed.server_calls, whole.server_calls);
    assert_eq!(
        ids(streamed.client_calls().collect()),
        ["toolu_1", "toolu_2"]
    );
    // Serialized only when there are some.
    let plain = serde_json::to_value(crate::ResponseView::default()).unwrap();
    assert!(plain.get("server_calls").is_none());
    assert_eq!(
        serde_json::to_value(&whole).unwrap()["server_calls"],
        json!([0, 2])
    );
}

/// The body of a tool_result flagged `is_error: true` for call `a` (as
/// `result`), answering the first of two calls, before a good result and a
/// text, laid out with odd spacing: the bytes a repair must keep.
fn laid_out_with_error_result(result: &str) -> String {
    format!(
        concat!(
            "{{ \"model\":\"claude-x\",  \"max_tokens\": 10,\n",
            " \"messages\": [\n",
            "  {{\"role\": \"user\", \"content\": \"go\"}},\n",
            "  {{\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\",\"input\":{{}}}},",
            " {{\"type\": \"tool_use\", \"id\": \"b\", \"name\": \"f\", \"input\": {{\"n\": 1.50}}}}]}},\n",
            "  {{\"role\": \"user\", \"content\": [ {result} ,\n",
            "     {{\"type\":\"tool_result\",\"tool_use_id\":\"b\",\"content\":\"ok\\u00e9\"}}, {{\"type\": \"text\", \"text\": \"more\"}} ]}},\n",
            "  {{\"role\": \"assistant\", \"content\": \"done\"}}\n",
            " ],\n",
            " \"stream\": false }}"
        ),
        result = result
    )
}

/// Anthropic refuses an error result with nothing in it: "content cannot
/// be empty if `is_error` is true" (for `""` and `[]`; an absent or `null`
/// content is as empty).
#[test]
fn an_error_result_with_nothing_in_it_is_a_defect() {
    let empty = [
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": ""}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": []}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": [ ]}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": null}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true}"#,
        r#"{"content": "", "is_error": true, "tool_use_id": "a", "type": "tool_result"}"#,
    ];
    for result in empty {
        let b = laid_out_with_error_result(result);
        let d = validate(b.as_bytes()).unwrap();
        assert_eq!(d.len(), 1, "{result}: {d:?}");
        assert_eq!(d[0].kind, DefectKind::EmptyErrorResult);
        assert_eq!(d[0].message_index, 2);
        assert_eq!(d[0].call_ids, vec!["a".to_string()]);
        assert_eq!(
            d[0].message,
            "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true"
        );
        // The gateway's one pass finds it too.
        let found = crate::inspect(crate::Dialect::Anthropic, b.as_bytes());
        assert_eq!(found.defects.unwrap(), d, "{result}");
    }
    let fine = [
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": "failed"}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": [{"type": "text", "text": "x"}]}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": false, "content": ""}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "content": []}"#,
        r#"{"type": "tool_result", "tool_use_id": "a", "is_error": null}"#,
        r#"{"type": "web_search_tool_result", "tool_use_id": "a", "is_error": true, "content": []}"#,
    ];
    for result in fine {
        let b = laid_out_with_error_result(result);
        let d = validate(b.as_bytes()).unwrap();
        assert!(
            d.iter().all(|d| d.kind != DefectKind::EmptyErrorResult),
            "{result}: {d:?}"
        );
    }
}

/// The repair gives an empty error result a text in place — a string, or
/// one text block where the content was an array — and keeps every other
/// byte of the body.
#[test]
fn repair_fills_an_empty_error_result_and_keeps_every_other_byte() {
    let said = r#""The tool reported an error and gave no message.""#;
    let cases = [
        (
            r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": ""}"#,
            format!(
                r#"{{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": {said}}}"#
            ),
        ),
        (
            r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": [ ]}"#,
            format!(
                r#"{{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": [{{"type":"text","text":{said}}}]}}"#
            ),
        ),
        (
            r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": null, "cache_control": {"type": "ephemeral"}}"#,
            format!(
                r#"{{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": {said}, "cache_control": {{"type": "ephemeral"}}}}"#
            ),
        ),
        (
            r#"{"type": "tool_result", "tool_use_id": "a", "is_error": true}"#,
            format!(
                r#"{{"content":{said},"type": "tool_result", "tool_use_id": "a", "is_error": true}}"#
            ),
        ),
    ];
    for (result, filled) in cases {
        let b = laid_out_with_error_result(result);
        let (out, changes) = repaired_clean(b.as_bytes());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            laid_out_with_error_result(&filled),
            "{result}"
        );
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].kind, ChangeKind::FilledErrorResult);
        assert_eq!(changes[0].defect, DefectKind::EmptyErrorResult);
        assert_eq!(changes[0].message_index, 2);
        assert_eq!(changes[0].call_id.as_deref(), Some("a"));
    }
}

/// An empty error result that must also move (after a text) or be renamed
/// (answering a repeated id) is filled as well, once.
#[test]
fn repair_fills_an_empty_error_result_it_moves_or_renames() {
    let empty = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "is_error": true, "content": []});
    let b = body(json!([
        user_text("go"),
        calls(&["a"]),
        {"role": "user", "content": [{"type": "text", "text": "wait"}, empty("a")]},
        calls(&["a"]),
        {"role": "user", "content": [empty("a")]},
    ]));
    let (out, changes) = repaired_clean(&b);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let said = json!([{"type": "text", "text": "The tool reported an error and gave no message."}]);
    assert_eq!(v["messages"][2]["content"][0]["content"], said, "{v}");
    assert_eq!(v["messages"][2]["content"][1]["text"], "wait", "{v}");
    assert_eq!(
        v["messages"][4]["content"][0]["tool_use_id"], "a_dup1",
        "{v}"
    );
    assert_eq!(v["messages"][4]["content"][0]["content"], said, "{v}");
    let mut kinds: Vec<_> = changes.iter().map(|c| c.kind).collect();
    kinds.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(
        kinds,
        vec![
            ChangeKind::FilledErrorResult,
            ChangeKind::FilledErrorResult,
            ChangeKind::MovedResult,
            ChangeKind::RenamedDuplicateId
        ]
    );
    // A second result for one call is dropped, not filled.
    let b = body(json!([
        user_text("go"),
        calls(&["a"]),
        {"role": "user", "content": [result("a"), empty("a")]},
    ]));
    let (_, changes) = repaired_clean(&b);
    let kinds: Vec<_> = changes.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, vec![ChangeKind::RemovedDuplicate]);
}
