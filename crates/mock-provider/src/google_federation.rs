//! The Google services workload identity federation goes through
//! (`external_account` credentials), served by the mock so that a
//! gateway's credentials file can name it:
//!
//! - Security Token Service's token exchange (`POST /v1/token`, form
//!   `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` with
//!   `audience`, `scope`, `requested_token_type`, `subject_token` and
//!   `subject_token_type`), which checks the subject token against
//!   [`GoogleTestKey::subject_token`] and answers OAuth's JSON, or its
//!   `invalid_grant` 400;
//! - IAM Credentials' `generateAccessToken` (`POST
//!   /v1/projects/-/serviceAccounts/{email}:generateAccessToken`, the
//!   federated token as `Authorization: Bearer`, JSON body with `scope`),
//!   answered `{"accessToken", "expireTime"}`, or 401 in Google's error
//!   envelope.
//!
//! Both issue [`GoogleTestKey::access_token`], the token the mock's Vertex
//! routes require. And a workload's own token as a CI runner serves it
//! (GitHub Actions' OIDC endpoint: `GET /oidc/token?audience=…` with
//! `Authorization: Bearer` [`ACTIONS_REQUEST_TOKEN`], answered
//! `{"count":…, "value": subject token}`).

use std::time::SystemTime;

use bytes::Bytes;
use http::{Method, StatusCode, request::Parts};

use crate::cloud_auth::{GoogleTestKey, Reply, url_form};

/// The bearer token the mock's OIDC endpoint requires (a runner's
/// `ACTIONS_ID_TOKEN_REQUEST_TOKEN`).
pub const ACTIONS_REQUEST_TOKEN: &str = "mock-actions-request-token";

/// The token exchange's grant type.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// Serve a token exchange or a `generateAccessToken`, or `None` when
/// `parts` is neither.
pub(crate) fn serve(key: &GoogleTestKey, parts: &Parts, path: &str, body: &Bytes) -> Option<Reply> {
    let bearer = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        });
    if parts.method == Method::GET && path == "/oidc/token" {
        if bearer != Some(ACTIONS_REQUEST_TOKEN) {
            return Some((StatusCode::UNAUTHORIZED, "text/plain", String::new()));
        }
        let answer = crate::json::Obj::new()
            .num("count", 1)
            .str("value", &key.subject_token)
            .done();
        return Some((StatusCode::OK, "application/json", answer));
    }
    if parts.method != Method::POST {
        return None;
    }
    if path == "/v1/token" {
        return Some(exchange(key, body));
    }
    let email = path
        .strip_prefix("/v1/projects/-/serviceAccounts/")?
        .strip_suffix(":generateAccessToken")?;
    let asked: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    if email.is_empty() || bearer != Some(key.access_token.as_str()) {
        return Some(google_error(StatusCode::UNAUTHORIZED, "UNAUTHENTICATED"));
    }
    if !asked["scope"].is_array() {
        return Some(google_error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"));
    }
    let expires = SystemTime::now() + key.expires_in;
    Some((
        StatusCode::OK,
        "application/json",
        crate::json::Obj::new()
            .str("accessToken", &key.access_token)
            .str("expireTime", &crate::clock::iso8601(expires))
            .done(),
    ))
}

/// `POST /v1/token`: the token exchange (see the module docs).
fn exchange(key: &GoogleTestKey, body: &[u8]) -> Reply {
    let form = url_form(body);
    let get = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let refused = if get("grant_type") != Some(TOKEN_EXCHANGE) {
        Some("unsupported_grant_type")
    } else if get("audience").is_none_or(str::is_empty)
        || get("subject_token_type").is_none_or(str::is_empty)
        || get("requested_token_type") != Some("urn:ietf:params:oauth:token-type:access_token")
        || get("scope").is_none_or(str::is_empty)
    {
        Some("invalid_request")
    } else if get("subject_token") != Some(key.subject_token.as_str()) {
        Some("invalid_grant")
    } else {
        None
    };
    match refused {
        None => (
            StatusCode::OK,
            "application/json",
            crate::json::Obj::new()
                .str("access_token", &key.access_token)
                .str(
                    "issued_token_type",
                    "urn:ietf:params:oauth:token-type:access_token",
                )
                .str("token_type", "Bearer")
                .num("expires_in", key.expires_in.as_secs())
                .done(),
        ),
        Some(error) => (
            StatusCode::BAD_REQUEST,
            "application/json",
            crate::json::Obj::new()
                .str("error", error)
                .str("error_description", "The token exchange was refused.")
                .done(),
        ),
    }
}

/// Google's JSON error envelope.
fn google_error(status: StatusCode, kind: &str) -> Reply {
    (
        status,
        "application/json",
        format!(
            r#"{{"error":{{"code":{},"message":"The request was refused.","status":"{kind}"}}}}"#,
            status.as_u16()
        ),
    )
}
