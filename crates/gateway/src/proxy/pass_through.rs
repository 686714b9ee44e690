//! The body of a pass-through request (a route with no dialect: uploads
//! to `/v1/files`, audio, batches, model listings) goes upstream as it
//! arrives ([`Streamed`]), since the gateway neither reads nor changes it.
//! Bedrock's are the exception: re-signing one needs its whole body.
//!
//! [`send`] then bounds the exchange by progress instead of by its length:
//! `first_byte_timeout_ms` counts from the last piece of the body sent (and
//! not while the upstream waits for the client), so an upload that takes
//! longer than it still gets its answer, a paused one is judged by
//! `client_body_timeout_ms`, and an upstream that stops reading one is cut
//! off as before.

use std::{sync::Arc, time::Duration};

use http::{Request, Response};
use hyper::body::Incoming;

use crate::{
    errors::{ProxyError, ProxyErrorKind},
    http_client::{HttpClient, Progress, Streamed, UpstreamBody},
    routes::{Provider, ProxyRoute},
};

/// Whether `body` of a request on `route` is streamed upstream.
pub(crate) fn streams(route: &ProxyRoute, body: &Incoming) -> bool {
    use http_body::Body as _;
    route.dialect.is_none() && route.provider != Provider::Bedrock && !body.is_end_stream()
}

/// `body` as it arrives, failed when the client sends nothing of it for
/// `idle` (`client_body_timeout_ms`).
pub(crate) fn streamed(body: Incoming, idle: Duration) -> (UpstreamBody, Arc<Progress>) {
    let (body, progress) = Streamed::new(body, idle);
    (http_body_util::Either::Right(body), progress)
}

/// Sends a streamed request: its answer's head, or the error, named by
/// the client's side when the client failed the body.
pub(crate) async fn send(
    client: &HttpClient,
    request: Request<UpstreamBody>,
    progress: &Progress,
    first_byte_timeout: Option<Duration>,
    host: &str,
) -> Result<Response<Incoming>, ProxyError> {
    let sending = client.request(request);
    tokio::pin!(sending);
    let answered = match first_byte_timeout {
        None => sending.await,
        Some(limit) => {
            // Counted from the last piece sent, or from the last time the
            // upstream was found waiting on the client (that silence is
            // the body's own bound to judge: `client_body_timeout_ms`).
            let mut floor = tokio::time::Instant::now();
            loop {
                tokio::select! {
                    answered = &mut sending => break answered,
                    () = tokio::time::sleep_until(progress.last().max(floor) + limit) => {
                        let now = tokio::time::Instant::now();
                        if progress.waiting_on_client() {
                            floor = now;
                        } else if progress.last().max(floor) + limit <= now {
                            return Err(ProxyError::first_byte_timeout(host, limit));
                        }
                    }
                }
            }
        }
    };
    answered.map_err(|e| match progress.stalled() {
        Some(why) => ProxyError::new(ProxyErrorKind::ClientBody, host, why),
        None => ProxyError::from_client_error(host, &e),
    })
}
