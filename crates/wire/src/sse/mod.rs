//! Server-sent events framing, fed bytes split at arbitrary points.
//!
//! [`SseFramer::feed`] calls back once per complete event with its `event:`
//! name (empty when absent) and its data (the `data:` lines joined by
//! `\n`). An event of one `data:` line whose blank line is in the same
//! chunk is passed on without a copy; other events are buffered, bounded by
//! the largest event, not the stream's length. Lines end in `\n`, `\r\n`
//! or `\r` (a `\r\n` split across chunks, even by empty ones, is one line
//! end); a leading byte order mark is ignored, as the specification says.
//! `proptests.rs` checks any split of any stream against the
//! specification's reading of the whole.

/// Whether a `content-type` value is SSE's (`text/event-stream`, any
/// parameters after it; media types compare without regard to case).
pub fn is_sse_content_type(value: &[u8]) -> bool {
    const SSE: &[u8] = b"text/event-stream";
    let value = value.trim_ascii_start();
    value.len() >= SSE.len() && value[..SSE.len()].eq_ignore_ascii_case(SSE)
}

use std::collections::VecDeque;

mod dropped;

pub use dropped::{CLIP, Dropped, names_type};

/// The default cap on one event's size (16 MiB): a larger event is dropped
/// and counted in [`SseFramer::oversized`]; what it leaves is in
/// [`SseFramer::take_dropped`].
pub const DEFAULT_MAX_EVENT: usize = 16 << 20;

/// An incremental SSE parser.
#[derive(Debug)]
pub struct SseFramer {
    /// An incomplete line carried over from the previous chunk.
    partial: Vec<u8>,
    /// The current event's name.
    event: Vec<u8>,
    /// The current event's data, when it has more than one line or had to
    /// be copied.
    data: Vec<u8>,
    data_lines: usize,
    /// The previous chunk ended with `\r`: a `\n` starting the next one
    /// belongs to it.
    skip_lf: bool,
    max_event: usize,
    oversized: usize,
    dropping: bool,
    /// The line being read passed the cap while carried over: its end is
    /// not a line of its own (an empty one would end the event).
    dropped_line: bool,
    /// The event being dropped: its name and clips of its data.
    clip: Dropped,
    /// The events dropped whole since [`Self::take_dropped`] was last
    /// called, the last [`KEPT_DROPPED`] of them.
    dropped: VecDeque<Dropped>,
    /// How many bytes of a leading byte order mark were seen, until the
    /// stream's first bytes are known to be one or not ([`BOM_DONE`]).
    bom: usize,
}

/// How many dropped events [`SseFramer::take_dropped`] can give after one
/// [`SseFramer::feed`] (each holds at most `2 ×` [`CLIP`] bytes).
pub const KEPT_DROPPED: usize = 8;

/// The UTF-8 byte order mark, which the specification ignores at the
/// start of a stream.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// [`SseFramer::bom`] once the start of the stream is past.
const BOM_DONE: usize = usize::MAX;

impl Default for SseFramer {
    fn default() -> Self {
        SseFramer::with_max_event(DEFAULT_MAX_EVENT)
    }
}

impl SseFramer {
    /// A framer that drops events larger than `max_event` bytes.
    pub fn with_max_event(max_event: usize) -> Self {
        SseFramer {
            partial: Vec::new(),
            event: Vec::new(),
            data: Vec::new(),
            data_lines: 0,
            skip_lf: false,
            max_event,
            oversized: 0,
            dropping: false,
            dropped_line: false,
            clip: Dropped::default(),
            dropped: VecDeque::new(),
            bom: 0,
        }
    }

    /// The bytes its buffers hold (their capacity): the line and the
    /// event being read.
    pub fn buffered(&self) -> usize {
        self.partial.capacity() + self.event.capacity() + self.data.capacity()
    }

    /// How many events were dropped for exceeding the size cap.
    pub fn oversized(&self) -> usize {
        self.oversized
    }

    /// The next of the events dropped for their size (their blank line
    /// read) since the last calls: each one's name and the first and last
    /// bytes of its data. An oversized event that the stream's end cut off
    /// is not one. Only the last [`KEPT_DROPPED`] are kept: take them after
    /// each [`Self::feed`].
    pub fn take_dropped(&mut self) -> Option<Dropped> {
        self.dropped.pop_front()
    }

    /// Feed the next bytes; `on_event(name, data)` is called for each
    /// complete event.
    pub fn feed(&mut self, mut chunk: &[u8], on_event: &mut dyn FnMut(&[u8], &[u8])) {
        if self.bom != BOM_DONE {
            // A leading byte order mark is not part of the first line,
            // wherever the chunks split it.
            let seen = self.bom;
            let matched = BOM[seen..]
                .iter()
                .zip(chunk)
                .take_while(|(a, b)| a == b)
                .count();
            if seen + matched == BOM.len() {
                self.bom = BOM_DONE;
                chunk = &chunk[matched..];
            } else if matched == chunk.len() {
                self.bom = seen + matched;
                return;
            } else {
                // Not a mark: the bytes held back are the stream's own.
                self.bom = BOM_DONE;
                self.feed_lines(&BOM[..seen], on_event);
            }
        }
        self.feed_lines(chunk, on_event);
    }

    fn feed_lines(&mut self, mut chunk: &[u8], on_event: &mut dyn FnMut(&[u8], &[u8])) {
        // An empty chunk (a compressed stream's piece that decoded to
        // nothing) must not forget a `\r` the last chunk ended with.
        if chunk.is_empty() {
            return;
        }
        if self.skip_lf {
            self.skip_lf = false;
            if let [b'\n', rest @ ..] = chunk {
                chunk = rest;
            }
        }
        // Most servers end lines with `\n` alone: then one needle suffices.
        let has_cr = memchr::memchr(b'\r', chunk).is_some();
        while !chunk.is_empty() {
            let end = if has_cr {
                memchr::memchr2(b'\n', b'\r', chunk)
            } else {
                memchr::memchr(b'\n', chunk)
            };
            let Some(end) = end else {
                if self.dropping {
                    // More of an event already dropped: the end of this
                    // line, when it comes, is not a blank line.
                    if !self.dropped_line {
                        self.clip.push_tail(b"\n");
                    }
                    self.clip.push_tail(chunk);
                    self.dropped_line = true;
                } else if self.partial.len() + chunk.len() > self.max_line() {
                    self.clip.set_head(&self.data, &self.partial, chunk);
                    self.data.clear();
                    self.clip.push_tail(&self.partial);
                    self.clip.push_tail(chunk);
                    self.partial.clear();
                    self.dropping = true;
                    self.dropped_line = true;
                } else {
                    self.partial.extend_from_slice(chunk);
                }
                return;
            };
            let terminator = chunk[end];
            let next = if terminator == b'\r' {
                match chunk.get(end + 1) {
                    Some(b'\n') => end + 2,
                    Some(_) => end + 1,
                    None => {
                        self.skip_lf = true;
                        end + 1
                    }
                }
            } else {
                end + 1
            };
            if self.dropped_line {
                // The rest of a line already dropped.
                self.clip.push_tail(&chunk[..end]);
                self.dropped_line = false;
            } else if self.partial.is_empty() {
                // Fast path: a single `data:` line and the blank line that
                // ends its event, both in this chunk: no copy.
                if let Some(skip) = self.single_data_line(&chunk[..end], &chunk[next..]) {
                    let value = &chunk[5..end];
                    let value = value.strip_prefix(b" ").unwrap_or(value);
                    on_event(&self.event, value);
                    self.event.clear();
                    chunk = &chunk[next + skip..];
                    continue;
                }
                self.line(&chunk[..end], on_event);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..end]);
                // The same fast path for a line carried over: its value is
                // not copied again into the event's data.
                let single = self.single_data_line(&line, &chunk[next..]);
                match single {
                    Some(_) => {
                        let value = &line[5..];
                        on_event(&self.event, value.strip_prefix(b" ").unwrap_or(value));
                        self.event.clear();
                    }
                    None => self.line(&line, on_event),
                }
                line.clear();
                self.partial = line;
                if let Some(skip) = single {
                    chunk = &chunk[next + skip..];
                    continue;
                }
            }
            chunk = &chunk[next..];
        }
    }

    /// The longest line kept: one whose `data: ` value fits the cap, so
    /// a data line is judged by its value's size wherever the chunks end.
    fn max_line(&self) -> usize {
        self.max_event.saturating_add(b"data: ".len())
    }

    /// Drop the event `line` belongs to, from this whole line on.
    fn start_dropping(&mut self, line: &[u8]) {
        self.clip.set_head(&self.data, line, b"");
        self.clip.push_tail(line);
        self.dropping = true;
        self.data.clear();
    }

    /// When `line` is the first and only `data:` line of an event and
    /// `after` starts with the blank line that ends it: the length of that
    /// blank line's terminator.
    fn single_data_line(&self, line: &[u8], after: &[u8]) -> Option<usize> {
        if self.data_lines > 0 || self.dropping || !line.starts_with(b"data:") {
            return None;
        }
        if line.len() - 5 + 1 > self.max_event {
            return None;
        }
        match after {
            [b'\n', ..] => Some(1),
            [b'\r', b'\n', ..] => Some(2),
            [b'\r', _, ..] => Some(1),
            _ => None, // unknown yet (or a lone `\r` that may precede `\n`)
        }
    }

    /// The stream ended: dispatch a last event that had no blank line
    /// after it (some servers omit it).
    pub fn finish(&mut self, on_event: &mut dyn FnMut(&[u8], &[u8])) {
        if self.bom != BOM_DONE {
            // The stream ended inside what could have been a mark.
            let seen = std::mem::replace(&mut self.bom, BOM_DONE);
            self.feed_lines(&BOM[..seen], on_event);
        }
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, on_event);
        }
        // An oversized event the end cut off is counted, but it leaves
        // nothing to take: its end is unknown.
        let cut = self.dropping;
        self.line(b"", on_event);
        if cut {
            self.dropped.pop_back();
        }
    }

    fn line(&mut self, line: &[u8], on_event: &mut dyn FnMut(&[u8], &[u8])) {
        if line.is_empty() {
            if self.data_lines > 0 && !self.dropping {
                on_event(&self.event, &self.data);
            }
            if self.dropping {
                self.oversized += 1;
                self.clip.event.clone_from(&self.event);
                if self.dropped.len() == KEPT_DROPPED {
                    self.dropped.pop_front();
                }
                self.dropped.push_back(std::mem::take(&mut self.clip));
            }
            self.dropping = false;
            self.event.clear();
            self.data.clear();
            self.data_lines = 0;
            return;
        }
        if self.dropping {
            self.clip.push_tail(b"\n");
            self.clip.push_tail(line);
            return;
        }
        if line.len() > self.max_line() {
            // As when the line was carried over a chunk's end: the same
            // stream drops the same events however it is split.
            self.start_dropping(line);
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(0) => return, // a comment
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    self.start_dropping(line);
                    return;
                }
                if self.data_lines > 0 {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.data_lines += 1;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_content_types() {
        for v in [
            "text/event-stream",
            "text/event-stream; charset=utf-8",
            " Text/Event-Stream",
        ] {
            assert!(is_sse_content_type(v.as_bytes()), "{v}");
        }
        for v in [
            "application/json",
            "text/event",
            "",
            "text/plain; x=text/event-stream",
        ] {
            assert!(!is_sse_content_type(v.as_bytes()), "{v}");
        }
    }

    fn events(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut f = SseFramer::default();
        let mut out = Vec::new();
        let mut push = |e: &[u8], d: &[u8]| {
            out.push((
                String::from_utf8_lossy(e).into_owned(),
                String::from_utf8_lossy(d).into_owned(),
            ))
        };
        for c in chunks {
            f.feed(c, &mut push);
        }
        f.finish(&mut push);
        out
    }

    #[test]
    fn frames_events_split_anywhere() {
        let whole =
            b"event: a\ndata: {\"x\":1}\n\n: comment\r\ndata: one\r\ndata: two\r\n\r\ndata:last";
        let expected = vec![
            ("a".to_string(), "{\"x\":1}".to_string()),
            (String::new(), "one\ntwo".to_string()),
            (String::new(), "last".to_string()),
        ];
        assert_eq!(events(&[whole]), expected);
        for split in 0..whole.len() {
            let (a, b) = whole.split_at(split);
            assert_eq!(events(&[a, b]), expected, "split at {split}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(events(&bytes), expected);
    }

    /// A lone `data:` line carried over chunks is handed on from the
    /// carried line when its blank line follows in the same chunk, not
    /// copied into the event's data too: the framer holds the line once.
    #[test]
    fn a_carried_data_line_is_not_copied_again() {
        let value = "v".repeat(30_000);
        let stream = format!("event: big\ndata: {value}\n\ndata: next\n\n");
        let mut f = SseFramer::default();
        let mut seen = Vec::new();
        for c in stream.as_bytes().chunks(4096) {
            f.feed(c, &mut |e, d| seen.push((e.to_vec(), d.len())));
        }
        assert_eq!(seen, [(b"big".to_vec(), 30_000), (Vec::new(), 4)]);
        assert!(f.buffered() <= 33 * 1024, "{}", f.buffered());
    }

    /// An oversized line carried over a chunk boundary whose line end
    /// opens the next chunk: that end closes the dropped line, it is not a
    /// blank line of its own, so the rest of the oversized event is not
    /// read as an event (it was, only for this split).
    #[test]
    fn the_end_of_a_dropped_line_is_not_a_blank_line() {
        let stream: &[u8] = b"data: 0123456789abcdef\ndata: {\"tail\":1}\n\ndata: ok\n\n";
        for split in 1..stream.len() {
            let (a, b) = stream.split_at(split);
            let mut f = SseFramer::with_max_event(12);
            let mut seen = Vec::new();
            let mut push = |_: &[u8], d: &[u8]| seen.push(d.to_vec());
            f.feed(a, &mut push);
            f.feed(b, &mut push);
            f.finish(&mut push);
            assert_eq!(seen, [b"ok".to_vec()], "split at {split}");
            assert_eq!(f.oversized(), 1, "split at {split}");
        }
    }

    /// An empty chunk between a `\r` and its `\n` (a compressed stream's
    /// piece that decoded to nothing) does not make the `\n` a blank line.
    #[test]
    fn an_empty_chunk_keeps_a_pending_cr() {
        assert_eq!(
            events(&[b"event: a\r", b"", b"\ndata: x\r\ndata: y\r\n\r\n"]),
            [("a".to_string(), "x\ny".to_string())]
        );
    }

    /// A leading byte order mark is not part of the first line, wherever
    /// the chunks split it; one elsewhere is text.
    #[test]
    fn a_leading_byte_order_mark_is_ignored() {
        let stream = "\u{feff}event: a\ndata: 1\n\ndata: \u{feff}\n\n".as_bytes();
        let want = [
            ("a".to_string(), "1".to_string()),
            (String::new(), "\u{feff}".to_string()),
        ];
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(events(&[a, b]), want, "split at {split}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), want);
        // The start of a mark, then something else: those bytes are read.
        assert_eq!(
            events(&[b"\xef", b"\xbbdata: 1\n\ndata: 2\n\n"]),
            [(String::new(), "2".to_string())]
        );
        assert_eq!(events(&[b"\xef\xbb"]), []);
    }

    /// An event dropped for its size leaves its name, the start of its
    /// data and the end of its lines, however the stream is split; the
    /// events around it are read.
    #[test]
    fn a_dropped_event_leaves_its_name_and_clips_whatever_the_split() {
        let big = "x".repeat(3 * CLIP);
        let one = format!("{{\"type\":\"response.completed\",\"r\":\"{big}\"}}");
        let two = format!("data: {{\"a\":\"{big}\",\ndata: \"type\":\"end\"}}");
        let stream = format!(
            "data: a\n\nevent: response.completed\ndata: {one}\n\ndata: b\n\n{two}\r\n\r\ndata: c\n\n"
        );
        let stream = stream.as_bytes();
        let last = |t: &[u8]| t[t.len() - CLIP..].to_vec();
        let want = [
            Dropped {
                event: b"response.completed".to_vec(),
                head: one.as_bytes()[..CLIP].to_vec(),
                tail: last(format!("data: {one}").as_bytes()),
            },
            Dropped {
                event: Vec::new(),
                head: two.as_bytes()[6..6 + CLIP].to_vec(),
                tail: last(two.as_bytes()),
            },
        ];
        let read = |chunks: &mut dyn Iterator<Item = &[u8]>| {
            let mut f = SseFramer::with_max_event(2 * CLIP + 100);
            let (mut events, mut dropped) = (Vec::new(), Vec::new());
            let mut push = |_: &[u8], d: &[u8]| events.push(d.to_vec());
            for c in chunks {
                f.feed(c, &mut push);
                dropped.extend(std::iter::from_fn(|| f.take_dropped()));
            }
            f.finish(&mut push);
            assert_eq!(f.take_dropped(), None);
            assert_eq!(f.oversized(), 2);
            (events, dropped)
        };
        let events: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        for split in (0..=stream.len()).step_by(5) {
            let (a, b) = stream.split_at(split);
            let got = read(&mut [a, b].into_iter());
            if got != (events.clone(), want.to_vec()) {
                let show = |d: &Dropped| {
                    let txt = |b: &[u8]| String::from_utf8_lossy(b).replace(&"x".repeat(64), "X");
                    format!("[{} | {} | {}]", txt(&d.event), txt(&d.head), txt(&d.tail))
                };
                let g: Vec<String> = got.1.iter().map(show).collect();
                let w: Vec<String> = want.iter().map(show).collect();
                panic!(
                    "split at {split}: events {:?}\n got {g:?}\nwant {w:?}",
                    got.0
                );
            }
        }
        for size in [1, 2, 3, 1000] {
            let got = read(&mut stream.chunks(size));
            assert!(got == (events.clone(), want.to_vec()), "pieces of {size}");
        }
    }

    /// A line of an event already being dropped that a chunk ends just
    /// before its line end: that end is not a blank line, so the rest of
    /// the event is not read as another one.
    #[test]
    fn a_later_line_of_a_dropped_event_split_before_its_end_is_not_a_blank_line() {
        let mut f = SseFramer::with_max_event(8);
        let mut seen = Vec::new();
        let mut push = |_: &[u8], d: &[u8]| seen.push(d.to_vec());
        f.feed(b"data: 0123456789\ndata: t", &mut push);
        f.feed(b"\ndata: more\n\ndata: ok\n\n", &mut push);
        assert_eq!(seen, [b"ok".to_vec()]);
        assert_eq!(f.oversized(), 1);
    }

    #[test]
    fn oversized_events_are_dropped_and_counted() {
        let mut f = SseFramer::with_max_event(8);
        let mut n = 0;
        f.feed(b"data: 0123456789abcdef\n\ndata: ok\n\n", &mut |_, _| {
            n += 1
        });
        assert_eq!(n, 1);
        assert_eq!(f.oversized(), 1);
    }
}

#[cfg(test)]
mod proptests;
