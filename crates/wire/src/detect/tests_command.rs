//! Tests of the verdict on a known command's output (`command.rs`): a
//! command that only prints files answers with their text. The outputs
//! are `scripts/detect-data/raw_commands.py`'s, run here (a log written
//! by the scenario's setup, then the command).

use proptest::prelude::*;

use super::{Detector, command_of, file_reader};

/// (command, output, exit status): commands that printed a log of an
/// earlier failed run, and exited 0.
const READS: &[(&str, &str)] = &[
    (
        "tail -3 build.log",
        "# example.com/pkg\n./main.go:6:14: undefined: x\n./main.go:7:2: y declared but not used\n",
    ),
    (
        "cat test.log",
        "--- FAIL: TestAdd (0.00s)\n    main_test.go:7: Add(1, 2) = 3, want 4\nFAIL\nFAIL\texample.com/pkg\t0.008s\nFAIL\n",
    ),
    (
        "tail -n 1 make.log 2>&1",
        "make: *** [Makefile:3: all] Error 1\n",
    ),
    (
        "head -n 20 run.log",
        "Traceback (most recent call last):\n  File \"/tmp/probe/s.py\", line 4, in <module>\n    json.loads(\"{bad json\")\njson.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)\n",
    ),
    (
        "grep -n -e Error -e Traceback run.log",
        "3:Traceback (most recent call last):\n15:json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)\n",
    ),
];

#[test]
fn a_file_readers_output_is_the_files_text() {
    let d = Detector::default();
    let mut read_as_failures = 0;
    for (command, output) in READS {
        assert_eq!(
            d.explain_for_command(output, Some(command)),
            None,
            "{command}: {output:?}"
        );
        read_as_failures += usize::from(d.explain(output).is_some());
    }
    // Without the command, most read as failure reports (the grep hits'
    // `3:` prefix hides its traceback).
    assert_eq!(read_as_failures, 4);
}

#[test]
fn a_readers_own_complaint_is_a_failure() {
    let d = Detector::default();
    // tail -3 build.log (1), cat build.log (1)
    let missing = [
        (
            "tail -3 build.log",
            "tail: cannot open 'build.log' for reading: No such file or directory\n",
        ),
        (
            "cat build.log",
            "cat: build.log: No such file or directory\n",
        ),
    ];
    for (command, output) in missing {
        assert_eq!(
            d.explain_for_command(output, Some(command)),
            Some("shell_diagnostic"),
            "{command}"
        );
    }
    // A framework's report of the exception its shell tool raised: an
    // error label, then the reader's own complaint on the same line.
    for (command, output) in [
        (
            "cat missing.txt",
            "Error executing tool: exit status 1: cat: missing.txt: No such file or directory",
        ),
        (
            "tail -1 build.log",
            "RuntimeError: exit status 1: tail: cannot open 'build.log' for reading: No such file or directory\n",
        ),
        (
            "cat a.txt",
            "Tool error: RuntimeError: exit status 1: /usr/bin/cat: a.txt: Permission denied",
        ),
        (
            "cd src && cat a.txt",
            "Error executing tool: exit status 1: bash: line 1: cd: src: No such file or directory",
        ),
        // Haystack's: a failure statement, then the exception's text.
        (
            "cat missing.txt",
            "Failed to invoke Tool `run_shell` with parameters {'command': 'cat missing.txt'}. \
             Error: exit status 1: cat: missing.txt: No such file or directory",
        ),
    ] {
        assert!(
            d.explain_for_command(output, Some(command)).is_some(),
            "{command}: {output:?}"
        );
    }
    // Not behind another label, nor another program's complaint behind one,
    // nor the complaint on a later line: the file's text.
    for (command, output) in [
        (
            "cat run.log",
            "Warning: cat: missing.txt: No such file or directory",
        ),
        (
            "cat run.log",
            "Error executing tool: exit status 1: ls: cannot access 'x': No such file or directory",
        ),
        (
            "cat run.log",
            "Error: the build broke\ncat: missing.txt: No such file or directory",
        ),
        (
            "cat notes.md",
            "Error handling: cat: the command, prints files",
        ),
        (
            "cat run.log",
            "Failed to invoke Tool `run_shell`. Error: exit status 1: ls: cannot access 'x': No such file",
        ),
        (
            "cat notes.md",
            "Failed runs: cat: the command that printed them",
        ),
    ] {
        assert_eq!(
            d.explain_for_command(output, Some(command)),
            None,
            "{command}: {output:?}"
        );
    }
    // Another program's complaint in the file is the file's.
    assert_eq!(
        d.explain_for_command(
            "ls: cannot access 'x': No such file or directory\n",
            Some("cat ls.log")
        ),
        None
    );
    // The client's exit status still decides.
    assert_eq!(
        d.explain_for_command(
            "Exit code 1\ntail: cannot open 'build.log' for reading: No such file or directory",
            Some("tail -1 build.log")
        ),
        Some("exit_status")
    );
    assert!(
        d.verdict_for_command(
            "Exit code 0\nmake: *** [all] Error 1",
            Some("tail -1 build.log")
        )
        .basis
            == toolwarden_core::Basis::Client
    );
}

#[test]
fn only_a_simple_readers_command_counts() {
    let d = Detector::default();
    let log = "make: *** [Makefile:3: all] Error 1\n";
    for command in [
        "make",
        "make 2>&1 | tail -1",
        "tail -1 build.log; make",
        "make > build.log 2>&1; tail -1 build.log",
        "cat $(ls *.log)",
        "cat \"$(ls *.log)\"",
        "tail -1 `ls`",
        "(tail -1 build.log)",
        "'LC_ALL=C' tail -1 build.log",
        "env -S 'tail -1' build.log",
        "env LC_ALL=C",
        "tail -1 'unclosed",
        "sudo tail -1 build.log",
    ] {
        assert_eq!(
            d.explain_for_command(log, Some(command)),
            Some("failure_summary"),
            "{command}"
        );
    }
    assert_eq!(file_reader("/usr/bin/tail -n 5 build.log"), Some("tail"));
    assert_eq!(
        file_reader("grep -E 'a|b;c' app.log 2>/dev/null"),
        Some("grep")
    );
    assert_eq!(file_reader("rg \"x > y\" src"), Some("rg"));
}

/// Lists and pipelines that print only files: builtins that print
/// nothing before the reader, readers piped into readers. A list with
/// another program before the reader, or a pipe from one, is not (the
/// program's output comes first, or is what the file now holds).
#[test]
fn a_list_prints_only_files_when_nothing_before_the_reader_prints() {
    for (command, reader) in [
        ("cd /work/app && tail -3 build.log", "tail"),
        ("cd 'my app'; cat test.log", "cat"),
        (
            "set -euo pipefail; cd src && grep -n ERROR app.log 2>&1",
            "grep",
        ),
        ("export LC_ALL=C && cat a.log;", "cat"),
        ("grep ERROR app.log | tail -20", "grep"),
        (
            "cat build.log | grep -v warning | head -n 5 2>/dev/null",
            "cat",
        ),
        ("cd x \\\n && tail -1 run.log", "tail"),
        ("cd x\ncat run.log", "cat"),
        ("cd x\r\ncat run.log", "cat"),
        ("/usr/bin/tail -n 5 build.log", "tail"),
        ("true || cat a.log", "cat"),
    ] {
        assert_eq!(file_reader(command), Some(reader), "{command:?}");
    }
    for command in [
        "make > build.log 2>&1; tail -3 build.log",
        "make > log; tail -3 log",
        "go build ./... && cat out.txt",
        "cmd && cat out.txt",
        "make 2>&1 | tail -20",
        "cat a.log | sort",
        "cd - && cat a.log",
        "set -x; cat a.log",
        "set; cat a.log",
        "export -p && cat a.log",
        "cd a b && cat a.log",
        "cat a.log &",
        "cat a.log & cat b.log",
        "cat a.log |& head",
        "cat a.log; ; cat b.log",
        "; cat a.log",
        "cat a.log ;; ",
        "cat a.log 2>err.log",
        "cat a.log 1>&2",
        "cat a.log >&2",
        "cat a.log &> out",
        "cat < a.log",
        "cat a.log | ",
        "cat a.log | | head",
        "cd ${HOME} && cat a.log",
        "cd x\r cat a.log",
    ] {
        assert_eq!(file_reader(command), None, "{command:?}");
    }
    // A reader after a build: the build's failure, printed now.
    let d = Detector::default();
    let output = "make: *** [Makefile:3: all] Error 1\n";
    assert_eq!(
        d.explain_for_command(output, Some("make > build.log 2>&1; tail -1 build.log")),
        Some("failure_summary")
    );
    assert_eq!(
        d.explain_for_command(output, Some("cd /w && tail -1 build.log")),
        None
    );
}

/// A program named by path complains under that path (coreutils, Python
/// and dash print `argv[0]` as given): read as its bare name's complaint,
/// and as a reader's own when it is the reader. Outputs of the commands
/// run here.
#[test]
fn a_program_named_by_path_is_read_as_its_name() {
    let d = Detector::default();
    for (output, rule) in [
        (
            "/usr/bin/cat: nope: No such file or directory\n",
            "shell_diagnostic",
        ),
        (
            "/usr/bin/tail: cannot open 'nope' for reading: No such file or directory\n",
            "shell_diagnostic",
        ),
        (
            "/usr/bin/python3: can't open file '/tmp/nope.py': [Errno 2] No such file or directory\n",
            "shell_diagnostic",
        ),
        ("/bin/sh: 1: foo: not found\n", "os_error"),
        ("/bin/bash: line 1: foo: command not found\n", "os_error"),
    ] {
        assert_eq!(d.explain(output), Some(rule), "{output:?}");
    }
    // The reader's own complaint, by path or by its shell.
    for (command, output) in [
        (
            "/usr/bin/cat nope",
            "/usr/bin/cat: nope: No such file or directory\n",
        ),
        (
            "cd /nope && tail -1 build.log",
            "/bin/bash: line 1: cd: /nope: No such file or directory\n",
        ),
        (
            "tial -1 build.log; cat build.log",
            "/bin/sh: 1: tial: not found\n",
        ),
    ] {
        let verdict = d.explain_for_command(output, Some(command));
        if command.starts_with("tial") {
            // Not a reader's command: read alone.
            assert_eq!(verdict, Some("os_error"), "{command}");
        } else {
            assert_eq!(verdict, Some("shell_diagnostic"), "{command}");
        }
    }
    // Another program's complaint in the file is still the file's, by
    // path or not.
    assert_eq!(
        d.explain_for_command(
            "/usr/bin/ls: cannot access 'x': No such file or directory\n",
            Some("cat ls.log")
        ),
        None
    );
    // A search hit (a relative path) is not a path-named program's
    // complaint.
    assert_eq!(d.explain("src/app.py: cannot open the socket\n"), None);
}

#[test]
fn the_command_from_a_calls_arguments() {
    let command = |args: &str| command_of(args).map(|c| c.into_owned());
    // Claude Code's Bash, the Gemini CLI's run_shell_command
    assert_eq!(
        command(r#"{"command":"tail -1 build.log","description":"x"}"#).as_deref(),
        Some("tail -1 build.log")
    );
    // the Codex CLI's exec_command
    assert_eq!(
        command(r#"{"cmd":"cat a.log","yield_time_ms":1000}"#).as_deref(),
        Some("cat a.log")
    );
    // the Codex CLI's shell: an argv
    assert_eq!(
        command(r#"{"command":["bash","-lc","tail -1 build.log"],"workdir":"/w"}"#).as_deref(),
        Some("tail -1 build.log")
    );
    assert_eq!(
        command(r#"{"command":["cat","a.log"]}"#).as_deref(),
        Some("cat a.log")
    );
    for args in [
        r#"{"path":"build.log"}"#,
        r#"{"command":3}"#,
        r#"{"command":["cat",3]}"#,
        "not json \"command\"",
        "",
    ] {
        assert_eq!(command(args), None, "{args}");
    }
    let long = format!(
        r#"{{"command":"cat {}"}}"#,
        "a".repeat(super::MAX_COMMAND_BYTES)
    );
    assert_eq!(command(&long), None);
}

/// Go tools' failures with variable assignments before the command
/// (quoted or not, `env`'s, an exported one in the list), as
/// `raw_commands.py`'s scenarios printed them here (go 1.19; status 1, 2
/// for gofmt): read with the tool, as without the assignments.
const ASSIGNED_FAILED: &[(&str, &str)] = &[
    (
        "GOFLAGS=-mod=readonly go build ./...",
        "main.go:3:8: cannot find module providing package github.com/nobody/nothing: import lookup disabled by -mod=readonly\n",
    ),
    (
        "GOFLAGS=-mod=readonly; export GOFLAGS; go build ./...",
        "main.go:3:8: cannot find module providing package github.com/nobody/nothing: import lookup disabled by -mod=readonly\n",
    ),
    (
        "CGO_ENABLED=0 go run ./nope",
        "go: no packages loaded from ./nope\n",
    ),
    (
        "env GOFLAGS=-mod=mod go generate ./...",
        "main.go:3: running \"stringer\": exec: \"stringer\": executable file not found in $PATH\n",
    ),
    (
        "env -i PATH=/usr/bin:/bin HOME=/tmp go mod init example.com/n",
        "go: /tmp/probe/go.mod already exists\n",
    ),
    (
        "env -u GOFLAGS go list example.com/nothere",
        "no required module provides package example.com/nothere; to add it:\n\tgo get example.com/nothere\n",
    ),
    (
        "LC_ALL=\"C\" GOFLAGS=\"-mod=mod -v\" gofmt -l .",
        "a.go:1:1: expected 'package', found 'func'\nb.go:2:1: expected declaration, found foo\nc.go\n",
    ),
];

/// Successes (status 0) with assignments before the command: a Go tool's
/// notes, `go list` made `-e` by GOFLAGS (its packages' errors are its
/// report), readers of an earlier failed run's log.
const ASSIGNED_SUCCEEDED: &[(&str, &str)] = &[
    ("GOFLAGS=-mod=mod go build -v ./...", "example.com/pkg\n"),
    (
        "GOFLAGS=-mod=mod go mod init example.com/n",
        "go: creating new go.mod: module example.com/n\ngo: to add module requirements and sums:\n\tgo mod tidy\n",
    ),
    (
        "export GOFLAGS=-e && go list -f '{{range .DepsErrors}}{{.}}{{end}}' .",
        "main.go:3:8: no required module provides package example.com/nothere; to add it:\n\tgo get example.com/nothere\n",
    ),
    (
        "LC_ALL=C tail -3 build.log",
        "# example.com/pkg\n./main.go:6:14: undefined: x\n./main.go:7:2: y declared but not used\n",
    ),
    (
        "env LANG=C cat test.log",
        "--- FAIL: TestAdd (0.00s)\n    main_test.go:7: Add(1, 2) = 3, want 4\nFAIL\nFAIL\texample.com/pkg\t0.006s\nFAIL\n",
    ),
    (
        "LC_ALL=\"C\" tail -n 1 make.log",
        "make: *** [Makefile:3: all] Error 1\n",
    ),
];

#[test]
fn assignments_before_a_command_hide_nothing() {
    let d = Detector::default();
    for (command, output) in ASSIGNED_FAILED {
        assert_eq!(
            d.explain_for_command(output, Some(command)),
            Some("failure_summary"),
            "{command}: {output:?}"
        );
        assert_eq!(d.explain(output), None, "the text alone: {output:?}");
    }
    let mut read_as_failures = 0;
    for (command, output) in ASSIGNED_SUCCEEDED {
        assert_eq!(
            d.explain_for_command(output, Some(command)),
            None,
            "{command}: {output:?}"
        );
        read_as_failures += usize::from(d.explain(output).is_some());
    }
    // The three readers' logs read as failures from the text alone (the
    // go list's output as go list's failure without GOFLAGS's `-e`).
    assert_eq!(read_as_failures, 3);
    // The reader's own complaint still counts (LC_ALL=C tail -3 build.log,
    // status 1).
    assert_eq!(
        d.explain_for_command(
            "tail: cannot open 'build.log' for reading: No such file or directory\n",
            Some("LC_ALL=C tail -3 build.log")
        ),
        Some("shell_diagnostic")
    );
}

/// What a command runs, with assignments before it: the shell's (a plain
/// name before the first `=`), `env`'s (any word with `=`, after its
/// `-i`, `-u NAME`, `--`), and GOFLAGS's `-e` making `go list` a report.
#[test]
fn the_program_after_assignments() {
    use super::{GoTool, Program};
    let program = |c: &str| Program::of_command(c);
    let tool = |c: &str| program(c).and_then(Program::go_tool);
    for (command, want) in [
        ("A=1 go build ./...", Some(GoTool::Build)),
        (
            "A=1 B='x y' C=\"$HOME/z\" go vet ./...",
            Some(GoTool::Build),
        ),
        ("A= go test ./...", Some(GoTool::Build)),
        ("env A=1 go run .", Some(GoTool::Run)),
        (
            "/usr/bin/env -i -- A=1 go generate ./...",
            Some(GoTool::Generate),
        ),
        // After its assignments, `--` is env's program.
        ("env -i A=1 -- go generate ./...", None),
        ("env -- go build", Some(GoTool::Build)),
        ("env - PATH=/bin go build", Some(GoTool::Build)),
        ("env -u A --unset=B -uC go build", Some(GoTool::Build)),
        ("env 'A=x y' go build", Some(GoTool::Build)),
        ("A=1 env B=2 env C=3 go build", Some(GoTool::Build)),
        ("A=1; B=2 && go build", Some(GoTool::Build)),
        ("A=1 2>&1 gofmt -l .", Some(GoTool::Gofmt)),
        ("GOFLAGS=-e go list ./...", Some(GoTool::Report)),
        ("GOFLAGS='-mod=mod -e' go list ./...", Some(GoTool::Report)),
        ("env GOFLAGS=-e=true go list ./...", Some(GoTool::Report)),
        ("GOFLAGS=-e go list -e=false ./...", Some(GoTool::Build)),
        // Go's flag package: one or two dashes, ParseBool's words, the
        // last flag given deciding
        ("go list --e ./...", Some(GoTool::Report)),
        ("go list -e=1 ./...", Some(GoTool::Report)),
        ("go list --e=True ./...", Some(GoTool::Report)),
        ("go list -e --e=0 ./...", Some(GoTool::Build)),
        ("GOFLAGS=--e go list --e=f ./...", Some(GoTool::Build)),
        ("GOFLAGS='-e -e=false' go list ./...", Some(GoTool::Build)),
        ("go list ---e ./...", Some(GoTool::Build)),
        ("go list -ex ./...", Some(GoTool::Build)),
        ("GOFLAGS=-e go build ./...", Some(GoTool::Build)),
        ("export GOFLAGS=-e; go list ./...", Some(GoTool::Report)),
        (
            "export GOFLAGS=-e; GOFLAGS=-mod=mod go list ./...",
            Some(GoTool::Build),
        ),
        (
            "export GOFLAGS=-e; env -i PATH=/bin go list ./...",
            Some(GoTool::Build),
        ),
        (
            "export GOFLAGS=-e; env -u GOFLAGS go list ./...",
            Some(GoTool::Build),
        ),
        (
            "export GOFLAGS=-e; unset GOFLAGS; go list ./...",
            Some(GoTool::Build),
        ),
        // Not assignments: a quoted or escaped name, no name, a name
        // that is not one, a word after the program.
        ("\"A\"=1 go build", None),
        ("A\\=1 go build", None),
        ("'A=1' go build", None),
        ("=1 go build", None),
        ("1A=1 go build", None),
        ("A-B=1 go build", None),
        ("go A=1 build", None),
        // env that prints the environment, or with options not read.
        ("env", None),
        ("env -i", None),
        ("env A=1", None),
        ("env -S 'go build'", None),
        ("env -C app go build", None),
        ("env =1 go build", None),
        // Still not one command (a tail shows the go command's end).
        ("A=1 go build | tail", Some(GoTool::Build)),
        ("A=1 go build | head", None),
        ("A=1 make && go build", None),
    ] {
        assert_eq!(tool(command), want, "{command}");
    }
    for (command, reader) in [
        ("LC_ALL=C tail -1 build.log", Some("tail")),
        (
            "LC_ALL=C grep -n ERROR app.log | LC_ALL=C head -5",
            Some("grep"),
        ),
        ("env LANG=C cat a.log", Some("cat")),
        ("cd src && A=1 tail -1 build.log", Some("tail")),
        ("A=1 make > /dev/null; tail -1 build.log", None),
        ("'LC_ALL=C' tail -1 build.log", None),
    ] {
        assert_eq!(file_reader(command), reader, "{command}");
    }
    // Assignments alone print nothing; env alone prints the environment.
    assert_eq!(file_reader("A=1 B=2; cat a.log"), Some("cat"));
    assert_eq!(file_reader("env A=1; cat a.log"), None);
}

/// A word's shape: an assignment's when a plain name comes before its
/// first unquoted `=`.
#[test]
fn assignment_words() {
    use super::shell::{Token, tokens};
    let a = |w: &str| Token::Assignment(w.to_owned());
    let w = |w: &str| Token::Word(w.to_owned());
    assert_eq!(
        tokens("A=1 B=\"x y\" C='' D= _e=f=g go A=2"),
        Some(vec![
            a("A=1"),
            a("B=x y"),
            a("C="),
            a("D="),
            a("_e=f=g"),
            w("go"),
            a("A=2"),
        ])
    );
    assert_eq!(
        tokens("\"A\"=1 A'='1 A\\=1 =1 1A=1 A-B=1 -A=1 A\"x\"=1"),
        Some(vec![
            w("A=1"),
            w("A=1"),
            w("A=1"),
            w("=1"),
            w("1A=1"),
            w("A-B=1"),
            w("-A=1"),
            w("Ax=1"),
        ])
    );
}

proptest! {
    /// Any assignments before any command (quoted values, through `env`
    /// with its options or not) leave what the command runs as it was,
    /// and so the verdict on any output.
    #[test]
    fn assignments_change_no_reading(
        command in prop::sample::select(&[
            "go build ./...", "go vet ./... 2>&1", "go test -run TestX ./pkg", "go run .",
            "go generate ./...", "go list ./...", "go list -e ./...", "go mod tidy", "gofmt -l .",
            "tail -3 build.log", "grep -n ERROR app.log | tail -20", "cat a.log", "cargo test",
            "cargo build --release", "npm test", "pytest -q", "python3 -m pytest", "make",
            "make -k all", "ls -la", "echo hi", "go build ./... | tail -5",
            "/usr/local/go/bin/go install ./cmd/x", "go -C app build",
        ][..]),
        before in prop::sample::select(&["", "cd src && ", "set -e; ", "export A=b; "][..]),
        assignments in proptest::collection::vec(
            ("[A-Z_][A-Z0-9_]{0,10}", "[a-zA-Z0-9_./:=,+-]{0,12}|'[^']{0,12}'|\"[^\"\\\\`$]{0,12}\""),
            1..4,
        ),
        env in prop::sample::select(&["", "env ", "env -i ", "/usr/bin/env -u HOME ", "env -- "][..]),
        output in prop::sample::select(&[
            "", "make: *** [Makefile:3: all] Error 1\n",
            "main.go:3:8: no required module provides package example.com/x; to add it:\n\tgo get example.com/x\n",
            "# example.com/pkg\n./main.go:6:14: undefined: x\n", "go: no packages loaded from ./nope\n",
            "a.go:1:1: expected 'package', found 'func'\nc.go\n",
            "main.go:3: running \"stringer\": exit status 1\n", "ok  \texample.com/pkg\t0.01s\n",
        ][..]),
    ) {
        // GOFLAGS may hold `-e`, which makes go list a report.
        prop_assume!(assignments.iter().all(|(name, _)| name != "GOFLAGS"));
        let words: Vec<String> = assignments.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let plain = format!("{before}{command}");
        let assigned = format!("{before}{env}{} {command}", words.join(" "));
        prop_assert_eq!(super::Program::of_command(&assigned), super::Program::of_command(&plain), "{}", assigned);
        let d = Detector::default();
        prop_assert_eq!(
            d.explain_for_command(output, Some(&assigned)),
            d.explain_for_command(output, Some(&plain)),
            "{}", assigned
        );
        // Assignments alone, as a command before it, print nothing.
        let alone = format!("{before}{}; {command}", words.join(" "));
        prop_assert_eq!(super::Program::of_command(&alone), super::Program::of_command(&plain), "{}", alone);
    }
}

proptest! {
    /// Any command and any arguments text are read without a panic.
    #[test]
    fn no_command_panics(command in "\\PC{0,80}", args in "\\PC{0,80}") {
        let _ = file_reader(&command);
        let _ = command_of(&args);
        let _ = command_of(&format!(r#"{{"command":{}}}"#, serde_json::json!(command)));
        let _ = Detector::default().explain_for_command(&args, Some(&command));
    }

    /// A reader's command with quoted words (any text inside the quotes,
    /// metacharacters included) is still a reader's; the same words joined
    /// by a pipe or a list to another command are not.
    #[test]
    fn quoted_words_stay_words(
        reader in prop::sample::select(super::READERS),
        words in proptest::collection::vec("[^'\\n\\r]{0,12}", 0..4),
        op in prop::sample::select(&["|", ";", "&&", "||", ">", "<", "&"][..]),
    ) {
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let command = format!("{reader} -n {} app.log", quoted.join(" "));
        prop_assert_eq!(file_reader(&command), Some(reader), "{}", command);
        let joined = format!("{command} {op} make");
        prop_assert_eq!(file_reader(&joined), None, "{}", joined);
    }

    /// Any text splits into tokens or is refused, without a panic; the
    /// words of plain, single-quoted and double-quoted text come back as
    /// written, and each operator stands between them.
    #[test]
    fn the_shell_split_keeps_words_and_operators(
        any in "\\PC{0,120}",
        words in proptest::collection::vec("[a-zA-Z0-9_./-]{1,8}|'[^']{0,8}'|\"[^\"\\\\`$]{0,8}\"", 1..6),
        ops in proptest::collection::vec(prop::sample::select(&[" ", " | ", "; ", " && ", " || ", "\n"][..]), 5),
    ) {
        let _ = super::shell::tokens(&any);
        let _ = file_reader(&any);
        let mut line = String::new();
        let mut want = Vec::new();
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                line.push_str(ops[i - 1]);
                match ops[i - 1] {
                    " " => {}
                    " | " => want.push(super::shell::Token::Pipe),
                    _ => want.push(super::shell::Token::Separator),
                }
            }
            line.push_str(w);
            let unquoted = w
                .strip_prefix('\'').and_then(|w| w.strip_suffix('\''))
                .or_else(|| w.strip_prefix('"').and_then(|w| w.strip_suffix('"')))
                .unwrap_or(w);
            want.push(super::shell::Token::Word(unquoted.to_owned()));
        }
        prop_assert_eq!(super::shell::tokens(&line), Some(want), "{}", line);
    }

    /// A reader after silent builtins, or piped into readers, is a
    /// reader's command; any other program before it or in its pipeline
    /// makes it not one.
    #[test]
    fn a_readers_list_is_a_readers(
        reader in prop::sample::select(super::READERS),
        later in prop::sample::select(super::READERS),
        before in proptest::collection::vec(
            prop::sample::select(&["cd src", "cd '/w/my app'", "set -e", "export A=b", "true"][..]), 0..3),
        sep in prop::sample::select(&["; ", " && ", " || ", "\n"][..]),
        other in prop::sample::select(&["make", "npm test", "go build ./...", "cd -", "python3 x.py > a.log"][..]),
        at in 0usize..4,
    ) {
        let mut parts: Vec<String> = before.iter().map(|b| b.to_string()).collect();
        parts.push(format!("{reader} -n 5 app.log | {later} -n 2"));
        let command = parts.join(sep);
        prop_assert_eq!(file_reader(&command), Some(reader), "{}", command);
        let at = at.min(parts.len() - 1);
        parts.insert(at, other.to_string());
        let command = parts.join(sep);
        prop_assert_eq!(file_reader(&command), None, "{}", command);
        let piped = format!("{other} 2>&1 | {reader} -n 5");
        prop_assert_eq!(file_reader(&piped), None, "{}", piped);
    }

    /// Whatever a file reader printed, the verdict for its command is
    /// never one of the rules that read the text as a report.
    #[test]
    fn a_readers_output_is_never_a_report(
        opening in prop::sample::select(&[
            "", "Error: ", "Traceback (most recent call last):\n", "{\"error\": \"x\"}",
            "HTTP/1.1 500 Internal Server Error\n", "Permission denied\n", "Build failed: ",
        ][..]),
        text in "\\PC{0,200}",
        closing in prop::sample::select(&[
            "", "\nmake: *** [all] Error 1\n", "\n=== 1 failed in 0.1s ===\n",
            "\n# example.com/pkg\n./main.go:6:14: undefined: x\n",
        ][..]),
        reader in prop::sample::select(super::READERS),
    ) {
        let output = format!("{opening}{text}{closing}");
        let command = format!("{reader} app.log");
        let d = Detector::default();
        let rule = d.explain_for_command(&output, Some(&command));
        prop_assert!(
            matches!(rule, None | Some("framed_error" | "error_tag" | "exit_status" | "user_denied" | "harness_refusal" | "shell_diagnostic")),
            "{:?} for {:?}", rule, output
        );
    }
}
