//! Status fields written by agent clients in their own result formats,
//! read exactly (verdict basis `client`).
//!
//! The formats, as the clients' sources write them:
//!
//! | client | where | format |
//! |---|---|---|
//! | Codex CLI `shell` | first line | `Exit code: N` then `Wall time: …`, `Output:` |
//! | Codex CLI unified exec | header lines | `Chunk ID: …`, `Wall time: …`, `Process exited with code N` (a status below any other line is the program's: `go run`'s `exit status 1`) |
//! | Claude Code `Bash` | first line | `Exit code N` (only when non-zero) |
//! | Gemini CLI `run_shell_command` (before 0.27) | footer | `Error: (none)`, `Exit Code: N`, `Signal: (none)`, `Background PIDs: …`, `Process Group PGID: N` |
//! | Gemini CLI `run_shell_command` (since 0.27) | footer | `Error: …`, `Exit Code: N` and `Signal: …` only when they apply, then `Background PIDs: …`, `Process Group PGID: N` |
//! | OpenHands and others | last line | `[The command completed with exit code 1.]` |
//! | GitHub Copilot CLI `bash` | last line | `<shellId: 0 completed with exit code 2>` after the output, also for 0 |
//! | OpenCode `bash` | trailer | `<shell_metadata>` … `</shell_metadata>` after the output, with `shell tool terminated command after exceeding timeout N ms. …` (`bash tool …` before 1.x) or `User aborted the command`; the exit status goes to its UI only, so a command that ends by itself has no status here |
//! | pi (`@mariozechner/pi-coding-agent`) `bash` | last line | the output, a blank line, then `Command exited with code N`, `Command timed out after N seconds` or `Command aborted` (`core/tools/bash.ts`'s `appendStatus`; nothing when the command succeeded) |
//! | OpenClaw `exec` | last line | the output, a blank line, then `(Command exited with code N)`, or the failure's reason (`Command timed out after N seconds.`, `Command aborted by signal SIGKILL`, `Command not found`) followed by paragraphs of advice, which are read past |
//! | Cline `execute_command` | first line | `Command executed successfully (exit code 0).`, `Command failed with exit code N.`, `Command terminated by signal SIGKILL.`, then `Output:` (`src/integrations/terminal/CommandOrchestrator.ts`; `Command executed.` when the terminal gave no status) |
//!
//! Exit codes of any size or sign count: Windows status codes such as
//! 3221225794 (`0xC0000142`) and negative codes (`-1`) are failures.

use regex::bytes::Regex;

/// How a client's status fields read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    /// The client says the command failed.
    Failed,
    /// The client says the command succeeded (exit status 0, or a complete
    /// status footer without a failure).
    Succeeded,
}

/// How many lines at the start are read for the harness's header (Codex
/// puts `Chunk ID:` and `Wall time:` lines before `Process exited with
/// code 1`).
const HEADER_LINES: usize = 4;
/// The lines a harness writes above its status line, and only it: the
/// Codex CLI's unified exec (`codex-rs/core/src/tools/handlers/
/// unified_exec.rs`, `format_response`). Below any other line the text is
/// the program's, and an `exit status 1` there is the program's own (`go
/// run`'s), not the client's.
const HEADER_KEYS: &[&[u8]] = &[b"Chunk ID: ", b"Wall time: "];
/// How many footer lines are read (the Gemini footer has at most five).
const FOOTER_LINES: usize = 8;
/// The longest line read.
const LINE_BYTES: usize = 512;

/// The status stated by a header line: the first line (Claude Code's
/// `Exit code 1`, the Codex CLI `shell`'s `Exit code: 1`), or one of the
/// first [`HEADER_LINES`] below only a harness's own header lines
/// ([`HEADER_KEYS`]: Codex's `Process exited with code 1`).
pub(super) fn header(prefix: &Regex, head: &[u8]) -> Option<Status> {
    let mut rest = head;
    for _ in 0..HEADER_LINES {
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let line = super::rules::trim_end(&rest[..end.min(LINE_BYTES)]);
        if let Some(code) = exit_status(prefix, line) {
            return Some(status(code));
        }
        if line.starts_with(b"Command terminated by signal ") {
            // Cline's, for a command a signal ended (no exit code).
            return Some(Status::Failed);
        }
        if end == rest.len() || !HEADER_KEYS.iter().any(|k| line.starts_with(k)) {
            return None;
        }
        rest = &rest[end + 1..];
    }
    None
}

/// The status stated by the last line (`[The command completed with exit
/// code 1.]`, `exit status 2`). A failure counts in any of the forms; a
/// success only in the harness's own bracketed line (OpenHands'
/// `[The command completed with exit code 0.]`), which no program prints
/// (a last line `exit status 0` may be a step's, before the run's end).
pub(super) fn trailer(prefix: &Regex, last: &[u8]) -> Option<Status> {
    match exit_status(prefix, last)? {
        // OpenHands' and the GitHub Copilot CLI's trailers follow every
        // command: 0 is the client's own word that it succeeded.
        0 if last.starts_with(b"[The command completed with exit code")
            || last.starts_with(b"<shellId: ") =>
        {
            Some(Status::Succeeded)
        }
        0 => None,
        _ => Some(Status::Failed),
    }
}

/// A last line below the output saying the harness ended the command (pi's
/// `Command timed out after 5 seconds`, `Command aborted`): a failure.
/// `ended` is the rule's anchored pattern; a one-line result is left to
/// the line rules, which read it as the whole answer.
pub(super) fn ended(ended: &Regex, content: &[u8], last: &[u8]) -> Option<Status> {
    if last.is_empty() || !ended.is_match(last) {
        return None;
    }
    let body = super::rules::trim_end(super::rules::start(content));
    memchr::memchr(b'\n', body).map(|_| Status::Failed)
}

/// The paragraphs of advice OpenClaw's `exec` puts after a timed-out
/// command's status (`src/agents/bash-tools.exec-output.ts`,
/// `bash-tools.exec-runtime.ts`), each one line that starts so.
const ADVICE: &[&[u8]] = &[
    b"The command was terminated, but ",
    b"If it should keep running, ",
];

/// Whether `line` is one of OpenClaw's paragraphs of advice ([`ADVICE`]).
pub(super) fn is_advice(line: &[u8]) -> bool {
    ADVICE.iter().any(|a| line.starts_with(a))
}

/// OpenCode's `<shell_metadata>` trailer at the end of `tail`: a failure
/// when it says the harness ended the command (its timeout, or the user's
/// abort). `None` without one, or with only notes it does not know.
pub(super) fn opencode_metadata(tail: &[u8]) -> Option<Status> {
    const OPEN: &[u8] = b"<shell_metadata>\n";
    const CLOSE: &[u8] = b"</shell_metadata>";
    const ENDED: &[&[u8]] = &[
        b"shell tool terminated command after exceeding timeout",
        b"bash tool terminated command after exceeding timeout",
        b"User aborted the command",
    ];
    let body = super::rules::trim_end(tail).strip_suffix(CLOSE)?;
    let start = memchr::memmem::rfind(body, OPEN)? + OPEN.len();
    body[start..]
        .split(|b| *b == b'\n')
        .any(|line| ENDED.iter().any(|e| line.starts_with(e)))
        .then_some(Status::Failed)
}

fn status(code: i64) -> Status {
    if code == 0 {
        Status::Succeeded
    } else {
        Status::Failed
    }
}

/// The Gemini CLI's status footer at the end of `tail` (wrapping tags such
/// as `</untrusted_context>` skipped). `None` when the text does not end
/// with one.
///
/// A footer is the run of trailing `Key: value` lines with the keys
/// `Error`, `Exit Code`, `Signal`, `Background PIDs` and `Process Group
/// PGID`; it must hold `Exit Code` or `Process Group PGID` (a lone
/// trailing `Error: …` or `Signal: …` is program output, not a footer). It fails on a
/// non-zero `Exit Code`, a `Signal` other than `(none)`, or an `Error`
/// other than `(none)` in a footer that also states the exit code (the
/// older format, where every field is always present); otherwise the
/// client reports success.
pub(super) fn gemini_footer(tail: &[u8]) -> Option<Status> {
    // Most outputs have no footer: their last line (past a closing tag)
    // is no footer key.
    let mut end = super::rules::trim_end(tail);
    loop {
        let begin = memchr::memrchr(b'\n', end).map_or(0, |i| i + 1);
        let last = &end[begin..];
        if !last.starts_with(b"</") {
            split_key(last)?;
            break;
        }
        end = super::rules::trim_end(&end[..begin]);
    }
    let mut lines = tail
        .rsplit(|b| *b == b'\n')
        .map(super::rules::trim_end)
        .filter(|l| !l.is_empty())
        .skip_while(|l| l.starts_with(b"</"))
        .take(FOOTER_LINES)
        .peekable();
    let (mut evidence, mut exit_line, mut failed, mut error_set) = (false, false, false, false);
    // Each key once: a key met again above is the program's own line
    // (`Error: printed, not thrown` on its stderr, above Qwen Code's
    // `Error: (none)`), and the footer starts below it.
    let mut seen = 0u8;
    while let Some(line) = lines.next() {
        // The last footer line may be glued to the output's last line when
        // the output had no trailing newline; the footer is what follows.
        let Some((key, value)) = split_key(line) else {
            break;
        };
        let bit = 1 << key as u8;
        if seen & bit != 0 {
            break;
        }
        seen |= bit;
        match key {
            FooterKey::ExitCode => {
                evidence = true;
                exit_line = true;
                if value != b"(none)" {
                    match parse_code(value) {
                        Some(0) => {}
                        Some(_) => failed = true,
                        None => return None,
                    }
                }
            }
            FooterKey::Signal => {
                failed |= value != b"(none)" && !value.is_empty();
            }
            FooterKey::Pgid => evidence = true,
            FooterKey::BackgroundPids => {}
            FooterKey::Error => error_set = value != b"(none)" && !value.is_empty(),
        }
        if lines.peek().is_none() {
            break;
        }
    }
    if !evidence {
        return None;
    }
    if failed || (error_set && exit_line) {
        Some(Status::Failed)
    } else {
        Some(Status::Succeeded)
    }
}

#[derive(Clone, Copy)]
enum FooterKey {
    Error,
    ExitCode,
    Signal,
    BackgroundPids,
    Pgid,
}

fn split_key(line: &[u8]) -> Option<(FooterKey, &[u8])> {
    const KEYS: &[(&[u8], FooterKey)] = &[
        (b"Exit Code: ", FooterKey::ExitCode),
        (b"Signal: ", FooterKey::Signal),
        (b"Error: ", FooterKey::Error),
        (b"Background PIDs: ", FooterKey::BackgroundPids),
        (b"Process Group PGID: ", FooterKey::Pgid),
    ];
    KEYS.iter().find_map(|(k, key)| {
        line.strip_prefix(*k)
            .map(|v| (*key, super::rules::trim_end(v)))
    })
}

/// The status number after an exit-status phrase at the start of `line`.
pub(super) fn exit_status(prefix: &Regex, line: &[u8]) -> Option<i64> {
    let first = *line.first()?;
    if !matches!(
        first.to_ascii_lowercase(),
        b'e' | b'r' | b'p' | b'c' | b's' | b't' | b'j' | b'[' | b'(' | b'<'
    ) {
        return None;
    }
    let m = prefix.find(line)?;
    parse_code(&line[m.end()..])
}

/// A status number of any size or sign at the start of `s` (`1`, `-1`,
/// `3221225794`); a number glued to letters (`1abc`) is not one. Values
/// beyond `i64` saturate (they are non-zero all the same).
pub(super) fn parse_code(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s {
        [b'-', d @ ..] => (true, d),
        d => (false, d),
    };
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 40 {
        return None;
    }
    if digits.get(n).is_some_and(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let value = digits[..n].iter().fold(0i64, |acc, d| {
        acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    Some(if neg { -value } else { value })
}
