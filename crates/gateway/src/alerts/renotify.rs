//! Notifications sent again, each evaluation round, after the transitions:
//!
//! - a notification a webhook could not take (its retries spent on a
//!   failure that can pass: a receiver restarting, Slack down) is sent
//!   again while it is still its alert's latest transition (in the
//!   round's states, which hold the firing alerts and the latest resolved
//!   ones, `alerts.resolved_states`; else looked up by its key),
//!   until the webhook takes it; at most one per alert and webhook is on
//!   its way, and at most `alerts.kept_per_webhook` are kept.
//!   Only the gateway that sent it keeps it (in memory): no other gateway
//!   sends it, and if this one stops, the next repeat does;
//! - a firing alert's notification is repeated when `repeat_interval` has
//!   passed since it was last sent (its transition, or its last repeat),
//!   as Alertmanager's `repeat_interval`: the same alert (`startsAt`,
//!   labels, fingerprint), with the window's current value. Each repeat is
//!   claimed in the store (`alert_repeats`), so gateways sharing one
//!   database send it once; a gateway without webhooks claims none.

use std::collections::{HashMap, HashSet};

use toolwarden_store::{AlertRepeat, AlertTransition, StoreError};

use super::{rules::Observation, state::Engine};

// === impl Engine (renotify) ===

impl Engine {
    /// Sends again what is owed and repeats what is due at `now`, given
    /// the alerts' latest `states` and this round's observations (by key).
    /// Answers the keys of the alerts this gateway repeated.
    pub(crate) async fn renotify(
        &self,
        states: &[AlertTransition],
        observed: &HashMap<String, &Observation>,
        now: i64,
    ) -> Result<Vec<String>, StoreError> {
        if !self.delivery.has_webhooks() {
            return Ok(Vec::new());
        }
        {
            // A kept notification's alert may have resolved before the
            // states' latest resolved ones: looked up by its key.
            let read: HashSet<&str> = states.iter().map(|s| s.alert_key.as_str()).collect();
            let mut looked_up = Vec::new();
            for key in self.delivery.kept_keys() {
                if !read.contains(key.as_str())
                    && let Some(t) = self.store.alert_latest(&key).await?
                {
                    looked_up.push(t);
                }
            }
            let latest: HashMap<&str, &AlertTransition> = (states.iter().chain(&looked_up))
                .map(|s| (s.alert_key.as_str(), s))
                .collect();
            self.delivery.resend_failed(&latest);
        }
        let Some(every) = self.config.repeat_interval else {
            return Ok(Vec::new());
        };
        let every = i64::try_from(every.as_millis()).unwrap_or(i64::MAX);
        let firing: Vec<AlertTransition> = states
            .iter()
            .filter(|s| s.state == "firing")
            .cloned()
            .collect();
        if firing.is_empty() {
            return Ok(Vec::new());
        }
        let repeats: HashMap<String, AlertRepeat> = self
            .store
            .alert_repeats()
            .await?
            .into_iter()
            .map(|r| (r.alert_key.clone(), r))
            .collect();
        let mut repeated = Vec::new();
        for s in &firing {
            let last = repeats.get(&s.alert_key).filter(|r| r.seq == s.seq);
            let (done, since) = last.map_or((0, s.at_ms), |r| (r.repeat_no, r.at_ms));
            if now.saturating_sub(since) < every {
                continue;
            }
            let claim = AlertRepeat {
                alert_key: s.alert_key.clone(),
                seq: s.seq,
                repeat_no: done + 1,
                at_ms: now,
                gateway: self.instance.clone(),
            };
            if !self.store.claim_alert_repeat(&claim).await? {
                continue;
            }
            let mut t = s.clone();
            if let Some(o) = observed.get(&s.alert_key) {
                t.value = o.value;
                t.volume = i64::try_from(o.volume).unwrap_or(i64::MAX);
            }
            tracing::info!(rule = %t.rule, tool = t.tool.as_str(), model = t.model.as_str(), repeat = claim.repeat_no, "alert still firing: notification repeated");
            self.delivery.repeat(&t);
            repeated.push(t.alert_key);
        }
        Ok(repeated)
    }
}
