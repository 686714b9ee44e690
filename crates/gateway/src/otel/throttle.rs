//! [`Throttle`]: a warning that can come with every batch (a collector
//! that rejects part of each: OTLP partial success) logged at most once per
//! interval, with how many were held back since and what they counted.

use std::time::{Duration, Instant};

/// How often a collector's rejections are warned about at most.
pub(super) const REJECTIONS_EVERY: Duration = Duration::from_secs(60);

/// What was held back since the last warning.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Held {
    /// Warnings not logged.
    pub(super) times: u64,
    /// The sum of what they counted (spans rejected).
    pub(super) count: u64,
}

/// At most one warning per `every`: the first one, then the first after
/// `every` has passed since the last one logged.
#[derive(Debug)]
pub(super) struct Throttle {
    every: Duration,
    last: Option<Instant>,
    held: Held,
}

// === impl Throttle ===

impl Throttle {
    pub(super) fn new(every: Duration) -> Throttle {
        Throttle {
            every,
            last: None,
            held: Held::default(),
        }
    }

    /// A warning counting `count` is due at `now`: `Some` (what was held
    /// back before it, then forgotten) when it is to be logged, `None`
    /// when it is held back.
    pub(super) fn note(&mut self, now: Instant, count: u64) -> Option<Held> {
        let due = self
            .last
            .is_none_or(|last| now.saturating_duration_since(last) >= self.every);
        if due {
            self.last = Some(now);
            Some(std::mem::take(&mut self.held))
        } else {
            self.held.times += 1;
            self.held.count = self.held.count.saturating_add(count);
            None
        }
    }

    /// What was held back and not logged yet (at shutdown), then forgotten.
    pub(super) fn take_held(&mut self) -> Option<Held> {
        (self.held.times > 0).then(|| std::mem::take(&mut self.held))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warning every batch (every second) is logged once a minute, each
    /// saying how many were held back since and what they counted.
    #[test]
    fn once_per_interval_with_what_was_held_back() {
        let start = Instant::now();
        let mut throttle = Throttle::new(REJECTIONS_EVERY);
        let at = |s: u64| start + Duration::from_secs(s);
        let logged: Vec<(u64, Held)> = (0..=150)
            .filter_map(|s| throttle.note(at(s), 2).map(|held| (s, held)))
            .collect();
        let held = |times| Held {
            times,
            count: 2 * times,
        };
        assert_eq!(logged, [(0, held(0)), (60, held(59)), (120, held(59))]);
        assert_eq!(throttle.take_held(), Some(held(30)));
        assert_eq!(throttle.take_held(), None);
        // A quiet spell: the next one is logged at once.
        assert_eq!(throttle.note(at(500), 1), Some(Held::default()));
    }
}
