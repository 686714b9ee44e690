//! toolwarden-coding: HTTP content codings (`content-encoding`): reading a
//! compressed body.
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
    Gzip(flate2::write::MultiGzDecoder<Bounded>),
    Zlib(flate2::write::ZlibDecoder<Bounded>),
    RawDeflate(flate2::write::DeflateDecoder<Bounded>),
    /// `deflate` before its first two bytes tell zlib from raw.
    DeflateUndecided(Vec<u8>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Bounded>>),
    Zstd(Box<zstd::stream::write::Decoder<'static, Bounded>>),
}

/// Where a [`StreamDecoder`]'s decoder writes: refuses a write that would
/// take it past `room` bytes (what is left of the limit), so that one small
/// piece that decodes to far more than the limit fails as its output grows,
/// not after the decoder has written all of it.
#[derive(Debug, Default)]
struct Bounded {
    buf: Vec<u8>,
    room: u64,
}

/// The error [`Bounded`] refuses a write with.
#[derive(Debug)]
struct PastTheLimit;

impl std::fmt::Display for PastTheLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the decoded body is past its limit")
    }
}

impl std::error::Error for PastTheLimit {}

impl io::Write for Bounded {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let after = self.buf.len() as u64 + data.len() as u64;
        if after > self.room {
            return Err(io::Error::other(PastTheLimit));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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
                Inner::Gzip(flate2::write::MultiGzDecoder::new(Bounded::default()))
            }
            (Some(Coding::Deflate), None) => Inner::DeflateUndecided(Vec::new()),
            (Some(Coding::Brotli), None) => Inner::Brotli(Box::new(
                brotli_decompressor::DecompressorWriter::new(Bounded::default(), 4096),
            )),
            (Some(Coding::Zstd), None) => {
                let d = zstd::stream::write::Decoder::new(Bounded::default())
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
                Inner::Zlib(flate2::write::ZlibDecoder::new(Bounded::default()))
            } else {
                Inner::RawDeflate(flate2::write::DeflateDecoder::new(Bounded::default()))
            };
            return self.feed(&head, out);
        }
        self.make_room();
        let written = match &mut self.inner {
            Inner::Gzip(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::Zlib(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::RawDeflate(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::Brotli(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::Zstd(d) => d.write_all(piece).and_then(|()| d.flush()),
            Inner::DeflateUndecided(_) => Ok(()),
        };
        self.take(out)?;
        written.map_err(|e| self.failed(e))
    }

    /// The body ended: what is left, and whether it ended where its coding
    /// says ([`CodingErrorKind::Invalid`] for a cut-off stream).
    pub fn finish(mut self, out: &mut Vec<u8>) -> Result<(), CodingError> {
        self.make_room();
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
        finished.map_err(|e| self.failed(e))
    }

    /// The decoder's output, when it has one yet.
    fn output(&mut self) -> Option<&mut Bounded> {
        match &mut self.inner {
            Inner::Gzip(d) => Some(d.get_mut()),
            Inner::Zlib(d) => Some(d.get_mut()),
            Inner::RawDeflate(d) => Some(d.get_mut()),
            Inner::Brotli(d) => Some(d.get_mut()),
            Inner::Zstd(d) => Some(d.get_mut()),
            Inner::DeflateUndecided(_) => None,
        }
    }

    /// Lets the decoder write what is left of the limit (and one byte
    /// more, so that going past it is seen as such).
    fn make_room(&mut self) {
        let room = self.limit.saturating_sub(self.decoded).saturating_add(1);
        if let Some(output) = self.output() {
            output.room = room;
        }
    }

    /// A decoder's failure: past the limit ([`Bounded`] refused its
    /// output), else the stream is not valid.
    fn failed(&self, e: io::Error) -> CodingError {
        if e.get_ref().is_some_and(|inner| inner.is::<PastTheLimit>()) {
            return too_large(usize::try_from(self.limit).unwrap_or(usize::MAX));
        }
        self.invalid(e)
    }

    /// Move what the decoder wrote into `out`, within the limit.
    fn take(&mut self, out: &mut Vec<u8>) -> Result<(), CodingError> {
        let (decoded, limit) = (self.decoded, self.limit);
        let Some(Bounded { buf, .. }) = self.output() else {
            return Ok(());
        };
        let total = decoded.saturating_add(buf.len() as u64);
        if total > limit {
            buf.clear();
            return Err(too_large(usize::try_from(limit).unwrap_or(usize::MAX)));
        }
        out.append(buf);
        self.decoded = total;
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
mod tests;

/// This crate's README, whose snippet is compiled (and run) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[derive(Debug)]
pub struct ReadmeDoctest;
