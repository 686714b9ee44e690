//! Bedrock Converse rules that depend on the model the path names: Claude
//! refuses a prefill ending in whitespace (passed on by Bedrock, "The
//! model returned the following errors: messages: final assistant content
//! cannot end with trailing whitespace", aws/aws-sdk-net#4015), other
//! models take it; and Bedrock refuses a `toolUse.input` of `null` ("The
//! value at messages.N.content.J.toolUse.input is empty.",
//! aaif-goose/goose#8050) whatever the model. `report` forwards the body
//! as it came and the client gets Bedrock's 400; `fix` changes only what
//! the rule needs, and Bedrock takes it.

use serde_json::{Value, json};
use toolwarden_gateway::RepairMode;

use super::{
    cloud::client_signed,
    repair::bedrock_in,
    support::{Harness, Reply, post},
};

/// A cross-region inference profile of a Claude model, `:` escaped as
/// boto3 writes it.
const CLAUDE: &str = "/bedrock/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse";
const NOVA: &str = "/bedrock/model/amazon.nova-pro-v1%3A0/converse";

/// A conversation asking for JSON, ending in a prefill that ends in
/// whitespace, as a client that starts the model's answer sends it.
fn prefill_ending_in_whitespace() -> Value {
    json!({
        "messages": [
            {"role": "user", "content": [{"text": "Give the flight as JSON"}]},
            {"role": "assistant", "content": [{"text": "{\n  \"flight\": "}]},
        ],
        "inferenceConfig": {"maxTokens": 50},
    })
}

async fn send(h: &Harness, path: &str, body: &Value) -> Reply {
    post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        body,
    )
    .await
}

/// The defects the gateway counted, by name.
async fn counted(mut h: Harness) -> Vec<(String, u64)> {
    let stats = h.finish().await;
    stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str().to_string(), r.count))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_prefill_ending_in_whitespace_is_trimmed_and_accepted() {
    let body = prefill_ending_in_whitespace();
    let refusal = "The model returned the following errors: messages: final assistant content cannot end with trailing whitespace";

    let h = bedrock_in(RepairMode::Report).await;
    let r = send(&h, CLAUDE, &body).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["message"], refusal);
    assert!(r.header("x-toolwarden-repaired").is_none());
    assert_eq!(counted(h).await, [("trailing_whitespace".to_string(), 1)]);

    let h = bedrock_in(RepairMode::Fix).await;
    let r = send(&h, CLAUDE, &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
    let got = h.mock.take_received();
    // The body sent, byte for byte, but for the prefill's end.
    let sent = serde_json::to_string(&body).unwrap();
    let want = sent.replace(
        r#""text":"{\n  \"flight\": ""#,
        r#""text":"{\n  \"flight\":""#,
    );
    assert_ne!(want, sent);
    assert_eq!(String::from_utf8_lossy(&got[got.len() - 1].body), want);
    assert_eq!(counted(h).await, [("trailing_whitespace".to_string(), 1)]);

    // Another model takes it: it goes as it came, and is no defect.
    let h = bedrock_in(RepairMode::Fix).await;
    let r = send(&h, NOVA, &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.header("x-toolwarden-repaired").is_none());
    let got = h.mock.take_received();
    assert_eq!(String::from_utf8_lossy(&got[got.len() - 1].body), sent);
    assert_eq!(counted(h).await, []);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_tool_use_input_is_made_an_empty_object_and_accepted() {
    let body = json!({
        "messages": [
            {"role": "user", "content": [{"text": "What time is it?"}]},
            {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_1", "name": "now", "input": null}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "12:00"}]}}]},
        ],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "now", "inputSchema": {"json": {"type": "object"}}}}]},
    });

    let h = bedrock_in(RepairMode::Report).await;
    let r = send(&h, NOVA, &body).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "The value at messages.1.content.0.toolUse.input is empty."
    );
    assert_eq!(counted(h).await, [("non_object_json".to_string(), 1)]);

    for path in [NOVA, CLAUDE] {
        let h = bedrock_in(RepairMode::Fix).await;
        let r = send(&h, path, &body).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
        let got = h.mock.take_received();
        let sent = serde_json::to_string(&body).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got[got.len() - 1].body),
            sent.replace(r#""input":null"#, r#""input":{}"#)
        );
        assert_eq!(counted(h).await, [("non_object_json".to_string(), 1)]);
    }
}
