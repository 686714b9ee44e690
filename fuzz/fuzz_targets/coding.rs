//! Content codings (`toolwarden_coding`): any bytes, as the body of
//! any coding and as a `content-encoding` value, decode or fail with an
//! error, never a panic, and never give more than the limit; a stream
//! decoder fed the bytes whole or in 3-byte pieces gives the same outcome,
//! and the same bytes as whole-body decoding when both succeed.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwarden_coding::{Codings, StreamDecoder};

fn stream(codings: &Codings, pieces: &mut dyn Iterator<Item = &[u8]>) -> Option<Vec<u8>> {
    let mut d = StreamDecoder::new(codings, 1 << 16).ok()?;
    let mut out = Vec::new();
    for piece in pieces {
        d.feed(piece, &mut out).ok()?;
    }
    d.finish(&mut out).ok()?;
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let _ = Codings::parse(data);
    let limit = 1 << 16;
    for name in ["gzip", "deflate", "zstd", "br", "br, zstd"] {
        let codings = Codings::parse(name.as_bytes()).expect("known codings");
        let whole = codings.decode(data, limit).ok();
        if let Some(out) = &whole {
            assert!(out.len() <= limit);
        }
        if !name.contains(',') {
            let a = stream(&codings, &mut std::iter::once(data));
            let b = stream(&codings, &mut data.chunks(3));
            assert_eq!(a, b, "{name}: whole and in pieces");
            if let (Some(a), Some(whole)) = (&a, &whole) {
                assert_eq!(a, whole, "{name}: stream and whole-body decoding agree");
            }
        }
    }
});
