//! [`EarlyAnswer`]: an upstream connection of hyper's client that lets an
//! answer sent before a failed write through, as the fast path does
//! (`h1::exchange::send`).
//!
//! An upstream that refuses a request from its head (Anthropic's 413 past
//! 32 MB) answers and closes while the body is still going out; the
//! kernel then resets the connection under the write, but keeps what
//! arrived before the reset. hyper's dispatcher stops at the write's
//! error, so the client got a 502 for an answer that was there. Here a
//! failed write is taken as done (the rest of the request goes nowhere)
//! and the reads go on: an answer that comes within [`EARLY_ANSWER_WAIT`]
//! is read as any response; none, and the read fails with the write's
//! error, as the write did before. Reads after the answer go through, so
//! hyper's dispatcher sees the reset before it asks for another request,
//! and the connection is not pooled again even when the answer said
//! keep-alive (`tests/endurance.rs`,
//! `the_connection_reset_under_an_early_answer_is_not_reused`).

use std::{
    future::Future,
    io,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use hyper::rt::{Read, ReadBuf, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};

/// How long a connection whose write failed is given to show an answer
/// already on its way (the fast path's wait).
pub(crate) const EARLY_ANSWER_WAIT: Duration = Duration::from_millis(100);

/// An upstream connection; see the module docs.
#[derive(Debug)]
pub struct EarlyAnswer<T> {
    inner: T,
    state: State,
}

#[derive(Debug)]
enum State {
    /// Writes go through.
    Writing,
    /// A write failed: writes go nowhere, and the first read has until
    /// the timer to bring an answer, or fails with the write's error.
    Waiting(io::Error, Pin<Box<tokio::time::Sleep>>),
    /// An answer came after a failed write: reads go through, writes
    /// nowhere.
    Answered,
}

// === impl EarlyAnswer ===

impl<T> EarlyAnswer<T> {
    pub(crate) fn new(inner: T) -> EarlyAnswer<T> {
        EarlyAnswer {
            inner,
            state: State::Writing,
        }
    }

    /// A write failed with `e`: it is taken as done, the answer awaited.
    fn failed(&mut self, e: io::Error) {
        tracing::debug!(error = %e, "upstream write failed; reading what it answered");
        let timer = Box::pin(tokio::time::sleep(EARLY_ANSWER_WAIT));
        self.state = State::Waiting(e, timer);
    }
}

impl<T: Read + Unpin> Read for EarlyAnswer<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let State::Waiting(_, timer) = &mut this.state else {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        };
        // Read into a buffer of its own, to see whether anything came.
        let mut space = vec![0u8; buf.remaining().min(16 * 1024)];
        let mut read = ReadBuf::new(&mut space);
        let got = match Pin::new(&mut this.inner).poll_read(cx, read.unfilled()) {
            Poll::Ready(Ok(())) if !read.filled().is_empty() => Some(read.filled()),
            Poll::Ready(_) => None,
            Poll::Pending if timer.as_mut().poll(cx).is_pending() => return Poll::Pending,
            Poll::Pending => None,
        };
        match got {
            Some(answer) => {
                buf.put_slice(answer);
                this.state = State::Answered;
                Poll::Ready(Ok(()))
            }
            // Nothing came: the write's error, as before.
            None => match std::mem::replace(&mut this.state, State::Answered) {
                State::Waiting(e, _) => Poll::Ready(Err(e)),
                _ => unreachable!("waiting"),
            },
        }
    }
}

impl<T: Write + Unpin> Write for EarlyAnswer<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if !matches!(this.state, State::Writing) {
            return Poll::Ready(Ok(buf.len()));
        }
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(Err(e)) => {
                this.failed(e);
                Poll::Ready(Ok(buf.len()))
            }
            other => other,
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let all = || bufs.iter().map(|b| b.len()).sum();
        if !matches!(this.state, State::Writing) {
            return Poll::Ready(Ok(all()));
        }
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(Err(e)) => {
                this.failed(e);
                Poll::Ready(Ok(all()))
            }
            other => other,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !matches!(this.state, State::Writing) {
            return Poll::Ready(Ok(()));
        }
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Ready(Err(e)) => {
                this.failed(e);
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl<T: Connection> Connection for EarlyAnswer<T> {
    fn connected(&self) -> Connected {
        self.inner.connected()
    }
}
