//! Observation: what each proxied request becomes in the records.
//!
//! - [`request::analyze`] (run once the request is on its way upstream)
//!   reads the request's tool results and session and records each new result;
//! - an [`Observation`] follows the response: the proxy's tee feeds it
//!   every chunk (a `StreamParser` for SSE and Gemini JSON arrays, a bounded
//!   copy for whole JSON bodies), and when the response ends — finished,
//!   broken, abandoned by the client, reset because its client left its
//!   HTTP/2 stream unread (`stream_stall::stalled`), or cut at the end of
//!   the shutdown's grace period (`Sinks::grace_over`) — it records the response's tool
//!   calls and one [`RequestRecord`](crate::recorder::RequestRecord)
//!   (`finished`), and updates the metrics. A JSON body in a content coding (gzip, deflate, zstd, br: `toolwarden_wire::coding`)
//!   is decoded (bounded) on the copy; a stream in one of them is decoded
//!   piece by piece ahead of its parser; other codings are passed through
//!   unparsed and counted
//!   (`toolwarden_unparsed_responses_total{reason="compressed"}`).
//!
//! Recording never awaits on the request path: [`Recorder::record`] is a
//! `try_send`. Calls into the wire layer are guarded so that a parser bug
//! becomes a parse note, never a dropped connection.

mod calls;
pub(crate) mod client_headers;
mod finished;
mod generations;
pub(crate) mod names;
pub(crate) mod recent;
pub(crate) mod request;
pub(crate) mod reused;
pub(crate) mod seen;
pub(crate) mod session;
#[cfg(test)]
pub(crate) mod tests;
mod unrecorded;

use std::{
    panic::AssertUnwindSafe,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use http::{HeaderMap, header};
use tokio::sync::Notify;
use toolwarden_coding::{CodingError, CodingErrorKind, Codings, StreamDecoder};
use toolwarden_wire::{Detector, Dialect, StreamParser};

use self::{
    finished::{Finished, response_view},
    names::Names,
    recent::Recent,
    request::RequestInfo,
    session::Session,
};
use crate::metrics::events::{UnparsedReason, UnparsedResponse};
use crate::{
    errors::ProxyError,
    limits,
    limits::body_budget::{BodyBudget, Held},
    metrics::Metrics,
    recorder::Recorder,
    routes::Provider,
    shutdown::{CUT_BEFORE_ANSWER, CUT_BY_SHUTDOWN, GraceOver},
};

/// Recorded status of a request the client abandoned before any response.
pub(crate) const CLIENT_CLOSED_REQUEST: u16 = 499;

/// How long a stream whose client went away between its final event and
/// its trailer (its usage, [`Observation::reads_on`]) is read on for.
/// Providers send the trailer right after the final event.
pub(crate) const READ_ON_TIME: Duration = Duration::from_secs(5);

/// Most bytes such a stream is read on for (a usage chunk and `[DONE]`,
/// or a `metadata` frame, is a few hundred).
pub(crate) const READ_ON_BYTES: usize = 64 * 1024;

/// Defects recorded with one request at most when they come in later
/// messages of its turn ([`Observation::add_repairs`]): 4,096 is more than
/// any real turn has (a request's own are bounded by its body), few enough
/// that a turn kept open for minutes holds a few hundred KB of them.
pub(crate) const MAX_TURN_REPAIRS: usize = 4096;

/// Where observations go, shared by all requests.
pub(crate) struct Sinks {
    /// The event recorder.
    pub recorder: Recorder,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// Recently seen calls.
    pub names: Names,
    /// The sessions of recent Responses API responses (and Anthropic
    /// message threads' replies), by response id: a continuation
    /// (`previous_response_id`, `thread.previous_message_id`) joins its
    /// conversation's session.
    pub responses: Recent<String, Session>,
    /// Results already queued for recording.
    pub seen_results: seen::SeenResults,
    /// Calls and answers under ids that are not unique, where no store
    /// judges them.
    pub reused: reused::ReusedIds,
    /// The content detector for tool results without an error flag.
    pub detector: Detector,
    /// The shutdown's grace period is over: an observation dropped
    /// unfinished was cut by the gateway, not abandoned by its client.
    pub grace_over: GraceOver,
    /// Requests whose request record is not handed to the recorder yet
    /// (a shutdown seals it and reports those it ends before).
    pub unrecorded: unrecorded::Unrecorded,
    /// Finished responses whose records are still being made.
    pending: AtomicUsize,
    idle: Notify,
}

/// What is known about a request when it is forwarded.
#[derive(Debug, Clone)]
pub(crate) struct RequestBase {
    /// 32 hex digits: arrival ms then 80 random bits (see `proxy::request_id`).
    pub request_id: String,
    /// Arrival, unix ms.
    pub at_ms: i64,
    /// The provider.
    pub provider: Provider,
    /// `None` for pass-through paths.
    pub dialect: Option<Dialect>,
    /// Path only, never the query.
    pub path: String,
    /// `off` / `report` / `fix`.
    pub repair_mode: &'static str,
    /// One entry per change (fix) or defect (report).
    pub repairs: Vec<String>,
    /// Session from the headers.
    pub header_session: Option<Session>,
    /// The client's `traceparent`.
    pub trace_parent: Option<toolwarden_core::TraceParent>,
    /// The client's `tracestate` (bounded), with `trace_parent`.
    pub trace_state: Option<String>,
    /// The upstream's host (`server.address`), when the route has one.
    pub server_address: Option<String>,
    /// The upstream's port (`server.port`), with it.
    pub server_port: Option<u16>,
    /// Gemini: the model in the path.
    pub path_model: Option<String>,
}

enum Parse {
    Skip,
    /// SSE, or Gemini's streamed JSON array (the parser reads both); with
    /// what its parse holds of the bound on copies held at once
    /// ([`StreamParser::footprint`]).
    Stream(Box<StreamParser>, Held),
    Buffer {
        buf: Vec<u8>,
        limit: usize,
        /// What `buf`'s capacity holds of the bound on copies held at once.
        held: Held,
        /// The body's `content-encoding`, undone on the copy.
        codings: Codings,
    },
}

/// How a response body is read for its calls: the most one copy or one
/// stream's parse keeps (`response_parse_limit`) and the bound on the
/// copies and streams' parses held at once, over every connection and
/// worker (`max_buffered_response_bytes`; upstream WebSocket messages take
/// it too, `ws::metered`).
#[derive(Debug, Clone)]
pub(crate) struct ParseBounds {
    pub(crate) limit: usize,
    pub(crate) copies: Arc<BodyBudget>,
}

impl ParseBounds {
    /// The gateway's, from its settings.
    pub(crate) fn new(limit: usize, copies_max: usize) -> ParseBounds {
        ParseBounds {
            limit,
            copies: BodyBudget::named(copies_max, "max_buffered_response_bytes"),
        }
    }
}

/// What the observation needs from a response head.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ResponseMeta<'a> {
    /// The status code.
    pub status: u16,
    /// `content-type`, raw.
    pub content_type: Option<&'a [u8]>,
    /// `content-encoding`, raw.
    pub content_encoding: Option<&'a [u8]>,
    /// `content-length`, when valid.
    pub content_length: Option<u64>,
}

impl<'a> ResponseMeta<'a> {
    /// From a status and a header map.
    pub(crate) fn from_headers(status: u16, headers: &'a HeaderMap) -> ResponseMeta<'a> {
        ResponseMeta {
            status,
            content_type: headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes()),
            content_encoding: headers.get(header::CONTENT_ENCODING).map(|v| v.as_bytes()),
            content_length: headers
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.parse().ok()),
        }
    }
}

/// Follows one response to its end, then records it.
pub(crate) struct Observation {
    /// Counted in `Sinks::unrecorded` until its record is handed to the
    /// recorder (moved to the task that hands it).
    counted: Option<unrecorded::Counted>,
    sinks: Arc<Sinks>,
    base: RequestBase,
    request: Option<RequestInfo>,
    overhead: Duration,
    sent_at: Option<Instant>,
    first_byte: Option<Duration>,
    status: u16,
    streaming: bool,
    parse: Parse,
    /// A compressed stream's decoder, ahead of `parse`.
    decoding: Option<Box<Decoding>>,
    error: Option<String>,
    done: bool,
    /// Recorded in the metrics only (see [`Observation::metrics_only`]).
    metrics_only: bool,
    /// The response was cut short (client gone, upstream broke, the
    /// shutdown's grace period over).
    cut: bool,
    /// A copied body passed `response_parse_limit` and was not read, or a
    /// compressed stream decoded past `decode_limit` and was not read
    /// further: the request's calls may be incomplete (a stream's parse
    /// says so itself when it passes its own limit,
    /// `ResponseView::truncated`).
    over_limit: bool,
    /// Most bytes a compressed stream may decode to.
    decode_limit: u64,
    /// The copies held at once left no room for the stream's parse to
    /// grow: it is not read further (counted as `no_room`).
    no_room_to_parse: bool,
    /// When its calls were whole, if before it ended (unix ms).
    calls_at_ms: Option<i64>,
    /// How many of its calls (from the first) were recorded before it
    /// ended: at the stream's final event, before its transport ended, or
    /// earlier, whole while it went on ([`Observation::whole_calls_now`]).
    calls_recorded: usize,
    /// Its calls were recorded at the stream's final event.
    final_recorded: bool,
}

/// A compressed stream on its way to the parser.
struct Decoding {
    /// `None` once the stream decoded past the limit: the rest of it is
    /// not read, and what the parser kept stays.
    decoder: Option<StreamDecoder>,
    /// What the last piece decoded to (reused).
    plain: Vec<u8>,
}

/// Most bytes a compressed stream may decode to before the gateway stops
/// reading it (the client still gets all of it).
const MAX_STREAM_DECODED: u64 = 1 << 30;

/// Unix time in milliseconds.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Run a wire-layer call, turning a panic into an error text.
pub(crate) fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!("internal parser error: {what}")
    })
}

// === impl Sinks ===

impl Sinks {
    /// Sinks with an empty call-name map.
    #[cfg(test)]
    pub(crate) fn new(recorder: Recorder, metrics: Arc<Metrics>, detector: Detector) -> Sinks {
        Sinks::bounded(
            recorder,
            metrics,
            detector,
            &crate::config::MemoryBounds::default(),
        )
    }

    /// Sinks with an empty call-name map, the maps bounded as configured
    /// (issue 14).
    pub(crate) fn bounded(
        recorder: Recorder,
        metrics: Arc<Metrics>,
        detector: Detector,
        bounds: &crate::config::MemoryBounds,
    ) -> Sinks {
        Sinks {
            recorder,
            metrics,
            names: Names::new(bounds.recent_calls),
            responses: Recent::new(bounds.recent_calls),
            seen_results: seen::SeenResults::new(bounds.recent_results),
            reused: reused::ReusedIds::new(bounds.recent_results),
            detector,
            grace_over: GraceOver::default(),
            unrecorded: unrecorded::Unrecorded::default(),
            pending: AtomicUsize::new(0),
            idle: Notify::new(),
        }
    }

    /// Wait (at most `limit`) until every finished response has been
    /// turned into records.
    pub(crate) async fn settle(&self, limit: Duration) {
        let wait = async {
            loop {
                let notified = self.idle.notified();
                if self.pending.load(Ordering::Acquire) == 0 {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }

    fn done_one(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle.notify_waiters();
        }
    }
}

impl std::fmt::Debug for Sinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sinks")
            .field("recorder", &self.recorder.counters())
            .finish_non_exhaustive()
    }
}

// === impl Observation ===

impl std::fmt::Debug for Observation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observation")
            .field("request_id", &self.base.request_id)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl Observation {
    /// Start observing.
    pub(crate) fn new(sinks: Arc<Sinks>, base: RequestBase) -> Observation {
        Observation {
            counted: Some(sinks.unrecorded.count()),
            sinks,
            base,
            request: None,
            overhead: Duration::ZERO,
            sent_at: None,
            first_byte: None,
            status: 0,
            streaming: false,
            parse: Parse::Skip,
            decoding: None,
            error: None,
            done: false,
            cut: false,
            over_limit: false,
            no_room_to_parse: false,
            decode_limit: MAX_STREAM_DECODED,
            metrics_only: false,
            calls_at_ms: None,
            calls_recorded: 0,
            final_recorded: false,
        }
    }

    /// The same, with a compressed stream's decoded bytes capped at
    /// `limit` instead of [`MAX_STREAM_DECODED`].
    #[cfg(test)]
    pub(crate) fn with_decode_limit(mut self, limit: u64) -> Observation {
        self.decode_limit = limit;
        self
    }

    /// A request with no body on a route with no dialect (`HEAD /`, a
    /// preconnect, `GET /v1/models`): counted in the metrics, but it makes
    /// no request row and no session — nothing in it belongs to a
    /// conversation.
    pub(crate) fn metrics_only(&mut self) {
        self.metrics_only = true;
    }

    /// Whether the dialect's final event has passed: the response is
    /// complete whatever happens to its transport afterwards.
    fn final_event_seen(&self) -> bool {
        match &self.parse {
            Parse::Stream(parser, _) => parser.is_complete(),
            Parse::Skip | Parse::Buffer { .. } => false,
        }
    }

    /// The stream's transport ended early: stop decoding (a cut compressed
    /// stream is not an invalid one) and keep what was parsed.
    fn cut_short(&mut self) {
        self.cut = true;
        self.decoding = None;
        if matches!(self.parse, Parse::Buffer { .. }) {
            // A cut JSON body cannot be read.
            self.parse = Parse::Skip;
        }
    }

    /// What [`request::analyze`] found in the request body.
    pub(crate) fn set_request_info(&mut self, info: RequestInfo) {
        self.request = Some(info);
    }

    /// What [`request::analyze`] found, once set.
    pub(crate) fn request_info(&self) -> Option<&RequestInfo> {
        self.request.as_ref()
    }

    /// Defects found after the request was forwarded (`report` mode), or
    /// in a later message of the same turn (a WebSocket `response.inject`),
    /// up to [`MAX_TURN_REPAIRS`] in all: a turn's injects accumulate them
    /// while its response is open, and a client sending refused outputs
    /// in every inject must not grow the turn without bound (its
    /// `toolwarden_repairs_total` still counts each change made).
    pub(crate) fn add_repairs(&mut self, defects: Vec<String>) {
        let room = MAX_TURN_REPAIRS.saturating_sub(self.base.repairs.len());
        self.base.repairs.extend(defects.into_iter().take(room));
    }

    /// Add to the gateway's own time on this request.
    pub(crate) fn add_overhead(&mut self, spent: Duration) {
        self.overhead += spent;
    }

    /// The response's calls were whole at `ms` (unix ms), before it ended
    /// (a Gemini Live `toolCall` turn kept open for its usage): their time,
    /// from which their results' execution time counts, instead of its end.
    pub(crate) fn calls_whole_at(&mut self, ms: i64) {
        self.calls_at_ms = Some(ms);
    }

    /// The request went upstream now.
    pub(crate) fn sent(&mut self) {
        self.sent_at = Some(Instant::now());
    }

    /// The request failed before a response: record it with the status the
    /// client gets.
    pub(crate) fn fail(mut self, err: &ProxyError) {
        self.status = err.status().as_u16();
        self.error = Some(err.to_string());
        self.finish();
    }

    /// A WebSocket turn has no response head: its first byte is its first
    /// event (`arrived`), and until then there is none.
    pub(crate) fn first_event(&mut self, arrived: bool) {
        self.first_byte = if arrived {
            self.sent_at.map(|t| t.elapsed())
        } else {
            None
        };
    }

    /// Response headers arrived: choose how to read the body (`bounds`:
    /// `None` when it is not read at all).
    pub(crate) fn on_response(
        &mut self,
        meta: ResponseMeta<'_>,
        gemini_stream: bool,
        bounds: Option<&ParseBounds>,
    ) {
        let status = meta.status;
        self.status = status;
        self.first_byte = self.sent_at.map(|t| t.elapsed());
        let sse = meta
            .content_type
            .is_some_and(toolwarden_wire::sse::is_sse_content_type);
        // Bedrock's streams are AWS event-stream frames (issue 18).
        let event_stream = meta
            .content_type
            .is_some_and(|v| v.starts_with(b"application/vnd.amazon.eventstream"));
        self.streaming = sse || gemini_stream || event_stream;
        let (Some(dialect), Some(bounds)) = (self.base.dialect, bounds) else {
            return;
        };
        if !(200..300).contains(&status) {
            return;
        }
        let parse_limit = bounds.limit;
        // Whole JSON bodies are decoded (bounded) on the copy once they
        // end; a compressed stream (Anthropic gzips SSE for clients that
        // accept it) is decoded piece by piece ahead of its parser.
        let codings = match meta.content_encoding.map(Codings::parse) {
            None => Codings::default(),
            Some(Ok(codings)) => codings,
            Some(Err(_)) => {
                self.sinks.metrics.emit(UnparsedResponse {
                    reason: UnparsedReason::Compressed,
                });
                return;
            }
        };
        if (sse || gemini_stream) && !codings.is_identity() {
            match StreamDecoder::new(&codings, self.decode_limit) {
                Ok(decoder) => {
                    self.decoding = Some(Box::new(Decoding {
                        decoder: Some(decoder),
                        plain: Vec::new(),
                    }));
                }
                Err(_) => {
                    self.sinks.metrics.emit(UnparsedResponse {
                        reason: UnparsedReason::Compressed,
                    });
                    return;
                }
            }
        }
        // A stream's parse keeps its calls and their arguments: bounded
        // by the same limit as a copied body, since nothing else bounds a
        // stream whose arguments never end. Past it the parser keeps
        // nothing more, and the response counts as too large to parse.
        self.parse = if event_stream {
            // ConverseStream frames, or InvokeModelWithResponseStream
            // `chunk` frames carrying the dialect's events.
            let parser = match dialect {
                Dialect::BedrockConverse => StreamParser::new(dialect),
                _ => StreamParser::bedrock_invoke(dialect),
            };
            Parse::Stream(Box::new(parser.limit(parse_limit)), bounds.copies.hold())
        } else if sse || gemini_stream {
            let mut parser = StreamParser::new(dialect).limit(parse_limit);
            if let Some(n) = self.request.as_ref().and_then(|info| info.choices) {
                parser = parser.choices(n);
            }
            Parse::Stream(Box::new(parser), bounds.copies.hold())
        } else {
            let hint = meta
                .content_length
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
                .min(parse_limit);
            let mut held = bounds.copies.hold();
            if held.cover(hint).is_err() {
                return self.no_room();
            }
            Parse::Buffer {
                buf: Vec::with_capacity(hint),
                limit: parse_limit,
                held,
                codings,
            }
        };
    }

    /// A chunk of the response body passed to the client.
    pub(crate) fn feed(&mut self, chunk: &[u8]) {
        if matches!(self.parse, Parse::Skip) {
            return;
        }
        let Some(decoding) = self.decoding.as_mut() else {
            return self.feed_plain(chunk);
        };
        let Some(decoder) = decoding.decoder.as_mut() else {
            return;
        };
        let mut plain = std::mem::take(&mut decoding.plain);
        plain.clear();
        let fed = guard(|| decoder.feed(chunk, &mut plain));
        self.decoded(fed, &plain);
        if let Some(decoding) = self.decoding.as_mut() {
            decoding.plain = plain;
        }
    }

    /// What a piece of a compressed stream decoded to, or why it did not.
    fn decoded(&mut self, outcome: Result<Result<(), CodingError>, String>, plain: &[u8]) {
        match outcome {
            Ok(Ok(())) => self.feed_plain(plain),
            Ok(Err(e)) if e.kind == CodingErrorKind::TooLarge => self.decoded_past_limit(),
            _ => self.undecodable(),
        }
    }

    /// The end of a compressed stream: what its decoder still holds.
    fn finish_decoding(&mut self) {
        let Some(decoding) = self.decoding.take() else {
            return;
        };
        if matches!(self.parse, Parse::Skip) {
            return;
        }
        let Decoding { decoder, mut plain } = *decoding;
        let Some(decoder) = decoder else {
            return;
        };
        plain.clear();
        let finished = guard(|| decoder.finish(&mut plain));
        self.decoded(finished, &plain);
    }

    /// A compressed stream decoded past `decode_limit`: it is not read
    /// further, what its parser kept is recorded, and the request's calls
    /// are marked as possibly incomplete (the `too_large` metric counts it
    /// once the view is made).
    fn decoded_past_limit(&mut self) {
        if let Some(decoding) = self.decoding.as_mut() {
            decoding.decoder = None;
        }
        self.over_limit = true;
    }

    /// The copies held at once (`max_buffered_response_bytes`) leave no
    /// room for this one: the response passes whole, unread (its copy
    /// freed), counted as `no_room`, and the request's calls are marked as
    /// possibly incomplete.
    fn no_room(&mut self) {
        self.sinks.metrics.emit(UnparsedResponse {
            reason: UnparsedReason::NoRoom,
        });
        self.parse = Parse::Skip;
        self.over_limit = true;
    }

    /// The stream is not valid in its coding:
    /// it is not read further.
    fn undecodable(&mut self) {
        self.sinks.metrics.emit(UnparsedResponse {
            reason: UnparsedReason::Invalid,
        });
        self.parse = Parse::Skip;
        self.decoding = None;
    }

    /// A stream's parse grew past the room the copies held at once
    /// (`max_buffered_response_bytes`) leave it: it is not read further
    /// (the caller has let go of the event it was reading), what it kept
    /// is recorded (that much of its room held until then), counted as
    /// `no_room`, and the request's calls are marked as possibly
    /// incomplete.
    fn no_room_to_parse(&mut self) {
        self.sinks.metrics.emit(UnparsedResponse {
            reason: UnparsedReason::NoRoom,
        });
        self.no_room_to_parse = true;
        self.over_limit = true;
        // A compressed stream is not decoded further either.
        if let Some(decoding) = self.decoding.as_mut() {
            decoding.decoder = None;
        }
    }

    /// Plain bytes of the response body, for the parser.
    fn feed_plain(&mut self, chunk: &[u8]) {
        let outcome = match &mut self.parse {
            Parse::Skip => return,
            Parse::Stream(..) if self.no_room_to_parse => return,
            Parse::Stream(parser, held) => {
                let fed = guard(|| parser.feed(chunk));
                // What the parse holds is covered as it grows, a chunk's
                // growth at a time, until its final event: a parse that has
                // read its response whole has nothing left to stop.
                let complete = parser.is_complete();
                if fed.is_ok() && !complete && held.cover(parser.footprint()).is_err() {
                    // The event it was reading is let go: what it kept
                    // stays, with its room, until it is recorded.
                    parser.stop();
                    held.shrink_to(parser.footprint());
                    return self.no_room_to_parse();
                }
                fed
            }
            Parse::Buffer {
                buf, limit, held, ..
            } => {
                let need = buf.len() + chunk.len();
                if need > *limit {
                    self.sinks.metrics.emit(UnparsedResponse {
                        reason: UnparsedReason::TooLarge,
                    });
                    self.parse = Parse::Skip;
                    self.over_limit = true;
                    return;
                }
                // The copy's capacity is what it holds: grown as a `Vec`
                // grows (doubling, within the limit), and covered first.
                if need > buf.capacity() {
                    let capacity = need.max(buf.capacity().saturating_mul(2)).min(*limit);
                    if held.cover(capacity).is_err() {
                        return self.no_room();
                    }
                    buf.reserve_exact(capacity - buf.len());
                }
                buf.extend_from_slice(chunk);
                return;
            }
        };
        if outcome.is_err() {
            self.sinks.metrics.emit(UnparsedResponse {
                reason: UnparsedReason::ParserError,
            });
            self.parse = Parse::Skip;
            return;
        }
        if !self.final_recorded && self.final_event_seen() {
            self.record_calls_now();
        }
    }

    /// Whether the response, whose client is gone, is worth reading on
    /// from the upstream: its stream's final event has passed and its
    /// trailer has not (`StreamParser::trailer_pending`: Chat's usage
    /// chunk, ConverseStream's `metadata`), so the usage would be lost
    /// with the client. Not while the gateway's grace period is over.
    pub(crate) fn reads_on(&self) -> bool {
        !self.done
            && !self.sinks.grace_over.is_raised()
            && !self.no_room_to_parse
            && matches!(&self.parse, Parse::Stream(parser, _) if parser.trailer_pending())
    }

    /// The stream's final event was just fed, before its bytes go on to
    /// the client: its calls are whole, and recorded now (`calls`), since
    /// the client may answer them before the transport ends (a provider
    /// that keeps the stream open a while, a loaded gateway).
    fn record_calls_now(&mut self) {
        let (Parse::Stream(parser, _), Some(info)) = (&self.parse, &self.request) else {
            return;
        };
        let Ok(view) = guard(|| parser.view_so_far()) else {
            return;
        };
        let at = *self.calls_at_ms.get_or_insert_with(now_ms);
        calls::record(
            &self.sinks,
            &self.base,
            info,
            &view,
            at,
            self.calls_recorded,
        );
        self.calls_recorded = self.calls_recorded.max(view.calls.len());
        self.final_recorded = true;
    }

    /// The calls of a stream still under way that are whole
    /// ([`StreamParser::whole_calls`]: a Responses response waiting for
    /// its client's outputs, which the WebSocket beta's `response.inject`
    /// commits to it), each recorded now unless it was already: the client
    /// answers them before the response ends, and a call is recorded
    /// before its result. Given back (all of them, and their kinds, in
    /// the response's view so far), for the request of their results to
    /// read beside them. Costs a copy of the parse state (bounded as it
    /// is), only when such a message asks it.
    pub(crate) fn whole_calls_now(&mut self) -> Option<toolwarden_wire::ResponseView> {
        let (Parse::Stream(parser, _), Some(info)) = (&self.parse, &self.request) else {
            return None;
        };
        let whole = parser.whole_calls();
        if whole == 0 {
            return None;
        }
        let mut view = guard(|| parser.view_so_far()).ok()?;
        view.calls.truncate(whole);
        view.call_kinds.retain(|(i, _)| *i < whole);
        if whole > self.calls_recorded {
            calls::record(
                &self.sinks,
                &self.base,
                info,
                &view,
                now_ms(),
                self.calls_recorded,
            );
            self.calls_recorded = whole;
        }
        Some(view)
    }

    /// The ids of every call the response's stream has begun so far,
    /// whole or not (`StreamParser::begun_calls`), each with the position
    /// of its first call; `None` when there is no parse, or it may have
    /// missed a call.
    pub(crate) fn begun_calls(&self) -> Option<std::collections::HashMap<&str, usize>> {
        let Parse::Stream(parser, _) = &self.parse else {
            return None;
        };
        let mut calls = std::collections::HashMap::new();
        for (at, id) in parser.begun_calls()?.enumerate() {
            calls.entry(id).or_insert(at);
        }
        Some(calls)
    }

    /// The response's id, once its stream has named it.
    pub(crate) fn response_id(&self) -> Option<&str> {
        match &self.parse {
            Parse::Stream(parser, _) => parser.response_id(),
            Parse::Skip | Parse::Buffer { .. } => None,
        }
    }

    /// What was known of the request when it was forwarded.
    pub(crate) fn base(&self) -> &RequestBase {
        &self.base
    }

    /// The upstream stream broke after it had started: what was parsed of
    /// it is recorded, with the error — unless the dialect's final event
    /// had passed, which makes the response complete.
    pub(crate) fn stream_failed(&mut self, err: &ProxyError) {
        if !self.final_event_seen() {
            self.error = Some(err.to_string());
        }
        self.cut_short();
    }

    /// The gateway closed the client's HTTP/1 connection because a write
    /// of the response waited `limit` (`client_body_timeout`) with
    /// nothing read: the request's error names that (unless the dialect's
    /// final event had passed), not a client gone. Logged with the request
    /// id.
    pub(crate) fn client_stalled(&mut self, limit: Duration) {
        log_cut(&self.base.request_id, limit, "connection closed");
        if self.error.is_none() && !self.final_event_seen() {
            self.error = Some(crate::write_limit::cut_error(limit));
        }
    }

    /// The provider reported that the turn failed in a message of its own
    /// (a voice socket's `response.done` with `status: failed`, its
    /// `error` event): the request's error, unless one is set already.
    pub(crate) fn provider_failed(&mut self, error: &str) {
        if self.error.is_none() {
            self.error = Some(finished::provider_error(error));
        }
    }

    /// The response is read here, not in the record task, and its calls
    /// recorded (those not recorded at its final event): the client may
    /// answer them as soon as it has the last bytes, and a continuation
    /// naming a Responses API response (`previous_response_id`), or the
    /// reply of an Anthropic message thread, must find the session it
    /// continues.
    fn read_now(
        &mut self,
        info: &RequestInfo,
        known: bool,
    ) -> Option<toolwarden_wire::ResponseView> {
        let parse = std::mem::replace(&mut self.parse, Parse::Skip);
        // A parse stopped for want of room was counted as `no_room`.
        let too_large = self.over_limit && !self.no_room_to_parse;
        let view = response_view(&self.sinks, self.base.dialect, parse, self.cut, too_large);
        if let Some(view) = &view {
            if known
                && (self.base.dialect == Some(Dialect::OpenAiResponses) || info.threaded)
                && let Some(id) = view.id.clone()
            {
                self.sinks.responses.insert(id, info.session.clone());
            }
            let at = self.calls_at_ms.unwrap_or_else(now_ms);
            let skip = self.calls_recorded;
            calls::record(&self.sinks, &self.base, info, view, at, skip);
        }
        view
    }

    /// The response ended normally (or as far as it will): record it.
    pub(crate) fn finish(&mut self) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        self.finish_decoding();
        // A session known from the request (its analysis or headers), for
        // a continuation of its Responses API response to join.
        let known = self.request.is_some() || self.base.header_session.is_some();
        let info = self.request.take().unwrap_or_else(|| RequestInfo {
            session: self
                .base
                .header_session
                .clone()
                .unwrap_or_else(|| session::from_body(None, None, || None, None)),
            model: self.base.path_model.as_deref().map(limits::owned_name),
            parse_error: None,
            choices: None,
            threaded: false,
        });
        // Before `base` is taken: it names the dialect.
        let response = self.read_now(&info, known);
        let finished = Finished {
            counted: self.counted.take(),
            sinks: self.sinks.clone(),
            base: std::mem::replace(&mut self.base, empty_base()),
            request: info,
            overhead: self.overhead,
            latency: self.sent_at.map(|t| t.elapsed()).unwrap_or_default(),
            first_byte: self.first_byte,
            status: self.status,
            streaming: self.streaming,
            response,
            error: self.error.take(),
            metrics_only: self.metrics_only,
            over_limit: self.over_limit,
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                self.sinks.pending.fetch_add(1, Ordering::AcqRel);
                handle.spawn(finished.record());
            }
            Err(_) => tracing::warn!("response finished outside a runtime; not recorded"),
        }
    }
}

impl Drop for Observation {
    fn drop(&mut self) {
        if !self.done {
            // Dropped unfinished: its client went away, or the gateway cut
            // it at the end of the shutdown's grace period (the worker
            // drops what is still in flight) or because its client left
            // its HTTP/2 stream or its HTTP/1 connection unread, which is
            // said as such, not as the client's 499. A client that hangs
            // up once it has the final event (the Codex CLI after
            // `response.completed`) got a complete response; otherwise the
            // ending is named. Either way, what was parsed of the stream
            // is recorded.
            let shutdown = self.sinks.grace_over.is_raised();
            // An HTTP/2 stream reset because its client left a chunk of
            // it unread for `client_body_timeout` is dropped under
            // `stream_stall::stalled`, and hyper's HTTP/1 connection a
            // write to its client ended for that long under
            // `write_limit::cut`: the gateway's cut, named as such.
            let stalled = crate::stream_stall::stalled()
                .map(|limit| {
                    (
                        limit,
                        crate::stream_stall::stall_error(limit),
                        "HTTP/2 stream reset",
                    )
                })
                .or_else(|| {
                    crate::write_limit::cut().map(|limit| {
                        (
                            limit,
                            crate::write_limit::cut_error(limit),
                            "connection closed",
                        )
                    })
                });
            if let Some((limit, _, what)) = &stalled {
                log_cut(&self.base.request_id, *limit, what);
            }
            if self.error.is_none() && !self.final_event_seen() {
                self.error = Some(match stalled {
                    Some((_, error, _)) => error,
                    None if shutdown => CUT_BY_SHUTDOWN.into(),
                    None => "client disconnected before the response finished".into(),
                });
            }
            if self.status == 0 {
                // No response yet: nginx's "client closed request", or the
                // gateway's own 503.
                self.status = if shutdown {
                    CUT_BEFORE_ANSWER
                } else {
                    CLIENT_CLOSED_REQUEST
                };
            }
            self.cut_short();
            self.finish();
        }
    }
}

/// Logs a request whose client the gateway cut off for reading nothing
/// of its response for `limit` (`client_body_timeout_ms`): `what` it did.
fn log_cut(request_id: &str, limit: Duration, what: &str) {
    tracing::info!(
        request_id = %request_id,
        limit_ms = limit.as_millis() as u64,
        "{what}: its client read nothing of the response for client_body_timeout_ms"
    );
}

fn empty_base() -> RequestBase {
    RequestBase {
        request_id: String::new(),
        at_ms: 0,
        provider: Provider::OpenAi,
        dialect: None,
        path: String::new(),
        repair_mode: "",
        repairs: Vec::new(),
        header_session: None,
        trace_parent: None,
        trace_state: None,
        server_address: None,
        server_port: None,
        path_model: None,
    }
}
