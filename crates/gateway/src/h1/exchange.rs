//! One fast-path exchange: the request upstream, the response back.
//!
//! - The request goes in one vectored write (head, body) over a pooled
//!   connection; a pooled connection that fails that write is replaced by
//!   a new one and the write retried once (hyper's client retries the same
//!   case), unless the upstream answered before the write failed (a 413
//!   for a body too large): that answer is relayed. While the write goes
//!   on (polled first) and the upstream works, the request is analysed.
//! - Until the response head arrives the client socket is watched: a client
//!   that goes away cancels the request (the upstream connection is
//!   closed, the request recorded as 499); the first-byte timeout applies.
//!   An exchange still under way when the shutdown's grace period ends is
//!   dropped by the worker and recorded as cut by the shutdown
//!   (`crate::shutdown`).
//! - The response head and the body bytes that came with it leave in one
//!   write; the body follows as it arrives, fed to the observation.
//!   `content-length` bodies are relayed as they are; chunked and
//!   close-delimited ones are decoded and re-chunked, so that a stream that
//!   breaks midway can end with the dialect's error event. A write to the
//!   client that does not finish within `client_body_timeout` cuts it off.
//! - Sending the request counts against the first-byte timeout.
//! - A client that goes away during the body closes the upstream
//!   connection, unless the stream's final event has passed and its
//!   trailer (its usage) has not: then the upstream is read on, bounded,
//!   for the records (`Relay::read_on`).
//! - The upstream connection goes back to the pool only after a response
//!   that ended exactly where its framing said.

use std::{
    io::IoSlice,
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::{Buf, Bytes, BytesMut};
use futures_util::FutureExt;
use tokio::{
    io::{AsyncReadExt, AsyncWrite, AsyncWriteExt},
    sync::watch,
};

use super::{
    Next, READ_CHUNK,
    chunked::{self, ChunkDecoder},
    head::{self, BodyFraming, ClientHeadExtras, RequestHead, ResponseHead, ResponseParse},
    pool::{Pool, UpstreamIo},
};
use crate::{
    client_io::ClientIo,
    errors::{ProxyError, ProxyErrorKind, error_body, sse_tail::SseTail, stream_error_event},
    limits::body_budget::Held,
    observe::{Observation, READ_ON_BYTES, READ_ON_TIME, ResponseMeta},
    pipeline::{self, Forwarded, Outbound},
    routes::{Provider, ProxyRoute},
    state::Shared,
    upstream_url::Upstream,
    write_limit::WriteLimit,
};

/// Bytes a client may send ahead (pipelining) while its response is
/// pending; past this the gateway stops reading from it until then.
const MAX_PIPELINED: usize = 1 << 20;

/// The connection-wide parts of an exchange.
pub(super) struct Ctx<'a> {
    pub client: &'a mut ClientIo,
    /// Bytes the client sent after this request.
    pub pipelined: &'a mut BytesMut,
    pub shared: &'a Arc<Shared>,
    pub pool: &'a Pool,
    /// The gateway's stop flag: raised while the exchange is under way,
    /// its answer says `connection: close` (as hyper's graceful shutdown
    /// does), since the connection closes after it.
    pub shutdown: &'a watch::Receiver<bool>,
}

/// Run one exchange; the request's body has been read (and holds its part
/// of `max_buffered_request_bytes` until it has gone). `closing`: the
/// connection closes after it (the client asked, or the gateway was
/// stopping when it began); a stop that begins while it runs closes it
/// too, and the answer says so when its head has not gone yet.
pub(super) async fn run(
    cx: Ctx<'_>,
    head: Box<RequestHead>,
    (body, held): (Bytes, Held),
    at_ms: i64,
    closing: bool,
) -> Next {
    let RequestHead {
        route,
        path,
        client,
        mut upstream_head,
        content_encoding,
        ..
    } = *head;
    let shared = cx.shared;
    let stopping = cx.shutdown;
    // Whether the answer must say `connection: close` now.
    let closing_now = || closing || *stopping.borrow();
    let provider = route.provider;
    // The fast path takes only routes with a fixed upstream (`head`).
    let Some(upstream) = provider.upstream(&shared.config.upstreams) else {
        return Next::Close;
    };
    let base = pipeline::request_base(shared, &route, &path, client, at_ms);
    let mut outbound = Outbound::prepare(
        shared,
        &route,
        base,
        body,
        content_encoding.as_ref().map(|ce| ce.value.as_slice()),
    );
    if let (Some(ce), Forwarded::RepairedDecoded) = (&content_encoding, outbound.forwarded) {
        ce.remove_from(&mut upstream_head);
    }
    head::finish_upstream_head(&mut upstream_head, outbound.forward.len());
    let forward = outbound.forward.clone();
    outbound.observation.sent();

    // The first-byte timeout covers sending the request too (as on
    // hyper's path): an upstream that stops reading it does not hold the
    // request, its connection and the client's.
    let first_byte_timeout = shared.config.first_byte_timeout;
    let deadline = first_byte_timeout.map(|limit| tokio::time::Instant::now() + limit);
    let sending = async {
        let sending = send(cx.pool, upstream, provider, &upstream_head, &forward);
        match (deadline, first_byte_timeout) {
            (Some(at), Some(limit)) => tokio::time::timeout_at(at, sending)
                .await
                .unwrap_or_else(|_| Err(ProxyError::first_byte_timeout(upstream.host(), limit))),
            _ => sending.await,
        }
    };
    // The request is read for the records while it is written (as on
    // hyper's path): the write is polled first, so the parse does not
    // delay its start, and a request whose write is still waiting when it
    // is cut (an upstream that reads nothing, at the end of the shutdown's
    // grace period) has had its results counted.
    let (sent, (mut observation, changes)) =
        futures_util::future::join(sending, outbound.analyze(shared)).await;
    drop((forward, held));
    let write_limit = shared.config.client_body_timeout;
    let (mut up, mut ubuf, cut_short) = match sent {
        Ok(Sent::Whole(up)) => (up, BytesMut::with_capacity(READ_CHUNK), false),
        Ok(Sent::Answered(up, early)) => (up, early, true),
        Err(err) => {
            return fail(
                cx.client,
                observation,
                provider,
                &err,
                closing_now(),
                write_limit,
            )
            .await;
        }
    };

    // Wait for the response head, watching the client.
    let (response, client_head, closing) = loop {
        let extras = ClientHeadExtras {
            repaired: changes,
            close: closing_now(),
        };
        let refused = match head::parse_response(&ubuf, extras) {
            // A request cut short by its answer: that connection is done.
            ResponseParse::Head(mut response, client_head) => {
                response.close |= cut_short;
                break (response, client_head, extras.close);
            }
            ResponseParse::Informational(len) => {
                ubuf.advance(len);
                continue;
            }
            ResponseParse::Invalid(detail) => Some(ProxyError::new(
                ProxyErrorKind::BadResponse,
                upstream.host(),
                detail,
            )),
            ResponseParse::Unrelayed(coding) => Some(
                pipeline::headers::unrelayed_transfer_coding_error(upstream.host(), &coding),
            ),
            ResponseParse::Partial => None,
        };
        if let Some(err) = refused {
            let closing = closing_now();
            return fail(cx.client, observation, provider, &err, closing, write_limit).await;
        }
        ubuf.reserve(READ_CHUNK);
        let watch_client = cx.pipelined.len() < MAX_PIPELINED;
        tokio::select! {
            read = up.read_buf(&mut ubuf) => match read {
                Ok(n) if n > 0 => {}
                result => {
                    let detail = match result {
                        Err(e) => e.to_string(),
                        Ok(_) => "connection closed before message completed".into(),
                    };
                    let err = ProxyError::new(ProxyErrorKind::Reset, upstream.host(), detail);
                    return fail(cx.client, observation, provider, &err, closing_now(), write_limit).await;
                }
            },
            read = cx.client.read_buf(cx.pipelined), if watch_client => {
                if !matches!(read, Ok(n) if n > 0) {
                    // The client went away: dropping the upstream
                    // connection cancels the request; the observation
                    // records it as abandoned.
                    return Next::Close;
                }
            }
            _ = sleep_until(deadline) => {
                let limit = first_byte_timeout.unwrap_or_default();
                let err = ProxyError::first_byte_timeout(upstream.host(), limit);
                return fail(cx.client, observation, provider, &err, closing_now(), write_limit).await;
            }
        }
    };
    ubuf.advance(response.len);
    let started = Instant::now();
    observation.on_response(
        ResponseMeta {
            status: response.status,
            content_type: response.content_type.as_deref(),
            content_encoding: response.content_encoding.as_deref(),
            content_length: match response.framing {
                BodyFraming::Length(n) => Some(n),
                _ => None,
            },
        },
        route.gemini_stream,
        Some(&shared.parse_bounds),
    );
    observation.add_overhead(started.elapsed());
    let takes_error_event = pipeline::headers::takes_error_event(
        response.content_type.as_deref(),
        response.content_encoding.as_deref(),
    );
    let relay = Relay {
        takes_error_event,
        tail: SseTail::default(),
        client: cx.client,
        write_limit,
        pipelined: cx.pipelined,
        up,
        ubuf,
        observation,
        route: &route,
        upstream,
    };
    let keep_alive = response.keep_alive;
    match relay.run(response, client_head).await {
        Outcome::Reuse(up) => cx.pool.checkin(provider, up, keep_alive),
        Outcome::Done => {}
        Outcome::Closed => return Next::Close,
    }
    if closing {
        Next::Close
    } else {
        Next::KeepAlive
    }
}

/// How a request went upstream.
enum Sent {
    /// Whole.
    Whole(UpstreamIo),
    /// Cut short by the upstream's answer (these first bytes of it): an
    /// upstream that refuses a request from its head (a 413 for a body
    /// too large) answers and closes while the body is still going out.
    Answered(UpstreamIo, BytesMut),
}

/// How long a connection whose write failed is given to show an answer
/// already on its way.
const EARLY_ANSWER_WAIT: Duration = Duration::from_millis(100);

/// Write the request on a pooled connection (once more on a new one if
/// that write fails without an answer: the upstream closed it while idle)
/// or on a new connection.
async fn send(
    pool: &Pool,
    upstream: &Upstream,
    provider: Provider,
    head: &[u8],
    body: &[u8],
) -> Result<Sent, ProxyError> {
    if let Some(mut up) = pool.checkout(provider) {
        match write_request(&mut up, head, body).await {
            Ok(()) => return Ok(Sent::Whole(up)),
            Err(_) => {
                if let Some(early) = early_answer(&mut up).await {
                    return Ok(Sent::Answered(up, early));
                }
            }
        }
    }
    let mut up = pool.connect(upstream).await?;
    match write_request(&mut up, head, body).await {
        Ok(()) => Ok(Sent::Whole(up)),
        Err(e) => match early_answer(&mut up).await {
            Some(early) => Ok(Sent::Answered(up, early)),
            None => Err(ProxyError::new(
                ProxyErrorKind::Reset,
                upstream.host(),
                format!("writing the request failed: {e}"),
            )),
        },
    }
}

/// The first bytes of an answer the upstream sent before the write to it
/// failed (the kernel keeps what arrived before its reset), if any.
async fn early_answer(up: &mut UpstreamIo) -> Option<BytesMut> {
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    match tokio::time::timeout(EARLY_ANSWER_WAIT, up.read_buf(&mut buf)).await {
        Ok(Ok(n)) if n > 0 => Some(buf),
        _ => None,
    }
}

async fn write_request(up: &mut UpstreamIo, head: &[u8], body: &[u8]) -> std::io::Result<()> {
    write_all2(up, head, body).await?;
    up.flush().await
}

/// Write `a` then `b` with as few vectored writes as the socket allows.
async fn write_all2<W: AsyncWrite + Unpin>(
    w: &mut W,
    mut a: &[u8],
    mut b: &[u8],
) -> std::io::Result<()> {
    while !a.is_empty() {
        let n = w
            .write_vectored(&[IoSlice::new(a), IoSlice::new(b)])
            .await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let from_a = n.min(a.len());
        a = &a[from_a..];
        b = &b[n - from_a..];
    }
    w.write_all(b).await
}

/// Write `a` then `b` to the client, through [`WriteLimit`] (as hyper's
/// path writes): a client that stops reading its response (a write waits
/// `limit` with no progress) holds its connection (and an upstream one)
/// until then, not for good (issue 14); one that reads slowly but steadily
/// is not cut off. The timer is only set when a write has to wait.
async fn to_client(
    client: &mut ClientIo,
    a: &[u8],
    b: &[u8],
    limit: Duration,
) -> std::io::Result<()> {
    let mut limited = WriteLimit::new(client, limit);
    write_all2(&mut limited, a, b).await?;
    // TLS may hold the last bytes for the socket (plain TCP: nothing).
    limited.flush().await
}

/// Sleep until the first-byte deadline; never completes without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Answer a failed request with the error in the client's dialect, and
/// record it.
async fn fail(
    client: &mut ClientIo,
    observation: Observation,
    provider: Provider,
    err: &ProxyError,
    closing: bool,
    write_limit: Duration,
) -> Next {
    tracing::warn!(error = %err, "upstream request failed");
    observation.fail(err);
    match reply_error(client, provider, err, closing, write_limit).await {
        Ok(()) if !closing => Next::KeepAlive,
        _ => Next::Close,
    }
}

/// Write a whole error response in `provider`'s envelope.
pub(super) async fn reply_error(
    client: &mut ClientIo,
    provider: Provider,
    err: &ProxyError,
    close: bool,
    write_limit: Duration,
) -> std::io::Result<()> {
    let (status, body) = error_body(provider, err);
    let retry_after = err
        .retry_after()
        .map_or(String::new(), |s| format!("retry-after: {s}\r\n"));
    let head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{retry_after}{}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len(),
        if close { "connection: close\r\n" } else { "" },
    );
    to_client(client, head.as_bytes(), &body, write_limit).await
}

/// The response body on its way to the client.
struct Relay<'a> {
    /// An SSE stream in no content coding: a break can end it with the
    /// dialect's error event (`pipeline::headers::takes_error_event`).
    takes_error_event: bool,
    /// Where the SSE bytes relayed so far stopped (when
    /// `takes_error_event`): the error event follows the event they
    /// stopped in.
    tail: SseTail,
    client: &'a mut ClientIo,
    /// How long a write to the client may take (`client_body_timeout`).
    write_limit: Duration,
    pipelined: &'a mut BytesMut,
    up: UpstreamIo,
    ubuf: BytesMut,
    observation: Observation,
    route: &'a ProxyRoute,
    upstream: &'a Upstream,
}

/// How a relayed response ended.
enum Outcome {
    /// Cleanly, and the upstream connection can be reused.
    Reuse(UpstreamIo),
    /// Cleanly for the client; the upstream connection is done.
    Done,
    /// The client's connection must close (it went away, or its body was
    /// cut short).
    Closed,
}

/// Where the body is.
enum Body {
    Length(u64),
    Chunked(ChunkDecoder),
    Close,
    Done,
}

impl Relay<'_> {
    /// Relay the body; the upstream connection when it can be reused.
    async fn run(mut self, response: ResponseHead, client_head: Vec<u8>) -> Outcome {
        let mut body = match response.framing {
            BodyFraming::Empty | BodyFraming::Length(0) => Body::Done,
            BodyFraming::Length(n) => Body::Length(n),
            BodyFraming::Chunked => Body::Chunked(ChunkDecoder::new()),
            BodyFraming::Close => Body::Close,
        };
        let mut head = Some(client_head);
        if self.ubuf.is_empty() && !matches!(body, Body::Done) {
            // The head usually comes with the first body bytes; if they
            // are already here, send both in one write.
            self.ubuf.reserve(READ_CHUNK);
            match self.up.read_buf(&mut self.ubuf).now_or_never() {
                // Closed right after the head: an empty close-delimited
                // body, or a broken one.
                Some(Ok(0)) if matches!(body, Body::Close) => {
                    return self.closed(head.take()).await;
                }
                Some(Ok(0)) => {
                    let detail = "connection closed before message completed";
                    return self.broke(head.take(), &body, detail).await;
                }
                Some(Err(e)) => return self.broke(head.take(), &body, &e.to_string()).await,
                Some(Ok(_)) | None => {}
            }
        }
        let mut out = Vec::new();
        let mut reusable = !response.close;
        loop {
            // Pass on what is buffered.
            out.clear();
            // `content-length` bodies pass as they are: this many bytes at
            // the front of `ubuf` (no copy).
            let mut plain = 0;
            match &mut body {
                Body::Length(left) => {
                    let take = usize::try_from(*left)
                        .unwrap_or(usize::MAX)
                        .min(self.ubuf.len());
                    self.observation.feed(&self.ubuf[..take]);
                    plain = take;
                    *left -= take as u64;
                    if *left == 0 {
                        body = Body::Done;
                    }
                }
                Body::Chunked(decoder) => {
                    let observation = &mut self.observation;
                    let mut tail = self.takes_error_event.then_some(&mut self.tail);
                    let used = match decoder.decode(&self.ubuf, &mut |piece| {
                        observation.feed(piece);
                        if let Some(tail) = tail.as_deref_mut() {
                            tail.feed(piece);
                        }
                        chunked::encode_chunk(&mut out, piece);
                    }) {
                        Ok(used) => used,
                        Err(e) => {
                            let detail = e.to_string();
                            return self.broke_after(head.take(), out, &detail).await;
                        }
                    };
                    self.ubuf.advance(used);
                    if decoder.is_done() {
                        out.extend_from_slice(chunked::LAST_CHUNK);
                        body = Body::Done;
                    }
                }
                Body::Close => {
                    self.observation.feed(&self.ubuf);
                    if self.takes_error_event {
                        self.tail.feed(&self.ubuf);
                    }
                    chunked::encode_chunk(&mut out, &self.ubuf);
                    self.ubuf.clear();
                }
                Body::Done => {}
            }
            let done = matches!(body, Body::Done);
            if done {
                // The whole response is in hand: the observation ends
                // before its last bytes go out (as `TeeBody` ends every one
                // before the last frame), so that the next request the
                // client sends as soon as it has them, on any connection,
                // finds the response's calls recorded, and a continuation
                // the session of the response it continues.
                self.observation.finish();
            }
            let first = head.take();
            let first = first.as_deref().unwrap_or_default();
            let rest: &[u8] = if plain > 0 { &self.ubuf[..plain] } else { &out };
            if (!first.is_empty() || !rest.is_empty())
                && let Err(e) = to_client(self.client, first, rest, self.write_limit).await
            {
                // The client went away, or read nothing for the write
                // limit (which the observation is told): the observation
                // records it.
                if let Some(limit) = crate::write_limit::stall_of(&e) {
                    self.observation.client_stalled(limit);
                }
                self.ubuf.advance(plain);
                return self.read_on(body).await;
            }
            self.ubuf.advance(plain);
            if done {
                // Bytes past the end of the body: the connection is out of step.
                reusable &= self.ubuf.is_empty();
                self.observation.finish();
                return if reusable {
                    Outcome::Reuse(self.up)
                } else {
                    Outcome::Done
                };
            }
            // Wait for more, watching the client.
            self.ubuf.reserve(READ_CHUNK);
            let watch_client = self.pipelined.len() < MAX_PIPELINED;
            tokio::select! {
                read = self.up.read_buf(&mut self.ubuf) => match read {
                    Ok(n) if n > 0 => {}
                    Ok(_) if matches!(body, Body::Close) => return self.closed(None).await,
                    Ok(_) => return self.broke(None, &body, "connection closed before message completed").await,
                    Err(e) => return self.broke(None, &body, &e.to_string()).await,
                },
                read = self.client.read_buf(self.pipelined), if watch_client => {
                    if !matches!(read, Ok(n) if n > 0) {
                        return self.read_on(body).await;
                    }
                }
            }
        }
    }

    /// The client went away with the rest of `body` unread. A stream whose
    /// final event has passed and whose trailer (its usage) has not
    /// (`Observation::reads_on`) is read on from the upstream for the
    /// records, within `observe::READ_ON_TIME` and `READ_ON_BYTES`; the
    /// observation, dropped or finished then, records it.
    async fn read_on(mut self, mut body: Body) -> Outcome {
        let deadline = tokio::time::Instant::now() + READ_ON_TIME;
        let mut left = READ_ON_BYTES;
        while self.observation.reads_on() {
            match &mut body {
                Body::Length(rest) => {
                    let take = usize::try_from(*rest)
                        .unwrap_or(usize::MAX)
                        .min(self.ubuf.len());
                    self.observation.feed(&self.ubuf[..take]);
                    self.ubuf.advance(take);
                    *rest -= take as u64;
                    if *rest == 0 {
                        body = Body::Done;
                    }
                }
                Body::Chunked(decoder) => {
                    let observation = &mut self.observation;
                    let Ok(used) = decoder.decode(&self.ubuf, &mut |piece| observation.feed(piece))
                    else {
                        break;
                    };
                    self.ubuf.advance(used);
                    if decoder.is_done() {
                        body = Body::Done;
                    }
                }
                Body::Close => {
                    self.observation.feed(&self.ubuf);
                    self.ubuf.clear();
                }
                Body::Done => {}
            }
            if matches!(body, Body::Done) {
                self.observation.finish();
                break;
            }
            if left == 0 || !self.observation.reads_on() {
                break;
            }
            self.ubuf.reserve(READ_CHUNK);
            match tokio::time::timeout_at(deadline, self.up.read_buf(&mut self.ubuf)).await {
                Ok(Ok(n)) if n > 0 => left = left.saturating_sub(n),
                Ok(Ok(_)) if matches!(body, Body::Close) => {
                    self.observation.finish();
                    break;
                }
                _ => break,
            }
        }
        Outcome::Closed
    }

    /// A close-delimited body ended (the upstream closed): end the
    /// re-chunked body, after the head if it has not gone yet.
    async fn closed(mut self, head: Option<Vec<u8>>) -> Outcome {
        self.observation.finish();
        let first = head.unwrap_or_default();
        match to_client(self.client, &first, chunked::LAST_CHUNK, self.write_limit).await {
            Ok(()) => Outcome::Done,
            Err(_) => Outcome::Closed,
        }
    }

    /// The upstream broke midway, with `out` still to send.
    async fn broke_after(self, head: Option<Vec<u8>>, out: Vec<u8>, detail: &str) -> Outcome {
        let first = head.unwrap_or_default();
        if to_client(self.client, &first, &out, self.write_limit)
            .await
            .is_err()
        {
            return Outcome::Closed;
        }
        self.broke(None, &Body::Close, detail).await
    }

    /// The upstream broke midway: record it; end a re-chunked SSE stream
    /// with the dialect's error event, else (a `content-length` body, one
    /// in a content coding, or one that is not SSE, where an SSE event
    /// cannot follow) cut the connection: the client sees a body cut short.
    async fn broke(mut self, head: Option<Vec<u8>>, body: &Body, detail: &str) -> Outcome {
        let err = ProxyError::new(ProxyErrorKind::MidStream, self.upstream.host(), detail);
        tracing::warn!(error = %err, "upstream stream broke");
        self.observation.stream_failed(&err);
        self.observation.finish();
        let can_append = matches!(body, Body::Chunked(_) | Body::Close) && self.takes_error_event;
        let first = head.unwrap_or_default();
        if can_append {
            let event = self.tail.then(stream_error_event(
                self.route.provider,
                self.route.dialect,
                &err,
            ));
            let mut out = Vec::with_capacity(event.len() + 16);
            chunked::encode_chunk(&mut out, &event);
            out.extend_from_slice(chunked::LAST_CHUNK);
            match to_client(self.client, &first, &out, self.write_limit).await {
                Ok(()) => Outcome::Done,
                Err(_) => Outcome::Closed,
            }
        } else {
            if !first.is_empty() {
                let _ = to_client(self.client, &first, &[], self.write_limit).await;
            }
            Outcome::Closed
        }
    }
}
