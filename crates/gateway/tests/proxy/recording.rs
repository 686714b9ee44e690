//! Repairs on the way, the repair modes, and what the store records.

use super::*;

#[tokio::test]
async fn unpaired_calls_are_repaired_on_the_way() {
    let mut up = upstream(handler(|_| async {
        full(200, &[("content-type", "application/json")], b"{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}")
    }))
    .await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let broken: &'static [u8] = br#"{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"ls"}}]},{"role":"user","content":"never mind"}]}"#;
    let (response, _c) = send(
        gw.addr(),
        post(
            "/v1/messages",
            &[("x-api-key", "k"), ("content-type", "application/json")],
            broken,
        ),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-toolwarden-repaired"], "1");
    let got = up.received.recv().await.unwrap();
    assert_ne!(got.body, Bytes::from_static(broken));
    let sent: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
    let text = sent.to_string();
    assert!(
        text.contains("\"tool_result\"") && text.contains("toolu_01"),
        "{text}"
    );
    assert_eq!(got.headers["content-length"], got.body.len().to_string());
    assert_eq!(
        gw.metrics().counter(
            toolwarden_gateway::metrics::REPAIRS_TOTAL,
            &["anthropic", "missing_result"]
        ),
        1
    );

    // A clean body is forwarded as is, without the header.
    let clean: &'static [u8] =
        br#"{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}"#;
    let (response, _c) = send(gw.addr(), post("/v1/messages", &[], clean)).await;
    assert!(response.headers().get("x-toolwarden-repaired").is_none());
    assert_eq!(
        up.received.recv().await.unwrap().body,
        Bytes::from_static(clean)
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn report_mode_forwards_unchanged_and_off_skips() {
    let mut up = upstream(handler(|_| async { full(200, &[], b"{}") })).await;
    let broken: &'static [u8] = br#"{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"next"}]}"#;
    for mode in [
        toolwarden_gateway::RepairMode::Report,
        toolwarden_gateway::RepairMode::Off,
    ] {
        let gw = gateway(&format!("http://{}", up.addr), |c| c.repair = mode).await;
        let (response, _c) = send(gw.addr(), post("/v1/chat/completions", &[], broken)).await;
        assert!(response.headers().get("x-toolwarden-repaired").is_none());
        assert_eq!(
            up.received.recv().await.unwrap().body,
            Bytes::from_static(broken)
        );
        gw.shutdown().await;
    }
}

#[tokio::test]
async fn calls_results_and_requests_are_recorded_without_credentials() {
    let response_body: &'static [u8] = br#"{"id":"chatcmpl-9","object":"chat.completion","model":"gpt-test-2025","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}"#;
    let up = upstream(handler(move |_| async move {
        full(200, &[("content-type", "application/json")], response_body)
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("events.jsonl");
    let db = format!("sqlite://{}", dir.path().join("tw.db").display());
    let gw = gateway(&format!("http://{}", up.addr), |c| {
        c.jsonl = Some(JsonlLog::unbounded(&jsonl));
        c.database = Some(db.clone());
    })
    .await;
    let request: &'static [u8] = br#"{"model":"gpt-test","messages":[{"role":"user","content":"list"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"Exit code 1\nls: cannot access 'x': No such file or directory"}]}"#;
    for _ in 0..2 {
        // The same turn twice (a client retry): the result is counted once.
        let (response, _c) = send(
            gw.addr(),
            post(
                "/v1/chat/completions?key=QUERYSECRET",
                &[
                    ("authorization", "Bearer sk-SECRET"),
                    ("x-session-id", "sess-42"),
                ],
                request,
            ),
        )
        .await;
        assert_eq!(body_of(response).await, Bytes::from_static(response_body));
    }
    let req = Request::get("/api/stats?since=1h")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (response, _c) = send(gw.addr(), req).await;
    assert_eq!(response.status(), 200);
    let metrics = gw.metrics().clone();
    gw.shutdown().await;

    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(!text.contains("SECRET"), "credentials leaked: {text}");
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["type"] == kind).collect()
    };
    let requests = of("request");
    assert_eq!(requests.len(), 2, "{text}");
    let r = requests[0];
    assert_eq!(r["session_id"], "sess-42");
    assert_eq!(r["session_source"], "header");
    assert_eq!(r["provider"], "openai");
    assert_eq!(r["dialect"], "openai-chat");
    assert_eq!(r["path"], "/v1/chat/completions");
    assert_eq!(r["model"], "gpt-test");
    assert_eq!(r["status"], 200);
    assert_eq!(r["streaming"], false);
    assert_eq!(r["input_tokens"], 50);
    assert_eq!(r["output_tokens"], 10);
    assert_eq!(r["response_id"], "chatcmpl-9");
    assert_eq!(r["repair_mode"], "fix");
    assert!(r["overhead_us"].as_f64().unwrap() > 0.0);
    assert_eq!(r["request_id"].as_str().unwrap().len(), 32);

    let calls = of("tool_call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["call_id"], "call_2");
    assert_eq!(calls[0]["tool"], "read_file");
    assert_eq!(calls[0]["arguments_bytes"], 12);
    assert_eq!(calls[0]["session_id"], "sess-42");

    let results = of("tool_result");
    assert_eq!(results.len(), 1, "{text}");
    let res = results[0];
    assert_eq!(res["call_id"], "call_1");
    assert_eq!(res["tool"], "shell");
    assert_eq!(res["failed"], true);
    assert_eq!(res["basis"], "client");
    assert!(res["excerpt"].as_str().unwrap().starts_with("Exit code 1"));
    assert_eq!(res["message_index"], 2);

    assert_eq!(
        metrics.counter(
            toolwarden_gateway::metrics::TOOL_CALLS_TOTAL,
            &["openai", "gpt-test", "read_file"]
        ),
        2
    );
    assert_eq!(
        metrics.counter(
            toolwarden_gateway::metrics::TOOL_FAILURES_TOTAL,
            &["openai", "gpt-test", "shell", "client"]
        ),
        1
    );
    let db_bytes = std::fs::read(dir.path().join("tw.db")).unwrap();
    assert!(!db_bytes.windows(6).any(|w| w == b"SECRET"));
}

/// The AI SDK's Anthropic provider, given `ANTHROPIC_BASE_URL` without
/// `/v1` (as `toolwarden env` prints it for Claude Code and the Anthropic
/// SDKs), posts to `/messages`: the gateway reads it as the Messages API
/// and sends it upstream as `/v1/messages`. Without `anthropic-version` it
/// is no Anthropic request and passes through as it came.
#[tokio::test]
async fn an_unversioned_messages_path_is_the_messages_api() {
    let reply: &'static [u8] = br#"{"id":"msg_7","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_07","name":"Bash","input":{"command":"ls"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":1}}"#;
    let mut up = upstream(handler(move |_| async move {
        full(200, &[("content-type", "application/json")], reply)
    }))
    .await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let body: &'static [u8] =
        br#"{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}"#;
    let headers = [
        ("x-api-key", "k"),
        ("anthropic-version", "2023-06-01"),
        ("content-type", "application/json"),
    ];
    let (response, _c) = send(gw.addr(), post("/messages?beta=true", &headers, body)).await;
    assert_eq!(response.status(), 200);
    let got = up.received.recv().await.unwrap();
    assert_eq!(got.path_and_query, "/v1/messages?beta=true");
    assert_eq!(got.body, Bytes::from_static(body));
    let calls = || {
        gw.metrics().counter(
            toolwarden_gateway::metrics::TOOL_CALLS_TOTAL,
            &["anthropic", "claude-x", "Bash"],
        )
    };
    for _ in 0..100 {
        if calls() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(calls(), 1);

    let (response, _c) = send(
        gw.addr(),
        post("/messages", &[("content-type", "application/json")], body),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        up.received.recv().await.unwrap().path_and_query,
        "/messages"
    );
    gw.shutdown().await;
}

/// An error the provider reports inside a 200 stream (Anthropic's
/// `overloaded_error` event mid-stream) is the request's error, its
/// credentials cut; the calls before it are still recorded.
#[tokio::test]
async fn an_error_inside_a_stream_is_the_requests_error() {
    let stream: &'static [u8] = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_e\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":0}}}\n\n\
event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded; see https://status.x/?token=SECRET1\"}}\n\n";
    let up = upstream(handler(move |_| async move {
        full(200, &[("content-type", "text/event-stream")], stream)
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("events.jsonl");
    let gw = gateway(&format!("http://{}", up.addr), |c| {
        c.jsonl = Some(JsonlLog::unbounded(&jsonl));
    })
    .await;
    let body: &'static [u8] = br#"{"model":"claude-x","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let (response, _c) = send(
        gw.addr(),
        post("/v1/messages", &[("anthropic-version", "2023-06-01")], body),
    )
    .await;
    assert_eq!(body_of(response).await, Bytes::from_static(stream));
    gw.shutdown().await;
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let request: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["type"] == "request")
        .expect(&text);
    assert_eq!(request["status"], 200);
    let error = request["error"].as_str().expect(&text);
    assert!(error.contains("Overloaded"), "{error}");
    assert!(!text.contains("SECRET1"), "{text}");
}
