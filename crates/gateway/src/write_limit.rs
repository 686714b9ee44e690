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

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    time::{Instant, Sleep},
};

/// `T` whose writes fail after waiting `limit` with no progress.
#[derive(Debug)]
pub(crate) struct WriteLimit<T> {
    inner: T,
    limit: Duration,
    /// Made on the first wait, reset on the next ones.
    timer: Option<Pin<Box<Sleep>>>,
    /// A write is waiting, since the timer's deadline less `limit`.
    waiting: bool,
}

impl<T> WriteLimit<T> {
    pub(crate) fn new(inner: T, limit: Duration) -> Self {
        WriteLimit {
            inner,
            limit,
            timer: None,
            waiting: false,
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
            Some(Poll::Ready(())) => Poll::Ready(Err(read_nothing(self.limit))),
            _ => Poll::Pending,
        }
    }
}

/// The error of a write the peer left waiting `limit` (as WebSocket mode
/// words it).
fn read_nothing(limit: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "nothing read for {} ms (client_body_timeout_ms)",
            limit.as_millis()
        ),
    )
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

    /// A peer that reads nothing: the write fails after the limit. One
    /// that reads: writes go on, however long in all.
    #[tokio::test(start_paused = true)]
    async fn a_write_waits_at_most_the_limit() {
        let (near, mut far) = tokio::io::duplex(64);
        let mut limited = WriteLimit::new(near, Duration::from_secs(5));
        let started = Instant::now();
        let err = limited.write_all(&[0u8; 1024]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed().as_secs(), 5);

        let (near, mut far2) = tokio::io::duplex(64);
        let mut limited = WriteLimit::new(near, Duration::from_secs(5));
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
        drop(far.shutdown().await);
    }
}
