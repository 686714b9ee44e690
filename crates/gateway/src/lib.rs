//! toolwarden-gateway: a transparent proxy between agent clients and LLM
//! providers (OpenAI Chat Completions and Responses, Anthropic Messages,
//! Google Gemini) that records every tool call and tool result, counts tool
//! failures exactly, and repairs conversations whose calls and results
//! don't pair.
//!
//! Start one in-process:
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolwarden_gateway::{Gateway, RawConfig};
//!
//! let config = RawConfig::from_env(std::env::vars()).validate()?;
//! let gateway = Gateway::start(config).await?;
//! println!("{}", toolwarden_gateway::env_lines(gateway.addr()));
//! gateway.wait().await; // until SIGINT/SIGTERM, then a graceful shutdown
//! # Ok(()) }
//! ```
//!
//! The pieces, following one request: `h1` is the gateway's own
//! HTTP/1.1 for the dialect routes (hyper serves everything else);
//! `routes` picks the provider and dialect; `proxy` collects the body, repairs it if needed, forwards it
//! and streams the answer back through a tee; `observe` turns what it saw
//! into store events (sent to the recorder without blocking) and
//! [`metrics`]; `errors` is the one place errors become the client's
//! dialect's envelope; `admin` serves `/api/*`. Those modules are the
//! crate's own: the public API is what this root re-exports, plus
//! [`metrics`] (the metric names, [`Metrics`] and its typed events) and
//! [`cloud`] (the AWS and Google credentials and SigV4 re-signing).

#![forbid(unsafe_code)]
// The public API is only what is re-exported here, `metrics` and `cloud`:
// anything else is `pub(crate)` at most.
#![warn(unreachable_pub)]

mod admin;
mod admin_error;
mod alerts;
mod balance;
mod body;
mod client_conn;
mod client_io;
pub mod cloud;
mod config;
mod dashboard;
mod env;
mod errors;
#[doc(hidden)]
pub mod fuzzing;
mod h1;
mod http_client;
mod limits;
mod local;
pub mod metrics;
mod observe;
mod otel;
mod pipeline;
mod plain_or_tls;
mod proxy;
mod rebinding;
mod recorder;
mod resolve;
mod retention;
mod routes;
mod server;
mod server_tls;
mod shutdown;
mod sockets;
mod startup;
mod state;
mod stream_stall;
mod upstream;
mod upstream_url;
mod worker;
mod write_limit;
mod write_through;
mod ws;

pub use alerts::{
    AlertFormat, AlertsConfig, RawAlerts, RawRule, Rules, Threshold, rules::RuleName,
};
pub use config::MemoryBounds;
pub use config::{
    AllowedHosts, Config, ConfigError, ConfigErrorKind, DEFAULT_ANTHROPIC_UPSTREAM,
    DEFAULT_GEMINI_UPSTREAM, DEFAULT_LISTEN, DEFAULT_OPENAI_UPSTREAM, MAX_DASHBOARD_TOOL_ROWS,
    RawConfig, RepairMode, Resolve, SETTINGS, Setting, SettingKind, Upstreams, parse_listen,
};
pub use env::{base_url, env_lines, env_lines_for};
pub use local::{LEND_TOKEN_HEADER, LendToken};
pub use metrics::Metrics;
pub use otel::{
    EndpointKind, OtlpCompression, OtlpConfig, OtlpProtocol, RootSampler, Sampler, SamplerEnv,
};
pub use pipeline::REPAIRED_HEADER;
pub use recorder::Recorder;
pub use routes::Provider;
pub use server::{Gateway, RunningGateway};
pub use server_tls::ServerTls;
pub use startup::{GatewayError, GatewayErrorKind};
pub use toolwarden_store::JsonlLog;
pub use upstream_url::Upstream;

/// This crate's README, whose snippet is compiled (and run) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[derive(Debug)]
pub struct ReadmeDoctest;
