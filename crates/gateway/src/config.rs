//! Configuration in two steps: a permissive [`RawConfig`] (every field
//! optional, read from a TOML file, from `TOOLWARDEN_*` environment variables
//! and from command-line flags), merged `flags > env > file > defaults`, then
//! [`RawConfig::validate`] into the [`Config`] the gateway runs with.
//!
//! - `config/settings.rs`: the field list, once ([`SETTINGS`]): TOML keys,
//!   variables, flags and the README's table come from it;
//! - `config/read.rs`: reading TOML, the environment and flags; merging;
//! - `config/validate.rs`: every check and default, in one function;
//! - `config/memory.rs`: the memory bounds' part of validation.
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

use std::{fmt, net::SocketAddr, str::FromStr, time::Duration};

use toolwarden_store::JsonlLog;
use toolwarden_wire::{
    Detector,
    detect::{DetectError, DetectorConfig},
};

pub use self::memory::MemoryBounds;
pub use self::settings::{RawConfig, SETTINGS, Setting, SettingKind};
pub use self::validate::{MAX_DASHBOARD_TOOL_ROWS, parse_listen};
pub use crate::local::AllowedHosts;
pub use crate::resolve::Resolve;
pub(crate) use crate::upstream_url::Upstream;

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
pub(crate) const DEFAULT_CHATGPT_UPSTREAM: &str = "https://chatgpt.com";

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

/// Validated settings the gateway runs with. Its `Debug` hides what can
/// carry a credential (`admin_token`, the database URL's password, the
/// alert webhooks' paths, the OTLP headers' values).
#[derive(Clone)]
pub struct Config {
    /// Address to bind.
    pub listen: SocketAddr,
    /// HTTPS on the listener (`tls_cert`, `tls_key`); `None`: plain HTTP.
    pub tls: Option<crate::server_tls::ServerTls>,
    /// Database URL; `None` = no recording to a database.
    pub database: Option<String>,
    /// The JSONL event log: its path and bound.
    pub jsonl: Option<JsonlLog>,
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
    /// Host names answered besides the loopback ones when bound to a
    /// loopback address ([`Config::host_guard`]).
    pub allowed_hosts: AllowedHosts,
    /// Extra detector patterns.
    pub detector_extra_patterns: Vec<String>,
    /// Disabled detector patterns.
    pub detector_disable: Vec<String>,
    /// Bounded wait for in-flight requests at shutdown.
    pub shutdown_grace: Duration,
    /// Largest request body accepted (larger → 413).
    pub max_request_bytes: usize,
    /// Request bodies held in memory at once, over all connections, bytes
    /// (`crate::limits::body_budget`).
    pub max_buffered_request_bytes: usize,
    /// Largest non-streaming response copied for parsing, and most a
    /// stream's parse keeps of its calls and arguments (the response itself
    /// always passes through whole).
    pub response_parse_limit: usize,
    /// Response bodies copied for parsing, what streams' parses hold, and
    /// upstream WebSocket messages, held at once, over all connections,
    /// bytes (at least `response_parse_limit` and `ws_max_message_bytes`).
    pub max_buffered_response_bytes: usize,
    /// Proxy worker threads (at least 1).
    pub workers: usize,
    /// Extra trusted roots for upstream TLS (DER), from `upstream_ca`.
    pub upstream_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// Upstream `HOST:PORT`s reached at a fixed address instead of looking
    /// the name up, as curl's `--resolve` (setting `resolve`): by every
    /// upstream connection the gateway makes — the fast path's, every
    /// WebSocket's, hyper's client (HTTP/1.1 and HTTP/2, the cloud routes,
    /// Google's token endpoints, OTLP) — with TLS still checked for the
    /// name; and by the AWS credential chain's own client (`cloud::aws::client`).
    pub resolve: Resolve,
    // Endurance (issue 14).
    /// Bounded time shutdown spends writing the queued records.
    pub record_drain: Duration,
    /// What is recorded is deleted once this old; `None` keeps everything.
    pub retention: Option<Duration>,
    /// Time allowed for a request head (and for idling between requests).
    pub client_head_timeout: Duration,
    /// Time allowed for a request body after its head.
    pub client_body_timeout: Duration,
    /// Client connections open at once (at least 1).
    pub max_client_connections: usize,
    /// Tools (and model × tool pairs) `/api/stats` lists at most (1–10000).
    pub dashboard_tool_rows: usize,
    /// WebSocket mode: the largest message either side may send.
    pub ws_max_message_bytes: usize,
    /// WebSocket mode: how long a side the gateway closes has to answer
    /// the close before its connection is dropped (and a close's send).
    pub ws_close_wait: Duration,
    /// WebSocket mode: at shutdown once the grace period is over, how long
    /// a socket's close handshakes may take (at most `ws_close_wait`).
    pub ws_forced_close_wait: Duration,
    // --- issue 19: alerts ---
    /// Alert rules and delivery.
    pub alerts: alerts::AlertsConfig,
    /// OpenTelemetry export, when an endpoint is set.
    pub otlp: Option<otlp::OtlpConfig>,
    // --- issue 14: memory bounds ---
    /// Every cache and queue kept between requests, bounded.
    pub memory: MemoryBounds,
    // --- issue 18 ---
    /// Azure OpenAI, Vertex AI and Bedrock upstreams, AWS credentials.
    pub cloud: crate::cloud::CloudConfig,
    /// What looks like a mistake without stopping the start (a base URL
    /// ending in `/v1`, a dashboard no one can open, an unknown
    /// `TOOLWARDEN_` variable): logged when the gateway starts.
    pub warnings: Vec<String>,
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
            alerts: Some(alerts::RawAlerts {
                enabled: Some(false),
                ..alerts::RawAlerts::default()
            }),
            ..RawConfig::default()
        };
        match raw.validate() {
            Ok(config) => config,
            Err(e) => panic!("Config::for_tests({upstream:?}): {e}"),
        }
    }

    /// The proxy workers started when `workers` is not set, on this
    /// machine, recording to a database or not (`config/validate.rs`,
    /// `default_workers`).
    pub fn default_workers(recording: bool) -> usize {
        validate::default_workers(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            recording,
        )
    }

    /// The content detector these settings describe.
    pub fn detector(&self) -> Result<Detector, DetectError> {
        Detector::new(&DetectorConfig {
            extra_patterns: self.detector_extra_patterns.clone(),
            disable: self.detector_disable.clone(),
        })
    }

    /// `true` when the listen address is a loopback address (an
    /// IPv4-mapped one, `[::ffff:127.0.0.1]`, too).
    pub fn is_loopback(&self) -> bool {
        crate::local::is_loopback(self.listen.ip())
    }

    /// The hosts a request may name besides the loopback ones, when the
    /// gateway is bound to a loopback address; `None` when it is bound to
    /// another (the operator chose to expose it: any host is answered).
    pub fn host_guard(&self) -> Option<&AllowedHosts> {
        self.is_loopback().then_some(&self.allowed_hosts)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use self::redact::{Hidden, RedactedUrl};
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("tls", &self.tls)
            .field("database", &self.database.as_deref().map(RedactedUrl))
            .field("jsonl", &self.jsonl)
            .field("upstreams", &self.upstreams)
            .field("repair", &self.repair)
            .field("connect_timeout", &self.connect_timeout)
            .field("first_byte_timeout", &self.first_byte_timeout)
            .field("admin_token", &Hidden::option(&self.admin_token))
            .field("allowed_hosts", &self.allowed_hosts)
            .field("detector_extra_patterns", &self.detector_extra_patterns)
            .field("detector_disable", &self.detector_disable)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("max_request_bytes", &self.max_request_bytes)
            .field(
                "max_buffered_request_bytes",
                &self.max_buffered_request_bytes,
            )
            .field("response_parse_limit", &self.response_parse_limit)
            .field(
                "max_buffered_response_bytes",
                &self.max_buffered_response_bytes,
            )
            .field("workers", &self.workers)
            .field("upstream_roots", &self.upstream_roots.len())
            .field("resolve", &self.resolve)
            .field("record_drain", &self.record_drain)
            .field("retention", &self.retention)
            .field("client_head_timeout", &self.client_head_timeout)
            .field("client_body_timeout", &self.client_body_timeout)
            .field("max_client_connections", &self.max_client_connections)
            .field("dashboard_tool_rows", &self.dashboard_tool_rows)
            .field("ws_max_message_bytes", &self.ws_max_message_bytes)
            .field("ws_close_wait", &self.ws_close_wait)
            .field("ws_forced_close_wait", &self.ws_forced_close_wait)
            .field("alerts", &self.alerts)
            .field("otlp", &self.otlp)
            .field("memory", &self.memory)
            .field("cloud", &self.cloud)
            .field("warnings", &self.warnings)
            .finish()
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

pub(crate) mod alerts;
mod memory;
pub(crate) mod otlp;
mod read;
mod redact;
mod sanity;
mod settings;
mod userinfo;
mod validate;

#[cfg(test)]
mod endurance_tests;
#[cfg(test)]
mod tests;
