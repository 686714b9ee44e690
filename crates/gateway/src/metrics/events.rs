//! Named telemetry: each thing the gateway counts is a typed event here,
//! emitted with [`Metrics::emit`](super::Metrics::emit). The metric names
//! and label values live in this module and [`super`]; call sites name the
//! event and its typed fields, never a string label.
//!
//! ```
//! use toolwarden_gateway::metrics::{Metrics, events::{UnparsedReason, UnparsedResponse}};
//!
//! let metrics = Metrics::new();
//! metrics.emit(UnparsedResponse { reason: UnparsedReason::TooLarge });
//! assert!(metrics.render(Default::default())
//!     .contains("toolwarden_unparsed_responses_total{reason=\"too_large\"} 1"));
//! ```

use std::time::Duration;

use toolwarden_wire::{DefectKind, Dialect};

use super::Metrics;
use crate::routes::Provider;

/// Something counted: it knows which series it moves.
pub trait Event {
    /// Count this event in `metrics`.
    fn record(&self, metrics: &Metrics);
}

/// Why a response body was not parsed for tool calls (the `reason` label
/// of `toolwarden_unparsed_responses_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnparsedReason {
    /// In a content coding the gateway does not read.
    Compressed,
    /// Larger than `response_parse_limit` (or decoded larger); or a
    /// stream whose calls and arguments outgrew it, recorded as far as
    /// they were kept.
    TooLarge,
    /// Not the dialect's shape, or corrupt in its coding.
    Invalid,
    /// The parser failed (caught).
    ParserError,
    /// A binary event-stream frame that could not be read.
    MalformedFrame,
    /// No room for its copy, or for its stream's parse to grow:
    /// `max_buffered_response_bytes` were held.
    NoRoom,
}

/// A response body not parsed; it passed through unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnparsedResponse {
    /// Why.
    pub reason: UnparsedReason,
}

/// A dialect-route request body that could not be parsed (forwarded unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnparsedRequest {
    /// Whose route it came on.
    pub provider: Provider,
}

/// One repair change applied to a forwarded body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepairApplied {
    /// The body's dialect.
    pub dialect: Dialect,
    /// The defect repaired.
    pub defect: DefectKind,
}

/// Why the gateway refused a request without forwarding or recording it
/// (the `reason` label of `toolwarden_refused_requests_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// It named a host a gateway bound to a loopback address does not
    /// answer (`crate::rebinding`, setting `allowed_hosts`).
    ForeignHost,
    /// A web page's form or text `POST` from another site
    /// (`crate::local::is_cross_site_form`).
    CrossSite,
}

/// A request refused before it was forwarded or recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRefused {
    /// Why.
    pub reason: RefusalReason,
}

/// Why a Vertex AI Live socket went to the endpoint it falls back to
/// (`vertex_upstream`'s absence: the `global` one) rather than its
/// location's (the `reason` label of `toolwarden_vertex_live_fallbacks_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FallbackReason {
    /// Its first message named no well-formed location: not a `setup`
    /// whose `model` is `projects/{p}/locations/{l}/…` (another message,
    /// binary data, not JSON).
    NoLocation,
    /// It sent no message within `client_head_timeout_ms`.
    Timeout,
}

pub use crate::server_tls::HandshakeFailure;

/// A client's TLS handshake that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsHandshakeFailed {
    /// Why.
    pub reason: HandshakeFailure,
}

/// A Vertex AI Live socket sent to the fallback endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VertexLiveFallback {
    /// Why.
    pub reason: FallbackReason,
}

/// A proxied request finished (or failed): its status and timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpstreamFinished {
    /// Where it went.
    pub provider: Provider,
    /// The status the client got (the gateway's own 502/504 included).
    pub status: u16,
    /// Request sent → response finished.
    pub latency: Duration,
    /// The gateway's own processing time on the request path.
    pub overhead: Duration,
}

// === impl UnparsedReason ===

impl UnparsedReason {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            UnparsedReason::Compressed => "compressed",
            UnparsedReason::TooLarge => "too_large",
            UnparsedReason::Invalid => "invalid",
            UnparsedReason::ParserError => "parser_error",
            UnparsedReason::MalformedFrame => "malformed_frame",
            UnparsedReason::NoRoom => "no_room",
        }
    }
}

// === impl FallbackReason ===

impl FallbackReason {
    /// Every reason, in the order `/metrics` lists them.
    pub const ALL: [FallbackReason; 2] = [FallbackReason::NoLocation, FallbackReason::Timeout];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackReason::NoLocation => "no_location",
            FallbackReason::Timeout => "timeout",
        }
    }
}

// === impl RefusalReason ===

impl RefusalReason {
    /// Every reason, in the order `/metrics` lists them.
    pub const ALL: [RefusalReason; 2] = [RefusalReason::ForeignHost, RefusalReason::CrossSite];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::ForeignHost => "foreign_host",
            RefusalReason::CrossSite => "cross_site",
        }
    }
}

// === impl Event ===

impl Event for RequestRefused {
    fn record(&self, metrics: &Metrics) {
        metrics.refused_requests.inc(&[self.reason.as_str()]);
    }
}

impl Event for TlsHandshakeFailed {
    fn record(&self, metrics: &Metrics) {
        metrics.tls_handshakes_failed.inc(&[self.reason.as_str()]);
    }
}

impl Event for VertexLiveFallback {
    fn record(&self, metrics: &Metrics) {
        metrics.vertex_live_fallbacks.inc(&[self.reason.as_str()]);
    }
}

impl Event for UnparsedResponse {
    fn record(&self, metrics: &Metrics) {
        metrics.unparsed_responses.inc(&[self.reason.as_str()]);
    }
}

impl Event for UnparsedRequest {
    fn record(&self, metrics: &Metrics) {
        metrics.unparsed_requests.inc(&[self.provider.as_str()]);
    }
}

impl Event for RepairApplied {
    fn record(&self, metrics: &Metrics) {
        metrics
            .repairs
            .inc(&[self.dialect.as_str(), self.defect.as_str()]);
    }
}

impl Event for UpstreamFinished {
    fn record(&self, metrics: &Metrics) {
        let status = self.status.to_string();
        metrics
            .upstream_requests
            .inc(&[self.provider.as_str(), &status]);
        metrics.upstream_latency[self.provider.index()].observe(self.latency);
        metrics.overhead.observe(self.overhead);
    }
}
