//! The response body as it passes: each frame goes to the client as soon as
//! the upstream yields it (no buffering) and, by reference, to the
//! [`Observation`]. When the upstream breaks midway the dialect's error
//! event is appended (if the response has no fixed length) and the stream
//! ends. Dropping a `TeeBody` — the client went away — drops the upstream
//! body, which closes that upstream connection and so cancels the request.

use std::{
    pin::Pin,
    task::{Context, Poll, ready},
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use toolwarden_wire::Dialect;

use crate::{
    body::BoxError,
    errors::{ProxyError, ProxyErrorKind, stream_error_event},
    observe::Observation,
    routes::Provider,
};

/// A proxied response body with its observer.
#[derive(Debug)]
pub struct TeeBody {
    inner: Incoming,
    observation: Observation,
    provider: Provider,
    dialect: Option<Dialect>,
    upstream_host: String,
    /// No `content-length`: an error event can be appended.
    can_append: bool,
    state: State,
}

#[derive(Debug)]
enum State {
    Streaming,
    Done,
}

impl TeeBody {
    /// Wrap an upstream body.
    pub fn new(
        inner: Incoming,
        observation: Observation,
        provider: Provider,
        dialect: Option<Dialect>,
        upstream_host: String,
        can_append: bool,
    ) -> TeeBody {
        TeeBody {
            inner,
            observation,
            provider,
            dialect,
            upstream_host,
            can_append,
            state: State::Streaming,
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
        if matches!(this.state, State::Done) {
            return Poll::Ready(None);
        }
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    this.observation.feed(data);
                }
                if this.inner.is_end_stream() {
                    this.state = State::Done;
                    this.observation.finish();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => {
                this.state = State::Done;
                let err = ProxyError::new(
                    ProxyErrorKind::MidStream,
                    &this.upstream_host,
                    e.to_string(),
                );
                tracing::warn!(error = %err, "upstream stream broke");
                this.observation.stream_failed(&err);
                this.observation.finish();
                if this.can_append {
                    Poll::Ready(Some(Ok(Frame::data(stream_error_event(
                        this.provider,
                        this.dialect,
                        &err,
                    )))))
                } else {
                    Poll::Ready(Some(Err(Box::new(err))))
                }
            }
            None => {
                this.state = State::Done;
                this.observation.finish();
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, State::Done)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
