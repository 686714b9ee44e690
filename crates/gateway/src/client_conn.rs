//! What a client connection on hyper's path shares with what serves it:
//! how many requests it started and whether over HTTP/2 (for the worker's
//! idle rule), and whether its write limit cut it off
//! ([`crate::write_limit`]: its client read nothing for
//! `client_body_timeout`). Each of its HTTP/2 streams' tasks holds it
//! ([`crate::stream_stall`]) and asks, only as it ends, whether the
//! connection was cut: a stream ends after its connection, so its request
//! is recorded as cut by the gateway, not as its client gone.

use std::{
    sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
    time::Duration,
};

/// A client connection on hyper's path, shared by its tasks.
#[derive(Debug, Default)]
pub(crate) struct ClientConn {
    requests: AtomicU64,
    http2: AtomicBool,
    /// The write limit that cut the connection off, in ms; `0` while not.
    cut_ms: AtomicU64,
}

// === impl ClientConn ===

impl ClientConn {
    /// A request of `version` started.
    pub(crate) fn request(&self, version: http::Version) {
        self.requests.fetch_add(1, Relaxed);
        if version == http::Version::HTTP_2 {
            self.http2.store(true, Relaxed);
        }
    }

    /// The requests started so far, and whether over HTTP/2.
    pub(crate) fn snapshot(&self) -> (u64, bool) {
        (self.requests.load(Relaxed), self.http2.load(Relaxed))
    }

    /// A write to the client waited `limit` with nothing read: the
    /// connection fails now.
    pub(crate) fn mark_cut(&self, limit: Duration) {
        let ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX).max(1);
        self.cut_ms.store(ms, Relaxed);
    }

    /// The limit that cut the connection off, if it was.
    pub(crate) fn cut(&self) -> Option<Duration> {
        match self.cut_ms.load(Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_cut_only_once_marked() {
        let conn = ClientConn::default();
        conn.request(http::Version::HTTP_11);
        assert_eq!(conn.snapshot(), (1, false));
        conn.request(http::Version::HTTP_2);
        assert_eq!(conn.snapshot(), (2, true));
        assert_eq!(conn.cut(), None);
        conn.mark_cut(Duration::from_millis(1500));
        assert_eq!(conn.cut(), Some(Duration::from_millis(1500)));
        // A limit under a millisecond is still a cut.
        let conn = ClientConn::default();
        conn.mark_cut(Duration::from_micros(10));
        assert_eq!(conn.cut(), Some(Duration::from_millis(1)));
    }
}
