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
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
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
    /// Whether a request was written after a read: read through the
    /// connection's `Connected` once a request on it failed.
    reused: Reused,
    /// How far the connection is from being reused, known to it alone.
    phase: Phase,
}

/// [`Reused`]'s steps, kept on the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing read yet.
    Fresh,
    /// A read came back: the next write starts another request.
    Read,
    /// A request was written after a read ([`Reused`] is set).
    Reused,
}

/// Whether an HTTP/1 connection carried a request after an answer (hyper-util
/// sends one request at a time and pipelines none): a request that failed on
/// it went on a reused connection, which its upstream may have closed as
/// idle just as the request went out. One per connection, shared with
/// hyper-util's `Connected` as its extra (`Connected::extra`), where
/// [`super::went_on_reused_http1`] reads it: hyper-util knows whether it
/// reused a connection but does not say so. Set once per connection;
/// nothing per read or write beyond a flag of the connection's own.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reused(Arc<AtomicBool>);

impl Reused {
    /// Whether a request was written after an answer was read.
    pub(crate) fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
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
            reused: Reused::default(),
            phase: Phase::Fresh,
        }
    }

    /// A read came back.
    fn read(&mut self) {
        if self.phase == Phase::Fresh {
            self.phase = Phase::Read;
        }
    }

    /// A write is about to go: one after a read starts a request on a
    /// reused connection.
    fn writing(&mut self) {
        if self.phase == Phase::Read {
            self.phase = Phase::Reused;
            self.reused.0.store(true, Ordering::Release);
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
            let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
            if polled.is_ready() {
                this.read();
            }
            return polled;
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
                this.read();
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
        this.writing();
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
        this.writing();
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
    /// The inner connection's, with [`Reused`] as its one extra in place
    /// of the TCP connector's `HttpInfo` (its addresses, which nothing
    /// here reads): hyper-util puts a connection's extra into every
    /// response's extensions, so this one costs what that one did.
    fn connected(&self) -> Connected {
        let inner = self.inner.connected();
        let connected = Connected::new()
            .proxy(inner.is_proxied())
            .extra(self.reused.clone());
        if inner.is_negotiated_h2() {
            connected.negotiated_h2()
        } else {
            connected
        }
    }
}
