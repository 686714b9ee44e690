//! The request view of any bytes, with every result read: an error or a
//! view, never a panic.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::{Detector, request_view};

fuzz_target!(|data: &[u8]| {
    if let Some((dialect, body)) = common::split(data) {
        if let Ok(view) = request_view(dialect, body) {
            let detector = Detector::default();
            for r in &view.results {
                let _ = r.read(&detector);
            }
        }
    }
});
