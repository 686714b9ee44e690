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

/// A Chat conversation as smolagents' `ToolCallingAgent` sends it through
/// `OpenAIServerModel`: text parts, consecutive texts of a role joined;
/// the model wrote text beside its calls, but for the last step.
fn smolagents_chat() -> serde_json::Value {
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    json!({"model": "gpt-4o", "messages": [
        {"role": "system", "content": text("You are an expert assistant who can solve any task using tool calls.")},
        {"role": "user", "content": text("New task:\nRun the checks.")},
        {"role": "assistant", "content": text(&step("call_1", "read_file", "{'path': 'present.txt'}"))},
        {"role": "user", "content": text("Observation:\nhello e2e")},
        {"role": "assistant", "content": text("Let me run it.")},
        {"role": "user", "content": text(&format!("{}\n{}",
            error("run_shell", "{'command': 'ls missing-dir'}", "RuntimeError: exit status 2"),
            error("read_file", "{'path': 'gone'}", "FileNotFoundError: gone")))},
    ]})
}

#[test]
fn the_chat_view_reads_text_answers_as_results() {
    let body = serde_json::to_vec(&smolagents_chat()).unwrap();
    let view =
        crate::testutil::eager_view(crate::Dialect::OpenAiChat, &body, &|_| Verdict::NONE).unwrap();
    let calls: Vec<_> = view
        .calls
        .iter()
        .map(|c| (&*c.id, &*c.name, &*c.arguments, c.message_index))
        .collect();
    assert_eq!(
        calls,
        [("call_1", "read_file", r#"{"path":"present.txt"}"#, 2)]
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
            ("call_1", Some("read_file"), 3, false, Verdict::NONE),
            (
                "text:run_shell#0",
                Some("run_shell"),
                5,
                true,
                Verdict::explicit(true)
            ),
            (
                "text:read_file#1",
                Some("read_file"),
                5,
                true,
                Verdict::explicit(true)
            ),
        ]
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
    let view = crate::testutil::eager_view(crate::Dialect::OpenAiChat, &body, &|_| {
        Verdict::heuristic_failure()
    })
    .unwrap();
    assert_eq!(view.results[0].verdict, Verdict::heuristic_failure());
}

/// An observation answers only the step right before it.
#[test]
fn an_observation_needs_its_step_right_before_it() {
    let mut chat = smolagents_chat();
    let messages = chat["messages"].as_array_mut().unwrap();
    messages.insert(3, json!({"role": "user", "content": "wait"}));
    let body = serde_json::to_vec(&chat).unwrap();
    let view = crate::request_view(crate::Dialect::OpenAiChat, &body).unwrap();
    let ids: Vec<_> = view.results.iter().map(|r| &*r.call_id).collect();
    assert_eq!(ids, ["text:run_shell#0", "text:read_file#1"]);
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

    /// A Python literal of JSON values reads back as the same value.
    #[test]
    fn python_reprs_of_json_values_read_back(value in json_value()) {
        let repr = python_repr(&value);
        let read = python::literal(&repr).map(|(v, rest)| (v, rest.to_string()));
        proptest::prop_assert_eq!(read, Some((value, String::new())));
    }
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
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    let body = |user: &str| {
        serde_json::to_vec(&json!({"model": "gpt-4o", "messages": [
            {"role": "system", "content": text("You are an expert assistant.")},
            {"role": "user", "content": text(user)},
        ]}))
        .unwrap()
    };
    let hash = |b: &[u8]| {
        crate::request_view(crate::Dialect::OpenAiChat, b)
            .unwrap()
            .first_turn_hash
    };
    let task = "New task:\nRun the checks.";
    let failed = format!(
        "{task}\n{}",
        error("read_file", "{'path': 'x'}", "FileNotFoundError: x")
    );
    assert_eq!(hash(&body(task)), hash(&body(&failed)));
    assert_eq!(user_words(&failed), task);
    assert_ne!(hash(&body(task)), hash(&body("New task:\nRun others.")));
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
