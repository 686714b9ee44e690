use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::*;

fn serve(
    c: &Conversations,
    method: Method,
    path: &str,
    query: &str,
    body: Value,
) -> (StatusCode, Value) {
    let body = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let (status, text) = c
        .serve(&method, path, query, &body)
        .expect("a Conversations path");
    (status, serde_json::from_str(&text).unwrap())
}

fn make(c: &Conversations, items: Value) -> String {
    let (status, v) = serve(
        c,
        Method::POST,
        "/v1/conversations",
        "",
        json!({"items": items}),
    );
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["object"], "conversation");
    v["id"].as_str().unwrap().to_string()
}

fn ids(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn items_are_stored_with_ids_status_and_text_parts() {
    let c = Conversations::default();
    let id = make(&c, json!([{"role": "user", "content": "hi"}]));
    let added = json!({"items": [
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
        {"role": "assistant", "content": "done", "id": "msg_own"}]});
    let (status, v) = serve(
        &c,
        Method::POST,
        &format!("/v1/conversations/{id}/items"),
        "",
        added,
    );
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["data"].as_array().unwrap().len(), 3);
    let (_, all) = serve(
        &c,
        Method::GET,
        &format!("/v1/conversations/{id}/items"),
        "order=asc",
        Value::Null,
    );
    let data = all["data"].as_array().unwrap();
    assert_eq!(data[0]["type"], "message");
    assert_eq!(
        data[0]["content"],
        json!([{"type": "input_text", "text": "hi"}])
    );
    assert!(data[0]["id"].as_str().unwrap().starts_with("msg_"));
    assert!(data[1]["id"].as_str().unwrap().starts_with("fc_"));
    assert_eq!(data[2]["status"], "completed");
    assert_eq!(data[3]["id"], "msg_own");
    assert_eq!(
        data[3]["content"],
        json!([{"type": "output_text", "text": "done"}])
    );
    let (status, one) = serve(
        &c,
        Method::GET,
        &format!("/v1/conversations/{id}/items/msg_own"),
        "",
        Value::Null,
    );
    assert_eq!((status, &one["id"]), (StatusCode::OK, &json!("msg_own")));
}

#[test]
fn a_list_pages_newest_first_by_default() {
    let c = Conversations::default();
    let items: Vec<Value> = (0..5)
        .map(|i| json!({"role": "user", "content": format!("m{i}")}))
        .collect();
    let id = make(&c, json!(items));
    let path = format!("/v1/conversations/{id}/items");
    let (_, asc) = serve(&c, Method::GET, &path, "order=asc", Value::Null);
    let all = ids(&asc);
    let (_, desc) = serve(&c, Method::GET, &path, "limit=2", Value::Null);
    assert_eq!(ids(&desc), [all[4].clone(), all[3].clone()]);
    assert_eq!(
        (&desc["has_more"], &desc["first_id"]),
        (&json!(true), &json!(all[4]))
    );
    let (_, next) = serve(
        &c,
        Method::GET,
        &path,
        &format!("limit=2&after={}", all[3]),
        Value::Null,
    );
    assert_eq!(ids(&next), [all[2].clone(), all[1].clone()]);
    let (_, last) = serve(
        &c,
        Method::GET,
        &path,
        &format!("order=asc&after={}", all[3]),
        Value::Null,
    );
    assert_eq!(
        (ids(&last), &last["has_more"]),
        (vec![all[4].clone()], &json!(false))
    );
    for bad in ["limit=0", "limit=101", "order=up"] {
        let (status, v) = serve(&c, Method::GET, &path, bad, Value::Null);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {v}");
    }
}

#[test]
fn adding_takes_one_to_twenty_objects() {
    let c = Conversations::default();
    let id = make(&c, json!([]));
    let path = format!("/v1/conversations/{id}/items");
    let many: Vec<Value> = (0..21)
        .map(|_| json!({"role": "user", "content": "x"}))
        .collect();
    for body in [
        json!({"items": []}),
        json!({"items": many}),
        json!({}),
        json!({"items": [1]}),
        json!([]),
    ] {
        let (status, v) = serve(&c, Method::POST, &path, "", body.clone());
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(v["error"]["type"], "invalid_request_error");
    }
    let (status, v) = serve(
        &c,
        Method::POST,
        "/v1/conversations",
        "",
        json!({"items": many}),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    // An empty body makes an empty conversation.
    let (status, _) = serve(&c, Method::POST, "/v1/conversations", "", Value::Null);
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn deleted_and_unknown_conversations_are_not_found() {
    let c = Conversations::default();
    let id = make(&c, json!([{"role": "user", "content": "hi"}]));
    let (_, listed) = serve(
        &c,
        Method::GET,
        &format!("/v1/conversations/{id}/items"),
        "",
        Value::Null,
    );
    let item = ids(&listed)[0].clone();
    let (status, v) = serve(
        &c,
        Method::DELETE,
        &format!("/v1/conversations/{id}/items/{item}"),
        "",
        Value::Null,
    );
    assert_eq!(
        (status, &v["object"]),
        (StatusCode::OK, &json!("conversation"))
    );
    let (status, _) = serve(
        &c,
        Method::DELETE,
        &format!("/v1/conversations/{id}/items/{item}"),
        "",
        Value::Null,
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, v) = serve(
        &c,
        Method::POST,
        &format!("/v1/conversations/{id}"),
        "",
        json!({"metadata": {"k": "v"}}),
    );
    assert_eq!(
        (status, &v["metadata"]),
        (StatusCode::OK, &json!({"k": "v"}))
    );
    let (status, v) = serve(
        &c,
        Method::DELETE,
        &format!("/v1/conversations/{id}"),
        "",
        Value::Null,
    );
    assert_eq!(
        (status, v),
        (
            StatusCode::OK,
            json!({"id": id, "object": "conversation.deleted", "deleted": true})
        )
    );
    for method in [Method::GET, Method::DELETE] {
        let (status, v) = serve(
            &c,
            method,
            &format!("/v1/conversations/{id}"),
            "",
            Value::Null,
        );
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            v["error"]["message"],
            format!("Conversation with id '{id}' not found.")
        );
    }
    assert!(
        c.serve(&Method::PUT, "/v1/conversations/x", "", b"")
            .is_none()
    );
    assert!(c.serve(&Method::GET, "/v1/responses", "", b"").is_none());
    assert!(
        c.serve(&Method::POST, "/v1/conversationsx", "", b"{}")
            .is_none()
    );
}

#[test]
fn a_response_reads_and_extends_its_conversation() {
    let c = Conversations::default();
    let id = make(&c, json!([{"role": "user", "content": "hi"}]));
    assert!(c.context(&json!({"input": "x"})).unwrap().is_none());
    let body = json!({"conversation": {"id": id}, "input": "more"});
    let (named, items) = c.context(&body).unwrap().unwrap();
    assert_eq!((named.as_str(), items.len()), (id.as_str(), 1));
    let whole = with_items(&body, items);
    assert!(whole.get("conversation").is_none());
    assert_eq!(whole["input"].as_array().unwrap().len(), 2);
    c.append(
        &id,
        &body,
        vec![json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"})],
    );
    let (_, items) = c
        .context(&json!({"conversation": id, "input": []}))
        .unwrap()
        .unwrap();
    let kinds: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "message", "function_call"]);
    // Unknown, or beside a previous response: refused.
    let (status, _) = c.context(&json!({"conversation": "conv_x"})).unwrap_err();
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, v) = c
        .context(&json!({"conversation": id, "previous_response_id": "resp_1"}))
        .unwrap_err();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(v.contains("mutually_exclusive_parameters"), "{v}");
}

#[test]
fn the_conversations_are_bounded() {
    let c = Conversations::default();
    let first = make(&c, json!([]));
    for _ in 0..CAPACITY {
        make(&c, json!([]));
    }
    let (status, _) = serve(
        &c,
        Method::GET,
        &format!("/v1/conversations/{first}"),
        "",
        Value::Null,
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(crate::lock(&c.inner).by_id.len(), CAPACITY);
}
