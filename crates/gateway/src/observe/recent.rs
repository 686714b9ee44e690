//! [`Recent`]: a bounded map that forgets its oldest entries first, for
//! what the gateway remembers between requests (the calls it saw, the
//! sessions of the responses it passed).
//!
//! Keys are kept as 128-bit hashes (SipHash-1-3 with a random key and a
//! 128-bit output, as in `seen`), not as the ids themselves: an entry costs
//! its value plus ~17 bytes, whatever the length of the ids (issue 14:
//! string keys and their copy in an eviction queue were two to four more
//! allocations per entry). A false hit would need a 128-bit collision. The
//! entries are held in two [`Generations`] of half the capacity each.

use std::{borrow::Borrow, hash::Hash, marker::PhantomData, sync::Mutex};

use super::generations::{Generations, KeyHasher};

/// A map of at most `capacity` entries: the newest half of them at least;
/// the oldest are forgotten half a capacity at a time. Shared between the
/// workers (one short lock per operation).
#[derive(Debug)]
pub(crate) struct Recent<K, V> {
    inner: Mutex<Generations<V>>,
    hasher: KeyHasher,
    keys: PhantomData<fn(K)>,
}

impl<K: Hash + Eq, V: Clone> Recent<K, V> {
    /// An empty map holding at most `capacity` entries.
    pub(crate) fn new(capacity: usize) -> Self {
        Recent {
            inner: Mutex::new(Generations::new(capacity / 2)),
            hasher: KeyHasher::new(),
            keys: PhantomData,
        }
    }

    /// The 128-bit key of `key` (equal for a `K` and what it borrows as).
    fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u128 {
        self.hasher.key(key)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations<V>> {
        // A panic while holding this lock cannot leave the maps inconsistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Set `key` to `value` (an entry set again counts as new).
    pub(crate) fn insert(&self, key: K, value: V) {
        let key = self.hash(&key);
        self.lock().insert(key, value);
    }

    /// The value of `key`, if remembered.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let key = self.hash(key);
        self.lock().get(key).cloned()
    }

    /// How many entries its tables have room for without growing.
    #[cfg(test)]
    fn room(&self) -> usize {
        self.lock().room()
    }

    /// How many entries are held (one set again counts twice until its
    /// older copy is forgotten).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn remembers_updates_and_forgets_the_oldest_half() {
        let r: Recent<String, u32> = Recent::new(4);
        r.insert("a".into(), 1);
        r.insert("b".into(), 2);
        r.insert("a".into(), 3); // an update, not a new entry
        assert_eq!((r.get("a"), r.len()), (Some(3), 2));
        r.insert("c".into(), 4); // (a, b) are now the older half
        r.insert("d".into(), 5);
        assert_eq!((r.get("a"), r.get("d")), (Some(3), Some(5)));
        r.insert("e".into(), 6); // (c, d) older: a and b forgotten
        assert_eq!((r.get("a"), r.get("b")), (None, None));
        assert_eq!((r.get("c"), r.get("e")), (Some(4), Some(6)));
        assert!(r.len() <= 4);
    }

    /// Issue 14: under steady churn (every insert a new key, as calls and
    /// responses are) the tables stop growing once the map has been full.
    /// The map this replaced evicted one entry per insert; its table
    /// doubled after ~9 times its capacity in inserts (a 4 MB step in the
    /// soak's RSS at the default capacity).
    #[test]
    fn its_tables_stop_growing_once_full() {
        let r: Recent<u64, ()> = Recent::new(8192);
        for key in 0..8192 + 1 {
            r.insert(key, ());
        }
        let room = r.room();
        for key in 8192 + 1..30 * 8192 {
            r.insert(key, ());
        }
        assert_eq!(r.room(), room);
        assert!(r.len() <= 8192);
    }
}
