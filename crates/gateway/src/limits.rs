//! The cap on client connections open at once (issue 14: a flood of
//! connections, or of half-sent requests, must not take every socket).
//! One count for all workers; a connection holds a [`Slot`] for its life.
//! And the bound on a name or an id taken from a client ([`MAX_NAME_LEN`]),
//! which the records (`observe`) and the metric labels (`metrics`) both
//! apply: names are cut ([`clip_name`]), ids kept apart ([`clip_id`]).
//! And the bound on request bodies held at once ([`body_budget`]).

pub(crate) mod body_budget;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{
    client_io::ClientIo,
    server_tls::{HandshakeFailure, ServerTls},
};

/// Longest name taken from a request or a response into the records and
/// the metric labels — model, tool name, response id,
/// `previous_response_id` — in bytes; longer ones are cut (at a char
/// boundary). Each record carries its own copy, and one name in a body can
/// reach every record the body makes (one `model` for every result): the
/// recorder's queue is bounded in events, so its bytes are bounded only if
/// each event's are. Real names are far shorter (`resp_` + 48 hex digits,
/// `claude-sonnet-4-5-20250929`, MCP tool names of at most 64 characters).
pub(crate) const MAX_NAME_LEN: usize = 256;

/// `name` cut to at most [`MAX_NAME_LEN`] bytes, at a char boundary.
pub(crate) fn clip_name(name: &str) -> &str {
    &name[..name.floor_char_boundary(MAX_NAME_LEN)]
}

/// An owned copy of [`clip_name`]`(name)`, for a record.
pub(crate) fn owned_name(name: &str) -> String {
    clip_name(name).to_owned()
}

/// `id` bounded to [`MAX_NAME_LEN`] bytes and still telling ids apart: an
/// id that fits is itself; a longer one is its first bytes (cut at a char
/// boundary), `~` and the SHA-1 of the whole id in hex, [`MAX_NAME_LEN`]
/// bytes in all. For the ids a later record names (call ids, which results
/// name; response ids, which `previous_response_id` names): a proxy in
/// front of a provider may encode its own state in them, as LiteLLM does
/// in response ids, and ids that share a long prefix must not become one
/// when cut. The same for every gateway
/// and every run, so a bounded id stored by one is found by another; a
/// bounded id is bounded already (it is its own bounded form).
pub(crate) fn clip_id(id: &str) -> std::borrow::Cow<'_, str> {
    use sha1::Digest;
    use std::fmt::Write;
    const HASH_HEX: usize = 40;
    if id.len() <= MAX_NAME_LEN {
        return std::borrow::Cow::Borrowed(id);
    }
    let keep = id.floor_char_boundary(MAX_NAME_LEN - HASH_HEX - 1);
    let mut out = String::with_capacity(MAX_NAME_LEN);
    out.push_str(&id[..keep]);
    out.push('~');
    for b in sha1::Sha1::digest(id.as_bytes()) {
        let _ = write!(out, "{b:02x}");
    }
    std::borrow::Cow::Owned(out)
}

/// An owned copy of [`clip_id`]`(id)`, for a record.
pub(crate) fn owned_id(id: &str) -> String {
    clip_id(id).into_owned()
}

/// Open client connections, at most `max`.
#[derive(Debug)]
pub(crate) struct ConnectionSlots {
    open: AtomicUsize,
    max: usize,
    refused: AtomicUsize,
    /// Refusals under way ([`ConnectionSlots::refuse`]).
    refusing: AtomicUsize,
}

/// One open connection; dropping it frees the slot.
#[derive(Debug)]
pub(crate) struct Slot(Arc<ConnectionSlots>);

impl ConnectionSlots {
    /// A cap of `max` connections (at least 1).
    pub(crate) fn new(max: usize) -> Arc<ConnectionSlots> {
        Arc::new(ConnectionSlots {
            open: AtomicUsize::new(0),
            max: max.max(1),
            refused: AtomicUsize::new(0),
            refusing: AtomicUsize::new(0),
        })
    }

    /// A slot, or `None` when `max` connections are open.
    pub(crate) fn try_take(self: &Arc<Self>) -> Option<Slot> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(self.clone()))
    }

    /// Connections open now.
    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// Tells a connection beyond the cap so (a 503 the client can read),
    /// then closes it. The answer goes once the client's request head has
    /// come (or [`REFUSAL_HEAD_WAIT`] has passed): a client answered before
    /// it has sent its request (hyper's, so reqwest's) takes the answer
    /// for a broken connection and never shows it. After it, the rest of
    /// the request (its body) is read and dropped until the client closes:
    /// closing a socket with bytes unread resets it, and a client still
    /// writing its body would see the reset, not the answer. All within
    /// [`REFUSAL_TIME`]; at most [`MAX_REFUSING`] refusals at once (past
    /// them a connection is closed unanswered: a flood beyond the cap does
    /// not take a socket per refusal for long).
    /// Over HTTPS (`tls`) the answer follows the handshake, which has the
    /// head's wait.
    /// A failed handshake is handed to the pair's counter.
    pub(crate) async fn refuse<F: FnOnce(HandshakeFailure)>(
        &self,
        stream: TcpStream,
        tls: Option<(ServerTls, F)>,
    ) {
        let n = self.refused.fetch_add(1, Ordering::Relaxed);
        if n.is_power_of_two() || n == 0 {
            tracing::warn!(
                max = self.max,
                refused = n + 1,
                "client connection refused: max_client_connections open"
            );
        }
        let refusing = self.refusing.fetch_add(1, Ordering::AcqRel);
        let _done = Refusing(&self.refusing);
        if refusing >= MAX_REFUSING {
            return;
        }
        let body = format!(
            "{{\"error\":{{\"type\":\"overloaded_error\",\"message\":\"toolwarden: too many client connections (max_client_connections = {})\"}}}}",
            self.max
        );
        let reply = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
             retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = tokio::time::timeout(REFUSAL_TIME, async {
            let mut stream = match tls {
                None => ClientIo::Plain(stream),
                Some((tls, count)) => match tls.accept(stream, REFUSAL_HEAD_WAIT, count).await {
                    Ok(tls) => ClientIo::Tls(Box::new(tls)),
                    Err(_) => return,
                },
            };
            let _ = tokio::time::timeout(REFUSAL_HEAD_WAIT, read_head(&mut stream)).await;
            if stream.write_all(reply.as_bytes()).await.is_err() {
                return;
            }
            let _ = stream.shutdown().await;
            let mut sink = [0u8; 8192];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
        })
        .await;
    }
}

/// How long a refused connection has to send its request head.
pub(crate) const REFUSAL_HEAD_WAIT: Duration = Duration::from_millis(500);

/// How long a refused connection is kept in all.
pub(crate) const REFUSAL_TIME: Duration = Duration::from_secs(2);

/// Bytes of a refused connection's request read before it is answered
/// anyway (the longest head the gateway takes).
const REFUSAL_HEAD_MAX: usize = 64 * 1024;

/// Refusals under way at once, at most.
pub(crate) const MAX_REFUSING: usize = 256;

/// One refusal under way; counted down when dropped.
struct Refusing<'a>(&'a AtomicUsize);

impl Drop for Refusing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Read until the end of a request head (a blank line), the client's end,
/// or 64 KiB.
async fn read_head(stream: &mut ClientIo) {
    let mut seen = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    while seen.len() < REFUSAL_HEAD_MAX {
        match stream.read(&mut chunk).await {
            Ok(n) if n > 0 => seen.extend_from_slice(&chunk[..n]),
            _ => return,
        }
        if memchr::memmem::find(&seen, b"\r\n\r\n").is_some()
            || memchr::memmem::find(&seen, b"\n\n").is_some()
        {
            return;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_ids_are_bounded_and_kept_apart() {
        let short = "resp_68af4030592c81938ec0a5fbab4a3e9f";
        assert_eq!(clip_id(short), short);
        let fits = "r".repeat(MAX_NAME_LEN);
        assert_eq!(clip_id(&fits), fits.as_str());
        // Alike in all but the last byte, far past the bound; multi-byte
        // chars where the cut falls.
        let prefix = format!("resp_{}", "é".repeat(300));
        let (a, b) = (format!("{prefix}a"), format!("{prefix}b"));
        let (ca, cb) = (owned_id(&a), owned_id(&b));
        assert_ne!(ca, cb);
        for c in [&ca, &cb] {
            assert!(c.len() <= MAX_NAME_LEN, "{}", c.len());
            assert!(c.starts_with("resp_é"), "{c}");
        }
        // The same for every call, and its own bounded form.
        assert_eq!(owned_id(&a), ca);
        assert_eq!(clip_id(&ca), ca.as_str());
    }

    /// A refused connection's client reads the 503: a hyper client (as
    /// reqwest) that sends its request, a small one or one whose body is
    /// still going out when the answer comes, and one that sends nothing.
    /// Before, the answer went at once: hyper took it for a broken
    /// connection ("connection was not ready", an unexpected message),
    /// and a client still writing a large body got a reset.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_client_reads_the_503() {
        use http_body_util::{BodyExt, Full};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let slots = ConnectionSlots::new(7);
        let refusing = slots.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let slots = refusing.clone();
                tokio::spawn(async move {
                    slots
                        .refuse(stream, None::<(ServerTls, fn(HandshakeFailure))>)
                        .await
                });
            }
        });
        for size in [10, 4 << 20] {
            let stream = TcpStream::connect(addr).await.unwrap();
            let (mut send, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                    .await
                    .unwrap();
            tokio::spawn(conn);
            // The gateway's worker answers as soon as it accepts, on its
            // own thread: before a client's request, in practice. Here
            // the client sends it a little after the connection is made.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let request = http::Request::post("/v1/messages")
                .header("host", "localhost")
                .body(Full::new(bytes::Bytes::from(vec![b'x'; size])))
                .unwrap();
            let response = send.send_request(request).await.unwrap();
            assert_eq!(response.status(), 503, "{size}");
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let text = String::from_utf8_lossy(&body);
            assert!(text.contains("max_client_connections = 7"), "{text}");
        }
        let mut silent = TcpStream::connect(addr).await.unwrap();
        let mut reply = Vec::new();
        tokio::time::timeout(REFUSAL_TIME, silent.read_to_end(&mut reply))
            .await
            .unwrap()
            .unwrap();
        assert!(reply.starts_with(b"HTTP/1.1 503 "));
        // Each refusal ends once its client has closed.
        drop(silent);
        let ended = async {
            while slots.refusing.load(Ordering::Acquire) > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(REFUSAL_TIME, ended).await.unwrap();
    }

    #[test]
    fn slots_are_counted_and_freed() {
        let slots = ConnectionSlots::new(2);
        let a = slots.try_take().unwrap();
        let _b = slots.try_take().unwrap();
        assert!(slots.try_take().is_none());
        assert_eq!(slots.open(), 2);
        drop(a);
        assert!(slots.try_take().is_some());
    }
}
