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
    ok(Gemini, r#" [{"candidates":[]}] "#);
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

/// Regression (review L10): `[]` passed as a Gemini response (each of no
/// chunks was fine), so `step` took it for a final turn.
#[test]
fn an_empty_gemini_array_is_not_a_response() {
    for body in ["[]", " [ ] "] {
        let e = refused(Dialect::Gemini, body);
        assert_eq!(e.kind(), WireErrorKind::Shape);
        assert!(e.to_string().ends_with("found an empty JSON array"), "{e}");
    }
    // An array of one error chunk is the error.
    let e = refused(
        Dialect::Gemini,
        r#"[{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}]"#,
    );
    assert!(e.to_string().contains("Resource exhausted"), "{e}");
}

/// Regression (review L10): Bedrock's error body was "an object with
/// `message` (another dialect's response?)".
#[test]
fn bedrock_error_bodies_are_named_with_their_type_and_message() {
    let e = refused(
        Dialect::BedrockConverse,
        r#"{"message":"The security token included in the request is invalid."}"#,
    );
    assert_eq!(e.kind(), WireErrorKind::Shape);
    assert_eq!(
        e.to_string(),
        "unexpected shape: expected a whole (non-streaming) body of a Bedrock Converse response: a JSON object with `output` and `stopReason`; \
         found Bedrock's error response: The security token included in the request is invalid. \
         (its type is in the response's `x-amzn-errortype` header)"
    );
    let e = refused(
        Dialect::BedrockConverse,
        r#"{"__type":"com.amazonaws.bedrock#ValidationException","message":"1 validation error detected"}"#,
    );
    assert!(
        e.to_string().ends_with(
            "found Bedrock's error response: ValidationException: 1 validation error detected"
        ),
        "{e}"
    );
    let e = refused(
        Dialect::BedrockConverse,
        r#"{"Message":"Model is busy","__type":"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}"#,
    );
    assert!(
        e.to_string()
            .ends_with("found Bedrock's error response: ThrottlingException: Model is busy"),
        "{e}"
    );
    // An exception with fields of its own is still the error.
    let e = refused(
        Dialect::BedrockConverse,
        r#"{"message":"upstream said no","originalStatusCode":400,"originalMessage":"no"}"#,
    );
    assert!(
        e.to_string()
            .contains("found Bedrock's error response: upstream said no"),
        "{e}"
    );
    // An Anthropic model through Bedrock `invoke` answers errors AWS's way.
    let e = refused(
        Dialect::Anthropic,
        r#"{"message":"Too many requests, please wait before trying again."}"#,
    );
    assert!(
        e.to_string()
            .contains("found an AWS error response: Too many requests"),
        "{e}"
    );
    // Elsewhere an object with `message` among other keys is not taken for one.
    let e = refused(
        Dialect::OpenAiChat,
        r#"{"message":"hi","role":"assistant"}"#,
    );
    assert!(e.to_string().contains("another dialect's response?"), "{e}");
}

#[test]
fn aws_error_types_are_cut_to_their_name() {
    assert_eq!(
        aws_error_type("ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
        "ValidationException"
    );
    assert_eq!(
        aws_error_type("com.amazonaws.bedrock#ThrottlingException"),
        "ThrottlingException"
    );
    assert_eq!(
        aws_error_type("AccessDeniedException"),
        "AccessDeniedException"
    );
}
