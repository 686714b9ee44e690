//! The framer against a plain reading of the SSE specification (WHATWG
//! HTML, "Interpreting an event stream") over the whole stream, for
//! streams of any line endings, fields, comments and blank lines, split
//! into chunks anywhere (empty chunks included).

use proptest::prelude::*;

use super::{Dropped, SseFramer};

/// A stream's lines, as the specification ends them (`\r\n`, `\n` or
/// `\r`); a last line without its end is one.
fn lines_of(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let mut i = 0;
    while i < stream.len() {
        match stream[i] {
            b'\r' => {
                lines.push(std::mem::take(&mut line));
                if stream.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => lines.push(std::mem::take(&mut line)),
            b => line.push(b),
        }
        i += 1;
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A field's effect on the event being read: `data` adds a line, `event`
/// names it, others do nothing.
fn take_field(field: &[u8], value: Vec<u8>, event: &mut Vec<u8>, data: &mut Option<Vec<u8>>) {
    match field {
        b"data" => match data {
            Some(d) => {
                d.push(b'\n');
                d.extend_from_slice(&value);
            }
            None => *data = Some(value),
        },
        b"event" => *event = value,
        _ => {}
    }
}

/// The specification's reading of a whole stream: the events it
/// dispatches, and (as the framer does at the transport's end) a last
/// event left without its blank line.
fn reference(mut stream: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    if let Some(rest) = stream.strip_prefix("\u{feff}".as_bytes()) {
        stream = rest;
    }
    let mut lines = lines_of(stream);
    lines.push(Vec::new());
    let (mut out, mut event, mut data) = (Vec::new(), Vec::new(), None::<Vec<u8>>);
    for line in lines {
        if line.is_empty() {
            if let Some(d) = data.take() {
                out.push((std::mem::take(&mut event), d));
            }
            event.clear();
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => continue,
            Some(at) => {
                let v = &line[at + 1..];
                (
                    line[..at].to_vec(),
                    v.strip_prefix(b" ").unwrap_or(v).to_vec(),
                )
            }
            None => (line.clone(), Vec::new()),
        };
        take_field(&field, value, &mut event, &mut data);
    }
    out
}

fn framed(chunks: &[&[u8]]) -> Vec<(Vec<u8>, Vec<u8>)> {
    framed_with_cap(chunks, super::DEFAULT_MAX_EVENT).0
}

/// Events (name, data), and the events dropped for their size.
type Reading = (Vec<(Vec<u8>, Vec<u8>)>, Vec<Dropped>);

/// The events, and the events dropped for their size, with `cap`.
fn framed_with_cap(chunks: &[&[u8]], cap: usize) -> Reading {
    let mut f = SseFramer::with_max_event(cap);
    let mut out = Vec::new();
    let mut dropped = Vec::new();
    let mut push = |e: &[u8], d: &[u8]| out.push((e.to_vec(), d.to_vec()));
    for c in chunks {
        f.feed(c, &mut push);
        dropped.extend(std::iter::from_fn(|| f.take_dropped()));
    }
    f.finish(&mut push);
    assert!(f.take_dropped().is_none(), "a cut event leaves nothing");
    (out, dropped)
}

/// The reading with a size cap, over whole lines: an event is dropped
/// from the line that is longer than `cap` + 6 bytes or that makes its
/// data longer than `cap`; what it leaves is its name, the start of its
/// data (its data so far, then that line's value), and its lines from that
/// one on. An event the stream's end cut off leaves nothing.
fn reference_with_cap(stream: &[u8], cap: usize) -> Reading {
    let lines = lines_of(stream);
    let (mut out, mut gone) = (Vec::new(), Vec::new());
    let (mut event, mut data, mut clip) = (Vec::new(), None::<Vec<u8>>, None::<Dropped>);
    let last = lines.len();
    for (k, line) in lines.into_iter().chain([Vec::new()]).enumerate() {
        if line.is_empty() {
            match clip.take() {
                Some(mut d) if k < last => {
                    d.event = std::mem::take(&mut event);
                    gone.push(d);
                }
                Some(_) => {}
                None => {
                    if let Some(d) = data.take() {
                        out.push((std::mem::take(&mut event), d));
                    }
                }
            }
            event.clear();
            data = None;
            continue;
        }
        if let Some(d) = &mut clip {
            d.tail.push(b'\n');
            d.tail.extend_from_slice(&line);
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) if line.len() <= cap + 6 => continue,
            Some(at) => {
                let v = &line[at + 1..];
                (
                    line[..at].to_vec(),
                    v.strip_prefix(b" ").unwrap_or(v).to_vec(),
                )
            }
            None => (line.clone(), Vec::new()),
        };
        let so_far = data.clone().unwrap_or_default();
        let too_long =
            line.len() > cap + 6 || (field == b"data" && so_far.len() + value.len() + 1 > cap);
        if too_long {
            let mut head = so_far.clone();
            if let Some(v) = line.strip_prefix(b"data:") {
                if !so_far.is_empty() {
                    head.push(b'\n');
                }
                head.extend_from_slice(v.strip_prefix(b" ").unwrap_or(v));
            }
            clip = Some(Dropped {
                event: Vec::new(),
                head,
                tail: line.clone(),
            });
            data = None;
            continue;
        }
        take_field(&field, value, &mut event, &mut data);
    }
    (out, gone)
}

/// One line's text (no line end): fields, values with colons and spaces,
/// comments, non-ASCII text.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let value = prop::collection::vec(
        prop_oneof![
            Just(b"x".to_vec()),
            Just(b" ".to_vec()),
            Just(b":".to_vec()),
            Just(b"{\"a\":1}".to_vec()),
            Just("é✓".as_bytes().to_vec()),
        ],
        0..4,
    )
    .prop_map(|v| v.concat());
    (
        prop_oneof![
            Just(&b"data:"[..]),
            Just(&b"data: "[..]),
            Just(&b"data"[..]),
            Just(&b"event:"[..]),
            Just(&b"event: "[..]),
            Just(&b"id: "[..]),
            Just(&b": "[..]),
            Just(&b"retry"[..]),
            Just(&b""[..]),
        ],
        value,
    )
        .prop_map(|(field, value)| {
            if field.is_empty() {
                Vec::new()
            } else {
                [field, &value].concat()
            }
        })
}

fn ending() -> impl Strategy<Value = &'static [u8]> {
    prop_oneof![Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"\r\n"[..])]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        prop::collection::vec((line(), ending()), 0..24),
        any::<bool>(),
    )
        .prop_map(|(bom, lines, last_ended)| {
            let mut out = Vec::new();
            if bom {
                out.extend_from_slice("\u{feff}".as_bytes());
            }
            let n = lines.len();
            for (k, (text, end)) in lines.into_iter().enumerate() {
                out.extend_from_slice(&text);
                if k + 1 < n || last_ended {
                    out.extend_from_slice(end);
                }
            }
            out
        })
}

/// `stream` cut at `cuts` (sorted; empty pieces where cuts meet).
fn split_at<'s>(stream: &'s [u8], cuts: &[prop::sample::Index]) -> Vec<&'s [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
    at.sort_unstable();
    let mut chunks = Vec::new();
    let mut from = 0;
    for to in at {
        chunks.push(&stream[from..to]);
        from = to;
    }
    chunks.push(&stream[from..]);
    chunks
}

proptest! {
    #[test]
    fn any_split_reads_as_the_specification_reads_the_whole(
        stream in stream(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let chunks = split_at(&stream, &cuts);
        prop_assert_eq!(framed(&chunks), reference(&stream), "chunks {:?}", chunks);
    }

    /// With a cap small enough for the generated lines to pass it, any
    /// split drops the events the reading of whole lines drops, reads the
    /// others, and says the same of each dropped one (its head as far as
    /// it was read when the cap was passed: a start of the reading's).
    #[test]
    fn any_split_drops_what_the_whole_reading_drops(
        stream in stream(),
        cap in 1usize..14,
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let stream = match stream.strip_prefix("\u{feff}".as_bytes()) {
            Some(rest) => rest.to_vec(),
            None => stream,
        };
        let chunks = split_at(&stream, &cuts);
        let (events, dropped) = framed_with_cap(&chunks, cap);
        let (want_events, want_dropped) = reference_with_cap(&stream, cap);
        prop_assert_eq!(&events, &want_events, "chunks {:?}", chunks);
        prop_assert_eq!(dropped.len(), want_dropped.len(), "chunks {:?}", chunks);
        for (got, want) in dropped.iter().zip(&want_dropped) {
            prop_assert_eq!(&got.event, &want.event);
            prop_assert_eq!(&got.tail, &want.tail, "chunks {:?}", chunks);
            prop_assert!(want.head.starts_with(&got.head), "chunks {:?}: head {:?} of {:?}", chunks, got.head, want.head);
        }
    }
}
