//! The built-in rules. Each looks at a *position*: the start of the text,
//! its first line, its last line or the top-level keys of a JSON object.
//!
//! The regular expressions are compiled once, anchored with `^`, run on
//! bytes without Unicode classes, and only ever see the first line (at most
//! [`LINE_BYTES`]) or the last line (at most [`TAIL_BYTES`]).

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexSet};

use super::{client, json, summary};

/// How much of the start of the content the rules (and extra patterns) read.
pub const HEAD_BYTES: usize = 1024;
/// How much of the end of the content the `exit_status` trailer and
/// footer checks read.
pub const TAIL_BYTES: usize = 512;
/// How much of the end of the content the `crash_trace` trailer check reads.
pub const CRASH_TAIL_BYTES: usize = 2048;
/// How much of a JSON object the `json_error` walker reads.
pub const JSON_SCAN_BYTES: usize = 64 * 1024;
/// The longest first line the line rules read.
const LINE_BYTES: usize = 512;
/// How much of the first line `harness_refusal`'s phrases are looked for
/// in: a harness says it early, a log or a grep hit may say it anywhere.
const INLINE_BYTES: usize = 256;
/// The longest result `harness_refusal`'s in-line phrases are looked for
/// in: a refusal is a short message, not a command's output.
const REFUSAL_BYTES: usize = 600;

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
    "shell_diagnostic",
    "harness_refusal",
    "failure_summary",
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
const SHELL_DIAGNOSTIC: usize = 10;
const HARNESS_REFUSAL: usize = 11;
const FAILURE_SUMMARY: usize = 12;

/// The rules that read a status the client wrote in its own format: their
/// verdicts have basis `client`, not `heuristic`.
pub(super) const CLIENT_RULES: &[&str] = &["exit_status"];

/// The rules that read a result's text as a failure report: off for a
/// command that only prints files (see `command.rs`), whose output is the
/// files' text. The others stay: the client's exit status, its refusals,
/// our framing, an error tag, and `shell_diagnostic` for the reader's own
/// complaint ([`reader_mask`]).
const READ_AS_REPORT: u32 = 1 << CRASH_TRACE
    | 1 << ERROR_LABEL
    | 1 << OS_ERROR
    | 1 << HTTP_STATUS
    | 1 << JSON_ERROR
    | 1 << FAILURE_STATEMENT
    | 1 << FAILURE_SUMMARY;

/// The rules to turn off for the output of `program`, a file reader:
/// [`READ_AS_REPORT`], and `shell_diagnostic` unless the output opens
/// with the reader's own name, by path too (`tail: cannot open 'x' for
/// reading: …`, `/usr/bin/cat: x: No such file or directory`), or the
/// shell's, which ran it and the builtins before it (`bash: line 1: cd:
/// x: No such file or directory`, `/bin/sh: 1: tial: not found`); not a
/// `ls: cannot access …` line that a log holds. None when the first line
/// is an error label or a failure statement followed by that complaint
/// ([`framed_own_complaint`]): the harness's report of the reader's
/// failure, not the file's text.
pub(super) fn reader_mask(program: &str, content: &[u8]) -> u32 {
    let head = head(content);
    let line = &head[..head.len().min(LINE_BYTES)];
    if speaker(line).is_some_and(|name| is_own(name, program)) {
        READ_AS_REPORT
    } else if framed_own_complaint(program, line) {
        0
    } else {
        READ_AS_REPORT | 1 << SHELL_DIAGNOSTIC
    }
}

/// The name before a line's first `: `, when it is one word.
fn speaker(line: &[u8]) -> Option<&[u8]> {
    memchr::memmem::find(line, b": ")
        .map(|i| &line[..i])
        .filter(|name| !name.iter().any(u8::is_ascii_whitespace))
}

/// `name` (by path too) is `program` or a shell that ran it.
fn is_own(name: &[u8], program: &str) -> bool {
    let base = name.rsplit(|b| *b == b'/').next().unwrap_or(name);
    base == program.as_bytes() || SHELLS.contains(&base)
}

/// The first line opens with an error label or a failure statement and
/// goes on, after a `: `, with the reader's own complaint: how an agent
/// framework reports the exception its shell tool raised for a command
/// that failed (`Error executing tool: exit status 1: cat: x: No such file
/// or directory`, CrewAI's; `RuntimeError: exit status 1: cat: x: …`;
/// `Tool error: …`; Haystack's ``Failed to invoke Tool `run_shell` with
/// parameters {…}. Error: exit status 1: cat: x: …``). The complaint is
/// read as at a line's start (`shell_diagnostic`'s pattern).
fn framed_own_complaint(program: &str, line: &[u8]) -> bool {
    let p = &*PATTERNS;
    let line = line.split(|b| *b == b'\n').next().unwrap_or(line);
    (p.error_label.is_match(line) || p.failure_statement.is_match(line))
        && memchr::memmem::find_iter(line, b": ").any(|i| {
            let rest = &line[i + 2..];
            speaker(rest).is_some_and(|name| is_own(name, program))
                && p.shell_diagnostic.is_match(rest)
        })
}

/// The rules to turn off for a report of the go command (`go list -e`),
/// which prints the packages' errors in its output: a reader's
/// ([`reader_mask`] as the go command's), but a shell's `command not
/// found` still counts (`os_error`).
pub(super) fn go_report_mask(content: &[u8]) -> u32 {
    reader_mask("go", content) & !(1 << OS_ERROR)
}

/// The shells that run a command and complain for it.
const SHELLS: &[&[u8]] = &[b"bash", b"sh", b"zsh", b"dash", b"ksh"];

/// What the rules found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Finding {
    /// A failure, by the named rule.
    Failure(&'static str),
    /// The client's own status fields say the call succeeded.
    ClientSuccess,
    /// Nothing either way.
    Nothing,
}

/// One compiled, anchored regex per line rule.
struct Patterns {
    /// The first-line rules' patterns as one set: a single pass tells
    /// whether any of them can fire (most outputs match none).
    line_set: RegexSet,
    /// `file:line[:col]: error:` as a compiler prints it.
    compiler_error: Regex,
    /// A program's diagnostic line: `ls: cannot access 'x': No such file…`.
    shell_diagnostic: Regex,
    /// The last line of a Python traceback: the exception and its message.
    python_exception: Regex,
    error_tag: Regex,
    /// Matches up to (not including) the status number.
    exit_status: Regex,
    /// A last line saying the harness ended the command ([`client::ended`]).
    ended: Regex,
    user_denied: Regex,
    crash_trace: Regex,
    os_error: Regex,
    http_status: Regex,
    error_label: Regex,
    failure_statement: Regex,
    harness_refusal: Regex,
    /// A program's closing line saying it failed (`failure_summary`).
    failure_summary: Regex,
    /// A Python or JavaScript exception's message as CPython or V8 words
    /// it, the whole text (`failure_statement`; see [`exception_message`]).
    exception_message: Regex,
    /// `harness_refusal`'s phrases found anywhere in the first line.
    harness_refusal_inline: Regex,
    /// [`super::refusal::INLINE_GATE`]'s words, searched in one SIMD pass.
    harness_refusal_gate: aho_corasick::AhoCorasick,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let mut p = Patterns {
        line_set: RegexSet::empty(),
        // `error:` (rustc: `error[E0308]:`) one space after the location,
        // as compilers print it; not a searched file's line that starts
        // with the word (`src/a.rs:31:  error!(…)`), nor one whose
        // indented field is named so (`types.ts:3:  error: string;`).
        // The MSBuild form, `file(line[,col]): error CODE:`, is tsc's
        // (not on a terminal), C#'s and MSVC's.
        compiler_error: re(concat!(
            r"^(?:[^\s:]+:\d+(?::\d+)?: (?:fatal\s+)?error(?:\[[^\]\n]*\])?:",
            r"|(?:[a-z]:)?[^\s:(]+\(\d+(?:,\d+)?\): (?:fatal\s+)?error(?: [a-z]+\d+)?:)",
        )),
        // `program: [operand: …]message`, the message opening a field as
        // `perror` and coreutils' `error()` print it (`curl: (7) Failed
        // …`), or following a quoted operand (`edit_file: "x" not found in
        // a.txt`, a tool's own error as the Vercel AI SDK sends it): not a
        // sentence with the word in it (`fix: users cannot …`).
        shell_diagnostic: re(concat!(
            // (the program by path too: `/usr/bin/cat: x: No such file …`)
            r"^(?:(?:/|\.\.?/|~/)(?:[\w.+-]+/)*)?[\w.+-]+:\s+(?:(?:[^\n:]|:[^\s:])*:\s+)*",
            r#"(?:(?:\\?"[^"\n]{0,200}?\\?"|'[^'\n]{0,200}'|`[^`\n]{0,200}`)\s+)?"#,
            r"(?:\(\d+\)\s+)?(?:cannot|can't|could\s+not|couldn't|unable\s+to|failed\s+to",
            r"|no\s+such\s+file|permission\s+denied|not\s+found|is\s+a\s+directory|not\s+a\s+directory",
            r"|file\s+exists|operation\s+not\s+permitted|invalid\s+option|illegal\s+option",
            r"|unrecognized\s+(?:option|argument)|missing\s+(?:operand|argument)",
            // a shell refusing its script: bash's `syntax error near unexpected
            // token `x'`, `syntax error: unexpected end of file`, `unexpected
            // EOF while looking for matching `''`; dash's `Syntax error: word
            // unexpected (expecting ")")`
            r"|syntax\s+error\s+near\s+unexpected\s+token|syntax\s+error:\s+(?:[^\n]{0,40}?\s)?unexpected",
            r"|unexpected\s+EOF\s+while\s+looking\s+for\s+matching)\b",
        )),
        python_exception: re(r"^[a-z_][\w.]*(?:error|exception|interrupt|exit)\b"),
        error_tag: re(r"^<(?:[a-z_:-]*[_:-])?errors?(?:\s[^>\n]*)?>"),
        exit_status: re(concat!(
            r"^[\[(]?\s*(?:",
            r"(?:the\s+)?(?:process|command|script|program|job|task|shell)\s+",
            r"(?:exited|completed|finished|failed|terminated|returned|ended)\s+with\s+",
            r"(?:(?:an?\s+)?(?:exit|return|non-zero\s+exit)\s+)?(?:code|status)",
            r"|exited\s+with\s+(?:(?:exit|return)\s+)?(?:code|status)",
            // Cline's `Command executed successfully (exit code 0).`
            r"|command\s+executed\s+successfully\s+\(exit\s+code",
            // the GitHub Copilot CLI's `<shellId: 0 completed with exit code 2>`
            r"|<shellid:\s*[^\s>]{1,64}\s+completed\s+with\s+exit\s+code",
            r"|exit(?:ed)?[ _-]?(?:code|status)|return[ _-]?code|returncode",
            r")\s*[:=]?\s*",
        )),
        // pi's `Command timed out after 5 seconds`, `Command aborted`.
        // OpenClaw's `Command aborted by signal SIGKILL`, `Command timed out
        // waiting for output.`, `Command not found` (exit 127).
        ended: re(concat!(
            r"^(?:the\s+)?(?:command|process|script|program)\s+(?:(?:was\s+|has\s+been\s+)?",
            r"(?:timed\s+out|aborted|killed|terminated|cancell?ed|interrupted)",
            r"(?:\s+(?:after|by|before|waiting\s+for)\s[^\n]{1,80})?",
            r"|not\s+(?:found|executable)(?:\s+\([^)\n]{1,60}\))?)\.?$",
        )),
        user_denied: re(concat!(
            r"^\[?(?:",
            r"the\s+user\s+(?:doesn't|does\s+not|did\s+not|didn't|has\s+chosen\s+not\s+to|declined",
            r"|denied|rejected|refused|cancell?ed|interrupted|aborted)\b",
            r"|user\s+(?:rejected|denied|declined|cancell?ed|refused|aborted|interrupted)\b",
            r"|(?:\S+\s+){0,3}(?:was\s+|has\s+been\s+)?(?:rejected|denied|declined|cancell?ed|aborted",
            r"|interrupted|blocked)\s+by\s+(?:the\s+)?(?:user|policy|sandbox|hook|approval|admin)",
            r"|permission\s+to\s+(?:use|run|execute|access)\s[^\n]*?\s(?:has\s+been|was|is)\s+denied",
            r"|[^\n]*?\bdenied\s+(?:this|the)\s+(?:tool|operation|action|command|request)\b",
            r"|[^\n]*?\bpermissions?\b[^\n]*?\b(?:haven't|have\s+not|has\s+not\s+been|was\s+not|were\s+not)\s+(?:yet\s+)?granted",
            // (`Tool call execution denied.`: the Vercel AI SDK's text for
            // a call whose execution was denied)
            r"|(?:tool\s+(?:call\s+execution|use|call|execution)|command|exec(?:ution)?|patch|operation|action)\s+",
            r"(?:was\s+|has\s+been\s+)?(?:rejected|denied|declined|cancell?ed|aborted|not\s+approved|blocked)\b",
            r")",
        )),
        crash_trace: re(concat!(
            r"^(?:traceback\s+\(most\s+recent\s+call\s+last\):",
            r"|exception\s+in\s+thread\b",
            // Rust 1.91 prints the thread's id: `thread 'main' (29402)
            // panicked at` (rust-lang/rust#115746).
            r"|thread\s+'[^'\n]*'\s+(?:\(\d+\)\s+)?panicked\b|panicked\s+at\b",
            r"|uncaught\s+(?:\w+\s+)?\w*(?:error|exception)|\w*(?:error|exception):?\s+uncaught\b",
            r"|unhandled\s+(?:\w+\s+)?(?:exception|rejection|error)",
            r"|\*\*\s+\([\w.]+\)",
            r"|goroutine\s+\d+\s+\[running\]|segmentation\s+fault|stack\s+trace:",
            r")",
        )),
        os_error: re(concat!(
            // a POSIX errno name, as Node and libuv print them: `ENOENT: …`
            r"^(?:(?-i:E(?:NO[A-Z]+|IS[A-Z]+|ACCES|PERM|EXIST|AGAIN|BUSY|CONN[A-Z]+|TIMEDOUT|PIPE",
            r"|INVAL|MFILE|NFILE|ROFS|SPIPE|ADDR[A-Z]+|HOST[A-Z]+|NET[A-Z]+|LOOP|NAMETOOLONG|FBIG",
            r"|IO|2BIG|BADF|FAULT|INTR|NXIO|RANGE|SRCH|TXTBSY|XDEV|CANCELED|OVERFLOW|PROTO|ALREADY",
            r"|INPROGRESS|WOULDBLOCK|MSGSIZE|DQUOT|STALE))(?:\s*\(-?\d+\))?:\s",
            r"|\[?errno\s+-?\d+\]?",
            r"|(?:no\s+such\s+file(?:\s+or\s+directory)?",
            // (the path named between: the GitHub Copilot CLI's `Path /a/b
            // does not exist. Please provide a valid path.`)
            r"|(?:file|path|directory|folder)",
            r#"(?:\s+(?:"[^"\n]{1,300}"|'[^'\n]{1,300}'|`[^`\n]{1,300}`|[^\s"'`]{1,300}))?"#,
            r"\s+(?:(?:does\s+not|doesn't)\s+exist|not\s+found|already\s+exists\b)",
            r"|permission\s+denied|operation\s+not\s+permitted|access\s+(?:is\s+)?denied",
            r"|is\s+a\s+directory|not\s+a\s+directory|read-only\s+file\s+system",
            r"|no\s+space\s+left\s+on\s+device|disk\s+quota\s+exceeded|too\s+many\s+open\s+files",
            r"|connection\s+(?:refused|reset|timed\s+out)|network\s+is\s+unreachable|broken\s+pipe",
            r")\b",
            // a shell's `command not found` as the first line
            r"|(?:[\w().~/-]+:\s*)?(?:line\s+)?(?:\d+:\s*)?(?:[^\s:]+:\s*)?",
            r"command\s+not\s+found(?::\s*\S+)?\s*$",
            r"|(?:/(?:[\w.-]+/)*)?(?:ba|z|da|k|c|tc|fi)?sh:\s*(?:line\s+)?\d+:\s*[^\s:]+:\s*not\s+found\s*$",
            r")",
        )),
        http_status: re(concat!(
            r"^(?:http/\d(?:\.\d)?\s+[45]\d\d\b",
            r"|(?:http\s+)?(?:status(?:\s+code)?|response\s+code|http\s+error|http\s+status)\s*[:=]?\s*[45]\d\d\b",
            // spaces only: `404<TAB>not found` is line 404 of a file read
            r"|[45]\d\d *[-:]? *(?:(?:client|server)\s+error|bad\s+request|unauthorized|payment\s+required|forbidden|not\s+found",
            r"|method\s+not\s+allowed|not\s+acceptable|proxy\s+authentication|request\s+time-?out",
            r"|conflict|gone|length\s+required|precondition\s+(?:failed|required)|payload\s+too\s+large",
            r"|request\s+entity\s+too\s+large|uri\s+too\s+long|unsupported\s+media\s+type",
            r"|range\s+not\s+satisfiable|expectation\s+failed|misdirected\s+request|unprocessable",
            r"|locked|failed\s+dependency|too\s+early|upgrade\s+required|too\s+many\s+requests",
            r"|request\s+header\s+fields\s+too\s+large|unavailable\s+for\s+legal\s+reasons",
            r"|internal\s+server\s+error|not\s+implemented|bad\s+gateway|service\s+unavailable",
            r"|gateway\s+time-?out|http\s+version\s+not\s+supported|insufficient\s+storage",
            r"|loop\s+detected|network\s+authentication\s+required)",
            // the phrase ends there: `410 gone.txt`, `409 conflict.rs` are
            // `wc`'s count and a file name
            r"(?:$|[\s:;,!)\]'\x22]|\.(?:\s|$))",
            r")",
        )),
        error_label: re(concat!(
            r"^(?:",
            // Error: / ERROR - / error[E0425]: / fatal: / [ERROR] / Error!
            r"\[?(?:error|err|exception|fatal|panic|critical|timeout)\]?(?:\[[^\]\n]*\])?",
            // (the colon then a space or the line's end, `\n` in a JSON
            // string too: `ERROR:root:msg` is a Python log record, as
            // `grep ERROR app.log` prints it)
            r"\s*(?::(?:\s|$|\\[nrt])|!|\s-\s|$)",
            // `Failure:` as a label, not the bare word: a looked-up state
            // (`failure`, a run's conclusion) is not a report
            r"|\[?failure\]?(?:\[[^\]\n]*\])?\s*(?::(?:\s|$|\\[nrt])|!|\s-\s)",
            // (`[tool error] …`: pi's prefix on a failed call's text for Mistral)
            r"|\[(?:tool\s+)?(?:error|err|fatal|failure|failed|exception)\]",
            // ValueError: / ToolException: / McpError: / requests.exceptions.HTTPError:
            r"|(?-i:[A-Za-z_][\w.$]*(?:Error|Exception|Fault|Failure))(?:\s*\[[^\]\n]*\]|\s*\([^)\n]*\))?:\s",
            // Error executing tool X / Exception while …
            r"|(?:error|exception)\s+(?:executing|calling|running|invoking|in|while|during|occurred",
            r"|processing|fetching|reading|writing|parsing|loading|connecting|creating|updating|deleting",
            r"|getting|sending|from|when)\b",
            // Error listing directory: … / Error reading file …: (any gerund, then a colon)
            r"|(?:error|exception)\s+[a-z]+ing\s[^\n:]*:\s",
            // MCP error -32602 / Internal error / Validation error
            r"|(?:\w+:\w+\s+)?(?:mcp|tool|api|http|rpc|json-?rpc|runtime|internal|fatal|unexpected|unknown|validation",
            r"|execution|server|client|request|network|connection|permission|auth|authentication|hook)",
            r"\s+error\b",
            // ValueError('…'): an exception's repr as the whole answer
            r"|(?-i:[A-Za-z_][\w.]*(?:Error|Exception))\(",
            r"|an?\s+(?:\w+\s+)?error\s+(?:occurred|has\s+occurred|was\s+encountered|happened|was\s+raised",
            r"|was\s+thrown)",
            // Tools' own errors, which they print only when they fail:
            // CMake's (`CMake Error at CMakeLists.txt:3 (add_executabl):`,
            // `CMake Error: The source directory "/x" does not exist.`),
            // PostgreSQL's clients (`psql: error: connection to server at
            // "127.0.0.1", port 9 failed: …`: `src/common/logging.c`'s
            // `%s: error: ` since PostgreSQL 12), GNU sed's script errors
            // (`sed: -e expression #1, char 5: unterminated `s' command`,
            // `sed: file a.sed line 2: …`: `sed/compile.c`'s `bad_prog`),
            // mawk's (`awk: line 2: missing } near end of file`)
            r"|cmake\s+error(?:\s+(?:at|in)\s[^\n]*)?:",
            r"|(?:psql|pg_dump|pg_dumpall|pg_restore|pg_basebackup|pg_upgrade|pg_ctl|pgbench|initdb",
            r"|createdb|dropdb|createuser|dropuser|vacuumdb|reindexdb|clusterdb):\s+error:\s",
            r"|(?:[\w.-]*/)*sed:\s+(?:-e\s+expression\s+#\d+,\s+char\s+\d+|file\s+[^\n]+?\s+line\s+\d+):\s",
            r"|m?awk:\s+line\s+\d+:\s",
            // markdownlint-cli's findings, sorted by file and line, each an
            // error (`a.md:1 error MD022/blanks-around-headings …`; before
            // its severities, `a.md:1 MD022/…`), which make it exit 1 (a
            // `warning` does not)
            r"|[^\s:]+:\d+(?::\d+)?\s+(?:error\s+)?md\d{3}/[\w-]+\s",
            // libxml2's (xmllint's) errors, `a.xml:3: parser error : …`,
            // `a.xml:3: element entry: Schemas validity error : …`
            // (`xmlerror.c`'s `file:line: [element name: ]domain error : `;
            // a warning's is `parser warning : `)
            r"|[^\s:]+:\d+:\s+(?:element\s+[^\s:]+:\s+)?(?:[a-z-]+\s+){1,2}error\s+:\s",
            // Ruby's report of an exception nothing rescued, which it prints
            // on exit (status 1) above the program's buffered output
            // (`a.rb:2:in `<main>': unknown mode: fast (ArgumentError)`;
            // `in 'Object#run'` since Ruby 3.4), and of a source it cannot
            // parse (`a.rb:2: syntax error, unexpected end-of-input, …`;
            // `-e:1: syntax errors found` since 3.4)
            r"|[^\s:]+:\d+:in\s+[`'][^'\n]*':\s[^\n]*\s\((?-i:[A-Z]\w*(?:::[A-Z]\w*)*)\)$",
            r"|[^\s:]+:\d+:\s+syntax\s+errors?(?:,|\s+found\b)",
            // jq's own (jq 1.6 and 1.7 `src/main.c`): a runtime error at an
            // input, a compile or I/O error, its input's parse error at a
            // line and column (`parse error: …` in 1.6, `jq: parse error:
            // …` since 1.7)
            r"|jq:\s+error(?:\s+\(at\s+[^)\n]*\))?(?:\s+\(not\s+a\s+string\))?:\s",
            r"|(?:jq:\s+)?parse\s+error:\s[^\n]*\sat\s+line\s+\d+,\s+column\s+\d+$",
            r")",
        )),
        failure_statement: re(concat!(
            r"^(?:",
            // up to three words before, a quoted name among them (the
            // OpenAI Agents SDK's `Tool 'get_weather' timed out after 5 seconds.`)
            r"(?:(?:[a-z][\w'-]*|'[^'\s]+'|\x22[^\x22\s]+\x22|`[^`\s]+`)\s+){0,3}",
            r"(?:failed|could\s+not|couldn't|unable\s+to|cannot|can't",
            // not a table's first field (`failed|Error: …`, sqlite3's list
            // mode; `failed\t3`, tab-separated output): a looked-up value
            r"|did\s+not\s+succeed|timed\s+out)\b(?:$|[^|\t])",
            r"|invalid(?:\s+[\w-]+){0,3}\s*:",
            // a harness's answer to arguments that fail the tool's schema
            // (OpenCode's `The read tool was called with invalid arguments:
            // SchemaError(…)`)
            r"|(?:[\w'`-]+\s+){1,3}(?:was|were)\s+called\s+with\s+invalid\s+(?:arguments|parameters|params|input)\b",
            // a path argument a harness refuses (the Gemini CLI's and Qwen
            // Code's `File path must be absolute, but was relative: x.`)
            r"|(?:[\w-]+\s+){0,2}path\s+must\s+be\s+(?:an?\s+)?absolute\b",
            // pydantic's `ValidationError` as a whole line (`1 validation
            // error for read_file` above its fields: a tool's arguments
            // refused, as Agno answers them)
            r"|\d+\s+validation\s+errors?\s+for\s+[^\s\[]+(?:\[[^\]\n]*\])?$",
            // Python's `json` decoding error as a whole line (`python3 -m
            // json.tool` on a file that is not JSON)
            r"|expecting\s+(?:value|property\s+name\s+enclosed\s+in\s+double\s+quotes|'[,:]'\s+delimiter):\s+line\s+\d+\s+column\s+\d+\s+\(char\s+\d+\)$",
            r"|(?:cancell?ed|aborted|interrupted|denied|rejected|timed\s+out)\s*:",
            r"|unknown\s+(?:tool|command|function|action)\b|unknown\s+[\w-]+\s*:",
            // an edit tool's text to replace, not in the file (behind the
            // GitHub Copilot CLI's `No match found: `, harness_refusal's)
            r"|(?:old_str|old_string|old_text|oldText|search\s+string)\s+(?:was\s+)?not\s+found\b",
            // The Codex CLI's answer to a call it cannot run.
            r"|unsupported\s+(?:[\w-]+\s+){0,2}(?:call|tool|function|command|payload)\b",
            // twine check's verdict on its first file (`… PASSED`, `…
            // PASSED with warnings` when it passes; `--strict`'s `FAILED
            // due to warnings`)
            r"|checking\s+\S+:\s+failed(?:\s+due\s+to\s+warnings)?$",
            r"|no\s+such\s+[a-z]+\b",
            // (a word in brackets among them: pi's `ripgrep (rg) is not
            // available and could not be downloaded`)
            r#"|(?:(?:[a-z'`][^\s]*|"[^"\s]*"|\([^)\s]+\))\s+){1,3}(?:not\s+found|does\s+not\s+exist|doesn't\s+exist|is\s+not\s+available"#,
            r"|is\s+not\s+(?:writable|readable))\b",
            // an argument the call lacks, as the whole line (OpenClaw's
            // `sessionId is required for this action.`)
            r"|[\w.-]+\s+(?:is|are)\s+required(?:\s+(?:for|when|to)\s[^\n]{1,80})?\.?$",
            // an action or argument refused by name (OpenClaw's `Invalid
            // process action. Expected one of: …`)
            r"|invalid\s+(?:[\w-]+\s+){0,2}(?:action|argument|parameter|option|mode|operation|command)\b",
            // a call's input refused as a whole (pi's `Edit tool input is
            // invalid. edits must contain at least one replacement.`,
            // Semantic Kernel's `The tool call arguments are malformed.`)
            r"|(?:[\w-]+\s+){0,3}(?:input|arguments?|parameters?|params)\s+(?:is|are)\s+(?:invalid|malformed)\b",
            // arguments a harness counted against the function's signature
            // (Semantic Kernel's `Missing required argument(s): ['path'].`,
            // `Received unexpected argument(s): ['x'].`, `There are `1` tool
            // call arguments required and only `0` received.`)
            r"|(?:received\s+|got\s+)?(?:missing\s+required|unexpected)\s+(?:argument|parameter|param|propert(?:y|ie))",
            r"(?:s|\(s\))?\s*:",
            r"|there\s+(?:are|is)\s+`?\d+`?\s+(?:[\w-]+\s+){0,3}(?:arguments?|parameters?)\s+required\s+and\s+only\s+",
            r"`?\d+`?\s+(?:received|given|provided|passed)\b",
            // a read past the file's end (pi's `Offset 99 is beyond end of
            // file (1 lines total)`, `Line 9 is out of range`)
            r"|(?:offset|line(?:\s+number)?|start(?:_line)?|index|position)\s+-?\d+\s+is\s+",
            r"(?:(?:beyond|past|after)\s+(?:the\s+)?end\s+of\b|out\s+of\s+(?:range|bounds)\b)",
            // a JSON-schema validator's complaint about the call's arguments
            // (Ajv's `instancePath must …`: `params/file_path must be string`)
            r"|(?:params|data|args|arguments|input)(?:/[^\s]*\s+must\s+(?:be|have|match|not|equal|pass|contain)\b",
            r"|\s+must\s+(?:have\s+required\s+property|not\s+have\s+(?:additional|fewer|more)",
            r"|be\s+(?:string|number|integer|boolean|object|array|null|equal\s+to)\b|match\s+(?:pattern|format)))",
            r"|(?-i:[A-Z])[a-z-]*(?:\s+[a-z-]+)?\s*(?:\([^)\n]{0,40}\)\s*)?(?:exceeds?|exceeded)\s+",
            r"(?:the\s+)?(?:maximum|max|limit|allowed)",
            r"|(?:rate\s+limit|quota|limit|usage\s+limit|token\s+limit|context\s+length)\s+",
            r"(?:was\s+|has\s+been\s+)?exceeded",
            r")",
        )),
        exception_message: re(concat!(
            r"^(?:",
            // AttributeError
            r"(?:'[\w.]+'\s+object|type\s+object\s+'[\w.]+'|module\s+'[\w.]+')\s+has\s+no\s+attribute\s+'[^'\n]+'",
            // TypeError
            r"|unsupported\s+operand\s+type\(s\)\s+for\s+\S+:\s+'[\w.]+'\s+and\s+'[\w.]+'",
            r"|'[\w.]+'\s+object\s+(?:is\s+not\s+(?:subscriptable|iterable|callable)",
            r"|does\s+not\s+support\s+item\s+(?:assignment|deletion))",
            r"|[\w.<>]+\(\)\s+(?:takes\s+(?:from\s+\d+\s+to\s+)?\d+\s+positional\s+arguments?\s+but\s+\d+\s+(?:was|were)\s+given",
            r"|missing\s+\d+\s+required\s+(?:positional|keyword-only)\s+arguments?:\s+.+",
            r"|got\s+an\s+unexpected\s+keyword\s+argument\s+'[^'\n]+')",
            r"|can\s+only\s+concatenate\s+\w+\s+\(not\s+\x22[\w.]+\x22\)\s+to\s+\w+",
            r"|'[^'\n]{1,2}'\s+not\s+supported\s+between\s+instances\s+of\s+'[\w.]+'\s+and\s+'[\w.]+'",
            r"|object\s+of\s+type\s+'[\w.]+'\s+has\s+no\s+len\(\)",
            r"|argument\s+of\s+type\s+'[\w.]+'\s+is\s+not\s+iterable",
            r"|string\s+indices\s+must\s+be\s+integers(?:,\s+not\s+'[\w.]+')?",
            r"|expected\s+str,\s+bytes\s+or\s+os\.PathLike\s+object,\s+not\s+[\w.]+",
            // NameError, ZeroDivisionError, ValueError, IndexError,
            // ModuleNotFoundError
            r"|name\s+'[\w.]+'\s+is\s+not\s+defined",
            r"|(?:integer\s+|float\s+)?(?:division|modulo)(?:\s+or\s+modulo)?\s+by\s+zero",
            r"|invalid\s+literal\s+for\s+int\(\)\s+with\s+base\s+\d+:\s+.+",
            r"|(?:list|tuple|string|range\s+object|array)\s+index\s+out\s+of\s+range",
            r"|(?:pop\s+from\s+empty\s+list|pop\s+from\s+an\s+empty\s+(?:deque|set))",
            r"|no\s+module\s+named\s+'[\w.]+'",
            // V8's (Node.js, Bun's JavaScriptCore words some alike): a
            // TypeError, a ReferenceError, a RangeError, a SyntaxError of
            // `JSON.parse`
            r"|(?:\(intermediate\s+value\)|[\w$]+(?:\(\.\.\.\))?)(?:\.[\w$]+(?:\(\.\.\.\))?)*",
            r"\s+is\s+not\s+(?:a\s+function|a\s+constructor|iterable|defined)",
            r"|cannot\s+(?:read|set)\s+propert(?:y|ies)\s+of\s+(?:undefined|null)(?:\s+\((?:reading|setting)\s+'[^'\n]*'\))?",
            r"|cannot\s+read\s+property\s+'[^'\n]+'\s+of\s+(?:undefined|null)",
            r"|cannot\s+destructure\s+property\s+'[^'\n]+'\s+of\s+'[^'\n]+'\s+as\s+it\s+is\s+(?:undefined|null)\.?",
            r"|assignment\s+to\s+constant\s+variable\.?",
            r"|maximum\s+call\s+stack\s+size\s+exceeded",
            r"|unexpected\s+end\s+of\s+json\s+input",
            r"|unexpected\s+token\s+\S{1,20}\s+in\s+json\s+at\s+position\s+\d+",
            r"|unexpected\s+token\s+'[^'\n]{1,10}',\s+.{1,100}\s+is\s+not\s+valid\s+json",
            r"|invalid\s+array\s+length",
            r")$",
        )),
        harness_refusal: re(super::refusal::START),
        failure_summary: re(summary::CLOSING),
        harness_refusal_inline: re(super::refusal::INLINE),
        harness_refusal_gate: aho_corasick::AhoCorasick::new(super::refusal::INLINE_GATE)
            .unwrap_or_else(|e| panic!("built-in detector words are invalid: {e}")),
    };
    let line_rules = [
        &p.harness_refusal,
        &p.user_denied,
        &p.crash_trace,
        &p.error_label,
        &p.os_error,
        &p.http_status,
        &p.failure_statement,
    ];
    p.line_set = regex::bytes::RegexSetBuilder::new(line_rules.iter().map(|r| r.as_str()))
        .case_insensitive(true)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("built-in detector patterns are invalid: {e}"));
    p
});

/// Compile a built-in pattern: ASCII case-insensitive, no Unicode classes.
fn re(pattern: &str) -> Regex {
    regex::bytes::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("built-in detector pattern {pattern:?} is invalid: {e}"))
}

/// Labels of a message's severity below an error: a line that opens with
/// one is not a program's diagnostic (`warning: …`, `hint: …`).
const SEVERITIES: &[&[u8]] = &[
    b"warning", b"warn", b"note", b"hint", b"info", b"notice", b"debug", b"tip",
];

/// Whole outputs that are a single status word. Not `failure`: no agent
/// harness or tool library answers a call with the bare noun, while state
/// lookups print it (a GitHub commit status's `state` and an Actions run's
/// `conclusion`, as `gh run view --json conclusion --jq .conclusion`
/// prints it; Jenkins' `FAILURE`).
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
    b"error",
    b"errored",
];

/// The first rule (not masked by `disabled`) that says `content` is a
/// failure, or the client's own word that it succeeded.
pub(super) fn first_match(content: &[u8], disabled: u32) -> Finding {
    let on = |rule: usize| disabled & (1 << rule) == 0;
    let head = head(content);
    // Colour codes anywhere in the first line (a PTY's output, `error`
    // printed red): the line rules read the text without them.
    let plain = without_csi(first_line(head));
    let line: &[u8] = &plain;
    let p = &*PATTERNS;
    let fail = Finding::Failure;

    if on(FRAMED_ERROR) && head.starts_with(toolwarden_core::FLAGLESS_ERROR_PREFIX.as_bytes()) {
        return fail(NAMES[FRAMED_ERROR]);
    }
    if on(ERROR_TAG) && head.first() == Some(&b'<') && p.error_tag.is_match(head) {
        return fail(NAMES[ERROR_TAG]);
    }
    // An exit status the client wrote (a header line, the Gemini CLI's
    // footer) settles it either way: the harness told us how the command
    // ended.
    if on(EXIT_STATUS) {
        match client_status(content, head) {
            Some(client::Status::Succeeded) => return Finding::ClientSuccess,
            Some(client::Status::Failed) => return fail(NAMES[EXIT_STATUS]),
            None => {}
        }
    }
    if on(CRASH_TRACE) && (crash_at_end(content) || eslint_crash(head)) {
        return fail(NAMES[CRASH_TRACE]);
    }
    let any_line_rule = p.line_set.is_match(line);
    if any_line_rule {
        let line_rules = [
            (USER_DENIED, &p.user_denied),
            (HARNESS_REFUSAL, &p.harness_refusal),
            (CRASH_TRACE, &p.crash_trace),
            (ERROR_LABEL, &p.error_label),
            (OS_ERROR, &p.os_error),
            (HTTP_STATUS, &p.http_status),
        ];
        for (rule, regex) in line_rules {
            if on(rule)
                && regex.is_match(line)
                && !(rule == ERROR_LABEL && (null_value(line) || duration_setting(line)))
            {
                return fail(NAMES[rule]);
            }
        }
    }
    if on(HARNESS_REFUSAL) && refusal_in_line(content, line) {
        return fail(NAMES[HARNESS_REFUSAL]);
    }
    if on(ERROR_LABEL) && (compiler_error(head) || rustfmt_diff(head) || ocaml_error(head)) {
        return fail(NAMES[ERROR_LABEL]);
    }
    if on(JSON_ERROR)
        && (json::reports_failure(start(content), JSON_SCAN_BYTES)
            || json::batch_reports_failure(start(content), JSON_SCAN_BYTES))
    {
        return fail(NAMES[JSON_ERROR]);
    }
    if on(FAILURE_STATEMENT)
        && ((any_line_rule
            && !first_person(line)
            && !zero_count(line)
            && !commit_line(line)
            && p.failure_statement.is_match(line))
            || status_word(head)
            || exception_message(&p.exception_message, content, head))
    {
        return fail(NAMES[FAILURE_STATEMENT]);
    }
    if on(SHELL_DIAGNOSTIC) && shell_diagnostic_only(&p.shell_diagnostic, content, head) {
        return fail(NAMES[SHELL_DIAGNOSTIC]);
    }
    // (pre-commit's report opens with a hook's line: the failed hook may
    // be the last, its output ending the report; `runners.rs`)
    if on(FAILURE_SUMMARY)
        && (summary::ends_in_failure(&p.failure_summary, &p.compiler_error, content)
            || (line.last() == Some(&b'd') && super::runners::pre_commit_failed(content, line)))
    {
        return fail(NAMES[FAILURE_SUMMARY]);
    }
    Finding::Nothing
}

/// How the command ended, where the client wrote it in its own result
/// format (`client.rs`): a header line, the Gemini CLI's footer, a last
/// line, OpenCode's trailer. `head` is [`head`]`(content)`.
fn client_status(content: &[u8], head: &[u8]) -> Option<client::Status> {
    let p = &*PATTERNS;
    let tail = &content[content.len().saturating_sub(TAIL_BYTES)..];
    client::header(&p.exit_status, head)
        .or_else(|| client::gemini_footer(tail))
        .or_else(|| {
            let last = last_line(content, TAIL_BYTES);
            client::trailer(&p.exit_status, last).or_else(|| {
                let (body, last) = without_advice(content, last);
                client::ended(&p.ended, body, last)
            })
        })
        .or_else(|| client::opencode_metadata(tail))
}

/// `content` and its last line (`last`, [`last_line`]'s) without the
/// paragraphs of advice that close it ([`client::is_advice`], OpenClaw's
/// after a timeout), so that the status above them is the last line.
fn without_advice<'a>(mut body: &'a [u8], mut last: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    while !last.is_empty() && client::is_advice(last) {
        // (`last` ends where the trimmed body does)
        body = trim_end(&body[..trim_end(body).len() - last.len()]);
        last = last_line(body, TAIL_BYTES);
    }
    (body, last)
}

/// `exit_status` alone (not masked by `disabled`): whether the client's
/// own status in the text says the command failed.
pub(super) fn client_failed(content: &[u8], disabled: u32) -> bool {
    disabled & (1 << EXIT_STATUS) == 0
        && client_status(content, head(content)) == Some(client::Status::Failed)
}

/// `failure_summary` for the output of a known Go tool, when
/// [`first_match`] found nothing: the tool's failures that print no header
/// or closing line of their own (see `golang.rs`).
pub(super) fn go_tool_failed(
    tool: super::GoTool,
    content: &[u8],
    disabled: u32,
) -> Option<&'static str> {
    (disabled & (1 << FAILURE_SUMMARY) == 0 && super::golang::tool_failed(tool, content))
        .then_some(NAMES[FAILURE_SUMMARY])
}

/// `harness_refusal`'s in-line phrases early in the first line of a short
/// result: a refusal is the whole result (the tool never ran, so there is
/// no output after the harness's message).
fn refusal_in_line(content: &[u8], line: &[u8]) -> bool {
    let early = &line[..line.len().min(INLINE_BYTES)];
    let p = &*PATTERNS;
    content.len() <= REFUSAL_BYTES
        && p.harness_refusal_gate.is_match(early)
        && p.harness_refusal_inline.is_match(early)
}

/// The refusal rules alone (`user_denied`, `harness_refusal`, not masked
/// by `disabled`): the name of the one that says the harness refused or
/// cancelled the call.
pub(super) fn refusal(content: &[u8], disabled: u32) -> Option<&'static str> {
    let on = |rule: usize| disabled & (1 << rule) == 0;
    let plain = without_csi(first_line(head(content)));
    let line: &[u8] = &plain;
    let p = &*PATTERNS;
    if on(USER_DENIED) && p.user_denied.is_match(line) {
        return Some(NAMES[USER_DENIED]);
    }
    if on(HARNESS_REFUSAL) && (p.harness_refusal.is_match(line) || refusal_in_line(content, line)) {
        return Some(NAMES[HARNESS_REFUSAL]);
    }
    None
}

/// The *whole* output is a program's diagnostics and nothing else (at most
/// three lines, the first a diagnostic, the rest from the same program):
/// the command produced no result, only its complaint.
fn shell_diagnostic_only(diagnostic: &Regex, content: &[u8], head: &[u8]) -> bool {
    let head = trim_end(head);
    if content.len() > HEAD_BYTES || !diagnostic.is_match(head) {
        return false;
    }
    let Some(colon) = memchr::memchr(b':', head) else {
        return false;
    };
    let program = &head[..=colon];
    if SEVERITIES
        .iter()
        .any(|w| program[..colon].eq_ignore_ascii_case(w))
    {
        // `warning: could not open directory 'x/': Permission denied`
        // (git, exit 0): a warning, not a program's complaint.
        return false;
    }
    let mut count = 0;
    for line in head
        .split(|b| *b == b'\n')
        .filter(|l| !trim_end(l).is_empty())
    {
        count += 1;
        if count > 3 || !(line.starts_with(program) || diagnostic.is_match(line)) {
            return false;
        }
    }
    true
}

/// ESLint's report of its own fatal error (a configuration it cannot
/// read or find, a plugin it cannot import), as `bin/eslint.js`'s
/// `onFatalError` prints it before exiting with status 2: `Oops!
/// Something went wrong! :(`, a blank line, `ESLint: 9.39.5`, the
/// message. Not the sentence alone (a web page's, an app's message).
fn eslint_crash(head: &[u8]) -> bool {
    head.first() == Some(&b'O')
        && head
            .strip_prefix(b"Oops! Something went wrong! :(")
            .is_some_and(|rest| {
                matches!(rest.first(), Some(b'\n' | b'\r')) && start(rest).starts_with(b"ESLint: ")
            })
}

/// The content from its first meaningful byte: leading whitespace, a BOM
/// and ANSI escape sequences skipped.
pub(super) fn start(content: &[u8]) -> &[u8] {
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

/// `line` without its ANSI CSI sequences (`ESC [` … final byte), borrowed
/// when it has none.
pub(super) fn without_csi(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if memchr::memchr(0x1B, line).is_none() {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = Vec::with_capacity(line.len());
    let mut s = line;
    while let Some(i) = memchr::memchr(0x1B, s) {
        out.extend_from_slice(&s[..i]);
        s = &s[i..];
        match s {
            [0x1B, b'[', rest @ ..] => {
                let end = rest.iter().position(|b| (0x40..=0x7E).contains(b));
                s = end.map_or(&[][..], |k| &rest[k + 1..]);
            }
            [_, rest @ ..] => {
                out.push(0x1B);
                s = rest;
            }
            [] => break,
        }
    }
    out.extend_from_slice(s);
    std::borrow::Cow::Owned(trim_end(&out).to_vec())
}

/// The first line of `head`, bounded, without trailing whitespace.
fn first_line(head: &[u8]) -> &[u8] {
    let end = memchr::memchr(b'\n', head).unwrap_or(head.len());
    trim_end(&head[..end.min(LINE_BYTES)])
}

/// The last non-empty line within the last `window` bytes of the content;
/// empty when that line begins before the window (a line longer than the
/// window is no trailer, and its cut is no line's start).
fn last_line(content: &[u8], window: usize) -> &[u8] {
    let from = content.len().saturating_sub(window);
    let tail = trim_end(&content[from..]);
    let begin = match memchr::memrchr(b'\n', tail) {
        Some(i) => i + 1,
        None if from == 0 || content[from - 1] == b'\n' => 0,
        None => return &[],
    };
    start(&tail[begin..])
}

pub(super) fn trim_end(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., b' ' | b'\t' | b'\r' | b'\n'] = s {
        s = rest;
    }
    s
}

/// A first line spoken by an assistant ("I cannot find …") is an answer,
/// not a failure report; one that opens with a negation ("No tests failed")
/// reports the absence of a failure.
fn first_person(line: &[u8]) -> bool {
    let word_end = line
        .iter()
        .position(|b| !(b.is_ascii_alphabetic() || *b == b'\''))
        .unwrap_or(line.len());
    let word = &line[..word_end];
    if word.eq_ignore_ascii_case(b"no")
        && line
            .get(word_end..word_end + 6)
            .is_some_and(|w| w.eq_ignore_ascii_case(b" such "))
    {
        // "No such tool": the strerror form, a failure.
        return false;
    }
    [
        &b"i"[..],
        b"i'm",
        b"i've",
        b"we",
        b"we're",
        b"you",
        b"no",
        b"none",
        b"nothing",
    ]
    .iter()
    .any(|w| word.eq_ignore_ascii_case(w))
}

/// A `git log --oneline` line (`a1b2c3d tests failed on CI`): a commit's
/// abbreviated hash, then its subject, which may say anything.
fn commit_line(line: &[u8]) -> bool {
    let hash = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    (7..=40).contains(&hash)
        && line.get(hash) == Some(&b' ')
        && line[..hash].iter().any(u8::is_ascii_digit)
        && line[..hash].iter().any(u8::is_ascii_alphabetic)
}

/// The whole content is one line, a Python exception's message as CPython
/// words it or a JavaScript one's as V8 does, without the exception's
/// name: how a framework that hands the model `str(exception)` or
/// `error.message` reports a tool's crash (LlamaIndex's agents:
/// `'NoneType' object has no attribute 'value'`, `unsupported operand
/// type(s) for /: 'PosixPath' and 'int'`, `name 'x' is not defined`,
/// `list index out of range`; the Continue CLI: `t.startsWith is not a
/// function`, `Cannot read properties of undefined (reading 'length')`).
/// Not a line of a longer output.
fn exception_message(message: &Regex, content: &[u8], head: &[u8]) -> bool {
    let line = trim_end(head);
    content.len() <= LINE_BYTES && !line.contains(&b'\n') && message.is_match(line)
}

/// The whole content is one status word such as `aborted` or `timed out`.
fn status_word(head: &[u8]) -> bool {
    let mut s = trim_end(head);
    while let [rest @ .., b'.' | b'!' | b'"'] = s {
        s = rest;
    }
    s.len() <= 12 && STATUS_WORDS.iter().any(|w| s.eq_ignore_ascii_case(w))
}

/// A crash report at the end of the output: the process died after
/// printing something (Python's traceback ending in the exception line,
/// Node's `Node.js vX` trailer after an uncaught exception, a Rust panic,
/// a Go panic's goroutine frames: see `golang.rs`).
fn crash_at_end(content: &[u8]) -> bool {
    let window = &content[content.len().saturating_sub(CRASH_TAIL_BYTES)..];
    let last = last_line(content, CRASH_TAIL_BYTES);
    if last.starts_with(b"Node.js v") && last.get(9).is_some_and(u8::is_ascii_digit) {
        return true;
    }
    if PATTERNS.python_exception.is_match(last) && FINDERS.traceback.find(window).is_some() {
        return true;
    }
    if python_syntax_report(window, last) {
        return true;
    }
    // A Rust panic report ends with its `note: …` hint (or a backtrace).
    if (last.starts_with(b"note: ") || last.starts_with(b"stack backtrace"))
        && FINDERS.panicked.find(window).is_some()
        && FINDERS.thread.find(window).is_some()
    {
        return true;
    }
    // An uncaught exception of the JVM's main thread, Lua's, PHP's.
    if super::trace::uncaught_at_end(content, window, last) {
        return true;
    }
    // A Go panic ends with a goroutine's frame.
    super::golang::panic_at_end(window, last)
}

/// Python's report of a script it could not compile, which has no
/// traceback header: `  File "s.py", line 1`, the source line, its caret
/// line, then `SyntaxError: invalid syntax` (or `IndentationError: …`,
/// `TabError: …`) as the last line (python 3.11 here, status 1). The
/// `File` line is one of the three above the last.
fn python_syntax_report(window: &[u8], last: &[u8]) -> bool {
    // Most outputs stop at the first byte.
    if !matches!(last.first(), Some(b'S' | b'I' | b'T')) {
        return false;
    }
    if !(last.starts_with(b"SyntaxError: ")
        || last.starts_with(b"IndentationError: ")
        || last.starts_with(b"TabError: "))
    {
        return false;
    }
    trim_end(window)
        .rsplit(|b| *b == b'\n')
        .skip(1)
        .take(3)
        .any(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            line.starts_with(b"  File \"")
                && line.len() <= 1024
                && memchr::memmem::rfind(line, b"\", line ").is_some_and(|i| {
                    let n = &line[i + 8..];
                    !n.is_empty() && n.iter().all(u8::is_ascii_digit)
                })
        })
}

/// Substring searchers built once.
struct Finders {
    traceback: memchr::memmem::Finder<'static>,
    thread: memchr::memmem::Finder<'static>,
    panicked: memchr::memmem::Finder<'static>,
}

static FINDERS: LazyLock<Finders> = LazyLock::new(|| Finders {
    traceback: memchr::memmem::Finder::new(b"Traceback (most recent call last):"),
    thread: memchr::memmem::Finder::new(b"\nthread '"),
    // `thread 'main' panicked at`, or since Rust 1.91 `thread 'main'
    // (29402) panicked at` (rust-lang/rust#115746).
    panicked: memchr::memmem::Finder::new(b" panicked at "),
});

/// A compiler diagnostic (`src/a.c:1:19: error: …`) on one of the first
/// three lines; a search hit with the same shape (`src/a.go:88:\terror :=
/// …`, a matched line that starts with the word) is not one.
fn compiler_error(head: &[u8]) -> bool {
    let mut rest = head;
    for _ in 0..3 {
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let line = &rest[..end.min(LINE_BYTES)];
        if memchr::memmem::find(line, b"error").is_some() && PATTERNS.compiler_error.is_match(line)
        {
            return true;
        }
        if end == rest.len() {
            return false;
        }
        rest = &rest[end + 1..];
    }
    false
}

/// rustfmt's report of a file it would change (`cargo fmt --check`,
/// `rustfmt --check`; status 1): `Diff in /src/main.rs:1:` (`Diff in
/// /src/main.rs at line 1:` in older rustfmt) above the diff's `-`, `+`
/// and context lines. Its check mode prints it only for such a file.
fn rustfmt_diff(head: &[u8]) -> bool {
    if head.first() != Some(&b'D') {
        return false;
    }
    let Some(rest) = head.strip_prefix(b"Diff in ") else {
        return false;
    };
    let Some(end) = memchr::memchr(b'\n', rest) else {
        return false;
    };
    let Some(location) = trim_end(&rest[..end]).strip_suffix(b":") else {
        return false;
    };
    let digits = location
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let path = &location[..location.len() - digits];
    let located = digits > 0
        && (path.strip_suffix(b":").is_some_and(|p| !p.is_empty())
            || path
                .strip_suffix(b" at line ")
                .is_some_and(|p| !p.is_empty()));
    located && matches!(rest.get(end + 1), Some(b'-' | b'+' | b' '))
}

/// How many lines of its source excerpt OCaml prints between a
/// location and its `Error:` (the lines, the carets, `...`).
const OCAML_EXCERPT_LINES: usize = 8;

/// OCaml's compiler error opening the output (the toplevel running a
/// script, `ocamlc`, dune: status 2): `File "a.ml", line 1, characters
/// 14-21:` (`lines 3-5, characters …`), the source excerpt (`1 | let x :
/// int = "three";;`, carets), then `Error: This expression has type …`
/// (or `Error (warning 32 [unused-value-declaration]): …` when warnings
/// are errors). A warning's location has `Warning 26 [unused-var]: …`
/// below it instead.
fn ocaml_error(head: &[u8]) -> bool {
    if head.first() != Some(&b'F') {
        return false;
    }
    let mut lines = head.split(|b| *b == b'\n');
    let located = lines.next().is_some_and(|l| {
        let l = trim_end(l);
        l.starts_with(b"File \"")
            && l.ends_with(b":")
            && memchr::memmem::find(l, b"\", line").is_some()
            && memchr::memmem::find(l, b", characters ").is_some()
    });
    if !located {
        return false;
    }
    for line in lines.take(OCAML_EXCERPT_LINES) {
        if line.starts_with(b"Error: ") || line.starts_with(b"Error (warning ") {
            return true;
        }
        let line = trim_end(line);
        let number = line.iter().take_while(|b| b.is_ascii_digit()).count();
        let excerpt = (number > 0 && line[number..].starts_with(b" | "))
            || line.trim_ascii_start().iter().all(|b| *b == b'^')
            || line.trim_ascii_start() == b"...";
        if !excerpt {
            return false;
        }
    }
    false
}

/// "failed: 0", "0 failed", "failures: 0": a count of zero, not a failure.
fn zero_count(line: &[u8]) -> bool {
    let is_zero_at =
        |i: usize| line.get(i) == Some(&b'0') && !line.get(i + 1).is_some_and(u8::is_ascii_digit);
    for w in [&b"failed"[..], b"failures", b"failure"] {
        for at in 0..line.len().saturating_sub(w.len() - 1) {
            if !line[at..at + w.len()].eq_ignore_ascii_case(w) {
                continue;
            }
            // "0 failed": a lone zero right before the word.
            if at >= 2
                && line[at - 1] == b' '
                && line[at - 2] == b'0'
                && (at < 3 || !line[at - 3].is_ascii_digit())
            {
                return true;
            }
            // "failed: 0" / "failures = 0".
            let after = at
                + w.len()
                + line[at + w.len()..]
                    .iter()
                    .take_while(|b| matches!(b, b':' | b' ' | b'='))
                    .count();
            if is_zero_at(after) {
                return true;
            }
        }
    }
    false
}

/// `timeout: 30s`, `Timeout: 5000 ms`, `timeout: 30s, retries: 3`: a
/// setting whose value is a duration (alone, or first in a list of
/// settings), not a timeout's report (`Timeout: command took longer than
/// 30s`).
fn duration_setting(line: &[u8]) -> bool {
    let Some(rest) = line
        .get(..7)
        .filter(|w| w.eq_ignore_ascii_case(b"timeout"))
        .and_then(|_| line[7..].trim_ascii_start().strip_prefix(b":"))
    else {
        return false;
    };
    let value = rest.trim_ascii_start();
    if !value.first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    let number = value
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    let after = value[number..].trim_ascii_start();
    let unit = after.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    unit <= 7 && matches!(after.get(unit), None | Some(b',' | b';'))
}

/// `error: null`, `Error: none`, `errors: []`: a key with an empty value
/// (YAML, logs), not a failure label.
fn null_value(line: &[u8]) -> bool {
    let Some(colon) = memchr::memchr(b':', line) else {
        return false;
    };
    let mut value = &line[colon + 1..];
    while let [b' ' | b'\t' | b'"' | b'\'', rest @ ..] = value {
        value = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'"' | b'\'' | b','] = value {
        value = rest;
    }
    [
        &b"null"[..],
        b"none",
        b"nil",
        b"0",
        b"false",
        b"[]",
        b"{}",
        b"~",
    ]
    .iter()
    .any(|w| value.eq_ignore_ascii_case(w))
}
