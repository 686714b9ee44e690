//! A client that answers the model's calls in text: Hugging Face
//! smolagents' `ToolCallingAgent` replays a step that ran as `Calling
//! tools:\n[…]` (an assistant text) and `Observation:\n…`, and a step whose
//! tool raised as `Error:\nError executing tool '…' with arguments {…}: …`
//! with the step's calls forgotten — joined to the user text before it
//! when the model wrote no text beside its calls. Each call still counts
//! once, its result meets it with its verdict, in the conversation's one
//! session — also when another gateway on the same database (a restart)
//! sees the next request.

use bytes::Bytes;
use serde_json::{Value, json};
use toolwarden_mock_provider::Scripted;

use super::{
    convo::Kind,
    support::{Harness, calls_and_failures, post},
};

/// The steps: (tool, arguments as JSON, as Python writes them, output,
/// raised).
const STEPS: [(&str, &str, &str, &str, bool); 4] = [
    (
        "read_file",
        r#"{"path":"missing.txt"}"#,
        "{'path': 'missing.txt'}",
        "FileNotFoundError: [Errno 2] No such file or directory: 'missing.txt'",
        true,
    ),
    (
        "run_shell",
        r#"{"command":"echo ok"}"#,
        "{'command': 'echo ok'}",
        "ok",
        false,
    ),
    (
        "run_shell",
        r#"{"command":"ls gone"}"#,
        "{'command': 'ls gone'}",
        "RuntimeError: exit status 2: ls: cannot access 'gone'",
        true,
    ),
    (
        "read_file",
        r#"{"path":"missing.txt"}"#,
        "{'path': 'missing.txt'}",
        "FileNotFoundError: [Errno 2] No such file or directory: 'missing.txt'",
        true,
    ),
];

const RETRY: &str = "\nNow let's retry: take care not to repeat previous errors! If you have retried several times, try a completely different approach.\n";

fn call_id(k: usize) -> String {
    format!("call_{k}textanswer")
}

/// The model's reply: step `k`'s call, with text beside it or not.
fn call_reply(k: usize, said: bool) -> Scripted {
    let (tool, arguments, ..) = STEPS[k];
    let content = said.then(|| format!("Step {k}."));
    let body = json!({"id": format!("chatcmpl-{k}"), "object": "chat.completion",
        "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": content, "tool_calls": [{"id": call_id(k),
        "type": "function", "function": {"name": tool, "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 9}});
    Scripted::Json(Bytes::from(body.to_string()))
}

/// A text part, as smolagents writes every content.
fn text(t: &str) -> Value {
    json!([{"type": "text", "text": t}])
}

/// Appends step `k` as smolagents replays it: joins a text to the last
/// message when it has the same role.
fn append_step(history: &mut Vec<Value>, k: usize, said: bool) {
    let (tool, _, python, output, raised) = STEPS[k];
    let mut push = |role: &str, t: String| {
        if let Some(last) = history.last_mut()
            && last["role"] == role
        {
            let joined = format!("{}\n{t}", last["content"][0]["text"].as_str().unwrap());
            last["content"] = text(&joined);
            return;
        }
        history.push(json!({"role": role, "content": text(&t)}));
    };
    if said {
        push("assistant", format!("Step {k}."));
    }
    if raised {
        push(
            "user",
            format!(
                "Error:\nError executing tool '{tool}' with arguments {python}: {output}\nPlease try again or use another tool{RETRY}"
            ),
        );
    } else {
        push(
            "assistant",
            format!(
                "Calling tools:\n[{{'id': '{}', 'type': 'function', 'function': {{'name': '{tool}', 'arguments': {python}}}}}]",
                call_id(k)
            ),
        );
        push("user", format!("Observation:\n{output}"));
    }
}

async fn answered_in_text(said: bool, restart: bool) {
    let what = format!("said={said} restart={restart}");
    let mut h = Harness::start().await;
    let mut history = vec![
        json!({"role": "system", "content": text("You are an expert assistant who can solve any task using tool calls.")}),
        json!({"role": "user", "content": text("New task:\nRun the checks.")}),
    ];
    let auth = Kind::Chat.auth();
    let headers: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let tools = json!([{"type": "function", "function": {"name": "read_file", "parameters": {}}},
        {"type": "function", "function": {"name": "run_shell", "parameters": {}}}]);
    for k in 0..=STEPS.len() {
        if k > 0 {
            append_step(&mut history, k - 1, said);
        }
        let reply = match k {
            k if k < STEPS.len() => call_reply(k, said),
            _ => Scripted::Json(Bytes::from(
                json!({"id": "chatcmpl-end", "object": "chat.completion", "model": "gpt-test",
                    "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Done."}}]})
                .to_string(),
            )),
        };
        h.mock.push_response(reply);
        let body = json!({"model": "gpt-test", "messages": history, "tools": tools});
        let url = format!("{}{}", h.gw(), Kind::Chat.path(false));
        let r = post(&h.client, url, &headers, &body).await;
        assert_eq!(r.status, 200, "{what}: {}", r.text());
        if restart {
            h.restart().await;
        }
    }
    let stats = h.finish().await;
    let tool = |name: &str| calls_and_failures(&stats, name, &what);
    assert_eq!(tool("read_file"), (2, 2), "{what}");
    assert_eq!(tool("run_shell"), (2, 1), "{what}");
    assert_eq!(stats.tools.len(), 2, "{what}: {:?}", stats.tools);
    assert_eq!(stats.sessions.len(), 1, "{what}: {:?}", stats.sessions);
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let calls = store
        .session_calls(&stats.sessions[0].session_id)
        .await
        .unwrap();
    assert_eq!(calls.len(), STEPS.len(), "{what}: {calls:#?}");
    for (k, c) in calls.iter().enumerate() {
        assert!(
            c.request_id.is_some(),
            "{what}: a result without its call: {c:?}"
        );
        assert_eq!(c.call_id, call_id(k), "{what}: {c:?}");
        assert_eq!(c.failed, Some(STEPS[k].4), "{what}: its result: {c:?}");
    }
}

#[tokio::test]
async fn calls_answered_in_text_meet_their_results() {
    answered_in_text(true, false).await;
}

#[tokio::test]
async fn errors_joined_to_the_user_text_meet_their_calls() {
    answered_in_text(false, false).await;
}

#[tokio::test]
async fn calls_answered_in_text_meet_their_results_after_a_restart() {
    answered_in_text(false, true).await;
}
