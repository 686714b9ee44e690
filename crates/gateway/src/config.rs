//! Configuration in two steps: a permissive [`RawConfig`] (every field
//! optional, read from a TOML file, from `TOOLWARDEN_*` environment variables
//! and from command-line flags), merged `flags > env > file > defaults`, then
//! [`RawConfig::validate`] into the [`Config`] the gateway runs with.
//!
//! ```
//! use toolwarden_gateway::{RawConfig, RepairMode};
//!
//! let env = [("TOOLWARDEN_REPAIR".to_string(), "report".to_string())];
//! let file = RawConfig::from_toml_str("listen = \"127.0.0.1:9000\"").unwrap();
//! let config = file.merge(RawConfig::from_env(env.into_iter())).validate().unwrap();
//! assert_eq!(config.listen.port(), 9000);
//! assert_eq!(config.repair, RepairMode::Report);
//! ```

use std::{fmt, net::SocketAddr, path::Path, path::PathBuf, str::FromStr, time::Duration};

use serde::Deserialize;
use toolwarden_wire::{
    Detector,
    detect::{DetectError, DetectorConfig},
};

pub use self::memory::MemoryBounds;
pub use crate::upstream_url::Upstream;

/// The default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// The default OpenAI upstream.
pub const DEFAULT_OPENAI_UPSTREAM: &str = "https://api.openai.com";
/// The default Anthropic upstream.
pub const DEFAULT_ANTHROPIC_UPSTREAM: &str = "https://api.anthropic.com";
/// The default Gemini upstream.
pub const DEFAULT_GEMINI_UPSTREAM: &str = "https://generativelanguage.googleapis.com";
/// The default ChatGPT backend upstream (the Codex CLI signed in with
/// ChatGPT posts to `{base}/backend-api/codex/responses`).
pub const DEFAULT_CHATGPT_UPSTREAM: &str = "https://chatgpt.com";

const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// Non-streaming responses only send headers when the whole answer is
/// ready, which can take minutes: the first-byte timeout is generous.
const DEFAULT_FIRST_BYTE_TIMEOUT_MS: u64 = 600_000;
const DEFAULT_SHUTDOWN_GRACE_MS: u64 = 10_000;
/// Endurance (issue 14): how long shutdown keeps writing recorded events.
const DEFAULT_RECORD_DRAIN_MS: u64 = 5_000;
/// Endurance: a client's time to send a request head (hyper's default too).
const DEFAULT_CLIENT_HEAD_TIMEOUT_MS: u64 = 30_000;
/// Endurance: a client's time to send a request body after its head.
const DEFAULT_CLIENT_BODY_TIMEOUT_MS: u64 = 60_000;
/// Endurance: client connections open at once, over all workers.
const DEFAULT_MAX_CLIENT_CONNECTIONS: u64 = 10_000;
const DEFAULT_MAX_REQUEST_BYTES: u64 = 64 << 20;
const DEFAULT_RESPONSE_PARSE_LIMIT: u64 = 32 << 20;
const MAX_WORKERS: u64 = 256;
/// WebSocket mode: the largest message (after permessage-deflate) either
/// side may send; larger → closed with 1009.
const DEFAULT_WS_MAX_MESSAGE_BYTES: u64 = 16 << 20;

/// Settings as read, every field optional. Field names are the TOML keys;
/// the environment variable is `TOOLWARDEN_` + the upper-cased name.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// `host:port` (or a bare port, on 127.0.0.1).
    pub listen: Option<String>,
    /// `sqlite://PATH`, a plain path, `postgres://…`; `none` disables the database.
    pub database: Option<String>,
    /// Path of the JSONL event log.
    pub jsonl: Option<PathBuf>,
    /// Base URL of the OpenAI API.
    pub openai_upstream: Option<String>,
    /// Base URL of the Anthropic API.
    pub anthropic_upstream: Option<String>,
    /// Base URL of the Gemini API.
    pub gemini_upstream: Option<String>,
    /// `off`, `report` or `fix`.
    pub repair: Option<String>,
    /// Upstream TCP/TLS connect timeout.
    pub connect_timeout_ms: Option<u64>,
    /// Time allowed from sending a request to the response headers; 0 = none.
    pub first_byte_timeout_ms: Option<u64>,
    /// Bearer token for `/api/*` when not bound to loopback.
    pub admin_token: Option<String>,
    /// Extra failure patterns for the content detector.
    pub detector_extra_patterns: Option<Vec<String>>,
    /// Built-in detector patterns to disable.
    pub detector_disable: Option<Vec<String>>,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace_ms: Option<u64>,
    /// Largest request body accepted.
    pub max_request_bytes: Option<u64>,
    /// Largest non-streaming response body copied for parsing.
    pub response_parse_limit: Option<u64>,
    /// Proxy worker threads (each with its own event loop and upstream
    /// connection pool); 0 or unset = one per CPU.
    pub workers: Option<u64>,
    /// A PEM file of extra root certificates trusted for upstream TLS
    /// (beside the built-in webpki roots): a TLS-inspecting egress proxy,
    /// a self-hosted upstream.
    pub upstream_ca: Option<PathBuf>,
    // Endurance (issue 14).
    /// How long shutdown keeps writing the recorded events still queued;
    /// past it, what is left is dropped, counted and reported.
    pub record_drain_ms: Option<u64>,
    /// How long a client may take to send a request head (also the longest
    /// idle wait for the next request on a kept-alive connection).
    pub client_head_timeout_ms: Option<u64>,
    /// How long a client may take to send a request body after its head.
    pub client_body_timeout_ms: Option<u64>,
    /// Client connections open at once; beyond, new ones get a 503 and are closed.
    pub max_client_connections: Option<u64>,
    /// WebSocket mode (`GET /v1/responses` upgrades): the largest message
    /// accepted from either side, decompressed (larger closes the socket
    /// with 1009).
    pub ws_max_message_bytes: Option<u64>,
    /// Base URL of the ChatGPT backend, for `…/backend-api/codex/responses`
    /// (the Codex CLI signed in with ChatGPT).
    pub chatgpt_upstream: Option<String>,
    // --- issue 19: alerts ---
    /// The `[alerts]` table (rules, window, webhooks).
    pub alerts: Option<crate::alerts::RawAlerts>,
    /// OTLP/HTTP collector base URL (`/v1/traces` is appended); also
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub otlp_endpoint: Option<String>,
    /// `k=v,k2=v2` headers for the collector; also `OTEL_EXPORTER_OTLP_HEADERS`.
    pub otlp_headers: Option<String>,
    // --- issue 14: memory bounds (see `config::memory`) ---
    /// SQLite page cache per pooled connection, KiB.
    pub database_cache_kib: Option<u64>,
    /// Pooled database connections.
    pub database_max_connections: Option<u64>,
    /// Events queued for the recorder (also its backlog while the database is away).
    pub record_queue_capacity: Option<u64>,
    /// Events per database transaction at most.
    pub record_batch_max: Option<u64>,
    /// How long the recorder waits to fill a batch.
    pub record_flush_ms: Option<u64>,
    /// Recently seen calls remembered (and Responses sessions), each.
    pub recent_calls_capacity: Option<u64>,
    /// Keys of results already queued, per generation (two generations).
    pub recent_results_capacity: Option<u64>,
    // --- issue 18: cloud endpoints ---
    /// Base URL of an Azure OpenAI resource (`https://myres.openai.azure.com`).
    pub azure_upstream: Option<String>,
    /// Base URL of Vertex AI (default: `https://{location}-aiplatform.googleapis.com`
    /// from the request's path).
    pub vertex_upstream: Option<String>,
    /// Base URL of Bedrock Runtime (default:
    /// `https://bedrock-runtime.{bedrock_region}.amazonaws.com`).
    pub bedrock_upstream: Option<String>,
    /// The AWS region of Bedrock (default: `AWS_REGION`).
    pub bedrock_region: Option<String>,
    /// `AWS_*` variables (region, credentials) read by `from_env`.
    #[serde(skip)]
    aws_env: crate::cloud::aws::AwsEnv,
    /// Problems found while reading the environment, reported by `validate`.
    #[serde(skip)]
    problems: Vec<String>,
}

/// What the gateway does with a request whose tool calls and results don't pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepairMode {
    /// Don't check.
    Off,
    /// Check and record the defects, forward unchanged.
    Report,
    /// Repair, forward the repaired body, record and count the changes.
    #[default]
    Fix,
}

/// The three upstream base URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstreams {
    /// OpenAI (Chat Completions, Responses, and pass-through).
    pub openai: Upstream,
    /// Anthropic Messages.
    pub anthropic: Upstream,
    /// Google Gemini.
    pub gemini: Upstream,
    /// The ChatGPT backend (`…/backend-api/codex/responses`).
    pub chatgpt: Upstream,
}

/// Validated settings the gateway runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to bind.
    pub listen: SocketAddr,
    /// Database URL; `None` = no recording to a database.
    pub database: Option<String>,
    /// JSONL event log path.
    pub jsonl: Option<PathBuf>,
    /// Where each provider's requests go.
    pub upstreams: Upstreams,
    /// Repair mode.
    pub repair: RepairMode,
    /// Upstream connect timeout.
    pub connect_timeout: Duration,
    /// Sending a request → response headers; `None` = wait forever.
    pub first_byte_timeout: Option<Duration>,
    /// Bearer token required for `/api/*` when bound to a non-loopback address.
    pub admin_token: Option<String>,
    /// Extra detector patterns.
    pub detector_extra_patterns: Vec<String>,
    /// Disabled detector patterns.
    pub detector_disable: Vec<String>,
    /// Bounded wait for in-flight requests at shutdown.
    pub shutdown_grace: Duration,
    /// Largest request body accepted (larger → 413).
    pub max_request_bytes: usize,
    /// Largest non-streaming response copied for parsing (the response itself
    /// always passes through whole).
    pub response_parse_limit: usize,
    /// Proxy worker threads (at least 1).
    pub workers: usize,
    /// Extra trusted roots for upstream TLS (DER), from `upstream_ca`.
    pub upstream_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    // Endurance (issue 14).
    /// Bounded time shutdown spends writing the queued records.
    pub record_drain: Duration,
    /// Time allowed for a request head (and for idling between requests).
    pub client_head_timeout: Duration,
    /// Time allowed for a request body after its head.
    pub client_body_timeout: Duration,
    /// Client connections open at once (at least 1).
    pub max_client_connections: usize,
    /// WebSocket mode: the largest message either side may send.
    pub ws_max_message_bytes: usize,
    // --- issue 19: alerts ---
    /// Alert rules and delivery.
    pub alerts: crate::alerts::AlertsConfig,
    /// OpenTelemetry export, when an endpoint is set.
    pub otlp: Option<crate::otel::OtlpConfig>,
    // --- issue 14: memory bounds ---
    /// Every cache and queue kept between requests, bounded.
    pub memory: MemoryBounds,
    // --- issue 18 ---
    /// Azure OpenAI, Vertex AI and Bedrock upstreams, AWS credentials.
    pub cloud: crate::cloud::CloudConfig,
}

/// What went wrong reading or validating settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The config file could not be read.
    Io,
    /// The config file is not valid TOML of the expected shape.
    Toml,
    /// A value is out of range or malformed.
    InvalidValue,
}

/// A configuration error naming the setting and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    kind: ConfigErrorKind,
    message: String,
}

// === impl RawConfig ===

impl RawConfig {
    /// Read a TOML file (unknown keys are an error, so typos don't pass silently).
    pub fn from_toml_file(path: impl AsRef<Path>) -> Result<RawConfig, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError::new(
                ConfigErrorKind::Io,
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        RawConfig::from_toml_str(&text).map_err(|e| ConfigError {
            message: format!("{}: {}", path.display(), e.message),
            ..e
        })
    }

    /// Parse TOML text.
    pub fn from_toml_str(text: &str) -> Result<RawConfig, ConfigError> {
        toml::from_str(text)
            .map_err(|e| ConfigError::new(ConfigErrorKind::Toml, e.to_string().trim_end()))
    }

    /// Read `TOOLWARDEN_*` variables from `(name, value)` pairs (pass
    /// `std::env::vars()`, or a map in tests). Other variables are ignored;
    /// malformed numbers are reported by [`RawConfig::validate`]. List
    /// values are a JSON array or comma-separated.
    pub fn from_env(vars: impl Iterator<Item = (String, String)>) -> RawConfig {
        let mut raw = RawConfig::default();
        for (name, value) in vars {
            let Some(key) = name.strip_prefix("TOOLWARDEN_") else {
                // --- issue 19: OpenTelemetry's standard variables ---
                match name.as_str() {
                    "OTEL_EXPORTER_OTLP_ENDPOINT" => raw.otlp_endpoint = Some(value),
                    "OTEL_EXPORTER_OTLP_HEADERS" => raw.otlp_headers = Some(value),
                    // --- issue 18: AWS region and credentials ---
                    n if crate::cloud::aws::AwsEnv::wants(n) => {
                        raw.aws_env.insert(n.to_string(), value)
                    }
                    _ => {}
                }
                continue;
            };
            let key = key.to_ascii_lowercase();
            match key.as_str() {
                "listen" => raw.listen = Some(value),
                "database" => raw.database = Some(value),
                "jsonl" => raw.jsonl = Some(PathBuf::from(value)),
                "openai_upstream" => raw.openai_upstream = Some(value),
                "anthropic_upstream" => raw.anthropic_upstream = Some(value),
                "gemini_upstream" => raw.gemini_upstream = Some(value),
                "repair" => raw.repair = Some(value),
                "admin_token" => raw.admin_token = Some(value),
                "detector_extra_patterns" => raw.detector_extra_patterns = Some(env_list(&value)),
                "detector_disable" => raw.detector_disable = Some(env_list(&value)),
                "connect_timeout_ms" => raw.connect_timeout_ms = raw.env_number(&name, &value),
                "first_byte_timeout_ms" => {
                    raw.first_byte_timeout_ms = raw.env_number(&name, &value)
                }
                "shutdown_grace_ms" => raw.shutdown_grace_ms = raw.env_number(&name, &value),
                "max_request_bytes" => raw.max_request_bytes = raw.env_number(&name, &value),
                "response_parse_limit" => raw.response_parse_limit = raw.env_number(&name, &value),
                "workers" => raw.workers = raw.env_number(&name, &value),
                "upstream_ca" => raw.upstream_ca = Some(PathBuf::from(value)),
                // Endurance (issue 14).
                "record_drain_ms" => raw.record_drain_ms = raw.env_number(&name, &value),
                "client_head_timeout_ms" => {
                    raw.client_head_timeout_ms = raw.env_number(&name, &value)
                }
                "client_body_timeout_ms" => {
                    raw.client_body_timeout_ms = raw.env_number(&name, &value)
                }
                "max_client_connections" => {
                    raw.max_client_connections = raw.env_number(&name, &value)
                }
                "ws_max_message_bytes" => raw.ws_max_message_bytes = raw.env_number(&name, &value),
                "chatgpt_upstream" => raw.chatgpt_upstream = Some(value),
                // --- issue 19: alerts ---
                k if k.starts_with("alert_") => {
                    let alerts = raw.alerts.get_or_insert_default();
                    alerts.env(k, &value, &mut raw.problems);
                }
                "otlp_endpoint" => raw.otlp_endpoint = Some(value),
                // --- issue 14: memory bounds ---
                "database_cache_kib" => raw.database_cache_kib = raw.env_number(&name, &value),
                "database_max_connections" => {
                    raw.database_max_connections = raw.env_number(&name, &value)
                }
                "record_queue_capacity" => {
                    raw.record_queue_capacity = raw.env_number(&name, &value)
                }
                "record_batch_max" => raw.record_batch_max = raw.env_number(&name, &value),
                "record_flush_ms" => raw.record_flush_ms = raw.env_number(&name, &value),
                "recent_calls_capacity" => {
                    raw.recent_calls_capacity = raw.env_number(&name, &value)
                }
                "recent_results_capacity" => {
                    raw.recent_results_capacity = raw.env_number(&name, &value)
                }
                // --- issue 18: cloud endpoints ---
                "azure_upstream" => raw.azure_upstream = Some(value),
                "vertex_upstream" => raw.vertex_upstream = Some(value),
                "bedrock_upstream" => raw.bedrock_upstream = Some(value),
                "bedrock_region" => raw.bedrock_region = Some(value),
                _ => {}
            }
        }
        raw
    }

    fn env_number(&mut self, name: &str, value: &str) -> Option<u64> {
        match value.trim().parse() {
            Ok(n) => Some(n),
            Err(_) => {
                self.problems.push(format!(
                    "{name}={value:?}: expected a non-negative whole number"
                ));
                None
            }
        }
    }

    /// Field by field, `over`'s value wins where it has one.
    pub fn merge(self, over: RawConfig) -> RawConfig {
        let mut problems = self.problems;
        problems.extend(over.problems);
        RawConfig {
            listen: over.listen.or(self.listen),
            database: over.database.or(self.database),
            jsonl: over.jsonl.or(self.jsonl),
            openai_upstream: over.openai_upstream.or(self.openai_upstream),
            anthropic_upstream: over.anthropic_upstream.or(self.anthropic_upstream),
            gemini_upstream: over.gemini_upstream.or(self.gemini_upstream),
            repair: over.repair.or(self.repair),
            connect_timeout_ms: over.connect_timeout_ms.or(self.connect_timeout_ms),
            first_byte_timeout_ms: over.first_byte_timeout_ms.or(self.first_byte_timeout_ms),
            admin_token: over.admin_token.or(self.admin_token),
            detector_extra_patterns: over
                .detector_extra_patterns
                .or(self.detector_extra_patterns),
            detector_disable: over.detector_disable.or(self.detector_disable),
            shutdown_grace_ms: over.shutdown_grace_ms.or(self.shutdown_grace_ms),
            max_request_bytes: over.max_request_bytes.or(self.max_request_bytes),
            response_parse_limit: over.response_parse_limit.or(self.response_parse_limit),
            workers: over.workers.or(self.workers),
            upstream_ca: over.upstream_ca.or(self.upstream_ca),
            record_drain_ms: over.record_drain_ms.or(self.record_drain_ms),
            client_head_timeout_ms: over.client_head_timeout_ms.or(self.client_head_timeout_ms),
            client_body_timeout_ms: over.client_body_timeout_ms.or(self.client_body_timeout_ms),
            max_client_connections: over.max_client_connections.or(self.max_client_connections),
            ws_max_message_bytes: over.ws_max_message_bytes.or(self.ws_max_message_bytes),
            chatgpt_upstream: over.chatgpt_upstream.or(self.chatgpt_upstream),
            // --- issue 19: alerts ---
            alerts: match (self.alerts, over.alerts) {
                (Some(base), Some(over)) => Some(base.merge(over)),
                (base, over) => over.or(base),
            },
            otlp_endpoint: over.otlp_endpoint.or(self.otlp_endpoint),
            otlp_headers: over.otlp_headers.or(self.otlp_headers),
            // --- issue 14: memory bounds ---
            database_cache_kib: over.database_cache_kib.or(self.database_cache_kib),
            database_max_connections: over
                .database_max_connections
                .or(self.database_max_connections),
            record_queue_capacity: over.record_queue_capacity.or(self.record_queue_capacity),
            record_batch_max: over.record_batch_max.or(self.record_batch_max),
            record_flush_ms: over.record_flush_ms.or(self.record_flush_ms),
            recent_calls_capacity: over.recent_calls_capacity.or(self.recent_calls_capacity),
            recent_results_capacity: over
                .recent_results_capacity
                .or(self.recent_results_capacity),
            azure_upstream: over.azure_upstream.or(self.azure_upstream),
            vertex_upstream: over.vertex_upstream.or(self.vertex_upstream),
            bedrock_upstream: over.bedrock_upstream.or(self.bedrock_upstream),
            bedrock_region: over.bedrock_region.or(self.bedrock_region),
            aws_env: if over.aws_env == crate::cloud::aws::AwsEnv::default() {
                self.aws_env
            } else {
                over.aws_env
            },
            problems,
        }
    }

    /// Check every value and apply defaults. All problems are reported at once.
    pub fn validate(mut self) -> Result<Config, ConfigError> {
        let mut problems = std::mem::take(&mut self.problems);
        // --- issue 14: memory bounds ---
        let memory = memory::validate(&self, &mut problems);
        let listen = parse_listen(self.listen.as_deref().unwrap_or(DEFAULT_LISTEN))
            .map_err(|e| problems.push(e))
            .ok();
        let mut upstream = |name: &str, value: Option<String>, default: &str| {
            let value = value.unwrap_or_else(|| default.to_string());
            Upstream::parse(&value)
                .map_err(|e| problems.push(format!("{name} {value:?}: {e}")))
                .ok()
        };
        let openai = upstream(
            "openai_upstream",
            self.openai_upstream,
            DEFAULT_OPENAI_UPSTREAM,
        );
        let anthropic = upstream(
            "anthropic_upstream",
            self.anthropic_upstream,
            DEFAULT_ANTHROPIC_UPSTREAM,
        );
        let gemini = upstream(
            "gemini_upstream",
            self.gemini_upstream,
            DEFAULT_GEMINI_UPSTREAM,
        );
        let chatgpt = upstream(
            "chatgpt_upstream",
            self.chatgpt_upstream,
            DEFAULT_CHATGPT_UPSTREAM,
        );
        let repair = match self.repair.as_deref().map(str::parse::<RepairMode>) {
            None => Some(RepairMode::default()),
            Some(Ok(mode)) => Some(mode),
            Some(Err(e)) => {
                problems.push(format!("repair: {e}"));
                None
            }
        };
        let connect_timeout_ms = self
            .connect_timeout_ms
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT_MS);
        if connect_timeout_ms == 0 {
            problems.push("connect_timeout_ms must be greater than 0".to_string());
        }
        let first_byte = self
            .first_byte_timeout_ms
            .unwrap_or(DEFAULT_FIRST_BYTE_TIMEOUT_MS);
        let database = self
            .database
            .filter(|d| !matches!(d.trim(), "" | "none" | "off"));
        let admin_token = self.admin_token.filter(|t| !t.is_empty());
        let detector = DetectorConfig {
            extra_patterns: self.detector_extra_patterns.unwrap_or_default(),
            disable: self.detector_disable.unwrap_or_default(),
        };
        if let Err(e) = Detector::new(&detector) {
            problems.push(format!("detector: {e}"));
        }
        let max_request_bytes = self.max_request_bytes.unwrap_or(DEFAULT_MAX_REQUEST_BYTES);
        let response_parse_limit = self
            .response_parse_limit
            .unwrap_or(DEFAULT_RESPONSE_PARSE_LIMIT);
        let ws_max_message_bytes = self
            .ws_max_message_bytes
            .unwrap_or(DEFAULT_WS_MAX_MESSAGE_BYTES);
        if ws_max_message_bytes == 0 {
            problems.push("ws_max_message_bytes must be greater than 0".to_string());
        }
        let workers = match self.workers.unwrap_or(0) {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n if n <= MAX_WORKERS => n as usize,
            n => {
                problems.push(format!("workers {n}: at most {MAX_WORKERS}"));
                1
            }
        };
        let upstream_roots = match &self.upstream_ca {
            Some(path) => read_roots(path).unwrap_or_else(|e| {
                problems.push(format!("upstream_ca {}: {e}", path.display()));
                Vec::new()
            }),
            None => Vec::new(),
        };
        // --- issue 19: alerts ---
        let alerts = self.alerts.unwrap_or_default().validate(&mut problems);
        let otlp = self
            .otlp_endpoint
            .as_deref()
            .map(str::trim)
            .filter(|e| !matches!(*e, "" | "none" | "off"))
            .and_then(|e| {
                crate::otel::OtlpConfig::parse(e, self.otlp_headers.as_deref())
                    .map_err(|e| problems.push(e))
                    .ok()
            });
        // --- issue 18: cloud endpoints ---
        let cloud = crate::cloud::CloudConfig::validate(
            crate::cloud::RawCloud {
                azure_upstream: self.azure_upstream,
                vertex_upstream: self.vertex_upstream,
                bedrock_upstream: self.bedrock_upstream,
                bedrock_region: self.bedrock_region,
                aws_env: self.aws_env,
            },
            &mut problems,
        );
        // Endurance (issue 14): client timeouts and the connection cap.
        let mut positive = |key: &str, value: Option<u64>, default: u64| {
            let v = value.unwrap_or(default);
            if v == 0 {
                problems.push(format!("{key} must be greater than 0"));
            }
            v.max(1)
        };
        let client_head_timeout_ms = positive(
            "client_head_timeout_ms",
            self.client_head_timeout_ms,
            DEFAULT_CLIENT_HEAD_TIMEOUT_MS,
        );
        let client_body_timeout_ms = positive(
            "client_body_timeout_ms",
            self.client_body_timeout_ms,
            DEFAULT_CLIENT_BODY_TIMEOUT_MS,
        );
        let max_client_connections = positive(
            "max_client_connections",
            self.max_client_connections,
            DEFAULT_MAX_CLIENT_CONNECTIONS,
        );
        match (listen, openai, anthropic, gemini, repair, chatgpt) {
            (
                Some(listen),
                Some(openai),
                Some(anthropic),
                Some(gemini),
                Some(repair),
                Some(chatgpt),
            ) if problems.is_empty() => Ok(Config {
                listen,
                database,
                jsonl: self.jsonl,
                upstreams: Upstreams {
                    openai,
                    anthropic,
                    gemini,
                    chatgpt,
                },
                repair,
                connect_timeout: Duration::from_millis(connect_timeout_ms),
                first_byte_timeout: (first_byte > 0).then(|| Duration::from_millis(first_byte)),
                admin_token,
                detector_extra_patterns: detector.extra_patterns,
                detector_disable: detector.disable,
                shutdown_grace: Duration::from_millis(
                    self.shutdown_grace_ms.unwrap_or(DEFAULT_SHUTDOWN_GRACE_MS),
                ),
                max_request_bytes: usize::try_from(max_request_bytes).unwrap_or(usize::MAX),
                response_parse_limit: usize::try_from(response_parse_limit).unwrap_or(usize::MAX),
                workers,
                upstream_roots,
                ws_max_message_bytes: usize::try_from(ws_max_message_bytes).unwrap_or(usize::MAX),
                record_drain: Duration::from_millis(
                    self.record_drain_ms.unwrap_or(DEFAULT_RECORD_DRAIN_MS),
                ),
                client_head_timeout: Duration::from_millis(client_head_timeout_ms),
                client_body_timeout: Duration::from_millis(client_body_timeout_ms),
                max_client_connections: usize::try_from(max_client_connections)
                    .unwrap_or(usize::MAX),
                alerts,
                otlp,
                memory,
                cloud,
            }),
            _ => Err(ConfigError::new(
                ConfigErrorKind::InvalidValue,
                problems.join("; "),
            )),
        }
    }
}

/// The certificates of a PEM file (at least one).
fn read_roots(path: &Path) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, String> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let pem = std::fs::read(path).map_err(|e| e.to_string())?;
    let roots = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not a PEM certificate file ({e})"))?;
    if roots.is_empty() {
        return Err("no certificate in the file".into());
    }
    Ok(roots)
}

fn env_list(value: &str) -> Vec<String> {
    let trimmed = value.trim();
    if trimmed.starts_with('[') {
        if let Ok(list) = serde_json::from_str::<Vec<String>>(trimmed) {
            return list;
        }
    }
    trimmed
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn parse_listen(value: &str) -> Result<SocketAddr, String> {
    let value = value.trim();
    if let Ok(port) = value.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let value = value
        .strip_prefix("localhost:")
        .map_or_else(|| value.to_string(), |port| format!("127.0.0.1:{port}"));
    value.parse().map_err(|_| {
        format!("listen {value:?}: expected host:port such as 127.0.0.1:8080 or [::1]:8080")
    })
}

// === impl Config ===

impl Config {
    /// A config for tests: all three upstreams at `upstream` (e.g. a mock's
    /// `http://127.0.0.1:PORT`), listen on `127.0.0.1:0`, no database, repair
    /// `fix`, alerts off.
    ///
    /// # Panics
    /// If `upstream` is not an http(s) URL (a test bug).
    pub fn for_tests(upstream: &str) -> Config {
        let raw = RawConfig {
            listen: Some("127.0.0.1:0".into()),
            openai_upstream: Some(upstream.into()),
            anthropic_upstream: Some(upstream.into()),
            gemini_upstream: Some(upstream.into()),
            chatgpt_upstream: Some(upstream.into()),
            shutdown_grace_ms: Some(2_000),
            // Tests that want alerts turn them on (issue 19).
            alerts: Some(crate::alerts::RawAlerts {
                enabled: Some(false),
                ..crate::alerts::RawAlerts::default()
            }),
            ..RawConfig::default()
        };
        match raw.validate() {
            Ok(config) => config,
            Err(e) => panic!("Config::for_tests({upstream:?}): {e}"),
        }
    }

    /// The content detector these settings describe.
    pub fn detector(&self) -> Result<Detector, DetectError> {
        Detector::new(&DetectorConfig {
            extra_patterns: self.detector_extra_patterns.clone(),
            disable: self.detector_disable.clone(),
        })
    }

    /// `true` when the listen address is a loopback address.
    pub fn is_loopback(&self) -> bool {
        self.listen.ip().is_loopback()
    }
}

// === impl RepairMode ===

impl RepairMode {
    /// `off`, `report` or `fix`.
    pub fn as_str(self) -> &'static str {
        match self {
            RepairMode::Off => "off",
            RepairMode::Report => "report",
            RepairMode::Fix => "fix",
        }
    }
}

impl FromStr for RepairMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(RepairMode::Off),
            "report" => Ok(RepairMode::Report),
            "fix" => Ok(RepairMode::Fix),
            other => Err(format!("{other:?} is not one of off, report, fix")),
        }
    }
}

impl fmt::Display for RepairMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// === impl ConfigError ===

impl ConfigError {
    fn new(kind: ConfigErrorKind, message: impl Into<String>) -> Self {
        ConfigError {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration: {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

mod memory;

#[cfg(test)]
mod endurance_tests;
#[cfg(test)]
mod tests;
