//! HTTP content codings (`content-encoding`): reading a compressed body.
//!
//! Clients compress large request bodies (the Codex CLI sends its
//! Responses API requests as `content-encoding: zstd`, others use gzip) and
//! providers compress responses. The gateway keeps the bytes it forwards as
//! they came and decodes a copy for reading; the mock provider decodes them
//! as the real APIs do. One bounded decoder serves both:
//!
//! - [`Codings::parse`] reads a `content-encoding` value: `gzip` (and
//!   `x-gzip`), `deflate` (zlib-wrapped as RFC 9110 says, or raw as some
//!   clients send it), `zstd` (every frame, skippable frames skipped) and
//!   `br`, in any list (applied in order, undone in reverse); `identity` and
//!   an empty value mean none. Anything else is
//!   [`CodingErrorKind::Unsupported`].
//! - [`StreamDecoder`] decodes a body that arrives in pieces (SSE streams
//!   in gzip, deflate, zstd or br), piece by piece, within a limit.
//! - [`Codings::decode`] undoes them, refusing output past a limit
//!   ([`CodingErrorKind::TooLarge`]: a small body that inflates without
//!   bound is stopped there, not read to the end) and naming a corrupt body
//!   ([`CodingErrorKind::Invalid`]). It never panics on any input.

use std::io::{self, Read};

/// One content coding this module can undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// `gzip`, `x-gzip` (every member of a multi-member stream).
    Gzip,
    /// `deflate`: zlib-wrapped, or a raw deflate stream.
    Deflate,
    /// `zstd`.
    Zstd,
    /// `br` (Brotli).
    Brotli,
}

impl Coding {
    /// The coding's name in a `content-encoding` header.
    pub fn as_str(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Zstd => "zstd",
            Coding::Brotli => "br",
        }
    }

    fn named(name: &str) -> Option<Coding> {
        let coding = if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
            Coding::Gzip
        } else if name.eq_ignore_ascii_case("deflate") {
            Coding::Deflate
        } else if name.eq_ignore_ascii_case("zstd") {
            Coding::Zstd
        } else if name.eq_ignore_ascii_case("br") {
            Coding::Brotli
        } else {
            return None;
        };
        Some(coding)
    }
}

/// Most codings one header may stack.
const MAX_CODINGS: usize = 4;

/// The codings of a body, in the order they were applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Codings {
    list: [Option<Coding>; MAX_CODINGS],
}

/// Why a body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct CodingError {
    /// What went wrong.
    pub kind: CodingErrorKind,
    /// For people: the coding and what happened.
    pub detail: String,
}

/// The kinds of [`CodingError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodingErrorKind {
    /// A coding this module does not undo (or more than it stacks).
    Unsupported,
    /// The decoded body would be larger than the limit.
    TooLarge,
    /// The body is not valid in its coding.
    Invalid,
}

impl CodingErrorKind {
    /// A short stable name (metrics labels, records).
    pub fn as_str(self) -> &'static str {
        match self {
            CodingErrorKind::Unsupported => "unsupported_content_encoding",
            CodingErrorKind::TooLarge => "decoded_body_too_large",
            CodingErrorKind::Invalid => "invalid_compressed_body",
        }
    }
}

impl std::fmt::Display for CodingErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl CodingError {
    fn new(kind: CodingErrorKind, detail: impl Into<String>) -> CodingError {
        CodingError {
            kind,
            detail: detail.into(),
        }
    }
}

impl Codings {
    /// The codings a `content-encoding` value names (`Codings::default()`,
    /// i.e. none, for `identity` or an empty value).
    pub fn parse(value: &[u8]) -> Result<Codings, CodingError> {
        let text = std::str::from_utf8(value).map_err(|_| {
            CodingError::new(
                CodingErrorKind::Unsupported,
                "content-encoding is not valid UTF-8",
            )
        })?;
        let mut codings = Codings::default();
        let mut n = 0;
        for name in text.split(',').map(str::trim) {
            if name.is_empty() || name.eq_ignore_ascii_case("identity") {
                continue;
            }
            let coding = Coding::named(name).ok_or_else(|| {
                CodingError::new(
                    CodingErrorKind::Unsupported,
                    format!("content-encoding {name:?} is not one of gzip, deflate, zstd, br"),
                )
            })?;
            let slot = codings.list.get_mut(n).ok_or_else(|| {
                CodingError::new(
                    CodingErrorKind::Unsupported,
                    format!("more than {MAX_CODINGS} content codings"),
                )
            })?;
            *slot = Some(coding);
            n += 1;
        }
        Ok(codings)
    }

    /// No coding: the body is as it reads.
    pub fn is_identity(&self) -> bool {
        self.list[0].is_none()
    }

    /// The codings in the order they were applied.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Coding> + '_ {
        // Filled from the front: the `None`s are the unused tail.
        self.list.iter().flatten().copied()
    }

    /// Undo the codings of `body`: at most `limit` bytes of output.
    pub fn decode(&self, body: &[u8], limit: usize) -> Result<Vec<u8>, CodingError> {
        let mut data: Option<Vec<u8>> = None;
        for coding in self.iter().rev() {
            let input = data.as_deref().unwrap_or(body);
            data = Some(decode_one(coding, input, limit)?);
        }
        match data {
            Some(out) => Ok(out),
            None if body.len() > limit => Err(too_large(limit)),
            None => Ok(body.to_vec()),
        }
    }
}

fn too_large(limit: usize) -> CodingError {
    CodingError::new(
        CodingErrorKind::TooLarge,
        format!("the decoded body is larger than {limit} bytes"),
    )
}

/// Undo one coding, at most `limit` bytes of output.
fn decode_one(coding: Coding, input: &[u8], limit: usize) -> Result<Vec<u8>, CodingError> {
    // One byte past the limit tells "too large" from "exactly the limit".
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let mut out = Vec::with_capacity(input.len().saturating_mul(4).min(limit));
    let read = match coding {
        Coding::Gzip => flate2::read::MultiGzDecoder::new(input)
            .take(cap)
            .read_to_end(&mut out)
            .map(drop),
        Coding::Deflate => {
            if is_zlib(input) {
                flate2::read::ZlibDecoder::new(input)
                    .take(cap)
                    .read_to_end(&mut out)
                    .map(drop)
            } else {
                flate2::read::DeflateDecoder::new(input)
                    .take(cap)
                    .read_to_end(&mut out)
                    .map(drop)
            }
        }
        Coding::Zstd => zstd(input, &mut out, cap),
        Coding::Brotli => brotli_decompressor::Decompressor::new(input, 4096)
            .take(cap)
            .read_to_end(&mut out)
            .map(drop),
    };
    match read {
        Ok(()) if out.len() > limit => Err(too_large(limit)),
        Ok(()) => Ok(out),
        Err(e) => Err(CodingError::new(
            CodingErrorKind::Invalid,
            format!("the body is not valid {}: {e}", coding.as_str()),
        )),
    }
}

/// Largest zstd window accepted (32 MiB; a frame asking more is refused
/// instead of allocating it). Level 3, which the Codex CLI uses, needs at
/// most 8 MiB.
const ZSTD_WINDOW_LOG_MAX: u32 = 25;

thread_local! {
    /// A zstd decompression context per thread, reused: making one costs
    /// more than decoding a 20 KB request (libzstd frees buffers a large
    /// frame left behind once smaller frames follow).
    static ZSTD_CONTEXT: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Every zstd frame in `input` (skippable frames skipped), until `cap`
/// bytes of output.
fn zstd(input: &[u8], out: &mut Vec<u8>, cap: u64) -> io::Result<()> {
    if input.is_empty() {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "empty body"));
    }
    ZSTD_CONTEXT.with(|cell| {
        let mut slot = cell
            .try_borrow_mut()
            .map_err(|_| io::Error::other("zstd context in use"))?;
        let context = match &mut *slot {
            Some(context) => context,
            empty => {
                let mut context = zstd::zstd_safe::DCtx::try_create()
                    .ok_or_else(|| io::Error::other("cannot make a zstd context"))?;
                context
                    .set_parameter(zstd::zstd_safe::DParameter::WindowLogMax(
                        ZSTD_WINDOW_LOG_MAX,
                    ))
                    .map_err(|code| io::Error::other(zstd::zstd_safe::get_error_name(code)))?;
                empty.insert(context)
            }
        };
        // A new session on the context (its parameters stay).
        let decoder = zstd::stream::read::Decoder::with_context(input, context);
        decoder.take(cap).read_to_end(out).map(drop)
    })
}

/// Decodes a body that arrives in pieces — an SSE stream or a Gemini
/// streamed array in gzip, deflate, zstd or br — as the pieces pass: what
/// each piece decodes to is appended to the caller's buffer at once.
pub struct StreamDecoder {
    inner: Inner,
    /// Bytes decoded so far, and the most allowed.
    decoded: u64,
    limit: u64,
}

enum Inner {
    Gzip(flate2::write::MultiGzDecoder<Vec<u8>>),
    Zlib(flate2::write::ZlibDecoder<Vec<u8>>),
    RawDeflate(flate2::write::DeflateDecoder<Vec<u8>>),
    /// `deflate` before its first two bytes tell zlib from raw.
    DeflateUndecided(Vec<u8>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Vec<u8>>>),
    Zstd(Box<zstd::stream::write::Decoder<'static, Vec<u8>>>),
}

impl std::fmt::Debug for StreamDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamDecoder")
            .field("coding", &self.coding())
            .field("decoded", &self.decoded)
            .finish()
    }
}

impl StreamDecoder {
    /// A decoder for a body in `codings`: one of gzip, deflate, zstd and br
    /// ([`CodingErrorKind::Unsupported`] for a list), giving at most
    /// `limit` bytes in all.
    pub fn new(codings: &Codings, limit: u64) -> Result<StreamDecoder, CodingError> {
        let mut it = codings.iter();
        let inner = match (it.next(), it.next()) {
            (Some(Coding::Gzip), None) => {
                Inner::Gzip(flate2::write::MultiGzDecoder::new(Vec::new()))
            }
            (Some(Coding::Deflate), None) => Inner::DeflateUndecided(Vec::new()),
            (Some(Coding::Brotli), None) => Inner::Brotli(Box::new(
                brotli_decompressor::DecompressorWriter::new(Vec::new(), 4096),
            )),
            (Some(Coding::Zstd), None) => {
                let d = zstd::stream::write::Decoder::new(Vec::new())
                    .and_then(|mut d| d.window_log_max(ZSTD_WINDOW_LOG_MAX).map(|()| d))
                    .map_err(|e| CodingError::new(CodingErrorKind::Invalid, e.to_string()))?;
                Inner::Zstd(Box::new(d))
            }
            _ => {
                return Err(CodingError::new(
                    CodingErrorKind::Unsupported,
                    "a streamed body is decoded from one coding, not a list",
                ));
            }
        };
        Ok(StreamDecoder {
            inner,
            decoded: 0,
            limit,
        })
    }

    /// Decode `piece`, appending what it gives to `out`.
    pub fn feed(&mut self, piece: &[u8], out: &mut Vec<u8>) -> Result<(), CodingError> {
        use std::io::Write;
        if let Inner::DeflateUndecided(head) = &mut self.inner {
            head.extend_from_slice(piece);
            if head.len() < 2 {
                return Ok(());
            }
            let head = std::mem::take(head);
            self.inner = if is_zlib(&head) {
                Inner::Zlib(flate2::write::ZlibDecoder::new(Vec::new()))
            } else {
                Inner::RawDeflate(flate2::write::DeflateDecoder::new(Vec::new()))
            };
            return self.feed(&head, out);
        }
        let written = match &mut self.inner {
            Inner::Gzip(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::Zlib(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::RawDeflate(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::Brotli(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::Zstd(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::DeflateUndecided(_) => Ok(()),
        };
        self.take(out)?;
        written.map_err(|e| self.invalid(e))
    }

    /// The body ended: what is left, and whether it ended where its coding
    /// says ([`CodingErrorKind::Invalid`] for a cut-off stream).
    pub fn finish(mut self, out: &mut Vec<u8>) -> Result<(), CodingError> {
        let finished = match &mut self.inner {
            Inner::Gzip(d) => d.try_finish(),
            Inner::Zlib(d) => d.try_finish(),
            Inner::RawDeflate(d) => d.try_finish(),
            Inner::Brotli(d) => d.close(),
            Inner::Zstd(d) => d.do_finish(),
            Inner::DeflateUndecided(head) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} bytes", head.len()),
            )),
        };
        self.take(out)?;
        finished.map_err(|e| self.invalid(e))
    }

    /// Move what the decoder wrote into `out`, within the limit.
    fn take(&mut self, out: &mut Vec<u8>) -> Result<(), CodingError> {
        let buf = match &mut self.inner {
            Inner::Gzip(d) => d.get_mut(),
            Inner::Zlib(d) => d.get_mut(),
            Inner::RawDeflate(d) => d.get_mut(),
            Inner::Brotli(d) => d.get_mut(),
            Inner::Zstd(d) => d.get_mut(),
            Inner::DeflateUndecided(_) => return Ok(()),
        };
        self.decoded = self.decoded.saturating_add(buf.len() as u64);
        if self.decoded > self.limit {
            buf.clear();
            return Err(too_large(usize::try_from(self.limit).unwrap_or(usize::MAX)));
        }
        out.append(buf);
        Ok(())
    }

    fn invalid(&self, e: io::Error) -> CodingError {
        CodingError::new(
            CodingErrorKind::Invalid,
            format!("the stream is not valid {}: {e}", self.coding().as_str()),
        )
    }

    /// The coding this decoder undoes.
    fn coding(&self) -> Coding {
        match self.inner {
            Inner::Gzip(_) => Coding::Gzip,
            Inner::Zlib(_) | Inner::RawDeflate(_) | Inner::DeflateUndecided(_) => Coding::Deflate,
            Inner::Brotli(_) => Coding::Brotli,
            Inner::Zstd(_) => Coding::Zstd,
        }
    }
}

/// A zlib header: two bytes whose big-endian value is a multiple of 31,
/// compression method 8 (RFC 1950). RFC 9110's `deflate` is zlib-wrapped;
/// some senders use the raw stream.
fn is_zlib(head: &[u8]) -> bool {
    head.len() >= 2
        && head[0] & 0x0f == 8
        && (u16::from(head[0]) << 8 | u16::from(head[1])) % 31 == 0
}

#[cfg(test)]
mod tests {
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
    fn stream(
        name: &str,
        encoded: &[u8],
        cuts: &[usize],
        limit: u64,
    ) -> Result<Vec<u8>, CodingError> {
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
}
