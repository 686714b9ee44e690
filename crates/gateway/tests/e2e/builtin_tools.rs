//! The Responses API's built-in client tools through the gateway: a turn
//! of `shell` and `apply_patch` calls (as the OpenAI Agents SDK's
//! `ShellTool` and `ApplyPatchTool` send them) is recorded per tool, each
//! result's failure read from its own flag (a shell command's exit code or
//! timeout, a patch's status), and the history resent in the next request
//! counts once. An unanswered shell call is repaired with a
//! `shell_call_output`. Tool search items (the provider's own, whose
//! `arguments` are an object, and one the client runs) are read: the
//! client's search is the tool `tool_search`.

use serde_json::{Value, json};
use toolwarden_gateway::RepairMode;

use super::{
    convo::Kind,
    support::{Harness, Reply, metric, post},
};

/// The first request's input: a user turn, the model's built-in calls
/// (from the previous response), and their outputs.
fn history() -> Vec<Value> {
    let exit = |code: i64| json!({"type": "exit", "exit_code": code});
    vec![
        json!({"role": "user", "content": "fix the build"}),
        json!({"type": "shell_call", "id": "sh_1", "call_id": "call_ls", "status": "completed",
            "action": {"commands": ["ls"], "timeout_ms": 10000}}),
        json!({"type": "shell_call", "id": "sh_2", "call_id": "call_make", "status": "completed",
            "action": {"commands": ["make"]}}),
        json!({"type": "shell_call", "id": "sh_3", "call_id": "call_sleep", "status": "completed",
            "action": {"commands": ["sleep 600"], "timeout_ms": 1000}}),
        json!({"type": "apply_patch_call", "id": "ap_1", "call_id": "call_patch", "status": "completed",
            "operation": {"type": "update_file", "path": "Makefile", "diff": "@@\n+all:\n"}}),
        json!({"type": "apply_patch_call", "id": "ap_2", "call_id": "call_delete", "status": "completed",
            "operation": {"type": "delete_file", "path": "gone.txt"}}),
        json!({"type": "shell_call_output", "call_id": "call_ls", "status": "completed",
            "output": [{"stdout": "Makefile\nsrc", "stderr": "", "outcome": exit(0)}]}),
        json!({"type": "shell_call_output", "call_id": "call_make", "status": "completed",
            "output": [{"stdout": "", "stderr": "make: *** No rule to make target 'all'.  Stop.", "outcome": exit(2)}]}),
        json!({"type": "shell_call_output", "call_id": "call_sleep",
            "output": [{"stdout": "", "stderr": "", "outcome": {"type": "timeout"}}]}),
        json!({"type": "apply_patch_call_output", "call_id": "call_patch", "status": "completed",
            "output": "Updated Makefile"}),
        json!({"type": "apply_patch_call_output", "call_id": "call_delete", "status": "failed",
            "output": "gone.txt does not exist"}),
    ]
}

/// How many function calls a Responses body makes.
fn function_calls(response: &Value) -> u64 {
    let output = response["output"].as_array().map_or(&[][..], Vec::as_slice);
    output
        .iter()
        .filter(|i| i["type"] == "function_call")
        .count() as u64
}

/// `body` posted to the gateway's `/v1/responses` in the test's session;
/// the reply, which must be a 200.
async fn send(h: &Harness, body: &Value) -> Reply {
    let mut headers = Kind::Responses.auth();
    headers.push(("content-type", "application/json".to_string()));
    headers.push(("x-session-id", "builtin-tools".to_string()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = post(
        &h.client,
        format!("{}/v1/responses", h.gw()),
        &headers,
        body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtin_shell_and_patch_results_are_counted_once_with_their_flags() {
    let mut h = Harness::start().await;
    let tools = json!([{"type": "shell"}, {"type": "apply_patch"}]);
    let mut input = history();
    let body = json!({"model": "gpt-5.1", "tools": tools, "input": input});
    let r = send(&h, &body).await;
    let mut mock_calls = function_calls(&r.json());
    // The next turn resends the whole history.
    input.push(json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "The build has no target."}]}));
    input.push(json!({"role": "user", "content": "add one"}));
    let body = json!({"model": "gpt-5.1", "tools": tools, "input": input});
    let r = send(&h, &body).await;
    mock_calls += function_calls(&r.json());

    let expected = |m: &str| {
        let failures = |tool| {
            metric(
                m,
                "toolwarden_tool_failures_total",
                &[("tool", tool), ("basis", "explicit")],
            )
        };
        failures("shell") == 2.0 && failures("apply_patch") == 1.0
    };
    let m = h.metrics_when(expected).await;
    assert!(expected(&m), "{m}");

    let stats = h.finish().await;
    let tools: Vec<(&str, u64, u64)> = (stats.tools.iter())
        .map(|t| (t.tool.as_str(), t.calls, t.failures))
        .collect();
    assert!(tools.contains(&("shell", 3, 2)), "{tools:?}");
    assert!(tools.contains(&("apply_patch", 2, 1)), "{tools:?}");
    // Five built-in calls, and the function calls the mock's answers made.
    assert_eq!(stats.totals.calls, 5 + mock_calls, "{:?}", stats.totals);
    let excerpts: Vec<(&str, &str)> = (stats.recent_failures.iter())
        .map(|f| (f.call_id.as_str(), f.excerpt.as_deref().unwrap_or("")))
        .collect();
    assert!(
        excerpts.contains(&(
            "call_make",
            "make: *** No rule to make target 'all'.  Stop."
        )),
        "{excerpts:?}"
    );
    assert!(
        excerpts.contains(&("call_delete", "gone.txt does not exist")),
        "{excerpts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_shell_call_is_repaired_with_a_shell_output() {
    let mut h = Harness::with(Default::default(), |c| c.repair = RepairMode::Fix).await;
    let body = json!({"model": "gpt-5.1", "tools": [{"type": "shell"}], "input": [
        {"role": "user", "content": "list"},
        {"type": "shell_call", "call_id": "call_ls", "action": {"commands": ["ls"]}},
        {"role": "user", "content": "never mind"}]});
    let r = send(&h, &body).await;
    assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
    let sent: Value = serde_json::from_slice(&h.mock.take_received()[0].body).unwrap();
    let output = &sent["input"][2];
    assert_eq!(output["type"], "shell_call_output", "{sent}");
    assert_eq!(output["call_id"], "call_ls");
    assert_eq!(output["output"][0]["outcome"]["exit_code"], 1);
    let stats = h.finish().await;
    assert_eq!(stats.repairs.len(), 1, "{:?}", stats.repairs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_search_items_are_read_and_a_client_search_is_a_call() {
    let mut h = Harness::start().await;
    let tools = json!([{"type": "tool_search", "execution": "client",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]);
    let input = json!([
        {"role": "user", "content": "what is the weather, and then a stock price"},
        {"type": "tool_search_call", "id": "ts_0", "execution": "server", "call_id": null,
            "status": "completed", "arguments": {"query": "weather"}},
        {"type": "tool_search_output", "id": "tso_0", "execution": "server", "call_id": null,
            "status": "completed", "tools": [{"type": "function", "name": "get_weather", "parameters": {}}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_w", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_w", "output": "sunny"},
        {"type": "tool_search_call", "id": "ts_1", "execution": "client", "call_id": "call_ts",
            "status": "completed", "arguments": {"query": "stock"}},
        {"type": "tool_search_output", "execution": "client", "call_id": "call_ts",
            "status": "completed", "tools": []}
    ]);
    let body = json!({"model": "gpt-5.5", "store": false, "tools": tools, "input": input});
    let r = send(&h, &body).await;
    let answer = r.json();
    let mock_calls = function_calls(&answer);
    let output = answer["output"].as_array().map_or(&[][..], Vec::as_slice);
    let mock_weather = (output.iter())
        .filter(|i| i["type"] == "function_call" && i["name"] == "get_weather")
        .count() as u64;
    let results = |m: &str, tool| metric(m, "toolwarden_tool_results_total", &[("tool", tool)]);
    let expected = |m: &str| results(m, "get_weather") == 1.0 && results(m, "tool_search") == 1.0;
    let m = h.metrics_when(expected).await;
    assert!(expected(&m), "{m}");
    assert_eq!(
        metric(&m, "toolwarden_unparsed_requests_total", &[]),
        0.0,
        "{m}"
    );
    let stats = h.finish().await;
    let tools: Vec<(&str, u64)> = (stats.tools.iter())
        .map(|t| (t.tool.as_str(), t.calls))
        .collect();
    assert!(
        tools.contains(&("get_weather", 1 + mock_weather)),
        "{tools:?}"
    );
    assert!(tools.contains(&("tool_search", 1)), "{tools:?}");
    assert_eq!(stats.totals.calls, 2 + mock_calls, "{:?}", stats.totals);
}
