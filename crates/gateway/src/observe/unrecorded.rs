//! How many requests are being served whose request record has not been
//! handed to the recorder yet: counted from the moment an
//! [`super::Observation`] starts until its record is queued (or dropped
//! and counted by the recorder). A shutdown that ends with some still
//! counted — a worker busy past its bound, e.g. in the analysis of a very
//! large request body — reports them as not recorded rather than losing
//! them silently.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

/// The count, one per gateway (in `Sinks`).
#[derive(Debug, Default)]
pub(crate) struct Unrecorded(Arc<AtomicU64>);

/// One request counted in [`Unrecorded`] until [`Counted::queued`]. One
/// dropped without it stays counted: its record was lost (a worker's
/// runtime ended before the task that makes it ran).
#[derive(Debug)]
pub(super) struct Counted(Arc<AtomicU64>);

impl Unrecorded {
    /// Counts one more request until the returned token is queued.
    pub(super) fn count(&self) -> Counted {
        self.0.fetch_add(1, Ordering::AcqRel);
        Counted(self.0.clone())
    }

    /// Requests whose record has not been handed to the recorder.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

impl Counted {
    /// The request's record is queued (or dropped and counted by the
    /// recorder, or not to be made: metrics only).
    pub(super) fn queued(self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::Unrecorded;

    #[test]
    fn a_request_is_counted_until_its_record_is_queued() {
        let unrecorded = Unrecorded::default();
        let first = unrecorded.count();
        let second = unrecorded.count();
        assert_eq!(unrecorded.get(), 2);
        first.queued();
        assert_eq!(unrecorded.get(), 1);
        // Lost without being queued: still counted.
        drop(second);
        assert_eq!(unrecorded.get(), 1);
    }
}
