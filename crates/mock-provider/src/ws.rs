//! The Responses API's WebSocket mode: `GET /v1/responses` with `Upgrade:
//! websocket` (Bearer auth on the upgrade), then one `response.create`
//! text message per turn, each answered with the same events as the SSE
//! stream, one event per text message, in order (the events made at once
//! go with one flush, as hyper writes a stream's ready SSE chunks;
//! [`crate::MockOptions::flush_each_event`]: one write per event).
//!
//! As the HTTP side: the upgrade is refused with the provider's 401
//! without a key (or with a wrong one), or as an HTTP request is answered
//! with a [`Fault::Status`] or [`Fault::StatusWithHeaders`]; a turn with pairing defects is answered with an
//! `error` event (status 400, with the error's `code` and `param`); a
//! `previous_response_id` the socket cannot continue (not stored, nor this
//! socket's most recent response) gets the `previous_response_not_found`
//! one (see `continuation`); a `response.inject` whose items the pairing
//! rules refuse gets an `error` event as a turn with pairing defects does
//! (see `ws_inject`); scripted responses are taken in order (an
//! SSE script's events become messages: each event's `data`); faults
//! apply per turn ([`Fault::ResetMidStream`]: that many events, then the
//! connection is dropped without a close; [`Fault::StallAfter`]: that many,
//! then nothing while the socket is still read; [`Fault::CloseMidStream`]:
//! that many, then a close frame; [`Fault::MalformedSse`]: a message that
//! is not JSON before the rest; [`Fault::ErrorEventAfter`]: that many, then
//! `error` and `response.failed`; [`Fault::Delay`]: that long before the
//! first event; [`Fault::Hang`]).
//! A turn that names a `stream_id` (a lane) gets it echoed on each of its
//! events (turns are still answered one after another, lanes or not).
//! A `"generate": false` turn (the Codex CLI's warm-up) gets an empty
//! response. permessage-deflate is agreed when the client offers it. Every client
//! message is recorded as a [`ReceivedRequest`] with the upgrade's method,
//! path and headers and the message as its body; how each socket the
//! client ended did end (its close code, or dropped) is kept too.

use std::{convert::Infallible, sync::Arc, time::Duration};

use bytes::Bytes;
use futures_util::SinkExt;
use http::{Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use serde_json::Value;
use toolwarden_wire::Dialect;
use yawc::{Frame, OpCode, WebSocket};

use crate::{
    Fault, ReceivedRequest, Scripted, Shared,
    api_headers::Api,
    body::{Body, full},
    continuation::{self, Connection, Previous},
    envelope::{self, Provider},
    plan::plan,
    render,
};

/// Largest message the mock reads.
const MAX_MESSAGE: usize = 64 << 20;

/// Whether this request is a Responses WebSocket upgrade.
pub(crate) fn is_upgrade(req: &Request<Incoming>) -> bool {
    req.method() == Method::GET
        && (req.uri().path() == "/v1/responses"
            || req.uri().path().ends_with("/backend-api/codex/responses"))
        && req
            .headers()
            .get(header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Answer the upgrade (or refuse it) and serve the socket in a task.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    mut req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    shared
        .requests
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // The upgrade refused as an HTTP request is, with the same headers.
    let refused = match shared.fault() {
        Fault::Status(code, body) => Some(crate::answer::fault_reply(
            Some(Api::OpenAi),
            code,
            None,
            &body,
        )),
        Fault::StatusWithHeaders(code, headers, body) => Some(crate::answer::fault_reply(
            Some(Api::OpenAi),
            code,
            Some(&headers),
            &body,
        )),
        _ => None,
    };
    if let Some(mut resp) = refused {
        if !resp.headers().contains_key("x-request-id") {
            resp.headers_mut().insert(
                "x-request-id",
                header::HeaderValue::from_static("req_mock_websocket"),
            );
        }
        return Ok(resp);
    }
    if let Some((status, body)) = envelope::check_auth(
        Provider::OpenAi,
        req.headers(),
        req.uri().query(),
        shared.opts.api_key.as_deref(),
    ) {
        return Ok(json(status, Bytes::from(body)));
    }
    let options = yawc::Options::default()
        .with_max_payload_read(MAX_MESSAGE)
        .with_max_read_buffer(MAX_MESSAGE)
        .with_compression_level(yawc::CompressionLevel::fast());
    let (response, upgrade) = match WebSocket::upgrade_with_options(&mut req, options) {
        Ok(u) => u,
        Err(e) => {
            return Ok(json(
                StatusCode::BAD_REQUEST,
                Bytes::from(format!("{{\"error\":\"bad upgrade: {e}\"}}")),
            ));
        }
    };
    let template = ReceivedRequest {
        method: req.method().clone(),
        path: req.uri().path().to_string(),
        query: req.uri().query().map(str::to_string),
        headers: req.headers().clone(),
        body: Bytes::new(),
    };
    tokio::spawn(async move {
        if let Ok(socket) = upgrade.await {
            serve(shared, socket, template).await;
        }
    });
    let (mut parts, _) = response.into_parts();
    parts.headers.insert(
        "x-request-id",
        header::HeaderValue::from_static("req_mock_websocket"),
    );
    Ok(Response::from_parts(parts, full(Bytes::new())))
}

fn json(status: StatusCode, body: Bytes) -> Response<Body> {
    let mut resp = Response::new(full(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

/// What one turn's answer ends with.
enum After {
    Continue,
    /// Drop the connection without a close.
    Reset,
    /// Send nothing more, keep the connection.
    Stall,
    /// Close the socket with this code.
    Close(u16),
}

async fn serve<S>(shared: Arc<Shared>, mut socket: WebSocket<S>, template: ReceivedRequest)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    // This socket's most recent response (`continuation`).
    let mut connection = Connection::default();
    // A response waiting for its client's `response.inject` (`ws_inject`).
    let mut waiting = None;
    loop {
        let frame = match socket.next_frame().await {
            Ok(frame) => frame,
            Err(_) => return shared.websocket_ended(None),
        };
        match frame.opcode() {
            OpCode::Text | OpCode::Binary => {}
            OpCode::Close => return closed(&shared, &mut socket, &frame).await,
            _ => continue,
        }
        let message = frame.into_payload();
        if shared.opts.record {
            let mut received = template.clone();
            received.body = message.clone();
            shared.lock_received().push(received);
        }
        let (events, fault) = match crate::ws_inject::read(&message) {
            Some((response_id, input)) => {
                let ended = |id: &str| shared.responses.has(id);
                let inject = (response_id.as_str(), input);
                let validate = shared.opts.validate;
                let events = crate::ws_inject::answer(&mut waiting, inject, ended, validate);
                (events, Fault::None)
            }
            None => {
                let (events, fault) = answer(&shared, &mut connection, &message);
                (crate::ws_inject::hold(events, &mut waiting), fault)
            }
        };
        let flush_each = shared.opts.flush_each_event;
        let after = match send_events(&mut socket, events, &fault, flush_each).await {
            Ok(after) => after,
            Err(()) => return shared.websocket_ended(None),
        };
        match after {
            After::Continue => {}
            After::Reset => return,
            After::Stall => return stalled(&shared, &mut socket).await,
            After::Close(code) => {
                let close = Frame::close(yawc::close::CloseCode::from(code), "mock closing");
                if socket.send(close).await.is_ok() {
                    // The answer to the close.
                    let _ = tokio::time::timeout(Duration::from_secs(2), socket.next_frame()).await;
                }
                return;
            }
        }
    }
}

/// The client's close: the library has answered it; let that flush.
async fn closed<S>(shared: &Shared, socket: &mut WebSocket<S>, frame: &Frame)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    shared.websocket_ended(Some(frame.close_code().map_or(1005, u16::from)));
    let _ = tokio::time::timeout(Duration::from_secs(1), socket.next_frame()).await;
}

/// A stalled turn: nothing more is sent, but the socket is still read
/// (pings answered, messages ignored) until the client ends it.
async fn stalled<S>(shared: &Shared, socket: &mut WebSocket<S>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        match socket.next_frame().await {
            Ok(frame) if frame.opcode() == OpCode::Close => {
                return closed(shared, socket, &frame).await;
            }
            Ok(_) => {}
            Err(_) => return shared.websocket_ended(None),
        }
    }
}

/// The events answering one client message (none for messages that are
/// not `response.create`), and the fault in force. The response made is
/// kept for continuations, in the store and in `connection`'s cache; a
/// turn that names a `stream_id` gets it back on each event.
fn answer(shared: &Shared, connection: &mut Connection, message: &[u8]) -> (Vec<Bytes>, Fault) {
    let (events, fault) = turn_events(shared, connection, message);
    #[derive(serde::Deserialize)]
    struct Lane {
        stream_id: Option<String>,
    }
    let lane = serde_json::from_slice::<Lane>(message)
        .ok()
        .and_then(|l| l.stream_id);
    match lane {
        Some(lane) => (with_stream_id(events, &lane), fault),
        None => (events, fault),
    }
}

/// Each event (a JSON object) with `"stream_id": lane` first: a turn on a
/// lane echoes it on every event, as the API does (openai-python's
/// WebSocket events: "echo the same `stream_id`").
fn with_stream_id(events: Vec<Bytes>, lane: &str) -> Vec<Bytes> {
    let field = format!("{{\"stream_id\":{},", Value::from(lane));
    events
        .into_iter()
        .map(|event| match event.strip_prefix(b"{") {
            Some(rest) if !rest.trim_ascii_start().starts_with(b"}") => {
                let mut out = field.clone().into_bytes();
                out.extend_from_slice(rest);
                Bytes::from(out)
            }
            _ => event,
        })
        .collect()
}

/// [`answer`] before its lane is echoed.
fn turn_events(
    shared: &Shared,
    connection: &mut Connection,
    message: &[u8],
) -> (Vec<Bytes>, Fault) {
    #[derive(serde::Deserialize)]
    struct Envelope {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    let kind = serde_json::from_slice::<Envelope>(message)
        .ok()
        .and_then(|e| e.kind);
    if kind.as_deref() != Some("response.create") {
        return (Vec::new(), Fault::None);
    }
    // A `response.create` is JSON (its type was read).
    let body: Value = serde_json::from_slice(message).unwrap_or(Value::Null);
    let mut previous = None;
    // The conversation as the API reads it, when the request continues one.
    let mut whole = None;
    if shared.opts.validate {
        let violation = match continuation::previous(&shared.responses, Some(connection), &body) {
            Previous::NotFound(id) => {
                let message = continuation::not_found_message(&id);
                let code = Some("previous_response_not_found");
                let error = envelope::ws_error_event(code, "previous_response_id", &message);
                return (vec![error], Fault::None);
            }
            Previous::Found(p) => {
                let context = continuation::with_context(&body, &p);
                previous = Some(p);
                let violation =
                    crate::rules::violation_value(Dialect::OpenAiResponses, None, &context);
                whole = Some(context);
                violation
            }
            Previous::None => crate::rules::violation_value(Dialect::OpenAiResponses, None, &body),
        };
        if let Some(message) = violation {
            return (
                vec![envelope::ws_error_event(None, "input", &message)],
                Fault::None,
            );
        }
    }
    let (events, fault) = if prewarm(message) {
        (prewarm_events(message), Fault::None)
    } else {
        let events = match shared.pop_script() {
            Some(Scripted::Sse(chunks, _)) => crate::sse::sse_to_messages(&chunks.concat()),
            Some(Scripted::Json(body)) => vec![body],
            Some(Scripted::Raw(raw)) => raw.chunks,
            None => {
                // Agent mode plays its scripts here too, over the whole
                // conversation.
                let mut p = match &shared.opts.agent {
                    Some(agent) => {
                        let context = whole.as_ref().map(serde_json::to_vec);
                        let bytes = match &context {
                            Some(Ok(b)) => b.as_slice(),
                            _ => message,
                        };
                        agent.plan(Dialect::OpenAiResponses, bytes, None)
                    }
                    None => plan(
                        Dialect::OpenAiResponses,
                        message,
                        None,
                        &shared.opts.default_tool,
                        shared.opts.calls_per_reply,
                    ),
                };
                p.arg_pieces = shared.opts.arg_pieces;
                let sse = render::stream_events(Dialect::OpenAiResponses, &p, false);
                crate::sse::sse_to_messages(&sse.concat())
            }
        };
        (events, shared.fault())
    };
    let sent = events.iter().map(|e| e.as_ref());
    continuation::remember(&shared.responses, Some(connection), &body, previous, sent);
    (events, fault)
}

/// `"generate": false`: the Codex CLI's warm-up turn, which the API
/// answers with an empty response (no script is used).
fn prewarm(message: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Generate {
        generate: Option<bool>,
    }
    serde_json::from_slice::<Generate>(message).is_ok_and(|g| g.generate == Some(false))
}

fn prewarm_events(message: &[u8]) -> Vec<Bytes> {
    let seed = crate::plan::fnv1a(message);
    let model = serde_json::from_slice::<serde_json::Value>(message)
        .ok()
        .and_then(|v| v.get("model")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "mock-model".into());
    let response = |status: &str| {
        serde_json::json!({
            "id": format!("resp_{seed:016x}"),
            "object": "response",
            "created_at": 1_700_000_000,
            "status": status,
            "model": model,
            "output": [],
            "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        })
    };
    [
        ("response.created", "in_progress"),
        ("response.completed", "completed"),
    ]
    .iter()
    .enumerate()
    .map(|(seq, (kind, status))| {
        let event =
            serde_json::json!({"type": kind, "sequence_number": seq, "response": response(status)});
        Bytes::from(event.to_string())
    })
    .collect()
}

/// A turn's events, each its own text message, written as they are made
/// (all at once here): with one flush for them all, as hyper writes the
/// SSE chunks it has ready, so they share TCP segments; `flush_each`: one
/// write per event.
async fn send_events<S>(
    socket: &mut WebSocket<S>,
    events: Vec<Bytes>,
    fault: &Fault,
    flush_each: bool,
) -> Result<After, ()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let events = match fault {
        Fault::ErrorEventAfter(n, kind) if !events.is_empty() => {
            crate::stream_error::inject_messages(events, *n, *kind)
        }
        _ => events,
    };
    // As a request over HTTP waits before its answer, a turn waits before
    // its first event.
    if let Fault::Delay(d) = fault
        && !events.is_empty()
    {
        tokio::time::sleep(*d).await;
    }
    let (limit, after) = match fault {
        Fault::ResetMidStream(n) => (*n, After::Reset),
        Fault::StallAfter(n) => (*n, After::Stall),
        Fault::CloseMidStream(n, code) => (*n, After::Close(*code)),
        Fault::Hang if !events.is_empty() => (0, After::Stall),
        _ => (usize::MAX, After::Continue),
    };
    if matches!(fault, Fault::MalformedSse) && !events.is_empty() {
        socket
            .send(Frame::text(Bytes::from_static(
                b"{\"type\":\"response.output_text.delta\",\"delta\":\"x",
            )))
            .await
            .map_err(|_| ())?;
    }
    let limited = limit < events.len();
    for (i, event) in events.into_iter().take(limit).enumerate() {
        if flush_each {
            if i > 0 {
                // As the SSE body does (`body::chunked`): pending once
                // before each event after the first, so the events go as
                // an upstream generating them one by one sends them, with
                // the runtime's other tasks (a client on the same thread)
                // run between them.
                tokio::task::yield_now().await;
            }
            socket.send(Frame::text(event)).await.map_err(|_| ())?;
        } else {
            socket.feed(Frame::text(event)).await.map_err(|_| ())?;
        }
    }
    socket.flush().await.map_err(|_| ())?;
    Ok(if limited { after } else { After::Continue })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lanes_events_echo_its_stream_id() {
        let events = vec![
            Bytes::from_static(br#"{"type":"response.created","sequence_number":0}"#),
            Bytes::from_static(b"{}"),
            Bytes::from_static(b"not json"),
        ];
        let out = with_stream_id(events, "lane \"2\"");
        assert_eq!(
            out[0],
            r#"{"stream_id":"lane \"2\"","type":"response.created","sequence_number":0}"#
        );
        let v: Value = serde_json::from_slice(&out[0]).unwrap();
        assert_eq!(v["stream_id"], "lane \"2\"");
        assert_eq!(out[1], "{}");
        assert_eq!(out[2], "not json");
    }
}
