//! The request view of any bytes, with every result read: an error or a
//! view, never a panic; and the one-pass `inspect` the gateway uses finds
//! the same view and the same defects as `request_view` and `validate`;
//! and a view's fast path, where it answers, answers as the full parser.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::{Detector, fast_path_agrees, inspect, request_view, validate};

fuzz_target!(|data: &[u8]| {
    if let Some((dialect, body)) = common::split(data) {
        let view = request_view(dialect, body);
        if let Ok(view) = &view {
            let detector = Detector::default();
            for r in &view.results {
                let _ = r.read(&detector);
            }
        }
        if let Err(diff) = fast_path_agrees(dialect, body) {
            panic!("{diff}");
        }
        let both = inspect(dialect, body);
        assert_eq!(format!("{:?}", both.view), format!("{view:?}"));
        match (both.defects, validate(dialect, body)) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("inspect ok: {}, validate ok: {}", a.is_ok(), b.is_ok()),
        }
    }
});
