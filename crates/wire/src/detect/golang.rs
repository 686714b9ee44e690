//! Go's own reports of a failure at the end of a command's output: part
//! of the `failure_summary` rule (the go command's reports hold no `error`
//! word) and of `crash_trace` (a panic).
//!
//! | program | the output ends with |
//! |---|---|
//! | `go build`, `go vet`, `go run` | a report: the package's header `# example.com/pkg` (`# example.com/pkg [example.com/pkg.test]` for a test build, `# command-line-arguments` for files), then its diagnostics `./main.go:6:14: undefined: x` (vet's type errors `vet: ./main.go:4:1: …`; not cgo's C compiler's `warning:` or `note:`), with tab-indented continuations (`\thave (int)`) and `too many errors`; or a diagnostic below a `go: …` line (`go: finding module for package …`) |
//! | `go test` | `FAIL\texample.com/pkg\t0.002s`, `FAIL\texample.com/pkg [build failed]`, or a bare `FAIL` below such a line (`go test ./...`) |
//! | a Go program | a panic: `panic: …` or `fatal error: …`, then `goroutine 1 [running]:` and its frames, the last `\t/src/main.go:8 +0x5e` |
//!
//! A report with a line of any other kind below its diagnostics (the
//! command went on: `go build && ./app` printed something, a program that
//! prints such lines and then more) is not one; nor, from the text alone,
//! is a diagnostic without the header or a `go: ` line above it (gofmt's
//! `main.go:1:1: expected 'package', found 'func'`, the go command's
//! `main.go:3:8: no required module provides package …` under
//! `-mod=readonly`: linters such as revive print the same shape and exit
//! 0), or the go command's own error (`go: updates to go.mod needed; to
//! update it:` above `\tgo mod tidy`, the shape of `go mod init`'s
//! success). With the call's program known to be such a tool (a
//! [`GoTool`](super::GoTool): `go build`, `go vet`, `go test`, `go get`,
//! `go list`, `go mod tidy`, `go mod init`, `go run`, `go generate`,
//! gofmt), [`tool_failed`] reads those. `ok  \texample.com/pkg`,
//! `PASS` and `--- PASS:` lines are a passing run's.
//!
//! Only the last [`GO_TAIL_BYTES`] bytes are read, at most
//! [`MAX_REPORT_LINES`] lines (gofmt's last [`GOFMT_BYTES`]: its errors
//! come above other files' names and diffs); the common output is left
//! at its last line (no `.go:`, not tab-indented, not `FAIL`), gofmt's
//! when it holds nothing an error holds.

use std::sync::LazyLock;

use memchr::memmem;
use regex::bytes::Regex;

/// How much of the end of the content is read (go build stops at ten
/// errors: `too many errors`).
pub(super) const GO_TAIL_BYTES: usize = 8 * 1024;
/// The most lines of a report read, from the end.
const MAX_REPORT_LINES: usize = 200;
/// The most tab-indented lines in a row (a diagnostic's continuation, a
/// panic's frames of one goroutine are a few; a file's text is not).
const MAX_INDENTED_RUN: usize = 32;
/// The longest line read (a longer one ends the report).
const LINE_BYTES: usize = 1024;

/// A diagnostic of the go command, the compiler or vet: a `.go` file, its
/// line and column, a space, the message (case-sensitive, anchored); vet
/// prints a type error after its name (`vet: ./main.go:4:1: x declared
/// but not used`).
static DIAGNOSTIC: LazyLock<Regex> =
    LazyLock::new(|| build(r"^(?:vet: )?(?:[^\s:]*/)?[^\s:/]+\.go:\d+(?::\d+)?: \S"));

/// gofmt's report of a file it could not read: a syntax error at its
/// position (`main.go:3:1: expected declaration, found foo`, `<standard
/// input>:2:1: …`; the file named as given, spaces too), or Go's
/// `PathError` (`stat nope.go: no such file or directory`).
static GOFMT_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    build(concat!(
        r"^(?:(?:<standard input>|[^\t]*\.go):\d+:\d+: \S",
        r"|(?:open|stat|lstat|read) [^\t]+: (?:no such file or directory|permission denied",
        r"|is a directory|not a directory)$)",
    ))
});

/// go generate's report of the directive it stopped at (cmd/go
/// `internal/generate/generate.go`, `Generator.errorf`: the file, the
/// line, no column): a generator that failed or could not start
/// (`main.go:3: running "stringer": exit status 1`, `… exec: "stringer":
/// executable file not found in $PATH`), or a directive it could not read.
static GENERATE_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    build(concat!(
        r#"^[^\t]*\.go:\d+: (?:running "[^"]*": \S"#,
        r"|(?:directive too long|no arguments to directive|bad backslash|bad quoted string",
        r"|expect space after quoted argument|mismatched quoted string",
        r#"|no command specified for -command|command "[^"]*" multiply defined)$"#,
        r"|error reading \S)",
    ))
});

/// The package header above a package's diagnostics: `# example.com/pkg`,
/// `# example.com/pkg [example.com/pkg.test]`, `# command-line-arguments`.
static HEADER: LazyLock<Regex> = LazyLock::new(|| build(r"^# [^\s\[\]]+(?: \[[^\s\[\]]+\])?$"));

/// go test's line for a failed package.
static PACKAGE_FAILED: LazyLock<Regex> =
    LazyLock::new(|| build(r"^FAIL\t[^\s]+(?:\t\d+(?:\.\d+)?s| \[[a-z ]+ failed\])$"));

/// A panic's frame line: `\t/src/main.go:8 +0x5e` (the `+0x…` offset is
/// absent in some frames; `fp=… sp=… pc=…` follow it under
/// `GOTRACEBACK=system`).
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| build(r"^\t\S+\.go:\d+(?: \+0x[0-9a-f]+)?(?: fp=\S+ sp=\S+ pc=\S+)?$"));

fn build(pattern: &str) -> Regex {
    regex::bytes::RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("built-in detector pattern is invalid: {e}"))
}

/// Is `line` (the output's closing line, `before` the text above it) go
/// test's statement that a package failed?
pub(super) fn test_failed(line: &[u8], before: &[u8]) -> bool {
    if line == b"FAIL" {
        // `go test ./...` ends with a bare `FAIL` when a package failed.
        return before.starts_with(b"FAIL\t") || memmem::find(before, b"\nFAIL\t").is_some();
    }
    line.starts_with(b"FAIL\t") && PACKAGE_FAILED.is_match(line)
}

/// The window read: the last [`GO_TAIL_BYTES`], from a line's start.
fn tail(content: &[u8]) -> &[u8] {
    tail_of(content, GO_TAIL_BYTES)
}

/// The last `bytes` of `content`, from a line's start.
fn tail_of(content: &[u8], bytes: usize) -> &[u8] {
    let cut = content.len().saturating_sub(bytes);
    let window = &content[cut..];
    if cut > 0 && content[cut - 1] != b'\n' {
        return memchr::memchr(b'\n', window).map_or(&[][..], |i| &window[i + 1..]);
    }
    window
}

/// Lines from the end of `window` (its trailing whitespace trimmed), each
/// without its `\r`.
pub(super) fn lines_from_end(window: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = super::rules::trim_end(window);
    let mut done = rest.is_empty();
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let begin = memchr::memrchr(b'\n', rest).map_or(0, |i| i + 1);
        let line = &rest[begin..];
        if begin == 0 {
            done = true;
        } else {
            rest = &rest[..begin - 1];
        }
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
    .take(MAX_REPORT_LINES)
}

/// The last line of `window` (its trailing whitespace trimmed), when it
/// is at most [`LINE_BYTES`] long: found without reading further back.
fn last_line(window: &[u8]) -> Option<&[u8]> {
    let rest = super::rules::trim_end(window);
    let near = rest.len().saturating_sub(LINE_BYTES + 1);
    match memchr::memrchr(b'\n', &rest[near..]) {
        Some(i) => Some(&rest[near + i + 1..]),
        None if near == 0 => Some(rest),
        None => None,
    }
}

/// Does `line` open with a `.go` file's location (its first colon after
/// `.go`, vet's name before it): the cheap test before [`DIAGNOSTIC`].
fn go_location_first(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"vet: ").unwrap_or(line);
    memchr::memchr(b':', line).is_some_and(|i| line[..i].ends_with(b".go"))
}

/// A diagnostic ([`DIAGNOSTIC`]) that is not a warning or a note: cgo's C
/// compiler prints those in the same shape (`./main.go:5:26: warning:
/// unused variable …`) and the build goes on.
fn error_diagnostic(line: &[u8]) -> bool {
    if !DIAGNOSTIC.is_match(line) {
        return false;
    }
    let message = memmem::find(line, b".go:")
        .map(|i| &line[i + 4..])
        .and_then(|rest| memmem::find(rest, b": ").map(|j| &rest[j + 2..]))
        .unwrap_or_default();
    !(message.starts_with(b"warning: ") || message.starts_with(b"note: "))
}

/// Does the output end with a Go build or vet report: diagnostics (with
/// their continuations) below a package header or a `go: ` line?
pub(super) fn build_report(content: &[u8]) -> bool {
    let window = tail(content);
    // Most outputs stop here: a report's last line is a diagnostic, a
    // continuation or `too many errors`.
    let report_like = last_line(window).is_some_and(|last| {
        let last = last.strip_suffix(b"\r").unwrap_or(last);
        last.first() == Some(&b'\t') || last == b"too many errors" || go_location_first(last)
    });
    report_like && read_report(lines_from_end(window))
}

fn read_report<'a>(lines: impl Iterator<Item = &'a [u8]>) -> bool {
    let (mut diagnostics, mut indented) = (0usize, 0usize);
    for line in lines {
        if line.len() > LINE_BYTES {
            return false;
        }
        if line.first() == Some(&b'\t') {
            indented += 1;
            if indented > MAX_INDENTED_RUN {
                return false;
            }
            continue;
        }
        indented = 0;
        if error_diagnostic(line) {
            diagnostics += 1;
        } else if line == b"too many errors" || line.starts_with(b"note: module requires Go ") {
            continue;
        } else {
            // The report's top: the package's header, or the go command's
            // own line (a loader error has no header).
            return diagnostics > 0 && (HEADER.is_match(line) || line.starts_with(b"go: "));
        }
    }
    false
}

/// Does the output of `tool` end with its failure (see
/// [`GoTool`](super::GoTool)), one
/// with no header above it or closing line below it?
///
/// The go command ([`GoTool::Build`](super::GoTool::Build)): the last line that is not
/// tab-indented (a continuation: `\tgo mod tidy`, `\tgo get
/// example.com/x`) is an error diagnostic (`main.go:3:8: no required
/// module provides package example.com/x; to add it:`), a package's error
/// without a position (`no required module provides package …`, `cannot
/// find module providing package …`, `stat /src/nope: directory not
/// found`: cmd/go `modload/import.go`, `modload/load.go`), the compiler's
/// `too many errors`, the go command's own error (`go: updates to go.mod
/// needed; …`, `go: go.mod file not found …`; not one of its notes:
/// [`GO_NOTES`]), an import stack above the error (`example.com/m
/// imports`, `go mod tidy`'s), a pattern's error (`pattern ./...:
/// directory prefix . does not contain main module …`), or the end of `go
/// mod init`'s `cannot determine module path` (`Run 'go help mod init' for
/// more information.`, `modload/init.go`). On success these
/// commands print nothing of the kind: nothing, their notes (`go:
/// downloading …`, `go: added …`), `go build -v`'s package paths, `go test`'s report
/// ending `ok` or `?`, `go mod verify`'s `all modules verified`, cgo's
/// warnings.
///
/// `go run` ([`GoTool::Run`](super::GoTool::Run)): the program's end in
/// `os.ProcessState`'s words (`signal: killed`; `exit status 3` is read
/// from the text alone), or the go command's failure when the output is
/// its own alone ([`go_alone_failed`]). `go generate`
/// ([`GoTool::Generate`](super::GoTool::Generate)): its last line is its
/// report of a directive ([`GENERATE_ERROR`]), or the same. `go list -e`
/// ([`GoTool::Report`](super::GoTool::Report)): its last unindented line is
/// the go command's own error (`go: go.mod file not found …`).
///
/// gofmt ([`GoTool::Gofmt`](super::GoTool::Gofmt)): a line of the window
/// is its error (`main.go:3:1: expected declaration, found foo`, `stat
/// x.go: no such file or directory`; [`GOFMT_ERROR`]), among the names
/// (`-l`) or diffs (`-d`) of the other files it read, in the order of its
/// arguments ([`gofmt_failed`]); on success it prints file names, a diff,
/// nothing (`-w`) or the formatted source.
pub(super) fn tool_failed(tool: super::GoTool, content: &[u8]) -> bool {
    use super::GoTool;
    if tool == GoTool::Gofmt {
        return gofmt_failed(content);
    }
    let window = tail(content);
    let Some(last) = last_line(window) else {
        return false;
    };
    let last = last.strip_suffix(b"\r").unwrap_or(last);
    match tool {
        GoTool::Gofmt => false,
        GoTool::Build => {
            // Most outputs stop here: the go command's failure ends with
            // its line, a continuation or a diagnostic.
            let report_like = last.first() == Some(&b'\t')
                || last.starts_with(b"go: ")
                || last.starts_with(b"pattern ")
                || last == b"too many errors"
                || last == GO_MOD_INIT_HELP
                || package_error_first(last)
                || go_location_first(last);
            report_like && go_command_failed(lines_from_end(window))
        }
        GoTool::Run => {
            (last.starts_with(b"signal: ") && last.len() <= LINE_BYTES)
                || (go_alone_like(last) && go_alone_failed(content))
        }
        GoTool::Generate => {
            (go_location_first(last) && GENERATE_ERROR.is_match(last))
                || ((go_alone_like(last) || last.starts_with(GENERATE_FATAL))
                    && go_alone_failed(content))
        }
        GoTool::Report => {
            (last.first() == Some(&b'\t') || last.starts_with(b"go: "))
                && lines_from_end(window)
                    .find(|line| line.first() != Some(&b'\t'))
                    .is_some_and(|line| {
                        line.len() <= LINE_BYTES && line.starts_with(b"go: ") && go_error(line)
                    })
        }
    }
}

/// go generate's own fatal errors, which cmd/go prints with the log
/// package (`log.Fatalf("generate: %s", err)` in
/// `internal/generate/generate.go`, its flags 0 in `main.go`; status 1): a
/// `-run` pattern that is no regular expression (`generate: error parsing
/// regexp: missing closing ]: `[``), a file it cannot read (`generate:
/// open /src/b.go: no such file or directory`). cmd/go prints no other
/// line so.
const GENERATE_FATAL: &[u8] = b"generate: ";

/// The last line of `go mod init`'s `cannot determine module path`
/// (cmd/go `modload/init.go`), below its example usage.
const GO_MOD_INIT_HELP: &[u8] = b"Run 'go help mod init' for more information.";

/// Does `line` open as a package's error without a position does
/// (cmd/go's `ImportMissingError`, `errDirectoryNotFound`)?
fn package_error_first(line: &[u8]) -> bool {
    line.starts_with(b"no required module provides package ")
        || line.starts_with(b"cannot find module providing package ")
        || (line.starts_with(b"stat ") && line.ends_with(b": directory not found"))
}

/// How much of gofmt's output is read, from its end: its errors come in
/// the order of its arguments, above the names (`-l`) or diffs (`-d`) of
/// any later files, so the top of a long output is read too.
const GOFMT_BYTES: usize = 1024 * 1024;

/// gofmt's errors, at any line of its last [`GOFMT_BYTES`], when every
/// other line is one `-l` or `-d` prints (a file's name, a diff's line:
/// ` `, `+`, `-`, `@@`, `diff `, of any length): the formatted source
/// gofmt prints with neither may hold such a line in a raw string. An
/// output without `.go:`, `<standard input>:`, `directory` or `denied`
/// (what an error holds) is not read further; the first byte rules out a
/// diff's lines, a cheap test before [`GOFMT_ERROR`].
fn gofmt_failed(content: &[u8]) -> bool {
    let window = super::rules::trim_end(tail_of(content, GOFMT_BYTES));
    if [&b".go:"[..], b"<standard input>:", b"directory", b"denied"]
        .iter()
        .all(|needle| memmem::find(window, needle).is_none())
    {
        return false;
    }
    let mut error = false;
    for line in window.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let diff_or_name = matches!(line.first(), Some(b' ' | b'+' | b'-' | b'@'))
            || line.starts_with(b"diff ")
            || line.ends_with(b".go");
        if diff_or_name {
            continue;
        }
        if line.is_empty()
            || line.len() > LINE_BYTES
            || !(memmem::find(line, b".go:").is_some()
                || line.starts_with(b"<standard input>:")
                || line.ends_with(b"directory")
                || line.ends_with(b"denied"))
            || !GOFMT_ERROR.is_match(line)
        {
            return false;
        }
        error = true;
    }
    error
}

/// Can `last` end the go command's own failure (see [`go_alone_failed`]):
/// its line, a continuation, a diagnostic or a package's error?
fn go_alone_like(last: &[u8]) -> bool {
    last.first() == Some(&b'\t')
        || last.starts_with(b"go: ")
        || last.starts_with(b"pattern ")
        || package_error_first(last)
        || go_location_first(last)
}

/// Is the whole output the go command's own, ending with its failure
/// (for `go run` and `go generate`, whose output is otherwise another
/// program's)? Every line is a `go: ` line or tab-indented below one,
/// but the error: the go command's own (`go: cannot run *_test.go
/// files`), a pattern's, or a diagnostic or a package's error with the
/// go command's hint below it (`main.go:3:8: no required module provides
/// package example.com/x; to add it:` above `\tgo get example.com/x`), or
/// go generate's fatal error ([`GENERATE_FATAL`]: never go run's).
/// At most [`GO_TAIL_BYTES`] and [`MAX_REPORT_LINES`] lines.
fn go_alone_failed(content: &[u8]) -> bool {
    let content = super::rules::trim_end(content);
    if content.len() > GO_TAIL_BYTES
        || memchr::memchr_iter(b'\n', content).count() >= MAX_REPORT_LINES
    {
        return false;
    }
    let mut lines = lines_from_end(content);
    let (mut indented, mut hints) = (0usize, 0usize);
    let Some(error) = lines.find(|line| {
        let continuation = line.first() == Some(&b'\t');
        indented += usize::from(continuation);
        hints += usize::from(line.starts_with(b"\tgo "));
        !continuation
    }) else {
        return false;
    };
    if indented > MAX_INDENTED_RUN || error.len() > LINE_BYTES {
        return false;
    }
    let failed = if error.starts_with(b"go: ") {
        go_error(error)
    } else if error.starts_with(GENERATE_FATAL) {
        // Only go generate prints it; go run's last line is read here
        // only when go_alone_like, which it is not.
        indented == 0
    } else if error_diagnostic(error) || package_error_first(error) {
        hints > 0 && hints == indented
    } else {
        error.starts_with(b"pattern ") && memmem::find(error, b": ").is_some()
    };
    failed
        && lines.all(|line| {
            line.len() <= LINE_BYTES && (line.starts_with(b"go: ") || line.first() == Some(&b'\t'))
        })
}

/// The go command's notes on success (`go: downloading example.com/x
/// v1.2.0`), as cmd/go prints them (`fmt.Fprintf(os.Stderr, "go: …")`
/// with no exit after it); any other `go: ` line it prints is an error
/// (`base.Fatalf`, `base.Errorf`: status 1).
const GO_NOTES: &[&[u8]] = &[
    b"go: downloading ",
    b"go: extracting ",
    b"go: finding ",
    b"go: found ",
    b"go: added ",
    b"go: upgraded ",
    b"go: downgraded ",
    b"go: removed ",
    b"go: warning: ",
    b"go: writing ",
    b"go: ignoring requirement ",
    b"go: dropping requirement ",
    b"go: no dependencies to vendor",
    b"go: creating new go.mod",
    b"go: to add module requirements and sums:",
    b"go: copying requirements from ",
    b"go: converting ",
    b"go: -i flag is deprecated",
    b"go: -f flag is a no-op",
    b"go: -fix flag is a no-op",
    b"go: -d flag is deprecated",
    // go get's advice below a retracted version's warning
    // (modget/get.go, then `\tgo get example.com/r@latest`).
    b"go: to switch to the latest unretracted version, run:",
    // go generate skipping other modules' packages (generate/generate.go).
    b"go: not generating in packages in dependency modules",
    // Go 1.21's toolchains: `go install m@v` naming the one it runs
    // (cmd/go/internal/toolchain/select.go, "go: using go%s for %v").
    b"go: using go",
];

/// The last line of the go command's output that is not tab-indented (see
/// [`tool_failed`]).
fn go_command_failed<'a>(mut lines: impl Iterator<Item = &'a [u8]>) -> bool {
    let mut indented = 0usize;
    let Some(line) = lines.find(|line| {
        let continuation = line.first() == Some(&b'\t');
        indented += usize::from(continuation);
        !continuation || indented > MAX_INDENTED_RUN
    }) else {
        return false;
    };
    if indented > MAX_INDENTED_RUN || line.len() > LINE_BYTES {
        return false;
    }
    if line.starts_with(b"go: ") {
        return go_error(line);
    }
    error_diagnostic(line)
        || package_error_first(line)
        || line == b"too many errors"
        || line == GO_MOD_INIT_HELP
        || (indented > 0 && line.ends_with(b" imports"))
        || (line.starts_with(b"pattern ") && memmem::find(line, b": ").is_some())
}

/// Is `line`, a `go: ` line, the go command's error, not one of its notes?
fn go_error(line: &[u8]) -> bool {
    // A module's deprecation or retraction notice is a note too, and
    // so is Go 1.21's switch to a newer toolchain, which then runs the
    // command (cmd/go/internal/toolchain/switch.go, "go: %v requires
    // go >= %v; switching to %v"; when it cannot, it says `switching
    // to go >= …: ` and the error).
    let notice = (line.starts_with(b"go: module ")
        && (memmem::find(line, b" is deprecated").is_some()
            || memmem::find(line, b" retracted").is_some()))
        || (memmem::find(line, b" requires go >= ").is_some()
            && memmem::find(line, b"; switching to go").is_some());
    !notice && !GO_NOTES.iter().any(|note| line.starts_with(note))
}

/// Does the output end with a Go panic: its last line a goroutine's frame,
/// and above it `goroutine N [running]:` below `panic: …` or `fatal
/// error: …`?
///
/// `last` is the window's last line without its indentation (read by the
/// caller): most outputs stop at it, as a frame names a `.go` file and
/// its line (its last colon is the line's).
pub(super) fn panic_at_end(window: &[u8], last: &[u8]) -> bool {
    if !memchr::memrchr(b':', last).is_some_and(|i| last[..i].ends_with(b".go")) {
        return false;
    }
    let mut lines = lines_from_end(window);
    if !lines.next().is_some_and(|line| FRAME.is_match(line)) {
        return false;
    }
    let mut goroutine = false;
    let mut indented = 0usize;
    for line in lines {
        if line.len() > LINE_BYTES {
            return false;
        }
        if line.first() == Some(&b'\t') {
            indented += 1;
            if indented > MAX_INDENTED_RUN {
                return false;
            }
            continue;
        }
        indented = 0;
        if line.starts_with(b"goroutine ") {
            goroutine = true;
        } else if goroutine && (line.starts_with(b"panic: ") || line.starts_with(b"fatal error: "))
        {
            return true;
        }
    }
    false
}
