//! The Responses WebSocket mode's message scanner: any bytes as messages
//! (cut at each `0xFF`) give each message's `type` and `stream_id` as a
//! JSON parser reads them, where it is one object, never a panic; and the
//! SSE events they become for the stream parser give back each message,
//! whole or in 3-byte reads (`toolwarden_gateway::fuzzing::ws_messages`,
//! which the gateway's unit and property tests also run).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolwarden_gateway::fuzzing::ws_messages(data));
