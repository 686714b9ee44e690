//! A client connection whose writes must make progress: a write that the
//! client leaves waiting (it reads nothing, its window stays shut) for
//! `client_body_timeout` fails, and the connection with it. Without this a
//! client that stops reading its response holds its connection, its place
//! under `max_client_connections` and an upstream connection for good
//! (TCP keepalive cannot see it: its kernel answers). Hyper's path, HTTP/2
//! and upgraded WebSockets write through this, and so do the fast path's
//! writes to the client (`h1::exchange`).
//!
//! The timer is set only when a write has to wait, and cleared by any
//! write that goes through.
//!
//! A request whose HTTP/1 response such a write cut is recorded as cut
//! for that ([`cut_error`]), not as its client gone: the fast path tells
//! its observation when a write fails with [`Stalled`]; on hyper's path
//! the connection ends with that error and is dropped under a
//! [`CutScope`], so that an observation dropped with it asks [`cut`].
//! A write that fails so marks its connection's
//! [`crate::client_conn::ClientConn`]: an HTTP/2 connection's streams end
//! in tasks of their own after it, and each drops its request under a
//! [`CutScope`] when it finds the mark ([`crate::stream_stall`]).

use std::{
    cell::Cell,
    error::Error,
    fmt, io,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    time::{Instant, Sleep},
};

use crate::client_conn::ClientConn;

/// `T` whose writes fail after waiting `limit` with no progress.
#[derive(Debug)]
pub(crate) struct WriteLimit<T> {
    inner: T,
    limit: Duration,
    /// Made on the first wait, reset on the next ones.
    timer: Option<Pin<Box<Sleep>>>,
    /// A write is waiting, since the timer's deadline less `limit`.
    waiting: bool,
    /// The client connection marked cut when a write fails for the limit.
    conn: Option<Arc<ClientConn>>,
}

impl<T> WriteLimit<T> {
    pub(crate) fn new(inner: T, limit: Duration) -> Self {
        WriteLimit {
            inner,
            limit,
            timer: None,
            waiting: false,
            conn: None,
        }
    }

    /// As [`WriteLimit::new`], marking `conn` cut when a write fails for
    /// the limit.
    pub(crate) fn marking(inner: T, limit: Duration, conn: Arc<ClientConn>) -> Self {
        WriteLimit {
            conn: Some(conn),
            ..WriteLimit::new(inner, limit)
        }
    }

    /// `polled`, the inner write's answer, with the limit applied.
    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.waiting = false;
            return polled;
        }
        if !self.waiting {
            self.waiting = true;
            let deadline = Instant::now() + self.limit;
            match &mut self.timer {
                Some(timer) => timer.as_mut().reset(deadline),
                None => self.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        match self.timer.as_mut().map(|t| t.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => {
                if let Some(conn) = &self.conn {
                    conn.mark_cut(self.limit);
                }
                Poll::Ready(Err(read_nothing(self.limit)))
            }
            _ => Poll::Pending,
        }
    }
}

/// The error of a write the peer left waiting `limit`.
fn read_nothing(limit: Duration) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, Stalled(limit))
}

/// Why a write failed: the peer left it waiting this long. Its words are
/// WebSocket mode's close reason and recorded error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stalled(pub(crate) Duration);

impl fmt::Display for Stalled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nothing read for {} ms (client_body_timeout_ms)",
            self.0.as_millis()
        )
    }
}

impl Error for Stalled {}

/// The limit a write waited, if `err` or an error in its chain of causes
/// is [`Stalled`]'s `io::Error` (the fast path's write error, or an
/// error wrapping it as hyper's does).
pub(crate) fn stall_of(err: &(dyn Error + 'static)) -> Option<Duration> {
    let mut at = Some(err);
    while let Some(err) = at {
        let stalled = err
            .downcast_ref::<io::Error>()
            .and_then(|io| io.get_ref()?.downcast_ref::<Stalled>());
        if let Some(Stalled(limit)) = stalled {
            return Some(*limit);
        }
        at = err.source();
    }
    None
}

/// The error recorded with a request whose HTTP/1 connection was closed
/// because its client read nothing of the response for `limit`.
pub(crate) fn cut_error(limit: Duration) -> String {
    format!(
        "the client read nothing of the response for {} ms (client_body_timeout_ms): \
         its connection was closed",
        limit.as_millis()
    )
}

thread_local! {
    /// Set while this thread drops a connection a stalled write ended.
    static CUT: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// While a connection a stalled write ended is being dropped, on this
/// thread: the limit the write waited (what is dropped now was cut for
/// that, not by its client).
pub(crate) fn cut() -> Option<Duration> {
    CUT.with(Cell::get)
}

/// Made before a hyper connection (so dropped after it); once
/// [`CutScope::enter`]ed, [`cut`] says the limit until it is dropped.
#[derive(Debug, Default)]
pub(crate) struct CutScope(Cell<bool>);

impl CutScope {
    /// What is dropped on this thread from now until the scope's end was
    /// cut by a write that waited `limit`. No await may come between this
    /// and the drop.
    pub(crate) fn enter(&self, limit: Duration) {
        CUT.with(|c| c.set(Some(limit)));
        self.0.set(true);
    }
}

impl Drop for CutScope {
    fn drop(&mut self) {
        if self.0.get() {
            CUT.with(|c| c.set(None));
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteLimit<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteLimit<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A peer that reads nothing: the write fails after the limit, and
    /// marks its connection cut. One that reads: writes go on, however
    /// long in all, and the connection is not marked.
    #[tokio::test(start_paused = true)]
    async fn a_write_waits_at_most_the_limit() {
        let (near, mut far) = tokio::io::duplex(64);
        let conn = Arc::new(ClientConn::default());
        let mut limited = WriteLimit::marking(near, Duration::from_secs(5), conn.clone());
        let started = Instant::now();
        let err = limited.write_all(&[0u8; 1024]).await.unwrap_err();
        assert_eq!(conn.cut(), Some(Duration::from_secs(5)));
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed().as_secs(), 5);
        assert_eq!(
            err.to_string(),
            "nothing read for 5000 ms (client_body_timeout_ms)"
        );
        assert_eq!(stall_of(&err), Some(Duration::from_secs(5)));

        let (near, mut far2) = tokio::io::duplex(64);
        let conn = Arc::new(ClientConn::default());
        let mut limited = WriteLimit::marking(near, Duration::from_secs(5), conn.clone());
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 64];
            let mut total = 0;
            while total < 64 * 20 {
                tokio::time::sleep(Duration::from_secs(2)).await;
                total += tokio::io::AsyncReadExt::read(&mut far2, &mut buf)
                    .await
                    .unwrap();
            }
            total
        });
        limited
            .write_all(&[0u8; 64 * 20])
            .await
            .expect("progress every 2 s");
        assert!(started.elapsed().as_secs() >= 38);
        assert_eq!(reader.await.unwrap(), 64 * 20);
        assert_eq!(conn.cut(), None);
        drop(far.shutdown().await);
    }

    /// hyper's error for a failed write has the `io::Error` as its
    /// cause: the stall is found there; a timeout of the kernel's (TCP
    /// keepalive's `ETIMEDOUT`) or any other error is not a stall.
    #[test]
    fn a_stall_is_found_among_the_causes() {
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl fmt::Display for Wrapper {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("error writing a body to connection")
            }
        }
        impl Error for Wrapper {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&self.0)
            }
        }
        let limit = Duration::from_millis(750);
        let wrapped: Box<dyn Error + Send + Sync> = Box::new(Wrapper(read_nothing(limit)));
        assert_eq!(stall_of(&*wrapped), Some(limit));
        let kernel = Wrapper(io::Error::from(io::ErrorKind::TimedOut));
        assert_eq!(stall_of(&kernel), None);
        let other = Wrapper(io::Error::other("nothing read for 750 ms"));
        assert_eq!(stall_of(&other), None);
    }

    /// A [`CutScope`] says nothing until entered, then its limit until it
    /// is dropped.
    #[test]
    fn a_cut_scope_names_the_limit_until_its_end() {
        assert_eq!(cut(), None);
        {
            let scope = CutScope::default();
            assert_eq!(cut(), None);
            scope.enter(Duration::from_secs(2));
            assert_eq!(cut(), Some(Duration::from_secs(2)));
        }
        assert_eq!(cut(), None);
    }
}
