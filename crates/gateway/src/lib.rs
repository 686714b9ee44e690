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
//! The pieces, following one request: [`h1`] is the gateway's own
//! HTTP/1.1 for the dialect routes (hyper serves everything else);
//! [`routes`] picks the provider and dialect; [`proxy`] collects the body, repairs it if needed, forwards it
//! and streams the answer back through a tee; [`observe`] turns what it saw
//! into store events (sent to the [`Recorder`] without blocking) and
//! [`metrics`]; [`errors`] is the one place errors become the client's
//! dialect's envelope; [`admin`] serves `/api/*`.

#![forbid(unsafe_code)]

pub mod admin;
mod admin_error;
pub mod alerts;
pub mod body;
pub mod cloud;
mod config;
pub mod dashboard;
mod env;
pub mod errors;
pub mod h1;
pub mod http_client;
pub mod limits;
pub mod metrics;
pub mod observe;
pub mod otel;
pub mod pipeline;
pub mod proxy;
pub mod recorder;
pub mod routes;
mod server;
mod shutdown;
mod startup;
pub mod state;
pub mod upstream;
mod upstream_url;
mod worker;
pub mod ws;

pub use alerts::{AlertsConfig, RawAlerts, RawRule};
pub use config::MemoryBounds;
pub use config::{
    Config, ConfigError, ConfigErrorKind, DEFAULT_ANTHROPIC_UPSTREAM, DEFAULT_GEMINI_UPSTREAM,
    DEFAULT_LISTEN, DEFAULT_OPENAI_UPSTREAM, RawConfig, RepairMode, SETTINGS, Setting, SettingKind,
    Upstreams,
};
pub use env::env_lines;
pub use errors::{ProxyError, ProxyErrorKind};
pub use metrics::Metrics;
pub use otel::OtlpConfig;
pub use proxy::REPAIRED_HEADER;
pub use recorder::Recorder;
pub use routes::Provider;
pub use server::{Gateway, RunningGateway};
pub use startup::{GatewayError, GatewayErrorKind};
pub use state::Shared;
pub use upstream_url::Upstream;

/// This crate's README, whose snippet is compiled (and run) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[derive(Debug)]
pub struct ReadmeDoctest;
