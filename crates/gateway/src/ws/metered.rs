//! A socket's messages under a bound on what is held at once, as HTTP
//! bodies are ([`crate::limits::body_budget`]): a client's under
//! `max_buffered_request_bytes`, an upstream's under
//! `max_buffered_response_bytes`. The WebSocket library assembles a message
//! before the relay sees it, so the bytes are counted where they come in:
//! the connection is wrapped ([`Metered`]), and every byte read from it is
//! held until the relay is done with the messages read ([`Meter::settle`]:
//! a client's sent on, an upstream's sent on and read for the records),
//! with the messages' own size when they inflated to more
//! ([`Meter::message`]). The count is to a read: bytes of the next message
//! read with the end of one are given back with it.
//!
//! A read the bound has no room for refuses the socket: the read's bytes
//! are dropped, the library sees no more (so its partial message grows no
//! further), [`Meter::refused`] wakes the relay, which closes the client
//! with 1013 (try again later), and every byte the refused side sends after
//! that is read and dropped until it closes or the close's wait ends, so
//! the close is not lost to a reset. A refused socket's bytes are given
//! back at once ([`Meter::refuse`]).

use std::{
    future::Future,
    io,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
};

use http::{Request, Response};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncRead, ReadBuf},
    sync::Notify,
};
use yawc::{Role, WebSocket, WebSocketError};

use crate::limits::body_budget::{BodyBudget, Held, NoRoom};

/// Reads of a refused socket's bytes dropped in one poll before it yields.
const DRAIN_READS: usize = 64;

/// What one socket holds of its bound.
#[derive(Debug)]
pub(crate) struct Meter {
    budget: Arc<BodyBudget>,
    state: Mutex<State>,
    /// Raised once, when the socket is refused.
    refusal: Notify,
}

#[derive(Debug)]
struct State {
    held: Held,
    /// Bytes read since the last settlement.
    read: usize,
    /// The messages' sizes since the last settlement.
    messages: usize,
    refused: bool,
}

/// A connection whose reads are held by its [`Meter`].
#[derive(Debug)]
pub(crate) struct Metered<S> {
    io: S,
    meter: Arc<Meter>,
}

/// A socket once upgraded (the client's or the upstream's): its
/// connection metered.
pub(crate) type MeteredSocket = WebSocket<Metered<TokioIo<Upgraded>>>;

/// The client's socket and its meter, once hyper hands the connection over.
pub(crate) type Upgrading =
    Pin<Box<dyn Future<Output = Result<(MeteredSocket, Arc<Meter>), WebSocketError>> + Send>>;

/// Accept a client's upgrade as `yawc::WebSocket::upgrade_with_options`
/// does (the same answer: `101`, the key's accept, the extensions agreed),
/// but with the upgraded connection wrapped in a [`Metered`] of its own:
/// the answer to send, and the socket with its meter once hyper has
/// handed the connection over.
pub(crate) fn accept<B>(
    req: &mut Request<B>,
    options: yawc::Options,
    budget: &Arc<BodyBudget>,
) -> Result<(Response<http_body_util::Empty<bytes::Bytes>>, Upgrading), WebSocketError> {
    // The library's answer, from the request's method, URI and headers
    // alone: the connection it would take stays with `req`.
    let mut probe = Request::new(());
    *probe.method_mut() = req.method().clone();
    *probe.uri_mut() = req.uri().clone();
    *probe.version_mut() = req.version();
    probe.headers_mut().clone_from(req.headers());
    let (response, _) = yawc::WebSocket::upgrade_with_options(&mut probe, options.clone())?;
    let agreed = response
        .headers()
        .get(http::header::SEC_WEBSOCKET_EXTENSIONS)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let upgrade = hyper::upgrade::on(req);
    let meter = Meter::new(budget);
    let socket = Box::pin(async move {
        let upgraded = upgrade
            .await
            .map_err(|e| WebSocketError::IoError(io::Error::other(e)))?;
        let io = Metered::new(TokioIo::new(upgraded), meter.clone());
        let socket =
            WebSocket::from_stream_with_extensions(io, Role::Server, agreed.as_deref(), options)?;
        Ok((socket, meter))
    });
    Ok((response, socket))
}

// === impl Meter ===

impl Meter {
    /// Nothing held yet.
    pub(crate) fn new(budget: &Arc<BodyBudget>) -> Arc<Meter> {
        Arc::new(Meter {
            budget: budget.clone(),
            state: Mutex::new(State {
                held: budget.hold(),
                read: 0,
                messages: 0,
                refused: false,
            }),
            refusal: Notify::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `n` more bytes read from the client; `false` (and the socket
    /// refused) when the bound has no room for them.
    fn read(&self, n: usize) -> bool {
        let mut state = self.state();
        state.read = state.read.saturating_add(n);
        let read = state.read;
        let fits = state.held.cover(read).is_ok();
        if !fits {
            self.refuse(&mut state);
            drop(state);
            self.refusal.notify_one();
        }
        fits
    }

    /// A whole message of `len` bytes (inflated, for a compressed one) is
    /// held, with the others read since the last settlement, until they
    /// are settled; `Err` (and the socket refused) when the bound has no
    /// room for them.
    pub(crate) fn message(&self, len: usize) -> Result<(), NoRoom> {
        let mut state = self.state();
        state.messages = state.messages.saturating_add(len);
        let want = state.messages.max(state.read);
        let covered = state.held.cover(want);
        if covered.is_err() {
            self.refuse(&mut state);
        }
        covered
    }

    /// Refused: what the socket held is given back at once, as a refused
    /// HTTP body's is, so that one refusal does not refuse the next
    /// socket's message too. The library's partial message is freed when
    /// the socket ends, within the close's wait.
    fn refuse(&self, state: &mut State) {
        state.refused = true;
        state.held = self.budget.hold();
    }

    /// The messages read are done with: what the socket held is given
    /// back.
    pub(crate) fn settle(&self) {
        let mut state = self.state();
        if !state.refused {
            state.held = self.budget.hold();
            state.read = 0;
            state.messages = 0;
        }
    }

    /// Resolves once a read has refused the socket (at once if one has;
    /// a message refused by [`Meter::message`] is its caller's to act on).
    pub(crate) async fn refused(&self) {
        self.refusal.notified().await;
    }

    fn is_refused(&self) -> bool {
        self.state().refused
    }
}

// === impl Metered ===

impl<S> Metered<S> {
    pub(crate) fn new(io: S, meter: Arc<Meter>) -> Metered<S> {
        Metered { io, meter }
    }
}

impl<S: AsyncRead + Unpin> Metered<S> {
    /// A refused socket: its bytes read and dropped until its end (an
    /// empty read, passed on) or until there are none for now.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut scratch = [0u8; 8192];
        for _ in 0..DRAIN_READS {
            let mut dropped = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.io).poll_read(cx, &mut dropped) {
                Poll::Ready(Ok(())) if dropped.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
        }
        // More is coming: the other tasks get their turn first.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.meter.is_refused() {
            return this.drain(cx);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let n = buf.filled().len() - before;
        if n == 0 || this.meter.read(n) {
            return Poll::Ready(Ok(()));
        }
        buf.set_filled(before);
        this.drain(cx)
    }
}

crate::write_through::impl_write_through!(Metered<S>, io);

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// Bytes read are held until settled; a read past the bound refuses
    /// the socket, drops its bytes and gives back what it held, and every
    /// later byte is dropped until the peer's end, which is passed on.
    #[tokio::test]
    async fn reads_are_held_until_settled_and_a_refused_socket_drains() {
        let budget = BodyBudget::new(8 * 1024);
        let meter = Meter::new(&budget);
        let (mut peer, io) = tokio::io::duplex(64 * 1024);
        let mut socket = Metered::new(io, meter.clone());
        let mut buf = vec![0u8; 64 * 1024];

        peer.write_all(&[1; 3000]).await.unwrap();
        let n = socket.read(&mut buf).await.unwrap();
        assert_eq!(n, 3000);
        assert_eq!(budget.held_bytes(), 3 * 1024);
        meter.message(5000).expect("room for the inflated message");
        assert_eq!(budget.held_bytes(), 5 * 1024);
        meter.message(1000).expect("room for another");
        assert_eq!(budget.held_bytes(), 6 * 1024, "both messages held");
        meter.settle();
        assert_eq!(budget.held_bytes(), 0);

        // 2 KiB held by this socket, 5 KiB by another: 3 KiB more do not fit.
        peer.write_all(&[2; 2000]).await.unwrap();
        socket.read_exact(&mut buf[..2000]).await.unwrap();
        let mut other = budget.hold();
        other.cover(5 * 1024).unwrap();
        assert_eq!(budget.held_bytes(), 7 * 1024);
        peer.write_all(&[2; 3000]).await.unwrap();
        let refused = tokio::spawn({
            let meter = meter.clone();
            async move { meter.refused().await }
        });
        let read =
            tokio::time::timeout(std::time::Duration::from_millis(100), socket.read(&mut buf))
                .await;
        assert!(read.is_err(), "the refused bytes are not handed on");
        refused.await.expect("the refusal is raised");
        assert_eq!(budget.refused(), 1);
        assert_eq!(
            budget.held_bytes(),
            5 * 1024,
            "the refused socket holds nothing"
        );
        meter.settle();
        assert!(meter.message(1).is_err(), "a refused socket stays refused");

        // Later bytes are dropped; the peer's end comes through.
        peer.write_all(&[3; 20_000]).await.unwrap();
        drop(peer);
        let n = tokio::time::timeout(std::time::Duration::from_secs(1), socket.read(&mut buf))
            .await
            .expect("the end is passed on")
            .unwrap();
        assert_eq!(n, 0);
        drop(other);
        drop(socket);
        drop(meter);
        assert_eq!(budget.held_bytes(), 0);
    }
}
