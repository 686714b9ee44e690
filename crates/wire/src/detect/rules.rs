//! The built-in rules. Each looks at a *position*: the start of the text,
//! its first line, its last line or the top-level keys of a JSON object.
//!
//! The regular expressions are compiled once, anchored with `^`, run on
//! bytes without Unicode classes, and only ever see the first line (at most
//! [`LINE_BYTES`]) or the last line (at most [`TAIL_BYTES`]).

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::json;

/// How much of the start of the content the rules (and extra patterns) read.
pub const HEAD_BYTES: usize = 1024;
/// How much of the end of the content the `exit_status` trailer check reads.
pub const TAIL_BYTES: usize = 256;
/// How much of a JSON object the `json_error` walker reads.
pub const JSON_SCAN_BYTES: usize = 64 * 1024;
/// The longest first line the line rules read.
const LINE_BYTES: usize = 512;

/// The rule names, in the order they are tried; bit `i` of the `disabled`
/// mask refers to `NAMES[i]`.
pub(super) const NAMES: &[&str] = &[
    "framed_error",
    "error_tag",
    "exit_status",
    "user_denied",
    "crash_trace",
    "error_label",
    "os_error",
    "http_status",
    "json_error",
    "failure_statement",
];

const FRAMED_ERROR: usize = 0;
const ERROR_TAG: usize = 1;
const EXIT_STATUS: usize = 2;
const USER_DENIED: usize = 3;
const CRASH_TRACE: usize = 4;
const ERROR_LABEL: usize = 5;
const OS_ERROR: usize = 6;
const HTTP_STATUS: usize = 7;
const JSON_ERROR: usize = 8;
const FAILURE_STATEMENT: usize = 9;

/// One compiled, anchored regex per line rule.
struct Patterns {
    error_tag: Regex,
    /// Matches up to (not including) the status number.
    exit_status: Regex,
    user_denied: Regex,
    crash_trace: Regex,
    os_error: Regex,
    http_status: Regex,
    error_label: Regex,
    failure_statement: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| Patterns {
    error_tag: re(r"^<[a-z_:-]*error[a-z_:-]*(?:\s[^>\n]*)?>"),
    exit_status: re(concat!(
        r"^[\[(]?\s*(?:",
        r"(?:the\s+)?(?:process|command|script|program|job|task|shell)\s+",
        r"(?:exited|completed|finished|failed|terminated|returned|ended)\s+with\s+",
        r"(?:(?:an?\s+)?(?:exit|return|non-zero\s+exit)\s+)?(?:code|status)",
        r"|exited\s+with\s+(?:(?:exit|return)\s+)?(?:code|status)",
        r"|exit(?:ed)?[ _-]?(?:code|status)|return[ _-]?code|returncode",
        r")\s*[:=]?\s*",
    )),
    user_denied: re(concat!(
        r"^\[?(?:",
        r"the\s+user\s+(?:doesn't|does\s+not|did\s+not|didn't|has\s+chosen\s+not\s+to|declined",
        r"|denied|rejected|refused|cancell?ed|interrupted|aborted)\b",
        r"|user\s+(?:rejected|denied|declined|cancell?ed|refused|aborted|interrupted)\b",
        r"|(?:\S+\s+){0,3}(?:was\s+|has\s+been\s+)?(?:rejected|denied|declined|cancell?ed|aborted",
        r"|interrupted|blocked)\s+by\s+(?:the\s+)?(?:user|policy|sandbox|hook|approval|admin)",
        r"|permission\s+to\s+(?:use|run|execute|access)\s.{0,200}?\s(?:has\s+been|was|is)\s+denied",
        r"|(?:tool\s+(?:use|call|execution)|command|exec(?:ution)?|patch|operation|action)\s+",
        r"(?:was\s+|has\s+been\s+)?(?:rejected|denied|declined|cancell?ed|aborted|not\s+approved|blocked)\b",
        r")",
    )),
    crash_trace: re(concat!(
        r"^(?:traceback\s+\(most\s+recent\s+call\s+last\)",
        r"|exception\s+in\s+thread\b",
        r"|thread\s+'[^'\n]*'\s+panicked\b|panicked\s+at\b",
        r"|uncaught\s+(?:\w+\s+)?\w*(?:error|exception)|\w*(?:error|exception):?\s+uncaught\b",
        r"|unhandled\s+(?:\w+\s+)?(?:exception|rejection|error)",
        r"|\*\*\s+\([\w.]+\)",
        r"|goroutine\s+\d+\s+\[running\]|segmentation\s+fault|stack\s+trace:",
        r")",
    )),
    os_error: re(concat!(
        r"^(?:(?-i:E[A-Z]{3,})(?:\s*\(-?\d+\))?:\s",
        r"|\[?errno\s+-?\d+\]?",
        r"|(?:no\s+such\s+file(?:\s+or\s+directory)?",
        r"|(?:file|path|directory|folder)\s+(?:does\s+not|doesn't)\s+exist",
        r"|(?:file|path|directory|folder)\s+not\s+found",
        r"|permission\s+denied|operation\s+not\s+permitted|access\s+(?:is\s+)?denied",
        r"|is\s+a\s+directory|not\s+a\s+directory|read-only\s+file\s+system",
        r"|no\s+space\s+left\s+on\s+device|disk\s+quota\s+exceeded|too\s+many\s+open\s+files",
        r"|connection\s+(?:refused|reset|timed\s+out)|network\s+is\s+unreachable|broken\s+pipe",
        r")\b",
        // a shell's `command not found` as the first line
        r"|(?:[\w().~/-]+:\s*)?(?:line\s+)?(?:\d+:\s*)?(?:[^\s:]+:\s*)?",
        r"command\s+not\s+found(?::\s*\S+)?\s*$",
        r"|(?:ba|z|da|k|c|tc|fi)?sh:\s*(?:line\s+)?\d+:\s*[^\s:]+:\s*not\s+found\s*$",
        r")",
    )),
    http_status: re(concat!(
        r"^(?:http/\d(?:\.\d)?\s+[45]\d\d\b",
        r"|(?:http\s+)?(?:status(?:\s+code)?|response\s+code|http\s+error|http\s+status)\s*[:=]?\s*[45]\d\d\b",
        r"|[45]\d\d\s*[-:]?\s*(?:bad\s+request|unauthorized|payment\s+required|forbidden|not\s+found",
        r"|method\s+not\s+allowed|not\s+acceptable|proxy\s+authentication|request\s+time-?out",
        r"|conflict|gone|length\s+required|precondition\s+(?:failed|required)|payload\s+too\s+large",
        r"|request\s+entity\s+too\s+large|uri\s+too\s+long|unsupported\s+media\s+type",
        r"|range\s+not\s+satisfiable|expectation\s+failed|misdirected\s+request|unprocessable",
        r"|locked|failed\s+dependency|too\s+early|upgrade\s+required|too\s+many\s+requests",
        r"|request\s+header\s+fields\s+too\s+large|unavailable\s+for\s+legal\s+reasons",
        r"|internal\s+server\s+error|not\s+implemented|bad\s+gateway|service\s+unavailable",
        r"|gateway\s+time-?out|http\s+version\s+not\s+supported|insufficient\s+storage",
        r"|loop\s+detected|network\s+authentication\s+required)\b",
        r")",
    )),
    error_label: re(concat!(
        r"^(?:",
        // Error: / ERROR - / error[E0425]: / fatal: / [ERROR] / Error!
        r"\[?(?:error|err|exception|fatal|failure|panic|critical|timeout)\]?(?:\[[^\]\n]{0,40}\])?",
        r"\s*(?::|!|\s-\s|$)",
        r"|\[(?:error|err|fatal|failure|failed|exception)\]",
        // ValueError: / ToolException: / McpError: / requests.exceptions.HTTPError:
        r"|[a-z_][\w.$]*(?:error|exception|fault|failure)(?:\s*\[[^\]\n]{0,40}\]|\s*\([^)\n]{0,80}\))?:\s",
        // Error executing tool X / Exception while …
        r"|(?:error|exception)\s+(?:executing|calling|running|invoking|in|while|during|occurred",
        r"|processing|fetching|reading|writing|parsing|loading|connecting|creating|updating|deleting",
        r"|getting|sending|from|when)\b",
        // MCP error -32602 / Internal error / Validation error
        r"|(?:mcp|tool|api|http|rpc|json-?rpc|runtime|internal|fatal|unexpected|unknown|validation",
        r"|execution|server|client|request|network|connection|permission|auth|authentication)\s+error\b",
        r"|an?\s+(?:\w+\s+)?error\s+(?:occurred|has\s+occurred|was\s+encountered|happened|was\s+raised",
        r"|was\s+thrown)",
        r")",
    )),
    failure_statement: re(concat!(
        r"^(?:",
        r"(?:[a-z][a-z'-]*\s+){0,3}(?:failed|could\s+not|couldn't|unable\s+to|cannot|can't",
        r"|did\s+not\s+succeed|timed\s+out)\b",
        r"|(?-i:[A-Z])[a-z-]*(?:\s+[a-z-]+)?\s*(?:\([^)\n]{0,40}\)\s*)?(?:exceeds?|exceeded)\s+",
        r"(?:the\s+)?(?:maximum|max|limit|allowed)",
        r"|(?:rate\s+limit|quota|limit|usage\s+limit|token\s+limit|context\s+length)\s+",
        r"(?:was\s+|has\s+been\s+)?exceeded",
        r")",
    )),
});

/// Compile a built-in pattern: ASCII case-insensitive, no Unicode classes.
fn re(pattern: &str) -> Regex {
    regex::bytes::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("built-in detector pattern {pattern:?} is invalid: {e}"))
}

/// Whole outputs that are a single status word.
const STATUS_WORDS: &[&[u8]] = &[
    b"aborted",
    b"cancelled",
    b"canceled",
    b"interrupted",
    b"timeout",
    b"timed out",
    b"killed",
    b"denied",
    b"rejected",
    b"failed",
    b"failure",
    b"error",
    b"errored",
];

/// The first rule (not masked by `disabled`) that says `content` is a
/// failure.
pub(super) fn first_match(content: &[u8], disabled: u32) -> Option<&'static str> {
    let on = |rule: usize| disabled & (1 << rule) == 0;
    let head = head(content);
    let line = first_line(head);
    let p = &*PATTERNS;

    if on(FRAMED_ERROR) && head.starts_with(toolwarden_core::FLAGLESS_ERROR_PREFIX.as_bytes()) {
        return Some(NAMES[FRAMED_ERROR]);
    }
    if on(ERROR_TAG) && head.first() == Some(&b'<') && p.error_tag.is_match(head) {
        return Some(NAMES[ERROR_TAG]);
    }
    // An explicit exit status on the first line settles it either way: the
    // harness told us how the command ended.
    match exit_status(&p.exit_status, line) {
        Some(0) => return None,
        Some(_) if on(EXIT_STATUS) => return Some(NAMES[EXIT_STATUS]),
        _ => {}
    }
    if on(EXIT_STATUS) && exit_status(&p.exit_status, last_line(content)).is_some_and(|c| c != 0) {
        return Some(NAMES[EXIT_STATUS]);
    }
    let line_rules = [
        (USER_DENIED, &p.user_denied),
        (CRASH_TRACE, &p.crash_trace),
        (ERROR_LABEL, &p.error_label),
        (OS_ERROR, &p.os_error),
        (HTTP_STATUS, &p.http_status),
    ];
    for (rule, regex) in line_rules {
        if on(rule) && regex.is_match(line) {
            return Some(NAMES[rule]);
        }
    }
    if on(JSON_ERROR) && json::reports_failure(start(content), JSON_SCAN_BYTES) {
        return Some(NAMES[JSON_ERROR]);
    }
    if on(FAILURE_STATEMENT)
        && ((!first_person(line) && p.failure_statement.is_match(line)) || status_word(head))
    {
        return Some(NAMES[FAILURE_STATEMENT]);
    }
    None
}

/// The content from its first meaningful byte: leading whitespace, a BOM
/// and ANSI escape sequences skipped.
fn start(content: &[u8]) -> &[u8] {
    let mut s = content;
    loop {
        match s {
            [b' ' | b'\t' | b'\n' | b'\r', rest @ ..] => s = rest,
            [0xEF, 0xBB, 0xBF, rest @ ..] => s = rest,
            [0x1B, b'[', rest @ ..] => {
                // CSI: parameters and intermediates, then one final byte.
                let end = rest.iter().position(|b| (0x40..=0x7E).contains(b));
                s = end.map_or(&[][..], |i| &rest[i + 1..]);
            }
            _ => return s,
        }
    }
}

/// The bounded start of the content that the rules and extra patterns read;
/// a JSON-encoded string's opening quote is skipped too.
pub(super) fn head(content: &[u8]) -> &[u8] {
    let s = start(content);
    let s = match s {
        [b'"', rest @ ..] => start(rest),
        _ => s,
    };
    &s[..s.len().min(HEAD_BYTES)]
}

/// The first line of `head`, bounded, without trailing whitespace.
fn first_line(head: &[u8]) -> &[u8] {
    let end = memchr::memchr(b'\n', head).unwrap_or(head.len());
    trim_end(&head[..end.min(LINE_BYTES)])
}

/// The last non-empty line within the last [`TAIL_BYTES`] of the content.
fn last_line(content: &[u8]) -> &[u8] {
    let tail = trim_end(&content[content.len().saturating_sub(TAIL_BYTES)..]);
    let begin = memchr::memrchr(b'\n', tail).map_or(0, |i| i + 1);
    start(&tail[begin..])
}

fn trim_end(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., b' ' | b'\t' | b'\r' | b'\n'] = s {
        s = rest;
    }
    s
}

/// The status number after an exit-status phrase at the start of `line`.
fn exit_status(prefix: &Regex, line: &[u8]) -> Option<i64> {
    let first = *line.first()?;
    if !matches!(
        first.to_ascii_lowercase(),
        b'e' | b'r' | b'p' | b'c' | b's' | b't' | b'j' | b'[' | b'('
    ) {
        return None;
    }
    let m = prefix.find(line)?;
    let rest = &line[m.end()..];
    let (neg, digits) = match rest {
        [b'-', d @ ..] => (true, d),
        d => (false, d),
    };
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 9 {
        return None;
    }
    // A number glued to letters ("exit code 1abc") is not a status.
    if digits.get(n).is_some_and(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let value = digits[..n]
        .iter()
        .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
    Some(if neg { -value } else { value })
}

/// A first line spoken by an assistant ("I cannot find …") is an answer,
/// not a failure report.
fn first_person(line: &[u8]) -> bool {
    let word_end = line
        .iter()
        .position(|b| !(b.is_ascii_alphabetic() || *b == b'\''))
        .unwrap_or(line.len());
    let word = &line[..word_end];
    [&b"i"[..], b"i'm", b"i've", b"we", b"we're", b"you"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w))
}

/// The whole content is one status word such as `aborted` or `timed out`.
fn status_word(head: &[u8]) -> bool {
    let mut s = trim_end(head);
    while let [rest @ .., b'.' | b'!' | b'"'] = s {
        s = rest;
    }
    s.len() <= 12 && STATUS_WORDS.iter().any(|w| s.eq_ignore_ascii_case(w))
}
