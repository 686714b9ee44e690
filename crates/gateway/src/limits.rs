//! The cap on client connections open at once (issue 14: a flood of
//! connections, or of half-sent requests, must not take every socket).
//! One count for all workers; a connection holds a [`Slot`] for its life.
//! And the bound on a name or an id taken from a client ([`MAX_NAME_LEN`]),
//! which the records (`observe`) and the metric labels (`metrics`) both
//! apply: names are cut ([`clip_name`]), ids kept apart ([`clip_id`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

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
    /// then closes it.
    pub(crate) async fn refuse(&self, mut stream: TcpStream) {
        let n = self.refused.fetch_add(1, Ordering::Relaxed);
        if n.is_power_of_two() || n == 0 {
            tracing::warn!(
                max = self.max,
                refused = n + 1,
                "client connection refused: max_client_connections open"
            );
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
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
            let _ = stream.write_all(reply.as_bytes()).await;
            let _ = stream.shutdown().await;
        })
        .await;
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
