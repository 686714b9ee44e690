//! What the fuzz targets call (`fuzz/fuzz_targets/{h1,ws_messages,voice_messages,cloud_route,redact}.rs`):
//! the gateway's HTTP/1.1 head parsers and chunked decoder, its WebSocket
//! message scanner, its voice sockets' message readers, its cloud route
//! parser and its failure excerpt are private, so their checks
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

/// Any text as a failed result's content, a tool's error message and a
/// text to redact: an outcome, never a panic. The excerpt is bounded
/// (its head, the gap and its tail) and holds nothing the whole text's
/// redaction cut when that cut nothing at all; where a URL the text ends
/// inside starts is a char boundary; and the text as the password of a
/// database or collector URL, with and without its scheme, is not shown
/// when the URL is named (panics if not: a finding).
pub fn redact(data: &[u8]) {
    use toolwarden_core::{classify, redact};
    let text = String::from_utf8_lossy(data);
    let excerpt = crate::observe::request::excerpt(&text);
    assert!(
        excerpt.chars().count() <= 303,
        "excerpt too long: {excerpt:?}"
    );
    let _ = redact::without_secrets(&text);
    if let Some(at) = redact::open_url_start(&text) {
        assert!(text.is_char_boundary(at), "{at} in {text:?}");
    }
    let _ = classify::message(&text);
    if let Some(r) = classify::extract_resource(&text) {
        assert!(text.contains(&r), "{r:?} not in {text:?}");
    }
    let _ = toolwarden_store::redact_url(&text);
    // Marked at both ends, so the password shows only if it leaked.
    let password = format!("\u{1}{text}\u{2}");
    for url in [
        format!("postgres://u:{password}@h:5432/db?sslmode=disable"),
        format!("u:{password}@collector:4318"),
    ] {
        let shown = toolwarden_store::redact_url(&url);
        assert!(!shown.contains(&password), "{url:?} shown as {shown:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redact_target_takes_any_text() {
        for input in [
            "",
            "链接https://admin:pw@h/x",
            "not found: 请访问https://api.example.com/x",
            "X-Api-Key: abc def\nhooks.slack.com/services/T/B/x",
            "P://W",
            "a/b?c#d@e",
        ] {
            redact(input.as_bytes());
        }
        redact(&"错https://a:".repeat(200).into_bytes());
    }

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
