//! The one small HTTP exchange Google's credential providers make (the
//! token endpoint and metadata server), over the gateway's upstream
//! client, with a deadline and a bounded answer, never to the gateway's
//! own listening socket ([`CredentialClient`]); and when any cached
//! credential is fetched again (AWS's too).

use std::{fmt, net::SocketAddr, time::Duration};

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Limited};

use crate::{http_client::HttpClient, local::own, resolve::Resolve};

/// How long one credential exchange may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest credential answer read.
const MAX_ANSWER: usize = 64 * 1024;

/// What to do about a credential URL that names the gateway itself.
const FIX: &str = "point the credential file's URL (token_uri, token_url, …) or \
                   GCE_METADATA_HOST at Google's endpoint";

/// The gateway's upstream client (`http`, which applies `resolve`) as the
/// credential providers use it: an exchange whose URL leads to the
/// gateway listening on `listen`, its bound address, is refused before a
/// connection is opened (`local::own`, the start-time check's judgement).
#[derive(Clone)]
pub(crate) struct CredentialClient {
    http: HttpClient,
    listen: SocketAddr,
    resolve: Resolve,
}

impl CredentialClient {
    pub(crate) fn new(http: HttpClient, listen: SocketAddr, resolve: Resolve) -> Self {
        CredentialClient {
            http,
            listen,
            resolve,
        }
    }
}

/// A credential URL as errors show it ([`fmt::Display`]): its scheme,
/// host, port and path, never its user info or query, which may hold a
/// credential (an unreadable one: only that it is).
#[derive(Clone, Copy)]
pub(crate) struct Shown<'a>(pub(crate) &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Ok(uri) = self.0.parse::<http::Uri>() else {
            return f.write_str("an unreadable URL");
        };
        let scheme = uri.scheme_str().unwrap_or("http");
        let host = uri.host().unwrap_or_default();
        match uri.port_u16() {
            Some(port) => write!(f, "{scheme}://{host}:{port}{}", uri.path()),
            None => write!(f, "{scheme}://{host}{}", uri.path()),
        }
    }
}

/// Send one request and read its answer. Errors say what failed, never
/// with the request's headers or body (they hold credentials), nor the
/// URL's user info or query ([`Shown`]).
pub(crate) async fn exchange(
    client: &CredentialClient,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
    body: Bytes,
) -> Result<(StatusCode, Bytes), String> {
    let who = "a Google credential";
    if let Some(problem) = own::refusal(uri, client.listen, &client.resolve, who, FIX).await {
        return Err(problem);
    }
    let client = &client.http;
    let shown = Shown(uri);
    let mut req = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let req = req
        .body(crate::http_client::whole(body))
        .map_err(|e| format!("{shown}: {e}"))?;
    let work = async {
        let response = client
            .request(req)
            .await
            .map_err(|e| format!("{shown}: {e}"))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| format!("{shown}: reading the answer: {e}"))?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(TIMEOUT, work)
        .await
        .map_err(|_| format!("{shown}: no answer within {} s", TIMEOUT.as_secs()))?
}

/// When a credential that lasts `lifetime` should be fetched again: five
/// minutes before it expires, or halfway for short ones.
pub(crate) fn refresh_margin(lifetime: Duration) -> Duration {
    (lifetime / 2).min(Duration::from_secs(300))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exchange whose URL is the gateway's own bound address (port 0
    /// given, the real port named) fails before a connection is opened,
    /// naming the origin only; one to another socket on the same host is
    /// sent. No error shows the URL's user info or query.
    #[tokio::test]
    async fn an_exchange_with_the_gateway_itself_is_not_sent() {
        let gateway = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let listen = gateway.local_addr().unwrap();
        let config = crate::Config::for_tests("http://127.0.0.1:9");
        let http = crate::upstream::build_client(&config).unwrap();
        let client = CredentialClient::new(http, listen, Resolve::default());
        let uri = format!("http://user:pw@localhost:{}/token?secret=1", listen.port());
        let e = exchange(&client, Method::POST, &uri, &[], Bytes::new())
            .await
            .unwrap_err();
        let expected = format!(
            "not sent: a Google credential request to http://localhost:{port} is this \
             gateway's own address ({listen})",
            port = listen.port()
        );
        assert!(e.starts_with(&expected), "{e}");
        assert!(!e.contains("secret") && !e.contains("pw"), "{e}");
        // Nor does any other failure: a socket that refuses the connection.
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let uri = format!("http://user:pw@localhost:{port}/token?secret=1");
        let e = exchange(&client, Method::POST, &uri, &[], Bytes::new())
            .await
            .unwrap_err();
        assert!(
            e.starts_with(&format!("http://localhost:{port}/token: ")),
            "{e}"
        );
        assert!(!e.contains("secret") && !e.contains("pw"), "{e}");
        let accepted = tokio::time::timeout(Duration::from_millis(200), gateway.accept()).await;
        assert!(accepted.is_err(), "a connection reached the gateway");

        let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!(
            "http://127.0.0.1:{}/token",
            other.local_addr().unwrap().port()
        );
        let sent =
            tokio::spawn(
                async move { exchange(&client, Method::POST, &uri, &[], Bytes::new()).await },
            );
        let accepted = tokio::time::timeout(TIMEOUT, other.accept()).await;
        assert!(matches!(accepted, Ok(Ok(_))), "not sent to another socket");
        sent.abort();
    }
}
