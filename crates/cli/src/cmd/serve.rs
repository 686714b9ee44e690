//! `toolwarden serve`: run the gateway until SIGINT / SIGTERM.

use std::path::PathBuf;

use clap::Args;
use toolwarden_gateway::{Gateway, RawConfig};

use super::{CmdError, Outcome};
use crate::config;

/// Flags of `serve`; each overrides `TOOLWARDEN_*` and `toolwarden.toml`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A TOML config file (default: ./toolwarden.toml when it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long)]
    pub listen: Option<String>,
    /// sqlite://PATH, a plain path, postgres://… or `none` [default: sqlite://toolwarden.db].
    #[arg(long)]
    pub database: Option<String>,
    /// Also write every event as a JSON line to this file.
    #[arg(long)]
    pub jsonl: Option<PathBuf>,
    /// Base URL of the OpenAI API [default: https://api.openai.com].
    #[arg(long)]
    pub openai_upstream: Option<String>,
    /// Base URL of the Anthropic API [default: https://api.anthropic.com].
    #[arg(long)]
    pub anthropic_upstream: Option<String>,
    /// Base URL of the Gemini API [default: https://generativelanguage.googleapis.com].
    #[arg(long)]
    pub gemini_upstream: Option<String>,
    /// off | report | fix [default: fix].
    #[arg(long)]
    pub repair: Option<String>,
    /// Upstream connect timeout in milliseconds.
    #[arg(long)]
    pub connect_timeout_ms: Option<u64>,
    /// Time allowed until the upstream's first response byte, in ms (0: none).
    #[arg(long)]
    pub first_byte_timeout_ms: Option<u64>,
    /// Bearer token required by the dashboard and /api/* when listening on a
    /// non-loopback address.
    #[arg(long)]
    pub admin_token: Option<String>,
    /// Proxy worker threads, each with its own event loop [default: one per CPU].
    #[arg(long)]
    pub workers: Option<u64>,
    /// PEM file of extra root certificates trusted for upstream TLS (a
    /// TLS-inspecting egress proxy, a self-hosted upstream).
    #[arg(long)]
    pub upstream_ca: Option<PathBuf>,
    /// Base URL of the ChatGPT backend, for `…/backend-api/codex/responses`
    /// (the Codex CLI signed in with ChatGPT) [default: https://chatgpt.com].
    #[arg(long)]
    pub chatgpt_upstream: Option<String>,
    /// WebSocket mode: the largest message either side may send, in bytes
    /// [default: 16 MiB].
    #[arg(long)]
    pub ws_max_message_bytes: Option<u64>,
    /// Export OpenTelemetry traces (OTLP over HTTP/protobuf) to this
    /// collector, e.g. http://127.0.0.1:4318 [env: OTEL_EXPORTER_OTLP_ENDPOINT].
    #[arg(long)]
    pub otlp_endpoint: Option<String>,
    /// Base URL of an Azure OpenAI resource, e.g. https://myres.openai.azure.com
    /// (no default: Azure requests are refused until it is set).
    #[arg(long)]
    pub azure_upstream: Option<String>,
    /// Base URL of Vertex AI [default: https://{location}-aiplatform.googleapis.com,
    /// location from the request's path; `global`: https://aiplatform.googleapis.com].
    #[arg(long)]
    pub vertex_upstream: Option<String>,
    /// Base URL of Bedrock Runtime [default: https://bedrock-runtime.{region}.amazonaws.com].
    #[arg(long)]
    pub bedrock_upstream: Option<String>,
    /// AWS region of Bedrock, for its default upstream and SigV4 re-signing
    /// [default: AWS_REGION].
    #[arg(long)]
    pub bedrock_region: Option<String>,
    /// Alerts (issue 19).
    #[command(flatten)]
    pub alerts: super::alerts::AlertFlags,
    /// Memory bounds (issue 14).
    #[command(flatten)]
    pub memory: MemoryFlags,
}

/// Memory bounds (issue 14): every cache and queue kept between requests.
#[derive(Debug, Args)]
pub struct MemoryFlags {
    /// SQLite page cache per pooled connection, KiB [default: 2048].
    #[arg(long)]
    pub database_cache_kib: Option<u64>,
    /// Pooled database connections [default: 4].
    #[arg(long)]
    pub database_max_connections: Option<u64>,
    /// Events queued for the recorder, also its backlog while the database
    /// is away; beyond, events are dropped and counted [default: 65536].
    #[arg(long)]
    pub record_queue_capacity: Option<u64>,
    /// Events per database transaction at most [default: 1024].
    #[arg(long)]
    pub record_batch_max: Option<u64>,
    /// How long the recorder waits to fill a batch, ms [default: 50].
    #[arg(long)]
    pub record_flush_ms: Option<u64>,
    /// Recent calls remembered for naming results (and Responses sessions),
    /// each [default: 32768].
    #[arg(long)]
    pub recent_calls_capacity: Option<u64>,
    /// Keys of results already queued, per generation (two) [default: 65536].
    #[arg(long)]
    pub recent_results_capacity: Option<u64>,
}

impl MemoryFlags {
    fn apply(self, raw: &mut RawConfig) {
        raw.database_cache_kib = self.database_cache_kib;
        raw.database_max_connections = self.database_max_connections;
        raw.record_queue_capacity = self.record_queue_capacity;
        raw.record_batch_max = self.record_batch_max;
        raw.record_flush_ms = self.record_flush_ms;
        raw.recent_calls_capacity = self.recent_calls_capacity;
        raw.recent_results_capacity = self.recent_results_capacity;
    }
}

impl ServeArgs {
    fn into_raw(self) -> (Option<PathBuf>, RawConfig) {
        let mut raw = RawConfig::default();
        raw.listen = self.listen;
        raw.database = self.database;
        raw.jsonl = self.jsonl;
        raw.openai_upstream = self.openai_upstream;
        raw.anthropic_upstream = self.anthropic_upstream;
        raw.gemini_upstream = self.gemini_upstream;
        raw.chatgpt_upstream = self.chatgpt_upstream;
        raw.ws_max_message_bytes = self.ws_max_message_bytes;
        raw.repair = self.repair;
        raw.connect_timeout_ms = self.connect_timeout_ms;
        raw.first_byte_timeout_ms = self.first_byte_timeout_ms;
        raw.admin_token = self.admin_token;
        raw.workers = self.workers;
        raw.upstream_ca = self.upstream_ca;
        raw.alerts = self.alerts.into_raw();
        raw.otlp_endpoint = self.otlp_endpoint;
        self.memory.apply(&mut raw);
        raw.azure_upstream = self.azure_upstream;
        raw.vertex_upstream = self.vertex_upstream;
        raw.bedrock_upstream = self.bedrock_upstream;
        raw.bedrock_region = self.bedrock_region;
        (self.config, raw)
    }
}

/// Run the gateway.
pub fn run(args: ServeArgs) -> Result<Outcome, CmdError> {
    let (config_file, flags) = args.into_raw();
    let mut raw = config::file_and_env(config_file.as_deref())?.merge(flags);
    config::database_or_default(&mut raw);
    let config = raw.validate()?;
    // The proxy runs on the gateway's own worker threads; this runtime
    // carries the accept-free rest: the recorder, the store, `/api/*`.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let gateway = Gateway::start(config).await?;
        eprintln!("toolwarden: listening on http://{}", gateway.addr());
        gateway.wait().await;
        Ok::<_, CmdError>(())
    })?;
    Ok(Outcome::Ok)
}
