//! Task runners' reports, part of `failure_summary`: programs that run
//! many steps and print each step's result, so that a failed step's line
//! is neither the first nor the last and the closing line says nothing of
//! it (the last step may have passed).
//!
//! | program | report (status) |
//! |---|---|
//! | pre-commit | a hook's line `no TODO markers……Failed` above `- hook id: no-todo` (1), among lines `……Passed`, `……Skipped`, `(no files to check)Skipped` |
//! | ansible-playbook | `PLAY RECAP ****…` above one line per host, `localhost : ok=0 changed=0 unreachable=0 failed=1 skipped=0 rescued=0 ignored=0` (2 for a failed task, 4 for an unreachable host; `failed=0 … ignored=1` for an error a task ignored, 0) |
//!
//! Each is read only when the output opens or ends with the runner's own
//! line (a hook's status line, a host's recap line): most outputs stop at
//! their last line's last bytes.

use std::sync::LazyLock;

use memchr::memmem;

use super::golang::lines_from_end;
use super::rules::trim_end;

/// How much of the output pre-commit's failed hook is looked for in.
const PRE_COMMIT_BYTES: usize = 64 * 1024;
/// The most hosts' lines read below `PLAY RECAP`.
const MAX_RECAP_HOSTS: usize = 256;
/// The longest line read as a hook's status or a host's recap.
const LINE_BYTES: usize = 512;

/// pre-commit's lines for a hook that failed: its status, then its id
/// (`pre_commit/commands/run.py`'s `_run_single_hook`).
static HOOK_FAILED: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"Failed\n- hook id: "));

/// Does the output, whose first or last line `line` is a line of
/// pre-commit's hooks, hold a hook that failed?
pub(super) fn pre_commit_failed(content: &[u8], line: &[u8]) -> bool {
    hook_status(line)
        && HOOK_FAILED
            .find(&content[..content.len().min(PRE_COMMIT_BYTES)])
            .is_some()
}

/// A hook's status line: its name padded with dots to the terminal's
/// width, then `Passed`, `Failed` or `Skipped` (`(no files to
/// check)Skipped`).
fn hook_status(line: &[u8]) -> bool {
    matches!(line.last(), Some(b'd'))
        && line.len() <= LINE_BYTES
        && (line.ends_with(b"Passed") || line.ends_with(b"Failed") || line.ends_with(b"Skipped"))
        && memmem::find(line, b"....").is_some()
}

/// Does the output end with ansible-playbook's recap (`last`, its last
/// line, a host's) counting a failed task or an unreachable host?
pub(super) fn ansible_recap_failed(window: &[u8], last: &[u8]) -> bool {
    if recap_host(last).is_none() {
        return false;
    }
    let mut failed = false;
    for line in lines_from_end(window).take(MAX_RECAP_HOSTS + 1) {
        let line = trim_end(line);
        if line.starts_with(b"PLAY RECAP ") {
            return failed;
        }
        match recap_host(line) {
            Some(host_failed) => failed |= host_failed,
            None => return false,
        }
    }
    false
}

/// A host's line in the recap, `localhost  : ok=2 changed=1
/// unreachable=0 failed=0 skipped=0 rescued=0 ignored=1` (ansible's
/// `default` callback): did a task fail or the host not answer?
fn recap_host(line: &[u8]) -> Option<bool> {
    // `ignored=N` ends it (since ansible 2.8): most lines that end with a
    // digit stop here.
    let digits = line.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0
        || line.len() > LINE_BYTES
        || !line[..line.len() - digits].ends_with(b" ignored=")
    {
        return None;
    }
    let colon = memmem::find(line, b" : ok=")?;
    let mut failed = false;
    for field in line[colon + 3..]
        .split(|b| *b == b' ')
        .filter(|f| !f.is_empty())
    {
        let eq = memchr::memchr(b'=', field)?;
        let (key, n) = (&field[..eq], &field[eq + 1..]);
        if n.is_empty() || !n.iter().all(u8::is_ascii_digit) {
            return None;
        }
        if matches!(key, b"failed" | b"unreachable") {
            failed |= n.iter().any(|b| *b != b'0');
        }
    }
    Some(failed)
}
