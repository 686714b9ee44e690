//! Issue 19: what alerts and OpenTelemetry export cost the proxy. Three
//! more gateway children in the same run, all recording to SQLite + JSONL:
//! one with both off; one with alerts evaluated every second (30× the
//! default rate) and one every 30 s (the default), both firing (the
//! bench's results fail 1 in 4) to a webhook that accepts and never
//! answers, and every request and result exported as OTLP spans to a
//! collector in this process (answering 200), or, in a fourth child, over
//! gRPC to one answering `OK`, or, in a fifth, gzipped. Interleaved blocks of
//! sequential requests to each (the order rotating), CPU per request from
//! each child's threads' scheduler accounting (ns): the change over the whole run and the
//! median of the blocks' changes.

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

/// An OTLP/gRPC collector (HTTP/2 with prior knowledge) that reads each
/// call and answers `OK` in its trailers, as grpcio and the collector do.
async fn grpc_sink() -> Result<SocketAddr, String> {
    use http_body_util::{BodyExt, Full};
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("otlp grpc sink: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("otlp grpc sink: {e}"))?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    |req: http::Request<hyper::body::Incoming>| async move {
                        let _ = req.into_body().collect().await;
                        let mut trailers = http::HeaderMap::new();
                        trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
                        let body = Full::new(bytes::Bytes::new())
                            .with_trailers(async move { Some(Ok(trailers)) });
                        let mut answer = http::Response::new(body);
                        answer.headers_mut().insert(
                            http::header::CONTENT_TYPE,
                            http::HeaderValue::from_static("application/grpc"),
                        );
                        Ok::<_, hyper::Error>(answer)
                    },
                );
                let _ =
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
            });
        }
    });
    Ok(addr)
}

/// CPU per request of each child over interleaved blocks.
struct Measured {
    /// Total CPU seconds per child.
    cpu: Vec<f64>,
    /// Per block: CPU seconds per child.
    blocks: Vec<Vec<f64>>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// `n` requests to each child in interleaved blocks of `block`, the order
/// of the children rotating from block to block.
async fn interleave(
    children: &[&GatewayChild],
    shape: &Shape,
    requests: usize,
    block: usize,
) -> Result<Measured, String> {
    let k = children.len();
    let mut m = Measured {
        cpu: vec![0.0; k],
        blocks: Vec::new(),
    };
    let (mut done, mut round) = (0, 0);
    while done < requests {
        let n = block.min(requests - done);
        let session = |i: usize| Some(format!("alerts-{}", (done + i) / 4));
        let mut this = vec![0.0; k];
        for j in 0..k {
            let c = (j + round) % k;
            let gw = children[c];
            let start = gw.cpu_secs_fine();
            sequential(gw.addr, shape, n, &session).await?;
            this[c] = gw.cpu_secs_fine() - start;
            m.cpu[c] += this[c];
        }
        m.blocks.push(this);
        done += n;
        round += 1;
    }
    Ok(m)
}

/// Rows: CPU per request with alerts off and on (every 1 s, and every
/// 30 s, the default), change in total and median of the blocks' changes.
pub async fn compare(
    exe: &Path,
    upstream: &str,
    dir: &Path,
    shape: &Shape,
    requests: usize,
) -> Result<Vec<Row>, String> {
    let hole = black_hole().await?;
    let collector = sink().await?;
    let grpc_collector = grpc_sink().await?;
    let spawn = |name: &str, alerts: String| {
        let db = format!("sqlite://{}", dir.join(format!("{name}.db")).display());
        let jsonl = dir.join(format!("{name}.jsonl")).display().to_string();
        GatewayChild::spawn_alerts(exe, upstream, &db, &jsonl, &alerts)
    };
    let urls = format!("http://{hole}/hook,http://{collector}");
    let off = spawn("alerts-off", "off".into())?;
    let fast = spawn("alerts-on", format!("on:{urls}"))?;
    let default = spawn("alerts-default", format!("on@30000:{urls}"))?;
    let grpc = spawn(
        "alerts-grpc",
        format!("on@30000:http://{hole}/hook,grpc+http://{grpc_collector}"),
    )?;
    let gzip = spawn(
        "alerts-gzip",
        format!("on@30000:http://{hole}/hook,gzip+http://{collector}"),
    )?;
    let children = [&off, &fast, &default, &grpc, &gzip];
    for gw in children {
        sequential(gw.addr, shape, 300, &|i| Some(format!("warm-{i}"))).await?;
    }
    let block = 250.min(requests.max(1));
    let m = interleave(&children, shape, requests, block).await?;
    let per = |cpu: f64| cpu * 1e6 / requests.max(1) as f64;
    let change = |c: usize| {
        let total = (m.cpu[c] / m.cpu[0].max(f64::EPSILON) - 1.0) * 100.0;
        let blocks = m
            .blocks
            .iter()
            .map(|b| (b[c] / b[0].max(f64::EPSILON) - 1.0) * 100.0)
            .collect();
        format!(
            "{total:+.1} % (median of {} blocks {:+.1} %)",
            m.blocks.len(),
            median(blocks)
        )
    };
    let rows = [
        (1, "every 1 s (30× the default)", "OTLP/HTTP"),
        (2, "every 30 s (the default)", "OTLP/HTTP"),
        (3, "every 30 s (the default)", "OTLP/gRPC"),
        (4, "every 30 s (the default)", "OTLP/HTTP, gzip"),
    ]
    .into_iter()
    .map(|(c, every, transport)| Row {
            what: format!(
                "gateway CPU per request, alerts + OTLP export OFF vs ON (alerts {every}, firing, hanging webhook; every span exported over {transport}), 1 connection, {requests} requests each, interleaved blocks of {block}"
            ),
            direct: format!("off {:.1} µs", per(m.cpu[0])),
            gateway: format!("on {:.1} µs", per(m.cpu[c])),
            delta: change(c),
            target: "≤ +10 %",
        })
        .collect();
    off.stop();
    fast.stop();
    default.stop();
    grpc.stop();
    gzip.stop();
    Ok(rows)
}
