//! Stopping: the flags the server raises (stop accepting; the grace period
//! is over) and [`raised`], which both HTTP paths and the WebSocket relay
//! await; and what an exchange the end of the grace period cuts short is
//! recorded as, the same on every path ([`GraceOver`], [`CUT_BY_SHUTDOWN`],
//! [`CUT_BEFORE_ANSWER`]): the gateway's cut, not a client's `499`. A leaf.

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

/// The error recorded with an exchange (an HTTP request, a WebSocket turn)
/// that the end of the grace period cut short.
pub(crate) const CUT_BY_SHUTDOWN: &str = "the gateway shut down before the response finished";

/// The status recorded for an HTTP request the end of the grace period
/// cut before its response head: the gateway could not serve it, as it
/// stopped (the client sees its connection closed).
pub(crate) const CUT_BEFORE_ANSWER: u16 = 503;

/// Whether the grace period is over, as the records see it: raised (for
/// good) by the server just before it raises the force flag, which drops
/// what is still in flight. An observation dropped unfinished from then on
/// was cut by the gateway (`observe::Observation`'s `Drop`); before, by
/// its client. One per gateway, in `observe::Sinks`.
#[derive(Debug, Default)]
pub(crate) struct GraceOver(AtomicBool);

/// Completes once the flag is `true` (or its sender is gone).
pub(crate) async fn raised(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|raised| *raised).await;
}

// === impl GraceOver ===

impl GraceOver {
    /// The grace period is over: what is still in flight is cut now.
    pub(crate) fn raise(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether [`GraceOver::raise`] was called.
    pub(crate) fn is_raised(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
