//! The incremental decoder.

use std::fmt;

use super::header::Headers;

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
        self.headers.get_str(":message-type")
    }

    /// `:event-type` (`contentBlockDelta`, `chunk`, …).
    pub fn event_type(&self) -> Option<&'a str> {
        self.headers.get_str(":event-type")
    }

    /// `:exception-type` (`throttlingException`, …).
    pub fn exception_type(&self) -> Option<&'a str> {
        self.headers.get_str(":exception-type")
    }

    /// `:content-type` of the payload.
    pub fn content_type(&self) -> Option<&'a str> {
        self.headers.get_str(":content-type")
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

    /// A decoder accepting messages up to `max` bytes; its buffer never
    /// holds more than one message plus the bytes of one push.
    pub fn with_max_message_len(max: usize) -> Self {
        Decoder {
            buf: Vec::new(),
            start: 0,
            max_message_len: max.max(MIN_MESSAGE_LEN),
            broken: false,
        }
    }

    /// Append the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.broken {
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
        let rest = &self.buf[self.start..];
        if rest.len() < PRELUDE_LEN {
            return None;
        }
        let total = be32(&rest[0..4]) as usize;
        let headers_len = be32(&rest[4..8]) as usize;
        let prelude_crc = be32(&rest[8..12]);
        if crc32fast::hash(&rest[..8]) != prelude_crc {
            return Some(Err(self.fail(
                EventStreamErrorKind::PreludeCrc,
                "prelude CRC32 mismatch".to_string(),
            )));
        }
        if total < MIN_MESSAGE_LEN || headers_len > total - MIN_MESSAGE_LEN {
            return Some(Err(self.fail(
                EventStreamErrorKind::TooShort,
                format!("message length {total} cannot hold {headers_len} bytes of headers"),
            )));
        }
        if total > self.max_message_len {
            return Some(Err(self.fail(
                EventStreamErrorKind::TooLong,
                format!(
                    "message length {total} exceeds the limit of {}",
                    self.max_message_len
                ),
            )));
        }
        if rest.len() < total {
            return None;
        }
        let start = self.start;
        self.start += total;
        let msg = &self.buf[start..start + total];
        let crc = be32(&msg[total - 4..]);
        if crc32fast::hash(&msg[..total - 4]) != crc {
            return Some(Err(EventStreamError::new(
                EventStreamErrorKind::MessageCrc,
                "message CRC32 mismatch",
            )));
        }
        let header_bytes = &msg[PRELUDE_LEN..PRELUDE_LEN + headers_len];
        match Headers::parse(header_bytes) {
            Ok(headers) => Some(Ok(Message {
                headers,
                payload: &msg[PRELUDE_LEN + headers_len..total - 4],
            })),
            Err(e) => {
                self.broken = true;
                Some(Err(e))
            }
        }
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

    fn fail(&mut self, kind: EventStreamErrorKind, message: String) -> EventStreamError {
        self.broken = true;
        self.buf = Vec::new();
        self.start = 0;
        EventStreamError::new(kind, message)
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
