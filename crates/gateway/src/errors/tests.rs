use http_body_util::BodyExt;

use http::Response;

use super::*;
use crate::body::{GatewayBody, error_response};

async fn json_of(response: Response<GatewayBody>) -> (StatusCode, serde_json::Value) {
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

fn refused() -> ProxyError {
    ProxyError::new(
        ProxyErrorKind::Connect,
        "api.anthropic.com",
        "tcp connect error: Connection refused (os error 111)",
    )
}

#[tokio::test]
async fn each_dialect_gets_its_own_envelope() {
    let (status, v) = json_of(error_response(Provider::OpenAi, &refused())).await;
    assert_eq!(status, 502);
    assert_eq!(v["error"]["type"], "upstream_error");
    assert_eq!(v["error"]["code"], "upstream_connect_error");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("api.anthropic.com"), "{message}");
    assert!(message.contains("Connection refused"), "{message}");

    let (_, v) = json_of(error_response(Provider::Anthropic, &refused())).await;
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "api_error");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not connect")
    );

    // Bedrock: AWS's shape, and the exception named as AWS clients read it.
    let response = error_response(Provider::Bedrock, &refused());
    assert_eq!(
        response.headers()["x-amzn-errortype"],
        "ServiceUnavailableException"
    );
    let (status, v) = json_of(response).await;
    assert_eq!(status, 502);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Connection refused")
    );

    let timeout = ProxyError::first_byte_timeout("gemini.example", Duration::from_millis(250));
    let (status, v) = json_of(error_response(Provider::Gemini, &timeout)).await;
    assert_eq!(status, 504);
    assert_eq!(v["error"]["code"], 504);
    assert_eq!(v["error"]["status"], "DEADLINE_EXCEEDED");
    assert!(v["error"]["message"].as_str().unwrap().contains("250 ms"));
    // The type Anthropic's API gives each status.
    let (status, v) = json_of(error_response(Provider::Anthropic, &timeout)).await;
    assert_eq!(
        (status.as_u16(), &v["error"]["type"]),
        (504, &serde_json::json!("timeout_error"))
    );
    let too_large = ProxyError::new(ProxyErrorKind::BodyTooLarge, "h", "too large");
    let (status, v) = json_of(error_response(Provider::Anthropic, &too_large)).await;
    assert_eq!(
        (status.as_u16(), &v["error"]["type"]),
        (413, &serde_json::json!("request_too_large"))
    );
    let (status, v) = json_of(error_response(Provider::Gemini, &refused())).await;
    assert_eq!(
        (status.as_u16(), &v["error"]["status"]),
        (502, &serde_json::json!("UNAVAILABLE"))
    );
}

#[test]
fn stream_events_match_the_dialect() {
    let err = ProxyError::new(ProxyErrorKind::MidStream, "h", "connection reset");
    let anthropic = stream_error_event(Provider::Anthropic, Some(Dialect::Anthropic), &err);
    let text = std::str::from_utf8(&anthropic).unwrap();
    assert!(
        text.starts_with("event: error\ndata: {\"type\":\"error\""),
        "{text}"
    );
    assert!(text.ends_with("\n\n"));
    let openai = stream_error_event(Provider::OpenAi, Some(Dialect::OpenAiChat), &err);
    assert!(openai.starts_with(b"data: {\"error\":{"));
    let gemini = stream_error_event(Provider::Gemini, Some(Dialect::Gemini), &err);
    let data: serde_json::Value =
        serde_json::from_slice(gemini.strip_prefix(b"data: ").unwrap()).unwrap();
    assert_eq!(data["error"]["status"], "UNAVAILABLE");
    let responses = stream_error_event(Provider::OpenAi, Some(Dialect::OpenAiResponses), &err);
    let text = std::str::from_utf8(&responses).unwrap();
    let data = text.strip_prefix("event: error\ndata: ").unwrap();
    let data: serde_json::Value = serde_json::from_str(data.trim_end()).unwrap();
    assert_eq!(data["type"], "error");
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("connection reset")
    );
}

#[test]
fn statuses() {
    assert_eq!(refused().status(), 502);
    let big = ProxyError::new(ProxyErrorKind::BodyTooLarge, "h", "over 10 bytes");
    assert_eq!(big.status(), 413);
}

#[test]
fn chain_text_skips_repeats() {
    let inner = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
    let outer = std::io::Error::other(inner);
    let err = ProxyError::from_client_error("h", &outer);
    assert_eq!(err.kind(), ProxyErrorKind::Reset);
    assert!(err.to_string().ends_with(": refused"), "{err}");
}
