//! Alerts when tools go bad (issue 19).
//!
//! - [`config`]: the `[alerts]` settings (window, rules, webhooks);
//! - [`rules`]: what fires and what resolves (with hysteresis), as pure functions;
//! - [`state`]: the loop that evaluates the rules on the store's data every
//!   `interval` and claims transitions in the store, so gateways sharing
//!   one database notify once per transition;
//! - [`deliver`]: webhook delivery (Alertmanager or Slack payloads), off the
//!   request path, bounded, retried; a notification a webhook could not
//!   take is kept (one per alert) to be sent again; `go_quote` quotes
//!   the Alertmanager group key's label values as Alertmanager does;
//! - `renotify`: each round, those kept notifications sent again while
//!   they are their alert's latest, and a still-firing alert's repeated
//!   every `repeat_interval` (claimed in the store as transitions are);
//! - [`AlertsBoard`]: what this gateway shows: `toolwarden_alerts_firing` in
//!   `/metrics`, `GET /api/alerts`, the dashboard's strip.
//!
//! Alerts need a database; without one the loop does not run.

pub(crate) use crate::config::alerts as config;
pub(crate) mod deliver;
mod go_quote;
mod local;
mod renotify;
pub(crate) mod rules;
pub(crate) mod state;

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, atomic::Ordering},
};

use axum::{
    Json,
    extract::State,
    response::{IntoResponse, Response},
};
use serde_json::json;
use tokio::sync::watch;

use crate::{Config, observe::Sinks, recorder::Store, state::AdminState};

pub use config::{AlertFormat, AlertsConfig, RawAlerts, RawRule, Rules, Threshold};

pub(crate) use crate::metrics::alerts_board::{AlertsBoard, NotificationKind, model_label};

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
        jsonl: config.jsonl.as_ref().map(|log| log.path.clone()),
        instance,
        dropped: VecDeque::new(),
        unrecorded: Default::default(),
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

/// `{"transition": {"sent": …, "failed": …, "dropped": …}, "resend": …, "repeat": …}`.
fn by_kind(board: &AlertsBoard) -> serde_json::Value {
    let kinds = NotificationKind::ALL.iter().map(|kind| {
        let o = board.outcomes(*kind);
        let counts = json!({
            "sent": o.sent.load(Ordering::Relaxed),
            "failed": o.failed.load(Ordering::Relaxed),
            "dropped": o.dropped.load(Ordering::Relaxed),
        });
        (kind.as_str().to_string(), counts)
    });
    serde_json::Value::Object(kinds.collect())
}

/// The dashboard's firing-alerts strip (`/dashboard/alerts.js`).
pub(crate) const STRIP_JS: &str = include_str!("strip.js");

/// `GET /dashboard/alerts.js`, served as the page's other assets are.
pub(crate) async fn strip_js() -> Response {
    crate::dashboard::assets::asset(STRIP_JS, "text/javascript; charset=utf-8")
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
            // The firing ones only.
            let states = store.alert_states(0).await;
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
    crate::admin_error::no_store(
        Json(json!({
            "enabled": running,
            "evaluated_ms": evaluated_ms,
            "error": error,
            "firing": firing,
            "recent": recent,
            "notifications": {
                "sent": board.total(|o| &o.sent),
                "failed": board.total(|o| &o.failed),
                "dropped": board.total(|o| &o.dropped),
                "attempts_failed": board.attempts_failed.load(Ordering::Relaxed),
                "by_kind": by_kind(board),
            },
        }))
        .into_response(),
    )
}

#[cfg(test)]
mod tests {
    /// The strip's `describe` run by Node (skipped, loudly, without it):
    /// the all-models alert names no model, the alert of a model a client
    /// named `*` names it (it said nothing, as for all models); a tool a
    /// client named `*` is named too (it said nothing, as for the rules
    /// over requests, whose tool is `*`), and those name no tool.
    #[test]
    fn the_strip_names_a_model_called_star() {
        let Ok(node) = std::process::Command::new("node").arg("--version").output() else {
            eprintln!("SKIPPED the_strip_names_a_model_called_star: no node");
            return;
        };
        assert!(node.status.success());
        let source = super::STRIP_JS
            .replace("poll();\n", "")
            .replace("setInterval(poll, 5000);\n", "");
        let script = format!(
            "{source}\nconst a = {{rule: 'tool_failure_rate', tool: 'Bash', model: '*', \
             instance: '', value: 0.5, threshold: 0.05}};\n\
             console.log(describe({{...a, alert_key: 'tool_failure_rate|Bash|*|'}}));\n\
             console.log(describe({{...a, alert_key: 'tool_failure_rate|Bash|%2A|'}}));\n\
             console.log(describe({{...a, tool: '*', alert_key: 'tool_exec_time|*|*|', \
             rule: 'tool_exec_time', value: 6200, threshold: 5000}}));\n\
             console.log(describe({{...a, tool: '*', alert_key: 'upstream_error_rate|*|*|', \
             rule: 'upstream_error_rate'}}));\n"
        );
        let out = std::process::Command::new("node")
            .args(["-e", &script])
            .output()
            .expect("node");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "tool_failure_rate (tool Bash): 50.0% > 5.0%",
                "tool_failure_rate (tool Bash, model *): 50.0% > 5.0%",
                "tool_exec_time (tool *): 6.2 s > 5.0 s",
                "upstream_error_rate: 50.0% > 5.0%"
            ]
        );
    }
}
