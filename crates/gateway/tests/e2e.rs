//! End-to-end tests: the mock provider and the gateway in-process, talking
//! over real sockets on 127.0.0.1.
//!
//! - `corpus`: the corpus conversations and SSE recordings through the gateway;
//! - `counts`: a three-turn tool conversation in every dialect, streaming
//!   and not, gives exact counts in the store and in `/metrics`;
//! - `repair`: a conversation with a missing tool result is repaired and
//!   accepted (the mock rejects it when sent directly);
//! - `duplicates`: a Responses or Chat body holding one output twice:
//!   taken out in `fix` mode, recorded in `report` mode, counted once
//!   (`twice` holds the bodies and the check, shared with `ws`);
//! - `builtin_tools`: the Responses API's built-in `shell` and
//!   `apply_patch` calls are counted per tool with their own flags, and an
//!   unanswered one is repaired in its own output shape;
//! - `fidelity`: responses through the gateway are byte-identical to direct
//!   ones, streaming included, and the request bytes arrive unchanged;
//! - `faults`: upstream down, slow, reset mid-stream, 5xx, malformed SSE;
//! - `secrets`: credentials never reach the SQLite file or the JSONL log;
//! - `alerts`, `otel` (issue 19): webhook and OTLP receivers on 127.0.0.1;
//! - `compressed`: zstd / gzip / br / deflate request and response bodies
//!   are read from decoded copies and forwarded as they came (repaired ones
//!   as plain JSON); undecodable ones go as they came;
//! - `rewritten_ids`: clients that rewrite call ids (the Gemini CLI's
//!   invented ids for id-less calls) still get each call counted once,
//!   with its result;
//! - `early_answers`: answers sent before the gateway is done with the
//!   stream holding their calls, and runs reusing a call id with no
//!   database, counted exactly in `/metrics`;
//! - `forks`: a conversation continued as a session of its own (Claude
//!   Code's `--fork-session`, the Codex CLI's fork): the replayed results
//!   count once, the fork's own in the fork's session;
//! - `early_close`: a client that hangs up right after the final event
//!   (Codex after `response.completed`) gets complete turns recorded;
//! - `trailer`: a client that hangs up between the final event and the
//!   usage after it (Chat's usage chunk, Bedrock's `metadata`) leaves the
//!   usage recorded: the gateway reads the stream on;
//! - `head`: `HEAD /` and bodyless pass-through requests make no session
//!   and no error;
//! - `gemini_compression`: the Gemini CLI compressing its history with no
//!   session header (a new fingerprint session answering the old one's
//!   calls) still counts each call once, with its result;
//! - `resend_props`: a property over resent histories (retries,
//!   summarised prefixes, continuations and whole histories): every call,
//!   result and failure counted once;
//! - `responses_compaction`: tool outputs sent only to the Responses
//!   API's compaction endpoint (the Codex CLI compacting mid-turn) count
//!   once;
//! - `gemini_sessions`: Gemini CLI runs named by `x-session-id` (its
//!   custom headers) are one session each, side requests included;
//! - `cloud` (issue 18): Azure OpenAI, Vertex AI and Bedrock routes,
//!   prefixes, unconfigured upstreams, SigV4 re-signing checked by the
//!   mock, broken event streams relayed;
//! - `cloud_auth` (issue 18): the gateway's own credentials (Google ADC
//!   tokens from the mock's token endpoint, AWS credentials from a
//!   `credential_process`, the container endpoint and IMDS served by the
//!   mock); `cloud_cut`: a Bedrock event stream cut midway ends with an
//!   exception frame;
//! - `stream_budget`: a stream past `response_parse_limit` is relayed whole,
//!   kept only up to the limit, and counted too large;
//! - `pass_through`: pass-through uploads stream upstream, bounded by
//!   progress, not size;
//! - `https`: the gateway serving HTTPS (`tls_cert`, `tls_key`): every
//!   dialect counted over TLS, HTTP/2 by ALPN, plain HTTP to the HTTPS
//!   port, a handshake that never comes, a refusal over the cap;
//! - `startup`: the port is bound before the database is opened;
//! - `shutdown_cut`: a request still under way when the shutdown's grace
//!   period ends is recorded as cut by the shutdown, with its results,
//!   not as a client's 499.

#[path = "tls/acceptor.rs"]
mod tls_support;

mod e2e {
    pub mod convo;
    pub mod support;
    pub mod twice;

    mod alerts;
    mod builtin_tools;
    mod cloud;
    mod cloud_auth;
    mod cloud_cut;
    mod cloud_federation;
    mod compressed;
    mod continued_readers;
    mod converse_models;
    mod corpus;
    mod counts;
    mod cross_site;
    mod duplicates;
    mod early_answers;
    mod early_close;
    mod faults;
    mod fidelity;
    mod forks;
    mod gemini_compression;
    mod gemini_sessions;
    mod head;
    mod https;
    mod otel;
    mod otel_grpc;
    mod pass_through;
    mod rebinding;
    mod repair;
    mod resend_props;
    mod responses_compaction;
    mod rewritten_ids;
    mod secrets;
    mod shutdown_cut;
    mod startup;
    mod stream_budget;
    mod text_answers;
    mod threads;
    mod trailer;
}
