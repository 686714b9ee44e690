//! The gateway's own HTTP/1.1: any bytes as a request head, a response
//! head and a chunked body give an outcome, never a panic; a chunked body
//! decodes to the same data whether it arrives whole or in 3-byte reads
//! (`toolwarden_gateway::fuzzing::h1`, which the gateway's unit tests also
//! run, so this target cannot rot unseen).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| toolwarden_gateway::fuzzing::h1(data));
