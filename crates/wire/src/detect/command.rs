//! The call's command, where the verdict can use it: a shell call that
//! only prints files (`tail -1 build.log`, `cat app.log`, `grep ERROR
//! app.log`) answers with the files' text, not with a report of its own.
//! A failure report in that text (`make: *** … Error 1`, a traceback, a
//! first line `Error: …`) is an earlier run's, written to the file; only
//! the reader's own complaint (`tail: cannot open 'build.log' for reading:
//! No such file or directory`) says the command failed.
//!
//! [`command_of`] finds the command in a call's JSON arguments: a string
//! `command` or `cmd` (Claude Code's `Bash`, the Codex CLI's
//! `exec_command`, the Gemini CLI's `run_shell_command`, MCP shell
//! servers), or an argv array (the Codex CLI's `shell`: `["bash", "-lc",
//! "tail -1 build.log"]`). [`file_reader`] says whether the command is one
//! simple command of a program that prints files ([`READERS`]): words in
//! plain, single or double quotes, no pipe, list, substitution,
//! redirection (other than `2>&1` and `2>/dev/null`), subshell or
//! variable assignment, at most [`MAX_COMMAND_BYTES`] long. Anything else
//! is left to the content rules alone.

use std::borrow::Cow;

/// The programs whose output is the files they read.
pub const READERS: &[&str] = &[
    "cat", "tac", "nl", "head", "tail", "less", "more", "zcat", "bat", "grep", "egrep", "fgrep",
    "zgrep", "rg",
];

/// The longest command read (and the longest arguments text parsed: a
/// file reader's call is short).
pub const MAX_COMMAND_BYTES: usize = 1024;

/// A program of [`READERS`], in one byte: all the verdict needs to know of
/// a call whose command only prints files, small enough to be kept with a
/// call remembered between requests (a Responses request continuing a
/// `previous_response_id` holds its results, not their calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reader(u8);

// === impl Reader ===

impl Reader {
    /// The reader of `command`, when it is one simple command of a program
    /// that prints files (see [`file_reader`]).
    pub fn of_command(command: &str) -> Option<Reader> {
        file_reader(command)
            .and_then(|name| READERS.iter().position(|r| *r == name))
            .and_then(|i| u8::try_from(i).ok())
            .map(Reader)
    }

    /// The reader of the shell command in a call's JSON `arguments` (see
    /// [`command_of`]); `None` without a command or with another one.
    pub fn of_arguments(arguments: &str) -> Option<Reader> {
        Reader::of_command(&command_of(arguments)?)
    }

    /// The program's name (`tail`): its own complaints open with it.
    pub fn name(self) -> &'static str {
        READERS[usize::from(self.0)]
    }
}

/// The shell command a call's JSON `arguments` carry, if any: a string
/// `command` or `cmd`, or the script of an argv array `[shell, "-c" or
/// "-lc", script]` (a plain argv array is joined with spaces). `None` for
/// arguments longer than [`MAX_COMMAND_BYTES`], not JSON, or without such
/// a field.
pub fn command_of(arguments: &str) -> Option<Cow<'_, str>> {
    if arguments.len() > MAX_COMMAND_BYTES
        || !(arguments.contains("\"command\"") || arguments.contains("\"cmd\""))
    {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    let field = value.get("command").or_else(|| value.get("cmd"))?;
    match field {
        serde_json::Value::String(s) => Some(Cow::Owned(s.clone())),
        serde_json::Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().map(|w| w.as_str()).collect::<Option<_>>()?;
            match words.as_slice() {
                [shell, flag, script]
                    if is_shell(shell) && matches!(*flag, "-c" | "-lc" | "-ic") =>
                {
                    Some(Cow::Owned((*script).to_owned()))
                }
                [] => None,
                // Its words as a command line (a word with a space or a
                // quote in it is not a reader's: refused below).
                _ => Some(Cow::Owned(words.join(" "))),
            }
        }
        _ => None,
    }
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh" | "zsh" | "dash" | "ksh")
}

/// The program's name when `command` is one simple command of a program
/// in [`READERS`] (`/usr/bin/tail -n 5 build.log` → `tail`).
pub fn file_reader(command: &str) -> Option<&'static str> {
    if command.len() > MAX_COMMAND_BYTES {
        return None;
    }
    let mut command = command.trim();
    // Its complaints, kept or dropped, are still its own.
    while let Some(rest) = command
        .strip_suffix(" 2>&1")
        .or_else(|| command.strip_suffix(" 2>/dev/null"))
    {
        command = rest.trim_end();
    }
    let words = simple_words(command)?;
    let first = words.first()?;
    let name = first.rsplit('/').next().unwrap_or(first);
    READERS.iter().find(|r| **r == name).copied()
}

/// The words of a simple command (quotes removed), or `None` when it is
/// more than one: a pipe, a list, a substitution, a redirection, a
/// subshell, a group, an unclosed quote. (A glob is fine: it names files.)
fn simple_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        // A substitution runs another command.
                        '`' => return None,
                        '$' if chars.peek() == Some(&'(') => return None,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            '$' if chars.peek() == Some(&'(') => return None,
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '`' | '\n' | '\r' | '{' | '}' => {
                return None;
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    // `VAR=x cmd` names no reader first.
    if words.first().is_some_and(|w| w.contains('=')) {
        return None;
    }
    Some(words)
}
