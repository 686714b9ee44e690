//! The evaluation loop: every `interval`, read the window from the store,
//! compare with the alerts' current states (also from the store, so every
//! gateway on one database sees the same), and claim each transition in
//! `alert_transitions`. Only the gateway whose insert wins announces it:
//! a JSONL line, a log line, the webhooks.
//!
//! A per-gateway alert (`events_dropped`, labelled with its `instance`) is
//! the business of the gateway that raised it, as long as that instance
//! evaluates: each round writes the gateway's heartbeat. One not seen for
//! [`STALE_WINDOWS`] windows (stopped, or restarted under another name, as
//! a container gets a new hostname) can resolve nothing any more, so any
//! gateway resolves its alerts, `gateway` naming the one that did.

use std::{collections::HashMap, collections::VecDeque, io::Write, path::PathBuf, sync::Arc};

use serde_json::json;
use tokio::sync::watch;
use toolwarden_store::{AlertTransition, Store, StoreError};

use super::{
    AlertsBoard,
    config::AlertsConfig,
    deliver::Delivery,
    rules::{self, Decision, Observation},
};
use crate::observe::{Sinks, now_ms};

/// Windows (at least [`STALE_INTERVALS`] rounds) after which an instance
/// that wrote no heartbeat is taken as gone.
pub(crate) const STALE_WINDOWS: i64 = 2;
/// Rounds an instance may miss (a slow or failed round) before it is gone.
pub(crate) const STALE_INTERVALS: i64 = 3;

/// What one gateway's evaluation loop needs.
pub(crate) struct Engine {
    pub(crate) config: AlertsConfig,
    pub(crate) store: Store,
    pub(crate) sinks: Arc<Sinks>,
    pub(crate) board: Arc<AlertsBoard>,
    pub(crate) delivery: Delivery,
    pub(crate) jsonl: Option<PathBuf>,
    /// This gateway's name (`host:port` unless configured).
    pub(crate) instance: String,
    /// (unix ms, events dropped so far), oldest first, one per round.
    pub(crate) dropped: VecDeque<(i64, u64)>,
}

// === impl Engine ===

impl Engine {
    /// Evaluate every `interval` until `shutdown` turns true.
    pub(crate) async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(self.config.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    if let Err(e) = self.round().await {
                        tracing::warn!(error = %e, "alert evaluation failed");
                        self.board.set_error(e.to_string());
                    }
                }
                _ = shutdown.changed() => {
                    if *shutdown.borrow() {
                        break;
                    }
                }
            }
        }
    }

    /// Events dropped by this gateway's recorder within the window.
    fn dropped_in_window(&mut self, now: i64) -> u64 {
        let total = self.sinks.recorder.counters().events_dropped;
        self.dropped.push_back((now, total));
        let start = now - i64::try_from(self.config.window.as_millis()).unwrap_or(i64::MAX);
        // Keep the newest sample at or before the window's start as the base.
        while self.dropped.len() > 1 && self.dropped[1].0 <= start {
            self.dropped.pop_front();
        }
        total.saturating_sub(self.dropped.front().map_or(total, |s| s.1))
    }

    /// How long an instance may go without a heartbeat before its
    /// per-gateway alerts are anyone's to resolve.
    fn stale_after_ms(&self) -> i64 {
        let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let window = ms(self.config.window).saturating_mul(STALE_WINDOWS);
        window.max(ms(self.config.interval).saturating_mul(STALE_INTERVALS))
    }

    /// One evaluation.
    pub(crate) async fn round(&mut self) -> Result<(), StoreError> {
        let now = now_ms();
        let window_ms = i64::try_from(self.config.window.as_millis()).unwrap_or(i64::MAX);
        let gone_before = now.saturating_sub(self.stale_after_ms());
        let seen: HashMap<String, i64> = self
            .store
            .alert_heartbeat(&self.instance, now, gone_before)
            .await?
            .into_iter()
            .collect();
        let window = self.store.alert_window(now - window_ms).await?;
        let dropped = self.dropped_in_window(now);
        let observations = rules::observe(&self.config.rules, &window, dropped, &self.instance);
        let states = self.store.alert_states().await?;
        let latest: HashMap<&str, &AlertTransition> =
            states.iter().map(|s| (s.alert_key.as_str(), s)).collect();
        let observed: HashMap<String, &Observation> =
            observations.iter().map(|o| (o.key(), o)).collect();
        let mut transitions = Vec::new();
        for s in states.iter().filter(|s| s.state == "firing") {
            // Another gateway's own counters are its business while it
            // evaluates (a heartbeat, or the alert itself, recent enough).
            let gone = || {
                let last = seen.get(&s.instance).copied().unwrap_or(i64::MIN);
                last.max(s.at_ms) < gone_before
            };
            if !s.instance.is_empty() && s.instance != self.instance && !gone() {
                continue;
            }
            // A gone instance's alert has no observation here (its key
            // names that instance): resolved as if it had no data left.
            let obs = observed.get(&s.alert_key).copied();
            if rules::decide(true, obs, self.config.resolve_ratio) == Decision::Resolve {
                transitions.push(AlertTransition {
                    seq: s.seq + 1,
                    state: "resolved".into(),
                    value: obs.map_or(0.0, |o| o.value),
                    volume: obs.map_or(0, |o| i64::try_from(o.volume).unwrap_or(i64::MAX)),
                    at_ms: now,
                    gateway: self.instance.clone(),
                    ..s.clone()
                });
            }
        }
        for (key, obs) in &observed {
            let previous = latest.get(key.as_str());
            if previous.is_some_and(|p| p.state == "firing") {
                continue;
            }
            if rules::decide(false, Some(obs), self.config.resolve_ratio) == Decision::Fire {
                transitions.push(AlertTransition {
                    alert_key: key.clone(),
                    seq: previous.map_or(1, |p| p.seq + 1),
                    state: "firing".into(),
                    rule: obs.rule.as_str().into(),
                    tool: obs.tool.clone(),
                    model: obs.model.clone(),
                    instance: obs.instance.clone(),
                    value: obs.value,
                    threshold: obs.limit.threshold,
                    volume: i64::try_from(obs.volume).unwrap_or(i64::MAX),
                    started_ms: now,
                    at_ms: now,
                    gateway: self.instance.clone(),
                });
            }
        }
        let changed = !transitions.is_empty();
        for t in transitions {
            if self.store.claim_alert_transition(&t).await? {
                self.announce(&t);
            }
        }
        let states = if changed {
            self.store.alert_states().await?
        } else {
            states
        };
        self.board.set_states(states, now);
        Ok(())
    }

    fn announce(&self, t: &AlertTransition) {
        let value = rules::RuleName::format_value(&t.rule, t.value);
        if t.state == "firing" {
            tracing::warn!(rule = %t.rule, tool = %t.tool, model = %t.model, %value, "alert firing");
        } else if let Some(why) = rules::resolved_for_gone_instance(t) {
            tracing::info!(rule = %t.rule, instance = %t.instance, why, "alert resolved");
        } else {
            tracing::info!(rule = %t.rule, tool = %t.tool, model = %t.model, %value, "alert resolved");
        }
        if let Some(path) = &self.jsonl
            && let Err(e) = append_jsonl(path, t)
        {
            tracing::warn!(error = %e, path = %path.display(), "cannot append the alert to the JSONL log");
        }
        self.delivery.send(t);
    }
}

/// One `{"type":"alert", …}` line, appended with a single write (the
/// recorder appends to the same file, also with `O_APPEND`).
fn append_jsonl(path: &std::path::Path, t: &AlertTransition) -> std::io::Result<()> {
    let mut line = json!({"type": "alert"});
    if let (Some(map), Ok(serde_json::Value::Object(fields))) =
        (line.as_object_mut(), serde_json::to_value(t))
    {
        map.extend(fields);
    }
    let mut bytes = line.to_string().into_bytes();
    bytes.push(b'\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(&bytes)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use toolwarden_store::{NoopObserver, Recorder, RecorderOptions};

    use super::*;
    use crate::{Config, metrics::Metrics};

    /// An engine named `instance` over `store`, with no webhooks.
    fn engine(store: &Store, instance: &str) -> Engine {
        let recorder = Recorder::start(
            None,
            RecorderOptions {
                queue_capacity: 16,
                batch_max: 16,
                flush_interval: Duration::from_millis(5),
                jsonl: None,
            },
            Arc::new(NoopObserver),
        );
        let sinks = Arc::new(Sinks::new(
            recorder,
            Arc::new(Metrics::new()),
            Default::default(),
        ));
        let config = AlertsConfig::default();
        let board = sinks.metrics.alerts.clone();
        let client = crate::upstream::build_client(&Config::for_tests("http://127.0.0.1:9"))
            .expect("client");
        Engine {
            delivery: Delivery::start(&config, client, board.clone(), instance.into()),
            config,
            store: store.clone(),
            sinks,
            board,
            jsonl: None,
            instance: instance.into(),
            dropped: VecDeque::new(),
        }
    }

    /// `instance`'s `events_dropped` alert, firing since `at_ms`.
    fn dropped_alert(instance: &str, at_ms: i64) -> AlertTransition {
        AlertTransition {
            alert_key: rules::alert_key("events_dropped", "*", "*", instance),
            seq: 1,
            state: "firing".into(),
            rule: "events_dropped".into(),
            tool: "*".into(),
            model: "*".into(),
            instance: instance.into(),
            value: 7.0,
            threshold: 0.0,
            volume: 7,
            started_ms: at_ms,
            at_ms,
            gateway: instance.into(),
        }
    }

    async fn state_of(store: &Store, key: &str) -> AlertTransition {
        let states = store.alert_states().await.expect("states");
        states
            .into_iter()
            .find(|s| s.alert_key == key)
            .expect("the alert")
    }

    /// A container restarted under a new hostname is a new instance: the
    /// old one's `events_dropped` alert is resolved by another gateway once
    /// the old one has stopped evaluating for long enough, not while it
    /// still evaluates (its heartbeat), nor soon after it fired.
    #[tokio::test]
    async fn a_stale_instances_dropped_events_alert_is_resolved_by_another() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("alerts.db").display());
        let store = Store::open(&url).await.expect("store");
        let mut new = engine(&store, "gw-new");
        let window_ms = i64::try_from(new.config.window.as_millis()).expect("window");
        let long_ago = now_ms() - 3 * window_ms;
        let old = dropped_alert("gw-old", long_ago);
        assert!(store.claim_alert_transition(&old).await.expect("claim"));
        let recent = dropped_alert("gw-recent", now_ms() - window_ms);
        assert!(store.claim_alert_transition(&recent).await.expect("claim"));

        // gw-old still evaluates: its alert is its own business.
        store
            .alert_heartbeat("gw-old", now_ms(), 0)
            .await
            .expect("beat");
        new.round().await.expect("round");
        assert_eq!(state_of(&store, &old.alert_key).await.state, "firing");

        // gw-old was last seen three windows ago: gone.
        store
            .alert_heartbeat("gw-old", long_ago, 0)
            .await
            .expect("beat");
        new.round().await.expect("round");
        let s = state_of(&store, &old.alert_key).await;
        assert_eq!((s.state.as_str(), s.seq), ("resolved", 2), "{s:?}");
        assert_eq!(
            (s.gateway.as_str(), s.instance.as_str()),
            ("gw-new", "gw-old")
        );
        assert_eq!((s.value, s.volume), (0.0, 0));
        let why = rules::resolved_for_gone_instance(&s).expect("a reason");
        assert!(why.contains("gw-old stopped evaluating"), "{why}");
        // Fired a window ago, no heartbeat (a gateway of an older version):
        // not gone yet.
        assert_eq!(state_of(&store, &recent.alert_key).await.state, "firing");
        // This gateway's own heartbeat was written; gw-old's forgotten.
        let seen = store
            .alert_heartbeat("probe", now_ms(), 0)
            .await
            .expect("beat");
        let names: Vec<&str> = seen.iter().map(|(i, _)| i.as_str()).collect();
        assert!(
            names.contains(&"gw-new") && !names.contains(&"gw-old"),
            "{names:?}"
        );
    }
}
