//! The gateway's own HTTP/1.1 (`toolwarden_gateway::h1`): any bytes as a
//! request head, a response head and a chunked body give an outcome, never
//! a panic; a chunked body decodes to the same data whether it arrives
//! whole or in 3-byte reads.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwarden_gateway::{
    Upstream, Upstreams,
    h1::{
        chunked::ChunkDecoder,
        head::{ClientHeadExtras, parse_request, parse_response},
    },
};

fuzz_target!(|data: &[u8]| {
    let up = Upstream::parse("http://127.0.0.1:9/p").expect("a valid URL");
    let upstreams = Upstreams {
        openai: up.clone(),
        anthropic: up.clone(),
        gemini: up,
    };
    let _ = parse_request(data, &upstreams);
    let _ = parse_response(data, ClientHeadExtras { repaired: 1, close: false });

    let decode = |pieces: &mut dyn Iterator<Item = &[u8]>| {
        let mut d = ChunkDecoder::new();
        let mut out = Vec::new();
        for piece in pieces {
            match d.decode(piece, &mut |data| out.extend_from_slice(data)) {
                Ok(used) if used < piece.len() => break,
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        Some((out, d.is_done()))
    };
    let whole = decode(&mut std::iter::once(data));
    let split = decode(&mut data.chunks(3));
    assert_eq!(whole, split, "splitting the input changed the decoded body");
});
