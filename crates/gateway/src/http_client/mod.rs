//! [`HttpClient`]: the type of the pooled upstream client, a leaf so that
//! the credential providers (`cloud`), which `config` holds, can name it
//! without depending on [`crate::upstream`] (which reads the config);
//! [`ConnectWithin`], the bound on its whole connect; [`answered`], what
//! the gateway's own POSTs (alert webhooks, OTLP) read of an answer, and
//! [`basic_auth`], the credentials of their URLs;
//! [`UpstreamBody`], whole or [`Streamed`].

#[cfg(test)]
pub(crate) mod auth_receiver;
mod early;
mod streamed;

pub(crate) use early::EarlyAnswer;
pub(crate) use streamed::{Progress, Streamed};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http_body_util::{Either, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::{Client, connect::HttpConnector};

/// What the gateway's own POSTs (alert webhooks, OTLP export) need of an
/// answer: its status and `Retry-After` (in seconds), its body read and
/// dropped (at most 64 KiB, within `within`) so that the connection can
/// carry the next request.
pub(crate) async fn answered(
    response: http::Response<hyper::body::Incoming>,
    within: Duration,
) -> (http::StatusCode, Option<Duration>) {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = http_body_util::Limited::new(response.into_body(), 64 * 1024);
    let _ = tokio::time::timeout(within, http_body_util::BodyExt::collect(body)).await;
    (status, retry_after)
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

/// The client every proxied request goes through.
pub(crate) type HttpClient = Client<ConnectWithin<HttpsConnector<HttpConnector>>, UpstreamBody>;

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
