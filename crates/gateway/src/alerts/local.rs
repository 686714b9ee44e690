//! The gateway's own `events_dropped` alert when the store fails a round
//! (unreachable, or taking no writes: a full disk, a read-only file). That
//! is when events are dropped, and the round that would say so needs the
//! store: its heartbeat and its claim are writes. So this gateway decides
//! its own alert from its own counters and the states it read last,
//! announces a change without a claim (no other gateway evaluates this
//! instance while it is alive), and records it once the store takes writes
//! again ([`Engine::record_unrecorded`]).

use std::collections::HashSet;

use toolwarden_store::{AlertWindow, StoreError};

use super::{
    rules::{self, Decision},
    state::Engine,
};

// === impl Engine ===

impl Engine {
    /// The round without the store: this instance's `events_dropped`.
    pub(crate) fn local_round(&mut self, now: i64) {
        let dropped = self.dropped_in_window(now);
        let none = HashSet::new();
        let Some(obs) = rules::observe(
            &self.config.rules,
            &AlertWindow::default(),
            dropped,
            &self.instance,
            &none,
        )
        .into_iter()
        .find(|o| o.instance == self.instance) else {
            return;
        };
        let key = obs.key();
        let latest = self
            .unrecorded
            .get(&key)
            .and_then(|ts| ts.last())
            .cloned()
            .or_else(|| {
                let board = self.board.read();
                board.states.iter().find(|s| s.alert_key == key).cloned()
            });
        let firing = latest.as_ref().is_some_and(|l| l.state == "firing");
        let seq = latest.as_ref().map_or(1, |l| l.seq + 1);
        let (state, started_ms) = match rules::decide(firing, Some(&obs), self.config.resolve_ratio)
        {
            Decision::Fire => ("firing", now),
            Decision::Resolve => ("resolved", latest.as_ref().map_or(now, |l| l.started_ms)),
            Decision::Keep => return,
        };
        let t = obs.transition(seq, state, started_ms, now, &self.instance);
        self.announce(&t);
        self.show(&t);
        self.unrecorded.entry(key).or_default().push(t);
    }

    /// Records the transitions [`Engine::local_round`] announced, now that
    /// the store may take them (not announced again).
    ///
    /// Each step in order (a firing and its resolution during one outage
    /// both), so that the store's history and the receivers agree. A claim
    /// that loses found the store holding that step already, numbered from
    /// states this gateway had not read (it started while the store failed
    /// its rounds, or another gateway resolved the alert meanwhile): when
    /// the alert's latest state there is this transition's, it is dropped;
    /// otherwise it (and the steps after it) is renumbered to follow that
    /// state, so the store says what the receivers were told, and the
    /// next round resolves a firing that no longer holds.
    pub(crate) async fn record_unrecorded(&mut self) -> Result<(), StoreError> {
        let keys: Vec<String> = self.unrecorded.keys().cloned().collect();
        for key in keys {
            while let Some(t) = self.unrecorded.get(&key).and_then(|ts| ts.first()).cloned() {
                if !self.store.claim_alert_transition(&t).await? {
                    let states = self.store.alert_states().await?;
                    let latest = states.iter().find(|s| s.alert_key == key);
                    if let Some(latest) = latest.filter(|l| l.state != t.state)
                        && let Some(ts) = self.unrecorded.get_mut(&key)
                    {
                        // The opposite state: the next step has this one's parity.
                        let shift = latest.seq + 1 - t.seq;
                        ts.iter_mut().for_each(|t| t.seq += shift);
                        continue;
                    }
                }
                if let Some(ts) = self.unrecorded.get_mut(&key) {
                    ts.remove(0);
                    if ts.is_empty() {
                        self.unrecorded.remove(&key);
                    }
                }
            }
        }
        Ok(())
    }
}
