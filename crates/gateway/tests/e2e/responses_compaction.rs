//! The Responses API's compaction endpoint in the middle of a turn, as the
//! Codex CLI uses it when the context fills after the model called tools:
//! the history with the calls' outputs goes to `POST …/responses/compact`
//! (`/v1/responses/compact`; signed in with ChatGPT,
//! `/backend-api/codex/responses/compact`), and the turn goes on with the
//! compacted history (the user messages and one `compaction` item), which
//! holds no outputs. The compaction request is the only one carrying the
//! outputs: they count there, once, with their failures, and the calls
//! are answered.

use serde_json::{Value, json};
use toolwarden_mock_provider::MockOptions;

use super::{
    convo::{Convo, Kind},
    support::{Harness, Reply, post},
};

/// Codex's turn: the model calls a tool, the client runs it, compacts
/// the history with its output, and samples again from the compacted
/// history; then a resend of the compaction adds nothing.
async fn a_turn_compacted_after_its_calls(path: &str, compact_path: &str) {
    let mut h = Harness::with(MockOptions::default(), |_| {}).await;
    let mut convo = Convo::new(Kind::Responses, false, Some("codex-compacting-1"));
    let r = send(&h, &convo, path, &convo.body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = convo.calls(&r);
    assert_eq!(calls.len(), 1, "{}", r.text());
    convo.assistant_calls(&calls);
    convo.results(
        &calls,
        &[(
            true,
            "Error: seat 12A is no longer available for flight TP123",
        )],
    );
    let compact = json!({
        "model": convo.body["model"],
        "instructions": convo.body["instructions"],
        "input": convo.body["input"],
    });
    for _ in 0..2 {
        let r = send(&h, &convo, compact_path, &compact).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["object"], "response.compaction", "{}", r.text());
        // The turn goes on from the compacted history.
        convo.body["input"] = Value::Array(r.json()["output"].as_array().cloned().unwrap());
    }
    let r = send(&h, &convo, path, &convo.body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    h.assert_metric("toolwarden_tool_results_total", &[], 1.0)
        .await;
    h.assert_metric("toolwarden_tool_failures_total", &[], 1.0)
        .await;
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    assert_eq!(
        stats.sessions[0].session_id, "codex-compacting-1",
        "{:?}",
        stats.sessions
    );
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let rows = store.session_calls("codex-compacting-1").await.unwrap();
    // The compacted call answered, the call after the compaction open.
    let answered: Vec<Option<bool>> = rows.iter().map(|r| r.failed).collect();
    assert_eq!(answered, [Some(true), None], "{rows:#?}");
    store.close().await;
}

/// `body` posted to `path` of the gateway with the conversation's headers.
async fn send(h: &Harness, convo: &Convo, path: &str, body: &Value) -> Reply {
    let headers = convo.headers();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    post(&h.client, format!("{}{path}", h.gw()), &headers, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_sent_only_to_the_compaction_endpoint_count_once() {
    a_turn_compacted_after_its_calls("/v1/responses", "/v1/responses/compact").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_compacted_at_the_chatgpt_backend_count_once() {
    a_turn_compacted_after_its_calls(
        "/backend-api/codex/responses",
        "/backend-api/codex/responses/compact",
    )
    .await;
}
