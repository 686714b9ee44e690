//! Each provider's error envelope, authentication check and the texts the
//! real APIs use.

use http::{HeaderMap, StatusCode};
use toolwarden_wire::Dialect;

use crate::json::Obj;

/// Which provider's conventions apply (OpenAI covers Chat and Responses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Provider {
    pub(crate) fn of(dialect: Dialect) -> Provider {
        match dialect {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => Provider::OpenAi,
            Dialect::Anthropic => Provider::Anthropic,
            // The mock serves no Bedrock route yet (issue 18's gateway half
            // adds them, with AWS's own error envelope and SigV4 checks).
            Dialect::BedrockConverse => Provider::Anthropic,
            Dialect::Gemini => Provider::Gemini,
        }
    }

    /// Pass-through paths (`GET /v1/models`) are told apart as the gateway
    /// does: Anthropic when `anthropic-version` or `x-api-key` is present.
    pub(crate) fn from_headers(headers: &HeaderMap, path: &str) -> Provider {
        if path.starts_with("/v1beta/") || headers.contains_key("x-goog-api-key") {
            Provider::Gemini
        } else if headers.contains_key("anthropic-version") || headers.contains_key("x-api-key") {
            Provider::Anthropic
        } else {
            Provider::OpenAi
        }
    }
}

/// An error body in the provider's envelope.
///
/// - Anthropic: `{"type":"error","error":{"type":KIND,"message":…}}`
/// - OpenAI: `{"error":{"message":…,"type":KIND,"param":…,"code":…}}`
/// - Gemini: `{"error":{"code":STATUS,"message":…,"status":GRPC_STATUS}}`
pub(crate) fn error_body(
    provider: Provider,
    status: StatusCode,
    kind: &str,
    param: Option<&str>,
    code: Option<&str>,
    message: &str,
) -> String {
    match provider {
        Provider::Anthropic => {
            let inner = Obj::new().str("type", kind).str("message", message).done();
            Obj::new().str("type", "error").raw("error", &inner).done()
        }
        Provider::OpenAi => {
            let inner = Obj::new()
                .str("message", message)
                .str("type", kind)
                .opt_str("param", param)
                .opt_str("code", code)
                .done();
            Obj::new().raw("error", &inner).done()
        }
        Provider::Gemini => {
            let inner = Obj::new()
                .num("code", u64::from(status.as_u16()))
                .str("message", message)
                .str("status", grpc_status(status))
                .done();
            Obj::new().raw("error", &inner).done()
        }
    }
}

fn grpc_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        500 => "INTERNAL",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

/// A 400 for a request the provider rejects (pairing defect or unreadable
/// body). `param` is OpenAI's `param` (`messages` / `input`).
pub(crate) fn invalid_request(dialect: Dialect, message: &str) -> String {
    let param = match dialect {
        Dialect::OpenAiResponses => Some("input"),
        _ => Some("messages"),
    };
    error_body(
        Provider::of(dialect),
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        param,
        None,
        message,
    )
}

/// The text a provider uses for a body that is not valid JSON.
pub(crate) fn unparsable_text(provider: Provider, detail: &str) -> String {
    match provider {
        Provider::Anthropic => format!("There was an error parsing the body: {detail}"),
        Provider::OpenAi => format!(
            "We could not parse the JSON body of your request. ({detail}) (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
        ),
        Provider::Gemini => format!("Invalid JSON payload received. {detail}"),
    }
}

/// The API key the request carries for this provider, if any.
///
/// Anthropic: `x-api-key` or `Authorization: Bearer`; OpenAI:
/// `Authorization: Bearer`; Gemini: `x-goog-api-key` or `?key=`.
pub(crate) fn api_key<'a>(
    provider: Provider,
    headers: &'a HeaderMap,
    query: Option<&'a str>,
) -> Option<&'a str> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let bearer = || {
        header("authorization")
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    match provider {
        Provider::Anthropic => header("x-api-key").or_else(bearer),
        Provider::OpenAi => bearer(),
        Provider::Gemini => header("x-goog-api-key").or_else(|| {
            query?
                .split('&')
                .find_map(|kv| kv.strip_prefix("key="))
                .filter(|k| !k.is_empty())
        }),
    }
}

/// `None` when authenticated; otherwise the provider's status and error
/// body: 401 for Anthropic and OpenAI; Gemini answers 403
/// `PERMISSION_DENIED` without a key and 400 `INVALID_ARGUMENT` with a
/// wrong one.
pub(crate) fn check_auth(
    provider: Provider,
    headers: &HeaderMap,
    query: Option<&str>,
    expected: Option<&str>,
) -> Option<(StatusCode, String)> {
    let found = api_key(provider, headers, query);
    let message = match (found, expected) {
        (Some(k), Some(want)) if k == want => return None,
        (Some(_), None) => return None,
        (Some(k), Some(_)) => match provider {
            Provider::Anthropic => "invalid x-api-key".to_string(),
            Provider::OpenAi => format!(
                "Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.",
                redact(k)
            ),
            Provider::Gemini => "API key not valid. Please pass a valid API key.".to_string(),
        },
        (None, _) => match provider {
            Provider::Anthropic => "x-api-key header is required".to_string(),
            Provider::OpenAi => "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).".to_string(),
            Provider::Gemini => "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.".to_string(),
        },
    };
    let (status, kind, code) = match provider {
        Provider::Anthropic => (StatusCode::UNAUTHORIZED, "authentication_error", None),
        Provider::OpenAi => (
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            found.is_some().then_some("invalid_api_key"),
        ),
        Provider::Gemini if found.is_some() => (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", None),
        Provider::Gemini => (StatusCode::FORBIDDEN, "PERMISSION_DENIED", None),
    };
    Some((
        status,
        error_body(provider, status, kind, None, code, &message),
    ))
}

/// OpenAI shows the key's first and last characters only.
fn redact(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

/// The Responses WebSocket `error` event of a message the API refuses
/// with a 400: the error as over HTTP (`type`, `code`, `message`, `param`; openai-python
/// `ResponseWsErrorError`), with its status.
pub(crate) fn ws_error_event(code: Option<&str>, param: &str, message: &str) -> bytes::Bytes {
    let error = serde_json::json!({
        "type": "error",
        "status": 400,
        "error": {
            "type": "invalid_request_error",
            "code": code,
            "message": message,
            "param": param,
        },
    });
    bytes::Bytes::from(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn anthropic_accepts_x_api_key_or_bearer() {
        let p = Provider::Anthropic;
        assert!(check_auth(p, &headers(&[("x-api-key", "k")]), None, None).is_none());
        assert!(check_auth(p, &headers(&[("authorization", "Bearer k")]), None, None).is_none());
        let (status, body) = check_auth(p, &headers(&[]), None, None).unwrap();
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "authentication_error");
    }

    #[test]
    fn openai_needs_bearer_and_checks_expected_key() {
        let p = Provider::OpenAi;
        assert!(check_auth(p, &headers(&[("x-api-key", "k")]), None, None).is_some());
        let h = headers(&[("authorization", "Bearer sk-wrong-key-123")]);
        let (status, body) = check_auth(p, &h, None, Some("sk-right")).unwrap();
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], "invalid_api_key");
        assert!(!body.contains("sk-wrong-key-123"), "{body}");
        assert!(check_auth(p, &h, None, Some("sk-wrong-key-123")).is_none());
    }

    #[test]
    fn gemini_accepts_header_or_query_key() {
        let p = Provider::Gemini;
        assert!(check_auth(p, &headers(&[("x-goog-api-key", "k")]), None, None).is_none());
        assert!(check_auth(p, &headers(&[]), Some("alt=sse&key=k"), None).is_none());
        let (status, body) = check_auth(p, &headers(&[]), Some("alt=sse"), None).unwrap();
        assert_eq!(status, StatusCode::FORBIDDEN);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], 403);
        assert_eq!(v["error"]["status"], "PERMISSION_DENIED");
        let (status, body) = check_auth(
            p,
            &headers(&[("x-goog-api-key", "bad")]),
            None,
            Some("good"),
        )
        .unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], 400);
        assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");
    }

    #[test]
    fn invalid_request_envelopes() {
        let v: serde_json::Value =
            serde_json::from_str(&invalid_request(Dialect::OpenAiChat, "bad")).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}})
        );
        let v: serde_json::Value =
            serde_json::from_str(&invalid_request(Dialect::Gemini, "bad")).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}})
        );
        let v: serde_json::Value =
            serde_json::from_str(&invalid_request(Dialect::Anthropic, "bad")).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})
        );
    }
}
