//! What the records need of a voice socket's messages (the OpenAI
//! Realtime API, Gemini Live), read without changing them: pure functions
//! over a message's bytes.
//!
//! Only the few messages that carry tool calls, tool results or errors are
//! parsed; the rest (audio above all: most of a voice socket's bytes) are
//! recognised from their `type` (Realtime: the first or last member, else
//! one scan of braces and quotes) or from the absence of a key's bytes
//! (Gemini Live: one SIMD substring search), and left alone.
//!
//! - Realtime, client: `conversation.item.create` whose `item` is a
//!   `function_call_output`, and the `function_call_output` items of a
//!   `response.create`'s own context, `response.input`
//!   ([`Client::Results`]); server: `response.created`
//!   ([`Server::Started`]), `response.output_item.done` of a whole
//!   `function_call` item ([`Server::CallDone`]; only a message naming
//!   `"function_call"` is parsed), `response.done` ([`Server::Done`]: its
//!   `function_call` output items, its failure), `error`
//!   ([`Server::Error`]). The response's events are Responses stream
//!   events as they are, which the turn feeds to a Responses stream parser.
//!   The server's `conversation.item.*` echoes of what the client created
//!   are not read: each result counts once, from the client's message.
//! - Gemini Live, client: `setup` (its model, [`Client::Setup`]),
//!   `toolResponse` ([`Client::Results`]); server: `toolCall`
//!   ([`Server::Calls`]), `toolCallCancellation` ([`Server::Cancelled`]),
//!   `usageMetadata` ([`Server::Usage`], or with a `toolCall`'s calls:
//!   Live's counts, `promptTokenCount` and `responseTokenCount`, are
//!   written as `generateContent`'s `promptTokenCount` and
//!   `candidatesTokenCount`).
//!   Keys are read in camelCase or snake_case: the Python SDK sends
//!   `{"tool_response":{"functionResponses":[…]}}`. A response with
//!   `willContinue: true` (a `NON_BLOCKING` call's generator, google-genai
//!   `FunctionResponse.will_continue`: "more responses will be returned")
//!   is not a result: its call's result is the response that ends it.

use std::borrow::Cow;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::ws::turns::{edge_type, read_event};

/// Which protocol a socket speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// OpenAI's Realtime API (GA and beta event shapes).
    Realtime,
    /// Gemini's Live API (`BidiGenerateContent`).
    GeminiLive,
}

/// A tool result the client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolResult {
    /// The call it answers.
    pub call_id: String,
    /// The tool's name, when the message names it (Gemini does).
    pub name: Option<String>,
    /// The output as JSON text (Realtime: a string; Gemini: an object).
    pub output: Box<str>,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolCall {
    /// Its id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text (Realtime: a string; Gemini: an object).
    pub arguments: Box<str>,
}

/// A client message, as the records see it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Client {
    /// Nothing the records need (audio, `session.update`, …).
    Ignored,
    /// Not a message of the protocol (not a JSON object, no `type`, a
    /// tool-result message that does not parse).
    Unreadable,
    /// Gemini's `setup`: the model it names (`models/` cut).
    Setup(Option<String>),
    /// Tool results, in the order sent.
    Results(Vec<ToolResult>),
}

/// A server message, as the records see it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Server {
    /// Nothing the records need.
    Ignored,
    /// Not a message of the protocol.
    Unreadable,
    /// Realtime `response.created`: a turn begins (its response id). The
    /// message is a Responses stream's `response.created` event as it is.
    Started(Option<String>),
    /// Realtime `response.output_item.done` of a `function_call` item the
    /// model wrote whole (`status: completed`, the item the OpenAI Agents
    /// SDK runs): a call of the response `response_id` names, complete
    /// whether or not its `response.done` comes. The message is a
    /// Responses stream's `response.output_item.done` event as it is.
    CallDone {
        /// The response it belongs to.
        response_id: Option<String>,
        /// The call.
        call: ToolCall,
    },
    /// Realtime `response.done`: a turn ends. The message is a Responses
    /// stream's last event (its `response`: `id`, `status`, `usage`), the
    /// `function_call` items of its `output` each a
    /// `response.output_item.done` event of their own (`items`), which the
    /// stream parser takes for the same calls as those it read already
    /// (same item id, or output index).
    Done {
        /// Its response id.
        id: Option<String>,
        /// A `response.output_item.done` event's data for each of its
        /// `function_call` items: `{"output_index":i,"item":…}`.
        items: Vec<Bytes>,
        /// Its `function_call` items.
        calls: Vec<ToolCall>,
        /// Why it failed (`status: failed` with its `status_details`).
        error: Option<String>,
    },
    /// Gemini `toolCall`: a model turn with calls (its `functionCall`
    /// parts, for [`generate_content`]) and the usage its message carries.
    Calls {
        parts: Bytes,
        calls: Vec<ToolCall>,
        usage: Option<LiveUsage>,
    },
    /// Gemini `usageMetadata` without a `toolCall`: a model turn's tokens.
    Usage(LiveUsage),
    /// Gemini `toolCallCancellation`: calls the client need not answer.
    Cancelled(Vec<String>),
    /// Realtime `error`: `code: message`, and the HTTP status its type
    /// would have had.
    Error { status: u16, text: String },
}

/// A Gemini Live `usageMetadata`'s token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct LiveUsage {
    /// `promptTokenCount`.
    #[serde(default, rename = "promptTokenCount", alias = "prompt_token_count")]
    pub prompt: Option<u64>,
    /// `responseTokenCount` (`generateContent`'s `candidatesTokenCount`).
    #[serde(default, rename = "responseTokenCount", alias = "response_token_count")]
    pub response: Option<u64>,
}

// === Realtime ===

/// A Realtime message's `type`: the first or last member without a scan,
/// else one pass over the object (`None`: not one whole JSON object with
/// a string `type`).
fn realtime_type(payload: &[u8]) -> Option<Cow<'_, str>> {
    match edge_type(payload) {
        Some(kind) => Some(Cow::Borrowed(kind)),
        None => read_event(payload).and_then(|h| h.kind),
    }
}

/// Read a Realtime client message.
pub(crate) fn realtime_client(payload: &[u8]) -> Client {
    #[derive(Deserialize)]
    struct Create<'a> {
        #[serde(borrow)]
        item: Item<'a>,
    }
    #[derive(Deserialize)]
    struct Item<'a> {
        #[serde(borrow, rename = "type")]
        kind: Cow<'a, str>,
        #[serde(borrow, default)]
        call_id: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        output: Option<&'a RawValue>,
    }
    let Some(kind) = realtime_type(payload) else {
        return Client::Unreadable;
    };
    if kind == "response.create" {
        return response_input(payload);
    }
    if kind != "conversation.item.create" {
        return Client::Ignored;
    }
    let Ok(create) = serde_json::from_slice::<Create<'_>>(payload) else {
        return Client::Unreadable;
    };
    if create.item.kind != "function_call_output" {
        return Client::Ignored;
    }
    match create.item.call_id {
        Some(call_id) => Client::Results(vec![ToolResult {
            call_id: call_id.into_owned(),
            name: None,
            output: create
                .item
                .output
                .map_or_else(|| "\"\"".into(), |o| o.get().into()),
        }]),
        None => Client::Unreadable,
    }
}

/// A Realtime `response.create` whose `response.input` (a response with
/// a context of its own: openai-python `RealtimeResponseCreateParams.input`,
/// "Input items to include in the prompt for the model", any conversation
/// item) holds `function_call_output` items: those are results, as a
/// `conversation.item.create` of one is. Only a message naming
/// `"function_call_output"` is parsed.
fn response_input(payload: &[u8]) -> Client {
    #[derive(Deserialize)]
    struct Create<'a> {
        #[serde(borrow, default)]
        response: Option<Params<'a>>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default)]
        input: Option<Vec<Item<'a>>>,
    }
    #[derive(Deserialize)]
    struct Item<'a> {
        #[serde(borrow, default, rename = "type")]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        call_id: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        output: Option<&'a RawValue>,
    }
    if memchr::memmem::find(payload, br#""function_call_output""#).is_none() {
        return Client::Ignored;
    }
    // As in `live_client`: more items than a request body may hold.
    if toolwarden_wire::check_items(payload).is_err() {
        return Client::Unreadable;
    }
    let Ok(create) = serde_json::from_slice::<Create<'_>>(payload) else {
        return Client::Unreadable;
    };
    let items = create.response.and_then(|r| r.input).unwrap_or_default();
    let results: Vec<ToolResult> = (items.into_iter())
        .filter(|item| item.kind.as_deref() == Some("function_call_output"))
        .filter_map(|item| {
            Some(ToolResult {
                call_id: item.call_id?.into_owned(),
                name: None,
                output: item
                    .output
                    .map_or_else(|| "\"\"".into(), |o| o.get().into()),
            })
        })
        .collect();
    if results.is_empty() {
        Client::Ignored
    } else {
        Client::Results(results)
    }
}

/// `{"code": …, "message": …, "type": …}` (Realtime's errors).
#[derive(Deserialize, Default)]
struct ErrorObject<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    code: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

impl ErrorObject<'_> {
    /// `code: message`, or what there is of them (else the type).
    fn text(&self) -> String {
        match (&self.code, &self.message) {
            (Some(c), Some(m)) => format!("{c}: {m}"),
            (None, Some(m)) => m.to_string(),
            (Some(c), None) => c.to_string(),
            (None, None) => self.kind.as_deref().unwrap_or("error").to_string(),
        }
    }
}

/// Read a Realtime server message.
pub(crate) fn realtime_server(payload: &[u8]) -> Server {
    #[derive(Deserialize)]
    struct Created<'a> {
        #[serde(borrow)]
        response: Id<'a>,
    }
    #[derive(Deserialize)]
    struct Id<'a> {
        #[serde(borrow, default)]
        id: Option<Cow<'a, str>>,
    }
    #[derive(Deserialize)]
    struct Done<'a> {
        #[serde(borrow)]
        response: &'a RawValue,
    }
    #[derive(Deserialize)]
    struct ErrorEvent<'a> {
        #[serde(borrow, default)]
        error: ErrorObject<'a>,
    }
    let Some(kind) = realtime_type(payload) else {
        return Server::Unreadable;
    };
    match &*kind {
        "response.created" => match serde_json::from_slice::<Created<'_>>(payload) {
            Ok(c) => Server::Started(c.response.id.map(Cow::into_owned)),
            Err(_) => Server::Unreadable,
        },
        "response.done" => match serde_json::from_slice::<Done<'_>>(payload) {
            Ok(done) => response_done(done.response),
            Err(_) => Server::Unreadable,
        },
        // A message item's carries its transcript: only a function call's
        // is parsed.
        "response.output_item.done"
            if memchr::memmem::find(payload, br#""function_call""#).is_some() =>
        {
            output_item_done(payload)
        }
        "error" => match serde_json::from_slice::<ErrorEvent<'_>>(payload) {
            Ok(e) => Server::Error {
                status: match e.error.kind.as_deref() {
                    Some("server_error") => 500,
                    _ => 400,
                },
                text: e.error.text(),
            },
            Err(_) => Server::Unreadable,
        },
        _ => Server::Ignored,
    }
}

/// A `response.done`'s response object.
fn response_done(response: &RawValue) -> Server {
    #[derive(Deserialize)]
    struct Response<'a> {
        #[serde(borrow, default)]
        id: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        status: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        status_details: Option<StatusDetails<'a>>,
        #[serde(borrow, default)]
        output: Option<Vec<&'a RawValue>>,
    }
    #[derive(Deserialize)]
    struct StatusDetails<'a> {
        #[serde(borrow, default)]
        error: Option<ErrorObject<'a>>,
    }
    let Ok(r) = serde_json::from_str::<Response<'_>>(response.get()) else {
        return Server::Unreadable;
    };
    let mut items = Vec::new();
    let mut calls = Vec::new();
    for (index, raw) in r.output.unwrap_or_default().into_iter().enumerate() {
        let Ok(item) = serde_json::from_str::<OutputItem<'_>>(raw.get()) else {
            return Server::Unreadable;
        };
        if item.kind.as_deref() != Some("function_call") {
            continue;
        }
        items.push(Bytes::from(format!(
            r#"{{"output_index":{index},"item":{}}}"#,
            raw.get()
        )));
        calls.extend(item.call());
    }
    let error = (r.status.as_deref() == Some("failed")).then(|| {
        (r.status_details.and_then(|d| d.error))
            .map_or_else(|| "the response failed".to_string(), |e| e.text())
    });
    Server::Done {
        id: r.id.map(Cow::into_owned),
        items,
        calls,
        error,
    }
}

/// A Realtime output item, as far as a call needs it.
#[derive(Deserialize)]
struct OutputItem<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    /// Any JSON: only `"completed"` is looked for.
    #[serde(borrow, default)]
    status: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

impl OutputItem<'_> {
    /// The call a `function_call` item is, when it names its call id.
    fn call(self) -> Option<ToolCall> {
        Some(ToolCall {
            call_id: self.call_id?.into_owned(),
            name: self.name.map(Cow::into_owned).unwrap_or_default(),
            arguments: (self.arguments).map_or_else(|| "\"\"".into(), |a| a.get().into()),
        })
    }
}

/// A `response.output_item.done` naming `"function_call"`: the call, when
/// its item is a whole one ([`Server::CallDone`]).
fn output_item_done(payload: &[u8]) -> Server {
    #[derive(Deserialize)]
    struct ItemDone<'a> {
        #[serde(borrow, default)]
        response_id: Option<Cow<'a, str>>,
        #[serde(borrow)]
        item: OutputItem<'a>,
    }
    let Ok(done) = serde_json::from_slice::<ItemDone<'_>>(payload) else {
        return Server::Unreadable;
    };
    let whole = done.item.kind.as_deref() == Some("function_call")
        && done.item.status.map(RawValue::get) == Some(r#""completed""#);
    match done.item.call().filter(|_| whole) {
        Some(call) => Server::CallDone {
            response_id: done.response_id.map(Cow::into_owned),
            call,
        },
        None => Server::Ignored,
    }
}

// === Gemini Live ===

/// Whether the message is one JSON object at a glance (its first and last
/// bytes): a message that is not one is counted as unparsed.
fn looks_like_object(payload: &[u8]) -> bool {
    let p = payload.trim_ascii();
    p.first() == Some(&b'{') && p.last() == Some(&b'}')
}

/// Whether `payload` holds the bytes of key `a` or `b` (with quotes).
fn has_key(payload: &[u8], a: &[u8], b: &[u8]) -> bool {
    memchr::memmem::find(payload, a).is_some() || memchr::memmem::find(payload, b).is_some()
}

/// Read a Gemini Live client message.
pub(crate) fn live_client(payload: &[u8]) -> Client {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow, default, rename = "toolResponse", alias = "tool_response")]
        tool_response: Option<ToolResponse<'a>>,
        #[serde(borrow, default)]
        setup: Option<Setup<'a>>,
    }
    #[derive(Deserialize)]
    struct ToolResponse<'a> {
        #[serde(
            borrow,
            default,
            rename = "functionResponses",
            alias = "function_responses"
        )]
        function_responses: Vec<FunctionResponse<'a>>,
    }
    #[derive(Deserialize)]
    struct FunctionResponse<'a> {
        #[serde(borrow, default)]
        id: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        response: Option<&'a RawValue>,
        /// A `NON_BLOCKING` call's generator: more responses follow.
        #[serde(default, rename = "willContinue", alias = "will_continue")]
        will_continue: Option<bool>,
    }
    #[derive(Deserialize)]
    struct Setup<'a> {
        #[serde(borrow, default)]
        model: Option<Cow<'a, str>>,
    }
    if !looks_like_object(payload) {
        return Client::Unreadable;
    }
    // Most messages are audio or text: no `"tool…` or `"setup"` at all.
    let tool = memchr::memmem::find(payload, b"\"tool").is_some();
    let results = tool && has_key(payload, b"\"toolResponse\"", b"\"tool_response\"");
    if !results && memchr::memmem::find(payload, b"\"setup\"").is_none() {
        return Client::Ignored;
    }
    // More responses than a request body may hold items: not read (each
    // would become a record first).
    if toolwarden_wire::check_items(payload).is_err() {
        return Client::Unreadable;
    }
    let Ok(message) = serde_json::from_slice::<Message<'_>>(payload) else {
        return Client::Unreadable;
    };
    if let Some(response) = message.tool_response {
        // Gemini allows a response without an id (older models pair by
        // name): `<name>#<n>` stands for it, as for its call.
        let mut positions = Positions::default();
        // A generator's responses (`willContinue: true`) are not its
        // call's result: the one that ends it is.
        let results = (response.function_responses.into_iter())
            .filter(|r| r.will_continue != Some(true))
            .map(|r| {
                let name = r.name.as_deref().unwrap_or_default();
                ToolResult {
                    call_id: positions.id_of(r.id.as_deref(), name),
                    name: r.name.map(Cow::into_owned),
                    output: r.response.map_or_else(|| "{}".into(), |o| o.get().into()),
                }
            })
            .collect();
        return Client::Results(results);
    }
    match message.setup {
        Some(setup) => Client::Setup(setup.model.map(|m| model_name(&m).to_string())),
        None => Client::Ignored,
    }
}

/// The Vertex AI location a Gemini Live `setup` message names: `l` of
/// its `setup.model`, `projects/{p}/locations/{l}/publishers/google/models/{m}`
/// (google-genai's shape), when `l` is a well-formed location
/// ([`crate::cloud::is_vertex_location`]). `None` for anything else: not
/// one JSON object, no `setup`, a model without a project and location
/// (`publishers/google/models/{m}`, `models/{m}`), a location that could
/// not name a host.
pub(crate) fn setup_location(payload: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        setup: Setup<'a>,
    }
    #[derive(Deserialize)]
    struct Setup<'a> {
        #[serde(borrow)]
        model: Cow<'a, str>,
    }
    if !looks_like_object(payload) || memchr::memmem::find(payload, b"\"setup\"").is_none() {
        return None;
    }
    let message = serde_json::from_slice::<Message<'_>>(payload).ok()?;
    let after_projects = message.setup.model.strip_prefix("projects/")?;
    let location = crate::routes::cloud::location_in(after_projects)?;
    crate::cloud::is_vertex_location(location).then(|| location.to_string())
}

/// A `setup.model`'s model name: `models/{m}` (the Gemini API) and
/// `projects/{p}/locations/{l}/publishers/google/models/{m}` or
/// `publishers/google/models/{m}` (Vertex AI) name `m`; any other form is
/// kept as it is.
fn model_name(model: &str) -> &str {
    match model.rsplit_once("models/") {
        Some((before, name))
            if !name.is_empty() && (before.is_empty() || before.ends_with('/')) =>
        {
            name
        }
        _ => model,
    }
}

/// Read a Gemini Live server message.
pub(crate) fn live_server(payload: &[u8]) -> Server {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow, default, rename = "toolCall", alias = "tool_call")]
        tool_call: Option<ToolCallMessage<'a>>,
        #[serde(
            borrow,
            default,
            rename = "toolCallCancellation",
            alias = "tool_call_cancellation"
        )]
        cancellation: Option<Cancellation<'a>>,
        #[serde(default, rename = "usageMetadata", alias = "usage_metadata")]
        usage: Option<LiveUsage>,
    }
    #[derive(Deserialize)]
    struct ToolCallMessage<'a> {
        #[serde(borrow, default, rename = "functionCalls", alias = "function_calls")]
        function_calls: Vec<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct FunctionCall<'a> {
        #[serde(borrow, default)]
        id: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        args: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Cancellation<'a> {
        #[serde(borrow, default)]
        ids: Vec<Cow<'a, str>>,
    }
    if !looks_like_object(payload) {
        return Server::Unreadable;
    }
    // Most messages are audio (base64: no quotes) or text: two searches.
    let tool = memchr::memmem::find(payload, b"\"tool").is_some();
    let usage = has_key(payload, b"\"usageMetadata\"", b"\"usage_metadata\"");
    let calls = tool && has_key(payload, b"\"toolCall\"", b"\"tool_call\"");
    let cancels = tool
        && has_key(
            payload,
            b"\"toolCallCancellation\"",
            b"\"tool_call_cancellation\"",
        );
    if !calls && !cancels && !usage {
        return Server::Ignored;
    }
    let Ok(message) = serde_json::from_slice::<Message<'_>>(payload) else {
        return Server::Unreadable;
    };
    if let Some(tool_call) = message.tool_call {
        let mut read = Vec::with_capacity(tool_call.function_calls.len());
        let mut positions = Positions::default();
        for raw in &tool_call.function_calls {
            let Ok(call) = serde_json::from_str::<FunctionCall<'_>>(raw.get()) else {
                return Server::Unreadable;
            };
            let name = call.name.map(Cow::into_owned).unwrap_or_default();
            read.push(ToolCall {
                call_id: positions.id_of(call.id.as_deref(), &name),
                name,
                arguments: call.args.map_or_else(|| "{}".into(), |a| a.get().into()),
            });
        }
        return Server::Calls {
            parts: function_call_parts(&tool_call.function_calls),
            calls: read,
            usage: message.usage,
        };
    }
    // A cancellation's own message carries no usage: one that did would
    // have it left unread.
    match (message.cancellation, message.usage) {
        (Some(c), _) => Server::Cancelled(c.ids.into_iter().map(Cow::into_owned).collect()),
        (None, Some(usage)) => Server::Usage(usage),
        (None, None) => Server::Ignored,
    }
}

/// The ids of one Gemini Live message's calls (or results): its own, else
/// `<name>#<n>`, `n` its ordinal among the message's id-less ones of that
/// name — as the HTTP path names a turn's id-less calls (the response view
/// of the turn's `generateContent` body names them so), so that the n-th
/// id-less result of a name answers the n-th id-less call of that name.
#[derive(Default)]
struct Positions {
    /// Id-less ones so far, per name (a count, not a search: the server
    /// and the client choose how many a message holds).
    seen: std::collections::HashMap<String, usize>,
}

impl Positions {
    /// The id of the next one named `name`: `id` unless it is missing or
    /// empty.
    fn id_of(&mut self, id: Option<&str>, name: &str) -> String {
        if let Some(id) = id.filter(|id| !id.is_empty()) {
            return id.to_string();
        }
        let n = match self.seen.get_mut(name) {
            Some(n) => n,
            None => self.seen.entry(name.to_string()).or_default(),
        };
        *n += 1;
        toolwarden_wire::gemini::synthetic_id(name, *n - 1)
    }
}

/// The `functionCall` parts of a `generateContent` candidate, one for each
/// call given (each as the server wrote it), comma-separated.
fn function_call_parts(calls: &[&RawValue]) -> Bytes {
    let mut parts = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            parts.push(b',');
        }
        parts.extend_from_slice(br#"{"functionCall":"#);
        parts.extend_from_slice(call.get().as_bytes());
        parts.push(b'}');
    }
    Bytes::from(parts)
}

/// A `generateContent` response body whose one candidate has `parts`
/// ([`function_call_parts`]), with `usage` as its `usageMetadata`.
pub(crate) fn generate_content(parts: &[u8], usage: Option<LiveUsage>) -> Bytes {
    let mut body = Vec::from(&br#"{"candidates":[{"content":{"role":"model","parts":["#[..]);
    body.extend_from_slice(parts);
    body.extend_from_slice(b"]}}]");
    if let Some(usage) = usage {
        let mut counts = Vec::new();
        if let Some(n) = usage.prompt {
            counts.push(format!(r#""promptTokenCount":{n}"#));
        }
        if let Some(n) = usage.response {
            counts.push(format!(r#""candidatesTokenCount":{n}"#));
        }
        body.extend_from_slice(format!(r#","usageMetadata":{{{}}}"#, counts.join(",")).as_bytes());
    }
    body.push(b'}');
    Bytes::from(body)
}

// === request bodies for the records ===

/// A request body in the socket's HTTP dialect holding `results`, each
/// after the call it answers when the socket saw it (`call_of`): what the
/// HTTP path's request analysis reads (failure detection, the seen check,
/// the call's name and time).
pub(crate) fn results_body(
    protocol: Protocol,
    results: &[ToolResult],
    call_of: impl Fn(&str) -> Option<ToolCall>,
) -> Bytes {
    let text = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut out = String::new();
    match protocol {
        Protocol::Realtime => {
            out.push_str(r#"{"input":["#);
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(call) = call_of(&r.call_id) {
                    out.push_str(&format!(
                        r#"{{"type":"function_call","call_id":{},"name":{},"arguments":{}}},"#,
                        text(&call.call_id),
                        text(&call.name),
                        call.arguments
                    ));
                }
                out.push_str(&format!(
                    r#"{{"type":"function_call_output","call_id":{},"output":{}}}"#,
                    text(&r.call_id),
                    r.output
                ));
            }
            out.push_str("]}");
        }
        Protocol::GeminiLive => {
            let calls: Vec<ToolCall> = results.iter().filter_map(|r| call_of(&r.call_id)).collect();
            out.push_str(r#"{"contents":["#);
            if !calls.is_empty() {
                out.push_str(r#"{"role":"model","parts":["#);
                for (i, call) in calls.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&format!(
                        r#"{{"functionCall":{{"id":{},"name":{},"args":{}}}}}"#,
                        text(&call.call_id),
                        text(&call.name),
                        call.arguments
                    ));
                }
                out.push_str("]},");
            }
            out.push_str(r#"{"role":"user","parts":["#);
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let name = r.name.as_deref().unwrap_or_default();
                out.push_str(&format!(
                    r#"{{"functionResponse":{{"id":{},"name":{},"response":{}}}}}"#,
                    text(&r.call_id),
                    text(name),
                    r.output
                ));
            }
            out.push_str("]}]}");
        }
    }
    Bytes::from(out)
}
