//! `mock-provider --listen ADDR [--api-key KEY] [--calls N] [--no-validate]
//! [--stream-tail-ms MS] [--agent-scripts FILE --agent-log FILE]`: the mock provider as a process
//! (for the SDK and agent end-to-end tests; agent mode: see
//! [`toolwarden_mock_provider::AgentMode`]). Prints
//! `listening on http://ADDR` once bound, then serves until killed.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, sync::Arc};

use toolwarden_mock_provider::{AgentMode, MockOptions, MockProvider};

const USAGE: &str = "usage: mock-provider [--listen ADDR] [--api-key KEY] [--calls N] [--no-validate] \
     [--stream-tail-ms MS] [--agent-scripts FILE --agent-log FILE]";

fn parse(args: &[String]) -> Result<MockOptions, String> {
    let mut opts = MockOptions::default();
    let (mut scripts, mut log): (Option<PathBuf>, Option<PathBuf>) = (None, None);
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
            "--no-validate" => opts.validate = false,
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
    Ok(opts)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse(&args) {
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
    println!("listening on {}", mock.base_url());
    let _ = tokio::signal::ctrl_c().await;
    mock.shutdown();
    ExitCode::SUCCESS
}
