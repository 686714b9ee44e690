//! A client that answers the model's calls in text: Hugging Face
//! smolagents' `ToolCallingAgent` replays a step that ran as `Calling
//! tools:\n[…]` (an assistant text) and `Observation:\n…`, and a step whose
//! tool raised as `Error:\nError executing tool '…' with arguments {…}: …`
//! with the step's calls forgotten — joined to the user text before it
//! when the model wrote no text beside its calls. Each call still counts
//! once, its result meets it with its verdict, in the conversation's one
//! session — also when another gateway on the same database (a restart)
//! sees the next request. On Chat (its `OpenAIServerModel`), and on
//! Anthropic and Gemini as its `LiteLLMModel` sends them (LiteLLM makes up
//! the ids of Gemini's calls, which carry none).

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

/// The id the gateway records step `k`'s call under: the model's, or, for
/// Gemini's calls, which carry none, the gateway's own.
fn recorded_id(kind: Kind, k: usize) -> String {
    match kind {
        Kind::Gemini => format!("{}#0", STEPS[k].0),
        _ => call_id(k),
    }
}

/// The model's reply: step `k`'s call (`None`: the final answer), with
/// text beside it or not.
fn reply(kind: Kind, k: Option<usize>, said: bool) -> Scripted {
    let said = said.then(|| format!("Step {}.", k.unwrap_or(0)));
    let step = k.map(|k| {
        let (tool, arguments, ..) = STEPS[k];
        (k, tool, serde_json::from_str::<Value>(arguments).unwrap())
    });
    let body = match kind {
        Kind::Anthropic => {
            let mut content: Vec<Value> = said
                .iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect();
            content.extend(step.iter().map(|(k, tool, input)| {
                json!({"type": "tool_use", "id": call_id(*k), "name": tool, "input": input})
            }));
            if content.is_empty() {
                content.push(json!({"type": "text", "text": "Done."}));
            }
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": content, "stop_reason": if step.is_some() { "tool_use" } else { "end_turn" },
                "usage": {"input_tokens": 20, "output_tokens": 9}})
        }
        Kind::Gemini => {
            let mut parts: Vec<Value> = said.iter().map(|t| json!({"text": t})).collect();
            parts.extend(
                step.iter()
                    .map(|(_, tool, args)| json!({"functionCall": {"name": tool, "args": args}})),
            );
            if parts.is_empty() {
                parts.push(json!({"text": "Done."}));
            }
            json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                "index": 0}], "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 9}})
        }
        _ => match step {
            Some((k, tool, arguments)) => {
                json!({"id": format!("chatcmpl-{k}"), "object": "chat.completion",
                "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": said, "tool_calls": [{"id": call_id(k),
                "type": "function", "function": {"name": tool, "arguments": arguments.to_string()}}]}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 9}})
            }
            None => json!({"id": "chatcmpl-end", "object": "chat.completion", "model": "gpt-test",
                "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Done."}}]}),
        },
    };
    Scripted::Json(Bytes::from(body.to_string()))
}

/// The request: Chat's messages (`history`) as `kind` carries them, as
/// smolagents' models send them.
fn request(kind: Kind, system: &str, history: &[Value]) -> Value {
    let names = ["read_file", "run_shell"];
    match kind {
        Kind::Anthropic => {
            json!({"model": "claude-test", "max_tokens": 1024, "system": text(system),
            "messages": history,
            "tools": names.map(|n| json!({"name": n, "input_schema": {"type": "object"}}))})
        }
        Kind::Gemini => {
            let contents: Vec<Value> = history
                .iter()
                .map(|m| {
                    let role = if m["role"] == "assistant" {
                        "model"
                    } else {
                        "user"
                    };
                    json!({"role": role, "parts": [{"text": m["content"][0]["text"]}]})
                })
                .collect();
            json!({"contents": contents, "system_instruction": {"parts": [{"text": system}]},
                "tools": [{"function_declarations": names.map(|n| json!({"name": n}))}]})
        }
        _ => {
            let mut messages = vec![json!({"role": "system", "content": text(system)})];
            messages.extend_from_slice(history);
            json!({"model": "gpt-test", "messages": messages,
                "tools": names.map(|n| json!({"type": "function", "function": {"name": n, "parameters": {}}}))})
        }
    }
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

async fn answered_in_text(kind: Kind, said: bool, restart: bool) {
    let what = format!("{kind:?} said={said} restart={restart}");
    let mut h = Harness::start().await;
    let system = "You are an expert assistant who can solve any task using tool calls.";
    let mut history = vec![json!({"role": "user", "content": text("New task:\nRun the checks.")})];
    let auth = kind.auth();
    let headers: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for k in 0..=STEPS.len() {
        if k > 0 {
            append_step(&mut history, k - 1, said);
        }
        h.mock
            .push_response(reply(kind, (k < STEPS.len()).then_some(k), said));
        let body = request(kind, system, &history);
        let url = format!("{}{}", h.gw(), kind.path(false));
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
        assert_eq!(c.call_id, recorded_id(kind, k), "{what}: {c:?}");
        assert_eq!(c.failed, Some(STEPS[k].4), "{what}: its result: {c:?}");
    }
}

/// The dialects smolagents' models send.
const KINDS: [Kind; 3] = [Kind::Chat, Kind::Anthropic, Kind::Gemini];

#[tokio::test]
async fn calls_answered_in_text_meet_their_results() {
    for kind in KINDS {
        answered_in_text(kind, true, false).await;
    }
}

#[tokio::test]
async fn errors_joined_to_the_user_text_meet_their_calls() {
    for kind in KINDS {
        answered_in_text(kind, false, false).await;
    }
}

#[tokio::test]
async fn calls_answered_in_text_meet_their_results_after_a_restart() {
    for kind in KINDS {
        answered_in_text(kind, false, true).await;
    }
}
