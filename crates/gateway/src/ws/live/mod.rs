//! Voice sockets read for the records: the OpenAI Realtime API
//! (`/v1/realtime`) and Gemini Live (`…BidiGenerateContent`), relayed byte
//! for byte as before ([`super::relay`]), each message read once it has
//! been passed on ([`message`] says which messages are parsed).
//!
//! A socket is one session (the upgrade's session headers, else one of its
//! own, `ws-<id>`), and the HTTP path's records are made from what it
//! carries, in the dialect whose items it shares:
//!
//! - a **turn** is one request record (dialect `openai_responses` for
//!   Realtime, `gemini` for Live, the socket's path): a Realtime response
//!   from `response.created` to `response.done`, read as a Responses
//!   stream (its events fed to the same stream parser as an HTTP stream's:
//!   `response.created`, each whole `function_call` item's
//!   `response.output_item.done`, `response.done` as the last event), whose
//!   `function_call` output items are its calls (read when each is done,
//!   and counted once when `response.done` repeats them) and whose
//!   `status: failed` is its error; one the socket's end cuts before its
//!   `response.done` is recorded as a cut HTTP stream is, with the calls
//!   already whole;
//!   a Gemini `toolCall` message, whose `functionCalls` are its calls,
//!   kept until the `usageMetadata` of its generation comes, even after
//!   its client's results (held back meanwhile: [`calls_turn`]);
//!   a Gemini `usageMetadata` with no such turn waiting, a turn without
//!   calls. Its body goes to the same response view as an HTTP response,
//!   so calls are counted, named and timed, and tokens counted, as there;
//! - **results** (a Realtime `conversation.item.create` of a
//!   `function_call_output`, a Gemini `toolResponse`) are read when sent,
//!   as the new results of a request body in that dialect, through the
//!   HTTP path's analysis: failure detection, the seen check, the call's
//!   name and execution time. They belong to the next turn (its request
//!   id), as an HTTP request's results belong to the request that carries
//!   them; results after the socket's last turn, to a request recorded
//!   when the socket ends, cut before any answer. The server's echoes of
//!   them are not read;
//! - a Realtime `error` event is a request record of its own, failed.
//!
//! Bounded: at most [`MAX_OPEN`] Realtime responses open (past it the
//! oldest is recorded as it stands, with an error saying so), and the
//! calls remembered until their results come bounded in count and bytes
//! ([`awaiting`]), as are the results held back for a Gemini turn's usage
//! ([`calls_turn::MAX_HELD_BYTES`]).

mod awaiting;
mod calls_turn;
pub(crate) mod message;
#[cfg(test)]
mod tests;

use std::{collections::VecDeque, sync::Arc};

use toolwarden_wire::Dialect;

use self::{
    awaiting::{AwaitedOnce, Awaiting},
    calls_turn::CallsTurn,
    message::{Client, LiveUsage, Protocol, Server, ToolCall, ToolResult},
};
use crate::{
    errors::{ProxyError, ProxyErrorKind},
    limits::{clip_id, owned_name},
    observe::{
        Observation, RequestBase, ResponseMeta,
        client_headers::ClientHeaders,
        now_ms,
        request::{self, ReadBody, RequestFacts, RequestInfo},
        session::Session,
    },
    proxy,
    routes::{Provider, ProxyRoute},
    state::Shared,
    ws::turns::{as_sse, release},
};

/// Realtime responses open at once, per socket.
pub(crate) const MAX_OPEN: usize = 64;

/// One voice socket's records.
pub(crate) struct Live {
    protocol: Protocol,
    shared: Arc<Shared>,
    route: ProxyRoute,
    path: String,
    headers: ClientHeaders,
    session: Session,
    /// Realtime: the query's `model`; Gemini: the `setup`'s.
    model: Option<String>,
    /// The turn the results sent since the last one belong to.
    next: Option<Next>,
    /// Realtime responses begun and not done, oldest first.
    open: VecDeque<Open>,
    /// Calls not answered yet.
    awaiting: Awaiting,
    /// Gemini: the last `toolCall` turn, until its usage comes.
    calls_turn: Option<CallsTurn>,
    /// Scratch for one Realtime event as SSE (given back when no
    /// response is open).
    sse: Vec<u8>,
}

/// The next turn, known only by the results sent ahead of it.
struct Next {
    base: RequestBase,
    info: RequestInfo,
}

/// A Realtime response under way.
struct Open {
    id: Option<Box<str>>,
    /// Read as a Responses stream: its `response.created`, each whole
    /// call's `response.output_item.done`, then `response.done` as
    /// `response.completed`.
    observation: Observation,
    /// The calls awaited since their `response.output_item.done`.
    called: AwaitedOnce,
}

// === impl Live ===

impl Live {
    /// The protocol a WebSocket route speaks, if it is one that is read.
    pub(crate) fn protocol_of(route: &ProxyRoute, path: &str) -> Option<Protocol> {
        match route.provider {
            Provider::OpenAi | Provider::Azure if path.ends_with("/realtime") => {
                Some(Protocol::Realtime)
            }
            Provider::Gemini | Provider::Vertex if path.contains("BidiGenerateContent") => {
                Some(Protocol::GeminiLive)
            }
            _ => None,
        }
    }

    /// A socket's records; `query` is the upgrade's (Realtime names the
    /// model there).
    pub(crate) fn new(
        shared: Arc<Shared>,
        route: ProxyRoute,
        path: String,
        query: Option<&str>,
        mut headers: ClientHeaders,
        protocol: Protocol,
    ) -> Live {
        let at_ms = now_ms();
        let id = proxy::request_base(&shared, &route, &path, headers.clone(), at_ms).request_id;
        let session = headers.session.take().unwrap_or(Session {
            id: format!("ws-{id}"),
            source: "fingerprint",
        });
        let model = match protocol {
            Protocol::Realtime => query_model(query),
            Protocol::GeminiLive => None,
        };
        Live {
            protocol,
            shared,
            route,
            path,
            headers,
            session,
            model,
            next: None,
            open: VecDeque::new(),
            awaiting: Awaiting::new(),
            calls_turn: None,
            sse: Vec::new(),
        }
    }

    /// The socket's session.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// Whether its messages come in binary frames too (Gemini Live's
    /// server sends its JSON so).
    pub(crate) fn reads_binary(&self) -> bool {
        self.protocol == Protocol::GeminiLive
    }

    fn dialect(&self) -> Dialect {
        match self.protocol {
            Protocol::Realtime => Dialect::OpenAiResponses,
            Protocol::GeminiLive => Dialect::Gemini,
        }
    }

    /// A new request's base: the socket's session, dialect and model.
    fn base(&self) -> RequestBase {
        let mut base = proxy::request_base(
            &self.shared,
            &self.route,
            &self.path,
            self.headers.clone(),
            now_ms(),
        );
        base.dialect = Some(self.dialect());
        base.header_session = Some(self.session.clone());
        base.path_model = self.model.clone();
        base
    }

    /// What a turn with no results knows of its request.
    fn info(&self) -> RequestInfo {
        RequestInfo {
            session: self.session.clone(),
            model: self.model.as_deref().map(owned_name),
            parse_error: None,
            choices: None,
            threaded: false,
        }
    }

    /// A client message (text, or a binary frame of Gemini Live), passed on.
    pub(crate) fn client(&mut self, payload: &[u8]) {
        let read = match self.protocol {
            Protocol::Realtime => message::realtime_client(payload),
            Protocol::GeminiLive => message::live_client(payload),
        };
        match read {
            Client::Ignored => {}
            Client::Unreadable => self
                .shared
                .sinks
                .metrics
                .unparsed_request(self.route.provider),
            Client::Setup(model) => {
                if model.is_some() {
                    self.model = model;
                }
            }
            Client::Results(results) if results.is_empty() => {}
            Client::Results(results) => {
                let at_ms = now_ms();
                // Read once the turn whose calls they answer is recorded:
                // held while it waits for its usage.
                let results = match self.calls_turn.as_mut() {
                    Some(turn) => match turn.hold(results, at_ms) {
                        Ok(()) => return,
                        Err(results) => results,
                    },
                    None => results,
                };
                self.finish_calls(None);
                self.read_results(&results, at_ms);
            }
        }
    }

    /// `results`, sent at `at_ms`, recorded as the next turn's, each
    /// beside the call it answers.
    fn read_results(&mut self, results: &[ToolResult], at_ms: i64) {
        let calls: Vec<ToolCall> = (results.iter())
            .filter_map(|r| self.awaiting.take(&r.call_id))
            .collect();
        let body = message::results_body(self.protocol, results, |id| {
            calls.iter().find(|c| c.call_id == id).cloned()
        });
        let next = match self.next.take() {
            Some(next) => next,
            None => {
                let mut base = self.base();
                base.at_ms = at_ms;
                Next {
                    base,
                    info: self.info(),
                }
            }
        };
        let facts = RequestFacts {
            request_id: next.base.request_id.clone(),
            at_ms,
            provider: next.base.provider,
            target: self.dialect().into(),
            path_model: next.base.path_model.clone(),
            header_session: next.base.header_session.clone(),
            trace_parent: next.base.trace_parent,
            trace_state: next.base.trace_state.clone(),
        };
        let read = ReadBody::view(self.dialect(), body);
        let info = request::analyze(&self.shared.sinks, &facts, &read);
        let mut merged = next.info;
        merged.parse_error = merged.parse_error.or(info.parse_error);
        self.next = Some(Next {
            base: next.base,
            info: merged,
        });
    }

    /// A server message (text, or a binary frame of Gemini Live), passed on.
    pub(crate) fn server(&mut self, payload: &[u8]) {
        let read = match self.protocol {
            Protocol::Realtime => message::realtime_server(payload),
            Protocol::GeminiLive => message::live_server(payload),
        };
        // A `toolCall` turn its client answered: a usage now is its
        // generation's; anything else, the next generation's (it had none).
        if self.calls_turn.as_ref().is_some_and(CallsTurn::answered)
            && !matches!(read, Server::Usage(_))
        {
            self.finish_calls(None);
        }
        match read {
            Server::Ignored => {}
            Server::Unreadable => self.shared.sinks.metrics.unparsed_response("invalid"),
            Server::Started(id) => {
                self.start(id);
                let at = self.open.len() - 1;
                self.feed(at, "response.created", payload);
            }
            Server::CallDone { response_id, call } => {
                let at = self.open_or_start(response_id);
                self.feed(at, "response.output_item.done", payload);
                if self.open[at].called.first(&call.call_id) {
                    self.awaiting.push(vec![call]);
                }
            }
            Server::Done {
                id,
                items,
                calls,
                error,
            } => {
                let at = self.open_or_start(id);
                for item in &items {
                    self.feed(at, "response.output_item.done", item);
                }
                self.feed(at, "response.completed", payload);
                if let Some(Open {
                    mut observation,
                    called,
                    ..
                }) = self.open.remove(at)
                {
                    if let Some(error) = error {
                        observation.provider_failed(&error);
                    }
                    observation.finish();
                    self.awaiting.push(called.new_ones(calls));
                }
                if self.open.is_empty() {
                    release(&mut self.sse);
                }
            }
            Server::Calls {
                parts,
                calls,
                usage,
            } => {
                self.finish_calls(None);
                self.start(None);
                if let Some(Open { observation, .. }) = self.open.pop_back() {
                    let turn = CallsTurn::new(observation, parts, now_ms());
                    match usage {
                        // Nothing held: it is new.
                        Some(usage) => drop(turn.finish(Some(usage))),
                        None => self.calls_turn = Some(turn),
                    }
                }
                self.awaiting.push(calls);
            }
            Server::Usage(usage) => {
                if self.calls_turn.is_some() {
                    self.finish_calls(Some(usage));
                } else {
                    // A turn without calls (text, audio): its tokens.
                    self.start(None);
                    if let Some(Open { observation, .. }) = self.open.pop_back() {
                        CallsTurn::without_calls(observation, usage);
                    }
                }
            }
            Server::Cancelled(ids) => self.awaiting.cancel(&ids),
            Server::Error { status, text } => {
                let mut observation = Observation::new(self.shared.sinks.clone(), self.base());
                observation.set_request_info(self.info());
                observation.sent();
                observation.on_response(
                    ResponseMeta {
                        status,
                        ..ResponseMeta::default()
                    },
                    false,
                    None,
                );
                observation.provider_failed(&text);
                observation.finish();
            }
        }
    }

    /// Where the open response `id` is (the oldest open one when the
    /// message names none), or a new one's place: a Realtime response
    /// whose `response.created` the gateway did not see.
    fn open_or_start(&mut self, id: Option<String>) -> usize {
        match self.open_turn(id.as_deref()) {
            Some(at) => at,
            None => {
                self.start(id);
                self.open.len() - 1
            }
        }
    }

    /// A Realtime message fed to the open response `at` as the Responses
    /// stream event `kind`.
    fn feed(&mut self, at: usize, kind: &str, payload: &[u8]) {
        if let Some(open) = self.open.get_mut(at) {
            as_sse(Some(kind), payload, &mut self.sse);
            open.observation.feed(&self.sse);
        }
    }

    /// Where the open response `id` is: the oldest open one when the
    /// message names none.
    fn open_turn(&self, id: Option<&str>) -> Option<usize> {
        match id {
            Some(id) => self.open.iter().position(|o| o.id.as_deref() == Some(id)),
            None => (!self.open.is_empty()).then_some(0),
        }
    }

    /// A turn begins: the next turn's (with the results sent for it), or
    /// a new one.
    fn start(&mut self, id: Option<String>) {
        let (base, info) = match self.next.take() {
            Some(Next { base, info }) => (base, info),
            None => (self.base(), self.info()),
        };
        let mut observation = Observation::new(self.shared.sinks.clone(), base);
        observation.set_request_info(info);
        observation.sent();
        // A Realtime response is read as a Responses stream, its events
        // fed as they pass (so that a response cut short is recorded as
        // an HTTP stream cut short is); a Gemini turn, as a
        // `generateContent` body made whole.
        let content_type: &[u8] = match self.protocol {
            Protocol::Realtime => b"text/event-stream",
            Protocol::GeminiLive => b"application/json",
        };
        observation.on_response(
            ResponseMeta {
                status: 200,
                content_type: Some(content_type),
                content_encoding: None,
                content_length: None,
            },
            false,
            Some(&self.shared.parse_bounds),
        );
        if self.open.len() >= MAX_OPEN
            && let Some(mut oldest) = self.open.pop_front()
        {
            oldest.observation.stream_failed(&ProxyError::new(
                ProxyErrorKind::MidStream,
                "websocket",
                format!(
                    "more than {MAX_OPEN} responses open on one socket: the oldest is recorded as it stands"
                ),
            ));
            oldest.observation.finish();
        }
        self.open.push_back(Open {
            id: id.map(|id| clip_id(&id).into()),
            observation,
            called: AwaitedOnce::default(),
        });
    }

    /// The Gemini `toolCall` turn waiting for its usage, recorded with
    /// `usage` (or without, when none came).
    fn finish_calls(&mut self, usage: Option<LiveUsage>) {
        if let Some(turn) = self.calls_turn.take() {
            for held in turn.finish(usage) {
                self.read_results(&held.results, held.at_ms);
            }
        }
    }

    /// Whether no response is under way.
    pub(crate) fn idle(&self) -> bool {
        self.open.is_empty()
    }

    /// The socket ended: responses under way are recorded with `error`; a
    /// `toolCall` turn whose usage did not come, as it is (it is whole);
    /// results sent since the last turn, as the request that carried them,
    /// which the socket's end cut before any answer (as a turn sent and
    /// not answered is).
    pub(crate) fn close(&mut self, error: &str) {
        self.finish_calls(None);
        if self.next.is_some() {
            self.start(None);
            if let Some(open) = self.open.back_mut() {
                open.observation.first_event(false);
            }
        }
        for Open {
            mut observation, ..
        } in self.open.drain(..)
        {
            observation.stream_failed(&ProxyError::new(
                ProxyErrorKind::MidStream,
                "websocket",
                error.to_string(),
            ));
            observation.finish();
        }
        release(&mut self.sse);
    }
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("protocol", &self.protocol)
            .field("open", &self.open.len())
            .field("awaiting", &self.awaiting.len())
            .finish_non_exhaustive()
    }
}

/// The `model` parameter of an upgrade's query, else Azure's `deployment`
/// (percent-decoded).
fn query_model(query: Option<&str>) -> Option<String> {
    let query = query?;
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
    };
    let value = param("model").or_else(|| param("deployment"))?;
    let decoded = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
    (!decoded.is_empty()).then(|| owned_name(&decoded))
}
