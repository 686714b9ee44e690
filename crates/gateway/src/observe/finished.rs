//! What a finished response becomes: the request's record and its
//! metrics, written by a task of its own ([`Finished::record`]). Its view
//! was read, and its calls recorded, on the proxy's path (`calls`).

use std::{sync::Arc, time::Duration};

use toolwarden_coding::CodingErrorKind;
use toolwarden_wire::{Dialect, ResponseView};

use super::{Parse, RequestBase, Sinks, guard, request::RequestInfo};
use crate::limits::{owned_id, owned_name};
use crate::metrics::events::{UnparsedReason, UnparsedResponse, UpstreamFinished};
use crate::recorder::{Event, RequestRecord};

/// Everything needed to record a finished response, moved to a task.
pub(super) struct Finished {
    /// Uncounted once the request's record is handed to the recorder
    /// (or, metrics only, not to be made).
    pub(super) counted: Option<super::unrecorded::Counted>,
    pub(super) sinks: Arc<Sinks>,
    pub(super) base: RequestBase,
    pub(super) request: RequestInfo,
    pub(super) overhead: Duration,
    pub(super) latency: Duration,
    pub(super) first_byte: Option<Duration>,
    pub(super) status: u16,
    pub(super) streaming: bool,
    pub(super) response: Option<ResponseView>,
    pub(super) error: Option<String>,
    pub(super) metrics_only: bool,
    /// A copied body passed `response_parse_limit` (not read).
    pub(super) over_limit: bool,
}

impl Finished {
    pub(super) async fn record(self) {
        let _done = DoneGuard(self.sinks.clone());
        let counted = self.counted;
        let base = self.base;
        let info = self.request;
        let sinks = &self.sinks;
        let view = self.response.unwrap_or_default();
        // Past `response_parse_limit` (a stream's parse stopped keeping
        // calls, or a copied body was not read): the record says its calls
        // may be incomplete, as the `too_large` metric counts it.
        let calls_incomplete = self.over_limit || view.truncated;
        // A turn with no HTTP answer of its own (a Responses turn over a
        // WebSocket) takes the status its error event names.
        let status = match view.error_status {
            Some(named) if self.status == 200 => named,
            _ => self.status,
        };
        // Names cut to `MAX_NAME_LEN`: every record copies them.
        let model = info
            .model
            .clone()
            .or_else(|| view.model.as_deref().map(owned_name));
        let response_id = view.id.as_deref().map(owned_id);
        // The access log: one line per request at debug, under its own
        // target (`RUST_LOG=toolwarden::access=debug`). The path has no
        // query (a Gemini key travels there); no header is logged.
        tracing::debug!(
            target: "toolwarden::access",
            request_id = %base.request_id,
            session = info.session.id.as_str(),
            provider = base.provider.as_str(),
            path = %base.path,
            status,
            model = model.as_deref().unwrap_or(""),
            streaming = self.streaming,
            latency_ms = self.latency.as_secs_f64() * 1e3,
            overhead_us = self.overhead.as_secs_f64() * 1e6,
            calls = view.calls.len(),
            repairs = base.repairs.len(),
            "request"
        );
        sinks.metrics.emit(UpstreamFinished {
            provider: base.provider,
            status,
            latency: self.latency,
            overhead: self.overhead,
        });
        if self.metrics_only {
            if let Some(counted) = counted {
                counted.hand(|| {});
            }
            return;
        }
        let record = Event::Request(RequestRecord {
            request_id: base.request_id,
            session_id: info.session.id,
            session_source: info.session.source.to_string(),
            at_ms: base.at_ms,
            provider: base.provider.as_str().to_string(),
            dialect: base.dialect.map(|d| d.as_str().to_string()),
            path: base.path,
            model,
            status,
            streaming: self.streaming,
            upstream_latency_ms: self.latency.as_secs_f64() * 1e3,
            first_byte_ms: self.first_byte.map(|d| d.as_secs_f64() * 1e3),
            overhead_us: self.overhead.as_secs_f64() * 1e6,
            input_tokens: view.usage.input_tokens,
            output_tokens: view.usage.output_tokens,
            response_id,
            repairs: base.repairs,
            repair_mode: base.repair_mode.to_string(),
            parse_error: info.parse_error,
            calls_incomplete,
            error: self
                .error
                .or_else(|| view.error.as_deref().map(provider_error))
                .or_else(|| {
                    (view.ended_early && (200..300).contains(&status))
                        .then(|| ENDED_EARLY.to_string())
                }),
            trace_parent: base.trace_parent,
            trace_state: base.trace_state.clone(),
            server_address: base.server_address.clone(),
            server_port: base.server_port,
        });
        // Past the shutdown's seal the request is counted as unrecorded
        // instead, and its record goes nowhere (`unrecorded`).
        match counted {
            Some(counted) => {
                counted.hand(|| {
                    sinks.recorder.record(record);
                });
            }
            None => {
                sinks.recorder.record(record);
            }
        }
    }
}

/// The error of a stream whose transport ended cleanly before its
/// dialect's final event ([`ResponseView::ended_early`]): an upstream or
/// a proxy in between that closed it early, so calls or arguments may be
/// missing. (An early end the gateway sees as such — a reset, a client
/// gone — is named by what ended it.)
const ENDED_EARLY: &str = "the stream ended before its final event";

/// The longest provider error kept with a request (characters).
const PROVIDER_ERROR_CHARS: usize = 1000;

/// An error the provider reported in the body or stream (a mid-stream
/// `error` event, `response.failed`, a Bedrock exception frame) as the
/// request's error: its credentials cut, at most [`PROVIDER_ERROR_CHARS`].
pub(super) fn provider_error(text: &str) -> String {
    let text = toolwarden_core::redact::without_secrets(text);
    match text.char_indices().nth(PROVIDER_ERROR_CHARS) {
        Some((i, _)) => text[..i].to_string(),
        None => text.into_owned(),
    }
}

/// Marks one pending record as done, however `record` ends.
struct DoneGuard(Arc<Sinks>);

impl Drop for DoneGuard {
    fn drop(&mut self) {
        self.0.done_one();
    }
}

pub(super) fn response_view(
    sinks: &Sinks,
    dialect: Option<Dialect>,
    parse: Parse,
    cut: bool,
    too_large: bool,
) -> Option<ResponseView> {
    let outcome = match parse {
        Parse::Skip => return None,
        Parse::Stream(parser, _held) => {
            // A malformed event-stream frame (skipped; the parse goes on
            // with the next one) or one cut short at the end: counted,
            // unless the stream itself was cut there.
            let malformed = parser.framing_error().is_some_and(|e| {
                !(cut && e.kind() == toolwarden_wire::eventstream::EventStreamErrorKind::Truncated)
            });
            if malformed {
                sinks.metrics.emit(UnparsedResponse {
                    reason: UnparsedReason::MalformedFrame,
                });
            }
            let view = guard(move || parser.finish());
            // Over `response_parse_limit`, or a compressed stream decoded
            // past its limit: what was kept before the cut is recorded, and
            // counted as a body too large to parse.
            if too_large || matches!(&view, Ok(v) if v.truncated) {
                sinks.metrics.emit(UnparsedResponse {
                    reason: UnparsedReason::TooLarge,
                });
            }
            view
        }
        Parse::Buffer {
            buf,
            limit,
            codings,
            // The copy's room is held until it has been read.
            held: _held,
        } => {
            let dialect = dialect?;
            let buf = if codings.is_identity() {
                buf
            } else {
                match codings.decode(&buf, limit) {
                    Ok(buf) => buf,
                    Err(e) => {
                        let reason = match e.kind {
                            CodingErrorKind::TooLarge => UnparsedReason::TooLarge,
                            _ => UnparsedReason::Invalid,
                        };
                        sinks.metrics.emit(UnparsedResponse { reason });
                        // Decoded past the limit: nothing read, and the
                        // record says its calls may be incomplete.
                        return (e.kind == CodingErrorKind::TooLarge).then(|| ResponseView {
                            truncated: true,
                            ..ResponseView::default()
                        });
                    }
                }
            };
            match guard(|| toolwarden_wire::response_view(dialect, &buf)) {
                Ok(Ok(view)) => Ok(view),
                Ok(Err(_)) => {
                    sinks.metrics.emit(UnparsedResponse {
                        reason: UnparsedReason::Invalid,
                    });
                    return None;
                }
                Err(panic) => Err(panic),
            }
        }
    };
    match outcome {
        Ok(view) => Some(view),
        Err(_) => {
            sinks.metrics.emit(UnparsedResponse {
                reason: UnparsedReason::ParserError,
            });
            None
        }
    }
}
