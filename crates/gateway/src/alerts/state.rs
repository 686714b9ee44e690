//! The evaluation loop: every `interval`, read the window from the store,
//! compare with the alerts' current states (also from the store, so every
//! gateway on one database sees the same: every firing alert, the latest
//! resolved ones, and an alert about to fire looked up by its key), and
//! claim each transition in `alert_transitions`. Only the gateway whose
//! insert wins announces it: a JSONL line, a log line, the webhooks.
//!
//! A per-gateway alert (`events_dropped`, labelled with its `instance`) is
//! the business of the gateway that raised it, as long as that instance
//! evaluates: each round writes the gateway's heartbeat. One not seen for
//! [`STALE_WINDOWS`] windows (stopped, or restarted under another name, as
//! a container gets a new hostname) can resolve nothing any more, so any
//! gateway resolves its alerts, `gateway` naming the one that did.
//!
//! Gateways on one database may differ in their `[alerts]` rules (a rule
//! turned off, another threshold, a rollout). A gateway resolves a shared
//! alert only when it could have fired it itself: it evaluates the rule
//! with the threshold recorded in the firing row. Otherwise the alert is
//! the business of the gateway that fired it, while that one evaluates
//! ([`Engine::leaves_to_another`]); so a gateway that does not see an alert
//! the way its firer does never resolves it only for the firer to fire it
//! again next round.

use std::{
    collections::{BTreeSet, HashMap, HashSet, VecDeque},
    path::PathBuf,
    sync::Arc,
};

use serde_json::json;
use tokio::sync::watch;
use toolwarden_store::{AlertTransition, AlertWindow, JsonlLog, Store, StoreError};

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
    /// This instance's own transitions announced while the store failed
    /// the rounds, by alert key, to record when it takes writes again
    /// (`alerts::local`).
    pub(crate) unrecorded: HashMap<String, Vec<AlertTransition>>,
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
                        tracing::warn!(error = %e, "alert evaluation failed; this gateway's events_dropped is evaluated on its own");
                        self.local_round(now_ms());
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
    pub(crate) fn dropped_in_window(&mut self, now: i64) -> u64 {
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
        let window = (self.store)
            .alert_window(now - window_ms, self.config.window_rows)
            .await?;
        self.round_over(&window, now).await
    }

    /// One evaluation of `window`, the store's numbers at `now`.
    pub(crate) async fn round_over(
        &mut self,
        window: &AlertWindow,
        now: i64,
    ) -> Result<(), StoreError> {
        self.record_unrecorded().await?;
        let gone_before = now.saturating_sub(self.stale_after_ms());
        let seen: HashMap<String, i64> = self
            .store
            .alert_heartbeat(&self.instance, now, gone_before)
            .await?
            .into_iter()
            .collect();
        let dropped = self.dropped_in_window(now);
        let states = self.store.alert_states(self.config.resolved_states).await?;
        let completed;
        let window = if window.is_cut(self.config.window_rows) {
            completed = self.complete(window, &states, now).await?;
            &completed
        } else {
            window
        };
        let firing: HashSet<&str> = states
            .iter()
            .filter(|s| s.state == "firing")
            .map(|s| s.alert_key.as_str())
            .collect();
        let observations =
            rules::observe(&self.config.rules, window, dropped, &self.instance, &firing);
        let latest: HashMap<&str, &AlertTransition> =
            states.iter().map(|s| (s.alert_key.as_str(), s)).collect();
        let observed: HashMap<String, &Observation> =
            observations.iter().map(|o| (o.key(), o)).collect();
        let mut transitions = Vec::new();
        for s in states.iter().filter(|s| s.state == "firing") {
            // Evaluating (a heartbeat, or the alert itself, recent enough).
            let evaluates = |name: &str| {
                let last = seen.get(name).copied().unwrap_or(i64::MIN);
                last.max(s.at_ms) >= gone_before
            };
            if self.leaves_to_another(s, evaluates) {
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
        // What would fire, busiest first: past `max_firing` alerts firing
        // (tools and models are named by clients), the rest is held back.
        let mut fire: Vec<(&String, &Observation)> = (observed.iter())
            .filter(|(key, _)| !firing.contains(key.as_str()))
            .filter(|(_, obs)| {
                rules::decide(false, Some(obs), self.config.resolve_ratio) == Decision::Fire
            })
            .map(|(key, obs)| (key, *obs))
            .collect();
        fire.sort_by(|a, b| b.1.volume.cmp(&a.1.volume).then_with(|| a.0.cmp(b.0)));
        // The firing alerts once this round's resolutions are claimed.
        let mut firing_after = firing.len().saturating_sub(transitions.len());
        let mut held_back = 0;
        for (key, obs) in fire {
            if firing_after >= self.config.max_firing {
                held_back += 1;
                continue;
            }
            // The states hold every firing alert but only the latest
            // resolved ones: an alert resolved before those has its latest
            // step in the store, and this one must follow it (the
            // `(alert_key, seq)` claim every gateway races for).
            let previous = latest.get(key.as_str()).copied();
            let stored = match previous {
                Some(_) => None,
                None => self.store.alert_latest(key).await?,
            };
            let previous = previous.or(stored.as_ref());
            if previous.is_some_and(|p| p.state == "firing") {
                continue;
            }
            let seq = previous.map_or(1, |p| p.seq + 1);
            transitions.push(obs.transition(seq, "firing", now, now, &self.instance));
            firing_after += 1;
        }
        if held_back > 0 {
            tracing::warn!(
                held_back,
                max_firing = self.config.max_firing,
                "alerts over their thresholds not fired: alerts.max_firing alerts are firing"
            );
        }
        self.board.write().held_back = held_back;
        let changed = !transitions.is_empty();
        for t in transitions {
            if self.store.claim_alert_transition(&t).await? {
                self.announce(&t);
                // Shown at once: when a later store call fails this round,
                // the local round that follows (`alerts::local`) reads the
                // board, and must not announce this step again.
                self.show(&t);
            }
        }
        let states = if changed {
            self.store.alert_states(self.config.resolved_states).await?
        } else {
            states
        };
        self.board.set_states(states.clone(), now);
        // The round's transitions are recorded and shown: a failed re-send
        // or repeat is tried again next round, and does not fail this one.
        if let Err(e) = self.renotify(&states, &observed, now).await {
            tracing::warn!(error = %e, "alert notifications were not sent again this round");
        }
        Ok(())
    }

    /// `window`, which the store cut at `alerts.window_rows` rows a half (a
    /// flood of tool or model names), with every row of the tools and
    /// models of the alerts firing in `states`: one of them left out would
    /// resolve as if it had no data, and a tool's alert over all its models
    /// would see only some. (A requests alert over all models sees the
    /// busiest `window_rows` models.)
    async fn complete(
        &self,
        window: &AlertWindow,
        states: &[AlertTransition],
        now: i64,
    ) -> Result<AlertWindow, StoreError> {
        let rows = self.config.window_rows;
        let (mut tools, mut models) = (BTreeSet::new(), BTreeSet::new());
        let firing = states.iter().filter(|s| s.state == "firing");
        for s in firing.filter(|s| s.instance.is_empty()) {
            if s.tool != "*" && window.tools_cut(rows) {
                tools.insert(s.tool.clone());
            } else if s.tool == "*" && s.model != "*" && window.requests_cut(rows) {
                models.insert(s.model.clone());
            }
        }
        let mut complete = window.clone();
        if tools.is_empty() && models.is_empty() {
            return Ok(complete);
        }
        let window_ms = i64::try_from(self.config.window.as_millis()).unwrap_or(i64::MAX);
        let (tools, models): (Vec<String>, Vec<String>) =
            (tools.into_iter().collect(), models.into_iter().collect());
        let of_firing = (self.store)
            .alert_window_of(now - window_ms, (&tools, &models), rows)
            .await?;
        complete
            .tools
            .retain(|r| tools.binary_search(&r.tool).is_err());
        complete.tools.extend(of_firing.tools);
        complete
            .requests
            .retain(|r| models.binary_search(&r.model).is_err());
        complete.requests.extend(of_firing.requests);
        Ok(complete)
    }

    /// Whether the firing alert `s` is another gateway's to resolve, as
    /// long as that one `evaluates`: one about another gateway's own
    /// counters (its `instance`), or one this gateway could not have fired
    /// itself (it does not evaluate the rule, or with another threshold)
    /// and that the gateway that fired it still evaluates.
    fn leaves_to_another(&self, s: &AlertTransition, evaluates: impl Fn(&str) -> bool) -> bool {
        if !s.instance.is_empty() {
            return s.instance != self.instance && evaluates(&s.instance);
        }
        let could_have_fired = rules::limit_of(&self.config.rules, &s.rule)
            .is_some_and(|limit| limit.threshold == s.threshold);
        !could_have_fired && s.gateway != self.instance && evaluates(&s.gateway)
    }

    /// `t` as its alert's latest state on the board, until the round's
    /// states replace them all.
    pub(crate) fn show(&self, t: &AlertTransition) {
        let mut board = self.board.write();
        board.states.retain(|s| s.alert_key != t.alert_key);
        board.states.push(t.clone());
    }

    /// Logs, appends to the JSONL log and sends `t`. Names are logged as
    /// text values (`tool = name.as_str()`, quoted with their control
    /// characters escaped on a text log line), not `Display`ed: a carriage
    /// return or newline in a client's tool name would rewrite or forge a
    /// line of the operator's log.
    pub(crate) fn announce(&self, t: &AlertTransition) {
        let value = rules::RuleName::format_value(&t.rule, t.value);
        if t.state == "firing" {
            tracing::warn!(rule = %t.rule, tool = t.tool.as_str(), model = t.model.as_str(), %value, "alert firing");
        } else if let Some(why) = rules::resolved_for_gone_instance(t) {
            tracing::info!(rule = %t.rule, instance = t.instance.as_str(), why, "alert resolved");
        } else {
            tracing::info!(rule = %t.rule, tool = t.tool.as_str(), model = t.model.as_str(), %value, "alert resolved");
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
/// recorder appends to the same file, also with `O_APPEND`), after a
/// newline when the file ends inside a line ([`JsonlLog::append_line`]).
fn append_jsonl(path: &std::path::Path, t: &AlertTransition) -> std::io::Result<()> {
    let mut line = json!({"type": "alert"});
    if let (Some(map), Ok(serde_json::Value::Object(fields))) =
        (line.as_object_mut(), serde_json::to_value(t))
    {
        map.extend(fields);
    }
    let mut bytes = line.to_string().into_bytes();
    bytes.push(b'\n');
    JsonlLog::unbounded(path).append_line(&bytes)
}

#[cfg(test)]
mod tests;
