//! The request view of any bytes: an error or a view, never a panic.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::{Detector, request_view};

fuzz_target!(|data: &[u8]| {
    if let Some((dialect, body)) = common::split(data) {
        let _ = request_view(dialect, body, &Detector::default());
    }
});
