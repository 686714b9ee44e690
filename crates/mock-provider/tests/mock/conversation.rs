//! Stored conversations (`/v1/conversations`) and the Responses requests
//! that add to them (`conversation`), over HTTP.

use serde_json::{Value, json};

use super::{
    Method, OPENAI, client,
    continuation::{id_and_calls, outputs},
    post, send,
};
use toolwarden_mock_provider::{MockOptions, MockProvider};

fn tools() -> Value {
    json!([{"type": "function", "name": "lookup", "parameters": {"type": "object"}}])
}

#[tokio::test]
async fn a_conversations_requests_send_only_their_new_items() {
    let mock = MockProvider::start(MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    })
    .await;
    let c = client();
    let base = mock.base_url();
    // The Conversations API takes OpenAI's key like any other route.
    let r = post(&c, format!("{base}/v1/conversations"), &[], &json!({})).await;
    assert_eq!(r.status, 401);
    let r = post(
        &c,
        format!("{base}/v1/conversations"),
        OPENAI,
        &json!({"items": []}),
    )
    .await;
    assert_eq!(r.status, 200);
    let conv = r.json()["id"].as_str().unwrap().to_string();
    let url = format!("{base}/v1/responses");

    // The first turn: the calls land in the conversation.
    let first =
        json!({"model": "gpt-4.1", "conversation": conv, "tools": tools(), "input": "Find it."});
    let r = post(&c, url.clone(), OPENAI, &first).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let calls = id_and_calls(&r.json()).1;
    assert_eq!(calls.len(), 2);

    // The next one answers them with outputs alone: one missing, or one
    // for a call the conversation never held, is the API's 400.
    let mut extra = outputs(&calls);
    extra
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "function_call_output",
        "call_id": "call_other", "output": "?"}));
    for (input, message) in [
        (
            outputs(&calls[..1]),
            format!("No tool output found for function call {}.", calls[1]),
        ),
        (
            extra,
            "No tool call found for function call output with call_id call_other.".to_string(),
        ),
    ] {
        let body = json!({"model": "gpt-4.1", "conversation": {"id": conv}, "tools": tools(), "input": input});
        let r = post(&c, url.clone(), OPENAI, &body).await;
        assert_eq!(r.status, 400);
        assert_eq!(r.json()["error"]["message"], message);
    }
    // Refused turns add nothing; a streamed one that answers both does.
    let body = json!({"model": "gpt-4.1", "conversation": conv, "stream": true, "tools": tools(),
        "input": outputs(&calls)});
    let r = post(&c, url.clone(), OPENAI, &body).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let items = format!("{base}/v1/conversations/{conv}/items");
    let r = send(
        &c,
        Method::GET,
        format!("{items}?order=asc"),
        OPENAI,
        Vec::new(),
    )
    .await;
    let kinds: Vec<String> = r.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message"
        ],
        "the first turn (its input and calls), then the outputs and the answer"
    );

    // Unknown, or named beside a previous response: refused.
    let body = json!({"model": "gpt-4.1", "conversation": "conv_nowhere", "input": "hi"});
    let r = post(&c, url.clone(), OPENAI, &body).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json()["error"]["message"],
        "Conversation with id 'conv_nowhere' not found."
    );
    let body = json!({"model": "gpt-4.1", "conversation": conv, "previous_response_id": "resp_1",
        "input": "hi"});
    let r = post(&c, url, OPENAI, &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], "mutually_exclusive_parameters");
}

/// Agent mode plays its scripts over what a request continues: a stored
/// conversation's items, or the responses a `previous_response_id` chain
/// made. Each request carries only the outputs of the last step's call, and
/// gets the script's next step, then its final text.
#[tokio::test]
async fn agent_mode_plays_over_the_history_the_api_keeps() {
    let dir = std::env::temp_dir().join(format!("mock-agent-kept-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scripts = dir.join("scripts.json");
    std::fs::write(
        &scripts,
        r#"{"scripts":{"kept":{"steps":[{"tool":"lookup","args":{"q":1}},
            {"tool":"fetch","args":{"q":2}}],"final_text":"DONE kept"}}}"#,
    )
    .unwrap();
    let agent =
        toolwarden_mock_provider::AgentMode::open(&scripts, &dir.join("log.jsonl")).unwrap();
    let mock = MockProvider::start(MockOptions {
        agent: Some(std::sync::Arc::new(agent)),
        ..MockOptions::default()
    })
    .await;
    let c = client();
    let base = mock.base_url();
    let url = format!("{base}/v1/responses");
    let tools = json!([
        {"type": "function", "name": "lookup", "parameters": {"type": "object"}},
        {"type": "function", "name": "fetch", "parameters": {"type": "object"}}]);
    let r = post(&c, format!("{base}/v1/conversations"), OPENAI, &json!({})).await;
    let conv = r.json()["id"].as_str().unwrap().to_string();
    for kept in ["conversation", "previous_response_id"] {
        let mut body = json!({"model": "gpt-4.1", "tools": tools, "input": "Go. [[e2e:kept]]"});
        if kept == "conversation" {
            body["conversation"] = json!(conv);
        }
        let mut names = Vec::new();
        let text = loop {
            let r = post(&c, url.clone(), OPENAI, &body).await;
            assert_eq!(
                r.status,
                200,
                "{kept}: {}",
                String::from_utf8_lossy(&r.body)
            );
            let v = r.json();
            let output = v["output"].as_array().unwrap();
            let calls = id_and_calls(&v).1;
            if calls.is_empty() || names.len() > 2 {
                break output.last().unwrap()["content"][0]["text"].clone();
            }
            names.extend(
                output
                    .iter()
                    .filter_map(|i| i["name"].as_str().map(str::to_string)),
            );
            body = json!({"model": "gpt-4.1", "tools": tools, "input": outputs(&calls)});
            if kept == "conversation" {
                body["conversation"] = json!(conv);
            } else {
                body["previous_response_id"] = v["id"].clone();
            }
        };
        assert_eq!(names, ["lookup", "fetch"], "{kept}");
        assert_eq!(text, "DONE kept", "{kept}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
