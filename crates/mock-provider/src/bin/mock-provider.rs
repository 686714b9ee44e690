//! `mock-provider --listen ADDR [--api-key KEY] [--aws-key ID:SECRET [--aws-region REGION] [--aws-session-token TOKEN]] [--google-token TOKEN]
//! [--calls N] [--no-validate] [--stream-tail-ms MS] [--agent-scripts FILE --agent-log FILE] [--script FILE]`:
//! the mock provider as a process (for the SDK, agent and Codex CLI
//! end-to-end tests). Prints `listening on http://ADDR` once bound, then
//! serves until killed.
//!
//! - agent mode (`--agent-scripts`, `--agent-log`): see
//!   [`toolwarden_mock_provider::AgentMode`].
//! - `--script FILE`: each non-empty line is a JSON array of one response's
//!   stream events, queued in order ([`MockProvider::push_response`]): the
//!   next model requests (HTTP streaming or WebSocket turns) get them instead
//!   of the default reply.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, sync::Arc};

use toolwarden_mock_provider::{AgentMode, MockOptions, MockProvider, Scripted};

const USAGE: &str = "usage: mock-provider [--listen ADDR] [--api-key KEY] [--aws-key ID:SECRET [--aws-region REGION] [--aws-session-token TOKEN]] [--bedrock-api-key KEY] [--google-token TOKEN] [--cut-stream MODEL:N] [--calls N] [--no-validate] \
     [--stream-tail-ms MS] [--agent-scripts FILE --agent-log FILE] [--script FILE]";

fn parse(args: &[String]) -> Result<(MockOptions, Vec<Scripted>), String> {
    let mut opts = MockOptions::default();
    let mut script = Vec::new();
    let (mut scripts, mut log): (Option<PathBuf>, Option<PathBuf>) = (None, None);
    let (mut aws_region, mut aws_token) = (None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => {
                let v = value()?;
                opts.listen = v
                    .parse::<SocketAddr>()
                    .map_err(|e| format!("--listen {v}: {e}"))?;
            }
            "--api-key" => opts.api_key = Some(value()?.clone()),
            // Issue 18: verify Bedrock SigV4 signatures with this test key.
            "--aws-key" => {
                let v = value()?;
                let (id, secret) = v
                    .split_once(':')
                    .ok_or_else(|| format!("--aws-key {v}: expected ACCESS_KEY_ID:SECRET"))?;
                opts.aws_key = Some(toolwarden_mock_provider::AwsTestKey::new(id, secret));
            }
            // Bedrock API keys: this one is accepted as `Authorization:
            // Bearer` instead of a signature.
            "--bedrock-api-key" => opts.bedrock_api_key = Some(value()?.clone()),
            // The region Bedrock signatures must be scoped to (default
            // us-east-1) and the session token they must carry (default
            // none), with `--aws-key`.
            "--aws-region" => aws_region = Some(value()?.clone()),
            "--aws-session-token" => aws_token = Some(value()?.clone()),
            // Issue 18: serve Google's token endpoint (the bundled test
            // service account) and require its token on Vertex routes.
            "--google-token" => {
                opts.google_key = Some(toolwarden_mock_provider::GoogleTestKey::test(value()?));
            }
            // Issue 18: this model's streams are cut midway (N whole
            // chunks, half of the next, a reset).
            "--cut-stream" => {
                let v = value()?;
                let cut = v
                    .rsplit_once(':')
                    .and_then(|(model, n)| Some((model.to_string(), n.parse().ok()?)))
                    .ok_or_else(|| format!("--cut-stream {v}: expected MODEL:N"))?;
                opts.cut_stream = Some(cut);
            }
            "--no-validate" => opts.validate = false,
            "--script" => script = read_script(value()?)?,
            "--calls" => {
                let v = value()?;
                opts.calls_per_reply = v.parse().map_err(|e| format!("--calls {v}: {e}"))?;
            }
            "--stream-tail-ms" => {
                let v = value()?;
                let ms: u64 = v
                    .parse()
                    .map_err(|e| format!("--stream-tail-ms {v}: {e}"))?;
                opts.stream_tail = std::time::Duration::from_millis(ms);
            }
            "--agent-scripts" => scripts = Some(value()?.into()),
            "--agent-log" => log = Some(value()?.into()),
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    match (
        &mut opts.aws_key,
        aws_region.is_some() || aws_token.is_some(),
    ) {
        (Some(key), _) => {
            key.region = aws_region.unwrap_or_else(|| key.region.clone());
            key.session_token = aws_token;
        }
        (None, true) => {
            return Err(format!(
                "--aws-region and --aws-session-token need --aws-key\n{USAGE}"
            ));
        }
        (None, false) => {}
    }
    match (scripts, log) {
        (None, None) => {}
        (Some(scripts), Some(log)) => {
            let agent = AgentMode::open(&scripts, &log)
                .map_err(|e| format!("agent mode ({}): {e}", scripts.display()))?;
            opts.agent = Some(Arc::new(agent));
        }
        _ => {
            return Err(format!(
                "--agent-scripts and --agent-log go together\n{USAGE}"
            ));
        }
    }
    Ok((opts, script))
}

/// One scripted response per non-empty line: a JSON array of events.
fn read_script(path: &str) -> Result<Vec<Scripted>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--script {path}: {e}"))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let events: Vec<serde_json::Value> = serde_json::from_str(line)
                .map_err(|e| format!("--script {path}: not a JSON array of events: {e}"))?;
            let lines: Vec<String> = events.iter().map(|e| e.to_string()).collect();
            Ok(Scripted::sse_from_json_lines(&lines.join("\n"), true))
        })
        .collect()
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (opts, script) = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let listen = opts.listen;
    let mock = match MockProvider::try_start(opts).await {
        Ok(m) => m,
        Err(e) => {
            eprintln!("mock-provider: cannot listen on {listen}: {e}");
            return ExitCode::FAILURE;
        }
    };
    for response in script {
        mock.push_response(response);
    }
    println!("listening on {}", mock.base_url());
    let _ = tokio::signal::ctrl_c().await;
    mock.shutdown();
    ExitCode::SUCCESS
}
