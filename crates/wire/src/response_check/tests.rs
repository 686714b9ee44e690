//! `check_response`: every response shape the dialects send passes, empty
//! or without calls included; other dialects' bodies, error bodies and
//! streams are refused with a message that says what was expected.

use toolwarden_testkit::fixture;

use super::*;

fn ok(dialect: Dialect, body: &str) {
    if let Err(e) = check_response(dialect, body.as_bytes()) {
        panic!("{dialect} refused {body}: {e}");
    }
}

fn refused(dialect: Dialect, body: &str) -> WireError {
    match check_response(dialect, body.as_bytes()) {
        Ok(()) => panic!("{dialect} took {body} for a response"),
        Err(e) => e,
    }
}

const CHAT: &str = r#"{"id":"x","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;

#[test]
fn responses_of_each_dialect_pass_empty_ones_included() {
    use Dialect::*;
    ok(
        Anthropic,
        r#"{"id":"m","type":"message","role":"assistant","content":[],"stop_reason":"end_turn"}"#,
    );
    ok(
        Anthropic,
        r#"{"type":"message","role":"assistant","stop_reason":"max_tokens"}"#,
    );
    ok(Anthropic, r#"{"content":[{"type":"text","text":"done"}]}"#);
    ok(OpenAiChat, CHAT);
    ok(OpenAiChat, r#"{"choices":[]}"#);
    ok(OpenAiChat, r#"{"object":"chat.completion","choices":null}"#);
    ok(
        OpenAiResponses,
        r#"{"id":"r","object":"response","status":"completed","output":[]}"#,
    );
    ok(
        OpenAiResponses,
        r#"{"object":"response","status":"incomplete"}"#,
    );
    ok(
        Gemini,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}"#,
    );
    ok(
        Gemini,
        r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}"#,
    );
    ok(Gemini, r#"[{"candidates":[]},{"promptFeedback":{}}]"#);
    ok(
        BedrockConverse,
        r#"{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"end_turn","usage":{}}"#,
    );
    ok(BedrockConverse, r#"  {"stopReason":"max_tokens"}"#);
}

/// Recorded bodies: an Anthropic message with server tools, Gemini stream
/// chunks (a chunk has a whole response's shape), and the response a
/// Responses stream completes with.
#[test]
fn recorded_bodies_pass() {
    let anthropic = fixture("sse/vercel-ai__anthropic-web-fetch-tool.error.json");
    check_response(Dialect::Anthropic, &anthropic).unwrap();
    let gemini = String::from_utf8(fixture(
        "sse/vercel-ai__google-stream-tool-call-arguments.chunks.txt",
    ))
    .unwrap();
    let chunks: Vec<&str> = gemini.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!chunks.is_empty());
    chunks.iter().for_each(|c| ok(Dialect::Gemini, c));
    let events = String::from_utf8(fixture("sse/vercel-ai__azure-tool-call.1.chunks.txt")).unwrap();
    let completed: Vec<serde_json::Value> = events
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "response.completed")
        .collect();
    assert_eq!(completed.len(), 1);
    ok(
        Dialect::OpenAiResponses,
        &completed[0]["response"].to_string(),
    );
    // The stream's events themselves are not responses.
    refused(Dialect::OpenAiChat, events.lines().next().unwrap());
}

/// Regression (review L2): a Chat body read as Anthropic was "no tool
/// calls", and an agent loop stopped as if the model were done.
#[test]
fn another_dialects_body_is_refused_and_named() {
    let e = refused(Dialect::Anthropic, CHAT);
    assert_eq!(e.kind(), WireErrorKind::Shape);
    let msg = e.to_string();
    assert!(
        msg.contains("whole (non-streaming) body of an Anthropic Messages response"),
        "{msg}"
    );
    assert!(msg.contains("`choices`"), "{msg}");
    for dialect in [
        Dialect::OpenAiResponses,
        Dialect::Gemini,
        Dialect::BedrockConverse,
    ] {
        assert_eq!(refused(dialect, CHAT).kind(), WireErrorKind::Shape);
    }
    let anthropic = r#"{"type":"message","content":[]}"#;
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
    ] {
        refused(dialect, anthropic);
    }
    refused(Dialect::Anthropic, "[1, 2]");
    refused(Dialect::Anthropic, r#""message""#);
    assert!(
        refused(Dialect::Gemini, "{}")
            .to_string()
            .contains("empty object")
    );
}

#[test]
fn error_bodies_and_streams_are_refused() {
    let e = refused(
        Dialect::Anthropic,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    );
    assert!(e.to_string().contains("error response"), "{e}");
    assert!(e.to_string().contains("Overloaded"), "{e}");
    let e = refused(
        Dialect::OpenAiChat,
        r#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#,
    );
    assert!(e.to_string().contains("bad key"), "{e}");

    let sse = "data: {\"choices\":[]}\n\ndata: [DONE]\n\n";
    let e = refused(Dialect::OpenAiChat, sse);
    assert_eq!(e.kind(), WireErrorKind::InvalidJson);
    assert!(e.to_string().contains("server-sent event stream"), "{e}");
    refused(Dialect::Anthropic, "event: message_start\ndata: {}\n\n");
    assert_eq!(
        refused(Dialect::Anthropic, "").kind(),
        WireErrorKind::Truncated
    );
    assert_eq!(
        refused(Dialect::Anthropic, "{\"content\":[").kind(),
        WireErrorKind::Truncated
    );
}
