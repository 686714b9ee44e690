//! One agent-loop step in each of the four dialects, through the real wire
//! layer: a provider response in, the tool-result messages out; the
//! conversation with them appended must validate clean, and the wire
//! layer must read back one result per call with the right failure flag.

use std::sync::Arc;

use serde_json::{Value, json};
use toolwarden_runtime::{Context, Executor, Registry};
use toolwarden_wire::{Detector, Dialect};

#[path = "support/read_file.rs"]
mod read_file;
use read_file::{CALLS, FAILED, args, executor};

#[path = "support/next_request.rs"]
mod next_request;
use next_request::next_request;

/// The response body, and the request that continues the conversation
/// given the step's messages.
fn response(dialect: Dialect) -> Value {
    match dialect {
        Dialect::OpenAiChat => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": (0..3).map(|i| json!({
                    "id": format!("call_{i}"), "type": "function",
                    "function": {"name": CALLS[i].0, "arguments": CALLS[i].1}
                })).collect::<Vec<_>>()
            }}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        }),
        Dialect::OpenAiResponses => json!({
            "id": "resp_1", "object": "response", "model": "gpt-4.1", "status": "completed",
            "output": (0..3).map(|i| json!({
                "type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"),
                "name": CALLS[i].0, "arguments": CALLS[i].1, "status": "completed"
            })).collect::<Vec<_>>()
        }),
        Dialect::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5},
            "content": (0..3).map(|i| json!({
                "type": "tool_use", "id": format!("toolu_{i}"), "name": CALLS[i].0, "input": args(i)
            })).collect::<Vec<_>>()
        }),
        Dialect::Gemini => json!({
            "modelVersion": "gemini-2.5-flash",
            "candidates": [{"finishReason": "STOP", "content": {"role": "model",
                "parts": (0..3).map(|i| json!({"functionCall": {"name": CALLS[i].0, "args": args(i)}}))
                    .collect::<Vec<_>>()
            }}]
        }),
        Dialect::BedrockConverse => json!({
            "output": {"message": {"role": "assistant",
                "content": (0..3).map(|i| json!({"toolUse": {
                    "toolUseId": format!("tooluse_{i}"), "name": CALLS[i].0, "input": args(i)
                }})).collect::<Vec<_>>()
            }},
            "stopReason": "tool_use", "usage": {"inputTokens": 10, "outputTokens": 5}
        }),
    }
}

#[tokio::test]
async fn one_step_in_every_dialect_gives_a_valid_conversation() {
    let ctx = Context::new();
    for dialect in Dialect::ALL {
        let ex = executor();
        let resp = response(dialect);
        let body = serde_json::to_vec(&resp).unwrap();
        let step = ex.step(dialect, &body, &ctx).await.unwrap();
        assert_eq!(step.calls.len(), 3, "{dialect}");
        assert_eq!(step.outcomes.len(), 3, "{dialect}");
        assert!(step.fatal.is_none());
        for (i, o) in step.outcomes.iter().enumerate() {
            assert_eq!(o.call_id, step.calls[i].id, "{dialect}");
            assert_eq!(o.is_failure(), FAILED[i], "{dialect} call {i}");
        }
        let request = serde_json::to_vec(&next_request(dialect, &resp, &step.messages)).unwrap();
        let defects = toolwarden_wire::validate(dialect, &request).unwrap();
        assert!(defects.is_empty(), "{dialect}: {defects:?}");
        let view = toolwarden_wire::request_view(dialect, &request).unwrap();
        assert_eq!(view.results.len(), 3, "{dialect}");
        for (i, r) in view.results.iter().enumerate() {
            let read = r.read(&Detector::default()).unwrap();
            assert_eq!(
                read.verdict.failed, FAILED[i],
                "{dialect} result {i}: {:?}",
                read.text
            );
        }
    }
}

#[tokio::test]
async fn a_final_answer_has_no_calls_and_a_bad_body_is_an_error() {
    let ex = executor();
    let ctx = Context::new();
    let text = json!({
        "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
        "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}]
    });
    let step = ex
        .step(Dialect::Anthropic, text.to_string().as_bytes(), &ctx)
        .await
        .unwrap();
    assert!(step.is_final());
    assert!(step.messages.is_empty());
    let err = ex
        .step(Dialect::OpenAiChat, b"{\"choices\": [", &ctx)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot read the model's response"),
        "{err}"
    );
}

/// Regression (review L2): a Chat response read as Anthropic was a final
/// step without calls, and a loop ending on `is_final()` stopped early. Not
/// a response of the dialect at all, it is an error that says so; a stream
/// is refused with the same kind of message.
#[tokio::test]
async fn a_body_of_another_dialect_or_a_stream_is_an_error_not_a_final_step() {
    let ex = executor();
    let ctx = Context::new();
    let chat = response(Dialect::OpenAiChat).to_string();
    for dialect in [
        Dialect::Anthropic,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
    ] {
        let err = ex.step(dialect, chat.as_bytes(), &ctx).await.unwrap_err();
        assert_eq!(err.kind(), toolwarden_runtime::StepErrorKind::Unreadable);
        assert_eq!(
            err.wire_error().unwrap().kind(),
            toolwarden_runtime::WireErrorKind::Shape,
            "{err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("expected a whole (non-streaming) body of"),
            "{msg}"
        );
        assert!(msg.contains("`choices`"), "{msg}");
    }
    let sse = format!("data: {chat}\n\ndata: [DONE]\n\n");
    let err = ex
        .step(Dialect::OpenAiChat, sse.as_bytes(), &ctx)
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("non-streaming") && msg.contains("stream"),
        "{msg}"
    );
    assert!(
        msg.ends_with("(for a stream: Executor::step_stream)"),
        "{msg}"
    );
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let err = ex
        .step(Dialect::Anthropic, overloaded.as_bytes(), &ctx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Overloaded"), "{err}");
    // Review L10: Gemini's `[]` is no response, and Bedrock's error body is
    // named as one.
    let err = ex.step(Dialect::Gemini, b"[]", &ctx).await.unwrap_err();
    assert!(err.to_string().contains("empty JSON array"), "{err}");
    let denied = br#"{"message":"User is not authorized to perform bedrock:InvokeModel"}"#;
    let err = ex
        .step(Dialect::BedrockConverse, denied, &ctx)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Bedrock's error response: User is not authorized"),
        "{err}"
    );
    // Nothing ran.
    assert_eq!(ex.registry().stats_of("read_file").unwrap().calls, 0);
}

/// Anthropic's server tools (web search, MCP connectors) are answered by
/// Anthropic in the same message: the step runs none of them and writes
/// no result for them (a `tool_result` for a `srvtoolu_` id is refused),
/// only for the client's own `tool_use` beside them.
#[tokio::test]
async fn server_tool_calls_are_not_run_or_answered() {
    let ex = executor();
    let ctx = Context::new();
    let searched = json!({
        "id": "msg_3", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
        "stop_reason": "end_turn", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                "input": {"query": "weather Oslo"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "read_file",
                "server_name": "files", "input": {"path": "a.txt"}},
            {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "content": []},
            {"type": "text", "text": "It is sunny."}]
    });
    let step = ex
        .step(Dialect::Anthropic, searched.to_string().as_bytes(), &ctx)
        .await
        .unwrap();
    assert!(step.is_final(), "{:?}", step.calls);
    assert!(step.messages.is_empty());

    // Paused while its server tools ran: nothing to answer, but the turn
    // goes on when sent back, so it is not final.
    let mut paused = searched.clone();
    paused["stop_reason"] = json!("pause_turn");
    paused["content"].as_array_mut().unwrap().truncate(1);
    let step = ex
        .step(Dialect::Anthropic, paused.to_string().as_bytes(), &ctx)
        .await
        .unwrap();
    assert!(step.calls.is_empty() && step.messages.is_empty());
    assert!(!step.is_final(), "a paused turn is not over");

    let mut mixed = searched.clone();
    mixed["stop_reason"] = json!("tool_use");
    mixed["content"].as_array_mut().unwrap().push(
        json!({"type": "tool_use", "id": "toolu_1", "name": "read_file",
            "input": {"path": "a.txt"}}),
    );
    let step = ex
        .step(Dialect::Anthropic, mixed.to_string().as_bytes(), &ctx)
        .await
        .unwrap();
    let ids: Vec<&str> = step.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["toolu_1"]);
    assert_eq!(step.outcomes.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executors_are_shared_across_spawned_tasks() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Executor>();
    send_sync::<Registry>();
    let ex = Arc::new(executor());
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let ex = ex.clone();
            tokio::spawn(async move {
                let call = toolwarden_core::ToolCall {
                    id: format!("c{i}"),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a.txt"}"#.into(),
                };
                ex.execute(&call, &Context::new()).await
            })
        })
        .collect();
    for (i, t) in tasks.into_iter().enumerate() {
        let o = t.await.unwrap();
        assert_eq!(o.call_id, format!("c{i}"));
        assert_eq!(o.output, Some(json!("alpha")));
    }
    assert_eq!(ex.registry().stats_of("read_file").unwrap().successes, 8);
}

/// The Responses API's built-in client tools (`shell`, `apply_patch`) and
/// custom tools are answered by their own kinds of output item: a step
/// runs the registry's tool of that name with the call's `action` or
/// `operation`, and the conversation with its items validates clean and
/// reads back with the right failure flags.
#[tokio::test]
async fn responses_builtin_and_custom_calls_are_answered_in_their_own_items() {
    let r = Registry::new();
    let object = json!({"type": "object"});
    r.register(toolwarden_runtime::tool_fn(
        "shell",
        "Run commands.",
        object.clone(),
        |args: Value, _c| async move {
            let failing = args["commands"][0] == "make";
            Ok::<_, toolwarden_runtime::BoxError>(json!({
                "stdout": if failing { "" } else { "a.txt" },
                "stderr": if failing { "make: no rule" } else { "" },
                "exit_code": if failing { 2 } else { 0 },
            }))
        },
    ))
    .unwrap();
    r.register(toolwarden_runtime::tool_fn(
        "apply_patch",
        "Edit files.",
        object.clone(),
        |args: Value, _c| async move {
            match args["path"].as_str() {
                Some("a.txt") => Ok(json!("patched a.txt")),
                _ => Err(toolwarden_runtime::BoxError::from("no such file")),
            }
        },
    ))
    .unwrap();
    let ex = Executor::new(Arc::new(r));
    let response = json!({
        "id": "resp_b", "object": "response", "status": "completed", "model": "gpt-5.1",
        "output": [
            {"type": "shell_call", "id": "sh_1", "call_id": "call_ls", "status": "completed",
                "action": {"commands": ["ls"]}},
            {"type": "shell_call", "id": "sh_2", "call_id": "call_make", "status": "completed",
                "action": {"commands": ["make"]}},
            {"type": "apply_patch_call", "id": "ap_1", "call_id": "call_ok", "status": "completed",
                "operation": {"type": "update_file", "path": "a.txt", "diff": "+x"}},
            {"type": "apply_patch_call", "id": "ap_2", "call_id": "call_bad", "status": "completed",
                "operation": {"type": "delete_file", "path": "b.txt"}},
            {"type": "custom_tool_call", "id": "ct_1", "call_id": "call_sql", "name": "sql",
                "input": "SELECT 1"}]
    });
    let step = ex
        .step(
            Dialect::OpenAiResponses,
            response.to_string().as_bytes(),
            &Context::new(),
        )
        .await
        .unwrap();
    let names: Vec<&str> = step.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["shell", "shell", "apply_patch", "apply_patch", "sql"]
    );
    let types: Vec<&str> = (step.messages.iter())
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "shell_call_output",
            "shell_call_output",
            "apply_patch_call_output",
            "apply_patch_call_output",
            "custom_tool_call_output"
        ]
    );
    assert_eq!(
        step.messages[1]["output"],
        json!([{"stdout": "", "stderr": "make: no rule", "outcome": {"type": "exit", "exit_code": 2}}])
    );
    assert_eq!(step.messages[3]["status"], "failed");

    let mut input = vec![json!({"role": "user", "content": "fix it"})];
    input.extend(response["output"].as_array().unwrap().iter().cloned());
    input.extend(step.messages.iter().cloned());
    let next = serde_json::to_vec(&json!({"model": "gpt-5.1", "input": input})).unwrap();
    let defects = toolwarden_wire::validate(Dialect::OpenAiResponses, &next).unwrap();
    assert!(defects.is_empty(), "{defects:?}");
    let view = toolwarden_wire::request_view(Dialect::OpenAiResponses, &next).unwrap();
    let read: Vec<(String, bool)> = (view.results.iter())
        .map(|r| {
            let read = r.read(&Detector::default()).unwrap();
            (
                r.tool.as_deref().unwrap_or("").to_owned(),
                read.verdict.failed,
            )
        })
        .collect();
    let expected = [
        ("shell", false),
        ("shell", true),
        ("apply_patch", false),
        ("apply_patch", true),
        // A custom tool's free-form input is not JSON arguments: the
        // registry has no `sql` tool either way.
        ("sql", true),
    ];
    assert_eq!(read, expected.map(|(t, f)| (t.to_owned(), f)));
}

/// A tool whose error has no message (here an empty `invalid_arguments`)
/// is still answered with an error result Anthropic takes: it refuses an
/// `is_error` result with empty content.
#[tokio::test]
async fn an_error_without_a_message_is_an_anthropic_result_with_content() {
    use toolwarden_runtime::{BoxError, ToolError, tool_fn};
    let registry = Registry::new();
    let refuse = tool_fn(
        "refuse",
        "Refuses.",
        json!({"type": "object"}),
        |_a, _c| async { Err::<Value, BoxError>(ToolError::invalid_arguments("").into()) },
    );
    registry.register(refuse).unwrap();
    let executor = Executor::new(Arc::new(registry));
    let body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "refuse", "input": {}}]
    });
    let step = executor
        .step(
            Dialect::Anthropic,
            &serde_json::to_vec(&body).unwrap(),
            &Context::default(),
        )
        .await
        .unwrap();
    let block = &step.messages[0]["content"][0];
    assert_eq!(block["is_error"], true, "{block}");
    assert!(
        !block["content"].as_str().unwrap().trim().is_empty(),
        "{block}"
    );
}

/// Regression: a `computer` call whose tool failed (or that no tool
/// answers) was answered with the error text as its screenshot's
/// `image_url`, which the API refuses: it is not a URL. Such a call gets a
/// blank screenshot marked `incomplete`, as the gateway's repair writes.
#[tokio::test]
async fn a_failed_computer_call_is_answered_with_a_screenshot() {
    let r = Registry::new();
    r.register(toolwarden_runtime::tool_fn(
        "computer",
        "Use the computer.",
        json!({"type": "object"}),
        |args: Value, _c| async move {
            match args["type"].as_str() {
                Some("screenshot") => Ok(json!("data:image/png;base64,AAAA")),
                _ => Err(toolwarden_runtime::BoxError::from("the display is gone")),
            }
        },
    ))
    .unwrap();
    let ex = Executor::new(Arc::new(r));
    let response = json!({
        "id": "resp_c", "object": "response", "status": "completed", "model": "computer-use-preview",
        "output": [
            {"type": "computer_call", "id": "cu_1", "call_id": "call_shot", "status": "completed",
                "action": {"type": "screenshot"}, "pending_safety_checks": []},
            {"type": "computer_call", "id": "cu_2", "call_id": "call_click", "status": "completed",
                "action": {"type": "click", "x": 1, "y": 2}, "pending_safety_checks": []}
        ]
    });
    let step = ex
        .step(
            Dialect::OpenAiResponses,
            &serde_json::to_vec(&response).unwrap(),
            &Context::default(),
        )
        .await
        .unwrap();
    assert_eq!(step.messages.len(), 2);
    assert_eq!(
        step.messages[0]["output"]["image_url"],
        "data:image/png;base64,AAAA"
    );
    let failed = &step.messages[1];
    assert_eq!(failed["type"], "computer_call_output");
    assert_eq!(failed["output"]["type"], "computer_screenshot");
    let url = failed["output"]["image_url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{failed}");
    assert_eq!(failed["status"], "incomplete");
}
