//! [`Recent`]: a bounded map that forgets its oldest entries first, for
//! what the gateway remembers between requests (the calls it saw, the
//! sessions of the responses it passed).

use std::{
    borrow::Borrow,
    collections::{HashMap, VecDeque},
    hash::Hash,
    sync::Mutex,
};

/// A map of at most `capacity` entries; inserting past it evicts the
/// oldest. Shared between the workers (one short lock per operation).
#[derive(Debug)]
pub struct Recent<K, V> {
    capacity: usize,
    inner: Mutex<Inner<K, V>>,
}

#[derive(Debug)]
struct Inner<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
}

impl<K: Hash + Eq + Clone, V: Clone> Recent<K, V> {
    /// An empty map holding at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Recent {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: VecDeque::new(),
            }),
        }
    }

    /// Set `key` to `value` (an update keeps the entry's age).
    pub fn insert(&self, key: K, value: V) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.map.insert(key.clone(), value).is_none() {
            inner.order.push_back(key);
            while inner.order.len() > self.capacity {
                if let Some(old) = inner.order.pop_front() {
                    inner.map.remove(&old);
                }
            }
        }
    }

    /// The value of `key`, if remembered.
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.map.get(key).cloned()
    }

    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map
            .len()
    }

    /// `true` when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
