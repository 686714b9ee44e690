//! The Responses API's WebSocket mode: `GET /v1/responses` with
//! `Upgrade: websocket` (the Codex CLI's first transport; the SDKs'
//! `client.responses.connect()`); and any other WebSocket to a provider
//! ([`upgrade_route`]: the Realtime API, Gemini Live), relayed the same way,
//! a voice socket's messages read by [`live`] (its tool calls and results).
//!
//! The gateway ends the WebSocket on both sides (framing, masking,
//! fragments, ping/pong, close codes and permessage-deflate by the `yawc`
//! crate) so that it can read each message:
//!
//! 1. [`handle`]: the upgrade goes to the provider's upstream first
//!    ([`upstream::open`]: `ws://` for an `http://` upstream, `wss://` over
//!    the gateway's rustls settings for `https://`), with the client's
//!    headers as for HTTP (credentials pass, never logged) and
//!    permessage-deflate offered when the client offered it. An upstream
//!    that refuses gives the client its own answer (status, headers,
//!    body); one that accepts has its `101` headers (e.g. Codex's
//!    `x-codex-turn-state`, `openai-model`) copied onto the gateway's `101`.
//!    A Vertex AI Live socket without `vertex_upstream` is the exception:
//!    its location comes in its first message, so the client's upgrade is
//!    answered first and the upstream opened after ([`vertex`]);
//! 2. [`relay::run`] then carries messages both ways as they come, one
//!    message read, one written, nothing held back;
//! 3. [`turns::Turns`] reads them: each `response.create` message is a
//!    Responses request (the HTTP path's [`crate::proxy::Outbound`]: view,
//!    pairing check, `fix`-mode repair — a repaired message goes re-framed —
//!    session from the upgrade's headers, `previous_response_id` chains) and
//!    the events that answer it are its response, fed to the same
//!    Responses stream parser as SSE until `response.completed` /
//!    `.failed` / `.incomplete` / `error`. A message it cannot read is
//!    relayed unread and counted (`toolwarden_unparsed_requests_total`; an
//!    upstream message that is not a whole JSON object, `toolwarden_unparsed_responses_total`).
//!
//! Faults: an oversize message (`ws_max_message_bytes`) closes its sender
//! with 1009 and the other side with 1009; a client message the bound on
//! request bodies held at once has no room for, or an upstream message the
//! bound on responses held at once has none for, closes the client with
//! 1013 and the upstream with 1001 ([`metered`]); bad frames or deflate data get
//! the library's answer, and the other side is closed with 1011 (1001 when
//! a peer went away or its connection failed, which is how the library
//! reports data that does not inflate); a close from either side is passed on with its code and reason.
//! A turn cut short is recorded with what was seen and the error. A side
//! that leaves a write waiting for `client_body_timeout` (it reads nothing)
//! counts as broken.
//!
//! Shutdown ([`Stopping`]): a socket with no turn open is closed at once
//! with 1001 (going away) to the client and to the upstream, each close
//! handshake awaited briefly; one with turns open first lets them finish,
//! until the grace period ends (`shutdown_grace_ms`). The worker waits for
//! its sockets before it stops, and the gateway for their guards.

mod inject;
pub(crate) mod live;
mod metered;
mod relay;
pub(crate) mod turns;
pub(crate) mod upstream;
mod vertex;

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use crate::{
    body::GatewayBody,
    body::error_response,
    h1::pool::Pool,
    observe::{Observation, ResponseMeta, client_headers::ClientHeaders, now_ms},
    proxy::{self, headers},
    routes::{ProxyRoute, Route},
    state::Shared,
    upstream_url::Upstream,
};

/// What a relayed socket needs to know about the gateway stopping.
#[derive(Debug, Clone)]
pub(crate) struct Stopping {
    /// `true`: close once the open turns are answered.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// `true`: the grace period is over, close now.
    pub force: tokio::sync::watch::Receiver<bool>,
    /// Held while the socket is open: the gateway's connection guard and
    /// the worker's socket guard (never read: dropped with the socket).
    #[allow(dead_code)]
    pub guards: [tokio::sync::mpsc::Sender<()>; 2],
    /// The client connection's places in the counts (its slot under
    /// `max_client_connections`, its worker's load), held while the socket
    /// is open: an upgraded connection's task ends when hyper hands the
    /// socket over, and the socket still counts (never read).
    #[allow(dead_code)]
    pub places: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

/// Most bytes of a refusing upstream's body passed to the client.
const MAX_REFUSAL_BODY: usize = 1 << 20;
/// How long a refusing upstream's body may take to arrive.
const REFUSAL_BODY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The route of a WebSocket upgrade (a `GET` with `Upgrade: websocket`):
/// - on a Responses path (`/v1/responses`, or the ChatGPT backend's
///   `…/backend-api/codex/responses`), WebSocket mode, read;
/// - on any other path (the OpenAI Realtime API's `/v1/realtime`, Gemini
///   Live's `/ws/…BidiGenerateContent`, …), the provider it belongs to, as
///   for HTTP ([`Route::classify`]), when that provider has a fixed
///   upstream, is Azure OpenAI, or is Vertex AI's Live API
///   (`/ws/google.cloud.aiplatform.…LlmBidiService/BidiGenerateContent`,
///   to `vertex_upstream`, else to its first message's location's endpoint
///   ([`vertex`]), with the gateway's
///   Google token when the client sends no credential, as for HTTP; another
///   cloud route's upgrade stays the HTTP path's): relayed, and read when
///   it is a voice socket ([`live::Live::protocol_of`]). Without this such
///   an upgrade went as a plain `GET`, its `Upgrade` and `Connection`
///   headers dropped as hop-by-hop, and the provider refused it (426).
pub(crate) fn upgrade_route(
    method: &Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    upstreams: &crate::Upstreams,
) -> Option<ProxyRoute> {
    if *method != Method::GET || !is_websocket_upgrade(headers) {
        return None;
    }
    let path = uri.path();
    let responses = ProxyRoute::dialect_post(path)
        .or_else(|| ProxyRoute::chatgpt(path))
        .filter(|r| r.dialect == Some(toolwarden_wire::Dialect::OpenAiResponses));
    if responses.is_some() {
        return responses;
    }
    match Route::classify(method, path, uri.query(), headers) {
        Route::Proxy(route)
            if route.upstream(upstreams).is_some()
                || is_azure(&route)
                || crate::routes::cloud::is_vertex_live(&route, path) =>
        {
            Some(route)
        }
        _ => None,
    }
}

/// An Azure OpenAI route (`/openai/realtime?…deployment=…`,
/// `/openai/v1/realtime?model=…`, with or without `/azure`): its upgrade
/// goes to `azure_upstream` as the HTTP path's requests do.
fn is_azure(route: &ProxyRoute) -> bool {
    route
        .cloud
        .as_ref()
        .is_some_and(|c| c.target == crate::routes::cloud::CloudTarget::Azure)
}

/// `Upgrade: websocket` (any case).
fn is_websocket_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim().eq_ignore_ascii_case("websocket"))
}

/// Whether the client offered permessage-deflate.
fn offers_deflate(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::SEC_WEBSOCKET_EXTENSIONS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|e| {
            e.split(';')
                .next()
                .is_some_and(|n| n.trim().eq_ignore_ascii_case("permessage-deflate"))
        })
}

/// Whether the client's permessage-deflate offer (the first, as the
/// library reads it) has `client_max_window_bits`: the client can compress
/// with a window smaller than 15 bits and lets the server choose. Given no
/// value, the library answers with the smallest (9 bits, a 512-byte
/// window: Chrome's and Python `websockets`' offer), and those clients
/// compress poorly; the gateway answers 15 (or the client's own value,
/// when smaller). An offer without it is answered without it (RFC 7692
/// §7.1.2.2).
fn offers_client_window(headers: &HeaderMap) -> bool {
    let Some(offer) = (headers.get(header::SEC_WEBSOCKET_EXTENSIONS))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_start().strip_prefix("permessage-deflate"))
    else {
        return false;
    };
    let offer = offer.split(',').next().unwrap_or_default();
    offer
        .split(';')
        .skip(1)
        .any(|param| param.split('=').next().unwrap_or_default().trim() == "client_max_window_bits")
}

/// The client side's settings ([`options`]), with the client's window at
/// 15 bits when its offer leaves it to the gateway ([`offers_client_window`]).
fn client_options(shared: &Shared, headers: &HeaderMap) -> yawc::Options {
    let deflate = offers_deflate(headers);
    let options = options(shared, deflate);
    if deflate && offers_client_window(headers) {
        options.with_client_max_window_bits(15)
    } else {
        options
    }
}

/// Bytes each socket's read buffer starts with (and returns to after a
/// larger message, which it grows for): as the HTTP path's reads
/// (`h1::READ_CHUNK`), so that a turn's message or the events that arrive
/// together are one read (with 4 KiB, a 5 KB `response.create` took two
/// reads and a re-allocation, and a burst of events two reads; see
/// BENCHMARKS.md). An idle socket does not touch the pages.
const READ_BUFFER: usize = 16 * 1024;

/// The socket settings both sides use: message limit, deflate when offered.
/// The write buffer starts empty: an idle socket holds none, a busy one
/// keeps what its messages needed.
fn options(shared: &Shared, deflate: bool) -> yawc::Options {
    // yawc refuses a message of its limit and more: one of exactly
    // `ws_max_message_bytes` is allowed.
    let limit = shared.config.ws_max_message_bytes.saturating_add(1);
    let options = yawc::Options::default()
        .with_max_payload_read(limit)
        .with_max_read_buffer(limit)
        .with_read_buffer_capacity(READ_BUFFER)
        .with_write_buffer_capacity(0)
        .with_no_delay();
    if deflate {
        options.with_compression_level(yawc::CompressionLevel::fast())
    } else {
        options
    }
}

/// What the upstream half of an upgrade needs of the client's request,
/// kept past the handshake (a Vertex AI Live socket opens its upstream
/// once the client's first message has come, [`vertex`]).
struct Upgrade {
    shared: Arc<Shared>,
    pool: Arc<Pool>,
    client: crate::upstream::HttpClient,
    route: ProxyRoute,
    /// The client's path (a cloud route's prefix included) and query.
    path: String,
    query: Option<String>,
    /// The path and query the upstream is asked for.
    target: String,
    uri: http::Uri,
    headers: HeaderMap,
    header_session: ClientHeaders,
    deflate: bool,
    at_ms: i64,
}

/// Serve one upgrade request: open the upstream socket, then answer the
/// client (`101`, or the upstream's refusal) and relay in a task. A
/// Vertex AI Live socket without `vertex_upstream` is answered first, its
/// upstream opened at its location's endpoint once its first message has
/// named it ([`vertex`]).
pub(crate) async fn handle(
    shared: Arc<Shared>,
    pool: Arc<Pool>,
    client: crate::upstream::HttpClient,
    mut req: Request<Incoming>,
    route: ProxyRoute,
    stopping: Stopping,
) -> Response<GatewayBody> {
    let at_ms = now_ms();
    let provider = route.provider;
    let path = req.uri().path().to_string();
    let deflate = offers_deflate(req.headers());
    // A fixed upstream, or Azure's (an error naming the flag when none);
    // a Vertex AI Live socket's fallback.
    let upstream = match proxy::cloud::upstream_for(&shared.config, &route) {
        Ok(upstream) => upstream.into_owned(),
        Err(err) => return error_response(provider, &err),
    };
    // The client's handshake first: a bad one opens no upstream socket
    // (which would carry its credentials and be dropped unclosed).
    let client_side = client_options(&shared, req.headers());
    let (response, client_ws) = match metered::accept(&mut req, client_side, &shared.body_budget) {
        Ok(upgrade) => upgrade,
        Err(e) => return bad_handshake(&e),
    };
    let client_target = req.uri().path_and_query().map_or("/", |pq| pq.as_str());
    let up = Upgrade {
        target: route.upstream_path_and_query(client_target).into_owned(),
        query: req.uri().query().map(str::to_string),
        uri: req.uri().clone(),
        header_session: ClientHeaders::from_headers(req.headers()),
        headers: std::mem::take(req.headers_mut()),
        shared,
        pool,
        client,
        route,
        path,
        deflate,
        at_ms,
    };
    let (mut parts, _) = response.into_parts();
    if vertex::follows_location(&up.shared.config, &up.route, &up.path) {
        tokio::spawn(async move {
            match client_ws.await {
                Ok((client, meter)) => vertex::run(up, upstream, client, meter, stopping).await,
                Err(e) => tracing::debug!(error = %e, "the client's websocket upgrade failed"),
            }
        });
        return Response::from_parts(parts, GatewayBody::full(Bytes::new()));
    }
    let opened = match up.open(&upstream).await {
        Ok(opened) => opened,
        Err(upstream::OpenError::Refused(answer)) => {
            return refusal(up.observation(), *answer, provider, upstream.host()).await;
        }
        Err(upstream::OpenError::Failed(err)) => {
            tracing::warn!(error = %err, "websocket upgrade to the upstream failed");
            up.observation().fail(&err);
            return error_response(provider, &err);
        }
    };
    copy_upstream_headers(&opened.headers, &mut parts.headers);
    let waits = up.waits();
    let turns = up.accepted(&opened.headers);
    let upstream_ws = (opened.socket, opened.meter);
    tokio::spawn(async move {
        match client_ws.await {
            Ok(client) => {
                relay::run(client, upstream_ws, turns, stopping, waits, None).await;
            }
            Err(e) => tracing::debug!(error = %e, "the client's websocket upgrade failed"),
        }
    });
    Response::from_parts(parts, GatewayBody::full(Bytes::new()))
}

/// The answer to a client handshake the gateway cannot accept: 400, and
/// for a version other than 13 the version it speaks (RFC 6455 §4.2.2,
/// §4.4), which a client reads to retry with it.
fn bad_handshake(error: &yawc::WebSocketError) -> Response<GatewayBody> {
    let mut response = Response::new(GatewayBody::full(format!(
        "bad websocket upgrade: {error}\n"
    )));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    if matches!(error, yawc::WebSocketError::InvalidSecWebsocketVersion) {
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            http::HeaderValue::from_static("13"),
        );
    }
    response
}

// === impl Upgrade ===

impl Upgrade {
    /// Open the upstream socket at `upstream`, with the client's headers
    /// ([`upstream_head`]) and the first-byte timeout for its answer.
    async fn open(&self, upstream: &Upstream) -> Result<upstream::Opened, upstream::OpenError> {
        let head = upstream_head(self, upstream).await;
        upstream::open(
            &self.pool,
            (upstream, &self.target),
            &head,
            options(&self.shared, self.deflate),
            self.shared.config.first_byte_timeout,
            &self.shared.parse_bounds.copies,
        )
        .await
    }

    /// The upgrade's record, to finish as refused or failed.
    fn observation(&self) -> Observation {
        Observation::new(self.shared.sinks.clone(), self.base())
    }

    fn base(&self) -> crate::observe::RequestBase {
        proxy::request_base(
            &self.shared,
            &self.route,
            &self.path,
            self.header_session.clone(),
            self.at_ms,
        )
    }

    /// The upstream accepted (its `101` headers): the upgrade recorded
    /// (unless its messages are read as Responses turns), and what reads
    /// the socket's messages.
    fn accepted(self, upstream_headers: &HeaderMap) -> turns::Turns {
        // WebSocket mode's messages are read as Responses turns; any other
        // socket's upgrade is recorded as the pass-through request it is.
        let reads = self.route.dialect == Some(toolwarden_wire::Dialect::OpenAiResponses);
        // A voice socket's messages are read too, the socket one session.
        let live = live::Live::protocol_of(&self.route, &self.path).map(|protocol| {
            live::Live::new(
                self.shared.clone(),
                self.route.clone(),
                self.path.clone(),
                self.query.as_deref(),
                self.header_session.clone(),
                protocol,
            )
        });
        if !reads {
            let mut base = self.base();
            if let Some(live) = &live {
                base.header_session = Some(live.session().clone());
            }
            let mut observation = Observation::new(self.shared.sinks.clone(), base);
            observation.sent();
            observation.on_response(
                ResponseMeta::from_headers(
                    StatusCode::SWITCHING_PROTOCOLS.as_u16(),
                    upstream_headers,
                ),
                false,
                None,
            );
            observation.finish();
        }
        turns::Turns::new(
            self.shared,
            self.route,
            self.path,
            self.header_session,
            reads,
            live,
        )
    }

    /// How long the relay waits on a side: a write left waiting (it reads
    /// nothing), a close.
    fn waits(&self) -> relay::Waits {
        relay::Waits {
            stall: self.shared.config.client_body_timeout,
            close: self.shared.config.ws_close_wait,
            forced_close: self.shared.config.ws_forced_close_wait,
        }
    }
}

/// The client's upgrade headers as they go upstream: a Vertex AI socket
/// without a credential of the client's gets the gateway's Google token
/// when it has one and lends it ([`proxy::cloud::authenticate`], the HTTP
/// path's rule: not to a web page elsewhere); every other socket's go as
/// they came (the handshake's own are the gateway's, [`upstream::open`]).
async fn upstream_head(up: &Upgrade, upstream: &Upstream) -> HeaderMap {
    if up.route.provider != crate::routes::Provider::Vertex {
        return up.headers.clone();
    }
    let lend =
        crate::local::lends_credentials(&up.headers, up.shared.config.cloud.lend_token.as_ref());
    let (mut parts, ()) = Request::new(()).into_parts();
    parts.uri = upstream
        .uri_for(&up.target)
        .unwrap_or_else(|_| up.uri.clone());
    parts.headers = up.headers.clone();
    let config = &up.shared.config;
    let listening = up.shared.addr;
    proxy::cloud::authenticate(
        config,
        listening,
        &up.route,
        &mut parts,
        &[],
        &up.client,
        lend,
    )
    .await;
    parts.headers
}

/// The upstream's `101` headers the client sees too, each with all its
/// values (the handshake's own and hop-by-hop ones, those its `Connection`
/// names included, are the gateway's; the chosen subprotocol passes).
fn copy_upstream_headers(from: &HeaderMap, to: &mut HeaderMap) {
    // The gateway's own, named before any is copied: a header the upstream
    // repeats (`set-cookie`) is not taken for one of them at its second value.
    let own: Vec<http::HeaderName> = to.keys().cloned().collect();
    let hop_by_hop = headers::named_in_connection(from);
    for (name, value) in from {
        let n = name.as_str();
        if headers::is_hop_by_hop(n)
            || hop_by_hop.contains(name)
            || (n.starts_with("sec-websocket-") && n != "sec-websocket-protocol")
            || n == "content-length"
            || own.contains(name)
        {
            continue;
        }
        to.append(name.clone(), value.clone());
    }
}

/// The first `limit` bytes of `body`: what arrived within `wait`, a longer
/// body cut there, a broken one as far as it came.
async fn refusal_body<B>(mut body: B, limit: usize, wait: std::time::Duration) -> Bytes
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    let mut out = bytes::BytesMut::new();
    let read = async {
        while out.len() < limit {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        let take = data.len().min(limit - out.len());
                        out.extend_from_slice(&data[..take]);
                    }
                }
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(wait, read).await;
    out.freeze()
}

/// The upstream's refusal of an upgrade recorded like an HTTP response:
/// its head (headers as the client would get them) and the first `limit`
/// bytes of its body.
async fn refused(
    mut observation: Observation,
    answer: Response<Incoming>,
    limit: usize,
) -> (http::response::Parts, Bytes) {
    let (mut parts, body) = answer.into_parts();
    headers::for_client(&mut parts.headers);
    observation.on_response(
        ResponseMeta::from_headers(parts.status.as_u16(), &parts.headers),
        false,
        None,
    );
    let body = refusal_body(body, limit, REFUSAL_BODY_WAIT).await;
    observation.finish();
    (parts, body)
}

/// The upstream answered the upgrade with something other than `101`: the
/// client gets that answer, recorded like an HTTP response; or, when its
/// body is in a transfer coding the gateway does not relay, the error that
/// says so, as on the HTTP routes (`headers::unrelayed_answer`).
async fn refusal(
    observation: Observation,
    answer: Response<Incoming>,
    provider: crate::Provider,
    host: &str,
) -> Response<GatewayBody> {
    if let Some(err) = headers::unrelayed_answer(host, answer.status(), answer.headers(), false) {
        tracing::warn!(error = %err, "websocket upgrade to the upstream failed");
        observation.fail(&err);
        return error_response(provider, &err);
    }
    let (mut parts, body) = refused(observation, answer, MAX_REFUSAL_BODY).await;
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::TRANSFER_ENCODING);
    if parts.status == StatusCode::SWITCHING_PROTOCOLS {
        parts.status = StatusCode::BAD_GATEWAY;
    }
    Response::from_parts(parts, GatewayBody::full(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use http_body_util::{Full, StreamBody};

    /// A header the upstream's `101` names in its `Connection` is
    /// hop-by-hop (RFC 9110 §7.6.1): it stays on the gateway's hop, as
    /// the HTTP path drops it; the others pass with all their values.
    #[test]
    fn headers_the_upstreams_connection_names_are_not_copied() {
        let mut from = HeaderMap::new();
        for (name, value) in [
            ("connection", "Upgrade, X-Hop-Secret"),
            ("connection", "x-other-hop"),
            ("upgrade", "websocket"),
            ("sec-websocket-accept", "abc"),
            ("sec-websocket-protocol", "realtime"),
            ("x-hop-secret", "upstream-internal"),
            ("x-other-hop", "1"),
            ("openai-model", "gpt-realtime"),
            ("set-cookie", "a=1"),
            ("set-cookie", "b=2"),
        ] {
            from.append(
                http::HeaderName::from_static(name),
                http::HeaderValue::from_static(value),
            );
        }
        let mut to = HeaderMap::new();
        to.insert(header::UPGRADE, http::HeaderValue::from_static("websocket"));
        copy_upstream_headers(&from, &mut to);
        let mut names: Vec<&str> = to.keys().map(http::HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "openai-model",
                "sec-websocket-protocol",
                "set-cookie",
                "upgrade"
            ]
        );
        assert_eq!(to.get_all("set-cookie").iter().count(), 2);
    }

    #[tokio::test]
    async fn a_refusal_body_is_cut_at_the_limit_and_the_wait() {
        let long = Full::new(Bytes::from(vec![b'x'; 3000]));
        assert_eq!(
            refusal_body(long, 1024, REFUSAL_BODY_WAIT).await.len(),
            1024
        );
        let short = Full::new(Bytes::from_static(b"{\"error\":\"no\"}"));
        assert_eq!(
            refusal_body(short, 1024, REFUSAL_BODY_WAIT).await.as_ref(),
            b"{\"error\":\"no\"}"
        );
        // A body that sends a part and then nothing: what came, at the wait.
        let stream = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(
            http_body::Frame::data(Bytes::from_static(b"part")),
        )])
        .chain(futures_util::stream::pending());
        let started = std::time::Instant::now();
        let got = refusal_body(
            StreamBody::new(stream),
            1024,
            std::time::Duration::from_millis(200),
        )
        .await;
        assert_eq!(got.as_ref(), b"part");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
