//! The command line through the real binary: exit codes, output shapes,
//! bad input.

use std::{
    io::Write,
    process::{Command, Output, Stdio},
};

use toolwarden_testkit::{corpus_or_skip, fixture_path};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolwarden"))
}

fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolwarden");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn check_json_on_a_real_claude_code_conversation() {
    let corpus = corpus_or_skip!();
    let file =
        corpus.join("conversations/conv_anthropic_messages_claudecode_spotter_258c7280.json");
    let out = bin().args(["check", "--json"]).arg(&file).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dialect"], "anthropic");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 186);
    let failed = results.iter().filter(|r| r["failed"] == true).count();
    assert_eq!(failed, 7);
    assert!(
        results
            .iter()
            .filter(|r| r["failed"] == true)
            .all(|r| r["basis"] == "explicit")
    );
    assert!(v["defects"].as_array().unwrap().is_empty());
    for key in ["id", "name"] {
        assert!(v["calls"][0][key].is_string());
    }
    for key in ["call_id", "tool", "failed", "basis", "new"] {
        assert!(!results[0][key].is_null(), "missing {key}");
    }
}

/// `check` judges as `serve` would: with the configured extra patterns,
/// from the environment or the file `--config` names.
#[test]
fn check_uses_the_configured_detector() {
    let body = br#"{"model":"m","messages":[
        {"role":"user","content":"go"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"quota","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"call_1","content":"quota: 0 left"}]}"#;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gw.toml");
    std::fs::write(&config, "detector_extra_patterns = ['^quota: 0\\b']\n").unwrap();
    let failed = |patterns: Option<&str>, config: Option<&std::path::Path>| {
        let mut cmd = bin();
        cmd.args(["check", "--json"]);
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        cmd.arg("-")
            .env_remove("TOOLWARDEN_DETECTOR_EXTRA_PATTERNS");
        if let Some(p) = patterns {
            cmd.env("TOOLWARDEN_DETECTOR_EXTRA_PATTERNS", p);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(body).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["results"][0]["failed"].as_bool().unwrap()
    };
    assert!(!failed(None, None));
    assert!(failed(Some(r"^quota: 0\b"), None));
    assert!(failed(None, Some(&config)));
}

#[test]
fn check_openai_chat_detects_failures_heuristically() {
    let file = fixture_path("conversations/conv_openai_chat_taubench_airline_task13_trial0.json");
    let out = bin().args(["check", "--json"]).arg(&file).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dialect"], "openai-chat");
    let failed: Vec<_> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["failed"] == true)
        .collect();
    assert_eq!(failed.len(), 6);
    assert!(failed.iter().all(|r| r["basis"] == "heuristic"));
}

/// `check` judges a result with the call it answers: a log's last line
/// printed by `tail` is the log's text, the same line printed by `make`
/// is its failure (table and JSON alike).
#[test]
fn check_reads_a_file_readers_output_as_the_files_text() {
    let call = |id: &str, command: &str| {
        serde_json::json!({"id": id, "type": "function", "function": {"name": "shell",
            "arguments": serde_json::json!({"command": command}).to_string()}})
    };
    let result = |id: &str| {
        serde_json::json!({"role": "tool", "tool_call_id": id,
            "content": "make: *** [Makefile:3: all] Error 1\n"})
    };
    let body = serde_json::to_vec(&serde_json::json!({"model": "m", "messages": [
        {"role": "user", "content": "build"},
        {"role": "assistant", "content": null,
            "tool_calls": [call("read", "tail -1 build.log"), call("run", "make")]},
        result("read"), result("run"),
    ]}))
    .unwrap();
    let out = run_with_stdin(&["check", "--json", "--dialect", "openai-chat", "-"], &body);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<_> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["failed"].clone())
        .collect();
    assert_eq!(failed, [false, true], "{v}");
    let out = run_with_stdin(&["check", "--dialect", "openai-chat", "-"], &body);
    let table = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("shell")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(
        rows[0].contains(" ok ") && !rows[0].contains("failure_summary"),
        "{table}"
    );
    assert!(
        rows[1].contains("FAILED") && rows[1].contains("failure_summary"),
        "{table}"
    );
}

#[test]
fn check_exits_1_on_defects_and_repair_fixes_them() {
    let body = br#"{"model":"claude-x","max_tokens":10,"messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"Read","input":{"path":"a"}}]},
        {"role":"user","content":"go on"}]}"#;
    let out = run_with_stdin(&["check", "--json", "-"], body);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let defect = &v["defects"][0];
    assert_eq!(defect["kind"], "missing_result");
    assert_eq!(defect["message_index"], 1);
    assert!(defect["message"].as_str().unwrap().contains("toolu_A"));

    let out = run_with_stdin(&["repair", "-"], body);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 change"));
    let again = run_with_stdin(&["check", "--json", "-"], &out.stdout);
    assert_eq!(
        again.status.code(),
        Some(0),
        "repaired body still has defects: {}",
        String::from_utf8_lossy(&again.stdout)
    );
}

#[test]
fn repair_of_a_clean_body_is_byte_identical() {
    let file = fixture_path("conversations/conv_anthropic_messages_claudecode_spotter_short.json");
    let original = std::fs::read(&file).unwrap();
    let out = bin().arg("repair").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, original);
}

#[test]
fn bad_input_exits_2_with_a_position() {
    let out = run_with_stdin(
        &["check", "--dialect", "anthropic", "-"],
        b"{\"messages\": [ {\"role\": ",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 1"), "{err}");

    // Not JSON: said first, and no `--dialect` suggested (it would not help).
    let out = run_with_stdin(&["check", "-"], b"not json at all");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(": invalid JSON"), "{err}");
    assert!(!err.contains("--dialect"), "{err}");

    let out = run_with_stdin(
        &["check", "--dialect", "openai-chat", "-"],
        br#"{"messages": 7}"#,
    );
    assert_eq!(out.status.code(), Some(2));

    let out = bin()
        .args(["check", "/nonexistent/file.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open"));
}

/// `env` reads a listen address as `serve` does: a bare port and
/// `localhost:PORT` too (it once took only `host:port`, so `eval "$(toolwarden
/// env)"` failed for a gateway configured with a bare port).
#[test]
fn env_reads_the_listen_address_as_serve_does() {
    let dir = tempfile::tempdir().unwrap();
    let env = |listen_flag: Option<&str>, listen_var: Option<&str>| {
        let mut cmd = bin();
        // No `toolwarden.toml` from the working directory, no variable from the caller.
        cmd.current_dir(dir.path())
            .env_remove("TOOLWARDEN_LISTEN")
            .arg("env");
        if let Some(l) = listen_flag {
            cmd.args(["--listen", l]);
        }
        if let Some(l) = listen_var {
            cmd.env("TOOLWARDEN_LISTEN", l);
        }
        cmd.output().unwrap()
    };
    for (flag, var, want) in [
        (Some("9000"), None, "127.0.0.1:9000"),
        (None, Some("9001"), "127.0.0.1:9001"),
        (None, Some("localhost:9002"), "127.0.0.1:9002"),
        (Some("0.0.0.0:9003"), Some("9999"), "127.0.0.1:9003"),
        (Some("[::1]:9004"), None, "[::1]:9004"),
        (None, None, "127.0.0.1:8080"),
    ] {
        let out = env(flag, var);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{flag:?} {var:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("export ANTHROPIC_BASE_URL='http://{want}'\n")),
            "{flag:?} {var:?}: {stdout}"
        );
    }
    let out = env(Some("not-an-address"), None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("expected host:port"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn eval_detector_meets_the_thresholds_on_the_corpus() {
    let corpus = corpus_or_skip!();
    let out = bin()
        .args(["eval-detector", "--json"])
        .arg(corpus.join("tool_results.jsonl"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let overall = &v["detector"]["overall"];
    assert!(overall["precision"].as_f64().unwrap() >= 0.95);
    assert!(overall["recall"].as_f64().unwrap() >= 0.85);
    let anthropic = v["detector"]["by_provider"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["group"] == "anthropic")
        .unwrap();
    assert!(anthropic["precision"].as_f64().unwrap() >= 0.95);
    assert!(anthropic["recall"].as_f64().unwrap() >= 0.85);
}

#[test]
fn eval_detector_leave_one_out_scores_each_source_held_out() {
    let corpus = corpus_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("gemini.jsonl");
    std::fs::write(
        &extra,
        concat!(
            r#"{"source": "github:x/gemini-logs@abc:s.json", "provider": "gemini", "content": "Output: (empty)\nExit Code: 3221225794\nProcess Group PGID: 7", "is_error": true}"#,
            "\n",
            r#"{"source": "github:x/gemini-logs@abc:s.json", "provider": "gemini", "content": "Output: Error: printed\nProcess Group PGID: 7", "is_error": false}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = bin()
        .args(["eval-detector", "--leave-one-out", "--json"])
        .arg(corpus.join("tool_results.jsonl"))
        .arg(&extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let held = v["leave_one_source_out"].as_array().unwrap();
    let sources: Vec<&str> = held.iter().map(|h| h["source"].as_str().unwrap()).collect();
    assert_eq!(
        sources,
        [
            "github:marot/spotter",
            "github:sierra-research/tau-bench",
            "github:x/gemini-logs"
        ]
    );
    let gemini = &held[2]["detector"];
    assert_eq!(
        (gemini["tp"].as_u64(), gemini["tn"].as_u64()),
        (Some(1), Some(1))
    );
    for h in held {
        assert!(h["detector"]["precision"].as_f64().unwrap() >= 0.95, "{h}");
        assert!(h["detector"]["recall"].as_f64().unwrap() >= 0.90, "{h}");
    }
}

#[test]
fn check_and_repair_read_bedrock_converse_bodies() {
    // Two calls, one answered: Bedrock's own 400 text, then a repair.
    let body = br#"{"messages":[
        {"role":"user","content":[{"text":"hi"}]},
        {"role":"assistant","content":[
            {"toolUse":{"toolUseId":"tooluse_A","name":"Read","input":{"path":"a"}}},
            {"toolUse":{"toolUseId":"tooluse_B","name":"Read","input":{"path":"b"}}}]},
        {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_A","content":[{"text":"no such file"}],"status":"error"}}]}],
        "inferenceConfig":{"maxTokens":10}}"#;
    let out = run_with_stdin(&["check", "--json", "-"], body);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dialect"], "bedrock-converse");
    assert_eq!(v["defects"][0]["kind"], "missing_result");
    assert_eq!(
        v["defects"][0]["message"],
        "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_B"
    );
    let out = run_with_stdin(&["repair", "--dialect", "bedrock-converse", "-"], body);
    assert_eq!(out.status.code(), Some(0));
    let again = run_with_stdin(
        &["check", "--json", "--dialect", "converse", "-"],
        &out.stdout,
    );
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
}

/// A variable that is not UTF-8 (another program's, or `PWD` in a
/// directory with such a name) is skipped; a `TOOLWARDEN_` one is an
/// error naming it. Neither panics.
#[cfg(unix)]
#[test]
fn a_variable_that_is_not_utf8_is_skipped_or_named() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"\xff\xfe");
    // `env` without `--listen` reads the variables (with it, none), in a
    // folder without a `toolwarden.toml`.
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(dir.path())
        .arg("env")
        .env("TOOLWARDEN_LISTEN", "9000")
        .env("SOME_OTHER_PROGRAM", bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("9000"));
    let out = bin()
        .current_dir(dir.path())
        .arg("env")
        .env("TOOLWARDEN_LISTEN", "9000")
        .env("TOOLWARDEN_WORKERS", bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("TOOLWARDEN_WORKERS") && !stderr.contains("panicked"),
        "{stderr}"
    );
    // `TOOLWARDEN_LOG_FORMAT` is read by every command, those that read
    // no configuration (`env --listen`) too: the same error.
    let out = bin()
        .current_dir(dir.path())
        .args(["env", "--listen", "9000"])
        .env("TOOLWARDEN_LOG_FORMAT", bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("TOOLWARDEN_LOG_FORMAT") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// A reader that goes away (`| head -1`) ends the output quietly: exit 0,
/// no panic about a broken pipe.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = bin()
        .args(["env", "--listen", "9000"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `--mistakes` lists the rows of one evaluation; with `--leave-one-out`
/// it has nothing to list and is refused, not ignored.
#[test]
fn eval_detector_refuses_mistakes_with_leave_one_out() {
    let out = run_with_stdin(
        &["eval-detector", "--leave-one-out", "--mistakes", "-"],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--mistakes"), "{stderr}");
}

/// `check`'s table writes out the escape sequences a body's model and
/// tool names can hold: the terminal shows them, it does not obey them.
#[test]
fn check_names_cannot_drive_the_terminal() {
    let body = br#"{"model":"m\u001b]0;TITLE\u0007x","messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_\u001b[2J1","type":"function","function":{"name":"Ev\u001b[31mil","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"call_\u001b[2J1","content":"Error: boom"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"Open\u001b[8m","arguments":"{}"}}]}]}"#;
    let out = run_with_stdin(&["check", "--dialect", "openai", "-"], body);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.chars().any(|c| c.is_control() && c != '\n'),
        "{stdout:?}"
    );
    assert!(stdout.contains("Ev\\u{1b}[31mil"), "{stdout}");
    assert!(stdout.contains("m\\u{1b}]0;TITLE\\u{7}x"), "{stdout}");
    assert!(stdout.contains("Open\\u{1b}[8m"), "{stdout}");
}

/// `repair … | head` (a reader that goes away) ends the body quietly:
/// exit 0, and the report of the changes still on stderr.
#[cfg(unix)]
#[test]
fn repair_into_a_closed_pipe_exits_0_with_its_report() {
    // Larger than standard output's buffer, so that the write fails while
    // the command runs (a small body is written at exit, unchecked).
    let long = "x".repeat(200_000);
    let body = format!(
        r#"{{"model":"claude-x","max_tokens":10,"messages":[
        {{"role":"user","content":"{long}"}},
        {{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_A","name":"Read","input":{{"path":"a"}}}}]}},
        {{"role":"user","content":"go on"}}]}}"#
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.json");
    std::fs::write(&file, body).unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = bin()
        .arg("repair")
        .arg(&file)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("1 change"), "{stderr}");
}

/// `repair`'s report names the calls it answered by their ids, chosen
/// by the client: written out on stderr, as `check` writes them.
#[test]
fn repair_report_cannot_drive_the_terminal() {
    let body = br#"{"model":"claude-x","max_tokens":10,"messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":[{"type":"tool_use","id":"tu_\u001b]0;TITLE\u0007\u001b[2J","name":"Read","input":{}}]},
        {"role":"user","content":"go on"}]}"#;
    let out = run_with_stdin(&["repair", "-"], body);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("1 change"), "{stderr}");
    assert!(
        !stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{stderr:?}"
    );
    assert!(
        stderr.contains("tu_\\u{1b}]0;TITLE\\u{7}\\u{1b}[2J"),
        "{stderr}"
    );
}

/// Standard error read by a reader that went away (`2>&1 | head -1`):
/// the report and an error message end there, no panic (exit 101).
#[cfg(unix)]
#[test]
fn a_closed_stderr_ends_the_report_quietly() {
    let body = br#"{"model":"claude-x","max_tokens":10,"messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"Read","input":{}}]},
        {"role":"user","content":"go on"}]}"#;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.json");
    std::fs::write(&file, body).unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        bin()
            .args(args)
            .stdout(Stdio::null())
            .stderr(writer)
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(run(&["repair".as_ref(), file.as_os_str()]), Some(0));
    let missing = dir.path().join("missing.json");
    assert_eq!(run(&["repair".as_ref(), missing.as_os_str()]), Some(2));
}

/// `eval-detector` with several files names the file and its own line:
/// of a bad row, and of each misclassified row (`--mistakes`, `--json`).
#[test]
fn eval_detector_names_the_file_and_line_of_each_row() {
    let dir = tempfile::tempdir().unwrap();
    let row = |content: &str, is_error: &str| {
        format!(
            r#"{{"source":"github.com/a/b","provider":"openai","content":"{content}","is_error":{is_error}}}"#
        )
    };
    let ok = row("all good", "false");
    let write = |name: &str, lines: &[String]| {
        let path = dir.path().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    };
    let e1 = write("e1.jsonl", &[ok.clone(), ok.clone()]);
    let e2 = write("e2.jsonl", &[ok.clone(), row("fine", "\"yes\"")]);
    // A failure the detector cannot see: a mistake, on e3's line 2.
    let e3 = write("e3.jsonl", &[ok.clone(), row("all good", "true")]);

    let out = bin()
        .arg("eval-detector")
        .arg(&e1)
        .arg(&e2)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}: line 2: ", e2.display())),
        "{stderr}"
    );

    let out = bin()
        .args(["eval-detector", "--mistakes"])
        .arg(&e1)
        .arg(&e3)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!("{} line     2 openai", e3.display())),
        "{stdout}"
    );

    let out = bin()
        .args(["eval-detector", "--json", "--mistakes"])
        .arg(&e1)
        .arg(&e3)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["detector"]["mistakes"][0];
    assert_eq!(m["line"], 2, "{v}");
    assert_eq!(m["file"], e3.display().to_string(), "{v}");
    // The naive rule misses the same row: named the same way, not by its
    // line in the files taken together (4).
    let m = &v["naive"]["mistakes"][0];
    assert_eq!(m["line"], 2, "{v}");
    assert_eq!(m["file"], e3.display().to_string(), "{v}");
}

/// `stats --tool` naming a tool with no calls says which tools have some;
/// `--json` stays the plain document.
#[test]
fn stats_for_an_unknown_tool_names_the_recorded_ones() {
    use toolwarden_store::{Event, NoopObserver, Recorder, RecorderOptions, Store, ToolCallRecord};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Now: `stats` reads the last 24 hours by default.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    runtime.block_on(async {
        let store = Store::open(&url).await.unwrap();
        let rec = Recorder::start(
            Some(store.clone()),
            RecorderOptions {
                queue_capacity: 16,
                batch_max: 16,
                flush_interval: std::time::Duration::from_millis(1),
                jsonl: None,
            },
            std::sync::Arc::new(NoopObserver),
        );
        for (i, tool) in ["read_file", "Bash"].into_iter().enumerate() {
            rec.record(Event::ToolCall(ToolCallRecord {
                threaded: false,
                request_id: "r".into(),
                session_id: "s".into(),
                provider: "anthropic".into(),
                model: None,
                response_id: None,
                dialect: None,
                call_index: i as u32,
                call_id: format!("c{i}"),
                tool: tool.into(),
                arguments_bytes: 1,
                at_ms: now_ms,
                turn: None,
            }));
        }
        rec.shutdown().await;
        store.close().await;
    });
    let out = bin()
        .args(["stats", "--database", &url, "--tool", "read_fil"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no tool calls recorded"), "{text}");
    assert!(
        text.contains("no call of a tool named \"read_fil\" here; tools with calls: "),
        "{text}"
    );
    assert!(
        text.contains("read_file") && text.contains("Bash"),
        "{text}"
    );

    let out = bin()
        .args(["stats", "--json", "--database", &url, "--tool", "read_fil"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["tools"], serde_json::json!([]));

    // An empty filter is none, as `/api/stats?tool=&model=&session=`
    // reads it: it matched no call.
    let all = bin()
        .args(["stats", "--json", "--database", &url])
        .output()
        .unwrap();
    let empty = bin()
        .args(["stats", "--json", "--database", &url])
        .args(["--tool", "", "--model", "", "--session", ""])
        .output()
        .unwrap();
    assert_eq!(empty.status.code(), Some(0), "{empty:?}");
    let all: serde_json::Value = serde_json::from_slice(&all.stdout).unwrap();
    let empty: serde_json::Value = serde_json::from_slice(&empty.stdout).unwrap();
    assert_eq!(all["totals"]["calls"], 2, "{all}");
    assert_eq!(empty, all);

    // A tool that has calls: no hint.
    let out = bin()
        .args(["stats", "--database", &url, "--tool", "Bash"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("no call of a tool named"), "{text}");
}

/// `stats --by model` sums each model over every (model, tool) pair, not
/// over the 200 the report lists: a model whose calls spread over more
/// tools was reported with fewer calls than the database holds.
#[test]
fn stats_by_model_counts_every_pair() {
    use toolwarden_store::{Event, NoopObserver, Recorder, RecorderOptions, Store, ToolCallRecord};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let pairs = toolwarden_store::TOOL_ROWS + 5;
    runtime.block_on(async {
        let store = Store::open(&url).await.unwrap();
        let rec = Recorder::start(
            Some(store.clone()),
            RecorderOptions {
                queue_capacity: 4096,
                batch_max: 256,
                flush_interval: std::time::Duration::from_millis(1),
                jsonl: None,
            },
            std::sync::Arc::new(NoopObserver),
        );
        for i in 0..pairs {
            rec.record(Event::ToolCall(ToolCallRecord {
                threaded: false,
                request_id: "r".into(),
                session_id: "s".into(),
                provider: "anthropic".into(),
                model: Some("wide-model".into()),
                response_id: None,
                dialect: None,
                call_index: i as u32,
                call_id: format!("c{i}"),
                tool: format!("tool_{i:03}"),
                arguments_bytes: 1,
                at_ms: now_ms,
                turn: None,
            }));
        }
        rec.shutdown().await;
        store.close().await;
    });
    let out = bin()
        .args(["stats", "--database", &url, "--by", "model"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("wide-model "))
        .unwrap_or_else(|| panic!("no model row: {text}"));
    let calls: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(calls[1], pairs.to_string(), "{row}");
    assert!(text.contains("… and 5 more (model, tool) pairs"), "{text}");
}

/// `env --listen ADDR` needs nothing from the configuration: a
/// `toolwarden.toml` in the working directory that does not parse (another
/// program's, one half-written) made it fail, as did a bad `TOOLWARDEN_`
/// variable. Without `--listen` the file is read, and its error named;
/// `--config` with `--listen` is refused as `--config` with `--url` is.
#[test]
fn env_with_a_listen_address_reads_no_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("toolwarden.toml"), "listen = [\n").unwrap();
    let env = |args: &[&str]| {
        bin()
            .current_dir(dir.path())
            .env_remove("TOOLWARDEN_LISTEN")
            .env("TOOLWARDEN_WORKERS", "many")
            .arg("env")
            .args(args)
            .output()
            .unwrap()
    };
    let out = env(&["--listen", "9000"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("export ANTHROPIC_BASE_URL='http://127.0.0.1:9000'\n"),
        "{stdout}"
    );
    let out = env(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("toolwarden.toml"), "{stderr}");
    assert!(out.stdout.is_empty());
    let out = env(&["--listen", "9000", "--config", "toolwarden.toml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

/// `eval-detector` bounded each file (256 MiB) but not the files
/// together: two files just under the bound were read whole, then copied
/// into one body. Their sizes are now refused before anything is read
/// (sparse files here: nothing is written to the disk).
#[test]
fn eval_detector_bounds_its_files_together() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = ["a.jsonl", "b.jsonl"]
        .iter()
        .map(|name| {
            let path = dir.path().join(name);
            let file = std::fs::File::create(&path).unwrap();
            file.set_len(129 << 20).unwrap();
            path
        })
        .collect();
    let out = bin().arg("eval-detector").args(&files).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("reads at most 268435456 bytes of its files together"),
        "{stderr}"
    );
    assert!(
        stderr.contains("a.jsonl") && stderr.contains("b.jsonl"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// `serve --listen 0` takes a free port at start, which `env` cannot know:
/// lines pointing every agent at `127.0.0.1:0` reach nothing, so `env`
/// says so instead of printing them.
#[test]
fn env_for_port_zero_asks_for_the_real_port() {
    for listen in ["0", "127.0.0.1:0", "[::]:0"] {
        let out = bin().args(["env", "--listen", listen]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{listen}: {stderr}");
        assert!(out.stdout.is_empty(), "{listen}");
        assert!(stderr.contains("port 0"), "{listen}: {stderr}");
    }
    let out = bin().args(["env", "--listen", "9000"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// `stats --limit 0` is refused: the store reads 0 as its default, so
/// it printed 20 rows of sessions and of failures.
#[test]
fn stats_limit_zero_is_refused() {
    let out = bin()
        .args(["stats", "--database", "none-such.db", "--limit", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--limit") && stderr.contains("at least 1"),
        "{stderr}"
    );
}

/// A database password that was not percent-encoded (`/`, `?` or `#` in
/// it) is hidden in the error that names the URL, as an encoded one is:
/// `stats` (and `serve`) printed it whole.
#[test]
fn a_database_password_is_hidden_when_the_url_does_not_parse() {
    for url in [
        "postgres://u:Pa/Ss3cret@127.0.0.1:1/db",
        "postgres://u:Pa?Ss3cret@127.0.0.1:1/db",
        "postgres://u:Pa#Ss3cret@127.0.0.1:1/db",
    ] {
        for cmd in ["stats", "alerts"] {
            let out = bin().args([cmd, "--database", url]).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("postgres://u:***@"), "{stderr}");
            assert!(!stderr.contains("Ss3cret"), "{cmd} {url}: {stderr}");
        }
    }
}

/// `alerts --limit 0` is refused, as `stats --limit 0` is: it read no
/// transition and reported "none" whatever the database held.
#[test]
fn alerts_limit_zero_is_refused() {
    let out = bin()
        .args(["alerts", "--database", "none-such.db", "--limit", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--limit") && stderr.contains("at least 1"),
        "{stderr}"
    );
}

/// Regression: `check` and `repair` had no `--model`, so a Bedrock
/// Converse body (whose model is in the URL, not the body) was judged by
/// the rules every model shares: a Claude prefill ending in whitespace,
/// which Bedrock refuses for Claude ("final assistant content cannot end
/// with trailing whitespace", aws/aws-sdk-net#4015), was neither found nor
/// fixed. With the model named it is; without, or for another model, not.
#[test]
fn model_names_the_rules_a_converse_body_is_judged_by() {
    let body = br#"{"messages":[
        {"role":"user","content":[{"text":"Answer in JSON."}]},
        {"role":"assistant","content":[{"text":"{\n  "}]}],
        "inferenceConfig":{"maxTokens":10}}"#;
    let claude = "us.anthropic.claude-sonnet-4-20250514-v1:0";
    let out = run_with_stdin(&["check", "--json", "--model", claude, "-"], body);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["model"], claude);
    assert_eq!(v["defects"][0]["kind"], "trailing_whitespace");
    assert_eq!(
        v["defects"][0]["message"],
        "The model returned the following errors: messages: final assistant content cannot end with trailing whitespace"
    );
    for other in [&["--model", "amazon.nova-pro-v1:0"][..], &[]] {
        let args = [&["check", "--json"], other, &["-"]].concat();
        let out = run_with_stdin(&args, body);
        assert_eq!(out.status.code(), Some(0), "{other:?}: {out:?}");
        let out = run_with_stdin(&[&["repair"], other, &["-"]].concat(), body);
        assert_eq!(out.stdout, body, "{other:?}");
    }
    let out = run_with_stdin(&["repair", "--model", claude, "-"], body);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let fixed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(fixed["messages"][1]["content"][0]["text"], "{");
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(report.contains("1 change(s)"), "{report}");
    let again = run_with_stdin(&["check", "--model", claude, "-"], &out.stdout);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
}

/// The model a body names itself is read by `check` (an Anthropic body's
/// `model`), and `--model` is refused empty.
#[test]
fn check_reads_the_bodys_own_model_and_refuses_an_empty_one() {
    let body = br#"{"model":"claude-sonnet-4-5","max_tokens":10,
        "messages":[{"role":"user","content":"hi"}]}"#;
    let out = run_with_stdin(&["check", "--json", "-"], body);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["model"], "claude-sonnet-4-5");
    let out = run_with_stdin(&["repair", "--model", "", "-"], body);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--model"), "{err}");
}
