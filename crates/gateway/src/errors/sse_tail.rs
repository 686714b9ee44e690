//! [`SseTail`]: where the SSE bytes relayed so far stopped — at the end of
//! an event, after a line of one, or inside a line — so that an error
//! event appended to a stream that broke midway is an event of its own.
//! Appended after a partial event (`data: {"type":"content_bl`), its first
//! line would continue the partial one and its fields join that event: the
//! client parsed one corrupt event and never saw the error. Lines end with
//! CRLF, LF or CR, and a blank line ends an event (the WHATWG
//! event-stream format, which every SDK's parser follows).

use bytes::Bytes;

/// Where relayed SSE bytes stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum SseTail {
    /// At the start of a line, no event open: the start of the stream, or
    /// after a blank line.
    #[default]
    Boundary,
    /// After a CR that ended a blank line (an LF may follow, part of it).
    BoundaryCr,
    /// At the start of a line, an event open (its lines not yet ended by a
    /// blank one).
    Open,
    /// After a CR that ended a line of an open event (an LF may follow).
    OpenCr,
    /// Inside a line.
    Line,
}

// === impl SseTail ===

impl SseTail {
    /// Follow `bytes`, relayed after those seen so far. Only the line ends
    /// after the last other byte are stepped through.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let ends = |b: &u8| matches!(b, b'\r' | b'\n');
        let rest = match bytes.iter().rposition(|b| !ends(b)) {
            Some(last) => {
                *self = SseTail::Line;
                &bytes[last + 1..]
            }
            None => bytes,
        };
        for &b in rest {
            *self = match (*self, b) {
                (SseTail::BoundaryCr, b'\n') => SseTail::Boundary,
                (SseTail::OpenCr, b'\n') => SseTail::Open,
                (SseTail::Line, b'\r') => SseTail::OpenCr,
                (SseTail::Line, b'\n') => SseTail::Open,
                // A blank line: the open event (if any) ends.
                (_, b'\r') => SseTail::BoundaryCr,
                _ => SseTail::Boundary,
            };
        }
    }

    /// `event` (a whole SSE event) after what ends the event the relayed
    /// bytes stopped in: nothing at a boundary, a blank line after a line
    /// of an open event, a line end and a blank line inside a line.
    pub(crate) fn then(self, event: Bytes) -> Bytes {
        let end: &[u8] = match self {
            SseTail::Boundary | SseTail::BoundaryCr => return event,
            SseTail::Open => b"\n",
            SseTail::OpenCr | SseTail::Line => b"\n\n",
        };
        let mut out = Vec::with_capacity(end.len() + event.len());
        out.extend_from_slice(end);
        out.extend_from_slice(&event);
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The events (their `event` and `data`) an event-stream parser
    /// dispatches, as the WHATWG format reads them.
    fn events(stream: &[u8]) -> Vec<(String, String)> {
        let text = String::from_utf8_lossy(stream)
            .replace("\r\n", "\n")
            .replace('\r', "\n");
        let mut out = Vec::new();
        let (mut event, mut data) = (String::new(), None::<String>);
        let mut lines: Vec<&str> = text.split('\n').collect();
        // The last piece has no line end: not a line yet.
        lines.pop();
        for line in lines {
            if line.is_empty() {
                if let Some(d) = data.take() {
                    out.push((std::mem::take(&mut event), d));
                }
                event.clear();
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => event = value.to_string(),
                "data" => match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => data = Some(value.to_string()),
                },
                _ => {}
            }
        }
        out
    }

    const ERROR: &[u8] = b"event: error\ndata: {\"type\":\"error\"}\n\n";

    #[test]
    fn an_event_after_a_partial_one_stands_alone() {
        for (relayed, end) in [
            (&b""[..], &b""[..]),
            (b"data: 1\n\n", b""),
            (b"data: 1\r\n\r\n", b""),
            (b"data: 1\r\r", b""),
            (b"data: 1\n", b"\n"),
            (b"data: 1\r\n", b"\n"),
            (b"data: 1\r", b"\n\n"),
            (b"data: {\"type\":\"content_bl", b"\n\n"),
            (b"event: content_block_delta\ndata: {\"a\"", b"\n\n"),
        ] {
            let mut tail = SseTail::default();
            // Fed a byte at a time and whole: the same.
            relayed
                .iter()
                .for_each(|b| tail.feed(std::slice::from_ref(b)));
            let mut whole = SseTail::default();
            whole.feed(relayed);
            assert_eq!(tail, whole, "{:?}", String::from_utf8_lossy(relayed));
            let appended = tail.then(Bytes::from_static(ERROR));
            assert_eq!(&appended[..end.len()], end);
            let mut stream = relayed.to_vec();
            stream.extend_from_slice(&appended);
            let last = events(&stream).pop().unwrap();
            assert_eq!(last, ("error".into(), "{\"type\":\"error\"}".into()));
        }
    }

    proptest! {
        /// Whatever was relayed, split anywhere: the appended event is the
        /// last one dispatched, whole, after the events the relayed bytes
        /// held (the partial one ended first).
        #[test]
        fn the_appended_event_is_the_last_and_whole(
            relayed in proptest::collection::vec(
                prop::sample::select(vec![b'a', b':', b' ', b'\r', b'\n', b'd']), 0..40),
            cut in any::<prop::sample::Index>(),
        ) {
            let cut = cut.index(relayed.len() + 1);
            let mut tail = SseTail::default();
            tail.feed(&relayed[..cut]);
            tail.feed(&relayed[cut..]);
            let appended = tail.then(Bytes::from_static(ERROR));
            let mut stream = relayed.clone();
            stream.extend_from_slice(&appended);
            let mut got = events(&stream);
            prop_assert_eq!(got.pop(), Some(("error".to_string(), "{\"type\":\"error\"}".to_string())));
            // The events before it are those of the relayed bytes ended
            // with a blank line.
            let mut ended = relayed.clone();
            ended.extend_from_slice(b"\n\n");
            prop_assert_eq!(got, events(&ended));
        }
    }
}
