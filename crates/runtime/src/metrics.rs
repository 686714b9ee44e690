//! Per-tool metrics in fixed memory: counters, errors by kind, a
//! log-linear latency histogram (≤ 12.5 % relative error), a bounded
//! ring of recent errors and a window of the last calls ([`RecentCalls`],
//! what health is judged on). Ten million calls use the same memory as ten.

mod window;

use std::{
    collections::VecDeque,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime},
};

use serde::Serialize;
use toolwarden_core::{ErrorKind, redact::without_secrets};

use crate::text::clip;

use window::{Ended, Window};
pub use window::{RECENT_CALLS, RecentCalls};

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Enough buckets for every `u64` nanosecond value.
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;
/// Recent errors kept per tool.
pub const RECENT_ERRORS: usize = 16;
/// Longest message kept in the recent-error ring.
const RECENT_MESSAGE_MAX: usize = 500;
/// Longest call id kept in the recent-error ring, in bytes.
const RECENT_CALL_ID_MAX: usize = 64;
/// The error kinds, in [`kind_index`] order.
pub(crate) const KINDS: [&str; 11] = [
    "NotAvailable",
    "InvalidArguments",
    "ResourceNotFound",
    "Timeout",
    "RateLimited",
    "Network",
    "Authentication",
    "Permission",
    "CircuitOpen",
    "Cancelled",
    "Internal",
];

/// A latency histogram with fixed, log-linear buckets.
#[derive(Debug)]
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    sum_ns: AtomicU64,
}

/// One recent error.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RecentError {
    /// When it happened.
    pub at: SystemTime,
    /// The call's id, its first 64 bytes at most.
    pub call_id: String,
    /// The kind (`"Timeout"`).
    pub kind: &'static str,
    /// The technical message, without credentials
    /// ([`toolwarden_core::redact`]), truncated.
    pub message: String,
}

/// The live metrics of one tool.
#[derive(Debug)]
pub(crate) struct ToolMetrics {
    calls: AtomicU64,
    successes: AtomicU64,
    failures: AtomicU64,
    timeouts: AtomicU64,
    retries: AtomicU64,
    fallbacks: AtomicU64,
    cancelled: AtomicU64,
    by_kind: [AtomicU64; KINDS.len()],
    latency: Histogram,
    window: Window,
    recent: Mutex<VecDeque<RecentError>>,
}

/// A snapshot of one tool's metrics.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ToolStats {
    /// The tool's name.
    pub name: String,
    /// `enabled`, `disabled` or `paused`.
    pub state: &'static str,
    /// Calls that reached the tool's policies (not counting unknown names).
    pub calls: u64,
    /// Calls the tool itself answered successfully.
    pub successes: u64,
    /// Calls that failed.
    pub failures: u64,
    /// Calls the application cancelled (dropped the future of
    /// [`crate::Executor::execute`], `execute_batch` or `step`) while the
    /// tool ran: neither successes nor failures, and no outcome; their
    /// latency is the time the tool had run.
    pub cancelled: u64,
    /// Calls that ended in a timeout.
    pub timeouts: u64,
    /// Retries made (attempts beyond the first).
    pub retries: u64,
    /// Calls answered by the fallback.
    pub fallbacks: u64,
    /// Failures by kind (`"Timeout" → 3`), kinds with zero left out.
    pub errors_by_kind: Vec<(&'static str, u64)>,
    /// `failures / calls` since the start (0 without calls).
    pub failure_rate: f64,
    /// Mean latency per call since the start, retries included.
    pub latency_mean: Duration,
    /// Median latency.
    pub latency_p50: Duration,
    /// 95th percentile latency.
    pub latency_p95: Duration,
    /// The breaker's state, if the tool has one.
    pub breaker: Option<crate::BreakerState>,
    /// The last calls: what the health report judges.
    pub recent: RecentCalls,
    /// How often the breaker opened (a failed probe re-opening it included).
    pub breaker_trips: u64,
    /// How often the breaker closed again after opening (a probe
    /// succeeded, or it was reset).
    pub breaker_recoveries: u64,
    /// The last errors, oldest first.
    pub recent_errors: Vec<RecentError>,
}

/// The index of `kind` in [`KINDS`].
pub(crate) fn kind_index(kind: &ErrorKind) -> usize {
    KINDS
        .iter()
        .position(|k| *k == kind.name())
        .unwrap_or(KINDS.len() - 1)
}

// === impl Histogram ===

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum_ns: AtomicU64::new(0),
        }
    }

    fn index(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        let sub = (v >> (e - SUB_BITS)) as usize & (SUB - 1);
        (e - SUB_BITS + 1) as usize * SUB + sub
    }

    /// The `[low, high)` range of bucket `i`.
    fn bounds(i: usize) -> (u64, u64) {
        if i < SUB {
            return (i as u64, i as u64 + 1);
        }
        let e = (i / SUB) as u32 + SUB_BITS - 1;
        let sub = (i % SUB) as u64;
        let shift = e - SUB_BITS;
        let low = (SUB as u64 + sub) << shift;
        (low, low.saturating_add(1u64 << shift))
    }

    /// Record one value.
    pub fn record(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.buckets[Self::index(ns)].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The mean.
    pub fn mean(&self) -> Duration {
        let n = self.count();
        if n == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.sum_ns.load(Ordering::Relaxed) / n)
    }

    /// The `q` quantile (`0.5`, `0.95`), the midpoint of its bucket.
    pub fn quantile(&self, q: f64) -> Duration {
        let n = self.count();
        if n == 0 {
            return Duration::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b.load(Ordering::Relaxed);
            if seen >= rank {
                let (lo, hi) = Self::bounds(i);
                return Duration::from_nanos(lo + (hi - lo) / 2);
            }
        }
        self.mean()
    }

    /// The memory the histogram holds, in bytes (constant).
    pub fn heap_bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<AtomicU64>()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

// === impl ToolMetrics ===

impl ToolMetrics {
    pub(crate) fn new() -> Self {
        ToolMetrics {
            calls: AtomicU64::new(0),
            successes: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            by_kind: Default::default(),
            latency: Histogram::new(),
            window: Window::new(),
            recent: Mutex::new(VecDeque::with_capacity(RECENT_ERRORS)),
        }
    }

    pub(crate) fn record_success(&self, elapsed: Duration, retries: u32, fallback: bool) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.successes.fetch_add(1, Ordering::Relaxed);
        if retries > 0 {
            self.retries
                .fetch_add(u64::from(retries), Ordering::Relaxed);
        }
        if fallback {
            self.fallbacks.fetch_add(1, Ordering::Relaxed);
        }
        self.latency.record(elapsed);
        self.window.record(Ended::Succeeded, elapsed);
    }

    /// Count a call the application cancelled after `elapsed` at the tool.
    pub(crate) fn record_cancelled(&self, elapsed: Duration) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.cancelled.fetch_add(1, Ordering::Relaxed);
        self.latency.record(elapsed);
        self.window.record(Ended::Cancelled, elapsed);
    }

    pub(crate) fn count_fallback(&self) {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
    }

    /// Count a failed call; `judged` puts it in the window health is
    /// judged on (`health::judges_the_tool`: not a call refused before the
    /// tool did any work).
    pub(crate) fn record_failure(
        &self,
        kind: &ErrorKind,
        elapsed: Duration,
        retries: u32,
        call_id: &str,
        message: &str,
        judged: bool,
    ) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.failures.fetch_add(1, Ordering::Relaxed);
        if *kind == ErrorKind::Timeout {
            self.timeouts.fetch_add(1, Ordering::Relaxed);
        }
        self.retries
            .fetch_add(u64::from(retries), Ordering::Relaxed);
        self.by_kind[kind_index(kind)].fetch_add(1, Ordering::Relaxed);
        self.latency.record(elapsed);
        if judged {
            self.window.record(Ended::Failed, elapsed);
        }
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        if recent.len() == RECENT_ERRORS {
            recent.pop_front();
        }
        recent.push_back(RecentError {
            at: SystemTime::now(),
            call_id: clip(call_id, RECENT_CALL_ID_MAX).to_string(),
            kind: kind.name(),
            // Kept and shown (`stats`, a dashboard): without credentials.
            message: clip(&without_secrets(message), RECENT_MESSAGE_MAX).to_string(),
        });
    }

    pub(crate) fn errors_by_kind(&self) -> Vec<(&'static str, u64)> {
        KINDS
            .iter()
            .zip(&self.by_kind)
            .map(|(k, n)| (*k, n.load(Ordering::Relaxed)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// A snapshot (the name, state and breaker are filled in by the registry).
    pub(crate) fn snapshot(&self, name: &str, state: &'static str) -> ToolStats {
        let calls = self.calls.load(Ordering::Relaxed);
        let failures = self.failures.load(Ordering::Relaxed);
        ToolStats {
            name: name.to_string(),
            state,
            calls,
            successes: self.successes.load(Ordering::Relaxed),
            failures,
            cancelled: self.cancelled.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            errors_by_kind: self.errors_by_kind(),
            failure_rate: if calls == 0 {
                0.0
            } else {
                failures as f64 / calls as f64
            },
            latency_mean: self.latency.mean(),
            latency_p50: self.latency.quantile(0.5),
            latency_p95: self.latency.quantile(0.95),
            recent: self.window.snapshot(),
            breaker: None,
            breaker_trips: 0,
            breaker_recoveries: 0,
            recent_errors: self
                .recent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned()
                .collect(),
        }
    }

    /// Bytes held on the heap, at most (recent errors counted at their cap).
    pub(crate) fn max_heap_bytes(&self) -> usize {
        self.latency.heap_bytes()
            + self.window.heap_bytes()
            + RECENT_ERRORS
                * (std::mem::size_of::<RecentError>() + RECENT_MESSAGE_MAX + RECENT_CALL_ID_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_and_are_tight() {
        for v in [
            0u64,
            1,
            7,
            8,
            15,
            16,
            100,
            1_000,
            123_456,
            10_000_000_000,
            u64::MAX,
        ] {
            let i = Histogram::index(v);
            assert!(i < BUCKETS, "{v}");
            let (lo, hi) = Histogram::bounds(i);
            assert!(
                lo <= v && (v < hi || hi == u64::MAX),
                "{v} not in [{lo}, {hi})"
            );
            if v >= 8 {
                assert!((hi - lo) as f64 / lo as f64 <= 0.125 + 1e-9);
            }
        }
    }

    #[test]
    fn quantiles_are_close() {
        let h = Histogram::new();
        for ms in 1..=100u64 {
            h.record(Duration::from_millis(ms));
        }
        let p50 = h.quantile(0.5).as_secs_f64() * 1000.0;
        let p95 = h.quantile(0.95).as_secs_f64() * 1000.0;
        assert!((p50 - 50.0).abs() / 50.0 < 0.07, "{p50}");
        assert!((p95 - 95.0).abs() / 95.0 < 0.07, "{p95}");
        assert_eq!(h.mean(), Duration::from_micros(50_500));
    }

    /// Regression: the call id was stored whole, so call ids of megabytes
    /// broke the fixed-memory cap.
    #[test]
    fn recent_error_call_ids_are_capped() {
        let m = ToolMetrics::new();
        let id = format!("{}é", "x".repeat(RECENT_CALL_ID_MAX - 1));
        m.record_failure(&ErrorKind::Network, Duration::ZERO, 0, &id, "boom", true);
        let big = "y".repeat(1 << 20);
        m.record_failure(&ErrorKind::Network, Duration::ZERO, 0, &big, "boom", true);
        let s = m.snapshot("t", "enabled");
        // Cut at a character boundary: the two-byte `é` does not fit.
        assert_eq!(
            s.recent_errors[0].call_id,
            "x".repeat(RECENT_CALL_ID_MAX - 1)
        );
        assert_eq!(s.recent_errors[1].call_id.len(), RECENT_CALL_ID_MAX);
    }

    #[test]
    fn recent_errors_are_bounded() {
        let m = ToolMetrics::new();
        for i in 0..100 {
            m.record_failure(
                &ErrorKind::Network,
                Duration::from_millis(1),
                3,
                &format!("c{i}"),
                &"x".repeat(2000),
                true,
            );
        }
        let s = m.snapshot("t", "enabled");
        assert_eq!(s.recent_errors.len(), RECENT_ERRORS);
        assert_eq!(s.recent_errors[0].call_id, "c84");
        assert!(s.recent_errors[0].message.len() <= RECENT_MESSAGE_MAX);
        assert_eq!(s.errors_by_kind, vec![("Network", 100)]);
        assert_eq!(s.retries, 300);
        assert_eq!(s.failure_rate, 1.0);
    }
}
