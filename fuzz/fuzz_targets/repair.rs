//! Validation and repair of any bytes: never a panic; whatever validates
//! also repairs, into a body that validates clean and repairs to itself.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::{repair, validate};

fuzz_target!(|data: &[u8]| {
    if let Some((dialect, body)) = common::split(data) {
        if validate(dialect, body).is_ok() {
            let r = repair(dialect, body).expect("what validates also repairs");
            let defects = validate(dialect, &r.body).expect("repaired output parses");
            assert!(defects.is_empty(), "{dialect}: {defects:?}");
            assert!(!repair(dialect, &r.body).unwrap().is_changed());
        }
    }
});
