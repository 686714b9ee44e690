//! Content codings (`toolwarden_wire::coding`): any bytes, as the body of
//! any coding and as a `content-encoding` value, decode or fail with an
//! error, never a panic, and never give more than the limit.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::coding::Codings;

fuzz_target!(|data: &[u8]| {
    let _ = Codings::parse(data);
    let limit = 1 << 16;
    for name in ["gzip", "deflate", "zstd", "br", "br, zstd"] {
        let codings = Codings::parse(name.as_bytes()).expect("known codings");
        if let Ok(out) = codings.decode(data, limit) {
            assert!(out.len() <= limit);
        }
    }
});
