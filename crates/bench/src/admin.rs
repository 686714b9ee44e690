//! The gateway's admin endpoints as the bench reads them: `/metrics`
//! samples, the recorder's counts, waiting for the drain.

use std::{net::SocketAddr, time::Duration};

use bytes::Bytes;

async fn fetch_metrics(addr: SocketAddr) -> Result<String, String> {
    get(addr, "/metrics").await
}

/// The body of `GET path` on `addr` (over TLS to a gateway child serving
/// HTTPS, `TOOLWARDEN_BENCH_TLS`).
pub(crate) async fn get(addr: SocketAddr, path: &str) -> Result<String, String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("GET {path}: {e}"))?;
    match crate::tls::client_for(addr) {
        None => get_over(tcp, addr, path).await,
        Some(connector) => {
            let name = rustls::pki_types::ServerName::try_from("localhost")
                .map_err(|e| format!("GET {path}: {e}"))?;
            let tls = connector
                .connect(name, tcp)
                .await
                .map_err(|e| format!("GET {path}: {e}"))?;
            get_over(tls, addr, path).await
        }
    }
}

async fn get_over<T>(io: T, addr: SocketAddr, path: &str) -> Result<String, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use http_body_util::{BodyExt, Empty};
    let (mut send, conn) =
        hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(hyper_util::rt::TokioIo::new(io))
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
    tokio::spawn(conn);
    let req = http::Request::get(path)
        .header("host", addr.to_string())
        .body(Empty::new())
        .map_err(|e| format!("GET {path}: {e}"))?;
    let resp = send
        .send_request(req)
        .await
        .map_err(|e| format!("GET {path}: {e}"))?;
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("GET {path}: {e}"))?
        .to_bytes();
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// (events dropped, events written) so far, from the gateway's `/metrics`.
pub(crate) async fn recorder_counts(addr: SocketAddr) -> Result<(f64, f64), String> {
    let m = fetch_metrics(addr).await?;
    Ok((
        metric(&m, "toolwarden_events_dropped_total"),
        metric(&m, "toolwarden_events_written_total"),
    ))
}

/// Waits (at most 10 s) until the recorder has written everything: its
/// written count stops moving.
pub(crate) async fn drain(addr: SocketAddr) {
    let mut last = f64::NAN;
    for _ in 0..30 {
        let Ok((_, written)) = recorder_counts(addr).await else {
            return;
        };
        if written == last {
            return;
        }
        last = written;
        tokio::time::sleep(Duration::from_millis(330)).await;
    }
}

/// (sum, count) of the gateway-overhead histogram.
pub(crate) async fn overhead_totals(addr: SocketAddr) -> Result<(f64, f64), String> {
    let m = fetch_metrics(addr).await?;
    Ok((
        metric(&m, "toolwarden_gateway_overhead_seconds_sum"),
        metric(&m, "toolwarden_gateway_overhead_seconds_count"),
    ))
}

/// Sum of a metric's samples (all label sets).
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let n = series.split('{').next()?;
            (n == name).then(|| value.parse::<f64>().ok()).flatten()
        })
        .sum()
}
