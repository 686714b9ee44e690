//! Tests of tool search items: the provider's own (hosted: read past, not
//! calls) and the client's (`execution: "client"`: calls named
//! `tool_search`, answered by a `tool_search_output`).

use serde_json::json;
use toolwarden_core::ToolOutcome;

use super::tests::{never, repaired, request_view_with, result_rows, stream};
use crate::{ChangeKind, Dialect};

/// A tool search's items (the hosted `tool_search` tool, or the AI SDK's
/// `openai.tool_search`) carry `arguments` as an object: a body, a
/// response or a stream holding one is still read, its function calls
/// and outputs recorded. (It made the whole body unreadable.)
#[test]
fn tool_search_items_do_not_make_a_body_unreadable() {
    let request = r#"{"model":"gpt-5.5","input":[{"role":"user","content":"find a tool"},
 {"type":"tool_search_call","id":"ts_1","execution":"server","call_id":null,"status":"completed","arguments":{"query":"weather"}},
 {"type":"tool_search_output","id":"tso_1","execution":"server","call_id":null,"status":"completed","tools":[{"type":"function","name":"get_weather","parameters":{}}]},
 {"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},
 {"type":"function_call_output","call_id":"c1","output":"sunny"}]}"#;
    let v = request_view_with(request.as_bytes(), &never).unwrap();
    assert_eq!(v.calls.len(), 1);
    assert_eq!(&*v.calls[0].name, "get_weather");
    let results: Vec<_> = (result_rows(&v).into_iter())
        .map(|(id, tool, content, ..)| (id, tool, content))
        .collect();
    assert_eq!(results, vec![("c1", Some("get_weather"), "sunny")]);
    assert!(
        crate::validate(Dialect::OpenAiResponses, request.as_bytes())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        super::view::fast_then_serde(request.as_bytes()),
        Some(Ok(()))
    );

    let search = r#"{"type":"tool_search_call","id":"ts_1","execution":"server","call_id":null,"status":"completed","arguments":{"query":"weather"}}"#;
    let call = r#"{"type":"function_call","id":"fc_1","call_id":"c1","name":"get_weather","arguments":"{}"}"#;
    let body = format!(
        r#"{{"id":"resp_1","status":"completed","model":"gpt-5.5","output":[{search},{call}]}}"#
    );
    let v = crate::response_view(Dialect::OpenAiResponses, body.as_bytes()).unwrap();
    let calls: Vec<_> = v.calls.iter().map(|c| (&*c.id, &*c.name)).collect();
    assert_eq!(calls, vec![("c1", "get_weather")]);

    let mut sse = String::new();
    for (i, item) in [search, call].into_iter().enumerate() {
        for kind in ["added", "done"] {
            sse.push_str(&format!(
                "data: {{\"type\":\"response.output_item.{kind}\",\"output_index\":{i},\"item\":{item}}}\n\n"
            ));
        }
    }
    let v = stream(sse.as_bytes(), 7);
    let calls: Vec<_> = v.calls.iter().map(|c| (&*c.id, &*c.name)).collect();
    assert_eq!(calls, vec![("c1", "get_weather")]);
}

/// A client tool search, in the shapes the AI SDK's `openai.tool_search`
/// writes with `store: false`: the call's `arguments` an object, the
/// output's `tools` the tools it loaded.
const CLIENT: &str = r#"{"model":"gpt-5.5","store":false,"input":[{"role":"user","content":"find a tool"},
 {"type":"tool_search_call","id":"ts_1","execution":"client","call_id":"call_ts1","status":"completed","arguments":{"query":"weather"}},
 {"type":"tool_search_output","execution":"client","call_id":"call_ts1","status":"completed","tools":[{"type":"function","name":"get_weather","parameters":{}}]},
 {"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},
 {"type":"function_call_output","call_id":"c1","output":"sunny"}]}"#;

#[test]
fn a_client_tool_search_is_a_call_answered_by_its_output() {
    let v = request_view_with(CLIENT.as_bytes(), &never).unwrap();
    let calls: Vec<_> = (v.calls.iter())
        .map(|c| (&*c.id, &*c.name, &*c.arguments))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_ts1", "tool_search", r#"{"query":"weather"}"#),
            ("c1", "get_weather", "{}"),
        ]
    );
    let results: Vec<_> = (result_rows(&v).into_iter())
        .map(|(id, tool, content, failed, ..)| (id, tool, content, failed))
        .collect();
    assert_eq!(
        results,
        vec![
            ("call_ts1", Some("tool_search"), "", false),
            ("c1", Some("get_weather"), "sunny", false),
        ]
    );
    assert!(
        crate::validate(Dialect::OpenAiResponses, CLIENT.as_bytes())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        super::view::fast_then_serde(CLIENT.as_bytes()),
        Some(Ok(()))
    );
}

#[test]
fn an_unanswered_client_tool_search_is_a_defect_and_repaired() {
    let body = r#"{"input":[{"role":"user","content":"go"},
 {"type":"tool_search_call","execution":"client","call_id":"call_ts2","arguments":{"query":"stock"}},
 {"role":"user","content":"and?"}]}"#;
    let d = crate::validate(Dialect::OpenAiResponses, body.as_bytes()).unwrap();
    let texts: Vec<_> = d.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        texts,
        ["No tool output found for tool search call call_ts2."]
    );
    let (out, changes) = repaired(body);
    assert_eq!(changes, [(ChangeKind::InsertedResult, 1)]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["input"][2],
        json!({"type": "tool_search_output", "execution": "client", "call_id": "call_ts2",
            "status": "incomplete", "tools": []})
    );
    // The inserted output reads as a failed search (its status).
    let view = request_view_with(out.as_bytes(), &never).unwrap();
    let rows = result_rows(&view);
    assert_eq!(
        (rows[0].0, rows[0].1, rows[0].3),
        ("call_ts2", Some("tool_search"), true)
    );
}

#[test]
fn a_client_tool_search_is_read_from_bodies_and_streams_and_answered_in_kind() {
    let search = r#"{"type":"tool_search_call","id":"ts_1","execution":"client","call_id":"call_ts1","status":"completed","arguments":{"query":"weather"}}"#;
    let hosted = r#"{"type":"tool_search_call","id":"ts_0","execution":"server","call_id":null,"status":"completed","arguments":{"query":"x"}}"#;
    let body = format!(r#"{{"id":"resp_1","status":"completed","output":[{hosted},{search}]}}"#);
    let v = crate::response_view(Dialect::OpenAiResponses, body.as_bytes()).unwrap();
    let calls: Vec<_> = (v.calls.iter())
        .map(|c| (&*c.id, &*c.name, &*c.arguments))
        .collect();
    let expected = vec![("call_ts1", "tool_search", r#"{"query":"weather"}"#)];
    assert_eq!(calls, expected);
    assert_eq!(v.call_kinds, [(0, super::CallKind::ToolSearch)]);

    let mut sse = String::new();
    for (i, item) in [hosted, search].into_iter().enumerate() {
        for kind in ["added", "done"] {
            sse.push_str(&format!(
                "data: {{\"type\":\"response.output_item.{kind}\",\"output_index\":{i},\"item\":{item}}}\n\n"
            ));
        }
    }
    for split in [sse.len(), 1, 13] {
        let s = stream(sse.as_bytes(), split);
        let calls: Vec<_> = (s.calls.iter())
            .map(|c| (&*c.id, &*c.name, &*c.arguments))
            .collect();
        assert_eq!(calls, expected, "split {split}");
    }

    // The runtime's answers: the tools a search loaded, or none.
    let tools = json!([{"type": "function", "name": "get_weather", "parameters": {}}]);
    let found = ToolOutcome::success("call_ts1", "tool_search", json!({"tools": tools}));
    let answers = crate::render_answers(Dialect::OpenAiResponses, &v, &[found]);
    assert_eq!(
        answers,
        [
            json!({"type": "tool_search_output", "execution": "client", "call_id": "call_ts1",
            "status": "completed", "tools": tools})
        ]
    );
    let next = json!({"input": [json!({"role": "user", "content": "go"}), serde_json::from_str::<serde_json::Value>(search).unwrap(), answers[0].clone()]});
    let next = next.to_string();
    assert!(
        crate::validate(Dialect::OpenAiResponses, next.as_bytes())
            .unwrap()
            .is_empty()
    );
}
