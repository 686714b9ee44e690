//! The upstream client: hyper-util's pooled client over rustls (ring,
//! webpki roots, HTTP/1.1 and HTTP/2 by ALPN), plain HTTP allowed (local
//! mocks), TCP_NODELAY, a connect timeout.

use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioTimer},
};

use crate::{Config, server::GatewayError};

/// The client every proxied request goes through.
pub type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Build the pooled upstream client.
pub fn build_client(config: &Config) -> Result<HttpClient, GatewayError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(config.connect_timeout));
    let https = HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
        .map_err(|e| GatewayError::tls(e.to_string()))?
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http);
    Ok(Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(std::time::Duration::from_secs(90))
        .build(https))
}
