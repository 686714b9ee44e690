//! The one small HTTP exchange Google's credential providers make (the
//! token endpoint and metadata server), over the gateway's upstream
//! client, with a deadline and a bounded answer; and when any cached
//! credential is fetched again (AWS's too).

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Limited};

use crate::http_client::HttpClient;

/// How long one credential exchange may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest credential answer read.
const MAX_ANSWER: usize = 64 * 1024;

/// Send one request and read its answer. Errors say what failed, never
/// with the request's headers or body (they hold credentials).
pub(crate) async fn exchange(
    client: &HttpClient,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
    body: Bytes,
) -> Result<(StatusCode, Bytes), String> {
    let mut req = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let req = req
        .body(crate::http_client::whole(body))
        .map_err(|e| format!("{uri}: {e}"))?;
    let work = async {
        let response = client
            .request(req)
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| format!("{uri}: reading the answer: {e}"))?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(TIMEOUT, work)
        .await
        .map_err(|_| format!("{uri}: no answer within {} s", TIMEOUT.as_secs()))?
}

/// When a credential that lasts `lifetime` should be fetched again: five
/// minutes before it expires, or halfway for short ones.
pub(crate) fn refresh_margin(lifetime: Duration) -> Duration {
    (lifetime / 2).min(Duration::from_secs(300))
}
