//! The run-level loop guard: the same failing (tool, arguments) is not
//! retried without end across model turns. After N identical failures the
//! model is told to change approach and further identical calls are
//! answered without running the tool.

use std::{
    collections::{BTreeMap, HashMap},
    hash::{DefaultHasher, Hash, Hasher},
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use serde_json::Value;

use super::PolicyError;

/// Loop guard settings. Default: 3 identical failures, at most 1,024
/// distinct failing calls remembered per run. When that many are
/// remembered, a new failing call is still counted: the call seen least
/// recently (failed, or refused by the guard) is forgotten to make room.
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
    failures: Mutex<Failures>,
}

/// The remembered failing calls, at most the capacity of them, and the
/// order they were last seen in (the least recent is forgotten first).
#[derive(Debug, Default)]
struct Failures {
    /// Per key: its failures and when it was last seen.
    counts: HashMap<u64, (u32, u64)>,
    /// Keys by when they were last seen (a tick, unique per sighting).
    by_recency: BTreeMap<u64, u64>,
    /// The last tick given.
    tick: u64,
}

/// The tags of the canonical form: each value says what it is, so no two
/// values hash alike by their parts (`["ab"]` and `["a","b"]`).
const NULL: u8 = 0;
const BOOL: u8 = 1;
const NUMBER: u8 = 2;
const STRING: u8 = 3;
const ARRAY: u8 = 4;
const OBJECT: u8 = 5;
const TEXT: u8 = 6;

/// Hash `value` in canonical form: an object's entries by sorted key.
/// (Its depth is bounded: serde_json parses at most 128 levels.)
fn hash_canonical(value: &Value, h: &mut impl Hasher) {
    match value {
        Value::Null => NULL.hash(h),
        Value::Bool(b) => (BOOL, b).hash(h),
        Value::Number(n) => (NUMBER, n.to_string()).hash(h),
        Value::String(s) => (STRING, s).hash(h),
        Value::Array(items) => {
            (ARRAY, items.len()).hash(h);
            for item in items {
                hash_canonical(item, h);
            }
        }
        Value::Object(map) => {
            (OBJECT, map.len()).hash(h);
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by_key(|(k, _)| *k);
            for (k, v) in entries {
                k.hash(h);
                hash_canonical(v, h);
            }
        }
    }
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
            failures: Mutex::new(Failures::default()),
        }
    }

    pub(crate) fn limit(&self) -> u32 {
        self.config.max_identical_failures
    }

    /// The key of a call: its tool's canonical name and its arguments,
    /// hashed in canonical form: object keys in sorted order, whatever
    /// order the map keeps them in (serde_json's `preserve_order`, which
    /// any crate of the application may turn on, keeps the order sent).
    pub(crate) fn key(tool: &str, args: &Value) -> u64 {
        let mut h = DefaultHasher::new();
        tool.hash(&mut h);
        hash_canonical(args, &mut h);
        h.finish()
    }

    /// The key of a call whose arguments are not JSON: their text.
    pub(crate) fn key_of_text(tool: &str, args: &str) -> u64 {
        let mut h = DefaultHasher::new();
        tool.hash(&mut h);
        TEXT.hash(&mut h);
        args.hash(&mut h);
        h.finish()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Failures> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `true` when nothing has failed yet (the fast path skips hashing).
    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::Relaxed) == 0
    }

    /// How often this call already failed, when that reaches the limit
    /// (a refusal is a sighting: the call stays remembered).
    pub(crate) fn blocked(&self, key: u64) -> Option<u32> {
        let mut failures = self.lock();
        let n = failures.counts.get(&key)?.0;
        if n < self.config.max_identical_failures {
            return None;
        }
        failures.touch(key);
        Some(n)
    }

    /// Count a failure; returns the new count. A call not remembered yet
    /// when the capacity is reached makes the least recently seen one
    /// forgotten.
    pub(crate) fn record_failure(&self, key: u64) -> u32 {
        let mut failures = self.lock();
        if !failures.counts.contains_key(&key) && failures.counts.len() >= self.config.capacity {
            failures.forget_least_recent();
        }
        let n = failures.count(key);
        self.len.store(failures.counts.len(), Ordering::Relaxed);
        n
    }

    /// Forget a call that succeeded.
    pub(crate) fn record_success(&self, key: u64) {
        let mut failures = self.lock();
        failures.forget(key);
        self.len.store(failures.counts.len(), Ordering::Relaxed);
    }
}

// === impl Failures ===

impl Failures {
    /// Count a failure of `key`, seen now; returns its count.
    fn count(&mut self, key: u64) -> u32 {
        self.counts.entry(key).or_insert((0, 0)).0 += 1;
        self.touch(key)
    }

    /// `key` (remembered) is seen now; returns its count.
    fn touch(&mut self, key: u64) -> u32 {
        let tick = self.next_tick();
        let Some((n, seen)) = self.counts.get_mut(&key) else {
            return 0;
        };
        // A new key's `seen` is 0, no sighting's tick.
        let before = std::mem::replace(seen, tick);
        let n = *n;
        self.by_recency.remove(&before);
        self.by_recency.insert(tick, key);
        n
    }

    /// A tick later than any before it; the first is 1.
    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    fn forget(&mut self, key: u64) {
        if let Some((_, seen)) = self.counts.remove(&key) {
            self.by_recency.remove(&seen);
        }
    }

    fn forget_least_recent(&mut self) {
        if let Some((_, key)) = self.by_recency.pop_first() {
            self.counts.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn blocks_after_the_limit_and_forgets_on_success() {
        let g = LoopGuard::new(LoopGuardConfig::default());
        let k = LoopGuard::key("read", &json!({"path": "x"}));
        assert!(g.is_empty());
        assert_eq!(g.record_failure(k), 1);
        assert_eq!(g.record_failure(k), 2);
        assert_eq!(g.blocked(k), None);
        assert_eq!(g.record_failure(k), 3);
        assert_eq!(g.blocked(k), Some(3));
        assert_eq!(
            g.blocked(LoopGuard::key("read", &json!({"path": "y"}))),
            None
        );
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
        let failures = g.lock();
        assert_eq!(failures.counts.len(), 4);
        assert_eq!(failures.by_recency.len(), 4);
        drop(failures);
        assert!(LoopGuardConfig::try_new(0, 1).is_err());
    }

    /// Regression: once `capacity` distinct calls had failed, a new
    /// failing call was not remembered (its every failure was its first),
    /// so a long run's new repeated failure was never stopped. The least
    /// recently seen call is forgotten instead.
    #[test]
    fn a_full_guard_still_counts_new_calls() {
        let g = LoopGuard::new(LoopGuardConfig::try_new(3, 4).unwrap());
        for i in 0..100u64 {
            g.record_failure(i);
        }
        let late = 1_000;
        assert_eq!(g.record_failure(late), 1);
        assert_eq!(g.record_failure(late), 2);
        assert_eq!(g.record_failure(late), 3);
        assert_eq!(g.blocked(late), Some(3));
        assert_eq!(g.lock().counts.len(), 4);
    }

    #[test]
    fn the_least_recently_seen_call_is_forgotten_first() {
        let g = LoopGuard::new(LoopGuardConfig::try_new(2, 3).unwrap());
        let (blocked, failing, old) = (1u64, 2u64, 3u64);
        g.record_failure(blocked);
        g.record_failure(blocked);
        g.record_failure(old);
        g.record_failure(failing);
        // Refused again: seen, so kept over `old`.
        assert_eq!(g.blocked(blocked), Some(2));
        g.record_failure(10);
        assert_eq!(g.blocked(blocked), Some(2));
        assert_eq!(g.record_failure(old), 1, "the least recent was forgotten");
        // `failing` was least recent then: forgotten for `old`.
        assert_eq!(g.record_failure(failing), 1);
        assert_eq!(g.blocked(blocked), Some(2));
        // A success forgets its call, making room without evicting.
        g.record_success(blocked);
        assert_eq!(g.blocked(blocked), None);
        let failures = g.lock();
        assert_eq!(failures.counts.len(), failures.by_recency.len());
        assert!(failures.counts.len() <= 3);
    }

    /// A JSON value, its objects' keys drawn from few names (so that
    /// objects share keys, in other orders).
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-c]{0,3}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("[a-e]{1,2}", inner), 0..5)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    /// `value` as JSON text, each object's entries in the order `order`
    /// picks (a rotation).
    fn write_rotated(value: &Value, order: usize, out: &mut String) {
        match value {
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_rotated(item, order, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                let n = entries.len().max(1);
                entries.rotate_left(order % n);
                out.push('{');
                for (i, (k, v)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::from(k.as_str()).to_string());
                    out.push(':');
                    write_rotated(v, order, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    proptest! {
        /// Regression: the key was the arguments' text, whose key order is
        /// the order sent once serde_json keeps it (`preserve_order`, which
        /// any crate of an application may turn on): `{"a":1,"b":2}` and
        /// `{"b":2,"a":1}` were different calls, and a model that reorders
        /// its arguments was never stopped. The same value is the same key
        /// in any key order; different values, different keys. (Run with
        /// `--features serde_json/preserve_order` to test the order kept.)
        #[test]
        fn the_key_is_the_same_in_any_key_order(
            value in json_value(),
            other in json_value(),
            order in 1usize..5,
        ) {
            let mut rotated = String::new();
            write_rotated(&value, order, &mut rotated);
            let reordered: Value = serde_json::from_str(&rotated).unwrap();
            prop_assert_eq!(LoopGuard::key("t", &value), LoopGuard::key("t", &reordered));
            prop_assert_eq!(
                LoopGuard::key("t", &value) == LoopGuard::key("t", &other),
                value == other
            );
            prop_assert_ne!(LoopGuard::key("t", &value), LoopGuard::key("u", &value));
        }
    }

    #[test]
    fn values_of_other_shapes_are_other_keys() {
        let keys = [
            json!(["ab"]),
            json!(["a", "b"]),
            json!("1"),
            json!(1),
            json!({"a": []}),
            json!({"a": {}}),
            json!([[], []]),
            json!([[[]]]),
            json!(null),
        ]
        .map(|v| LoopGuard::key("t", &v));
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_ne!(
            LoopGuard::key_of_text("t", "null"),
            LoopGuard::key("t", &json!(null))
        );
    }
}
