//! The health report: tools over their thresholds, and why. A tool is
//! judged on its recent state (its last
//! [`RECENT_CALLS`](crate::RECENT_CALLS) calls and its breaker now), so
//! one that recovers is seen to recover.
//!
//! Calls refused before the tool did any work — a disabled or paused
//! tool, arguments that are not JSON or break the schema (or a typed
//! tool's own decoding), an open breaker, the loop guard's block — are
//! not among those calls ([`judges_the_tool`]): they say nothing of the
//! tool, so its breaker does not count them either, and a model that keeps
//! sending bad arguments, or an operator who disabled a tool, must not
//! make it look failing (nor its refusals, answered in no time, make a
//! slow tool look fast). The tool's lifetime counters and
//! `errors_by_kind` still count them.

use std::time::Duration;

use serde::Serialize;
use toolwarden_core::ErrorKind;

use crate::{BreakerState, metrics::ToolStats};

/// When a tool is flagged. Defaults: a failure rate over 5 % or a mean
/// latency over 5 s, both over the tool's last
/// [`RECENT_CALLS`](crate::RECENT_CALLS) calls; a breaker that is open or
/// half-open.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthThresholds {
    /// Flag a failure rate over the last calls above this fraction (of
    /// the calls that ended), and a share of calls the application
    /// cancelled above it.
    pub max_failure_rate: f64,
    /// Flag a mean latency over the last calls above this.
    pub max_mean_latency: Duration,
    /// Flag a tool whose breaker has tripped and not recovered yet (open
    /// or half-open). An open breaker whose time is up reads open until
    /// the next call probes it.
    pub flag_breaker_trips: bool,
}

/// The health of every registered tool.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct HealthReport {
    /// One entry per tool, in registration order.
    pub tools: Vec<ToolHealth>,
}

/// One tool's health.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ToolHealth {
    /// The tool.
    pub name: String,
    /// `false` when any threshold is crossed.
    pub healthy: bool,
    /// What crossed which threshold, in words.
    pub reasons: Vec<String>,
}

impl Default for HealthThresholds {
    fn default() -> Self {
        HealthThresholds {
            max_failure_rate: 0.05,
            max_mean_latency: Duration::from_secs(5),
            flag_breaker_trips: true,
        }
    }
}

/// Whether a failed call of `kind` is one the tool's health is judged
/// on: not a refusal before the tool did any work (a tool not available,
/// invalid arguments, an open breaker). The loop guard's block, a
/// `Cancelled` the executor tells apart by its code, is left out by its
/// caller.
pub(crate) fn judges_the_tool(kind: &ErrorKind) -> bool {
    !matches!(
        kind,
        ErrorKind::NotAvailable | ErrorKind::InvalidArguments | ErrorKind::CircuitOpen { .. }
    )
}

// === impl HealthReport ===

impl HealthReport {
    /// Judge each tool's stats against the thresholds.
    pub fn from_stats(stats: &[ToolStats], thresholds: &HealthThresholds) -> Self {
        let tools = stats
            .iter()
            .map(|s| {
                let recent = &s.recent;
                let mut reasons = Vec::new();
                let ended = recent.calls - recent.cancelled;
                if ended > 0 && recent.failure_rate > thresholds.max_failure_rate {
                    let of = match recent.cancelled {
                        0 => format!("the last {} calls", recent.calls),
                        _ => format!("the {ended} that ended of the last {} calls", recent.calls),
                    };
                    reasons.push(format!(
                        "failure rate {:.1} % over {:.1} % ({} of {of})",
                        recent.failure_rate * 100.0,
                        thresholds.max_failure_rate * 100.0,
                        recent.failures,
                    ));
                }
                if recent.latency_mean > thresholds.max_mean_latency {
                    reasons.push(format!(
                        "mean latency {:.2} s over {:.2} s (the last {} calls)",
                        recent.latency_mean.as_secs_f64(),
                        thresholds.max_mean_latency.as_secs_f64(),
                        recent.calls
                    ));
                }
                // A tool whose calls the application keeps giving up on
                // (its own timeout around a tool that hangs) has no
                // failures to show, and its latency only what it ran
                // until then: flagged on the same rate as failures.
                let cancelled_rate = match recent.calls {
                    0 => 0.0,
                    n => recent.cancelled as f64 / n as f64,
                };
                if cancelled_rate > thresholds.max_failure_rate {
                    reasons.push(format!(
                        "{} of the last {} calls cancelled before they ended ({:.1} % over {:.1} %)",
                        recent.cancelled,
                        recent.calls,
                        cancelled_rate * 100.0,
                        thresholds.max_failure_rate * 100.0,
                    ));
                }
                if thresholds.flag_breaker_trips {
                    match s.breaker {
                        Some(BreakerState::Open) => reasons.push("circuit breaker open".into()),
                        Some(BreakerState::HalfOpen) => {
                            reasons.push("circuit breaker half-open".into())
                        }
                        Some(BreakerState::Closed) | None => {}
                    }
                }
                ToolHealth {
                    name: s.name.clone(),
                    healthy: reasons.is_empty(),
                    reasons,
                }
            })
            .collect();
        HealthReport { tools }
    }

    /// `true` when no tool is flagged.
    pub fn is_healthy(&self) -> bool {
        self.tools.iter().all(|t| t.healthy)
    }

    /// The flagged tools.
    pub fn unhealthy(&self) -> impl Iterator<Item = &ToolHealth> {
        self.tools.iter().filter(|t| !t.healthy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RecentCalls;

    /// `calls` recent calls, `failures` of them failed; a lifetime of ten
    /// times as many calls, all failed (what health must not judge).
    fn stats(name: &str, calls: u64, failures: u64, mean_ms: u64) -> ToolStats {
        ToolStats {
            name: name.into(),
            state: "enabled",
            calls: calls * 10,
            successes: 0,
            failures: calls * 10,
            cancelled: 0,
            timeouts: 0,
            retries: 0,
            fallbacks: 0,
            errors_by_kind: vec![],
            failure_rate: 1.0,
            latency_mean: Duration::from_secs(60),
            latency_p50: Duration::ZERO,
            latency_p95: Duration::ZERO,
            recent: RecentCalls {
                calls,
                failures,
                cancelled: 0,
                failure_rate: if calls == 0 {
                    0.0
                } else {
                    failures as f64 / calls as f64
                },
                latency_mean: Duration::from_millis(mean_ms),
            },
            breaker: None,
            breaker_trips: 0,
            breaker_recoveries: 0,
            recent_errors: vec![],
        }
    }

    fn with_breaker(mut s: ToolStats, state: BreakerState, trips: u64) -> ToolStats {
        s.breaker = Some(state);
        s.breaker_trips = trips;
        s
    }

    #[test]
    fn flags_each_threshold_on_recent_state() {
        let report = HealthReport::from_stats(
            &[
                stats("ok", 100, 5, 10),
                stats("flaky", 100, 6, 10),
                stats("slow", 10, 0, 6000),
                with_breaker(stats("open", 10, 0, 10), BreakerState::Open, 1),
                with_breaker(stats("probing", 10, 0, 10), BreakerState::HalfOpen, 1),
                with_breaker(stats("recovered", 10, 0, 10), BreakerState::Closed, 3),
                stats("idle", 0, 0, 0),
            ],
            &HealthThresholds::default(),
        );
        let flagged: Vec<&str> = report.unhealthy().map(|t| t.name.as_str()).collect();
        assert_eq!(flagged, vec!["flaky", "slow", "open", "probing"]);
        assert_eq!(
            report.tools[1].reasons,
            ["failure rate 6.0 % over 5.0 % (6 of the last 100 calls)"]
        );
        assert_eq!(
            report.tools[2].reasons,
            ["mean latency 6.00 s over 5.00 s (the last 10 calls)"]
        );
        assert_eq!(report.tools[3].reasons, ["circuit breaker open"]);
        assert_eq!(report.tools[4].reasons, ["circuit breaker half-open"]);
        assert!(!report.is_healthy());
    }
}
