//! [`HttpClient`]: the type of the pooled upstream client, a leaf so that
//! the credential providers (`cloud`), which `config` holds, can name it
//! without depending on [`crate::upstream`] (which reads the config);
//! [`ConnectWithin`], the bound on its whole connect; [`answered`], what
//! the gateway's own POSTs (alert webhooks, OTLP) read of an answer, and
//! [`basic_auth`], the credentials of their URLs;
//! [`UpstreamBody`], whole or [`Streamed`]; [`went_on_reused_http1`],
//! whether a failed request's connection was one reused from the pool.

#[cfg(test)]
pub(crate) mod auth_receiver;
mod early;
mod streamed;

pub(crate) use early::EarlyAnswer;
use early::Reused;
pub(crate) use streamed::{Progress, Streamed};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http_body_util::{Either, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::{
    Client,
    connect::{CaptureConnection, HttpConnector},
};

use crate::resolve::FixedAddrs;

/// What the gateway's own POSTs (alert webhooks, OTLP export) need of an
/// answer: its status and `Retry-After` ([`retry_after`]), its body read
/// and dropped (at most 64 KiB, within `within`) so that the connection
/// can carry the next request.
pub(crate) async fn answered(
    response: http::Response<hyper::body::Incoming>,
    within: Duration,
) -> (http::StatusCode, Option<Duration>) {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| retry_after(v, std::time::SystemTime::now()));
    let body = http_body_util::Limited::new(response.into_body(), 64 * 1024);
    let _ = tokio::time::timeout(within, http_body_util::BodyExt::collect(body)).await;
    (status, retry_after)
}

/// How long a `Retry-After` value asks to wait at `now`: either form of
/// RFC 9110 (section 10.2.3), seconds (`120`) or an HTTP date (`Wed, 21
/// Oct 2015 07:28:00 GMT`, and the two obsolete date formats; one already
/// past is no wait). `None` for anything else.
pub(crate) fn retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `Authorization: Basic …` for the credentials of `uri`
/// (`http://user:password@host/…`, percent-decoded), as curl and the HTTP
/// libraries send them: the client sends no userinfo itself. For the
/// gateway's own POSTs (alert webhooks, OTLP export). Marked sensitive:
/// never logged.
pub(crate) fn basic_auth(uri: &Uri) -> Option<http::HeaderValue> {
    use base64::Engine as _;
    let (userinfo, _) = uri.authority()?.as_str().rsplit_once('@')?;
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decode = |s| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
    let mut credentials = decode(user);
    credentials.push(b':');
    credentials.extend(decode(password));
    let encoded = base64::engine::general_purpose::STANDARD.encode(credentials);
    let mut value = http::HeaderValue::try_from(format!("Basic {encoded}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// `uri` without its credentials (`user:password@`), the URI the
/// gateway's own POSTs are sent to once [`basic_auth`] has read them: over
/// HTTP/2 the URI's authority is sent as it is (`:authority`, which must
/// not carry them, RFC 9113 section 8.3.1, and which servers and proxies
/// log), where HTTP/1.1's `Host` names the host and port only.
pub(crate) fn without_userinfo(uri: &Uri) -> Uri {
    let Some((_, host)) = uri.authority().and_then(|a| a.as_str().rsplit_once('@')) else {
        return uri.clone();
    };
    let mut parts = uri.clone().into_parts();
    parts.authority = host.parse().ok();
    Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
}

/// Whether the connection a request went on (`captured`) is an HTTP/1
/// connection that had carried an answer before it (reused from the
/// pool), which its upstream may have closed as idle just as the request
/// went out: what Go's Transport requires before it sends a request again
/// (`persistConn.shouldRetryRequest`: "This was a fresh connection.
/// There's no reason the server should've hung up on us"). hyper-util
/// knows whether it reused a connection but does not say; the connection
/// itself does ([`EarlyAnswer`]'s extra). `false` when nothing was
/// captured (no connection was given to the request).
pub(crate) fn went_on_reused_http1(captured: &CaptureConnection) -> bool {
    let metadata = captured.connection_metadata();
    let Some(connected) = metadata.as_ref() else {
        return false;
    };
    if connected.is_negotiated_h2() {
        return false;
    }
    let mut extras = http::Extensions::new();
    connected.get_extras(&mut extras);
    extras.get::<Reused>().is_some_and(Reused::get)
}

/// The client every proxied request goes through.
pub(crate) type HttpClient =
    Client<ConnectWithin<HttpsConnector<FixedAddrs<HttpConnector>>>, UpstreamBody>;

/// A request body for [`HttpClient`]: a whole one (what the gateway read,
/// checked or signed, and its own POSTs) or a client's body forwarded as
/// it arrives ([`Streamed`]: the pass-through routes).
pub(crate) type UpstreamBody = Either<Full<Bytes>, Streamed>;

/// A whole request body.
pub(crate) fn whole(bytes: Bytes) -> UpstreamBody {
    Either::Left(Full::new(bytes))
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A connector whose whole connect — DNS, TCP and the TLS handshake — has
/// `within` to finish (`connect_timeout_ms`), as on the fast path
/// (`h1::pool`). `HttpConnector`'s own timeout covers the TCP connect
/// alone: an upstream that accepted the connection and stalled its
/// handshake held the request until `first_byte_timeout_ms`. Past it the
/// connect fails with an `io::ErrorKind::TimedOut` error, which
/// `ProxyError::from_client_error` reads as a connect timeout. Each
/// connection is an [`EarlyAnswer`]: an answer the upstream sent before a
/// write to it failed is read, not lost.
#[derive(Debug, Clone)]
pub struct ConnectWithin<C> {
    inner: C,
    within: Duration,
}

impl<C> ConnectWithin<C> {
    pub(crate) fn new(inner: C, within: Duration) -> Self {
        ConnectWithin { inner, within }
    }
}

impl<C> tower_service::Service<Uri> for ConnectWithin<C>
where
    C: tower_service::Service<Uri>,
    C::Future: Send + 'static,
    C::Error: Into<BoxError>,
{
    type Response = EarlyAnswer<C::Response>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let within = self.within;
        Box::pin(async move {
            match tokio::time::timeout(within, connecting).await {
                Ok(done) => done.map(EarlyAnswer::new).map_err(Into::into),
                Err(_) => Err(Box::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "connecting (TCP and TLS) took longer than connect_timeout_ms ({} ms)",
                        within.as_millis()
                    ),
                )) as BoxError),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use proptest::prelude::*;

    use super::retry_after;

    /// Both forms of `Retry-After`: seconds, and an HTTP date (what a
    /// receiver or collector behind some proxies sends; it was ignored,
    /// and the backoff's own waits used instead).
    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        // Wed, 21 Oct 2015 07:28:00 GMT
        let date = UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let now = date - Duration::from_secs(30);
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        for form in [
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "Wednesday, 21-Oct-15 07:28:00 GMT",
            "Wed Oct 21 07:28:00 2015",
        ] {
            assert_eq!(
                retry_after(form, now),
                Some(Duration::from_secs(30)),
                "{form}"
            );
        }
        // A date already past: no wait.
        let later = date + Duration::from_secs(5);
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT", later),
            Some(Duration::ZERO)
        );
        for bad in ["", "-1", "1.5", "soon", "Wed, 32 Oct 2015 07:28:00 GMT"] {
            assert_eq!(retry_after(bad, now), None, "{bad}");
        }
    }

    /// Credentials are taken out of the authority, nothing else changes.
    #[test]
    fn userinfo_is_taken_out_of_the_uri() {
        for (uri, expected) in [
            (
                "https://u%40x:p%3Aw@collector:4318/v1/traces?a=b",
                "https://collector:4318/v1/traces?a=b",
            ),
            ("http://bot@receiver/hook", "http://receiver/hook"),
            ("http://[::1]:9/x", "http://[::1]:9/x"),
            ("https://receiver/hook", "https://receiver/hook"),
        ] {
            let uri: http::Uri = uri.parse().unwrap();
            assert_eq!(super::without_userinfo(&uri).to_string(), expected);
        }
    }

    proptest! {
        /// A date the gateway formats reads back as the wait until it;
        /// nothing panics.
        #[test]
        fn any_value_reads(secs in 0u64..4_000_000_000, ahead in 0u64..100_000, junk in ".{0,40}") {
            let now = UNIX_EPOCH + Duration::from_secs(secs);
            let at = now + Duration::from_secs(ahead);
            let text = httpdate::fmt_http_date(at);
            prop_assert_eq!(retry_after(&text, now), Some(Duration::from_secs(ahead)));
            let _ = retry_after(&junk, SystemTime::now());
        }
    }
}
