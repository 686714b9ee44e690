//! Anthropic message threads (`thread`, the `message-threads-2026-08-12`
//! beta, which `@anthropic-ai/sdk`'s tool runner uses by default): the API
//! holds the conversation, so each `continue` sends only its new messages,
//! its tool results answering calls of a reply the body does not hold.
//! In `fix` mode the gateway forwards them as they came (the mock, holding
//! the thread, refuses a held call left unanswered), the requests join the
//! session of the reply they continue, and each call and result counts
//! once.

use toolwarden_mock_provider::MockOptions;

use serde_json::{Value, json};

use super::{
    convo::{Kind, message_id, reply_calls},
    support::{Harness, post},
};

const ROUNDS: u64 = 3;

/// The mock answering with two calls, the gateway in front of it.
async fn harness() -> Harness {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    Harness::with(opts, |_| {}).await
}

fn headers() -> Vec<(&'static str, String)> {
    let mut headers = Kind::Anthropic.auth();
    headers.push(("content-type", "application/json".to_string()));
    headers.push(("anthropic-beta", "message-threads-2026-08-12".to_string()));
    headers
}

/// One request of the thread: `create` with the system prompt and tools,
/// or a `continue` of `previous` with its new messages alone.
fn turn(stream: bool, previous: Option<&str>, messages: Value) -> Value {
    let mut body = json!({"model": "claude-sonnet-4-5", "max_tokens": 512, "stream": stream,
        "messages": messages});
    match previous {
        None => {
            body["thread"] = json!({"type": "create"});
            body["system"] = json!("You book trips.");
            body["tools"] = json!([
                {"name": "lookup", "input_schema": {"type": "object"}},
                {"name": "book", "input_schema": {"type": "object"}}]);
        }
        Some(id) => body["thread"] = json!({"type": "continue", "previous_message_id": id}),
    }
    body
}

/// A user turn continuing `previous` (none: the thread's `create`): its
/// reply's two calls and id.
async fn ask(
    h: &Harness,
    stream: bool,
    previous: Option<&str>,
    n: u64,
    headers: &[(&str, &str)],
) -> (Vec<super::convo::Call>, String) {
    let url = format!("{}/v1/messages", h.gw());
    let user = json!([{"role": "user", "content": format!("Trip {n}, please.")}]);
    let r = post(&h.client, url, headers, &turn(stream, previous, user)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = reply_calls(Kind::Anthropic, stream, &r.body);
    assert_eq!(calls.len(), 2, "{}", r.text());
    (calls, message_id(stream, &r.body))
}

/// The answers to `calls` (one fails), continuing the reply `id` that made
/// them: the id of the reply to them.
async fn answer(
    h: &Harness,
    stream: bool,
    calls: &[super::convo::Call],
    id: &str,
    headers: &[(&str, &str)],
) -> String {
    let results: Vec<Value> = calls
        .iter()
        .zip([(false, "Found it."), (true, "seat 12A is no longer available")])
        .map(|(c, (failed, text))| {
            json!({"type": "tool_result", "tool_use_id": c.id, "is_error": failed, "content": text})
        })
        .collect();
    let answers = json!([{"role": "user", "content": results}]);
    let url = format!("{}/v1/messages", h.gw());
    let r = post(&h.client, url, headers, &turn(stream, Some(id), answers)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    message_id(stream, &r.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threads_continues_join_one_session_forwarded_as_they_came() {
    for stream in [false, true] {
        let mut h = harness().await;
        let headers = headers();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut previous: Option<String> = None;
        for n in 0..ROUNDS {
            let (calls, id) = ask(&h, stream, previous.as_deref(), n, &headers).await;
            previous = Some(answer(&h, stream, &calls, &id, &headers).await);
        }
        let stats = h.finish().await;
        let what = format!("stream={stream}");
        assert_eq!(stats.sessions.len(), 1, "{what}: {:?}", stats.sessions);
        let s = &stats.sessions[0];
        assert_eq!((s.calls, s.failures), (2 * ROUNDS, ROUNDS), "{what}");
        assert_eq!(stats.requests.total, 2 * ROUNDS, "{what}");
        assert_eq!(stats.repairs.len(), 0, "{what}: {:?}", stats.repairs);
    }
}

/// A `continue` answering calls of a reply this gateway did not see (the
/// same database after a restart) finds that reply's session in the store,
/// through the calls it made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_after_a_restart_finds_its_session_in_the_store() {
    let mut h = harness().await;
    let headers = headers();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (calls, id) = ask(&h, false, None, 0, &headers).await;
    h.restart().await;
    let last = answer(&h, false, &calls, &id, &headers).await;
    let (calls, id) = ask(&h, false, Some(&last), 1, &headers).await;
    answer(&h, false, &calls, &id, &headers).await;
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let s = &stats.sessions[0];
    assert_eq!((s.calls, s.failures), (4, 2));
    assert_eq!(stats.requests.total, 4);
}
