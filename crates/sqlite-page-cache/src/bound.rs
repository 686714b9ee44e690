//! What the wrapper knows of the page numbers a cache may hold: an upper
//! bound, kept from the calls that create and rename pages, and what
//! truncating to a limit does to it.

/// Renamed numbers kept one by one before they are folded into `high`.
const MAX_RENAMED: usize = 16;

/// No page numbered above `high` is in the cache, except at the numbers in
/// `renamed`: pages are only created by a fetch that may create, and only
/// renamed by a rekey, and both pass through [`Bound::fetched`] and
/// [`Bound::renamed`]. Pages dropped otherwise (unpinned with `discard`,
/// recycled) leave the bound as it was: it stays an upper bound.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Bound {
    high: u32,
    /// Numbers above `high` that a page was renamed to and not renamed from
    /// since. B-tree rebalancing renames a page to the lock-byte page's
    /// number and back within one step, so this is usually empty.
    renamed: Vec<u32>,
}

impl Bound {
    /// A fetch that may create a page asked for `key`.
    pub(crate) fn fetched(&mut self, key: u32) {
        if key > self.high {
            self.high = key;
            self.renamed.retain(|&k| k > key);
        }
    }

    /// A page was renamed from `old` to `new`.
    pub(crate) fn renamed(&mut self, old: u32, new: u32) {
        if let Some(i) = self.renamed.iter().position(|&k| k == old) {
            self.renamed.swap_remove(i);
        }
        if new > self.high && !self.renamed.contains(&new) {
            if self.renamed.len() == MAX_RENAMED {
                // Kept bounded: the bound only gets looser.
                self.high = self.renamed.iter().copied().fold(new, u32::max);
                self.renamed.clear();
            } else {
                self.renamed.push(new);
            }
        }
    }

    /// Whether a page numbered `limit` or above may be in the cache: if not,
    /// truncating the cache to `limit` has nothing to drop.
    pub(crate) fn may_hold_from(&self, limit: u32) -> bool {
        self.high >= limit || self.renamed.iter().any(|&k| k >= limit)
    }

    /// The cache dropped every page numbered `limit` or above.
    pub(crate) fn truncated(&mut self, limit: u32) {
        self.high = self.high.min(limit.saturating_sub(1));
        self.renamed.retain(|&k| k < limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// What SQLite does to a cache, in the small: page numbers from a
    /// narrow range so that renames and truncations meet the same pages.
    #[derive(Debug, Clone)]
    enum Op {
        Fetch(u32),
        Rekey(u32, u32),
        Discard(u32),
        Truncate(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1u32..64).prop_map(Op::Fetch),
            (1u32..64, 1u32..80).prop_map(|(a, b)| Op::Rekey(a, b)),
            (1u32..64).prop_map(Op::Discard),
            (0u32..70).prop_map(Op::Truncate),
        ]
    }

    proptest! {
        /// Against the set of pages a cache holds: whenever a page at or
        /// above a limit is present, the bound says so.
        #[test]
        fn never_misses_a_page_past_the_limit(ops in proptest::collection::vec(op(), 0..200)) {
            let mut pages = BTreeSet::new();
            let mut bound = Bound::default();
            for op in ops {
                match op {
                    Op::Fetch(k) => {
                        pages.insert(k);
                        bound.fetched(k);
                    }
                    // SQLite renames a page only to a number no page has.
                    Op::Rekey(a, b) => {
                        if pages.contains(&a) && !pages.contains(&b) {
                            pages.remove(&a);
                            pages.insert(b);
                            bound.renamed(a, b);
                        }
                    }
                    Op::Discard(k) => {
                        pages.remove(&k);
                    }
                    Op::Truncate(limit) => {
                        let present = pages.range(limit..).next().is_some();
                        prop_assert!(!present || bound.may_hold_from(limit), "{limit}: {pages:?} {bound:?}");
                        pages.retain(|&k| k < limit);
                        bound.truncated(limit);
                    }
                }
                prop_assert!(bound.renamed.len() <= MAX_RENAMED);
                if let Some(&max) = pages.last() {
                    prop_assert!(bound.may_hold_from(max), "{max}: {bound:?}");
                }
            }
        }
    }

    /// Rebalancing's swap through the lock-byte page leaves nothing past
    /// the database's end: the commit's truncation is skipped.
    #[test]
    fn a_swap_through_the_lock_byte_page_leaves_the_bound_as_it_was() {
        const LOCK_PAGE: u32 = 262_145;
        let mut bound = Bound::default();
        for k in 1..=500 {
            bound.fetched(k);
        }
        bound.renamed(120, LOCK_PAGE);
        assert!(bound.may_hold_from(501));
        bound.renamed(130, 120);
        bound.renamed(LOCK_PAGE, 130);
        assert!(!bound.may_hold_from(501));
        assert!(bound.may_hold_from(500));
        bound.truncated(400);
        assert!(!bound.may_hold_from(400));
        assert!(bound.may_hold_from(399));
    }

    /// More renames past the bound than are kept one by one fold into it.
    #[test]
    fn renames_past_the_bound_fold_into_it() {
        let mut bound = Bound::default();
        bound.fetched(10);
        for k in 0..40 {
            bound.renamed(1, 100 + k);
            bound.fetched(1);
        }
        assert!(bound.renamed.len() <= MAX_RENAMED);
        assert!(bound.may_hold_from(139));
        assert!(!bound.may_hold_from(140));
    }
}
