//! [`Streamed`]: a client's request body forwarded as it arrives, for the
//! pass-through routes (uploads to `/v1/files`, audio, batches), which the
//! gateway neither reads nor changes: memory stays flat whatever the
//! upload's size, and `max_request_bytes` (which bounds what the gateway
//! holds) does not apply.
//!
//! Two bounds replace reading the body whole within
//! `client_body_timeout_ms`:
//! - a client that sends no part of the body for `client_body_timeout_ms`
//!   while the upstream waits for it fails the body (the proxy answers
//!   400 naming the setting: [`Progress::stalled`]);
//! - each piece forwarded is progress ([`Progress`]): the proxy's
//!   first-byte timer counts from the last piece, and not while the
//!   upstream waits for the client's next one, so a long or paused upload
//!   is not cut off for its length, and an upstream that stops reading it
//!   is.

use std::{
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A client's body on its way upstream.
#[derive(Debug)]
pub struct Streamed {
    inner: Incoming,
    idle: Duration,
    /// Armed while the upstream waits and the client sends nothing.
    waiting: Option<Pin<Box<Sleep>>>,
    progress: Arc<Progress>,
}

/// What the proxy learns of a [`Streamed`] body as it goes.
#[derive(Debug)]
pub(crate) struct Progress {
    start: Instant,
    /// Milliseconds from `start` to the last piece forwarded (or the end).
    last_ms: AtomicU64,
    /// Why the body failed, when the client's side failed it.
    stalled: Mutex<Option<String>>,
    /// Whether the upstream is waiting for the client's next piece (its
    /// silence is [`Streamed`]'s idle bound to judge, not the upstream's).
    waiting: AtomicBool,
}

// === impl Streamed ===

impl Streamed {
    /// `body`, failed when the client sends nothing for `idle` while the
    /// upstream waits for it; its progress is the second value.
    pub(crate) fn new(body: Incoming, idle: Duration) -> (Streamed, Arc<Progress>) {
        let progress = Arc::new(Progress {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            stalled: Mutex::new(None),
            waiting: AtomicBool::new(false),
        });
        let streamed = Streamed {
            inner: body,
            idle,
            waiting: None,
            progress: progress.clone(),
        };
        (streamed, progress)
    }

    fn fail(&self, why: String) -> BoxError {
        *self.progress.lock() = Some(why.clone());
        why.into()
    }
}

impl Body for Streamed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.waiting = None;
                this.progress.advance();
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(
                this.fail(format!("reading the request body failed: {e}"))
            ))),
            Poll::Ready(None) => {
                this.waiting = None;
                this.progress.advance();
                Poll::Ready(None)
            }
            Poll::Pending => {
                this.progress.waiting.store(true, Ordering::Release);
                let idle = this.idle;
                let waiting = this
                    .waiting
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(idle)));
                match waiting.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(this.fail(format!(
                        "the client sent no part of the body for client_body_timeout_ms ({} ms)",
                        idle.as_millis()
                    ))))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

// === impl Progress ===

impl Progress {
    /// When the last piece went (or the body began).
    pub(crate) fn last(&self) -> Instant {
        self.start + Duration::from_millis(self.last_ms.load(Ordering::Acquire))
    }

    /// Why the client's side failed the body, if it did.
    pub(crate) fn stalled(&self) -> Option<String> {
        self.lock().clone()
    }

    /// Whether the upstream waits for the client's next piece now.
    pub(crate) fn waiting_on_client(&self) -> bool {
        self.waiting.load(Ordering::Acquire)
    }

    fn advance(&self) {
        self.waiting.store(false, Ordering::Release);
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.fetch_max(ms, Ordering::AcqRel);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.stalled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
