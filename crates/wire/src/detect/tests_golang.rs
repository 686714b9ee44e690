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

/// Failures without a form the detector can tell from a success by the
/// text alone: a diagnostic with no header and no `go: ` line above it
/// (linters such as revive print the same shape and exit 0). With the
/// command known they are read ([`TOOL_FAILED`]).
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

/// Failures of Go tools that print no header or closing line, each with
/// the command that printed it: outputs of go 1.19 and its gofmt run here
/// (`2>&1`), with their exit status. Read with the command, they are
/// `failure_summary`'s; alone, only the text, they are not told apart
/// from a linter's report or another subcommand's success.
const TOOL_FAILED: &[(&str, &str)] = &[
    // (0) Go 1.21's toolchain refused (as cmd/go formats it; no Go 1.21
    // here): not the note of a switch
    (
        "go build ./...",
        "go: go.mod requires go >= 1.23.0 (running go 1.21.0; GOTOOLCHAIN=local)\n",
    ),
    // (1) go.mod lacks a requirement its dependency's go.mod adds
    (
        "go build ./...",
        "go: updates to go.mod needed; to update it:\n\tgo mod tidy\n",
    ),
    (
        "go build -mod=readonly ./...",
        "go: updates to go.mod needed, disabled by -mod=readonly; to update it:\n\tgo mod tidy\n",
    ),
    (
        "go vet ./...",
        "go: updates to go.mod needed; to update it:\n\tgo mod tidy\n",
    ),
    (
        "go test ./...",
        "go: updates to go.mod needed; to update it:\n\tgo mod tidy\n",
    ),
    // (1) an import no required module provides
    (
        "cd app && go build ./...",
        "main.go:3:8: no required module provides package example.com/x; to add it:\n\tgo get example.com/x\n",
    ),
    (
        "go vet ./... 2>&1",
        "main.go:3:8: no required module provides package example.com/x; to add it:\n\tgo get example.com/x\n",
    ),
    // (1) no go.mod (`go build .` prints `go: go.mod file not found …`,
    // which `failure_statement` reads from the text alone)
    (
        "go build ./...",
        "pattern ./...: directory prefix . does not contain main module or its selected dependencies\n",
    ),
    // (1) with GOPROXY=off
    (
        "go mod tidy",
        "go: finding module for package example.com/x\nexample.com/m imports\n\texample.com/x: cannot find module providing package example.com/x: module lookup disabled by GOPROXY=off\n",
    ),
    // (2) a syntax error
    (
        "gofmt -l main.go",
        "main.go:3:1: expected declaration, found foo\n",
    ),
    (
        "gofmt -d main.go",
        "main.go:3:1: expected declaration, found foo\n",
    ),
    (
        "/usr/bin/gofmt -l .",
        "main.go:3:1: expected declaration, found foo\n",
    ),
    // printf 'package main\nfoo\n' | gofmt is a pipeline: not read so;
    // gofmt reading its standard input (2)
    (
        "gofmt",
        "<standard input>:2:1: expected declaration, found foo\n",
    ),
    // (2)
    (
        "gofmt -l nope.go",
        "stat nope.go: no such file or directory\n",
    ),
    // (2) gofmt over several files: the errors, in the order of its
    // arguments, above the other files' names or diffs
    (
        "gofmt -l .",
        "a.go:1:1: expected 'package', found 'func'\nb.go:2:1: expected declaration, found foo\nc.go\n",
    ),
    (
        "gofmt -d .",
        "a.go:1:1: expected 'package', found 'func'\ndiff c.go.orig c.go\n--- c.go.orig\n+++ c.go\n@@ -1,5 +1,6 @@\n package c\n+\n func C() {\n-x := 1\n-_ = x\n+\tx := 1\n+\t_ = x\n }\n",
    ),
    // (1) go run: the program killed (`os.ProcessState`'s words, printed
    // by go run below the program's output), and the go command's own
    // failures before the program ran
    ("go run .", "working\nsignal: killed\n"),
    (
        "go run .",
        "main.go:3:8: no required module provides package example.com/nothere; to add it:\n\tgo get example.com/nothere\n",
    ),
    ("go run ./nope", "go: no packages loaded from ./nope\n"),
    // (1) go generate: a generator that failed or was not found, a
    // directive it could not read
    (
        "go generate ./...",
        "main.go:3: running \"stringer\": exec: \"stringer\": executable file not found in $PATH\n",
    ),
    (
        "go generate -v ./...",
        "main.go\ngenerating\ngen.go: bad input\nmain.go:3: running \"sh\": exit status 1\n",
    ),
    ("go generate ./...", "main.go:3: mismatched quoted string\n"),
    // (1) go get: module resolution
    (
        "go get example.com/x",
        "go: example.com/x: module lookup disabled by GOPROXY=off\n",
    ),
    // (1) go list without -e, go build: a package's error without a
    // position
    (
        "go list example.com/nothere",
        "no required module provides package example.com/nothere; to add it:\n\tgo get example.com/nothere\n",
    ),
    (
        "go list example.com/nothere",
        "go: finding module for package example.com/nothere\ngo: finding module for package example.com/nothere\ncannot find module providing package example.com/nothere: module lookup disabled by GOPROXY=off\n",
    ),
    (
        "go list ./nope",
        "stat /tmp/probe/nope: directory not found\n",
    ),
    (
        "go build ./nope",
        "stat /tmp/probe/nope: directory not found\n",
    ),
    // (1) go mod init
    (
        "go mod init example.com/n",
        "go: /tmp/probe/go.mod already exists\n",
    ),
    (
        "go mod init",
        "go: cannot determine module path for source directory /tmp/probe (outside GOPATH, module path must be specified)\n\nExample usage:\n\t'go mod init example.com/m' to initialize a v0 or v1 module\n\t'go mod init example.com/m/v2' to initialize a v2 module\n\nRun 'go help mod init' for more information.\n",
    ),
];

/// Successes (0) of the same tools, some in the shape of another's failure.
const TOOL_SUCCEEDED: &[(&str, &str)] = &[
    ("gofmt -l main.go", "main.go\n"),
    (
        "gofmt -d main.go",
        "diff main.go.orig main.go\n--- main.go.orig\n+++ main.go\n@@ -1,5 +1,5 @@\n package main\n \n func main() {\n-x := 1\n+\tx := 1\n }\n",
    ),
    ("go mod verify", "all modules verified\n"),
    ("go test ./...", "?   \texample.com/u\t[no test files]\n"),
    // go mod init prints go build's failure's shape, with its notes
    (
        "go mod init example.com/n",
        "go: creating new go.mod: module example.com/n\ngo: to add module requirements and sums:\n\tgo mod tidy\n",
    ),
    (
        "go mod init example.com/m",
        "go: creating new go.mod: module example.com/m\n",
    ),
    // go get's notes, and its advice below a retracted version's warning
    // (the version already required: nothing added below it)
    (
        "go get example.com/x@v1.0.0",
        "go: downloading example.com/x v1.0.0\ngo: added example.com/x v1.0.0\n",
    ),
    (
        "go get example.com/old",
        "go: downloading example.com/old v1.0.0\ngo: module example.com/old is deprecated: use example.com/x instead.\ngo: added example.com/old v1.0.0\n",
    ),
    (
        "go get example.com/r@v1.0.0",
        "go: warning: example.com/r@v1.0.0: retracted by module author: published by mistake\ngo: to switch to the latest unretracted version, run:\n\tgo get example.com/r@latest\n",
    ),
    (
        "go get example.com/x@none",
        "go: removed example.com/x v1.1.0\n",
    ),
    // go list -e prints the packages' errors in its report
    (
        "go list -e -f '{{range .DepsErrors}}{{.}}{{end}}' .",
        "main.go:3:8: no required module provides package example.com/nothere; to add it:\n\tgo get example.com/nothere\n",
    ),
    (
        "go list -e -f '{{.ImportPath}} {{.Error}}' ./nope example.com/nothere ./bad2",
        "./nope stat /tmp/probe/nope: directory not found\nexample.com/nothere no required module provides package example.com/nothere; to add it:\n\tgo get example.com/nothere\nexample.com/pkg/bad2 bad2/bad.go:1:1: expected 'package', found 'func'\n",
    ),
    // go generate -x: the commands, and a generator's own lines
    (
        "go generate -x ./...",
        "sh -c echo generating pill_string.go; echo main.go:3: wrote 2 types\ngenerating pill_string.go\nmain.go:3: wrote 2 types\n",
    ),
    // gofmt -d of a file whose raw string holds an error's shape, and
    // gofmt printing that source
    (
        "gofmt -d c.go",
        "diff c.go.orig c.go\n--- c.go.orig\n+++ c.go\n@@ -3,7 +3,8 @@\n const Log = `\n main.go:3:1: expected declaration, found foo\n `\n+\n func C() {\n-x := 1\n-_ = x\n+\tx := 1\n+\t_ = x\n }\n",
    ),
    (
        "gofmt c.go",
        "package c\n\nconst Log = `\nmain.go:3:1: expected declaration, found foo\n`\n\nfunc C() {\n\tx := 1\n\t_ = x\n}\n",
    ),
    // cgo's C compiler's warning (CGO_CFLAGS="-g -O2
    // -fno-diagnostics-show-caret": no caret lines)
    (
        "go build ./...",
        "# example.com/c\n./main.go: In function ‘f’:\n./main.go:5:26: warning: unused variable ‘unused’ [-Wunused-variable]\n",
    ),
    // the go command's notes
    ("go build ./...", "go: downloading example.com/dep v1.2.3\n"),
    (
        "go mod tidy",
        "go: finding module for package example.com/x\ngo: found example.com/x in example.com/x v1.0.0\n",
    ),
    // Go 1.21's toolchain notes (no Go 1.21 here: the lines as cmd/go's
    // toolchain/switch.go and select.go format them), after which the
    // chosen toolchain runs the command and prints nothing on success
    (
        "go build ./...",
        "go: go.mod requires go >= 1.23.0; switching to go1.23.4\n",
    ),
    (
        "go install example.com/cmd@latest",
        "go: using go1.23.4 for example.com/cmd@v1.2.0\n",
    ),
    // the same shapes from a program go runs, or another program
    (
        "go run ./cmd/lint",
        "main.go:3:1: exported function Foo should have comment\n",
    ),
    (
        "revive ./...",
        "main.go:1:1: should have a package comment\n",
    ),
];

#[test]
fn a_go_tools_failure_is_read_with_its_program() {
    let d = Detector::default();
    for (command, text) in TOOL_FAILED {
        assert_eq!(
            d.explain_for_command(text, Some(command)),
            Some("failure_summary"),
            "{command}: {text:?}"
        );
        assert_eq!(d.explain(text), None, "the text alone: {text:?}");
    }
    for (command, text) in TOOL_SUCCEEDED {
        assert_eq!(
            d.explain_for_command(text, Some(command)),
            None,
            "{command}: {text:?}"
        );
    }
    // Without `failure_summary`, nothing reads them.
    let off = Detector::new(&super::DetectorConfig {
        disable: vec!["failure_summary".into()],
        ..Default::default()
    })
    .unwrap();
    let (command, text) = TOOL_FAILED[0];
    assert_eq!(off.explain_for_command(text, Some(command)), None);
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

/// go list -e prints the packages' errors in its report and exits 0
/// (outputs of go 1.19 here, `GOPROXY=off GOFLAGS=-mod=mod`): read with
/// its command, the text's failure shapes are the report's; the go
/// command's own failure below it (status 1) and the client's status
/// still count.
#[test]
fn go_list_e_is_a_report() {
    let d = Detector::default();
    let json = "{\n\t\"Dir\": \"/tmp/probe/bad\",\n\t\"ImportPath\": \"example.com/pkg/bad\",\n\t\"Incomplete\": true,\n\t\"GoFiles\": [\n\t\t\"bad.go\"\n\t],\n\t\"Error\": {\n\t\t\"ImportStack\": [\n\t\t\t\"example.com/pkg/bad\"\n\t\t],\n\t\t\"Pos\": \"bad/bad.go:1:1\",\n\t\t\"Err\": \"expected 'package', found 'func'\"\n\t}\n}\n";
    let deps = "go: finding module for package example.com/nothere\nmain.go:3:8: cannot find module providing package example.com/nothere: module lookup disabled by GOPROXY=off\n";
    for (command, text, alone) in [
        ("go list -e -json ./bad", json, "json_error"),
        (
            "go list -e -f '{{range .DepsErrors}}{{.}}{{end}}' .",
            deps,
            "failure_summary",
        ),
    ] {
        assert_eq!(d.explain(text), Some(alone), "the text alone: {text:?}");
        assert_eq!(
            d.explain_for_command(text, Some(command)),
            None,
            "{command}"
        );
    }
    // `--e` and `-e=1` are `-e` (go 1.19, status 0)
    for (command, text) in [
        ("go list --e -f '{{range .DepsErrors}}{{.}}{{end}}' .", deps),
        (
            "go list --e -f '{{.ImportPath}} {{.Error}}' ./bad example.com/nothere",
            "go: finding module for package example.com/nothere\ngo: finding module for package example.com/nothere\nexample.com/pkg/bad bad/bad.go:1:1: expected 'package', found 'func'\nexample.com/nothere cannot find module providing package example.com/nothere: module lookup disabled by GOPROXY=off\n",
        ),
        (
            "go list -e=1 -f '{{.ImportPath}} {{.Error}}' ./bad",
            "example.com/pkg/bad bad/bad.go:1:1: expected 'package', found 'func'\n",
        ),
    ] {
        assert_eq!(
            d.explain_for_command(text, Some(command)),
            None,
            "{command}"
        );
    }
    let no_module = "go: go.mod file not found in current directory or any parent directory; see 'go help modules'\n";
    assert_eq!(
        d.explain_for_command(no_module, Some("go list -e .")),
        Some("failure_summary")
    );
    assert_eq!(
        d.explain_for_command(&format!("Exit code 1\n{deps}"), Some("go list -e .")),
        Some("exit_status")
    );
    assert_eq!(
        d.explain_for_command(
            "bash: line 1: go: command not found\n",
            Some("go list -e .")
        ),
        Some("os_error")
    );
}

/// Which commands run a Go tool the verdict reads so.
#[test]
fn a_go_tools_command() {
    use super::{GoTool, Program};
    let tool = |c: &str| Program::of_command(c).and_then(Program::go_tool);
    for c in [
        "go build ./...",
        "cd app && go vet ./... 2>&1",
        "/usr/local/go/bin/go test -run TestX ./pkg",
        "go -C app install ./cmd/x",
        "go mod tidy",
        "set -e; go mod download",
    ] {
        assert_eq!(tool(c), Some(GoTool::Build), "{c}");
    }
    assert_eq!(tool("gofmt -l ."), Some(GoTool::Gofmt));
    for c in [
        "go get example.com/x",
        "go list ./...",
        "go list -f '{{.Dir}}' ./...",
        "go mod init example.com/m",
    ] {
        assert_eq!(tool(c), Some(GoTool::Build), "{c}");
    }
    assert_eq!(tool("go run ."), Some(GoTool::Run));
    assert_eq!(tool("cd cmd && go run main.go -v"), Some(GoTool::Run));
    assert_eq!(tool("go generate ./..."), Some(GoTool::Generate));
    assert_eq!(tool("go list -e ./..."), Some(GoTool::Report));
    assert_eq!(tool("go list -deps -e -json ."), Some(GoTool::Report));
    // Its stderr whole above its stdout's tail (see a_go_commands_output_through_tail).
    assert_eq!(tool("go build ./... | tail"), Some(GoTool::Build));
    for c in [
        "go build ./... && ./app",
        "go build ./... | head",
        "make && go build ./...",
        "go build ./... > build.log",
        "go",
        "gofmt -l . | wc -l",
    ] {
        assert_eq!(tool(c), None, "{c}");
    }
    // A reader is a reader, not a tool.
    let tail = Program::of_command("tail -3 build.log").unwrap();
    assert_eq!((tail.reader(), tail.go_tool()), (Some("tail"), None));
    assert_eq!(Program::of_command("go build").unwrap().reader(), None);
}

proptest! {
    /// Any output, then a go command's failure, is a failure of `go
    /// build`; any output ending in ordinary lines (the command's notes,
    /// `-v`'s package paths) is not.
    #[test]
    fn output_then_a_go_commands_failure(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,:/_-]{0,60}", 0..30),
        i in 0..4usize,
        paths in proptest::collection::vec("[a-z]{1,8}(/[a-z]{1,8}){0,3}", 1..5),
    ) {
        let d = Detector::default();
        let text = format!("{}\n{}", lines.join("\n"), TOOL_FAILED[i].1);
        prop_assert_eq!(d.explain_for_command(&text, Some("go build ./...")), Some("failure_summary"), "{:?}", text);
        let ok = format!("{}\ngo: downloading example.com/x v1.0.0\n{}\n", lines.join("\n"), paths.join("\n"));
        prop_assert_eq!(d.explain_for_command(&ok, Some("go build -v ./...")), None, "{:?}", ok);
    }

    /// Any bytes, read as a Go tool's output, are read without a panic;
    /// any command line is parsed without one.
    #[test]
    fn any_go_tool_output_is_read(
        text in proptest::collection::vec(
            prop_oneof![
                Just("go: ".to_string()),
                Just("\t".to_string()),
                Just("main.go:3:1: ".to_string()),
                Just(" imports".to_string()),
                Just("pattern ".to_string()),
                Just("signal: ".to_string()),
                Just("main.go:3: running \"x\": ".to_string()),
                Just("\tgo get ".to_string()),
                Just("Run 'go help mod init' for more information.".to_string()),
                Just("\n".to_string()),
                Just("\r".to_string()),
                any::<String>(),
            ],
            0..40,
        ),
        command in "(go|gofmt|cd|-C|-e|build|run|generate|get|list|init|mod|tidy|[ ;|&'\"]|[a-z./-]{1,6}){0,12}",
    ) {
        let text = text.concat();
        let d = Detector::default();
        for tool in ["go build ./...", "gofmt -l .", "go run .", "go generate ./...", "go list -e ./..."] {
            let _ = d.explain_for_command(&text, Some(tool));
        }
        let _ = d.explain_for_command(&text, Some(&command));
    }
}

proptest! {
    /// The go command's failure is go run's (and go generate's) when the
    /// output is the go command's alone; below any line of a program's
    /// own output it is the program's, and go run's program ended with
    /// `signal: …` after any output.
    #[test]
    fn go_runs_program_output_is_the_programs(
        lines in proptest::collection::vec("[a-zA-Z0-9][a-zA-Z0-9 .,:/_-]{0,60}", 1..20),
        notes in proptest::collection::vec("[a-z./]{1,20} v[0-9]\\.[0-9]\\.[0-9]", 0..4),
        i in 0..3usize,
        signal in "(killed|interrupt|segmentation fault|terminated)",
    ) {
        let d = Detector::default();
        let go_failures = [
            "go: updates to go.mod needed; to update it:\n\tgo mod tidy\n",
            "main.go:3:8: no required module provides package example.com/x; to add it:\n\tgo get example.com/x\n",
            "go: no packages loaded from ./nope\n",
        ];
        let notes: String = notes.iter().map(|n| format!("go: downloading {n}\n")).collect();
        let alone = format!("{notes}{}", go_failures[i]);
        for command in ["go run .", "go generate ./..."] {
            prop_assert_eq!(d.explain_for_command(&alone, Some(command)), Some("failure_summary"), "{:?}", alone);
        }
        let program = format!("{}\n{}", lines.join("\n"), go_failures[i]);
        prop_assert_eq!(d.explain(&program), d.explain_for_command(&program, Some("go run .")), "{:?}", program);
        let killed = format!("{}\nsignal: {signal}\n", lines.join("\n"));
        prop_assert_eq!(d.explain_for_command(&killed, Some("go run .")), Some("failure_summary"), "{:?}", killed);
    }
}

/// gofmt 1.19's `-d` output for `c.go` of `n` functions written `func
/// Fi( a int,b int ) int {` / `return a+b*i` / `}` below `package c`
/// (`raw_commands.py`'s `go_unformatted`), byte for byte as gofmt printed
/// it here for n = 120 (12,113 bytes).
fn gofmt_long_diff(n: usize) -> String {
    let mut out = format!(
        "diff c.go.orig c.go\n--- c.go.orig\n+++ c.go\n@@ -1,{} +1,{} @@\n package c\n",
        3 * n + 1,
        3 * n + 2
    );
    for i in 0..n {
        out.push_str(&format!(
            "-func F{i}( a int,b int ) int {{\n-return a+b*{i}\n"
        ));
        if i + 1 < n {
            out.push_str("-}\n");
        }
    }
    out.push_str("+\n");
    for i in 0..n {
        out.push_str(&format!(
            "+func F{i}(a int, b int) int {{\n+\treturn a + b*{i}\n"
        ));
        out.push_str(if i + 1 < n { "+}\n" } else { " }\n" });
    }
    out
}

/// gofmt's errors come in the order of its arguments, so above a later
/// file's output, however long: `gofmt -d .` printing a.go's error above
/// c.go's 12 KB diff, `gofmt -l .` above 250 names (status 2; before,
/// only the last 8 KiB and 200 lines were read). The same outputs without
/// the error, and a formatted source longer than 8 KiB with the error's
/// shape in a raw string at its top (`gofmt c.go`, status 0), are not.
#[test]
fn gofmt_errors_above_long_outputs() {
    let d = Detector::default();
    let error = "a.go:1:1: expected 'package', found 'func'\n";
    let diff = gofmt_long_diff(120);
    assert_eq!(diff.len(), 12_113);
    let names: String = (0..250).map(|i| format!("c{i:03}.go\n")).collect();
    for output in [format!("{error}{diff}"), format!("{error}{names}")] {
        assert_eq!(
            d.explain_for_command(&output, Some("gofmt -d .")),
            Some("failure_summary"),
            "{}",
            &output[..200]
        );
        assert_eq!(d.explain(&output), None);
    }
    for output in [diff, names] {
        assert_eq!(d.explain_for_command(&output, Some("gofmt -l .")), None);
    }
    let source = format!(
        "package c\n\nconst Doc = `\n{error}b.go\n`\n{}",
        (0..300)
            .map(|i| format!("\nfunc F{i}(a int, b int) int {{\n\treturn a + b*{i}\n}}\n"))
            .collect::<String>()
    );
    assert_eq!(source.len(), 15_155);
    assert_eq!(d.explain_for_command(&source, Some("gofmt c.go")), None);
    // A diff's line longer than a report's line is still a diff's.
    let long = format!(
        "{error}diff c.go.orig c.go\n+\tx := \"{}\"\n",
        "y".repeat(2000)
    );
    assert_eq!(
        d.explain_for_command(&long, Some("gofmt -d .")),
        Some("failure_summary")
    );
}

/// go generate's own fatal errors (cmd/go's `log.Fatalf("generate: %s",
/// err)`, status 1), as go 1.19 printed them here: `go generate -run '['
/// ./...`, and a file an earlier directive removed (`//go:generate rm -f
/// b.go`). A generator's own `log.Fatalf` lines end with go generate's
/// report of its directive, read before; its `log.Printf` lines on
/// success are nothing.
#[test]
fn go_generates_fatal_errors() {
    let d = Detector::default();
    // The second reads as a program's complaint from the text alone.
    for (output, alone) in [
        (
            "generate: error parsing regexp: missing closing ]: `[`\n",
            None,
        ),
        (
            "generate: open /tmp/probe/b.go: no such file or directory\n",
            Some("shell_diagnostic"),
        ),
    ] {
        assert_eq!(d.explain(output), alone, "the text alone: {output:?}");
        assert_eq!(
            d.explain_for_command(output, Some("go generate ./...")),
            alone.or(Some("failure_summary")),
            "{output:?}"
        );
        // Not go run's: its program may print such a line.
        assert_eq!(d.explain_for_command(output, Some("go run .")), alone);
    }
    // Below a generator's output, it may be the generator's.
    assert_eq!(
        d.explain_for_command(
            "generating pill_string.go\ngenerate: error parsing regexp: missing closing ]: `[`\n",
            Some("go generate ./...")
        ),
        None
    );
    let fatalf = "2026/12/01 19:36:46 reading pills.json\n2026/12/01 19:36:46 gen: pills.json: unexpected end of JSON input\nexit status 1\nmain.go:3: running \"go\": exit status 1\n";
    assert_eq!(
        d.explain_for_command(fatalf, Some("go generate ./...")),
        Some("failure_summary")
    );
    let logged = "main.go\n2026/12/01 19:36:47 reading pills.json\n2026/12/01 19:36:47 wrote pill_string.go: 2 types\ngen/main.go\n";
    assert_eq!(
        d.explain_for_command(logged, Some("go generate -v ./...")),
        None
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// gofmt's error on any line among any number of other files' names
    /// or diff lines (of any length) is read; the same lines without it,
    /// or with a line of neither kind (a source's), are not.
    #[test]
    fn gofmt_errors_on_any_line(
        lines in proptest::collection::vec(
            prop_oneof![
                "[a-z/]{1,12}\\.go",
                "[ +-][ -~]{0,40}",
                "[ +-][ -~]{1100,1200}",
                Just("@@ -1,3 +1,3 @@".to_string()),
                Just("diff c.go.orig c.go".to_string()),
            ],
            0..300,
        ),
        at in any::<prop::sample::Index>(),
        source in "(package|func|const|\\}|\\)|import)[ -~]{0,20}",
    ) {
        let d = Detector::default();
        let error = "b.go:2:1: expected declaration, found foo";
        let mut with = lines.clone();
        with.insert(at.index(lines.len() + 1), error.to_string());
        let text = format!("{}\n", with.join("\n"));
        prop_assert_eq!(d.explain_for_command(&text, Some("gofmt -l .")), Some("failure_summary"));
        let without = format!("{}\n", lines.join("\n"));
        prop_assert_eq!(d.explain_for_command(&without, Some("gofmt -d .")), None);
        with.insert(at.index(with.len() + 1), source);
        let text = format!("{}\n", with.join("\n"));
        prop_assert_eq!(d.explain_for_command(&text, Some("gofmt c.go")), None);
    }
}

/// The go command's output through `tail` with a line count (`set -o
/// pipefail; … 2>&1 | tail -3`, go 1.19 here, the status go's): its last
/// lines, read as its output's end; without `2>&1`, its stderr whole above
/// its stdout's tail. go run's is not (its program printed the line,
/// status 0), nor `head`'s or gofmt's.
#[test]
fn a_go_commands_output_through_tail() {
    use super::{GoTool, Program};
    let d = Detector::default();
    for (command, output) in [
        (
            "set -o pipefail; go build ./... 2>&1 | tail -3",
            "./main.go:6:6: undefined: c\n./main.go:7:6: undefined: d\n./main.go:8:6: undefined: e\n",
        ),
        (
            "set -o pipefail; GOFLAGS=-mod=readonly go build ./... 2>&1 | tail -n 2",
            "main.go:3:8: cannot find module providing package github.com/nobody/nothing: import lookup disabled by -mod=readonly\n",
        ),
        // Without pipefail the status is tail's (0), but the output is
        // still the build's failure, as `make 2>&1 | tail -3`'s `make:
        // *** … Error 1` is make's.
        (
            "go build ./... 2>&1 | tail -3",
            "go: updates to go.mod needed; to update it:\n\tgo mod tidy\n",
        ),
        // Without `2>&1` its stderr comes whole, above its stdout's tail
        // (here empty): go list's report of a package it cannot parse (1).
        (
            "set -o pipefail; go list ./... | tail -3",
            "bad/bad.go:1:1: expected 'package', found 'func'\n",
        ),
    ] {
        assert_eq!(
            d.explain_for_command(output, Some(command)),
            Some("failure_summary"),
            "{command}"
        );
        assert_eq!(d.explain(output), None, "the text alone: {output:?}");
    }
    for (command, output) in [
        (
            "set -o pipefail; go build -v ./... 2>&1 | tail -3",
            "example.com/pkg\n",
        ),
        (
            "set -o pipefail; go test -v ./... 2>&1 | tail -5",
            "=== RUN   TestRetryAfterFAIL\n    main_test.go:12: FAIL on the first try is expected; the retry passes\n--- PASS: TestRetryAfterFAIL (0.00s)\nPASS\nok  \texample.com/pkg\t0.010s\n",
        ),
        (
            "set -o pipefail; go mod init example.com/n 2>&1 | tail -2",
            "go: to add module requirements and sums:\n\tgo mod tidy\n",
        ),
        (
            "set -o pipefail; go run . 2>&1 | tail -1",
            "main.go:3:1: exported function Foo should have comment\n",
        ),
        ("set -o pipefail; go vet ./... | tail -3", ""),
    ] {
        assert_eq!(
            d.explain_for_command(output, Some(command)),
            None,
            "{command}"
        );
    }
    let tool = |c: &str| Program::of_command(c).and_then(Program::go_tool);
    for c in [
        "go build ./... 2>&1 | tail",
        "go vet ./... 2>/dev/null | tail -n 20",
        "cd app && go test ./... 2>&1 | tail -n +3",
        "go build ./... 2>&1 | tail --lines=5 | tail -2",
        "go build 2>&1 | tail -20 2>&1",
        "go mod tidy 2>&1 | tail -n5",
        "go build ./... | tail -5",
        "go list ./... | tail -3",
    ] {
        assert_eq!(tool(c), Some(GoTool::Build), "{c}");
    }
    for c in [
        "go build ./... 2>&1 | head -5",
        "go build ./... | head -5",
        "go build ./... 2>&1 | tail -c 100",
        "go build ./... 2>&1 | tail -f",
        "go build ./... 2>&1 | tail -n",
        "go build ./... 2>&1 | tail -5 build.log",
        "go build ./... 2>&1 | grep error | tail -5",
        "go run . 2>&1 | tail -5",
        "go generate ./... 2>&1 | tail -5",
        "gofmt -l . 2>&1 | tail -5",
        "go list -e ./... 2>&1 | tail -5",
        "tail -5 | go build 2>&1",
    ] {
        assert_eq!(tool(c), None, "{c}");
    }
}

/// The labelled rows whose command is the go command acting on packages
/// or the module (`GoTool::Build`): what the tail properties cut.
fn go_build_rows() -> Vec<&'static (&'static str, &'static str)> {
    TOOL_FAILED
        .iter()
        .chain(TOOL_SUCCEEDED)
        .filter(|(c, _)| {
            super::Program::of_command(c).and_then(super::Program::go_tool)
                == Some(super::GoTool::Build)
        })
        .collect()
}

proptest! {
    /// The last lines of a go command's output, read through `tail -n N`,
    /// are a failure only when the whole output is one.
    #[test]
    fn a_tail_of_a_go_commands_output_reads_as_its_whole_or_not_at_all(
        i in any::<prop::sample::Index>(),
        before in proptest::collection::vec("go: downloading [a-z./]{1,12} v1\\.0\\.0|[a-z./]{1,16}|\t[a-z ]{1,20}", 0..6),
        n in 1usize..12,
    ) {
        let d = Detector::default();
        let rows = go_build_rows();
        let (command, text) = *rows[i.index(rows.len())];
        let whole = format!("{}{}{text}", before.join("\n"), if before.is_empty() { "" } else { "\n" });
        let lines: Vec<&str> = whole.lines().collect();
        let shown = format!("{}\n", lines[lines.len().saturating_sub(n)..].join("\n"));
        let full = d.explain_for_command(&whole, Some(command));
        let piped = format!("{command} 2>&1 | tail -n {n}");
        let read = d.explain_for_command(&shown, Some(&piped));
        prop_assert!(read.is_none() || full.is_some(), "{:?} for {:?} of {:?}", read, shown, whole);
    }

    /// Without `2>&1` the go command's stderr comes whole, above the last
    /// lines of its stdout that tail shows: read as the go command's whole
    /// output when its stdout is empty; with lines of its stdout shown
    /// (package paths), a failure only when its stderr alone is one.
    #[test]
    fn a_go_commands_stderr_above_its_stdouts_tail(
        i in any::<prop::sample::Index>(),
        stdout in proptest::collection::vec("[a-z./]{1,16}", 0..6),
        n in 1usize..12,
    ) {
        let d = Detector::default();
        let rows = go_build_rows();
        let (command, stderr) = *rows[i.index(rows.len())];
        let shown = &stdout[stdout.len().saturating_sub(n)..];
        let text: String = std::iter::once(stderr.to_owned())
            .chain(shown.iter().map(|l| format!("{l}\n")))
            .collect();
        let piped = format!("{command} | tail -n {n}");
        let read = d.explain_for_command(&text, Some(&piped));
        let alone = d.explain_for_command(stderr, Some(command));
        if shown.is_empty() {
            prop_assert_eq!(read, alone, "{:?}", text);
        } else {
            prop_assert!(read.is_none() || alone.is_some(), "{:?} for {:?}", read, text);
        }
    }
}
