//! The events the gateway emits and the store records.
//!
//! [`Event`] is serde-tagged (`{"type":"request", ...}`, `"tool_call"`,
//! `"tool_result"`); that serialization is also the JSONL line format.

use serde::{Deserialize, Serialize};
use toolwarden_core::TraceParent;

/// One observation made on the request path, recorded off it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A proxied request and how it went.
    Request(RequestRecord),
    /// A tool call the model made (from a response or a stream).
    ToolCall(ToolCallRecord),
    /// A tool result the client sent back (from a request's history).
    ToolResult(ToolResultRecord),
}

/// A proxied request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Unique per proxied request (128-bit random hex).
    pub request_id: String,
    /// The session the request belongs to.
    pub session_id: String,
    /// Where the session id came from: `header`, `client_header`, `metadata`, `conversation`, `fingerprint`, `none`.
    pub session_source: String,
    /// Unix ms when the request arrived.
    pub at_ms: i64,
    /// `openai`, `anthropic` or `gemini`.
    pub provider: String,
    /// `openai-chat`, `openai-responses`, `anthropic`, `gemini`; `None` for pass-through paths.
    pub dialect: Option<String>,
    /// The path only, never the query string.
    pub path: String,
    /// The model asked for, when known.
    pub model: Option<String>,
    /// Upstream status, or the gateway's own 502/504.
    pub status: u16,
    /// Whether the response was streamed.
    pub streaming: bool,
    /// Request sent → response finished (stream end).
    pub upstream_latency_ms: f64,
    /// Request sent → first response byte.
    pub first_byte_ms: Option<f64>,
    /// The gateway's own processing time on the request path.
    pub overhead_us: f64,
    /// Input tokens reported by the provider.
    pub input_tokens: Option<u64>,
    /// Output tokens reported by the provider.
    pub output_tokens: Option<u64>,
    /// The provider's response id (Responses API `resp_…`, etc.).
    pub response_id: Option<String>,
    /// One entry per repair applied: the defect kind it mended.
    pub repairs: Vec<String>,
    /// `off`, `report` or `fix`.
    pub repair_mode: String,
    /// The body could not be read (it was forwarded unchanged).
    pub parse_error: Option<String>,
    /// Upstream/transport error text when the status is the gateway's own.
    pub error: Option<String>,
    /// The response passed `response_parse_limit`: the calls and arguments
    /// past it were not kept, so the request's calls may be incomplete
    /// (the response itself passed whole). Written to the JSONL line only
    /// when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub calls_incomplete: bool,
    /// The client's W3C `traceparent`: its spans join the client's trace.
    /// Not stored in the database; the JSONL line carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_parent: Option<TraceParent>,
    /// The client's W3C `tracestate`, as it came (bounded), with
    /// `trace_parent`: the exported spans carry it. Not stored in the
    /// database; the JSONL line carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_state: Option<String>,
    /// The upstream's host the request went to (its span's
    /// `server.address`). Not stored in the database; the JSONL line
    /// carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_address: Option<String>,
    /// The upstream's port, with `server_address` (`server.port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_port: Option<u16>,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The request whose response carried the call.
    pub request_id: String,
    /// The session of that request.
    pub session_id: String,
    /// `openai`, `anthropic` or `gemini`.
    pub provider: String,
    /// The model that made the call.
    pub model: Option<String>,
    /// The provider's response id, when it has one.
    pub response_id: Option<String>,
    /// The request's dialect (`anthropic`, `openai-responses`, …, as in
    /// [`RequestRecord::dialect`]); `None` in records written before calls
    /// carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Position of the call within the response; with `request_id`, the call's identity.
    pub call_index: u32,
    /// The provider's call id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// Size of the arguments in bytes.
    pub arguments_bytes: u64,
    /// Unix ms when the response (or stream) finished.
    pub at_ms: i64,
    /// The fingerprint of the response's calls (`toolwarden_wire::turn`,
    /// the same for every call of one response), stored so that a result
    /// whose client rewrote the call id finds its call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<i64>,
    /// The response is an Anthropic message thread's reply: a later request
    /// continues it by id (`thread.previous_message_id`), as a Responses
    /// continuation does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub threaded: bool,
}

impl ToolCallRecord {
    /// The response id by which a later request can ask for this call: a
    /// Responses API continuation names it (`previous_response_id`), and so
    /// does an Anthropic message thread's `continue`
    /// (`thread.previous_message_id`). The other responses are never named
    /// again, so their calls are stored without it and stay out of the
    /// index by response id (a randomly keyed page fewer to write per
    /// response; the response id of every request stays in `requests`). A
    /// call of unknown dialect keeps it.
    pub fn continuable_response_id(&self) -> Option<&str> {
        match self.dialect.as_deref() {
            None | Some("openai-responses") => self.response_id.as_deref(),
            Some(_) if self.threaded => self.response_id.as_deref(),
            Some(_) => None,
        }
    }
}

/// A tool result the client sent back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultRecord {
    /// The request that carried the result.
    pub request_id: String,
    /// The session of that request.
    pub session_id: String,
    /// `openai`, `anthropic` or `gemini`.
    pub provider: String,
    /// The model the request was sent to.
    pub model: Option<String>,
    /// The call id the result answers.
    pub call_id: String,
    /// Index of the message/item/content holding the result. With
    /// `session_id` and `call_id` this is the result's identity: a resent
    /// history has the same identity, and a reused call id at another index
    /// is another result.
    pub message_index: u32,
    /// The tool's name from the request's own history; `None` lets the store
    /// resolve it from recorded calls, else `unknown`.
    pub tool: Option<String>,
    /// Whether the result is a failure.
    pub failed: bool,
    /// `explicit`, `heuristic` or `none`.
    pub basis: String,
    /// Size of the result content in bytes.
    pub content_bytes: u64,
    /// The first 300 characters, only for failures.
    pub excerpt: Option<String>,
    /// Unix ms when the request carrying the result arrived.
    pub at_ms: i64,
    /// Client-side execution time; `None` lets the store compute
    /// `at_ms - call.at_ms` when it finds the call.
    pub exec_ms: Option<f64>,
    /// Responses API: lets the store find the calls recorded for that response.
    pub previous_response_id: Option<String>,
    /// The call this result answers, by the model turn its request
    /// replays: the store's way to the call when no recorded call has the
    /// result's `call_id` (the client rewrote it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<TurnRef>,
    /// No call of its id comes after it in its request's history: for an
    /// id that is not unique ([`crate::is_unique_call_id`]), it may answer
    /// the newest call of that id, made in another run of the conversation
    /// (see `claim_keys_of_later_calls_fn!`). A resent answer to an earlier call
    /// of an id the conversation reused has that later call after it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub latest_of_its_id: bool,
    /// The fingerprint of the first turn (system prompt and first user
    /// message) of the conversation whose request carried the result
    /// (`toolwarden_wire`'s `first_turn_hash`): the same in a fork of the
    /// conversation under another session id, so that a result the fork
    /// resends as new is found answered in its parent (the sessions with
    /// this first turn, `sessions.first_turn`). `None` when the request
    /// had none, and in records written before results carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_turn: Option<i64>,
    /// The `traceparent` of the request that carried the result (see
    /// [`RequestRecord::trace_parent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_parent: Option<TraceParent>,
    /// The client's `tracestate` (as [`RequestRecord::trace_state`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_state: Option<String>,
}

/// How the gateway's sessions keyed by a fingerprint of the conversation's
/// first turn (no session header, no client session) begin: `fp-` and the
/// hash. Such a session changes when the client rewrites its first turn
/// (the Gemini CLI compressing its history), so the store pairs its first
/// results with calls of other sessions (the `turns` module).
pub const FINGERPRINT_SESSION_PREFIX: &str = "fp-";

/// Whether `session_id` names a session keyed by a first turn's
/// fingerprint ([`FINGERPRINT_SESSION_PREFIX`]).
pub fn is_fingerprint_session(session_id: &str) -> bool {
    session_id.starts_with(FINGERPRINT_SESSION_PREFIX)
}

/// A 64-bit fingerprint (a model turn's calls, a conversation's first
/// turn) as the store keeps it, in a `BIGINT` column: the same bits read
/// as an `i64`, so equal fingerprints stay equal and none is lost.
///
/// ```
/// use toolwarden_store::stored_fingerprint;
/// assert_eq!(stored_fingerprint(7), 7);
/// assert_eq!(stored_fingerprint(u64::MAX), -1);
/// assert_eq!(stored_fingerprint(1 << 63) as u64, 1 << 63);
/// ```
pub fn stored_fingerprint(fingerprint: u64) -> i64 {
    i64::from_ne_bytes(fingerprint.to_ne_bytes())
}

/// A call's place in a model turn: the turn's fingerprint and the call's
/// position among its calls (a recorded call's `call_index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRef {
    /// The fingerprint of the turn's calls.
    pub turn: i64,
    /// The call's position in the turn.
    pub call_index: u32,
}

// === impl RequestRecord ===

#[cfg(test)]
impl RequestRecord {
    /// A plain request for the crate's unit tests: `request_id` in
    /// `session_id` (from `session_source`) at `at_ms`, the rest fixed.
    pub(crate) fn for_test(
        request_id: &str,
        session_id: &str,
        session_source: &str,
        at_ms: i64,
    ) -> Self {
        RequestRecord {
            request_id: request_id.into(),
            session_id: session_id.into(),
            session_source: session_source.into(),
            at_ms,
            provider: "anthropic".into(),
            dialect: None,
            path: "/v1/messages".into(),
            model: None,
            status: 200,
            streaming: false,
            upstream_latency_ms: 1.0,
            first_byte_ms: None,
            overhead_us: 1.0,
            input_tokens: None,
            output_tokens: None,
            response_id: None,
            repairs: vec![],
            repair_mode: "fix".into(),
            parse_error: None,
            calls_incomplete: false,
            error: None,
            trace_parent: None,
            trace_state: None,
            server_address: None,
            server_port: None,
        }
    }
}

// === impl Event ===

impl Event {
    /// The event's `type` tag as written in JSONL.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Request(_) => "request",
            Event::ToolCall(_) => "tool_call",
            Event::ToolResult(_) => "tool_result",
        }
    }

    /// The session the event belongs to.
    pub fn session_id(&self) -> &str {
        match self {
            Event::Request(r) => &r.session_id,
            Event::ToolCall(c) => &c.session_id,
            Event::ToolResult(r) => &r.session_id,
        }
    }

    /// When the gateway saw the event (ms since the epoch).
    pub fn at_ms(&self) -> i64 {
        match self {
            Event::Request(r) => r.at_ms,
            Event::ToolCall(c) => c.at_ms,
            Event::ToolResult(r) => r.at_ms,
        }
    }
}
