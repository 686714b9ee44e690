//! The tool results this gateway has already queued for recording, so that
//! a request resent unchanged (a client's retry, a benchmark's repeat)
//! does not send its results to the store again only for the store to find
//! them duplicates. The store stays the judge of what is new (its unique
//! key on session, call id and message index; other gateways write to it
//! too): this only spares it work, and never hides a result it has not
//! been given — a key is remembered only once its event is queued.
//!
//! Keys are 128-bit hashes (two SipHash-1-3 with different keys), so a
//! false "seen" would need a 128-bit collision. The sets index a key by its
//! own bits ([`KeyBits`]): it is a keyed hash already, and hashing it again
//! cost as much as the lookup. Memory is bounded: two generations of at
//! most `capacity` keys each; when the current one is full it becomes the
//! previous one and the oldest is forgotten.

use std::{
    collections::HashSet,
    hash::{BuildHasher, BuildHasherDefault, Hasher},
    sync::Mutex,
};

/// A set of keys, indexed by their own bits.
type Keys = HashSet<u128, BuildHasherDefault<KeyBits>>;

/// Recently queued result keys.
#[derive(Debug)]
pub(crate) struct SeenResults {
    generations: Mutex<Generations>,
    capacity: usize,
    hashers: (std::hash::RandomState, std::hash::RandomState),
}

#[derive(Debug, Default)]
struct Generations {
    current: Keys,
    previous: Keys,
}

/// The "hash" of a key that is already a keyed hash: its two halves
/// folded together.
#[derive(Debug, Default)]
struct KeyBits(u64);

impl Hasher for KeyBits {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u128(&mut self, key: u128) {
        self.0 ^= (key as u64) ^ ((key >> 64) as u64);
    }

    /// Not used by `u128` keys; folds other input in 8-byte words.
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }
}

impl SeenResults {
    /// An empty set keeping up to `capacity` keys per generation.
    pub(crate) fn new(capacity: usize) -> SeenResults {
        SeenResults {
            generations: Mutex::new(Generations::default()),
            capacity: capacity.max(1),
            hashers: (std::hash::RandomState::new(), std::hash::RandomState::new()),
        }
    }

    /// The key of one result.
    pub(crate) fn key(&self, session: &str, call_id: &str, message_index: usize) -> u128 {
        let half =
            |state: &std::hash::RandomState| state.hash_one((session, call_id, message_index));
        (u128::from(half(&self.hashers.0)) << 64) | u128::from(half(&self.hashers.1))
    }

    /// Whether this key was remembered.
    pub(crate) fn contains(&self, key: u128) -> bool {
        let g = self.lock();
        g.current.contains(&key) || g.previous.contains(&key)
    }

    /// Remember a key (its event was queued).
    pub(crate) fn insert(&self, key: u128) {
        let mut g = self.lock();
        if g.current.len() >= self.capacity {
            g.previous = std::mem::take(&mut g.current);
        }
        g.current.insert(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
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
