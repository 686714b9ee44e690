//! The alternating scenario: the client sends each turn of a conversation
//! to the next gateway in turn, so a call's response passes through one
//! gateway and its result's request through another.
//!
//! Each round the model calls `lookup` (succeeds) and `book` (fails); the
//! client "runs" the tools for [`TOOL_MS`] before sending the results.
//! Conversations: every dialect, streaming and not (full history resent
//! every turn), and two Responses conversations continued with
//! `previous_response_id` (`store: true`, only the new items sent): one
//! with `x-session-id`, one without any session header. (The latter's
//! results can be written before their calls by the other gateway; whether
//! the store still pairs them is pinned down deterministically by
//! `continuation.rs`. Its turns may split into several sessions when a
//! continuation beats the other gateway's flush.)

use std::time::Duration;

use serde_json::{Value, json};

use crate::convo::{Call, Convo, Kind, reply_calls, response_id};
use crate::support::post;

use super::cluster::Cluster;

/// Rounds per conversation.
pub const ROUNDS: u64 = 3;
/// How long the client's tools "run" (the execution-time estimates must see it).
pub const TOOL_MS: u64 = 30;

/// What the whole scenario must give.
pub struct Expected {
    /// Sessions named by `x-session-id`, with the failure basis of their dialect.
    pub sessions: Vec<(String, &'static str)>,
    pub conversations: u64,
    pub requests: u64,
    pub streaming: u64,
}

/// The failed result's text: flagged where the dialect has a flag, else
/// only the content detector can see it.
pub fn failure_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Anthropic => "Exit code 1\nbook: seat 12A is no longer available",
        Kind::Chat | Kind::Responses => "Error: seat 12A is no longer available for flight TP123",
        Kind::Gemini => "seat 12A is no longer available",
    }
}

pub const OK_TEXT: &str = "Flight TP123 found: departs 09:05, 189 EUR, seats available";

fn outcomes(kind: Kind) -> [(bool, &'static str); 2] {
    [(false, OK_TEXT), (true, failure_text(kind))]
}

/// Run every conversation through `cluster`, alternating gateways.
pub async fn run(cluster: &Cluster, tag: &str) -> Expected {
    let mut sessions = Vec::new();
    let mut requests = 0;
    let mut streaming = 0;
    for kind in Kind::ALL {
        for stream in [false, true] {
            let session = format!("pg-{tag}-{}-{stream}", kind.dialect());
            // Streaming conversations start on the second gateway, so calls
            // cross from A to B in one and from B to A in the other.
            full_history(cluster, kind, stream, &session, usize::from(stream)).await;
            sessions.push((session, kind.failure_basis()));
            requests += 2 * ROUNDS;
            streaming += if stream { 2 * ROUNDS } else { 0 };
        }
    }
    let session = format!("pg-{tag}-responses-prev");
    continued(cluster, false, Some(&session), 0).await;
    sessions.push((session, "heuristic"));
    continued(cluster, true, None, 1).await;
    requests += 4 * ROUNDS;
    streaming += 2 * ROUNDS;
    Expected {
        sessions,
        conversations: 10,
        requests,
        streaming,
    }
}

async fn tool_time() {
    tokio::time::sleep(Duration::from_millis(TOOL_MS)).await;
}

/// A conversation resending its whole history every turn; request `k`
/// goes to gateway `start + k`.
async fn full_history(cluster: &Cluster, kind: Kind, stream: bool, session: &str, start: usize) {
    let mut convo = Convo::new(kind, stream, Some(session));
    let what = format!("{kind:?} stream={stream}");
    let mut k = start;
    for round in 0..ROUNDS {
        if round > 0 {
            convo.user("And another one for next week, please.");
        }
        let r = convo.send(&cluster.client, &cluster.gw(k)).await;
        k += 1;
        assert_eq!(r.status, 200, "{what} calls: {}", r.text());
        let calls = convo.calls(&r);
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lookup", "book"], "{what}: {}", r.text());
        tool_time().await;
        convo.assistant_calls(&calls);
        convo.results(&calls, &outcomes(kind));
        let r = convo.send(&cluster.client, &cluster.gw(k)).await;
        k += 1;
        assert_eq!(r.status, 200, "{what} results: {}", r.text());
        assert!(convo.calls(&r).is_empty(), "{what}: {}", r.text());
        convo.assistant_text("Done.");
    }
}

/// A Responses conversation whose history lives at the provider: each turn
/// sends only its new items with `previous_response_id`, so the gateway
/// that sees a result has never seen its call, and the request carries
/// neither the call nor the tool name.
async fn continued(cluster: &Cluster, stream: bool, session: Option<&str>, start: usize) {
    let params = json!({"type":"object","properties":{"query":{"type":"string"}}});
    let tools = json!([
        {"type": "function", "name": "lookup", "parameters": params},
        {"type": "function", "name": "book", "parameters": params}]);
    let mut headers = Kind::Responses.auth();
    headers.push(("content-type", "application/json".to_string()));
    if let Some(s) = session {
        headers.push(("x-session-id", s.to_string()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = |k: usize| format!("{}/v1/responses", cluster.gw(k));
    let what = format!("Responses previous_response_id stream={stream} session={session:?}");
    let mut previous: Option<String> = None;
    let mut k = start;
    for round in 0..ROUNDS {
        let text = if round == 0 {
            "Find me a flight to Lisbon and book it."
        } else {
            "And another one for next week, please."
        };
        let mut body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "input": [{"role": "user", "content": text}]});
        if round == 0 {
            body["instructions"] = json!("You are a travel agent. Use the tools.");
        }
        if let Some(p) = &previous {
            body["previous_response_id"] = json!(p);
        }
        if stream {
            body["stream"] = json!(true);
        }
        let r = post(&cluster.client, url(k), &headers, &body).await;
        k += 1;
        assert_eq!(r.status, 200, "{what} calls: {}", r.text());
        let calls: Vec<Call> = reply_calls(Kind::Responses, stream, &r.body);
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lookup", "book"], "{what}: {}", r.text());
        let prev = response_id(stream, &r);
        tool_time().await;
        let items: Vec<Value> = calls
            .iter()
            .zip(outcomes(Kind::Responses))
            .map(|(c, (_, out))| {
                json!({"type": "function_call_output", "call_id": c.id, "output": out})
            })
            .collect();
        let mut body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "previous_response_id": prev, "input": items});
        if stream {
            body["stream"] = json!(true);
        }
        let r = post(&cluster.client, url(k), &headers, &body).await;
        k += 1;
        assert_eq!(r.status, 200, "{what} results: {}", r.text());
        assert!(
            reply_calls(Kind::Responses, stream, &r.body).is_empty(),
            "{what}: {}",
            r.text()
        );
        previous = Some(response_id(stream, &r));
    }
}
