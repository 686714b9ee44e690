//! Tests of the detector on Go's reports (`golang.rs`) and eslint's
//! closing lines: outputs of go 1.19 and eslint 9 run here, each with its
//! exit status, as `scripts/detect-data/raw_commands.py` records them
//! (temp paths replaced by `/tmp/probe`). No exit status is in the text.

use proptest::prelude::*;

use super::Detector;

/// Outputs of Go commands that failed, with the rule that must find each.
const FAILED: &[(&str, &str)] = &[
    // go build ./... (2)
    (
        "# example.com/pkg\n./main.go:6:14: undefined: x\n./main.go:7:2: y declared but not used\n",
        "failure_summary",
    ),
    // go run main.go (2)
    (
        "# command-line-arguments\n./main.go:6:14: undefined: x\n./main.go:7:2: y declared but not used\n",
        "failure_summary",
    ),
    // go build ./... (2)
    (
        "# example.com/pkg\n./main.go:6:1: syntax error: unexpected EOF, expecting }\n",
        "failure_summary",
    ),
    // go vet ./... (2)
    (
        "# example.com/pkg\n./main.go:6:2: fmt.Printf format %d has arg \"s\" of wrong type string\n",
        "failure_summary",
    ),
    // go build ./... with GOPROXY=off (1): a loader error, no header
    (
        "go: finding module for package github.com/nobody/nothing\nmain.go:3:8: cannot find module providing package github.com/nobody/nothing: module lookup disabled by GOPROXY=off\n",
        "failure_summary",
    ),
    // go test ./... (1)
    (
        "--- FAIL: TestAdd (0.00s)\n    main_test.go:7: Add(1, 2) = 3, want 4\nFAIL\nFAIL\texample.com/pkg\t0.002s\nFAIL\n",
        "failure_summary",
    ),
    // go test -v ./... (1)
    (
        "=== RUN   TestAdd\n    main_test.go:7: Add(1, 2) = 3, want 4\n--- FAIL: TestAdd (0.00s)\n=== RUN   TestOk\n--- PASS: TestOk (0.00s)\nFAIL\nFAIL\texample.com/pkg\t0.029s\nFAIL\n",
        "failure_summary",
    ),
    // go test ./... (2), the test build failed
    (
        "# example.com/pkg [example.com/pkg.test]\n./main_test.go:6:6: undefined: y\nFAIL\texample.com/pkg [build failed]\nFAIL\n",
        "failure_summary",
    ),
    // go test ./... (1), one package of two failed
    (
        "ok  \texample.com/pkg\t0.002s\n--- FAIL: TestAdd (0.00s)\n    sub_test.go:7: Add(1, 2) = 3, want 4\nFAIL\nFAIL\texample.com/pkg/sub\t0.003s\nFAIL\n",
        "failure_summary",
    ),
    // go test (1), the package in the current directory: the test
    // binary's `exit status 1` (the fourth line) is go's, not a client's
    // header; go test's closing line finds it
    (
        "--- FAIL: TestAdd (0.00s)\n    main_test.go:7: Add(1, 2) = 3, want 4\nFAIL\nexit status 1\nFAIL\texample.com/pkg\t0.002s\n",
        "failure_summary",
    ),
    // go test (2)
    (
        "# example.com/pkg [example.com/pkg.test]\n./main_test.go:6:6: undefined: y\nFAIL\texample.com/pkg [build failed]\n",
        "failure_summary",
    ),
    // go build -o app . && ./app (2): the program panicked after output
    (
        "loading 3 files\npanic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x48101e]\n\ngoroutine 1 [running]:\nmain.main()\n\t/tmp/probe/main.go:8 +0x5e\n",
        "crash_trace",
    ),
];

/// Outputs of Go commands that succeeded (0), some of them with Go's
/// failure forms in them.
const SUCCEEDED: &[&str] = &[
    // go build -v ./...
    "example.com/pkg\n",
    // go vet ./... && echo vet clean
    "vet clean\n",
    // go test ./...
    "ok  \texample.com/pkg\t0.002s\n",
    // go test -v ./..., a passing test that logs `FAIL`
    "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestRetryAfterFAIL\n    main_test.go:12: FAIL on the first try is expected; the retry passes\n--- PASS: TestRetryAfterFAIL (0.00s)\nPASS\nok  \texample.com/pkg\t0.002s\n",
    // go run . of a program that prints a report's lines, then more
    "# example.com/pkg\n./main.go:6:14: undefined: x\nfixed in 1.2.3\n",
];

/// Failures without a form the detector can tell from a success: a
/// diagnostic with no header and no `go: ` line above it (linters such as
/// revive print the same shape and exit 0).
const NOT_FOUND: &[&str] = &[
    // GOFLAGS=-mod=readonly go build ./... (1)
    "main.go:3:8: cannot find module providing package github.com/nobody/nothing: import lookup disabled by -mod=readonly\n",
    // gofmt -l . (2)
    "main.go:1:1: expected 'package', found 'func'\n",
];

#[test]
fn go_reports() {
    let d = Detector::default();
    for (text, rule) in FAILED {
        assert_eq!(d.explain(text), Some(*rule), "should fire {rule}: {text:?}");
    }
    for text in SUCCEEDED {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
    for text in NOT_FOUND {
        assert_eq!(d.explain(text), None, "not told apart: {text:?}");
    }
}

#[test]
fn a_go_report_needs_its_header_and_its_end() {
    let d = Detector::default();
    // A diagnostic below some other line (a `go build` step followed by a
    // tool's output of the same shape) is not a report's top.
    assert_eq!(d.explain("building\n./main.go:6:14: undefined: x\n"), None);
    // A header of many words is a Markdown title, not a package's.
    assert_eq!(
        d.explain("# Known issues\n./main.go:6:14: undefined: x\n"),
        None
    );
    // A bare `FAIL` without go test's package line above it.
    assert_eq!(d.explain("checking\nFAIL\n"), None);
    assert_eq!(d.explain("FAIL\n"), None);
    // `FAIL` and a package, but not go test's spacing (a tab, then the
    // time or the bracket).
    assert_eq!(d.explain("FAIL example.com/pkg 0.002s\n"), None);
    // A panic's frames that the program went on after (recovered).
    assert_eq!(
        d.explain("starting\npanic: x\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:8 +0x5e\nrecovered, continuing\n"),
        None
    );
    // Frames without a panic above them (runtime/debug.PrintStack).
    assert_eq!(
        d.explain("starting\ngoroutine 1 [running]:\nruntime/debug.Stack()\n\t/usr/lib/go/src/runtime/debug/stack.go:24 +0x5e\nmain.main()\n\t/src/main.go:8 +0x5e\n"),
        None
    );
}

/// eslint 9's stylish format: its summary counts errors; warnings alone
/// exit 0, unless `--max-warnings` is exceeded.
#[test]
fn eslint_summaries() {
    let d = Detector::default();
    // eslint a.js (1)
    let errors = "\n/tmp/probe/a.js\n  1:7   error  'unused' is assigned a value but never used  no-unused-vars\n  2:13  error  'notDefined' is not defined                  no-undef\n\n✖ 2 problems (2 errors, 0 warnings)\n\n";
    assert_eq!(d.explain(errors), Some("failure_summary"));
    // FORCE_COLOR=1 eslint a.js (1): coloured, its last line colour codes only
    let coloured = "\x1b[0m\x1b[0m\n\x1b[0m\x1b[4m/tmp/probe/a.js\x1b[24m\x1b[0m\n\x1b[0m  \x1b[2m1:7\x1b[22m  \x1b[31merror\x1b[39m  'unused' is assigned a value but never used  \x1b[2mno-unused-vars\x1b[22m\x1b[0m\n\x1b[0m\x1b[0m\n\x1b[0m\x1b[31m\x1b[1m✖ 1 problem (1 error, 0 warnings)\x1b[22m\x1b[39m\x1b[0m\n\x1b[0m\x1b[31m\x1b[1m\x1b[22m\x1b[39m\x1b[0m\n";
    assert_eq!(d.explain(coloured), Some("failure_summary"));
    // eslint --max-warnings 0 (1)
    let too_many = "\n/tmp/probe/a.js\n  1:1  warning  Unexpected var, use let or const instead  no-var\n\n✖ 1 problem (0 errors, 1 warning)\n  0 errors and 1 warning potentially fixable with the `--fix` option.\n\nESLint found too many warnings (maximum: 0).\n";
    assert_eq!(d.explain(too_many), Some("failure_summary"));
    // eslint a.js (0): warnings only
    let warnings = "\n/tmp/probe/a.js\n  1:1  warning  Unexpected var, use let or const instead  no-var\n\n✖ 1 problem (0 errors, 1 warning)\n  0 errors and 1 warning potentially fixable with the `--fix` option.\n\n";
    assert_eq!(d.explain(warnings), None);
    // errors that --fix can fix: the advice line below the summary
    let fixable = "\n/tmp/probe/a.js\n  1:1  error  Unexpected var, use let or const instead  no-var\n\n✖ 1 problem (1 error, 0 warnings)\n  1 error and 0 warnings potentially fixable with the `--fix` option.\n\n";
    assert_eq!(d.explain(fixable), Some("failure_summary"));
}

proptest! {
    /// Any output (lines of ordinary text) followed by a failed Go
    /// command's output is a failure, whatever rule finds it first.
    #[test]
    fn output_then_a_go_failure(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,:/_-]{0,60}", 0..40),
        i in 0..FAILED.len(),
    ) {
        let text = format!("{}\n{}", lines.join("\n"), FAILED[i].0);
        prop_assert!(Detector::default().is_failure(&text), "{text:?}");
    }

    /// Any output, then a Go build report (a header, diagnostics and their
    /// continuations), is a failure; with a line of ordinary output below
    /// (the command went on) it is not `failure_summary`'s.
    #[test]
    fn output_then_a_go_report(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,:/_-]{0,60}", 0..20),
        header in prop_oneof![
            Just("# example.com/pkg"),
            Just("# command-line-arguments"),
            Just("# example.com/pkg [example.com/pkg.test]"),
            Just("go: downloading example.com/dep v1.2.3"),
        ],
        report in proptest::collection::vec(
            prop_oneof![
                Just("./main.go:6:14: undefined: x"),
                Just("../lib/a_test.go:12:2: y declared but not used"),
                Just("/src/b.go:3: missing return"),
                Just("\thave (int)"),
                Just("\twant (string)"),
            ],
            0..12,
        ),
        last in "[a-z][a-z ]{0,30}[a-z]",
    ) {
        let text = format!(
            "{}\n{header}\n./main.go:6:14: undefined: x\n{}\n",
            lines.join("\n"),
            report.join("\n"),
        );
        let d = Detector::default();
        prop_assert!(d.is_failure(&text), "{text:?}");
        let went_on = format!("{text}{last}\n");
        prop_assert_ne!(d.explain(&went_on), Some("failure_summary"), "{:?}", went_on);
    }

    /// Any tail of Go-shaped lines, cut anywhere, is read without a panic.
    #[test]
    fn no_go_tail_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                "\\PC{0,40}".prop_map(|s| s),
                Just("\n".to_owned()),
                Just("# example.com/pkg\n".to_owned()),
                Just("./main.go:6:14: undefined: x\n".to_owned()),
                Just("\t/src/main.go:8 +0x5e\n".to_owned()),
                Just("goroutine 1 [running]:\n".to_owned()),
                Just("panic: x\n".to_owned()),
                Just("FAIL\texample.com/pkg\t0.002s\n".to_owned()),
                Just("FAIL\n".to_owned()),
                Just("\r\n".to_owned()),
                Just("é€😀".to_owned()),
                Just("✖ 1 problem (1 error, 0 warnings)".to_owned()),
            ],
            0..300,
        )
    ) {
        let _ = Detector::default().explain(&parts.concat());
    }

    /// go test's failed-package line, then only more packages' lines and
    /// the bare `FAIL`, is a failure whatever the package names and times.
    #[test]
    fn go_test_failed_packages(
        pkg in "[a-z][a-z0-9.]{0,20}(/[a-z0-9_]{1,10}){0,3}",
        secs in 0u32..100_000,
        ok_after in proptest::collection::vec("[a-z][a-z0-9./]{0,20}", 0..5),
    ) {
        let mut text = format!("--- FAIL: TestX (0.00s)\nFAIL\nFAIL\t{pkg}\t{}.{:03}s\n", secs / 1000, secs % 1000);
        for p in &ok_after {
            text.push_str(&format!("ok  \t{p}\t0.001s\n"));
        }
        text.push_str("FAIL\n");
        let d = Detector::default();
        prop_assert_eq!(d.explain(&text), Some("failure_summary"), "{:?}", text);
    }
}

/// go vet prints a type error after its name, below the package header
/// (go vet ./..., status 2): a report read from the text alone.
#[test]
fn vets_type_error_is_a_report() {
    let d = Detector::default();
    let text = "# example.com/m\nvet: ./main.go:4:1: x declared but not used\n";
    assert_eq!(d.explain(text), Some("failure_summary"));
    // A header above only a warning of cgo's C compiler (status 0):
    // CGO_CFLAGS="-g -O2 -fno-diagnostics-show-caret" go build ./...
    let warning =
        "# example.com/c\n./main.go:5:26: warning: unused variable ‘unused’ [-Wunused-variable]\n";
    assert_eq!(d.explain(warning), None);
}
