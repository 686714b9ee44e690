//! A Responses request continuing a `previous_response_id` holds its
//! results, not the calls they answer: the gateway keeps, with each call
//! it passed, whether the call's command only prints files, and judges
//! the result of `tail -1 build.log` (an earlier build's `make: ***` line)
//! as the log's text, as it does when the call is in the body; the same
//! line answering `make` is make's failure. It keeps a Go tool's too: `go
//! build`'s `go: updates to go.mod needed; …` (no header, no closing
//! line) is its failure.

use std::sync::Arc;

use serde_json::{Value, json};
use toolwarden_mock_provider::{AgentMode, MockOptions};

use super::{
    convo::{Kind, reply_calls, response_id},
    support::{Harness, post},
};

/// The log's last line, and make's own closing line.
const MAKE_FAILED: &str = "make: *** [Makefile:3: all] Error 1\n";

/// `go build ./...` (go 1.19, status 1) when go.mod lacks a requirement.
const GO_MOD_NEEDED: &str = "go: updates to go.mod needed; to update it:\n\tgo mod tidy\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_readers_output_is_the_files_text() {
    let dir = tempfile::tempdir().unwrap();
    let scripts = dir.path().join("scripts.json");
    let step = |command: &str| json!({"tool": "shell", "args": {"command": command}});
    std::fs::write(
        &scripts,
        json!({"scripts": {
            "reader": {"steps": [step("tail -1 build.log")], "final_text": "done"},
            "build": {"steps": [step("make")], "final_text": "done"},
            "go": {"steps": [step("cd app && go build ./...")], "final_text": "done"},
        }})
        .to_string(),
    )
    .unwrap();
    let agent = AgentMode::open(&scripts, &dir.path().join("agent.jsonl")).unwrap();
    let opts = MockOptions {
        agent: Some(Arc::new(agent)),
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let mut headers = Kind::Responses.auth();
    headers.push(("content-type", "application/json".to_string()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let tools = json!([{"type": "function", "name": "shell", "parameters": {"type": "object"}}]);
    let url = format!("{}/v1/responses", h.gw());

    let mut answered = Vec::new();
    for (script, output) in [
        ("reader", MAKE_FAILED),
        ("build", MAKE_FAILED),
        ("go", GO_MOD_NEEDED),
    ] {
        // The turn that makes the call, then its answer alone.
        let body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "input": [{"role": "user", "content": format!("[[e2e:{script}]] Build it.")}]});
        let r = post(&h.client, url.clone(), &headers, &body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = reply_calls(Kind::Responses, false, &r.body);
        let [call] = &calls[..] else {
            panic!("one call: {}", r.text())
        };
        let id = call.id.clone().expect("a call id");
        let body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "previous_response_id": response_id(false, &r),
            "input": [{"type": "function_call_output", "call_id": id, "output": output}]});
        let r = post(&h.client, url.clone(), &headers, &body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        answered.push((script, id));
    }
    h.finish().await;

    let events = h.events();
    let verdict = |id: &str| -> (Value, Value) {
        let results: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "tool_result" && e["call_id"] == id)
            .collect();
        let [r] = &results[..] else {
            panic!("one result for {id}: {events:?}")
        };
        (r["failed"].clone(), r["tool"].clone())
    };
    // `tail -1 build.log` printed the log: not a failure of its own.
    assert_eq!(
        verdict(&answered[0].1),
        (json!(false), json!("shell")),
        "{events:?}"
    );
    // `make` printed its failure.
    assert_eq!(
        verdict(&answered[1].1),
        (json!(true), json!("shell")),
        "{events:?}"
    );
    // `go build` printed its failure, read with its program.
    assert_eq!(
        verdict(&answered[2].1),
        (json!(true), json!("shell")),
        "{events:?}"
    );
}
