//! Tests of the content codings: every coding, in pieces, bounded, and
//! any bytes without a panic.

use std::io::Write;

use proptest::prelude::*;

use super::*;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

fn br(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let params = brotli::enc::BrotliEncoderParams::default();
    brotli::BrotliCompress(&mut &data[..], &mut out, &params).unwrap();
    out
}

fn codings(value: &str) -> Codings {
    Codings::parse(value.as_bytes()).unwrap()
}

const JSON: &[u8] = br#"{"model":"gpt-5","input":[{"type":"function_call_output","call_id":"call_1","output":"Error: ENOENT: no such file or directory"}]}"#;

#[test]
fn parses_names_lists_and_identity() {
    assert!(codings("").is_identity());
    assert!(codings("identity").is_identity());
    assert_eq!(codings("ZSTD").iter().collect::<Vec<_>>(), [Coding::Zstd]);
    assert_eq!(codings("x-gzip").iter().collect::<Vec<_>>(), [Coding::Gzip]);
    assert_eq!(
        codings("deflate, br").iter().collect::<Vec<_>>(),
        [Coding::Deflate, Coding::Brotli]
    );
    let err = Codings::parse(b"compress").unwrap_err();
    assert_eq!(err.kind, CodingErrorKind::Unsupported);
    assert!(err.detail.contains("compress"), "{err}");
    let err = Codings::parse(b"gzip,gzip,gzip,gzip,gzip").unwrap_err();
    assert_eq!(err.kind, CodingErrorKind::Unsupported);
    assert_eq!(
        Codings::parse(b"\xff").unwrap_err().kind,
        CodingErrorKind::Unsupported
    );
}

#[test]
fn decodes_every_coding() {
    for (name, encoded) in [
        ("gzip", gzip(JSON)),
        ("deflate", zlib(JSON)),
        ("deflate", raw_deflate(JSON)),
        ("zstd", zstd(JSON)),
        ("br", br(JSON)),
        ("identity", JSON.to_vec()),
    ] {
        let decoded = codings(name).decode(&encoded, 1 << 20);
        assert_eq!(decoded.as_deref(), Ok(JSON), "{name}");
    }
}

#[test]
fn a_list_is_undone_in_reverse() {
    // Applied gzip first, then br.
    let body = br(&gzip(JSON));
    assert_eq!(codings("gzip, br").decode(&body, 1 << 20).unwrap(), JSON);
    assert_eq!(
        codings("br, gzip").decode(&body, 1 << 20).unwrap_err().kind,
        CodingErrorKind::Invalid
    );
}

#[test]
fn zstd_reads_every_frame_and_skips_skippable_ones() {
    let mut body = zstd(b"{\"a\":");
    // A skippable frame: magic 0x184D2A50, 4-byte length, payload.
    body.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
    body.extend_from_slice(&3u32.to_le_bytes());
    body.extend_from_slice(b"xyz");
    body.extend_from_slice(&zstd(b"1}"));
    assert_eq!(codings("zstd").decode(&body, 100).unwrap(), b"{\"a\":1}");
}

#[test]
fn the_reused_zstd_context_recovers_from_a_bad_frame() {
    let good = zstd(JSON);
    let bad = &good[..good.len() / 2];
    for _ in 0..3 {
        let err = codings("zstd").decode(bad, 1 << 20).unwrap_err();
        assert_eq!(err.kind, CodingErrorKind::Invalid);
        assert_eq!(codings("zstd").decode(&good, 1 << 20).unwrap(), JSON);
        // Stopped at the limit mid-frame, then a whole frame again.
        assert_eq!(
            codings("zstd").decode(&good, 10).unwrap_err().kind,
            CodingErrorKind::TooLarge
        );
        assert_eq!(codings("zstd").decode(&good, 1 << 20).unwrap(), JSON);
    }
}

#[test]
fn a_bomb_stops_at_the_limit() {
    let big = vec![b'a'; 4 << 20];
    for name in ["gzip", "deflate", "zstd", "br"] {
        let encoded = match name {
            "gzip" => gzip(&big),
            "deflate" => zlib(&big),
            "zstd" => zstd(&big),
            _ => br(&big),
        };
        assert!(encoded.len() < 64 << 10, "{name}: {}", encoded.len());
        let err = codings(name).decode(&encoded, 1 << 20).unwrap_err();
        assert_eq!(err.kind, CodingErrorKind::TooLarge, "{name}");
        // Exactly at the limit is fine.
        assert_eq!(
            codings(name).decode(&encoded, 4 << 20).unwrap().len(),
            4 << 20
        );
    }
    assert_eq!(
        codings("identity").decode(&big, 10).unwrap_err().kind,
        CodingErrorKind::TooLarge
    );
}

#[test]
fn corrupt_and_truncated_bodies_are_invalid() {
    for (name, encoded) in [
        ("gzip", gzip(JSON)),
        ("deflate", zlib(JSON)),
        ("zstd", zstd(JSON)),
        ("br", br(JSON)),
    ] {
        let cut = &encoded[..encoded.len() / 2];
        let err = codings(name).decode(cut, 1 << 20).unwrap_err();
        assert_eq!(err.kind, CodingErrorKind::Invalid, "{name}: {err}");
        assert!(err.detail.contains(name), "{err}");
    }
    assert_eq!(
        codings("zstd").decode(b"", 10).unwrap_err().kind,
        CodingErrorKind::Invalid
    );
    assert_eq!(
        codings("gzip").decode(JSON, 1 << 20).unwrap_err().kind,
        CodingErrorKind::Invalid
    );
}

/// `encoded` fed to a [`StreamDecoder`] in pieces cut at `cuts`.
fn stream(name: &str, encoded: &[u8], cuts: &[usize], limit: u64) -> Result<Vec<u8>, CodingError> {
    let mut d = StreamDecoder::new(&codings(name), limit)?;
    let mut out = Vec::new();
    let mut at = 0;
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (encoded.len() + 1)).collect();
    points.sort_unstable();
    for p in points.into_iter().chain([encoded.len()]) {
        d.feed(&encoded[at..p], &mut out)?;
        at = p;
    }
    d.finish(&mut out)?;
    Ok(out)
}

const SSE: &[u8] = b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}}\n\n";

#[test]
fn a_stream_decodes_piece_by_piece() {
    for (name, encoded) in [
        ("gzip", gzip(SSE)),
        ("deflate", zlib(SSE)),
        ("deflate", raw_deflate(SSE)),
        ("br", br(SSE)),
        ("zstd", zstd(SSE)),
    ] {
        // One byte at a time: the first bytes give no output, and
        // every piece's output is there as soon as it is fed.
        let mut d = StreamDecoder::new(&codings(name), 1 << 20).unwrap();
        let mut out = Vec::new();
        for b in &encoded {
            d.feed(std::slice::from_ref(b), &mut out).unwrap();
        }
        d.finish(&mut out).unwrap();
        assert_eq!(out, SSE, "{name}");
    }
    // Output comes as the input does: all but the trailer (gzip's
    // CRC and length, zlib's Adler-32) already gives the whole text.
    for (name, encoded, trailer) in [("gzip", gzip(SSE), 8), ("deflate", zlib(SSE), 4)] {
        let mut d = StreamDecoder::new(&codings(name), 1 << 20).unwrap();
        let mut out = Vec::new();
        d.feed(&encoded[..encoded.len() - trailer], &mut out)
            .unwrap();
        assert_eq!(out, SSE, "{name}");
    }
    // Two gzip members (as a server that flushes members per event).
    let mut two = gzip(&SSE[..40]);
    two.extend_from_slice(&gzip(&SSE[40..]));
    assert_eq!(stream("gzip", &two, &[3, 50], 1 << 20).unwrap(), SSE);
}

/// One small piece that decodes to far more than the limit: refused as
/// its output grows, so the decoder never holds much more than the limit
/// (it held all of it, 16 MiB here, before the limit was checked).
#[test]
fn a_small_piece_that_decodes_past_the_limit_is_refused_as_it_grows() {
    let zeros = vec![0u8; 16 << 20];
    let limit = 64 << 10;
    for (name, encoded) in [
        ("gzip", gzip(&zeros)),
        ("deflate", zlib(&zeros)),
        ("br", br(&zeros)),
        ("zstd", zstd(&zeros)),
    ] {
        assert!(encoded.len() < 1 << 20, "{name}: {}", encoded.len());
        let mut d = StreamDecoder::new(&codings(name), limit).unwrap();
        let mut out = Vec::new();
        let err = d.feed(&encoded, &mut out).unwrap_err();
        assert_eq!(err.kind, CodingErrorKind::TooLarge, "{name}: {err}");
        assert!(out.len() as u64 <= limit, "{name}");
        let held = d.output().map_or(0, |o| o.buf.capacity());
        assert!(held <= 1 << 20, "{name}: the decoder held {held} bytes");
    }
}

#[test]
fn a_stream_names_what_it_cannot_decode() {
    for name in ["gzip, br", "identity"] {
        let err = StreamDecoder::new(&codings(name), 10).unwrap_err();
        assert_eq!(err.kind, CodingErrorKind::Unsupported, "{name}");
    }
    let encoded = gzip(SSE);
    let cut = &encoded[..encoded.len() - 6];
    let err = stream("gzip", cut, &[], 1 << 20).unwrap_err();
    assert_eq!(err.kind, CodingErrorKind::Invalid, "{err}");
    let err = stream("gzip", &gzip(&[b'x'; 100_000]), &[10], 1000).unwrap_err();
    assert_eq!(err.kind, CodingErrorKind::TooLarge);
    let err = stream("br", b"not brotli at all", &[4], 1000).unwrap_err();
    assert_eq!(err.kind, CodingErrorKind::Invalid);
    let encoded = zstd(SSE);
    let err = stream("zstd", &encoded[..encoded.len() - 3], &[5], 1000).unwrap_err();
    assert_eq!(err.kind, CodingErrorKind::Invalid, "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn streams_decode_the_same_in_any_pieces(
        data in proptest::collection::vec(any::<u8>(), 0..4096),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        for (name, encoded) in [
            ("gzip", gzip(&data)),
            ("deflate", zlib(&data)),
            ("deflate", raw_deflate(&data)),
            ("br", br(&data)),
            ("zstd", zstd(&data)),
        ] {
            prop_assert_eq!(stream(name, &encoded, &cuts, 1 << 20), Ok(data.clone()), "{}", name);
        }
    }

    #[test]
    fn any_stream_bytes_decode_or_fail_without_panic(
        data in proptest::collection::vec(any::<u8>(), 0..2048),
        cuts in proptest::collection::vec(any::<usize>(), 0..4),
    ) {
        for name in ["gzip", "deflate", "br", "zstd"] {
            if let Ok(out) = stream(name, &data, &cuts, 4096) {
                prop_assert!(out.len() <= 4096);
            }
        }
    }

    #[test]
    fn round_trips(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        for (name, encoded) in [
            ("gzip", gzip(&data)),
            ("deflate", zlib(&data)),
            ("zstd", zstd(&data)),
            ("br", br(&data)),
        ] {
            prop_assert_eq!(codings(name).decode(&encoded, 1 << 20), Ok(data.clone()), "{}", name);
        }
    }

    #[test]
    fn any_bytes_decode_or_fail_without_panic(
        data in proptest::collection::vec(any::<u8>(), 0..2048),
        limit in 0usize..8192,
    ) {
        for name in ["gzip", "deflate", "zstd", "br", "gzip, zstd"] {
            if let Ok(out) = codings(name).decode(&data, limit) {
                prop_assert!(out.len() <= limit);
            }
        }
    }

    #[test]
    fn damaged_encodings_fail_cleanly(
        data in proptest::collection::vec(any::<u8>(), 1..2048),
        at in any::<proptest::sample::Index>(),
        byte in any::<u8>(),
    ) {
        for (name, mut encoded) in [
            ("gzip", gzip(&data)),
            ("deflate", zlib(&data)),
            ("zstd", zstd(&data)),
            ("br", br(&data)),
        ] {
            let i = at.index(encoded.len());
            encoded[i] = byte;
            if let Ok(out) = codings(name).decode(&encoded, 1 << 16) {
                prop_assert!(out.len() <= 1 << 16);
            }
        }
    }
}
