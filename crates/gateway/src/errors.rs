//! Proxy errors and the ONE place that turns them into what the client
//! sees: [`error_response`](crate::body::error_response) (a whole response in the client's own dialect's
//! error envelope) and [`stream_error_event`] (the dialect's error event,
//! appended to a stream that broke midway).
//!
//! Envelopes:
//! - OpenAI `{"error":{"message","type":"upstream_error","code"}}`
//! - Anthropic `{"type":"error","error":{"type","message"}}`, the type
//!   the API gives the status (`invalid_request_error`, `timeout_error`, …)
//! - Gemini `{"error":{"code","message","status"}}`, the status Google's
//!   name for the HTTP one (`DEADLINE_EXCEEDED` for 504, …)

use std::{error::Error as StdError, fmt, time::Duration};

use bytes::Bytes;
use http::StatusCode;

use toolwarden_wire::Dialect;

use crate::routes::Provider;

pub(crate) mod sse_tail;

/// What went wrong proxying a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ProxyErrorKind {
    /// The upstream refused the connection or the connection failed.
    Connect,
    /// The upstream's host name did not resolve.
    Dns,
    /// The TLS handshake with the upstream failed.
    Tls,
    /// Connecting took longer than the connect timeout.
    ConnectTimeout,
    /// No response headers within the first-byte timeout.
    FirstByteTimeout,
    /// The upstream closed or reset the connection before answering.
    Reset,
    /// The upstream answered with bytes that are not an HTTP/1.x response
    /// the gateway can read (an invalid head: a TLS port reached over
    /// `http://`, another protocol, a broken server).
    BadResponse,
    /// The response stream broke after it had started.
    MidStream,
    /// The client's request body exceeds the limit.
    BodyTooLarge,
    /// The client's request body could not be read.
    ClientBody,
    /// The request's body found no room: `max_buffered_request_bytes` of
    /// bodies are held (`crate::limits::body_budget`). Answered 503 with
    /// `retry-after`.
    Overloaded,
    /// The request could not be turned into an upstream request.
    BadRequest,
    /// The request's upstream is not configured (issue 18: Azure, Bedrock).
    NotConfigured,
    /// A form or text `POST` a web page of another site sent through the
    /// user's browser ([`crate::local::is_cross_site_form`]): refused.
    CrossSite,
    /// A request to a gateway bound to a loopback address that names a host
    /// other than its loopback ones and the allowed ones
    /// ([`crate::local::foreign_host`]): refused.
    ForeignHost,
    /// An operation the gateway cannot relay
    /// ([`crate::routes::cloud::unrelayed`]): answered 501, not forwarded.
    NotRelayed,
}

/// A proxy error: kind, the upstream host concerned, and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProxyError {
    kind: ProxyErrorKind,
    upstream: String,
    detail: String,
}

// === impl ProxyError ===

impl ProxyError {
    /// A new error about `upstream` (a host name).
    pub(crate) fn new(
        kind: ProxyErrorKind,
        upstream: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        ProxyError {
            kind,
            upstream: upstream.into(),
            detail: detail.into(),
        }
    }

    /// The first-byte timeout elapsed.
    pub(crate) fn first_byte_timeout(upstream: &str, after: Duration) -> Self {
        ProxyError::new(
            ProxyErrorKind::FirstByteTimeout,
            upstream,
            format!("no response within {} ms", after.as_millis()),
        )
    }

    /// Classify an upstream client error by walking its source chain.
    pub(crate) fn from_client_error(upstream: &str, err: &(dyn StdError + 'static)) -> Self {
        let detail = chain_text(err);
        let mut kind = ProxyErrorKind::Reset;
        let mut source: Option<&(dyn StdError + 'static)> = Some(err);
        let connect = err
            .downcast_ref::<hyper_util::client::legacy::Error>()
            .is_some_and(|e| e.is_connect());
        if connect {
            kind = ProxyErrorKind::Connect;
        }
        while let Some(e) = source {
            if e.downcast_ref::<hyper::Error>()
                .is_some_and(hyper::Error::is_parse)
            {
                kind = ProxyErrorKind::BadResponse;
                break;
            }
            if e.downcast_ref::<rustls::Error>().is_some() {
                kind = ProxyErrorKind::Tls;
                break;
            }
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::TimedOut && connect {
                    kind = ProxyErrorKind::ConnectTimeout;
                    break;
                }
                if io
                    .get_ref()
                    .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
                {
                    kind = ProxyErrorKind::Tls;
                    break;
                }
            }
            if connect && e.to_string() == "dns error" {
                kind = ProxyErrorKind::Dns;
                break;
            }
            source = e.source();
        }
        ProxyError::new(kind, upstream, detail)
    }

    /// Whether the upstream closed or reset the connection before
    /// answering (not a timeout, a refused connect or a bad answer).
    pub(crate) fn is_reset(&self) -> bool {
        self.kind == ProxyErrorKind::Reset
    }

    /// The error cause first, for a place that keeps only its first bytes
    /// (a WebSocket close reason: 123, RFC 6455 §5.5): its code, then the
    /// detail in the cause's own words (the transfer coding's name, the TLS
    /// failure, the OS error), then the host, which the client knows.
    pub(crate) fn cause_first(&self) -> String {
        format!(
            "{}: {} (upstream {})",
            self.code(),
            self.detail,
            self.upstream
        )
    }

    /// The `retry-after` its answer carries, seconds: the gateway's own
    /// overload passes.
    pub(crate) fn retry_after(&self) -> Option<&'static str> {
        (self.kind == ProxyErrorKind::Overloaded).then_some("1")
    }

    /// What went wrong.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> ProxyErrorKind {
        self.kind
    }

    /// The status the client gets.
    pub(crate) fn status(&self) -> StatusCode {
        match self.kind {
            ProxyErrorKind::FirstByteTimeout => StatusCode::GATEWAY_TIMEOUT,
            ProxyErrorKind::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ProxyErrorKind::ClientBody | ProxyErrorKind::BadRequest => StatusCode::BAD_REQUEST,
            ProxyErrorKind::Overloaded => StatusCode::SERVICE_UNAVAILABLE,
            // Not the client's fault, but no retry can help.
            ProxyErrorKind::NotConfigured => StatusCode::NOT_FOUND,
            ProxyErrorKind::NotRelayed => StatusCode::NOT_IMPLEMENTED,
            ProxyErrorKind::CrossSite | ProxyErrorKind::ForeignHost => StatusCode::FORBIDDEN,
            _ => StatusCode::BAD_GATEWAY,
        }
    }

    /// A short machine-readable code (OpenAI envelope `code`).
    pub(crate) fn code(&self) -> &'static str {
        match self.kind {
            ProxyErrorKind::Connect => "upstream_connect_error",
            ProxyErrorKind::Dns => "upstream_dns_error",
            ProxyErrorKind::Tls => "upstream_tls_error",
            ProxyErrorKind::ConnectTimeout => "upstream_connect_timeout",
            ProxyErrorKind::FirstByteTimeout => "upstream_timeout",
            ProxyErrorKind::Reset => "upstream_reset",
            ProxyErrorKind::BadResponse => "upstream_bad_response",
            ProxyErrorKind::MidStream => "upstream_stream_error",
            ProxyErrorKind::BodyTooLarge => "request_too_large",
            ProxyErrorKind::ClientBody => "request_body_error",
            ProxyErrorKind::Overloaded => "gateway_overloaded",
            ProxyErrorKind::BadRequest => "bad_request",
            ProxyErrorKind::NotConfigured => "upstream_not_configured",
            ProxyErrorKind::CrossSite => "cross_site_request",
            ProxyErrorKind::ForeignHost => "foreign_host",
            ProxyErrorKind::NotRelayed => "not_relayed",
        }
    }
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = &self.upstream;
        let detail = &self.detail;
        f.write_str("toolwarden gateway: ")?;
        match self.kind {
            ProxyErrorKind::Connect => write!(f, "could not connect to upstream {host}: {detail}"),
            ProxyErrorKind::Dns => write!(f, "could not resolve upstream {host}: {detail}"),
            ProxyErrorKind::Tls => write!(f, "TLS handshake with upstream {host} failed: {detail}"),
            ProxyErrorKind::ConnectTimeout => {
                write!(f, "timed out connecting to upstream {host}: {detail}")
            }
            ProxyErrorKind::FirstByteTimeout => {
                write!(f, "timed out waiting for upstream {host}: {detail}")
            }
            ProxyErrorKind::Reset => {
                write!(
                    f,
                    "upstream {host} closed the connection before answering: {detail}"
                )
            }
            ProxyErrorKind::BadResponse => write!(
                f,
                "upstream {host} sent no HTTP response the gateway can read: {detail}"
            ),
            ProxyErrorKind::MidStream => write!(f, "stream from upstream {host} broke: {detail}"),
            ProxyErrorKind::BodyTooLarge
            | ProxyErrorKind::ClientBody
            | ProxyErrorKind::Overloaded
            | ProxyErrorKind::BadRequest => write!(f, "request not forwarded to {host}: {detail}"),
            ProxyErrorKind::NotConfigured
            | ProxyErrorKind::CrossSite
            | ProxyErrorKind::ForeignHost
            | ProxyErrorKind::NotRelayed => write!(f, "{detail}"),
        }
    }
}

impl StdError for ProxyError {}

/// `a: b: c` from an error and its sources, skipping repeats.
fn chain_text(err: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    parts.join(": ")
}

// === the one mapping ===

/// The error's status and its JSON body in `provider`'s envelope
/// (`content-type: application/json`).
pub(crate) fn error_body(provider: Provider, err: &ProxyError) -> (StatusCode, Bytes) {
    let status = err.status();
    (status, Bytes::from(envelope(provider, err, status)))
}

/// The dialect's error event for a stream that broke midway.
pub(crate) fn stream_error_event(
    provider: Provider,
    dialect: Option<Dialect>,
    err: &ProxyError,
) -> Bytes {
    let text = match (provider, dialect) {
        (_, Some(Dialect::OpenAiResponses)) => {
            // The Responses API's own stream error event.
            let message = serde_json::Value::String(err.to_string());
            format!(
                "event: error\ndata: {{\"type\":\"error\",\"code\":\"{}\",\"message\":{message},\"param\":null}}\n\n",
                err.code()
            )
        }
        (Provider::Anthropic, _) | (Provider::Vertex, Some(Dialect::Anthropic)) => {
            format!(
                "event: error\ndata: {}\n\n",
                envelope(Provider::Anthropic, err, err.status())
            )
        }
        (Provider::OpenAi | Provider::Gemini | Provider::Azure | Provider::Vertex, _) => {
            format!("data: {}\n\n", envelope(provider, err, err.status()))
        }
        // An AWS event stream ends with an exception frame, as Bedrock's
        // own do (issue 18; only after a whole frame: see
        // `crate::cloud::frames`).
        (Provider::Bedrock, _) => {
            let payload = envelope(Provider::Bedrock, err, err.status());
            return Bytes::from(toolwarden_wire::eventstream::encode_exception(
                "internalServerException",
                payload.as_bytes(),
            ));
        }
    };
    Bytes::from(text)
}

/// The Bedrock Runtime exception a gateway error of `status` is sent as
/// (`x-amzn-ErrorType`).
pub(crate) fn aws_error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        // 501: an operation the gateway does not relay; not to be retried.
        400 | 413 | 501 => "ValidationException",
        401 | 403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        429 => "ThrottlingException",
        500 => "InternalServerException",
        _ => "ServiceUnavailableException",
    }
}

/// The envelope as the provider writes it (key order included).
fn envelope(provider: Provider, err: &ProxyError, status: StatusCode) -> String {
    let message = serde_json::Value::String(err.to_string());
    match provider {
        Provider::OpenAi | Provider::Azure => format!(
            r#"{{"error":{{"message":{message},"type":"upstream_error","code":"{}"}}}}"#,
            err.code()
        ),
        Provider::Anthropic => format!(
            r#"{{"type":"error","error":{{"type":"{}","message":{message}}}}}"#,
            anthropic_error_type(status)
        ),
        // AWS's own shape (the client reads `message`).
        Provider::Bedrock => format!(r#"{{"message":{message}}}"#),
        Provider::Gemini | Provider::Vertex => format!(
            r#"{{"error":{{"code":{},"message":{message},"status":"{}"}}}}"#,
            status.as_u16(),
            google_status(status)
        ),
    }
}

/// The Anthropic API's error `type` for a status, as it names its own.
fn anthropic_error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        503 => "overloaded_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// Google's canonical status name for an HTTP status, as the Gemini API
/// and Vertex AI write it.
fn google_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        500 => "INTERNAL",
        504 => "DEADLINE_EXCEEDED",
        s if s >= 500 => "UNAVAILABLE",
        _ => "INVALID_ARGUMENT",
    }
}

#[cfg(test)]
mod tests;
