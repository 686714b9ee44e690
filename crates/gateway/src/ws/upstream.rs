//! The upstream half of a WebSocket upgrade: a new connection (plain or
//! TLS, [`Pool::connect`]), the client's upgrade request re-sent on it
//! with a key of the gateway's, and the answer checked. A `101` gives the
//! upstream socket, its connection metered against the bound on responses
//! held at once ([`super::metered`]); anything else is handed back for the
//! client.

use std::sync::Arc;

use base64::Engine;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use sha1::{Digest, Sha1};

use super::metered::{Meter, Metered, MeteredSocket};
use crate::{
    errors::{ProxyError, ProxyErrorKind},
    h1::pool::Pool,
    limits::body_budget::BodyBudget,
    proxy::headers,
    upstream_url::Upstream,
};

/// The upstream accepted the upgrade.
pub(crate) struct Opened {
    /// The socket.
    pub socket: MeteredSocket,
    /// What its messages hold of the bound on responses held at once.
    pub meter: Arc<Meter>,
    /// Its `101` headers.
    pub headers: HeaderMap,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened").finish_non_exhaustive()
    }
}

/// The upstream did not accept the upgrade.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// It answered, but not with a valid `101`: the client gets this answer.
    Refused(Box<Response<Incoming>>),
    /// No answer (connect, TLS, I/O, a `101` without a valid accept key).
    Failed(ProxyError),
}

/// The handshake's GUID (RFC 6455 §1.3).
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Open the upstream socket for the client's upgrade request, whose
/// headers are `client_head`, at `path_and_query` (the client's, a cloud
/// route's prefix cut); its answer is awaited at most `answer_timeout`
/// (the first-byte timeout). Its messages are held against `budget`.
pub(crate) async fn open(
    pool: &Pool,
    (upstream, path_and_query): (&Upstream, &str),
    client_head: &HeaderMap,
    options: yawc::Options,
    answer_timeout: Option<std::time::Duration>,
    budget: &Arc<BodyBudget>,
) -> Result<Opened, OpenError> {
    let host = upstream.host();
    let failed = |kind: ProxyErrorKind, detail: String| {
        OpenError::Failed(ProxyError::new(kind, host, detail))
    };
    let uri = upstream
        .uri_for(path_and_query)
        .map_err(|e| failed(ProxyErrorKind::BadRequest, e.to_string()))?;
    let key = base64::engine::general_purpose::STANDARD.encode(fastrand::u128(..).to_le_bytes());
    let mut head = client_head.clone();
    for_upstream(&mut head);
    let mut request = Request::get(uri.path_and_query().map_or("/", |pq| pq.as_str()))
        .body(Empty::<bytes::Bytes>::new())
        .map_err(|e| failed(ProxyErrorKind::BadRequest, e.to_string()))?;
    let h = request.headers_mut();
    h.insert(
        header::HOST,
        HeaderValue::from_str(upstream.authority())
            .map_err(|e| failed(ProxyErrorKind::BadRequest, e.to_string()))?,
    );
    h.extend(head);
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(
        header::SEC_WEBSOCKET_VERSION,
        HeaderValue::from_static("13"),
    );
    h.insert(
        header::SEC_WEBSOCKET_KEY,
        HeaderValue::from_str(&key)
            .map_err(|e| failed(ProxyErrorKind::BadRequest, e.to_string()))?,
    );
    if options.compression.is_some() {
        h.insert(
            header::SEC_WEBSOCKET_EXTENSIONS,
            HeaderValue::from_static("permessage-deflate; client_max_window_bits"),
        );
    }

    let io = pool.connect(upstream).await.map_err(OpenError::Failed)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| failed(ProxyErrorKind::Connect, e.to_string()))?;
    tokio::spawn(async move {
        if let Err(e) = conn.with_upgrades().await {
            tracing::debug!(error = %e, "upstream websocket handshake connection ended");
        }
    });
    let sending = sender.send_request(request);
    let answer = match answer_timeout {
        Some(limit) => tokio::time::timeout(limit, sending)
            .await
            .map_err(|_| OpenError::Failed(ProxyError::first_byte_timeout(host, limit)))?,
        None => sending.await,
    };
    let mut response = answer.map_err(|e| failed(ProxyErrorKind::Connect, e.to_string()))?;
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        return Err(OpenError::Refused(Box::new(response)));
    }
    let accept = response.headers().get(header::SEC_WEBSOCKET_ACCEPT);
    if accept.map(HeaderValue::as_bytes) != Some(accept_key(key.as_bytes()).as_bytes()) {
        return Err(failed(
            ProxyErrorKind::MidStream,
            "the upstream's 101 has no valid sec-websocket-accept".into(),
        ));
    }
    let extensions = response
        .headers()
        .get(header::SEC_WEBSOCKET_EXTENSIONS)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let headers = response.headers().clone();
    let upgraded = hyper::upgrade::on(&mut response)
        .await
        .map_err(|e| failed(ProxyErrorKind::MidStream, e.to_string()))?;
    let meter = Meter::new(budget);
    let socket = yawc::WebSocket::from_stream_with_extensions(
        Metered::new(TokioIo::new(upgraded), meter.clone()),
        yawc::Role::Client,
        extensions.as_deref(),
        options,
    )
    .map_err(|e| failed(ProxyErrorKind::MidStream, e.to_string()))?;
    Ok(Opened {
        socket,
        meter,
        headers,
    })
}

/// The client's upgrade headers for the upstream: hop-by-hop ones, `host`
/// and the handshake's own (key, version, extensions: the gateway's) go.
fn for_upstream(h: &mut HeaderMap) {
    headers::for_upstream(h, crate::proxy::Forwarded::AsSent);
    for name in [
        header::SEC_WEBSOCKET_KEY,
        header::SEC_WEBSOCKET_VERSION,
        header::SEC_WEBSOCKET_EXTENSIONS,
        header::SEC_WEBSOCKET_ACCEPT,
        header::CONTENT_LENGTH,
    ] {
        h.remove(name);
    }
}

/// `Sec-WebSocket-Accept` for a key.
pub(crate) fn accept_key(key: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(GUID);
    base64::engine::general_purpose::STANDARD.encode(sha.finalize())
}
