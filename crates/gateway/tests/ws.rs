//! End-to-end tests of the Responses API's WebSocket mode: the mock
//! provider (speaking WebSocket mode) and the gateway in-process, over
//! real sockets on 127.0.0.1.
//!
//! - `turns`: a tool conversation over one socket with
//!   `previous_response_id`, then a second socket resending the whole
//!   history, and one moving between a socket and HTTP: exact counts in
//!   the store, the JSONL log and `/metrics`;
//!   events byte-equal to the mock's own; `fix`-mode repair of a message;
//!   permessage-deflate; no POST reaches the mock;
//! - `duplicates`: one message holding an output twice (a continuation's
//!   or a whole history's): taken out in `fix` mode, recorded in `report`
//!   mode, counted once either way;
//! - `faults`: the upstream refusing the upgrade, breaking or closing
//!   mid-response, the client closing, an oversize message, bad deflate
//!   data, a message that is not JSON, fragments, ping/pong, close codes;
//! - `inject`: the beta's `response.inject`: outputs committed to a
//!   response under way are its results, each after its call;
//! - `lanes`: `stream_id` lanes answered in parallel, each turn recorded
//!   with its own events;
//! - `limits`: an open socket keeps its place under `max_client_connections`;
//!   messages held against the bounds on bodies and responses held at once;
//!   an inject into a turn whose parse found no room goes as sent;
//! - `relay_props`: any client messages, cut into any fragments, reach the
//!   upstream byte for byte (a property test);
//! - `shutdown`: open sockets closed with 1001 when the gateway stops;
//! - `steer`: a response the server begins on its own (a steered
//!   response's successor) is a turn of its own, its calls recorded;
//! - `tls`: `wss://` to an `https://` upstream, trusted or not;
//! - `tunnel`: any other WebSocket to a provider (Realtime, Gemini Live)
//!   relayed (Gemini's binary frames too);
//! - `voice`: Realtime and Gemini Live sockets read: calls, results and
//!   failures recorded once (a Gemini generator's responses one result),
//!   every message passed byte for byte;
//! - `voice_ends`: how a voice socket's turns end: a Realtime response
//!   cut before its `response.done`, results sent after the last turn, a
//!   Gemini usage that comes after the client's results.

mod e2e {
    #[allow(dead_code)]
    #[path = "../e2e/support.rs"]
    pub mod support;
    #[path = "../e2e/twice.rs"]
    pub mod twice;
}

mod ws {
    pub mod client;

    mod duplicates;
    pub mod faults;
    mod inject;
    mod lanes;
    mod limits;
    mod relay_props;
    mod shutdown;
    mod steer;
    mod tls;
    mod tunnel;
    mod turns;
    mod voice;
    mod voice_ends;
}
