//! The proxy path for one request:
//!
//! 1. collect the body (bounded: larger → 413 in the dialect's envelope),
//!    or on a pass-through route stream it upstream ([`pass_through`]);
//! 2. on dialect routes, check the call/result pairing per the repair mode
//!    (`fix`: forward the repaired body, count the changes, answer with
//!    `x-toolwarden-repaired: N`; `report`: record the defects, checked
//!    after dispatch since the body goes unchanged; `off`: skip),
//!    and, once the request is on its way upstream, record its new tool
//!    results (while the upstream works). One pass over the body gives
//!    both the pairing and the view (`toolwarden_wire::inspect`, kept with
//!    the body in a [`ReadBody`](crate::observe::request::ReadBody));
//! 3. forward to the provider's upstream — the client's path and query
//!    appended to the base URL, headers unchanged except hop-by-hop and
//!    `host` ([`headers`]) — with the connect and first-byte timeouts;
//! 4. return the upstream status and headers (with the first body bytes
//!    when they follow within 2 ms, so both leave in one write), the body
//!    through a [`tee::TeeBody`] that streams it chunk by chunk while
//!    observing it.
//!
//! Failures map to the client's dialect's envelope in [`crate::errors`].

pub(crate) mod cloud;
mod collect;
mod pass_through;
mod replay;
pub(crate) use crate::body::tee;

pub(crate) use crate::pipeline::headers;
pub(crate) use crate::pipeline::{Forwarded, REPAIRED_HEADER};
pub(crate) use crate::pipeline::{Outbound, request_base};
use crate::upstream;

use std::{future::Future, sync::Arc, time::Instant};

use http::{HeaderValue, Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use crate::{
    body::{GatewayBody, error_response},
    errors::{ProxyError, ProxyErrorKind},
    metrics::events::{RefusalReason, RequestRefused},
    observe::{Observation, ResponseMeta, client_headers::ClientHeaders, now_ms},
    routes::{ProxyRoute, cloud as cloud_routes},
    state::Shared,
};

/// A web page's form or text `POST` ([`crate::local::is_cross_site_form`]):
/// a 403 in the client's envelope, neither forwarded nor recorded (a page
/// could otherwise fill the records with tool calls and failures it made
/// up, and fire alerts). Counted; logged at the first and every
/// power-of-two time.
fn refuse_cross_site(
    shared: &Shared,
    provider: crate::Provider,
    path: &str,
) -> Response<GatewayBody> {
    shared.sinks.metrics.emit(RequestRefused {
        reason: RefusalReason::CrossSite,
    });
    static REFUSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = REFUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        tracing::warn!(
            path,
            refused = n,
            "refused a form or text POST from a web page of another site (its Origin)"
        );
    }
    let err = ProxyError::new(
        ProxyErrorKind::CrossSite,
        "",
        "a form or text POST from a web page of another site is refused \
         (its Origin is not this machine's; LLM clients send JSON)",
    );
    error_response(provider, &err)
}

/// Proxy one request.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    client: &upstream::HttpClient,
    req: Request<Incoming>,
    mut route: ProxyRoute,
) -> Response<GatewayBody> {
    let at_ms = now_ms();
    let (mut parts, body) = req.into_parts();
    // Errors go in the envelope the client reads (issue 18: a Vertex
    // `rawPredict` client reads Anthropic's, a Bedrock client AWS's).
    let provider = route.envelope();
    if crate::local::is_cross_site_form(&parts.method, &parts.headers) {
        return refuse_cross_site(&shared, provider, parts.uri.path());
    }
    let mut base = request_base(
        &shared,
        &route,
        parts.uri.path(),
        ClientHeaders::from_headers(&parts.headers),
        at_ms,
    );
    if let Some(why) = cloud_routes::unrelayed(&route, parts.uri.path()) {
        let err = ProxyError::new(ProxyErrorKind::NotRelayed, "", why);
        Observation::new(shared.sinks.clone(), base).fail(&err);
        return error_response(provider, &err);
    }
    let upstream = match cloud::upstream_for(&shared.config, &route) {
        Ok(upstream) => upstream,
        Err(err) => {
            Observation::new(shared.sinks.clone(), base).fail(&err);
            return error_response(provider, &err);
        }
    };

    // A pass-through body goes upstream as it arrives.
    // A read body holds its part of `max_buffered_request_bytes` until
    // the answer's head is handed on (its bytes are forwarded, and kept
    // to sign again or send again, until then).
    let (body, streamed, _held) = if pass_through::streams(&route, &body) {
        let streamed = pass_through::streamed(body, shared.config.client_body_timeout);
        (bytes::Bytes::new(), Some(streamed), None)
    } else {
        let waits = parts
            .headers
            .get(header::EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        match collect::read(&shared, body, waits, upstream.host()).await {
            Ok((body, held)) => (body, None, Some(held)),
            Err(err) => {
                Observation::new(shared.sinks.clone(), base).fail(&err);
                return error_response(provider, &err);
            }
        }
    };
    let content_encoding = headers::content_encoding(&parts.headers);
    // A Bedrock `invoke` named by an ARN: only its body says it is
    // Anthropic's (a body in a content coding stays a pass-through).
    if content_encoding.is_none()
        && let Some(read) =
            cloud_routes::bedrock_invoke_by_body(&route, &parts.method, parts.uri.path(), &body)
    {
        route = read;
        base.dialect = route.dialect;
        base.path_model = route.model.clone();
    }
    let bodyless = body.is_empty() && route.dialect.is_none() && streamed.is_none();
    // A HEAD answer has no body: it is complete with its head.
    let head_only = parts.method == http::Method::HEAD;
    let mut outbound = Outbound::prepare(&shared, &route, base, body, content_encoding.as_deref());
    if bodyless {
        outbound.observation.metrics_only();
    }

    // Read before the client's `host` and URI give way to the upstream's.
    let lend =
        crate::local::lends_credentials(&parts.headers, shared.config.cloud.lend_token.as_ref());
    headers::for_upstream(&mut parts.headers, outbound.forwarded);
    let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    // A cloud route's `/azure`, `/vertex` or `/bedrock` prefix is the
    // gateway's, not the upstream's; `/messages` lacks the upstream's `/v1`.
    let path_and_query = route.upstream_path_and_query(path_and_query);
    let uri = match upstream.uri_for(&path_and_query) {
        Ok(uri) => uri,
        Err(e) => {
            let err = ProxyError::new(ProxyErrorKind::BadRequest, upstream.host(), e.to_string());
            outbound.observation.fail(&err);
            return error_response(provider, &err);
        }
    };
    parts.uri = uri;
    parts.version = http::Version::HTTP_11;
    let signed = cloud::authenticate(
        &shared.config,
        shared.addr,
        &route,
        &mut parts,
        &outbound.forward,
        client,
        lend,
    )
    .await;
    // Bedrock bodies are never streamed (they are signed whole).
    let signed_head = signed.then(|| cloud::SignedHead::of(&parts, outbound.forward.clone()));
    // A bodyless GET or HEAD may go once more if the upstream closes its
    // pooled connection under it (`replay`): a copy of its head.
    let mut replay = replay::replayable(&parts, streamed.is_none() && outbound.forward.is_empty());
    let (upstream_body, progress) = match streamed {
        Some((body, progress)) => (body, Some(progress)),
        None => (crate::http_client::whole(outbound.forward.clone()), None),
    };
    let mut upstream_req = Request::from_parts(parts, upstream_body);
    // The connection it goes on, to keep the upstream's keep-alive timeout.
    let mut connection = hyper_util::client::legacy::connect::capture_connection(&mut upstream_req);

    outbound.observation.sent();
    let host = upstream.host();
    let sending = async {
        if let Some(progress) = &progress {
            let limit = shared.config.first_byte_timeout;
            return pass_through::send(client, upstream_req, progress, limit, host).await;
        }
        send_whole(&shared, client, upstream_req, host).await
    };
    tokio::pin!(sending);
    // Dispatch the request first, then read it while the upstream works:
    // no extra task, and the upstream write is not delayed by the parse.
    let early = std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match sending.as_mut().poll(cx) {
            std::task::Poll::Ready(result) => Some(result),
            std::task::Poll::Pending => None,
        })
    })
    .await;
    if outbound.has_analysis() && early.is_none() {
        tokio::task::yield_now().await;
    }
    let (mut observation, changes) = outbound.analyze(&shared).await;
    let result = match early {
        Some(result) => result,
        None => sending.await,
    };
    let mut result = result;
    // Refused for the signature's time, the clock corrected: once more,
    // signed with the corrected clock (`SignedHead`).
    if let (Some(head), Ok(response)) = (signed_head, &result)
        && cloud::observe_answer(&shared.config, response.status(), response.headers())
        && let Some(mut again) = head.sign_again(&shared.config, shared.addr).await
    {
        // The refusal's connection keeps its own answer's keep-alive
        // timeout; the request sent again may go on another one.
        upstream::expire_by_keep_alive(connection, response.headers());
        connection = hyper_util::client::legacy::connect::capture_connection(&mut again);
        result = send_whole(&shared, client, again, host).await;
        if let Ok(response) = &result {
            cloud::observe_answer(&shared.config, response.status(), response.headers());
        }
    }
    // The upstream closed the reused connection it went on before
    // answering: once more, on a new connection.
    if let Err(err) = &result
        && replay::goes_again(err, &connection)
        && let Some(mut again) = replay.take()
    {
        tracing::debug!(
            error = %err,
            "upstream closed a reused connection before answering an idempotent request: \
             sent again on a new connection"
        );
        connection = hyper_util::client::legacy::connect::capture_connection(&mut again);
        result = send_whole(&shared, &shared.unpooled, again, host).await;
    }
    let response = match result {
        Ok(response) => response,
        Err(err) => {
            tracing::warn!(error = %err, "upstream request failed");
            observation.fail(&err);
            return error_response(provider, &err);
        }
    };

    let started = Instant::now();
    let (mut parts, mut incoming) = response.into_parts();
    upstream::expire_by_keep_alive(connection, &parts.headers);
    // A body in a transfer coding the gateway does not relay (as the fast
    // path answers it): hyper's client hands it on still coded.
    if let Some(err) = headers::unrelayed_answer(host, parts.status, &parts.headers, head_only) {
        tracing::warn!(error = %err, "upstream request failed");
        observation.fail(&err);
        return error_response(provider, &err);
    }
    headers::for_client(&mut parts.headers);
    if changes > 0 {
        parts
            .headers
            .insert(REPAIRED_HEADER, HeaderValue::from(changes));
    }
    observation.on_response(
        ResponseMeta::from_headers(parts.status.as_u16(), &parts.headers),
        route.gemini_stream,
        Some(&shared.parse_bounds),
    );
    // A stream that breaks can end with the dialect's error event when it
    // is an SSE stream whose length is not fixed and which is not
    // compressed (`headers::takes_error_event`). A Bedrock event stream
    // (issue 18) is relayed whole frames at a time so that it can end with
    // an exception frame; another Bedrock answer cannot take an error event.
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .map(HeaderValue::as_bytes);
    let content_encoding = parts
        .headers
        .get(header::CONTENT_ENCODING)
        .map(HeaderValue::as_bytes);
    let aligned = route.provider == crate::routes::Provider::Bedrock
        && content_type.is_some_and(|v| v.starts_with(b"application/vnd.amazon.eventstream"));
    let can_append = !parts.headers.contains_key(header::CONTENT_LENGTH)
        && if route.provider == crate::routes::Provider::Bedrock {
            aligned && !headers::is_encoded(content_encoding)
        } else {
            headers::takes_error_event(content_type, content_encoding)
        };
    observation.add_overhead(started.elapsed());
    if head_only || matches!(parts.status.as_u16(), 204 | 304) {
        observation.finish();
        return Response::from_parts(parts, GatewayBody::Full(None));
    }
    let first = first_frame(&mut incoming).await;
    let tee = tee::TeeBody::new(
        incoming,
        observation,
        provider,
        route.dialect,
        upstream.host().to_string(),
        can_append,
        first,
    )
    .aligned_frames(aligned && can_append);
    Response::from_parts(parts, GatewayBody::Tee(Box::new(tee)))
}

/// Sends a request whose body is whole: its answer's head within
/// `first_byte_timeout_ms`, or the error.
async fn send_whole(
    shared: &Shared,
    client: &upstream::HttpClient,
    request: Request<crate::http_client::UpstreamBody>,
    host: &str,
) -> Result<Response<Incoming>, ProxyError> {
    let sending = client.request(request);
    match shared.config.first_byte_timeout {
        Some(limit) => match tokio::time::timeout(limit, sending).await {
            Ok(result) => result.map_err(|e| ProxyError::from_client_error(host, &e)),
            Err(_) => Err(ProxyError::first_byte_timeout(host, limit)),
        },
        None => sending
            .await
            .map_err(|e| ProxyError::from_client_error(host, &e)),
    }
}

/// How long the head of a response waits for its first body bytes.
const FIRST_FRAME_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// The body's first frame when it arrives within [`FIRST_FRAME_WAIT`] of
/// the head (as it does when the upstream writes them together), so that
/// the head and the first bytes reach the client in one write instead of
/// two; else `None` and the head goes at once. A body's frames are only
/// read from the upstream connection once asked for, so without this the
/// head would always leave alone.
async fn first_frame(incoming: &mut Incoming) -> Option<tee::Prefetched> {
    if http_body::Body::is_end_stream(incoming) {
        return None;
    }
    match tokio::time::timeout(FIRST_FRAME_WAIT, incoming.frame()).await {
        Ok(Some(Ok(frame))) => Some(tee::Prefetched::Frame(frame)),
        Ok(Some(Err(e))) => Some(tee::Prefetched::Error(e)),
        Ok(None) => Some(tee::Prefetched::End),
        Err(_) => None,
    }
}
