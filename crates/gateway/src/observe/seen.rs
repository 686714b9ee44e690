//! The tool results this gateway has already queued for recording, so that
//! a request resent unchanged (a client's retry, a benchmark's repeat)
//! does not send its results to the store again only for the store to find
//! them duplicates. The store stays the judge of what is new (its unique
//! key on session, call id and message index; other gateways write to it
//! too): this only spares it work, and never hides a result it has not
//! been given — a key is remembered only once its event is queued. A
//! result under an id that is not unique (`call_0`, `name#0`) that no
//! later call of its history reuses may be another run's answer at the
//! same place, which only the store can tell (the run's call may have gone
//! through another gateway, or been forgotten here): it is not kept here,
//! but in [`super::reused::ReusedIds`] when it was folded into the
//! recorder's counts instead of queued, or there is no store.
//!
//! Keys are 128-bit hashes (SipHash-1-3 with a random key, 128-bit output),
//! so a false "seen" would need a 128-bit collision. Memory is bounded: two
//! [`Generations`] of at most `capacity` keys each; when the current one is
//! full it becomes the previous one and the oldest is forgotten.

use std::sync::Mutex;

use super::generations::{Generations, KeyHasher};

/// Recently queued result keys.
#[derive(Debug)]
pub(crate) struct SeenResults {
    generations: Mutex<Generations<()>>,
    hasher: KeyHasher,
}

impl SeenResults {
    /// An empty set keeping up to `capacity` keys per generation.
    pub(crate) fn new(capacity: usize) -> SeenResults {
        SeenResults {
            generations: Mutex::new(Generations::new(capacity)),
            hasher: KeyHasher::new(),
        }
    }

    /// The key of one result.
    pub(crate) fn key(&self, session: &str, call_id: &str, message_index: usize) -> u128 {
        self.hasher.key(&(session, call_id, message_index))
    }

    /// Whether this key was remembered.
    pub(crate) fn contains(&self, key: u128) -> bool {
        self.lock().get(key).is_some()
    }

    /// Remember a key (its event was queued).
    pub(crate) fn insert(&self, key: u128) {
        self.lock().insert(key, ());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations<()>> {
        // A panic while holding this lock cannot leave the sets inconsistent.
        self.generations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_forgets_the_oldest_generation() {
        let seen = SeenResults::new(2);
        let k = |i: usize| seen.key("s", "c", i);
        assert_ne!(k(1), k(2));
        assert_ne!(seen.key("s", "c1", 0), seen.key("s1", "c", 0));
        seen.insert(k(1));
        seen.insert(k(2));
        assert!(seen.contains(k(1)) && seen.contains(k(2)));
        assert!(!seen.contains(k(3)));
        seen.insert(k(3)); // generation 1 (k1, k2) becomes the previous one
        seen.insert(k(4));
        assert!(seen.contains(k(1)) && seen.contains(k(4)));
        seen.insert(k(5)); // (k3, k4) becomes the previous one: k1, k2 forgotten
        assert!(!seen.contains(k(1)) && !seen.contains(k(2)));
        assert!(seen.contains(k(3)) && seen.contains(k(5)));
    }
}
