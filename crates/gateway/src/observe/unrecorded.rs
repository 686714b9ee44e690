//! How many requests are being served whose request record has not been
//! handed to the recorder yet: counted from the moment an
//! [`super::Observation`] starts until its record is handed
//! ([`Counted::hand`]). A shutdown that ends with some still counted — a
//! worker busy past its bound, e.g. in the analysis of a very large
//! request body — reports them as not recorded rather than losing them
//! silently.
//!
//! The shutdown seals the count ([`Unrecorded::seal`]) before the
//! recorder's final drain, so that each request is in exactly one place
//! of its report: a record handed before the seal is one of the
//! recorder's events (written, or dropped and counted in
//! `events_dropped`); a request not handed by then is counted in
//! `unrecorded_requests`, and its record is never handed afterwards
//! (`hand` refuses it), so it cannot also turn up among the recorder's
//! dropped events. A hand under way when the seal comes (a `try_send`,
//! nothing awaited) is waited for: it lands before the drain starts.
//! (Before, the count was read after the drain, and a record handed in
//! between was in neither field, or in both.)

use std::sync::atomic::{AtomicU64, Ordering};

/// Held requests, in the low 32 bits.
const HELD: u64 = (1 << 32) - 1;
/// One hand under way (bits 32 to 62).
const HANDING: u64 = 1 << 32;
/// Sealed: no record is handed any more.
const SEALED: u64 = 1 << 63;

/// The count, one per gateway (in `Sinks`): requests held, hands under
/// way and the seal, in one word so that a hand and the seal are ordered.
#[derive(Debug, Default)]
pub(crate) struct Unrecorded(std::sync::Arc<AtomicU64>);

/// One request counted in [`Unrecorded`] until [`Counted::hand`]. One
/// dropped without it stays counted: its record was lost (a worker's
/// runtime ended before the task that makes it ran).
#[derive(Debug)]
pub(super) struct Counted(std::sync::Arc<AtomicU64>);

impl Unrecorded {
    /// Counts one more request until the returned token is handed.
    pub(super) fn count(&self) -> Counted {
        self.0.fetch_add(1, Ordering::AcqRel);
        Counted(self.0.clone())
    }

    /// No record is handed from now on: the requests still held, once the
    /// hands under way have ended (each a `try_send`: the wait is a few
    /// yields). Those are the shutdown's `unrecorded_requests`; every
    /// other request's record is among the recorder's events.
    pub(crate) async fn seal(&self) -> u64 {
        let before = self.0.fetch_or(SEALED, Ordering::AcqRel);
        let mut now = before;
        while now & !SEALED >= HANDING {
            tokio::task::yield_now().await;
            now = self.0.load(Ordering::Acquire);
        }
        before & HELD
    }
}

impl Counted {
    /// Hands the request's record to the recorder (`hand`: queue it, or
    /// nothing for a request recorded in the metrics only), unless the
    /// count was sealed: then the request stays counted there, `hand` is
    /// not called, and `false` is returned.
    pub(super) fn hand(self, hand: impl FnOnce()) -> bool {
        let mut now = self.0.load(Ordering::Acquire);
        loop {
            if now & SEALED != 0 {
                return false;
            }
            // One less held, one more under way, at once.
            let next = now - 1 + HANDING;
            match self
                .0
                .compare_exchange_weak(now, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(actual) => now = actual,
            }
        }
        let _handed = Handed(&self.0);
        hand();
        true
    }
}

/// Ends a hand under way, however it ends.
struct Handed<'a>(&'a AtomicU64);

impl Drop for Handed<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(HANDING, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::Unrecorded;

    #[tokio::test]
    async fn a_request_is_counted_until_its_record_is_handed() {
        let unrecorded = Unrecorded::default();
        let first = unrecorded.count();
        let second = unrecorded.count();
        let third = unrecorded.count();
        assert!(first.hand(|| {}));
        // Lost without being handed: still counted.
        drop(second);
        assert_eq!(unrecorded.seal().await, 2);
        // Sealed: not handed, still counted (in the report taken).
        let mut called = false;
        assert!(!third.hand(|| called = true));
        assert!(!called);
    }

    /// The interleaving that lost a request: its record is being handed
    /// (between leaving the count and reaching the recorder) when the
    /// shutdown takes the count. The seal waits for it, so that it reaches
    /// the recorder before the drain (it is the recorder's), and it is not
    /// in the count either.
    #[tokio::test]
    async fn the_seal_waits_for_a_record_being_handed() {
        let unrecorded = Unrecorded::default();
        let handing = unrecorded.count();
        let held = unrecorded.count();
        let (inside_tx, inside) = std::sync::mpsc::channel();
        let (go, go_rx) = std::sync::mpsc::channel::<()>();
        let hand = std::thread::spawn(move || {
            handing.hand(|| {
                inside_tx.send(()).unwrap();
                go_rx.recv().unwrap();
            })
        });
        inside.recv().unwrap();
        let mut sealing = std::pin::pin!(unrecorded.seal());
        assert!(
            (&mut sealing).now_or_never().is_none(),
            "the seal returned while a record was being handed"
        );
        go.send(()).unwrap();
        assert!(hand.join().unwrap());
        assert_eq!(sealing.await, 1, "only the held request is unrecorded");
        assert!(!held.hand(|| panic!("handed after the seal")));
    }
}
