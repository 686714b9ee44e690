use serde_json::Value;

use super::*;
use crate::plan::{PlannedCall, plan};

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
                custom: false,
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
    plan.calls[0].custom = true;
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
    assert_eq!(output[2]["id"], reasoning::call_item_id(p.seed, 1));

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
