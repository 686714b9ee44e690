//! Redaction and the gateway's failure excerpt
//! (`toolwarden_gateway::fuzzing::redact`): any text is redacted,
//! excerpted and classified without a panic; the excerpt stays within its
//! bound; a URL's start and a named resource are found where the text
//! has them; the text as a URL's password is not shown when the store
//! names the URL (`toolwarden_store::redact_url`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    toolwarden_gateway::fuzzing::redact(data);
});
