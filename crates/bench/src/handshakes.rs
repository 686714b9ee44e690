//! What a TLS handshake costs the gateway: two recording children in the
//! same run, one serving plain HTTP and one HTTPS (the test certificate,
//! ECDSA P-256, as `TOOLWARDEN_BENCH_TLS` serves), each sent requests that
//! each open a new connection, in interleaved blocks, the order rotating:
//! plain; HTTPS resuming the last session (rustls' client cache, TLS 1.3
//! tickets from the gateway's bounded session cache: no certificate
//! signed); HTTPS with no resumption (a full handshake each). HTTP/1.1 by
//! ALPN. And, for what HTTPS costs once connected, blocks on one kept-alive
//! connection to each. CPU per request from each child's threads' scheduler
//! accounting (each child's split by the blocks of each kind), and the
//! latency of connecting and the round trip together.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use tokio_rustls::TlsConnector;

use crate::{
    Row,
    child::GatewayChild,
    load::{Conn, Shape, percentile_ms},
    tls,
};

/// One kind of connection's measurements.
#[derive(Default)]
struct Side {
    cpu: f64,
    latencies: Vec<Duration>,
}

/// How a block's requests connect.
#[derive(Clone, Copy)]
enum Connect {
    /// A new connection for each request.
    Each,
    /// One connection for the block, kept alive.
    Once,
}

/// `n` requests to `gw` (over `tls` when given), on connections opened as
/// `connect` says.
async fn block(
    gw: &GatewayChild,
    tls: Option<&TlsConnector>,
    connect: Connect,
    shape: &Shape,
    n: usize,
    from: usize,
    side: &mut Side,
) -> Result<(), String> {
    let start = gw.cpu_secs_fine();
    let mut kept = None;
    for i in 0..n {
        let session = format!("handshake-{}", (from + i) / 4);
        let began = Instant::now();
        let conn = match (connect, &mut kept) {
            (Connect::Once, Some(conn)) => conn,
            (_, kept) => kept.insert(Conn::open_with(gw.addr, tls.cloned()).await?),
        };
        conn.roundtrip(shape, Some(&session)).await?;
        side.latencies.push(began.elapsed());
        if let Connect::Each = connect {
            kept = None;
        }
    }
    side.cpu += gw.cpu_secs_fine() - start;
    Ok(())
}

/// Rows: the gateway's CPU per request, and p50 latency, with a new
/// connection per request, HTTPS (resumed, and full) against plain HTTP.
pub async fn compare(
    exe: &Path,
    upstream: &str,
    dir: &Path,
    shape: &Shape,
    requests: usize,
) -> Result<Vec<Row>, String> {
    let spawn = |name: &str, tls: bool| {
        let db = format!("sqlite://{}", dir.join(format!("{name}.db")).display());
        let jsonl = dir.join(format!("{name}.jsonl")).display().to_string();
        GatewayChild::spawn_serving(exe, upstream, &db, &jsonl, tls)
    };
    let plain = spawn("handshake-plain", false)?;
    let https = spawn("handshake-tls", true)?;
    let (resumed, full) = (tls::connector(), tls::connector_without_resumption());
    let kinds: [(&GatewayChild, Option<&TlsConnector>, Connect); 5] = [
        (&plain, None, Connect::Each),
        (&https, Some(&resumed), Connect::Each),
        (&https, Some(&full), Connect::Each),
        (&plain, None, Connect::Once),
        (&https, Some(&resumed), Connect::Once),
    ];
    let mut sides: [Side; 5] = Default::default();
    for (&(gw, tls, connect), side) in kinds.iter().zip(&mut sides) {
        block(gw, tls, connect, shape, 100, 0, side).await?;
        *side = Side::default();
    }
    let size = 100.min(requests.max(1));
    let (mut done, mut round) = (0, 0);
    while done < requests {
        let n = size.min(requests - done);
        for j in 0..kinds.len() {
            let k = (j + round) % kinds.len();
            let (gw, tls, connect) = kinds[k];
            block(gw, tls, connect, shape, n, done, &mut sides[k]).await?;
        }
        done += n;
        round += 1;
    }
    let per = |s: &Side| s.cpu * 1e6 / requests.max(1) as f64;
    let cpu: Vec<f64> = sides.iter().map(per).collect();
    let p50: Vec<f64> = sides
        .into_iter()
        .map(|mut s| percentile_ms(&mut s.latencies, 50.0))
        .collect();
    let rows = [
        (0, 1, "a new connection each, HTTPS resumed (TLS 1.3 ticket)"),
        (0, 2, "a new connection each, HTTPS full handshake"),
        (3, 4, "one kept-alive connection a block, HTTPS"),
    ]
    .into_iter()
    .flat_map(|(base, k, how)| {
        [
            Row {
                what: format!(
                    "gateway CPU per request with {how} vs plain HTTP, {requests} requests each, interleaved blocks of {size}"
                ),
                direct: format!("plain {:.1} µs", cpu[base]),
                gateway: format!("HTTPS {:.1} µs", cpu[k]),
                delta: format!(
                    "{:+.1} µs a request ({:.2}×)",
                    cpu[k] - cpu[base],
                    cpu[k] / cpu[base].max(f64::EPSILON)
                ),
                target: "(measured)",
            },
            Row {
                what: format!("p50 of a request (its connecting included) with {how} vs plain HTTP"),
                direct: format!("plain {:.3} ms", p50[base]),
                gateway: format!("HTTPS {:.3} ms", p50[k]),
                delta: format!("{:+.3} ms", p50[k] - p50[base]),
                target: "(measured)",
            },
        ]
    })
    .collect();
    plain.stop();
    https.stop();
    Ok(rows)
}
