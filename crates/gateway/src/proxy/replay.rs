//! An idempotent request with no body (`GET /v1/models`, Claude Code's
//! `HEAD /` preconnect) whose pooled upstream connection the upstream
//! closed just as the request went out (its idle timeout) is sent once
//! more, on a new connection, instead of answered `502`: what Go's
//! Transport does (`net/http`'s `persistConn.shouldRetryRequest`: a
//! replayable request — `GET`, `HEAD`, `OPTIONS`, `TRACE` with no body —
//! on a reused connection that failed before its answer), and RFC 9110
//! section 9.2.2 allows ("Idempotent methods are distinguished because
//! the request can be repeated automatically if a communication failure
//! occurs before the client is able to read the server's response").
//! hyper-util sends such a request again only when the connection was
//! found closed before anything was written (its `retry_canceled_requests`),
//! not when the close crossed the request on the wire.
//!
//! Only once, only for an upstream reset or close before any answer (not
//! a timeout, not a refused connect), only on a connection that had
//! carried an answer before (a fresh one that closes is the upstream's
//! answer to this request: sending it again could loop), and on a
//! connection of its own (the unpooled client), not another pooled one
//! that may be closing too. A request with a body, or of another method,
//! goes once, as before: the gateway cannot know that sending it again is
//! harmless.

use bytes::Bytes;
use http::{Method, Request, request::Parts};
use hyper_util::client::legacy::connect::CaptureConnection;

use crate::{
    errors::ProxyError,
    http_client::{UpstreamBody, went_on_reused_http1, whole},
};

/// A copy of the request to send again if it fails so, for a request of an
/// idempotent method with no body (`bodyless`); `None` for any other (no
/// copy made).
pub(super) fn replayable(parts: &Parts, bodyless: bool) -> Option<Request<UpstreamBody>> {
    if !bodyless
        || !matches!(
            parts.method,
            Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
        )
    {
        return None;
    }
    let mut again = Request::new(whole(Bytes::new()));
    *again.method_mut() = parts.method.clone();
    *again.uri_mut() = parts.uri.clone();
    *again.version_mut() = parts.version;
    *again.headers_mut() = parts.headers.clone();
    Some(again)
}

/// Whether a request that failed with `err` on the connection `captured`
/// goes again: the upstream reset or closed a reused HTTP/1 connection
/// before answering.
pub(super) fn goes_again(err: &ProxyError, captured: &CaptureConnection) -> bool {
    err.is_reset() && went_on_reused_http1(captured)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a bodyless request of an idempotent method is copied, whole.
    #[test]
    fn only_bodyless_idempotent_requests_are_copied() {
        let parts = |method: Method| {
            let (parts, ()) = Request::builder()
                .method(method)
                .uri("https://api.example.com/v1/models?x=1")
                .header("authorization", "Bearer k")
                .header("x-Custom", "a")
                .body(())
                .unwrap()
                .into_parts();
            parts
        };
        for method in [Method::GET, Method::HEAD, Method::OPTIONS, Method::TRACE] {
            let again = replayable(&parts(method.clone()), true).expect("copied");
            assert_eq!(again.method(), method);
            assert_eq!(again.uri(), "https://api.example.com/v1/models?x=1");
            assert_eq!(again.headers()["authorization"], "Bearer k");
            assert_eq!(again.headers()["x-custom"], "a");
            assert!(replayable(&parts(method), false).is_none());
        }
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
            assert!(replayable(&parts(method), true).is_none());
        }
    }
}
