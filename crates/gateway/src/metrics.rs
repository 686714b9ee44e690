//! Prometheus metrics: every metric name is defined here, counted with
//! atomics behind a small label map, and rendered in the text exposition
//! format by [`Metrics::render`] (no metrics crate). What is counted on the
//! request path is a typed event of [`events`], emitted with
//! [`Metrics::emit`].
//!
//! Tool call and failure counters are fed by the store's [`Observer`]
//! callbacks ([`MetricsObserver`]), i.e. after de-duplication: a tool result
//! resent in later turns is counted once.

use std::{
    fmt::Write as _,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

// foldhash, not the standard SipHash: the writer task looks a series up
// for every new call and result, and SipHash of the label values was ~1 %
// of the gateway's CPU (BENCHMARKS.md). Its keys are seeded per map, and a
// map holds at most `MAX_SERIES` series.
use foldhash::{HashMap, HashMapExt};

use crate::{
    recorder::{Observer, RecorderCounters, RequestRecord, ToolCallRecord, ToolResultRecord},
    routes::Provider,
};

pub(crate) mod alerts_board;
pub mod events;
pub(crate) mod otlp_counters;
pub(crate) mod retention_counters;

/// Tool calls the models made, by provider, model and tool.
pub const TOOL_CALLS_TOTAL: &str = "toolwarden_tool_calls_total";
/// Failed tool results (new ones only), by provider, model, tool and basis.
pub const TOOL_FAILURES_TOTAL: &str = "toolwarden_tool_failures_total";
/// Tool results (new ones only), by provider, model and tool: the failure
/// rate's denominator.
pub const TOOL_RESULTS_TOTAL: &str = "toolwarden_tool_results_total";
/// Tokens the providers reported, by provider, model and type (`input`,
/// `output`).
pub const TOKENS_TOTAL: &str = "toolwarden_tokens_total";
/// Always 1, labelled with the gateway's version.
pub const BUILD_INFO: &str = "toolwarden_build_info";
/// Repair changes applied, by dialect and defect.
pub const REPAIRS_TOTAL: &str = "toolwarden_repairs_total";
/// Requests proxied, by provider and status (the gateway's own 502/504 included).
pub const UPSTREAM_REQUESTS_TOTAL: &str = "toolwarden_upstream_requests_total";
/// Request sent → response finished, by provider.
pub const UPSTREAM_LATENCY_SECONDS: &str = "toolwarden_upstream_latency_seconds";
/// The gateway's own processing time on the request path.
pub const GATEWAY_OVERHEAD_SECONDS: &str = "toolwarden_gateway_overhead_seconds";
/// Events the recorder had to drop (queue full).
pub const EVENTS_DROPPED_TOTAL: &str = "toolwarden_events_dropped_total";
/// Events the recorder wrote.
pub const EVENTS_WRITTEN_TOTAL: &str = "toolwarden_events_written_total";
/// Times the JSONL log reached its bound and was rotated.
pub const JSONL_ROTATIONS_TOTAL: &str = "toolwarden_jsonl_rotations_total";
/// Lines the JSONL log lost: batches whose append failed.
pub const JSONL_LINES_LOST_TOTAL: &str = "toolwarden_jsonl_lines_lost_total";
/// Request bodies on dialect routes that could not be parsed (forwarded unchanged).
pub const UNPARSED_REQUESTS_TOTAL: &str = "toolwarden_unparsed_requests_total";
/// Response bodies not parsed for tool calls, by reason (compressed, too large, invalid).
pub const UNPARSED_RESPONSES_TOTAL: &str = "toolwarden_unparsed_responses_total";

/// Requests refused before they were forwarded or recorded, by reason
/// ([`events::RefusalReason`]: a host a loopback-bound gateway does not
/// answer, a web page's cross-site form).
pub const REFUSED_REQUESTS_TOTAL: &str = "toolwarden_refused_requests_total";

/// Vertex AI Live sockets sent to the endpoint they fall back to (the
/// `global` one) rather than their location's, by reason
/// ([`events::FallbackReason`]).
pub const VERTEX_LIVE_FALLBACKS_TOTAL: &str = "toolwarden_vertex_live_fallbacks_total";

/// Client TLS handshakes that failed on a gateway serving HTTPS, by reason
/// ([`events::HandshakeFailure`]).
pub const TLS_HANDSHAKES_FAILED_TOTAL: &str = "toolwarden_tls_handshakes_failed_total";

/// Most distinct label sets per metric; beyond it, values become `other`
/// (model and tool names come from clients and must not grow memory without bound).
/// Each value is also cut to [`MAX_NAME_LEN`](crate::limits::MAX_NAME_LEN)
/// bytes, so a family holds and renders a bounded number of bytes too.
const MAX_SERIES: usize = 10_000;

const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
const OVERHEAD_BUCKETS: &[f64] = &[
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.01,
];

/// All of the gateway's metrics.
#[derive(Debug)]
pub struct Metrics {
    tool_calls: Family,
    tool_failures: Family,
    tool_results: Family,
    tokens: Family,
    repairs: Family,
    upstream_requests: Family,
    unparsed_requests: Family,
    unparsed_responses: Family,
    upstream_latency: [Histogram; Provider::ALL.len()],
    overhead: Histogram,
    /// Requests refused before they were forwarded ([`events::RequestRefused`]).
    refused_requests: Family,
    /// Vertex AI Live sockets that fell back ([`events::VertexLiveFallback`]).
    vertex_live_fallbacks: Family,
    /// Client TLS handshakes that failed ([`events::TlsHandshakeFailed`]).
    tls_handshakes_failed: Family,
    /// Firing alerts and webhook counters (issue 19), rendered with the rest.
    pub(crate) alerts: Arc<alerts_board::AlertsBoard>,
    /// OTLP export counters (issue 19).
    pub(crate) otlp: Arc<otlp_counters::OtlpCounters>,
    /// What retention deleted (issue 14).
    pub(crate) retention: Arc<retention_counters::RetentionCounters>,
}

/// Feeds the tool counters from the store's writer, after de-duplication.
#[derive(Debug, Clone)]
pub struct MetricsObserver(pub Arc<Metrics>);

/// A counter family: label values → count.
#[derive(Debug)]
struct Family {
    labels: &'static [&'static str],
    series: RwLock<HashMap<Box<[String]>, Arc<AtomicU64>>>,
}

#[derive(Debug)]
struct Histogram {
    bounds: &'static [f64],
    /// Per bucket (non-cumulative), plus the +Inf overflow bucket.
    counts: Box<[AtomicU64]>,
    sum_nanos: AtomicU64,
}

// === impl Metrics ===

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Metrics {
        let metrics = Metrics {
            tool_calls: Family::new(&["provider", "model", "tool"]),
            tool_failures: Family::new(&["provider", "model", "tool", "basis"]),
            tool_results: Family::new(&["provider", "model", "tool"]),
            tokens: Family::new(&["provider", "model", "type"]),
            repairs: Family::new(&["dialect", "defect"]),
            upstream_requests: Family::new(&["provider", "status"]),
            unparsed_requests: Family::new(&["provider"]),
            unparsed_responses: Family::new(&["reason"]),
            upstream_latency: std::array::from_fn(|_| Histogram::new(LATENCY_BUCKETS)),
            overhead: Histogram::new(OVERHEAD_BUCKETS),
            refused_requests: Family::new(&["reason"]),
            vertex_live_fallbacks: Family::new(&["reason"]),
            tls_handshakes_failed: Family::new(&["reason"]),
            alerts: Arc::default(),
            otlp: Arc::default(),
            retention: Arc::default(),
        };
        // Each reason is listed from the start, at 0, so an alert on its
        // rate has a series before the first refusal.
        for reason in events::RefusalReason::ALL {
            metrics.refused_requests.add(&[reason.as_str()], 0);
        }
        for reason in events::FallbackReason::ALL {
            metrics.vertex_live_fallbacks.add(&[reason.as_str()], 0);
        }
        for reason in events::HandshakeFailure::ALL {
            metrics.tls_handshakes_failed.add(&[reason.as_str()], 0);
        }
        metrics
    }

    /// Alert notifications and spans handed to their exporters and not yet
    /// delivered or given up: what a shutdown lets finish.
    pub(crate) fn exports_pending(&self) -> (u64, u64) {
        (
            self.alerts.pending.load(Ordering::Relaxed),
            self.otlp.pending.load(Ordering::Relaxed),
        )
    }

    /// Count one [`events`] event: the only way the request path counts.
    pub fn emit(&self, event: impl events::Event) {
        event.record(self);
    }

    /// One repair change (tests: any label values).
    #[cfg(test)]
    fn repair(&self, dialect: &str, defect: &str) {
        self.repairs.inc(&[dialect, defect]);
    }

    /// One finished (or failed) proxied request (tests; else [`events::UpstreamFinished`]).
    #[cfg(test)]
    fn upstream_request(&self, provider: Provider, status: u16, latency: Duration) {
        let status = status.to_string();
        self.upstream_requests.inc(&[provider.as_str(), &status]);
        self.upstream_latency[provider.index()].observe(latency);
    }

    /// The gateway's own time on one request (tests; else [`events::UpstreamFinished`]).
    #[cfg(test)]
    fn overhead(&self, spent: Duration) {
        self.overhead.observe(spent);
    }

    /// A dialect-route request body that could not be parsed; the same
    /// as emitting [`events::UnparsedRequest`] (kept for `ws`, which calls it).
    pub fn unparsed_request(&self, provider: Provider) {
        self.emit(events::UnparsedRequest { provider });
    }

    /// A response body not parsed, and why, as a label (kept for `ws`,
    /// which calls it; elsewhere emit [`events::UnparsedResponse`]).
    pub fn unparsed_response(&self, reason: &str) {
        self.unparsed_responses.inc(&[reason]);
    }

    /// The value of one counter series (for tests and `/healthz`).
    pub fn counter(&self, name: &str, labels: &[&str]) -> u64 {
        let family = match name {
            REFUSED_REQUESTS_TOTAL => &self.refused_requests,
            VERTEX_LIVE_FALLBACKS_TOTAL => &self.vertex_live_fallbacks,
            TLS_HANDSHAKES_FAILED_TOTAL => &self.tls_handshakes_failed,
            TOOL_CALLS_TOTAL => &self.tool_calls,
            TOOL_FAILURES_TOTAL => &self.tool_failures,
            TOOL_RESULTS_TOTAL => &self.tool_results,
            TOKENS_TOTAL => &self.tokens,
            REPAIRS_TOTAL => &self.repairs,
            UPSTREAM_REQUESTS_TOTAL => &self.upstream_requests,
            UNPARSED_REQUESTS_TOTAL => &self.unparsed_requests,
            UNPARSED_RESPONSES_TOTAL => &self.unparsed_responses,
            _ => return 0,
        };
        family.get(labels)
    }

    /// Everything in the Prometheus text format; `recorder` supplies the
    /// event counters.
    pub fn render(&self, recorder: RecorderCounters) -> String {
        let mut out = String::with_capacity(4096);
        let _ = writeln!(
            out,
            "# HELP {BUILD_INFO} The gateway's version.\n# TYPE {BUILD_INFO} gauge\n{BUILD_INFO}{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        );
        let families: [(&str, &str, &Family); 11] = [
            (
                TOOL_CALLS_TOTAL,
                "Tool calls made by models.",
                &self.tool_calls,
            ),
            (
                TOOL_FAILURES_TOTAL,
                "Failed tool results, each counted once.",
                &self.tool_failures,
            ),
            (
                TOOL_RESULTS_TOTAL,
                "Tool results, each counted once.",
                &self.tool_results,
            ),
            (
                TOKENS_TOTAL,
                "Tokens the providers reported (type: input, output).",
                &self.tokens,
            ),
            (
                REPAIRS_TOTAL,
                "Repair changes applied to requests.",
                &self.repairs,
            ),
            (
                UPSTREAM_REQUESTS_TOTAL,
                "Proxied requests by provider and status.",
                &self.upstream_requests,
            ),
            (
                UNPARSED_REQUESTS_TOTAL,
                "Request bodies that could not be parsed (forwarded unchanged).",
                &self.unparsed_requests,
            ),
            (
                UNPARSED_RESPONSES_TOTAL,
                "Response bodies not parsed for tool calls.",
                &self.unparsed_responses,
            ),
            (
                REFUSED_REQUESTS_TOTAL,
                "Requests refused before they were forwarded or recorded (reason: foreign_host, a host a gateway listening on a loopback address does not answer, see allowed_hosts; cross_site, a web page's form or text POST).",
                &self.refused_requests,
            ),
            (
                VERTEX_LIVE_FALLBACKS_TOTAL,
                "Vertex AI Live sockets sent to the global endpoint because their first message named no location (no_location) or none came in time (timeout).",
                &self.vertex_live_fallbacks,
            ),
            (
                TLS_HANDSHAKES_FAILED_TOTAL,
                "Client TLS handshakes that failed on a gateway serving HTTPS (reason: timeout, not done within client_head_timeout_ms; plain_http, plain HTTP sent to the HTTPS port; failed, the client refused the certificate or TLS failed otherwise).",
                &self.tls_handshakes_failed,
            ),
        ];
        for (name, help, family) in families {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            family.render(name, &mut out);
        }
        for (name, help, value) in [
            (
                EVENTS_DROPPED_TOTAL,
                "Events dropped because the recorder queue was full.",
                recorder.events_dropped,
            ),
            (
                EVENTS_WRITTEN_TOTAL,
                "Events written by the recorder.",
                recorder.events_written,
            ),
            (
                JSONL_ROTATIONS_TOTAL,
                "Times the JSONL log reached its bound and was rotated.",
                recorder.jsonl_rotations,
            ),
            (
                JSONL_LINES_LOST_TOTAL,
                "Lines the JSONL log lost: batches whose append failed (their events are in the database).",
                recorder.jsonl_lines_lost,
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP {UPSTREAM_LATENCY_SECONDS} Request sent to response finished.\n# TYPE {UPSTREAM_LATENCY_SECONDS} histogram"
        );
        for provider in Provider::ALL {
            let labels = format!("provider=\"{}\"", provider.as_str());
            self.upstream_latency[provider.index()].render(
                UPSTREAM_LATENCY_SECONDS,
                &labels,
                &mut out,
            );
        }
        let _ = writeln!(
            out,
            "# HELP {GATEWAY_OVERHEAD_SECONDS} Gateway processing time on the request path.\n# TYPE {GATEWAY_OVERHEAD_SECONDS} histogram"
        );
        self.overhead.render(GATEWAY_OVERHEAD_SECONDS, "", &mut out);
        self.alerts.render(&mut out);
        self.otlp.render(&mut out);
        self.retention.render(&mut out);
        out
    }
}

// === impl MetricsObserver ===

impl Observer for MetricsObserver {
    fn on_request(&self, rec: &RequestRecord) {
        let model = rec.model.as_deref().unwrap_or("");
        for (kind, n) in [("input", rec.input_tokens), ("output", rec.output_tokens)] {
            if let Some(n) = n.filter(|n| *n > 0) {
                self.0.tokens.add(&[rec.provider.as_str(), model, kind], n);
            }
        }
    }

    fn on_tool_call(&self, rec: &ToolCallRecord) {
        let model = rec.model.as_deref().unwrap_or("");
        self.0
            .tool_calls
            .inc(&[rec.provider.as_str(), model, rec.tool.as_str()]);
    }

    fn on_tool_result(&self, rec: &ToolResultRecord, resolved_tool: &str) {
        let model = rec.model.as_deref().unwrap_or("");
        self.0
            .tool_results
            .inc(&[rec.provider.as_str(), model, resolved_tool]);
        if rec.failed {
            self.0.tool_failures.inc(&[
                rec.provider.as_str(),
                model,
                resolved_tool,
                rec.basis.as_str(),
            ]);
        }
    }
}

// === impl Family ===

impl Family {
    fn new(labels: &'static [&'static str]) -> Family {
        Family {
            labels,
            series: RwLock::new(HashMap::new()),
        }
    }

    fn inc(&self, values: &[&str]) {
        self.add(values, 1);
    }

    fn add(&self, values: &[&str], n: u64) {
        debug_assert_eq!(values.len(), self.labels.len());
        if let Some(clipped) = clipped(values) {
            return self.add(&clipped, n);
        }
        if let Some(counter) = self.find(values) {
            counter.fetch_add(n, Ordering::Relaxed);
            return;
        }
        let mut series = self.series.write().unwrap_or_else(|e| e.into_inner());
        let key: Box<[String]> = if series.len() >= MAX_SERIES {
            values.iter().map(|_| "other".to_string()).collect()
        } else {
            values.iter().map(|v| (*v).to_string()).collect()
        };
        series
            .entry(key)
            .or_insert_with(|| Arc::new(AtomicU64::new(0)))
            .fetch_add(n, Ordering::Relaxed);
    }

    fn find(&self, values: &[&str]) -> Option<Arc<AtomicU64>> {
        let series = self.series.read().unwrap_or_else(|e| e.into_inner());
        // Probe with a borrowed view of the values: no allocation on the hot path.
        series.get(&BorrowedKey(values) as &dyn KeyView).cloned()
    }

    fn get(&self, values: &[&str]) -> u64 {
        if let Some(clipped) = clipped(values) {
            return self.get(&clipped);
        }
        self.find(values).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    fn render(&self, name: &str, out: &mut String) {
        let series = self.series.read().unwrap_or_else(|e| e.into_inner());
        let mut rows: Vec<(&Box<[String]>, u64)> = series
            .iter()
            .map(|(k, v)| (k, v.load(Ordering::Relaxed)))
            .collect();
        rows.sort();
        for (values, count) in rows {
            out.push_str(name);
            out.push('{');
            for (i, (label, value)) in self.labels.iter().zip(values.iter()).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{label}=\"");
                escape_label(value, out);
                out.push('"');
            }
            let _ = writeln!(out, "}} {count}");
        }
    }
}

/// `values` with each cut to [`MAX_NAME_LEN`](crate::limits::MAX_NAME_LEN)
/// bytes, when one is longer (a name from a client); `None` when none is.
fn clipped<'a>(values: &[&'a str]) -> Option<Vec<&'a str>> {
    values
        .iter()
        .any(|v| v.len() > crate::limits::MAX_NAME_LEN)
        .then(|| values.iter().map(|v| crate::limits::clip_name(v)).collect())
}

/// Lets the map be probed with `&[&str]` without building a `Box<[String]>`.
trait KeyView {
    fn len(&self) -> usize;
    fn part(&self, i: usize) -> &str;
}

struct BorrowedKey<'a>(&'a [&'a str]);

impl KeyView for BorrowedKey<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn part(&self, i: usize) -> &str {
        self.0[i]
    }
}

impl KeyView for Box<[String]> {
    fn len(&self) -> usize {
        <[String]>::len(self)
    }
    fn part(&self, i: usize) -> &str {
        &self[i]
    }
}

impl<'a> std::borrow::Borrow<dyn KeyView + 'a> for Box<[String]> {
    fn borrow(&self) -> &(dyn KeyView + 'a) {
        self
    }
}

impl PartialEq for dyn KeyView + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.part(i) == other.part(i))
    }
}

impl Eq for dyn KeyView + '_ {}

impl std::hash::Hash for dyn KeyView + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Must equal `<[String] as Hash>::hash`: length prefix, then each str.
        state.write_usize(self.len());
        for i in 0..self.len() {
            self.part(i).hash(state);
        }
    }
}

/// A Prometheus label value, escaped (`\\`, `\"`, `\n`).
pub(crate) fn escape_label(value: &str, out: &mut String) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

// === impl Histogram ===

impl Histogram {
    fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_nanos: AtomicU64::new(0),
        }
    }

    fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = self.bounds.partition_point(|b| *b < secs);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn render(&self, name: &str, labels: &str, out: &mut String) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (i, bound) in self.bounds.iter().enumerate() {
            cumulative += self.counts[i].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}"
            );
        }
        cumulative += self.counts[self.bounds.len()].load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {cumulative}"
        );
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(
            out,
            "{name}_sum{braces} {sum}\n{name}_count{braces} {cumulative}"
        );
    }
}

#[cfg(test)]
mod tests;
