//! The AWS event-stream decoder on any bytes, fed whole and in small
//! pieces, by `push` + `next_message` and by `feed`: never a panic, and
//! the same messages and errors every way.
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

fn run_feed(data: &[u8], piece: usize) -> Vec<Result<(Vec<u8>, Vec<u8>), String>> {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    for chunk in data.chunks(piece.max(1)) {
        d.feed(chunk, &mut |m| {
            out.push(
                m.map(|m| (m.headers().as_bytes().to_vec(), m.payload().to_vec()))
                    .map_err(|e| format!("{:?}", e.kind())),
            )
        });
    }
    if let Err(e) = d.finish() {
        out.push(Err(format!("{:?}", e.kind())));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let whole = run(data, data.len());
    assert_eq!(whole, run(data, 3));
    assert_eq!(whole, run_feed(data, data.len()));
    assert_eq!(whole, run_feed(data, 3));
});
