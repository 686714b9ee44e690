//! The fast path: the gateway's own HTTP/1.1 for its hot routes (the
//! dialect routes: `POST /v1/messages`, `/v1/chat/completions`,
//! `/v1/responses`, Gemini `:generateContent` / `:streamGenerateContent`),
//! as pingora does, because hyper's server and pooled client alone cost
//! more CPU per request than the gateway's whole budget (see
//! BENCHMARKS.md). Each client connection starts here:
//!
//! 1. read a request head ([`head::parse_request`]); a head the fast path
//!    does not take — another route or method, a chunked body, `Expect`,
//!    `Upgrade`, HTTP/1.0, HTTP/2, anything malformed — hands the
//!    connection, with the bytes already read ([`rewind::Rewind`]), to
//!    hyper for the rest of its life, where every route is served as
//!    before;
//! 2. read the body ([`body`]: `content-length`, bounded by
//!    `max_request_bytes` and the bodies held at once);
//! 3. run the exchange ([`exchange`]): the same pairing check, analysis and
//!    observation as the hyper path ([`crate::proxy::Outbound`]), the
//!    request written upstream in one vectored write over a pooled
//!    connection ([`pool`]), the response head relayed with its first body
//!    bytes in one write, the body relayed as it arrives (chunked bodies
//!    decoded for the observation and re-chunked, [`chunked`]);
//! 4. keep the connection for the next request unless either side asked to
//!    close or the gateway is stopping.
//!
//! Everything the client sees is what the hyper path gives (the same
//! bytes, errors in the same envelopes, the same cancellation when the
//! client goes away) — the e2e suites run through this path.

mod body;
pub(crate) mod chunked;
mod connect;
mod exchange;
pub(crate) mod head;
pub(crate) mod pool;
pub(crate) mod rewind;

use std::sync::Arc;

use bytes::BytesMut;
use tokio::{
    io::AsyncReadExt,
    sync::watch,
    time::{Instant, timeout_at},
};

use self::{body::read_body, head::RequestParse, pool::Pool, rewind::Rewind};
use crate::{client_io::ClientIo, observe::now_ms, shutdown::raised, state::Shared};

/// Bytes read at a time from either side. 14 KiB, jemalloc's largest
/// small size: the response's buffer is allocated per exchange, and a
/// small size comes from one of the arena's bins, where 16 KiB, its first
/// large size, took the large-extent path to allocate and to free (~3.5 k
/// instructions a request; BENCHMARKS.md, "Redaction by jumps, and where
/// SQLite's steps go").
const READ_CHUNK: usize = 14 * 1024;

/// How a fast-path connection ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// Closed (by either side, or the gateway stopping).
    Closed,
    /// Hyper serves the rest.
    Fallback(Rewind<ClientIo>),
}

/// What comes after an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    KeepAlive,
    Close,
}

/// Serve one client connection until it closes or needs hyper.
pub(crate) async fn serve(
    mut client: ClientIo,
    shared: &Arc<Shared>,
    pool: &Pool,
    shutdown: &mut watch::Receiver<bool>,
) -> Ended {
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    loop {
        // A head (and the idle wait before it) must arrive in time: a
        // client that sends it slowly, or never, does not hold the socket.
        let head_deadline = Instant::now() + shared.config.client_head_timeout;
        // Bytes of the head the last (partial) parse saw.
        let mut parsed = 0;
        let head = loop {
            if head::worth_parsing(&buf, parsed) {
                match head::parse_request(
                    &buf,
                    &shared.config.upstreams,
                    shared.config.host_guard(),
                ) {
                    RequestParse::Fast(head) => break head,
                    RequestParse::Fallback => return Ended::Fallback(Rewind::new(buf, client)),
                    RequestParse::Partial => parsed = buf.len(),
                }
            }
            buf.reserve(READ_CHUNK);
            // No request is in progress until its head is whole: the
            // gateway stopping closes the connection, idle or with half a
            // head (as hyper's graceful shutdown does), instead of waiting
            // for the rest of it.
            let read = tokio::select! {
                read = timeout_at(head_deadline, client.read_buf(&mut buf)) => read,
                _ = raised(shutdown) => return Ended::Closed,
            };
            if !matches!(read, Ok(Ok(n)) if n > 0) {
                return Ended::Closed;
            }
        };
        let at_ms = now_ms();
        let read = read_body(&mut client, &mut buf, shared, &head, at_ms, shutdown).await;
        let Some((body, held)) = read else {
            return Ended::Closed;
        };
        let closing = head.close || *shutdown.borrow();
        let next = exchange::run(
            exchange::Ctx {
                client: &mut client,
                pipelined: &mut buf,
                shared,
                pool,
                shutdown: &*shutdown,
            },
            head,
            (body, held),
            at_ms,
            closing,
        )
        .await;
        if next == Next::Close || closing {
            return Ended::Closed;
        }
    }
}
