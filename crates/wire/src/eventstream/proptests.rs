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

proptest! {
    #[test]
    fn any_split_gives_the_same_messages(
        (bytes, n) in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole = run(&bytes, &[]);
        prop_assert_eq!(whole.0.len(), n);
        prop_assert_eq!(whole.1, 0);
        prop_assert_eq!(run(&bytes, &cuts), whole);
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
        let _ = run(&bytes, &cuts);
    }
}
