//! The Google services workload identity federation goes through
//! (`external_account` credentials), served by the mock so that a
//! gateway's credentials file can name it:
//!
//! - Security Token Service's token exchange (`POST /v1/token`, form
//!   `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` with
//!   `audience`, `scope`, `requested_token_type`, `subject_token` and
//!   `subject_token_type`), which checks the subject token against
//!   [`GoogleTestKey::subject_token`] and answers OAuth's JSON, or its
//!   `invalid_grant` 400; an AWS workload's token (a signed STS
//!   `GetCallerIdentity`, `urn:ietf:params:aws:token-type:aws4_request`) is
//!   checked as Google's STS has AWS check it: its SigV4 signature for `sts`
//!   made with the mock's [`crate::AwsTestKey`] (or the session the mock's
//!   instance metadata serves), and its `x-goog-cloud-target-resource` the
//!   exchange's audience;
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

use crate::AwsTestKey;
use crate::cloud_auth::{GoogleTestKey, Reply, url_form};

/// The bearer token the mock's OIDC endpoint requires (a runner's
/// `ACTIONS_ID_TOKEN_REQUEST_TOKEN`).
pub const ACTIONS_REQUEST_TOKEN: &str = "mock-actions-request-token";

/// The token exchange's grant type.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The subject token type of an AWS workload's signed request.
const AWS_SIGNED_REQUEST: &str = "urn:ietf:params:aws:token-type:aws4_request";

/// The AWS keys whose signature an AWS workload's subject token may
/// carry: the mock's own, and with the session token its instance metadata
/// serves.
pub(crate) fn aws_signers(opts: &crate::MockOptions) -> Vec<AwsTestKey> {
    let Some(key) = &opts.aws_key else {
        return Vec::new();
    };
    let mut signers = vec![key.clone()];
    if let Some(service) = &opts.aws_credential_service {
        let mut served = key.clone();
        served.session_token = Some(service.session_token.clone());
        signers.push(served);
    }
    signers
}

/// Serve a token exchange or a `generateAccessToken`, or `None` when
/// `parts` is neither.
pub(crate) fn serve(
    key: &GoogleTestKey,
    aws: &[AwsTestKey],
    parts: &Parts,
    path: &str,
    body: &Bytes,
) -> Option<Reply> {
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
        return Some(exchange(key, aws, body));
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
fn exchange(key: &GoogleTestKey, aws: &[AwsTestKey], body: &[u8]) -> Reply {
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
    } else if get("subject_token_type") == Some(AWS_SIGNED_REQUEST) {
        let token = get("subject_token").unwrap_or("");
        let audience = get("audience").unwrap_or("");
        aws_caller(token, audience, aws)
            .err()
            .map(|_| "invalid_grant")
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

/// Whether `token` is a `GetCallerIdentity` request for `audience` signed
/// by one of `signers` (see the module docs); why not.
fn aws_caller(token: &str, audience: &str, signers: &[AwsTestKey]) -> Result<(), String> {
    #[derive(serde::Deserialize)]
    struct Signed {
        url: String,
        method: String,
        headers: Vec<Header>,
    }
    #[derive(serde::Deserialize)]
    struct Header {
        key: String,
        value: String,
    }
    let json = percent_encoding::percent_decode_str(token)
        .decode_utf8()
        .map_err(|_| "not UTF-8")?;
    let signed: Signed = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    let uri: http::Uri = signed.url.parse().map_err(|_| "no URL")?;
    let host = uri.host().unwrap_or("");
    let query = url_form(uri.query().unwrap_or("").as_bytes());
    let asks = |k: &str, v: &str| query.iter().any(|(a, b)| a == k && b == v);
    let caller_identity = uri.scheme_str() == Some("https")
        && host.starts_with("sts.")
        && host.ends_with(".amazonaws.com")
        && asks("Action", "GetCallerIdentity")
        && asks("Version", "2011-06-15")
        && signed.method == "POST";
    if !caller_identity {
        return Err(format!(
            "not a GetCallerIdentity: {} {}",
            signed.method, signed.url
        ));
    }
    let mut request = http::Request::post(uri);
    for h in &signed.headers {
        request = request.header(h.key.as_str(), h.value.as_str());
    }
    let (parts, ()) = request.body(()).map_err(|e| e.to_string())?.into_parts();
    let target = parts
        .headers
        .get("x-goog-cloud-target-resource")
        .and_then(|v| v.to_str().ok());
    if target.map(|t| t.trim_start_matches("https:")) != Some(audience) {
        return Err("x-goog-cloud-target-resource is not the audience".to_string());
    }
    let token = parts
        .headers
        .get("x-amz-security-token")
        .and_then(|v| v.to_str().ok());
    let signer = signers
        .iter()
        .find(|k| k.session_token.as_deref() == token)
        .ok_or("an unknown AWS session")?;
    crate::cloud::verify_sigv4(&parts, b"", signer, "sts", SystemTime::now())
        .map_err(|(_, message)| message)
}
