//! AWS event-stream framing (`application/vnd.amazon.eventstream`): the
//! binary frames of Bedrock's `ConverseStream` and
//! `InvokeModelWithResponseStream`.
//!
//! A message is a 12-byte prelude (total length, headers length, CRC32 of
//! those 8 bytes), typed headers, a payload and a CRC32 of everything
//! before it (all integers big-endian).
//!
//! - [`Decoder`]: bytes split anywhere in ([`Decoder::push`]), complete
//!   [`Message`]s out ([`Decoder::next_message`]), borrowed from its buffer;
//!   every malformed input is a typed [`EventStreamError`], never a panic.
//!   [`Decoder::feed`] does both at once without copying: frames whole in
//!   the chunk are read where they are (what the stream parser uses).
//! - [`encode()`] / [`encode_event`] / [`encode_exception`]: the other way
//!   (tests, the mock provider, benches).
//! - [`invoke_chunk`] / [`encode_invoke_chunk`]: the `{"bytes":"<base64>"}`
//!   payload of `InvokeModelWithResponseStream` `chunk` events.
//!
//! Own code rather than the `aws-smithy-eventstream` crate: that crate copies
//! every message into owned `Bytes`/`String` headers and hides its error kinds,
//! while the gateway needs zero-copy frames over one buffer and typed errors it
//! can count (decoding runs at several GB/s, see BENCHMARKS.md, issue 18).

mod decode;
mod encode;
pub(crate) mod framing;
mod header;

pub use decode::{
    DEFAULT_MAX_MESSAGE_LEN, Decoder, EventStreamError, EventStreamErrorKind, Message,
};
pub use encode::{encode, encode_event, encode_exception, encode_into, encode_invoke_chunk};
pub use header::{HeaderValue, Headers};

/// The Anthropic (or other) event JSON carried by an
/// `InvokeModelWithResponseStream` `chunk` event's payload,
/// `{"bytes":"<base64>"}`; `None` when the payload is not of that shape.
pub fn invoke_chunk(payload: &[u8]) -> Option<Vec<u8>> {
    use base64::Engine as _;
    #[derive(serde::Deserialize)]
    struct Chunk<'a> {
        #[serde(borrow)]
        bytes: std::borrow::Cow<'a, str>,
    }
    let chunk: Chunk<'_> = serde_json::from_slice(payload).ok()?;
    base64::engine::general_purpose::STANDARD
        .decode(chunk.bytes.as_bytes())
        .ok()
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
