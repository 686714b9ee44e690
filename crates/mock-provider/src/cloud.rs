//! The cloud endpoints (issue 18), at their real paths (under `/azure`,
//! `/vertex` or `/bedrock` too, as a gateway may forward them):
//!
//! - Azure OpenAI: `POST /openai/deployments/{d}/chat/completions?api-version=…`,
//!   `/openai/deployments/{d}/responses`, `/openai/v1/chat/completions`,
//!   `/openai/v1/responses`; `api-key` or `Authorization: Bearer` (401 in
//!   OpenAI's envelope without); a Chat stream begins with a chunk whose
//!   `choices` is empty and which carries `prompt_filter_results`, as Azure's do;
//! - Vertex AI: `…/publishers/google/models/{m}:generateContent` /
//!   `:streamGenerateContent` (Gemini) and `…/publishers/anthropic/models/{m}:rawPredict`
//!   / `:streamRawPredict` (Anthropic Messages); a Bearer token required
//!   (401 `UNAUTHENTICATED` without);
//! - Bedrock Runtime: `/model/{id}/invoke` (an Anthropic message) and
//!   `/invoke-with-response-stream` (each Anthropic stream event in an
//!   event-stream `chunk` frame as `{"bytes":"<base64>"}`), `/converse`
//!   and `/converse-stream` (Bedrock Converse, ConverseStream frames). The SigV4
//!   signature is verified as AWS does when [`crate::MockOptions::aws_key`]
//!   is set: the canonical request rebuilt from the request as received
//!   (the path encoded once more, the headers named in `SignedHeaders`, the
//!   body's SHA-256), signed with the test key and compared — a mismatch
//!   gets AWS's 403 `InvalidSignatureException`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_credential_types::Credentials;
use aws_sigv4::{
    http_request::{
        PercentEncodingMode, SignableBody, SignableRequest, SigningSettings, sign as sigv4_sign,
    },
    sign::v4,
};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use toolwarden_wire::Dialect;

use crate::envelope::{self, Provider};

/// Which cloud a request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cloud {
    Azure,
    Vertex,
    Bedrock,
}

/// A cloud model route: the dialect, the model in the path, whether the
/// path asks for a stream (Gemini's method, Bedrock's
/// `invoke-with-response-stream`) and Gemini's `?alt=sse`.
#[derive(Debug)]
pub(crate) struct CloudRoute {
    pub cloud: Cloud,
    pub dialect: Dialect,
    pub model: Option<String>,
    pub path_stream: bool,
    pub gemini_sse: bool,
}

/// The route of a cloud `POST`, if `path` is one.
pub(crate) fn route(path: &str, query: Option<&str>) -> Option<CloudRoute> {
    let path = ["/azure", "/vertex", "/bedrock"]
        .iter()
        .find_map(|p| path.strip_prefix(p).filter(|r| r.starts_with('/')))
        .unwrap_or(path);
    let gemini_sse = query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
    let make = |cloud, dialect, model: Option<&str>, path_stream| CloudRoute {
        cloud,
        dialect,
        model: model.map(String::from),
        path_stream,
        gemini_sse,
    };
    if let Some(rest) = path.strip_prefix("/openai/") {
        let op = match rest.strip_prefix("deployments/") {
            Some(d) => d.split_once('/')?.1,
            None => rest.strip_prefix("v1/")?,
        };
        let dialect = match op {
            "chat/completions" => Dialect::OpenAiChat,
            "responses" => Dialect::OpenAiResponses,
            _ => return None,
        };
        return Some(make(Cloud::Azure, dialect, None, false));
    }
    if let Some(rest) = path.strip_prefix("/model/") {
        let (id, op) = rest.rsplit_once('/')?;
        let (dialect, stream) = match op {
            "invoke" => (Dialect::Anthropic, false),
            "invoke-with-response-stream" => (Dialect::Anthropic, true),
            "converse" => (Dialect::BedrockConverse, false),
            "converse-stream" => (Dialect::BedrockConverse, true),
            _ => return None,
        };
        return Some(make(Cloud::Bedrock, dialect, Some(id), stream));
    }
    let rest = ["/v1/projects/", "/v1beta1/projects/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?;
    let (resource, method) = rest.rsplit_once(':')?;
    let (publisher, model) = resource
        .split_once("/publishers/")?
        .1
        .split_once("/models/")?;
    let (dialect, stream) = match (publisher, method) {
        ("google", "generateContent") => (Dialect::Gemini, false),
        ("google", "streamGenerateContent") => (Dialect::Gemini, true),
        ("anthropic", "rawPredict" | "streamRawPredict") => (Dialect::Anthropic, false),
        _ => return None,
    };
    Some(make(Cloud::Vertex, dialect, Some(model), stream))
}

/// The test key the mock checks Bedrock signatures with.
#[derive(Debug, Clone)]
pub struct AwsTestKey {
    /// `AKID…`
    pub access_key_id: String,
    /// The secret.
    pub secret_access_key: String,
}

/// A refusal: status, extra headers, body.
pub(crate) type Denied = (StatusCode, Vec<(String, String)>, String);

/// `None` when the request is authenticated for its cloud; else the status
/// and body the cloud answers.
pub(crate) fn check_auth(
    route: &CloudRoute,
    parts: &http::request::Parts,
    body: &[u8],
    api_key: Option<&str>,
    aws_key: Option<&AwsTestKey>,
    google_token: Option<&str>,
) -> Option<Denied> {
    let headers = &parts.headers;
    match route.cloud {
        Cloud::Azure => {
            let key = header(headers, "api-key").or_else(|| bearer(headers));
            let ok = match (key, api_key) {
                (Some(k), Some(want)) => k == want,
                (Some(_), None) => true,
                (None, _) => false,
            };
            (!ok).then(|| {
                let message = "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.";
                let body = envelope::error_body(
                    Provider::OpenAi,
                    StatusCode::UNAUTHORIZED,
                    "invalid_request_error",
                    None,
                    Some("401"),
                    message,
                );
                (StatusCode::UNAUTHORIZED, Vec::new(), body)
            })
        }
        Cloud::Vertex => {
            let message = match (bearer(headers), google_token) {
                (None, _) => {
                    "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential."
                }
                (Some(got), Some(want)) if got != want => {
                    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
                }
                _ => return None,
            };
            let body = envelope::error_body(
                Provider::Gemini,
                StatusCode::UNAUTHORIZED,
                "",
                None,
                None,
                message,
            );
            Some((StatusCode::UNAUTHORIZED, Vec::new(), body))
        }
        Cloud::Bedrock => {
            let key = aws_key?;
            verify_sigv4(parts, body, key).err().map(|(kind, message)| {
                let body = crate::json::Obj::new().str("message", &message).done();
                let error_type =
                    format!("{kind}:http://internal.amazon.com/coral/com.amazon.coral.service/");
                (
                    StatusCode::FORBIDDEN,
                    vec![("x-amzn-errortype".to_string(), error_type)],
                    body,
                )
            })
        }
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    header(headers, "authorization")?
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

const SIGNATURE_MISMATCH: &str = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";

/// Check a SigV4 `authorization` as AWS does. Errors: the AWS error type
/// and message.
pub(crate) fn verify_sigv4(
    parts: &http::request::Parts,
    body: &[u8],
    key: &AwsTestKey,
) -> Result<(), (&'static str, String)> {
    let missing = || {
        (
            "MissingAuthenticationTokenException",
            "Missing Authentication Token".to_string(),
        )
    };
    let auth = header(&parts.headers, "authorization").ok_or_else(missing)?;
    let rest = auth.strip_prefix("AWS4-HMAC-SHA256 ").ok_or_else(|| {
        (
            "IncompleteSignatureException",
            format!("Authorization header requires 'Credential' parameter. Authorization={auth}"),
        )
    })?;
    let field = |name: &str| {
        rest.split(',')
            .map(str::trim)
            .find_map(|kv| kv.strip_prefix(name))
            .map(str::to_string)
    };
    let incomplete = || {
        (
            "IncompleteSignatureException",
            "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature'"
                .to_string(),
        )
    };
    let credential = field("Credential=").ok_or_else(incomplete)?;
    let signed_headers = field("SignedHeaders=").ok_or_else(incomplete)?;
    let signature = field("Signature=").ok_or_else(incomplete)?;
    let scope: Vec<&str> = credential.split('/').collect();
    let [akid, _date, region, service, "aws4_request"] = scope[..] else {
        return Err(incomplete());
    };
    if akid != key.access_key_id {
        return Err((
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".to_string(),
        ));
    }
    let amz_date = header(&parts.headers, "x-amz-date").ok_or_else(incomplete)?;
    let time = parse_amz_date(amz_date).ok_or_else(incomplete)?;
    let names: Vec<&str> = signed_headers.split(';').collect();
    let mut pairs = Vec::new();
    for name in &names {
        for value in parts.headers.get_all(*name) {
            let value = value.to_str().map_err(|_| incomplete())?;
            pairs.push((*name, value));
        }
    }
    let host = header(&parts.headers, "host").ok_or_else(incomplete)?;
    let uri = format!(
        "http://{host}{}",
        parts.uri.path_and_query().map_or("/", |pq| pq.as_str())
    );
    let signable = SignableRequest::new(
        parts.method.as_str(),
        &uri,
        pairs.into_iter(),
        SignableBody::Bytes(body),
    )
    .map_err(|_| incomplete())?;
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Double;
    // Sign exactly what the client listed.
    settings.excluded_headers = Some(Vec::new());
    let token = header(&parts.headers, "x-amz-security-token").map(String::from);
    let identity = Credentials::new(
        &key.access_key_id,
        &key.secret_access_key,
        token,
        None,
        "mock",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|_| incomplete())?
        .into();
    let (_, expected) = sigv4_sign(signable, &params)
        .map_err(|_| incomplete())?
        .into_parts();
    if expected != signature {
        return Err(("InvalidSignatureException", SIGNATURE_MISMATCH.to_string()));
    }
    Ok(())
}

/// `20251125T173000Z` → the time.
fn parse_amz_date(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?))
}

/// Shape a default reply as the cloud sends it: Azure's first
/// `prompt_filter_results` chunk, Bedrock's event-stream frames.
pub(crate) fn shape_reply(
    route: &CloudRoute,
    headers: &mut [(String, String)],
    chunks: Vec<Bytes>,
    streaming: bool,
) -> Vec<Bytes> {
    match route.cloud {
        Cloud::Azure if streaming && route.dialect == Dialect::OpenAiChat => {
            let first = Bytes::from_static(
                b"data: {\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\",\"object\":\"\",\"prompt_filter_results\":[{\"prompt_index\":0,\"content_filter_results\":{\"hate\":{\"filtered\":false,\"severity\":\"safe\"},\"self_harm\":{\"filtered\":false,\"severity\":\"safe\"},\"sexual\":{\"filtered\":false,\"severity\":\"safe\"},\"violence\":{\"filtered\":false,\"severity\":\"safe\"}}}]}\n\n",
            );
            std::iter::once(first).chain(chunks).collect()
        }
        Cloud::Bedrock if streaming => {
            for (k, v) in headers.iter_mut() {
                if k.eq_ignore_ascii_case("content-type") {
                    *v = "application/vnd.amazon.eventstream".to_string();
                }
            }
            // ConverseStream: already event-stream frames.
            if route.dialect == Dialect::BedrockConverse {
                return chunks;
            }
            let text: Vec<u8> = chunks.concat();
            String::from_utf8_lossy(&text)
                .split("\n\n")
                .filter_map(|event| {
                    let data: Vec<&str> = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:").map(str::trim_start))
                        .collect();
                    (!data.is_empty()).then(|| {
                        Bytes::from(toolwarden_wire::eventstream::encode_invoke_chunk(
                            data.join("\n").as_bytes(),
                        ))
                    })
                })
                .collect()
        }
        _ => chunks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amz_dates() {
        let t = parse_amz_date("20251124T160000Z").unwrap();
        assert_eq!(
            t.duration_since(UNIX_EPOCH).unwrap().as_secs(),
            1_764_000_000
        );
        assert!(parse_amz_date("2025-11-24").is_none());
    }

    #[test]
    fn routes() {
        let r = route(
            "/bedrock/model/anthropic.claude%3A0/invoke-with-response-stream",
            None,
        )
        .unwrap();
        assert_eq!(
            (r.cloud, r.dialect, r.path_stream),
            (Cloud::Bedrock, Dialect::Anthropic, true)
        );
        let r = route(
            "/openai/deployments/gpt-4o/chat/completions",
            Some("api-version=2024-10-21"),
        )
        .unwrap();
        assert_eq!((r.cloud, r.dialect), (Cloud::Azure, Dialect::OpenAiChat));
        let r = route(
            "/v1beta1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
            Some("alt=sse"),
        )
        .unwrap();
        assert!(r.path_stream && r.gemini_sse);
        assert!(route("/v1/messages", None).is_none());
    }

    fn signed(path: &str, key: &AwsTestKey) -> http::request::Parts {
        let mut parts = http::Request::post(format!("http://127.0.0.1:1{path}"))
            .header("host", "127.0.0.1:1")
            .header("x-stainless-lang", "python")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        let creds = Credentials::new(&key.access_key_id, &key.secret_access_key, None, None, "t");
        let identity = creds.into();
        let mut settings = SigningSettings::default();
        settings.percent_encoding_mode = PercentEncodingMode::Double;
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region("us-east-1")
            .name("bedrock")
            .time(SystemTime::now())
            .settings(settings)
            .build()
            .unwrap()
            .into();
        let pairs: Vec<(&str, &str)> = parts
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_str().unwrap()))
            .collect();
        let uri = format!("http://127.0.0.1:1{path}");
        let signable =
            SignableRequest::new("POST", &uri, pairs.into_iter(), SignableBody::Bytes(b"{}"))
                .unwrap();
        let (instructions, _) = sigv4_sign(signable, &params).unwrap().into_parts();
        let mut req = http::Request::new(());
        *req.headers_mut() = parts.headers.clone();
        instructions.apply_to_request_http1x(&mut req);
        parts.headers = req.headers().clone();
        parts
    }

    #[test]
    fn a_signature_is_checked_like_aws() {
        let key = AwsTestKey {
            access_key_id: "AKIDMOCK".into(),
            secret_access_key: "mock-secret".into(),
        };
        let parts = signed("/model/anthropic.claude%3A0/invoke", &key);
        assert_eq!(verify_sigv4(&parts, b"{}", &key), Ok(()));
        // Another body, another header value, another key: refused.
        assert_eq!(
            verify_sigv4(&parts, b"{ }", &key).unwrap_err().0,
            "InvalidSignatureException"
        );
        let mut changed = parts.clone();
        changed
            .headers
            .insert("x-stainless-lang", "js".parse().unwrap());
        assert_eq!(
            verify_sigv4(&changed, b"{}", &key).unwrap_err().0,
            "InvalidSignatureException"
        );
        let other = AwsTestKey {
            access_key_id: "AKIDMOCK".into(),
            secret_access_key: "other".into(),
        };
        assert_eq!(
            verify_sigv4(&parts, b"{}", &other).unwrap_err().0,
            "InvalidSignatureException"
        );
        let mut unsigned = parts.clone();
        unsigned.headers.remove("authorization");
        assert_eq!(
            verify_sigv4(&unsigned, b"{}", &key).unwrap_err().0,
            "MissingAuthenticationTokenException"
        );
    }
}
