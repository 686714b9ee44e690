//! Clients that rewrite call ids between a response and their next
//! request: the Gemini CLI and the AI SDK's Google provider invent ids for
//! Gemini's id-less `functionCall`s (`read_file_1795610246552_0`) and write
//! them into the replayed model turn and the `functionResponse`s; a client
//! of another dialect may do the same with the provider's ids. Each call is
//! counted once, its result meets it (tool, verdict, execution time), and
//! nothing lands under `unknown` — also when another gateway on the same
//! database (here: a restart) sees the next request.

use bytes::Bytes;
use serde_json::{Value, json};
use toolwarden_mock_provider::Scripted;

use super::{
    convo::Kind,
    support::{Harness, calls_and_failures, post},
};

/// The calls the model makes every round: (tool, arguments, result fails).
const CALLS: [(&str, &str, bool); 3] = [
    ("read_file", r#"{"path":"missing.txt"}"#, true),
    ("read_file", r#"{"path":"notes.txt","limit":1}"#, false),
    ("run_shell", r#"{"command":"false"}"#, true),
];

const ROUNDS: usize = 2;

/// The provider's id of call `k` in round `round` (Gemini: none).
fn provider_id(kind: Kind, round: usize, k: usize) -> Option<String> {
    match kind {
        Kind::Gemini => None,
        Kind::Anthropic => Some(format!("toolu_{round}{k}provider")),
        Kind::Chat | Kind::Responses => Some(format!("call_{round}{k}provider")),
    }
}

/// The id the client writes instead, as the Gemini CLI does.
fn client_id(round: usize, k: usize) -> String {
    format!("{}_17956102465{round}2_{k}", CALLS[k].0)
}

fn args(k: usize) -> Value {
    serde_json::from_str(CALLS[k].1).unwrap()
}

/// The model's reply with the round's calls, as the provider sends it.
fn calls_reply(kind: Kind, stream: bool, round: usize) -> Scripted {
    let id = |k| provider_id(kind, round, k).unwrap_or_default();
    let body = match kind {
        Kind::Gemini => {
            let parts: Vec<Value> = (0..CALLS.len())
                .map(|k| json!({"functionCall": {"name": CALLS[k].0, "args": args(k)}}))
                .collect();
            json!({"candidates": [{"content": {"role": "model", "parts": parts},
                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 9},
                "modelVersion": "gemini-2.0-flash"})
        }
        Kind::Anthropic => {
            let content: Vec<Value> = (0..CALLS.len())
                .map(|k| json!({"type": "tool_use", "id": id(k), "name": CALLS[k].0, "input": args(k)}))
                .collect();
            json!({"id": format!("msg_{round}"), "type": "message", "role": "assistant",
                "model": "claude-test", "content": content, "stop_reason": "tool_use",
                "usage": {"input_tokens": 20, "output_tokens": 9}})
        }
        Kind::Chat => {
            let calls: Vec<Value> = (0..CALLS.len())
                .map(|k| {
                    json!({"id": id(k), "type": "function",
                    "function": {"name": CALLS[k].0, "arguments": CALLS[k].1}})
                })
                .collect();
            json!({"id": format!("chatcmpl-{round}"), "object": "chat.completion",
                "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 9}})
        }
        Kind::Responses => {
            let output: Vec<Value> = (0..CALLS.len())
                .map(|k| {
                    json!({"type": "function_call", "id": format!("fc_{round}{k}"),
                    "call_id": id(k), "name": CALLS[k].0, "arguments": CALLS[k].1,
                    "status": "completed"})
                })
                .collect();
            json!({"id": format!("resp_{round}"), "object": "response", "status": "completed",
                "model": "gpt-test", "output": output,
                "usage": {"input_tokens": 20, "output_tokens": 9}})
        }
    };
    if stream {
        assert_eq!(kind, Kind::Gemini, "only Gemini streams here");
        // One call per chunk, the usage and finish reason with the last.
        let chunks = (0..CALLS.len())
            .map(|k| {
                let mut chunk = json!({"candidates": [{"content": {"role": "model",
                    "parts": [{"functionCall": {"name": CALLS[k].0, "args": args(k)}}]},
                    "index": 0}], "modelVersion": "gemini-2.0-flash"});
                if k + 1 == CALLS.len() {
                    chunk["candidates"][0]["finishReason"] = json!("STOP");
                    chunk["usageMetadata"] = body["usageMetadata"].clone();
                }
                Bytes::from(format!("data: {chunk}\r\n\r\n"))
            })
            .collect();
        return Scripted::Sse(chunks, std::time::Duration::ZERO);
    }
    Scripted::Json(Bytes::from(body.to_string()))
}

/// A final text reply.
fn text_reply(kind: Kind) -> Scripted {
    let body = match kind {
        Kind::Gemini => json!({"candidates": [{"content": {"role": "model",
            "parts": [{"text": "Done."}]}, "finishReason": "STOP", "index": 0}]}),
        Kind::Anthropic => json!({"id": "msg_t", "type": "message", "role": "assistant",
            "model": "claude-test", "content": [{"type": "text", "text": "Done."}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}),
        Kind::Chat => json!({"id": "chatcmpl-t", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Done."}}]}),
        Kind::Responses => json!({"id": "resp_t", "object": "response", "status": "completed",
            "model": "gpt-test", "output": [{"type": "message", "id": "msg_t", "role": "assistant",
            "content": [{"type": "output_text", "text": "Done."}]}]}),
    };
    Scripted::Json(Bytes::from(body.to_string()))
}

/// Appends the replayed model turn (client ids, keys in another order) and
/// the results (client ids, last call answered first) to `history`.
fn append_round(kind: Kind, history: &mut Vec<Value>, round: usize) {
    let output = |k: usize| {
        if CALLS[k].2 {
            format!("Error: {} failed (exit status 1)", CALLS[k].0)
        } else {
            "line one".to_string()
        }
    };
    // Keys in reverse order and spaced out: a client's own serialisation.
    let reordered = |k: usize| -> String {
        let v = args(k);
        let map = v.as_object().unwrap();
        let fields: Vec<String> = map
            .iter()
            .rev()
            .map(|(key, val)| format!("{key:?} : {val}"))
            .collect();
        format!("{{ {} }}", fields.join(", "))
    };
    let order: Vec<usize> = (0..CALLS.len()).rev().collect();
    match kind {
        Kind::Gemini => {
            let calls: Vec<Value> = (0..CALLS.len())
                .map(|k| json!({"functionCall": {"args": serde_json::from_str::<Value>(&reordered(k)).unwrap(),
                    "name": CALLS[k].0, "id": client_id(round, k)}}))
                .collect();
            history.push(json!({"role": "model", "parts": calls}));
            let responses: Vec<Value> = order
                .iter()
                .map(|&k| {
                    let response = if CALLS[k].2 {
                        json!({"error": output(k)})
                    } else {
                        json!({"output": output(k)})
                    };
                    json!({"functionResponse": {"id": client_id(round, k), "name": CALLS[k].0,
                        "response": response}})
                })
                .collect();
            history.push(json!({"role": "user", "parts": responses}));
        }
        Kind::Anthropic => {
            let calls: Vec<Value> = (0..CALLS.len())
                .map(|k| {
                    json!({"type": "tool_use", "id": client_id(round, k), "name": CALLS[k].0,
                    "input": args(k)})
                })
                .collect();
            history.push(json!({"role": "assistant", "content": calls}));
            let results: Vec<Value> = order
                .iter()
                .map(|&k| {
                    json!({"type": "tool_result", "tool_use_id": client_id(round, k),
                    "is_error": CALLS[k].2, "content": output(k)})
                })
                .collect();
            history.push(json!({"role": "user", "content": results}));
        }
        Kind::Chat => {
            let calls: Vec<Value> = (0..CALLS.len())
                .map(|k| {
                    json!({"id": client_id(round, k), "type": "function",
                    "function": {"name": CALLS[k].0, "arguments": reordered(k)}})
                })
                .collect();
            history.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
            for &k in &order {
                history.push(json!({"role": "tool", "tool_call_id": client_id(round, k),
                    "content": output(k)}));
            }
        }
        Kind::Responses => {
            for (k, (name, _, _)) in CALLS.iter().enumerate() {
                history.push(
                    json!({"type": "function_call", "call_id": client_id(round, k),
                    "name": name, "arguments": reordered(k)}),
                );
            }
            for &k in &order {
                history.push(json!({"type": "function_call_output",
                    "call_id": client_id(round, k), "output": output(k)}));
            }
        }
    }
}

fn user(kind: Kind, text: &str) -> Value {
    match kind {
        Kind::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
        _ => json!({"role": "user", "content": text}),
    }
}

fn body(kind: Kind, history: &[Value]) -> Value {
    let tools = json!([]);
    match kind {
        Kind::Gemini => json!({"contents": history}),
        Kind::Anthropic => json!({"model": "claude-test", "max_tokens": 100, "messages": history}),
        Kind::Chat => json!({"model": "gpt-test", "messages": history, "tools": tools}),
        Kind::Responses => json!({"model": "gpt-test", "input": history}),
    }
}

/// `ROUNDS` rounds of the same three calls, each answered under ids the
/// client invented; with `restart`, a new gateway on the same database
/// serves each request that carries results.
async fn rewritten(kind: Kind, stream: bool, restart: bool) {
    let what = format!("{kind:?} stream={stream} restart={restart}");
    let mut h = Harness::start().await;
    let mut history = vec![user(
        kind,
        "Read missing.txt and notes.txt, then run false.",
    )];
    let auth = kind.auth();
    let headers: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for round in 0..ROUNDS {
        if round > 0 {
            history.push(user(kind, "Once more, please."));
        }
        h.mock.push_response(calls_reply(kind, stream, round));
        let url = format!("{}{}", h.gw(), kind.path(stream));
        let r = post(&h.client, url, &headers, &body(kind, &history)).await;
        assert_eq!(r.status, 200, "{what}: {}", r.text());
        if restart {
            h.restart().await;
        }
        append_round(kind, &mut history, round);
        h.mock.push_response(text_reply(kind));
        let url = format!("{}{}", h.gw(), kind.path(false));
        let r = post(&h.client, url, &headers, &body(kind, &history)).await;
        assert_eq!(r.status, 200, "{what}: {}", r.text());
        history.push(match kind {
            Kind::Gemini => json!({"role": "model", "parts": [{"text": "Done."}]}),
            _ => json!({"role": "assistant", "content": "Done."}),
        });
    }
    let stats = h.finish().await;
    let tool = |name: &str| calls_and_failures(&stats, name, &what);
    let rounds = ROUNDS as u64;
    assert_eq!(tool("read_file"), (2 * rounds, rounds), "{what}");
    assert_eq!(tool("run_shell"), (rounds, rounds), "{what}");
    assert_eq!(stats.tools.len(), 2, "{what}: {:?}", stats.tools);
    assert_eq!(stats.requests.total, 2 * rounds, "{what}");
    assert_eq!(stats.requests.errors, 0, "{what}");
    assert_eq!(stats.sessions.len(), 1, "{what}: {:?}", stats.sessions);
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let calls = store
        .session_calls(&stats.sessions[0].session_id)
        .await
        .unwrap();
    assert_eq!(calls.len(), CALLS.len() * ROUNDS, "{what}: {calls:#?}");
    for (n, c) in calls.iter().enumerate() {
        let k = n % CALLS.len();
        assert!(
            c.request_id.is_some(),
            "{what}: a result without its call: {c:?}"
        );
        assert_eq!(c.call_index, Some(k as i64), "{what}: {c:?}");
        assert_eq!(c.tool, CALLS[k].0, "{what}: {c:?}");
        assert_eq!(c.failed, Some(CALLS[k].2), "{what}: its result: {c:?}");
        assert!(c.exec_ms.is_some_and(|ms| ms >= 0.0), "{what}: {c:?}");
    }
}

#[tokio::test]
async fn gemini_invented_ids_meet_their_calls() {
    rewritten(Kind::Gemini, false, false).await;
}

#[tokio::test]
async fn gemini_streamed_invented_ids_meet_their_calls() {
    rewritten(Kind::Gemini, true, false).await;
}

#[tokio::test]
async fn gemini_invented_ids_meet_their_calls_after_a_restart() {
    rewritten(Kind::Gemini, false, true).await;
}

#[tokio::test]
async fn anthropic_rewritten_ids_meet_their_calls() {
    rewritten(Kind::Anthropic, false, false).await;
}

#[tokio::test]
async fn chat_rewritten_ids_meet_their_calls() {
    rewritten(Kind::Chat, false, true).await;
}

#[tokio::test]
async fn responses_rewritten_ids_meet_their_calls() {
    rewritten(Kind::Responses, false, false).await;
}

/// A turn answered under ids the client invented, then the same request
/// retried with its oldest turns cut (after a context-length 400): the
/// same results at other positions. The call was recorded under the
/// provider's id (Gemini: `name#n`), so the resend finds it through the
/// replayed turn, not its id: each result still counts once.
async fn rewritten_then_cut(kind: Kind) {
    let what = format!("{kind:?}");
    let mut h = Harness::start().await;
    let mut auth = kind.auth();
    // One session named for the run (the Gemini CLI's custom header).
    auth.push(("x-session-id", "rewritten-then-cut".to_string()));
    let headers: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut history = vec![
        user(kind, "Say hello."),
        match kind {
            Kind::Gemini => json!({"role": "model", "parts": [{"text": "Hello."}]}),
            _ => json!({"role": "assistant", "content": "Hello."}),
        },
    ];
    history.push(user(
        kind,
        "Read missing.txt and notes.txt, then run false.",
    ));
    h.mock.push_response(calls_reply(kind, false, 0));
    let url = format!("{}{}", h.gw(), kind.path(false));
    let r = post(&h.client, url.clone(), &headers, &body(kind, &history)).await;
    assert_eq!(r.status, 200, "{what}: {}", r.text());
    append_round(kind, &mut history, 0);
    h.mock.push_response(text_reply(kind));
    let r = post(&h.client, url.clone(), &headers, &body(kind, &history)).await;
    assert_eq!(r.status, 200, "{what}: {}", r.text());
    // Retried without the first exchange: every position moves by two.
    h.mock.push_response(text_reply(kind));
    let r = post(&h.client, url, &headers, &body(kind, &history[2..])).await;
    assert_eq!(r.status, 200, "{what}: {}", r.text());
    let stats = h.finish().await;
    let tool = |name: &str| calls_and_failures(&stats, name, &what);
    assert_eq!(tool("read_file"), (2, 1), "{what}");
    assert_eq!(tool("run_shell"), (1, 1), "{what}");
    let events = h.events();
    let results = events.iter().filter(|e| e["type"] == "tool_result").count();
    assert_eq!(results, CALLS.len(), "{what}: {events:#?}");
}

#[tokio::test]
async fn gemini_invented_ids_resent_at_other_positions_count_once() {
    rewritten_then_cut(Kind::Gemini).await;
}

#[tokio::test]
async fn anthropic_rewritten_ids_resent_at_other_positions_count_once() {
    rewritten_then_cut(Kind::Anthropic).await;
}
