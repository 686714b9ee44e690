//! The voice sockets' message readers (the OpenAI Realtime API, Gemini
//! Live): any bytes as messages (cut at each `0xFF`) read by each reader,
//! client and server, never a panic; the bodies made from what they read
//! are JSON the dialect's views read (`toolwarden_gateway::fuzzing::voice_messages`,
//! which the gateway's property tests also run).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolwarden_gateway::fuzzing::voice_messages(data));
