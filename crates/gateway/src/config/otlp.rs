//! [`OtlpConfig`]: the OpenTelemetry export settings (`otlp_endpoint`,
//! `OTEL_EXPORTER_OTLP_HEADERS`), parsed here with the rest of the config;
//! [`crate::otel`] exports with them.

use std::time::Duration;

use http::{HeaderName, HeaderValue, Uri};

const QUEUE: usize = 8192;
const BATCH: usize = 512;
const FLUSH: Duration = Duration::from_secs(1);
const TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how to export.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpConfig {
    /// The traces URL (`ENDPOINT/v1/traces`).
    pub traces_url: Uri,
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
}

// === impl OtlpConfig ===

impl OtlpConfig {
    /// From a base endpoint (`http://collector:4318`; `/v1/traces` is
    /// appended unless the path already ends with it) and the
    /// `OTEL_EXPORTER_OTLP_HEADERS` syntax (`k=v,k2=v2`, values
    /// percent-encoded). Errors never quote header values.
    pub fn parse(endpoint: &str, headers: Option<&str>) -> Result<OtlpConfig, String> {
        let endpoint = endpoint.trim().trim_end_matches('/');
        let url = if endpoint.ends_with("/v1/traces") {
            endpoint.to_string()
        } else {
            format!("{endpoint}/v1/traces")
        };
        let uri: Uri = url
            .parse()
            .map_err(|_| "otlp endpoint: not a URL".to_string())?;
        match (uri.scheme_str(), uri.host()) {
            (Some("http" | "https"), Some(h)) if !h.is_empty() => {}
            _ => return Err("otlp endpoint: expected http://HOST:PORT or https://…".into()),
        }
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
            headers: parsed,
            queue: QUEUE,
            batch: BATCH,
            flush: FLUSH,
            timeout: TIMEOUT,
        })
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
}
