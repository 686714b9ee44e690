//! The content detector (`toolwarden_wire::detect`): any text, alone and
//! as the output of a few shell commands (a file reader, a Go tool, any
//! other), gets a verdict without a panic, and `explain` agrees with
//! `verdict` on whether it failed; a failure the client's own status
//! states under a flag of success is one `verdict` finds too. The JSON
//! walkers (an object's
//! top-level keys, a batch's outcomes), the first-line rules and the
//! trailers all read it.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolwarden_wire::detect::Detector;

static DETECTOR: LazyLock<Detector> = LazyLock::new(Detector::default);

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let d = &*DETECTOR;
    for command in [None, Some("cat missing.txt"), Some("go build ./..."), Some("npm test")] {
        let verdict = d.verdict_for_command(&text, command);
        let explained = d.explain_for_command(&text, command);
        assert_eq!(verdict.failed, explained.is_some(), "{command:?}: {text:?}");
    }
    if d.client_failure_verdict(&text).failed {
        assert!(d.verdict(&text).failed, "client status: {text:?}");
    }
});
