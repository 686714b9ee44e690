//! What the fuzz targets call (`fuzz/fuzz_targets/{h1,ws_messages,voice_messages,cloud_route}.rs`):
//! the gateway's HTTP/1.1 head parsers and chunked decoder, its WebSocket
//! message scanner, its voice sockets' message readers and its cloud route
//! parser are private, so their checks
//! live here, run by the fuzzer and by the unit and property tests (which
//! keep them from rotting when the parsers change). Not part of the API.

use crate::{
    Upstream, Upstreams,
    h1::{
        chunked::ChunkDecoder,
        head::{ClientHeadExtras, parse_request, parse_response},
    },
};

mod cloud_route;
mod voice_messages;
mod ws_messages;

pub use cloud_route::cloud_route;
pub use voice_messages::{voice_message, voice_messages};
pub use ws_messages::{ws_messages, ws_messages_cut};

/// Any bytes as a request head, a response head and a chunked body give an
/// outcome, never a panic; a chunked body decodes to the same data whether
/// it arrives whole or in 3-byte reads (panics if not: a finding).
pub fn h1(data: &[u8]) {
    let up = Upstream::parse("http://127.0.0.1:9/p").expect("a valid URL");
    let upstreams = Upstreams {
        openai: up.clone(),
        anthropic: up.clone(),
        gemini: up.clone(),
        chatgpt: up,
    };
    let _ = parse_request(data, &upstreams, None);
    let _ = parse_request(data, &upstreams, Some(&crate::AllowedHosts::default()));
    let _ = parse_response(
        data,
        ClientHeadExtras {
            repaired: 1,
            close: false,
        },
    );
    let whole = decode(&mut std::iter::once(data));
    let split = decode(&mut data.chunks(3));
    assert_eq!(whole, split, "splitting the input changed the decoded body");
}

/// `pieces` through one decoder: the data and whether the body ended, or
/// `None` on an error.
fn decode(pieces: &mut dyn Iterator<Item = &[u8]>) -> Option<(Vec<u8>, bool)> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_h1_target_takes_heads_and_bodies_whole_or_split() {
        for input in [
            &b""[..],
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
            b"4\r\nwiki\r\n5;ext=1\r\npedia\r\n0\r\nx-trailer: 1\r\n\r\n",
            b"0x1a\r\n",
            b"\xff\xfe\r\n\r\n",
        ] {
            h1(input);
        }
    }
}
