//! The settings' field list, written once. Each row of `settings!` is a
//! TOML key of [`RawConfig`]; its environment variable
//! (`TOOLWARDEN_` + the upper-cased key), its `serve` flag (`--` + the key
//! with `-` for `_`), its help text and the README's table all come from
//! the same row (see [`SETTINGS`]).

use std::{fmt, path::PathBuf};

use serde::Deserialize;

use super::redact::{Hidden, RedactedUrl};

/// How a setting's value is written in the environment and on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingKind {
    /// Free text (a URL, an address, a mode).
    Text,
    /// A file path.
    Path,
    /// A non-negative whole number.
    Number,
    /// A list: a JSON array or comma-separated values.
    List,
    /// Regular expressions: a JSON array, or one pattern (its commas are
    /// its own: `\d{1,3}`).
    Patterns,
}

/// A list of regular expressions as a setting: a JSON array, or the whole
/// text as one pattern (a comma-separated list would cut `\d{1,3}` in two).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(transparent)]
pub struct Patterns(pub Vec<String>);

/// One setting as documented: its key and where else it can be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The TOML key (and the field of [`RawConfig`]).
    pub key: &'static str,
    /// How the value is written.
    pub kind: SettingKind,
    /// The default, as documented (`""`: none).
    pub default: &'static str,
    /// What it sets (one line).
    pub doc: &'static str,
}

/// A value a setting can hold, read from an environment variable or a flag.
trait SettingValue: Sized + fmt::Debug {
    const KIND: SettingKind;
    fn read(text: &str) -> Result<Self, &'static str>;
    /// The value as text, when it is text (a URL's password is hidden
    /// from `Debug` through it).
    fn as_text(&self) -> Option<&str> {
        None
    }
}

/// A setting of [`RawConfig`] as its `Debug` shows it: a secret's value
/// hidden, a URL's password hidden, any other value as it is.
struct Shown<'a, T> {
    key: &'static str,
    value: &'a Option<T>,
}

macro_rules! settings {
    ($( #[doc = $doc:literal] $key:ident : $ty:ty = $default:literal ; )*) => {
        /// Settings as read, every field optional. Field names are the TOML
        /// keys; the environment variable is `TOOLWARDEN_` + the upper-cased
        /// name, the `serve` flag `--` + the name with dashes ([`SETTINGS`]).
        ///
        /// Its `Debug` hides the values of the settings that can carry
        /// credentials and the passwords of URLs.
        #[derive(Clone, Default, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct RawConfig {
            $( #[doc = $doc] pub $key: Option<$ty>, )*
            /// The `[alerts]` table (rules, window, webhooks); its variables
            /// are `TOOLWARDEN_ALERT_*`.
            pub alerts: Option<crate::config::alerts::RawAlerts>,
            /// `AWS_*` variables (region, credentials) read by `from_env`.
            #[serde(skip)]
            pub(super) aws_env: crate::cloud::aws::AwsEnv,
            /// `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, read by
            /// `from_env`: the exported resource's attributes.
            #[serde(skip)]
            pub(super) otel_resource: crate::config::otlp::ResourceEnv,
            /// `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, read by
            /// `from_env`: which spans are exported.
            #[serde(skip)]
            pub(super) otel_sampler: crate::config::otlp::SamplerEnv,
            /// `TOOLWARDEN_` variables that name no setting, read by
            /// `from_env`: warned about at start.
            #[serde(skip)]
            pub(super) unknown_variables: Vec<String>,
            /// `otlp_endpoint` came from `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`:
            /// the traces URL itself, not a base.
            #[serde(skip)]
            pub(super) otlp_endpoint_is_traces: bool,
            /// `otlp_protocol` and `otlp_compression` came from the
            /// standard `OTEL_EXPORTER_OTLP_*` variables, set for every
            /// program of an environment: read only when this gateway
            /// exports.
            #[serde(skip)]
            pub(super) otlp_transport_from_otel: crate::config::otlp::FromOtelVars,
            /// Problems found while reading the environment or flags,
            /// reported by `validate`.
            #[serde(skip)]
            pub(super) problems: Vec<String>,
            /// Settings whose text could not be read, by key: reported by
            /// `validate` unless a higher layer sets the key (a bad
            /// variable that a flag overrides does not stop `serve`).
            #[serde(skip)]
            pub(super) unread: std::collections::BTreeMap<&'static str, String>,
        }

        /// Every top-level setting, in the order of the README's table.
        pub const SETTINGS: &[Setting] = &[$(
            Setting {
                key: stringify!($key),
                kind: <$ty as SettingValue>::KIND,
                default: $default,
                doc: $doc.trim_ascii(),
            },
        )*];

        impl fmt::Debug for RawConfig {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("RawConfig")
                    $( .field(stringify!($key), &Shown { key: stringify!($key), value: &self.$key }) )*
                    .field("alerts", &self.alerts)
                    .field("aws_env", &self.aws_env)
                    .field("otel_resource", &self.otel_resource)
                    .field("otel_sampler", &self.otel_sampler)
                    .field("unknown_variables", &self.unknown_variables)
                    .field("otlp_endpoint_is_traces", &self.otlp_endpoint_is_traces)
                    .field("otlp_transport_from_otel", &self.otlp_transport_from_otel)
                    .field("problems", &self.problems)
                    .field("unread", &self.unread)
                    .finish()
            }
        }

        impl RawConfig {
            /// Set the setting `key` from text (`source` names the variable
            /// or flag in a problem); `false` when there is no such key.
            pub(super) fn set_text(&mut self, key: &str, source: &str, text: &str) -> bool {
                match key {
                    $( stringify!($key) => {
                        let key = stringify!($key);
                        self.$key = read_value(source, text)
                            .map_err(|problem| self.unread.insert(key, problem))
                            .ok();
                        if self.$key.is_some() {
                            self.unread.remove(key);
                        }
                        true
                    } )*
                    _ => false,
                }
            }

            /// Each setting `over` has, or could not read, replaces this
            /// one's (its value and any problem reading it).
            pub(super) fn take_settings(&mut self, over: &mut RawConfig) {
                $( if over.$key.is_some() || over.unread.contains_key(stringify!($key)) {
                    self.$key = over.$key.take();
                    self.unread.remove(stringify!($key));
                } )*
                self.unread.append(&mut over.unread);
            }
        }
    };
}

settings! {
    /// Address to listen on, `host:port` (or a bare port, on 127.0.0.1).
    listen: String = "127.0.0.1:8080";
    /// Serve HTTPS: a PEM file of the gateway's certificate chain (its own certificate first), with `tls_key`. Checked at start, read again when either file changes (looked at every 30 s); clients then use `https://` (ALPN offers `h2` and `http/1.1`).
    tls_cert: PathBuf = "";
    /// The PEM private key (PKCS#8, PKCS#1 or SEC1) of `tls_cert`'s certificate.
    tls_key: PathBuf = "";
    /// `sqlite://PATH`, a plain path, `postgres://…`; `none` disables the database. A SQLite URL takes no options but sqlx's `?mode=rwc` (what it does anyway); others are refused.
    database: String = "sqlite://toolwarden.db";
    /// Also write every event as a JSON line to this file.
    jsonl: PathBuf = "";
    /// The JSONL log is rotated once it holds this many MiB (renamed `PATH.1`, the older ones shifted to `PATH.2` …); 0 never rotates.
    jsonl_rotate_mib: u64 = "256";
    /// Rotated JSONL files kept beside the live one; older ones are deleted.
    jsonl_keep: u64 = "9";
    /// Base URL of the OpenAI API.
    openai_upstream: String = "https://api.openai.com";
    /// Base URL of the Anthropic API.
    anthropic_upstream: String = "https://api.anthropic.com";
    /// Base URL of the Gemini API.
    gemini_upstream: String = "https://generativelanguage.googleapis.com";
    /// Base URL of the ChatGPT backend, for `…/backend-api/codex/responses` (the Codex CLI signed in with ChatGPT).
    chatgpt_upstream: String = "https://chatgpt.com";
    /// `off`, `report` or `fix`: what to do with a conversation whose calls and results don't pair.
    repair: String = "fix";
    /// Upstream TCP/TLS connect timeout, ms. An upstream name's addresses share it (one that never answers leaves time for the next), and those of the other IP family are tried alongside after 300 ms.
    connect_timeout_ms: u64 = "10000";
    /// Time allowed from the start of sending a request upstream to the response headers, ms (an upstream that stops reading the request is cut off by it too; for a streamed pass-through body, from its last byte sent); 0 = none (a live stream is never cut off).
    first_byte_timeout_ms: u64 = "600000";
    /// Bearer token required by the dashboard and `/api/*` when listening on a non-loopback address.
    admin_token: String = "";
    /// Host names a gateway listening on a loopback address answers besides `localhost`, `*.localhost` and loopback addresses (a name, `.example.com` for it and its subdomains, an IP address; `*`: any): a request naming another host gets a 403, a guard against DNS rebinding. Give the name a reverse proxy in front sends as `Host`. A gateway listening on another address answers any host.
    allowed_hosts: Vec<String> = "";
    /// Tools (and model × tool pairs) the dashboard, `/api/stats` and `toolwarden stats` list at most, most failures first (1–10000); the totals count every tool.
    dashboard_tool_rows: u64 = "200";
    /// Extra failure patterns (regular expressions) for the content detector: a JSON array, or one pattern.
    detector_extra_patterns: Patterns = "";
    /// Built-in detector rules to turn off, by name.
    detector_disable: Vec<String> = "";
    /// How long shutdown waits for in-flight requests, ms.
    shutdown_grace_ms: u64 = "10000";
    /// Largest request body the gateway reads, bytes (larger: 413); pass-through bodies stream and are not bounded by it.
    max_request_bytes: u64 = "67108864";
    /// Request bodies held in memory at once, over all connections and workers, bytes (at least `max_request_bytes` and `ws_max_message_bytes`), counted as their bytes arrive and given back once a body has gone upstream and been read; a body with no room is answered 503 naming the setting (`retry-after: 1`), and the rest of it read and dropped. WebSocket clients' messages count too, each until it has gone upstream; one with no room closes its socket with 1013.
    max_buffered_request_bytes: u64 = "1073741824";
    /// Largest non-streaming response body copied for parsing, and most a stream's parse keeps of its tool calls and arguments, bytes (the response always passes whole; past it, counted as `too_large`).
    response_parse_limit: u64 = "33554432";
    /// Response bodies copied for parsing, what streams' parses hold, and upstream WebSocket messages, held in memory at once over all connections and workers, bytes (at least `response_parse_limit` and `ws_max_message_bytes`), counted as they grow and given back once each is read; a copy with no room is not made and a stream's parse with no room to grow is not read further (the response passes whole, its calls unread: counted as `no_room`, the request marked `calls_incomplete`); an upstream WebSocket message with no room closes the client with 1013 and the upstream with 1001.
    max_buffered_response_bytes: u64 = "1073741824";
    /// Proxy worker threads, each with its own event loop and upstream connection pool, client connections spread evenly over them; 0 = the default: one per CPU, less one when recording to a database (that CPU is the recorder's and the database writer's), at least one.
    workers: u64 = "one per CPU, less one when recording to a database";
    /// A PEM file of extra root certificates trusted for upstream TLS (a TLS-inspecting egress proxy, a self-hosted upstream), beside the built-in webpki roots.
    upstream_ca: PathBuf = "";
    /// Upstream names reached at a fixed address, as curl's `--resolve`: `HOST:PORT:ADDR` entries (ADDR an IP address, an IPv6 one in brackets, optionally with `:PORT`), for private endpoints (Azure Private Link, Google Private Service Connect, AWS VPC endpoints). TLS still sends and checks the URL's name, and requests name it as `Host`; every upstream connection uses it, the AWS credential chain's with the entries that keep the URL's port.
    resolve: Vec<String> = "";
    /// Recorded requests, tool calls, results and sessions older than this many days are deleted (a pass soon after start, then hourly, in small steps); 0 keeps everything.
    retention_days: u64 = "30";
    /// How long shutdown keeps writing the recorded events still queued, ms; past it, what is left is dropped, counted and reported.
    record_drain_ms: u64 = "5000";
    /// How long a client may take to send a request head, ms (also the longest idle wait on a kept-alive connection, and how long a Vertex AI Live socket's first message may take).
    client_head_timeout_ms: u64 = "30000";
    /// How long a client may take to send a request body after its head, ms; also how long a write to a client may wait (it reads nothing: a response it stopped reading, a WebSocket message) before its connection is dropped, and in WebSocket mode the same for the upstream.
    client_body_timeout_ms: u64 = "60000";
    /// Client connections open at once; beyond, new ones get a 503 and are closed.
    max_client_connections: u64 = "10000";
    /// WebSocket mode: the largest message (decompressed) either side may send, bytes (the same default as `max_request_bytes`: the Codex CLI resends a session's whole history as one message); larger closes the sender with 1009.
    ws_max_message_bytes: u64 = "67108864";
    /// WebSocket mode: how long a side the gateway closes has to answer the close (and its last events to arrive) before its connection is dropped, and how long sending a close may take, ms (at most 60000; at shutdown after the grace period, `ws_forced_close_wait_ms`).
    ws_close_wait_ms: u64 = "2000";
    /// WebSocket mode: at shutdown, once the grace period is over, how long the close handshakes of a socket still open may take before its connections are dropped, ms (at most 4000: a stopping worker waits 5 s for its sockets; never longer than `ws_close_wait_ms`).
    ws_forced_close_wait_ms: u64 = "500";
    /// OTLP collector base URL (over HTTP, `/v1/traces` is appended; over gRPC, `http://HOST:PORT` alone); also `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) and `OTEL_EXPORTER_OTLP_ENDPOINT` (the `TOOLWARDEN_` variable wins, then the traces one).
    otlp_endpoint: String = "";
    /// `http/protobuf` or `grpc` (HTTP/2: cleartext with prior knowledge for `http://`, TLS for `https://`); also `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, `OTEL_EXPORTER_OTLP_PROTOCOL`.
    otlp_protocol: String = "http/protobuf";
    /// `none` or `gzip` (its fastest level) for the export bodies; also `OTEL_EXPORTER_OTLP_TRACES_COMPRESSION`, `OTEL_EXPORTER_OTLP_COMPRESSION`.
    otlp_compression: String = "none";
    /// `k=v,k2=v2` headers for the collector; also `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, `OTEL_EXPORTER_OTLP_HEADERS` (the `TOOLWARDEN_` variable wins, then the traces one).
    otlp_headers: String = "";
    /// SQLite page cache per pooled connection, KiB.
    database_cache_kib: u64 = "2048";
    /// SQLite page cache of the recorder's own connection, KiB; given back after `database_writer_idle_ms` without writes.
    database_writer_cache_kib: u64 = "16384";
    /// How long the recorder's own SQLite connection stays open without a write, ms; then it is closed and its page cache and statements given back.
    database_writer_idle_ms: u64 = "5000";
    /// Pooled database connections.
    database_max_connections: u64 = "4";
    /// PostgreSQL: how long a batch of recorded events may take to write, ms (the writer's `statement_timeout`); with no answer a little past it, the connection is taken for lost (half-open), closed, and the batch retried on a fresh one.
    database_write_timeout_ms: u64 = "15000";
    /// Events the recorder holds at most, queued and in its backlog while the database is away, together, beyond the batch being written; beyond, dropped and counted.
    record_queue_capacity: u64 = "65536";
    /// Events per database transaction at most.
    record_batch_max: u64 = "4096";
    /// How long the recorder waits to fill a batch, ms.
    record_flush_ms: u64 = "200";
    /// Distinct (minute, provider, model, tool) keys of the in-memory counts of events that could not be recorded in detail; beyond, folded into `(other)` and counted.
    record_aggregate_keys: u64 = "4096";
    /// Recently seen calls remembered to name results (and the sessions of Responses responses and Anthropic thread replies), each.
    recent_calls_capacity: u64 = "32768";
    /// Keys of results already queued, per generation (two generations).
    recent_results_capacity: u64 = "65536";
    /// Idle upstream connections kept for reuse per upstream and proxy worker, on both HTTP paths; one more is closed when its response ends.
    upstream_max_idle: u64 = "256";
    /// Base URL of an Azure OpenAI resource (`https://myres.openai.azure.com`); until set, Azure requests get a 404.
    azure_upstream: String = "";
    /// Base URL of Vertex AI.
    vertex_upstream: String = "https://{location}-aiplatform.googleapis.com";
    /// Base URL of Bedrock Runtime.
    bedrock_upstream: String = "https://bedrock-runtime.{region}.amazonaws.com";
    /// The AWS region of Bedrock, for its default upstream and SigV4 re-signing (a `bedrock_upstream` host naming a region is signed for that region); unset: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the AWS profile's `region` (`~/.aws/config`, as `aws configure` writes it).
    bedrock_region: String = "AWS_REGION";
    /// A token a client must send in `x-toolwarden-lend-token` to be lent the gateway's own cloud credentials (its Bedrock signature, its Vertex token); unset, they are lent to any client but a web page elsewhere. Set it when the gateway listens beyond loopback (16 or more visible characters; never forwarded upstream).
    lend_token: String = "";
}

/// Settings that may hold credentials: TOML or environment only.
const SECRET_KEYS: &[&str] = &["admin_token", "otlp_headers", "lend_token"];

// === impl Setting ===

impl Setting {
    /// The environment variable: `TOOLWARDEN_` + the upper-cased key.
    pub fn env_var(&self) -> String {
        format!("TOOLWARDEN_{}", self.key.to_ascii_uppercase())
    }

    /// The `serve` flag's long name, without the dashes in front.
    pub fn flag(&self) -> String {
        self.key.replace('_', "-")
    }

    /// Whether `serve` takes this setting as a flag. Settings that can carry
    /// credentials have none: a flag's value shows in every process list.
    pub fn has_flag(&self) -> bool {
        !SECRET_KEYS.contains(&self.key)
    }

    /// Check `text` the way a flag is read. An empty value is refused: an
    /// unset shell variable in `--database=$DB` would otherwise turn
    /// recording off (`none` is the word for that), and an empty variable
    /// is how a setting is unset, not a flag.
    pub fn check(&self, text: &str) -> Result<(), &'static str> {
        if text.is_empty() {
            return Err("an empty value: give one, or leave the flag out for the default");
        }
        match self.kind {
            SettingKind::Number => u64::read(text).map(drop),
            _ => Ok(()),
        }
    }

    /// The README's table: one row per setting.
    pub fn markdown_table() -> String {
        let mut out = String::from(
            "| flag / TOML key / variable | default | what it sets |\n|---|---|---|\n",
        );
        for s in SETTINGS {
            let default = if s.default.is_empty() {
                "none".to_string()
            } else {
                format!("`{}`", s.default)
            };
            let flag = if s.has_flag() {
                format!("`--{}`", s.flag())
            } else {
                "(no flag: may carry credentials)".to_string()
            };
            out.push_str(&format!(
                "| {flag} / `{}` / `{}` | {default} | {} |\n",
                s.key,
                s.env_var(),
                s.doc.replace('|', "\\|"),
            ));
        }
        out
    }
}

// === impl Shown ===

impl<T: SettingValue> fmt::Debug for Shown<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if SECRET_KEYS.contains(&self.key) {
            return Hidden::option(self.value).fmt(f);
        }
        match self.value.as_ref().and_then(SettingValue::as_text) {
            Some(text) if text.contains("://") => Some(RedactedUrl(text)).fmt(f),
            _ => self.value.fmt(f),
        }
    }
}

// === impl SettingValue ===

fn read_value<T: SettingValue>(source: &str, text: &str) -> Result<T, String> {
    T::read(text).map_err(|e| format!("{source}={text:?}: {e}"))
}

impl SettingValue for String {
    const KIND: SettingKind = SettingKind::Text;
    fn read(text: &str) -> Result<Self, &'static str> {
        Ok(text.to_string())
    }
    fn as_text(&self) -> Option<&str> {
        Some(self)
    }
}

impl SettingValue for PathBuf {
    const KIND: SettingKind = SettingKind::Path;
    fn read(text: &str) -> Result<Self, &'static str> {
        Ok(PathBuf::from(text))
    }
}

impl SettingValue for u64 {
    const KIND: SettingKind = SettingKind::Number;
    fn read(text: &str) -> Result<Self, &'static str> {
        text.trim()
            .parse()
            .map_err(|_| "expected a non-negative whole number")
    }
}

impl SettingValue for Patterns {
    const KIND: SettingKind = SettingKind::Patterns;
    fn read(text: &str) -> Result<Self, &'static str> {
        // A JSON array of strings, else one pattern (`[Ee]rror` is one).
        let trimmed = text.trim();
        if trimmed.starts_with('[')
            && let Ok(list) = serde_json::from_str::<Vec<String>>(trimmed)
        {
            return Ok(Patterns(list));
        }
        if has_list_comma(text) {
            // Read as a comma-separated list before: say how to give several.
            tracing::warn!(
                pattern = text,
                "detector_extra_patterns is one pattern here, commas included; \
                 give several as a JSON array: [\"a\", \"b\"]"
            );
        }
        Ok(Patterns(if text.is_empty() {
            Vec::new()
        } else {
            vec![text.to_string()]
        }))
    }
}

/// A comma outside `{…}`, `[…]` and `(…)` (not `\d{1,3}`): what a
/// comma-separated list has.
pub(super) fn has_list_comma(text: &str) -> bool {
    let mut depth = 0i32;
    let mut escaped = false;
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth <= 0 => return true,
            _ => {}
        }
    }
    false
}

impl SettingValue for Vec<String> {
    const KIND: SettingKind = SettingKind::List;
    fn read(text: &str) -> Result<Self, &'static str> {
        let trimmed = text.trim();
        if trimmed.starts_with('[')
            && let Ok(list) = serde_json::from_str::<Vec<String>>(trimmed)
        {
            return Ok(list);
        }
        Ok(trimmed
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect())
    }
}
