//! The mock provider through real sockets: authentication, validation,
//! default replies, scripts, faults and recording.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::{client::legacy::Client, rt::TokioExecutor};
use serde_json::{Value, json};
use toolwarden_mock_provider::{Fault, MockOptions, MockProvider, Scripted};

#[path = "mock/continuation.rs"]
mod continuation;
#[path = "mock/conversation.rs"]
mod conversation;

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    /// The body ended with an error (connection reset).
    broken: bool,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

async fn send(
    c: &HttpClient,
    method: Method,
    url: String,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Reply {
    let mut req = Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = c
        .request(req.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .expect("request failed");
    let (parts, mut body) = resp.into_parts();
    let mut out = Vec::new();
    let mut broken = false;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => {
                if let Ok(d) = f.into_data() {
                    out.extend_from_slice(&d);
                }
            }
            Err(_) => {
                broken = true;
                break;
            }
        }
    }
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: out.into(),
        broken,
    }
}

async fn post(c: &HttpClient, url: String, headers: &[(&str, &str)], body: &Value) -> Reply {
    send(
        c,
        Method::POST,
        url,
        headers,
        serde_json::to_vec(body).unwrap(),
    )
    .await
}

const ANTHROPIC: &[(&str, &str)] = &[
    ("x-api-key", "sk-ant-test"),
    ("anthropic-version", "2023-06-01"),
];
const OPENAI: &[(&str, &str)] = &[("authorization", "Bearer sk-test")];
const GEMINI: &[(&str, &str)] = &[("x-goog-api-key", "g-test")];

fn no_validation() -> MockOptions {
    MockOptions {
        validate: false,
        ..MockOptions::default()
    }
}

fn chat_first_turn(stream: bool) -> Value {
    json!({"model":"gpt-4o","stream":stream,"messages":[{"role":"user","content":"weather?"}],
        "tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}]})
}

#[tokio::test]
async fn every_route_requires_the_providers_key() {
    let mock = MockProvider::start(no_validation()).await;
    let c = client();
    let base = mock.base_url();
    let r = post(&c, format!("{base}/v1/messages"), &[], &json!({})).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"]["type"], "authentication_error");
    // OpenAI does not take x-api-key.
    let r = post(
        &c,
        format!("{base}/v1/chat/completions"),
        &[("x-api-key", "k")],
        &json!({}),
    )
    .await;
    assert_eq!(r.status, 401);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("API key")
    );
    let r = post(&c, format!("{base}/v1/responses"), &[], &json!({})).await;
    assert_eq!(r.status, 401);
    let url = format!("{base}/v1beta/models/gemini-2.0-flash:generateContent");
    let r = post(&c, url.clone(), &[], &json!({})).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["error"]["status"], "PERMISSION_DENIED");
    let body = json!({"contents":[{"role":"user","parts":[{"text":"hi"}]}]});
    let r = post(&c, format!("{url}?key=g"), &[], &body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // Anthropic with a Bearer token (the current SDK's way).
    let r = post(
        &c,
        format!("{base}/v1/messages"),
        &[("authorization", "Bearer sk-ant")],
        &json!({"model":"claude","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(mock.received().len(), 6);
}

#[tokio::test]
async fn models_listing_by_headers() {
    let mock = MockProvider::start(no_validation()).await;
    let c = client();
    let url = format!("{}/v1/models", mock.base_url());
    let r = send(&c, Method::GET, url.clone(), OPENAI, Vec::new()).await;
    assert_eq!(r.json()["object"], "list");
    let r = send(&c, Method::GET, url.clone(), ANTHROPIC, Vec::new()).await;
    assert_eq!(r.json()["has_more"], false);
    let r = send(&c, Method::GET, url, &[], Vec::new()).await;
    assert_eq!(r.status, 401);
    // One model, as each API describes it.
    let base = mock.base_url();
    let r = send(
        &c,
        Method::GET,
        format!("{base}/v1/models/gpt-4o"),
        OPENAI,
        Vec::new(),
    )
    .await;
    assert_eq!(
        (r.json()["id"].clone(), r.json()["object"].clone()),
        (json!("gpt-4o"), json!("model"))
    );
    let one = format!("{base}/v1/models/claude-sonnet-4-5");
    let r = send(&c, Method::GET, one, ANTHROPIC, Vec::new()).await;
    assert_eq!(r.json()["type"], "model");
    let gemini = format!("{base}/v1beta/models/gemini-2.5-flash");
    let r = send(&c, Method::GET, gemini.clone(), &[], Vec::new()).await;
    assert_eq!(r.status, 403);
    let r = send(
        &c,
        Method::GET,
        gemini,
        &[("x-goog-api-key", "g")],
        Vec::new(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["name"], "models/gemini-2.5-flash");
    assert!(
        r.json()["supportedGenerationMethods"]
            .as_array()
            .unwrap()
            .contains(&json!("generateContent"))
    );
    let r = send(
        &c,
        Method::GET,
        format!("{base}/v1beta/models/a/b"),
        &[("x-goog-api-key", "g")],
        Vec::new(),
    )
    .await;
    assert_eq!(r.status, 404);
    let r = send(
        &c,
        Method::GET,
        format!("{}/nope", mock.base_url()),
        OPENAI,
        Vec::new(),
    )
    .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn tool_loop_in_chat_json_and_stream() {
    let mock = MockProvider::start(no_validation()).await;
    let c = client();
    let url = format!("{}/v1/chat/completions", mock.base_url());
    let r = post(&c, url.clone(), OPENAI, &chat_first_turn(false)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "application/json");
    let v = r.json();
    let call = v["choices"][0]["message"]["tool_calls"][0].clone();
    assert_eq!(call["function"]["name"], "lookup");
    // Same request, same bytes.
    let again = post(&c, url.clone(), OPENAI, &chat_first_turn(false)).await;
    assert_eq!(again.body, r.body);
    let mut second = chat_first_turn(false);
    let msgs = second["messages"].as_array_mut().unwrap();
    msgs.push(v["choices"][0]["message"].clone());
    msgs.push(json!({"role":"tool","tool_call_id":call["id"],"content":"sunny"}));
    let r2 = post(&c, url.clone(), OPENAI, &second).await;
    assert_eq!(r2.json()["choices"][0]["finish_reason"], "stop");
    let s = post(&c, url, OPENAI, &chat_first_turn(true)).await;
    assert!(
        s.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert!(s.body.ends_with(b"data: [DONE]\n\n"));
}

#[tokio::test]
async fn gemini_stream_forms() {
    let mock = MockProvider::start(no_validation()).await;
    let c = client();
    let body = json!({"contents":[{"role":"user","parts":[{"text":"hi"}]}],
        "tools":[{"functionDeclarations":[{"name":"find"}]}]});
    let base = format!(
        "{}/v1beta/models/gemini-2.5-pro:streamGenerateContent",
        mock.base_url()
    );
    let sse = post(&c, format!("{base}?alt=sse"), GEMINI, &body).await;
    assert_eq!(sse.headers["content-type"], "text/event-stream");
    assert!(sse.body.starts_with(b"data: {"));
    let arr = post(&c, base, GEMINI, &body).await;
    let v = arr.json();
    let last = v.as_array().unwrap().last().unwrap();
    assert_eq!(
        last["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
        "find"
    );
    assert_eq!(last["modelVersion"], "gemini-2.5-pro");
}

#[tokio::test]
async fn scripted_sse_is_replayed_byte_exact_in_chunks() {
    let mock = MockProvider::start(no_validation()).await;
    let recording = b"event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    mock.push_response(Scripted::sse_split(recording, 7, Duration::from_millis(1)));
    mock.push_response(Scripted::Json(Bytes::from_static(b"{\"k\" : 1}")));
    let c = client();
    let url = format!("{}/v1/messages", mock.base_url());
    let body = json!({"model":"claude","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]});
    let r = post(&c, url.clone(), ANTHROPIC, &body).await;
    assert_eq!(&r.body[..], &recording[..]);
    let r = post(&c, url.clone(), ANTHROPIC, &body).await;
    assert_eq!(&r.body[..], b"{\"k\" : 1}");
    // Queue empty: back to the default reply.
    let r = post(&c, url, ANTHROPIC, &body).await;
    assert!(r.body.starts_with(b"event: message_start\n"));
}

#[tokio::test]
async fn faults() {
    let mock = MockProvider::start(no_validation()).await;
    let c = client();
    let url = format!("{}/v1/chat/completions", mock.base_url());

    mock.set_fault(Fault::Status(
        503,
        Bytes::from_static(b"{\"error\":{\"message\":\"overloaded\"}}"),
    ));
    let r = post(&c, url.clone(), OPENAI, &chat_first_turn(false)).await;
    assert_eq!(
        (r.status.as_u16(), &r.body[..]),
        (503, &b"{\"error\":{\"message\":\"overloaded\"}}"[..])
    );

    mock.set_fault(Fault::ResetMidStream(2));
    let r = post(&c, url.clone(), OPENAI, &chat_first_turn(true)).await;
    assert_eq!(r.status, 200);
    assert!(r.broken, "the body should end with an error");
    assert_eq!(
        r.body.iter().filter(|b| **b == b'\n').count(),
        4,
        "two events then reset"
    );

    mock.set_fault(Fault::MalformedSse);
    let r = post(&c, url.clone(), OPENAI, &chat_first_turn(true)).await;
    assert!(!r.broken);
    assert!(r.body.ends_with(b"data: [DONE"));

    mock.set_fault(Fault::Delay(Duration::from_millis(30)));
    let t = std::time::Instant::now();
    let r = post(&c, url.clone(), OPENAI, &chat_first_turn(false)).await;
    assert_eq!(r.status, 200);
    assert!(t.elapsed() >= Duration::from_millis(30));

    mock.set_fault(Fault::Hang);
    let hung = tokio::time::timeout(
        Duration::from_millis(50),
        post(&c, url.clone(), OPENAI, &chat_first_turn(false)),
    )
    .await;
    assert!(hung.is_err(), "a hung upstream never answers");

    mock.set_fault(Fault::StallAfter(1));
    let req = Request::post(url.clone())
        .header("authorization", "Bearer k")
        .body(Full::new(Bytes::from(
            serde_json::to_vec(&chat_first_turn(true)).unwrap(),
        )))
        .unwrap();
    let resp = c.request(req).await.unwrap();
    let mut body = resp.into_body();
    let first = body.frame().await.unwrap().unwrap();
    assert!(first.into_data().unwrap().starts_with(b"data: "));
    assert_eq!(mock.open_streams(), 1);
    let more = tokio::time::timeout(Duration::from_millis(30), body.frame()).await;
    assert!(more.is_err(), "a stalled stream sends nothing more");
    drop(body);

    mock.set_fault(Fault::None);
    let r = post(&c, url, OPENAI, &chat_first_turn(false)).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn records_requests_as_received() {
    let mock = MockProvider::start(no_validation()).await;
    let c = client();
    let raw =
        b"{ \"model\" : \"gpt-4o\",\n \"messages\": [{\"role\":\"user\",\"content\":\"x\"}] }"
            .to_vec();
    let url = format!("{}/v1/chat/completions?trace=1", mock.base_url());
    send(
        &c,
        Method::POST,
        url,
        &[("authorization", "Bearer sk-x"), ("x-custom", "v")],
        raw.clone(),
    )
    .await;
    let got = mock.take_received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body, raw);
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(got[0].query.as_deref(), Some("trace=1"));
    assert_eq!(got[0].header("x-custom"), Some("v"));
    assert!(mock.received().is_empty());
}

#[tokio::test]
async fn rejects_pairing_defects_with_the_providers_400() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let base = mock.base_url();
    // Anthropic: a tool_use with no tool_result after it.
    let a = json!({"model":"claude","max_tokens":10,"messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
        {"role":"user","content":"go on"}]});
    let r = post(&c, format!("{base}/v1/messages"), ANTHROPIC, &a).await;
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "invalid_request_error");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("toolu_1"),
        "{v}"
    );
    // Chat: an assistant tool_calls message not followed by tool messages.
    let o = json!({"model":"gpt-4o","messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"f","arguments":"{}"}}]},
        {"role":"user","content":"well?"}]});
    let r = post(&c, format!("{base}/v1/chat/completions"), OPENAI, &o).await;
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["error"]["param"], "messages");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("call_9"),
        "{v}"
    );
    // Gemini: more responses than calls.
    let g = json!({"contents":[
        {"role":"user","parts":[{"text":"hi"}]},
        {"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},
        {"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}},{"functionResponse":{"name":"f","response":{}}}]}]});
    let r = post(
        &c,
        format!("{base}/v1beta/models/g:generateContent"),
        GEMINI,
        &g,
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["status"], "INVALID_ARGUMENT");
    // Not JSON at all.
    let r = send(
        &c,
        Method::POST,
        format!("{base}/v1/responses"),
        OPENAI,
        b"{oops".to_vec(),
    )
    .await;
    assert_eq!(r.status, 400);
    // A clean multi-turn body is accepted and answered with text.
    let ok = json!({"model":"gpt-4o","messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"f","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"call_9","content":"done"}]});
    let r = post(&c, format!("{base}/v1/chat/completions"), OPENAI, &ok).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.json()["choices"][0]["finish_reason"], "stop");
}

/// A reasoning model's call comes after its reasoning item; sent back
/// without it (or with the reasoning but not its call) the API's 400.
#[tokio::test]
async fn a_reasoning_replys_items_must_come_back_together() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let url = format!("{}/v1/responses", mock.base_url());
    let first = json!({"model":"gpt-5","input":[{"role":"user","content":"weather?"}],
        "tools":[{"type":"function","name":"lookup","parameters":{"type":"object"}}]});
    let r = post(&c, url.clone(), OPENAI, &first).await;
    assert_eq!(r.status, 200);
    let output = r.json()["output"].as_array().unwrap().clone();
    assert_eq!(output[0]["type"], "reasoning");
    assert_eq!(output[1]["type"], "function_call");
    let (rs, fc) = (&output[0], &output[1]);
    let answer = json!({"type":"function_call_output","call_id":fc["call_id"],"output":"sunny"});
    let user = json!({"role":"user","content":"weather?"});
    let with = |items: Vec<&Value>| json!({"model":"gpt-5","input":items});

    let ok = post(&c, url.clone(), OPENAI, &with(vec![&user, rs, fc, &answer])).await;
    assert_eq!(ok.status, 200, "{:?}", ok.body);

    let r = post(&c, url.clone(), OPENAI, &with(vec![&user, fc, &answer])).await;
    assert_eq!(r.status, 400);
    let e = r.json();
    assert_eq!(e["error"]["param"], "input");
    assert_eq!(
        e["error"]["message"],
        format!(
            "Item '{}' of type 'function_call' was provided without its required 'reasoning' item: '{}'.",
            fc["id"].as_str().unwrap(),
            rs["id"].as_str().unwrap()
        )
    );
    let r = post(&c, url.clone(), OPENAI, &with(vec![&user, rs, &user])).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"]["message"],
        format!(
            "Item '{}' of type 'reasoning' was provided without its required following item.",
            rs["id"].as_str().unwrap()
        )
    );
    // A model that does not reason makes no reasoning item.
    let mut plain = first.clone();
    plain["model"] = json!("gpt-4.1");
    let r = post(&c, url, OPENAI, &plain).await;
    assert_eq!(r.json()["output"][0]["type"], "function_call");
}

/// Chat streams carry usage only for a request that asks for it.
#[tokio::test]
async fn chat_stream_usage_follows_stream_options() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let url = format!("{}/v1/chat/completions", mock.base_url());
    let plain = post(&c, url.clone(), OPENAI, &chat_first_turn(true)).await;
    let text = String::from_utf8(plain.body.to_vec()).unwrap();
    assert!(!text.contains("\"usage\""), "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"));
    let mut asked = chat_first_turn(true);
    asked["stream_options"] = json!({"include_usage": true});
    let r = post(&c, url, OPENAI, &asked).await;
    let text = String::from_utf8(r.body.to_vec()).unwrap();
    let chunks: Vec<Value> = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let (last, rest) = chunks.split_last().unwrap();
    assert!(
        last["usage"]["total_tokens"].as_u64().unwrap() > 0,
        "{last}"
    );
    assert!(rest.iter().all(|c| c["usage"].is_null()), "{text}");
}

#[tokio::test]
async fn each_apis_token_counting_with_its_authentication() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let base = mock.base_url();
    let messages = json!({"model": "claude", "messages": [{"role": "user", "content": "hi"}]});
    let url = format!("{base}/v1/messages/count_tokens");
    assert_eq!(post(&c, url.clone(), &[], &messages).await.status, 401);
    let r = post(&c, url, &[("x-api-key", "k")], &messages).await;
    assert_eq!(r.status, 200);
    assert!(r.json()["input_tokens"].as_u64().unwrap() >= 1);

    let url = format!("{base}/v1beta/models/gemini-2.5-flash:countTokens");
    let contents = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    assert_eq!(post(&c, url.clone(), &[], &contents).await.status, 403);
    let r = post(&c, url.clone(), &[("x-goog-api-key", "g")], &contents).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let total = r.json()["totalTokens"].as_u64().unwrap();
    assert_eq!(r.json()["promptTokensDetails"][0]["tokenCount"], total);
    let r = send(
        &c,
        Method::POST,
        url,
        &[("x-goog-api-key", "g")],
        b"{".to_vec(),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["status"], "INVALID_ARGUMENT");

    let url = format!("{base}/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens");
    let converse = json!({"input": {"converse": {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}}});
    let r = post(&c, url.clone(), &[], &converse).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.json()["message"], "Missing Authentication Token");
    let auth = "AWS4-HMAC-SHA256 Credential=AKID/20251125/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123";
    let r = post(&c, url.clone(), &[("authorization", auth)], &converse).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(r.json()["inputTokens"].as_u64().unwrap() >= 1);
    let both = json!({"input": {"converse": {"messages": []}, "invokeModel": {"body": "{}"}}});
    let r = post(&c, url, &[("authorization", auth)], &both).await;
    assert_eq!(r.status, 400);
    assert!(
        r.headers["x-amzn-errortype"]
            .to_str()
            .unwrap()
            .starts_with("ValidationException:")
    );
}

#[tokio::test]
async fn bedrock_refuses_an_unsigned_request_even_without_a_key() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let url = format!("{}/model/anthropic.claude-x-v1:0/invoke", mock.base_url());
    let body = json!({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = post(&c, url.clone(), &[], &body).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.json()["message"], "Missing Authentication Token");
    assert!(
        r.headers["x-amzn-errortype"]
            .to_str()
            .unwrap()
            .starts_with("MissingAuthenticationTokenException:")
    );
    // Without a key to check with, any SigV4 signature passes.
    let auth = "AWS4-HMAC-SHA256 Credential=AKID/20251125/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123";
    let r = post(&c, url, &[("authorization", auth)], &body).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
}

#[tokio::test]
async fn errors_carry_the_apis_headers() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let base = mock.base_url();
    let header =
        |r: &Reply, name: &str| r.headers.get(name).map(|v| v.to_str().unwrap().to_string());
    // A 429 as each API sends it.
    mock.set_fault(Fault::Status(429, Bytes::from_static(b"{}")));
    let url = format!("{base}/v1/chat/completions");
    let r = post(&c, url.clone(), OPENAI, &chat_first_turn(false)).await;
    assert_eq!(r.status, 429);
    assert_eq!(header(&r, "retry-after").as_deref(), Some("1"));
    assert_eq!(
        header(&r, "x-ratelimit-remaining-requests").as_deref(),
        Some("0")
    );
    assert!(header(&r, "x-request-id").unwrap().starts_with("req_mock"));
    let anthropic = [("x-api-key", "k"), ("anthropic-version", "2023-06-01")];
    let r = post(&c, format!("{base}/v1/messages"), &anthropic, &json!({})).await;
    assert_eq!(header(&r, "retry-after").as_deref(), Some("1"));
    assert_eq!(
        header(&r, "anthropic-ratelimit-requests-remaining").as_deref(),
        Some("0")
    );
    assert!(header(&r, "request-id").is_some());
    let r = post(&c, format!("{base}/model/m/converse"), &[], &json!({})).await;
    assert_eq!(
        header(&r, "x-amzn-errortype").as_deref(),
        Some("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
    );
    assert!(header(&r, "x-amzn-requestid").is_some());
    // Headers of the test's choosing instead.
    mock.set_fault(Fault::StatusWithHeaders(
        529,
        vec![
            ("x-should-retry".into(), "true".into()),
            ("retry-after-ms".into(), "20".into()),
        ],
        Bytes::from_static(
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
    ));
    let r = post(&c, format!("{base}/v1/messages"), &anthropic, &json!({})).await;
    assert_eq!(r.status.as_u16(), 529);
    assert_eq!(header(&r, "x-should-retry").as_deref(), Some("true"));
    assert_eq!(header(&r, "retry-after-ms").as_deref(), Some("20"));
    assert_eq!(header(&r, "retry-after"), None);
    assert_eq!(
        header(&r, "content-type").as_deref(),
        Some("application/json")
    );
    mock.set_fault(Fault::None);
    // The mock's own 400s carry the request id; Bedrock's its error type.
    let r = post(
        &c,
        url,
        OPENAI,
        &json!({"model": "gpt-4o", "messages": [
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(header(&r, "x-request-id").is_some());
    let auth = "AWS4-HMAC-SHA256 Credential=AKID/20251125/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123";
    let r = post(
        &c,
        format!("{base}/model/m/converse"),
        &[("authorization", auth)],
        &json!({"messages": [{"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]},
            {"role": "user", "content": [{"text": "hi"}]}]}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        header(&r, "x-amzn-errortype").as_deref(),
        Some("ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/")
    );
}

#[tokio::test]
async fn anthropic_requires_its_version_header_model_and_max_tokens() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let url = format!("{}/v1/messages", mock.base_url());
    let body = json!({"model": "claude-sonnet-4-20250514", "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}]});
    let error = |message: &str| json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
    let r = post(&c, url.clone(), &[("x-api-key", "k")], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json(), error("anthropic-version: header is required"));
    // Any version the client names (the SDK's own is newer than any list).
    let r = post(
        &c,
        url.clone(),
        &[("x-api-key", "k"), ("anthropic-version", "2026-10-21")],
        &body,
    )
    .await;
    assert_eq!(r.status, 200);
    let headers = [("x-api-key", "k"), ("anthropic-version", "2023-06-01")];
    for field in ["model", "max_tokens", "messages"] {
        let mut partial = body.clone();
        partial.as_object_mut().unwrap().remove(field);
        let r = post(&c, url.clone(), &headers, &partial).await;
        assert_eq!(r.status, 400);
        assert_eq!(r.json(), error(&format!("{field}: Field required")));
    }
    let r = post(&c, url, &headers, &body).await;
    assert_eq!(r.status, 200);
    // Bedrock's invoke names its version in the body, without `model`.
    let invoke = format!("{}/model/anthropic.claude-x-v1:0/invoke", mock.base_url());
    let auth = "AWS4-HMAC-SHA256 Credential=AKID/20251125/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123";
    let body = json!({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = post(&c, invoke, &[("authorization", auth)], &body).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn an_error_event_ends_a_stream_begun_with_200() {
    use toolwarden_mock_provider::StreamError;
    let mock = MockProvider::start(MockOptions::default()).await;
    let c = client();
    let base = mock.base_url();
    mock.set_fault(Fault::ErrorEventAfter(2, StreamError::Overloaded));
    let body = json!({"model": "claude-sonnet-4-20250514", "max_tokens": 100, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let r = post(&c, format!("{base}/v1/messages"), ANTHROPIC, &body).await;
    assert_eq!(r.status, 200);
    assert!(!r.broken);
    let text = String::from_utf8_lossy(&r.body);
    let events: Vec<&str> = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("event: ")?.split('\n').next())
        .collect();
    assert_eq!(events, ["message_start", "content_block_start", "error"]);
    assert!(text.contains(r#""type":"overloaded_error""#), "{text}");
    // Gemini's streamed array stays one JSON array, its last element the error.
    let url = format!("{base}/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let r = post(&c, url, GEMINI, &body).await;
    let v: Value = r.json();
    let items = v.as_array().unwrap();
    assert_eq!(items.last().unwrap()["error"]["code"], 503);
    // Not streamed: served as usual.
    let r = post(
        &c,
        format!("{base}/v1/chat/completions"),
        OPENAI,
        &chat_first_turn(false),
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r.json()["choices"].is_array());
    let r = post(
        &c,
        format!("{base}/v1/chat/completions"),
        OPENAI,
        &chat_first_turn(true),
    )
    .await;
    let text = String::from_utf8_lossy(&r.body);
    let last = text.trim_end().rsplit("\n\n").next().unwrap();
    let error: Value = serde_json::from_str(last.strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(error["error"]["type"], "server_error");
    assert!(!text.contains("[DONE]"), "{text}");
}
