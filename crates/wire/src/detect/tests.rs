//! Tests of the built-in rules, the configuration and the evaluation.
//!
//! Each rule has hand-written positives (how real harnesses report a
//! failure) and negatives (benign output that merely mentions errors).

use proptest::prelude::*;

use super::eval::{EvalError, evaluate};
use super::{DetectErrorKind, Detector, DetectorConfig, RULE_NAMES};

/// Assert that every positive fires `rule` and every negative fires nothing.
#[track_caller]
fn check(rule: &str, positives: &[&str], negatives: &[&str]) {
    let d = Detector::default();
    for p in positives {
        assert_eq!(d.explain(p), Some(rule), "should fire {rule}: {p:?}");
    }
    for n in negatives {
        assert_eq!(d.explain(n), None, "should not fire: {n:?}");
    }
}

/// Benign outputs that mention errors, failures or missing things in
/// positions that do not report a failure of the call itself.
const TRAPS: &[&str] = &[
    "14 doctests, 410 tests, 0 failures",
    "===== 12 passed, 0 failed in 0.31s =====",
    "test result: ok. 52 passed; 0 failed; 0 ignored",
    "Total errors: 0, Skipped: 0\ndone (passed successfully)",
    "     1→defmodule Repo.Migrations do\n     2→  # SQLite cannot alter column types",
    "   267→  def handle_event(\"jump_to_error\", params, socket) do",
    "src/error.rs:12:pub enum Error {\nsrc/lib.rs:3:use crate::error::Error;",
    "lib/app.ex:25:guard_fail The guard clause can never succeed.",
    "/home/u/proj/test/error_rendering_test.exs\n/home/u/proj/lib/errors.ex",
    "0629d16 fix: remove invalid page option\n9dd68ea fix: cannot sort by tuple",
    "{\"result\": \"ok\", \"error\": null}",
    "{\"data\": {\"items\": []}, \"errors\": []}",
    "{\"status\": \"cancelled\", \"reservation_id\": \"NQNU5R\"}",
    "{\"items\": [{\"error\": \"nested, not ours\", \"status\": \"failed\"}], \"ok\": true}",
    "Based on the documentation, I cannot find information about that function.",
    "I couldn't find any matches, but the search itself worked.",
    "warning: unused variable `x`\n  --> src/main.rs:2:9",
    "21:33:39.983 [error] Unexpected API response {:ok, %{status: 401}}\n....\n12 tests, 0 failures",
    "ls: cannot access '/tmp/scripts/': No such file or directory\ndirectory does not exist",
    "Exit code 0\nerror: this was printed but the command succeeded",
    "Exit code: 0\nWall time: 0.2 seconds\nOutput:\nError: just text in the output",
    "[main 1a2b3c4] feat: better error handling\n 2 files changed",
    "404 handler added to router",
    "Errors: none",
    "",
    "   ",
    "[]",
    "Transfer successful",
    "Web search results for query: \"rust error handling\"",
];

#[test]
fn traps_are_not_failures() {
    let d = Detector::default();
    for t in TRAPS {
        assert_eq!(d.explain(t), None, "trap fired: {t:?}");
    }
}

#[test]
fn framed_error() {
    check(
        "framed_error",
        &["Tool error (timeout): the tool did not answer within 30s"],
        &["Tool errors (3) were logged yesterday"],
    );
}

#[test]
fn error_tag() {
    check(
        "error_tag",
        &[
            "<tool_use_error>File does not exist.</tool_use_error>",
            "<tool_use_error>Sibling tool call errored</tool_use_error>",
            "<error>Command timed out</error>",
            "  <Error><Code>NoSuchKey</Code></Error>",
        ],
        &[
            "<html><body>Errors are listed below</body></html>",
            "Output:\n<tool_use_error>quoted later</tool_use_error>",
            "<error_handling_notes>retry twice</error_handling_notes>",
        ],
    );
}

#[test]
fn exit_status() {
    check(
        "exit_status",
        &[
            "Exit code 1\nCompiling 4 files (.ex)",
            "Exit code 128\nfatal: The current branch has no upstream branch.",
            "Exit code: 2\nWall time: 1.3 seconds\nOutput:\n",
            "exit status 1",
            "Process exited with code 137",
            "Command failed with exit code 2: npm test",
            "some output\nmore output\n[The command completed with exit code 1.]",
            "building...\nexit_code=3\n",
            "(exit code -1)",
        ],
        &[
            "Exit code 0",
            "some output\n[The command completed with exit code 0.]",
            "exit codes are documented in README.md",
            "Exit code 1abc is not a status",
        ],
    );
}

#[test]
fn user_denied() {
    check(
        "user_denied",
        &[
            "The user doesn't want to proceed with this tool use. The tool use was rejected.",
            "The user doesn't want to take this action right now.",
            "[Request interrupted by user for tool use]",
            "Permission to use Bash with command rm -rf / has been denied.",
            "exec command rejected by user",
            "Tool call was cancelled by the user",
            "Command blocked by policy: network access is not allowed",
            "User denied the request",
            "Hook PreToolUse:Edit denied this tool",
            // the Vercel AI SDK's result for an `execution-denied` output
            // without a reason, as its OpenAI and Anthropic providers send
            // it (and JSON-encoded, for a tool with an output schema)
            "Tool call execution denied.",
            "\"Tool call execution denied.\"",
        ],
        &[
            "The user model has a `rejected` field",
            "Users who were denied access are listed in audit.log",
        ],
    );
}

#[test]
fn crash_trace() {
    check(
        "crash_trace",
        &[
            "Traceback (most recent call last):\n  File \"x.py\", line 1",
            "thread 'main' panicked at src/main.rs:2:5:\nboom",
            "Exception in thread \"main\" java.lang.NullPointerException",
            "Uncaught TypeError: Cannot read properties of undefined",
            "** (RuntimeError) something broke",
            "goroutine 1 [running]:\nmain.main()",
        ],
        &[
            "     1→# How to read a Traceback (most recent call last) in Python",
            "Docs: Traceback objects are described in the reference.",
        ],
    );
}

#[test]
fn os_error() {
    check(
        "os_error",
        &[
            "EISDIR: illegal operation on a directory, read",
            "ENOENT: no such file or directory, open '/x/y.json'",
            "[Errno 2] No such file or directory: 'config.yaml'",
            "No such file or directory",
            "File does not exist.",
            // a path named between (the GitHub Copilot CLI's `view`)
            "Path /w/missing.txt does not exist. Please provide a valid path.",
            "File 'notes.md' not found",
            "Directory \"my docs\" doesn't exist",
            // a file a create would overwrite (the Copilot CLI's `create`)
            "Path /w/present.txt already exists as a file. Use `view` to check contents then edit it.",
            "Permission denied (publickey).",
            "bash: tree: command not found",
            "zsh: command not found: tree",
            "(eval):1: command not found: tree",
            "sh: 1: rg: not found",
            "Connection refused",
        ],
        &[
            "Email: someone@example.com",
            "ETA: 3 minutes",
            "docs/errno.md\nsrc/enoent.rs",
            "scripts/install.sh:12: echo \"command not found handler\"",
            "Path handling: files that do not exist are skipped",
            "File: src/main.rs\nnot found anywhere else",
            "Files already existing are kept",
        ],
    );
}

#[test]
fn http_status() {
    check(
        "http_status",
        &[
            "HTTP/1.1 404 Not Found\ncontent-type: text/html",
            "503 Service Unavailable",
            "Status code: 500",
            "Response code: 502",
            "429 Too Many Requests",
            "401 Unauthorized",
            "404 Not Found.",
            "410 Gone: the resource was removed",
            "403 Forbidden (missing scope)",
        ],
        &[
            "HTTP/1.1 200 OK\ncontent-type: application/json",
            "404 handler added to router",
            "500 files processed",
            "404\tnot found handler\n405\t  return 404",
            // `wc -l gone.txt`, `wc -c conflict.rs` (exit 0)
            "410 gone.txt\n",
            "409 conflict.rs\n",
            "  403 forbidden.log\n   12 notes.md\n  415 total\n",
            "401 unauthorized-users.csv\n",
        ],
    );
}

#[test]
fn json_error() {
    check(
        "json_error",
        &[
            r#"{"error": "invalid api key"}"#,
            r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad params"}}"#,
            r#"{"errors": [{"message": "Field 'x' doesn't exist"}], "data": null}"#,
            r#"{"status": "error", "message": "quota"}"#,
            r#"{"ok": false, "reason": "not_in_channel"}"#,
            r#"{"success": false}"#,
            r#"{"content": [{"type": "text", "text": "boom"}], "isError": true}"#,
            r#"{"output": "make: *** [all] Error 2", "metadata": {"exit_code": 2, "duration_seconds": 0.4}}"#,
            r#"{"stdout": "", "stderr": "x", "exit_code": 1}"#,
            r#"{"statusCode": 404, "body": "{}"}"#,
            // Python's `json.dumps` of a float that is no number.
            r#"{"loss": NaN, "best": -Infinity, "next": Infinity, "error": "boom"}"#,
            // Google ADK's `ReflectAndRetryToolPlugin`, as it answers a
            // tool's exception (through LiteLLM, and on Gemini as the
            // function's response).
            r#"{"response_type": "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN", "error_type": "RuntimeError", "error_details": "exit status 1: ", "retry_count": 1, "reflection_guidance": "The call to tool `run_shell` failed."}"#,
            r#"{"error_details":"Tool 'no_such_tool' not found.","error_type":"ValueError","reflection_guidance":"…"}"#,
            r#"{"errorType": "Timeout"}"#,
            // Cline 3's batch tools, one item a file or a command; a batch
            // with one failed item failed.
            r#"[{"query":"/w/missing.txt","result":"","error":"Error reading file: ENOENT: no such file or directory, statx '/w/missing.txt'","success":false}]"#,
            r#"[{"query":"echo first-ok","result":"first-ok\n","success":true},{"query":"ls missing-dir","result":"[Command exited with code 2]\n\n[stderr]\nls: cannot access 'missing-dir': No such file or directory\n","error":"Command exited with code 2","success":false}]"#,
            "[ {'query': 'ls x', 'error': 'exit 2', 'ok': False} ]",
            // Cut at the scan's end after the failed item.
            r#"[{"query":"a","error":"boom","success":false},{"query":"b","res"#,
        ],
        &[
            r#"{"error": null, "result": 3}"#,
            r#"{"error": "", "errors": [], "ok": true}"#,
            r#"{"error": false}"#,
            r#"{"error_type": null, "error_details": "", "rows": 3}"#,
            r#"{"loss": NaN, "error": null}"#,
            r#"{"output": "ok", "metadata": {"exit_code": 0}}"#,
            r#"{"results": [{"title": "How to fix error 500", "status": "error"}]}"#,
            r#"{"status": "cancelled"}"#,
            r#"{"job_id": 7, "status": "failed", "failed": true}"#,
            r#"{"message": "this string has \"error\": true inside", "ok": true}"#,
            r#"{"truncated": "#,
            r#"[{"error": "arrays are not objects"}]"#,
            // Batches whose items all succeeded, or that state no outcome.
            r#"[{"query":"echo e2e-ok","result":"e2e-ok\n","success":true}]"#,
            r#"[{"query":"/w/a.txt","result":"1 | hello","success":true},{"query":"/w/b.txt","result":"1 | x","success":true}]"#,
            // A listing whose items do not all state an outcome is data.
            r#"[{"job":"build","success":false,"error":"timeout"},{"job":"lint","conclusion":"skipped"}]"#,
            r#"[{"job":"build","success":"no","error":"timeout"}]"#,
            // `success: false` unexplained, an empty error, an item not an object.
            r#"[{"query":"a","success":false}]"#,
            r#"[{"query":"a","error":"  ","success":false}]"#,
            r#"[{"query":"a","error":"x","success":false}, 3]"#,
            r#"[{}]"#,
            "[]",
            r#"[{"query":"a","error":"x","success":false"#,
        ],
    );
}

#[test]
fn error_label() {
    check(
        "error_label",
        &[
            "Error: flight HAT030 not available on date 2024-05-13",
            // colour codes inside the line, as a PTY prints them
            "\x1b[1m\x1b[31merror\x1b[0m\x1b[1m: could not compile `app`\x1b[0m",
            "ERROR: relation \"users\" does not exist",
            "Failure: could not reach the build agent",
            "[FAILURE] deploy step 3",
            "error[E0425]: cannot find value `x` in this scope",
            "fatal: not a git repository (or any of the parent directories): .git",
            "ValueError: invalid literal for int() with base 10: 'x'",
            "ToolException: search backend unavailable",
            "Error executing tool search_docs: timeout",
            "MCP error -32602: Invalid arguments for tool read_file",
            "An error occurred while processing your request.",
            "[ERROR] Could not resolve \"js/app.js\"",
            "\u{1b}[31mError:\u{1b}[0m build failed",
            "\"Error: quoted JSON string\"",
            "\"Error:\\n  quoted, its newline escaped\"",
            "PreToolUse:Bash hook error: blocked by lint script",
            "NameError(\"name 'x' is not defined\")",
            // a timeout's report, its value a sentence
            "Timeout: command took longer than 30s",
            "timeout: 30 seconds elapsed waiting for the lock",
        ],
        &[
            "Errors: none",
            "error_handler.py\nerror_view.py",
            "on_error: continue\nretries: 3",
            "error: null\nresult: 42",
            "Error: None",
            "EXAMPLES: see below",
            "The error page now shows a retry button.",
            // Python logging's default records (`grep -E 'ERROR|CRITICAL'
            // app.log` of a real log, exit 0)
            "ERROR:root:db timeout after 30s\nCRITICAL:app.jobs:queue full\n",
            // a timeout's setting (a duration, alone or first in a list:
            // `timeout 5 sh -c 'echo …'` of a config line, exit 0)
            "timeout: 30s, retries: 0, failed: 0\n",
            "Timeout: 5000 ms\nretries: 3\n",
            "timeout: 2.5; backoff: 1.5\n",
        ],
    );
}

#[test]
fn failure_statement() {
    check(
        "failure_statement",
        &[
            "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.",
            "Bash command failed for pattern \"!`git log`\": [stderr]",
            "Build failed with 3 errors",
            "Could not resolve host: api.example.com",
            "Unable to connect to the database",
            "Cannot read file: it is a directory",
            "Command timed out after 2m 0.0s",
            "File content (85812 tokens) exceeds maximum allowed tokens (25000).",
            "Rate limit exceeded, retry in 20s",
            "aborted",
            "Timed out.",
            // the OpenAI Agents SDK's timeout of a function tool
            "Tool 'get_weather' timed out after 5 seconds.",
            "Tool \"search\" failed: upstream closed the connection",
            // not a commit hash: too short, or no digit
            "a1b2c3 tests failed",
            "Decade failed to load",
            // twine 7 check of a wheel whose description has markup errors (1)
            "Checking dist/probe-1.0-py3-none-any.whl: FAILED\nERROR    `long_description` has syntax errors in markup and would not be        \n         rendered on PyPI.                                                      \n         line 4: Error: Unknown directive type \"nothere-directive\".             \n",
            "Checking dist/probe-1.0.tar.gz: FAILED due to warnings\nWARNING  `long_description` missing.\n",
            // OpenCode's answer to arguments that fail the tool's schema
            "The read tool was called with invalid arguments: SchemaError(Expected string, got 42\n  at [\"filePath\"]).\nPlease rewrite the input so it satisfies the expected schema.",
            // Qwen Code's answer to a path that is not absolute
            "File path must be absolute, but was relative: 42. You must provide an absolute path.",
            // `python3 -m json.tool` on a file that is not JSON
            "Expecting value: line 1 column 1 (char 0)\n",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            // pydantic's `ValidationError` (Agno's answer to arguments of
            // the wrong type)
            "1 validation error for read_file\npath\n  Input should be a valid string [type=string_type, input_value=42, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
            "2 validation errors for Weather[int]\ncity\n  Field required [type=missing, input_value={}, input_type=dict]",
        ],
        &[
            "12 failed, 3 passed",
            "I cannot find that symbol in the codebase; here is what I found instead.",
            "We couldn't reproduce it locally, but the fix is in.",
            "Summary: nothing failed",
            "No tests failed",
            "Nothing failed",
            // `git log --oneline` (exit 0): the subject may say anything
            "bff5210 tests failed on CI: retry flaky ones\nbbc6eff fix: tests failed on CI\na15bd80 initial\n",
            "ddfb3ea build failed on arm64, pin gcc\na15bd80 initial\n",
            "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567 deploy could not reach the host",
            // twine check passing, with warnings (0)
            "Checking dist/probe-1.0-py3-none-any.whl: PASSED with warnings\nWARNING  `long_description_content_type` missing. defaulting to `text/x-rst`.   \nWARNING  `long_description` missing.                                            \n",
            "Checking dist/probe-1.0-py3-none-any.whl: PASSED\n",
            "Checking links: failed ones are listed in links.txt (0)\n",
            "Returns 400 when the endpoint was called with invalid arguments.",
            "Expecting value: line 1 column 1 (char 0) means the body was empty.",
            "Use an absolute path: the path must be absolute",
            "Found 3 validation errors for the schema in docs/api.md",
        ],
    );
}

/// A Python exception's message alone, as a framework that answers with
/// `str(exception)` reports a tool's crash (LlamaIndex's agents).
/// A JavaScript exception's message alone, as V8 words it: the Continue
/// CLI answers a tool that threw with `error.message`.
#[test]
fn a_javascript_exception_message_alone() {
    check(
        "failure_statement",
        &[
            "t.startsWith is not a function",
            "args.files.map is not a function",
            "(intermediate value).then is not a function",
            "fetchJson(...).then is not a function",
            "Client is not a constructor",
            "entries is not iterable",
            "config is not defined",
            "Cannot read properties of undefined (reading 'length')",
            "Cannot set properties of null (setting 'value')",
            "Cannot read property 'x' of undefined",
            "Cannot destructure property 'path' of 'args' as it is undefined.",
            "Assignment to constant variable.",
            "Maximum call stack size exceeded",
            "Unexpected end of JSON input",
            "Unexpected token } in JSON at position 14",
            "Unexpected token 'o', \"not json\" is not valid JSON",
            "Invalid array length",
        ],
        &[
            "The parser is not a function of the input alone.",
            // a line of a longer output
            "entries is not iterable\nin the old parser; fixed since 2.1",
            "This value is not defined in the spec",
            "Note: Cannot read properties of undefined (reading 'x') was fixed in 2.1",
            "is not a function",
        ],
    );
}

#[test]
fn a_python_exception_message_alone() {
    check(
        "failure_statement",
        &[
            "'NoneType' object has no attribute 'value'",
            "module 'os' has no attribute 'getcwdu'\n",
            "type object 'Path' has no attribute 'exist'",
            "unsupported operand type(s) for /: 'PosixPath' and 'int'",
            "'int' object is not subscriptable",
            "'NoneType' object is not iterable",
            "'str' object does not support item assignment",
            "read_file() takes 1 positional argument but 2 were given",
            "read_file() missing 1 required positional argument: 'path'",
            "edit_file() got an unexpected keyword argument 'text'",
            "can only concatenate str (not \"int\") to str",
            "'<' not supported between instances of 'str' and 'int'",
            "object of type 'NoneType' has no len()",
            "argument of type 'int' is not iterable",
            "string indices must be integers, not 'str'",
            "expected str, bytes or os.PathLike object, not int",
            "name 'config' is not defined",
            "division by zero",
            "float division by zero",
            "integer modulo by zero",
            "invalid literal for int() with base 10: 'abc'",
            "list index out of range",
            "pop from empty list",
            "No module named 'yaml'",
        ],
        &[
            // a line of a longer output, or a sentence around the words
            "list index out of range\nat line 3 of the report",
            "Fixed: 'NoneType' object has no attribute 'value' in the parser",
            "The tests check that division by zero raises.",
            "name 'config' is not defined in this scope, see the docs",
            "object has no attribute",
            "index out of range",
        ],
    );
}

#[test]
fn a_looked_up_state_is_not_a_failure() {
    let d = Detector::default();
    // `gh run view --json conclusion --jq .conclusion` of a failed run
    // (the lookup worked), Jenkins' build result, a commit status.
    for state in [
        "failure",
        "failure\n",
        "FAILURE",
        "{\"status\":\"failure\"}",
        "{\"state\": \"failure\", \"context\": \"ci/build\"}",
        "{\"status\": \"completed\", \"conclusion\": \"failure\"}",
    ] {
        assert_eq!(d.explain(state), None, "{state:?}");
    }
    // A harness's own one-word answers still are (the Codex CLI's
    // `aborted` for a call the user interrupted), and an envelope's status.
    assert_eq!(d.explain("aborted"), Some("failure_statement"));
    assert_eq!(d.explain("failed"), Some("failure_statement"));
    assert_eq!(
        d.explain("{\"status\": \"error\", \"message\": \"quota\"}"),
        Some("json_error")
    );
}

/// rustfmt's check report (`cargo fmt --check`, rustfmt 1.9 here, status
/// 1): `Diff in <path>:<line>:` above the diff. The words without a
/// location or a diff below are not one.
#[test]
fn rustfmt_check_diffs() {
    let d = Detector::default();
    for text in [
        "Diff in /tmp/probe/src/main.rs:1:\n-fn main() { let x=1;\n-    println!(\"{}\",x); }\n+fn main() {\n+    let x = 1;\n+    println!(\"{}\", x);\n+}\n \n",
        "Diff in /src/main.rs at line 1:\n-fn main() { let x=1;\n+fn main() {\n",
    ] {
        assert_eq!(d.explain(text), Some("error_label"), "{text:?}");
    }
    for text in [
        "Diff in behaviour between the two runs:\n- none\n",
        "Diff in /src/main.rs:1:\nno changes\n",
        "Diff in /src/main.rs:\n-a\n",
        "fmt: 0 files changed\n",
    ] {
        assert_eq!(d.explain(text), None, "{text:?}");
    }
}

/// A shell refusing its script (bash 5.2 and dash 0.5.12 here, status 2):
/// the whole output is the shell's complaint, its line quoted below it.
/// A commit subject about a syntax error is not one.
#[test]
fn a_shells_syntax_error() {
    let d = Detector::default();
    for text in [
        "a.sh: line 4: syntax error near unexpected token `fi'\na.sh: line 4: `fi fi'\n",
        "bash: -c: line 1: syntax error near unexpected token `x'\nbash: -c: line 1: `echo ( x'\n",
        "bash: -c: line 2: syntax error: unexpected end of file\n",
        "bash: -c: line 1: unexpected EOF while looking for matching `''\n",
        "sh: 1: Syntax error: word unexpected (expecting \")\")\n",
        "sh: 1: Syntax error: end of file unexpected (expecting \"fi\")\n",
    ] {
        assert_eq!(d.explain(text), Some("shell_diagnostic"), "{text:?}");
    }
    for text in [
        "fix: syntax error in parser\n",
        "docs: explain the syntax error near the parser's entry\n",
        "yes\na.sh: line 4: syntax error near unexpected token `fi'\na.sh: line 4: `fi fi'\nmore\nand more\n",
    ] {
        assert_ne!(d.explain(text), Some("shell_diagnostic"), "{text:?}");
    }
}

/// ESLint's report of its own fatal error (eslint 9.39 here, status 2):
/// a configuration it cannot read, a plugin it cannot import, no
/// configuration file. The sentence without ESLint's version line below
/// is someone else's.
#[test]
fn eslints_own_crash() {
    let d = Detector::default();
    for text in [
        "\nOops! Something went wrong! :(\n\nESLint: 9.39.5\n\nConfiguration for rule \"no-unused-vars\" is invalid. Expected severity of \"off\", 0, \"warn\", 1, \"error\", or 2.\n\nYou passed '\"eror\"'.\n\nSee https://eslint.org/docs/latest/use/configure/rules#using-configuration-files for configuring rules.\n\n",
        "\nOops! Something went wrong! :(\n\nESLint: 9.39.5\n\nESLint couldn't find an eslint.config.(js|mjs|cjs) file.\n\nFrom ESLint v9.0.0, the default configuration file is now eslint.config.js.\nIf you are using a .eslintrc.* file, please follow the migration guide\nto update your configuration file to the new format:\n\nhttps://eslint.org/docs/latest/use/configure/migration-guide\n\nIf you still have problems after following the migration guide, please stop by\nhttps://eslint.org/chat/help to chat with the team.\n\n",
        "\nOops! Something went wrong! :(\n\nESLint: 9.39.5\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'eslint-plugin-no-such-thing' imported from /tmp/probe/eslint.config.mjs\n    at packageResolve (node:internal/modules/esm/resolve:873:9)\n",
    ] {
        assert_eq!(d.explain(text), Some("crash_trace"), "{text:?}");
    }
    for text in [
        "Oops! Something went wrong! :(\nPlease try again later.\n",
        "Oops! Something went wrong! :( ESLint: 9\n",
        "ESLint: 9.39.5\n",
    ] {
        assert_eq!(d.explain(text), None, "{text:?}");
    }
}

/// A row of a table whose first field is a looked-up state: `sqlite3 db
/// "SELECT status, message FROM jobs WHERE status = 'failed';"` (sqlite3
/// 3.40 here, list mode, exit 0), tab-separated output. Its words open
/// like a statement but the `|` or tab after them ends a field.
#[test]
fn a_table_row_is_not_a_statement() {
    let d = Detector::default();
    for row in [
        "failed|Error: connection refused\n",
        "failed|Error: connection refused\nfailed|timeout\n",
        "failed\t3\nok\t40\n",
        "job 12 failed|retried\n",
        "timed out|2\n",
    ] {
        assert_eq!(d.explain(row), None, "{row:?}");
    }
    // A statement that goes on after its words still is one, a `|` later
    // in it too.
    for statement in [
        "failed",
        "Build failed: cat x | grep y",
        "Command timed out after 2m",
        "Unable to connect | retrying",
    ] {
        assert_eq!(
            d.explain(statement),
            Some("failure_statement"),
            "{statement:?}"
        );
    }
}

#[test]
fn a_failure_envelope_is_a_failure() {
    let d = Detector::default();
    // A result envelope: a `failure` status and its explanation, no data.
    for envelope in [
        r#"{"status": "failure", "message": "Deployment failed: image not found"}"#,
        r#"{"status":"failure","reason":"quota exceeded","code":429}"#,
        r#"{"message": "no such branch: dev", "status": "FAILURE"}"#,
        r#"{"result": "failure", "reason": "timeout"}"#,
    ] {
        assert_eq!(d.explain(envelope), Some("json_error"), "{envelope:?}");
    }
    // A looked-up state: the status alone, without an explanation, or
    // beside the entity's own fields.
    for state in [
        r#"{"status": "failure"}"#,
        r#"{"status": "failure", "message": ""}"#,
        r#"{"status": "failure", "message": "  "}"#,
        r#"{"status": "failure", "message": null}"#,
        r#"{"status": "failure", "message": "Build #12", "url": "https://ci.example/12"}"#,
        r#"{"id": 12, "status": "failure", "reason": "tests"}"#,
        r#"{"state": "failure", "description": "Build failed", "context": "ci/build"}"#,
        r#"{"runs": [{"status": "failure", "message": "x"}]}"#,
        r#"{"metadata": {"status": "failure", "message": "x"}, "ok": true}"#,
    ] {
        assert_eq!(d.explain(state), None, "{state:?}");
    }
}

#[test]
fn every_rule_has_a_test_name() {
    assert_eq!(Detector::rule_names(), RULE_NAMES);
    assert_eq!(RULE_NAMES.len(), 13);
}

#[test]
fn naive_baseline() {
    let d = Detector::naive();
    assert_eq!(d.explain("Error: payment method not found"), Some("naive"));
    assert_eq!(d.explain("I cannot find it"), Some("naive"));
    assert!(!d.is_failure("Exit code 1\nCompiling 4 files"));
    let late = format!("{}error: late", "x".repeat(100));
    assert!(!d.is_failure(&late));
}

#[test]
fn config_adds_a_pattern() {
    let cfg = DetectorConfig {
        extra_patterns: vec![r"^quota: \d+ remaining: 0\b".into(), "deadlock".into()],
        disable: vec![],
    };
    let d = Detector::new(&cfg).expect("valid config");
    assert_eq!(d.explain("QUOTA: 10 remaining: 0"), Some("extra[0]"));
    assert_eq!(
        d.explain("transaction aborted: deadlock detected"),
        Some("extra[1]")
    );
    assert_eq!(d.explain("quota: 10 remaining: 5"), None);
    // Built-in rules still run first.
    assert_eq!(d.explain("Exit code 1\ndeadlock"), Some("exit_status"));
}

#[test]
fn config_disables_a_rule() {
    let cfg = DetectorConfig {
        extra_patterns: vec![],
        disable: vec!["exit_status".into(), "error_label".into()],
    };
    let d = Detector::new(&cfg).expect("valid config");
    assert_eq!(d.explain("Exit code 1\nboom"), None);
    assert_eq!(d.explain("Error: boom"), None);
    assert_eq!(
        d.explain("<tool_use_error>x</tool_use_error>"),
        Some("error_tag")
    );
}

#[test]
fn config_errors_are_clear() {
    let bad = DetectorConfig {
        extra_patterns: vec!["ok".into(), "(unclosed".into()],
        disable: vec![],
    };
    let e = Detector::new(&bad).expect_err("bad regex");
    assert_eq!(e.kind(), DetectErrorKind::BadPattern);
    assert!(e.to_string().contains("extra_patterns[1]"), "{e}");
    assert!(e.to_string().contains("(unclosed"), "{e}");

    for every in ["", "x*", "error|", ".*", "(?:)"] {
        let config = DetectorConfig {
            extra_patterns: vec!["^quota: 0".into(), every.into()],
            disable: vec![],
        };
        let e = Detector::new(&config).expect_err(every);
        assert_eq!(e.kind(), DetectErrorKind::BadPattern);
        assert!(e.to_string().contains("extra_patterns[1]"), "{e}");
        assert!(e.to_string().contains("matches every text"), "{e}");
    }
    // Empty or near-empty results only: not every text.
    for some in ["^$", "^.{0,3}$"] {
        let config = DetectorConfig {
            extra_patterns: vec![some.into()],
            disable: vec![],
        };
        assert!(Detector::new(&config).is_ok(), "{some}");
    }

    let unknown = DetectorConfig {
        extra_patterns: vec![],
        disable: vec!["no_such_rule".into()],
    };
    let e = Detector::new(&unknown).expect_err("unknown rule");
    assert_eq!(e.kind(), DetectErrorKind::UnknownRule);
    assert!(e.to_string().contains("no_such_rule"), "{e}");
    assert!(e.to_string().contains("exit_status"), "{e}");
}

#[test]
fn config_deserializes() {
    let cfg: DetectorConfig =
        serde_json::from_str(r#"{"disable": ["os_error"]}"#).expect("valid json");
    assert_eq!(cfg.disable, vec!["os_error".to_owned()]);
    assert!(cfg.extra_patterns.is_empty());
}

#[test]
fn corpus_meets_the_thresholds() {
    let Some(bytes) = crate::testutil::corpus("tool_results.jsonl") else {
        return;
    };
    let report = evaluate(&bytes, &Detector::default()).expect("corpus parses");
    println!("{report}");
    assert_eq!(report.overall.rows, 2300);
    let anthropic = report.provider("anthropic").expect("anthropic rows");
    for s in [&report.overall, anthropic] {
        let (p, r) = (s.precision.unwrap_or(0.0), s.recall.unwrap_or(0.0));
        assert!(p >= 0.95 && r >= 0.85, "{}: P {p:.3} R {r:.3}", s.group);
    }
    // The baseline is measured on the same rows, and is worse.
    let naive = evaluate(&bytes, &Detector::naive()).expect("corpus parses");
    assert!(naive.overall.f1 < report.overall.f1);
}

#[test]
fn eval_counts_and_groups() {
    let jsonl = br#"{"source": "github:a/b@1:x", "provider": "openai", "content": "Error: x", "is_error": true}
{"source": "github:a/b@2:y", "provider": "openai", "content": "fine", "is_error": true}

{"source": "github:c/d@1:x", "provider": "anthropic", "content": "Exit code 1", "is_error": false, "extra": 1}
{"source": "github:c/d@1:x", "provider": "anthropic", "content": "ok", "is_error": false}
"#;
    let r = evaluate(jsonl, &Detector::default()).expect("valid");
    assert_eq!(
        (r.overall.tp, r.overall.fp, r.overall.fn_, r.overall.tn),
        (1, 1, 1, 1)
    );
    assert_eq!(r.overall.precision, Some(0.5));
    assert_eq!(r.by_source.len(), 2);
    assert_eq!(r.by_source[0].group, "github:a/b");
    assert_eq!(r.by_source[1].recall, None);
    assert_eq!(r.mistakes.len(), 2);
    assert_eq!(r.mistakes[1].line, 4);
    assert_eq!(r.mistakes[1].rule.as_deref(), Some("exit_status"));
    let table = r.to_string();
    assert!(table.contains("github:c/d"), "{table}");
    let json = serde_json::to_value(&r).expect("serializes");
    assert_eq!(json["overall"]["fn"], 1);
}

#[test]
fn eval_names_the_bad_line() {
    let jsonl = b"{\"source\": \"s\", \"provider\": \"p\", \"content\": \"c\", \"is_error\": false}\n{\"source\": \"s\"}\n";
    match evaluate(jsonl, &Detector::default()) {
        Err(EvalError::BadLine { line, .. }) => assert_eq!(line, 2),
        other => panic!("expected a bad line error, got {other:?}"),
    }
    let e = evaluate(b"not json\n", &Detector::default()).expect_err("bad");
    assert!(e.to_string().starts_with("line 1:"), "{e}");
    assert!(matches!(
        evaluate(b"\n\n", &Detector::default()),
        Err(EvalError::Empty)
    ));
}

proptest! {
    /// rustfmt's `Diff in <path>:<line>:` (or `at line N`) above any diff
    /// lines is a failure; the same line above a line that is no diff's
    /// is not `error_label`'s.
    #[test]
    fn a_rustfmt_diff_at_the_start(
        path in "/[a-z]{1,8}(/[a-z_]{1,8}){0,3}\\.rs",
        line in 1..5000u32,
        old_form in any::<bool>(),
        diff in proptest::collection::vec("[-+ ][a-z (){};=\"]{0,30}", 1..20),
        other in "[a-zA-Z][a-z ]{0,20}",
    ) {
        let d = Detector::default();
        let location = if old_form { format!("{path} at line {line}") } else { format!("{path}:{line}") };
        let text = format!("Diff in {location}:\n{}\n", diff.join("\n"));
        prop_assert_eq!(d.explain(&text), Some("error_label"), "{:?}", text);
        let not_a_diff = format!("Diff in {location}:\n{other}\n");
        prop_assert_ne!(d.explain(&not_a_diff), Some("error_label"), "{:?}", not_a_diff);
    }
}

proptest! {
    /// bash's syntax error with its quoted line, from any script or `-c`
    /// at any line and token, is the shell's complaint; below a line of
    /// the script's own output (the commands before it ran) it is not
    /// `shell_diagnostic`'s.
    #[test]
    fn a_shells_syntax_error_alone(
        script in prop_oneof![Just("bash: -c".to_owned()), "[a-z]{1,8}\\.sh", "/tmp/[a-z]{1,8}\\.sh"],
        line in 1..500u32,
        token in "[a-z()|;&]{1,4}",
        code in "[a-z ()|;&]{1,30}",
        before in "[A-Za-z][a-z ]{0,20}",
    ) {
        let d = Detector::default();
        let text = format!("{script}: line {line}: syntax error near unexpected token `{token}'\n{script}: line {line}: `{code}'\n");
        prop_assert_eq!(d.explain(&text), Some("shell_diagnostic"), "{:?}", text);
        let below = format!("{before}\n{text}");
        prop_assert_ne!(d.explain(&below), Some("shell_diagnostic"), "{:?}", below);
    }
}

proptest! {
    /// A table row (fields split by `|` or a tab) whose first field is a
    /// statement's words is not a statement, whatever the other fields
    /// hold; the same words followed by a space and the same text are.
    /// Ruby's report of an unrescued exception opening the output (above
    /// the output it buffered) is a failure whatever follows it; the same
    /// line without the exception's class is not `error_label`'s.
    #[test]
    fn a_ruby_exception_at_the_start(
        path in "[a-z][a-z0-9_/]{0,20}\\.rb",
        n in 1..9999u32,
        method in prop_oneof![Just("`<main>'".to_owned()), "`[a-z_]{1,12}'", "'Object#[a-z_]{1,12}'"],
        message in "[a-zA-Z0-9][a-zA-Z0-9 ,.:`'-]{0,60}",
        class in "[A-Z][a-zA-Z]{0,15}(::[A-Z][a-zA-Z]{0,10})?",
        below in proptest::collection::vec("[a-zA-Z0-9 .,:/_\\t-]{0,60}", 0..5),
    ) {
        let d = Detector::default();
        let text = format!("{path}:{n}:in {method}: {message} ({class})\n{}\n", below.join("\n"));
        prop_assert_eq!(d.explain(&text), Some("error_label"), "{:?}", text);
        let plain = format!("{path}:{n}:in {method}: {message}\n{}\n", below.join("\n"));
        prop_assert_ne!(d.explain(&plain), Some("error_label"), "{:?}", plain);
    }

    /// A tool's own error opening the output is a failure whatever follows
    /// it; the tool's name without `error:` (or sed's and mawk's
    /// locations) is not `error_label`'s.
    #[test]
    fn a_tools_own_error_at_the_start(
        tool in prop_oneof![
            Just("psql"), Just("pg_dump"), Just("pg_restore"), Just("createdb"),
            Just("/usr/bin/sed"), Just("sed"), Just("awk"), Just("CMake"),
        ],
        n in 1..999u32,
        message in "[a-zA-Z0-9][a-zA-Z0-9 ,.`'\"]{0,59}",
        below in proptest::collection::vec("[a-zA-Z0-9 .,:/_\t-]{0,60}", 0..5),
    ) {
        let opening = match tool {
            "CMake" if n % 2 == 0 => format!("CMake Error at CMakeLists.txt:{n} (add_x):"),
            "CMake" => format!("CMake Error: {message}"),
            "awk" => format!("awk: line {n}: {message}"),
            t if t.ends_with("sed") && n % 2 == 0 => format!("{t}: -e expression #1, char {n}: {message}"),
            t if t.ends_with("sed") => format!("{t}: file a.sed line {n}: {message}"),
            t => format!("{t}: error: {message}"),
        };
        // `CMake Error: 0`, `psql: error: none`: a key with an empty value
        // (`null_value`), not a label.
        let value = message.trim_matches(|c: char| " \t\"',".contains(c)).to_ascii_lowercase();
        prop_assume!(!matches!(value.as_str(), "null" | "none" | "nil" | "0" | "false"));
        let d = Detector::default();
        let text = format!("{opening}\n{}\n", below.join("\n"));
        prop_assert_eq!(d.explain(&text), Some("error_label"), "{:?}", text);
        let plain = format!("{tool}: {message}\n{}\n", below.join("\n"));
        prop_assert_ne!(d.explain(&plain), Some("error_label"), "{:?}", plain);
    }

    /// markdownlint's findings opening the output are a failure when the
    /// first is an error, for any file, location, rule and description;
    /// a warning first is not `error_label`'s.
    #[test]
    fn markdownlints_findings(
        file in "[a-z][a-z0-9_/-]{0,20}\\.md",
        row in 1..999u32,
        column in proptest::option::of(1..120u32),
        rule in (1..60u32, "[a-z][a-z-]{2,30}"),
        description in "[A-Za-z][A-Za-z0-9 ,.;:\\[\\]\"#-]{0,80}",
        error in any::<bool>(),
    ) {
        let column = column.map(|c| format!(":{c}")).unwrap_or_default();
        let level = if error { "error" } else { "warning" };
        let text = format!("{file}:{row}{column} {level} MD{:03}/{} {description}\n", rule.0, rule.1);
        let d = Detector::default();
        if error {
            prop_assert_eq!(d.explain(&text), Some("error_label"), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(&text), Some("error_label"), "{:?}", text);
        }
    }

    /// OCaml's, escript's and rollup's reports below any output are a
    /// failure with any exception, message and frames; escript's and
    /// rollup's frames without their header, OCaml's words in a sentence,
    /// are not `crash_trace`'s.
    #[test]
    fn more_reports_below_output(
        lines in proptest::collection::vec("[a-z0-9 .,/_-]{0,60}", 0..10),
        runtime in 0..3usize,
        exception in "[A-Z][a-z_]{0,15}",
        message in "[a-z][a-z0-9 ._-]{0,40}",
        frames in proptest::collection::vec("[a-z][a-z0-9_:/.]{0,30}", 1..8),
        header in any::<bool>(),
    ) {
        let above = format!("running\n{}", lines.join("\n"));
        let report = match runtime {
            0 if header => format!("Exception: {exception} \"{message}\".\n"),
            0 => format!("Exception: {message}.\n"),
            1 => {
                let head = if header { format!("escript: exception error: {message}\n") } else { String::new() };
                let body: String = frames.iter().map(|f| format!("  in call from {f}/1 \n")).collect();
                format!("{head}  in function  {exception}:f/2 (a.erl, line 3)\n{body}")
            }
            _ => {
                let head = if header { format!("[!] RollupError: {message}\nsrc/a.js\n") } else { String::new() };
                let body: String = frames.iter().map(|f| format!("    at {f} (/n/rollup.js:1:2)\n")).collect();
                format!("{head}{body}\n\n")
            }
        };
        let text = format!("{above}\n{report}");
        let d = Detector::default();
        if header {
            prop_assert_eq!(d.explain(&text), Some("crash_trace"), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(&text), Some("crash_trace"), "{:?}", text);
        }
    }

    /// An uncaught exception's report (the JVM's, Lua's, Ruby's, PHP's)
    /// below any output is a failure with any frames; without its header (a trace a program printed itself)
    /// it is not `crash_trace`'s.
    #[test]
    fn an_uncaught_exception_below_output(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        runtime in 0..4usize,
        frames in proptest::collection::vec("[a-zA-Z][a-zA-Z0-9_.$/]{0,30}", 1..12),
        n in 1..999u32,
        header in any::<bool>(),
    ) {
        let above = lines.join("\n");
        let (head, trace) = match runtime {
            0 => (
                "Exception in thread \"main\" java.lang.IllegalStateException: x".to_owned(),
                frames.iter().map(|f| format!("\tat {f}(A.java:{n})")).chain([format!("\t... {n} more")]).collect::<Vec<_>>().join("\n"),
            ),
            1 => (
                format!("lua5.4: a.lua:{n}: attempt to index a nil value"),
                ["stack traceback:".to_owned()].into_iter().chain(frames.iter().map(|f| format!("\t{f}:{n}: in main chunk"))).chain(["\t[C]: in ?".to_owned()]).collect::<Vec<_>>().join("\n"),
            ),
            3 => (
                format!("a.rb:{n}:in `run': undefined method `x' for nil (NoMethodError)"),
                ["".to_owned(), "  x(1)".to_owned(), "  ^".to_owned()].into_iter().chain(frames.iter().map(|f| format!("\tfrom {f}.rb:{n}:in `<main>'"))).collect::<Vec<_>>().join("\n"),
            ),
            _ => (
                "PHP Fatal error:  Uncaught Exception: x in /a.php:3".to_owned(),
                ["Stack trace:".to_owned()].into_iter().chain(frames.iter().enumerate().map(|(i, f)| format!("#{i} /a.php({n}): {f}()"))).chain([format!("  thrown in /a.php on line {n}")]).collect::<Vec<_>>().join("\n"),
            ),
        };
        let d = Detector::default();
        if header {
            let text = format!("{above}\n{head}\n{trace}\n");
            prop_assert!(d.is_failure(&text), "{:?}", text);
        } else {
            // (below a line of output: `Stack trace:` opening the output is
            // the first-line rule's)
            let text = format!("{above}\nprinted by the program\n{trace}\n");
            prop_assert_ne!(d.explain(&text), Some("crash_trace"), "{:?}", text);
        }
    }

    #[test]
    fn a_first_field_is_not_a_statement(
        words in prop_oneof![
            Just("failed"),
            Just("build failed"),
            Just("cannot"),
            Just("timed out"),
            Just("could not"),
        ],
        sep in prop_oneof![Just('|'), Just('\t')],
        rest in "[a-z][a-z :.]{0,40}",
        rows in proptest::collection::vec("[a-z0-9]{1,10}[|\t][a-z0-9 ]{0,20}", 0..5),
    ) {
        let d = Detector::default();
        let text = format!("{words}{sep}{rest}\n{}", rows.join("\n"));
        prop_assert_ne!(d.explain(&text), Some("failure_statement"), "{:?}", text);
        let statement = format!("{words} {rest}");
        prop_assert_eq!(d.explain(&statement), Some("failure_statement"), "{:?}", statement);
    }
}

proptest! {
    #[test]
    fn no_input_panics(s in "\\PC{0,300}") {
        let _ = Detector::default().explain(&s);
        let _ = Detector::naive().explain(&s);
    }

    #[test]
    fn no_structured_input_panics(
        prefix in prop::sample::select(vec![
            "{", "{\"error\":", "{\"metadata\": {", "Exit code ", "<", "\u{1b}[", "\"", "[",
        ]),
        rest in "[\\x00-\\x7f\\u{80}-\\u{10ffff}]{0,200}",
    ) {
        let s = format!("{prefix}{rest}");
        let _ = Detector::default().explain(&s);
    }

    #[test]
    fn no_jsonl_panics(s in "\\PC{0,300}") {
        let _ = evaluate(s.as_bytes(), &Detector::default());
    }
}

#[test]
fn crash_at_the_end() {
    check(
        "crash_trace",
        &[
            "working...\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nZeroDivisionError: division by zero\n",
            "[eval]:1\nnull.x\n     ^\n\nTypeError: Cannot read properties of null\n    at [eval]:1:6\n\nNode.js v20.20.2\n",
            "running 3 tests\ntest a ... ok\n\nthread 'main' panicked at src/main.rs:4:5:\nboom\nnote: run with `RUST_BACKTRACE=1`",
            // Rust 1.91 on names the thread's id (rust-lang/rust#115746):
            // `cargo run -q` of rustc 1.95 here (status 101), without and
            // with RUST_BACKTRACE=1 (its frames cut to two).
            "\nthread 'main' (29953) panicked at src/main.rs:3:21:\nindex out of bounds: the len is 0 but the index is 0\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
            "\nthread 'main' (29402) panicked at src/main.rs:3:21:\nindex out of bounds: the len is 0 but the index is 0\nstack backtrace:\n   0: __rustc::rust_begin_unwind\n             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5\n   6: app::main\n             at ./src/main.rs:3:21\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n",
            "thread '<unnamed>' (12345) panicked at src/main.rs:3:5:\nexplicit panic",
            // python3.11 s.py, python3 -c 'x = (' and python3 i.py of
            // sources it cannot compile (status 1): no traceback header.
            "  File \"/tmp/probe/s.py\", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n",
            "  File \"<string>\", line 1\n    x = (\n        ^\nSyntaxError: '(' was never closed\n",
            "  File \"/tmp/s50d/i.py\", line 3\n    print(2)\nIndentationError: unexpected indent\n",
        ],
        &[
            // Not below Python's File line: a sentence, a lint's line.
            "The parser reports:\nSyntaxError: invalid syntax is raised for bad input\n",
            "  File \"s.py\", line one\n    x\nSyntaxError: invalid syntax\n",
            "main.rs:3: a thread named main may have panicked at startup\nnote: see the log",
            "     1→Traceback (most recent call last):\n     2→ValueError: x",
            "Traceback (most recent call last) is how Python starts a report.\nSee docs.",
        ],
    );
}

/// Uncaught exceptions below what the program printed (`trace.rs`), as
/// the runtimes print them here (OpenJDK 17's source-file mode, Lua 5.4,
/// PHP 8.2; status in the comment).
#[test]
fn uncaught_exceptions_at_the_end() {
    check(
        "crash_trace",
        &[
            // java A.java (1)
            "loading config\nException in thread \"main\" java.lang.IllegalArgumentException: unknown mode: fast\n\tat A.main(A.java:4)\n",
            // java B.java: a cause, the launcher's frames (1)
            "starting\nException in thread \"main\" java.lang.IllegalStateException: bad config\n\tat B.load(B.java:2)\n\tat B.main(B.java:3)\nCaused by: java.lang.NumberFormatException: For input string: \"x\"\n\tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)\n\tat java.base/java.lang.Integer.parseInt(Integer.java:668)\n\tat java.base/java.lang.Integer.parseInt(Integer.java:786)\n\tat B.load(B.java:2)\n\tat B.main(B.java:3)\n\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:77)\n\tat java.base/jdk.internal.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:43)\n\tat java.base/java.lang.reflect.Method.invoke(Method.java:569)\n\tat jdk.compiler/com.sun.tools.javac.launcher.Main.execute(Main.java:419)\n\tat jdk.compiler/com.sun.tools.javac.launcher.Main.run(Main.java:192)\n\tat jdk.compiler/com.sun.tools.javac.launcher.Main.main(Main.java:132)\n",
            // lua5.4 a.lua: a runtime error below output; error("bad input") (1)
            "loading\nlua5.4: a.lua:2: attempt to call a nil value (global 'helper')\nstack traceback:\n\ta.lua:2: in main chunk\n\t[C]: in ?\n",
            "checking\nlua5.4: c.lua:1: bad input\nstack traceback:\n\t[C]: in function 'error'\n\tc.lua:1: in main chunk\n\t[C]: in ?\n",
            // lua5.4 a.lua of a source it cannot compile (1)
            "lua5.4: a.lua:3: 'end' expected (to close 'function' at line 1) near <eof>\n",
            // ruby 3.1 with $stdout.sync: a NoMethodError's line, excerpt and
            // frame below the output; a raise in <main> as the last line (1)
            "loading\ns.rb:4:in `run': undefined method `helper' for main:Object (NoMethodError)\n\n  helper(1)\n  ^^^^^^\n\tfrom s.rb:6:in `<main>'\n",
            "loading\n-e:1:in `<main>': unknown mode: fast (ArgumentError)\n",
            // php a.php: an exception below output; a TypeError (255)
            "loading\nPHP Fatal error:  Uncaught InvalidArgumentException: unknown mode: fast in /tmp/probe/a.php:3\nStack trace:\n#0 {main}\n  thrown in /tmp/probe/a.php on line 3\n",
            "starting\nPHP Fatal error:  Uncaught TypeError: f(): Argument #1 ($x) must be of type int, string given, called in /tmp/probe/d.php on line 3 and defined in /tmp/probe/d.php:2\nStack trace:\n#0 /tmp/probe/d.php(3): f()\n#1 {main}\n  thrown in /tmp/probe/d.php on line 2\n",
            // ocaml a.ml (OCaml 4.13's toplevel, 2); a compiled program (2)
            "loading\nException: Failure \"config missing\".\n",
            "loading\nFatal error: exception Failure(\"config missing\")\n",
            // escript a.erl (Erlang/OTP 25, 127)
            "loading\nescript: exception error: no match of right hand side value 2\n  in function  erl_eval:expr/6 (erl_eval.erl, line 496)\n  in call from erl_eval:local_func/8 (erl_eval.erl, line 644)\n  in call from escript:interpret/4 (escript.erl, line 780)\n  in call from escript:start/1 (escript.erl, line 277)\n  in call from init:start_em/1 \n  in call from init:do_boot/3 \n",
            // rollup 4.68 of a missing import (1)
            "\na.js → out.js...\n[!] RollupError: Could not resolve \"./nothere.js\" from \"a.js\"\na.js\n    at getRollupError (/tmp/js55/node_modules/rollup/dist/shared/parseAst.js:326:41)\n    at Object.error (/tmp/js55/node_modules/rollup/dist/shared/parseAst.js:322:42)\n    at ModuleLoader.handleInvalidResolvedId (/tmp/js55/node_modules/rollup/dist/shared/rollup.js:24937:36)\n    at /tmp/js55/node_modules/rollup/dist/shared/rollup.js:24897:26\n\n\n",
            // alembic 1.20 upgrade head, SQLAlchemy 2.1 (1): the chained
            // traceback's last part
            "INFO  [alembic.runtime.migration] Running upgrade  -> 0001, fill jobs\nTraceback (most recent call last):\n  File \"/tmp/v55/lib/python3.11/site-packages/sqlalchemy/engine/base.py\", line 2351, in _handle_dbapi_exception\n    raise sqlalchemy_exception.with_traceback(exc_info[2]) from e\n  File \"/tmp/v55/lib/python3.11/site-packages/sqlalchemy/engine/base.py\", line 1977, in _exec_single_context\n    self.dialect.do_execute(\n  File \"/tmp/v55/lib/python3.11/site-packages/sqlalchemy/engine/default.py\", line 1192, in do_execute\n    cursor.execute(statement, parameters)\nsqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: no_such_table\n[SQL: INSERT INTO no_such_table VALUES (1)]\n(Background on this error at: https://sqlalche.me/e/21/e3q8)\n",
            // the same through tail -20, which cut the traceback's header
            "    raise sqlalchemy_exception.with_traceback(exc_info[2]) from e\n  File \"/tmp/v55/lib/python3.11/site-packages/sqlalchemy/engine/base.py\", line 1977, in _exec_single_context\n    self.dialect.do_execute(\n  File \"/tmp/v55/lib/python3.11/site-packages/sqlalchemy/engine/default.py\", line 1192, in do_execute\n    cursor.execute(statement, parameters)\nsqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: no_such_table\n[SQL: INSERT INTO no_such_table VALUES (1)]\n(Background on this error at: https://sqlalche.me/e/21/e3q8)\n\n",
        ],
        &[
            // java D.java: a trace the program printed itself and went on (0)
            "retrying after:\njava.lang.NumberFormatException: For input string: \"x\"\n\tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)\n\tat java.base/java.lang.Integer.parseInt(Integer.java:668)\n\tat D.main(D.java:3)\n\tat jdk.compiler/com.sun.tools.javac.launcher.Main.main(Main.java:132)\n",
            // another thread's exception below output: the JVM went on (0)
            "starting\nException in thread \"Thread-0\" java.lang.RuntimeException: worker failed\n\tat C.lambda$main$0(C.java:3)\n\tat java.base/java.lang.Thread.run(Thread.java:840)\n",
            // lua5.4 t.lua printing debug.traceback("checkpoint") (0)
            "checkpoint\nstack traceback:\n\tt.lua:1: in main chunk\n\t[C]: in ?\n",
            // a Lua message below other output, a name that is not Lua's
            "loading\nlua5.4: a.lua:3: 'end' expected near <eof>\ndone\n",
            "luarocks: a.lua:3: installed\n",
            // Ruby frames below a line that is no exception's; a last line
            // with parentheses that name no class
            "loading\nretrying\n\tfrom s.rb:6:in `<main>'\n",
            "loading\ns.rb:4:in `run': retrying (attempt 2)\n",
            // a PHP frame list without the uncaught header
            "frames:\nStack trace:\n#0 {main}\n  thrown in /tmp/probe/a.php on line 3\n",
            // OCaml's words in a sentence; escript's frames without its
            // header; rollup's warning, a Node stack without rollup's error
            "retrying\nException: Connection reset.\n",
            "done\nFatal error: exception counts are logged below\n",
            "trace:\n  in function  erl_eval:expr/6 (erl_eval.erl, line 496)\n  in call from init:do_boot/3 \n",
            "\na.js → out.js...\n(!) Unresolved dependencies\nhttps://rollupjs.org/troubleshooting/#warning-treating-module-as-external-dependency\nleft-pad (imported by \"a.js\")\ncreated out.js in 102ms\n",
            "warning: slow\n    at main (/a/b.js:3:9)\n    at /a/c.js:1:1\n",
            // SQLAlchemy's message logged without a traceback (0)
            "retrying after:\nsqlalchemy.exc.OperationalError: (sqlite3.OperationalError) database is locked\n(Background on this error at: https://sqlalche.me/e/21/e3q8)\n",
        ],
    );
}

/// jq's own errors (jq 1.6 here, its status in the comment), on the first
/// line: stderr is unbuffered, so they come above the outputs jq printed
/// before (`src/main.c` of jq 1.6 and 1.7).
#[test]
fn jqs_own_errors() {
    check(
        "error_label",
        &[
            // echo '{"a": 1}' | jq '.a.b' (5)
            "jq: error (at <stdin>:1): Cannot index number with string \"b\"\n",
            // jq '.a |' a.json (3)
            "jq: error: syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, line 1:\n.a |   \njq: 1 compile error\n",
            // jq . no_such.json (2)
            "jq: error: Could not open file no_such.json: No such file or directory\n",
            // jq .a a.json, jq -c .a l.jsonl of a bad third line (4)
            "parse error: Expected another key-value pair at line 1, column 9\n",
            "parse error: Expected another key-value pair at line 3, column 9\n1\n2\n",
            // jq -r '.[] | .name' of [{"name": "x"}, {"name": "y"}, 3] (5)
            "jq: error (at a.json:1): Cannot index number with string \"name\"\nx\ny\n",
            // jq 1.7's wording (`jq: parse error: %s`), an error not a string
            "jq: parse error: Expected another key-value pair at line 1, column 9\n",
            "jq: error (at <stdin>:0) (not a string): {\"a\":1}\n",
        ],
        &[
            // jq -r '.errors[]' of a report holding such messages (0)
            "parse error: Unexpected token } in JSON at position 9\njq: error: x is not defined\n",
            "jq: error handling in filters\nparse error: at line 3 of the docs\n",
            "0\n",
        ],
    );
}

/// Tools' own errors on the first line, which they print only when they
/// fail (the fifty-fourth session's fresh programs, status in the
/// comment): CMake 3.25's, PostgreSQL 15's clients', GNU sed 4.9's script
/// errors, mawk's.
#[test]
fn tools_own_errors_at_the_start() {
    check(
        "error_label",
        &[
            // cmake -S . -B build of a CMakeLists.txt calling add_executabl (1)
            "CMake Error at CMakeLists.txt:3 (add_executabl):\n  Unknown CMake command \"add_executabl\".\n\n\n-- Configuring incomplete, errors occurred!\nSee also \"/tmp/probe/build/CMakeFiles/CMakeOutput.log\".\n",
            // cmake -S nothere -B build; cmake .. outside a project (1)
            "CMake Error: The source directory \"/tmp/probe/nothere\" does not exist.\nSpecify --help for usage, or press the help button on the CMake GUI.\n",
            "CMake Error: The source directory \"/tmp/ox\" does not appear to contain CMakeLists.txt.\nSpecify --help for usage, or press the help button on the CMake GUI.\n",
            // psql -h 127.0.0.1 -p 9 (2), pg_dump the same (1)
            "psql: error: connection to server at \"127.0.0.1\", port 9 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n",
            "pg_dump: error: connection to server at \"127.0.0.1\", port 9 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n",
            // sed -e 's/a/b', sed 's/a/b/q', sed -n 'x;p;k', sed -f a.sed (1)
            "sed: -e expression #1, char 5: unterminated `s' command\n",
            "sed: -e expression #1, char 7: unknown option to `s'\n",
            "sed: -e expression #1, char 5: unknown command: `k'\n",
            "sed: file a.sed line 1: unterminated `s' command\n",
            // mawk (Debian's awk): awk '{print $1' f.txt, awk '{ print $1 +* 2 }' (2)
            "awk: line 2: missing } near end of file\n",
            "awk: line 1: syntax error at or near *\n",
            // ruby 3.1 a.rb (1): an exception above the output it buffered
            // (raise ArgumentError), a NoMethodError with error_highlight's
            // excerpt and its frame, a source it cannot parse
            "a.rb:2:in `<main>': unknown mode: fast (ArgumentError)\nloading\n",
            "a.rb:2:in `run': undefined method `helper' for main:Object (NoMethodError)\n\n  helper(1)\n  ^^^^^^\n\tfrom a.rb:4:in `<main>'\n",
            "a.rb:2: syntax error, unexpected end-of-input, expecting `end'\n  puts \"x\"\n          ^\n",
            // Ruby 3.4's quoting and a namespaced class
            "-e:1:in 'Object#load': no such mode (Config::Error)\n",
            // xmllint 2.9.14 --noout of a file that is not well-formed (1),
            // --schema of one its schema rejects (3)
            "a.xml:3: parser error : Opening and ending tag mismatch: error line 3 and entry\n  <entry><error>disk full</entry>\n                                 ^\na.xml:4: parser error : Opening and ending tag mismatch: entry line 3 and log\n</log>\n      ^\na.xml:5: parser error : Premature end of data in tag log line 2\n\n^\n",
            "a.xml:3: element entry: Schemas validity error : Element 'entry': The attribute 'level' is required but missing.\na.xml:4: element failure: Schemas validity error : Element 'failure': This element is not expected. Expected is ( entry ).\n",
            // markdownlint-cli 0.48 (1); its findings before severities
            "a.md:1 error MD022/blanks-around-headings Headings should be surrounded by blank lines [Expected: 1; Actual: 0; Below] [Context: \"# Release notes\"]\na.md:5 error MD012/no-multiple-blanks Multiple consecutive blank lines [Expected: 1; Actual: 2]\na.md:7:1 error MD004/ul-style Unordered list style [Expected: asterisk; Actual: plus]\n",
            "docs/a.md:12:3 MD009/no-trailing-spaces Trailing spaces [Expected: 0 or 2; Actual: 1]\n",
            // ocaml a.ml of a script that does not type (OCaml 4.13, 2); an
            // unused value under warnings-as-errors (dune, 1)
            "File \"./a.ml\", line 1, characters 14-21:\n1 | let x : int = \"three\";;\n                  ^^^^^^^\nError: This expression has type string but an expression was expected of type\n         int\n",
            "File \"bin/main.ml\", line 3, characters 4-5:\n3 | let x = 1\n        ^\nError (warning 32 [unused-value-declaration]): unused value x.\n",
        ],
        &[
            // cmake's warning (0); psql's table of such words (0)
            "CMake Warning at CMakeLists.txt:3 (message):\n  option FAST is deprecated\n\n\n-- Configuring done\n-- Generating done\n-- Build files have been written to: /tmp/probe/build\n",
            "     message      | state  | errors \n------------------+--------+--------\n ERROR: disk full | failed |      0\n(1 row)\n\n",
            // the words in a sentence, a program's other lines
            "CMake errors are listed in CMakeError.log\n",
            "psql: errors are reported on stderr\n",
            "sed: expression #1 replaced 3 lines\n",
            "awk: lines 1-3 read\n",
            // ruby a.rb printing its counts (0); a frame's line without the
            // exception's class; a search hit
            "errors: 0\nfailed: none\n",
            "a.rb:2:in `run': retrying\n",
            "lib/a.rb:12:    raise ArgumentError, \"unknown mode\" # (ArgumentError)\n",
            // xmllint's warning (0); an --xpath query's <error> elements (0)
            "a.xml:1: parser warning : xmlns: URI probe is not absolute\n<log xmlns=\"probe\">\n",
            "<entry level=\"error\"><error>disk full</error></entry>\n",
            // a markdownlint warning (0), a search hit naming a rule
            "a.md:3 warning MD013/line-length Line length [Expected: 80; Actual: 95]\n",
            "docs/rules.md:12:MD022/blanks-around-headings is on\n",
            // an OCaml warning (0); a log's line naming a file
            "File \"./a.ml\", line 2, characters 4-10:\n2 | let unused = 1\n        ^^^^^^\nWarning 26 [unused-var]: unused variable unused.\nError: none\n",
            "File \"a.ml\", line 1, characters 0-9: copied\n",
        ],
    );
}

#[test]
fn compiler_diagnostics() {
    check(
        "error_label",
        &[
            "<stdin>: In function 'main':\n<stdin>:1:19: error: 'x' undeclared\n",
            "src/app.ts:12:5: error: cannot find name 'foo'",
            "src/lib.rs:7:9: error[E0308]: mismatched types",
            "a.cpp:1:10: fatal error: 'missing.h' file not found",
            "Main.hs:3:8: error:\n    • Variable not in scope: foo :: IO ()",
            // `tsc --noEmit a.ts` (exit 2), the MSBuild form
            "a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.\na.ts(2,1): error TS2304: Cannot find name 'foo'.\n",
            "C:\\src\\Program.cs(3,5): error CS1002: ; expected [C:\\src\\app.csproj]",
            "a.cpp(10): fatal error C1083: Cannot open include file: 'x.h'",
        ],
        &[
            "src/app.ts:12:5: warning: unused variable 'foo'\n1 warning generated.",
            // Search hits: a file's line that starts with the word.
            "src/server.go:88:\terror := s.listen()\nsrc/server.go:120:\treturn error",
            "src/handlers.rs:31:        error!(\"request failed: {e}\");",
            "lib/log.js:14:  error(msg) {",
            "src/a.ts(12,5): warning TS6133: 'x' is declared but never read.",
            "log(1,2): errors are counted below",
            // Search hits of fields named `error` (`grep -rn error …`).
            "types.ts:3:  error: string | null;\nconf.yml:2:error: \"use fallback\"\n",
            "m.py:2:    error: Optional[str] = None\n",
            "src/api.rs:40:\terror: Option<String>,",
        ],
    );
}

#[test]
fn zero_counts_are_not_failures() {
    check(
        "failure_statement",
        &["Tests failed: 3 of 12"],
        &[
            "failed: 0, passed: 12",
            "Failures: 0",
            "Build ok, 0 failed",
            "Tests failed = 0",
        ],
    );
}

#[test]
fn exit_status_in_the_header() {
    check(
        "exit_status",
        &[
            "Chunk ID: 4f2a\nWall time: 0.3 seconds\nProcess exited with code 1\nOutput:\nboom",
            "Wall time: 1.0 seconds\nExit code: 127\nOutput:\nsh: rg: not found",
        ],
        &[
            "Chunk ID: 4f2a\nWall time: 0.3 seconds\nProcess exited with code 0\nOutput:\nError: printed, not failed",
            "line 1\nline 2\nline 3\nline 4\nexit code 1 is neither header nor trailer\nmore output",
            // A program's own status line below its output (`go run`'s,
            // a loop's `echo "exit status $?"`): not a client's header.
            "step 1\nexit status 1\nstep 2 ok\ndone",
        ],
    );
}

#[test]
fn more_harness_phrasings() {
    check(
        "user_denied",
        &["Claude requested permissions to write to /tmp/x, but you haven't granted it yet."],
        &["The permissions table was granted a new index."],
    );
    check(
        "failure_statement",
        &[
            "apply_patch verification failed: invalid hunk at line 3",
            "Invalid patch: The first line of the patch must be '*** Begin Patch'",
            "Unknown tool: search_web",
            "Tool get_weather not found",
            "Agent type 'explorer' not found. Available agents: general-purpose",
            "Unknown skill: deploy",
            "No such tool available: bash",
            "Page not found",
            "Cancelled: parallel tool call Bash(ls) errored",
            "The tool execution failed with the following error:\n<error>boom</error>",
            "unsupported call: get_weather",
            "unsupported custom tool call: apply_patch",
            "Unsupported payload for shell handler: local_shell",
        ],
        &[
            "Invalid entries are skipped by the importer (see docs).",
            "Unsupported features: none\nAll checks passed",
            "unsupported_call_count: 0",
            "No matches found",
            "Found 3 files\nsrc/not_found.rs",
            "12 not found, 3 found",
        ],
    );
    check(
        "http_status",
        &["404 Client Error: Not Found for url: https://x.test/a"],
        &[],
    );
    check(
        "json_error",
        &[
            "{'error': 'reservation not found'}",
            "{'success': False, 'message': 'seat taken'}",
        ],
        &[
            "{'error': None, 'result': 'ok'}",
            "{'name': \"it's fine\", 'ok': True}",
        ],
    );
}

#[test]
fn shell_diagnostic() {
    check(
        "shell_diagnostic",
        &[
            "ls: cannot access 'missing_dir': No such file or directory\n",
            "cat: nope.txt: No such file or directory",
            "mkdir: cannot create directory 'src': File exists",
            "tar: nope.tar: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now\n",
            "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
            "rg: src/x: No such file or directory (os error 2)",
        ],
        &[
            // a diagnostic followed by the command's (or an `|| echo`'s) output
            "ls: cannot access '/tmp/scripts/': No such file or directory\ndirectory does not exist",
            "grep: warning: GREP_OPTIONS is deprecated\nsrc/a.rs:1:fn main() {}",
            // grep hits are `path:line:`, not `program: `
            "notes.txt:2:beta cannot be empty",
            "warning: unused variable `x`\n  --> src/main.rs:2:9",
            // `git add .` with an unreadable directory: a warning, exit 0
            "warning: could not open directory 'secret/': Permission denied\n",
            "hint: could not run the editor; using the message given\n",
            // `git log -1 --format=%s`: a sentence with the word in it
            "fix: users cannot log in after a password reset\n",
        ],
    );
    check(
        "shell_diagnostic",
        &[
            // the message after operand fields, as `perror` prints them
            "rm: cannot remove 'build': Is a directory\n",
            "chmod: changing permissions of '/etc/x': Operation not permitted\n",
            "unzip:  cannot find or open nope.zip, nope.zip.zip or nope.zip.ZIP.\n",
            "cat: 'C:\\data': No such file or directory",
            // a tool's thrown error after a quoted operand, as the AI SDK
            // sends it (plain, and inside a JSON string)
            "edit_file: \"absent text\" not found in present.txt",
            "\"edit_file: \\\"absent text\\\" not found in present.txt\"",
            "mv: 'a.txt' cannot be moved onto itself",
        ],
        &[
            "fix: \"login\" now works when users cannot remember a password\n",
            "docs: 'cannot' is one word\n",
        ],
    );
}

#[test]
fn only_bounded_positions_are_read() {
    let d = Detector::default();
    // A failure label deep in a long output is not a failure report.
    let long = format!(
        "{}\nError: late in a log\n{}",
        "ok\n".repeat(600),
        "done\n".repeat(10)
    );
    assert_eq!(d.explain(&long), None);
    // A huge JSON object: the walker stops at its budget without a verdict.
    let huge = format!(
        r#"{{"data": "{}", "error": "past the scan budget"}}"#,
        "x".repeat(100_000)
    );
    assert_eq!(d.explain(&huge), None);
    let early = format!(r#"{{"error": "early", "data": "{}"}}"#, "x".repeat(100_000));
    assert_eq!(d.explain(&early), Some("json_error"));
    // A very long first line is cut, never scanned whole.
    let wide = format!("{}Error: far right", " x".repeat(50_000));
    assert_eq!(d.explain(&wide), None);
}

proptest! {
    /// A batch's answer (an array of objects each stating `success`, in
    /// any key order, their strings holding quotes, escapes and brackets)
    /// failed exactly when an item is `false` beside a non-empty `error`;
    /// the same items with one stating no outcome are data.
    #[test]
    fn a_batchs_outcomes(
        items in proptest::collection::vec(
            ("[ -~é\"\\\\\\[\\]{}\n]{0,24}", "[ -~é\"\\\\\\[\\]{}\n]{0,40}", any::<bool>(), any::<bool>()),
            1..6,
        ),
        reversed in any::<bool>(),
    ) {
        let d = Detector::default();
        let object = |(query, result, success, explained): &(String, String, bool, bool)| {
            let mut fields = vec![
                ("query", serde_json::json!(query)),
                ("result", serde_json::json!(result)),
                ("success", serde_json::json!(success)),
            ];
            if *explained {
                fields.push(("error", serde_json::json!("Command exited with code 2")));
            }
            if reversed {
                fields.reverse();
            }
            let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
            format!("{{{}}}", body.join(","))
        };
        let texts: Vec<String> = items.iter().map(object).collect();
        let text = format!("[{}]", texts.join(","));
        let failed = items.iter().any(|(_, _, success, explained)| !success && *explained);
        prop_assert_eq!(d.explain(&text) == Some("json_error"), failed, "{:?} {:?}", d.explain(&text), text);
        let listing = format!("[{},{{\"job\":\"lint\"}}]", texts.join(","));
        prop_assert_ne!(d.explain(&listing), Some("json_error"), "{:?}", listing);
    }
}

/// A last line longer than the trailer's window: the window's cut is no
/// line's start, so a status phrase there is not the client's trailer
/// (and a one-line JSON answer's text is not read from its middle).
#[test]
fn a_cut_is_no_lines_start() {
    let d = Detector::default();
    let phrase = "Command exited with code 2, ";
    let rest = "y".repeat(super::TAIL_BYTES - phrase.len());
    let long = format!("{}{phrase}{rest}", "x".repeat(100));
    assert_eq!(d.explain(&long), None);
    // The same phrase opening a whole last line is one.
    let whole = format!("{}\n{phrase}{rest}", "x".repeat(100));
    assert_eq!(d.explain(&whole), Some("exit_status"));
}
