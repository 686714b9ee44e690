//! Responses continuations (`previous_response_id`) over HTTP and
//! WebSocket, as the API keeps its responses.

use std::time::Duration;

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use yawc::{Frame, OpCode, Options, WebSocket};

use super::{client, post};
use toolwarden_mock_provider::{MockOptions, MockProvider};

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

fn first_turn(store: bool) -> Value {
    json!({"model": "gpt-4.1", "store": store, "tools": [{"type": "function", "name": "lookup",
        "parameters": {"type": "object"}}], "input": "Find it."})
}

pub(super) fn outputs(calls: &[String]) -> Value {
    calls
        .iter()
        .map(|c| json!({"type": "function_call_output", "call_id": c, "output": "ok"}))
        .collect()
}

/// A JSON response's id and call ids.
pub(super) fn id_and_calls(v: &Value) -> (String, Vec<String>) {
    let calls = v["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| i["call_id"].as_str().unwrap().to_string())
        .collect();
    (v["id"].as_str().unwrap().to_string(), calls)
}

#[tokio::test]
async fn an_unknown_previous_response_gets_the_apis_400() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let url = format!("{}/v1/responses", mock.base_url());
    let body = json!({"model": "gpt-4.1", "previous_response_id": "resp_nowhere",
        "input": [{"type": "function_call_output", "call_id": "call_1", "output": "ok"}]});
    let r = post(&client(), url, &[AUTH], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json(),
        json!({"error": {"message": "Previous response with id 'resp_nowhere' not found.",
            "type": "invalid_request_error", "param": "previous_response_id",
            "code": "previous_response_not_found"}})
    );
}

#[tokio::test]
async fn a_continuation_must_answer_the_previous_responses_calls() {
    let mock = MockProvider::start(MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    })
    .await;
    let c = client();
    let url = format!("{}/v1/responses", mock.base_url());
    let r = post(&c, url.clone(), &[AUTH], &first_turn(true)).await;
    assert_eq!(r.status, 200);
    let (id, calls) = id_and_calls(&r.json());
    assert_eq!(calls.len(), 2);
    // Only one output, or none: the API misses the other.
    for input in [outputs(&calls[..1]), json!("And?")] {
        let body = json!({"model": "gpt-4.1", "previous_response_id": id, "input": input});
        let r = post(&c, url.clone(), &[AUTH], &body).await;
        assert_eq!(r.status, 400);
        let missing = if input.is_string() {
            &calls[0]
        } else {
            &calls[1]
        };
        assert_eq!(
            r.json()["error"]["message"],
            format!("No tool output found for function call {missing}.")
        );
    }
    // An output for a call it never made (besides both of its own).
    let mut wrong = outputs(&calls);
    wrong
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "function_call_output", "call_id": "call_other", "output": "?"}));
    let body = json!({"model": "gpt-4.1", "previous_response_id": id, "input": wrong});
    let r = post(&c, url.clone(), &[AUTH], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"]["message"],
        "No tool call found for function call output with call_id call_other."
    );
    // Both: accepted, and that answer is continued in turn (streamed).
    let body = json!({"model": "gpt-4.1", "previous_response_id": id, "input": outputs(&calls)});
    let r = post(&c, url.clone(), &[AUTH], &body).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let (answer, none) = id_and_calls(&r.json());
    assert!(none.is_empty());
    let body = json!({"model": "gpt-4.1", "stream": true, "previous_response_id": answer,
        "input": "Thanks, and the next one?"});
    let r = post(&c, url.clone(), &[AUTH], &body).await;
    assert_eq!(r.status, 200);
    // The streamed response is kept too: its calls must be answered.
    let text = String::from_utf8_lossy(&r.body).to_string();
    let completed = text
        .split("\n\n")
        .find_map(|e| e.strip_prefix("event: response.completed\ndata: "))
        .unwrap();
    let (streamed, calls) = id_and_calls(&json!(
        serde_json::from_str::<Value>(completed).unwrap()["response"]
    ));
    assert_eq!(calls.len(), 2);
    let body = json!({"model": "gpt-4.1", "previous_response_id": streamed, "input": "Hm?"});
    let r = post(&c, url, &[AUTH], &body).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn store_false_responses_are_not_kept_over_http() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let url = format!("{}/v1/responses", mock.base_url());
    let r = post(&c, url.clone(), &[AUTH], &first_turn(false)).await;
    let (id, calls) = id_and_calls(&r.json());
    let body = json!({"model": "gpt-4.1", "previous_response_id": id, "input": outputs(&calls)});
    let r = post(&c, url, &[AUTH], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], "previous_response_not_found");
}

type Socket = WebSocket<TcpStream>;

async fn connect(mock: &MockProvider) -> Socket {
    let addr = mock.addr();
    let url: url::Url = format!("ws://{addr}/v1/responses").parse().unwrap();
    let tcp = TcpStream::connect(addr).await.unwrap();
    let request = yawc::HttpRequest::builder().header(AUTH.0, AUTH.1);
    WebSocket::handshake_with_request(url, tcp, Options::default(), request)
        .await
        .unwrap()
}

/// Send a turn; its last event (`response.completed` or `error`).
async fn turn(ws: &mut Socket, body: &Value) -> Value {
    let mut message = body.clone();
    message["type"] = json!("response.create");
    ws.send(Frame::text(message.to_string())).await.unwrap();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next_frame())
            .await
            .unwrap()
            .unwrap();
        if frame.opcode() != OpCode::Text {
            continue;
        }
        let v: Value = serde_json::from_slice(&frame.into_payload()).unwrap();
        if matches!(v["type"].as_str(), Some("response.completed" | "error")) {
            return v;
        }
    }
}

#[tokio::test]
async fn websocket_store_false_continues_only_on_its_socket_and_as_the_latest() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut ws = connect(&mock).await;
    let done = turn(&mut ws, &first_turn(false)).await;
    let (id, calls) = id_and_calls(&done["response"]);
    let next = json!({"model": "gpt-4.1", "store": false, "previous_response_id": id,
        "input": outputs(&calls)});
    // Another socket does not have it.
    let mut other = connect(&mock).await;
    let error = turn(&mut other, &next).await;
    assert_eq!(
        error,
        json!({"type": "error", "status": 400, "error": {"type": "invalid_request_error",
            "code": "previous_response_not_found", "param": "previous_response_id",
            "message": format!("Previous response with id '{id}' not found.")}})
    );
    // Its own socket does; the pairing sees the previous response's calls.
    let missing = json!({"model": "gpt-4.1", "store": false, "previous_response_id": id,
        "input": "And?"});
    let error = turn(&mut ws, &missing).await;
    assert_eq!(error["error"]["param"], "input");
    assert_eq!(error["error"]["code"], Value::Null);
    assert_eq!(
        error["error"]["message"],
        format!("No tool output found for function call {}.", calls[0])
    );
    let done = turn(&mut ws, &next).await;
    assert_eq!(done["type"], "response.completed", "{done}");
    // Only the latest response is cached: the first one is gone.
    let again = turn(&mut ws, &next).await;
    assert_eq!(again["error"]["code"], "previous_response_not_found");
}

#[tokio::test]
async fn websocket_stored_responses_continue_anywhere() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut ws = connect(&mock).await;
    let done = turn(&mut ws, &first_turn(true)).await;
    let (id, calls) = id_and_calls(&done["response"]);
    drop(ws);
    let next = json!({"model": "gpt-4.1", "previous_response_id": id, "input": outputs(&calls)});
    let mut other = connect(&mock).await;
    assert_eq!(turn(&mut other, &next).await["type"], "response.completed");
    // And over HTTP.
    let url = format!("{}/v1/responses", mock.base_url());
    let r = post(&client(), url, &[AUTH], &next).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn a_websocket_turn_can_fail_midway_and_the_socket_stays() {
    use toolwarden_mock_provider::{Fault, StreamError};
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut ws = connect(&mock).await;
    mock.set_fault(Fault::ErrorEventAfter(1, StreamError::Internal));
    let body = first_turn(true);
    let mut message = body.clone();
    message["type"] = json!("response.create");
    ws.send(Frame::text(message.to_string())).await.unwrap();
    let mut types = Vec::new();
    while types.last().map(String::as_str) != Some("response.failed") {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next_frame())
            .await
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_slice(&frame.into_payload()).unwrap();
        types.push(v["type"].as_str().unwrap().to_string());
        if v["type"] == "error" {
            assert_eq!(v["code"], "server_error");
            assert_eq!(v["sequence_number"], 1);
        }
    }
    assert_eq!(types, ["response.created", "error", "response.failed"]);
    mock.set_fault(Fault::None);
    assert_eq!(turn(&mut ws, &body).await["type"], "response.completed");
}
