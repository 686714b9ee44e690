//! `transfer-encoding: chunked` (RFC 9112 §7.1): an incremental decoder for
//! upstream bodies, which hands out the data as borrowed slices of the
//! input however the bytes were split across reads, and the encoder for
//! the client side. Chunk extensions are skipped; trailers are read and
//! dropped (as hyper does when relaying).

use std::fmt;

/// Longest chunk-size line or trailer line accepted.
const MAX_LINE: usize = 4096;

/// An incremental chunked-body decoder.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChunkDecoder {
    state: State,
    /// Bytes of the current size or trailer line seen so far.
    line: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Reading the hex size (leading zeros allowed, as RFC 9112's
    /// `1*HEXDIG` says; only a value past `u64` is too large).
    #[default]
    SizeStart,
    Size {
        size: u64,
    },
    /// After the size: whitespace, then `;extensions` (`ext`: past the
    /// `;`) until LF. Anything else after the digits (`0x1a`) is not a
    /// chunk size.
    SizeRest {
        size: u64,
        ext: bool,
    },
    /// Inside a chunk's data, this many bytes left.
    Data(u64),
    /// After the data: CR then LF.
    DataCr,
    DataLf,
    /// After the last chunk: trailer lines until an empty one.
    TrailerStart,
    Trailer,
    TrailerEndLf,
    Done,
}

/// The chunked framing is broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChunkError(&'static str);

impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid chunked body: {}", self.0)
    }
}

impl std::error::Error for ChunkError {}

impl ChunkDecoder {
    /// A decoder at the start of a body.
    pub(crate) fn new() -> ChunkDecoder {
        ChunkDecoder::default()
    }

    /// Whether the last chunk and the trailers have been read.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decode as much of `input` as possible, passing each piece of data to
    /// `data`. Returns how many bytes were consumed: all of `input`, or
    /// fewer when the body ended inside it (what follows belongs to the
    /// next message).
    pub(crate) fn decode<'a>(
        &mut self,
        input: &'a [u8],
        data: &mut impl FnMut(&'a [u8]),
    ) -> Result<usize, ChunkError> {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.state {
                State::Data(left) => {
                    let n = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(input.len() - i);
                    data(&input[i..i + n]);
                    i += n;
                    let left = left - n as u64;
                    self.state = if left == 0 {
                        State::DataCr
                    } else {
                        State::Data(left)
                    };
                    continue;
                }
                State::SizeStart => {
                    let d = hex(b).ok_or(ChunkError("chunk size is not hexadecimal"))?;
                    self.line = 1;
                    self.state = State::Size { size: u64::from(d) };
                }
                State::Size { size } => match hex(b) {
                    Some(d) => {
                        self.line += 1;
                        if size > u64::MAX >> 4 {
                            return Err(ChunkError("chunk size too large"));
                        }
                        if self.line > MAX_LINE {
                            return Err(ChunkError("chunk size line too long"));
                        }
                        self.state = State::Size {
                            size: size << 4 | u64::from(d),
                        };
                    }
                    None => {
                        self.state = State::SizeRest { size, ext: false };
                        continue;
                    }
                },
                State::SizeRest { size, ext } => {
                    self.line += 1;
                    if self.line > MAX_LINE {
                        return Err(ChunkError("chunk size line too long"));
                    }
                    match b {
                        b'\n' => {
                            self.state = if size == 0 {
                                State::TrailerStart
                            } else {
                                State::Data(size)
                            };
                        }
                        b'\r' | b' ' | b'\t' => {}
                        b';' => self.state = State::SizeRest { size, ext: true },
                        _ if !ext => return Err(ChunkError("chunk size is not hexadecimal")),
                        _ if b < 0x20 => {
                            return Err(ChunkError("control byte in a chunk size line"));
                        }
                        _ => {}
                    }
                }
                State::DataCr => {
                    self.state = match b {
                        b'\r' => State::DataLf,
                        b'\n' => State::SizeStart,
                        _ => return Err(ChunkError("chunk data not followed by CRLF")),
                    };
                }
                State::DataLf => {
                    if b != b'\n' {
                        return Err(ChunkError("chunk data not followed by CRLF"));
                    }
                    self.state = State::SizeStart;
                }
                State::TrailerStart => {
                    self.line = 0;
                    self.state = match b {
                        b'\r' => State::TrailerEndLf,
                        b'\n' => {
                            self.state = State::Done;
                            return Ok(i + 1);
                        }
                        _ => State::Trailer,
                    };
                }
                State::Trailer => {
                    self.line += 1;
                    if self.line > MAX_LINE {
                        return Err(ChunkError("trailer line too long"));
                    }
                    if b == b'\n' {
                        self.state = State::TrailerStart;
                    }
                }
                State::TrailerEndLf => {
                    if b != b'\n' {
                        return Err(ChunkError("trailers not ended by CRLF"));
                    }
                    self.state = State::Done;
                    return Ok(i + 1);
                }
                State::Done => return Ok(i),
            }
            i += 1;
        }
        Ok(i)
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Append `data` to `out` as one chunk (nothing for empty data: an empty
/// chunk would end the body).
pub(crate) fn encode_chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let mut size = [0u8; 16];
    let mut start = size.len();
    let mut n = data.len();
    loop {
        start -= 1;
        size[start] = b"0123456789abcdef"[n & 15];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&size[start..]);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The last chunk, with no trailers.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn decode_all(pieces: &[&[u8]]) -> Result<(Vec<u8>, bool, usize), ChunkError> {
        let mut d = ChunkDecoder::new();
        let mut out = Vec::new();
        let mut rest = 0;
        for piece in pieces {
            let used = d.decode(piece, &mut |data| out.extend_from_slice(data))?;
            rest += piece.len() - used;
        }
        Ok((out, d.is_done(), rest))
    }

    #[test]
    fn decodes_a_body_with_extensions_and_trailers() {
        let body = b"5;name=value\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nx-trailer: 1\r\n\r\nNEXT";
        let (out, done, rest) = decode_all(&[body]).unwrap();
        assert_eq!(out, b"helloabcdefghijklmnopqrstuvwxyz");
        assert!(done);
        assert_eq!(rest, 4, "the next message is not consumed");
    }

    #[test]
    fn rejects_broken_framing() {
        assert!(decode_all(&[b"zz\r\n"]).is_err());
        assert!(decode_all(&[b"3\r\nabcX"]).is_err());
        assert!(decode_all(&[b"11111111111111111\r\n"]).is_err());
        // Leading zeros are digits like any other (RFC 9112 `1*HEXDIG`);
        // a size line is still bounded.
        let (out, done, _) =
            decode_all(&[b"00000000000000000000002\r\nok\r\n000000000000000000\r\n\r\n"]).unwrap();
        assert_eq!((out.as_slice(), done), (&b"ok"[..], true));
        assert!(decode_all(&[&[b'0'; MAX_LINE + 1][..]]).is_err());
        assert!(decode_all(&[b"3\x01\r\nabc\r\n"]).is_err());
        // Not a size: `0x1a` is not the last chunk with junk after it.
        assert!(decode_all(&[b"0x1a\r\n{\"a\":\"bcdefghijklmnopqrs\"}\r\n0\r\n\r\n"]).is_err());
        assert!(decode_all(&[b"5 x\r\nhello\r\n"]).is_err());
        // Whitespace before an extension is allowed, and anything printable in it.
        let (out, done, _) = decode_all(&[b"5 \t; a=\"b c\"\r\nhello\r\n0\r\n\r\n"]).unwrap();
        assert_eq!((out.as_slice(), done), (&b"hello"[..], true));
        let (_, done, _) = decode_all(&[b"3\r\nab"]).unwrap();
        assert!(!done, "a truncated body is not done");
    }

    #[test]
    fn encodes_chunks() {
        let mut out = Vec::new();
        encode_chunk(&mut out, b"");
        encode_chunk(&mut out, &[b'x'; 26]);
        out.extend_from_slice(LAST_CHUNK);
        assert!(out.starts_with(b"1a\r\nxxx"));
        let (data, done, _) = decode_all(&[&out]).unwrap();
        assert_eq!(data, [b'x'; 26]);
        assert!(done);
    }

    proptest! {
        /// Any data, chunked any way and split into reads anywhere,
        /// decodes to itself; the bytes after the body are left.
        #[test]
        fn round_trips_across_any_split(
            parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..8),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
            upper in any::<bool>(),
            zeros in 0usize..24,
        ) {
            let mut wire = Vec::new();
            for p in &parts {
                if p.is_empty() { continue; }
                let size = if upper { format!("{:X}", p.len()) } else { format!("{:x};e=1", p.len()) };
                // Leading zeros, as many as any sender writes.
                wire.extend(std::iter::repeat_n(b'0', zeros));
                wire.extend_from_slice(size.as_bytes());
                wire.extend_from_slice(b"\r\n");
                wire.extend_from_slice(p);
                wire.extend_from_slice(b"\r\n");
            }
            wire.extend(std::iter::repeat_n(b'0', zeros));
            wire.extend_from_slice(b"0\r\n\r\nGET");
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(wire.len() + 1)).collect();
            points.sort_unstable();
            let mut pieces = Vec::new();
            let mut at = 0;
            for p in points { pieces.push(&wire[at..p]); at = p; }
            pieces.push(&wire[at..]);
            let (out, done, rest) = decode_all(&pieces).unwrap();
            prop_assert_eq!(out, parts.concat());
            prop_assert!(done);
            prop_assert_eq!(rest, 3);
        }

        /// Arbitrary bytes give data or an error, never a panic.
        #[test]
        fn never_panics(input in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode_all(&[&input]);
        }
    }
}
