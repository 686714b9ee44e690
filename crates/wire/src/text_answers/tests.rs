use std::borrow::Cow;

use serde_json::json;
use toolwarden_core::Verdict;

use super::*;

fn call(id: &str, name: &str, arguments: &str) -> TextCall {
    TextCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// As smolagents 1.26 writes a step: `"Calling tools:\n" + str([tc.dict() …])`.
fn step(id: &str, name: &str, args: &str) -> String {
    format!(
        "Calling tools:\n[{{'id': '{id}', 'type': 'function', 'function': {{'name': '{name}', 'arguments': {args}}}}}]"
    )
}

const RETRY_ALL: &str = "\nNow let's retry: take care not to repeat previous errors! If you have retried several times, try a completely different approach.\n";

fn error(tool: &str, args: &str, exception: &str) -> String {
    format!(
        "Error:\nError executing tool '{tool}' with arguments {args}: {exception}\nPlease try again or use another tool{RETRY_ALL}"
    )
}

#[test]
fn a_step_names_its_calls() {
    let one = step("call_a1", "read_file", "{'path': 'missing.txt'}");
    assert_eq!(
        calls_named(&one),
        [call("call_a1", "read_file", r#"{"path":"missing.txt"}"#)]
    );
    let two = "I will look first.\nCalling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': 'run_shell', 'arguments': {'command': 'ls -l', 'n': 3, 'deep': True, 'x': None, 'f': 1.5e-3, 't': (1,), 's': {'a'}}}}, {'id': 'call_2', 'type': 'function', 'function': {'name': 'explode', 'arguments': {}}}]";
    assert_eq!(
        calls_named(two),
        [
            call(
                "call_1",
                "run_shell",
                r#"{"command":"ls -l","deep":true,"f":0.0015,"n":3,"s":["a"],"t":[1],"x":null}"#
            ),
            call("call_2", "explode", "{}")
        ]
    );
    // The last step's list, when an earlier one is quoted in the text.
    let again = format!("{one}\n{}", one.replace("call_a1", "call_b2"));
    assert_eq!(calls_named(&again)[0].id, "call_b2");
}

/// An argument's text that looks like a call is read as the string it is.
#[test]
fn arguments_are_read_whole() {
    let text = step(
        "call_1",
        "write",
        "{'text': \"{'id': 'call_fake', 'function': {'name': 'x'}}\", 'list': [1, (2, 3), {'k': 'v'}]}",
    );
    assert_eq!(
        calls_named(&text),
        [call(
            "call_1",
            "write",
            r#"{"list":[1,[2,3],{"k":"v"}],"text":"{'id': 'call_fake', 'function': {'name': 'x'}}"}"#
        )]
    );
}

#[test]
fn python_string_escapes_are_read() {
    let text = r#"Calling tools:
[{'id': 'call_\'q\'\\\x41\u00e9', 'type': 'function', 'function': {'name': "it's", 'arguments': 'raw text'}}]"#;
    assert_eq!(
        calls_named(text),
        [call("call_'q'\\Aé", "it's", "raw text")]
    );
}

#[test]
fn text_that_names_no_calls_gives_none() {
    for text in [
        "",
        "Calling tools: none today",
        "We were Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': 'x', 'arguments': {}}}]",
        "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': 'x', 'argu",
        "Calling tools:\n[{'id': 7, 'type': 'function', 'function': {'name': 'x', 'arguments': {}}}]",
        "Calling tools:\n[]",
        "Calling tools:\n[{'id': 'call_1'}]",
        "Calling tools:\n[{'id': 'call_1', 'function': {'name': 'x', 'arguments': object()}}]",
    ] {
        assert_eq!(calls_named(text), [], "{text:?}");
    }
}

#[test]
fn an_observation_then_errors_read_as_answers() {
    let text = format!(
        "Observation:\nhello\nError:\n not this one\n{}\n{}",
        error(
            "run_shell",
            "{'command': 'ls x'}",
            "RuntimeError: exit status 2"
        ),
        error("read_file", "{'path': 'gone'}", "FileNotFoundError: gone")
    );
    let got: Vec<_> = segments(&text)
        .into_iter()
        .map(|s| (s.kind, &text[s.output]))
        .collect();
    assert_eq!(
        got,
        [
            (Kind::Observation, "hello\nError:\n not this one"),
            (
                Kind::Error {
                    call_id: None,
                    tool: Some(("run_shell", r#"{"command":"ls x"}"#.into()))
                },
                "Error executing tool 'run_shell' with arguments {'command': 'ls x'}: RuntimeError: exit status 2\nPlease try again or use another tool"
            ),
            (
                Kind::Error {
                    call_id: None,
                    tool: Some(("read_file", r#"{"path":"gone"}"#.into()))
                },
                "Error executing tool 'read_file' with arguments {'path': 'gone'}: FileNotFoundError: gone\nPlease try again or use another tool"
            ),
        ]
    );
    assert_eq!(
        answer_text(Cow::Borrowed(&text), 0),
        (Cow::Borrowed("hello\nError:\n not this one"), false)
    );
    assert!(answer_text(Cow::Borrowed(&text), 2).1);
    // No such answer: the whole text.
    assert_eq!(
        answer_text(Cow::Borrowed("New task"), 0),
        (Cow::Borrowed("New task"), false)
    );
}

#[test]
fn an_error_answers_the_call_that_failed() {
    let named = [
        call("call_1", "read_file", "{}"),
        call("call_2", "run_shell", "{}"),
    ];
    let raw = |text: &str| serde_json::to_string(text).unwrap();
    // The agent kept the step's calls: `Call id:` and the tool named.
    let kept = format!(
        "Call id: call_1\n{}",
        error("run_shell", "{}", "RuntimeError: x")
    );
    let got = answers_in(Some(&raw(&kept)), &named);
    assert_eq!(got.len(), 1);
    assert_eq!((&*got[0].call.id, got[0].turn), ("call_2", None));
    // The agent's own complaint names no tool: the call of the id.
    let unknown = format!(
        "Call id: call_1\nError:\nUnknown tool no_such_tool, should be one of: read_file.{RETRY_ALL}"
    );
    let got = answers_in(Some(&raw(&unknown)), &named);
    assert_eq!(got[0].call.id, "call_1");
    // The calls forgotten: the call the error names, in a turn of its own.
    let forgotten = format!(
        "New task:\nRun it.\n{}",
        error(
            "read_file",
            "{'path': 'missing.txt'}",
            "FileNotFoundError: x"
        )
    );
    let got = answers_in(Some(&raw(&forgotten)), &[]);
    assert_eq!(
        got,
        [TextAnswer {
            call: call("text:read_file#0", "read_file", r#"{"path":"missing.txt"}"#),
            segment: 0,
            turn: Some(crate::turn::fingerprint([(
                "read_file",
                r#"{"path": "missing.txt"}"#
            )])),
        }]
    );
    // An error that names no call answers nothing.
    let refused =
        format!("Error:\nArgument path has type 'integer' but should be 'string'{RETRY_ALL}");
    assert_eq!(answers_in(Some(&raw(&refused)), &[]), []);
}

/// The dialects whose views read text answers.
const DIALECTS: [crate::Dialect; 4] = [
    crate::Dialect::OpenAiChat,
    crate::Dialect::Anthropic,
    crate::Dialect::Gemini,
    crate::Dialect::BedrockConverse,
];

/// A request of `dialect` whose system prompt is `system` and whose
/// messages are `messages`, Chat's (Anthropic: the system prompt at the
/// top; Gemini: `contents` of `parts`; Bedrock Converse: blocks of `text`;
/// as LiteLLM sends them).
fn request(dialect: crate::Dialect, system: &str, messages: &[Value]) -> serde_json::Value {
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    // A message's content as `{"text": …}` blocks.
    let blocks = |m: &Value| -> Vec<Value> {
        match &m["content"] {
            Value::Array(parts) => parts.iter().map(|p| json!({"text": p["text"]})).collect(),
            other => vec![json!({"text": other})],
        }
    };
    match dialect {
        crate::Dialect::Anthropic => json!({"model": "claude-sonnet-4-5", "max_tokens": 64000,
            "system": text(system), "messages": messages}),
        crate::Dialect::Gemini => {
            let contents: Vec<Value> = messages
                .iter()
                .map(|m| {
                    let role = if m["role"] == "assistant" {
                        "model"
                    } else {
                        "user"
                    };
                    json!({"role": role, "parts": blocks(m)})
                })
                .collect();
            json!({"contents": contents, "system_instruction": {"parts": [{"text": system}]}})
        }
        crate::Dialect::BedrockConverse => {
            let messages: Vec<Value> = messages
                .iter()
                .map(|m| json!({"role": m["role"], "content": blocks(m)}))
                .collect();
            json!({"messages": messages, "system": [{"text": system}]})
        }
        _ => {
            let mut all = vec![json!({"role": "system", "content": text(system)})];
            all.extend_from_slice(messages);
            json!({"model": "gpt-4o", "messages": all})
        }
    }
}

/// A conversation as smolagents' `ToolCallingAgent` sends it, on Chat
/// through `OpenAIServerModel`, on Anthropic through `LiteLLMModel`: text
/// parts, consecutive texts of a role joined; the model wrote text beside
/// its calls, but for the last step.
fn smolagents(dialect: crate::Dialect) -> serde_json::Value {
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    request(
        dialect,
        "You are an expert assistant who can solve any task using tool calls.",
        &[
            json!({"role": "user", "content": text("New task:\nRun the checks.")}),
            json!({"role": "assistant", "content": text(&step("call_1", "read_file", "{'path': 'present.txt'}"))}),
            json!({"role": "user", "content": text("Observation:\nhello e2e")}),
            json!({"role": "assistant", "content": text("Let me run it.")}),
            json!({"role": "user", "content": text(&format!("{}\n{}",
            error("run_shell", "{'command': 'ls missing-dir'}", "RuntimeError: exit status 2"),
            error("read_file", "{'path': 'gone'}", "FileNotFoundError: gone")))}),
        ],
    )
}

/// Where [`smolagents`]'s messages start in `dialect`'s body.
fn first_message(dialect: crate::Dialect) -> usize {
    usize::from(dialect == crate::Dialect::OpenAiChat)
}

/// `dialect`'s messages (Gemini's `contents`).
fn messages(body: &mut Value) -> &mut Vec<Value> {
    let key = if body.get("contents").is_some() {
        "contents"
    } else {
        "messages"
    };
    body[key].as_array_mut().unwrap()
}

#[test]
fn the_views_read_text_answers_as_results() {
    for dialect in DIALECTS {
        views_read_text_answers(dialect);
    }
}

fn views_read_text_answers(dialect: crate::Dialect) {
    let at = first_message(dialect);
    let body = serde_json::to_vec(&smolagents(dialect)).unwrap();
    assert_eq!(
        crate::fast_path_agrees(dialect, &body),
        Ok(()),
        "{dialect:?}"
    );
    let view = crate::testutil::eager_view(dialect, &body, &|_| Verdict::NONE).unwrap();
    let calls: Vec<_> = view
        .calls
        .iter()
        .map(|c| (&*c.id, &*c.name, &*c.arguments, c.message_index))
        .collect();
    assert_eq!(
        calls,
        [("call_1", "read_file", r#"{"path":"present.txt"}"#, at + 1)],
        "{dialect:?}"
    );
    let got: Vec<_> = view
        .results
        .iter()
        .map(|r| {
            (
                &*r.call_id,
                r.tool.as_deref(),
                r.message_index,
                r.new,
                r.verdict,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("call_1", Some("read_file"), at + 2, false, Verdict::NONE),
            (
                "text:run_shell#0",
                Some("run_shell"),
                at + 4,
                true,
                Verdict::explicit(true)
            ),
            (
                "text:read_file#1",
                Some("read_file"),
                at + 4,
                true,
                Verdict::explicit(true)
            ),
        ],
        "{dialect:?}"
    );
    assert_eq!(view.results[0].content, "hello e2e");
    assert!(
        view.results[2]
            .content
            .ends_with("FileNotFoundError: gone\nPlease try again or use another tool")
    );
    let turns: Vec<_> = view.view.results.iter().map(|r| r.named_turn()).collect();
    assert_eq!(
        turns,
        [
            None,
            Some(crate::turn::fingerprint([(
                "run_shell",
                r#"{"command":"ls missing-dir"}"#
            )])),
            Some(crate::turn::fingerprint([(
                "read_file",
                r#"{"path":"gone"}"#
            )])),
        ]
    );
    // The detector reads an observation.
    let view =
        crate::testutil::eager_view(dialect, &body, &|_| Verdict::heuristic_failure()).unwrap();
    assert_eq!(view.results[0].verdict, Verdict::heuristic_failure());
}

/// An observation answers only the step right before it.
#[test]
fn an_observation_needs_its_step_right_before_it() {
    for dialect in DIALECTS {
        let mut body = smolagents(dialect);
        let at = first_message(dialect) + 2;
        let wait = messages(&mut request(
            dialect,
            "",
            &[json!({"role": "user", "content": "wait"})],
        ))[0]
            .clone();
        messages(&mut body).insert(at, wait);
        let body = serde_json::to_vec(&body).unwrap();
        let view = crate::request_view(dialect, &body).unwrap();
        let ids: Vec<_> = view.results.iter().map(|r| &*r.call_id).collect();
        assert_eq!(ids, ["text:run_shell#0", "text:read_file#1"], "{dialect:?}");
    }
}

/// An Anthropic message with a block of the API's own (a `tool_use`, a
/// `tool_result`) is not a text step, and a body the fast path does not
/// take (here: an escaped key) reads as one it takes.
#[test]
fn anthropic_messages_with_api_blocks_are_not_text_steps() {
    let dialect = crate::Dialect::Anthropic;
    let mut body = smolagents(dialect);
    let plain = serde_json::to_vec(&body).unwrap();
    let escaped = String::from_utf8(plain.clone())
        .unwrap()
        .replace(r#""role":"user""#, r#""r\u006fle":"user""#);
    assert!(crate::fast_path_agrees(dialect, &plain).is_ok());
    let ids = |b: &[u8]| {
        let view = crate::request_view(dialect, b).unwrap();
        let ids: Vec<_> = view
            .results
            .iter()
            .map(|r| (r.call_id.to_string(), r.message_index))
            .collect();
        (ids, view.calls.len(), view.first_turn_hash)
    };
    assert_eq!(ids(&plain), ids(escaped.as_bytes()));
    assert_eq!(ids(&plain).0.len(), 3);
    let messages = body["messages"].as_array_mut().unwrap();
    messages[1]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}));
    messages[4]["content"].as_array_mut().unwrap().insert(
        0,
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}),
    );
    let body = serde_json::to_vec(&body).unwrap();
    let view = crate::request_view(dialect, &body).unwrap();
    let ids: Vec<_> = view.results.iter().map(|r| &*r.call_id).collect();
    assert_eq!(ids, ["toolu_1"]);
    let calls: Vec<_> = view.calls.iter().map(|c| &*c.id).collect();
    assert_eq!(calls, ["toolu_1"]);
}

proptest::proptest! {
    /// Any text: no panic, and every answer's output lies in the text.
    #[test]
    fn any_text_reads_without_panic(text in ".{0,200}", pick in 0u32..4) {
        let with_marks = format!("Calling tools:\n[{text}\nObservation:\n{text}\nError:\nError executing tool '{text}' with arguments {text}{RETRY}{text}");
        for t in [text.as_str(), with_marks.as_str()] {
            let _ = calls_named(t);
            for s in segments(t) {
                proptest::prop_assert!(s.output.start <= s.output.end && s.output.end <= t.len());
            }
            let _ = answer_text(Cow::Borrowed(t), pick);
            let raw = serde_json::to_string(t).unwrap();
            let _ = answers_in(Some(&raw), &[call("c", "x", "{}")]);
            let _ = calls_of(Some(&raw));
        }
    }

    /// Every content whose raw JSON holds a step (calls, answers, an
    /// error at its end) has a text that [`may_be_step`] passes: a view
    /// may ask it first, on decoded texts.
    #[test]
    fn texts_of_steps_pass_the_decoded_check(
        parts in proptest::collection::vec(
            proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::Just(step("c1", "f", "{}")),
                    proptest::prelude::Just("Observation:\n".to_string()),
                    proptest::prelude::Just(error("f", "{}", "E")),
                    proptest::prelude::Just("Call id: c1\n".to_string()),
                    proptest::prelude::Just(RETRY_ALL.to_string()),
                    "[a-z\"\\\n é]{0,300}",
                ],
                0..5,
            ),
            1..3,
        ),
        unicode in proptest::bool::ANY,
    ) {
        let texts: Vec<String> = parts.iter().map(|p| p.concat()).collect();
        let encode = |t: &str| {
            let raw = serde_json::to_string(t).unwrap();
            if unicode { raw.replace('é', "\\u00e9") } else { raw }
        };
        let raw = format!(
            "[{}]",
            texts.iter().map(|t| format!(r#"{{"type":"text","text":{}}}"#, encode(t))).collect::<Vec<_>>().join(",")
        );
        let named = [call("c1", "f", "{}")];
        let holds = !calls_of(Some(&raw)).is_empty()
            || !answers_in(Some(&raw), &named).is_empty()
            || may_hold_errors(&raw);
        if holds {
            proptest::prop_assert!(texts.iter().any(|t| may_be_step(t)), "{raw}");
        }
    }

    /// Any task, its error joined as smolagents joins it, the body written
    /// by serde_json or as Python's `json.dumps` writes it (`\uXXXX` for
    /// every character past ASCII): the first turn's hash is the task's,
    /// in every dialect (Gemini's cut from the client's own bytes).
    #[test]
    fn any_task_keeps_its_first_turn_when_an_error_joins_it(
        task in "[a-zA-Z \"\\\n\t/é✓😀]{0,80}",
        ascii in proptest::bool::ANY,
    ) {
        let failed = format!("{task}\n{}", error("read_file", "{'path': 'x'}", "E"));
        for dialect in DIALECTS {
            let hash = |user: &str| {
                let message = json!({"role": "user", "content": [{"type": "text", "text": user}]});
                let body = serde_json::to_string(&request(dialect, "S", &[message])).unwrap();
                let body = if ascii { python_ascii(&body) } else { body };
                crate::request_view(dialect, body.as_bytes()).unwrap().first_turn_hash
            };
            proptest::prop_assert_eq!(hash(&task), hash(&failed), "{:?}", dialect);
        }
    }

    /// A Python literal of JSON values reads back as the same value.
    #[test]
    fn python_reprs_of_json_values_read_back(value in json_value()) {
        let repr = python_repr(&value);
        let read = python::literal(&repr).map(|(v, rest)| (v, rest.to_string()));
        proptest::prop_assert_eq!(read, Some((value, String::new())));
    }
}

/// JSON text with every character past ASCII written as `\uXXXX` (a
/// surrogate pair past the BMP), as Python's `json.dumps` writes it.
fn python_ascii(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(".{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Python's `repr` of a JSON value (strings as Python quotes them).
fn python_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::from(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                        out.push_str(&format!("\\x{:02x}", c as u32))
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(python_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", python_repr(&json!(k)), python_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The task a failed step's error was joined to hashes as the task alone:
/// the conversation keeps its first turn, and its session.
#[test]
fn an_error_joined_to_the_task_leaves_the_first_turn() {
    let task = "New task:\nRun the checks.";
    let failed = format!(
        "{task}\n{}",
        error("read_file", "{'path': 'x'}", "FileNotFoundError: x")
    );
    assert_eq!(user_words(&failed), task);
    for dialect in DIALECTS {
        let hash = |user: &str| {
            let message = json!({"role": "user", "content": [{"type": "text", "text": user}]});
            let body = request(dialect, "You are an expert assistant.", &[message]);
            crate::request_view(dialect, &serde_json::to_vec(&body).unwrap())
                .unwrap()
                .first_turn_hash
        };
        assert_eq!(hash(task), hash(&failed), "{dialect:?}");
        assert_ne!(hash(task), hash("New task:\nRun others."), "{dialect:?}");
    }
}

/// smolagents' `CodeAgent` writes each code step as a call of its own
/// `python_interpreter` tool (ids `call_1`, `call_2`, … that no response
/// made), kept even when the code raised: its steps read as that tool's
/// results, an error by its `Call id:`.
#[test]
fn a_code_agents_steps_read_as_python_interpreter_results() {
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    // The code as Python's `repr` quotes it.
    let step = |id: &str, code: &str| {
        let quoted = if code.contains('\'') {
            format!("\"{code}\"")
        } else {
            format!("'{code}'")
        };
        format!(
            "Thought: run it.\n```python\n{code}\n```\nCalling tools:\n[{{'id': '{id}', 'type': 'function', 'function': {{'name': 'python_interpreter', 'arguments': {quoted}}}}}]"
        )
    };
    let body = serde_json::to_vec(&json!({"model": "gpt-4o", "messages": [
        {"role": "system", "content": text("You are an expert assistant who can solve any task using code blobs.")},
        {"role": "user", "content": text("New task:\nAdd them.")},
        {"role": "assistant", "content": text(&step("call_2", "print(1 + 1)"))},
        {"role": "user", "content": text("Observation:\nExecution logs:\n2\nLast output from code snippet:\nNone")},
        {"role": "assistant", "content": text(&step("call_3", "open('missing.txt')"))},
        {"role": "user", "content": text(&format!("Call id: call_3\nError:\nCode execution failed at line 'open('missing.txt')' due to: FileNotFoundError: missing.txt{RETRY_ALL}"))},
    ]}))
    .unwrap();
    let view =
        crate::testutil::eager_view(crate::Dialect::OpenAiChat, &body, &|_| Verdict::NONE).unwrap();
    let got: Vec<_> = view
        .results
        .iter()
        .map(|r| (&*r.call_id, r.tool.as_deref(), r.new, r.verdict))
        .collect();
    assert_eq!(
        got,
        [
            ("call_2", Some("python_interpreter"), false, Verdict::NONE),
            (
                "call_3",
                Some("python_interpreter"),
                true,
                Verdict::explicit(true)
            ),
        ]
    );
    assert_eq!(view.calls[1].arguments, "open('missing.txt')");
}
