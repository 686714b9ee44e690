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
//! "tail -1 build.log"]`). [`file_reader`] says whether the command only
//! prints files: a command of a program that prints files ([`READERS`]),
//! or a pipeline of them, after shell builtins that print nothing (`cd
//! src && tail -5 build.log`); words in plain, single or double quotes,
//! no substitution, redirection (other than `2>&1` and `2>/dev/null`) or
//! subshell, at most [`MAX_COMMAND_BYTES`] long (split by `shell.rs`).
//! Variable assignments before a command (`LC_ALL=C tail -1 build.log`,
//! `env -i PATH=/usr/bin go build`) change its environment, not its
//! program ([`Simple`]); alone (`A=1; cat a.log`) they print nothing.
//!
//! A Go tool's failure may have no header or closing line of its own
//! (`go build`'s `go: updates to go.mod needed; to update it:` above
//! `\tgo mod tidy`, gofmt's `main.go:3:1: expected declaration, found
//! foo`), in the shape of a linter's report or of `go mod init`'s
//! success: [`Program`] also names such a tool ([`GoTool`]), run as the
//! line's one command after the same builtins, and the verdict reads its
//! failures (`golang.rs`). Anything else is left to the content rules
//! alone.

use std::borrow::Cow;

use super::shell::{self, Token};

/// The programs whose output is the files they read.
pub const READERS: &[&str] = &[
    "cat", "tac", "nl", "head", "tail", "less", "more", "zcat", "bat", "grep", "egrep", "fgrep",
    "zgrep", "rg",
];

/// The longest command read (and the longest arguments text parsed: a
/// file reader's call is short).
pub const MAX_COMMAND_BYTES: usize = 1024;

/// The program a call's command runs, in one byte: all the verdict needs
/// to know of the call, small enough to be kept with a call remembered
/// between requests (a Responses request continuing a
/// `previous_response_id` holds its results, not their calls). Either a
/// file reader of [`READERS`] (its output is the files' text), or a Go
/// tool whose failures print no header or closing line of their own (see
/// [`GoTool`]); any other command is none (`None` where one is taken).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Program(u8);

/// A Go tool the verdict reads with its program known: what it prints
/// when it fails has the shape a linter prints on success (`main.go:3:8:
/// no required module provides package …`, `main.go:3:1: expected
/// declaration, found foo`), or that of another subcommand's success
/// (`go: updates to go.mod needed; to update it:` / `\tgo mod tidy` is
/// `go build`'s failure, `go: to add module requirements and sums:` /
/// `\tgo mod tidy` `go mod init`'s success).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GoTool {
    /// The go command acting on packages or the module, whose output is
    /// its own: `go build`, `go vet`, `go test`, `go install`, `go get`,
    /// `go list` (without `-e`), `go mod tidy`, `go mod download`, `go mod
    /// verify`, `go mod vendor`, `go mod init`.
    Build,
    /// `go run`: the go command's output, then the program's, then, when
    /// the program did not exit 0, its status in `os.ProcessState`'s words
    /// (`exit status 3`, `signal: killed`; cmd/go `base.RunStdin`). A
    /// failure of the go command before the program ran is read only when
    /// the whole output is the go command's (the program's own output may
    /// end in any shape).
    Run,
    /// `go generate`: the generators' output, and a generator's failure as
    /// its last line (`main.go:3: running "stringer": exit status 1`), or
    /// the go command's own failure when the whole output is its own.
    Generate,
    /// `go list -e`: it prints the packages' errors in its output and
    /// exits 0 (`main.go:3:8: no required module provides package …`,
    /// `"Error": {…}`): a report, read as a file reader's output is, with
    /// only the go command's own failure (`go: go.mod file not found …`)
    /// at its end.
    Report,
    /// `gofmt`, with any flags (`-l`, `-d`, `-w`, `-s`): a syntax error
    /// is reported as `file.go:3:1: expected declaration, found foo`
    /// (status 2), a missing file as `stat x.go: no such file or
    /// directory`, between the other files' names or diffs.
    Gofmt,
}

/// [`Program`]'s bytes for the Go tools (the readers' are their index in
/// [`READERS`], below).
const GO_BUILD: u8 = 0x40;
const GOFMT: u8 = 0x41;
const GO_RUN: u8 = 0x42;
const GO_GENERATE: u8 = 0x43;
const GO_REPORT: u8 = 0x44;

// === impl Program ===

impl Program {
    /// The program of `command`: a file reader (see [`file_reader`]) or a
    /// Go tool (see [`GoTool`]), run as the one command of the line (a
    /// reader in a pipeline of readers), after shell builtins that print
    /// nothing (`cd src && go build ./...`), with any variable assignments
    /// before it (`GOFLAGS=-mod=mod go build ./...`, `env -i A=b go
    /// build`); or the go command piped into `tail` with a line count
    /// (`go build ./... 2>&1 | tail -5`: its last lines).
    pub fn of_command(command: &str) -> Option<Program> {
        if command.len() > MAX_COMMAND_BYTES {
            return None;
        }
        let tokens = shell::tokens(command)?;
        let (last, goflags_e) = last_command(&tokens)?;
        if let Some(name) = readers_pipeline(last) {
            return READERS
                .iter()
                .position(|r| *r == name)
                .and_then(|i| u8::try_from(i).ok())
                .map(Program);
        }
        go_tool(last, goflags_e)
            .or_else(|| go_build_tail(last, goflags_e))
            .map(|tool| {
                Program(match tool {
                    GoTool::Build => GO_BUILD,
                    GoTool::Run => GO_RUN,
                    GoTool::Generate => GO_GENERATE,
                    GoTool::Report => GO_REPORT,
                    GoTool::Gofmt => GOFMT,
                })
            })
    }

    /// The program of the shell command in a call's JSON `arguments` (see
    /// [`command_of`]); `None` without a command or with another one.
    pub fn of_arguments(arguments: &str) -> Option<Program> {
        Program::of_command(&command_of(arguments)?)
    }

    /// The file reader's name (`tail`: its own complaints open with it),
    /// when the program only prints files.
    pub fn reader(self) -> Option<&'static str> {
        READERS.get(usize::from(self.0)).copied()
    }

    /// The Go tool, when the program is one.
    pub fn go_tool(self) -> Option<GoTool> {
        match self.0 {
            GO_BUILD => Some(GoTool::Build),
            GO_RUN => Some(GoTool::Run),
            GO_GENERATE => Some(GoTool::Generate),
            GO_REPORT => Some(GoTool::Report),
            GOFMT => Some(GoTool::Gofmt),
            _ => None,
        }
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

/// The program's name when `command` prints only files: a command of a
/// program in [`READERS`] (`/usr/bin/tail -n 5 build.log` → `tail`), or a
/// pipeline of such commands (`grep ERROR app.log | tail -20` → `grep`,
/// whose complaints come first), after shell builtins that print nothing
/// of their own (`cd src && tail -5 build.log`; `cd`, `export`, `unset`,
/// `set -e`, `true`, assignments alone). Each reader may have its stderr
/// joined or dropped (`2>&1`, `2>/dev/null`) and variables assigned
/// before it (`LC_ALL=C tail -1 build.log`, `env LANG=C cat a.log`).
///
/// A list with any other command before the reader is not a reader's:
/// that command's output (its stderr, at least) comes before the file's,
/// and the file may be what it just wrote (`make > build.log 2>&1; tail
/// -3 build.log` prints this build's failure), as a pipe from another
/// program is that program's (`make 2>&1 | tail -20`).
pub fn file_reader(command: &str) -> Option<&'static str> {
    if command.len() > MAX_COMMAND_BYTES {
        return None;
    }
    let tokens = shell::tokens(command)?;
    readers_pipeline(last_command(&tokens)?.0)
}

/// The list's last command, when every command before it is [`silent`],
/// with whether GOFLAGS as those commands export it holds `-e` (`export
/// GOFLAGS=-e && go list ./...` is `go list -e`).
fn last_command(tokens: &[Token]) -> Option<(&[Token], bool)> {
    let mut commands: Vec<&[Token]> = tokens.split(|t| matches!(t, Token::Separator)).collect();
    // A separator may end the line (`cat a.log;`).
    if commands.len() > 1 && commands.last().is_some_and(|c| c.is_empty()) {
        commands.pop();
    }
    let (last, before) = commands.split_last()?;
    let mut goflags_e = false;
    for command in before {
        let command = simple(command)?;
        let words: Vec<&str> = command.words().collect();
        if !silent(&words, command.assigns) {
            return None;
        }
        match words.as_slice() {
            ["export", names @ ..] => {
                for name in names {
                    if let Some(value) = name.strip_prefix("GOFLAGS=") {
                        goflags_e = has_e_flag(value);
                    }
                }
            }
            ["unset", names @ ..] if names.contains(&"GOFLAGS") => goflags_e = false,
            _ => {}
        }
    }
    Some((*last, goflags_e))
}

/// A simple command as it runs: its program's words after the variable
/// assignments before them (`GOFLAGS=-mod=mod go build ./...`,
/// `RUST_BACKTRACE=1 cargo test`) and after `env`'s options and
/// assignments (`env -i PATH=/usr/bin make`, `env -u GOFLAGS go vet`): the
/// same program, its output the same but for what the environment
/// changes.
struct Simple<'a> {
    /// The command's tokens from its program's name on (from `env` when
    /// it names no program: it prints the environment), with no pipe or
    /// separator.
    rest: &'a [Token],
    /// An assignment came before the program (or stands alone: `A=b`).
    assigns: bool,
    /// Whether GOFLAGS as the command sets it holds `-e` (`GOFLAGS=-e go
    /// list`; `env -i` and `env -u GOFLAGS` unset it); `None` when the
    /// command leaves it as it was.
    goflags_e: Option<bool>,
}

/// The simple command of `command` (see [`Simple`]): `None` with a pipe or
/// a separator in it, or an `env` option that is not read (`env -S`,
/// `env -C dir`). Reads the tokens in place: no allocation.
fn simple(command: &[Token]) -> Option<Simple<'_>> {
    if command
        .iter()
        .any(|t| matches!(t, Token::Pipe | Token::Separator))
    {
        return None;
    }
    let (mut assigns, mut goflags_e) = (false, None);
    // The shell's assignments, before the program's name.
    let mut start = command.len();
    for (i, t) in command.iter().enumerate() {
        match t {
            Token::Assignment(a) => {
                assigns = true;
                if let Some(value) = a.strip_prefix("GOFLAGS=") {
                    goflags_e = Some(has_e_flag(value));
                }
            }
            Token::Word(_) => {
                start = i;
                break;
            }
            Token::StderrRedirect | Token::Pipe | Token::Separator => {}
        }
    }
    // `env [-i] [-u NAME] [--] [NAME=value]... program ...`: env takes any
    // argument with `=` in it for an assignment, quoted or not, up to the
    // first without one.
    loop {
        let mut words = words_from(command, start);
        if words
            .next()
            .is_none_or(|(_, w)| w.rsplit('/').next() != Some("env"))
        {
            break;
        }
        let mut env_goflags_e = goflags_e;
        while let Some(&(_, word)) = words.peek() {
            match word {
                "-i" | "--ignore-environment" | "-" => env_goflags_e = Some(false),
                "-u" | "--unset" => {
                    words.next();
                    if words.peek().is_some_and(|&(_, name)| name == "GOFLAGS") {
                        env_goflags_e = Some(false);
                    }
                }
                "--unset=GOFLAGS" | "-uGOFLAGS" => env_goflags_e = Some(false),
                "--" => {
                    words.next();
                    break;
                }
                w if w.starts_with("--unset=") || (w.starts_with("-u") && w.len() > 2) => {}
                w if w.starts_with('-') => return None,
                _ => break,
            }
            words.next();
        }
        let mut env_assigns = false;
        while let Some(&(_, word)) = words.peek() {
            let Some((name, value)) = word.split_once('=') else {
                break;
            };
            if name.is_empty() {
                return None;
            }
            if name == "GOFLAGS" {
                env_goflags_e = Some(has_e_flag(value));
            }
            env_assigns = true;
            words.next();
        }
        // No program: env prints the environment.
        let Some(&(program, _)) = words.peek() else {
            break;
        };
        start = program;
        assigns |= env_assigns;
        goflags_e = env_goflags_e;
    }
    Some(Simple {
        rest: &command[start..],
        assigns,
        goflags_e,
    })
}

/// The words of `command` from its token `start` on, each with its
/// token's index (assignment-shaped words too; redirections skipped).
fn words_from(
    command: &[Token],
    start: usize,
) -> std::iter::Peekable<impl Iterator<Item = (usize, &str)>> {
    command
        .iter()
        .enumerate()
        .skip(start)
        .filter_map(|(i, t)| match t {
            Token::Word(w) | Token::Assignment(w) => Some((i, w.as_str())),
            Token::StderrRedirect | Token::Pipe | Token::Separator => None,
        })
        .peekable()
}

// === impl Simple ===

impl<'a> Simple<'a> {
    /// The program's name and its arguments.
    fn words(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        words_from(self.rest, 0).map(|(_, w)| w)
    }
}

/// Does GOFLAGS's `value` (space-separated flags) set `-e`? The last
/// `-e` flag decides, as on the command line.
fn has_e_flag(value: &str) -> bool {
    value
        .split_ascii_whitespace()
        .rev()
        .find_map(|f| bool_flag(f, "e"))
        .unwrap_or(false)
}

/// The value `flag` gives the Go boolean flag `name`, or `None` when it is
/// another word. Go's `flag` package takes one or two dashes alike (`-e`,
/// `--e`) and, after `=`, any of `strconv.ParseBool`'s words (`-e=1`,
/// `--e=false`).
fn bool_flag(flag: &str, name: &str) -> Option<bool> {
    let rest = flag.strip_prefix("--").or_else(|| flag.strip_prefix('-'))?;
    match rest.strip_prefix(name)? {
        "" | "=1" | "=t" | "=T" | "=true" | "=TRUE" | "=True" => Some(true),
        "=0" | "=f" | "=F" | "=false" | "=FALSE" | "=False" => Some(false),
        _ => None,
    }
}

/// The first reader of a pipeline of readers (`grep ERROR app.log | tail
/// -20` → `grep`, whose complaints come first).
fn readers_pipeline(command: &[Token]) -> Option<&'static str> {
    let mut stages = command.split(|t| matches!(t, Token::Pipe));
    let first = reader_of(stages.next()?)?;
    stages.all(|s| reader_of(s).is_some()).then_some(first)
}

/// The Go tool a simple command runs (by path too, its stderr joined or
/// dropped, after assignments and `env`, see [`Simple`]): `go [-C dir]
/// build|vet|test|install|get|list …`, `go [-C dir] mod
/// tidy|download|verify|vendor|init …`, `go run …`, `go generate …`,
/// `gofmt …` (see [`GoTool`]; `go list` with `-e`, given or in GOFLAGS,
/// is a report). A pipeline is none (`go build ./... 2>&1 | tail -5`: see
/// [`go_build_tail`]). `goflags_e`: GOFLAGS as the list exported it before holds
/// `-e`.
fn go_tool(command: &[Token], goflags_e: bool) -> Option<GoTool> {
    let command = simple(command)?;
    // The command's own GOFLAGS, if it sets one, is the one the go
    // command sees.
    let goflags_e = command.goflags_e.unwrap_or(goflags_e);
    let words: Vec<&str> = command.words().collect();
    let (program, rest) = words.split_first()?;
    match program.rsplit('/').next().unwrap_or(program) {
        "gofmt" => Some(GoTool::Gofmt),
        "go" => {
            // `go -C dir build` (Go 1.20's flag, before the subcommand).
            let rest = match rest {
                ["-C", _, rest @ ..] => rest,
                rest => rest,
            };
            match rest {
                // A flag given overrides GOFLAGS's (`-e=false`), the last
                // one given the others (`--e`, `-e=1` are `-e`).
                ["list", flags @ ..]
                    if flags
                        .iter()
                        .rev()
                        .find_map(|f| bool_flag(f, "e"))
                        .unwrap_or(goflags_e) =>
                {
                    Some(GoTool::Report)
                }
                ["build" | "vet" | "test" | "install" | "get" | "list", ..]
                | [
                    "mod",
                    "tidy" | "download" | "verify" | "vendor" | "init",
                    ..,
                ] => Some(GoTool::Build),
                ["run", ..] => Some(GoTool::Run),
                ["generate", ..] => Some(GoTool::Generate),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `go build ./... 2>&1 | tail -n 20`: the go command acting on packages
/// or the module ([`GoTool::Build`]) piped into `tail` with only a line
/// count (`-n N`, `-N`, `--lines=N`, `+N`; more tails after it). With its
/// stderr joined or dropped, its output is the last lines of the go
/// command's output, and the go command's failure is read from its last
/// unindented line and the continuations below it (`golang.rs`'s
/// `tool_failed`): the same reading as of the whole output when tail shows
/// that line, none when it shows only continuations. Without (`go build
/// ./... | tail -3`), its stderr comes whole (tail prints when go has
/// closed its stdout), above its stdout's last lines: the whole output
/// when its stdout is empty (go build, vet, mod tidy print their reports
/// on stderr), else read from the stdout's last lines, as with
/// `2>/dev/null`. Not go run's or go generate's (their
/// go command's failure is read only when the whole output is its own: a
/// tail cuts the program's lines above it), gofmt's (a tail may cut the
/// source lines that tell its output from a report) or `head`'s (the
/// report's end is cut).
fn go_build_tail(command: &[Token], goflags_e: bool) -> Option<GoTool> {
    let mut stages = command.split(|t| matches!(t, Token::Pipe));
    let go = stages.next()?;
    let tool = go_tool(go, goflags_e).filter(|t| *t == GoTool::Build)?;
    let mut tails = 0;
    for stage in stages {
        let stage = simple(stage)?;
        let words: Vec<&str> = stage.words().collect();
        let lines = |n: &str| {
            let n = n.strip_prefix('+').unwrap_or(n);
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        };
        let count = match words.as_slice() {
            ["tail"] => true,
            ["tail", "-n" | "--lines", n] => lines(n),
            ["tail", flag] => flag
                .strip_prefix("--lines=")
                .or_else(|| flag.strip_prefix("-n"))
                .or_else(|| flag.strip_prefix('-'))
                .is_some_and(lines),
            _ => false,
        };
        if !count {
            return None;
        }
        tails += 1;
    }
    (tails > 0).then_some(tool)
}

/// The reader a simple command runs: its first word (after assignments
/// and `env`, see [`Simple`]) names a program in [`READERS`] (by path
/// too), the rest are words and stderr redirections.
fn reader_of(command: &[Token]) -> Option<&'static str> {
    let program = simple(command)?.words().next()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    READERS.iter().find(|r| **r == name).copied()
}

/// A command that prints nothing when it succeeds and writes no file (its
/// [`Simple`] words, and whether assignments came before them): a
/// shell builtin that changes only the shell's state (`cd DIR`, `export
/// A=b`, `unset A`, `set -e` / `set -o pipefail`, `true`, `:`), or
/// variable assignments alone (`GOFLAGS=-mod=mod`). When it fails, its
/// complaint is the shell's (`bash: cd: x: No such file or directory`),
/// which the verdict reads as the reader's own. Not `cd -` (it prints the
/// directory), `set -x` (it prints each command), `export -p` (it prints
/// the variables), a bare `set` or a bare `env`.
fn silent(words: &[&str], assigns: bool) -> bool {
    match words {
        [] => assigns,
        ["cd"] | ["true" | ":", ..] => true,
        ["cd", dir] => *dir != "-",
        ["export" | "unset", names @ ..] => {
            !names.is_empty() && names.iter().all(|n| !n.starts_with('-'))
        }
        ["set", options @ ..] => {
            !options.is_empty()
                && options.iter().all(|o| {
                    matches!(
                        *o,
                        "-e" | "-u"
                            | "-eu"
                            | "-ue"
                            | "-o"
                            | "-eo"
                            | "-euo"
                            | "-ueo"
                            | "+e"
                            | "pipefail"
                            | "errexit"
                            | "nounset"
                    )
                })
        }
        _ => false,
    }
}
