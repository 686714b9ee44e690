//! The request pipeline both HTTP paths share (hyper's in [`crate::proxy`],
//! the fast path in [`crate::h1`], and WebSocket turns in [`crate::ws`]):
//! what is known of a request before its body ([`request_base`]), the
//! body's limit ([`too_large`]), and [`Outbound`], which checks the
//! pairing (repairing in `fix` mode), decodes content codings and starts
//! the observation. Headers for the upstream are in [`headers`].
//!
//! Nothing here depends on either HTTP path; both depend on this.

pub(crate) mod headers;
pub(crate) mod upstream;

use std::{sync::Arc, time::Instant};

use bytes::Bytes;
use toolwarden_coding::Codings;
use toolwarden_wire::{Dialect, Target};

use crate::{
    RepairMode,
    errors::{ProxyError, ProxyErrorKind},
    limits::body_budget::NoRoom,
    metrics::events::RepairApplied,
    observe::{
        Observation, RequestBase,
        client_headers::ClientHeaders,
        guard,
        request::{self, ReadBody},
        session::{self, Session},
    },
    routes::ProxyRoute,
    state::Shared,
};

/// Response header naming how many repair changes were applied.
pub const REPAIRED_HEADER: &str = "x-toolwarden-repaired";

/// What is known of a proxied request before its body is read.
pub(crate) fn request_base(
    shared: &Shared,
    route: &ProxyRoute,
    path: &str,
    headers: ClientHeaders,
    at_ms: i64,
) -> RequestBase {
    // The upstream the request goes to (`server.*` of its span); a route
    // with none fails later, on its own.
    let server = upstream::upstream_for(&shared.config, route).ok();
    RequestBase {
        request_id: request_id(at_ms),
        at_ms,
        provider: route.provider,
        dialect: route.dialect,
        path: path.to_string(),
        repair_mode: shared.config.repair.as_str(),
        repairs: Vec::new(),
        // A pass-through request (not read) on the Conversations API is
        // the conversation's its path names.
        header_session: headers.session.or_else(|| match route.dialect {
            None => session::of_conversation_path(path),
            Some(_) => None,
        }),
        trace_parent: headers.trace_parent,
        trace_state: headers.trace_state,
        server_address: server.as_ref().map(|u| u.host().to_string()),
        server_port: server.map(|u| u.port()),
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

/// The error for a body that found no room under
/// `max_buffered_request_bytes`.
pub(crate) fn overloaded(host: &str, no_room: NoRoom) -> ProxyError {
    ProxyError::new(
        ProxyErrorKind::Overloaded,
        host,
        format!(
            "the gateway holds max_buffered_request_bytes ({} bytes) of request bodies; try again",
            no_room.max
        ),
    )
}

/// What the gateway forwards in place of the client's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forwarded {
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
        // What the body is judged against: the dialect, and for Bedrock
        // Converse the family of the model the path names.
        let target = route
            .dialect
            .map(|dialect| Target::of_path(dialect, route.model.as_deref()));
        let (forward, forwarded, changes, reading) = match target {
            // Checked before forwarding: a compressed body is decoded now.
            Some(target) if mode == RepairMode::Fix => {
                fix(shared, target, body, content_encoding, &mut base.repairs)
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
        let facts = target.map(|target| request::RequestFacts {
            request_id: base.request_id.clone(),
            at_ms: base.at_ms,
            provider: route.provider,
            target,
            path_model: base.path_model.clone(),
            header_session: base.header_session.clone(),
            trace_parent: base.trace_parent,
            trace_state: base.trace_state.clone(),
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
                            let (read, defects) = ReadBody::inspect(facts.target, body);
                            observation.add_repairs(
                                defects
                                    .iter()
                                    .map(|d| d.kind.as_str().to_string())
                                    .collect(),
                            );
                            read
                        }
                        Ok(body) => ReadBody::view(facts.target.dialect, body),
                    }
                }
            };
            if facts.header_session.is_none() {
                find_continued_session(shared, facts.target.dialect, &read).await;
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

/// A Responses continuation (`previous_response_id`), or an Anthropic
/// message thread's (`thread.previous_message_id`), whose response this
/// gateway has not seen — another instance served it, or this one before a
/// restart — asks the store for that response's session (at most
/// [`CONTINUATION_LOOKUP`], on the control runtime, where the store
/// lives), so the analysis finds it in `Sinks::responses`. Not found in
/// time: the request keeps a session of its own. (The store indexes the
/// requests of Responses alone: a thread's reply is found by the calls it
/// made, which is every reply a `continue` answers with tool results.)
async fn find_continued_session(shared: &Shared, dialect: Dialect, read: &ReadBody) {
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
        // Stored in its bounded form, as the response's record has it.
        let clipped = crate::limits::clip_id(&id);
        let found = if dialect == Dialect::OpenAiResponses {
            store.session_of_response(&clipped).await
        } else {
            store.session_of_calling_reply(&clipped).await
        };
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
    target: Target,
    body: Bytes,
    content_encoding: Option<&[u8]>,
    repairs: &mut Vec<String>,
) -> (Bytes, Forwarded, usize, Reading) {
    let decoded = match content_encoding.map_or(Ok(None), |v| decode(shared, v, &body)) {
        Ok(decoded) => decoded,
        Err(reason) => return (body, Forwarded::AsSent, 0, Reading::Unreadable(reason)),
    };
    let readable = decoded.clone().unwrap_or_else(|| body.clone());
    let (read, defects) = ReadBody::inspect(target, readable.clone());
    let repaired = if defects.is_empty() {
        None
    } else {
        repair(shared, target, &readable, repairs)
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
    target: Target,
    body: &[u8],
    repairs: &mut Vec<String>,
) -> Option<(Bytes, usize)> {
    match guard(|| toolwarden_wire::repair(target, body)) {
        Ok(Ok(repaired)) if repaired.is_changed() => {
            for change in &repaired.changes {
                shared.sinks.metrics.emit(RepairApplied {
                    dialect: target.dialect,
                    defect: change.defect,
                });
                repairs.push(change.defect.as_str().to_string());
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
    let at = u128::try_from(at_ms.clamp(0, (1 << 48) - 1)).unwrap_or(0);
    hex_digits(at << 80 | random)
}

/// `value`'s 32 hex digits, by hand: `format!` with a width and padding
/// cost ~2 k instructions a request, a tenth of that here.
fn hex_digits(value: u128) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    (0..32)
        .rev()
        .map(|nibble| {
            char::from(DIGITS[usize::try_from((value >> (4 * nibble)) & 0xf).unwrap_or(0)])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{hex_digits, request_id};

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

    #[test]
    fn hex_digits_are_formats() {
        for _ in 0..1000 {
            let v = fastrand::u128(..) >> fastrand::u32(0..128);
            assert_eq!(hex_digits(v), format!("{v:032x}"));
        }
        assert_eq!(hex_digits(u128::MAX), "f".repeat(32));
        assert_eq!(hex_digits(0), "0".repeat(32));
    }
}
