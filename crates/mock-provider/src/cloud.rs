//! The cloud endpoints (issue 18), at their real paths (under `/azure`,
//! `/vertex` or `/bedrock` too, as a gateway may forward them):
//!
//! - Azure OpenAI: `POST /openai/deployments/{d}/chat/completions?api-version=…`,
//!   `/openai/deployments/{d}/responses`, `/openai/v1/chat/completions`,
//!   `/openai/v1/responses`, and the preview API's `/openai/responses?api-version=…`
//!   (the `AzureOpenAI` clients' `responses.create` without a deployment);
//!   a deployment's or the preview's path without `api-version` is 404
//!   "Resource not found"; `api-key` or `Authorization: Bearer` (401 in
//!   OpenAI's envelope without); a Chat stream begins with a chunk whose
//!   `choices` is empty and which carries `prompt_filter_results`, as Azure's do;
//! - Vertex AI: `…/publishers/google/models/{m}:generateContent` /
//!   `:streamGenerateContent` (Gemini) and `…/publishers/anthropic/models/{m}:rawPredict`
//!   / `:streamRawPredict` (Anthropic Messages); a Bearer token required
//!   (401 `UNAUTHENTICATED` without); express mode's
//!   `/{v1|v1beta1}/publishers/…` (no project) takes an API key instead
//!   (`x-goog-api-key` or `key=`; 400 for one other than `--api-key`);
//!   `…/projects/{p}/locations/{l}/endpoints/{e}/chat/completions` (OpenAI
//!   Chat Completions, a Bearer token);
//! - Bedrock Runtime: `/model/{id}/invoke` (an Anthropic message) and
//!   `/invoke-with-response-stream` (each Anthropic stream event in an
//!   event-stream `chunk` frame as `{"bytes":"<base64>"}`), `/converse`
//!   and `/converse-stream` (Bedrock Converse, ConverseStream frames). The SigV4
//!   signature is verified as AWS does when [`crate::MockOptions::aws_key`]
//!   is set: the canonical request rebuilt from the request as received
//!   (the path encoded once more, the headers named in `SignedHeaders`, the
//!   body's SHA-256), signed with the test key for the region and service
//!   the mock serves (the key's region, `bedrock`) and compared — a
//!   mismatch gets AWS's 403 `InvalidSignatureException`. As AWS, it also
//!   refuses a scope for another region, service or day, an `x-amz-date`
//!   more than 5 minutes from its clock (the host's, or
//!   [`AwsTestKey::clock_offset`] from it; a refusal's `Date` is that
//!   clock, as AWS's are), `host` left unsigned, and a
//!   session token other than the key's (see [`verify_sigv4`]). Without a
//!   key, any SigV4 `authorization` passes but none at all gets 403
//!   `MissingAuthenticationTokenException`.

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
    /// Vertex AI express mode's `/{v1|v1beta1}/publishers/…` (no
    /// project): an API key authenticates it.
    pub express: bool,
}

/// What Bedrock accepts: SigV4 signatures with the test key, and a
/// Bedrock API key.
#[derive(Clone, Copy, Default)]
pub(crate) struct AwsAuth<'a> {
    pub key: Option<&'a AwsTestKey>,
    pub api_key: Option<&'a str>,
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
        // The model id as the API reads it: boto3 sends Bedrock's
        // `…-v1:0` as `…-v1%3A0`.
        model: model.map(|m| {
            percent_encoding::percent_decode_str(m)
                .decode_utf8_lossy()
                .into_owned()
        }),
        path_stream,
        gemini_sse,
        express: false,
    };
    if let Some(rest) = path.strip_prefix("/openai/") {
        let op = match rest.strip_prefix("deployments/") {
            Some(d) => d.split_once('/')?.1,
            // the preview API's Responses, no deployment in the path
            None if rest == "responses" => rest,
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
    let version = ["/v1/", "/v1beta1/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?;
    // Express mode (an API key, no project): `publishers/…` right after
    // the version.
    let (rest, express) = match version.strip_prefix("projects/") {
        Some(rest) => (rest, false),
        None => (version.strip_prefix("publishers/")?, true),
    };
    // The OpenAI-compatible endpoint:
    // `{p}/locations/{l}/endpoints/{e}/chat/completions`.
    if !express
        && let [p, "locations", l, "endpoints", e, "chat", "completions"] =
            rest.split('/').collect::<Vec<_>>()[..]
        && ![p, l, e].iter().any(|s| s.is_empty())
    {
        return Some(make(Cloud::Vertex, Dialect::OpenAiChat, None, false));
    }
    let (resource, method) = rest.rsplit_once(':')?;
    let publishers = if express {
        resource
    } else {
        resource.split_once("/publishers/")?.1
    };
    let (publisher, model) = publishers.split_once("/models/")?;
    let (dialect, stream) = match (publisher, method) {
        ("google", "generateContent") => (Dialect::Gemini, false),
        ("google", "streamGenerateContent") => (Dialect::Gemini, true),
        ("anthropic", "rawPredict" | "streamRawPredict") => (Dialect::Anthropic, false),
        _ => return None,
    };
    Some(CloudRoute {
        express,
        ..make(Cloud::Vertex, dialect, Some(model), stream)
    })
}

/// The test key the mock checks Bedrock signatures with, and where it is
/// valid: a signature must be scoped to [`Self::region`] and to the
/// service the route belongs to (`bedrock`; `sts` for the mock's STS),
/// whatever scope the request names, as AWS checks it.
#[derive(Debug, Clone)]
pub struct AwsTestKey {
    /// `AKID…`
    pub access_key_id: String,
    /// The secret.
    pub secret_access_key: String,
    /// The region the mock serves (AWS refuses a signature scoped to
    /// another).
    pub region: String,
    /// Temporary credentials' session token: when set, a request must
    /// carry exactly this `x-amz-security-token`; when not, it must carry
    /// none (AWS: "The security token included in the request is invalid").
    pub session_token: Option<String>,
    /// How far AWS's clock is ahead of this host's, seconds (negative:
    /// behind): the signing time is checked against it, and a refusal's
    /// `Date` header gives it, as AWS's do.
    pub clock_offset: i64,
}

impl AwsTestKey {
    /// A long-term key (no session token) for `us-east-1`.
    pub fn new(access_key_id: &str, secret_access_key: &str) -> AwsTestKey {
        AwsTestKey {
            access_key_id: access_key_id.to_string(),
            secret_access_key: secret_access_key.to_string(),
            region: "us-east-1".to_string(),
            session_token: None,
            clock_offset: 0,
        }
    }

    /// The same key served by an AWS whose clock is `secs` ahead of this
    /// host's (negative: behind).
    pub fn with_clock_offset(mut self, secs: i64) -> AwsTestKey {
        self.clock_offset = secs;
        self
    }

    /// The time on AWS's clock.
    pub(crate) fn now(&self) -> SystemTime {
        let offset = Duration::from_secs(self.clock_offset.unsigned_abs());
        if self.clock_offset < 0 {
            SystemTime::now() - offset
        } else {
            SystemTime::now() + offset
        }
    }

    /// The same key as temporary credentials with this session token.
    pub fn with_session_token(mut self, token: &str) -> AwsTestKey {
        self.session_token = Some(token.to_string());
        self
    }
}

/// The signing name of Bedrock Runtime (`bedrock`, not `bedrock-runtime`:
/// the SDKs' `sigv4` trait for the service).
pub(crate) const BEDROCK_SERVICE: &str = "bedrock";

/// How far `x-amz-date` may be from the server's clock (AWS: 5 minutes).
const MAX_SKEW: Duration = Duration::from_secs(300);

/// A refusal: status, extra headers, body.
pub(crate) type Denied = (StatusCode, Vec<(String, String)>, String);

/// `None` when the request is authenticated for its cloud; else the status
/// and body the cloud answers.
pub(crate) fn check_auth(
    route: &CloudRoute,
    parts: &http::request::Parts,
    body: &[u8],
    api_key: Option<&str>,
    aws: AwsAuth<'_>,
    google_token: Option<&str>,
) -> Option<Denied> {
    let headers = &parts.headers;
    match route.cloud {
        // A deployment's path names its API version, as the preview API's
        // Responses does (`/openai/v1/…` does not): without `api-version`,
        // Azure finds no resource.
        Cloud::Azure
            if (parts.uri.path().contains("/openai/deployments/")
                || parts.uri.path().ends_with("/openai/responses"))
                && !parts.uri.query().is_some_and(|q| {
                    q.split('&').any(|kv| {
                        kv.strip_prefix("api-version=")
                            .is_some_and(|v| !v.is_empty())
                    })
                }) =>
        {
            let body = r#"{"error":{"code":"404","message":"Resource not found"}}"#;
            Some((StatusCode::NOT_FOUND, Vec::new(), body.to_string()))
        }
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
        Cloud::Vertex if route.express => {
            // Express mode: the API key, by header or as `key=`.
            let query_key = parts.uri.query().and_then(|q| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("key="))
                    .filter(|k| !k.is_empty())
            });
            let (status, message) = match (header(headers, "x-goog-api-key").or(query_key), api_key)
            {
                (None, _) => (
                    StatusCode::UNAUTHORIZED,
                    "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
                ),
                (Some(got), Some(want)) if got != want => (
                    StatusCode::BAD_REQUEST,
                    "API key not valid. Please pass a valid API key.",
                ),
                _ => return None,
            };
            let body = envelope::error_body(Provider::Gemini, status, "", None, None, message);
            Some((status, Vec::new(), body))
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
            let now = aws.key.map_or_else(SystemTime::now, AwsTestKey::now);
            // A Bedrock API key: AWS answers a wrong one with a body of its
            // own (`Message`, capitalised).
            if let Some(got) = bearer(headers) {
                if aws.api_key.is_some_and(|want| want != got) {
                    let body = crate::json::Obj::new()
                        .str(
                            "Message",
                            "Authentication failed: Please make sure your API Key is valid.",
                        )
                        .done();
                    let error_type = "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/";
                    let headers = vec![("x-amzn-errortype".to_string(), error_type.to_string())];
                    return Some((StatusCode::FORBIDDEN, headers, body));
                }
                return None;
            }
            let verified = match aws.key {
                Some(key) => verify_sigv4(parts, body, key, BEDROCK_SERVICE, now),
                // No key to check with: still no request without a
                // signature, as AWS answers one.
                None => match header(headers, "authorization") {
                    Some(auth) if auth.starts_with("AWS4-HMAC-SHA256 ") => Ok(()),
                    _ => Err(missing_token()),
                },
            };
            verified.err().map(|(kind, message)| {
                let body = crate::json::Obj::new().str("message", &message).done();
                let error_type =
                    format!("{kind}:http://internal.amazon.com/coral/com.amazon.coral.service/");
                let headers = vec![
                    ("x-amzn-errortype".to_string(), error_type),
                    // AWS's clock, from which the SDKs correct theirs.
                    ("date".to_string(), httpdate::fmt_http_date(now)),
                ];
                (StatusCode::FORBIDDEN, headers, body)
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

fn missing_token() -> (&'static str, String) {
    (
        "MissingAuthenticationTokenException",
        "Missing Authentication Token".to_string(),
    )
}

/// Check a SigV4 `authorization` as AWS does, for `service` in the key's
/// region at time `now`. Errors: the AWS error type and message, in the
/// order and words AWS uses (IAM User Guide, "Troubleshoot signed requests
/// for AWS APIs"):
/// - an unknown key id, or a session token other than the key's (none when
///   it has none): `UnrecognizedClientException` "The security token
///   included in the request is invalid.";
/// - `host` not signed, or no `x-amz-date`: `IncompleteSignatureException`;
/// - a scope whose date is not `x-amz-date`'s day, whose region or service
///   is not the served one, or an `x-amz-date` more than 5 minutes from
///   `now` ("Signature expired: … is now earlier than … (… - 5 min.)", as
///   Bedrock answers it in anthropics/anthropic-sdk-go#122), or a
///   signature that differs: `InvalidSignatureException`.
pub(crate) fn verify_sigv4(
    parts: &http::request::Parts,
    body: &[u8],
    key: &AwsTestKey,
    service: &str,
    now: SystemTime,
) -> Result<(), (&'static str, String)> {
    let auth = header(&parts.headers, "authorization").ok_or_else(missing_token)?;
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
    let invalid = |message: String| ("InvalidSignatureException", message);
    let credential = field("Credential=").ok_or_else(incomplete)?;
    let signed_headers = field("SignedHeaders=").ok_or_else(incomplete)?;
    let signature = field("Signature=").ok_or_else(incomplete)?;
    let scope: Vec<&str> = credential.split('/').collect();
    let [akid, scope_date, region, scope_service, "aws4_request"] = scope[..] else {
        return Err(incomplete());
    };
    let token = header(&parts.headers, "x-amz-security-token");
    if akid != key.access_key_id || token != key.session_token.as_deref() {
        return Err((
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".to_string(),
        ));
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    if !names.contains(&"host") {
        return Err((
            "IncompleteSignatureException",
            "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.".to_string(),
        ));
    }
    let amz_date = header(&parts.headers, "x-amz-date").ok_or_else(|| {
        (
            "IncompleteSignatureException",
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
                .to_string(),
        )
    })?;
    let time = parse_amz_date(amz_date).ok_or_else(incomplete)?;
    let day = &amz_date[..8];
    if scope_date != day {
        return Err(invalid(format!(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{scope_date}' != '{day}', from '{amz_date}'."
        )));
    }
    if region != key.region {
        return Err(invalid(format!(
            "Credential should be scoped to a valid region, not '{region}'. "
        )));
    }
    if scope_service != service {
        return Err(invalid(format!(
            "Credential should be scoped to correct service: '{service}'. "
        )));
    }
    if now.duration_since(time).is_ok_and(|late| late > MAX_SKEW) {
        return Err(invalid(format!(
            "Signature expired: {amz_date} is now earlier than {} ({} - 5 min.)",
            format_amz_date(now - MAX_SKEW),
            format_amz_date(now)
        )));
    }
    if time.duration_since(now).is_ok_and(|early| early > MAX_SKEW) {
        return Err(invalid(format!(
            "Signature not yet current: {amz_date} is still later than {} ({} + 5 min.)",
            format_amz_date(now + MAX_SKEW),
            format_amz_date(now)
        )));
    }
    let mut values = Vec::new();
    for name in &names {
        for value in parts.headers.get_all(*name) {
            let value = value.to_str().map_err(|_| incomplete())?;
            values.push((*name, tabs_as_spaces(value)));
        }
    }
    let pairs: Vec<(&str, &str)> = values.iter().map(|(n, v)| (*n, v.as_ref())).collect();
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
    let identity = Credentials::new(
        &key.access_key_id,
        &key.secret_access_key,
        key.session_token.clone(),
        None,
        "mock",
    )
    .into();
    // The served region and service: a signature made for others differs.
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&key.region)
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
        return Err(invalid(SIGNATURE_MISMATCH.to_string()));
    }
    Ok(())
}

/// A signed header's value with each tab read as a space, as AWS reads it
/// before its canonical request's `Trimall` (which aws-sigv4 applies to
/// spaces only): a value signed with its tab kept is refused (the .NET
/// SDK's signature of `x-amz-meta-test: my\tvalue`, compressing blanks
/// only, got 403 SignatureDoesNotMatch where the Java SDK's, compressing
/// every whitespace, was taken: aws/aws-sdk-net#1222), and botocore signs
/// `' '.join(value.split())` (boto/botocore#1182).
fn tabs_as_spaces(value: &str) -> std::borrow::Cow<'_, str> {
    if value.contains('\t') {
        value.replace('\t', " ").into()
    } else {
        value.into()
    }
}

/// The time as `x-amz-date` writes it (`20251125T173000Z`).
fn format_amz_date(t: SystemTime) -> String {
    // `2025-11-25T17:30:00Z` without its separators.
    crate::clock::iso8601(t).replace(['-', ':'], "")
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
    fn a_bedrock_api_key_is_checked_as_aws_checks_it() {
        let path = "/model/anthropic.claude%3A0/converse";
        let r = route(path, None).unwrap();
        let check = |auth: Option<&str>, api_key: Option<&str>| {
            let mut req = http::Request::post(path);
            if let Some(a) = auth {
                req = req.header("authorization", a);
            }
            let parts = req.body(()).unwrap().into_parts().0;
            let aws = AwsAuth { key: None, api_key };
            check_auth(&r, &parts, b"{}", None, aws, None)
        };
        assert!(check(Some("Bearer bedrock-key-1"), Some("bedrock-key-1")).is_none());
        let (status, headers, body) = check(Some("Bearer other"), Some("bedrock-key-1")).unwrap();
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(headers[0].1.starts_with("AccessDeniedException:"));
        assert!(body.contains("Please make sure your API Key is valid."));
        // No key to check with: any key passes, and no credential at all
        // is still refused.
        assert!(check(Some("Bearer any"), None).is_none());
        assert_eq!(
            check(None, Some("bedrock-key-1")).unwrap().0,
            StatusCode::FORBIDDEN
        );
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
        assert_eq!(r.model.as_deref(), Some("anthropic.claude:0"));
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
        assert!(!r.express);
        // Vertex AI express mode: no project.
        let r = route(
            "/v1/publishers/google/models/gemini-2.5-flash:generateContent",
            None,
        )
        .unwrap();
        assert_eq!((r.cloud, r.dialect), (Cloud::Vertex, Dialect::Gemini));
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-flash"));
        assert!(r.express && !r.path_stream);
        let r = route(
            "/v1/projects/p/locations/us-central1/endpoints/openapi/chat/completions",
            None,
        )
        .unwrap();
        assert_eq!((r.cloud, r.dialect), (Cloud::Vertex, Dialect::OpenAiChat));
        assert!(route("/v1/messages", None).is_none());
        assert!(route("/v1/models/gemini-2.5-flash:generateContent", None).is_none());
    }

    /// A deployment's path needs `api-version`, as Azure's does; the v1
    /// API's does not.
    #[test]
    fn an_azure_deployment_without_api_version_is_not_found() {
        let check = |path_and_query: &str| {
            let (path, query) = path_and_query
                .split_once('?')
                .map_or((path_and_query, None), |(p, q)| (p, Some(q)));
            let r = route(path, query).unwrap();
            let parts = http::Request::post(path_and_query)
                .header("api-key", "k")
                .body(())
                .unwrap()
                .into_parts()
                .0;
            check_auth(&r, &parts, b"{}", Some("k"), AwsAuth::default(), None).map(|d| d.0)
        };
        let deployment = "/openai/deployments/gpt-4o/chat/completions";
        assert_eq!(check(deployment), Some(StatusCode::NOT_FOUND));
        assert_eq!(
            check(&format!("{deployment}?api-version=")),
            Some(StatusCode::NOT_FOUND)
        );
        assert_eq!(
            check(&format!("{deployment}?x=1&api-version=2024-10-21")),
            None
        );
        assert_eq!(check("/azure/openai/v1/responses"), None);
        let preview = "/azure/openai/responses";
        assert_eq!(
            route(preview, None).unwrap().dialect,
            Dialect::OpenAiResponses
        );
        assert_eq!(check(preview), Some(StatusCode::NOT_FOUND));
        assert_eq!(
            check(&format!("{preview}?api-version=2025-04-01-preview")),
            None
        );
        assert!(route("/openai/other", None).is_none());
    }

    /// A request for `path` signed with `key`, for `region` and `service`
    /// at `time`.
    fn signed_as(
        path: &str,
        key: &AwsTestKey,
        region: &str,
        service: &str,
        time: SystemTime,
    ) -> http::request::Parts {
        let mut parts = http::Request::post(format!("http://127.0.0.1:1{path}"))
            .header("host", "127.0.0.1:1")
            .header("x-stainless-lang", "python")
            .header("x-note", "a b")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        let creds = Credentials::new(
            &key.access_key_id,
            &key.secret_access_key,
            key.session_token.clone(),
            None,
            "t",
        );
        let identity = creds.into();
        let mut settings = SigningSettings::default();
        settings.percent_encoding_mode = PercentEncodingMode::Double;
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(region)
            .name(service)
            .time(time)
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

    const PATH: &str = "/model/anthropic.claude%3A0/invoke";

    fn signed(key: &AwsTestKey, time: SystemTime) -> http::request::Parts {
        signed_as(PATH, key, "us-east-1", BEDROCK_SERVICE, time)
    }

    fn verify(
        parts: &http::request::Parts,
        key: &AwsTestKey,
        now: SystemTime,
    ) -> (&'static str, String) {
        verify_sigv4(parts, b"{}", key, BEDROCK_SERVICE, now).unwrap_err()
    }

    #[test]
    fn a_signature_is_checked_like_aws() {
        let key = AwsTestKey::new("AKIDMOCK", "mock-secret");
        let now = SystemTime::now();
        let parts = signed(&key, now);
        assert_eq!(
            verify_sigv4(&parts, b"{}", &key, BEDROCK_SERVICE, now),
            Ok(())
        );
        // Another body, another header value, another key: refused.
        assert_eq!(
            verify_sigv4(&parts, b"{ }", &key, BEDROCK_SERVICE, now)
                .unwrap_err()
                .0,
            "InvalidSignatureException"
        );
        let mut changed = parts.clone();
        changed
            .headers
            .insert("x-stainless-lang", "js".parse().unwrap());
        assert_eq!(verify(&changed, &key, now).0, "InvalidSignatureException");
        // AWS reads a tab as a space (aws/aws-sdk-net#1222): "a\tb" is
        // the "a b" signed, "ab" is not.
        for (value, taken) in [("a\tb", true), ("a \t b", true), ("ab", false)] {
            let mut sent = parts.clone();
            sent.headers.insert("x-note", value.parse().unwrap());
            let verified = verify_sigv4(&sent, b"{}", &key, BEDROCK_SERVICE, now);
            assert_eq!(verified.is_ok(), taken, "{value:?}: {verified:?}");
        }
        let other = AwsTestKey::new("AKIDMOCK", "other");
        assert_eq!(verify(&parts, &other, now).0, "InvalidSignatureException");
        let mut unsigned = parts.clone();
        unsigned.headers.remove("authorization");
        assert_eq!(
            verify(&unsigned, &key, now),
            (
                "MissingAuthenticationTokenException",
                "Missing Authentication Token".to_string()
            )
        );
    }

    #[test]
    fn a_signature_for_another_region_or_service_is_refused() {
        let key = AwsTestKey::new("AKIDMOCK", "mock-secret");
        let now = SystemTime::now();
        let west = signed_as(PATH, &key, "us-west-2", BEDROCK_SERVICE, now);
        assert_eq!(
            verify(&west, &key, now),
            (
                "InvalidSignatureException",
                "Credential should be scoped to a valid region, not 'us-west-2'. ".to_string()
            )
        );
        let runtime = signed_as(PATH, &key, "us-east-1", "bedrock-runtime", now);
        assert_eq!(
            verify(&runtime, &key, now),
            (
                "InvalidSignatureException",
                "Credential should be scoped to correct service: 'bedrock'. ".to_string()
            )
        );
        // A key served for another region refuses the us-east-1 signature.
        let eu = AwsTestKey {
            region: "eu-central-1".into(),
            ..key.clone()
        };
        let ok = signed(&key, now);
        assert!(verify(&ok, &eu, now).1.contains("not 'us-east-1'"));
    }

    #[test]
    fn a_date_outside_five_minutes_or_another_scope_day_is_refused() {
        let key = AwsTestKey::new("AKIDMOCK", "mock-secret");
        let signed_at = parse_amz_date("20251125T170000Z").unwrap();
        let parts = signed(&key, signed_at);
        // Within the window, either way: accepted.
        for skew in [-300i64, -60, 0, 299, 300] {
            let now = if skew < 0 {
                signed_at - Duration::from_secs(skew.unsigned_abs())
            } else {
                signed_at + Duration::from_secs(skew as u64)
            };
            assert_eq!(
                verify_sigv4(&parts, b"{}", &key, BEDROCK_SERVICE, now),
                Ok(()),
                "{skew}"
            );
        }
        let late = signed_at + Duration::from_secs(301);
        assert_eq!(
            verify(&parts, &key, late),
            (
                "InvalidSignatureException",
                "Signature expired: 20251125T170000Z is now earlier than 20251125T170001Z (20251125T170501Z - 5 min.)".to_string()
            )
        );
        let early = signed_at - Duration::from_secs(301);
        assert_eq!(
            verify(&parts, &key, early),
            (
                "InvalidSignatureException",
                "Signature not yet current: 20251125T170000Z is still later than 20251125T165959Z (20251125T165459Z + 5 min.)".to_string()
            )
        );
        // The scope's day must be x-amz-date's.
        let mut other_day = parts.clone();
        other_day
            .headers
            .insert("x-amz-date", "20251126T000100Z".parse().unwrap());
        let now = parse_amz_date("20251126T000100Z").unwrap();
        assert_eq!(
            verify(&other_day, &key, now).1,
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20251125' != '20251126', from '20251126T000100Z'."
        );
    }

    #[test]
    fn temporary_credentials_need_their_session_token() {
        let now = SystemTime::now();
        let temporary = AwsTestKey::new("ASIAMOCK", "mock-secret").with_session_token("tok-1");
        let parts = signed(&temporary, now);
        assert_eq!(
            verify_sigv4(&parts, b"{}", &temporary, BEDROCK_SERVICE, now),
            Ok(())
        );
        let invalid = (
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".to_string(),
        );
        // Signed without the token, or with another one.
        let long_term = AwsTestKey {
            session_token: None,
            ..temporary.clone()
        };
        assert_eq!(verify(&signed(&long_term, now), &temporary, now), invalid);
        let other = temporary.clone().with_session_token("tok-2");
        assert_eq!(verify(&signed(&other, now), &temporary, now), invalid);
        // A token sent for a key that has none.
        assert_eq!(verify(&parts, &long_term, now), invalid);
    }

    #[test]
    fn host_must_be_signed() {
        let key = AwsTestKey::new("AKIDMOCK", "mock-secret");
        let now = SystemTime::now();
        let mut parts = signed(&key, now);
        let auth = parts.headers["authorization"].to_str().unwrap().to_string();
        let stripped = auth.replace("SignedHeaders=host;", "SignedHeaders=");
        assert_ne!(auth, stripped, "{auth}");
        parts
            .headers
            .insert("authorization", stripped.parse().unwrap());
        assert_eq!(
            verify(&parts, &key, now).1,
            "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."
        );
    }
}
