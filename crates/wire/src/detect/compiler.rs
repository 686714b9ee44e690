//! A compiler's report that holds an error, read from the end: part of
//! the `failure_summary` rule, for the compilers that print no closing
//! line (`error_label` reads a diagnostic on one of the first three
//! lines).
//!
//! gcc prints no summary line: its errors may sit above later warnings and
//! notes, far from the output's first lines and not on its last one
//! (`main.c:6:12: error: ‘x’ undeclared`, then `main.c:9:5: warning: …`).
//! Read from the end, every line up to an error diagnostic must be a line
//! a compiler prints in its report: another diagnostic (`warning:`,
//! `note:`), an indented line (the source excerpt, the caret, a
//! continuation), gcc's context (`main.c: In function ‘f’:`, `In file
//! included from …`, `cc1: all warnings being treated as errors`), a count
//! (`1 warning and 1 error generated.`, javac's `1 error`, mypy's `Found 2
//! errors …`), javac's `Note: …`, a build tool's closing line (`make: ***
//! …`, `npm error …`). A line of any other kind below the error (the
//! command went on: `imported 40 rows`, `done`) or cargo's indented
//! `Finished …` leaves the output alone, as does an error line without a
//! source file's path (`app:12:3: error:`, `build.log:3:main.c:6:12:
//! error:` of a `grep`: its location is not `path:line[:col]: `).
//!
//! Only the last [`REPORT_TAIL_BYTES`] bytes and at most
//! [`MAX_REPORT_LINES`] lines are read, and no more than
//! [`MAX_INDENTED_RUN`] indented lines in a row; an output without `error`
//! in that window is not read line by line, and most others stop at their
//! last line, which is no part of a compiler's report.

use std::sync::LazyLock;

use regex::bytes::Regex;

/// How much of the end of the content is read.
pub(super) const REPORT_TAIL_BYTES: usize = 16 * 1024;
/// The most lines read, from the end.
const MAX_REPORT_LINES: usize = 400;
/// The longest line read (a longer one ends the report).
const LINE_BYTES: usize = 1024;
/// The most indented lines read in a row: a diagnostic's source excerpt,
/// caret and notes, or gcc's `from …` chain, are a few; a file's text
/// (`cat`, an editor tool's numbered lines) is not a compiler's report.
const MAX_INDENTED_RUN: usize = 32;

/// `error`, which every error diagnostic holds (colour codes may stand
/// between it and its colon): an output without it is not read line by
/// line.
static ERROR_WORD: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"error"));

/// Lines of a compiler's report other than an error and indented lines
/// (case-sensitive, anchored).
static REPORT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex::bytes::RegexBuilder::new(concat!(
        r"^(?:",
        // another diagnostic: gcc, clang, javac, mypy; the MSBuild form
        r"[^\s:]+:\d+(?::\d+)?: (?:warning|note|remark|info|help)\b",
        r"|(?:[a-zA-Z]:)?[^\s:(]+\(\d+(?:,\d+)?\): (?:warning|message|info)\b",
        // gcc's context lines
        r"|[^\s:]+: (?:In |At (?:top level|global scope):)",
        r"|In (?:file included|module imported) from ",
        r"|(?:cc1\w*|collect2|lto1|[\w.+-]*(?:gcc|g\+\+|clang|clang\+\+|cc|c\+\+)(?:-\d+)?): ",
        // counts: clang's, javac's, mypy's and tsc's
        r"|\d+ (?:warnings?|errors?)(?: and \d+ errors?)?(?: generated)?\.?$",
        r"|Found \d+ errors? ",
        r"|compilation terminated\.$",
        r"|Note: ",
        // a build tool's closing lines
        r"|g?make(?:\[\d+\])?: ",
        r"|npm (?:error|ERR!|notice)(?: |$)",
        r"|ninja: build stopped",
        r"|FAILED: ",
        r")",
    ))
    .unicode(false)
    .build()
    .unwrap_or_else(|e| panic!("built-in detector pattern is invalid: {e}"))
});

/// Does the output end with a compiler's report that holds an error
/// (`error` matches an error diagnostic's line)?
pub(super) fn error_in_report(error: &Regex, content: &[u8]) -> bool {
    let cut = content.len().saturating_sub(REPORT_TAIL_BYTES);
    let mut window = &content[cut..];
    if cut > 0 && content[cut - 1] != b'\n' {
        // The window opens mid-line: that line is not read.
        window = memchr::memchr(b'\n', window).map_or(&[][..], |i| &window[i + 1..]);
    }
    if ERROR_WORD.find(window).is_none() {
        return false;
    }
    let mut rest = super::rules::trim_end(window);
    let mut indented = 0;
    for _ in 0..MAX_REPORT_LINES {
        if rest.is_empty() {
            return false;
        }
        let begin = memchr::memrchr(b'\n', rest).map_or(0, |i| i + 1);
        let (before, line) = rest.split_at(begin);
        rest = super::rules::trim_end(before);
        if line.len() > LINE_BYTES {
            return false;
        }
        let plain = super::rules::without_csi(line);
        let line = super::rules::trim_end(&plain);
        match line.first() {
            None => continue,
            Some(b' ' | b'\t') => {
                // The source excerpt, the caret, a continuation; not
                // cargo's `    Finished …` (the build went on and ended).
                indented += 1;
                if indented > MAX_INDENTED_RUN || line.trim_ascii_start().starts_with(b"Finished ")
                {
                    return false;
                }
                continue;
            }
            Some(_) => indented = 0,
        }
        if error.is_match(line) {
            return has_source_path(line);
        }
        if !REPORT_LINE.is_match(line) {
            return false;
        }
    }
    false
}

/// The diagnostic's location names a source file: its path (before
/// `:line` or `(line`) ends in an extension (`main.c`, `src/a.rs`,
/// `Main.java`, `a.ts`), or is a pseudo-file such as `<stdin>`.
fn has_source_path(line: &[u8]) -> bool {
    // (A drive letter's colon is not the location's: `C:\src\a.cs(3,5)`.)
    let from = if line.get(1) == Some(&b':') { 2 } else { 0 };
    let end = line[from..]
        .iter()
        .position(|b| matches!(b, b':' | b'('))
        .map_or(line.len(), |i| from + i);
    let path = &line[..end];
    if path.len() > 2 && path.starts_with(b"<") && path.ends_with(b">") {
        return true;
    }
    let name_start = path
        .iter()
        .rposition(|b| matches!(b, b'/' | b'\\'))
        .map_or(0, |i| i + 1);
    let name = &path[name_start..];
    match memchr::memrchr(b'.', name) {
        Some(dot) if dot > 0 => {
            let ext = &name[dot + 1..];
            (1..=8).contains(&ext.len())
                && ext.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'+')
        }
        _ => false,
    }
}
