//! [`Generations`]: the bounded memory behind what the gateway remembers
//! between requests ([`super::recent::Recent`], [`super::seen::SeenResults`]).
//!
//! Entries are kept in two maps: new ones go into the current generation;
//! when it holds `per_generation` entries, the previous one is emptied and
//! the two swap places, so the oldest generation is forgotten as a whole.
//! Both maps keep their tables from one generation to the next.
//!
//! Why not one map that evicts its oldest entry on each insert (issue 14):
//! a `HashMap` that both inserts and removes at the same rate leaves
//! tombstones behind, and when they have used up its spare room it does
//! not clean them up in place but doubles its table, because it is more
//! than half full. A map of 32,768 calls did that after ~310,000 inserts
//! (65,536 → 131,072 buckets): a step of ~4 MB in the gateway's RSS minutes
//! into a steady load (the 10-minute soak, at ~1.2 M requests). Here
//! nothing is removed one by one, so a table grows only until its
//! generation is first full, and never after.
//!
//! Keys are 128-bit keyed hashes already (SipHash-1-3 with a random key and
//! its 128-bit output, made by the owner through [`KeyHasher`]), so the maps
//! index a key by its own bits ([`KeyBits`]): hashing it again cost as much
//! as the lookup.

use std::{
    collections::HashMap,
    hash::{BuildHasher, BuildHasherDefault, Hash, Hasher, RandomState},
};

use siphasher::sip128::{Hasher128, SipHasher13};

/// The 128-bit keyed hash the owners of [`Generations`] key entries by:
/// SipHash-1-3 with a random 128-bit key and 128-bit output, one pass over
/// the key's bytes (two 64-bit hashes with two keys, as before, read them
/// twice: ~1.3 % of a request's instructions; BENCHMARKS.md, "The JSONL
/// line by hand").
pub(crate) struct KeyHasher(SipHasher13);

impl std::fmt::Debug for KeyHasher {
    /// Not its key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyHasher")
    }
}

impl KeyHasher {
    pub(crate) fn new() -> Self {
        // The key's halves from two of std's randomly keyed hashers.
        let half = || RandomState::new().hash_one(0u8);
        KeyHasher(SipHasher13::new_with_keys(half(), half()))
    }

    /// The 128-bit key of `key` (equal for a value and what it borrows as).
    pub(crate) fn key<Q: Hash + ?Sized>(&self, key: &Q) -> u128 {
        let mut hasher = self.0;
        key.hash(&mut hasher);
        hasher.finish128().as_u128()
    }
}

/// A map indexed by its keys' own bits.
type Map<V> = HashMap<u128, V, BuildHasherDefault<KeyBits>>;

/// Two generations of at most `per_generation` entries each.
#[derive(Debug)]
pub(crate) struct Generations<V> {
    current: Map<V>,
    previous: Map<V>,
    per_generation: usize,
}

impl<V> Generations<V> {
    /// Empty generations of at most `per_generation` entries each (at least 1).
    pub(crate) fn new(per_generation: usize) -> Self {
        Generations {
            current: Map::default(),
            previous: Map::default(),
            per_generation: per_generation.max(1),
        }
    }

    /// The value of `key`, the newer one if both generations hold it.
    pub(crate) fn get(&self, key: u128) -> Option<&V> {
        self.current.get(&key).or_else(|| self.previous.get(&key))
    }

    /// Set `key` to `value` in the current generation (a key only in the
    /// previous one becomes new again; its old value is shadowed until that
    /// generation is forgotten).
    pub(crate) fn insert(&mut self, key: u128, value: V) {
        if let Some(slot) = self.current.get_mut(&key) {
            *slot = value;
            return;
        }
        if self.current.len() >= self.per_generation {
            self.previous.clear();
            std::mem::swap(&mut self.current, &mut self.previous);
        }
        self.current.insert(key, value);
    }

    /// How many entries both generations hold (a shadowed one counts).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    /// How many entries the two tables have room for, without growing.
    #[cfg(test)]
    pub(crate) fn room(&self) -> usize {
        self.current.capacity() + self.previous.capacity()
    }
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

#[cfg(test)]
mod tests {
    use super::Generations;

    #[test]
    fn forgets_the_oldest_generation_as_a_whole() {
        let mut g = Generations::new(2);
        g.insert(1, "a");
        g.insert(2, "b");
        g.insert(1, "a2"); // an update in place: still two entries
        assert_eq!((g.get(1), g.len()), (Some(&"a2"), 2));
        g.insert(3, "c"); // (1, 2) becomes the previous generation
        g.insert(4, "d");
        assert_eq!((g.get(1), g.get(4)), (Some(&"a2"), Some(&"d")));
        g.insert(5, "e"); // (3, 4) becomes the previous one: 1 and 2 forgotten
        assert_eq!((g.get(1), g.get(2)), (None, None));
        assert_eq!((g.get(3), g.get(5)), (Some(&"c"), Some(&"e")));
        assert_eq!(g.len(), 3);
    }

    #[test]
    fn a_key_renewed_from_the_previous_generation_reads_its_new_value() {
        let mut g = Generations::new(2);
        g.insert(1, 10);
        g.insert(2, 20);
        g.insert(3, 30); // (1, 2) previous
        g.insert(1, 11); // renewed into the current generation
        assert_eq!(g.get(1), Some(&11));
        g.insert(4, 40); // (3, 1) previous: 1 is still held, 2 is not
        assert_eq!((g.get(1), g.get(2)), (Some(&11), None));
    }
}
