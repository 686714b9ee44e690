//! An HTTP/2 stream whose client stops reading it: its flow-control window
//! stays shut, so hyper holds the response's next chunk and stops polling
//! the body, and the stream, the upstream connection and the upstream's
//! response are held until the client resets it. [`crate::write_limit`]
//! cannot see it (the connection's other streams and pings keep the TCP
//! connection moving). Each stream hyper serves over HTTP/2 runs under
//! [`StreamExec`], which ends it — hyper's stream task is dropped, and h2
//! resets the stream (`RST_STREAM`, `CANCEL`), dropping the response body
//! and with it the upstream's — once a chunk it was handed has waited
//! `client_body_timeout` for the client's window, as an HTTP/1 write waits
//! at most that long. The body says when it hands a chunk and when it is
//! polled again ([`Watched`]), through a [`Progress`] the stream's task
//! makes known while it polls ([`current`]). A chunk waiting for the
//! upstream is no stall: the body was polled and is pending. The stream's
//! task drops hyper's while [`stalled`] says why, so that an observation
//! dropped with the body records the stall ([`stall_error`]), not a
//! client gone.
//!
//! A stream also ends when its connection fails, and a connection fails
//! when a write to it waits `client_body_timeout` ([`crate::write_limit`]:
//! the client reads nothing at all). h2 fails the streams in their own
//! tasks after the connection's: each stream's task holds its
//! connection's [`ClientConn`], handed over by the service as it takes
//! the request ([`next_stream_on`]), and, only when it ends, asks whether
//! the connection was cut; if so it drops hyper's under a
//! [`write_limit::CutScope`], so that its observation records that cut
//! ([`write_limit::cut_error`]), not a client gone.
//!
//! HTTP/1 is untouched: hyper spawns no task per HTTP/1 request, so no
//! progress is current there and its bodies are not wrapped.

use std::{
    cell::{Cell, RefCell},
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use crate::{client_conn::ClientConn, write_limit};

/// What a stream's body says to its task: `0` while nothing it handed is
/// waiting (it was polled since), else the number of the data chunk last
/// handed.
#[derive(Debug, Default)]
pub(crate) struct Progress(AtomicU64);

thread_local! {
    /// The progress of the HTTP/2 stream whose task this thread is polling.
    static CURRENT: RefCell<Option<Arc<Progress>>> = const { RefCell::new(None) };
}

thread_local! {
    /// The connection of the HTTP/2 stream hyper spawns next on this
    /// thread: set as the service takes the stream's request, taken by
    /// [`StreamExec`] right after, in the same poll of the connection.
    static NEXT: RefCell<Option<Arc<ClientConn>>> = const { RefCell::new(None) };
}

thread_local! {
    /// Set while this thread drops a stream ended for stalling (its
    /// limit), and whether something dropped with it said so.
    static STALLED: Cell<Option<(Duration, bool)>> = const { Cell::new(None) };
}

/// While a stream ended for stalling is being dropped, on this thread:
/// the limit its chunk waited (what is dropped now was cut for that, not
/// by its client). Asking marks the stall as named (the stream's task
/// logs it only when nothing dropped with it did).
pub(crate) fn stalled() -> Option<Duration> {
    STALLED.with(|s| {
        let (limit, _) = s.get()?;
        s.set(Some((limit, true)));
        Some(limit)
    })
}

/// The error recorded with a request whose HTTP/2 stream was reset
/// because its client read nothing of the response for `limit`.
pub(crate) fn stall_error(limit: Duration) -> String {
    format!(
        "the client read nothing of the response for {} ms (client_body_timeout_ms): \
         its HTTP/2 stream was reset",
        limit.as_millis()
    )
}

/// An HTTP/2 request of `conn` is being taken: the stream task hyper
/// spawns for it next belongs to `conn`.
pub(crate) fn next_stream_on(conn: &Arc<ClientConn>) {
    NEXT.with(|n| *n.borrow_mut() = Some(conn.clone()));
}

/// The progress of the HTTP/2 stream being polled, if any: a response
/// made now (by the stream's service future) is to be wrapped in
/// [`Watched`] with it.
pub(crate) fn current() -> Option<Arc<Progress>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// hyper's executor for a connection's HTTP/2 streams: spawns each on the
/// worker's runtime, under the stall limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamExec {
    limit: Duration,
}

impl StreamExec {
    /// Streams whose chunk waits `limit` for the client's window are ended.
    pub(crate) fn new(limit: Duration) -> StreamExec {
        StreamExec { limit }
    }
}

impl<F> hyper::rt::Executor<F> for StreamExec
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(Stream {
            inner: Some(Box::pin(fut)),
            conn: NEXT.with(|n| n.borrow_mut().take()),
            progress: Arc::default(),
            limit: self.limit,
            timer: None,
            armed: 0,
        });
    }
}

/// A stream's task under the stall limit.
struct Stream<F> {
    /// hyper's task; `None` once ended for stalling.
    inner: Option<Pin<Box<F>>>,
    /// The client connection the stream is on (`None` for the tasks
    /// hyper spawns that are not a request's stream).
    conn: Option<Arc<ClientConn>>,
    progress: Arc<Progress>,
    limit: Duration,
    /// Set when a chunk waits; its deadline is the chunk's.
    timer: Option<Pin<Box<Sleep>>>,
    /// The chunk the timer is set for (`0`: none).
    armed: u64,
}

/// Puts back the progress current before, however the poll ends.
struct Restore(Option<Arc<Progress>>);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = self.0.take());
    }
}

/// Clears [`STALLED`] once the stalled stream is dropped, however the
/// drop ends.
struct ClearStalled;

impl Drop for ClearStalled {
    fn drop(&mut self) {
        STALLED.with(|s| s.set(None));
    }
}

impl<F: Future<Output = ()>> Future for Stream<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(());
        };
        {
            let before = CURRENT.with(|c| c.borrow_mut().replace(this.progress.clone()));
            let _restore = Restore(before);
            if inner.as_mut().poll(cx).is_ready() {
                // Ended, perhaps with its connection: one its write limit
                // cut off is dropped now, under the cut.
                if let Some(limit) = this.conn.as_ref().and_then(|c| c.cut()) {
                    let cut = write_limit::CutScope::default();
                    cut.enter(limit);
                    this.inner = None;
                }
                return Poll::Ready(());
            }
        }
        let waiting = this.progress.0.load(Ordering::Relaxed);
        if waiting == 0 {
            this.armed = 0;
            return Poll::Pending;
        }
        if this.armed != waiting {
            this.armed = waiting;
            let deadline = Instant::now() + this.limit;
            match &mut this.timer {
                Some(timer) => timer.as_mut().reset(deadline),
                None => this.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        match this.timer.as_mut().map(|t| t.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => {
                // Dropping hyper's task resets the stream and drops its
                // body, and with it the request's observation, which
                // records and logs the stall (`stalled`).
                STALLED.with(|s| s.set(Some((this.limit, false))));
                let _clear = ClearStalled;
                this.inner = None;
                let named = STALLED.with(Cell::get).is_some_and(|(_, named)| named);
                if !named {
                    tracing::debug!(
                        limit_ms = this.limit.as_millis() as u64,
                        "HTTP/2 stream not read for client_body_timeout_ms: reset"
                    );
                }
                Poll::Ready(())
            }
            _ => Poll::Pending,
        }
    }
}

/// A response body on an HTTP/2 stream: tells its stream's [`Progress`]
/// when it hands a data chunk and when it is polled again.
#[derive(Debug)]
pub(crate) struct Watched<B> {
    inner: B,
    progress: Arc<Progress>,
    handed: u64,
}

impl<B> Watched<B> {
    pub(crate) fn new(inner: B, progress: Arc<Progress>) -> Watched<B> {
        Watched {
            inner,
            progress,
            handed: 0,
        }
    }
}

impl<B: Body<Data = bytes::Bytes> + Unpin> Body for Watched<B> {
    type Data = bytes::Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<bytes::Bytes>, B::Error>>> {
        let this = self.get_mut();
        this.progress.0.store(0, Ordering::Relaxed);
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && frame.data_ref().is_some_and(|d| !d.is_empty())
        {
            this.handed += 1;
            this.progress.0.store(this.handed, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use hyper::rt::Executor;

    /// A stream whose body handed a chunk and is not polled again (the
    /// client's window is shut) ends after the limit; one whose body is
    /// waiting for its upstream (polled, pending) does not, however long.
    #[tokio::test(start_paused = true)]
    async fn a_stream_ends_when_a_handed_chunk_waits_the_limit() {
        let limit = Duration::from_secs(5);
        for stalled in [true, false] {
            let (done, ended) = tokio::sync::oneshot::channel::<Instant>();
            let started = Instant::now();
            StreamExec::new(limit).execute(async move {
                struct Report(Option<tokio::sync::oneshot::Sender<Instant>>);
                impl Drop for Report {
                    fn drop(&mut self) {
                        let _ = self.0.take().unwrap().send(Instant::now());
                    }
                }
                let _report = Report(Some(done));
                let progress = current().expect("the stream's progress is current");
                let mut body = Watched::new(
                    http_body_util::StreamBody::new(
                        futures_util::stream::iter([Ok::<_, std::convert::Infallible>(
                            Frame::data(bytes::Bytes::from_static(b"chunk")),
                        )])
                        .chain(futures_util::stream::pending()),
                    ),
                    progress,
                );
                let first = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
                assert!(first.is_some());
                if !stalled {
                    // Polled again: waits for the upstream, for good.
                    std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
                }
                std::future::pending::<()>().await;
            });
            assert!(current().is_none(), "current only while a stream is polled");
            let waited = tokio::time::timeout(Duration::from_secs(60), ended).await;
            match (stalled, waited) {
                (true, Ok(Ok(at))) => assert_eq!(at - started, limit),
                (false, Err(_)) => {}
                (stalled, waited) => panic!("stalled {stalled}: {waited:?}"),
            }
        }
    }
}
