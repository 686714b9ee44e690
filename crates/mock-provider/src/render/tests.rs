use serde_json::Value;

use super::*;
use crate::plan::{CallKind, PlannedCall, plan};

fn calls_plan(n: usize) -> Plan {
    Plan {
        model: "m".into(),
        seed: 0xabc,
        input_tokens: 5,
        output_tokens: 7,
        text: Some("Let me check é.".into()),
        calls: (0..n)
            .map(|i| PlannedCall {
                name: format!("tool{i}"),
                arguments: format!(r#"{{"city":"Zürich {i}"}}"#),
                kind: CallKind::Function,
            })
            .collect(),
        gemini_ids: false,
        stream_usage: true,
        reasoning: None,
        response_id_pad: 0,
        arg_pieces: 2,
    }
}

fn text_plan() -> Plan {
    Plan {
        calls: Vec::new(),
        ..calls_plan(0)
    }
}

/// The `data:` payloads of SSE events.
fn datas(events: &[Bytes]) -> Vec<Value> {
    let text: String = events
        .iter()
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
        .collect();
    text.split("\n\n")
        .flat_map(|e| e.split("\r\n\r\n"))
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect()
}

#[test]
fn json_bodies_are_valid_and_carry_the_calls() {
    let p = calls_plan(2);
    let a: Value = serde_json::from_str(&json_body(Dialect::Anthropic, &p)).unwrap();
    assert_eq!(a["stop_reason"], "tool_use");
    assert_eq!(a["content"][2]["input"]["city"], "Zürich 1");
    let c: Value = serde_json::from_str(&json_body(Dialect::OpenAiChat, &p)).unwrap();
    let tc = &c["choices"][0]["message"]["tool_calls"];
    assert_eq!(tc[1]["function"]["name"], "tool1");
    assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
    let r: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &p)).unwrap();
    assert_eq!(r["output"][0]["type"], "function_call");
    assert_eq!(r["output"][1]["call_id"], p.call_id("call_", 1));
    let g: Value = serde_json::from_str(&json_body(Dialect::Gemini, &p)).unwrap();
    assert_eq!(
        g["candidates"][0]["content"]["parts"][1]["functionCall"]["args"]["city"],
        "Zürich 1"
    );
    let t: Value = serde_json::from_str(&json_body(Dialect::OpenAiChat, &text_plan())).unwrap();
    assert_eq!(t["choices"][0]["message"]["content"], "Let me check é.");
}

#[test]
fn anthropic_stream_reassembles() {
    let p = calls_plan(2);
    let events = anthropic_stream(&p);
    let d = datas(&events);
    assert_eq!(d[0]["type"], "message_start");
    assert_eq!(d.last().unwrap()["type"], "message_stop");
    let mut args = vec![String::new(); 3];
    for e in &d {
        if e["delta"]["type"] == "input_json_delta" {
            let i = e["index"].as_u64().unwrap() as usize;
            args[i].push_str(e["delta"]["partial_json"].as_str().unwrap());
        }
    }
    assert_eq!(args[1], p.calls[0].arguments);
    assert_eq!(args[2], p.calls[1].arguments);
    // Every event names itself in an `event:` line matching its type.
    for ev in &events {
        let s = std::str::from_utf8(ev).unwrap();
        let name = s.lines().next().unwrap().strip_prefix("event: ").unwrap();
        assert!(
            s.contains(&format!("\"type\":\"{name}\"")) || name == "ping",
            "{s}"
        );
    }
}

#[test]
fn chat_stream_reassembles_and_ends_with_done() {
    let p = calls_plan(2);
    let events = chat_stream(&p);
    assert_eq!(
        events.last().unwrap(),
        &Bytes::from_static(b"data: [DONE]\n\n")
    );
    let mut args = vec![String::new(); 2];
    let mut names = Vec::new();
    for e in datas(&events) {
        for tc in e["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = tc["index"].as_u64().unwrap() as usize;
            if let Some(n) = tc["function"]["name"].as_str() {
                names.push(n.to_string());
            }
            args[i].push_str(tc["function"]["arguments"].as_str().unwrap());
        }
    }
    assert_eq!(names, ["tool0", "tool1"]);
    assert_eq!(args[0], p.calls[0].arguments);
}

#[test]
fn responses_stream_has_sequence_numbers_and_completes() {
    for p in [calls_plan(1), text_plan()] {
        let d = datas(&responses_stream(&p));
        for (i, e) in d.iter().enumerate() {
            assert_eq!(e["sequence_number"], i as u64);
        }
        assert_eq!(d[0]["type"], "response.created");
        let last = d.last().unwrap();
        assert_eq!(last["type"], "response.completed");
        assert_eq!(last["response"]["status"], "completed");
    }
    let p = calls_plan(1);
    let d = datas(&responses_stream(&p));
    let done = d
        .iter()
        .find(|e| e["type"] == "response.function_call_arguments.done")
        .unwrap();
    assert_eq!(done["arguments"], p.calls[0].arguments.as_str());
}

#[test]
fn gemini_sse_and_array_streams() {
    let p = calls_plan(1);
    let sse = gemini_stream(&p, true);
    assert!(sse.iter().all(|e| e.ends_with(b"\r\n\r\n")));
    let d = datas(&sse);
    assert_eq!(
        d.last().unwrap()["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
        "tool0"
    );
    let arr: Vec<u8> = gemini_stream(&p, false).concat();
    let v: Value = serde_json::from_slice(&arr).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[1]["candidates"][0]["finishReason"], "STOP");
}

#[test]
fn planned_replies_render_in_every_dialect() {
    let body = br#"{"model":"x","messages":[{"role":"user","content":"hi"}],"stream":true}"#;
    for dialect in Dialect::ALL {
        let p = plan(dialect, body, None, "get_weather", 1);
        let events = stream_events(dialect, &p, true);
        if dialect == Dialect::BedrockConverse {
            // Event-stream frames, not SSE: checked below.
            assert!(!events.is_empty());
        } else {
            assert!(!datas(&events).is_empty(), "{dialect}");
        }
        serde_json::from_str::<Value>(&json_body(dialect, &p)).unwrap();
    }
}

#[test]
fn converse_bodies_and_frames_read_back_through_wire() {
    let p = calls_plan(2);
    let json = toolwarden_wire::response_view(
        Dialect::BedrockConverse,
        json_body(Dialect::BedrockConverse, &p).as_bytes(),
    )
    .unwrap();
    let mut parser = toolwarden_wire::StreamParser::new(Dialect::BedrockConverse);
    for frame in stream_events(Dialect::BedrockConverse, &p, false) {
        parser.feed(&frame);
    }
    assert!(parser.is_complete());
    assert!(parser.framing_error().is_none());
    let streamed = parser.finish();
    assert_eq!(streamed, json);
    assert_eq!(json.calls.len(), 2);
    assert_eq!(json.calls[1].id, p.call_id("tooluse_", 1));
    assert_eq!(json.calls[1].arguments, r#"{"city":"Zürich 1"}"#);
    assert_eq!(json.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(json.usage.output_tokens, Some(7));
}

#[test]
fn responses_custom_tool_call_carries_raw_input() {
    let mut plan = calls_plan(1);
    plan.calls[0].kind = CallKind::Custom;
    plan.calls[0].arguments = "*** Begin Patch\n*** End Patch".into();
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &plan)).unwrap();
    let item = &body["output"][0];
    assert_eq!(item["type"], "custom_tool_call");
    assert_eq!(item["input"], "*** Begin Patch\n*** End Patch");
    let events = datas(&stream_events(Dialect::OpenAiResponses, &plan, false));
    let done = events
        .iter()
        .find(|e| e["type"] == "response.custom_tool_call_input.done")
        .expect("an input.done event");
    assert_eq!(done["input"], "*** Begin Patch\n*** End Patch");
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "response.function_call_arguments.delta")
    );
}

fn builtin_plan(kind: CallKind, arguments: &str) -> Plan {
    let mut plan = calls_plan(1);
    plan.calls[0].kind = kind;
    plan.calls[0].name = "ignored".into();
    plan.calls[0].arguments = arguments.into();
    plan
}

#[test]
fn responses_shell_call_carries_its_action_and_streams_its_commands() {
    let action = r#"{"commands":["ls missing-dir","echo e2e-ok"],"timeout_ms":5000,"max_output_length":4096}"#;
    let plan = builtin_plan(CallKind::Shell, action);
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &plan)).unwrap();
    let item = &body["output"][0];
    assert_eq!(item["type"], "shell_call");
    assert_eq!(item["status"], "completed");
    assert!(item["id"].as_str().unwrap().starts_with("sh_"), "{item}");
    assert_eq!(item["call_id"], plan.call_id("call_", 0));
    assert_eq!(
        item["action"],
        serde_json::from_str::<Value>(action).unwrap()
    );
    assert!(item.get("name").is_none(), "{item}");

    // Streamed as the openai SDKs accumulate it: the added item's
    // `commands` empty, each command appended by `shell_call_command.added`
    // (by output_index and command_index), its deltas, its final text.
    let events = datas(&stream_events(Dialect::OpenAiResponses, &plan, false));
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["sequence_number"], i as u64);
    }
    let added = events
        .iter()
        .find(|e| e["type"] == "response.output_item.added")
        .unwrap();
    assert_eq!(added["item"]["status"], "in_progress");
    assert_eq!(added["item"]["action"]["commands"], serde_json::json!([]));
    assert_eq!(added["item"]["action"]["timeout_ms"], 5000);
    let mut commands: Vec<String> = Vec::new();
    for e in &events {
        let k = e["command_index"].as_u64().map(|k| k as usize);
        match e["type"].as_str().unwrap() {
            "response.shell_call_command.added" => {
                assert_eq!(k, Some(commands.len()));
                assert!(e.get("item_id").is_none());
                commands.push(e["command"].as_str().unwrap().to_string());
            }
            "response.shell_call_command.delta" => {
                commands[k.unwrap()].push_str(e["delta"].as_str().unwrap());
            }
            "response.shell_call_command.done" => {
                assert_eq!(commands[k.unwrap()], e["command"].as_str().unwrap());
            }
            other => assert!(!other.contains("arguments"), "{other}"),
        }
        if e["type"]
            .as_str()
            .unwrap()
            .starts_with("response.shell_call_command")
        {
            assert_eq!(e["output_index"], 0);
        }
    }
    assert_eq!(commands, ["ls missing-dir", "echo e2e-ok"]);
    let done = events
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(&done["item"], item);
    assert_eq!(
        &events.last().unwrap()["response"]["output"],
        &body["output"]
    );

    // The wire layer reads it as a call of the tool `shell`, its action the
    // arguments, from the body and from the stream.
    let view = toolwarden_wire::response_view(
        Dialect::OpenAiResponses,
        json_body(Dialect::OpenAiResponses, &plan).as_bytes(),
    )
    .unwrap();
    assert_eq!(view.calls.len(), 1);
    assert_eq!(view.calls[0].name, "shell");
    let mut parser = toolwarden_wire::StreamParser::new(Dialect::OpenAiResponses);
    for e in stream_events(Dialect::OpenAiResponses, &plan, false) {
        parser.feed(&e);
    }
    let streamed = parser.finish();
    assert_eq!(streamed.calls.len(), 1);
    assert_eq!(streamed.calls[0].name, "shell");
    let args: Value = serde_json::from_str(&streamed.calls[0].arguments).unwrap();
    assert_eq!(args, serde_json::from_str::<Value>(action).unwrap());
}

#[test]
fn responses_apply_patch_call_carries_its_operation() {
    let operation =
        r#"{"type":"update_file","path":"present.txt","diff":"@@\n-hello e2e\n+hello patched\n"}"#;
    let plan = builtin_plan(CallKind::ApplyPatch, operation);
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &plan)).unwrap();
    let item = &body["output"][0];
    assert_eq!(item["type"], "apply_patch_call");
    assert!(item["id"].as_str().unwrap().starts_with("apc_"), "{item}");
    assert_eq!(item["status"], "completed");
    assert_eq!(
        item["operation"],
        serde_json::from_str::<Value>(operation).unwrap()
    );

    // No event streams an operation: added (in progress) and done carry it.
    let events = datas(&stream_events(Dialect::OpenAiResponses, &plan, false));
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(events[2]["item"]["status"], "in_progress");
    assert_eq!(events[2]["item"]["operation"], item["operation"]);
    assert_eq!(&events[3]["item"], item);

    let mut parser = toolwarden_wire::StreamParser::new(Dialect::OpenAiResponses);
    for e in stream_events(Dialect::OpenAiResponses, &plan, false) {
        parser.feed(&e);
    }
    let streamed = parser.finish();
    assert_eq!(streamed.calls[0].name, "apply_patch");
    assert_eq!(streamed.calls[0].id, plan.call_id("call_", 0));
}

#[test]
fn responses_local_shell_and_computer_calls() {
    let action = r#"{"type":"exec","command":["ls"],"env":{}}"#;
    let plan = builtin_plan(CallKind::LocalShell, action);
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &plan)).unwrap();
    assert_eq!(body["output"][0]["type"], "local_shell_call");
    assert_eq!(
        body["output"][0]["action"]["command"],
        serde_json::json!(["ls"])
    );
    let plan = builtin_plan(CallKind::Computer, r#"{"type":"screenshot"}"#);
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &plan)).unwrap();
    let item = &body["output"][0];
    assert_eq!(item["type"], "computer_call");
    assert_eq!(item["pending_safety_checks"], serde_json::json!([]));
    let view = toolwarden_wire::response_view(
        Dialect::OpenAiResponses,
        json_body(Dialect::OpenAiResponses, &plan).as_bytes(),
    )
    .unwrap();
    assert_eq!(view.calls[0].name, "computer");
}

#[test]
fn a_reasoning_reply_ties_its_built_in_calls_to_its_reasoning() {
    use crate::plan::Reasoning;
    let p = Plan {
        reasoning: Some(Reasoning { encrypted: false }),
        ..builtin_plan(CallKind::Shell, r#"{"commands":["ls"]}"#)
    };
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &p)).unwrap();
    let call = body["output"][1].clone();
    assert_eq!(call["type"], "shell_call");
    let answer = serde_json::json!({"type": "shell_call_output", "call_id": call["call_id"],
        "output": [{"stdout": "", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]});
    let with = serde_json::json!({"model": "gpt-5", "input": [
        {"role": "user", "content": "go"}, body["output"][0], call, answer]});
    assert_eq!(
        crate::rules::violation_value(Dialect::OpenAiResponses, None, &with),
        None
    );
    let without = serde_json::json!({"model": "gpt-5", "input": [
        {"role": "user", "content": "go"}, call, answer]});
    let text = crate::rules::violation_value(Dialect::OpenAiResponses, None, &without).unwrap();
    assert!(
        text.contains("of type 'shell_call' was provided without its required 'reasoning' item"),
        "{text}"
    );
}

#[test]
fn chat_stream_usage_only_when_the_request_asks() {
    // Asked: `"usage": null` on every chunk, then a usage chunk without
    // choices before `[DONE]`.
    let asked = datas(&chat_stream(&calls_plan(1)));
    let (last, rest) = asked.split_last().unwrap();
    assert_eq!(last["choices"], serde_json::json!([]));
    assert_eq!(last["usage"]["completion_tokens"], 7);
    assert!(
        rest.iter()
            .all(|c| c["usage"].is_null() && c.get("usage").is_some())
    );
    // Not asked: no chunk has a usage field, and the stream still ends.
    let plain = Plan {
        stream_usage: false,
        ..calls_plan(1)
    };
    let events = chat_stream(&plain);
    assert_eq!(
        events.last().unwrap(),
        &Bytes::from_static(b"data: [DONE]\n\n")
    );
    let chunks = datas(&events);
    assert_eq!(chunks.len(), asked.len() - 1);
    assert!(
        chunks.iter().all(|c| c.get("usage").is_none()),
        "{chunks:?}"
    );
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

#[test]
fn a_reasoning_reply_puts_its_reasoning_item_before_the_calls() {
    use crate::{plan::Reasoning, rules::reasoning};
    let p = Plan {
        reasoning: Some(Reasoning { encrypted: true }),
        ..calls_plan(2)
    };
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &p)).unwrap();
    let output = body["output"].as_array().unwrap();
    let types: Vec<&str> = output.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["reasoning", "function_call", "function_call"]);
    assert_eq!(output[0]["id"], reasoning::reasoning_id(p.seed));
    assert!(output[0]["encrypted_content"].is_string());
    assert_eq!(output[2]["id"], reasoning::call_item_id("fc_", p.seed, 1));

    // Streamed: the reasoning item at output_index 0, the calls after it.
    let events = datas(&stream_events(Dialect::OpenAiResponses, &p, false));
    let added: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.added")
        .map(|e| {
            (
                e["output_index"].as_u64().unwrap(),
                e["item"]["type"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        added,
        [(0, "reasoning"), (1, "function_call"), (2, "function_call")]
    );
    let args_done = events
        .iter()
        .find(|e| e["type"] == "response.function_call_arguments.done")
        .unwrap();
    assert_eq!(args_done["output_index"], 1);
    let completed = &events.last().unwrap()["response"]["output"];
    assert_eq!(completed, &body["output"]);

    // The wire layer reads the calls past the reasoning item.
    let view = toolwarden_wire::response_view(
        Dialect::OpenAiResponses,
        json_body(Dialect::OpenAiResponses, &p).as_bytes(),
    )
    .unwrap();
    assert_eq!(view.calls.len(), 2);
    let mut parser = toolwarden_wire::StreamParser::new(Dialect::OpenAiResponses);
    for e in stream_events(Dialect::OpenAiResponses, &p, false) {
        parser.feed(&e);
    }
    let streamed = parser.finish();
    let names: Vec<&str> = streamed.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["tool0", "tool1"]);
    assert_eq!(streamed.calls[1].arguments, p.calls[1].arguments);

    // A text answer has no reasoning item.
    let text = Plan {
        reasoning: Some(Reasoning { encrypted: false }),
        ..text_plan()
    };
    let body: Value = serde_json::from_str(&json_body(Dialect::OpenAiResponses, &text)).unwrap();
    assert_eq!(body["output"][0]["type"], "message");
}

#[test]
fn arguments_split_into_pieces_at_char_boundaries() {
    let s = r#"{"a":"é\"🌍"}"#;
    for n in 0..=s.len() + 2 {
        let parts = super::pieces(s, n);
        assert_eq!(parts.concat(), s, "{n}");
        assert!(parts.len() <= n.max(1), "{n}: {parts:?}");
        assert!(parts.iter().all(|p| !p.is_empty()), "{n}: {parts:?}");
    }
    assert_eq!(super::pieces("", 3), [""]);
    assert_eq!(super::pieces("abcdef", 3), ["ab", "cd", "ef"]);
}
