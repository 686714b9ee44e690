//! [`OtlpConfig`]: the OpenTelemetry export settings (`otlp_endpoint`,
//! `otlp_protocol`, `OTEL_EXPORTER_OTLP_*`, the resource from
//! `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`), parsed here with the
//! rest of the config; [`crate::otel`] exports with them.

use std::time::Duration;

use http::{HeaderName, HeaderValue, Uri};

const QUEUE: usize = 8192;
const BATCH: usize = 512;
const FLUSH: Duration = Duration::from_secs(1);
const TIMEOUT: Duration = Duration::from_secs(10);

/// The `service.name` exported when neither variable names one.
pub(crate) const DEFAULT_SERVICE_NAME: &str = "toolwarden-gateway";

/// The resource variables as read from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceEnv {
    /// `OTEL_SERVICE_NAME`.
    pub service_name: Option<String>,
    /// `OTEL_RESOURCE_ATTRIBUTES` (`k=v,k2=v2`, values percent-encoded).
    pub attributes: Option<String>,
}

/// The OTLP transport (`otlp_protocol`; `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL`), named as the specification names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OtlpProtocol {
    /// `http/protobuf`: a protobuf body POSTed to `…/v1/traces` over
    /// HTTP/1.1 or HTTP/2 (collectors listen on 4318).
    #[default]
    HttpProtobuf,
    /// `grpc`: the `TraceService/Export` call over HTTP/2 (cleartext with
    /// prior knowledge for `http://`, ALPN `h2` for `https://`; collectors
    /// listen on 4317).
    Grpc,
}

/// How export bodies are compressed (`otlp_compression`;
/// `OTEL_EXPORTER_OTLP_TRACES_COMPRESSION`, `OTEL_EXPORTER_OTLP_COMPRESSION`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OtlpCompression {
    /// As they are (the specification's default).
    #[default]
    None,
    /// gzip at its fastest level: `Content-Encoding: gzip` over HTTP, the
    /// message compressed and `grpc-encoding: gzip` over gRPC.
    Gzip,
}

// === impl OtlpCompression ===

impl OtlpCompression {
    /// `none` or `gzip`.
    pub fn parse(text: &str) -> Result<OtlpCompression, String> {
        match text.trim() {
            "" | "none" => Ok(OtlpCompression::None),
            "gzip" => Ok(OtlpCompression::Gzip),
            other => Err(format!(
                "otlp compression: expected none or gzip, not {other:?}"
            )),
        }
    }
}

/// The gRPC method a span batch is exported with.
pub(crate) const GRPC_EXPORT_PATH: &str =
    "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

// === impl OtlpProtocol ===

impl OtlpProtocol {
    /// From the specification's names: `http/protobuf` or `grpc`
    /// (`http/json` is refused: not supported).
    pub fn parse(text: &str) -> Result<OtlpProtocol, String> {
        match text.trim() {
            "http/protobuf" => Ok(OtlpProtocol::HttpProtobuf),
            "grpc" => Ok(OtlpProtocol::Grpc),
            "http/json" => {
                Err("otlp protocol: http/json is not supported (http/protobuf or grpc)".into())
            }
            other => Err(format!(
                "otlp protocol: expected http/protobuf or grpc, not {other:?}"
            )),
        }
    }
}

/// Where an endpoint came from, which says how its path is read (the
/// specification's rules for `OTEL_EXPORTER_OTLP_ENDPOINT` and
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointKind {
    /// A base URL: over HTTP, `/v1/traces` is appended unless the path
    /// already ends with it.
    Base,
    /// The traces URL itself: over HTTP, used as it is.
    Traces,
}

/// Which transport settings came from the standard `OTEL_EXPORTER_OTLP_*`
/// variables rather than the gateway's own (flag, `TOOLWARDEN_` variable,
/// file): those are read only when the gateway exports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FromOtelVars {
    /// `otlp_protocol`, from `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`.
    pub(crate) protocol: bool,
    /// `otlp_compression`, from `OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION`.
    pub(crate) compression: bool,
}

/// The sampler variables as read from the environment
/// (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SamplerEnv {
    /// `OTEL_TRACES_SAMPLER`.
    pub sampler: Option<String>,
    /// `OTEL_TRACES_SAMPLER_ARG`: the ratio of the `traceidratio` ones.
    pub arg: Option<String>,
}

/// Which spans are exported, by the OpenTelemetry SDK's samplers
/// (`OTEL_TRACES_SAMPLER`; default `parentbased_always_on`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    /// A span under a client's `traceparent` follows its `sampled` flag.
    pub parent_based: bool,
    /// The decision for the rest (for all, when not `parent_based`).
    pub root: RootSampler,
}

/// The decision for a span without a parent to follow.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum RootSampler {
    /// Every span.
    AlwaysOn,
    /// None.
    AlwaysOff,
    /// A share of traces, by trace id: the same for every span of a trace
    /// (a conversation) and on every gateway.
    TraceIdRatio(f64),
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            parent_based: true,
            root: RootSampler::AlwaysOn,
        }
    }
}

// === impl Sampler ===

impl Sampler {
    /// From the environment's variables, as the SDKs read them; a sampler
    /// the gateway does not have, or a ratio outside 0–1, is an error
    /// naming the variable (the SDKs fall back with a warning; a gateway
    /// fails where it is set up).
    pub fn from_env(env: &SamplerEnv) -> Result<Sampler, String> {
        let name = env.sampler.as_deref().map(str::trim).unwrap_or("");
        let ratio = || -> Result<f64, String> {
            match env.arg.as_deref().map(str::trim) {
                None | Some("") => Ok(1.0),
                Some(text) => text
                    .parse::<f64>()
                    .ok()
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or_else(|| {
                        format!("OTEL_TRACES_SAMPLER_ARG {text:?}: expected a ratio from 0 to 1")
                    }),
            }
        };
        let (parent_based, root) = match name {
            "" | "parentbased_always_on" => (true, RootSampler::AlwaysOn),
            "parentbased_always_off" => (true, RootSampler::AlwaysOff),
            "parentbased_traceidratio" => (true, RootSampler::TraceIdRatio(ratio()?)),
            "always_on" => (false, RootSampler::AlwaysOn),
            "always_off" => (false, RootSampler::AlwaysOff),
            "traceidratio" => (false, RootSampler::TraceIdRatio(ratio()?)),
            other => {
                return Err(format!(
                    "OTEL_TRACES_SAMPLER {other:?}: expected always_on, always_off, traceidratio, \
                     parentbased_always_on, parentbased_always_off or parentbased_traceidratio"
                ));
            }
        };
        Ok(Sampler { parent_based, root })
    }

    /// Whether a span of trace `trace_id`, under the client's sampling
    /// decision `parent` if its request carried one, is exported.
    pub fn samples(&self, trace_id: &[u8; 16], parent: Option<bool>) -> bool {
        if let (true, Some(sampled)) = (self.parent_based, parent) {
            return sampled;
        }
        match self.root {
            RootSampler::AlwaysOn => true,
            RootSampler::AlwaysOff => false,
            RootSampler::TraceIdRatio(ratio) if ratio >= 1.0 => true,
            RootSampler::TraceIdRatio(ratio) => {
                // The trace id's last 7 bytes, its randomness in W3C Trace
                // Context level 2, against the ratio of their range.
                let mut low = [0u8; 8];
                low[1..].copy_from_slice(&trace_id[9..]);
                let randomness = u64::from_be_bytes(low);
                randomness < (ratio * (1u64 << 56) as f64) as u64
            }
        }
    }
}

/// Where and how to export. Its `Debug` hides the URL's password and the
/// headers' values.
#[derive(Clone, PartialEq)]
pub struct OtlpConfig {
    /// The URL each batch goes to: `ENDPOINT/v1/traces` over HTTP, the
    /// endpoint's origin and the `TraceService/Export` method's path over gRPC.
    pub traces_url: Uri,
    /// The transport.
    pub protocol: OtlpProtocol,
    /// Which spans are exported.
    pub sampler: Sampler,
    /// How the bodies are compressed.
    pub compression: OtlpCompression,
    /// Extra request headers (e.g. an API key); never logged.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Spans waiting for export at most.
    pub queue: usize,
    /// Spans per request at most.
    pub batch: usize,
    /// Longest wait before a partial batch is sent.
    pub flush: Duration,
    /// Time allowed per export request.
    pub timeout: Duration,
    /// The resource's attributes as the user set them, `service.name`
    /// first ([`OtlpConfig::with_resource`]); the exporter adds
    /// `service.version` and a `service.instance.id` unless given here.
    pub resource: Vec<(String, String)>,
}

// === impl OtlpConfig ===

impl std::fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = self.traces_url.to_string();
        let headers: Vec<(&HeaderName, super::redact::Hidden)> = self
            .headers
            .iter()
            .map(|(name, _)| (name, super::redact::Hidden))
            .collect();
        f.debug_struct("OtlpConfig")
            .field("traces_url", &super::redact::RedactedUrl(&url))
            .field("protocol", &self.protocol)
            .field("sampler", &self.sampler)
            .field("compression", &self.compression)
            .field("headers", &headers)
            .field("queue", &self.queue)
            .field("batch", &self.batch)
            .field("flush", &self.flush)
            .field("timeout", &self.timeout)
            .field("resource", &self.resource)
            .finish()
    }
}

impl OtlpConfig {
    /// From a base endpoint (`http://collector:4318`; `/v1/traces` is
    /// appended unless the path already ends with it) and the
    /// `OTEL_EXPORTER_OTLP_HEADERS` syntax (`k=v,k2=v2`, values
    /// percent-encoded). Errors never quote header values.
    pub fn parse(endpoint: &str, headers: Option<&str>) -> Result<OtlpConfig, String> {
        OtlpConfig::parse_with(
            OtlpProtocol::HttpProtobuf,
            endpoint,
            EndpointKind::Base,
            headers,
        )
    }

    /// As [`OtlpConfig::parse`], for `protocol` and an endpoint of `kind`.
    /// A gRPC endpoint is an origin (`http://collector:4317`): a path
    /// there is refused rather than silently dropped.
    pub fn parse_with(
        protocol: OtlpProtocol,
        endpoint: &str,
        kind: EndpointKind,
        headers: Option<&str>,
    ) -> Result<OtlpConfig, String> {
        let endpoint = endpoint.trim();
        if let Some(problem) = super::userinfo::raw_userinfo(endpoint) {
            // Not the URL: where its user info ends is what is unclear.
            return Err(format!("otlp endpoint: {problem}"));
        }
        // The value is named in the error (its password, if any, hidden).
        let shown = toolwarden_store::redact_url(endpoint);
        let origin: Uri = endpoint.parse().map_err(|_| {
            format!("otlp endpoint {shown:?}: not a URL; expected http://HOST:PORT or https://…")
        })?;
        match (origin.scheme_str(), origin.host()) {
            (Some("http" | "https"), Some(h)) if !h.is_empty() => {}
            (None, _) => {
                return Err(format!(
                    "otlp endpoint {shown:?}: missing scheme; expected http://{shown} or https://{shown}"
                ));
            }
            _ => {
                return Err(format!(
                    "otlp endpoint {shown:?}: expected http://HOST:PORT or https://…"
                ));
            }
        }
        let url = match protocol {
            OtlpProtocol::HttpProtobuf => {
                let endpoint = endpoint.trim_end_matches('/');
                if kind == EndpointKind::Traces || endpoint.ends_with("/v1/traces") {
                    endpoint.to_string()
                } else {
                    format!("{endpoint}/v1/traces")
                }
            }
            OtlpProtocol::Grpc => {
                if !matches!(origin.path(), "" | "/") || origin.query().is_some() {
                    return Err("otlp endpoint: a gRPC endpoint is http://HOST:PORT or \
                                https://HOST:PORT, without a path"
                        .into());
                }
                let (Some(scheme), Some(authority)) = (origin.scheme_str(), origin.authority())
                else {
                    return Err("otlp endpoint: expected http://HOST:PORT or https://…".into());
                };
                format!("{scheme}://{authority}{GRPC_EXPORT_PATH}")
            }
        };
        let uri: Uri = url
            .parse()
            .map_err(|_| "otlp endpoint: not a URL".to_string())?;
        let mut parsed = Vec::new();
        for (n, pair) in headers
            .unwrap_or("")
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .enumerate()
        {
            let (k, v) = pair
                .split_once('=')
                .ok_or("otlp headers: expected key=value pairs separated by commas")?;
            // Not quoted: a pair written `Authorization: Basic …=` puts the
            // credential before its first `=`.
            let name = HeaderName::try_from(k.trim()).map_err(|_| {
                format!(
                    "otlp headers: pair {} does not start with a header name \
                     (expected key=value, e.g. Authorization=Basic%20…)",
                    n + 1
                )
            })?;
            let mut value = HeaderValue::try_from(percent_decode(v.trim())).map_err(|_| {
                format!("otlp headers: the value of {name} is not a valid header value")
            })?;
            value.set_sensitive(true);
            parsed.push((name, value));
        }
        Ok(OtlpConfig {
            traces_url: uri,
            protocol,
            sampler: Sampler::default(),
            compression: OtlpCompression::None,
            headers: parsed,
            queue: QUEUE,
            batch: BATCH,
            flush: FLUSH,
            timeout: TIMEOUT,
            resource: vec![("service.name".into(), DEFAULT_SERVICE_NAME.into())],
        })
    }

    /// The resource by the OpenTelemetry SDK's environment rules:
    /// `OTEL_RESOURCE_ATTRIBUTES` (`k=v` pairs separated by commas, values
    /// percent-encoded, a later key over an earlier one), and
    /// `OTEL_SERVICE_NAME`, which wins over a `service.name` among them;
    /// without either, `toolwarden-gateway`. A malformed list is refused
    /// (the SDKs drop it with a warning; a gateway fails where it is set up).
    pub fn with_resource(mut self, env: &ResourceEnv) -> Result<OtlpConfig, String> {
        let mut attributes: Vec<(String, String)> = Vec::new();
        for (n, pair) in env
            .attributes
            .as_deref()
            .unwrap_or("")
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .enumerate()
        {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                format!(
                    "OTEL_RESOURCE_ATTRIBUTES: pair {} is not key=value (expected k=v,k2=v2)",
                    n + 1
                )
            })?;
            let key = k.trim();
            if key.is_empty() {
                return Err(format!(
                    "OTEL_RESOURCE_ATTRIBUTES: pair {} has no key",
                    n + 1
                ));
            }
            let value = percent_decode(v.trim());
            attributes.retain(|(k, _)| k != key);
            attributes.push((key.to_string(), value));
        }
        let named = env
            .service_name
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let from_list = attributes
            .iter()
            .position(|(k, _)| k == "service.name")
            .map(|i| attributes.remove(i).1);
        let service = named
            .or(from_list)
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string());
        attributes.insert(0, ("service.name".to_string(), service));
        self.resource = attributes;
        Ok(self)
    }
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair written as an HTTP header (`key: value`) fails without
    /// quoting the credential that sits before its first `=`.
    #[test]
    fn a_malformed_header_pair_is_refused_without_its_credential() {
        let e = OtlpConfig::parse("http://c:4318", Some("x-a=1,Authorization: Basic cGs6c2s="))
            .unwrap_err();
        assert!(e.contains("pair 2"), "{e}");
        assert!(!e.contains("cGs6c2s"), "{e}");
        let ok =
            OtlpConfig::parse("http://c:4318", Some("Authorization=Basic%20cGs6c2s=")).unwrap();
        assert_eq!(ok.headers[0].1.as_bytes(), b"Basic cGs6c2s=");
    }

    /// A password (or user name) holding a raw `/`, `?` or `#` ends the
    /// URL's authority there: `http://u:12/34@collector:4318` was taken
    /// as host `u`, port 12, and exported there. Refused, saying to
    /// percent-encode it, without the password; encoded, it is read.
    #[test]
    fn a_password_holding_a_slash_is_refused_without_it() {
        for protocol in [OtlpProtocol::HttpProtobuf, OtlpProtocol::Grpc] {
            for endpoint in [
                "http://otel:98/76@collector:4318",
                "http://otel:pw/zq@collector:4318",
                "https://otel:pw?zq@collector:4318",
                "http://otel:pw#zq@collector:4318",
                "http://tok/zq@collector:4318",
                "http://otel:98/76@collector:4318/v1/traces",
            ] {
                let e = OtlpConfig::parse_with(protocol, endpoint, EndpointKind::Base, None)
                    .unwrap_err();
                assert!(e.contains("percent-encode"), "{endpoint}: {e}");
                assert!(e.contains("%2F"), "{endpoint}: {e}");
                for secret in ["76", "pw", "zq", "tok", "collector"] {
                    assert!(!e.contains(secret), "{endpoint}: {e}");
                }
            }
            let ok = OtlpConfig::parse_with(
                protocol,
                "http://otel:pw%2Fzq@collector:4318",
                EndpointKind::Base,
                None,
            )
            .unwrap();
            assert_eq!(ok.traces_url.host(), Some("collector"));
            assert_eq!(ok.traces_url.port_u16(), Some(4318));
        }
    }

    proptest::proptest! {
        /// Whatever a password holds, the endpoint is the collector's or
        /// it is refused without the password; percent-encoded, it is
        /// the collector's.
        #[test]
        fn an_endpoint_is_the_collector_or_refused(
            user in "[a-z0-9/?#]{0,6}",
            password in "[a-z0-9/?#@:%]{0,12}",
            grpc: bool,
        ) {
            let protocol = if grpc { OtlpProtocol::Grpc } else { OtlpProtocol::HttpProtobuf };
            let parse = |endpoint: &str| {
                OtlpConfig::parse_with(protocol, endpoint, EndpointKind::Base, None)
            };
            let endpoint = format!("http://{user}:{password}@collector:4318");
            match parse(&endpoint) {
                Ok(c) => proptest::prop_assert_eq!(c.traces_url.host(), Some("collector")),
                Err(e) => proptest::prop_assert!(
                    password.len() < 4 || !e.contains(&password),
                    "{}", e
                ),
            }
            let encode = |s: &str| {
                percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            };
            let encoded = parse(&format!(
                "http://{}:{}@collector:4318",
                encode(&user),
                encode(&password)
            ));
            proptest::prop_assert!(encoded.is_ok(), "{:?}", encoded);
            let encoded = encoded.unwrap();
            proptest::prop_assert_eq!(encoded.traces_url.host(), Some("collector"));
        }
    }

    /// The SDKs' sampler names; a ratio decides by trace id, the same
    /// way for every span of a trace; a parent-based sampler follows the
    /// client's flag; a bad name or ratio is refused.
    #[test]
    fn samplers_follow_the_sdk_environment_rules() {
        let env = |s: Option<&str>, a: Option<&str>| SamplerEnv {
            sampler: s.map(String::from),
            arg: a.map(String::from),
        };
        let id = |n: u64| {
            let mut t = [0u8; 16];
            t[8..].copy_from_slice(&n.to_be_bytes());
            t
        };
        let default = Sampler::from_env(&env(None, None)).unwrap();
        assert_eq!(default, Sampler::default());
        assert!(default.samples(&id(1), None));
        assert!(!default.samples(&id(1), Some(false)));
        let off = Sampler::from_env(&env(Some("always_off"), None)).unwrap();
        assert!(!off.samples(&id(1), Some(true)), "not parent-based");
        let pb_off = Sampler::from_env(&env(Some("parentbased_always_off"), None)).unwrap();
        assert!(pb_off.samples(&id(1), Some(true)) && !pb_off.samples(&id(1), None));
        let tenth = Sampler::from_env(&env(Some("traceidratio"), Some("0.1"))).unwrap();
        let kept = (0..10_000u64)
            .filter(|n| tenth.samples(&crate::otel::spans::trace_id_bytes(&format!("s{n}")), None))
            .count();
        assert!((800..1200).contains(&kept), "{kept} of 10,000 at 0.1");
        let t = crate::otel::spans::trace_id_bytes("one-conversation");
        assert_eq!(tenth.samples(&t, None), tenth.samples(&t, None));
        let none = Sampler::from_env(&env(Some("parentbased_traceidratio"), Some("0"))).unwrap();
        assert!(!none.samples(&id(u64::MAX), None) && none.samples(&id(0), Some(true)));
        let all = Sampler::from_env(&env(Some("traceidratio"), None)).unwrap();
        assert!(all.samples(&id(u64::MAX), None));
        for (s, a) in [
            (Some("jaeger_remote"), None),
            (Some("traceidratio"), Some("2")),
        ] {
            assert!(
                Sampler::from_env(&env(s, a))
                    .unwrap_err()
                    .contains("OTEL_TRACES_SAMPLER")
            );
        }
    }

    /// `OTEL_SERVICE_NAME` wins over `service.name` in
    /// `OTEL_RESOURCE_ATTRIBUTES`, which wins over the default; values are
    /// percent-decoded; a later key replaces an earlier one.
    #[test]
    fn the_resource_follows_the_sdk_environment_rules() {
        let base = || OtlpConfig::parse("http://c:4318", None).unwrap();
        let env = |name: Option<&str>, attrs: Option<&str>| ResourceEnv {
            service_name: name.map(String::from),
            attributes: attrs.map(String::from),
        };
        let pairs = |c: OtlpConfig| c.resource;
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            pairs(base().with_resource(&env(None, None)).unwrap()),
            [kv("service.name", DEFAULT_SERVICE_NAME)]
        );
        let attrs = "deployment.environment.name=prod, service.name=from-list,team=a%20b,team=c";
        assert_eq!(
            pairs(base().with_resource(&env(None, Some(attrs))).unwrap()),
            [
                kv("service.name", "from-list"),
                kv("deployment.environment.name", "prod"),
                kv("team", "c"),
            ]
        );
        assert_eq!(
            pairs(
                base()
                    .with_resource(&env(Some("gw-eu"), Some(attrs)))
                    .unwrap()
            )[0],
            kv("service.name", "gw-eu")
        );
        let e = base()
            .with_resource(&env(None, Some("a=1,oops")))
            .unwrap_err();
        assert!(e.contains("pair 2"), "{e}");
        assert!(base().with_resource(&env(None, Some("=x"))).is_err());
    }
}
