//! The upstream client for what hyper serves: hyper-util's pooled client
//! over rustls (HTTP/1.1 and HTTP/2 by ALPN), plain HTTP allowed (local
//! mocks), TCP_NODELAY, a connect timeout over TCP and TLS together. [`tls_config`] is the one place
//! upstream TLS is set up, for this client and the fast path's
//! ([`crate::h1::pool`]): ring, the webpki roots plus `upstream_ca`.

use hyper_rustls::HttpsConnectorBuilder;
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioTimer},
};

use crate::{Config, startup::GatewayError};

pub(crate) use crate::http_client::HttpClient;

/// Build the pooled upstream client.
pub(crate) fn build_client(config: &Config) -> Result<HttpClient, GatewayError> {
    build(config, false)
}

/// The same client speaking HTTP/2 alone: cleartext with prior knowledge
/// for `http://`, ALPN `h2` for `https://` (OTLP over gRPC).
pub(crate) fn build_http2_client(config: &Config) -> Result<HttpClient, GatewayError> {
    build(config, true)
}

fn build(config: &Config, http2_only: bool) -> Result<HttpClient, GatewayError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    // As `sockets::tune` sets the gateway's other connections.
    http.set_keepalive(Some(crate::sockets::KEEPALIVE_IDLE));
    http.set_keepalive_interval(Some(crate::sockets::KEEPALIVE_INTERVAL));
    http.set_keepalive_retries(Some(crate::sockets::KEEPALIVE_PROBES));
    http.set_connect_timeout(Some(config.connect_timeout));
    let https = HttpsConnectorBuilder::new()
        .with_tls_config(tls_config(config)?)
        .https_or_http();
    let https = if http2_only {
        https.enable_http2().wrap_connector(http)
    } else {
        https.enable_http1().enable_http2().wrap_connector(http)
    };
    let https = crate::http_client::ConnectWithin::new(https, config.connect_timeout);
    Ok(Client::builder(TokioExecutor::new())
        // Writes a request's header names as the client sent them, and
        // keeps the upstream's for the answer (`worker`'s server).
        .http1_preserve_header_case(true)
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(std::time::Duration::from_secs(90))
        .http2_only(http2_only)
        .build(https))
}

/// The rustls client settings for upstreams (ALPN left to the caller).
pub(crate) fn tls_config(config: &Config) -> Result<rustls::ClientConfig, GatewayError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for cert in &config.upstream_roots {
        roots
            .add(cert.clone())
            .map_err(|e| GatewayError::tls(format!("upstream_ca: {e}")))?;
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| GatewayError::tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
