//! The framer against a plain reading of the SSE specification (WHATWG
//! HTML, "Interpreting an event stream") over the whole stream, for
//! streams of any line endings, fields, comments and blank lines, split
//! into chunks anywhere (empty chunks included).

use proptest::prelude::*;

use super::SseFramer;

/// The specification's reading of a whole stream: the events it
/// dispatches, and (as the framer does at the transport's end) a last
/// event left without its blank line.
fn reference(mut stream: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    if let Some(rest) = stream.strip_prefix("\u{feff}".as_bytes()) {
        stream = rest;
    }
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
        match &field[..] {
            b"data" => match &mut data {
                Some(d) => {
                    d.push(b'\n');
                    d.extend_from_slice(&value);
                }
                None => data = Some(value),
            },
            b"event" => event = value,
            _ => {}
        }
    }
    out
}

fn framed(chunks: &[&[u8]]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut f = SseFramer::default();
    let mut out = Vec::new();
    let mut push = |e: &[u8], d: &[u8]| out.push((e.to_vec(), d.to_vec()));
    for c in chunks {
        f.feed(c, &mut push);
    }
    f.finish(&mut push);
    out
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

proptest! {
    #[test]
    fn any_split_reads_as_the_specification_reads_the_whole(
        stream in stream(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
        at.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for to in at {
            chunks.push(&stream[from..to]);
            from = to;
        }
        chunks.push(&stream[from..]);
        prop_assert_eq!(framed(&chunks), reference(&stream), "chunks {:?}", chunks);
    }
}
