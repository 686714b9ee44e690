//! [`IdSet`]: the ids of one turn's calls or results, as a list while it is
//! small and a hash set past [`LIST_MAX`].
//!
//! A turn holds a few calls (one to four in agents' traffic), and the
//! pairing check builds several sets of them per turn on every request: a
//! hash set for each cost an allocation, a hasher's seed and ~290
//! instructions an insert (BENCHMARKS.md, "The JSONL line by hand"), where
//! a search of a short list costs a comparison or two. A client still
//! controls how many ids a turn holds, so past [`LIST_MAX`] the list
//! becomes a set, and the check stays linear.

use ahash::AHashSet;

/// The most ids searched as a list.
const LIST_MAX: usize = 16;

/// A set of borrowed ids.
#[derive(Debug, Clone)]
pub(crate) enum IdSet<'a> {
    /// Few ids, in insertion order.
    List(Vec<&'a str>),
    /// Many.
    Hashed(AHashSet<&'a str>),
}

impl Default for IdSet<'_> {
    fn default() -> Self {
        IdSet::List(Vec::new())
    }
}

impl<'a> IdSet<'a> {
    /// Adds `id`; whether it was new.
    pub(crate) fn insert(&mut self, id: &'a str) -> bool {
        match self {
            IdSet::List(list) => {
                if list.contains(&id) {
                    return false;
                }
                if list.len() < LIST_MAX {
                    list.push(id);
                } else {
                    let mut set: AHashSet<&'a str> = list.drain(..).collect();
                    set.insert(id);
                    *self = IdSet::Hashed(set);
                }
                true
            }
            IdSet::Hashed(set) => set.insert(id),
        }
    }

    /// Whether `id` is in the set.
    pub(crate) fn contains(&self, id: &str) -> bool {
        match self {
            IdSet::List(list) => list.contains(&id),
            IdSet::Hashed(set) => set.contains(id),
        }
    }
}

impl<'a> FromIterator<&'a str> for IdSet<'a> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(ids: I) -> Self {
        let mut set = IdSet::default();
        for id in ids {
            set.insert(id);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same answers as a hash set, on either side of the switch.
        #[test]
        fn answers_as_a_hash_set(
            ids in proptest::collection::vec(0u8..40, 0..60),
            probes in proptest::collection::vec(0u8..40, 0..20),
        ) {
            let names: Vec<String> = (0..40).map(|i| format!("call_{i}")).collect();
            let mut set = IdSet::default();
            let mut model: AHashSet<&str> = AHashSet::new();
            for &i in &ids {
                let id = names[usize::from(i)].as_str();
                prop_assert_eq!(set.insert(id), model.insert(id));
            }
            for &i in probes.iter().chain(&ids) {
                let id = names[usize::from(i)].as_str();
                prop_assert_eq!(set.contains(id), model.contains(id));
            }
            let collected: IdSet<'_> = ids.iter().map(|&i| names[usize::from(i)].as_str()).collect();
            for name in &names {
                prop_assert_eq!(collected.contains(name), model.contains(name.as_str()));
            }
        }
    }

    #[test]
    fn a_long_list_becomes_a_set() {
        let names: Vec<String> = (0..=LIST_MAX).map(|i| format!("c{i}")).collect();
        let set: IdSet<'_> = names.iter().map(String::as_str).collect();
        assert!(matches!(set, IdSet::Hashed(_)));
        assert!(names.iter().all(|n| set.contains(n)));
    }
}
