//! The AWS event-stream decoder on any bytes, fed whole and in small
//! pieces: never a panic, and the same messages and errors either way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::eventstream::Decoder;

fn run(data: &[u8], piece: usize) -> Vec<Result<(Vec<u8>, Vec<u8>), String>> {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    for chunk in data.chunks(piece.max(1)) {
        d.push(chunk);
        while let Some(m) = d.next_message() {
            out.push(
                m.map(|m| (m.headers().as_bytes().to_vec(), m.payload().to_vec()))
                    .map_err(|e| format!("{:?}", e.kind())),
            );
        }
    }
    if let Err(e) = d.finish() {
        out.push(Err(format!("{:?}", e.kind())));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    assert_eq!(run(data, data.len()), run(data, 3));
});
