//! The stream parser on any bytes, fed whole and in small pieces: never a
//! panic, and the same view either way.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::StreamParser;

fuzz_target!(|data: &[u8]| {
    if let Some((dialect, stream)) = common::split(data) {
        let mut whole = StreamParser::new(dialect);
        whole.feed(stream);
        let whole = whole.finish();
        let mut pieces = StreamParser::new(dialect);
        for chunk in stream.chunks(3) {
            pieces.feed(chunk);
        }
        assert_eq!(pieces.finish(), whole);
    }
});
