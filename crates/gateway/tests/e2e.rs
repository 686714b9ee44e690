//! End-to-end tests: the mock provider and the gateway in-process, talking
//! over real sockets on 127.0.0.1.
//!
//! - `corpus`: the corpus conversations and SSE recordings through the gateway;
//! - `counts`: a three-turn tool conversation in every dialect, streaming
//!   and not, gives exact counts in the store and in `/metrics`;
//! - `repair`: a conversation with a missing tool result is repaired and
//!   accepted (the mock rejects it when sent directly);
//! - `fidelity`: responses through the gateway are byte-identical to direct
//!   ones, streaming included, and the request bytes arrive unchanged;
//! - `faults`: upstream down, slow, reset mid-stream, 5xx, malformed SSE;
//! - `secrets`: credentials never reach the SQLite file or the JSONL log;
//! - `alerts`, `otel` (issue 19): webhook and OTLP receivers on 127.0.0.1;
//! - `compressed`: zstd / gzip / br / deflate request and response bodies
//!   are read from decoded copies and forwarded as they came (repaired ones
//!   as plain JSON); undecodable ones go as they came.

mod e2e {
    pub mod convo;
    pub mod support;

    mod alerts;
    mod compressed;
    mod corpus;
    mod counts;
    mod faults;
    mod fidelity;
    mod otel;
    mod repair;
    mod secrets;
}
