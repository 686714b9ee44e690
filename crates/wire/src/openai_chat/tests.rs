use serde_json::{Value, json};
use toolwarden_core::{Basis, ErrorKind, FLAGLESS_ERROR_PREFIX, ToolFailure, ToolOutcome, Verdict};

use super::{repair, response_view, validate};
use crate::testutil::{EagerView, eager_view};

fn view_with<'a>(
    b: &'a [u8],
    judge: crate::text::Judge<'_>,
) -> Result<EagerView<'a>, crate::WireError> {
    eager_view(crate::Dialect::OpenAiChat, b, judge)
}
use crate::{
    ChangeKind, DefectKind, Dialect, StreamParser,
    testutil::{fixture, parse_stream, starts_with_error},
};

const TAU13: &str = "conversations/conv_openai_chat_taubench_airline_task13_trial0.json";
const TAU9: &str = "conversations/conv_openai_chat_taubench_airline_task9_trial2.json";
const SSE: &str = "sse/openai-python__chat_parallel_tool_calls_f82268f2.sse";

fn body(messages: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"model": "gpt-4o", "messages": messages})).unwrap()
}
fn user(t: &str) -> Value {
    json!({"role": "user", "content": t})
}
fn calls(ids: &[&str]) -> Value {
    let tcs: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": tcs})
}
fn tool(id: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": "ok"})
}
fn kinds(b: &[u8]) -> Vec<(DefectKind, usize)> {
    validate(b)
        .unwrap()
        .into_iter()
        .map(|d| (d.kind, d.message_index))
        .collect()
}

#[test]
fn corpus_conversations_are_read_and_valid() {
    for (file, results, failures) in [(TAU13, 14, 6), (TAU9, 23, 5)] {
        let b = fixture(file);
        let v = view_with(&b, &starts_with_error).unwrap();
        assert_eq!(v.results.len(), results, "{file}");
        assert_eq!(v.calls.len(), results, "{file}");
        let failed = v.results.iter().filter(|r| r.verdict.failed).count();
        assert_eq!(
            failed, failures,
            "{file}: the stub rule finds tau-bench's `Error:` results"
        );
        assert!(v.results.iter().all(|r| r.verdict.basis != Basis::Explicit));
        assert!(v.results.iter().all(|r| r.tool.is_some()));
        assert_eq!(v.model.as_deref(), Some("gpt-4o"));
        assert!(v.first_turn_hash.is_some());
        assert_eq!(
            validate(&b).unwrap(),
            vec![],
            "{file} was accepted by OpenAI"
        );
        let r = repair(&b).unwrap();
        assert!(matches!(r.body, std::borrow::Cow::Borrowed(_)));
    }
}

#[test]
fn reused_ids_resolve_to_the_latest_call() {
    let mut first = calls(&["call_1"]);
    first["tool_calls"][0]["function"]["name"] = json!("first");
    let b = body(json!([
        user("hi"),
        first,
        tool("call_1"),
        calls(&["call_1"]),
        tool("call_1")
    ]));
    let v = view_with(&b, &starts_with_error).unwrap();
    assert_eq!(v.results[0].tool.as_deref(), Some("first"));
    assert_eq!(v.results[1].tool.as_deref(), Some("lookup"));
    assert_eq!((v.results[0].new, v.results[1].new), (false, true));
    assert!(validate(&b).unwrap().is_empty());
}

/// A second tool message for one call (the API refuses it: "Duplicate
/// value for 'tool_call_id' …", `fix` mode takes it out) is no result of
/// its own, nor a second one with no call: the call's result counts once.
/// Two calls of one id are answered twice.
#[test]
fn a_second_answer_to_one_call_is_no_new_result() {
    let new = |messages: Value| -> Vec<bool> {
        let b = body(messages);
        let v = view_with(&b, &starts_with_error).unwrap();
        v.results.iter().map(|r| r.new).collect()
    };
    assert_eq!(
        new(json!([
            user("hi"),
            calls(&["a", "b"]),
            tool("a"),
            tool("b"),
            tool("a")
        ])),
        [true, true, false]
    );
    assert_eq!(
        new(json!([
            user("hi"),
            calls(&["a"]),
            tool("a"),
            calls(&["a"]),
            tool("a"),
            tool("a")
        ])),
        [false, true, false]
    );
    assert_eq!(
        new(json!([
            user("hi"),
            calls(&["a"]),
            calls(&["a"]),
            tool("a"),
            tool("a")
        ])),
        [true, true]
    );
    assert_eq!(
        new(json!([user("hi"), tool("x"), tool("x")])),
        [true, false]
    );
}

#[test]
fn content_parts_legacy_functions_and_custom_tools() {
    let b = body(json!([
        {"role": "system", "content": "be brief"},
        user("hi"),
        {"role": "assistant", "content": null, "function_call": {"name": "get_time", "arguments": "{}"}},
        {"role": "function", "name": "get_time", "content": "12:00"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_c", "type": "custom", "custom": {"name": "code_exec", "input": "print(1)"}}
        ]},
        {"role": "tool", "tool_call_id": "call_c", "content": [
            {"type": "text", "text": "Error: boom"}, {"type": "text", "text": "trace"}
        ]}
    ]));
    let v = view_with(&b, &starts_with_error).unwrap();
    assert_eq!(v.calls[0].id, "function:get_time#0");
    assert_eq!(v.results[0].call_id, "function:get_time#0");
    assert_eq!(v.results[0].tool.as_deref(), Some("get_time"));
    assert_eq!(v.results[0].verdict, Verdict::NONE);
    assert_eq!(v.calls[1].name, "code_exec");
    assert_eq!(v.calls[1].arguments, "print(1)");
    assert_eq!(v.results[1].content, "Error: boom\ntrace");
    assert_eq!(v.results[1].verdict, Verdict::heuristic_failure());
    assert_eq!(v.results[1].tool.as_deref(), Some("code_exec"));
    assert!(validate(&b).unwrap().is_empty());
}

#[test]
fn first_turn_hash_ignores_later_turns() {
    let early = body(json!([{"role": "system", "content": "s"}, user("hi"), calls(&["a"])]));
    let later = body(
        json!([{"role": "system", "content": "s"}, user("hi"), calls(&["a"]), tool("a"), user("more")]),
    );
    let other = body(json!([{"role": "system", "content": "t"}, user("hi")]));
    let h = |b: &[u8]| view_with(b, &starts_with_error).unwrap().first_turn_hash;
    assert_eq!(h(&early), h(&later));
    assert_ne!(h(&early), h(&other));
}

#[test]
fn defects_are_worded_like_openai() {
    let b = body(json!([
        user("hi"),
        calls(&["call_A", "call_B"]),
        tool("call_A"),
        user("?")
    ]));
    let d = validate(&b).unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_B"
    );
    assert_eq!(d[0].message_index, 1);
    let b = body(json!([user("hi"), tool("call_X")]));
    let d = validate(&b).unwrap();
    assert_eq!(
        d[0].message,
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    );
    assert_eq!(
        kinds(&body(json!([
            user("hi"),
            calls(&["a"]),
            tool("a"),
            tool("a")
        ]))),
        vec![(DefectKind::DuplicateCallId, 3)]
    );
    assert_eq!(
        kinds(&body(json!([user("hi"), calls(&["a", "a"]), tool("a")]))),
        vec![(DefectKind::DuplicateCallId, 1)]
    );
    assert_eq!(
        kinds(&body(json!([user("hi"), calls(&["a"]), tool("b")]))),
        vec![
            (DefectKind::MissingResult, 1),
            (DefectKind::OrphanResult, 2)
        ]
    );
    assert_eq!(
        kinds(&body(json!([
            user("hi"),
            calls(&["a"]),
            user("x"),
            tool("a")
        ]))),
        vec![
            (DefectKind::MissingResult, 1),
            (DefectKind::OrphanResult, 3)
        ]
    );
}

fn repaired_clean(b: &[u8]) -> (Value, Vec<crate::Change>) {
    let r = repair(b).unwrap();
    assert!(r.is_changed());
    assert_eq!(
        validate(&r.body).unwrap(),
        vec![],
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    (serde_json::from_slice(&r.body).unwrap(), r.changes)
}

#[test]
fn repairs_each_defect() {
    let (v, ch) = repaired_clean(&body(json!([
        user("hi"),
        calls(&["a", "b"]),
        tool("a"),
        user("?")
    ])));
    assert_eq!(v["messages"][3]["tool_call_id"], "b");
    assert!(
        v["messages"][3]["content"]
            .as_str()
            .unwrap()
            .starts_with(FLAGLESS_ERROR_PREFIX)
    );
    assert_eq!(ch[0].kind, ChangeKind::InsertedResult);
    let (v, ch) = repaired_clean(&body(json!([
        user("hi"),
        calls(&["a"]),
        user("x"),
        tool("a")
    ])));
    assert_eq!(v["messages"][2]["tool_call_id"], "a");
    assert_eq!(v["messages"].as_array().unwrap().len(), 4);
    assert_eq!(ch[0].kind, ChangeKind::MovedResult);
    let (v, ch) = repaired_clean(&body(json!([
        user("hi"),
        tool("zz"),
        calls(&["a"]),
        tool("a"),
        tool("a")
    ])));
    assert_eq!(v["messages"].as_array().unwrap().len(), 3);
    let kinds: Vec<_> = ch.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![ChangeKind::RemovedResult, ChangeKind::RemovedDuplicate]
    );
    let (v, ch) = repaired_clean(&body(json!([
        user("hi"),
        calls(&["a", "a"]),
        tool("a"),
        tool("a")
    ])));
    assert_eq!(v["messages"][1]["tool_calls"][1]["id"], "a_dup1");
    assert_eq!(v["messages"][3]["tool_call_id"], "a_dup1");
    assert_eq!(ch[0].kind, ChangeKind::RenamedDuplicateId);
    // A 40-character id (the API's most) renamed: still 40, its end cut.
    let long = "call_0123456789abcdefghijklmnopqrstuvwxy";
    assert_eq!(long.len(), 40);
    let (v, _) = repaired_clean(&body(json!([
        user("hi"),
        calls(&[long, long]),
        tool(long),
        tool(long)
    ])));
    let renamed = "call_0123456789abcdefghijklmnopqrst_dup1";
    assert_eq!(v["messages"][1]["tool_calls"][1]["id"], renamed);
    assert_eq!(v["messages"][3]["tool_call_id"], renamed);
}

#[test]
fn repair_keeps_untouched_bytes() {
    let b = fixture(TAU13);
    let text = String::from_utf8(b).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let id = v["messages"][5]["tool_call_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(v["messages"][5]["role"], "tool");
    // Drop that tool message (and the separator before it) from the raw text.
    #[derive(serde::Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        messages: &'a serde_json::value::RawValue,
    }
    let top: Top<'_> = serde_json::from_str(&text).unwrap();
    let els = crate::splice::elements(top.messages).unwrap();
    let start = crate::splice::span_in(&text, els[4].get()).unwrap().end;
    let end = crate::splice::span_in(&text, els[5].get()).unwrap().end;
    assert!(text[start..end].contains(&id));
    let broken = format!("{}{}", &text[..start], &text[end..]);
    let r = repair(broken.as_bytes()).unwrap();
    assert_eq!(r.changes.len(), 1);
    assert_eq!(r.changes[0].kind, ChangeKind::InsertedResult);
    let out = String::from_utf8(r.body.into_owned()).unwrap();
    assert!(validate(out.as_bytes()).unwrap().is_empty());
    assert_eq!(out[..start], broken[..start]);
    let tail = broken.len() - start;
    assert_eq!(out[out.len() - tail..], broken[start..]);
}

#[test]
fn stream_reassembles_parallel_calls() {
    let sse = fixture(SSE);
    let v = parse_stream(Dialect::OpenAiChat, &sse);
    assert_eq!(
        v.id.as_deref(),
        Some("chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63")
    );
    assert_eq!(v.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(v.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        (v.usage.input_tokens, v.usage.output_tokens),
        (Some(149), Some(60))
    );
    assert_eq!(v.calls.len(), 2);
    assert_eq!(v.calls[0].id, "call_JMW1whyEaYG438VE1OIflxA2");
    assert_eq!(v.calls[0].name, "GetWeatherArgs");
    assert_eq!(
        v.calls[0].arguments,
        r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#
    );
    assert_eq!(v.calls[1].name, "get_stock_price");
    assert_eq!(
        v.calls[1].arguments,
        r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#
    );
    for split in (0..sse.len()).step_by(3) {
        let mut p = StreamParser::new(Dialect::OpenAiChat);
        p.feed(&sse[..split]);
        p.feed(&sse[split..]);
        assert_eq!(p.finish(), v, "split at {split}");
    }
}

#[test]
fn stream_handles_same_index_ids_legacy_errors_and_truncation() {
    let chunk = |delta: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    };
    let mut s = String::new();
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "x", "function": {"name": "f", "arguments": "{}"}}]}),
    );
    s += &chunk(
        json!({"tool_calls": [{"index": 0, "id": "y", "function": {"name": "g", "arguments": "{\"a\""}}]}),
    );
    let v = parse_stream(Dialect::OpenAiChat, s.as_bytes());
    assert_eq!(
        v.calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["x", "y"]
    );
    assert_eq!(
        v.calls[1].arguments, "{\"a\"",
        "truncated arguments are kept"
    );
    assert_eq!(v.stop_reason, None);
    let legacy = chunk(json!({"function_call": {"name": "get_time", "arguments": "{"}}))
        + &chunk(json!({"function_call": {"arguments": "}"}}));
    let v = parse_stream(Dialect::OpenAiChat, legacy.as_bytes());
    assert_eq!(v.calls[0].id, "function:get_time#0");
    assert_eq!(v.calls[0].arguments, "{}");
    let err = "data: {\"error\":{\"message\":\"Rate limit\",\"type\":\"rate_limit_exceeded\"}}\n\n";
    let v = parse_stream(Dialect::OpenAiChat, err.as_bytes());
    assert_eq!(v.error.as_deref(), Some("rate_limit_exceeded: Rate limit"));
}

#[test]
fn response_body_view() {
    let b = json!({"id": "chatcmpl-1", "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
        {"id": "call_2", "type": "custom", "custom": {"name": "g", "input": "raw"}}
    ]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 5, "completion_tokens": 7}});
    let v = response_view(&serde_json::to_vec(&b).unwrap()).unwrap();
    assert_eq!(v.calls.len(), 2);
    assert_eq!(v.calls[1].arguments, "raw");
    assert_eq!(v.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(v.usage.output_tokens, Some(7));
    let e =
        response_view(br#"{"error":{"message":"bad","type":"invalid_request_error"}}"#).unwrap();
    assert_eq!(e.error.as_deref(), Some("invalid_request_error: bad"));
    assert!(response_view(b"{\"choices\": 5}").is_err());
}

#[test]
fn render_frames_failures() {
    let ok = ToolOutcome::success("call_1", "f", json!({"a": 1}));
    let failure = ToolFailure {
        kind: ErrorKind::Timeout,
        code: None,
        technical_message: "deadline".into(),
        model_message: "The tool timed out.".into(),
        retryable: true,
        fatal: false,
    };
    let bad = ToolOutcome::failure("call_2", "g", failure.clone());
    let legacy = ToolOutcome::failure("function:get_time#0", "get_time", failure);
    let msgs = super::render_results(&[ok, bad, legacy]);
    assert_eq!(
        msgs[0],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"a\":1}"})
    );
    assert_eq!(
        msgs[1]["content"],
        "Tool error (timeout): The tool timed out."
    );
    assert_eq!(
        msgs[2],
        json!({"role": "function", "name": "get_time", "content": "Tool error (timeout): The tool timed out."})
    );
    let mut conv = vec![user("go"), calls(&["call_1", "call_2"])];
    conv.extend(msgs.into_iter().take(2));
    assert!(validate(&body(Value::Array(conv))).unwrap().is_empty());
}

/// openai-python's models write a choice's `delta` before its `index`
/// (servers built on them do too): with `n` > 1, each choice's calls are
/// still its own, whichever way round the keys come.
#[test]
fn stream_choices_keep_their_calls_when_delta_comes_before_index() {
    let chunk = |choice: u64, call: Value, delta_first: bool| {
        let delta = json!({"tool_calls": [call]}).to_string();
        let choice = if delta_first {
            format!("{{\"delta\":{delta},\"finish_reason\":null,\"index\":{choice}}}")
        } else {
            format!("{{\"index\":{choice},\"delta\":{delta},\"finish_reason\":null}}")
        };
        format!("data: {{\"id\":\"c1\",\"model\":\"m\",\"choices\":[{choice}]}}\n\n")
    };
    for delta_first in [false, true] {
        let mut s = String::new();
        for (choice, id) in [(0, "a"), (1, "b")] {
            s += &chunk(
                choice,
                json!({"index": 0, "id": id, "function": {"name": "f", "arguments": ""}}),
                delta_first,
            );
        }
        for (choice, args) in [(1, "{\"x\":2}"), (0, "{\"x\":1}")] {
            s += &chunk(
                choice,
                json!({"index": 0, "function": {"arguments": args}}),
                delta_first,
            );
        }
        let v = parse_stream(Dialect::OpenAiChat, s.as_bytes());
        let calls: Vec<_> = (v.calls.iter())
            .map(|c| (c.id.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [("a", "{\"x\":1}"), ("b", "{\"x\":2}")],
            "delta first: {delta_first}"
        );
    }
}

#[test]
fn stream_choices_fast_path_agrees_with_full_parsing() {
    let chunk = |prefix: &str, args: &str| {
        format!(
            "data: {{\"id\":\"c1\",\"model\":\"m\",{prefix}\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{args}\"}}}}]}}}}]}}\n\n"
        )
    };
    let mut s = String::from(
        "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n",
    );
    s += &chunk("", "a");
    s += &chunk("\"x\":\"choices\",", "b"); // a value that looks like the key
    s += &chunk("\"meta\":{\"choices\":[1]},", "c"); // a nested key of that name
    s += &chunk("\"note\":\"\\\"choices\\\"\",", "d"); // escapes before the key
    let v = parse_stream(Dialect::OpenAiChat, s.as_bytes());
    assert_eq!(v.calls.len(), 1);
    assert_eq!(v.calls[0].arguments, "abcd");
}

/// A body of several choices (`n` > 1) gives its first choice's calls
/// (and finish reason): the client continues with one choice, and the
/// others' calls, under the same ids at times, are never answered.
#[test]
fn a_body_of_several_choices_gives_the_first_ones_calls() {
    let choice = |index: u64, name: &str, finish: &str| {
        json!({"index": index, "finish_reason": finish, "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "call_0", "type": "function",
            "function": {"name": name, "arguments": "{}"}}]}})
    };
    let body = json!({"id": "chatcmpl-1", "model": "gpt-4o",
        "choices": [choice(1, "book", "length"), choice(0, "lookup", "tool_calls")]});
    let view = response_view(&serde_json::to_vec(&body).unwrap()).unwrap();
    let calls: Vec<(&str, &str)> = (view.calls.iter())
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    assert_eq!(calls, [("call_0", "lookup")]);
    assert_eq!(view.stop_reason.as_deref(), Some("tool_calls"));
    // One choice, whatever its index (servers that number it otherwise).
    let body = json!({"choices": [choice(3, "book", "tool_calls")]});
    let view = response_view(&serde_json::to_vec(&body).unwrap()).unwrap();
    assert_eq!(view.calls.len(), 1);
}

/// A request's `n` is its count of choices when it is one, read alike by
/// the fast path and serde; a stream told it reads the first choice's
/// calls, one not told them all (a server that numbers its one choice
/// otherwise than 0).
#[test]
fn the_request_names_its_choice_count() {
    let cases: [(&str, Option<u64>); 5] = [
        (r#"{"model":"m","messages":[]}"#, None),
        (r#"{"model":"m","n":2,"messages":[]}"#, Some(2)),
        (r#"{"messages":[],"n":null}"#, None),
        (r#"{"messages":[],"n":"2"}"#, None),
        (r#"{"messages":[],"n":1.5}"#, None),
    ];
    for (body, want) in cases {
        let view = crate::request_view(Dialect::OpenAiChat, body.as_bytes()).unwrap();
        assert_eq!(view.choices, want, "{body}");
        crate::fast_path_agrees(Dialect::OpenAiChat, body.as_bytes()).unwrap();
    }
    let stream = concat!(
        "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    let untold = parse_stream(Dialect::OpenAiChat, stream.as_bytes());
    assert_eq!(untold.calls.len(), 1);
    assert!(!untold.ended_early);
    for n in [1, 2] {
        let mut told = StreamParser::new(Dialect::OpenAiChat).choices(n);
        told.feed(stream.as_bytes());
        let view = told.finish();
        assert_eq!(view.calls.len(), if n == 1 { 1 } else { 0 }, "n = {n}");
        assert!(!view.ended_early, "n = {n}");
    }
}

mod fast_agrees_with_serde;
mod stream_key_order;

mod outline_agrees_with_layout {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::{
        layout::{layout, outline},
        validate::defects,
    };

    fn message(role: u8, ids: &[u8], answers: u8) -> Value {
        let id = |i: u8| format!("c{}", i % 4);
        match role % 4 {
            0 => json!({"role": "user", "content": "do it"}),
            1 => json!({"role": "assistant", "content": null, "tool_calls":
                ids.iter().map(|&i| json!({"id": id(i), "type": "function",
                    "function": {"name": "f", "arguments": "{}"}})).collect::<Vec<_>>()}),
            2 => json!({"role": "tool", "tool_call_id": id(answers), "content": "ok \"q\""}),
            _ => {
                json!({"role": "tool", "tool_call_id": null, "content": [{"type": "text", "text": "x"}]})
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Validation reads the one-pass outline, repair the layout: they
        /// must see the same conversation, and fail on the same bodies.
        #[test]
        fn same_defects_and_same_failures(
            msgs in prop::collection::vec((any::<u8>(), prop::collection::vec(any::<u8>(), 0..3), any::<u8>()), 0..7),
            cut in any::<usize>(),
            flip in any::<(usize, u8)>(),
        ) {
            let messages: Vec<Value> = msgs.iter().map(|(r, i, a)| message(*r, i, *a)).collect();
            let body = serde_json::to_vec(&json!({"model": "m", "messages": messages})).unwrap();
            let l = layout(&body).unwrap();
            let o = outline(&body).unwrap();
            prop_assert_eq!(defects(&l.msgs), defects(&o));
            let mut bad = body.clone();
            let at = flip.0 % bad.len();
            bad[at] = flip.1;
            bad.truncate(bad.len() - cut % 3);
            match (layout(&bad), outline(&bad)) {
                (Ok(l), Ok(o)) => prop_assert_eq!(defects(&l.msgs), defects(&o)),
                (Err(_), Err(_)) => {}
                (l, o) => prop_assert!(false, "layout ok: {}, outline ok: {}", l.is_ok(), o.is_ok()),
            }
        }

        /// No call's result counts twice: the new results of one id are
        /// at most the calls of that id, or one when there is none.
        #[test]
        fn no_call_is_answered_by_two_counted_results(
            msgs in prop::collection::vec((any::<u8>(), prop::collection::vec(any::<u8>(), 0..3), any::<u8>()), 0..9),
        ) {
            let messages: Vec<Value> = msgs.iter().map(|(r, i, a)| message(*r, i, *a)).collect();
            let body = serde_json::to_vec(&json!({"model": "m", "messages": messages})).unwrap();
            let view = crate::request_view(crate::Dialect::OpenAiChat, &body).unwrap();
            let mut counted: std::collections::HashMap<&str, usize> = Default::default();
            for r in view.results.iter().filter(|r| r.new) {
                *counted.entry(&*r.call_id).or_default() += 1;
            }
            for (id, n) in counted {
                let calls = view.calls.iter().filter(|c| c.id == id).count();
                prop_assert!(n <= calls.max(1), "{} counted {} times, {} calls: {:?}", id, n, calls, messages);
            }
        }

        /// The gateway's one pass ([`crate::inspect`]) finds what
        /// `validate` and `request_view` find on their own, on intact and
        /// damaged bodies alike.
        #[test]
        fn inspect_agrees_with_validate_and_view(
            msgs in prop::collection::vec((any::<u8>(), prop::collection::vec(any::<u8>(), 0..3), any::<u8>()), 0..7),
            dup in any::<bool>(),
            flip in any::<(usize, u8)>(),
        ) {
            let messages: Vec<Value> = msgs.iter().map(|(r, i, a)| message(*r, i, *a)).collect();
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
                crate::testutil::inspect_agrees(crate::Dialect::OpenAiChat, b)?;
            }
        }
    }
}
