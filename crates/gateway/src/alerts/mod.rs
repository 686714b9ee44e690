//! Alerts when tools go bad (issue 19).
//!
//! - [`config`]: the `[alerts]` settings (window, rules, webhooks);
//! - [`rules`]: what fires and what resolves (with hysteresis), as pure functions;
//! - [`state`]: the loop that evaluates the rules on the store's data every
//!   `interval` and claims transitions in the store, so gateways sharing
//!   one database notify once per transition;
//! - [`deliver`]: webhook delivery (Alertmanager or Slack payloads), off the
//!   request path, bounded, retried;
//! - [`AlertsBoard`]: what this gateway shows: `toolwarden_alerts_firing` in
//!   `/metrics`, `GET /api/alerts`, the dashboard's strip.
//!
//! Alerts need a database; without one the loop does not run.

pub use crate::config::alerts as config;
pub(crate) mod deliver;
pub mod rules;
pub(crate) mod state;

use std::{
    collections::VecDeque,
    fmt::Write as _,
    net::SocketAddr,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use axum::{
    Json,
    extract::State,
    response::{IntoResponse, Response},
};
use serde_json::json;
use tokio::sync::watch;
use toolwarden_store::AlertTransition;

use crate::{Config, observe::Sinks, recorder::Store, state::AdminState};

pub use config::{AlertFormat, AlertsConfig, RawAlerts, RawRule, Rules, Threshold};

/// The gauge of firing alerts.
pub const ALERTS_FIRING: &str = "toolwarden_alerts_firing";
/// Webhook notifications by outcome (`sent`, `failed`, `dropped`).
pub const ALERT_NOTIFICATIONS_TOTAL: &str = "toolwarden_alert_notifications_total";

/// The alerts' latest states and the delivery counters, as this gateway
/// last read them.
#[derive(Debug, Default)]
pub struct AlertsBoard {
    state: RwLock<BoardState>,
    /// Notifications a webhook accepted (2xx).
    pub sent: AtomicU64,
    /// Notifications given up after every retry.
    pub failed: AtomicU64,
    /// Notifications dropped because a webhook's queue was full.
    pub dropped: AtomicU64,
    /// Failed attempts (each retry counts).
    pub attempts_failed: AtomicU64,
}

#[derive(Debug, Default)]
struct BoardState {
    running: bool,
    evaluated_ms: Option<i64>,
    error: Option<String>,
    states: Vec<AlertTransition>,
}

// === impl AlertsBoard ===

impl AlertsBoard {
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BoardState> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BoardState> {
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

    /// The alerts firing now (as of the last evaluation).
    pub fn firing(&self) -> Vec<AlertTransition> {
        self.read()
            .states
            .iter()
            .filter(|s| s.state == "firing")
            .cloned()
            .collect()
    }

    /// `toolwarden_alerts_firing{rule,tool,model}` (1 firing, 0 resolved;
    /// at most the 1000 latest alerts) and the notification counters.
    pub fn render(&self, out: &mut String) {
        let s = self.read();
        if !s.running {
            return;
        }
        let _ = writeln!(
            out,
            "# HELP {ALERTS_FIRING} Alerts firing now (1) or resolved (0), by rule, tool and model.\n# TYPE {ALERTS_FIRING} gauge"
        );
        for a in s.states.iter().take(1000) {
            let _ = write!(out, "{ALERTS_FIRING}{{rule=\"");
            crate::metrics::escape_label(&a.rule, out);
            out.push_str("\",tool=\"");
            crate::metrics::escape_label(&a.tool, out);
            out.push_str("\",model=\"");
            crate::metrics::escape_label(&a.model, out);
            if !a.instance.is_empty() {
                out.push_str("\",instance=\"");
                crate::metrics::escape_label(&a.instance, out);
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

/// Starts the evaluation loop (and the webhook tasks) on the current
/// runtime, when alerts are on and there is a database. `addr` names this
/// gateway unless `alerts.instance` does.
pub(crate) fn start(
    config: &Config,
    store: Option<&Store>,
    sinks: &Arc<Sinks>,
    addr: SocketAddr,
    shutdown: watch::Receiver<bool>,
) -> Result<(), crate::GatewayError> {
    let alerts = &config.alerts;
    let Some(store) = store.filter(|_| alerts.enabled) else {
        if alerts.enabled && !alerts.webhooks.is_empty() {
            tracing::warn!(
                "alert webhooks are configured but there is no database: alerts are off"
            );
        }
        return Ok(());
    };
    let board = sinks.metrics.alerts.clone();
    board.write().running = true;
    let instance = alerts
        .instance
        .clone()
        .unwrap_or_else(|| format!("{}:{}", hostname(), addr.port()));
    let client = crate::upstream::build_client(config)?;
    let delivery = state::Engine {
        config: alerts.clone(),
        store: store.clone(),
        sinks: sinks.clone(),
        board: board.clone(),
        delivery: deliver::Delivery::start(alerts, client, board, instance.clone()),
        jsonl: config.jsonl.clone(),
        instance,
        dropped: VecDeque::new(),
    };
    tokio::spawn(delivery.run(shutdown));
    Ok(())
}

fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "gateway".to_string())
}

/// The dashboard's firing-alerts strip (`/dashboard/alerts.js`).
pub const STRIP_JS: &str = include_str!("strip.js");

/// `GET /dashboard/alerts.js`.
pub(crate) async fn strip_js() -> Response {
    (
        [
            (http::header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (http::header::CACHE_CONTROL, "no-cache"),
        ],
        STRIP_JS,
    )
        .into_response()
}

/// `GET /api/alerts`: firing alerts and the latest transitions (from the
/// store: every gateway on the database agrees), and this gateway's
/// delivery counters.
pub(crate) async fn api(State(state): State<AdminState>) -> Response {
    let board = &state.sinks.metrics.alerts;
    let (running, evaluated_ms, error) = {
        let s = board.read();
        (s.running, s.evaluated_ms, s.error.clone())
    };
    let (firing, recent) = match &state.store {
        Some(store) => {
            let states = store.alert_states().await;
            let recent = store.alert_history(50).await;
            match (states, recent) {
                (Ok(states), Ok(recent)) => (
                    states.into_iter().filter(|s| s.state == "firing").collect(),
                    recent,
                ),
                (Err(e), _) | (_, Err(e)) => {
                    let kind = crate::admin_error::AdminErrorKind::Store;
                    return crate::admin_error::AdminError::new(kind, e.to_string())
                        .into_response();
                }
            }
        }
        None => (Vec::new(), Vec::new()),
    };
    Json(json!({
        "enabled": running,
        "evaluated_ms": evaluated_ms,
        "error": error,
        "firing": firing,
        "recent": recent,
        "notifications": {
            "sent": board.sent.load(Ordering::Relaxed),
            "failed": board.failed.load(Ordering::Relaxed),
            "dropped": board.dropped.load(Ordering::Relaxed),
            "attempts_failed": board.attempts_failed.load(Ordering::Relaxed),
        },
    }))
    .into_response()
}
