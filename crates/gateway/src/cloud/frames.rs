//! Bedrock's event streams relayed whole frame by whole frame, so that a
//! stream the upstream cuts midway can end with an exception frame the
//! client reads (`:message-type: exception`,
//! `:exception-type: internalServerException`, as Bedrock sends; boto3
//! raises it as an `EventStreamError`, the Anthropic SDK as an API error)
//! instead of a frame cut in two.
//!
//! [`FrameAligner`] reads only each frame's 4-byte total length (the
//! decoder checks the rest, off the relay path): the bytes up to the last
//! complete frame go on at once; the start of a frame still arriving
//! waits for its end (at most one frame, bounded by Bedrock's 16 MiB
//! message limit). When the upstream breaks, the incomplete frame is
//! dropped and the exception frame sent in its place. A length that no
//! event stream has (under 16 bytes, over 16 MiB) stops the aligning: the
//! rest is relayed as it comes, as anything the gateway cannot read, and
//! a break then ends the stream without an exception frame.

use bytes::{Bytes, BytesMut};

/// The smallest frame: prelude (12) and message CRC (4).
const MIN_FRAME: usize = 16;
/// Bedrock's largest event-stream message.
pub(crate) const MAX_FRAME: usize = 16 * 1024 * 1024;

/// Splits a relayed event stream at frame boundaries.
#[derive(Debug, Default)]
pub(crate) struct FrameAligner {
    /// The start of a frame still arriving.
    held: BytesMut,
    /// Not an event stream: everything passes as it comes.
    given_up: bool,
}

impl FrameAligner {
    /// The bytes of `data` (after any held ones) that end on a frame
    /// boundary, to relay now; the rest is held.
    pub(crate) fn push(&mut self, data: Bytes) -> Bytes {
        if self.given_up {
            return data;
        }
        if self.held.is_empty() {
            // Nothing held: the whole frames go on without a copy.
            let Some(at) = whole_frames(&data) else {
                self.given_up = true;
                return data;
            };
            self.held.extend_from_slice(&data[at..]);
            return data.slice(..at);
        }
        self.held.extend_from_slice(&data);
        match whole_frames(&self.held) {
            Some(at) => self.held.split_to(at).freeze(),
            None => {
                self.given_up = true;
                self.held.split().freeze()
            }
        }
    }

    /// At the end of the stream: what is still held (an incomplete frame,
    /// relayed as the upstream sent it).
    pub(crate) fn finish(&mut self) -> Bytes {
        self.held.split().freeze()
    }

    /// When the upstream broke: whether an exception frame can follow (the
    /// incomplete frame held is dropped).
    pub(crate) fn cut(&mut self) -> bool {
        self.held.clear();
        !self.given_up
    }
}

/// How many bytes at the start of `bytes` are whole frames; `None` at a
/// length no event stream has (not a frame: relay all, stop aligning).
fn whole_frames(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(prelude) = bytes.get(at..at + 4) {
        let total = u32::from_be_bytes([prelude[0], prelude[1], prelude[2], prelude[3]]) as usize;
        if !(MIN_FRAME..=MAX_FRAME).contains(&total) {
            return None;
        }
        if bytes.len() - at < total {
            break;
        }
        at += total;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwarden_wire::eventstream::encode_event;

    #[test]
    fn only_whole_frames_pass_split_anywhere() {
        let mut stream = encode_event("a", b"{\"x\":1}");
        stream.extend(encode_event("b", b"{}"));
        stream.extend(encode_event("c", b"{\"y\":[1,2,3]}"));
        let first = encode_event("a", b"{\"x\":1}").len();
        let second = first + encode_event("b", b"{}").len();
        for split in 1..stream.len() {
            for step in [1, 3, split] {
                let mut a = FrameAligner::default();
                let mut out = Vec::new();
                let mut boundaries = Vec::new();
                for chunk in stream.chunks(step) {
                    let passed = a.push(Bytes::copy_from_slice(chunk));
                    out.extend_from_slice(&passed);
                    boundaries.push(out.len());
                }
                out.extend_from_slice(&a.finish());
                assert_eq!(out, stream);
                assert!(
                    boundaries
                        .iter()
                        .all(|b| [0, first, second, stream.len()].contains(b)),
                    "{boundaries:?}"
                );
            }
        }
    }

    #[test]
    fn a_cut_drops_the_incomplete_frame() {
        let frame = encode_event("a", b"{}");
        let mut a = FrameAligner::default();
        let passed = a.push(Bytes::copy_from_slice(&frame[..frame.len() - 3]));
        assert!(passed.is_empty());
        assert!(a.cut());
        assert!(a.finish().is_empty());
    }

    #[test]
    fn what_is_not_an_event_stream_passes_as_it_comes() {
        let mut a = FrameAligner::default();
        let junk = Bytes::from_static(b"\xff\xff\xff\xffnot a frame at all");
        assert_eq!(a.push(junk.clone()), junk);
        assert_eq!(a.push(Bytes::from_static(b"ab")), "ab");
        assert!(!a.cut());
    }
}
