//! The request body on hyper's path: a dialect route's body read whole,
//! as it arrives (bounded by `max_request_bytes`, `client_body_timeout_ms`
//! and the bodies held at once, `max_buffered_request_bytes`), as the fast
//! path reads it (`crate::h1::body`).

use http_body_util::BodyExt;
use hyper::body::Incoming;

use crate::{
    errors::{ProxyError, ProxyErrorKind},
    limits::body_budget::Held,
    pipeline::too_large,
    state::Shared,
};

/// The whole body, within `client_body_timeout_ms`, `max_request_bytes`
/// and `max_buffered_request_bytes` (counted as it arrives), with what it
/// holds of the last (a client that does not send it in time is answered
/// and let go, as on the fast path: issue 14). A body refused for its size
/// or for want of room is read to its end and dropped before the answer,
/// so that a client still sending it reads the answer rather than a reset
/// (`h1::body::linger` on the fast path). A client that `waits` for `100
/// Continue` before it sends a body announced too large is answered at
/// once: it sends nothing more.
pub(super) async fn read(
    shared: &Shared,
    mut body: Incoming,
    waits: bool,
    host: &str,
) -> Result<(bytes::Bytes, Held), ProxyError> {
    let max = shared.config.max_request_bytes;
    let announced = http_body::Body::size_hint(&body).exact();
    if waits && announced.is_some_and(|n| n > u64::try_from(max).unwrap_or(u64::MAX)) {
        return Err(too_large(shared, host));
    }
    let mut held = shared.body_budget.hold();
    let mut refused = None;
    let reading = async {
        let mut chunks: Vec<bytes::Bytes> = Vec::new();
        let mut len = 0usize;
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            len = len.saturating_add(data.len());
            if refused.is_some() {
                continue;
            }
            let room = if len > max {
                Err(too_large(shared, host))
            } else {
                held.cover(len)
                    .map_err(|no_room| crate::pipeline::overloaded(host, no_room))
            };
            match room {
                Ok(()) => chunks.push(data),
                Err(err) => {
                    // Nothing of it is kept while the rest is dropped.
                    refused = Some(err);
                    chunks = Vec::new();
                    held = shared.body_budget.hold();
                }
            }
        }
        Ok::<_, hyper::Error>(match chunks.len() {
            0 => bytes::Bytes::new(),
            1 => chunks.swap_remove(0),
            _ => chunks.concat().into(),
        })
    };
    let limit = shared.config.client_body_timeout;
    let read = tokio::time::timeout(limit, reading).await;
    // Refused, the body's end (or its failure) is not what the client
    // is told.
    if let Some(err) = refused {
        return Err(err);
    }
    match read {
        Ok(Ok(bytes)) => Ok((bytes, held)),
        Ok(Err(e)) => Err(ProxyError::new(
            ProxyErrorKind::ClientBody,
            host,
            format!("reading the request body failed: {e}"),
        )),
        Err(_) => Err(ProxyError::new(
            ProxyErrorKind::ClientBody,
            host,
            format!(
                "the client did not send the whole body within client_body_timeout_ms ({} ms)",
                limit.as_millis()
            ),
        )),
    }
}
