//! The cloud route parser (Azure OpenAI, Vertex AI, Bedrock): any bytes
//! as a path and query give a cloud route or none, never a panic; a route
//! is taken only by a path of its cloud's shape, forwards the path and
//! query unchanged but for the prefix, and reads the dialect and model the
//! path names (`toolwarden_gateway::fuzzing::cloud_route`, which the
//! gateway's unit and property tests also run).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolwarden_gateway::fuzzing::cloud_route(data));
