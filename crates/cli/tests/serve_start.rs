//! What `toolwarden serve` says as it starts, through the real binary: a
//! configuration that would loop is refused; likely mistakes are warned
//! about (an unknown `TOOLWARDEN_` variable with its nearest setting, an
//! upstream base ending in `/v1`, a dashboard no one can open); log lines
//! to a pipe carry no colour codes, and `--log-format json` writes JSON.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolwarden"));
    // A clean slate: no setting from the environment of the test run.
    for (name, _) in std::env::vars() {
        if name.starts_with("TOOLWARDEN_") || name == "NO_COLOR" || name == "RUST_LOG" {
            c.env_remove(name);
        }
    }
    c
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `serve` with `args` and `env`, reads its stderr until it says it
/// listens (at most 30 s), stops it, and returns the lines.
fn start_lines(args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let mut child = bin()
        .arg("serve")
        .args(["--database", "none"])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolwarden serve");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let done = line.starts_with("toolwarden: listening on");
        lines.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("toolwarden: listening on")),
        "serve did not start: {lines:#?}"
    );
    lines
}

#[test]
fn an_upstream_at_its_own_address_is_refused() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let out = bin()
        .args(["serve", "--database", "none", "--listen", &listen])
        .args(["--openai-upstream", &format!("http://localhost:{port}")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("openai_upstream (http://localhost:") && stderr.contains("own address"),
        "{stderr}"
    );
}

#[test]
fn likely_mistakes_are_warned_about_in_plain_text() {
    let lines = start_lines(
        &[
            "--listen",
            "127.0.0.1:0",
            "--openai-upstream",
            "https://api.openai.com/v1",
        ],
        &[("TOOLWARDEN_LISTN", "127.0.0.1:9999")],
    );
    let text = lines.join("\n");
    assert!(
        text.contains(
            "TOOLWARDEN_LISTN is not a setting and is ignored (did you mean TOOLWARDEN_LISTEN?)"
        ),
        "{text}"
    );
    assert!(text.contains("openai_upstream ends in /v1"), "{text}");
    assert!(!text.contains('\u{1b}'), "colour codes in a pipe: {text:?}");
}

#[test]
fn a_closed_dashboard_is_warned_about_and_json_logs_are_json() {
    let lines = start_lines(&["--listen", "0.0.0.0:0", "--log-format", "json"], &[]);
    let logged: Vec<serde_json::Value> = lines
        .iter()
        .filter(|l| !l.starts_with("toolwarden: listening on"))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let warning = logged
        .iter()
        .find(|v| v["level"] == "WARN")
        .unwrap_or_else(|| panic!("no warning: {logged:#?}"));
    let message = warning["fields"]["message"].as_str().unwrap();
    assert!(message.contains("without admin_token"), "{message}");
    assert!(logged.iter().any(|v| v["level"] == "INFO"), "{logged:#?}");

    let out = bin()
        .args(["stats", "--database", "none"])
        .env("TOOLWARDEN_LOG_FORMAT", "yaml")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("TOOLWARDEN_LOG_FORMAT"), "{stderr}");
}
