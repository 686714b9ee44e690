//! Sessions of the Gemini CLI, which sends no session id of its own: two
//! runs with the same first prompt share a first-turn fingerprint, so each
//! run names itself with `x-session-id` through `GEMINI_CLI_CUSTOM_HEADERS`
//! — sent on all its requests, side requests (the router's classifier)
//! included. Each run is then one session with its side requests, and
//! without the header the two runs are one fingerprint session.

use std::collections::BTreeMap;

use serde_json::json;

use super::{
    convo::Kind,
    support::{Harness, post},
};

/// One run: the router's classifier (its own prompt, a JSON schema), then
/// the main request, both with `session` as `x-session-id` when given.
async fn run(h: &Harness, session: Option<&str>) {
    let mut headers: Vec<(&str, String)> = Kind::Gemini.auth();
    if let Some(s) = session {
        headers.push(("x-session-id", s.to_string()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let classifier = json!({
        "systemInstruction": {"parts": [{"text": "You are a router. Choose a model."}]},
        "contents": [{"role": "user", "parts": [{"text": "List the files here."}]}],
        "generationConfig": {"responseMimeType": "application/json",
            "responseSchema": {"type": "OBJECT", "properties": {"model_choice": {"type": "STRING"}}}}
    });
    let main = json!({
        "systemInstruction": {"parts": [{"text": "You are an interactive CLI agent."}]},
        "contents": [{"role": "user", "parts": [{"text": "List the files here."}]}]
    });
    for body in [classifier, main] {
        let url = format!("{}{}", h.gw(), Kind::Gemini.path(false));
        let r = post(&h.client, url, &headers, &body).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
}

#[tokio::test]
async fn gemini_cli_runs_named_by_a_custom_header_are_one_session_each() {
    let mut h = Harness::start().await;
    run(&h, Some("gemini-run-1")).await;
    run(&h, Some("gemini-run-2")).await;
    h.finish().await;
    let one_each = [
        ("gemini-run-1".to_string(), 2),
        ("gemini-run-2".to_string(), 2),
    ];
    assert_eq!(requests_per_session(&h), one_each.into());

    // Without it: the two main requests share one fingerprint session, the
    // classifier requests another.
    let mut h = Harness::start().await;
    run(&h, None).await;
    run(&h, None).await;
    h.finish().await;
    let per_session = requests_per_session(&h);
    assert_eq!(per_session.len(), 2, "{per_session:?}");
    assert!(per_session.values().all(|&n| n == 2), "{per_session:?}");
}

/// Requests recorded per session, from the JSONL log.
fn requests_per_session(h: &Harness) -> BTreeMap<String, usize> {
    let mut per_session = BTreeMap::new();
    for e in h.events().iter().filter(|e| e["type"] == "request") {
        let session = e["session_id"].as_str().unwrap_or_default().to_string();
        *per_session.entry(session).or_default() += 1;
    }
    per_session
}
