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
/// Webhook notifications by outcome (`sent`, `failed`, `dropped`) and
/// kind (`transition`, `resend`, `repeat`).
pub(crate) const ALERT_NOTIFICATIONS_TOTAL: &str = "toolwarden_alert_notifications_total";
/// See [`BoardState::held_back`].
pub(crate) const ALERTS_HELD_BACK: &str = "toolwarden_alerts_held_back";

/// Why a notification is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotificationKind {
    /// An alert fired or resolved.
    Transition,
    /// The alert's latest notification again, after a webhook failed to take it.
    Resend,
    /// A firing alert's notification again, `repeat_interval` after the last.
    Repeat,
}

/// Notifications of one kind, by outcome.
#[derive(Debug, Default)]
pub(crate) struct Outcomes {
    /// Accepted by a webhook (2xx).
    pub sent: AtomicU64,
    /// Given up after every retry.
    pub failed: AtomicU64,
    /// Not queued: the webhook's queue was full.
    pub dropped: AtomicU64,
}

/// The alerts' latest states and the delivery counters, as this gateway
/// last read them.
#[derive(Debug, Default)]
pub(crate) struct AlertsBoard {
    state: RwLock<BoardState>,
    /// Notifications by kind ([`NotificationKind::index`]) and outcome.
    notifications: [Outcomes; 3],
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
    /// Alerts over their thresholds the last round did not fire:
    /// `alerts.max_firing` alerts were firing.
    pub(crate) held_back: usize,
}

// === impl NotificationKind ===

impl NotificationKind {
    /// Every kind, in [`Self::index`] order.
    pub(crate) const ALL: [NotificationKind; 3] = [
        NotificationKind::Transition,
        NotificationKind::Resend,
        NotificationKind::Repeat,
    ];

    /// The `kind` label.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NotificationKind::Transition => "transition",
            NotificationKind::Resend => "resend",
            NotificationKind::Repeat => "repeat",
        }
    }

    fn index(self) -> usize {
        match self {
            NotificationKind::Transition => 0,
            NotificationKind::Resend => 1,
            NotificationKind::Repeat => 2,
        }
    }
}

// === impl AlertsBoard ===

impl AlertsBoard {
    /// The counters of notifications of `kind`.
    pub(crate) fn outcomes(&self, kind: NotificationKind) -> &Outcomes {
        &self.notifications[kind.index()]
    }

    /// Notifications of every kind with one outcome (`pick` names it).
    pub(crate) fn total(&self, pick: impl Fn(&Outcomes) -> &AtomicU64) -> u64 {
        self.notifications
            .iter()
            .map(|o| pick(o).load(Ordering::Relaxed))
            .sum()
    }

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

    /// `toolwarden_alerts_firing{rule,tool,model}` (`model` as
    /// [`model_label`]: `*` for all models, a model named `*`
    /// as `%2A`), and `gateway` (the
    /// alert's `instance`) on one gateway's own alerts (1 firing, 0 resolved;
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
            super::escape_label(model_label(a), out);
            // `gateway`, not `instance`: Prometheus gives every scraped
            // series the `instance` of its target, and a clash would
            // rename this one `exported_instance` (unless honor_labels).
            if !a.instance.is_empty() {
                out.push_str("\",gateway=\"");
                super::escape_label(&a.instance, out);
            }
            let _ = writeln!(out, "\"}} {}", u8::from(a.state == "firing"));
        }
        let _ = writeln!(
            out,
            "# HELP {ALERTS_HELD_BACK} Alerts over their thresholds the last evaluation did not fire: alerts.max_firing were firing.\n# TYPE {ALERTS_HELD_BACK} gauge\n{ALERTS_HELD_BACK} {}",
            s.held_back
        );
        let _ = writeln!(
            out,
            "# HELP {ALERT_NOTIFICATIONS_TOTAL} Alert webhook notifications by outcome and kind (transition, resend, repeat).\n# TYPE {ALERT_NOTIFICATIONS_TOTAL} counter"
        );
        for kind in NotificationKind::ALL {
            let o = self.outcomes(kind);
            for (outcome, n) in [
                ("sent", &o.sent),
                ("failed", &o.failed),
                ("dropped", &o.dropped),
            ] {
                let _ = writeln!(
                    out,
                    "{ALERT_NOTIFICATIONS_TOTAL}{{outcome=\"{outcome}\",kind=\"{}\"}} {}",
                    kind.as_str(),
                    n.load(Ordering::Relaxed)
                );
            }
        }
    }
}

/// The `model` label of the alert `t` in `/metrics` and in the webhooks'
/// Alertmanager labels: its key's model, so that no two alerts share a
/// series (or an Alertmanager group). `*` is all models; a model named `*`
/// is `%2A`, and `%` and `|` in a name are percent-encoded, as in the key
/// (`alerts::rules::alert_key`); other names are as they are. A key of
/// another shape (none is written so) gives the row's `model`.
pub(crate) fn model_label(t: &AlertTransition) -> &str {
    let parts: Vec<&str> = t.alert_key.split('|').collect();
    match parts.as_slice() {
        [_, _, model, _] => model,
        _ => &t.model,
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

    /// An `events_dropped` alert names its gateway in `gateway`: an
    /// `instance` label would clash with the one Prometheus gives every
    /// scraped series (and arrive as `exported_instance`).
    #[test]
    fn one_gateways_alert_names_it_in_gateway_not_instance() {
        let board = AlertsBoard::default();
        board.write().running = true;
        let mut a = alert(1, "firing");
        a.rule = "events_dropped".into();
        a.tool = "*".into();
        a.instance = "gw-a:8080".into();
        board.set_states(vec![a, alert(2, "firing")], 0);
        let mut out = String::new();
        board.render(&mut out);
        assert!(
            out.contains(
                "toolwarden_alerts_firing{rule=\"events_dropped\",tool=\"*\",model=\"*\",gateway=\"gw-a:8080\"} 1\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("{rule=\"tool_failure_rate\",tool=\"tool2\",model=\"*\"} 1\n"),
            "{out}"
        );
        assert!(!out.contains("instance="), "{out}");
    }

    /// The all-models alert and the alert of a model a client named `*`
    /// are two alerts: they showed as one series twice (both
    /// `model="*"`), which Prometheus takes as a duplicate and drops.
    #[test]
    fn a_model_named_star_is_a_series_of_its_own() {
        let board = AlertsBoard::default();
        board.write().running = true;
        // Keys as `alerts::rules::alert_key` makes them.
        let of = |key_model: &str, model: &str| {
            let mut a = alert(1, "firing");
            a.tool = "book".into();
            a.model = model.into();
            a.alert_key = format!("tool_failure_rate|book|{key_model}|");
            a
        };
        board.set_states(
            vec![
                of("*", "*"),
                of("%2A", "*"),
                of("%252A", "%2A"),
                of("gpt-4o", "gpt-4o"),
            ],
            0,
        );
        let mut out = String::new();
        board.render(&mut out);
        let series: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(ALERTS_FIRING))
            .collect();
        let unique: std::collections::HashSet<&&str> = series.iter().collect();
        assert_eq!((series.len(), unique.len()), (4, 4), "{out}");
        for model in ["*", "%2A", "%252A", "gpt-4o"] {
            let line = format!(
                "{ALERTS_FIRING}{{rule=\"tool_failure_rate\",tool=\"book\",model=\"{model}\"}} 1"
            );
            assert!(series.contains(&line.as_str()), "{line}\n{out}");
        }
    }
}
