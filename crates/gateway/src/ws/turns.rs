//! Reading a WebSocket's messages as Responses requests and responses.
//!
//! A client message `{"type":"response.create", …}` is a `POST
//! /v1/responses` body with an envelope field: it goes through the HTTP
//! path's steps ([`Outbound`]: pairing check and `fix`-mode repair before
//! it is sent, the request view and session once it is on its way). The
//! events the upstream sends next are its response: each is fed to the
//! Responses stream parser as one SSE event, and the turn is recorded when
//! its last event (`response.completed`, `.failed`, `.incomplete`,
//! `error`) arrives. A `response.inject` (the beta's tool outputs
//! committed to a response under way, [`super::inject`]) is read once
//! sent, as results of the turn whose response it names. Other client
//! messages (`response.cancel`, Codex's `response.processed`, …) pass
//! unread; one that is not a JSON object
//! with a `type` (a message cut short included) is counted as unparsed.
//!
//! Turns are kept in the order sent (bounded: past [`MAX_PENDING`] the
//! oldest is recorded as it stands, with an error saying so), each with its lane: a
//! `response.create` may name a `stream_id`, and then the upstream runs it
//! on that lane, in parallel with other lanes, its events echoing the
//! `stream_id`. An event goes to the oldest open turn of its lane; one
//! naming no lane (or a lane no open turn has) to the oldest open turn.
//! A `response.created` goes to the oldest open turn of its lane that has
//! had none; when there is none, the server began that response on its own
//! (the automatic successor of a steered or completed response,
//! `response.steer`), and it is a turn of its own, on that lane, recorded
//! with the session and model of the lane's last turn.

use std::{collections::VecDeque, sync::Arc};

use bytes::Bytes;
use serde::Deserialize;

use toolwarden_wire::{
    Dialect,
    openai_responses::{InjectedCall, inject_defects, repair_inject},
};

use super::{inject, live::Live};
use crate::{
    RepairMode,
    metrics::events::RepairApplied,
    observe::{
        Observation, RequestBase, ResponseMeta,
        client_headers::ClientHeaders,
        guard, now_ms,
        request::{self, ReadBody, RequestFacts, RequestInfo},
    },
    proxy::{self, Outbound},
    routes::ProxyRoute,
    state::Shared,
};

/// Turns sent and not yet answered in full, per socket.
pub(crate) const MAX_PENDING: usize = 64;

/// The event types that end a turn.
const LAST_EVENTS: [&str; 4] = [
    "response.completed",
    "response.failed",
    "response.incomplete",
    "error",
];

/// One socket's turns.
pub(crate) struct Turns {
    shared: Arc<Shared>,
    route: ProxyRoute,
    path: String,
    header_session: ClientHeaders,
    pending: VecDeque<Pending>,
    /// Scratch for one event as SSE (reused: one feed per event).
    sse: Vec<u8>,
    /// WebSocket mode's socket: its messages are read. `false`: another
    /// WebSocket, relayed unread unless it is a voice socket (`live`).
    reads: bool,
    /// A voice socket's records (Realtime, Gemini Live).
    live: Option<Box<Live>>,
    /// What the request of the last turn that ended on each lane was
    /// (session, model), for a response the server begins on its own
    /// there; the most recent last, at most [`MAX_PENDING`] lanes.
    ended: VecDeque<(Option<Box<str>>, RequestInfo)>,
}

/// A turn sent and not yet answered in full.
struct Pending {
    /// Its `stream_id`, if the message named one.
    lane: Option<Box<str>>,
    observation: Observation,
    /// An event of it has arrived (its first byte is timed then).
    answered: bool,
    /// Its `response.created` has arrived.
    created: bool,
    /// What the injects into its response committed.
    injects: inject::Commits,
}

/// A client message, read.
pub(crate) enum Outgoing {
    /// A `response.create`: what to send (repaired in `fix` mode), the
    /// turn to start once it is sent, and its lane (`stream_id`).
    Turn(Bytes, Box<Outbound>, Option<Box<str>>),
    /// Anything else: sent as it came.
    Pass(Bytes),
    /// A voice socket's message, or a `response.inject`: sent as it
    /// came, then read ([`Turns::client_sent`]).
    Read(Bytes),
    /// A `response.inject` repaired in `fix` mode ([`Turns::inject`]):
    /// what to send, then the client's message, read once sent.
    Inject(Bytes, Bytes),
}

#[derive(Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    pub(crate) kind: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    pub(crate) stream_id: Option<std::borrow::Cow<'a, str>>,
}

// === impl Turns ===

impl Turns {
    /// No turns yet; `reads`: WebSocket mode's; `live`: a voice socket's
    /// records (else messages pass unread).
    pub(crate) fn new(
        shared: Arc<Shared>,
        route: ProxyRoute,
        path: String,
        header_session: ClientHeaders,
        reads: bool,
        live: Option<Live>,
    ) -> Turns {
        Turns {
            shared,
            route,
            path,
            header_session,
            pending: VecDeque::new(),
            sse: Vec::new(),
            reads,
            live: live.map(Box::new),
            ended: VecDeque::new(),
        }
    }

    /// Read a client text message.
    pub(crate) fn client_message(&mut self, payload: Bytes) -> Outgoing {
        if self.live.is_some() {
            return Outgoing::Read(payload);
        }
        if !self.reads {
            return Outgoing::Pass(payload);
        }
        // `type` as the first or last member without a scan of the body.
        // The one-pass scan, at most once: for a `type` elsewhere (a
        // serializer that sorts keys puts it last, past the whole body), or
        // for the lane of a message that names one (most do not: only one
        // with the key is scanned). What neither reads, as before.
        let edge = edge_type(&payload);
        let names_lane = memchr::memmem::find(&payload, b"\"stream_id\"").is_some();
        let head = (edge.is_none() || names_lane)
            .then(|| read_event(&payload))
            .flatten();
        let kind = edge
            .map(std::borrow::Cow::Borrowed)
            .or_else(|| head.as_ref().and_then(|h| h.kind.clone()))
            .or_else(|| event_type(&payload));
        let lane: Option<Box<str>> = head
            .and_then(|h| h.lane)
            .map(|l| crate::limits::clip_id(&l).into());
        match kind {
            // The HTTP path's parse reads (and counts) a bad body.
            Some(kind) if kind == "response.create" => {}
            // Tool outputs committed to a response under way: repaired in
            // `fix` mode, read once sent (`Turns::client_sent`).
            Some(kind) if kind == "response.inject" => return self.inject(payload),
            Some(_) if is_json(&payload) => return Outgoing::Pass(payload),
            _ => {
                self.shared
                    .sinks
                    .metrics
                    .unparsed_request(self.route.provider);
                return Outgoing::Pass(payload);
            }
        }
        let base = self.request_base();
        let mut outbound = Outbound::prepare(&self.shared, &self.route, base, payload, None);
        outbound.observation.sent();
        Outgoing::Turn(outbound.forward.clone(), Box::new(outbound), lane)
    }

    /// A `response.inject`, before it is sent. In `fix` mode the outputs
    /// the API refuses are taken out (`openai_responses::repair_inject`:
    /// an output for a call its response never made, a second output for
    /// one call, one for a call an earlier inject committed), judged
    /// against the calls the response has begun, when
    /// the message names an open turn's response whose parse missed none;
    /// the turn's request records the repairs, as a repaired
    /// `response.create`'s does. The client's message is what is read
    /// once sent, as the HTTP path reads the client's body.
    fn inject(&mut self, payload: Bytes) -> Outgoing {
        if self.shared.config.repair != RepairMode::Fix {
            return Outgoing::Read(payload);
        }
        let Some(message) = inject::read(&payload) else {
            return Outgoing::Read(payload);
        };
        let id = Some(&*message.response_id);
        let Some(turn) = (self.pending.iter_mut()).find(|p| p.observation.response_id() == id)
        else {
            return Outgoing::Read(payload);
        };
        let repaired = {
            let Some(calls) = turn.observation.begun_calls() else {
                return Outgoing::Read(payload);
            };
            let injects = &turn.injects;
            guard(|| repair_inject(&payload, |id| call_state(&calls, injects, id, None)))
        };
        let Ok(Ok(repaired)) = repaired else {
            return Outgoing::Read(payload);
        };
        if !repaired.is_changed() {
            return Outgoing::Read(payload);
        }
        let mut defects = Vec::with_capacity(repaired.changes.len());
        for change in &repaired.changes {
            self.shared.sinks.metrics.emit(RepairApplied {
                dialect: Dialect::OpenAiResponses,
                defect: change.defect,
            });
            defects.push(change.defect.as_str().to_string());
        }
        turn.observation.add_repairs(defects);
        let forward = Bytes::from(repaired.body.into_owned());
        Outgoing::Inject(forward, payload)
    }

    /// A client message read once sent: a voice socket's, or WebSocket
    /// mode's `response.inject`.
    pub(crate) fn client_sent(&mut self, payload: &[u8]) {
        match self.live.as_mut() {
            Some(live) => live.client(payload),
            None if self.reads => self.injected(payload),
            None => {}
        }
    }

    /// A `response.inject` ([`inject`]), sent: in `report` mode one with
    /// outputs the API refuses has them recorded as the turn's defects (as
    /// a `response.create`'s are) and is not read further (the API commits
    /// none of its items); else its items (less outputs an earlier inject
    /// committed, read with it) are read as the
    /// results of the request of the open turn whose response it names,
    /// beside that response's calls whole so far, which are recorded first
    /// (a call before its result, as over HTTP). One naming no open
    /// response commits nothing (the server answers
    /// `response.inject.failed`, and the client may send its items again
    /// in a `response.create`, where they are read): it is not read.
    fn injected(&mut self, payload: &[u8]) {
        let Some(message) = inject::read(payload) else {
            self.shared
                .sinks
                .metrics
                .unparsed_request(self.route.provider);
            return;
        };
        let id = Some(&*message.response_id);
        let Some(turn) = (self.pending.iter_mut()).find(|p| p.observation.response_id() == id)
        else {
            return;
        };
        // The calls it carries, for a repeat in a later inject, and the
        // outputs the API refuses it for (in `fix` mode taken out before
        // it was sent).
        let (carried, defects, repeats) = match turn.observation.begun_calls() {
            Some(calls) => {
                let mut carried = Vec::new();
                let state = |id: &str| call_state(&calls, &turn.injects, id, Some(&mut carried));
                let defects = guard(|| inject_defects(payload, state))
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_default();
                // Outputs an earlier inject committed: read with it.
                let repeats: Vec<usize> = (defects.iter())
                    .filter(|d| {
                        let at = d.call_ids.first().and_then(|id| calls.get(id.as_str()));
                        at.is_some_and(|&at| turn.injects.answered(at))
                    })
                    .map(|d| d.message_index)
                    .collect();
                (Some(carried), defects, repeats)
            }
            None => (None, Vec::new(), Vec::new()),
        };
        turn.injects.sent(carried);
        if self.shared.config.repair == RepairMode::Report && !defects.is_empty() {
            // Recorded with the turn's request, as a `response.create`'s
            // are; the API commits none of its items (the client sends
            // them again, and they are read then).
            let defects = defects.iter().map(|d| d.kind.as_str().to_string());
            turn.observation.add_repairs(defects.collect());
            return;
        }
        let Some(info) = turn.observation.request_info() else {
            return;
        };
        let (session, model) = (info.session.clone(), info.model.clone());
        let calls = turn.observation.whole_calls_now();
        let base = turn.observation.base();
        let facts = RequestFacts {
            request_id: base.request_id.clone(),
            at_ms: now_ms(),
            provider: base.provider,
            target: Dialect::OpenAiResponses.into(),
            path_model: model,
            // The turn's session, whatever the items alone would give.
            header_session: Some(session),
            trace_parent: base.trace_parent,
            trace_state: base.trace_state.clone(),
        };
        let mut input = message.input;
        if !repeats.is_empty() {
            input = (input.into_iter().enumerate())
                .filter(|(i, _)| !repeats.contains(i))
                .map(|(_, item)| item)
                .collect();
        }
        let body = inject::results_body(calls.as_ref(), &input);
        let read = ReadBody::view(Dialect::OpenAiResponses, body);
        request::analyze(&self.shared.sinks, &facts, &read);
    }

    /// Whether binary messages are read too (Gemini Live's JSON comes so).
    pub(crate) fn reads_binary(&self) -> bool {
        self.live.as_ref().is_some_and(|l| l.reads_binary())
    }

    /// A client binary message, sent: not a Responses or Realtime message;
    /// Gemini Live's JSON, read.
    pub(crate) fn client_binary(&mut self, payload: &[u8]) {
        if self.reads_binary() {
            return self.client_sent(payload);
        }
        if !self.reads && self.live.is_none() {
            return;
        }
        self.shared
            .sinks
            .metrics
            .unparsed_request(self.route.provider);
    }

    /// An upstream binary message, relayed: on a socket whose messages are
    /// read and come as text (WebSocket mode, Realtime) it is none of its
    /// protocol's, and counted as unparsed, as a text message that is not
    /// one is ([`Turns::event`]; Gemini Live's JSON comes in binary frames
    /// and is read there).
    pub(crate) fn server_binary(&self) {
        if (self.reads || self.live.is_some()) && !self.reads_binary() {
            self.shared.sinks.metrics.unparsed_response("invalid");
        }
    }

    /// The turn's message is on its way: read it (while the upstream
    /// works) and wait for its events (on `lane`, if it named one).
    pub(crate) async fn sent(&mut self, outbound: Outbound, lane: Option<Box<str>>) {
        let (mut observation, _changes) = outbound.analyze(&self.shared).await;
        self.read_as_events(&mut observation);
        self.make_room();
        self.pending.push_back(Pending {
            lane,
            observation,
            answered: false,
            created: false,
            injects: inject::Commits::default(),
        });
    }

    /// A request on this socket, as of now.
    fn request_base(&self) -> RequestBase {
        proxy::request_base(
            &self.shared,
            &self.route,
            &self.path,
            self.header_session.clone(),
            now_ms(),
        )
    }

    /// A turn's events are read as a stream's (each message one SSE
    /// event's data), from now on.
    fn read_as_events(&self, observation: &mut Observation) {
        observation.on_response(
            ResponseMeta {
                status: 200,
                content_type: Some(b"text/event-stream"),
                content_encoding: None,
                content_length: None,
            },
            false,
            Some(&self.shared.parse_bounds),
        );
        observation.first_event(false);
    }

    /// Past [`MAX_PENDING`] open turns, the oldest is recorded as it
    /// stands, saying why (not as complete).
    fn make_room(&mut self) {
        if self.pending.len() >= MAX_PENDING
            && let Some(mut oldest) = self.pending.pop_front()
        {
            oldest
                .observation
                .stream_failed(&crate::errors::ProxyError::new(
                    crate::errors::ProxyErrorKind::MidStream,
                    "websocket",
                    format!("more than {MAX_PENDING} turns open on one socket: the oldest is recorded as it stands"),
                ));
            oldest.observation.finish();
        }
    }

    /// A response the server began on its own on `lane` (no open turn
    /// awaits its `response.created`): a turn of its own, with the request
    /// of the lane's last turn (else the socket's last, else the upgrade's
    /// session), put before the turns still waiting for their response;
    /// where it is.
    fn successor(&mut self, lane: Option<Box<str>>) -> usize {
        let info = (self.ended.iter().rev())
            .find(|(l, _)| *l == lane)
            .or(self.ended.back())
            .map(|(_, info)| RequestInfo {
                // Its own request had no body to fail to read.
                parse_error: None,
                ..info.clone()
            });
        let base = self.request_base();
        let info = info.unwrap_or_else(|| RequestInfo {
            session: (base.header_session.clone())
                .unwrap_or_else(|| crate::observe::session::from_body(None, None, || None, None)),
            model: None,
            parse_error: None,
            choices: None,
            threaded: false,
        });
        let mut observation = Observation::new(self.shared.sinks.clone(), base);
        observation.set_request_info(info);
        observation.sent();
        self.read_as_events(&mut observation);
        self.make_room();
        let at = (self.pending.iter().position(|p| !p.created)).unwrap_or(self.pending.len());
        self.pending.insert(
            at,
            Pending {
                lane,
                observation,
                answered: false,
                created: false,
                injects: inject::Commits::default(),
            },
        );
        at
    }

    /// A turn on `lane` ended: its request (`info`) kept for a response
    /// the server begins on its own on that lane next.
    fn ended(&mut self, lane: Option<Box<str>>, info: Option<&RequestInfo>) {
        let Some(info) = info else { return };
        self.ended.retain(|(l, _)| *l != lane);
        if self.ended.len() >= MAX_PENDING {
            self.ended.pop_front();
        }
        self.ended.push_back((lane, info.clone()));
    }

    /// An upstream text message: an event of the oldest open turn of its
    /// lane (of the oldest open turn if it names none, or one no open turn
    /// has).
    pub(crate) fn event(&mut self, payload: &[u8]) {
        if let Some(live) = self.live.as_mut() {
            return live.server(payload);
        }
        if !self.reads {
            return;
        }
        let head = read_event(payload);
        if head.as_ref().is_none_or(|h| h.kind.is_none()) {
            self.shared.sinks.metrics.unparsed_response("invalid");
        }
        let (kind, lane) = head.map_or((None, None), |h| (h.kind, h.lane));
        // Bounded as the turn's lane was (`client_message`).
        let lane = lane.as_deref().map(crate::limits::clip_id);
        let on_lane = |p: &Pending| lane.as_deref().is_none_or(|l| p.lane.as_deref() == Some(l));
        let created = kind.as_deref() == Some("response.created");
        let refusal = kind.as_deref() == Some("error") && !in_stream(payload);
        match kind.as_deref() {
            Some(answer @ ("response.inject.created" | "response.inject.failed")) => {
                let id = inject::answer_response_id(payload);
                let id = id.as_deref();
                if let Some(turn) = (self.pending.iter_mut())
                    .find(|p| id.is_some() && p.observation.response_id() == id)
                {
                    (turn.injects).answered_inject(answer == "response.inject.created");
                }
            }
            _ if refusal => self.pending.iter_mut().for_each(|p| p.injects.refusal()),
            _ => {}
        }
        let at = if created {
            match self.pending.iter().position(|p| on_lane(p) && !p.created) {
                Some(at) => at,
                None => self.successor(lane.as_deref().map(Box::from)),
            }
        } else if refusal {
            // A refusal of a client message: a `response.create`'s (the
            // oldest of its lane not begun), else another message's (an
            // event the server does not support, a `response.cancel` of
            // nothing), which ends no turn.
            match self.pending.iter().position(|p| on_lane(p) && !p.created) {
                Some(at) => at,
                None => return,
            }
        } else {
            (lane.as_deref())
                .and_then(|l| {
                    self.pending
                        .iter()
                        .position(|p| p.lane.as_deref() == Some(l))
                })
                .unwrap_or(0)
        };
        let Some(turn) = self.pending.get_mut(at) else {
            return;
        };
        if !turn.answered {
            turn.answered = true;
            turn.observation.first_event(true);
        }
        turn.created |= created;
        as_sse(kind.as_deref(), payload, &mut self.sse);
        turn.observation.feed(&self.sse);
        if kind.is_some_and(|k| LAST_EVENTS.contains(&k.as_ref()))
            && let Some(mut turn) = self.pending.remove(at)
        {
            self.ended(turn.lane.take(), turn.observation.request_info());
            turn.observation.finish();
            if self.pending.is_empty() {
                release(&mut self.sse);
            }
        }
    }

    /// Whether every turn sent has been answered in full.
    pub(crate) fn idle(&self) -> bool {
        self.pending.is_empty() && self.live.as_ref().is_none_or(|l| l.idle())
    }

    /// The socket ended: open turns are recorded with what was seen and
    /// `error`.
    pub(crate) fn close(&mut self, error: &str) {
        if let Some(live) = self.live.as_mut() {
            live.close(error);
        }
        for Pending {
            observation: mut turn,
            ..
        } in self.pending.drain(..)
        {
            turn.stream_failed(&crate::errors::ProxyError::new(
                crate::errors::ProxyErrorKind::MidStream,
                "websocket",
                error.to_string(),
            ));
            turn.finish();
        }
    }
}

impl std::fmt::Debug for Turns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turns")
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

/// What a response knows of call `id` an inject's output names: among
/// its begun `calls`, answered by a committed inject (`injects`); an open
/// one's position is set in `carried`, if given.
fn call_state(
    calls: &std::collections::HashMap<&str, usize>,
    injects: &inject::Commits,
    id: &str,
    carried: Option<&mut Vec<u64>>,
) -> InjectedCall {
    match calls.get(id) {
        None => InjectedCall::NotMade,
        Some(&at) if injects.answered(at) => InjectedCall::Answered,
        Some(&at) => {
            if let Some(carried) = carried {
                inject::set_bit(carried, at);
            }
            InjectedCall::Open
        }
    }
}

/// Most bytes the SSE scratch keeps between turns: a turn's largest event
/// (Codex's `response.completed` can be hundreds of KB) grows it, and an
/// idle socket gives that back.
const SSE_KEEP: usize = 64 * 1024;

/// Gives back what `scratch` grew to beyond [`SSE_KEEP`].
pub(crate) fn release(scratch: &mut Vec<u8>) {
    if scratch.capacity() > SSE_KEEP {
        *scratch = Vec::new();
    }
}

/// One message as the SSE event the stream parser reads: its `type` as the
/// `event:` line (as the HTTP stream names each event, so the parser need
/// not look for it again), and `data:` lines (a message with line breaks
/// between its JSON tokens gets one `data:` per line, which SSE joins
/// back), written to `out` so that the parser is fed once per event.
pub(crate) fn as_sse(kind: Option<&str>, payload: &[u8], out: &mut Vec<u8>) {
    out.clear();
    if let Some(kind) = kind.filter(|k| !k.contains(['\n', '\r'])) {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(kind.as_bytes());
        out.push(b'\n');
    }
    // SSE ends a line at `\n`, `\r\n` or a lone `\r`; JSON allows either
    // as whitespace between tokens (never raw inside a string), so each
    // piece between them is a `data:` line of its own.
    if memchr::memchr2(b'\n', b'\r', payload).is_none() {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(payload);
        out.extend_from_slice(b"\n\n");
        return;
    }
    for line in payload.split(|&b| b == b'\n' || b == b'\r') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// What the turns need of a message: its top-level `type` and
/// `stream_id`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    pub(crate) kind: Option<std::borrow::Cow<'a, str>>,
    pub(crate) lane: Option<std::borrow::Cow<'a, str>>,
}

/// An upstream message's top-level `type` and `stream_id`, if the message
/// is one whole JSON object: one pass that counts braces outside strings
/// (escapes skipped) and takes the string values of those keys at depth 1.
/// A message cut short, trailing bytes or text that is not an object give
/// `None`. Not a full validation (each event would be parsed twice: the
/// stream parser reads the events it needs in full); a balanced object with
/// a bad token inside passes and is skipped by the parser, as on the HTTP
/// path. Wherever the keys stand (serializers that sort keys put `type`
/// last).
pub(crate) fn read_event(payload: &[u8]) -> Option<Head<'_>> {
    let p = payload.trim_ascii();
    if p.first() != Some(&b'{') || p.last() != Some(&b'}') {
        return None;
    }
    let (mut kind, mut lane) = (None, None);
    let mut escaped = false;
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(at) = memchr::memchr3(b'"', b'{', b'}', &p[i..]) {
        let at = i + at;
        match p[at] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    if at != p.len() - 1 {
                        return None;
                    }
                    if escaped {
                        // A value with escapes: read the two properly.
                        let e = serde_json::from_slice::<Envelope<'_>>(p).ok()?;
                        return Some(Head {
                            kind: Some(e.kind),
                            lane: e.stream_id,
                        });
                    }
                    return Some(Head {
                        kind: utf8(kind),
                        lane: utf8(lane),
                    });
                }
            }
            _ => {
                let end = string_end(p, at + 1)?;
                let key = &p[at + 1..end];
                if depth == 1
                    && p[end + 1..].trim_ascii_start().starts_with(b":")
                    && key.contains(&b'\\')
                {
                    // A key (a string before `:`; values are not looked
                    // at) with escapes may spell `type` (`"typ\u0065"`).
                    escaped = true;
                }
                if depth == 1 && (key == b"type" || key == b"stream_id") {
                    let rest = &p[end + 1..];
                    let after_colon = rest.trim_ascii_start().strip_prefix(b":");
                    if let Some(value) = after_colon.map(<[u8]>::trim_ascii_start)
                        && let Some(value) = value.strip_prefix(b"\"")
                    {
                        let start = p.len() - value.len();
                        let value_end = string_end(p, start)?;
                        let text = &p[start..value_end];
                        if text.contains(&b'\\') {
                            escaped = true;
                        } else if key == b"type" {
                            kind = Some(text);
                        } else {
                            lane = Some(text);
                        }
                        i = value_end + 1;
                        continue;
                    }
                }
                i = end + 1;
                continue;
            }
        }
        i = at + 1;
    }
    None
}

/// Whether an `error` event is a response stream's (it has a
/// `sequence_number`, as every event of a response does), not the
/// refusal of a client message (openai-python's `ResponseWsError`: its
/// `status` then, and no `sequence_number`).
fn in_stream(payload: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Sequenced {
        #[serde(default)]
        sequence_number: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Sequenced>(payload).is_ok_and(|e| e.sequence_number.is_some())
}

/// `bytes` as text, if they are UTF-8.
fn utf8(bytes: Option<&[u8]>) -> Option<std::borrow::Cow<'_, str>> {
    bytes
        .and_then(|b| std::str::from_utf8(b).ok())
        .map(std::borrow::Cow::Borrowed)
}

/// A message's `type` when it is the object's first member (`{"type":"…",`)
/// or its last (`,"type":"…"}`), spaces allowed, with no escapes in it:
/// found without reading the rest. In JSON text that is one object, the
/// member just after its opening brace and the one just before its closing
/// brace are top-level members; text that is not JSON is still read (and
/// counted) by the request's own parse.
pub(crate) fn edge_type(payload: &[u8]) -> Option<&str> {
    let p = payload
        .trim_ascii()
        .strip_prefix(b"{")?
        .strip_suffix(b"}")?;
    std::str::from_utf8(first_type(p).or_else(|| last_type(p))?).ok()
}

/// Inside an object's braces: `"type"`, `:`, `"value"`, then `,` or the end.
fn first_type(p: &[u8]) -> Option<&[u8]> {
    let rest = p.trim_ascii_start().strip_prefix(b"\"type\"")?;
    let rest = rest.trim_ascii_start().strip_prefix(b":")?;
    let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    let after = rest[end + 1..].trim_ascii_start();
    (rest[end] == b'"' && (after.is_empty() || after[0] == b',')).then(|| &rest[..end])
}

/// Inside an object's braces, from the end: the closing quote, the value's
/// opening quote after `:` (not an escaped one: a backslash would stand
/// before it), `"type"` after `,` or the opening brace.
fn last_type(p: &[u8]) -> Option<&[u8]> {
    let rest = p.trim_ascii_end().strip_suffix(b"\"")?;
    let open = memchr::memrchr(b'"', rest)?;
    let value = &rest[open + 1..];
    let before = rest[..open].trim_ascii_end().strip_suffix(b":")?;
    let before = before.trim_ascii_end().strip_suffix(b"\"type\"")?;
    let before = before.trim_ascii_end();
    (!value.contains(&b'\\') && (before.is_empty() || before.ends_with(b","))).then_some(value)
}

/// Where the string whose contents start at `from` ends (its closing
/// quote), escapes skipped; `None` if it does not.
fn string_end(p: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let k = memchr::memchr2(b'"', b'\\', p.get(from..)?)?;
        if p[from + k] == b'"' {
            return Some(from + k);
        }
        from += k + 2;
    }
}

/// Whether the whole message is JSON (a message cut short has a readable
/// `type` at its start, but is not).
fn is_json(payload: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(payload).is_ok()
}

/// The message's `type`: read from its start when it leads (as every
/// Responses event and client message does), else from the whole object.
pub(crate) fn event_type(payload: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let trimmed = payload.trim_ascii_start();
    if let Some(rest) = trimmed.strip_prefix(b"{\"type\":\"")
        && let Some(end) = rest.iter().position(|&b| b == b'"' || b == b'\\')
        && rest[end] == b'"'
    {
        return std::str::from_utf8(&rest[..end])
            .ok()
            .map(std::borrow::Cow::Borrowed);
    }
    serde_json::from_slice::<Envelope<'_>>(payload)
        .ok()
        .map(|e| e.kind)
}

#[cfg(test)]
mod tests {
    use super::{SSE_KEEP, as_sse, edge_type, event_type, read_event, release};

    #[test]
    fn the_scratch_gives_back_what_a_large_event_grew_it_to() {
        let mut scratch = Vec::new();
        as_sse(
            Some("response.completed"),
            &vec![b'x'; 1 << 20],
            &mut scratch,
        );
        assert!(scratch.capacity() > SSE_KEEP);
        release(&mut scratch);
        assert!(scratch.capacity() <= SSE_KEEP);
        as_sse(Some("response.output_text.delta"), b"{}", &mut scratch);
        let small = scratch.capacity();
        release(&mut scratch);
        assert_eq!(scratch.capacity(), small, "a small one is kept");
    }

    #[test]
    fn reads_a_first_or_last_type_without_a_scan() {
        assert_eq!(
            edge_type(br#"{"type":"response.create","a":1}"#),
            Some("response.create")
        );
        assert_eq!(edge_type(br#" { "type" : "x" , "a":1} "#), Some("x"));
        assert_eq!(
            edge_type(br#"{"a":{"b":1},"type":"response.create"}"#),
            Some("response.create")
        );
        assert_eq!(edge_type(br#"{"a":1, "type": "x" }"#), Some("x"));
        assert_eq!(edge_type(br#"{"type":"x"}"#), Some("x"));
        // Nested, escaped or inside a string: not at the edge of the object.
        assert_eq!(edge_type(br#"{"a":{"type":"x"}}"#), None);
        assert_eq!(edge_type(br#"{"a":"\",\"type\":\"x"}"#), None);
        assert_eq!(edge_type(br#"{"a":"b\"type\":\"x"}"#), None);
        assert_eq!(edge_type(br#"{"type":"a\"b","c":1}"#), None);
        assert_eq!(edge_type(br#"{"types":"x"}"#), None);
        assert_eq!(edge_type(br#"["type","x"]"#), None);
        assert_eq!(edge_type(b"not json"), None);
    }

    #[test]
    fn reads_the_type_of_a_whole_object_only() {
        let kind = |m: &[u8]| read_event(m).and_then(|h| h.kind).map(|k| k.into_owned());
        assert_eq!(
            kind(br#"{"a":{"type":"inner","b":"}\"{"},"c":[1,{}],"type":"x"}"#).as_deref(),
            Some("x")
        );
        assert_eq!(kind(b" {\"type\" : \"x\"}\n").as_deref(), Some("x"));
        assert_eq!(kind(br#"{"type":"a\u0062"}"#).as_deref(), Some("ab"));
        // A key spelled with an escape is the same key.
        assert_eq!(kind(br#"{"typ\u0065":"x"}"#).as_deref(), Some("x"));
        assert_eq!(kind(br#"{"a":["type",{"type":"no"}]}"#), None);
        assert_eq!(
            kind(br#"{"type":"response.output_text.delta","delta":"x"#),
            None
        );
        assert_eq!(kind(br#"{"type":"x","a":{"b":1}"#), None);
        assert_eq!(kind(br#"{"type":"x"} {"b":1}"#), None);
        assert_eq!(kind(br#"{"type":"x","a":"\"}"#), None);
        assert_eq!(kind(b"not json"), None);
        assert_eq!(kind(b"{\"a\":\"\\"), None);
        assert_eq!(kind(b"}"), None);
    }

    #[test]
    fn reads_the_lane_of_a_whole_object_beside_its_type() {
        let head = |m: &[u8]| {
            read_event(m).map(|h| {
                (
                    h.kind.map(|k| k.into_owned()),
                    h.lane.map(|l| l.into_owned()),
                )
            })
        };
        let some = |k: &str, l: &str| Some((Some(k.to_string()), Some(l.to_string())));
        assert_eq!(
            head(br#"{"type":"response.created","stream_id":"a","response":{"stream_id":"no"}}"#),
            some("response.created", "a")
        );
        assert_eq!(
            head(br#"{"response":{"id":"r"},"stream_id":"lane-2","type":"x"}"#),
            some("x", "lane-2")
        );
        assert_eq!(head(br#"{"stream_id":"l1","type":"x"}"#), some("x", "l1"));
        assert_eq!(
            head(br#"{"type":"x","a":{"stream_id":"inner"}}"#),
            Some((Some("x".to_string()), None))
        );
        assert_eq!(head(br#"{"type":"x","stream_id":"a""#), None);
    }

    #[test]
    fn a_message_becomes_one_sse_event() {
        let mut out = Vec::new();
        as_sse(Some("x"), b"{\"type\":\"x\"}", &mut out);
        assert_eq!(out, b"event: x\ndata: {\"type\":\"x\"}\n\n");
        as_sse(None, b"{\r\n\"type\":\"x\"\n}", &mut out);
        assert_eq!(out, b"data: {\ndata: \ndata: \"type\":\"x\"\ndata: }\n\n");
        // A lone `\r` ends an SSE line too: it must not cut the event.
        as_sse(None, b"{\"type\":\"x\",\r\"a\":1}", &mut out);
        assert_eq!(out, b"data: {\"type\":\"x\",\ndata: \"a\":1}\n\n");
        let mut framer = toolwarden_wire::sse::SseFramer::default();
        let mut data = Vec::new();
        framer.feed(&out, &mut |_, event| data.push(event.to_vec()));
        assert_eq!(data.len(), 1);
        let value: serde_json::Value = serde_json::from_slice(&data[0]).expect("whole JSON");
        assert_eq!(value["a"], 1);
    }

    #[test]
    fn reads_the_type_from_the_start_or_the_object() {
        assert_eq!(
            event_type(br#"{"type":"response.create","model":"m"}"#).as_deref(),
            Some("response.create")
        );
        assert_eq!(
            event_type(br#"{ "model":"m", "type" : "response.completed"}"#).as_deref(),
            Some("response.completed")
        );
        assert_eq!(event_type(b"not json"), None);
        assert_eq!(event_type(br#"{"model":"m"}"#), None);
        assert_eq!(event_type(br#"[1,2]"#), None);
    }
}
