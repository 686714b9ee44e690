//! Issue 19: what alerts and OpenTelemetry export cost the proxy. Two more
//! gateway children in the same run, both recording to SQLite + JSONL: one
//! with both off; one with alerts evaluated every second (30× the default
//! rate) and firing (the bench's results fail 1 in 4) to a webhook that
//! accepts and never answers, and every request and result exported as
//! OTLP spans to a collector in this process (answering 200). Interleaved
//! blocks of sequential requests to each, CPU per request from each
//! child's own accounting.

use std::{net::SocketAddr, path::Path};

use tokio::net::TcpListener;

use crate::{
    Row,
    child::GatewayChild,
    load::{Shape, sequential},
};

/// Accepts connections and never answers.
async fn black_hole() -> Result<SocketAddr, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("black hole: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("black hole: {e}"))?;
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    Ok(addr)
}

/// An OTLP collector that reads each body and answers 200.
async fn sink() -> Result<SocketAddr, String> {
    use http_body_util::{BodyExt, Full};
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("otlp sink: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("otlp sink: {e}"))?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    |req: http::Request<hyper::body::Incoming>| async move {
                        let _ = req.into_body().collect().await;
                        Ok::<_, hyper::Error>(http::Response::new(Full::new(bytes::Bytes::new())))
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

/// Rows: CPU per request with alerts off, on, and the ratio.
pub async fn compare(
    exe: &Path,
    upstream: &str,
    dir: &Path,
    shape: &Shape,
    requests: usize,
) -> Result<Vec<Row>, String> {
    let hole = black_hole().await?;
    let collector = sink().await?;
    let spawn = |name: &str, alerts: String| {
        let db = format!("sqlite://{}", dir.join(format!("{name}.db")).display());
        let jsonl = dir.join(format!("{name}.jsonl")).display().to_string();
        GatewayChild::spawn_alerts(exe, upstream, &db, &jsonl, &alerts)
    };
    let off = spawn("alerts-off", "off".into())?;
    let on = spawn(
        "alerts-on",
        format!("on:http://{hole}/hook,http://{collector}"),
    )?;
    for gw in [&off, &on] {
        sequential(gw.addr, shape, 300, &|i| Some(format!("warm-{i}"))).await?;
    }
    let block = 500.min(requests.max(1));
    let (mut cpu_off, mut cpu_on, mut done) = (0.0, 0.0, 0);
    while done < requests {
        let n = block.min(requests - done);
        let session = |i: usize| Some(format!("alerts-{}", (done + i) / 4));
        for (gw, cpu) in [(&off, &mut cpu_off), (&on, &mut cpu_on)] {
            let start = gw.cpu_secs();
            sequential(gw.addr, shape, n, &session).await?;
            *cpu += gw.cpu_secs() - start;
        }
        done += n;
    }
    let (us_off, us_on) = (
        cpu_off * 1e6 / requests.max(1) as f64,
        cpu_on * 1e6 / requests.max(1) as f64,
    );
    off.stop();
    on.stop();
    Ok(vec![Row {
        what: format!(
            "gateway CPU per request, alerts + OTLP export OFF vs ON (alerts every 1 s, firing, hanging webhook; every span exported), 1 connection, {requests} requests each, interleaved"
        ),
        direct: format!("off {us_off:.1} µs"),
        gateway: format!("on {us_on:.1} µs"),
        delta: format!("{:+.1} %", (us_on / us_off.max(f64::EPSILON) - 1.0) * 100.0),
        target: "≤ +10 %",
    }])
}
