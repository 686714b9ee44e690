//! The client-format rules (`exit_status` with basis `client`) and
//! `harness_refusal`, on fixtures written in each client's real result
//! format, as its source builds them (Gemini CLI `tools/shell.ts`,
//! `scheduler/tool-executor.ts`, `scheduler/policy.ts`; Codex CLI
//! `tools/mod.rs`, `safety.rs`; Claude Code's recorded results).

use toolwarden_core::{Basis, Verdict};

use super::Detector;

const CLIENT_FAILURE: Verdict = Verdict {
    failed: true,
    basis: Basis::Client,
};
const CLIENT_SUCCESS: Verdict = Verdict {
    failed: false,
    basis: Basis::Client,
};

#[track_caller]
fn verdicts(cases: &[(&str, Verdict)]) {
    let d = Detector::default();
    for (text, want) in cases {
        assert_eq!(d.verdict(text), *want, "{text:?}");
    }
}

/// `run_shell_command` before Gemini CLI 0.27: every field, always.
fn gemini_old(output: &str, error: &str, exit: &str, signal: &str) -> String {
    format!(
        "Command: npm test\nDirectory: (root)\nOutput: {output}\nError: {error}\nExit Code: {exit}\nSignal: {signal}\nBackground PIDs: (none)\nProcess Group PGID: 27856"
    )
}

/// `run_shell_command` since 0.27: only the fields that apply, wrapped in
/// `<untrusted_context>`.
fn gemini_new(output: &str, footer: &[&str]) -> String {
    let mut parts = vec![format!("Output: {output}")];
    parts.extend(footer.iter().map(|s| s.to_string()));
    parts.push("Process Group PGID: 4242".into());
    format!(
        "<untrusted_context>\n{}\n</untrusted_context>",
        parts.join("\n")
    )
}

#[test]
fn gemini_shell_footer_old_format() {
    verdicts(&[
        (
            &gemini_old("Build failed with 1 error(s)", "(none)", "1", "(none)"),
            CLIENT_FAILURE,
        ),
        (
            &gemini_old("(empty)", "(none)", "3221225794", "(none)"),
            CLIENT_FAILURE,
        ),
        (
            &gemini_old("(empty)", "(none)", "-1", "(none)"),
            CLIENT_FAILURE,
        ),
        (
            &gemini_old("partial", "(none)", "(none)", "SIGKILL"),
            CLIENT_FAILURE,
        ),
        (
            &gemini_old("(empty)", "spawn bash ENOENT", "(none)", "(none)"),
            CLIENT_FAILURE,
        ),
        // error text in the output, but the command succeeded
        (
            &gemini_old(
                "Error: deprecated flag\nwarning: x\nfailed: 0",
                "(none)",
                "0",
                "(none)",
            ),
            CLIENT_SUCCESS,
        ),
        (
            &gemini_old(
                "error: no tests\nTraceback (most recent call last):\nValueError: x",
                "(none)",
                "0",
                "(none)",
            ),
            CLIENT_SUCCESS,
        ),
    ]);
}

#[test]
fn gemini_shell_footer_new_format() {
    verdicts(&[
        (
            &gemini_new("FAIL src/a.test.ts", &["Exit Code: 1"]),
            CLIENT_FAILURE,
        ),
        (
            &gemini_new("(empty)", &["Exit Code: 3221225794"]),
            CLIENT_FAILURE,
        ),
        (&gemini_new("(empty)", &["Signal: 9"]), CLIENT_FAILURE),
        (
            &gemini_new("(empty)", &["Exit Code: 1", "Background PIDs: 77"]),
            CLIENT_FAILURE,
        ),
        // no Exit Code line: the client says the command succeeded, even
        // with an error-looking last output line (`|| true`, warnings)
        (
            &gemini_new("npm ERR! peer dep missing\nError: x", &[]),
            CLIENT_SUCCESS,
        ),
        (
            &gemini_new(
                "grep: warning: stray \\\nfatal: nothing",
                &["Background PIDs: 12"],
            ),
            CLIENT_SUCCESS,
        ),
    ]);
}

/// Qwen Code's `run_shell_command` (0.24, the old format's fields with the
/// program's stderr above them): a program's own `Error: …` line above the
/// footer's `Error: (none)` is output, not the footer's.
#[test]
fn qwen_code_shell_footer() {
    let qwen = |output: &str, exit: &str| {
        format!(
            "Command: node app.js\nDirectory: (root)\nOutput: {output}\nError: (none)\nExit Code: {exit}\nSignal: (none)\nProcess Group PGID: (none)"
        )
    };
    verdicts(&[
        (&qwen("ok\nError: printed, not thrown", "0"), CLIENT_SUCCESS),
        (&qwen("ok", "0"), CLIENT_SUCCESS),
        (&qwen("Error: boom", "1"), CLIENT_FAILURE),
        (&qwen("(empty)", "3"), CLIENT_FAILURE),
    ]);
}

#[test]
fn codex_and_claude_code_exit_status() {
    verdicts(&[
        // Codex `shell`: `Exit code: N` first
        (
            "Exit code: 1\nWall time: 0.4 seconds\nOutput:\nerror[E0425]: cannot find value",
            CLIENT_FAILURE,
        ),
        (
            "Exit code: 0\nWall time: 0.4 seconds\nOutput:\nError: printed by the test",
            CLIENT_SUCCESS,
        ),
        (
            "Exit code: -1\nWall time: 10 seconds\nOutput:\ncommand timed out",
            CLIENT_FAILURE,
        ),
        // Codex unified exec
        (
            "Chunk ID: 4c5113\nWall time: 0.0781 seconds\nProcess exited with code 1\nOriginal token count: 40\nOutput:\nx",
            CLIENT_FAILURE,
        ),
        (
            "Chunk ID: 4c5113\nWall time: 0.0781 seconds\nProcess exited with code 3221225794\nOutput:\n",
            CLIENT_FAILURE,
        ),
        // Claude Code `Bash`
        (
            "Exit code 2\nls: cannot access 'x': No such file or directory",
            CLIENT_FAILURE,
        ),
        // a last-line trailer
        (
            "npm test\n...\n[The command completed with exit code 1.]",
            CLIENT_FAILURE,
        ),
        // OpenHands' trailer stating 0: a success, however long the output
        // and whatever error text it holds.
        (
            "some output\n[The command completed with exit code 0.]",
            CLIENT_SUCCESS,
        ),
        (
            "ERROR: pip's dependency resolver does not currently take into account\n\
             a\nb\nc\nd\nSuccessfully installed x-1.0\n[The command completed with exit code 0.]",
            CLIENT_SUCCESS,
        ),
    ]);
}

/// The GitHub Copilot CLI's `bash` ends its output with the shell's
/// status, 0 included: the client's own word either way.
#[test]
fn copilot_cli_shell_trailer() {
    verdicts(&[
        (
            "ls: cannot access 'missing-dir': No such file or directory\n<shellId: 0 completed with exit code 2>",
            CLIENT_FAILURE,
        ),
        (
            "cat: missing.txt: No such file or directory\n<shellId: 2 completed with exit code 1>",
            CLIENT_FAILURE,
        ),
        (
            "<shellId: build-7 completed with exit code 137>",
            CLIENT_FAILURE,
        ),
        (
            "e2e-ok\n<shellId: 1 completed with exit code 0>",
            CLIENT_SUCCESS,
        ),
        // Output that reads like a failure, the shell's status 0.
        (
            "Error: printed by the script\n<shellId: 4 completed with exit code 0>\n",
            CLIENT_SUCCESS,
        ),
    ]);
    // The words inside a line of output are the program's.
    let d = Detector::default();
    assert_eq!(
        d.explain("log: <shellId: 1 completed with exit code 2>"),
        None
    );
}

/// Cline's `execute_command` states the status on its first line, above
/// `Output:` (cline/cline `src/integrations/terminal/CommandOrchestrator.ts`).
/// A success vetoes the rules: `git log -1 --format=%s` printing a commit
/// subject that opens like cargo's closing line.
#[test]
fn cline_exit_status() {
    verdicts(&[
        (
            "Command executed successfully (exit code 0).\nOutput:\nerror: could not compile `app` on CI, retried",
            CLIENT_SUCCESS,
        ),
        (
            "Command failed with exit code 1.\nOutput:\nchecking config\nconfig.yaml: missing key \"port\"",
            CLIENT_FAILURE,
        ),
        (
            "Command terminated by signal SIGKILL.\nOutput:\nbuilding",
            CLIENT_FAILURE,
        ),
        // No status (the terminal reported none): the rules read it.
        ("Command executed.\nOutput:\nok", Verdict::NONE),
    ]);
    // Not Cline's line below the first: the program's words.
    let d = Detector::default();
    let v = d.verdict("step 1\nCommand terminated by signal SIGKILL.\nretrying\ndone");
    assert_eq!(v, Verdict::NONE);
}

/// A last line stating 0 in a program's words may be one step's, before
/// the run's end: it decides nothing, and the other rules still read the
/// output.
#[test]
fn a_programs_trailing_zero_status_is_not_a_client_success() {
    let d = Detector::default();
    let v = d.verdict("Error: deploy failed\nstep 1\nstep 2\nstep 3\nstep 4\nexit status 0");
    assert_eq!(v.basis, Basis::Heuristic, "{v:?}");
    assert!(v.failed);
}

/// A status line below the program's first line is the program's (a
/// step's, `go test`'s `exit status 1`): the client writes its own first,
/// or below its header lines only (Codex's `Chunk ID:`, `Wall time:`).
#[test]
fn a_status_below_the_output_is_not_the_clients() {
    let d = Detector::default();
    // A step's zero vetoed the run's error label.
    let v = d.verdict("Error: deploy failed\nexit status 0\nstep 2 skipped");
    assert_eq!((v.failed, v.basis), (true, Basis::Heuristic), "{v:?}");
    // A step's failure is not the client's word on the run.
    let v = d.verdict("retrying\nexit status 1\nretry 2 ok\ndone");
    assert_eq!(v, toolwarden_core::Verdict::NONE);
    // Codex's header lines above its status.
    let v = d.verdict("Chunk ID: 4c5113\nWall time: 0.0781 seconds\nProcess exited with code 0\nOutput:\nError: x");
    assert_eq!((v.failed, v.basis), (false, Basis::Client), "{v:?}");
}

#[test]
fn footer_lookalikes_are_not_client_statuses() {
    let d = Detector::default();
    for text in [
        // a lone trailing `Error:` line is program output, not a footer
        "step 1\nstep 2\nError: (none)",
        "log line\nExit Code: is documented in the manual",
        "build ok\nSignal: strong",
    ] {
        assert_ne!(d.verdict(text).basis, Basis::Client, "{text:?}");
    }
}

#[test]
fn harness_refusals() {
    let d = Detector::default();
    for text in [
        // Gemini CLI
        "[Operation Cancelled] Reason: User denied execution.",
        "[Operation Cancelled] Reason: User cancelled tool execution.",
        "Tool execution denied by policy.",
        "Tool execution denied by policy. Network access is disabled",
        "Tool execution for \"Shell\" requires user confirmation, which is not supported in non-interactive mode.",
        "Command was cancelled by user before it could start.",
        "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output.",
        "Path not in workspace: Attempted path \"/etc/x\" resolves outside the allowed workspace directories: /w",
        "File path must be within one of the workspace directories: /home/u/p",
        "Request cancelled.",
        // Codex CLI
        "patch rejected: writing outside of the project; rejected by user approval settings",
        "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings",
        "MCP tool call requires approval, but approval policy is never",
        "approval required by policy, but AskForApproval is set to Never",
        "execution error: sandbox denied exec: operation not permitted",
        // Claude Code
        "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.",
        "File has not been read yet. Read it first before writing to it.",
        "cd to '/etc' was blocked. For security, Claude Code may only change directories to child directories of the allowed working directories.",
        "This command requires approval, which was auto-denied in non-interactive mode",
        // Qwen Code
        "Tool \"list_directory\" is a built-in tool that is disabled by default because glob covers directory listing in most cases. Enable it with the tools.listDirectory.enabled setting. Use glob instead.",
        "File /w/present.txt has not been read in this session. Use the read_file tool first to load the current content (a partial read with offset / limit is fine — you only need to have seen the bytes you intend to edit) before editing it.",
        // The Continue CLI
        "You must use the Read tool to read /w/present.txt before editing it.",
        // The GitHub Copilot CLI's `edit`
        "No match found: old_str not found in /w/present.txt; no changes made; you might want to try again with correct old_str",
        "old_string was not found in the file",
        // A tool the harness does not have (the Vercel AI SDK, this
        // project's runtime, generic harnesses)
        "Model tried to call unavailable tool 'no_such_tool'. Available tools: read_file, run_shell.",
        "Tool 'no_such_tool' is not available. Available tools: a, b.",
        "Unknown tool: frobnicate",
    ] {
        assert!(d.explain(text).is_some(), "should be a failure: {text:?}");
        assert_eq!(d.verdict(text).basis, Basis::Heuristic, "{text:?}");
    }
    for text in [
        "The approval workflow is documented in docs/approvals.md",
        "Deploys to production need a review; see CONTRIBUTING.md",
        "Files outside the workspace are ignored by the indexer",
        "Cancellation tokens are passed to every task",
        "     1→// the request was cancelled by the client, retry",
        "The sandbox module isolates processes",
        "The tool belt is available in the garage",
        "Registered tools: read_file, run_shell",
        "File notes.md has not been read by anyone yet",
        "Tool support is disabled in safe mode; see the docs",
        "You must read the contributing guide before opening a pull request.",
        "You must use the Read tool to read files.",
        "No match found",
        "old_str: the text to replace (not found errors are reported)",
    ] {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}

#[test]
fn leave_one_source_out_scores_each_source_without_it() {
    use std::cell::RefCell;

    use super::holdout::leave_one_source_out;

    let a = br#"{"source": "github:a/x@1:p", "provider": "openai", "content": "Exit code: 1\nWall time: 1 seconds\nOutput:\n", "is_error": true}
{"source": "github:a/x@1:p", "provider": "openai", "content": "fine", "is_error": false}
"#;
    let b = br#"{"source": "github:b/y@2:q", "provider": "gemini", "content": "Tool execution denied by policy.", "is_error": true}
{"source": "github:b/y@2:q", "provider": "gemini", "content": "looks fine", "is_error": true}
"#;
    let seen = RefCell::new(Vec::new());
    let build = |others: &[&[u8]]| {
        seen.borrow_mut()
            .push(others.iter().map(|o| o.len()).sum::<usize>());
        Detector::default()
    };
    let held = leave_one_source_out(&[a.to_vec(), b.to_vec()], &build).unwrap();
    assert_eq!(held.len(), 2);
    assert_eq!(held[0].source, "github:a/x");
    assert_eq!((held[0].detector.tp, held[0].detector.tn), (1, 1));
    assert_eq!(held[1].source, "github:b/y");
    assert_eq!((held[1].detector.tp, held[1].detector.fn_), (1, 1));
    // each build saw exactly the other source's rows
    let seen = seen.into_inner();
    assert_eq!(seen, vec![b.len(), a.len()]);
}

#[test]
fn approval_required_where_none_can_be_given() {
    let d = Detector::default();
    for text in [
        "This Bash command contains multiple operations. The following parts require approval: rm -rf build",
        "Tool requires confirmation",
        "Permission to use Write has been auto-denied (prompts unavailable).",
    ] {
        assert!(d.explain(text).is_some(), "should be a failure: {text:?}");
    }
    for text in [
        "Changes to the schema require approval from two reviewers before merge and deploy",
        "Approval flow: see docs/approvals.md",
    ] {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}

#[test]
fn tool_errors_in_the_clients_own_words() {
    let d = Detector::default();
    for (text, rule) in [
        // Gemini CLI `ls.ts`, `read-file.ts`, `grep.ts`: `Error <doing> <what>: <why>`
        (
            "Error listing directory: ENOENT: no such file or directory, stat '/w/missing-dir'",
            "error_label",
        ),
        (
            "Error reading file /w/a.txt: EACCES: permission denied",
            "error_label",
        ),
        // Gemini CLI `tool-registry`: a tool it does not have
        (
            r#"Tool "no_such_tool" not found. Did you mean one of: "read_file", "glob"?"#,
            "failure_statement",
        ),
        // a JSON-schema validator (Ajv) on the call's arguments
        ("params/file_path must be string", "failure_statement"),
        (
            "params must have required property 'command'",
            "failure_statement",
        ),
        // Codex CLI: an escalation asked for where no approval can be given
        (
            "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never",
            "harness_refusal",
        ),
    ] {
        assert_eq!(d.explain(text), Some(rule), "{text:?}");
    }
    for text in [
        "error handling ok",
        "Error handling: see docs/errors.md",
        "params must be set in config.yaml before running the job",
        "Tool \"grep\" is the fastest way to search",
        "We reject commands that are not on the allow list; see policy.md",
    ] {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}

/// OpenCode's `bash` (1.18): the output as it is, and a
/// `<shell_metadata>` trailer when the harness ended the command.
#[test]
fn opencode_shell_metadata() {
    let note = |output: &str, lines: &[&str]| {
        format!(
            "{output}\n\n<shell_metadata>\n{}\n</shell_metadata>",
            lines.join("\n")
        )
    };
    let timeout = "shell tool terminated command after exceeding timeout 120000 ms. If this command is expected to take longer and is not waiting for interactive input, retry with a larger timeout value in milliseconds.";
    verdicts(&[
        (&note("(no output)", &[timeout]), CLIENT_FAILURE),
        (&note("partial output\n", &[timeout]), CLIENT_FAILURE),
        (
            &note("line\n", &["User aborted the command"]),
            CLIENT_FAILURE,
        ),
        (
            &note(
                "x",
                &["bash tool terminated command after exceeding timeout 60000 ms"],
            ),
            CLIENT_FAILURE,
        ),
        // a note it does not know, and the plain output, say nothing
        (&note("all good", &["something else"]), Verdict::NONE),
        ("(no output)", Verdict::NONE),
        // not the trailer: quoted inside the output
        (
            &format!("<shell_metadata>\n{timeout}\n</shell_metadata>\nmore output"),
            Verdict::NONE,
        ),
    ]);
}

/// pi (`@mariozechner/pi-coding-agent` 0.73, the harness of OpenClaw): a
/// tool that throws is answered with the error's message alone, flagged
/// only on Anthropic, Gemini and Bedrock; its `bash` appends the status
/// after a blank line (`core/tools/bash.ts`, `edit-diff.ts`, `read.ts`).
#[test]
fn pi_results() {
    verdicts(&[
        (
            "ls: cannot access 'missing-dir': No such file or directory\n\nCommand exited with code 2",
            CLIENT_FAILURE,
        ),
        (
            "partial output\n\nCommand timed out after 1 seconds",
            CLIENT_FAILURE,
        ),
        ("step 1\nstep 2\n\nCommand aborted", CLIENT_FAILURE),
        (
            "building\nThe process was killed by the harness.",
            CLIENT_FAILURE,
        ),
    ]);
    let d = Detector::default();
    for (text, rule) in [
        (
            "Could not find the exact text in /w/present.txt. The old text must match exactly including all whitespace and newlines.",
            "failure_statement",
        ),
        (
            "Found 2 occurrences of the text in /w/a.txt. The text must be unique. Please provide more context to make it unique.",
            "harness_refusal",
        ),
        (
            "Found 3 occurrences of edits[1] in /w/a.txt. Each oldText must be unique. Please provide more context to make it unique.",
            "harness_refusal",
        ),
        (
            "No changes made to /w/a.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.",
            "harness_refusal",
        ),
        ("oldText must not be empty in /w/a.txt.", "harness_refusal"),
        (
            "edits[2].oldText must not be empty in /w/a.txt.",
            "harness_refusal",
        ),
        (
            "edits[0] and edits[1] overlap in /w/a.txt. Merge them into one edit or target disjoint regions.",
            "harness_refusal",
        ),
        (
            "Edit tool input is invalid. edits must contain at least one replacement.",
            "failure_statement",
        ),
        (
            "Offset 99 is beyond end of file (1 lines total)",
            "failure_statement",
        ),
        ("Path not found: /w/missing-dir", "os_error"),
        (
            "ripgrep (rg) is not available and could not be downloaded",
            "failure_statement",
        ),
        ("[tool error] (no tool output)", "error_label"),
        // the same kinds in other clients' words
        (
            "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true.",
            "harness_refusal",
        ),
        (
            "No changes to make: old_string and new_string are exactly the same.",
            "harness_refusal",
        ),
        (
            "Found multiple matches for oldString. Provide more surrounding lines in oldString to identify the correct match.",
            "harness_refusal",
        ),
        (
            "oldString and newString must be different",
            "harness_refusal",
        ),
        (
            "Line 40 is out of range (file has 3 lines)",
            "failure_statement",
        ),
    ] {
        assert_eq!(d.explain(text), Some(rule), "{text:?}");
    }
    for text in [
        // a search's answer, a formatter's, a no-op settings change
        "Found 3 matches for 'TODO' in 2 files:\nsrc/a.rs:1: // TODO",
        "Found 2 occurrences of the word in README.md",
        "No changes made.",
        "No changes made to the configuration; it is up to date.",
        "The text must be unique per page (see SEO.md)",
        // a status phrase inside the output, not its own last line
        "retrying\nCommand timed out after 1 seconds is the error we log\ndone",
        "the job ran\nCommand aborted by design? no: finished\nall good",
        // one line: the line rules read it (a harness's refusal)
        "Line 4 is the start of the function",
        "Input validation is documented in docs/validation.md",
    ] {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}

/// OpenClaw's `exec` (2026.9): the output, a blank line, then its status:
/// `(Command exited with code N)` for a command that ended by itself, or
/// the failure's reason and its paragraphs of advice
/// (`src/agents/bash-tools.exec-runtime.ts`); its `process` tool's answer
/// for a session it does not have.
#[test]
fn openclaw_results() {
    let advice = "The command was terminated, but external side effects may already have completed. Verify the resulting state before retrying. Do not automatically rerun non-idempotent commands. Use a higher timeout only when the command is known to be safe to retry.";
    let keep = "If it should keep running, start it with exec background=true or yieldMs so OpenClaw can register a pollable process session. Do not rely on shell backgrounding with a trailing &.";
    verdicts(&[
        (
            "ls: cannot access 'missing-dir': No such file or directory\n\n(Command exited with code 2)",
            CLIENT_FAILURE,
        ),
        (
            &format!("started\n\nCommand timed out after 1 seconds.\n\n{advice}\n\n{keep}"),
            CLIENT_FAILURE,
        ),
        (
            &format!("(no output)\n\nCommand timed out waiting for output.\n\n{advice}"),
            CLIENT_FAILURE,
        ),
        (
            "partial\n\nCommand aborted by signal SIGKILL",
            CLIENT_FAILURE,
        ),
        (
            "partial\n\nCommand aborted before exit code was captured",
            CLIENT_FAILURE,
        ),
        ("(no output)\n\nCommand not found", CLIENT_FAILURE),
        // a stop the model asked for, and advice after a line of output
        (
            "tail of the log\n\nProcess stopped by request (signal SIGTERM)",
            Verdict::NONE,
        ),
        (&format!("all done\n\n{keep}"), Verdict::NONE),
    ]);
    let d = Detector::default();
    for (text, rule) in [
        ("No session found for nope", "harness_refusal"),
        ("No finished session found for abc", "harness_refusal"),
        (
            "sessionId is required for this action.",
            "failure_statement",
        ),
        (
            "Invalid process action. Expected one of: list, poll, log",
            "failure_statement",
        ),
        ("Session abc stdin is not writable.", "failure_statement"),
    ] {
        assert_eq!(d.explain(text), Some(rule), "{text:?}");
    }
    for text in [
        // its `write` of what the file already holds: done
        "No changes made to /w/written.txt. The file already has identical content.",
        "No session found.",
        "Python 3.11 is required; see README.md for the other requirements",
        "Invalidation of the cache happens nightly",
        "No sessions found for today's date",
        "No running processes",
    ] {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}

/// Semantic Kernel (1.45, `kernel.py`): the kernel answers a call it cannot
/// run in sentences of its own, never flagged; a function's exception as
/// `An error occurred while invoking the function Plugin-name: …`.
#[test]
fn semantic_kernel_results() {
    let d = Detector::default();
    for (text, rule) in [
        (
            "The tool call with name `no_such_tool` is not part of the provided tools, please try again with a supplied tool call name and make sure to validate the name.",
            "harness_refusal",
        ),
        (
            "Missing required argument(s): ['path']. Please revise the arguments to match the function signature.",
            "failure_statement",
        ),
        (
            "Received unexpected argument(s): ['encoding']. Please revise the arguments to match the function signature.",
            "failure_statement",
        ),
        (
            "Missing required argument(s): ['path']. Received unexpected argument(s): ['x']. Please revise the arguments to match the function signature.",
            "failure_statement",
        ),
        (
            "The tool call arguments are malformed. Arguments must be in JSON format. Please try again.",
            "failure_statement",
        ),
        (
            "There are `2` tool call arguments required and only `1` received. The required arguments are: ['path', 'old']. Please provide the required arguments and try again.",
            "failure_statement",
        ),
        ("Missing required property: name", "failure_statement"),
    ] {
        assert_eq!(d.explain(text), Some(rule), "{text:?}");
    }
    assert!(
        d.verdict("An error occurred while invoking the function Tools-edit_file: edit_file: 'absent text' not found in present.txt")
            .failed
    );
    for text in [
        "Missing requirements are listed in docs/setup.md",
        "Unexpected argument counts are logged at debug level",
        "There are 3 arguments required and all 3 were given",
        "The list of provided tools is in tools.json",
    ] {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}
