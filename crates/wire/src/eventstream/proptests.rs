//! Property tests: any split gives the same messages; any corruption gives
//! an error (or the same or fewer messages), never a panic.

use proptest::prelude::*;

use super::*;

fn stream() -> impl Strategy<Value = (Vec<u8>, usize)> {
    prop::collection::vec(
        ("[a-zA-Z]{1,12}", prop::collection::vec(any::<u8>(), 0..80)),
        1..6,
    )
    .prop_map(|msgs| {
        let mut out = Vec::new();
        for (name, payload) in &msgs {
            out.extend(encode_event(name, payload));
        }
        (out, msgs.len())
    })
}

/// Messages decoded (event type and payload) and errors, pushing at `cuts`.
fn run(bytes: &[u8], cuts: &[usize]) -> (Vec<(String, Vec<u8>)>, usize) {
    let mut d = Decoder::new();
    let mut ok = Vec::new();
    let mut errors = 0;
    let mut at = 0;
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    points.push(bytes.len());
    for p in points {
        d.push(&bytes[at..p]);
        at = p;
        while let Some(m) = d.next_message() {
            match m {
                Ok(m) => ok.push((
                    m.event_type().unwrap_or_default().to_owned(),
                    m.payload().to_vec(),
                )),
                Err(_) => errors += 1,
            }
        }
    }
    if d.finish().is_err() {
        errors += 1;
    }
    (ok, errors)
}

/// The same through [`Decoder::feed`]: messages and error kinds in order.
fn run_feed(bytes: &[u8], cuts: &[usize]) -> (Vec<(String, Vec<u8>)>, usize) {
    let mut d = Decoder::new();
    let mut ok = Vec::new();
    let mut errors = 0;
    let mut at = 0;
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    points.push(bytes.len());
    for p in points {
        d.feed(&bytes[at..p], &mut |m| match m {
            Ok(m) => ok.push((
                m.event_type().unwrap_or_default().to_owned(),
                m.payload().to_vec(),
            )),
            Err(_) => errors += 1,
        });
        at = p;
    }
    if d.finish().is_err() {
        errors += 1;
    }
    (ok, errors)
}

proptest! {
    #[test]
    fn any_split_gives_the_same_messages(
        (bytes, n) in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole = run(&bytes, &[]);
        prop_assert_eq!(whole.0.len(), n);
        prop_assert_eq!(whole.1, 0);
        prop_assert_eq!(run(&bytes, &cuts), whole.clone());
        prop_assert_eq!(run_feed(&bytes, &cuts), whole);
    }

    #[test]
    fn any_corrupt_byte_is_an_error_not_a_panic(
        (bytes, n) in stream(),
        at in any::<usize>(),
        flip in 1u8..=255,
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let mut bad = bytes.clone();
        let at = at % bad.len();
        bad[at] ^= flip;
        let (ok, errors) = run(&bad, &cuts);
        prop_assert_eq!(run_feed(&bad, &cuts), (ok.clone(), errors));
        // A CRC32 catches every error burst this short: some error is reported
        // and no message is invented.
        prop_assert!(errors >= 1);
        prop_assert!(ok.len() < n);
    }

    #[test]
    fn random_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        prop_assert_eq!(run_feed(&bytes, &cuts), run(&bytes, &cuts));
    }
}

/// A frame with valid CRCs around arbitrary header bytes: only the header
/// walk can object.
fn frame_with_headers(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let total = 16 + headers.len() + payload.len();
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out
}

/// Header sections that are mostly well-formed: real headers, then a few
/// bytes changed (lengths, type codes, non-UTF-8 bytes).
fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    let name = prop_oneof![
        Just(":event-type".to_string()),
        Just(":message-type".to_string()),
        Just(":content-type".to_string()),
        Just(":exception-type".to_string()),
        "[a-z:é-]{0,6}",
    ];
    let value = prop_oneof![
        "[a-zA-Zé]{0,140}".prop_map(|s| (7u8, s.into_bytes())),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(|b| (6u8, b)),
        (0u8..=5).prop_map(|c| (c, Vec::new())),
        (8u8..=9).prop_map(|c| (c, Vec::new())),
    ];
    (
        prop::collection::vec((name, value), 0..5),
        prop::collection::vec((any::<usize>(), any::<u8>()), 0..3),
    )
        .prop_map(|(headers, edits)| {
            let mut raw = Vec::new();
            for (name, (code, bytes)) in headers {
                raw.push(name.len() as u8);
                raw.extend_from_slice(name.as_bytes());
                raw.push(code);
                let fixed = [0, 0, 1, 2, 4, 8, 0, 0, 8, 16][usize::from(code)];
                match code {
                    6 | 7 => {
                        raw.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
                        raw.extend_from_slice(&bytes);
                    }
                    _ => raw.extend(std::iter::repeat_n(0xA5, fixed)),
                }
            }
            for (at, byte) in edits {
                if !raw.is_empty() {
                    let at = at % raw.len();
                    raw[at] = byte;
                }
            }
            raw
        })
}

/// The standard headers and verdict by the reference walk (one header at a
/// time through `Headers::iter`'s reader).
fn reference(raw: &[u8]) -> Result<Vec<Option<String>>, EventStreamErrorKind> {
    let mut rest = raw;
    let mut first = [None, None, None, None];
    let names = [
        ":message-type",
        ":event-type",
        ":exception-type",
        ":content-type",
    ];
    while !rest.is_empty() {
        let (name, value, tail) = super::header::read_one(rest).map_err(|e| e.kind())?;
        if let (Some(i), HeaderValue::String(v)) = (names.iter().position(|n| *n == name), value) {
            first[i].get_or_insert(v.to_string());
        }
        rest = tail;
    }
    Ok(first.to_vec())
}

proptest! {
    #[test]
    fn the_header_walk_agrees_with_the_reference_reader(
        raw in header_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..4),
    ) {
        let frame = frame_with_headers(&raw, b"{}");
        let expected = reference(&raw);
        let mut d = Decoder::new();
        d.push(&frame);
        let got = d.next_message().expect("a whole frame").map(|m| {
            vec![
                m.message_type().map(str::to_owned),
                m.event_type().map(str::to_owned),
                m.exception_type().map(str::to_owned),
                m.content_type().map(str::to_owned),
            ]
        });
        prop_assert_eq!(got.map_err(|e| e.kind()), expected);
        // And `feed` in pieces says the same as `push`.
        let mut twice = frame.clone();
        twice.extend_from_slice(&frame);
        prop_assert_eq!(run_feed(&twice, &cuts), run(&twice, &cuts));
    }
}
