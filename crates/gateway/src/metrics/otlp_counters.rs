//! [`OtlpCounters`]: the OpenTelemetry export counters as `/metrics` shows
//! them. The exporter ([`crate::otel`]) counts into it; it lives with the
//! metrics so that the metrics depend on no feature module.

use std::{
    fmt::Write as _,
    sync::atomic::{AtomicU64, Ordering},
};

/// Spans by outcome (`exported`, `dropped`, `unsampled`).
pub(crate) const OTLP_SPANS_TOTAL: &str = "toolwarden_otlp_spans_total";
/// The export queue's depth.
pub(crate) const OTLP_SPANS_QUEUED: &str = "toolwarden_otlp_spans_queued";

/// Export counters, rendered in `/metrics`.
#[derive(Debug, Default)]
pub(crate) struct OtlpCounters {
    pub(crate) enabled: std::sync::atomic::AtomicBool,
    /// Spans the collector accepted.
    pub exported: AtomicU64,
    /// Spans lost: queue full, collector down or refusing.
    pub dropped: AtomicU64,
    /// Spans not made: their request's `traceparent` was not sampled.
    pub unsampled: AtomicU64,
    /// Spans queued or being sent, not yet exported or dropped (what a
    /// shutdown waits for; never more than `queue`).
    pub(crate) pending: AtomicU64,
}

// === impl OtlpCounters ===

impl OtlpCounters {
    /// `toolwarden_otlp_spans_total{outcome}` and
    /// `toolwarden_otlp_spans_queued` when export is on.
    pub(crate) fn render(&self, out: &mut String) {
        if !self.enabled.load(Ordering::Relaxed) {
            return;
        }
        let _ = writeln!(
            out,
            "# HELP {OTLP_SPANS_QUEUED} OpenTelemetry spans queued or being sent (at most the queue's bound).
# TYPE {OTLP_SPANS_QUEUED} gauge
{OTLP_SPANS_QUEUED} {}",
            self.pending.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP {OTLP_SPANS_TOTAL} OpenTelemetry spans by outcome.\n# TYPE {OTLP_SPANS_TOTAL} counter"
        );
        for (outcome, n) in [
            ("exported", &self.exported),
            ("dropped", &self.dropped),
            ("unsampled", &self.unsampled),
        ] {
            let _ = writeln!(
                out,
                "{OTLP_SPANS_TOTAL}{{outcome=\"{outcome}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
    }
}
