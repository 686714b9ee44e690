//! [`Recent`]: a bounded map that forgets its oldest entries first, for
//! what the gateway remembers between requests (the calls it saw, the
//! sessions of the responses it passed).
//!
//! Keys are kept as 128-bit hashes (two SipHash-1-3 with random keys, as
//! in `seen`), not as the ids themselves: an entry costs its value plus
//! ~50 bytes, whatever the length of the ids (issue 14: string keys and
//! their copy in the eviction queue were two to four more allocations per
//! entry). A false hit would need a 128-bit collision.

use std::{
    borrow::Borrow,
    collections::{HashMap, VecDeque},
    hash::{BuildHasher, Hash},
    marker::PhantomData,
    sync::Mutex,
};

/// A map of at most `capacity` entries; inserting past it evicts the
/// oldest. Shared between the workers (one short lock per operation).
#[derive(Debug)]
pub(crate) struct Recent<K, V> {
    capacity: usize,
    inner: Mutex<Inner<V>>,
    hashers: (std::hash::RandomState, std::hash::RandomState),
    keys: PhantomData<fn(K)>,
}

#[derive(Debug)]
struct Inner<V> {
    map: HashMap<u128, V>,
    order: VecDeque<u128>,
}

impl<K: Hash + Eq, V: Clone> Recent<K, V> {
    /// An empty map holding at most `capacity` entries.
    pub(crate) fn new(capacity: usize) -> Self {
        Recent {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: VecDeque::new(),
            }),
            hashers: (std::hash::RandomState::new(), std::hash::RandomState::new()),
            keys: PhantomData,
        }
    }

    /// The 128-bit key of `key` (equal for a `K` and what it borrows as).
    fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u128 {
        (u128::from(self.hashers.0.hash_one(key)) << 64) | u128::from(self.hashers.1.hash_one(key))
    }

    /// Set `key` to `value` (an update keeps the entry's age).
    pub(crate) fn insert(&self, key: K, value: V) {
        let key = self.hash(&key);
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.map.insert(key, value).is_none() {
            inner.order.push_back(key);
            while inner.order.len() > self.capacity {
                if let Some(old) = inner.order.pop_front() {
                    inner.map.remove(&old);
                }
            }
        }
    }

    /// The value of `key`, if remembered.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let key = self.hash(key);
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.map.get(&key).cloned()
    }

    /// How many entries are held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn remembers_updates_and_evicts_the_oldest() {
        let r: Recent<String, u32> = Recent::new(2);
        r.insert("a".into(), 1);
        r.insert("b".into(), 2);
        r.insert("a".into(), 3); // an update, not a new entry
        assert_eq!(r.get("a"), Some(3));
        r.insert("c".into(), 4);
        assert_eq!(r.len(), 2);
        assert_eq!(r.get("a"), None);
        assert_eq!((r.get("b"), r.get("c")), (Some(2), Some(4)));
    }
}
