//! The gateway's own `events_dropped` alert when the store fails a round
//! (unreachable, or taking no writes: a full disk, a read-only file). That
//! is when events are dropped, and the round that would say so needs the
//! store: its heartbeat and its claim are writes. So this gateway decides
//! its own alert from its own counters and the states it read last,
//! announces a change without a claim (no other gateway evaluates this
//! instance while it is alive), and records it once the store takes writes
//! again ([`Engine::record_unrecorded`]).

use std::collections::HashSet;

use toolwarden_store::{AlertTransition, AlertWindow, StoreError};

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
        remember(self.unrecorded.entry(key).or_default(), t);
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
                    let latest = self.store.alert_latest(&key).await?;
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

/// Most steps of one alert kept to record while the store fails the
/// rounds: an alert that flaps for the whole outage adds one a round.
pub(crate) const MAX_UNRECORDED_STEPS: usize = 64;

/// Adds `t`, the alert's next step, to the `steps` kept to record. Past
/// [`MAX_UNRECORDED_STEPS`] the oldest firing-and-resolution pair after
/// the first step is forgotten (the receivers were told; the store will
/// not hear of it), and the later steps renumbered to follow: the first
/// step still continues the store's state, and each step's number keeps
/// its parity (odd firing, even resolved).
pub(crate) fn remember(steps: &mut Vec<AlertTransition>, t: AlertTransition) {
    steps.push(t);
    if steps.len() > MAX_UNRECORDED_STEPS {
        steps.drain(1..3);
        steps.iter_mut().skip(1).for_each(|s| s.seq -= 2);
        tracing::debug!(
            alert = steps[0].alert_key.as_str(),
            "a flapping alert's oldest unrecorded steps forgotten"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flapping_alert_keeps_a_bounded_numbered_history() {
        let step = |seq: i64, at_ms: i64| AlertTransition {
            alert_key: "events_dropped|*|*|gw".into(),
            seq,
            state: if seq % 2 == 1 { "firing" } else { "resolved" }.into(),
            rule: "events_dropped".into(),
            tool: "*".into(),
            model: "*".into(),
            instance: "gw".into(),
            value: 1.0,
            threshold: 0.0,
            volume: 1,
            started_ms: 0,
            at_ms,
            gateway: "gw".into(),
        };
        // The store held steps 1–4; the outage's steps start at 5, each
        // numbered after the latest kept (as `local_round` does).
        let mut steps: Vec<AlertTransition> = Vec::new();
        for round in 0..1000 {
            let seq = steps.last().map_or(5, |s| s.seq + 1);
            remember(&mut steps, step(seq, round));
            assert!(steps.len() <= MAX_UNRECORDED_STEPS);
        }
        assert_eq!(steps.len(), MAX_UNRECORDED_STEPS);
        assert_eq!(steps[0].seq, 5, "continues the store's state");
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(s.seq, 5 + i as i64, "numbered in order");
            assert_eq!(s.state == "firing", s.seq % 2 == 1, "{s:?}");
        }
        // The latest step is kept, in the state the receivers last heard
        // (step 5 + 999 of the run: resolved).
        let last = steps.last().expect("steps");
        assert_eq!((last.at_ms, last.state.as_str()), (999, "resolved"));
    }
}
