//! The run-level loop guard: the same failing (tool, arguments) is not
//! retried without end across model turns. After N identical failures the
//! model is told to change approach and further identical calls are
//! answered without running the tool.

use std::{
    collections::HashMap,
    hash::{DefaultHasher, Hash, Hasher},
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use super::PolicyError;

/// Loop guard settings. Default: 3 identical failures, at most 1,024
/// distinct failing calls remembered per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopGuardConfig {
    max_identical_failures: u32,
    capacity: usize,
}

/// The failures seen in one run, keyed by a hash of (tool, arguments).
#[derive(Debug)]
pub(crate) struct LoopGuard {
    config: LoopGuardConfig,
    len: AtomicUsize,
    failures: Mutex<HashMap<u64, u32>>,
}

// === impl LoopGuardConfig ===

impl LoopGuardConfig {
    /// Block after `max_identical_failures` (≥ 1), remembering at most
    /// `capacity` (≥ 1) distinct failing calls.
    pub fn try_new(max_identical_failures: u32, capacity: usize) -> Result<Self, PolicyError> {
        if max_identical_failures == 0 {
            return Err(PolicyError::new(
                "loop_guard.max_identical_failures",
                "must be at least 1",
            ));
        }
        if capacity == 0 {
            return Err(PolicyError::new(
                "loop_guard.capacity",
                "must be at least 1",
            ));
        }
        Ok(LoopGuardConfig {
            max_identical_failures,
            capacity,
        })
    }

    /// Identical failures before the call is blocked.
    pub fn max_identical_failures(&self) -> u32 {
        self.max_identical_failures
    }
}

impl Default for LoopGuardConfig {
    fn default() -> Self {
        LoopGuardConfig {
            max_identical_failures: 3,
            capacity: 1024,
        }
    }
}

// === impl LoopGuard ===

impl LoopGuard {
    pub(crate) fn new(config: LoopGuardConfig) -> Self {
        LoopGuard {
            config,
            len: AtomicUsize::new(0),
            failures: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn limit(&self) -> u32 {
        self.config.max_identical_failures
    }

    /// The key of a call: its tool's canonical name and its arguments in
    /// canonical form.
    pub(crate) fn key(tool: &str, args: &str) -> u64 {
        let mut h = DefaultHasher::new();
        tool.hash(&mut h);
        args.hash(&mut h);
        h.finish()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, u32>> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `true` when nothing has failed yet (the fast path skips hashing).
    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::Relaxed) == 0
    }

    /// How often this call already failed, when that reaches the limit.
    pub(crate) fn blocked(&self, key: u64) -> Option<u32> {
        let n = *self.lock().get(&key)?;
        (n >= self.config.max_identical_failures).then_some(n)
    }

    /// Count a failure; returns the new count.
    pub(crate) fn record_failure(&self, key: u64) -> u32 {
        let mut map = self.lock();
        if map.len() >= self.config.capacity && !map.contains_key(&key) {
            return 1;
        }
        let n = map.entry(key).or_insert(0);
        *n += 1;
        let n = *n;
        self.len.store(map.len(), Ordering::Relaxed);
        n
    }

    /// Forget a call that succeeded.
    pub(crate) fn record_success(&self, key: u64) {
        let mut map = self.lock();
        map.remove(&key);
        self.len.store(map.len(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_the_limit_and_forgets_on_success() {
        let g = LoopGuard::new(LoopGuardConfig::default());
        let k = LoopGuard::key("read", r#"{"path":"x"}"#);
        assert!(g.is_empty());
        assert_eq!(g.record_failure(k), 1);
        assert_eq!(g.record_failure(k), 2);
        assert_eq!(g.blocked(k), None);
        assert_eq!(g.record_failure(k), 3);
        assert_eq!(g.blocked(k), Some(3));
        assert_eq!(g.blocked(LoopGuard::key("read", r#"{"path":"y"}"#)), None);
        g.record_success(k);
        assert_eq!(g.blocked(k), None);
        assert!(g.is_empty());
    }

    #[test]
    fn memory_is_bounded() {
        let g = LoopGuard::new(LoopGuardConfig::try_new(2, 4).unwrap());
        for i in 0..100u64 {
            g.record_failure(i);
        }
        assert_eq!(g.lock().len(), 4);
        assert!(LoopGuardConfig::try_new(0, 1).is_err());
    }
}
