//! The Gemini CLI compressing its history, with no session header: its
//! chat compression (0.61.0 `chatCompressionService`) replaces the older
//! part of the history with one user turn holding a `<state_snapshot>` and a
//! model acknowledgement, and keeps the recent part verbatim — from the
//! last user prompt on, the model turn whose calls it is about to answer
//! included. The first turn changes, so the request that carries those
//! answers opens a new fingerprint session, while the calls were recorded
//! in the old one under Gemini's id-less `name#n` and the answers carry ids
//! the CLI invented (`read_file_1795610246552_0`). Each call still counts
//! once, with its result, and no call is left open.

use serde_json::{Value, json};
use toolwarden_mock_provider::Scripted;

use super::{
    convo::Kind,
    support::{Harness, calls_and_failures, post},
};

/// The calls of every round: (tool, result fails). Arguments name the
/// round, so each round's model turn has a fingerprint of its own.
const CALLS: [(&str, bool); 3] = [
    ("read_file", true),
    ("read_file", false),
    ("run_shell_command", true),
];

fn args(round: usize, k: usize) -> Value {
    match k {
        0 => json!({"file_path": format!("/w/missing{round}.txt")}),
        1 => json!({"file_path": format!("/w/notes{round}.txt")}),
        _ => json!({"command": format!("false {round}")}),
    }
}

/// The CLI's id for call `k` of `round` (`${name}_${Date.now()}_${index}`).
fn cli_id(round: usize, k: usize) -> String {
    format!("{}_179561024655{round}_{k}", CALLS[k].0)
}

/// The model's streamed reply with the round's calls (no ids: Gemini's).
fn calls_reply(round: usize) -> Scripted {
    let parts: Vec<Value> = (0..CALLS.len())
        .map(|k| json!({"functionCall": {"name": CALLS[k].0, "args": args(round, k)}}))
        .collect();
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 900_000, "candidatesTokenCount": 9},
        "modelVersion": "gemini-2.5-pro"});
    Scripted::Sse(
        vec![bytes::Bytes::from(format!("data: {chunk}\r\n\r\n"))],
        std::time::Duration::ZERO,
    )
}

fn text_reply(text: &str) -> Scripted {
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2}});
    Scripted::Json(bytes::Bytes::from(body.to_string()))
}

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

/// The model turn as the CLI replays it (its ids written in), and its
/// answers, as the CLI sends them (`output`, or `error` when a tool failed).
fn model_turn(round: usize) -> Value {
    let parts: Vec<Value> = (0..CALLS.len())
        .map(|k| {
            json!({"functionCall": {"id": cli_id(round, k), "name": CALLS[k].0,
            "args": args(round, k)}})
        })
        .collect();
    json!({"role": "model", "parts": parts})
}

fn answers(round: usize) -> Value {
    let parts: Vec<Value> = (0..CALLS.len())
        .map(|k| {
            let response = if CALLS[k].1 {
                json!({"error": format!("{} failed (exit code 1)", CALLS[k].0)})
            } else {
                json!({"output": "line one"})
            };
            json!({"functionResponse": {"id": cli_id(round, k), "name": CALLS[k].0,
                "response": response}})
        })
        .collect();
    json!({"role": "user", "parts": parts})
}

fn body(contents: &[Value]) -> Value {
    json!({"contents": contents,
        "tools": [{"functionDeclarations": [{"name": "read_file"}, {"name": "run_shell_command"}]}],
        "systemInstruction": {"parts": [{"text": "You are an interactive CLI agent."}]}})
}

/// The summarizer's request (and its verification): the part of the
/// history it compresses, then its own instruction, no tools.
fn summarizer(compressed: &[Value], instruction: &str) -> Value {
    let mut contents = compressed.to_vec();
    contents.push(user(instruction));
    json!({"contents": contents,
        "systemInstruction": {"parts": [{"text": "You are the component that summarizes."}]}})
}

#[tokio::test]
async fn gemini_cli_compression_keeps_each_call_counted_once_with_its_result() {
    let mut h = Harness::start().await;
    let auth = Kind::Gemini.auth();
    let headers: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let stream = format!("{}{}", h.gw(), Kind::Gemini.path(true));
    let plain = format!("{}{}", h.gw(), Kind::Gemini.path(false));
    let headers = &headers;
    let send = |url: &String, contents: Value| {
        let (client, url) = (h.client.clone(), url.clone());
        async move {
            let r = post(&client, url, headers, &contents).await;
            assert_eq!(r.status, 200, "{}", r.text());
        }
    };

    // Round 0, answered; the prompt's turn ends with text.
    let mut history = vec![user("Check the workspace.")];
    h.mock.push_response(calls_reply(0));
    send(&stream, body(&history)).await;
    history.extend([model_turn(0), answers(0)]);
    h.mock.push_response(text_reply("Checked."));
    send(&stream, body(&history)).await;
    history.push(json!({"role": "model", "parts": [{"text": "Checked."}]}));

    // A second prompt, whose calls (round 1) the CLI runs; the response
    // reported a prompt near the model's limit, so before sending the
    // answers it compresses: summary and verification requests first.
    let prompt = user("Now check it again.");
    history.push(prompt.clone());
    h.mock.push_response(calls_reply(1));
    send(&stream, body(&history)).await;
    let compressed = history[..history.len() - 1].to_vec();
    for instruction in [
        "Generate a new <state_snapshot> based on the provided history.",
        "Critically evaluate the <state_snapshot> you just generated.",
    ] {
        h.mock
            .push_response(text_reply("<state_snapshot>checked</state_snapshot>"));
        send(&plain, summarizer(&compressed, instruction)).await;
    }

    // The compressed history: snapshot, acknowledgement, the kept part
    // (the second prompt and round 1's model turn), then the answers.
    let mut after = vec![
        user("<state_snapshot>checked</state_snapshot>"),
        json!({"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]}),
        prompt,
        model_turn(1),
        answers(1),
    ];
    h.mock.push_response(calls_reply(2));
    send(&stream, body(&after)).await;
    // Round 2, in the new session.
    after.extend([model_turn(2), answers(2)]);
    h.mock.push_response(text_reply("Done."));
    send(&stream, body(&after)).await;

    let stats = h.finish().await;
    let rounds = 3_u64;
    let all = CALLS.len() * 3;
    let tool = |name: &str| calls_and_failures(&stats, name, "compressed");
    assert_eq!(tool("read_file"), (2 * rounds, rounds), "{:?}", stats.tools);
    assert_eq!(
        tool("run_shell_command"),
        (rounds, rounds),
        "{:?}",
        stats.tools
    );
    assert_eq!(stats.tools.len(), 2, "{:?}", stats.tools);
    assert_eq!(stats.requests.total, 7);
    // Two fingerprint sessions: before and after the compression.
    assert_eq!(stats.sessions.len(), 2, "{:?}", stats.sessions);
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let mut every = Vec::new();
    for s in &stats.sessions {
        every.extend(store.session_calls(&s.session_id).await.unwrap());
    }
    assert_eq!(every.len(), all, "{every:#?}");
    for c in &every {
        assert!(c.request_id.is_some(), "a result without its call: {c:?}");
        let k = usize::try_from(c.call_index.unwrap()).unwrap();
        assert_eq!(
            c.failed,
            Some(CALLS[k].1),
            "unanswered, or not its result: {c:?}"
        );
        assert!(c.exec_ms.is_some_and(|ms| ms >= 0.0), "{c:?}");
    }
    let results = h
        .events()
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .count();
    assert_eq!(results, all);
}
