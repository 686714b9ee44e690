//! The health report: tools over their thresholds, and why.

use std::time::Duration;

use serde::Serialize;

use crate::metrics::ToolStats;

/// When a tool is flagged. Defaults: failure rate over 5 %, mean latency
/// over 5 s, any breaker trip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthThresholds {
    /// Flag a failure rate above this fraction.
    pub max_failure_rate: f64,
    /// Flag a mean latency above this.
    pub max_mean_latency: Duration,
    /// Flag a tool whose breaker ever opened.
    pub flag_breaker_trips: bool,
}

/// The health of every registered tool.
#[derive(Debug, Clone, Serialize)]
pub struct HealthReport {
    /// One entry per tool, in registration order.
    pub tools: Vec<ToolHealth>,
}

/// One tool's health.
#[derive(Debug, Clone, Serialize)]
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

// === impl HealthReport ===

impl HealthReport {
    /// Judge each tool's stats against the thresholds.
    pub fn from_stats(stats: &[ToolStats], thresholds: &HealthThresholds) -> Self {
        let tools = stats
            .iter()
            .map(|s| {
                let mut reasons = Vec::new();
                if s.calls > 0 && s.failure_rate > thresholds.max_failure_rate {
                    reasons.push(format!(
                        "failure rate {:.1} % over {:.1} % ({} of {} calls)",
                        s.failure_rate * 100.0,
                        thresholds.max_failure_rate * 100.0,
                        s.failures,
                        s.calls
                    ));
                }
                if s.latency_mean > thresholds.max_mean_latency {
                    reasons.push(format!(
                        "mean latency {:.2} s over {:.2} s",
                        s.latency_mean.as_secs_f64(),
                        thresholds.max_mean_latency.as_secs_f64()
                    ));
                }
                if thresholds.flag_breaker_trips && s.breaker_trips > 0 {
                    reasons.push(format!(
                        "circuit breaker opened {} time(s)",
                        s.breaker_trips
                    ));
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

    fn stats(name: &str, calls: u64, failures: u64, mean_ms: u64, trips: u64) -> ToolStats {
        ToolStats {
            name: name.into(),
            state: "enabled",
            calls,
            successes: calls - failures,
            failures,
            timeouts: 0,
            retries: 0,
            fallbacks: 0,
            errors_by_kind: vec![],
            failure_rate: if calls == 0 {
                0.0
            } else {
                failures as f64 / calls as f64
            },
            latency_mean: Duration::from_millis(mean_ms),
            latency_p50: Duration::ZERO,
            latency_p95: Duration::ZERO,
            breaker: None,
            breaker_trips: trips,
            recent_errors: vec![],
        }
    }

    #[test]
    fn flags_each_threshold() {
        let report = HealthReport::from_stats(
            &[
                stats("ok", 100, 5, 10, 0),
                stats("flaky", 100, 6, 10, 0),
                stats("slow", 10, 0, 6000, 0),
                stats("tripped", 10, 0, 10, 1),
            ],
            &HealthThresholds::default(),
        );
        let flagged: Vec<&str> = report.unhealthy().map(|t| t.name.as_str()).collect();
        assert_eq!(flagged, vec!["flaky", "slow", "tripped"]);
        assert!(report.tools[1].reasons[0].starts_with("failure rate 6.0 %"));
        assert!(!report.is_healthy());
    }
}
