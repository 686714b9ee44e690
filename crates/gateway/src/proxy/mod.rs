//! The proxy path for one request:
//!
//! 1. collect the body (bounded: larger → 413 in the dialect's envelope);
//! 2. on dialect routes, check the call/result pairing per the repair mode
//!    (`fix`: forward the repaired body, count the changes, answer with
//!    `x-toolwarden-repaired: N`; `report`: record the defects, checked
//!    after dispatch since the body goes unchanged; `off`: skip),
//!    and, once the request is on its way upstream, record its new tool
//!    results (while the upstream works). One pass over the body gives
//!    both the pairing and the view (`toolwarden_wire::inspect`, kept with
//!    the body in a [`ReadBody`]);
//! 3. forward to the provider's upstream — the client's path and query
//!    appended to the base URL, headers unchanged except hop-by-hop and
//!    `host` ([`headers`]) — with the connect and first-byte timeouts;
//! 4. return the upstream status and headers (with the first body bytes
//!    when they follow within 2 ms, so both leave in one write), the body
//!    through a [`tee::TeeBody`] that streams it chunk by chunk while
//!    observing it.
//!
//! Failures map to the client's dialect's envelope in [`crate::errors`].

pub mod headers;
pub mod tee;
pub mod upstream;

use std::{future::Future, sync::Arc, time::Instant};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use toolwarden_coding::Codings;
use toolwarden_wire::Dialect;

use crate::{
    RepairMode,
    body::GatewayBody,
    errors::{ProxyError, ProxyErrorKind, error_response},
    observe::{
        Observation, RequestBase, ResponseMeta, guard, now_ms,
        request::{self, ReadBody},
        session::{self, Session},
    },
    routes::ProxyRoute,
    server::Shared,
};

/// Response header naming how many repair changes were applied.
pub const REPAIRED_HEADER: &str = "x-toolwarden-repaired";

/// Proxy one request.
pub async fn handle(
    shared: Arc<Shared>,
    client: &upstream::HttpClient,
    req: Request<Incoming>,
    route: ProxyRoute,
) -> Response<GatewayBody> {
    let at_ms = now_ms();
    let (mut parts, body) = req.into_parts();
    // Errors go in the envelope the client reads (issue 18: a Vertex
    // `rawPredict` client reads Anthropic's, a Bedrock client AWS's).
    let provider = route.envelope();
    let base = request_base(
        &shared,
        &route,
        parts.uri.path(),
        session::from_headers(&parts.headers),
        at_ms,
    );
    let upstream = match crate::cloud::upstream_for(&shared.config, &route) {
        Ok(upstream) => upstream,
        Err(err) => {
            Observation::new(shared.sinks.clone(), base).fail(&err);
            return error_response(provider, &err);
        }
    };

    // A client that does not send the whole body in time is answered and
    // let go (issue 14), as on the fast path.
    let collected = tokio::time::timeout(
        shared.config.client_body_timeout,
        Limited::new(body, shared.config.max_request_bytes).collect(),
    )
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "the client did not send the whole body within client_body_timeout_ms ({} ms)",
            shared.config.client_body_timeout.as_millis()
        )
        .into())
    });
    let body = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let err = if e.is::<http_body_util::LengthLimitError>() {
                too_large(&shared, upstream.host())
            } else {
                ProxyError::new(
                    ProxyErrorKind::ClientBody,
                    upstream.host(),
                    format!("reading the request body failed: {e}"),
                )
            };
            Observation::new(shared.sinks.clone(), base).fail(&err);
            return error_response(provider, &err);
        }
    };
    let content_encoding = headers::content_encoding(&parts.headers);
    let bodyless = body.is_empty() && route.dialect.is_none();
    // A HEAD answer has no body: it is complete with its head.
    let head_only = parts.method == http::Method::HEAD;
    let mut outbound = Outbound::prepare(&shared, &route, base, body, content_encoding.as_deref());
    if bodyless {
        outbound.observation.metrics_only();
    }

    headers::for_upstream(&mut parts.headers, outbound.forwarded);
    let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    // A cloud route's `/azure`, `/vertex` or `/bedrock` prefix is the
    // gateway's, not the upstream's.
    let path_and_query = crate::cloud::strip_prefix(&route, path_and_query);
    let uri = match upstream.uri_for(path_and_query) {
        Ok(uri) => uri,
        Err(e) => {
            let err = ProxyError::new(ProxyErrorKind::BadRequest, upstream.host(), e.to_string());
            outbound.observation.fail(&err);
            return error_response(provider, &err);
        }
    };
    parts.uri = uri;
    parts.version = http::Version::HTTP_11;
    crate::cloud::authenticate(
        &shared.config,
        &route,
        &mut parts,
        &outbound.forward,
        client,
    )
    .await;
    let upstream_req = Request::from_parts(parts, Full::new(outbound.forward.clone()));

    outbound.observation.sent();
    let host = upstream.host();
    let sending = async {
        let sending = client.request(upstream_req);
        match shared.config.first_byte_timeout {
            Some(limit) => match tokio::time::timeout(limit, sending).await {
                Ok(result) => result.map_err(|e| ProxyError::from_client_error(host, &e)),
                Err(_) => Err(ProxyError::first_byte_timeout(host, limit)),
            },
            None => sending
                .await
                .map_err(|e| ProxyError::from_client_error(host, &e)),
        }
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
    headers::for_client(&mut parts.headers);
    if changes > 0 {
        parts
            .headers
            .insert(REPAIRED_HEADER, HeaderValue::from(changes));
    }
    observation.on_response(
        ResponseMeta::from_headers(parts.status.as_u16(), &parts.headers),
        route.gemini_stream,
        shared.config.response_parse_limit,
    );
    // A stream that breaks can end with the dialect's error event unless
    // its length is fixed or it is compressed.
    // A Bedrock event stream (issue 18) is relayed whole frames at a time
    // so that it can end with an exception frame; another Bedrock answer
    // cannot take an error event.
    let aligned = route.provider == crate::routes::Provider::Bedrock
        && parts.headers.get(header::CONTENT_TYPE).is_some_and(|v| {
            v.as_bytes()
                .starts_with(b"application/vnd.amazon.eventstream")
        });
    let can_append = (route.provider != crate::routes::Provider::Bedrock || aligned)
        && !parts.headers.contains_key(header::CONTENT_LENGTH)
        && !headers::is_encoded(
            parts
                .headers
                .get(header::CONTENT_ENCODING)
                .map(HeaderValue::as_bytes),
        );
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

/// What is known of a proxied request before its body is read.
pub(crate) fn request_base(
    shared: &Shared,
    route: &ProxyRoute,
    path: &str,
    header_session: Option<Session>,
    at_ms: i64,
) -> RequestBase {
    RequestBase {
        request_id: request_id(at_ms),
        at_ms,
        provider: route.provider,
        dialect: route.dialect,
        path: path.to_string(),
        repair_mode: shared.config.repair.as_str(),
        repairs: Vec::new(),
        header_session,
        path_model: route.model.clone(),
    }
}

/// The request body is over the configured limit.
pub(crate) fn too_large(shared: &Shared, host: &str) -> ProxyError {
    let limit = shared.config.max_request_bytes;
    ProxyError::new(
        ProxyErrorKind::BodyTooLarge,
        host,
        format!("the request body is larger than {limit} bytes"),
    )
}

/// What the gateway forwards in place of the client's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarded {
    /// The client's bytes, as they came.
    AsSent,
    /// A repaired body (the client's had no content coding).
    Repaired,
    /// A repaired body decoded from the client's content coding: it goes
    /// without `content-encoding` (every provider reads plain JSON).
    RepairedDecoded,
}

/// A request with its whole body, checked and ready for the upstream: the
/// same steps whichever HTTP path carries it.
pub(crate) struct Outbound {
    /// The body to send upstream (repaired or the client's).
    pub forward: Bytes,
    /// What `forward` is.
    pub forwarded: Forwarded,
    /// Repair changes applied to it.
    pub changes: usize,
    /// The observation that follows the response.
    pub observation: Observation,
    /// The client's body, read or to be read for the records.
    reading: Reading,
    facts: Option<request::RequestFacts>,
}

/// The client's body for the analysis: already read (`fix` mode reads the
/// view and the pairing in one pass before forwarding) or to be read once
/// the request is on its way.
enum Reading {
    Done(ReadBody),
    /// The body could not be decoded from its content coding: it goes as
    /// it came, counted as unparsed.
    Unreadable(String),
    /// `check`: `report` mode, whose pairing check waits too;
    /// `content_encoding`: the client's, to undo first.
    Later {
        body: Bytes,
        check: bool,
        content_encoding: Option<Box<[u8]>>,
    },
}

impl Outbound {
    /// Check the pairing (repairing in `fix` mode) and start observing.
    /// A body in a content coding (`content_encoding`, the client's header)
    /// is read from a decoded copy; the client's bytes go upstream unless a
    /// repair must change them.
    pub(crate) fn prepare(
        shared: &Arc<Shared>,
        route: &ProxyRoute,
        mut base: RequestBase,
        body: Bytes,
        content_encoding: Option<&[u8]>,
    ) -> Outbound {
        let started = Instant::now();
        let mode = shared.config.repair;
        let (forward, forwarded, changes, reading) = match route.dialect {
            // Checked before forwarding: a compressed body is decoded now.
            Some(dialect) if mode == RepairMode::Fix => {
                fix(shared, dialect, body, content_encoding, &mut base.repairs)
            }
            // Read (and decoded) once the body is on its way.
            _ => {
                let reading = Reading::Later {
                    body: body.clone(),
                    check: mode == RepairMode::Report,
                    content_encoding: content_encoding.map(Box::from),
                };
                (body, Forwarded::AsSent, 0, reading)
            }
        };
        let facts = route.dialect.map(|dialect| request::RequestFacts {
            request_id: base.request_id.clone(),
            at_ms: base.at_ms,
            provider: route.provider,
            dialect,
            path_model: base.path_model.clone(),
            header_session: base.header_session.clone(),
        });
        let mut observation = Observation::new(shared.sinks.clone(), base);
        observation.add_overhead(started.elapsed());
        Outbound {
            forward,
            forwarded,
            changes,
            observation,
            reading,
            facts,
        }
    }

    /// Whether [`Outbound::analyze`] has work to do.
    pub(crate) fn has_analysis(&self) -> bool {
        self.facts.is_some()
    }

    /// Once the request is on its way upstream: read it for the records
    /// (while the upstream works). Returns the observation and the number
    /// of repair changes.
    pub(crate) async fn analyze(self, shared: &Shared) -> (Observation, usize) {
        let Outbound {
            changes,
            mut observation,
            reading,
            facts,
            ..
        } = self;
        if let Some(facts) = facts {
            let started = Instant::now();
            let read = match reading {
                Reading::Done(read) => read,
                Reading::Unreadable(reason) => ReadBody::unreadable(reason),
                Reading::Later {
                    body,
                    check,
                    content_encoding,
                } => {
                    let body = match content_encoding {
                        None => Ok(body),
                        Some(v) => decode(shared, &v, &body).map(|d| d.unwrap_or(body)),
                    };
                    match body {
                        Err(reason) => ReadBody::unreadable(reason),
                        // `report` forwards the client's bytes unchanged, so
                        // its check need not delay the upstream write.
                        Ok(body) if check => {
                            let (read, defects) = ReadBody::inspect(facts.dialect, body);
                            observation.add_repairs(
                                defects
                                    .iter()
                                    .map(|d| d.kind.as_str().to_string())
                                    .collect(),
                            );
                            read
                        }
                        Ok(body) => ReadBody::view(facts.dialect, body),
                    }
                }
            };
            if facts.header_session.is_none() {
                find_continued_session(shared, &read).await;
            }
            let info = request::analyze(&shared.sinks, &facts, &read);
            observation.set_request_info(info);
            observation.add_overhead(started.elapsed());
        }
        (observation, changes)
    }
}

/// How long a continuation waits for the store to name its session.
const CONTINUATION_LOOKUP: std::time::Duration = std::time::Duration::from_millis(200);

/// A Responses continuation (`previous_response_id`) whose response this
/// gateway has not seen — another instance served it, or this one before a
/// restart — asks the store for that response's session (at most
/// [`CONTINUATION_LOOKUP`], on the control runtime, where the store
/// lives), so the analysis finds it in `Sinks::responses`. Not found in
/// time: the request keeps a session of its own.
async fn find_continued_session(shared: &Shared, read: &ReadBody) {
    let Ok(view) = read.borrow_dependent() else {
        return;
    };
    let (Some(store), Some(id)) = (&shared.store, view.previous_response_id.as_deref()) else {
        return;
    };
    if shared.sinks.responses.get(id).is_some() {
        return;
    }
    let (store, id) = (store.clone(), id.to_string());
    let lookup = shared.control.spawn(async move {
        let found = store.session_of_response(&id).await;
        (id, found)
    });
    match tokio::time::timeout(CONTINUATION_LOOKUP, lookup).await {
        Ok(Ok((id, Ok(Some((session, source)))))) => {
            let session = Session {
                id: session,
                source: session::source_named(&source),
            };
            shared.sinks.responses.insert(id, session);
        }
        Ok(Ok((_, Ok(None)))) => {}
        // The recorder reports a lost database already; this is per request.
        Ok(Ok((_, Err(e)))) => {
            tracing::debug!(error = %e, "cannot look up a continued response's session")
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "continued-session lookup failed"),
        Err(_) => tracing::debug!("continued-session lookup timed out"),
    }
}

/// `fix` mode, before forwarding: the body (decoded from its content
/// coding, if any) read once for the view and the pairing, and repaired
/// when it must be. Returns what to forward, what it is, the number of
/// changes and the read body.
fn fix(
    shared: &Shared,
    dialect: Dialect,
    body: Bytes,
    content_encoding: Option<&[u8]>,
    repairs: &mut Vec<String>,
) -> (Bytes, Forwarded, usize, Reading) {
    let decoded = match content_encoding.map_or(Ok(None), |v| decode(shared, v, &body)) {
        Ok(decoded) => decoded,
        Err(reason) => return (body, Forwarded::AsSent, 0, Reading::Unreadable(reason)),
    };
    let readable = decoded.clone().unwrap_or_else(|| body.clone());
    let (read, defects) = ReadBody::inspect(dialect, readable.clone());
    let repaired = if defects.is_empty() {
        None
    } else {
        repair(shared, dialect, &readable, repairs)
    };
    match repaired {
        Some((repaired, n)) if decoded.is_some() => {
            (repaired, Forwarded::RepairedDecoded, n, Reading::Done(read))
        }
        Some((repaired, n)) => (repaired, Forwarded::Repaired, n, Reading::Done(read)),
        None => (body, Forwarded::AsSent, 0, Reading::Done(read)),
    }
}

/// `fix` mode, defects found: the repaired body to forward and how many
/// changes were applied (`repairs` gets one defect name per change); `None`
/// when nothing changed. A body the repair cannot handle (or a parser bug)
/// goes as it came.
fn repair(
    shared: &Shared,
    dialect: Dialect,
    body: &[u8],
    repairs: &mut Vec<String>,
) -> Option<(Bytes, usize)> {
    match guard(|| toolwarden_wire::repair(dialect, body)) {
        Ok(Ok(repaired)) if repaired.is_changed() => {
            for change in &repaired.changes {
                let defect = change.defect.as_str();
                shared.sinks.metrics.repair(dialect.as_str(), defect);
                repairs.push(defect.to_string());
            }
            let n = repaired.changes.len();
            Some((Bytes::from(repaired.body.into_owned()), n))
        }
        _ => None,
    }
}

/// The request body decoded from its content coding (`value`, the
/// client's `content-encoding`) for reading: `None` when it has none, an
/// error (unsupported coding, corrupt, decoded larger than
/// `max_request_bytes`) when the gateway cannot read it.
fn decode(shared: &Shared, value: &[u8], body: &[u8]) -> Result<Option<Bytes>, String> {
    let limit = shared.config.max_request_bytes;
    let decoded = guard(|| {
        let codings = Codings::parse(value)?;
        if codings.is_identity() {
            return Ok(None);
        }
        codings.decode(body, limit).map(|b| Some(Bytes::from(b)))
    })?;
    decoded.map_err(|e| format!("request body: {e}"))
}

/// 32 hex digits: the arrival time in ms (12) then 80 random bits (20).
/// Unique like a random id, and in time order, so the store's indexes on
/// request ids grow at their end instead of at random places.
pub(crate) fn request_id(at_ms: i64) -> String {
    let random = fastrand::u128(..) & ((1u128 << 80) - 1);
    format!("{:012x}{random:020x}", at_ms.clamp(0, (1 << 48) - 1))
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

#[cfg(test)]
mod tests {
    use super::request_id;

    #[test]
    fn request_ids_are_unique_and_in_time_order() {
        let a = request_id(1_700_000_000_000);
        let b = request_id(1_700_000_000_001);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(a < b);
        assert_eq!(&a[..12], "018bcfe56800");
        assert_ne!(request_id(5), request_id(5));
        assert_eq!(request_id(-1).len(), 32);
    }
}
