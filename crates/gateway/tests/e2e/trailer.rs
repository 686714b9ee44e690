//! A client that hangs up between a stream's final event and its trailer —
//! the usage, which Chat sends in a chunk of its own after the last
//! `finish_reason` when the request set `stream_options.include_usage`,
//! and Bedrock ConverseStream in its `metadata` event after `messageStop`
//! — does not take the usage with it: the gateway reads the upstream on
//! (bounded) and the request is recorded complete with its usage, on both
//! HTTP paths (the fast path takes `content-length` bodies, a chunked
//! request body and every Bedrock route go through hyper).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use toolwarden_mock_provider::MockOptions;

use super::{
    cloud::{self, client_signed},
    convo::OPENAI_KEY,
    early_close::{post, requests},
    support::Harness,
};

/// The mock's pause before each chunk (event, frame) after the first: the
/// client leaves within it.
const PAUSE: Duration = Duration::from_millis(400);

/// Sends `body` to `path` over a fresh connection (`chunked`: in a chunked
/// body, which hyper's path serves) and hangs up once `until` has arrived
/// and nothing more for 100 ms; what the client got.
async fn send_and_hang_up(
    addr: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    chunked: bool,
    until: &str,
) -> String {
    let head: String = (headers.iter())
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let mut s = post(addr, path, &head, body, chunked).await;
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let read_until = async {
        loop {
            let n = s.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if memchr::memmem::find(&seen, until.as_bytes()).is_some() {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read_until)
        .await
        .expect("the final event arrives");
    // The rest of the final event (a frame split across reads), well
    // before the next one.
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    // Dropping the socket closes it: the client is gone.
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test]
async fn a_chat_client_gone_before_the_usage_chunk_leaves_the_usage_recorded() {
    let mut h = Harness::with(
        MockOptions {
            chunk_delay: PAUSE,
            ..MockOptions::default()
        },
        |_| {},
    )
    .await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    let body = serde_json::to_vec(&json!({
        "model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "Read the file."}],
        "tools": [{"type": "function", "function": {"name": "read_file",
            "parameters": {"type": "object", "properties": {}}}}],
    }))
    .unwrap();
    let auth = format!("Bearer {OPENAI_KEY}");
    for (chunked, session) in [(false, "chat-fast"), (true, "chat-hyper")] {
        let headers = [
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
            ("x-session-id", session),
        ];
        let seen = send_and_hang_up(
            &addr,
            "/v1/chat/completions",
            &headers,
            &body,
            chunked,
            "\"finish_reason\":\"tool_calls\"",
        )
        .await;
        assert!(seen.starts_with("HTTP/1.1 200"), "{session}: {seen}");
        assert!(
            !seen.contains("\"usage\":{"),
            "{session}: the client left before the usage chunk: {seen}"
        );
    }
    // The usage chunks come after the clients left.
    tokio::time::sleep(PAUSE * 3).await;
    let stats = h.finish().await;
    let recs = requests(&h);
    assert_eq!(recs.len(), 2, "{recs:#?}");
    for r in &recs {
        assert_eq!(r["error"], Value::Null, "{r}");
        assert_eq!(r["input_tokens"], (body.len() / 4) as u64, "{r}");
        assert_eq!(r["output_tokens"], 20, "{r}");
    }
    assert_eq!(stats.requests.errors, 0);
    let calls: Vec<(&str, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls))
        .collect();
    assert_eq!(calls, [("read_file", 2)]);
}

#[tokio::test]
async fn a_bedrock_client_gone_before_the_metadata_event_leaves_the_usage_recorded() {
    let mut h = Harness::with(
        MockOptions {
            chunk_delay: PAUSE,
            ..cloud::aws_mock()
        },
        |c| {
            c.cloud.bedrock = Some(
                toolwarden_gateway::Upstream::parse(&format!("{}/", c.upstreams.anthropic))
                    .unwrap(),
            );
            c.cloud.bedrock_region = Some("us-east-1".into());
            c.cloud.aws_credentials = Some(toolwarden_gateway::cloud::aws::AwsCredentials::new(
                cloud::KEY_ID,
                cloud::SECRET,
                Some(cloud::SESSION_TOKEN.into()),
                "test",
            ));
        },
    )
    .await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    let body = serde_json::to_vec(&json!({
        "messages": [{"role": "user", "content": [{"text": "Book a flight"}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "lookup",
            "inputSchema": {"json": {"type": "object"}}}}]},
    }))
    .unwrap();
    let mut headers = client_signed();
    headers.push(("x-session-id", "converse"));
    let seen = send_and_hang_up(
        &addr,
        "/bedrock/model/amazon.nova-pro-v1%3A0/converse-stream",
        &headers,
        &body,
        false,
        "stopReason",
    )
    .await;
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(
        !seen.contains("inputTokens"),
        "the client left before the metadata event: {seen}"
    );
    tokio::time::sleep(PAUSE * 3).await;
    let stats = h.finish().await;
    let recs = requests(&h);
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(recs[0]["error"], Value::Null, "{}", recs[0]);
    assert_eq!(
        recs[0]["input_tokens"],
        (body.len() / 4) as u64,
        "{}",
        recs[0]
    );
    assert_eq!(recs[0]["output_tokens"], 40, "{}", recs[0]);
    assert_eq!(stats.requests.errors, 0);
}
