//! The headers each API sends with its answers, errors included: the
//! request id on every answer, and on an error the headers a client's
//! retry logic reads.
//!
//! - request ids: Anthropic `request-id`, OpenAI `x-request-id`, Bedrock
//!   `x-amzn-requestid` (Gemini sends none the SDKs read; the mock's
//!   `x-mock-request-id` stands in);
//! - 429: `retry-after` (seconds) and the provider's rate-limit headers,
//!   the exhausted count at 0: Anthropic `anthropic-ratelimit-requests-*` /
//!   `-tokens-*` (`-reset` an RFC 3339 time; Anthropic's "Rate limits"
//!   docs), OpenAI `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`
//!   (`-reset` a duration such as `1s`; OpenAI's "Rate limits" guide). The
//!   SDKs wait `retry-after-ms` / `retry-after` before retrying and retry
//!   whatever `x-should-retry` says (anthropic-sdk-python and openai-python
//!   `_base_client.py`), so a gateway must pass them on unchanged;
//! - Bedrock: `x-amzn-errortype` on every error, the exception's name
//!   followed by `:` and its namespace (`ValidationException` 400,
//!   `ThrottlingException` 429, `InternalServerException` 500,
//!   `ServiceUnavailableException` 503), which AWS SDKs take the error code
//!   from (botocore's rest-json parser, aws-sdk-js).

use http::{HeaderMap, Method, StatusCode};
use toolwarden_wire::Dialect;

use crate::envelope::Provider;

/// Whose conventions an answer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    Anthropic,
    OpenAi,
    Gemini,
    Bedrock,
}

/// Bedrock's namespace after an `x-amzn-errortype`'s exception name.
const BEDROCK_NAMESPACE: &str = "http://internal.amazon.com/coral/com.amazon.bedrock/";

// === impl Api ===

impl Api {
    /// The API a request to `path` is for: a model route's (cloud routes
    /// by their cloud: Bedrock, else their dialect's provider), a model
    /// listing's by its headers; `None` for the credential endpoints.
    pub(crate) fn of_request(
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Option<Api> {
        if let Some(route) = (method == Method::POST)
            .then(|| crate::cloud::route(path, query))
            .flatten()
        {
            return Some(match route.cloud {
                crate::cloud::Cloud::Bedrock => Api::Bedrock,
                _ => Api::of_dialect(route.dialect),
            });
        }
        Some(match path {
            "/v1/chat/completions" | "/v1/responses" => Api::OpenAi,
            p if p.ends_with("/backend-api/codex/responses") => Api::OpenAi,
            p if crate::compact::is_compact_path(p) => Api::OpenAi,
            "/v1/messages" | "/v1/messages/count_tokens" => Api::Anthropic,
            p if p.ends_with(":generateContent")
                || p.ends_with(":streamGenerateContent")
                || p.ends_with(":countTokens") =>
            {
                Api::Gemini
            }
            p if p.ends_with("/count-tokens") && p.contains("/model/") => Api::Bedrock,
            p if p.starts_with("/v1/") || p.starts_with("/v1beta/") => {
                Api::of_provider(Provider::from_headers(headers, path))
            }
            _ => return None,
        })
    }

    pub(crate) fn of_dialect(dialect: Dialect) -> Api {
        match dialect {
            Dialect::BedrockConverse => Api::Bedrock,
            d => Api::of_provider(Provider::of(d)),
        }
    }

    fn of_provider(provider: Provider) -> Api {
        match provider {
            Provider::Anthropic => Api::Anthropic,
            Provider::OpenAi => Api::OpenAi,
            Provider::Gemini => Api::Gemini,
        }
    }

    /// The header that carries the request id.
    pub(crate) fn request_id_header(self) -> &'static str {
        match self {
            Api::Anthropic => "request-id",
            Api::OpenAi => "x-request-id",
            Api::Gemini => "x-mock-request-id",
            Api::Bedrock => "x-amzn-requestid",
        }
    }

    /// The headers the API sends with an error of `status` (besides the
    /// request id).
    pub(crate) fn error_headers(self, status: StatusCode) -> Vec<(String, String)> {
        let pairs: Vec<(&str, String)> = match (self, status.as_u16()) {
            (Api::Bedrock, code) => bedrock_error_type(code)
                .map(|name| vec![("x-amzn-errortype", format!("{name}:{BEDROCK_NAMESPACE}"))])
                .unwrap_or_default(),
            (Api::Anthropic, 429) => {
                let reset = crate::clock::iso8601(
                    std::time::SystemTime::now() + std::time::Duration::from_secs(1),
                );
                vec![
                    ("retry-after", "1".into()),
                    ("anthropic-ratelimit-requests-limit", "50".into()),
                    ("anthropic-ratelimit-requests-remaining", "0".into()),
                    ("anthropic-ratelimit-requests-reset", reset.clone()),
                    ("anthropic-ratelimit-tokens-limit", "30000".into()),
                    ("anthropic-ratelimit-tokens-remaining", "0".into()),
                    ("anthropic-ratelimit-tokens-reset", reset),
                ]
            }
            (Api::OpenAi, 429) => vec![
                ("retry-after", "1".into()),
                ("x-ratelimit-limit-requests", "500".into()),
                ("x-ratelimit-remaining-requests", "0".into()),
                ("x-ratelimit-reset-requests", "1s".into()),
                ("x-ratelimit-limit-tokens", "30000".into()),
                ("x-ratelimit-remaining-tokens", "0".into()),
                ("x-ratelimit-reset-tokens", "1s".into()),
            ],
            _ => Vec::new(),
        };
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }
}

/// Bedrock's exception for an error status.
fn bedrock_error_type(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "ValidationException",
        403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        429 => "ThrottlingException",
        500 => "InternalServerException",
        503 => "ServiceUnavailableException",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(method: Method, path: &str, headers: &[(&str, &str)]) -> Option<Api> {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        Api::of_request(&method, path, None, &map)
    }

    #[test]
    fn requests_are_told_apart_by_route() {
        assert_eq!(api(Method::POST, "/v1/messages", &[]), Some(Api::Anthropic));
        assert_eq!(
            api(Method::POST, "/v1/responses", &[("x-api-key", "k")]),
            Some(Api::OpenAi)
        );
        assert_eq!(
            api(Method::POST, "/model/m/converse", &[]),
            Some(Api::Bedrock)
        );
        assert_eq!(
            api(Method::POST, "/model/m/invoke", &[]),
            Some(Api::Bedrock)
        );
        assert_eq!(
            api(
                Method::GET,
                "/v1/models",
                &[("anthropic-version", "2023-06-01")]
            ),
            Some(Api::Anthropic)
        );
        assert_eq!(
            api(Method::POST, "/v1beta/models/g:generateContent", &[]),
            Some(Api::Gemini)
        );
        assert_eq!(api(Method::POST, "/token", &[]), None);
        assert_eq!(api(Method::PUT, "/latest/api/token", &[]), None);
    }

    #[test]
    fn rate_limits_say_when_to_retry() {
        let headers = Api::Anthropic.error_headers(StatusCode::TOO_MANY_REQUESTS);
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("retry-after"), Some("1"));
        assert_eq!(get("anthropic-ratelimit-requests-remaining"), Some("0"));
        assert!(
            get("anthropic-ratelimit-tokens-reset")
                .unwrap()
                .ends_with('Z')
        );
        assert!(
            Api::Anthropic
                .error_headers(StatusCode::BAD_REQUEST)
                .is_empty()
        );
        assert_eq!(
            Api::Bedrock.error_headers(StatusCode::TOO_MANY_REQUESTS),
            [(
                "x-amzn-errortype".to_string(),
                format!("ThrottlingException:{BEDROCK_NAMESPACE}")
            )]
        );
    }
}
