//! The three sources of a [`RawConfig`]: a TOML file, `TOOLWARDEN_*`
//! environment variables and `serve` flags, and their merge. The keys come
//! from [`super::SETTINGS`]; nothing here lists them again.

use std::path::Path;

use super::{ConfigError, ConfigErrorKind, RawConfig};

/// The key of an unreadable `TOOLWARDEN_ALERT_WINDOW_MS` among the
/// settings that could not be read (the one alert variable that can fail).
const ALERT_WINDOW_KEY: &str = "alert_window_ms";

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
        let mut raw = RawConfig::from_toml_str(&text).map_err(|e| ConfigError {
            message: format!("{}: {}", path.display(), e.message),
            ..e
        })?;
        if let Some(dir) = path.parent() {
            raw.anchor_paths(dir);
        }
        Ok(raw)
    }

    /// A relative path in a config file is read from the file's folder
    /// (`database`'s SQLite file, `jsonl`, `upstream_ca`, `tls_cert`,
    /// `tls_key`), so that
    /// `--config dir/toolwarden.toml` means the same files from wherever
    /// `serve` or `stats` runs. Paths from variables and flags stay
    /// relative to the working directory.
    fn anchor_paths(&mut self, dir: &Path) {
        if dir.as_os_str().is_empty() {
            return;
        }
        if let Some(url) = self.database.as_deref().map(str::trim)
            && !matches!(url, "" | "none" | "off")
            && toolwarden_store::sqlite_path(url).is_some_and(|p| p.is_relative())
        {
            let scheme = ["sqlite://", "sqlite:"]
                .into_iter()
                .find(|s| url.starts_with(s))
                .unwrap_or("");
            let anchored = dir.join(&url[scheme.len()..]);
            self.database = Some(format!("{scheme}{}", anchored.display()));
        }
        for path in [
            &mut self.jsonl,
            &mut self.upstream_ca,
            &mut self.tls_cert,
            &mut self.tls_key,
        ]
        .into_iter()
        .flatten()
        {
            if path.is_relative() {
                *path = dir.join(&*path);
            }
        }
    }

    /// Parse TOML text.
    pub fn from_toml_str(text: &str) -> Result<RawConfig, ConfigError> {
        let error =
            |e: toml::de::Error| ConfigError::new(ConfigErrorKind::Toml, e.to_string().trim_end());
        toml::from_str(text).or_else(|first| {
            // `listen = 8080`: a bare port, as the flag and the variable
            // take it. Read again with the number as text; any other
            // mistake keeps the first error (it names its line).
            let Ok(mut table) = text.parse::<toml::Table>() else {
                return Err(error(first));
            };
            let Some(toml::Value::Integer(port)) = table.get("listen").cloned() else {
                return Err(error(first));
            };
            table.insert("listen".into(), toml::Value::String(port.to_string()));
            toml::Value::Table(table).try_into().map_err(error)
        })
    }

    /// Read `TOOLWARDEN_*` variables from `(name, value)` pairs (pass
    /// `std::env::vars()`, or a map in tests). Other variables are ignored;
    /// malformed numbers are reported by [`RawConfig::validate`]. List
    /// values are a JSON array or comma-separated. An empty value (or
    /// only spaces) is unset: the layer below gives the setting.
    pub fn from_env(vars: impl Iterator<Item = (String, String)>) -> RawConfig {
        let mut raw = RawConfig::default();
        // OpenTelemetry's standard variables, used where the `TOOLWARDEN_`
        // one is not set (whatever order the environment lists them in).
        // A signal's own variable wins over the general one.
        let (mut otel_endpoint, mut otel_headers, mut otel_protocol) = (None, None, None);
        let (mut traces_endpoint, mut traces_headers, mut traces_protocol) = (None, None, None);
        let (mut otel_compression, mut traces_compression) = (None, None);
        for (name, value) in vars {
            // Empty is unset, ours as OpenTelemetry's (its specification
            // says so): `VAR=` in a shell or docker-compose, a `${VAR:-}`
            // template, is how a variable is unset there, and it must not
            // hide the file's value, or the general OTEL variable.
            if (name.starts_with("TOOLWARDEN_") || name.starts_with("OTEL_"))
                && value.trim().is_empty()
            {
                continue;
            }
            let Some(key) = name.strip_prefix("TOOLWARDEN_") else {
                // --- issue 19: OpenTelemetry's standard variables ---
                match name.as_str() {
                    "OTEL_EXPORTER_OTLP_ENDPOINT" => otel_endpoint = Some(value),
                    "OTEL_EXPORTER_OTLP_HEADERS" => otel_headers = Some(value),
                    "OTEL_EXPORTER_OTLP_PROTOCOL" => otel_protocol = Some(value),
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => traces_endpoint = Some(value),
                    "OTEL_EXPORTER_OTLP_TRACES_HEADERS" => traces_headers = Some(value),
                    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" => traces_protocol = Some(value),
                    "OTEL_EXPORTER_OTLP_COMPRESSION" => otel_compression = Some(value),
                    "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION" => traces_compression = Some(value),
                    "OTEL_SERVICE_NAME" => raw.otel_resource.service_name = Some(value),
                    "OTEL_RESOURCE_ATTRIBUTES" => raw.otel_resource.attributes = Some(value),
                    "OTEL_TRACES_SAMPLER" => raw.otel_sampler.sampler = Some(value),
                    "OTEL_TRACES_SAMPLER_ARG" => raw.otel_sampler.arg = Some(value),
                    // --- issue 18: AWS region and credentials ---
                    n if crate::cloud::aws::AwsEnv::wants(n) => {
                        raw.aws_env.insert(n.to_string(), value)
                    }
                    _ => {}
                }
                continue;
            };
            let key = key.to_ascii_lowercase();
            if crate::config::alerts::ALERT_VARIABLES.contains(&key.as_str()) {
                // --- issue 19: alerts ---
                let alerts = raw.alerts.get_or_insert_default();
                if let Err(problem) = alerts.env(&key, &value) {
                    raw.unread.insert(ALERT_WINDOW_KEY, problem);
                }
            } else if !raw.set_text(&key, &name, &value) {
                raw.unknown_variables.push(name);
            }
        }
        if raw.otlp_endpoint.is_none() {
            raw.otlp_endpoint_is_traces = traces_endpoint.is_some();
            raw.otlp_endpoint = traces_endpoint.or(otel_endpoint);
        }
        raw.otlp_headers = raw.otlp_headers.or(traces_headers).or(otel_headers);
        if raw.otlp_protocol.is_none() {
            raw.otlp_protocol = traces_protocol.or(otel_protocol);
            raw.otlp_transport_from_otel.protocol = raw.otlp_protocol.is_some();
        }
        if raw.otlp_compression.is_none() {
            raw.otlp_compression = traces_compression.or(otel_compression);
            raw.otlp_transport_from_otel.compression = raw.otlp_compression.is_some();
        }
        raw
    }

    /// The `serve` flags given, as `(key, value)` pairs (keys of
    /// [`super::SETTINGS`]; the value as written on the command line).
    /// Malformed values are reported by [`RawConfig::validate`], naming
    /// the flag.
    pub fn from_flags<'a>(flags: impl Iterator<Item = (&'a str, &'a str)>) -> RawConfig {
        let mut raw = RawConfig::default();
        for (key, value) in flags {
            let source = format!("--{}", key.replace('_', "-"));
            if !raw.set_text(key, &source, value) {
                raw.problems.push(format!("{source}: no such setting"));
            }
        }
        raw
    }

    /// Field by field, `over`'s value wins where it has one.
    pub fn merge(mut self, mut over: RawConfig) -> RawConfig {
        if over.alerts.as_ref().is_some_and(|a| a.window_ms.is_some()) {
            self.unread.remove(ALERT_WINDOW_KEY);
        }
        if over.otlp_endpoint.is_some() {
            self.otlp_endpoint_is_traces = over.otlp_endpoint_is_traces;
        }
        if over.otlp_protocol.is_some() {
            self.otlp_transport_from_otel.protocol = over.otlp_transport_from_otel.protocol;
        }
        if over.otlp_compression.is_some() {
            self.otlp_transport_from_otel.compression = over.otlp_transport_from_otel.compression;
        }
        self.take_settings(&mut over);
        self.problems.append(&mut over.problems);
        self.unknown_variables.append(&mut over.unknown_variables);
        // --- issue 19: alerts ---
        self.alerts = match (self.alerts, over.alerts) {
            (Some(base), Some(over)) => Some(base.merge(over)),
            (base, over) => over.or(base),
        };
        // --- issue 18: AWS region and credentials ---
        if over.aws_env != crate::cloud::aws::AwsEnv::default() {
            self.aws_env = over.aws_env;
        }
        // --- issue 19: the exported resource ---
        if over.otel_resource != crate::config::otlp::ResourceEnv::default() {
            self.otel_resource = over.otel_resource;
        }
        if over.otel_sampler != crate::config::otlp::SamplerEnv::default() {
            self.otel_sampler = over.otel_sampler;
        }
        self
    }
}
