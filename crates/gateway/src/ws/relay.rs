//! The message loop of one WebSocket: whichever side has a message, it is
//! written to the other side at once (a client message is read for the
//! records first, as it may be repaired; upstream messages once neither
//! side has more, so that the next event is not kept behind a parse); the
//! loop ends when either side closes or breaks, and then closes the other
//! side cleanly; or when the gateway stops, and then closes both (1001).
//! A write (one message, or a flush) that a side leaves waiting for
//! `stall` (it reads nothing: a client stopped, or gone without a word)
//! ends the loop as that side breaking, and so does the end of the grace period at shutdown; every
//! close is sent within a bound, so a socket never outlives them. A
//! client's ping is answered (by the library) before its next message is
//! read, so pings from a client that reads nothing cannot pile up pongs.

use std::{future::Future, pin::Pin, sync::Arc, task::Poll, time::Duration};

use bytes::Bytes;
use futures_util::SinkExt;
use tokio::io::{AsyncRead, AsyncWrite};
use yawc::{Frame, OpCode, WebSocket, WebSocketError, close::CloseCode};

use super::{
    Stopping,
    metered::Meter,
    turns::{Outgoing, Turns},
};
use crate::shutdown::{CUT_BY_SHUTDOWN, raised};

/// Most upstream messages written to the client before one flush.
const BATCH: usize = 32;

/// The reason given with the close when the gateway stops.
const SHUTTING_DOWN: &str = "the gateway is shutting down";

/// The reason given with the close (1013) of a client whose message the
/// bound on request bodies held at once has no room for.
pub(super) const NO_ROOM_FOR_REQUESTS: &str =
    "max_buffered_request_bytes are held: try again later";

/// The reason given with the close (1013) of a client whose upstream's
/// message the bound on responses held at once has no room for.
const NO_ROOM_FOR_RESPONSES: &str = "max_buffered_response_bytes are held: try again later";

/// How long the relay waits on a side.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waits {
    /// A write a side leaves waiting this long (it reads nothing) ends
    /// the loop as that side breaking (`client_body_timeout_ms`).
    pub(crate) stall: Duration,
    /// How long a closing side has to answer the close (and the last
    /// events to arrive) before its connection is dropped; also the bound
    /// on sending a close (`ws_close_wait_ms`).
    pub(crate) close: Duration,
    /// How long the close handshakes may take at shutdown once the grace
    /// period is over (`ws_forced_close_wait_ms`; at most `close`).
    pub(crate) forced_close: Duration,
}

/// Which side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Client,
    Upstream,
}

/// How the loop ended.
#[derive(Debug)]
enum End {
    /// The upstream sent a close frame (passed on to the client).
    UpstreamClosed,
    /// The client sent a close frame, with this payload (passed on to the
    /// upstream while the client is answered: [`pass_close`]).
    ClientClosed(Bytes),
    /// `side` broke: I/O error, EOF without a close, a protocol error or
    /// an oversize message (the library has answered it with a close).
    Broke(Side, WebSocketError),
    /// The gateway is stopping (and no turn is open, or the grace period
    /// is over).
    Stopping,
    /// A message from `side` its bound has no room for ([`Meter`]): a
    /// client's, `max_buffered_request_bytes`; an upstream's,
    /// `max_buffered_response_bytes`.
    Refused(Side),
}

/// Relay until one side ends, then close the other; a write either side
/// leaves waiting for `waits.stall` ends it too. `first`: a client message
/// already read (a Vertex AI Live socket's, read to find its upstream),
/// sent and read for the records before any other. Each side's meter
/// holds its bytes against its bound: the client's (request bodies) until
/// each message is sent on, the upstream's (responses) until its messages
/// are sent on and read for the records.
pub(crate) async fn run<C, U>(
    (mut client, meter): (WebSocket<C>, Arc<Meter>),
    (mut upstream, upstream_meter): (WebSocket<U>, Arc<Meter>),
    mut turns: Turns,
    stopping: Stopping,
    waits: Waits,
    first: Option<Frame>,
) where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let Waits {
        stall,
        close: close_wait,
        forced_close,
    } = waits;
    let mut draining = false;
    // The upstream messages relayed to the client and not yet read for
    // the records: read once neither side has more, before a client
    // message, or when [`BATCH`] have gathered (so fewer than 2 × BATCH).
    let mut relayed = Vec::new();
    // Gemini Live's server sends its JSON in binary frames.
    let read_binary = turns.reads_binary();
    // Made once: a new wait per message would register with the flags'
    // waiter lists each time.
    let (mut shutdown_flag, mut force_flag) = (stopping.shutdown.clone(), stopping.force.clone());
    let shutdown = raised(&mut shutdown_flag);
    let force = raised(&mut force_flag);
    let refused = meter.refused();
    let upstream_refused = upstream_meter.refused();
    tokio::pin!(shutdown, force, refused, upstream_refused);
    let end = 'relay: {
        if let Some(frame) = first {
            if meter.message(frame.payload().len()).is_err() {
                break 'relay End::Refused(Side::Client);
            }
            let bound = Bound {
                stall,
                close_wait,
                force: force.as_mut(),
            };
            if let Some(end) = from_client(frame, &mut upstream, &mut turns, bound).await {
                break 'relay end;
            }
            meter.settle();
        }
        loop {
            if draining {
                read_relayed(&mut turns, &mut relayed, &upstream_meter);
                if turns.idle() {
                    break End::Stopping;
                }
            }
            tokio::select! {
                biased;
                () = &mut force, if draining => break End::Stopping,
                () = &mut shutdown, if !draining => draining = true,
                () = &mut refused => break End::Refused(Side::Client),
                () = &mut upstream_refused => break End::Refused(Side::Upstream),
                frame = upstream.next_frame() => {
                    let bound = Bound { stall, close_wait, force: force.as_mut() };
                    let reading = (&mut relayed, read_binary, &turns, &*upstream_meter);
                    if let Some(end) = from_upstream(frame, &mut upstream, &mut client, reading, bound).await {
                        break end;
                    }
                    if relayed.len() >= BATCH || relayed.is_empty() {
                        read_relayed(&mut turns, &mut relayed, &upstream_meter);
                    }
                }
                frame = client.next_frame() => {
                    // The events relayed so far come before this message in
                    // the records.
                    read_relayed(&mut turns, &mut relayed, &upstream_meter);
                    match frame {
                        Ok(frame) if frame.opcode() == OpCode::Ping => {
                            // The library has queued the pong: written now
                            // (`poll_ready` sends what it queued, then the flush).
                            let pong = async {
                                let ready = std::future::poll_fn(|cx| client.poll_ready_unpin(cx)).await;
                                let flushed = match ready {
                                    Ok(()) => client.flush().await,
                                    Err(e) => Err(e),
                                };
                                flushed.err().map(|e| End::Broke(Side::Client, e))
                            };
                            if let Some(end) = within(pong, Side::Client, stall, force.as_mut()).await {
                                break end;
                            }
                        }
                        Ok(frame) => {
                            if meter.message(frame.payload().len()).is_err() {
                                break End::Refused(Side::Client);
                            }
                            let bound = Bound { stall, close_wait, force: force.as_mut() };
                            if let Some(end) = from_client(frame, &mut upstream, &mut turns, bound).await {
                                break end;
                            }
                        }
                        Err(e) => break End::Broke(Side::Client, e),
                    }
                    // Sent on (or answered): the socket's bytes are given back.
                    meter.settle();
                }
                // Neither side has more once the runtime's I/O driver has
                // looked again (the yield): now the relayed events are read
                // for the records, so an event that came meanwhile is
                // relayed first, not after the parse.
                () = tokio::task::yield_now(), if !relayed.is_empty() => {
                    read_relayed(&mut turns, &mut relayed, &upstream_meter);
                }
            }
        }
    };
    read_relayed(&mut turns, &mut relayed, &upstream_meter);
    tracing::debug!(?end, "websocket ended");
    match end {
        End::Stopping => {
            let limit = if *stopping.force.borrow() {
                forced_close.min(close_wait)
            } else {
                close_wait
            };
            // Both sides at once, and all of it within `limit`: a side
            // that reads nothing cannot hold the other's close, nor the
            // worker, which waits for its sockets a few seconds only.
            let away = || Frame::close(CloseCode::Away, SHUTTING_DOWN);
            let closing = async {
                let _ = tokio::join!(client.send(away()), upstream.send(away()));
                tokio::join!(
                    finish_closing(&mut client, None, limit),
                    finish_closing(&mut upstream, Some(&mut turns), limit)
                )
            };
            let _ = tokio::time::timeout(limit, closing).await;
            turns.close(CUT_BY_SHUTDOWN);
        }
        End::ClientClosed(payload) => {
            // The client is answered at once (RFC 6455 §5.5.1: "as soon as
            // practical"): nothing is relayed to it after its close, so
            // waiting for the upstream's answer first only held it, for
            // `close_wait` when the upstream never answered (and for
            // `stall` when it read nothing). Meanwhile the close goes
            // upstream, whose last events still reach the records.
            let upstream_side = async {
                let close = Frame::from((OpCode::Close, payload));
                send_close(&mut upstream, close, close_wait).await;
                finish_closing(&mut upstream, Some(&mut turns), close_wait).await;
            };
            tokio::join!(finish_closed(&mut client, close_wait), upstream_side);
            turns.close("the client closed the websocket before the response finished");
        }
        End::Refused(side) => {
            // The client is told to try again and the upstream goes away,
            // both at once (the refused side's bytes are dropped meanwhile,
            // `Metered`, so its close is not lost to a reset).
            let (no_room, away, why) = match side {
                Side::Client => (
                    NO_ROOM_FOR_REQUESTS,
                    "the client's message was refused",
                    "the client's message was refused: max_buffered_request_bytes are held",
                ),
                Side::Upstream => (
                    NO_ROOM_FOR_RESPONSES,
                    "the upstream's message was refused",
                    "the upstream's message was refused: max_buffered_response_bytes are held",
                ),
            };
            tokio::join!(
                close(&mut client, (CloseCode::Again, no_room), close_wait),
                async {
                    send_close(
                        &mut upstream,
                        Frame::close(CloseCode::Away, away),
                        close_wait,
                    )
                    .await;
                    finish_closing(&mut upstream, Some(&mut turns), close_wait).await;
                }
            );
            turns.close(why);
        }
        End::UpstreamClosed => {
            // The upstream is answered at once too, not after the client's
            // answer to the close passed on (`close_wait` when it never
            // answered).
            tokio::join!(
                finish_closing(&mut client, None, close_wait),
                finish_closed(&mut upstream, close_wait)
            );
            turns.close("the upstream closed the websocket before the response finished");
        }
        End::Broke(side, e) => {
            let (code, reason) = match &e {
                WebSocketError::FrameTooLarge => (CloseCode::Size, "message too large"),
                WebSocketError::ConnectionClosed | WebSocketError::IoError(_) => {
                    (CloseCode::Away, "the other side went away")
                }
                _ => (CloseCode::Error, "the other side broke the protocol"),
            };
            let detail = match side {
                Side::Client => format!("the client's websocket broke: {e}"),
                Side::Upstream => format!("the upstream's websocket broke: {e}"),
            };
            turns.close(&detail);
            let close = Frame::close(code, reason);
            match side {
                Side::Client => {
                    close_after_break(&mut client, &mut upstream, close, close_wait).await;
                }
                Side::Upstream => {
                    close_after_break(&mut upstream, &mut client, close, close_wait).await;
                }
            }
        }
    }
}

/// `broken`'s side broke: its connection is shut while `other` is sent
/// `close` and its answer awaited, at once, not after `broken`'s last
/// frame (up to `close_wait` from a side that stopped) and its close.
async fn close_after_break<B, O>(
    broken: &mut WebSocket<B>,
    other: &mut WebSocket<O>,
    close: Frame,
    close_wait: Duration,
) where
    B: AsyncRead + AsyncWrite + Unpin,
    O: AsyncRead + AsyncWrite + Unpin,
{
    let other_side = async {
        send_close(other, close, close_wait).await;
        finish_closing(other, None, close_wait).await;
    };
    tokio::join!(finish_closed(broken, close_wait), other_side);
}

/// A client frame: messages are read and sent on, each write bounded by
/// `bound`; a close is passed on and ends the loop. A turn's message is
/// read for the records whether or not its write finished (as the HTTP
/// path reads a request whose upstream write failed): a write cut by a
/// stall or by the end of the grace period ends the loop, and the turn is
/// then recorded with its results and the reason ([`Turns::close`]), not
/// dropped as if the client had gone. The reading is bounded on its own
/// (a continuation's store lookup: 200 ms).
async fn from_client<U, F>(
    frame: Frame,
    upstream: &mut WebSocket<U>,
    turns: &mut Turns,
    mut bound: Bound<'_, F>,
) -> Option<End>
where
    U: AsyncRead + AsyncWrite + Unpin,
    F: Future<Output = ()>,
{
    let (stall, force) = (bound.stall, bound.force.as_mut());
    match frame.opcode() {
        OpCode::Text => match turns.client_message(frame.into_payload()) {
            Outgoing::Pass(payload) => {
                let write = send(upstream, Frame::text(payload), Side::Upstream);
                within(write, Side::Upstream, stall, force).await
            }
            Outgoing::Read(payload) => {
                let write = send(upstream, Frame::text(payload.clone()), Side::Upstream);
                let end = within(write, Side::Upstream, stall, force).await;
                turns.client_sent(&payload);
                end
            }
            Outgoing::Inject(forward, payload) => {
                let write = send(upstream, Frame::text(forward), Side::Upstream);
                let end = within(write, Side::Upstream, stall, force).await;
                turns.client_sent(&payload);
                end
            }
            Outgoing::Turn(payload, outbound, lane) => {
                let write = send(upstream, Frame::text(payload), Side::Upstream);
                let end = within(write, Side::Upstream, stall, force).await;
                turns.sent(*outbound, lane).await;
                end
            }
        },
        OpCode::Binary => {
            let payload = frame.into_payload();
            let write = send(upstream, Frame::binary(payload.clone()), Side::Upstream);
            let end = within(write, Side::Upstream, stall, force).await;
            turns.client_binary(&payload);
            end
        }
        // Passed on as the client is answered (`run`).
        OpCode::Close => Some(End::ClientClosed(frame.into_payload())),
        // Pings are answered by the library, each hop for itself.
        _ => None,
    }
}

/// How long one write may wait, and the end of the shutdown's grace
/// period, which cuts it short (see [`within`]).
struct Bound<'a, F> {
    stall: Duration,
    /// How long a close sent may take ([`Waits::close`]).
    close_wait: Duration,
    force: Pin<&'a mut F>,
}

/// Upstream frames: the one read, then those the socket has already
/// read in (at most [`BATCH`]), each written to the client, one flush for
/// them all; their payloads (text, and binary when `read_binary`) are
/// left in `relayed`, to be read for the records (in order) once neither
/// side has more (another binary one is counted by `turns` as it passes),
/// and held by `meter` until then; a close is passed on and
/// ends the loop. Each write (a message taken by the client's socket, the
/// flush) is bounded by `bound` on its own: a client reading slowly
/// through a batch of large messages is not cut off for the batch's total.
async fn from_upstream<C, U, F>(
    first: Result<Frame, WebSocketError>,
    upstream: &mut WebSocket<U>,
    client: &mut WebSocket<C>,
    (relayed, read_binary, turns, meter): (&mut Vec<Bytes>, bool, &Turns, &Meter),
    mut bound: Bound<'_, F>,
) -> Option<End>
where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
    F: Future<Output = ()>,
{
    let mut frame = first;
    let mut end = None;
    for _ in 0..BATCH {
        end = match frame {
            Ok(frame) => {
                let write = upstream_frame(
                    frame,
                    client,
                    (relayed, read_binary, turns, meter),
                    bound.close_wait,
                );
                within(write, Side::Client, bound.stall, bound.force.as_mut()).await
            }
            Err(e) => Some(End::Broke(Side::Upstream, e)),
        };
        if end.is_some() {
            break;
        }
        // A frame already read in is taken now; none: flush and wait.
        match std::future::poll_fn(|cx| Poll::Ready(upstream.poll_next_frame(cx))).await {
            Poll::Ready(next) => frame = next,
            Poll::Pending => break,
        }
    }
    if end.is_none() {
        let flush = async {
            client
                .flush()
                .await
                .err()
                .map(|e| End::Broke(Side::Client, e))
        };
        end = within(flush, Side::Client, bound.stall, bound.force.as_mut()).await;
    }
    end
}

/// The upstream messages relayed and not yet read, read for the records;
/// then what the upstream's socket held is given back (`meter`).
fn read_relayed(turns: &mut Turns, relayed: &mut Vec<Bytes>, meter: &Meter) {
    for payload in relayed.drain(..) {
        turns.event(&payload);
    }
    meter.settle();
}

/// One upstream frame, written (not flushed) to the client; a text
/// message's payload is kept in `relayed` for the records (a binary
/// one's when `read_binary`; else `turns` counts it, [`Turns::server_binary`]).
/// A message is held by `meter` first: with no room, the upstream is
/// refused.
async fn upstream_frame<C>(
    frame: Frame,
    client: &mut WebSocket<C>,
    (relayed, read_binary, turns, meter): (&mut Vec<Bytes>, bool, &Turns, &Meter),
    close_wait: Duration,
) -> Option<End>
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    let message = matches!(frame.opcode(), OpCode::Text | OpCode::Binary);
    if message && meter.message(frame.payload().len()).is_err() {
        return Some(End::Refused(Side::Upstream));
    }
    match frame.opcode() {
        OpCode::Text => {
            let payload = frame.into_payload();
            let end = feed(client, Frame::text(payload.clone())).await;
            if end.is_none() {
                relayed.push(payload);
            }
            end
        }
        OpCode::Binary if read_binary => {
            let payload = frame.into_payload();
            let end = feed(client, Frame::binary(payload.clone())).await;
            if end.is_none() {
                relayed.push(payload);
            }
            end
        }
        OpCode::Binary => {
            turns.server_binary();
            feed(client, Frame::binary(frame.into_payload())).await
        }
        OpCode::Close => {
            send_close(client, pass_close(&frame), close_wait).await;
            Some(End::UpstreamClosed)
        }
        _ => None,
    }
}

/// Write a frame to the client without flushing it.
async fn feed<C>(client: &mut WebSocket<C>, frame: Frame) -> Option<End>
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    client
        .feed(frame)
        .await
        .err()
        .map(|e| End::Broke(Side::Client, e))
}

async fn send<S>(socket: &mut WebSocket<S>, frame: Frame, side: Side) -> Option<End>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    socket.send(frame).await.err().map(|e| End::Broke(side, e))
}

/// `write` to `side`, cut short when the grace period of a shutdown ends
/// (`force`) or when it has not finished within `stall`: that side reads
/// nothing, and it counts as broken (a write waiting for it would hold the
/// socket, and a shutdown, for good).
async fn within(
    write: impl Future<Output = Option<End>>,
    side: Side,
    stall: Duration,
    force: Pin<&mut impl Future<Output = ()>>,
) -> Option<End> {
    tokio::select! {
        biased;
        () = force => Some(End::Stopping),
        out = tokio::time::timeout(stall, write) => out.unwrap_or_else(|_| {
            let stalled = std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("nothing read for {} ms", stall.as_millis()),
            );
            Some(End::Broke(side, WebSocketError::IoError(stalled)))
        }),
    }
}

/// A close sent to a side, within `close_wait` (a side that reads
/// nothing does not take it).
async fn send_close<S>(socket: &mut WebSocket<S>, close: Frame, close_wait: Duration)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let _ = tokio::time::timeout(close_wait, socket.send(close)).await;
}

/// Close a socket the gateway ends on its own (a Vertex AI Live client
/// whose upstream refused or failed): `code` and `reason` sent, the answer
/// awaited up to `close_wait`, the connection shut.
pub(super) async fn close<S>(
    socket: &mut WebSocket<S>,
    (code, reason): (CloseCode, &str),
    close_wait: Duration,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    send_close(socket, Frame::close(code, reason), close_wait).await;
    finish_closing(socket, None, close_wait).await;
}

/// A socket whose peer sent a close before the gateway had anything to
/// relay: the library's answer flushed, the connection shut.
pub(super) async fn closed<S>(socket: &mut WebSocket<S>, close_wait: Duration)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    finish_closed(socket, close_wait).await;
}

/// The close frame to pass on: its payload as it came, so the same code
/// and reason, and none when it had none (RFC 6455 §7.1.5: the peer then
/// reads 1005, "no status"; a code of 1000 would say more than was said).
/// The library has checked it (a code one may send, a UTF-8 reason).
fn pass_close(frame: &Frame) -> Frame {
    Frame::from((OpCode::Close, frame.payload().clone()))
}

/// A side the gateway has sent a close to: wait (briefly) for its answer,
/// letting the last events through to the records, then shut it.
async fn finish_closing<S>(
    socket: &mut WebSocket<S>,
    mut turns: Option<&mut Turns>,
    limit: Duration,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let wait = async {
        loop {
            match socket.next_frame().await {
                Ok(frame) if frame.opcode() == OpCode::Close => break,
                Ok(frame) if frame.opcode() == OpCode::Text => {
                    if let Some(turns) = turns.as_deref_mut() {
                        turns.event(frame.payload());
                    }
                }
                Ok(frame) if frame.opcode() == OpCode::Binary => match turns.as_deref_mut() {
                    Some(turns) if turns.reads_binary() => turns.event(frame.payload()),
                    Some(turns) => turns.server_binary(),
                    None => {}
                },
                Ok(_) => {}
                Err(_) => break,
            }
        }
    };
    let _ = tokio::time::timeout(limit, wait).await;
    let _ = tokio::time::timeout(limit, socket.close()).await;
}

/// A side that sent a close (or broke): the library's answer is flushed,
/// then the connection is shut (each within `close_wait`).
async fn finish_closed<S>(socket: &mut WebSocket<S>, close_wait: Duration)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let _ = tokio::time::timeout(close_wait, socket.next_frame()).await;
    let _ = tokio::time::timeout(close_wait, socket.close()).await;
}
