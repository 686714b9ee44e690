//! [`AlertsBoard`]: the alerts' latest states and the webhook counters as
//! `/metrics` shows them. The alerts engine ([`crate::alerts`]) writes it;
//! it lives with the metrics so that the metrics depend on no feature
//! module.

use std::{
    fmt::Write as _,
    sync::{
        RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use toolwarden_store::AlertTransition;

/// The gauge of firing alerts.
pub(crate) const ALERTS_FIRING: &str = "toolwarden_alerts_firing";
/// Most `toolwarden_alerts_firing` series `/metrics` shows.
pub(crate) const MAX_GAUGES: usize = 1000;
/// Webhook notifications by outcome (`sent`, `failed`, `dropped`).
pub(crate) const ALERT_NOTIFICATIONS_TOTAL: &str = "toolwarden_alert_notifications_total";

/// The alerts' latest states and the delivery counters, as this gateway
/// last read them.
#[derive(Debug, Default)]
pub(crate) struct AlertsBoard {
    state: RwLock<BoardState>,
    /// Notifications a webhook accepted (2xx).
    pub sent: AtomicU64,
    /// Notifications given up after every retry.
    pub failed: AtomicU64,
    /// Notifications dropped because a webhook's queue was full.
    pub dropped: AtomicU64,
    /// Failed attempts (each retry counts).
    pub attempts_failed: AtomicU64,
    /// Notifications queued and not yet sent or given up (not rendered:
    /// what a shutdown waits for).
    pub(crate) pending: AtomicU64,
}

#[derive(Debug, Default)]
pub(crate) struct BoardState {
    pub(crate) running: bool,
    pub(crate) evaluated_ms: Option<i64>,
    pub(crate) error: Option<String>,
    pub(crate) states: Vec<AlertTransition>,
}

// === impl AlertsBoard ===

impl AlertsBoard {
    pub(crate) fn write(&self) -> std::sync::RwLockWriteGuard<'_, BoardState> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, BoardState> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_states(&self, states: Vec<AlertTransition>, at_ms: i64) {
        let mut s = self.write();
        s.states = states;
        s.evaluated_ms = Some(at_ms);
        s.error = None;
    }

    pub(crate) fn set_error(&self, error: String) {
        self.write().error = Some(error);
    }

    /// `toolwarden_alerts_firing{rule,tool,model}` (1 firing, 0 resolved;
    /// at most [`MAX_GAUGES`] series: every firing alert first, then the
    /// latest resolved ones) and the notification counters.
    pub(crate) fn render(&self, out: &mut String) {
        let s = self.read();
        if !s.running {
            return;
        }
        let _ = writeln!(
            out,
            "# HELP {ALERTS_FIRING} Alerts firing now (1) or resolved (0), by rule, tool and model.\n# TYPE {ALERTS_FIRING} gauge"
        );
        // However many alerts have changed since, one still firing shows.
        let firing = |a: &&AlertTransition| a.state == "firing";
        let shown = s
            .states
            .iter()
            .filter(firing)
            .chain(s.states.iter().filter(|a| !firing(a)))
            .take(MAX_GAUGES);
        for a in shown {
            let _ = write!(out, "{ALERTS_FIRING}{{rule=\"");
            super::escape_label(&a.rule, out);
            out.push_str("\",tool=\"");
            super::escape_label(&a.tool, out);
            out.push_str("\",model=\"");
            super::escape_label(&a.model, out);
            if !a.instance.is_empty() {
                out.push_str("\",instance=\"");
                super::escape_label(&a.instance, out);
            }
            let _ = writeln!(out, "\"}} {}", u8::from(a.state == "firing"));
        }
        let _ = writeln!(
            out,
            "# HELP {ALERT_NOTIFICATIONS_TOTAL} Alert webhook notifications by outcome.\n# TYPE {ALERT_NOTIFICATIONS_TOTAL} counter"
        );
        for (outcome, n) in [
            ("sent", &self.sent),
            ("failed", &self.failed),
            ("dropped", &self.dropped),
        ] {
            let _ = writeln!(
                out,
                "{ALERT_NOTIFICATIONS_TOTAL}{{outcome=\"{outcome}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert(n: usize, state: &str) -> AlertTransition {
        AlertTransition {
            alert_key: format!("k{n}"),
            seq: 1,
            state: state.into(),
            rule: "tool_failure_rate".into(),
            tool: format!("tool{n}"),
            model: "*".into(),
            instance: String::new(),
            value: 0.5,
            threshold: 0.2,
            volume: 10,
            started_ms: 0,
            at_ms: 0,
            gateway: "gw".into(),
        }
    }

    /// More alerts than the gauge shows, newest first as the store gives
    /// them: the one old firing alert is still shown.
    #[test]
    fn a_firing_alert_shows_however_many_resolved_ones_are_newer() {
        let board = AlertsBoard::default();
        board.write().running = true;
        let mut states: Vec<AlertTransition> =
            (0..MAX_GAUGES + 1).map(|n| alert(n, "resolved")).collect();
        states.push(alert(99_999, "firing"));
        board.set_states(states, 0);
        let mut out = String::new();
        board.render(&mut out);
        assert!(out.contains("tool=\"tool99999\",model=\"*\"} 1"), "{out}");
        let series = out.lines().filter(|l| l.starts_with(ALERTS_FIRING)).count();
        assert_eq!(series, MAX_GAUGES);
    }
}
