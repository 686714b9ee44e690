//! The `failure_summary` rule: the output *ends* with the program's own
//! statement that it failed. A tool that hands the model a command's raw
//! output (stdout and stderr, no exit status) often shows the failure only
//! there: the first lines are the build's or the test run's progress.
//!
//! The closing line is the last non-empty line, after the advice some
//! programs print below it (git's `hint:` lines, cargo's indented list of
//! failed targets, javac's warning count). It is read case-sensitively, as
//! the programs print it:
//!
//! | program | closing line |
//! |---|---|
//! | cargo, rustc | `error: could not compile `app` (bin "app") due to 2 previous errors`, `error: test failed, to rerun pass `--bin app``, `error: 2 targets failed:`, `error: aborting due to 2 previous errors`, `For more information about this error, try `rustc --explain E0308`.` |
//! | pytest | `==== 1 failed, 3 passed in 0.03s ====`, `1 passed, 1 error in 0.02s` (`-q`); not `1 xfailed` |
//! | unittest, Django | `FAILED (failures=1)`, `FAILED (errors=1, skipped=2)` |
//! | make | `make: *** [Makefile:3: all] Error 1`, `make[1]: *** …`, `make: *** No rule to make target 'x'.  Stop.`, `make: Target 'all' not remade because of errors.`; not `make: [Makefile:2: all] Error 1 (ignored)` |
//! | npm | `npm error …`, `npm ERR! …` (npm prints them only when it fails; its `npm notice` update banner below is advice) |
//! | pnpm | ` ELIFECYCLE  Command failed with exit code 1.`, ` ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  web@0.0.1 build: …` (below: its ` WARN ` lines) |
//! | yarn 1 | `error Command failed with exit code 1.` (below: `info Visit https://yarnpkg.com/…`) |
//! | gcc, clang, javac | `collect2: error: ld returned 1 exit status`, `clang: error: linker command failed …`, `compilation terminated.`, `2 errors generated.`, `1 error` |
//! | tsc `--pretty` | `Found 2 errors in the same file, starting at: a.ts:1`, `Found 1 error in b.ts:1`, `Found 3 errors in 2 files.` (above its table of files) |
//! | git | `Automatic merge failed; fix conflicts and then commit the result.`, `error: could not apply 1a2b3c4... msg`, `Could not apply 1a2b3c4... msg`, `error: failed to push some refs to …` |
//! | argparse | `prog: error: the following arguments are required: x` after argparse's `usage: prog …` |
//! | python | `/usr/bin/python3: No module named pytest`, `…: Error while finding module specification for 'os.x' (…)` (runpy's, `sys.executable` first), `python3: can't open file '/tmp/x.py': [Errno 2] …`; not `yaml: No module named 'yaml'` (a program's report) |
//! | jq | `jq: 1 compile error` (below its `jq: error: syntax error, …` lines) |
//! | click | `Error: Missing argument 'NAME'.` after click's `Try 'prog --help' for help.` |
//! | eslint | `✖ 2 problems (2 errors, 0 warnings)` (not `(0 errors, 1 warning)`; below: `  1 error and 0 warnings potentially fixable with the `--fix` option.`), `ESLint found too many warnings (maximum: 0).` |
//! | go test | `FAIL\texample.com/pkg\t0.002s`, `FAIL\texample.com/pkg [build failed]`, a bare `FAIL` below such a line (see `golang.rs`) |
//! | jest | `Test Suites: 1 failed, 1 total` (below: its `Tests:`, `Snapshots:`, `Time:` and `Ran all test suites …` lines) |
//! | vitest | ` Test Files  1 failed (1)` (below: its `      Tests  …`, `   Start at  …`, `   Duration  …` lines) |
//! | node --test | `# fail 1`, `# cancelled 1` of its TAP summary (below: `# skipped N`, `# todo N`, `# duration_ms N`) |
//! | ruff check | `Found 3 errors.`, `Found 3 errors (2 fixed, 1 remaining).` (below: ``[*] 2 fixable with `--fix`.``, `1 unsafe fix available with …`, `No fixes available (…)`); not `(1 fixed, 0 remaining)` |
//! | ruff format | `1 file would be reformatted`, `2 files would be reformatted, 1 file already formatted` (`--check`, `--diff`; black's report ends with a period) |
//! | black | its report (`1 file would be reformatted.`, `1 file failed to reformat.`) below `Oh no! 💥 💔 💥`, which black prints instead of `All done! ✨ 🍰 ✨` when it fails |
//! | pip | `ERROR: No matching distribution found for x` (below: its `[notice]` lines) |
//! | curl | `curl: (7) Failed to connect to …` (below its progress meter) |
//! | perl | `Execution of a.pl aborted due to compilation errors.`, `BEGIN failed--compilation aborted at a.pl line 1.` |
//! | GNU tar, bsdtar | `tar: Exiting with failure status due to previous errors`, `tar: Error is not recoverable: exiting now`, `tar: Error exit delayed from previous errors.` |
//! | cmake | `-- Configuring incomplete, errors occurred!` (below: `See also "…/CMakeOutput.log".`, which cmake before 3.26 prints) |
//! | pyright | `1 error, 0 warnings, 0 informations` (not `0 errors, …`: warnings exit 0) |
//! | coverage.py | `Coverage failure: total of 67 is less than fail-under=90` |
//! | prettier `--check` | `[warn] Code style issues found in the above file. Run Prettier with --write to fix.` (`… in 2 files. …`; prettier 2's `Forgot to run Prettier?`), `Error occurred when checking code style in the above file.` |
//! | oxlint | `Found 0 warnings and 1 error.` (below: `Finished in 7ms on 1 file with 96 rules using 2 threads.`; not `… and 0 errors.`) |
//! | biome | `  × Some errors were emitted while running checks.` (its `check`, `lint`, `format`, `ci`) |
//! | yamllint | its report ending with a file's problems, one of them an `error` (`  4:4       error    syntax error: … (syntax)` below the file's name; `a.yaml:4:4: [error] … (syntax)` in its parsable format); not warnings alone |
//! | unzip | `        a.zip.zip, and cannot find a.zip.ZIP, period.` below `unzip:  cannot find zipfile directory in one of a.zip or` (a corrupt archive, status 9) |
//! | mocha | `  1 failing` below `  1 passing (12ms)` (and `  1 pending`), when the output ends with the list of failures it opens (`  1) suite`, … the last failure's stack frames `      at …`) |
//! | tox 4 | `  evaluation failed :( (2.21 seconds)` (`  congratulations :) (…)` when every environment passed) |
//! | nox | `nox > Session tests failed.`, `nox > Session tests aborted.` (a single session's result; `… was successful.`) |
//! | Sphinx | `build finished with problems, 1 warning (with warnings treated as errors).` (`-W`; `build succeeded, 1 warning.` without it, status 0) |
//! | MkDocs | `Aborted with 1 warnings in strict mode!`, `Aborted with a BuildError!`, `Aborted with a configuration error!` |
//! | xmllint | `a.xml fails to validate` (`--schema`, `--dtdvalid`, `--relaxng`; `a.xml validates` when it passes) |
//! | openssl verify | `error c.pem: verification failed` |
//! | gpg --verify | `gpg: BAD signature from "…" [ultimate]`, `gpg: Can't check signature: No public key`, `gpg: the signature could not be verified.` |
//! | rsync | `rsync error: some files/attrs were not transferred (see previous errors) (code 23) at main.c(1394) [sender=3.5.0]` |
//! | GNU find | `find: ‘nothere’: No such file or directory`, `… Permission denied` (a starting point or folder it could not read: it goes on, and exits 1) |
//! | htmlhint | `Scanned 1 files, found 2 errors in 1 files (62 ms)` (`Scanned 1 files, no errors found (54 ms).`) |
//! | escript | `escript: There were compilation errors.` (below the compiler's `a.erl:4:5: syntax error before: ok`) |
//! | php | `PHP Fatal error:  … on line 3`, `PHP Parse error:  … on line 3` (`Fatal error: …` on standard output), `php -l`'s `Errors parsing a.php` below its parse error |
//!
//! Task runners whose closing line says nothing of a failed step (the
//! last step may have passed) are read by `runners.rs`, as part of this
//! rule: pre-commit's hook that failed (`no TODO markers……Failed` above
//! `- hook id: no-todo`), ansible-playbook's recap counting a failed task
//! or an unreachable host (`localhost : ok=0 changed=0 unreachable=0
//! failed=1 …`).
//!
//! gcc prints no closing line: an output that ends with a compiler's
//! report holding an error diagnostic (`main.c:6:12: error: …` above
//! later warnings, notes and source excerpts) is read from the end by
//! `compiler.rs`, as part of this rule; Go's build and vet reports
//! (`# example.com/pkg` above `./main.go:6:14: undefined: x`: no `error`
//! word) by `golang.rs`.
//!
//! Only the last [`SUMMARY_TAIL_BYTES`] bytes are read; a closing line is
//! at most 512 bytes long, and a JSON document is `json_error`'s, not
//! read here. What it cannot tell apart from the text alone: a command
//! whose output ends with such a line and that succeeded all the same
//! (`tail -1 build.log` of an earlier build, a single-file `grep` whose
//! last hit is one); with the call's command known, such a file reader's
//! output is not read as a report (`command.rs`). Search hits in several files
//! (`src/a.py:3:    print("1 failed in 0.1s")`) and indented or quoted
//! lines are not closing lines.

use std::sync::LazyLock;

use memchr::memmem;
use regex::bytes::Regex;

/// How much of the end of the content the rule reads (an argparse usage
/// block of many options, git's advice).
pub const SUMMARY_TAIL_BYTES: usize = 2048;
/// The most advice lines skipped below the closing line.
const MAX_ADVICE_LINES: usize = 16;
/// How far into the closing line `prog: error: ` is looked for.
const PROG_BYTES: usize = 128;
/// The longest closing line read (pytest's is 80 bytes, argparse's a
/// sentence).
const LINE_BYTES: usize = 512;

/// The closing lines, as the programs print them (case-sensitive, anchored).
pub(super) const CLOSING: &str = concat!(
    r"^(?-i:(?:",
    // cargo and rustc
    r"error: (?:could not compile |aborting due to |test failed, to rerun pass ",
    r"|\d+ targets? failed:|failed to push some refs |could not apply [0-9a-f]{7,40}\.\.\. )",
    r"|For more information about (?:this|an) error, try `rustc --explain E\d+`\.$",
    // pytest (a count of failures or errors, not `xfailed`), with or without its rule
    r"|(?:=+ )?(?:\d+ [a-z]+, )*[1-9]\d* (?:failed|errors?)(?:, \d+ [a-z]+)*",
    r" in \d+(?:\.\d+)?s(?: \([^)\n]*\))?(?: =+)?$",
    // unittest
    r"|FAILED \([a-z ]+=\d+(?:, [a-z ]+=\d+)*\)$",
    // make (an ignored error is `make: [x] Error 1 (ignored)`, without stars)
    r"|g?make(?:\[\d+\])?: (?:\*\*\* |Target '[^'\n]*' not remade because of errors\.$)",
    // npm; yarn 1's (pnpm's are indented: `pnpm_error`)
    r"|npm (?:error|ERR!)(?: |$)",
    r"|error Command failed with exit code [1-9]\d*\.$",
    // the linker, compilers' counts
    r"|collect2: error: ld returned \d+ exit status$",
    r"|[\w.+-]+: error: linker command failed\b",
    r"|[1-9]\d* errors?(?: generated)?\.?$",
    r"|compilation terminated\.$",
    // tsc --pretty (its table of files below is advice)
    r"|Found [1-9]\d* errors? in (?:the same file, starting at: \S+|\d+ files\.|\S+:\d+)$",
    // eslint (its stylish format; `--max-warnings` exceeded)
    r"|\xE2\x9C\x96 \d+ problems? \([1-9]\d* errors?, \d+ warnings?\)$",
    r"|ESLint found too many warnings \(maximum: \d+\)\.$",
    // jq's count below its compile errors
    r"|jq: [1-9]\d* compile errors?$",
    // jest (its counts and times below are advice); node --test's TAP summary
    r"|Test Suites: [1-9]\d* failed, ",
    r"|# (?:fail|cancelled) [1-9]\d*$",
    // ruff check (with every error fixed, `(1 fixed, 0 remaining)`, it exits 0)
    r"|Found [1-9]\d* errors?(?: \(\d+ fixed, [1-9]\d* remaining\))?\.$",
    // ruff format --check or --diff (black's report, with a period, is
    // read below `Oh no!` alone: `black_failed`)
    r"|[1-9]\d* files? would be reformatted(?:, \d+ files? already formatted)?$",
    // pip, curl (printed only for a transfer that failed), perl's compile errors
    r"|ERROR: No matching distribution found for ",
    r"|curl: \(\d+\) ",
    r"|Execution of .+ aborted due to compilation errors\.$",
    r"|BEGIN failed--compilation aborted at .+ line \d+\.$",
    // GNU tar (`Exiting with …` when an error let it go on, `Error is not
    // recoverable` when it could not), bsdtar
    r"|g?tar: (?:Exiting with failure status due to previous errors",
    r"|Error is not recoverable: exiting now|Error exit delayed from previous errors\.?)$",
    // cmake's configure step (`See also …` below it is advice)
    r"|-- Configuring incomplete, errors occurred!$",
    // pyright (errors, not warnings, make it exit 1)
    r"|[1-9]\d* errors?, \d+ warnings?, \d+ informations?$",
    // coverage report --fail-under
    r"|Coverage failure: total of \d+(?:\.\d+)? is less than fail-under=\d+(?:\.\d+)?$",
    // prettier --check: files it would change, files it could not read
    r"|\[warn\] Code style issues found in (?:the above file(?:\(s\))?|\d+ files)\. ",
    r"|Error occurred when checking code style in (?:the above file|\d+ files)\.$",
    // oxlint (its `Finished in …` line below is advice)
    r"|Found \d+ warnings? and [1-9]\d* errors?\.$",
    // nox's result of a single session (`… was successful.` when it
    // passed), Sphinx's when the build failed (`-W` on a warning; `build
    // succeeded, 1 warning.` without it), MkDocs' abort (`--strict` on a
    // warning, a build or configuration error)
    r"|nox > Session .+ (?:failed|aborted)(?:: .*)?\.$",
    r"|build finished with problems(?:, \d+ warnings?(?: \(with warnings treated as errors\))?)?\.$",
    r"|Aborted with (?:\d+ [a-z]+s(?:, \d+ [a-z]+s)* in strict mode|a BuildError|a configuration error",
    r"|\d+ configuration warnings in 'strict' mode)!$",
    // openssl verify's verdict, gpg's on a signature, rsync's report of
    // its exit status (`log.c`'s, printed only when it is not 0), GNU
    // find's complaint about a folder it could not read, which ends its
    // output when that folder was the last (find goes on, and exits 1)
    r"|error .+: verification failed$",
    r"|gpg: (?:BAD signature from |Can't check signature: |the signature could not be verified\.$)",
    r"|rsync error: .+ \(code \d+\) at ",
    r"|find: (?:\xE2\x80\x98.*\xE2\x80\x99|'.*'|\S+): (?:No such file or directory|Permission denied)$",
    // escript's below the compiler's errors
    r"|escript: There were compilation errors\.$",
    // htmlhint's count of hints (`no errors found` when there are none)
    r"|Scanned \d+ files?, found [1-9]\d* errors? in \d+ files? \(\d+ ms\)$",
    // PHP's fatal and parse errors end the script (the log's `PHP ` prefix,
    // or on standard output without it)
    r"|(?:PHP )?(?:Fatal|Parse) error: .* on line \d+$",
    // git
    r"|Automatic merge failed; ",
    r"|Could not apply [0-9a-f]{7,40}\.\.\. ",
    r"))",
);

/// Does the output end with its program's statement that it failed, or
/// with a compiler's report that holds an error (`diagnostic` matches an
/// error diagnostic's line; see `compiler.rs`)?
pub(super) fn ends_in_failure(closing: &Regex, diagnostic: &Regex, content: &[u8]) -> bool {
    let end = super::rules::trim_end(content);
    if matches!(end.last(), Some(b'}' | b']'))
        && matches!(super::rules::start(content).first(), Some(b'{' | b'['))
    {
        // A JSON document (`json_error`'s), not a command's output.
        return false;
    }
    ends_in_closing_line(closing, content)
        || super::compiler::error_in_report(diagnostic, content)
        || super::golang::build_report(content)
}

/// Does the output's closing line say its program failed?
fn ends_in_closing_line(closing: &Regex, content: &[u8]) -> bool {
    let cut = content.len().saturating_sub(SUMMARY_TAIL_BYTES);
    let mut window = &content[cut..];
    if cut > 0 && content[cut - 1] != b'\n' {
        // The window opens mid-line: that line is not read.
        window = memchr::memchr(b'\n', window).map_or(&[][..], |i| &window[i + 1..]);
    }
    let Some((line, before)) = closing_line(window) else {
        return false;
    };
    let line = super::rules::without_csi(line);
    if line.first() == Some(&b' ')
        && (mocha_failed(&line, content) || unzip_failed(&line, before) || tox_failed(&line))
    {
        return true;
    }
    // A task runner's report: pre-commit's hooks, ansible's recap
    // (`runners.rs`), behind their last line's last byte.
    if matches!(line.last(), Some(b'd')) && super::runners::pre_commit_failed(content, &line) {
        return true;
    }
    if line.last().is_some_and(u8::is_ascii_digit)
        && super::runners::ansible_recap_failed(window, &line)
    {
        return true;
    }
    // yamllint's problems end with their rule: `(syntax)`.
    if line.last() == Some(&b')') && yamllint_failed(&line, window) {
        return true;
    }
    if may_close(&line) && (closing.is_match(&line) || click_error(&line, before)) {
        return true;
    }
    if pnpm_error(&line)
        || vitest_failed(&line)
        || biome_failed(&line)
        || php_lint_failed(&line, before)
        || black_failed(&line, before)
        || xmllint_invalid(&line)
        || super::golang::test_failed(&line, before)
        || python_refusal(&line)
    {
        return true;
    }
    // Most outputs end here: the line opens like no closing line and has
    // no `prog: error: ` (argparse's, the linker's).
    ERROR_FINDER
        .find(&line[..line.len().min(PROG_BYTES)])
        .is_some_and(|i| closing.is_match(&line) || argparse_error(&line, i, before))
}

/// `: error: ` (argparse's, the linker's), searched once per output.
static ERROR_FINDER: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b": error: "));

/// How the closing lines open, as plain prefixes: a cheap test before the
/// regex (the lines with `: error: ` are tested apart).
const OPENINGS: &[&[u8]] = &[
    b"error: ",
    b"For more information about ",
    b"FAILED (",
    b"make",
    b"gmake",
    b"npm ",
    b"compilation terminated.",
    b"Automatic merge failed; ",
    b"Could not apply ",
    // click's `Error: …`, prettier's `Error occurred when checking …`
    b"Error",
    b"Found ",
    b"error Command failed ",
    "\u{2716} ".as_bytes(),
    b"ESLint found ",
    b"jq: ",
    b"Test Suites: ",
    b"# fail ",
    b"# cancelled ",
    b"ERROR: No matching distribution ",
    b"curl: (",
    b"Execution of ",
    b"BEGIN failed--",
    b"tar: ",
    b"gtar: ",
    b"-- Configuring incomplete",
    b"Coverage failure: ",
    b"[warn] Code style issues ",
    b"PHP ",
    b"Fatal error: ",
    b"Parse error: ",
    b"nox > Session ",
    b"build finished with problems",
    b"Aborted with ",
    b"error ",
    b"gpg: ",
    b"rsync error: ",
    b"find: ",
    b"Scanned ",
    b"escript: ",
];

/// pnpm's closing line: an error code on a red background, set off by a
/// space or a thin space (U+2009) on each side, then the message
/// (`ELIFECYCLE  Command failed with exit code 1.`,
/// `ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  web@0.0.1 build: …`).
fn pnpm_error(line: &[u8]) -> bool {
    let line = skip_pnpm_spaces(line);
    let (code, message) = if let Some(after) = line.strip_prefix(b"ELIFECYCLE") {
        (&b"ELIFECYCLE"[..], after)
    } else if line.starts_with(b"ERR_PNPM_") {
        let end = line
            .iter()
            .position(|b| !(b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_'))
            .unwrap_or(line.len());
        line.split_at(end)
    } else {
        return false;
    };
    let text = skip_pnpm_spaces(message);
    if text.len() == message.len() || text.is_empty() {
        // No space after the code: a word that starts with it.
        return false;
    }
    if code != b"ELIFECYCLE" {
        return true;
    }
    text.strip_prefix(b"Command failed with exit code ")
        .is_some_and(|status| {
            let digits = status.iter().take_while(|b| b.is_ascii_digit()).count();
            digits > 0 && status[0] != b'0' && &status[digits..] == b"."
        })
}

/// How Python's refusals to run a module or a file open, after the
/// interpreter's name: runpy's (CPython's `Lib/runpy.py`,
/// `_run_module_as_main`, prints `"%s: %s" % (sys.executable, exc)` and
/// exits with status 1) and the interpreter's own for a script it cannot
/// open (`python3: can't open file '/tmp/x.py': [Errno 2] No such file or
/// directory`, status 2).
const PYTHON_REFUSALS: &[&[u8]] = &[
    b"No module named ",
    b"Error while finding module specification for ",
    b"No code object available for ",
    b"Relative module names not supported",
    b"Cannot use package as __main__ module",
    b"can't find '__main__' module in ",
    b"can't open file ",
];

/// Python's refusal to run what it was given, as its last line: the
/// interpreter by name or path (`/usr/bin/python3`, `python3.11`,
/// `C:\Python311\python.exe`), then one of [`PYTHON_REFUSALS`]
/// (`/usr/bin/python3: No module named pytest`; `No module named
/// app.__main__; 'app' is a package and cannot be directly executed`).
/// Nothing follows it: the interpreter exits. Not another program's
/// report of a missing module (`yaml: No module named 'yaml'`).
fn python_refusal(line: &[u8]) -> bool {
    // Most lines stop at the first bytes: a path, `python…` or a drive.
    let drive = line.len() > 2 && line[0].is_ascii_uppercase() && line[1] == b':';
    if !(drive || matches!(line.first(), Some(b'/' | b'p'))) {
        return false;
    }
    let near = &line[..line.len().min(PROG_BYTES)];
    let Some(colon) = memchr::memchr_iter(b':', near).find(|&i| near.get(i + 1) == Some(&b' '))
    else {
        return false;
    };
    let program = &line[..colon];
    let base = program
        .rsplit(|b| matches!(b, b'/' | b'\\'))
        .next()
        .unwrap_or(program);
    let base = base.strip_suffix(b".exe").unwrap_or(base);
    let interpreter = base
        .strip_prefix(b"python")
        .is_some_and(|version| version.iter().all(|b| b.is_ascii_digit() || *b == b'.'));
    let message = &line[colon + 2..];
    interpreter && PYTHON_REFUSALS.iter().any(|m| message.starts_with(m))
}

/// black's report below the line it prints when it fails, `Oh no! 💥 💔
/// 💥` (`All done! ✨ 🍰 ✨` when it succeeds; black's `main`): `1 file
/// would be reformatted.` (`--check`), `1 file failed to reformat.`.
fn black_failed(line: &[u8], before: &[u8]) -> bool {
    line.first().is_some_and(u8::is_ascii_digit)
        && line.ends_with(b".")
        && super::rules::trim_end(before)
            .rsplit(|b| *b == b'\n')
            .next()
            .is_some_and(|above| above == "Oh no! \u{1F4A5} \u{1F494} \u{1F4A5}".as_bytes())
}

/// biome's closing line when a check, lint, format or ci run found errors
/// (below its `check ━━━…` title; `! Some warnings were emitted …` when
/// only warnings were: status 0).
fn biome_failed(line: &[u8]) -> bool {
    line.first() == Some(&b' ')
        && line == "  \u{D7} Some errors were emitted while running checks.".as_bytes()
}

/// yamllint's report (`yamllint/cli.py`), ending with problems one of
/// which is an error, which makes it exit 1 (warnings alone: 0, or 2
/// with `--strict`): in its standard format, a file's name above its
/// problems, `  4:4       error    syntax error: … (syntax)`, and a blank
/// line; in its parsable one, `a.yaml:4:4: [error] … (syntax)`. Only the
/// problems at the output's end are read (`line`, the last line, is one).
fn yamllint_failed(line: &[u8], window: &[u8]) -> bool {
    if line.starts_with(b"  ") {
        if yamllint_problem(line).is_none() {
            return false;
        }
        let (mut error, mut file, mut problem_below) = (false, false, false);
        for l in super::golang::lines_from_end(window) {
            if l.is_empty() {
                problem_below = false;
                continue;
            }
            match yamllint_problem(l) {
                Some(is_error) => {
                    error |= is_error;
                    problem_below = true;
                }
                // A file's name above its problems.
                None if problem_below && l[0] != b' ' => {
                    file = true;
                    problem_below = false;
                }
                None => break,
            }
        }
        return error && file;
    }
    if yamllint_parsable(line).is_none() {
        return false;
    }
    super::golang::lines_from_end(window)
        .map_while(yamllint_parsable)
        .any(|is_error| is_error)
}

/// A problem in yamllint's standard format: `  4:4       error    …
/// (syntax)`, `  1:1       warning  … (document-start)`; is it an error?
fn yamllint_problem(line: &[u8]) -> Option<bool> {
    let rest = line.strip_prefix(b"  ")?;
    let rest = line_column(rest)?;
    let level = rest.trim_ascii_start();
    if level.len() == rest.len() || !line.ends_with(b")") {
        return None;
    }
    if level.starts_with(b"error ") {
        Some(true)
    } else if level.starts_with(b"warning ") {
        Some(false)
    } else {
        None
    }
}

/// A problem in yamllint's parsable format: `a.yaml:4:4: [error] …
/// (syntax)`; is it an error?
fn yamllint_parsable(line: &[u8]) -> Option<bool> {
    if !line.ends_with(b")") {
        return None;
    }
    let near = &line[..line.len().min(PROG_BYTES + 32)];
    let at = memchr::memchr_iter(b'[', near).find(|&i| i >= 2 && &near[i - 2..i] == b": ")? - 2;
    let location = &line[..at];
    // `path:line:column`
    let (path_line, column) = location.split_at(memchr::memrchr(b':', location)?);
    let (path, row) = path_line.split_at(memchr::memrchr(b':', path_line)?);
    let digits = |s: &[u8]| s.len() > 1 && s[1..].iter().all(u8::is_ascii_digit);
    if path.is_empty() || !digits(row) || !digits(column) {
        return None;
    }
    let level = &line[at + 3..];
    if level.starts_with(b"error] ") {
        Some(true)
    } else if level.starts_with(b"warning] ") {
        Some(false)
    } else {
        None
    }
}

/// `4:4` and what follows it.
fn line_column(s: &[u8]) -> Option<&[u8]> {
    let row = s.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = s.get(row..)?.strip_prefix(b":")?;
    let column = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    (row > 0 && column > 0).then(|| &rest[column..])
}

/// xmllint's verdict on a file that fails its schema, DTD or Relax-NG
/// grammar (`a.xml fails to validate`, status 3 or 4; `a.xml validates`
/// when it passes), below the validity errors: the file's name, then the
/// words.
fn xmllint_invalid(line: &[u8]) -> bool {
    line.strip_suffix(b" fails to validate")
        .is_some_and(|file| !file.is_empty() && !file.iter().any(u8::is_ascii_whitespace))
}

/// tox 4's last line when an environment failed (`tox/session/cmd/run/
/// common.py`): `  evaluation failed :( (2.21 seconds)`, below each
/// environment's `  py: FAIL code 3 (…)`; `  congratulations :) (…)` when
/// every one passed.
fn tox_failed(line: &[u8]) -> bool {
    line.strip_prefix(b"  evaluation failed :( (")
        .and_then(|rest| rest.strip_suffix(b" seconds)"))
        .is_some_and(|n| !n.is_empty() && n.iter().all(|b| b.is_ascii_digit() || *b == b'.'))
}

/// unzip's report of an archive without a central directory (a corrupt
/// or truncated zip; Info-ZIP unzip 6.0, status 9), whose sentence runs
/// over two lines: `unzip:  cannot find zipfile directory in one of a.zip
/// or`, then `        a.zip.zip, and cannot find a.zip.ZIP, period.`.
fn unzip_failed(line: &[u8], before: &[u8]) -> bool {
    line.ends_with(b", period.")
        && super::rules::trim_end(before)
            .rsplit(|b| *b == b'\n')
            .next()
            .is_some_and(|above| {
                above.starts_with(b"unzip:  cannot find zipfile directory in one of ")
            })
}

/// How much of the end of the output mocha's list of failures is read in.
const MOCHA_TAIL_BYTES: usize = 16 * 1024;

/// ` failing\n`: the end of mocha's count of failures.
static FAILING: LazyLock<memmem::FinderRev<'static>> =
    LazyLock::new(|| memmem::FinderRev::new(b" failing\n"));

/// mocha's report of failed tests (its reporters' `Base.epilogue`: the
/// spec, dot and list reporters): `  1 passing (12ms)`, `  1 pending`,
/// `  1 failing`, then the list of failures, `  1) suite` and each
/// failure's message and stack; the output ends with the last one's
/// frames (`      at Context.<anonymous> (test/a.spec.js:4:46)`, `line`,
/// the last line). mocha exits with the number of failures.
fn mocha_failed(line: &[u8], content: &[u8]) -> bool {
    let indent = line.iter().take_while(|b| **b == b' ').count();
    if !line[indent..].starts_with(b"at ") {
        return false;
    }
    let window = &content[content.len().saturating_sub(MOCHA_TAIL_BYTES)..];
    let Some(at) = FAILING.rfind(window) else {
        return false;
    };
    let begin = memchr::memrchr(b'\n', &window[..at]).map_or(0, |i| i + 1);
    let count = &window[begin..at];
    let Some(n) = count.strip_prefix(b"  ") else {
        return false;
    };
    if n.is_empty() || n[0] == b'0' || !n.iter().all(u8::is_ascii_digit) {
        return false;
    }
    // Above: `  N pending` (if any), then `  N passing (…)`.
    let mut above = super::golang::lines_from_end(&window[..begin]);
    let mut prev = above.next();
    if prev.is_some_and(|l| l.starts_with(b"  ") && l.ends_with(b" pending")) {
        prev = above.next();
    }
    let passing = prev.is_some_and(|l| {
        l.strip_prefix(b"  ").is_some_and(|l| {
            let digits = l.iter().take_while(|b| b.is_ascii_digit()).count();
            digits > 0 && l[digits..].starts_with(b" passing (") && l.ends_with(b")")
        })
    });
    // Below: the list, from its first failure.
    let below = &window[at + b" failing\n".len()..];
    let first = below.iter().position(|b| *b != b'\n').map(|i| &below[i..]);
    passing && first.is_some_and(|list| list.starts_with(b"  1) "))
}

/// `php -l`'s `Errors parsing a.php`, which it prints below the parse
/// error (`PHP Parse error:  syntax error, … in a.php on line 3`, or
/// `Parse error: …` on standard output) when the file does not parse
/// (status 255; `No syntax errors detected in a.php` when it does).
fn php_lint_failed(line: &[u8], before: &[u8]) -> bool {
    line.first() == Some(&b'E')
        && line.starts_with(b"Errors parsing ")
        && super::rules::trim_end(before)
            .rsplit(|b| *b == b'\n')
            .next()
            .is_some_and(|above| {
                above.starts_with(b"PHP Parse error: ") || above.starts_with(b"Parse error: ")
            })
}

/// vitest's count of test files, one of which failed: ` Test Files  1
/// failed | 2 passed (3)` (its title padded to 11 columns, then two
/// spaces; vitest's `reporters/base.ts`); the lines below it are advice.
fn vitest_failed(line: &[u8]) -> bool {
    line.first() == Some(&b' ')
        && line.strip_prefix(b" Test Files  ").is_some_and(|count| {
            let digits = count.iter().take_while(|b| b.is_ascii_digit()).count();
            digits > 0 && count[0] != b'0' && count[digits..].starts_with(b" failed")
        })
}

/// The lines test runners print below their count of failures: jest's
/// (`Tests:       1 failed, 1 passed, 2 total`, `Snapshots:   0 total`,
/// `Time:        0.65 s`, `Ran all test suites matching a.test.js.`),
/// vitest's (its titles padded to 11 columns: `      Tests  1 failed |
/// 1 passed (2)`, `   Start at  05:03:37`, `   Duration  526ms (…)`),
/// node --test's TAP summary (`# cancelled 0`, `# skipped 0`, `# todo 0`,
/// `# duration_ms 260.57`).
fn test_runner_advice(line: &[u8]) -> bool {
    match line.first() {
        Some(b'T' | b'S' | b'R') => {
            line.starts_with(b"Tests:       ")
                || line.starts_with(b"Snapshots:   ")
                || line.starts_with(b"Time:        ")
                || line.starts_with(b"Ran all test suites")
        }
        Some(b' ') => [
            &b"      Tests  "[..],
            b"   Start at  ",
            b"   Duration  ",
            b"     Errors  ",
            b"  Snapshots  ",
        ]
        .iter()
        .any(|title| line.starts_with(title)),
        Some(b'#') => {
            line == b"# cancelled 0"
                || [&b"# skipped "[..], b"# todo ", b"# duration_ms "]
                    .iter()
                    .any(|key| {
                        line.strip_prefix(*key).is_some_and(|n| {
                            !n.is_empty() && n.iter().all(|b| b.is_ascii_digit() || *b == b'.')
                        })
                    })
        }
        _ => false,
    }
}

/// Leading spaces and thin spaces (U+2009), as pnpm sets off its codes.
fn skip_pnpm_spaces(mut s: &[u8]) -> &[u8] {
    loop {
        s = match s {
            [b' ', rest @ ..] | [0xE2, 0x80, 0x89, rest @ ..] => rest,
            _ => return s,
        };
    }
}

/// Per first byte, the [`OPENINGS`] that open with it (bit `i` for
/// `OPENINGS[i]`): most lines open with none of them, and a line that
/// does is compared with those alone.
static OPENING_BYTES: [u64; 256] = {
    assert!(OPENINGS.len() <= 64);
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < OPENINGS.len() {
        table[OPENINGS[i][0] as usize] |= 1 << i;
        i += 1;
    }
    table
};

/// Could `line` be a closing line (before the regex says whether it is)?
fn may_close(line: &[u8]) -> bool {
    match line.first() {
        // pytest's summary (`===== 1 failed …`, `1 failed …`), a count of errors
        Some(b'=' | b'0'..=b'9') => true,
        Some(&b) => {
            let mut openings = OPENING_BYTES[usize::from(b)];
            while openings != 0 {
                if line.starts_with(OPENINGS[openings.trailing_zeros() as usize]) {
                    return true;
                }
                openings &= openings - 1;
            }
            false
        }
        None => false,
    }
}

/// The last non-empty line of `window` below which only advice follows,
/// and the text before it. A line longer than [`LINE_BYTES`] is no
/// closing line (a JSON document, a minified file): its start is not
/// looked for.
fn closing_line(window: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut rest = super::rules::trim_end(window);
    for _ in 0..=MAX_ADVICE_LINES {
        if rest.is_empty() {
            return None;
        }
        let near = rest.len().saturating_sub(LINE_BYTES + 1);
        let begin = match memchr::memrchr(b'\n', &rest[near..]) {
            Some(i) => near + i + 1,
            None if near == 0 => 0,
            None => return None,
        };
        let (before, line) = rest.split_at(begin);
        if !advice(line) {
            return Some((line, before));
        }
        rest = super::rules::trim_end(before);
    }
    None
}

/// A line printed below a failure's closing line: git's `hint:` advice,
/// cargo's indented list of failed targets (`` `-p a --lib` ``), javac's
/// warning count after its error count, tsc's table of errors per file
/// (`Errors  Files`, `     2  a.ts:1`), npm's update banner (`npm
/// notice …`), yarn 1's pointer to its documentation, pnpm's warnings,
/// eslint's count of fixable problems, ruff's and pip's
/// (`ruff_advice`); a test runner's counts and times
/// below its count of failures (`test_runner_advice`); a line of colour
/// codes alone.
fn advice(line: &[u8]) -> bool {
    if line.first() == Some(&0x1B) {
        let plain = super::rules::without_csi(line);
        // Colour codes alone (eslint's last line on a terminal): a blank
        // line; vitest's dimmed titles.
        if plain.is_empty() || test_runner_advice(&plain) {
            return true;
        }
    }
    if test_runner_advice(line) || ruff_advice(line) {
        return true;
    }
    if cmake_or_oxlint_advice(line) {
        return true;
    }
    if line.starts_with(b"hint:")
        || (line.starts_with(b"  ")
            && line.ends_with(b" potentially fixable with the `--fix` option."))
        || line == b"Errors  Files"
        || line == b"npm notice"
        || line.starts_with(b"npm notice ")
        || line.starts_with(b"info Visit https://yarnpkg.com/")
    {
        return true;
    }
    if matches!(line.first(), Some(b' ' | 0xE2)) && skip_pnpm_spaces(line).starts_with(b"WARN ") {
        return true;
    }
    let indent = line.iter().take_while(|b| **b == b' ').count();
    let rest = &line[indent..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if indent > 0
        && (rest.first() == Some(&b'`') || (digits > 0 && rest[digits..].starts_with(b"  ")))
    {
        return true;
    }
    indent == 0 && digits > 0 && matches!(&rest[digits..], b" warning" | b" warnings")
}

/// cmake's pointer to its log below `-- Configuring incomplete, errors
/// occurred!` (`See also "/src/build/CMakeFiles/CMakeOutput.log".`; cmake
/// 3.26 dropped it), oxlint's timing below its count (`Finished in 7ms on
/// 1 file with 96 rules using 2 threads.`).
fn cmake_or_oxlint_advice(line: &[u8]) -> bool {
    match line.first() {
        Some(b'S') => line.starts_with(b"See also \"") && line.ends_with(b".log\"."),
        Some(b'F') => {
            line.starts_with(b"Finished in ")
                && line.ends_with(b".")
                && memchr::memmem::find(line, b" rules using ").is_some()
        }
        _ => false,
    }
}

/// ruff's lines below its count of errors: ``[*] 2 fixable with `--fix`.``
/// (``[*] 1 fixable with the `--fix` option.`` before ruff 0.5), ``1 unsafe
/// fix available with `--fix --unsafe-fixes`.``, ``No fixes available (1
/// hidden fix can be enabled with the `--unsafe-fixes` option).``; pip's
/// `[notice]` lines.
fn ruff_advice(line: &[u8]) -> bool {
    match line.first() {
        // pip's notices (`[notice] A new release of pip is available: …`)
        Some(b'[') => {
            line.starts_with(b"[notice] ")
                || line
                    .strip_prefix(b"[*] ")
                    .is_some_and(|n| n.first().is_some_and(u8::is_ascii_digit))
        }
        Some(b'N') => line.starts_with(b"No fixes available ("),
        Some(b'1'..=b'9') => {
            let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
            line[digits..].starts_with(b" unsafe fix") && line.ends_with(b"--unsafe-fixes`.")
        }
        _ => false,
    }
}

/// argparse's `prog: error: …` (`: error: ` at `at`) below its `usage:
/// prog …` line: the program refused its arguments.
fn argparse_error(line: &[u8], at: usize, before: &[u8]) -> bool {
    let prog = &line[..at];
    let is_prog = !prog.is_empty()
        && prog[0] != b' '
        && prog
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"._+- ".contains(b));
    is_prog
        && lines(before).any(|l| {
            l.strip_prefix(b"usage: ")
                .and_then(|rest| rest.strip_prefix(prog))
                .is_some_and(|rest| rest.is_empty() || rest[0] == b' ')
        })
}

/// click's `Error: …` below its `Try 'prog --help' for help.` line: the
/// program refused its arguments.
fn click_error(line: &[u8], before: &[u8]) -> bool {
    line.starts_with(b"Error: ")
        && lines(before).any(|l| {
            let l = super::rules::trim_end(l);
            (l.starts_with(b"Try '") && l.ends_with(b" --help' for help."))
                || (l.starts_with(b"Try \"") && l.ends_with(b" --help\" for help."))
        })
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|b| *b == b'\n')
}
