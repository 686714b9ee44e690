//! The incremental decoder.

use std::fmt;

use super::header::{Headers, Standard};

/// Prelude (12 bytes) plus the message CRC (4): the smallest message.
const MIN_MESSAGE_LEN: usize = 16;
const PRELUDE_LEN: usize = 12;

/// The largest message [`Decoder::new`] accepts: 16 MiB, as AWS's own
/// decoders.
pub const DEFAULT_MAX_MESSAGE_LEN: usize = 16 * 1024 * 1024;

/// What is wrong with an event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventStreamErrorKind {
    /// The prelude's CRC32 does not match: message boundaries are lost.
    PreludeCrc,
    /// The message's CRC32 does not match (the message is skipped; the
    /// next one is still read).
    MessageCrc,
    /// A total length below 16 bytes, or headers longer than the message.
    TooShort,
    /// A total length above the decoder's limit.
    TooLong,
    /// A header of an unknown value type.
    BadHeaderType,
    /// A header that runs past its section, or a name or string that is
    /// not UTF-8.
    BadHeader,
    /// The stream ended in the middle of a message.
    Truncated,
}

impl EventStreamErrorKind {
    /// A snake_case name, for metrics labels and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            EventStreamErrorKind::PreludeCrc => "prelude_crc",
            EventStreamErrorKind::MessageCrc => "message_crc",
            EventStreamErrorKind::TooShort => "too_short",
            EventStreamErrorKind::TooLong => "too_long",
            EventStreamErrorKind::BadHeaderType => "bad_header_type",
            EventStreamErrorKind::BadHeader => "bad_header",
            EventStreamErrorKind::Truncated => "truncated",
        }
    }
}

/// An event stream this crate cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventStreamError {
    kind: EventStreamErrorKind,
    message: String,
}

impl EventStreamError {
    pub(crate) fn new(kind: EventStreamErrorKind, message: impl Into<String>) -> Self {
        EventStreamError {
            kind,
            message: message.into(),
        }
    }

    /// What kind of problem.
    pub fn kind(&self) -> EventStreamErrorKind {
        self.kind
    }
}

impl fmt::Display for EventStreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event stream: {}", self.message)
    }
}

impl std::error::Error for EventStreamError {}

/// One complete, CRC-checked message, borrowed from the decoder's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    headers: Headers<'a>,
    standard: Standard<'a>,
    payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The headers.
    pub fn headers(&self) -> Headers<'a> {
        self.headers
    }

    /// The payload bytes.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// `:message-type`: `event`, `exception` or `error`.
    pub fn message_type(&self) -> Option<&'a str> {
        self.standard.message_type.and_then(utf8)
    }

    /// `:event-type` (`contentBlockDelta`, `chunk`, …).
    pub fn event_type(&self) -> Option<&'a str> {
        self.standard.event_type.and_then(utf8)
    }

    /// `:exception-type` (`throttlingException`, …).
    pub fn exception_type(&self) -> Option<&'a str> {
        self.standard.exception_type.and_then(utf8)
    }

    /// `:content-type` of the payload.
    pub fn content_type(&self) -> Option<&'a str> {
        self.standard.content_type.and_then(utf8)
    }

    /// `:message-type` as bytes (no UTF-8 conversion: the hot path).
    pub(crate) fn message_type_bytes(&self) -> Option<&'a [u8]> {
        self.standard.message_type
    }

    /// `:event-type` as bytes (no UTF-8 conversion: the hot path).
    pub(crate) fn event_type_bytes(&self) -> Option<&'a [u8]> {
        self.standard.event_type
    }

    /// `:error-code` of an `error` message.
    pub fn error_code(&self) -> Option<&'a str> {
        self.headers.get_str(":error-code")
    }

    /// `:error-message` of an `error` message.
    pub fn error_message(&self) -> Option<&'a str> {
        self.headers.get_str(":error-message")
    }
}

/// Decodes event-stream messages from bytes pushed in any split.
///
/// ```
/// use toolwarden_wire::eventstream::{Decoder, encode_event};
///
/// let frame = encode_event("messageStop", br#"{"stopReason":"tool_use"}"#);
/// let mut decoder = Decoder::new();
/// decoder.push(&frame[..7]);
/// assert!(decoder.next_message().is_none());
/// decoder.push(&frame[7..]);
/// let message = decoder.next_message().unwrap().unwrap();
/// assert_eq!(message.event_type(), Some("messageStop"));
/// assert!(decoder.finish().is_ok());
/// ```
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Where the next message starts in `buf`.
    start: usize,
    max_message_len: usize,
    /// A framing error: nothing more is read.
    broken: bool,
    /// A fresh CRC32 hasher, cloned per check: `crc32fast::Hasher::new`
    /// detects the CPU's features on every call.
    crc: crc32fast::Hasher,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder accepting messages up to [`DEFAULT_MAX_MESSAGE_LEN`].
    pub fn new() -> Self {
        Decoder::with_max_message_len(DEFAULT_MAX_MESSAGE_LEN)
    }

    /// The bytes its buffer holds (its capacity): the message being read,
    /// and room.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// A decoder accepting messages up to `max` bytes; its buffer never
    /// holds more than one message plus the bytes of one push.
    pub fn with_max_message_len(max: usize) -> Self {
        Decoder {
            buf: Vec::new(),
            start: 0,
            max_message_len: max.max(MIN_MESSAGE_LEN),
            broken: false,
            crc: crc32fast::Hasher::new(),
        }
    }

    /// Append the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.broken {
            self.buf = Vec::new();
            self.start = 0;
            return;
        }
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, `None` until one is; an error for a
    /// malformed one. After a [`PreludeCrc`](EventStreamErrorKind::PreludeCrc),
    /// length or header error the stream cannot be re-synchronised and
    /// `None` follows for ever; a [`MessageCrc`](EventStreamErrorKind::MessageCrc)
    /// error skips that message only.
    pub fn next_message(&mut self) -> Option<Result<Message<'_>, EventStreamError>> {
        if self.broken {
            return None;
        }
        // Fields apart: the message borrows `buf` while `start` moves on.
        let Decoder {
            buf,
            start,
            max_message_len,
            broken,
            crc,
        } = self;
        match decode_one(&buf[*start..], *max_message_len, crc) {
            Step::NeedMore => None,
            Step::Message(total, m) => {
                *start += total;
                Some(Ok(m))
            }
            Step::BadCrc(total, e) => {
                *start += total;
                Some(Err(e))
            }
            Step::BadHeaders(total, e) => {
                *start += total;
                *broken = true;
                Some(Err(e))
            }
            Step::BadPrelude(e) => {
                // Nothing more is read; the bytes held are freed by the
                // next `push` (the buffer cannot be cleared while borrowed).
                *start = buf.len();
                *broken = true;
                Some(Err(e))
            }
        }
    }

    /// [`push`](Decoder::push) `chunk`, then hand every message (or error)
    /// [`next_message`](Decoder::next_message) would give to `on`, in the
    /// same order — without copying: messages whole in `chunk` are read
    /// where they are, and only a message cut at the chunk's end is kept.
    pub fn feed(
        &mut self,
        mut chunk: &[u8],
        on: &mut dyn FnMut(Result<Message<'_>, EventStreamError>),
    ) {
        // Messages already whole in the buffer (after a `push`).
        while let Some(m) = self.next_message() {
            on(m);
        }
        if self.broken {
            return;
        }
        if self.buffered() > 0 {
            // Complete the message held, taking from `chunk` no more than it needs.
            self.buf.drain(..self.start);
            self.start = 0;
            loop {
                let have = self.buf.len();
                let want = if have < PRELUDE_LEN {
                    PRELUDE_LEN
                } else {
                    match prelude(&self.buf, self.max_message_len, &self.crc) {
                        Ok((total, _, _)) => total,
                        Err(e) => return on(Err(self.fail(e))),
                    }
                };
                if have >= want {
                    break;
                }
                let take = (want - have).min(chunk.len());
                self.buf.extend_from_slice(&chunk[..take]);
                chunk = &chunk[take..];
                if self.buf.len() < want {
                    return;
                }
            }
            let taken = match decode_one(&self.buf, self.max_message_len, &self.crc) {
                Step::Message(_, m) => {
                    on(Ok(m));
                    true
                }
                Step::BadCrc(_, e) => {
                    on(Err(e));
                    true
                }
                Step::BadHeaders(_, e) => {
                    on(Err(e));
                    false
                }
                Step::BadPrelude(e) => return on(Err(self.fail(e))),
                // The loop above stops only with a whole message held.
                Step::NeedMore => true,
            };
            self.buf.clear();
            if !taken {
                self.broken = true;
                return;
            }
        }
        loop {
            match decode_one(chunk, self.max_message_len, &self.crc) {
                Step::NeedMore => break,
                Step::Message(total, m) => {
                    on(Ok(m));
                    chunk = &chunk[total..];
                }
                Step::BadCrc(total, e) => {
                    on(Err(e));
                    chunk = &chunk[total..];
                }
                Step::BadHeaders(_, e) => {
                    self.broken = true;
                    return on(Err(e));
                }
                Step::BadPrelude(e) => return on(Err(self.fail(e))),
            }
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The stream ended: an error if it stopped inside a message (or was
    /// already broken).
    pub fn finish(&self) -> Result<(), EventStreamError> {
        let left = self.buf.len() - self.start;
        if self.broken || left == 0 {
            return Ok(());
        }
        Err(EventStreamError::new(
            EventStreamErrorKind::Truncated,
            format!("the stream ended {left} bytes into a message"),
        ))
    }

    /// Bytes held that do not yet make a whole message.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Whether a framing error stopped the decoder.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    fn fail(&mut self, e: EventStreamError) -> EventStreamError {
        self.broken = true;
        self.buf = Vec::new();
        self.start = 0;
        e
    }
}

/// What the front of some bytes holds.
enum Step<'a> {
    /// Not a whole message yet.
    NeedMore,
    /// A good message of this many bytes.
    Message(usize, Message<'a>),
    /// A message of this many bytes whose CRC32 does not match: skipped.
    BadCrc(usize, EventStreamError),
    /// A message of this many bytes whose headers cannot be read.
    BadHeaders(usize, EventStreamError),
    /// A prelude that cannot be trusted: nothing more can be read.
    BadPrelude(EventStreamError),
}

/// Total length and headers length of a checked prelude (`bytes` holds at
/// least [`PRELUDE_LEN`]), and the CRC32 hasher having read its first 8
/// bytes (the message CRC covers them too).
fn prelude(
    bytes: &[u8],
    max: usize,
    crc: &crc32fast::Hasher,
) -> Result<(usize, usize, crc32fast::Hasher), EventStreamError> {
    let total = be32(&bytes[0..4]) as usize;
    let headers_len = be32(&bytes[4..8]) as usize;
    let prelude_crc = be32(&bytes[8..12]);
    let mut hasher = crc.clone();
    hasher.update(&bytes[..8]);
    if hasher.clone().finalize() != prelude_crc {
        return Err(EventStreamError::new(
            EventStreamErrorKind::PreludeCrc,
            "prelude CRC32 mismatch",
        ));
    }
    if total < MIN_MESSAGE_LEN || headers_len > total - MIN_MESSAGE_LEN {
        return Err(EventStreamError::new(
            EventStreamErrorKind::TooShort,
            format!("message length {total} cannot hold {headers_len} bytes of headers"),
        ));
    }
    if total > max {
        return Err(EventStreamError::new(
            EventStreamErrorKind::TooLong,
            format!("message length {total} exceeds the limit of {max}"),
        ));
    }
    Ok((total, headers_len, hasher))
}

/// The message at the front of `rest`, read where it is.
fn decode_one<'a>(rest: &'a [u8], max: usize, crc: &crc32fast::Hasher) -> Step<'a> {
    if rest.len() < PRELUDE_LEN {
        return Step::NeedMore;
    }
    let (total, headers_len, mut hasher) = match prelude(rest, max, crc) {
        Ok(p) => p,
        Err(e) => return Step::BadPrelude(e),
    };
    let Some(msg) = rest.get(..total) else {
        return Step::NeedMore;
    };
    hasher.update(&msg[8..total - 4]);
    if hasher.finalize() != be32(&msg[total - 4..]) {
        return Step::BadCrc(
            total,
            EventStreamError::new(EventStreamErrorKind::MessageCrc, "message CRC32 mismatch"),
        );
    }
    let header_bytes = &msg[PRELUDE_LEN..PRELUDE_LEN + headers_len];
    match Headers::parse(header_bytes) {
        Ok((headers, standard)) => Step::Message(
            total,
            Message {
                headers,
                standard,
                payload: &msg[PRELUDE_LEN + headers_len..total - 4],
            },
        ),
        Err(e) => Step::BadHeaders(total, e),
    }
}

/// A standard header's value, checked to be UTF-8 when the headers were read.
fn utf8(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
