//! The content detector: did a tool fail, judged from its output alone.
//!
//! Used where the API has no error flag (Chat `role: tool`, Responses
//! outputs). A [`Detector`] applies a few named rules, each describing how
//! real agent harnesses and tools *structurally* report a failure. What
//! separates a failure report from output that merely mentions errors is
//! **position**: the rules look at the start of the text, its first line,
//! its last line (exit-status trailers) and the top-level keys of a JSON
//! object, never at words deep inside a log, a file or a grep result.
//!
//! | rule | fires when |
//! |---|---|
//! | `framed_error` | the text starts with our own framing `Tool error (<kind>): …` ([`toolwarden_core::FLAGLESS_ERROR_PREFIX`]) |
//! | `error_tag` | the text starts with an error tag: `<tool_use_error>`, `<error>`, `<Error>` (S3), `<tool-error code="…">` |
//! | `exit_status` (basis `client`) | the client's own status fields say the command failed: a header line (the first, or one below only Codex's `Chunk ID:` and `Wall time:` lines) or the last line states a non-zero exit status of any size or sign (`Exit code 1`, `Exit code: 2`, `Process exited with code 3221225794`, `[The command completed with exit code -1.]`, Cline's `Command failed with exit code 1.` and `Command terminated by signal SIGKILL.`, the GitHub Copilot CLI's `<shellId: 0 completed with exit code 2>`), or the Gemini CLI's shell footer (`Exit Code: 1`, `Signal: 9`, `Error: …`; see `client.rs`); a header stating status 0 (Cline's `Command executed successfully (exit code 0).`), OpenHands' trailing `[The command completed with exit code 0.]` or the Copilot CLI's `<shellId: 1 completed with exit code 0>`, or a complete footer without a failure, is a client-stated success that vetoes every rule (a last line stating 0 in other words decides nothing) |
//! | `user_denied` | the first line says the user, a hook or a policy rejected, denied or interrupted the call: `The user doesn't want to proceed…`, `Permission to use Bash has been denied`, `[Request interrupted by user]`, `exec command rejected by user`, `Tool call execution denied.` (the Vercel AI SDK's), `… but you haven't granted it yet` |
//! | `crash_trace` | the text starts with a crash report (`Traceback (most recent call last):`, `thread 'main' panicked at` (`thread 'main' (29402) panicked at` since Rust 1.91), `Exception in thread`, `Uncaught TypeError`, `** (RuntimeError)`, ESLint's `Oops! Something went wrong! :(` above `ESLint: 9.39.5`) or ends with one (a traceback's exception line, Python's `SyntaxError: …` below its `File "s.py", line 1` without a traceback header, Node's `Node.js vX` trailer, a Rust panic's `note:`, a Go panic's goroutine frames below `panic: …`; see `trace.rs` for the JVM's, Lua's, Ruby's, PHP's, OCaml's, escript's, rollup's and SQLAlchemy's reports below output) |
//! | `error_label` | the first line opens with an error label: `Error:`, `ERROR -`, `error[E0425]:`, `fatal:`, `[ERROR]`, `ValueError:`, `ToolException:`, `NameError('…')`, `Error executing tool X`, `Error listing directory: …` (any `Error <doing> …:`), `MCP error -32602`, `PreToolUse:Bash hook error`, `An error occurred`, jq's `jq: error (at <stdin>:1): …` and `parse error: … at line 1, column 9`, libxml2's (xmllint's) `a.xml:3: parser error : …`, markdownlint's `a.md:1 error MD022/blanks-around-headings …`; or the output opens with OCaml's compiler error (`File "a.ml", line 1, characters 14-21:` above the excerpt and `Error: This expression has type …`); or one of the first three lines is a compiler diagnostic `file:line:col: error:` or `file(line,col): error TS2322:` (tsc, C#, MSVC), or the output opens with rustfmt's check report (`Diff in /src/main.rs:1:` above the diff) (`error: null` is a key, not a label) |
//! | `os_error` | the text starts with an OS error: an errno name (`ENOENT: …`, `EISDIR: …`), `[Errno 2] …`, `No such file or directory`, `File does not exist`, `Path /a/b does not exist` (a path named between), `Permission denied`, `Connection refused`; or its first line is a shell's `command not found` |
//! | `http_status` | the first line is an HTTP error status: `HTTP/1.1 404 Not Found`, `503 Service Unavailable`, `404 Client Error: …`, `Status code: 500` |
//! | `json_error` | the text is a JSON object (or a Python `repr` dict) whose top level says the call failed: a non-empty `error`/`errors`/`error_message`/`error_type`/`error_details`/`exception` (ADK's `ReflectAndRetryToolPlugin` answers with the last two), an envelope `"status": "error"`/`"fail"` or a 4xx/5xx status, `"status": "failure"` with a `message`/`reason`/`error` and no data beside them, `"ok": false`, `"success": false`, `"isError": true`, a non-zero `exit_code` (also inside a top-level `metadata`); or a JSON array of a batch's outcomes, every item stating its own `success`/`ok` and one `false` beside a non-empty `error` (Cline's `read_files` and `run_commands`: `[{"query": "ls x", "result": "…", "error": "Command exited with code 2", "success": false}]`) |
//! | `failure_statement` | the first line opens with a short statement of failure: `Build failed`, `Pre-commit validation failed:`, `Could not resolve host`, `Unable to connect`, `Command timed out after 2m`, `Tool 'get_weather' timed out after 5 seconds.` (a quoted name among the words before), `Invalid patch: …`, `Cancelled: …`, twine check's `Checking dist/a.whl: FAILED`, `Unknown tool: x`, `No such tool`, `Tool "x" not found`, a schema validator's `params/path must be string`, `Agent type 'x' not found`, `File content (…) exceeds maximum allowed tokens`, `Rate limit exceeded`; or the whole text is one status word (`aborted`, `timed out`, …), or a Python exception's message alone as CPython words it (`'NoneType' object has no attribute 'value'`, `list index out of range`: LlamaIndex's answer to a tool that raised), or a JavaScript one's as V8 does (`t.startsWith is not a function`, `Cannot read properties of undefined (reading 'length')`: the Continue CLI's). Not when spoken by an assistant (`I cannot find…`), negated (`No tests failed`), a zero count (`failed: 0`) or a table's first field (`failed\|Error: …`, `failed\t3`) |
//! | `shell_diagnostic` | the *whole* output (at most three lines) is a program's complaint: `ls: cannot access 'x': No such file or directory`, `curl: (7) Failed to connect …`, a shell's `bash: -c: line 1: syntax error near unexpected token …` above its quoted line, the complaint opening the message or a field after the operands; followed by any other output (an `\|\| echo`, the command's results), said by a warning (`warning: could not open directory …`, git's, exit 0) or in a sentence (`fix: users cannot log in`) it is not |
//! | `harness_refusal` | the agent harness refused or cancelled the call (see `refusal.rs`): `Tool execution denied by policy.`, `MCP tool call requires approval, but approval policy is never`, `… auto-denied …`, `writing is blocked by read-only sandbox`, `Path not in workspace: …`, `[Operation Cancelled] Reason: …`, `Command was automatically cancelled because it exceeded the timeout …`, `File has been modified since read …` |
//! | `failure_summary` | the output's closing line (below git's `hint:` advice, cargo's list of failed targets, javac's warning count, npm's update banner) is its program's statement that it failed (see `summary.rs`): `error: could not compile …`, `error: test failed, to rerun pass …`, `==== 1 failed, 3 passed in 0.03s ====`, `FAILED (failures=1)`, `make: *** [Makefile:3: all] Error 1`, `npm error …`, pnpm's ` ELIFECYCLE  Command failed with exit code 1.`, yarn's `error Command failed with exit code 1.`, `collect2: error: ld returned 1 exit status`, `Automatic merge failed; …`, argparse's `prog: error: …` below its `usage: prog` line, Python's `/usr/bin/python3: No module named x` (runpy's), `jq: 1 compile error`; or the output ends with a compiler's report holding an error (`main.c:6:12: error: …` with only warnings, notes, source excerpts and counts below it: gcc prints no closing line), or with Go's report (`# example.com/pkg` above `./main.go:6:14: undefined: x`; go test's `FAIL\texample.com/pkg\t0.002s`; see `golang.rs`; with the call's Go tool known, its failures without a header: `go: updates to go.mod needed; …` from `go build`, `main.go:3:1: expected declaration, found foo` from gofmt), or eslint's `✖ 2 problems (2 errors, 0 warnings)`, or a task runner's report of a failed step (pre-commit's `……Failed` above `- hook id: x`, ansible-playbook's recap `localhost : ok=0 changed=0 unreachable=0 failed=1 …`; see `runners.rs`), or a test runner's count of failures above only its counts and times (jest's `Test Suites: 1 failed, 1 total`, vitest's ` Test Files  1 failed (1)`, node --test's `# fail 1`), ruff's `Found 3 errors.`, black's report below `Oh no! 💥 💔 💥`, pip's `ERROR: No matching distribution found for x`, `curl: (7) …`, perl's `Execution of a.pl aborted due to compilation errors.`; not `1 xfailed`, `OK (expected failures=1)` or make's `… Error 1 (ignored)` |
//!
//! What the rules deliberately leave alone: words like `error`, `failed`
//! or `cannot` anywhere but at the start; `Error` in file contents, grep
//! hits (`path:line:`), logs and test summaries (`0 failed`); JSON with
//! `"error": null`; a Python log record (`ERROR:root:…`: a label's colon
//! has a space or the line's end after it); an entity's state
//! (`{"status": "failed"}` of a job the tool looked up, a bare `failure`
//! or `{"status": "failure"}`, as a CI run's conclusion or a commit
//! status reads); a `git log --oneline` line (`a1b2c3d tests failed on
//! CI`); a count and a file name (`410 gone.txt`, `wc`'s); a table row
//! whose first field is a state (`failed|Error: connection refused`,
//! sqlite3's list mode).
//!
//! With the command that printed the text known
//! ([`Detector::verdict_for_command`], the call's arguments through
//! [`command_of`]), a command that only prints files ([`file_reader`]:
//! `tail -1 build.log`, `cd src && grep ERROR app.log | tail -20`) has
//! the rules that read the text as a failure report turned off: its
//! output is the files' text (`command.rs`, `shell.rs`), unless it opens
//! with the reader's own complaint, or its first line is an error label
//! or a failure statement followed by it (a framework's report of its
//! shell tool's exception: `Error executing tool: exit status 1: cat: x:
//! No such file or directory`); one that runs a Go tool ([`GoTool`]: `go
//! build ./...`, `go run .`, `go generate ./...`, `gofmt -l .`) has
//! `failure_summary` read that tool's failures with no header or closing
//! line (`go: updates to go.mod needed; …`,
//! `main.go:3:1: expected declaration, found foo`, `main.go:3: running
//! "stringer": exit status 1`; `golang.rs`), and `go list -e`'s output
//! ([`GoTool::Report`]) is a report, read as a reader's is.
//!
//! Only a bounded prefix ([`HEAD_BYTES`]), bounded suffixes ([`TAIL_BYTES`],
//! [`CRASH_TAIL_BYTES`], [`SUMMARY_TAIL_BYTES`]) and, for JSON, a bounded scan ([`JSON_SCAN_BYTES`])
//! are read. The first-line rules run as one anchored [`regex::bytes::RegexSet`]
//! pass; the common path allocates nothing.
//!
//! ```
//! use toolwarden_wire::detect::{Detector, DetectorConfig};
//!
//! let d = Detector::default();
//! assert_eq!(d.explain("Exit code 1\nfatal: not a git repository"), Some("exit_status"));
//! assert!(!d.is_failure("14 doctests, 410 tests, 0 failures"));
//!
//! let cfg = DetectorConfig {
//!     extra_patterns: vec![r"^quota: \d+ remaining: 0\b".into()],
//!     disable: vec!["failure_statement".into()],
//! };
//! let d = Detector::new(&cfg).unwrap();
//! assert_eq!(d.explain("quota: 10 remaining: 0"), Some("extra[0]"));
//! ```

mod client;
mod command;
mod compiler;
mod golang;
mod json;
mod naive;
mod refusal;
mod rules;
mod runners;
mod shell;
mod summary;
mod trace;

pub mod eval;
pub mod holdout;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_clients;
#[cfg(test)]
mod tests_command;
#[cfg(test)]
mod tests_golang;
#[cfg(test)]
mod tests_summary;

use std::fmt;

use serde::{Deserialize, Serialize};
use toolwarden_core::{Basis, Verdict};

pub use command::{GoTool, MAX_COMMAND_BYTES, Program, READERS, command_of, file_reader};
pub use rules::{CRASH_TAIL_BYTES, HEAD_BYTES, JSON_SCAN_BYTES, TAIL_BYTES};
pub use summary::SUMMARY_TAIL_BYTES;

/// The built-in rule names, in the order they are tried.
pub const RULE_NAMES: &[&str] = rules::NAMES;

/// How to build a [`Detector`]: the permissive, serde-friendly form.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DetectorConfig {
    /// Extra failure patterns. Each is a **regular expression** (the `regex`
    /// crate's syntax), matched case-insensitively against the first
    /// [`HEAD_BYTES`] bytes of the content after leading whitespace, so `^`
    /// anchors at the start of the text and `(?m)^` at any line start in
    /// that prefix. A plain substring is a valid pattern too; escape regex
    /// metacharacters (`.`, `(`, `[`, `*`, …) to match them literally.
    /// A pattern that fires is explained as `extra[<index>]`.
    pub extra_patterns: Vec<String>,
    /// Built-in rules to turn off, by name (see [`Detector::rule_names`]).
    pub disable: Vec<String>,
}

/// Decides from a tool result's text whether the tool failed.
///
/// [`Detector::default`] enables every built-in rule; [`Detector::new`]
/// applies a [`DetectorConfig`]; [`Detector::naive`] is the baseline rule
/// other gateways use, kept for comparison.
#[derive(Debug, Clone)]
pub struct Detector {
    mode: Mode,
}

#[derive(Debug, Clone)]
enum Mode {
    Rules {
        /// Bit `i` set: built-in rule `i` is disabled.
        disabled: u32,
        extra: Vec<Extra>,
    },
    Naive,
}

#[derive(Debug, Clone)]
struct Extra {
    name: String,
    regex: regex::bytes::Regex,
}

/// A [`DetectorConfig`] that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct DetectError {
    kind: DetectErrorKind,
    message: String,
}

/// What is wrong with a [`DetectorConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DetectErrorKind {
    /// An `extra_patterns` entry is not a valid regular expression, or
    /// matches every text.
    BadPattern,
    /// A `disable` entry names no built-in rule.
    UnknownRule,
}

/// Texts a pattern matching all of which matches every text (`.*`, `x*`,
/// an empty alternative): refused. `^$` or `^.{0,3}$` (empty or near-empty
/// output as a failure) are not.
const EVERY_TEXT: [&[u8]; 3] = [b"", b"ok", b"All 12 tests passed in 0.4 s.\nDone."];

// === impl Detector ===

impl Default for Detector {
    fn default() -> Self {
        Detector {
            mode: Mode::Rules {
                disabled: 0,
                extra: Vec::new(),
            },
        }
    }
}

impl Detector {
    /// A detector with the built-in rules minus `config.disable`, plus
    /// `config.extra_patterns`.
    pub fn new(config: &DetectorConfig) -> Result<Detector, DetectError> {
        let mut disabled = 0u32;
        for name in &config.disable {
            let Some(i) = RULE_NAMES.iter().position(|r| r == name) else {
                return Err(DetectError {
                    kind: DetectErrorKind::UnknownRule,
                    message: format!(
                        "unknown detector rule {name:?} in `disable`; the rules are: {}",
                        RULE_NAMES.join(", ")
                    ),
                });
            };
            disabled |= 1 << i;
        }
        let mut extra = Vec::with_capacity(config.extra_patterns.len());
        for (i, pattern) in config.extra_patterns.iter().enumerate() {
            let regex = regex::bytes::RegexBuilder::new(pattern)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| DetectError {
                    kind: DetectErrorKind::BadPattern,
                    message: format!("extra_patterns[{i}] {pattern:?} is not a valid regex: {e}"),
                })?;
            if EVERY_TEXT.iter().all(|t| regex.is_match(t)) {
                return Err(DetectError {
                    kind: DetectErrorKind::BadPattern,
                    message: format!(
                        "extra_patterns[{i}] {pattern:?} matches every text (the empty one, `ok` \
                         and a passing test run's line): every result would count as failed"
                    ),
                });
            }
            extra.push(Extra {
                name: format!("extra[{i}]"),
                regex,
            });
        }
        Ok(Detector {
            mode: Mode::Rules { disabled, extra },
        })
    }

    /// The baseline other gateways use: the first 100 characters contain
    /// (case-insensitively) `error:`, `failed:`, `exception:`, `traceback:`,
    /// `not found:`, `invalid:`, `cannot ` or `unable to`. For comparison
    /// only; it is explained as `naive`.
    pub fn naive() -> Detector {
        Detector { mode: Mode::Naive }
    }

    /// The names of the built-in rules, in the order they are tried.
    pub fn rule_names() -> &'static [&'static str] {
        RULE_NAMES
    }

    /// `true` when the content reads as a failed tool execution.
    pub fn is_failure(&self, content: &str) -> bool {
        self.explain(content).is_some()
    }

    /// The name of the rule that decided the content is a failure, or `None`
    /// when it reads as ordinary output.
    pub fn explain(&self, content: &str) -> Option<&str> {
        match self.find(content) {
            Found::Failure(name) => Some(name),
            Found::ClientSuccess | Found::Nothing => None,
        }
    }

    /// The verdict on a result that carries no explicit flag: a failure
    /// read from a status the client wrote in its own format (`Exit code:
    /// 1`, the Gemini CLI's `Exit Code:` footer) has basis
    /// [`Basis::Client`], as has a success that format states (`Exit code:
    /// 0`); a failure found by the other rules has basis
    /// [`Basis::Heuristic`]; anything else is [`Verdict::NONE`].
    pub fn verdict(&self, content: &str) -> Verdict {
        self.verdict_for_command(content, None)
    }

    /// [`Detector::explain`] for the output of a known shell `command`
    /// (see [`command_of`]): when it only prints files ([`file_reader`]:
    /// `tail -1 build.log`, `cat app.log`), the rules that read the text as
    /// a failure report are off (a log's `make: *** … Error 1`, a
    /// traceback, `Error: …` are the file's), and so are extra patterns;
    /// the client's exit status, refusals, error tags and the reader's own
    /// complaint (`tail: cannot open 'x' for reading: …`) still count.
    /// When it runs a Go tool ([`GoTool`]: `go build ./...`, `gofmt -l
    /// .`), `failure_summary` also reads that tool's failures, which have
    /// no header or closing line of their own (`go: updates to go.mod
    /// needed; …`, `main.go:3:1: expected declaration, found foo`).
    /// Any other command, or none, is [`Detector::explain`].
    pub fn explain_for_command(&self, content: &str, command: Option<&str>) -> Option<&str> {
        self.explain_for_program(content, command.and_then(Program::of_command))
    }

    /// [`Detector::explain_for_command`] with the command already read:
    /// the [`Program`] it runs, or `None` for any other command or none.
    pub fn explain_for_program(&self, content: &str, program: Option<Program>) -> Option<&str> {
        match self.find_for(content, program) {
            Found::Failure(name) => Some(name),
            Found::ClientSuccess | Found::Nothing => None,
        }
    }

    /// [`Detector::verdict`] for the output of a known shell `command`,
    /// read as [`Detector::explain_for_command`] reads it.
    pub fn verdict_for_command(&self, content: &str, command: Option<&str>) -> Verdict {
        self.verdict_for_program(content, command.and_then(Program::of_command))
    }

    /// [`Detector::verdict_for_command`] with the command already read (see
    /// [`Detector::explain_for_program`]).
    pub fn verdict_for_program(&self, content: &str, program: Option<Program>) -> Verdict {
        match self.find_for(content, program) {
            Found::Failure(name) if rules::CLIENT_RULES.contains(&name) => Verdict {
                failed: true,
                basis: Basis::Client,
            },
            Found::Failure(_) => Verdict::heuristic_failure(),
            Found::ClientSuccess => Verdict {
                failed: false,
                basis: Basis::Client,
            },
            Found::Nothing => Verdict::NONE,
        }
    }

    /// The verdict on a result its client left unflagged in a conversation
    /// where it flags results (Anthropic `is_error`, Bedrock `status`): a
    /// failure only when the text is the harness refusing or cancelling the
    /// call (the `user_denied` and `harness_refusal` rules, basis
    /// [`Basis::Heuristic`]), else [`Verdict::NONE`]. Such a client flags
    /// its tools' errors, but not every refusal: the Vercel AI SDK sends a
    /// call the app denied as `Tool call execution denied.` without
    /// `is_error`. Extra patterns are not applied; the naive rule finds
    /// nothing.
    pub fn refusal_verdict(&self, content: &str) -> Verdict {
        match &self.mode {
            Mode::Rules { disabled, .. } => rules::refusal(content.as_bytes(), *disabled)
                .map_or(Verdict::NONE, |_| Verdict::heuristic_failure()),
            Mode::Naive => Verdict::NONE,
        }
    }

    /// The verdict on a result its client flagged as a success (Anthropic
    /// `is_error: false`, Bedrock `status: "success"`): a failure (basis
    /// [`Basis::Client`]) only when the client's own status in the text
    /// says the command failed (`exit_status`'s client forms, such as
    /// OpenClaw's `(Command exited with code 2)` below the output: OpenClaw
    /// flags every command that ran as a success), else [`Verdict::NONE`].
    /// A flag says the tool ran; the status, how its command ended.
    pub fn client_failure_verdict(&self, content: &str) -> Verdict {
        match &self.mode {
            Mode::Rules { disabled, .. } if rules::client_failed(content.as_bytes(), *disabled) => {
                Verdict {
                    failed: true,
                    basis: Basis::Client,
                }
            }
            Mode::Rules { .. } | Mode::Naive => Verdict::NONE,
        }
    }

    fn find(&self, content: &str) -> Found<'_> {
        self.find_for(content, None)
    }

    fn find_for(&self, content: &str, program: Option<Program>) -> Found<'_> {
        match &self.mode {
            Mode::Naive => {
                if naive::is_failure(content) {
                    Found::Failure("naive")
                } else {
                    Found::Nothing
                }
            }
            Mode::Rules { disabled, extra } => {
                // A reader's output is the files' text, and `go list -e`'s a
                // report of the packages' errors: the rules that read the
                // text as a failure report are off for both.
                let mask = match program {
                    Some(p) if p.go_tool() == Some(GoTool::Report) => {
                        Some(rules::go_report_mask(content.as_bytes()))
                    }
                    Some(p) => p
                        .reader()
                        .map(|reader| rules::reader_mask(reader, content.as_bytes())),
                    None => None,
                };
                if let Some(mask) = mask {
                    let off = *disabled | mask;
                    return match rules::first_match(content.as_bytes(), off) {
                        rules::Finding::Failure(name) => Found::Failure(name),
                        rules::Finding::ClientSuccess => Found::ClientSuccess,
                        // The go command's own failure below the report.
                        rules::Finding::Nothing => program
                            .and_then(Program::go_tool)
                            .and_then(|tool| {
                                rules::go_tool_failed(tool, content.as_bytes(), *disabled)
                            })
                            .map_or(Found::Nothing, Found::Failure),
                    };
                }
                match rules::first_match(content.as_bytes(), *disabled) {
                    rules::Finding::Failure(name) => return Found::Failure(name),
                    rules::Finding::ClientSuccess => return Found::ClientSuccess,
                    rules::Finding::Nothing => {}
                }
                if let Some(tool) = program.and_then(Program::go_tool)
                    && let Some(name) = rules::go_tool_failed(tool, content.as_bytes(), *disabled)
                {
                    return Found::Failure(name);
                }
                if extra.is_empty() {
                    return Found::Nothing;
                }
                let head = rules::head(content.as_bytes());
                extra
                    .iter()
                    .find(|e| e.regex.is_match(head))
                    .map_or(Found::Nothing, |e| Found::Failure(e.name.as_str()))
            }
        }
    }
}

/// What [`Detector::find`] found.
enum Found<'a> {
    Failure(&'a str),
    ClientSuccess,
    Nothing,
}

// === impl DetectError ===

impl DetectError {
    /// What is wrong.
    pub fn kind(&self) -> DetectErrorKind {
        self.kind
    }
}

impl fmt::Display for DetectErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DetectErrorKind::BadPattern => "bad pattern",
            DetectErrorKind::UnknownRule => "unknown rule",
        })
    }
}
