//! The bound on request bodies held in memory at once, over every
//! connection and worker (`max_buffered_request_bytes`, issue 14: memory
//! that stays small). `max_request_bytes` bounds one body and
//! `max_client_connections` the connections, but not their product: ten
//! thousand connections could each hold a 64 MiB body. A body is counted
//! as its bytes arrive (a client's `content-length` is only its word), in
//! whole KiB, and given back when its [`Held`] is dropped: once the body
//! has gone upstream and been read. The same kind of bound holds the
//! response bodies copied for parsing, what streams' parses hold and the
//! upstream WebSocket messages (`max_buffered_response_bytes`,
//! [`BodyBudget::named`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Request bodies held at once, at most `max` bytes.
#[derive(Debug)]
pub(crate) struct BodyBudget {
    /// One permit a KiB.
    kib: Arc<Semaphore>,
    /// The permits it started with.
    total_kib: usize,
    /// The bound, bytes (as configured).
    max: usize,
    /// The setting that bounds it, for the log.
    setting: &'static str,
    /// Bodies refused for want of room.
    refused: AtomicU64,
}

/// What one body holds of the budget; dropping it gives it back.
#[derive(Debug)]
pub(crate) struct Held {
    budget: Arc<BodyBudget>,
    permit: Option<OwnedSemaphorePermit>,
}

/// A body the budget has no room for: `max_buffered_request_bytes` are
/// held by others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoRoom {
    /// The bound, bytes.
    pub(crate) max: usize,
}

// === impl BodyBudget ===

impl BodyBudget {
    /// A budget of `max` bytes of request bodies
    /// (`max_buffered_request_bytes`).
    pub(crate) fn new(max: usize) -> Arc<BodyBudget> {
        BodyBudget::named(max, "max_buffered_request_bytes")
    }

    /// A budget of `max` bytes (at least one KiB; more than a semaphore
    /// counts is as good as unbounded), bounded by the setting `setting`.
    pub(crate) fn named(max: usize, setting: &'static str) -> Arc<BodyBudget> {
        let total_kib = max.div_ceil(1024).clamp(1, Semaphore::MAX_PERMITS);
        Arc::new(BodyBudget {
            kib: Arc::new(Semaphore::new(total_kib)),
            total_kib,
            max,
            setting,
            refused: AtomicU64::new(0),
        })
    }

    /// Nothing held yet, for a body about to be read.
    pub(crate) fn hold(self: &Arc<Self>) -> Held {
        Held {
            budget: self.clone(),
            permit: None,
        }
    }

    /// Bytes held now, in whole KiB.
    pub(crate) fn held_bytes(&self) -> usize {
        (self.total_kib - self.kib.available_permits()) * 1024
    }

    /// Bodies refused so far.
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

// === impl Held ===

impl Held {
    /// Gives back what it holds beyond `bytes` (in whole KiB), for a copy
    /// that has let go of part of what it held.
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        let keep = bytes.div_ceil(1024);
        let Some(held) = self.permit.as_mut() else {
            return;
        };
        let have = held.num_permits();
        if keep == 0 {
            self.permit = None;
        } else if keep < have {
            // Split off what goes back, and drop it.
            drop(held.split(have - keep));
        }
    }

    /// Holds enough for `bytes` of body (never less than held already);
    /// `Err` when the budget has no room, counted and logged (the first
    /// and every power of two).
    pub(crate) fn cover(&mut self, bytes: usize) -> Result<(), NoRoom> {
        let want = bytes.div_ceil(1024);
        let have = self.permit.as_ref().map_or(0, |p| p.num_permits());
        if want <= have {
            return Ok(());
        }
        let more = u32::try_from(want - have).unwrap_or(u32::MAX);
        match self.budget.kib.clone().try_acquire_many_owned(more) {
            Ok(permit) => {
                match &mut self.permit {
                    Some(held) => held.merge(permit),
                    None => self.permit = Some(permit),
                }
                Ok(())
            }
            Err(_) => {
                let n = self.budget.refused.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(
                        setting = self.budget.setting,
                        max = self.budget.max,
                        refused = n,
                        "bytes refused: as many as the setting allows are held"
                    );
                }
                Err(NoRoom {
                    max: self.budget.max,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// One step of a property test: a body (by index) covers a size, or
    /// is done with.
    #[derive(Debug, Clone)]
    enum Step {
        Cover(usize, usize),
        Shrink(usize, usize),
        Drop(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..4usize, 0..20_000usize).prop_map(|(i, n)| Step::Cover(i, n)),
            (0..4usize, 0..20_000usize).prop_map(|(i, n)| Step::Shrink(i, n)),
            (0..4usize).prop_map(Step::Drop),
        ]
    }

    proptest! {
        /// Whatever bodies cover, shrink and drop: the budget holds exactly
        /// what the live bodies have covered (each the most it asked for
        /// since it last shrank, in whole KiB), never more than its bound;
        /// a cover fails exactly when the rest would go past the bound, and
        /// takes nothing then.
        #[test]
        fn the_budget_holds_what_live_bodies_covered(
            max in 1usize..16_384,
            steps in proptest::collection::vec(step(), 0..40),
        ) {
            let budget = BodyBudget::new(max);
            let bound = max.div_ceil(1024) * 1024;
            let mut bodies: Vec<Option<(Held, usize)>> = (0..4).map(|_| None).collect();
            let mut refused = 0;
            for step in steps {
                match step {
                    Step::Cover(i, n) => {
                        let (held, kib) = bodies[i].get_or_insert_with(|| (budget.hold(), 0));
                        let want = n.div_ceil(1024);
                        let others = budget.held_bytes() / 1024 - *kib;
                        let fits = (others + want.max(*kib)) * 1024 <= bound;
                        prop_assert_eq!(held.cover(n).is_ok(), fits);
                        if fits {
                            *kib = want.max(*kib);
                        } else {
                            refused += 1;
                        }
                    }
                    Step::Shrink(i, n) => {
                        if let Some((held, kib)) = bodies[i].as_mut() {
                            held.shrink_to(n);
                            *kib = n.div_ceil(1024).min(*kib);
                        }
                    }
                    Step::Drop(i) => bodies[i] = None,
                }
                let live: usize = bodies.iter().flatten().map(|(_, kib)| kib * 1024).sum();
                prop_assert_eq!(budget.held_bytes(), live);
                prop_assert!(live <= bound);
            }
            prop_assert_eq!(budget.refused(), refused);
            drop(bodies);
            prop_assert_eq!(budget.held_bytes(), 0);
        }
    }

    /// Bodies hold what they have covered, in whole KiB, until dropped;
    /// one that would go past the bound is refused and counted, and holds
    /// what it had.
    #[test]
    fn bodies_hold_the_budget_until_dropped() {
        let budget = BodyBudget::new(10 * 1024);
        let mut a = budget.hold();
        a.cover(1).expect("room");
        assert_eq!(budget.held_bytes(), 1024);
        a.cover(4 * 1024).expect("room");
        a.cover(100).expect("less than held");
        assert_eq!(budget.held_bytes(), 4 * 1024);
        let mut b = budget.hold();
        b.cover(6 * 1024).expect("the rest");
        assert_eq!(b.cover(6 * 1024 + 1), Err(NoRoom { max: 10 * 1024 }));
        assert_eq!(budget.refused(), 1);
        assert_eq!(budget.held_bytes(), 10 * 1024);
        drop(a);
        assert_eq!(budget.held_bytes(), 6 * 1024);
        b.cover(10 * 1024).expect("room again");
        drop(b);
        assert_eq!(budget.held_bytes(), 0);
        // A body as large as the whole budget fits when nothing else is held.
        budget.hold().cover(10 * 1024).expect("all of it");
        assert_eq!(budget.held_bytes(), 0, "given back on drop");
    }
}
