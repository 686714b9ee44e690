//! [`RawConfig::validate`]: every value checked once, defaults applied,
//! into the [`Config`] the gateway runs with.

use std::{net::SocketAddr, path::Path, time::Duration};

use toolwarden_store::JsonlLog;
use toolwarden_wire::{Detector, detect::DetectorConfig};

use super::{
    Config, ConfigError, ConfigErrorKind, DEFAULT_ANTHROPIC_UPSTREAM, DEFAULT_CHATGPT_UPSTREAM,
    DEFAULT_GEMINI_UPSTREAM, DEFAULT_LISTEN, DEFAULT_OPENAI_UPSTREAM, RawConfig, RepairMode,
    Upstream, Upstreams, memory,
};

const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// Non-streaming responses only send headers when the whole answer is
/// ready, which can take minutes: the first-byte timeout is generous.
const DEFAULT_FIRST_BYTE_TIMEOUT_MS: u64 = 600_000;
const DEFAULT_SHUTDOWN_GRACE_MS: u64 = 10_000;
/// Endurance (issue 14): how long shutdown keeps writing recorded events.
const DEFAULT_RECORD_DRAIN_MS: u64 = 5_000;
/// Days a record is kept (0: forever).
const DEFAULT_RETENTION_DAYS: u64 = 30;
/// The longest retention accepted short of forever (a century).
const MAX_RETENTION_DAYS: u64 = 36_500;
/// The JSONL log's bound: rotated at this size, this many rotated files kept.
const DEFAULT_JSONL_ROTATE_MIB: u64 = 256;
const MAX_JSONL_ROTATE_MIB: u64 = 1 << 20;
const DEFAULT_JSONL_KEEP: u64 = 9;
const MAX_JSONL_KEEP: u64 = 1_000;
/// The dashboard's tool list: the store's default, and the most a
/// setting may ask for (each listed tool also gets a timeline series).
const DEFAULT_DASHBOARD_TOOL_ROWS: u64 = toolwarden_store::TOOL_ROWS as u64;
/// The most tools `dashboard_tool_rows` may ask for.
pub const MAX_DASHBOARD_TOOL_ROWS: u64 = 10_000;
/// Endurance: a client's time to send a request head (hyper's default too).
const DEFAULT_CLIENT_HEAD_TIMEOUT_MS: u64 = 30_000;
/// Endurance: a client's time to send a request body after its head.
const DEFAULT_CLIENT_BODY_TIMEOUT_MS: u64 = 60_000;
/// Endurance: client connections open at once, over all workers.
const DEFAULT_MAX_CLIENT_CONNECTIONS: u64 = 10_000;
const DEFAULT_MAX_REQUEST_BYTES: u64 = 64 << 20;
/// Endurance: request bodies held at once (sixteen of the largest).
const DEFAULT_MAX_BUFFERED_REQUEST_BYTES: u64 = 1 << 30;
const DEFAULT_MAX_BUFFERED_RESPONSE_BYTES: u64 = 1 << 30;
const DEFAULT_RESPONSE_PARSE_LIMIT: u64 = 32 << 20;
const MAX_WORKERS: u64 = 256;
/// WebSocket mode: the largest message (after permessage-deflate) either
/// side may send; larger → closed with 1009. The same as a request body
/// over HTTP: the Codex CLI sends a session's whole history as one
/// `response.create` on every new socket (at least hourly), and the same
/// body must pass whichever transport carries it.
const DEFAULT_WS_MAX_MESSAGE_BYTES: u64 = DEFAULT_MAX_REQUEST_BYTES;
const DEFAULT_WS_CLOSE_WAIT_MS: u64 = 2000;
/// A close waited for longer than this holds a socket past any shutdown's
/// patience (the worker waits for its sockets a few seconds).
const MAX_WS_CLOSE_WAIT_MS: u64 = 60_000;
/// At shutdown once the grace period is over: the close handshakes' bound.
const DEFAULT_WS_FORCED_CLOSE_WAIT_MS: u64 = 500;
/// A stopping worker waits 5 s for its sockets (`worker::SETTLE`), and a
/// socket's cut turn is recorded after its close handshakes: a second is
/// left for that.
const MAX_WS_FORCED_CLOSE_WAIT_MS: u64 = 4_000;

/// The numeric defaults applied here, by key (checked against the
/// documented ones in [`super::SETTINGS`] by a test).
#[cfg(test)]
pub(super) const NUMBER_DEFAULTS: &[(&str, u64)] = &[
    ("connect_timeout_ms", DEFAULT_CONNECT_TIMEOUT_MS),
    ("first_byte_timeout_ms", DEFAULT_FIRST_BYTE_TIMEOUT_MS),
    ("shutdown_grace_ms", DEFAULT_SHUTDOWN_GRACE_MS),
    ("record_drain_ms", DEFAULT_RECORD_DRAIN_MS),
    ("retention_days", DEFAULT_RETENTION_DAYS),
    ("jsonl_rotate_mib", DEFAULT_JSONL_ROTATE_MIB),
    ("jsonl_keep", DEFAULT_JSONL_KEEP),
    ("client_head_timeout_ms", DEFAULT_CLIENT_HEAD_TIMEOUT_MS),
    ("client_body_timeout_ms", DEFAULT_CLIENT_BODY_TIMEOUT_MS),
    ("max_client_connections", DEFAULT_MAX_CLIENT_CONNECTIONS),
    ("dashboard_tool_rows", DEFAULT_DASHBOARD_TOOL_ROWS),
    ("max_request_bytes", DEFAULT_MAX_REQUEST_BYTES),
    (
        "max_buffered_request_bytes",
        DEFAULT_MAX_BUFFERED_REQUEST_BYTES,
    ),
    ("response_parse_limit", DEFAULT_RESPONSE_PARSE_LIMIT),
    (
        "max_buffered_response_bytes",
        DEFAULT_MAX_BUFFERED_RESPONSE_BYTES,
    ),
    ("ws_max_message_bytes", DEFAULT_WS_MAX_MESSAGE_BYTES),
    ("ws_close_wait_ms", DEFAULT_WS_CLOSE_WAIT_MS),
    ("ws_forced_close_wait_ms", DEFAULT_WS_FORCED_CLOSE_WAIT_MS),
    ("database_cache_kib", memory::DEFAULT_DATABASE_CACHE_KIB),
    (
        "database_writer_cache_kib",
        memory::DEFAULT_DATABASE_WRITER_CACHE_KIB,
    ),
    (
        "database_writer_idle_ms",
        memory::DEFAULT_DATABASE_WRITER_IDLE_MS,
    ),
    (
        "database_max_connections",
        memory::DEFAULT_DATABASE_MAX_CONNECTIONS,
    ),
    (
        "database_write_timeout_ms",
        memory::DEFAULT_DATABASE_WRITE_TIMEOUT_MS,
    ),
    (
        "record_queue_capacity",
        memory::DEFAULT_RECORD_QUEUE_CAPACITY,
    ),
    ("record_batch_max", memory::DEFAULT_RECORD_BATCH_MAX),
    ("record_flush_ms", memory::DEFAULT_RECORD_FLUSH_MS),
    (
        "record_aggregate_keys",
        memory::DEFAULT_RECORD_AGGREGATE_KEYS,
    ),
    ("recent_calls_capacity", memory::DEFAULT_RECENT_CALLS),
    ("recent_results_capacity", memory::DEFAULT_RECENT_RESULTS),
    ("upstream_max_idle", memory::DEFAULT_UPSTREAM_MAX_IDLE),
];

// === impl RawConfig ===

impl RawConfig {
    /// Check every value and apply defaults. All problems are reported at once.
    pub fn validate(mut self) -> Result<Config, ConfigError> {
        let mut problems: Vec<String> = std::mem::take(&mut self.unread).into_values().collect();
        problems.append(&mut self.problems);
        // --- issue 14: memory bounds ---
        let memory = memory::validate(&self, &mut problems);
        let listen = parse_listen(self.listen.as_deref().unwrap_or(DEFAULT_LISTEN))
            .map_err(|e| problems.push(e))
            .ok();
        let mut upstream = |name: &str, value: Option<String>, default: &str| {
            let value = value.unwrap_or_else(|| default.to_string());
            Upstream::parse_setting(name, &value)
                .map_err(|e| problems.push(e))
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
        // An empty value reaches here only from the file (an empty
        // variable is unset, an empty flag refused): a template whose
        // variable was empty, not a choice to record nothing.
        if self
            .database
            .as_deref()
            .is_some_and(|d| d.trim().is_empty())
        {
            problems.push(
                "database is empty: write \"none\" to turn recording off, or a database URL or path"
                    .to_string(),
            );
        }
        let database = self
            .database
            .filter(|d| !matches!(d.trim(), "" | "none" | "off"));
        let admin_token = self.admin_token.filter(|t| !t.is_empty());
        let allowed_hosts =
            crate::local::AllowedHosts::parse(self.allowed_hosts.as_deref().unwrap_or_default())
                .map_err(|e| problems.push(e))
                .unwrap_or_default();
        let detector = DetectorConfig {
            extra_patterns: self
                .detector_extra_patterns
                .map(|p| p.0)
                .unwrap_or_default(),
            disable: self.detector_disable.unwrap_or_default(),
        };
        if let Err(e) = Detector::new(&detector) {
            problems.push(format!("detector: {e}"));
        }
        let ws_max_message_bytes = self
            .ws_max_message_bytes
            .unwrap_or(DEFAULT_WS_MAX_MESSAGE_BYTES);
        if ws_max_message_bytes == 0 {
            problems.push("ws_max_message_bytes must be greater than 0".to_string());
        }
        let workers = match self.workers.unwrap_or(0) {
            0 => Config::default_workers(database.is_some()),
            n if n <= MAX_WORKERS => n as usize,
            n => {
                problems.push(format!("workers {n}: at most {MAX_WORKERS}"));
                1
            }
        };
        let resolve = crate::resolve::Resolve::parse(self.resolve.as_deref().unwrap_or_default())
            .map_err(|e| problems.push(e))
            .unwrap_or_default();
        let upstream_roots = match &self.upstream_ca {
            Some(path) => read_roots(path).unwrap_or_else(|e| {
                problems.push(format!("upstream_ca {}: {e}", path.display()));
                Vec::new()
            }),
            None => Vec::new(),
        };
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => crate::server_tls::ServerTls::load(cert, key)
                .map_err(|e| problems.push(e))
                .ok(),
            (None, None) => None,
            (Some(_), None) => {
                problems.push("tls_cert is set without tls_key: HTTPS needs both".to_string());
                None
            }
            (None, Some(_)) => {
                problems.push("tls_key is set without tls_cert: HTTPS needs both".to_string());
                None
            }
        };
        // --- issue 19: alerts ---
        let alerts = self.alerts.unwrap_or_default().validate(&mut problems);
        let otlp_endpoint = self
            .otlp_endpoint
            .as_deref()
            .map(str::trim)
            .filter(|e| !matches!(*e, "" | "none" | "off"));
        // The standard variables are every program's: read only by a
        // gateway that exports; its own settings are checked in any case.
        let from_otel = self.otlp_transport_from_otel;
        let exporting = otlp_endpoint.is_some();
        let otlp_protocol = self
            .otlp_protocol
            .as_deref()
            .filter(|_| exporting || !from_otel.protocol);
        let otlp_protocol =
            crate::config::otlp::OtlpProtocol::parse(otlp_protocol.unwrap_or("http/protobuf"))
                .map_err(|e| problems.push(e))
                .unwrap_or_default();
        let otlp_compression = self
            .otlp_compression
            .as_deref()
            .filter(|_| exporting || !from_otel.compression);
        let otlp_compression =
            crate::config::otlp::OtlpCompression::parse(otlp_compression.unwrap_or("none"))
                .map_err(|e| problems.push(e))
                .unwrap_or_default();
        let endpoint_kind = if self.otlp_endpoint_is_traces {
            crate::config::otlp::EndpointKind::Traces
        } else {
            crate::config::otlp::EndpointKind::Base
        };
        let otlp = otlp_endpoint.and_then(|e| {
            crate::config::otlp::OtlpConfig::parse_with(
                otlp_protocol,
                e,
                endpoint_kind,
                self.otlp_headers.as_deref(),
            )
            .and_then(|c| c.with_resource(&self.otel_resource))
            .and_then(|mut c| {
                c.sampler = crate::config::otlp::Sampler::from_env(&self.otel_sampler)?;
                c.compression = otlp_compression;
                Ok(c)
            })
            .map_err(|e| problems.push(e))
            .ok()
        });
        // --- issue 18: cloud endpoints ---
        let bedrock_set = self.bedrock_upstream.is_some();
        let mut cloud_warnings = Vec::new();
        let cloud = crate::cloud::CloudConfig::validate(
            crate::cloud::RawCloud {
                azure_upstream: self.azure_upstream,
                vertex_upstream: self.vertex_upstream,
                bedrock_upstream: self.bedrock_upstream,
                bedrock_region: self.bedrock_region,
                lend_token: self.lend_token,
                aws_env: self.aws_env,
            },
            &mut problems,
            &mut cloud_warnings,
        );
        // Endurance (issue 14): retention, client timeouts and the connection cap.
        let retention_days = self.retention_days.unwrap_or(DEFAULT_RETENTION_DAYS);
        if retention_days > MAX_RETENTION_DAYS {
            problems.push(format!(
                "retention_days {retention_days}: at most {MAX_RETENTION_DAYS} (0 keeps everything)"
            ));
        }
        let retention = (retention_days > 0)
            .then(|| Duration::from_secs(retention_days.min(MAX_RETENTION_DAYS) * 86_400));
        let jsonl = self.jsonl.map(|path| {
            let rotate_mib = self.jsonl_rotate_mib.unwrap_or(DEFAULT_JSONL_ROTATE_MIB);
            let keep = self.jsonl_keep.unwrap_or(DEFAULT_JSONL_KEEP);
            if rotate_mib > MAX_JSONL_ROTATE_MIB {
                problems.push(format!(
                    "jsonl_rotate_mib {rotate_mib}: at most {MAX_JSONL_ROTATE_MIB} (0 never rotates)"
                ));
            }
            if keep > MAX_JSONL_KEEP {
                problems.push(format!("jsonl_keep {keep}: at most {MAX_JSONL_KEEP}"));
            }
            JsonlLog {
                path,
                rotate_bytes: rotate_mib.min(MAX_JSONL_ROTATE_MIB) << 20,
                keep: keep.min(MAX_JSONL_KEEP) as u32,
            }
        });
        let mut positive = |key: &str, value: Option<u64>, default: u64| {
            let v = value.unwrap_or(default);
            if v == 0 {
                problems.push(format!("{key} must be greater than 0"));
            }
            v.max(1)
        };
        // 0 would answer every request with a body 413, and count every
        // response `too_large`, its calls never read.
        let max_request_bytes = positive(
            "max_request_bytes",
            self.max_request_bytes,
            DEFAULT_MAX_REQUEST_BYTES,
        );
        let max_buffered_request_bytes =
            (self.max_buffered_request_bytes).unwrap_or(DEFAULT_MAX_BUFFERED_REQUEST_BYTES);
        let max_buffered_response_bytes =
            (self.max_buffered_response_bytes).unwrap_or(DEFAULT_MAX_BUFFERED_RESPONSE_BYTES);
        let response_parse_limit = positive(
            "response_parse_limit",
            self.response_parse_limit,
            DEFAULT_RESPONSE_PARSE_LIMIT,
        );
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
        let ws_close_wait_ms = positive(
            "ws_close_wait_ms",
            self.ws_close_wait_ms,
            DEFAULT_WS_CLOSE_WAIT_MS,
        );
        let ws_forced_close_wait_ms = positive(
            "ws_forced_close_wait_ms",
            self.ws_forced_close_wait_ms,
            DEFAULT_WS_FORCED_CLOSE_WAIT_MS,
        );
        let max_client_connections = positive(
            "max_client_connections",
            self.max_client_connections,
            DEFAULT_MAX_CLIENT_CONNECTIONS,
        );
        let dashboard_tool_rows = positive(
            "dashboard_tool_rows",
            self.dashboard_tool_rows,
            DEFAULT_DASHBOARD_TOOL_ROWS,
        );
        if dashboard_tool_rows > MAX_DASHBOARD_TOOL_ROWS {
            problems.push(format!(
                "dashboard_tool_rows {dashboard_tool_rows}: at most {MAX_DASHBOARD_TOOL_ROWS}"
            ));
        }
        if max_buffered_request_bytes < max_request_bytes {
            problems.push(format!(
                "max_buffered_request_bytes {max_buffered_request_bytes}: at least \
                 max_request_bytes ({max_request_bytes}), or no body of that size is ever read"
            ));
        }
        if max_buffered_response_bytes < response_parse_limit {
            problems.push(format!(
                "max_buffered_response_bytes {max_buffered_response_bytes}: at least \
                 response_parse_limit ({response_parse_limit}), or no response of that size is \
                 ever read"
            ));
        }
        if max_buffered_response_bytes < ws_max_message_bytes {
            problems.push(format!(
                "max_buffered_response_bytes {max_buffered_response_bytes}: at least \
                 ws_max_message_bytes ({ws_max_message_bytes}), or no upstream WebSocket message \
                 of that size is ever read"
            ));
        }
        if max_buffered_request_bytes < ws_max_message_bytes {
            problems.push(format!(
                "max_buffered_request_bytes {max_buffered_request_bytes}: at least \
                 ws_max_message_bytes ({ws_max_message_bytes}), or no WebSocket message of that \
                 size is ever read"
            ));
        }
        if ws_close_wait_ms > MAX_WS_CLOSE_WAIT_MS {
            problems.push(format!(
                "ws_close_wait_ms {ws_close_wait_ms}: at most {MAX_WS_CLOSE_WAIT_MS}"
            ));
        }
        if ws_forced_close_wait_ms > MAX_WS_FORCED_CLOSE_WAIT_MS {
            problems.push(format!(
                "ws_forced_close_wait_ms {ws_forced_close_wait_ms}: at most {MAX_WS_FORCED_CLOSE_WAIT_MS}"
            ));
        }
        let mut warnings: Vec<String> = self
            .unknown_variables
            .iter()
            .filter_map(|name| super::sanity::unknown_variable(name))
            .chain(cloud_warnings)
            .collect();
        let named = [
            ("openai_upstream", &openai),
            ("anthropic_upstream", &anthropic),
            ("gemini_upstream", &gemini),
            ("chatgpt_upstream", &chatgpt),
        ];
        for (name, upstream) in named {
            let Some(upstream) = upstream else { continue };
            if let Some(listen) = listen {
                problems.extend(super::sanity::upstream_loops(
                    name, upstream, listen, &resolve,
                ));
            }
            warnings.extend(super::sanity::versioned_base(name, upstream));
        }
        if let Some(listen) = listen {
            problems.extend(super::sanity::cloud_loops(
                &cloud,
                bedrock_set,
                listen,
                &resolve,
            ));
            problems.extend(super::sanity::telemetry_loops(
                otlp.as_ref(),
                &alerts.webhooks,
                listen,
                &resolve,
                &allowed_hosts,
            ));
            let (loops, shared) =
                super::sanity::credential_loops(&cloud, listen, &resolve, &allowed_hosts);
            problems.extend(loops);
            warnings.extend(shared);
            warnings.extend(super::sanity::dashboard_closed(
                listen,
                admin_token.is_some(),
            ));
            warnings.extend(super::sanity::hosts_unguarded(listen, &allowed_hosts));
        }
        if !alerts.enabled && !alerts.webhooks.is_empty() {
            warnings.push(
                "alert webhooks are configured but alerts are off (--no-alerts, or [alerts] \
                 enabled = false): nothing will be sent"
                    .into(),
            );
        }
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
                tls,
                database,
                jsonl,
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
                allowed_hosts,
                detector_extra_patterns: detector.extra_patterns,
                detector_disable: detector.disable,
                shutdown_grace: Duration::from_millis(
                    self.shutdown_grace_ms.unwrap_or(DEFAULT_SHUTDOWN_GRACE_MS),
                ),
                max_request_bytes: usize::try_from(max_request_bytes).unwrap_or(usize::MAX),
                max_buffered_request_bytes: usize::try_from(max_buffered_request_bytes)
                    .unwrap_or(usize::MAX),
                response_parse_limit: usize::try_from(response_parse_limit).unwrap_or(usize::MAX),
                max_buffered_response_bytes: usize::try_from(max_buffered_response_bytes)
                    .unwrap_or(usize::MAX),
                workers,
                upstream_roots,
                resolve,
                ws_max_message_bytes: usize::try_from(ws_max_message_bytes).unwrap_or(usize::MAX),
                ws_close_wait: Duration::from_millis(ws_close_wait_ms.min(MAX_WS_CLOSE_WAIT_MS)),
                ws_forced_close_wait: Duration::from_millis(
                    ws_forced_close_wait_ms.min(MAX_WS_FORCED_CLOSE_WAIT_MS),
                ),
                record_drain: Duration::from_millis(
                    self.record_drain_ms.unwrap_or(DEFAULT_RECORD_DRAIN_MS),
                ),
                retention,
                client_head_timeout: Duration::from_millis(client_head_timeout_ms),
                client_body_timeout: Duration::from_millis(client_body_timeout_ms),
                max_client_connections: usize::try_from(max_client_connections)
                    .unwrap_or(usize::MAX),
                dashboard_tool_rows: usize::try_from(dashboard_tool_rows).unwrap_or(usize::MAX),
                alerts,
                otlp,
                memory,
                cloud,
                warnings,
            }),
            _ => Err(ConfigError::new(
                ConfigErrorKind::InvalidValue,
                problems.join("; "),
            )),
        }
    }
}

/// Proxy workers when `workers` is not set: one per CPU, less one when a
/// database is recorded to, at least one. The recorder and the database's
/// writer (SQLite's connection thread and its checkpointer, in this
/// process) are busy whenever the proxy is; with a worker on every CPU as
/// well, the proxy's threads and theirs take turns on the CPUs, and each
/// worker wakes for fewer ready connections at a time. Measured in
/// BENCHMARKS.md ("One worker fewer than the CPUs"): at 32 connections on
/// 2 CPUs, one worker instead of two, the same throughput for 8 % (the
/// gateway bench) to 12 % (the soak) less CPU per request.
pub(crate) fn default_workers(cpus: usize, recording: bool) -> usize {
    if recording {
        cpus.saturating_sub(1).max(1)
    } else {
        cpus.max(1)
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

/// A listen address as `listen` takes it: `host:port`, `localhost:PORT`,
/// or a bare port (on 127.0.0.1). `serve` and `env` read it through this
/// one function.
pub fn parse_listen(value: &str) -> Result<SocketAddr, String> {
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
