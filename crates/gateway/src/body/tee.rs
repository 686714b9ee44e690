//! The response body as it passes: each frame goes to the client as soon as
//! the upstream yields it (no buffering) and, by reference, to the
//! [`Observation`]. The proxy may have taken the first frame already
//! (`proxy::first_frame`), so that the response head and the first bytes
//! leave in one write; it is passed on first. When the upstream breaks
//! midway the dialect's error event is appended (if the response has no
//! fixed length), after the end of the event the break cut ([`SseTail`]),
//! and the stream ends. Dropping a `TeeBody` — the client went away —
//! drops the upstream body, which closes that upstream connection and so
//! cancels the request; unless the stream's final event has passed and
//! its trailer (the usage: `Observation::reads_on`) has not, when a task
//! reads on, bounded, for the records.

use std::{
    pin::Pin,
    task::{Context, Poll, ready},
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use toolwarden_wire::Dialect;

use crate::{
    body::BoxError,
    errors::{ProxyError, ProxyErrorKind, sse_tail::SseTail, stream_error_event},
    observe::{Observation, READ_ON_BYTES, READ_ON_TIME},
    routes::Provider,
};

/// A proxied response body with its observer.
#[derive(Debug)]
pub(crate) struct TeeBody {
    /// The upstream body and its observation; taken only when a dropped
    /// body is read on ([`read_on`]).
    live: Option<Live>,
    provider: Provider,
    dialect: Option<Dialect>,
    upstream_host: String,
    /// No `content-length`: an error event can be appended.
    can_append: bool,
    /// Where the SSE bytes passed on so far stopped (when an error event
    /// can be appended): it follows the event they stopped in.
    tail: SseTail,
    /// A frame taken before the response head was sent (see `proxy::first_frame`).
    first: Option<Prefetched>,
    state: State,
    /// A Bedrock event stream relayed whole frames at a time (issue 18).
    frames: Option<crate::cloud::frames::FrameAligner>,
}

/// The upstream body with what observes it.
#[derive(Debug)]
struct Live {
    inner: Incoming,
    observation: Observation,
}

/// What the proxy read from the body before sending the head.
#[derive(Debug)]
pub(crate) enum Prefetched {
    /// The first frame.
    Frame(Frame<Bytes>),
    /// The body failed before its first frame.
    Error(hyper::Error),
    /// The body was empty.
    End,
}

#[derive(Debug)]
enum State {
    Streaming,
    Done,
}

impl TeeBody {
    /// Wrap an upstream body.
    pub(crate) fn new(
        inner: Incoming,
        observation: Observation,
        provider: Provider,
        dialect: Option<Dialect>,
        upstream_host: String,
        can_append: bool,
        first: Option<Prefetched>,
    ) -> TeeBody {
        TeeBody {
            live: Some(Live { inner, observation }),
            provider,
            dialect,
            upstream_host,
            can_append,
            tail: SseTail::default(),
            first,
            state: State::Streaming,
            frames: None,
        }
    }

    /// Relay whole AWS event-stream frames at a time (see
    /// [`crate::cloud::frames`]), so that a break can end with an
    /// exception frame.
    pub(crate) fn aligned_frames(mut self, on: bool) -> TeeBody {
        self.frames = on.then(Default::default);
        self
    }

    /// Pass one polled frame (or the end, or an error) on, observing it.
    fn pass(
        &mut self,
        polled: Option<Result<Frame<Bytes>, hyper::Error>>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let Some(live) = self.live.as_mut() else {
            return Poll::Ready(None);
        };
        let observation = &mut live.observation;
        match polled {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    observation.feed(data);
                    if self.can_append && self.frames.is_none() {
                        self.tail.feed(data);
                    }
                }
                let end = self.first.is_none() && live.inner.is_end_stream();
                if end {
                    self.state = State::Done;
                    observation.finish();
                }
                let frame = match (&mut self.frames, frame.into_data()) {
                    (Some(frames), Ok(data)) => {
                        let mut passed = frames.push(data);
                        if end {
                            let rest = frames.finish();
                            if !rest.is_empty() {
                                let mut all = bytes::BytesMut::from(&passed[..]);
                                all.extend_from_slice(&rest);
                                passed = all.freeze();
                            }
                        }
                        Frame::data(passed)
                    }
                    (_, Ok(data)) => Frame::data(data),
                    (_, Err(frame)) => frame,
                };
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => {
                self.state = State::Done;
                let err = ProxyError::new(
                    ProxyErrorKind::MidStream,
                    &self.upstream_host,
                    e.to_string(),
                );
                tracing::warn!(error = %err, "upstream stream broke");
                observation.stream_failed(&err);
                observation.finish();
                // An incomplete frame held back is dropped; an exception
                // frame follows only a whole one.
                let aligned = self.frames.as_mut().is_none_or(|f| f.cut());
                if self.can_append && aligned {
                    let event = stream_error_event(self.provider, self.dialect, &err);
                    Poll::Ready(Some(Ok(Frame::data(self.tail.then(event)))))
                } else {
                    Poll::Ready(Some(Err(Box::new(err))))
                }
            }
            None => {
                self.state = State::Done;
                observation.finish();
                match self.frames.as_mut().map(|f| f.finish()) {
                    // An incomplete last frame, relayed as it came.
                    Some(rest) if !rest.is_empty() => Poll::Ready(Some(Ok(Frame::data(rest)))),
                    _ => Poll::Ready(None),
                }
            }
        }
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        let Some(live) = this.live.as_mut() else {
            return Poll::Ready(None);
        };
        if matches!(this.state, State::Done) {
            return Poll::Ready(None);
        }
        let polled = match this.first.take() {
            Some(Prefetched::Frame(frame)) => Some(Ok(frame)),
            Some(Prefetched::Error(e)) => Some(Err(e)),
            Some(Prefetched::End) => None,
            None => ready!(Pin::new(&mut live.inner).poll_frame(cx)),
        };
        this.pass(polled)
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, State::Done)
    }

    fn size_hint(&self) -> SizeHint {
        // What is left upstream plus the frame already taken: hyper trusts
        // an exact hint over the `content-length` header.
        let Some(live) = &self.live else {
            return SizeHint::with_exact(0);
        };
        let rest = live.inner.size_hint();
        let taken = match &self.first {
            Some(Prefetched::Frame(frame)) => frame.data_ref().map_or(0, |d| d.len() as u64),
            Some(Prefetched::End) => return SizeHint::with_exact(0),
            Some(Prefetched::Error(_)) | None => 0,
        };
        let mut hint = SizeHint::new();
        hint.set_lower(rest.lower().saturating_add(taken));
        if let Some(upper) = rest.upper() {
            hint.set_upper(upper.saturating_add(taken));
        }
        hint
    }
}

impl Drop for TeeBody {
    fn drop(&mut self) {
        // Dropped before its end: the client went away. A stream whose
        // trailer is still to come is read on, in a task of its own.
        if matches!(self.state, State::Done)
            || !self
                .live
                .as_ref()
                .is_some_and(|live| live.observation.reads_on())
        {
            return;
        }
        let (Ok(runtime), Some(live)) = (tokio::runtime::Handle::try_current(), self.live.take())
        else {
            return;
        };
        runtime.spawn(read_on(live));
    }
}

/// Read a stream whose client went away on, once its final event has
/// passed, until its trailer has been fed to the observation (or the
/// upstream ends it, or its bounds: `observe::READ_ON_TIME`,
/// `observe::READ_ON_BYTES`); the observation, dropped then, records it.
async fn read_on(mut live: Live) {
    let reading = async {
        let mut left = READ_ON_BYTES;
        while live.observation.reads_on() && left > 0 {
            match live.inner.frame().await {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        left = left.saturating_sub(data.len());
                        live.observation.feed(data);
                    }
                }
                None => {
                    live.observation.finish();
                    return;
                }
                Some(Err(_)) => return,
            }
        }
    };
    let _ = tokio::time::timeout(READ_ON_TIME, reading).await;
}
