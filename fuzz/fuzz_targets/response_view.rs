//! The response view of any bytes: an error or a view, never a panic; and
//! where a dialect's response view has a fast path, the view serde reads.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::{response_fast_path_agrees, response_view};

fuzz_target!(|data: &[u8]| {
    if let Some((dialect, body)) = common::split(data) {
        let _ = response_view(dialect, body);
        if let Err(diff) = response_fast_path_agrees(dialect, body) {
            panic!("{diff}");
        }
    }
});
