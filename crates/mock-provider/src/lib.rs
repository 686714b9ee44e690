//! A mock LLM provider for end-to-end tests and benchmarks.
//!
//! [`MockProvider`] serves the four provider APIs at their real paths on
//! `127.0.0.1`:
//! - Anthropic `POST /v1/messages`;
//! - OpenAI `POST /v1/chat/completions` and `POST /v1/responses`;
//! - Gemini `POST /v1beta/models/{model}:generateContent` and
//!   `:streamGenerateContent` (`?alt=sse` → SSE, else a streamed JSON array);
//! - the Responses API's WebSocket mode: `GET /v1/responses` with
//!   `Upgrade: websocket`, the same scripted turns as its SSE (`ws`); a
//!   script holding a `response.inject.created` waits there for the
//!   client's `response.inject` (`ws_inject`, the beta's);
//! - the cloud endpoints (issue 18): Azure OpenAI, Vertex AI (Gemini and
//!   Anthropic `rawPredict`) and Bedrock `invoke` /
//!   `invoke-with-response-stream`, with Bedrock's SigV4 verified against
//!   [`MockOptions::aws_key`] for its region and service, within AWS's
//!   5-minute window and with its session token (see `cloud`);
//! - the Responses API's compaction, `POST /v1/responses/compact` (and
//!   the ChatGPT backend's `…/codex/responses/compact`): the input's user
//!   messages and one `compaction` item (`compact`);
//! - the Conversations API, `/v1/conversations` and its items, whose
//!   conversations a Responses request can name (`conversation`);
//! - token counting: Anthropic's `POST /v1/messages/count_tokens`,
//!   Gemini's `…/models/{model}:countTokens` and Bedrock's
//!   `/model/{id}/count-tokens` (signed as its model routes are), which
//!   clients call beside their model requests (`count_tokens`);
//! - `GET /v1/models` (Anthropic's or OpenAI's listing, told apart by the
//!   `anthropic-version` / `x-api-key` headers) and `GET /v1beta/models`,
//!   and one model's each, `GET /v1/models/{id}`, `GET
//!   /v1beta/models/{model}` (`models`).
//!
//! It behaves like the real APIs where a gateway can tell the difference:
//! - **authentication**: Anthropic takes `x-api-key` or `Authorization:
//!   Bearer`, OpenAI `Authorization: Bearer`, Gemini `x-goog-api-key` or
//!   `?key=`; without one (or with the wrong one when
//!   [`MockOptions::api_key`] is set) → 401 in the provider's envelope (Gemini:
//!   403 without a key, 400 with a wrong one, as Gemini answers);
//! - **validation**: a body whose tool calls and results do not pair as
//!   the provider requires, or whose call ids its schema refuses (too long,
//!   off its pattern) → 400 in the provider's envelope with the
//!   provider's own text (the mock's own rules, `rules`, written from the
//!   providers' errors and not from `toolwarden_wire`, whose view of
//!   pairing the gateway's repair uses); Anthropic's `anthropic-version`
//!   header and required body fields; a Responses `previous_response_id`
//!   the API would not have (400 `previous_response_not_found`), and a
//!   continuation judged with the previous response's context (see
//!   `continuation`: a store of the responses made, and each WebSocket's
//!   own latest response, where `store: false` ones live);
//! - **replies**: by default deterministic — if the last message carries
//!   tool results the model answers with text, otherwise it calls tools
//!   named in the request's `tools` (or [`MockOptions::default_tool`]), so a
//!   client can drive multi-turn tool loops. `"stream": true` (or Gemini's
//!   streaming method) gets the dialect's real event stream. Tests can queue
//!   exact responses with [`MockProvider::push_response`] (e.g. a corpus SSE
//!   recording, byte-exact, with chosen chunking and delays);
//! - **faults**: [`MockProvider::set_fault`] with a [`Fault`], answered with
//!   the API's headers for the status (request id, `retry-after` and
//!   rate-limit headers, Bedrock's `x-amzn-errortype`; `api_headers`) or
//!   with headers of the test's choosing ([`Fault::StatusWithHeaders`]);
//!   or a stream that fails after it began, with the dialect's own error
//!   event ([`Fault::ErrorEventAfter`]);
//! - **recording**: every request as received ([`MockProvider::received`]).
//!
//! ```no_run
//! # async fn demo() {
//! use toolwarden_mock_provider::{MockOptions, MockProvider, Fault};
//! let mock = MockProvider::start(MockOptions::default()).await;
//! let base = mock.base_url(); // "http://127.0.0.1:PORT"
//! mock.set_fault(Fault::Status(529, r#"{"type":"error"}"#.into()));
//! # }
//! ```

#![forbid(unsafe_code)]

mod agent;
mod answer;
mod api_headers;
mod aws_federation;
mod body;
mod clock;
mod cloud;
mod cloud_auth;
mod compact;
mod continuation;
mod conversation;
mod count_tokens;
mod envelope;
mod google_federation;
mod json;
mod models;
mod plan;
mod render;
mod rules;
mod script;
mod server;
mod sse;
mod stream_error;
mod thread;
mod tls;
mod ws;
mod ws_inject;

pub use agent::AgentMode;
pub use cloud::AwsTestKey;
pub use cloud_auth::{
    AwsCredentialService, GOOGLE_TEST_PRIVATE_KEY_PEM, GoogleTestKey, IMDS_ROLE, pem_der,
};
pub use google_federation::ACTIONS_REQUEST_TOKEN;
pub use script::{Fault, RawResponse, ReceivedRequest, Scripted, json_lines_to_sse};
pub use stream_error::StreamError;
pub use tls::MockTls;

use std::{
    collections::VecDeque,
    io,
    net::SocketAddr,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use hyper::service::service_fn;
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How the mock behaves.
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// Where to listen (default `127.0.0.1:0`).
    pub listen: SocketAddr,
    /// When set, only this key is accepted (else any non-empty key).
    pub api_key: Option<String>,
    /// The tool called when the request offers none (default `get_weather`).
    pub default_tool: String,
    /// How many (parallel) tool calls a tool-calling reply makes (default 1).
    pub calls_per_reply: usize,
    /// Reject what the real APIs reject with 400 (default true): pairing
    /// defects, call ids the API's schema refuses, and Responses continuations of a response the API does not
    /// have (see the `continuation` module).
    pub validate: bool,
    /// Keep every request for [`MockProvider::received`] (default true;
    /// the benchmark turns it off).
    pub record: bool,
    /// Pause between the events of a default streaming reply (default 0).
    pub chunk_delay: Duration,
    /// Gzip a successful reply for a client whose `accept-encoding` takes
    /// gzip, SSE included (each event flushed), as Anthropic's API does
    /// (default true).
    pub gzip: bool,
    /// Pause after the last event of a streamed reply before its body ends,
    /// as a provider that keeps the stream open briefly (default 0).
    pub stream_tail: Duration,
    /// Agent mode: scripted tool turns for real agent programs, logged as
    /// ground truth (default off; see [`AgentMode`]).
    pub agent: Option<Arc<AgentMode>>,
    /// Bedrock (issue 18): verify SigV4 signatures with this key, as AWS
    /// does (default: none, any signature passes).
    pub aws_key: Option<AwsTestKey>,
    /// Bedrock: accept this Bedrock API key (`Authorization: Bearer …`, the
    /// AWS SDKs' `AWS_BEARER_TOKEN_BEDROCK`) instead of a signature, and
    /// refuse any other as AWS does (default: none, any key passes).
    pub bedrock_api_key: Option<String>,
    /// Vertex AI (issue 18): serve Google's token endpoint (`POST /token`)
    /// and accept only its token on Vertex routes (default: none, any
    /// Bearer passes).
    pub google_key: Option<GoogleTestKey>,
    /// Bedrock (issue 18): serve [`Self::aws_key`] from an IMDS and a
    /// container credentials endpoint (default off).
    pub aws_credential_service: Option<AwsCredentialService>,
    /// Serve HTTPS (and `wss://`) with this certificate instead of plain
    /// HTTP (default off; see [`MockTls`]).
    pub tls: Option<MockTls>,
    /// Write each event of a response with its own flush, on SSE streams
    /// and in WebSocket mode alike, as a provider generating them one by one
    /// does (default false: the events made at once go with one flush).
    pub flush_each_event: bool,
    /// `(model, n)`: a streamed default reply for this model (as its
    /// route names it) sends `n` body chunks and half of the next, then
    /// resets the connection — a stream cut midway for clients in other
    /// processes, which cannot set [`Fault`]s (default off).
    pub cut_stream: Option<(String, usize)>,
    /// Zeros put after a default reply's response id prefix (`resp_`,
    /// `msg_`, …): ids this much longer, alike in all but their last
    /// characters, as a proxy's encoded ids are (default 0).
    pub response_id_pad: usize,
    /// How many deltas a streamed default reply splits each call's
    /// arguments into, cut anywhere but inside a character (inside JSON
    /// escapes too), as a model's token-sized fragments are (default 2).
    pub arg_pieces: usize,
    /// Re-cut every body into pieces of this many bytes after encoding
    /// (gzip included), whatever its events' bounds, as TCP and
    /// compression cut a real one (default off: one piece per event).
    pub split_chunks: Option<usize>,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            api_key: None,
            default_tool: "get_weather".to_string(),
            calls_per_reply: 1,
            validate: true,
            record: true,
            chunk_delay: Duration::ZERO,
            gzip: true,
            stream_tail: Duration::ZERO,
            agent: None,
            aws_key: None,
            bedrock_api_key: None,
            google_key: None,
            aws_credential_service: None,
            tls: None,
            flush_each_event: false,
            cut_stream: None,
            response_id_pad: 0,
            arg_pieces: 2,
            split_chunks: None,
        }
    }
}

/// State shared by the handle and the connections.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) opts: MockOptions,
    received: Mutex<Vec<ReceivedRequest>>,
    fault: Mutex<Fault>,
    script: Mutex<VecDeque<Scripted>>,
    pub(crate) requests: AtomicU64,
    pub(crate) open_streams: Arc<AtomicU64>,
    /// How each WebSocket the client ended did end (see
    /// [`MockProvider::websocket_ends`]).
    pub(crate) ws_ends: Mutex<Vec<Option<u16>>>,
    /// The Responses API's stored responses (`previous_response_id`).
    pub(crate) responses: continuation::Store,
    /// Anthropic's held conversations (message threads).
    pub(crate) threads: thread::Threads,
    /// The Responses API's stored conversations (`/v1/conversations`).
    pub(crate) conversations: conversation::Conversations,
}

/// A running mock provider; stops (closing every connection) when dropped.
#[derive(Debug)]
pub struct MockProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

// === impl Shared ===

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave these values half-made.
    m.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl Shared {
    pub(crate) fn lock_received(&self) -> MutexGuard<'_, Vec<ReceivedRequest>> {
        lock(&self.received)
    }

    pub(crate) fn fault(&self) -> Fault {
        lock(&self.fault).clone()
    }

    pub(crate) fn websocket_ended(&self, close_code: Option<u16>) {
        lock(&self.ws_ends).push(close_code);
    }

    pub(crate) fn pop_script(&self) -> Option<Scripted> {
        lock(&self.script).pop_front()
    }
}

// === impl MockProvider ===

impl MockProvider {
    /// Start serving. Panics with the reason if the address cannot be bound
    /// (a test helper; use [`MockProvider::try_start`] to handle it).
    pub async fn start(opts: MockOptions) -> MockProvider {
        let listen = opts.listen;
        match MockProvider::try_start(opts).await {
            Ok(m) => m,
            Err(e) => panic!("mock provider: cannot listen on {listen}: {e}"),
        }
    }

    /// Start serving, or the bind error.
    pub async fn try_start(opts: MockOptions) -> io::Result<MockProvider> {
        let listener = TcpListener::bind(opts.listen).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            opts,
            received: Mutex::new(Vec::new()),
            fault: Mutex::new(Fault::None),
            script: Mutex::new(VecDeque::new()),
            requests: AtomicU64::new(0),
            open_streams: Arc::new(AtomicU64::new(0)),
            ws_ends: Mutex::new(Vec::new()),
            responses: continuation::Store::default(),
            threads: thread::Threads::default(),
            conversations: conversation::Conversations::default(),
        });
        let stop = CancellationToken::new();
        tokio::spawn(accept_loop(listener, shared.clone(), stop.clone()));
        Ok(MockProvider { addr, shared, stop })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash), or
    /// `https://localhost:PORT` when serving TLS.
    pub fn base_url(&self) -> String {
        match self.shared.opts.tls {
            Some(_) => format!("https://localhost:{}", self.addr.port()),
            None => format!("http://{}", self.addr),
        }
    }

    /// Every request received so far, in arrival order.
    pub fn received(&self) -> Vec<ReceivedRequest> {
        self.shared.lock_received().clone()
    }

    /// Every request received so far, removing them.
    pub fn take_received(&self) -> Vec<ReceivedRequest> {
        std::mem::take(&mut *self.shared.lock_received())
    }

    /// How many requests arrived (also counted when recording is off).
    pub fn request_count(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// How many response bodies are being written right now.
    pub fn open_streams(&self) -> u64 {
        self.shared.open_streams.load(Ordering::Relaxed)
    }

    /// How each WebSocket that its client ended did end, in order: the
    /// close frame's code (1005 for a close without one), or `None` for a
    /// connection dropped without a close. Sockets the mock itself drops
    /// ([`Fault::ResetMidStream`]) are not listed.
    pub fn websocket_ends(&self) -> Vec<Option<u16>> {
        lock(&self.shared.ws_ends).clone()
    }

    /// Misbehave this way from now on (`Fault::None` restores service).
    pub fn set_fault(&self, fault: Fault) {
        *lock(&self.shared.fault) = fault;
    }

    /// Queue a response for the next authenticated, valid model request.
    pub fn push_response(&self, response: Scripted) {
        lock(&self.shared.script).push_back(response);
    }

    /// Stop accepting and close every connection.
    pub fn shutdown(&self) {
        self.stop.cancel();
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, stop: CancellationToken) {
    loop {
        let (stream, _) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(_) => {
                    // Out of file descriptors and the like: back off briefly.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            match shared.opts.tls.clone() {
                Some(tls) => {
                    let handshake = tls.acceptor.accept(stream);
                    let stream = tokio::select! {
                        _ = stop.cancelled() => return,
                        accepted = handshake => match accepted {
                            Ok(stream) => stream,
                            // A client that does not trust the certificate.
                            Err(_) => return,
                        },
                    };
                    serve_connection(TokioIo::new(stream), shared, stop).await;
                }
                None => serve_connection(TokioIo::new(stream), shared, stop).await,
            }
        });
    }
}

/// One client connection (plain or TLS), until it ends or the mock stops.
async fn serve_connection<I>(io: TokioIo<I>, shared: Arc<Shared>, stop: CancellationToken)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| server::handle(shared.clone(), req));
    let builder = auto::Builder::new(TokioExecutor::new());
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = conn => {}
    }
}
