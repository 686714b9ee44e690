//! The upstream client for what hyper serves: hyper-util's pooled client
//! over rustls (HTTP/1.1 and HTTP/2 by ALPN), plain HTTP allowed (local
//! mocks), TCP_NODELAY, a connect timeout over TCP and TLS together. [`tls_config`] is the one place
//! upstream TLS is set up, for this client and the fast path's
//! ([`crate::h1::pool`]): ring, the webpki roots plus `upstream_ca`; and
//! [`reuse_window`], how long an idle connection may be reused on both
//! paths ([`expire_by_keep_alive`] keeps it on this client's);
//! [`build_unpooled_client`], the same client with no pool. Every one
//! connects to the names the `resolve` setting fixes at their address
//! ([`crate::resolve::FixedAddrs`]).

use hyper_rustls::HttpsConnectorBuilder;
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioTimer},
};

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use hyper_util::client::legacy::connect::CaptureConnection;

use crate::{Config, resolve::FixedAddrs, startup::GatewayError};

/// Idle upstream connections older than this are closed instead of
/// reused, on both paths.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// How long a connection may stay idle and still be reused, when its
/// upstream announced that it closes connections idle for `announced`
/// (`keep-alive: timeout=N`, read by
/// [`keep_alive_timeout`]):
/// that less a margin of half of it, at most 1 s (undici, Node's HTTP
/// client, keeps 1 s), so that a request sent near the end does not cross
/// the upstream's close on the way (and get a 502: it was written, so it
/// is not sent again). Never more than `otherwise`; zero (not reused) for
/// an upstream that keeps none.
pub(crate) fn reuse_window(announced: Option<Duration>, otherwise: Duration) -> Duration {
    match announced {
        Some(t) => (t - (t / 2).min(Duration::from_secs(1))).min(otherwise),
        None => otherwise,
    }
}

/// Expiries at most pending at once on hyper's path
/// ([`expire_by_keep_alive`]).
const MAX_PENDING_EXPIRIES: usize = 4096;

/// Expiries pending now.
static PENDING_EXPIRIES: AtomicUsize = AtomicUsize::new(0);

/// Keeps an upstream's announced keep-alive timeout on hyper's client,
/// whose pool knows one idle timeout for all ([`IDLE_TIMEOUT`]): the
/// connection (`captured`) an answer with these `headers` came on is
/// poisoned (not reused: hyper-util's `Connected::poison`) once its
/// [`reuse_window`] has passed, counted from the answer's head (sooner
/// than from the end of its body: a long stream leaves its connection to
/// close, never to race the upstream's close). One timer per such answer,
/// at most [`MAX_PENDING_EXPIRIES`] at once; past them, or for a window
/// of zero, the connection is not reused at all.
pub(crate) fn expire_by_keep_alive(captured: CaptureConnection, headers: &http::HeaderMap) {
    let announced = headers
        .get_all("keep-alive")
        .iter()
        .find_map(|v| keep_alive_timeout(v.as_bytes()));
    let window = reuse_window(announced, IDLE_TIMEOUT);
    if window >= IDLE_TIMEOUT {
        return;
    }
    let poison = move || {
        if let Some(connected) = captured.connection_metadata().as_ref() {
            connected.poison();
        }
    };
    if window.is_zero() {
        return poison();
    }
    if PENDING_EXPIRIES.fetch_add(1, Ordering::Relaxed) >= MAX_PENDING_EXPIRIES {
        PENDING_EXPIRIES.fetch_sub(1, Ordering::Relaxed);
        return poison();
    }
    tokio::spawn(async move {
        tokio::time::sleep(window).await;
        poison();
        PENDING_EXPIRIES.fetch_sub(1, Ordering::Relaxed);
    });
}

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

/// The same client keeping no connection idle: each request goes on a new
/// one (an idempotent request sent again because the upstream closed the
/// pooled connection it went on: `proxy::replay`). One per gateway.
pub(crate) fn build_unpooled_client(config: &Config) -> Result<HttpClient, GatewayError> {
    build_with(config, false, false)
}

fn build(config: &Config, http2_only: bool) -> Result<HttpClient, GatewayError> {
    build_with(config, http2_only, true)
}

fn build_with(config: &Config, http2_only: bool, pool: bool) -> Result<HttpClient, GatewayError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    // As `sockets::tune` sets the gateway's other connections.
    http.set_keepalive(Some(crate::sockets::KEEPALIVE_IDLE));
    http.set_keepalive_interval(Some(crate::sockets::KEEPALIVE_INTERVAL));
    http.set_keepalive_retries(Some(crate::sockets::KEEPALIVE_PROBES));
    http.set_connect_timeout(Some(config.connect_timeout));
    // Under TLS: the names `resolve` fixes are connected to at their
    // address, and TLS still checks the name.
    let fixed = FixedAddrs::new(http, config.resolve.clone());
    let https = HttpsConnectorBuilder::new()
        .with_tls_config(tls_config(config)?)
        .https_or_http();
    let https = if http2_only {
        https.enable_http2().wrap_connector(fixed)
    } else {
        https.enable_http1().enable_http2().wrap_connector(fixed)
    };
    let https = crate::http_client::ConnectWithin::new(https, config.connect_timeout);
    Ok(Client::builder(TokioExecutor::new())
        // Writes a request's header names as the client sent them, and
        // keeps the upstream's for the answer (`worker`'s server).
        .http1_preserve_header_case(true)
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(IDLE_TIMEOUT)
        .pool_max_idle_per_host(if pool {
            config.memory.upstream_max_idle
        } else {
            0
        })
        .http2_only(http2_only)
        .build(https))
}

/// The idle timeout an upstream announces in a `Keep-Alive` value
/// (`timeout=5, max=100`: RFC 2068 §19.7.1.1, as Node's and Apache's
/// servers send it): how long it keeps a connection open between
/// requests, in whole seconds (quoted or not): the digits the value starts
/// with, as undici (Node's `fetch`) reads them (`/timeout=(\d+)/`), so
/// `timeout=5s` is 5 s and `timeout=1.5` 1 s, never longer than meant.
/// `None` without a `timeout` parameter starting with a digit, or one too
/// large to count.
pub(crate) fn keep_alive_timeout(value: &[u8]) -> Option<Duration> {
    value.split(|&b| b == b',').find_map(|param| {
        let (name, value) = split_once(param, b'=')?;
        if !name.trim_ascii().eq_ignore_ascii_case(b"timeout") {
            return None;
        }
        let value = value.trim_ascii();
        let value = value
            .strip_prefix(b"\"")
            .and_then(|v| v.strip_suffix(b"\""))
            .unwrap_or(value);
        let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let secs: u64 = std::str::from_utf8(&value[..digits]).ok()?.parse().ok()?;
        Some(Duration::from_secs(secs))
    })
}

/// `bytes` split at the first `at`.
fn split_once(bytes: &[u8], at: u8) -> Option<(&[u8], &[u8])> {
    let i = bytes.iter().position(|&b| b == at)?;
    Some((&bytes[..i], &bytes[i + 1..]))
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The window is the announced timeout less half of it, at most 1 s
    /// less; never longer than the pool's own; none for `timeout=0`.
    #[test]
    fn the_reuse_window_keeps_a_margin_before_the_upstreams_timeout() {
        let (s, ms) = (Duration::from_secs, Duration::from_millis);
        assert_eq!(reuse_window(None, IDLE_TIMEOUT), IDLE_TIMEOUT);
        assert_eq!(reuse_window(Some(s(1)), IDLE_TIMEOUT), ms(500));
        assert_eq!(reuse_window(Some(s(2)), IDLE_TIMEOUT), s(1));
        assert_eq!(reuse_window(Some(s(5)), IDLE_TIMEOUT), s(4));
        assert_eq!(reuse_window(Some(s(600)), IDLE_TIMEOUT), IDLE_TIMEOUT);
        assert_eq!(reuse_window(Some(s(0)), IDLE_TIMEOUT), s(0));
        assert_eq!(reuse_window(Some(s(u64::MAX)), IDLE_TIMEOUT), IDLE_TIMEOUT);
    }

    /// `timeout=N` in any place, case and spacing, quoted or not; anything
    /// else is none.
    #[test]
    fn a_keep_alive_timeout_is_read() {
        let secs = |n| Some(Duration::from_secs(n));
        assert_eq!(keep_alive_timeout(b"timeout=5"), secs(5));
        assert_eq!(keep_alive_timeout(b"timeout=5, max=1000"), secs(5));
        assert_eq!(keep_alive_timeout(b"max=10 , Timeout = 1"), secs(1));
        assert_eq!(keep_alive_timeout(b"timeout=\"30\""), secs(30));
        assert_eq!(keep_alive_timeout(b"timeout=0"), secs(0));
        // As undici reads them: the digits first.
        assert_eq!(keep_alive_timeout(b"timeout=5s"), secs(5));
        assert_eq!(keep_alive_timeout(b"timeout=2s, max=10"), secs(2));
        assert_eq!(keep_alive_timeout(b"timeout=1.5"), secs(1));
        assert_eq!(keep_alive_timeout(b"timeout=\"5s\""), secs(5));
        for none in [
            &b""[..],
            b"max=5",
            b"timeout",
            b"timeout=",
            b"timeout=-1",
            b"timeout=s5",
            b"timeout=.5",
            b"timeout=99999999999999999999999",
            b"xtimeout=5",
        ] {
            assert_eq!(
                keep_alive_timeout(none),
                None,
                "{}",
                String::from_utf8_lossy(none)
            );
        }
    }

    proptest::proptest! {
        /// Any bytes: a timeout or none, never a panic; a written one reads
        /// back among other parameters, whatever follows its digits.
        #[test]
        fn any_keep_alive_reads(
            bytes in proptest::collection::vec(any::<u8>(), 0..60),
            n in 0u64..100_000,
            before in "[a-z]{1,6}=[0-9]{0,3}",
            unit in "[a-z.]{0,3}",
        ) {
            let _ = keep_alive_timeout(&bytes);
            let written = format!("{before}, timeout={n}{unit}, max=7");
            prop_assert_eq!(
                keep_alive_timeout(written.as_bytes()),
                Some(Duration::from_secs(n))
            );
        }
    }
}
