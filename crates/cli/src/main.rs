//! `toolwarden`: the command line.
//!
//! - `serve`: the gateway (records to `toolwarden.db` by default);
//! - `stats`: which tools fail, how often, for which model, in which sessions;
//! - `check` / `repair`: read a request body's tool calls, results, failures
//!   and pairing defects, and fix them;
//! - `eval-detector`: precision and recall of the failure detector on a
//!   labelled JSONL file;
//! - `env`: the shell lines that point agent clients at the gateway.

#![forbid(unsafe_code)]

/// jemalloc returns freed memory to the system (a background thread purges
/// pages unused for a second: `.cargo/config.toml`), where glibc's malloc
/// kept the peak of a burst of streams resident for good (issue 14,
/// BENCHMARKS.md "Memory and soak").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[macro_use]
mod output;
mod cmd;
mod config;
mod error;
mod input;
mod terminal;

use std::{path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};
use toolwarden_wire::Dialect;

/// Make LLM tool calls reliable and visible.
#[derive(Debug, Parser)]
#[command(name = "toolwarden", version, about)]
struct Cli {
    /// Log lines on stderr as `text` (coloured on a terminal, unless
    /// `NO_COLOR` is set) or `json` (one object per line, for log
    /// collectors); also `TOOLWARDEN_LOG_FORMAT`. `RUST_LOG` filters them.
    #[arg(long, global = true, value_enum, value_name = "FORMAT")]
    log_format: Option<LogFormat>,
    #[command(subcommand)]
    command: Command,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gateway: a transparent proxy that records tool calls and
    /// failures (to ./toolwarden.db by default) and repairs mismatched
    /// conversations.
    Serve(Box<cmd::serve::ServeArgs>),
    /// Which tools fail, how often, for which model, in which sessions.
    Stats(cmd::stats::StatsArgs),
    /// The alerts firing now and the latest transitions.
    Alerts(cmd::alerts::AlertsArgs),
    /// Print the shell lines that point Claude Code, Codex CLI and the
    /// OpenAI / Anthropic / Gemini SDKs at the gateway.
    Env {
        /// The gateway's address [default: the configured one, else
        /// 127.0.0.1:8080]; given, no config file or variable is read.
        #[arg(long, conflicts_with = "url")]
        listen: Option<String>,
        /// The gateway's URL as the agents' machine reaches it
        /// (`https://gw.internal:8443`: another host, a load balancer).
        #[arg(long)]
        url: Option<String>,
        /// Read the listen address from this config file (as `serve --config`).
        #[arg(long, conflicts_with_all = ["url", "listen"])]
        config: Option<std::path::PathBuf>,
    },
    /// Show the tool calls, results, detected failures and pairing defects
    /// of a request body. Exit 1 when there are defects, 2 on bad input.
    Check {
        /// auto, openai-chat, openai-responses, anthropic, gemini or
        /// bedrock-converse.
        #[arg(long, default_value = "auto")]
        dialect: String,
        /// The model the body goes to, where the rules differ by model:
        /// a Bedrock model id or ARN as the URL names it
        /// (`anthropic.claude-sonnet-4-20250514-v1:0`, `us.anthropic.claude-…`)
        /// [default: the body's own `model` field, where the dialect has one].
        #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
        model: Option<String>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// The config file whose detector settings to judge with (as
        /// `serve --config`) [default: ./toolwarden.toml if present].
        #[arg(long)]
        config: Option<PathBuf>,
        /// The body (a file, or - for standard input).
        file: PathBuf,
    },
    /// Print the body with its call/result pairing repaired (stdout) and a
    /// report of each change (stderr).
    Repair {
        /// auto, openai-chat, openai-responses, anthropic, gemini or
        /// bedrock-converse.
        #[arg(long, default_value = "auto")]
        dialect: String,
        /// The model the body goes to, where the rules differ by model:
        /// a Bedrock model id or ARN as the URL names it
        /// (`anthropic.claude-sonnet-4-20250514-v1:0`, `us.anthropic.claude-…`)
        /// [default: the body's own `model` field, where the dialect has one].
        #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
        model: Option<String>,
        /// The body (a file, or - for standard input).
        file: PathBuf,
    },
    /// Precision, recall and F1 of the failure detector on a labelled JSONL
    /// file (the corpus format: `source`, `provider`, `content`,
    /// `is_error`), beside the naive rule.
    EvalDetector {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// List the misclassified rows, each by its file and line (not with
        /// --leave-one-out; the --json document always has them).
        #[arg(long, conflicts_with = "leave_one_out")]
        mistakes: bool,
        /// An extra failure pattern (a regular expression); repeatable.
        #[arg(long = "pattern")]
        patterns: Vec<String>,
        /// Disable a built-in rule by name; repeatable.
        #[arg(long = "disable")]
        disable: Vec<String>,
        /// Leave-one-source-out: score the detector on each source
        /// repository alone, in turn (its rules are fixed, not fitted to the
        /// other sources: each score is that of a source they were not tuned
        /// on).
        #[arg(long)]
        leave_one_out: bool,
        /// The JSONL files (or - for standard input), evaluated together.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn parse_dialect(s: &str) -> Result<Option<Dialect>, cmd::CmdError> {
    if s == "auto" {
        Ok(None)
    } else {
        s.parse().map(Some).map_err(cmd::CmdError)
    }
}

/// Logs to stderr; `RUST_LOG` filters (default: info for toolwarden, warn
/// for the rest). Text is coloured only on a terminal without `NO_COLOR`
/// (a file, a pipe, journald or `docker logs` get plain lines).
fn init_tracing(format: Option<LogFormat>) -> Result<LogFormat, String> {
    use std::io::IsTerminal;
    let format = match (format, std::env::var("TOOLWARDEN_LOG_FORMAT")) {
        (Some(f), _) => f,
        (None, Ok(v)) => match v.trim() {
            "text" | "" => LogFormat::Text,
            "json" => LogFormat::Json,
            other => {
                return Err(format!(
                    "TOOLWARDEN_LOG_FORMAT: expected text or json, not {other:?}"
                ));
            }
        },
        (None, Err(std::env::VarError::NotPresent)) => LogFormat::Text,
        // As for every `TOOLWARDEN_` variable (`config::environment`),
        // whichever command reads it.
        (None, Err(std::env::VarError::NotUnicode(_))) => {
            return Err("TOOLWARDEN_LOG_FORMAT: the value is not valid UTF-8".to_string());
        }
    };
    // A `RUST_LOG` that does not parse is said to be ignored (it used to
    // be, silently: `toolwarden=verbose` logged as if unset). An empty one
    // (a `${RUST_LOG:-}` template) is unset, not "errors only".
    let set = std::env::var_os("RUST_LOG").is_some_and(|v| !v.to_string_lossy().trim().is_empty());
    let (filter, unread) = match tracing_subscriber::EnvFilter::try_from_default_env() {
        Ok(filter) if set => (filter, None),
        Ok(_) => (tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER), None),
        Err(e) => (
            tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER),
            set.then(|| e.to_string()),
        ),
    };
    // A line that cannot be written (stderr a pipe whose reader went
    // away) is dropped: by default the subscriber reports it with
    // `eprintln!`, which panics the thread that logged, a proxy worker
    // mid-request.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .log_internal_errors(false);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => {
            let colour = std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            builder.with_ansi(colour).try_init()
        }
    };
    if let Some(e) = unread {
        tracing::warn!(
            "RUST_LOG is not a filter ({e}), so it is ignored: logging with {DEFAULT_LOG_FILTER} \
             (e.g. RUST_LOG=toolwarden=debug)"
        );
    }
    Ok(format)
}

/// The log filter when `RUST_LOG` is unset (or unreadable).
const DEFAULT_LOG_FILTER: &str = "warn,toolwarden=info";

fn main() -> ExitCode {
    let cli = Cli::parse();
    let log_format = match init_tracing(cli.log_format) {
        Ok(format) => format,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        // JSON logs: stderr stays one JSON document per line, but for the
        // one line that names the address.
        Command::Serve(args) => cmd::serve::run(*args, log_format == LogFormat::Text),
        Command::Stats(args) => cmd::stats::run(args),
        Command::Alerts(args) => cmd::alerts::run(args),
        Command::Env {
            listen,
            url,
            config,
        } => cmd::env::run(listen, url, config.as_deref()),
        Command::Check {
            dialect,
            model,
            json,
            config,
            file,
        } => parse_dialect(&dialect)
            .and_then(|d| cmd::check::run(d, model.as_deref(), &file, json, config.as_deref())),
        Command::Repair {
            dialect,
            model,
            file,
        } => parse_dialect(&dialect).and_then(|d| cmd::repair::run(d, model.as_deref(), &file)),
        Command::EvalDetector {
            json,
            mistakes,
            patterns,
            disable,
            leave_one_out,
            files,
        } => {
            let config = toolwarden_wire::detect::DetectorConfig {
                extra_patterns: patterns,
                disable,
            };
            if leave_one_out {
                cmd::eval::run_leave_one_out(&files, &config, json)
            } else {
                cmd::eval::run(&files, &config, json, mistakes)
            }
        }
    };
    match result {
        Ok(outcome) => outcome.code(),
        Err(cmd::CmdError(msg)) => {
            errln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}
