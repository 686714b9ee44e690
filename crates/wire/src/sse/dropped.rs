//! What an event dropped for its size leaves behind: its name and the
//! first and last bytes of its data, enough to tell whether it was a
//! dialect's final event (a `type` written first or last, Gemini's
//! `finishReason` after its parts) without keeping the event.

/// How many bytes of a dropped event's start and end are kept.
pub const CLIP: usize = 2048;

/// An event dropped for exceeding the size cap ([`super::SseFramer::take_dropped`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Its `event:` name, when the line came before the cap was passed.
    pub event: Vec<u8>,
    /// The first bytes of its data (at most [`CLIP`]), when its first
    /// oversized line was a `data:` line.
    pub head: Vec<u8>,
    /// The last bytes (at most [`CLIP`]) of its lines from the one that
    /// passed the cap on, as sent (field names too), joined by `\n`: for
    /// finding a key, not for parsing.
    pub tail: Vec<u8>,
}

impl Dropped {
    /// Keep the start of the data: what the event's earlier lines held,
    /// then the value of the line that passed the cap (`first` then
    /// `second`, its start as far as it was read), if a `data:` line; at
    /// most [`CLIP`] bytes.
    pub(super) fn set_head(&mut self, data_so_far: &[u8], first: &[u8], second: &[u8]) {
        const FIELD: &[u8] = b"data:";
        let mut line = Vec::with_capacity(CLIP + FIELD.len() + 1);
        for part in [first, second] {
            let room = line.capacity() - line.len();
            line.extend_from_slice(&part[..part.len().min(room)]);
        }
        self.head.clear();
        self.head
            .extend_from_slice(&data_so_far[..data_so_far.len().min(CLIP)]);
        if let Some(value) = line.strip_prefix(FIELD) {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            if !data_so_far.is_empty() {
                self.head.push(b'\n');
            }
            let room = CLIP.saturating_sub(self.head.len());
            self.head.extend_from_slice(&value[..value.len().min(room)]);
        }
        self.head.truncate(CLIP);
    }

    /// Add `bytes` to what was read of it, keeping the last [`CLIP`].
    pub(super) fn push_tail(&mut self, bytes: &[u8]) {
        if bytes.len() >= CLIP {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - CLIP..]);
            return;
        }
        let over = (self.tail.len() + bytes.len()).saturating_sub(CLIP);
        self.tail.drain(..over);
        self.tail.extend_from_slice(bytes);
    }
}

/// Whether a clip of a JSON object's text names `"type"` as one of
/// `kinds`: `"type"`, a colon, then the kind as a string, with any
/// whitespace between. Inside a JSON string the quotes would be escaped,
/// so only a key matches.
pub fn names_type(clip: &[u8], kinds: &[&[u8]]) -> bool {
    const KEY: &[u8] = b"\"type\"";
    memchr::memmem::find_iter(clip, KEY).any(|at| {
        let mut rest = &clip[at + KEY.len()..];
        rest = rest.trim_ascii_start();
        let Some(after) = rest.strip_prefix(b":") else {
            return false;
        };
        let Some(value) = after.trim_ascii_start().strip_prefix(b"\"") else {
            return false;
        };
        kinds.iter().any(|k| {
            value
                .strip_prefix(*k)
                .is_some_and(|r| r.first() == Some(&b'"'))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_whatever_the_pieces() {
        let text: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for piece in [1, 7, CLIP - 1, CLIP, CLIP + 1, 5000] {
            let mut d = Dropped::default();
            for part in text.chunks(piece) {
                d.push_tail(part);
            }
            assert_eq!(d.tail, &text[text.len() - CLIP..], "pieces of {piece}");
        }
    }

    #[test]
    fn a_type_is_named_only_as_a_key() {
        let finals: &[&[u8]] = &[b"response.completed"];
        for yes in [
            &br#"{"type":"response.completed","response":{"#[..],
            br#"...}],"status":"completed"},"sequence_number":9,"type":"response.completed"}"#,
            br#"..., "type" : "response.completed" }"#,
        ] {
            assert!(names_type(yes, finals), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &br#"{"type":"response.completed_x"}"#[..],
            br#"{"text":"\"type\":\"response.completed\""}"#,
            br#"{"type":"response.output_item.done","x":"response.completed"}"#,
            br#"{"type":"#,
        ] {
            assert!(!names_type(no, finals), "{}", String::from_utf8_lossy(no));
        }
    }
}
