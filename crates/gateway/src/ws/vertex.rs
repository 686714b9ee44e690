//! A Vertex AI Live socket follows its client's location. Its upgrade
//! (`/ws/google.cloud.aiplatform.{v1|v1beta1}.LlmBidiService/BidiGenerateContent`)
//! does not name one: google-genai names it in the first message, the
//! `setup` whose `model` is
//! `projects/{p}/locations/{l}/publishers/google/models/{m}`. Without
//! `vertex_upstream` ([`follows_location`]) the gateway accepts the
//! client's upgrade at once, waits for that message ([`first_message`]:
//! at most `client_head_timeout_ms`, and no larger than
//! `ws_max_message_bytes`, the socket's limit), and opens the upstream at
//! the endpoint HTTP Vertex requests of that location go to
//! (`CloudConfig::upstream`, [`crate::cloud::vertex_default`]: `global` →
//! `aiplatform.googleapis.com`, `us-central1` →
//! `us-central1-aiplatform.googleapis.com`). The message then goes first,
//! byte for byte, and the socket is relayed as any other
//! ([`super::relay::run`]).
//!
//! A first message that names no location (not a `setup`, a `model`
//! without a project and location, binary data or garbage), or none in
//! time, sends the socket to the route's own endpoint (`global`), as before
//! this module, counted in `toolwarden_vertex_live_fallbacks_total`; the
//! message goes unchanged. An upstream that refuses the upgrade (or cannot
//! be reached) is recorded as a refused upgrade is, and the client, whose
//! upgrade was already accepted, gets a close frame saying so
//! ([`refusal_close`]).

use std::sync::Arc;

use futures_util::SinkExt;
use http::StatusCode;
use tokio::io::{AsyncRead, AsyncWrite};
use yawc::{Frame, OpCode, WebSocket, close::CloseCode};

use super::{
    Stopping, Upgrade, live::message::setup_location, metered::Meter, relay, upstream::OpenError,
};
use crate::{
    Config,
    metrics::events::{FallbackReason, VertexLiveFallback},
    pipeline::headers,
    routes::{ProxyRoute, cloud::CloudTarget},
    shutdown::raised,
    upstream_url::Upstream,
};

/// Most bytes of a refusing upstream's body read for the close reason.
const MAX_REFUSAL_READ: usize = 16 * 1024;

/// Most bytes of a close frame's reason (RFC 6455 §5.5: a control frame's
/// payload is at most 125 bytes, 2 of them the code).
const MAX_CLOSE_REASON: usize = 123;

/// What came first on the client's socket.
enum First {
    /// A text or binary message.
    Message(Frame),
    /// No message within the wait.
    TimedOut,
    /// The client closed (or broke) before sending one.
    Gone { closed: bool },
    /// The gateway is stopping.
    Stopping,
    /// The first message found no room under `max_buffered_request_bytes`
    /// ([`super::metered`]).
    Refused,
}

/// Whether an upgrade's upstream waits for its first message: a Vertex AI
/// Live socket when no `vertex_upstream` pins one.
pub(super) fn follows_location(config: &Config, route: &ProxyRoute, path: &str) -> bool {
    config.cloud.vertex.is_none() && crate::routes::cloud::is_vertex_live(route, path)
}

/// Relay a Vertex AI Live socket whose upgrade the client has had: its
/// first message read, its upstream opened at that message's location
/// (else at `fallback`), then relayed.
pub(super) async fn run<C>(
    up: Upgrade,
    fallback: Upstream,
    mut client: WebSocket<C>,
    meter: Arc<Meter>,
    stopping: Stopping,
) where
    C: AsyncRead + AsyncWrite + Unpin,
{
    let config = &up.shared.config;
    let first = first_message(&mut client, &meter, config.client_head_timeout, &stopping).await;
    let first = match first {
        First::Message(frame) => Some(frame),
        First::TimedOut => None,
        First::Gone { closed } => {
            if closed {
                relay::closed(&mut client, config.ws_close_wait).await;
            }
            return;
        }
        First::Stopping => {
            let reason = "the gateway is shutting down";
            relay::close(&mut client, (CloseCode::Away, reason), config.ws_close_wait).await;
            return;
        }
        First::Refused => {
            let again = (CloseCode::Again, relay::NO_ROOM_FOR_REQUESTS);
            relay::close(&mut client, again, config.ws_close_wait).await;
            return;
        }
    };
    let (upstream, fell_back) = upstream_of(config, first.as_ref(), fallback);
    if let Some(reason) = fell_back {
        tracing::debug!(
            reason = reason.as_str(),
            "a Vertex AI Live socket goes to the global endpoint"
        );
        up.shared.sinks.metrics.emit(VertexLiveFallback { reason });
    }
    // The upstream's answer is awaited until the shutdown's grace period
    // ends (the first-byte timeout is 10 minutes by default): then the
    // client is told with a close frame rather than left with a socket the
    // shutdown breaks, and the upgrade is recorded as the gateway's cut
    // (an observation dropped unfinished once the grace is over).
    let mut force = stopping.force.clone();
    let opened = tokio::select! {
        biased;
        () = raised(&mut force) => None,
        opened = up.open(&upstream) => Some(opened),
    };
    let Some(opened) = opened else {
        drop(up.observation());
        let away = (CloseCode::Away, "the gateway is shutting down");
        relay::close(&mut client, away, config.ws_close_wait).await;
        return;
    };
    match opened {
        Ok(opened) => {
            let waits = up.waits();
            let turns = up.accepted(&opened.headers);
            relay::run(
                (client, meter),
                (opened.socket, opened.meter),
                turns,
                stopping,
                waits,
                first,
            )
            .await;
        }
        Err(OpenError::Refused(answer)) => {
            // A body in a transfer coding the gateway does not relay is not
            // read for the reason (as any answer it relays is checked).
            let (status, headers) = (answer.status(), answer.headers());
            if let Some(err) = headers::unrelayed_answer(upstream.host(), status, headers, false) {
                tracing::warn!(error = %err, "websocket upgrade to the upstream failed");
                return failed(&up, &mut client, &err).await;
            }
            let (parts, body) = super::refused(up.observation(), *answer, MAX_REFUSAL_READ).await;
            let (code, reason) = refusal_close(parts.status, &body);
            tracing::debug!(status = %parts.status, "the Vertex AI Live upstream refused the socket");
            relay::close(&mut client, (code, &reason), config.ws_close_wait).await;
        }
        Err(OpenError::Failed(err)) => {
            tracing::warn!(error = %err, "websocket upgrade to the upstream failed");
            failed(&up, &mut client, &err).await;
        }
    }
}

/// The upstream could not be had (`err`): recorded so, and the client
/// closed with 1011 naming it ([`failure_reason`]).
async fn failed<C>(up: &Upgrade, client: &mut WebSocket<C>, err: &crate::errors::ProxyError)
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    up.observation().fail(err);
    let close_wait = up.shared.config.ws_close_wait;
    relay::close(client, (CloseCode::Error, &failure_reason(err)), close_wait).await;
}

/// The close reason for an upstream that could not be had: the error's
/// code and cause first (`upstream_bad_response: its body is in the
/// transfer coding `gzip`, …`), so that what a user needs survives the
/// cut to [`MAX_CLOSE_REASON`]; the host, which the client knows, last.
fn failure_reason(err: &crate::errors::ProxyError) -> String {
    cut(err.cause_first())
}

/// The upstream for a socket whose first message is `first` (`None`:
/// none came in time): its location's, by the HTTP path's rule, else
/// `fallback` and why.
fn upstream_of(
    config: &Config,
    first: Option<&Frame>,
    fallback: Upstream,
) -> (Upstream, Option<FallbackReason>) {
    let Some(first) = first else {
        return (fallback, Some(FallbackReason::Timeout));
    };
    let located = setup_location(first.payload()).and_then(|location| {
        let target = CloudTarget::Vertex { location };
        config
            .cloud
            .upstream(&target)
            .ok()
            .map(|up| up.into_owned())
    });
    match located {
        Some(upstream) => (upstream, None),
        None => (fallback, Some(FallbackReason::NoLocation)),
    }
}

/// Wait (at most `wait`) for the client's first message; its pings are
/// answered meanwhile.
async fn first_message<C>(
    client: &mut WebSocket<C>,
    meter: &Meter,
    wait: std::time::Duration,
    stopping: &Stopping,
) -> First
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    let mut shutdown = stopping.shutdown.clone();
    let read = async {
        loop {
            match client.next_frame().await {
                Ok(frame) => match frame.opcode() {
                    OpCode::Text | OpCode::Binary => return First::Message(frame),
                    OpCode::Close => return First::Gone { closed: true },
                    OpCode::Ping => {
                        // The library has queued the pong: written now.
                        let ready = std::future::poll_fn(|cx| client.poll_ready_unpin(cx)).await;
                        if ready.is_err() || client.flush().await.is_err() {
                            return First::Gone { closed: false };
                        }
                    }
                    _ => {}
                },
                Err(e) => {
                    tracing::debug!(error = %e, "a Vertex AI Live client broke before its first message");
                    return First::Gone { closed: false };
                }
            }
        }
    };
    tokio::select! {
        biased;
        () = raised(&mut shutdown) => First::Stopping,
        () = meter.refused() => First::Refused,
        first = tokio::time::timeout(wait, read) => first.unwrap_or(First::TimedOut),
    }
}

/// The close a client gets when the upstream refused its socket with
/// `status` (and `body`), as google-genai reads a close (its `APIError`
/// carries the code and the reason): 1008 (policy) for the client's own
/// errors (`401`, `403`, `404`, any `4xx` but `429`), 1013 (try again
/// later) for `429` and `503`, 1011 (server error) for the rest. The reason
/// names the status and, when the body is Google's error JSON, its
/// `error.message`, cut to what a close frame holds.
pub(super) fn refusal_close(status: StatusCode, body: &[u8]) -> (CloseCode, String) {
    let code = match status.as_u16() {
        429 | 503 => CloseCode::Again,
        400..=499 => CloseCode::Policy,
        _ => CloseCode::Error,
    };
    let mut reason = format!("the upstream refused the socket: {status}");
    if let Some(message) = error_message(body) {
        reason.push_str(": ");
        reason.push_str(&message);
    }
    (code, cut(reason))
}

/// `error.message` of a Google error body.
fn error_message(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Body {
        error: Error,
    }
    #[derive(serde::Deserialize)]
    struct Error {
        message: String,
    }
    serde_json::from_slice::<Body>(body)
        .ok()
        .map(|b| b.error.message)
        .filter(|m| !m.is_empty())
}

/// `reason` cut to [`MAX_CLOSE_REASON`] bytes, at a character's boundary.
fn cut(mut reason: String) -> String {
    reason.truncate(reason.floor_char_boundary(MAX_CLOSE_REASON));
    reason
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    #[test]
    fn a_refusal_closes_with_the_code_its_status_calls_for() {
        let body = br#"{"error":{"code":403,"message":"Permission denied on resource project p1.","status":"PERMISSION_DENIED"}}"#;
        let (code, reason) = refusal_close(StatusCode::FORBIDDEN, body);
        assert_eq!(code, CloseCode::Policy);
        assert_eq!(
            reason,
            "the upstream refused the socket: 403 Forbidden: Permission denied on resource project p1."
        );
        for (status, code) in [
            (401, CloseCode::Policy),
            (404, CloseCode::Policy),
            (429, CloseCode::Again),
            (503, CloseCode::Again),
            (500, CloseCode::Error),
            (502, CloseCode::Error),
            (200, CloseCode::Error),
        ] {
            let status = StatusCode::from_u16(status).unwrap();
            let (got, reason) = refusal_close(status, b"not json");
            assert_eq!(got, code, "{status}");
            assert_eq!(reason, format!("the upstream refused the socket: {status}"));
        }
        // A long message is cut to what a close frame holds, between
        // characters.
        let long = serde_json::json!({"error": {"message": "é".repeat(200)}}).to_string();
        let (_, reason) = refusal_close(StatusCode::FORBIDDEN, long.as_bytes());
        assert!(reason.len() <= MAX_CLOSE_REASON, "{}", reason.len());
        assert!(reason.len() >= MAX_CLOSE_REASON - 1, "{}", reason.len());
        assert!(reason.ends_with('é'));
    }

    /// The cause of a failure comes first, so that the cut to a close
    /// frame's 123 bytes keeps it (a transfer coding's name ended past
    /// them, after the error's host and kind, before).
    #[test]
    fn a_failures_close_reason_keeps_its_cause() {
        let host = "europe-west4-aiplatform.googleapis.com";
        let err = headers::unrelayed_transfer_coding_error(host, "gzip");
        let reason = failure_reason(&err);
        assert!(reason.len() <= MAX_CLOSE_REASON, "{}", reason.len());
        assert!(
            reason.starts_with("upstream_bad_response: its body is in the transfer coding `gzip`"),
            "{reason}"
        );
        let refused = crate::errors::ProxyError::new(
            crate::errors::ProxyErrorKind::Connect,
            host,
            "tcp connect error: Connection refused (os error 111)",
        );
        let reason = failure_reason(&refused);
        assert!(reason.len() <= MAX_CLOSE_REASON, "{}", reason.len());
        assert!(
            reason.starts_with(
                "upstream_connect_error: tcp connect error: Connection refused (os error 111) (upstream europe-west4"
            ),
            "{reason}"
        );
    }

    #[test]
    fn the_upstream_is_the_locations_by_the_http_paths_rule_else_the_fallback() {
        let config = Config::for_tests("http://127.0.0.1:9");
        let fallback = crate::cloud::vertex_default("global").unwrap();
        let setup =
            |model: &str| Frame::text(Bytes::from(format!(r#"{{"setup":{{"model":"{model}"}}}}"#)));
        let host = |first: Option<&Frame>| {
            let (up, reason) = upstream_of(&config, first, fallback.clone());
            (up.host().to_string(), reason)
        };
        let regional = setup("projects/p/locations/europe-west4/publishers/google/models/m");
        assert_eq!(
            host(Some(&regional)),
            ("europe-west4-aiplatform.googleapis.com".into(), None)
        );
        let eu = setup("projects/p/locations/eu/publishers/google/models/m");
        assert_eq!(
            host(Some(&eu)),
            ("aiplatform.eu.rep.googleapis.com".into(), None)
        );
        // The same JSON in a binary frame (Gemini Live's server's way;
        // the Live reader reads a client's binary JSON too).
        let json =
            r#"{"setup":{"model":"projects/p/locations/us-east5/publishers/google/models/m"}}"#;
        let binary = Frame::binary(Bytes::from_static(json.as_bytes()));
        assert_eq!(
            host(Some(&binary)),
            ("us-east5-aiplatform.googleapis.com".into(), None)
        );
        let global = setup("projects/p/locations/global/publishers/google/models/m");
        assert_eq!(
            host(Some(&global)),
            ("aiplatform.googleapis.com".into(), None)
        );
        let bare = setup("publishers/google/models/m");
        let garbage = Frame::binary(Bytes::from_static(b"\x00\xffnot json"));
        for first in [&bare, &garbage] {
            assert_eq!(
                host(Some(first)),
                (
                    "aiplatform.googleapis.com".into(),
                    Some(FallbackReason::NoLocation)
                )
            );
        }
        assert_eq!(
            host(None),
            (
                "aiplatform.googleapis.com".into(),
                Some(FallbackReason::Timeout)
            )
        );
    }
}
