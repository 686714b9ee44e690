//! The lazy read against the plain `Value` reading of `oracle`: on
//! generated bodies of every dialect (every content shape and flag) and on
//! the corpus conversations; plus how malformed contents are reported.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolwarden_core::Verdict;

use super::oracle;
use crate::{
    Detector, Dialect, WireErrorKind, request_view,
    testutil::{corpus, fixture},
};

/// A deterministic content detector for generated bodies.
fn starts_with_error(t: &str) -> Verdict {
    if t.starts_with("Error") {
        Verdict::heuristic_failure()
    } else {
        Verdict::NONE
    }
}

/// Reads every result of `body` lazily and compares with the oracle.
fn check(dialect: Dialect, body: &[u8], judge: &dyn Fn(&str) -> Verdict) -> Result<usize, String> {
    let view = request_view(dialect, body).map_err(|e| format!("view: {e}"))?;
    let value: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let want = oracle::results(dialect, &value, judge);
    let got: Vec<(String, String, Verdict)> = view
        .results
        .iter()
        .map(|r| {
            let read = r
                .read_with(judge)
                .map_err(|e| format!("read {}: {e}", r.call_id))?;
            let alone = r.content().map_err(|e| e.to_string())?;
            if alone != read.text {
                return Err(format!("content() and read() differ for {}", r.call_id));
            }
            Ok((r.call_id.to_string(), read.text.into_owned(), read.verdict))
        })
        .collect::<Result<_, String>>()?;
    if got != want {
        return Err(format!("lazy {got:#?}\noracle {want:#?}"));
    }
    Ok(got.len())
}

// === generated bodies ===

/// Text with the things that make decoding differ from copying: escapes,
/// non-ASCII, the detector's prefix, MCP JSON.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z \"\\\\\n\t/é✓😀\u{1}\u{1f}]{0,24}",
        "Error: [a-z\n\"]{0,12}",
        any::<bool>().prop_map(|b| format!("{{\"content\":[],\"isError\":{b}}}")),
        Just(" {\"isError\": \"no\"}".to_string()),
    ]
}

/// A content of the shapes Anthropic and Chat accept.
fn content() -> impl Strategy<Value = Option<Value>> {
    let part = prop_oneof![
        text().prop_map(|t| json!({"type": "text", "text": t})),
        Just(json!({"type": "image", "source": {"type": "base64", "data": "AA=="}})),
    ];
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        text().prop_map(|t| Some(json!(t))),
        prop::collection::vec(part, 0..4).prop_map(|p| Some(json!(p))),
        (
            prop::option::of("[a-z_]{0,8}(_error)?"),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(any::<bool>()),
        )
            .prop_map(|(kind, code, text, flag)| {
                let mut o = serde_json::Map::new();
                let fields = [
                    ("type", kind.map(Value::from)),
                    ("error_code", code.map(Value::from)),
                    ("text", text.map(Value::from)),
                    ("isError", flag.map(Value::from)),
                ];
                for (k, v) in fields {
                    if let Some(v) = v {
                        o.insert(k.to_string(), v);
                    }
                }
                Some(Value::Object(o))
            }),
    ]
}

/// A Gemini `functionResponse.response`.
fn response() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        text().prop_map(|t| Some(json!({"output": t}))),
        text().prop_map(|t| Some(json!({"result": {"text": t}}))),
        text().prop_map(|t| Some(json!({"error": t}))),
        text().prop_map(|t| Some(json!({"error": {"message": t, "code": 3}}))),
        Just(Some(json!({"error": {"code": 3}}))),
        (text(), any::<bool>()).prop_map(|(t, b)| Some(json!({"content": t, "isError": b}))),
        text().prop_map(|t| Some(json!({"error": null, "output": t}))),
        text().prop_map(|t| Some(json!({"other": t, "n": 1}))),
        Just(Some(json!({"output": null}))),
    ]
}

/// One result: content, Anthropic `is_error`, server result, Responses
/// `status`, Gemini response.
type Spec = (
    Option<Value>,
    Option<bool>,
    bool,
    Option<&'static str>,
    Option<Value>,
);

fn specs() -> impl Strategy<Value = Vec<Spec>> {
    let status = prop::option::of(prop::sample::select(vec![
        "completed",
        "incomplete",
        "failed",
    ]));
    prop::collection::vec(
        (
            content(),
            prop::option::of(any::<bool>()),
            prop::bool::weighted(0.2),
            status,
            response(),
        ),
        0..6,
    )
}

fn with(mut o: Value, key: &str, v: &Option<Value>) -> Value {
    if let Some(v) = v {
        o[key] = v.clone();
    }
    o
}

fn anthropic(specs: &[Spec]) -> Value {
    let calls: Vec<Value> = (0..specs.len())
        .map(|i| json!({"type": "tool_use", "id": format!("t{i}"), "name": "f", "input": {}}))
        .collect();
    let results: Vec<Value> = specs
        .iter()
        .enumerate()
        .map(|(i, (content, is_error, server, _, _))| {
            let kind = if *server {
                "web_search_tool_result"
            } else {
                "tool_result"
            };
            let b = json!({"type": kind, "tool_use_id": format!("t{i}")});
            with(
                with(b, "content", content),
                "is_error",
                &is_error.map(Value::from),
            )
        })
        .collect();
    json!({"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": results},
    ]})
}

fn chat(specs: &[Spec]) -> Value {
    let calls: Vec<Value> = (0..specs.len())
        .map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "f", "arguments": "{}"}}))
        .collect();
    let mut messages = vec![
        json!({"role": "user", "content": "go"}),
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
    ];
    for (i, (content, ..)) in specs.iter().enumerate() {
        let m = json!({"role": "tool", "tool_call_id": format!("c{i}")});
        messages.push(with(m, "content", content));
    }
    json!({"model": "m", "messages": messages})
}

/// Responses outputs are strings or content parts: object contents are
/// left out (they are a read error, tested below). A "server" spec is a
/// built-in call instead: at an even index a `shell` call, its output a
/// shell part whose outcome follows `is_error` (none: a timeout); at an
/// odd one an `apply_patch` call, its output the content's text.
fn responses(specs: &[Spec]) -> Value {
    let mut input = vec![json!({"role": "user", "content": "go"})];
    for (i, (_, _, builtin, _, _)) in specs.iter().enumerate() {
        input.push(match (builtin, i % 2) {
            (true, 0) => {
                json!({"type": "shell_call", "call_id": format!("r{i}"), "action": {"commands": ["ls"]}})
            }
            (true, _) => json!({"type": "apply_patch_call", "call_id": format!("r{i}"),
                "operation": {"type": "delete_file", "path": "x"}}),
            (false, _) => {
                json!({"type": "function_call", "call_id": format!("r{i}"), "name": "f", "arguments": "{}"})
            }
        });
    }
    for (i, (content, is_error, builtin, status, _)) in specs.iter().enumerate() {
        let shell = *builtin && i % 2 == 0;
        let patch = *builtin && i % 2 == 1;
        let (kind, output) = if patch {
            let text = content.as_ref().filter(|c| c.is_string()).cloned();
            ("apply_patch_call_output", text)
        } else if shell {
            let stdout = content.as_ref().and_then(Value::as_str).unwrap_or("");
            let outcome = match is_error {
                Some(e) => json!({"type": "exit", "exit_code": i32::from(*e) * 2}),
                None => json!({"type": "timeout"}),
            };
            let part = json!({"stdout": stdout, "stderr": "", "outcome": outcome});
            ("shell_call_output", Some(json!([part])))
        } else {
            let output = content.clone().filter(|c| !c.is_object());
            ("function_call_output", output)
        };
        let item = json!({"type": kind, "call_id": format!("r{i}")});
        let item = with(item, "output", &output);
        input.push(with(item, "status", &status.map(Value::from)));
    }
    json!({"model": "m", "input": input})
}

fn gemini(specs: &[Spec]) -> Value {
    let calls: Vec<Value> = (0..specs.len())
        .map(|i| json!({"functionCall": {"name": "f", "id": format!("g{i}"), "args": {}}}))
        .collect();
    let responses: Vec<Value> = specs
        .iter()
        .enumerate()
        .map(|(i, (.., response))| {
            let f = json!({"name": "f", "id": format!("g{i}")});
            json!({"functionResponse": with(f, "response", response)})
        })
        .collect();
    json!({"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": calls},
        {"role": "user", "parts": responses},
    ]})
}

/// Converse contents are lists of `text` / `json` blocks: other contents
/// are mapped onto them; `is_error` becomes `status`.
fn converse(specs: &[Spec]) -> Value {
    let calls: Vec<Value> = (0..specs.len())
        .map(|i| json!({"toolUse": {"toolUseId": format!("b{i}"), "name": "f", "input": {}}}))
        .collect();
    let results: Vec<Value> = specs
        .iter()
        .enumerate()
        .map(|(i, (content, is_error, ..))| {
            let blocks = match content {
                None => None,
                Some(Value::String(s)) => Some(json!([{"text": s}])),
                Some(Value::Array(a)) => Some(Value::Array(
                    a.iter()
                        .map(|p| match p.get("text") {
                            Some(Value::String(t)) => json!({"text": t}),
                            _ => json!({"json": p}),
                        })
                        .collect(),
                )),
                Some(other) if !other.is_null() => Some(json!([{"json": other}])),
                Some(_) => None,
            };
            let status = is_error.map(|e| Value::from(if e { "error" } else { "success" }));
            let r = json!({"toolUseId": format!("b{i}")});
            json!({"toolResult": with(with(r, "content", &blocks), "status", &status)})
        })
        .collect();
    json!({"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": results},
    ]})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lazy_reads_equal_the_value_reading(specs in specs()) {
        for (dialect, body) in [
            (Dialect::Anthropic, anthropic(&specs)),
            (Dialect::OpenAiChat, chat(&specs)),
            (Dialect::OpenAiResponses, responses(&specs)),
            (Dialect::Gemini, gemini(&specs)),
            (Dialect::BedrockConverse, converse(&specs)),
        ] {
            let bytes = serde_json::to_vec(&body).unwrap();
            let n = check(dialect, &bytes, &starts_with_error)
                .map_err(|e| TestCaseError::fail(format!("{dialect}: {e}")))?;
            prop_assert_eq!(n, specs.len(), "{}", dialect);
        }
    }
}

// === corpus ===

#[test]
fn corpus_conversations_read_as_the_value_reading_says() {
    let detector = Detector::default();
    let judge = |t: &str| detector.verdict(t);
    // The long recorded conversation only with the corpus; the others are
    // fixtures in the repository.
    const BIG: &str = "conversations/conv_anthropic_messages_claudecode_spotter_258c7280.json";
    if let Some(body) = corpus(BIG) {
        let n = check(Dialect::Anthropic, &body, &judge).unwrap_or_else(|e| panic!("{BIG}: {e}"));
        assert!(n > 0, "{BIG}: no results read");
    }
    for (dialect, file, results) in [
        (
            Dialect::Anthropic,
            "conversations/conv_anthropic_messages_claudecode_spotter_short.json",
            Some(2),
        ),
        (
            Dialect::OpenAiChat,
            "conversations/conv_openai_chat_taubench_airline_task13_trial0.json",
            None,
        ),
        (
            Dialect::OpenAiChat,
            "conversations/conv_openai_chat_taubench_airline_task9_trial2.json",
            None,
        ),
    ] {
        let body = fixture(file);
        let n = check(dialect, &body, &judge).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(n > 0, "{file}: no results read");
        if let Some(want) = results {
            assert_eq!(n, want, "{file}");
        }
    }
}

#[test]
fn the_short_corpus_results_are_explicit_failures() {
    // README: both parallel calls answered with `is_error` results.
    let body = fixture("conversations/conv_anthropic_messages_claudecode_spotter_short.json");
    let view = request_view(Dialect::Anthropic, &body).unwrap();
    for r in &view.results {
        assert_eq!(
            r.read(&Detector::default()).unwrap().verdict,
            Verdict::explicit(true)
        );
    }
}

// === malformed contents ===

#[test]
fn a_syntax_error_inside_a_content_fails_the_whole_view() {
    let bodies: [(Dialect, &[u8]); 4] = [
        (
            Dialect::Anthropic,
            br#"{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"a\qb"}]}]}"#,
        ),
        (
            Dialect::OpenAiChat,
            br#"{"messages":[{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":tru}]}]}"#,
        ),
        (
            Dialect::OpenAiResponses,
            br#"{"input":[{"type":"function_call_output","call_id":"r","output":"\u00zz"}]}"#,
        ),
        (
            Dialect::Gemini,
            br#"{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":01}}}]}]}"#,
        ),
    ];
    for (dialect, body) in bodies {
        let e = request_view(dialect, body).expect_err("malformed content");
        assert_eq!(e.kind(), WireErrorKind::InvalidJson, "{dialect}: {e}");
    }
    // Invalid UTF-8 inside a content string.
    let mut body = br#"{"messages":[{"role":"tool","tool_call_id":"c","content":"ab"}]}"#.to_vec();
    let at = body.iter().position(|&b| b == b'b').unwrap();
    body[at] = 0xff;
    assert!(request_view(Dialect::OpenAiChat, &body).is_err());
}

#[test]
fn a_content_of_the_wrong_type_is_an_error_of_that_result_only() {
    let cases: [(Dialect, &[u8]); 3] = [
        (
            Dialect::Anthropic,
            br#"{"messages":[{"role":"user","content":[
                {"type":"tool_result","tool_use_id":"bad","content":42},
                {"type":"tool_result","tool_use_id":"ok","content":"fine"}]}]}"#,
        ),
        (
            Dialect::OpenAiChat,
            br#"{"messages":[
                {"role":"tool","tool_call_id":"bad","content":[{"text":7}]},
                {"role":"tool","tool_call_id":"ok","content":"fine"}]}"#,
        ),
        (
            Dialect::OpenAiResponses,
            br#"{"input":[
                {"type":"function_call_output","call_id":"bad","output":{"a":1}},
                {"type":"function_call_output","call_id":"ok","output":"fine"}]}"#,
        ),
    ];
    for (dialect, body) in cases {
        let view = request_view(dialect, body).unwrap_or_else(|e| panic!("{dialect}: {e}"));
        let [bad, ok] = &view.results[..] else {
            panic!("{dialect}: two results expected")
        };
        let e = bad.read(&Detector::default()).expect_err("wrong type");
        assert_eq!(e.kind(), WireErrorKind::Shape, "{dialect}: {e}");
        assert!(bad.content().is_err(), "{dialect}");
        assert!(bad.raw_content().is_some(), "{dialect}");
        assert_eq!(ok.content().unwrap(), "fine", "{dialect}");
    }
    // Gemini checks that `response` is an object while parsing, as before.
    let body = br#"{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":"x"}}]}]}"#;
    let e = request_view(Dialect::Gemini, body).expect_err("not an object");
    assert_eq!(e.kind(), WireErrorKind::Shape, "{e}");
}

#[test]
fn raw_content_is_the_json_as_sent() {
    let body = br#"{"messages":[{"role":"tool","tool_call_id":"c","content":"a\nb"},
        {"role":"tool","tool_call_id":"d","content":null},{"role":"tool","tool_call_id":"e"}]}"#;
    let view = request_view(Dialect::OpenAiChat, body).unwrap();
    let raw: Vec<_> = view.results.iter().map(|r| r.raw_content()).collect();
    assert_eq!(raw, [Some(r#""a\nb""#), None, None]);
    assert_eq!(view.results[0].content().unwrap(), "a\nb");
    assert_eq!(view.results[1].content().unwrap(), "");
}

/// A client that flags its successes (Claude Code; LangChain's and Pydantic
/// AI's `status`) but not a call the harness denied: the denial is still a
/// failure; its other unflagged results stay successes whatever their text.
/// A client that flags its errors alone (the Vercel AI SDK: `is_error` /
/// `status: "error"` for `error-text`, nothing for `execution-denied` or a
/// tool that returns its failure as text) has the rest read by the detector.
#[test]
fn a_refusal_left_unflagged_by_a_flagging_client_is_a_failure() {
    // `d` is "ok", flagged a success or not.
    let anthropic = |d: &str| {
        format!(
            r#"{{"model":"m","max_tokens":8,"messages":[
        {{"role":"user","content":"go"}},
        {{"role":"assistant","content":[{{"type":"tool_use","id":"a","name":"f","input":{{}}}},
            {{"type":"tool_use","id":"b","name":"f","input":{{}}}},
            {{"type":"tool_use","id":"c","name":"f","input":{{}}}},
            {{"type":"tool_use","id":"d","name":"f","input":{{}}}}]}},
        {{"role":"user","content":[
            {{"type":"tool_result","tool_use_id":"a","content":"boom","is_error":true}},
            {{"type":"tool_result","tool_use_id":"b","content":"Tool call execution denied."}},
            {{"type":"tool_result","tool_use_id":"c","content":"Error: printed by a command that succeeded"}},
            {{"type":"tool_result","tool_use_id":"d","content":"ok"{d}}}]}}]}}"#
        )
    };
    let converse = |d: &str| {
        format!(
            r#"{{"messages":[
        {{"role":"user","content":[{{"text":"go"}}]}},
        {{"role":"assistant","content":[{{"toolUse":{{"toolUseId":"a","name":"f","input":{{}}}}}},
            {{"toolUse":{{"toolUseId":"b","name":"f","input":{{}}}}}},
            {{"toolUse":{{"toolUseId":"c","name":"f","input":{{}}}}}},
            {{"toolUse":{{"toolUseId":"d","name":"f","input":{{}}}}}}]}},
        {{"role":"user","content":[
            {{"toolResult":{{"toolUseId":"a","content":[{{"text":"boom"}}],"status":"error"}}}},
            {{"toolResult":{{"toolUseId":"b","content":[{{"text":"Tool call execution denied."}}]}}}},
            {{"toolResult":{{"toolUseId":"c","content":[{{"text":"Error: printed by a command that succeeded"}}]}}}},
            {{"toolResult":{{"toolUseId":"d","content":[{{"text":"ok"}}]{d}}}}}]}}]}}"#
        )
    };
    let detector = Detector::default();
    for (flags_successes, d_anthropic, d_converse) in [
        (true, r#","is_error":false"#, r#","status":"success""#),
        (false, "", ""),
    ] {
        for (dialect, body) in [
            (Dialect::Anthropic, anthropic(d_anthropic)),
            (Dialect::BedrockConverse, converse(d_converse)),
        ] {
            let view =
                request_view(dialect, body.as_bytes()).unwrap_or_else(|e| panic!("{dialect}: {e}"));
            let verdicts: Vec<Verdict> = view
                .results
                .iter()
                .map(|r| r.read(&detector).unwrap().verdict)
                .collect();
            let (c, d) = if flags_successes {
                (Verdict::NONE, Verdict::explicit(false))
            } else {
                (Verdict::heuristic_failure(), Verdict::NONE)
            };
            assert_eq!(
                verdicts,
                [Verdict::explicit(true), Verdict::heuristic_failure(), c, d],
                "{dialect}, successes flagged: {flags_successes}"
            );
        }
    }
}

/// A result its client flags a success whose text holds the client's own
/// status of a failed command (OpenClaw's `exec`: `is_error: false`,
/// `status: "success"` for every command that ran, the exit code below
/// the output) is a failure with basis `client`; any other text under the
/// flag stays an explicit success.
#[test]
fn a_flagged_success_whose_client_status_says_the_command_failed_is_a_failure() {
    let exited =
        r"ls: cannot access 'x': No such file or directory\n\n(Command exited with code 2)";
    let others = [
        (
            exited.to_string(),
            Verdict {
                failed: true,
                basis: toolwarden_core::Basis::Client,
            },
        ),
        (
            "Error: printed by a command that succeeded".into(),
            Verdict::explicit(false),
        ),
        (
            r"done\n(Command exited with code 0)".into(),
            Verdict::explicit(false),
        ),
        (
            r"line\n\nCommand timed out after 5 seconds".into(),
            Verdict {
                failed: true,
                basis: toolwarden_core::Basis::Client,
            },
        ),
    ];
    let detector = Detector::default();
    for (text, want) in others {
        let anthropic = format!(
            r#"{{"model":"m","max_tokens":8,"messages":[{{"role":"user","content":"go"}},
            {{"role":"assistant","content":[{{"type":"tool_use","id":"a","name":"exec","input":{{}}}}]}},
            {{"role":"user","content":[{{"type":"tool_result","tool_use_id":"a","is_error":false,
              "content":[{{"type":"text","text":"{text}"}}]}}]}}]}}"#
        );
        let converse = format!(
            r#"{{"messages":[{{"role":"user","content":[{{"text":"go"}}]}},
            {{"role":"assistant","content":[{{"toolUse":{{"toolUseId":"a","name":"exec","input":{{}}}}}}]}},
            {{"role":"user","content":[{{"toolResult":{{"toolUseId":"a","status":"success",
              "content":[{{"text":"{text}"}}]}}}}]}}]}}"#
        );
        for (dialect, body) in [
            (Dialect::Anthropic, anthropic),
            (Dialect::BedrockConverse, converse),
        ] {
            let view =
                request_view(dialect, body.as_bytes()).unwrap_or_else(|e| panic!("{dialect}: {e}"));
            let got = view.results[0].read(&detector).unwrap().verdict;
            assert_eq!(got, want, "{dialect}: {text:?}");
        }
    }
}
