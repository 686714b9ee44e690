//! A tool's last calls: whether each failed and how long it took, in fixed
//! memory and without a lock. Health is judged on this window, so a tool
//! that recovers is seen to recover.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use serde::Serialize;

/// How many of a tool's last calls its health is judged on.
pub const RECENT_CALLS: usize = 100;

/// The last [`RECENT_CALLS`] calls of a tool (fewer before it has served
/// that many), without the calls refused before the tool did any work (a
/// disabled or paused tool, invalid arguments, an open breaker, the loop
/// guard's block): they say nothing of the tool, and its health is judged
/// on this window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RecentCalls {
    /// Calls in the window.
    pub calls: u64,
    /// Of those, the failures.
    pub failures: u64,
    /// Of those, the calls the application cancelled while the tool ran
    /// (neither succeeded nor failed).
    pub cancelled: u64,
    /// `failures` over the calls that ended (`calls - cancelled`; 0
    /// without any).
    pub failure_rate: f64,
    /// Their mean latency, retries included; a cancelled call's is the
    /// time the tool had run.
    pub latency_mean: Duration,
}

/// How a call in the window ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Succeeded = 0,
    Failed = 1,
    Cancelled = 2,
}

/// The ring behind [`RecentCalls`]: one slot per call, holding its latency
/// in nanoseconds shifted left by two, and how it ended ([`Ended`]) in the
/// low bits. A look while calls are recorded may see a slot a moment
/// before it is written.
#[derive(Debug)]
pub(crate) struct Window {
    slots: Box<[AtomicU64]>,
    recorded: AtomicU64,
}

// === impl Window ===

impl Window {
    pub(crate) fn new() -> Self {
        Window {
            slots: (0..RECENT_CALLS).map(|_| AtomicU64::new(0)).collect(),
            recorded: AtomicU64::new(0),
        }
    }

    /// Record one call, pushing out the oldest once the window is full.
    pub(crate) fn record(&self, ended: Ended, elapsed: Duration) {
        let n = self.recorded.fetch_add(1, Ordering::Relaxed);
        let ns = u64::try_from(elapsed.as_nanos())
            .unwrap_or(u64::MAX)
            .min(u64::MAX >> 2);
        let slot = &self.slots[(n % RECENT_CALLS as u64) as usize];
        slot.store(ns << 2 | ended as u64, Ordering::Relaxed);
    }

    /// The calls in the window.
    pub(crate) fn snapshot(&self) -> RecentCalls {
        let calls = self
            .recorded
            .load(Ordering::Relaxed)
            .min(RECENT_CALLS as u64);
        let (mut failures, mut cancelled, mut total_ns) = (0u64, 0u64, 0u128);
        for slot in &self.slots[..calls as usize] {
            let v = slot.load(Ordering::Relaxed);
            failures += v & 1;
            cancelled += v >> 1 & 1;
            total_ns += u128::from(v >> 2);
        }
        let latency_mean = match calls {
            0 => Duration::ZERO,
            n => Duration::from_nanos(u64::try_from(total_ns / u128::from(n)).unwrap_or(u64::MAX)),
        };
        let failure_rate = match calls - cancelled {
            0 => 0.0,
            ended => failures as f64 / ended as f64,
        };
        RecentCalls {
            calls,
            failures,
            cancelled,
            failure_rate,
            latency_mean,
        }
    }

    /// The memory the window holds, in bytes (constant).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<AtomicU64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_forgets_the_oldest_calls() {
        let w = Window::new();
        assert_eq!(w.snapshot().calls, 0);
        assert_eq!(w.snapshot().failure_rate, 0.0);
        for _ in 0..10 {
            w.record(Ended::Failed, Duration::from_secs(10));
        }
        let s = w.snapshot();
        assert_eq!((s.calls, s.failures), (10, 10));
        assert_eq!(s.latency_mean, Duration::from_secs(10));
        for _ in 0..RECENT_CALLS {
            w.record(Ended::Succeeded, Duration::from_millis(4));
        }
        let s = w.snapshot();
        assert_eq!((s.calls, s.failures), (RECENT_CALLS as u64, 0));
        assert_eq!(s.failure_rate, 0.0);
        assert_eq!(s.latency_mean, Duration::from_millis(4));
    }

    #[test]
    fn the_longest_latency_does_not_overflow() {
        let w = Window::new();
        w.record(Ended::Failed, Duration::MAX);
        w.record(Ended::Cancelled, Duration::MAX);
        let s = w.snapshot();
        assert_eq!((s.failures, s.cancelled), (1, 1));
        assert_eq!(s.latency_mean, Duration::from_nanos(u64::MAX >> 2));
    }

    /// Cancelled calls count in the window's latency, not in its failure
    /// rate: they neither succeeded nor failed.
    #[test]
    fn cancelled_calls_are_left_out_of_the_failure_rate() {
        let w = Window::new();
        w.record(Ended::Failed, Duration::from_secs(1));
        w.record(Ended::Succeeded, Duration::from_secs(1));
        w.record(Ended::Cancelled, Duration::from_secs(4));
        let s = w.snapshot();
        assert_eq!((s.calls, s.failures, s.cancelled), (3, 1, 1));
        assert_eq!(s.failure_rate, 0.5);
        assert_eq!(s.latency_mean, Duration::from_secs(2));
        let w = Window::new();
        w.record(Ended::Cancelled, Duration::from_secs(1));
        assert_eq!(w.snapshot().failure_rate, 0.0);
    }
}
