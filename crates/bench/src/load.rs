//! Load generation over keep-alive HTTP/1 connections on loopback.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// A content coding's encoder.
pub type Encode = fn(&[u8]) -> Vec<u8>;

/// One request shape: path, headers and body.
#[derive(Debug, Clone)]
pub struct Shape {
    pub path: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
    /// Where the session part of the call ids goes ([`crate::bodies::id_slots`]).
    pub id_slots: Vec<usize>,
    /// A content coding applied to each body as it is sent (outside the
    /// timed part), named in the shape's headers.
    pub encode: Option<Encode>,
    /// Encoded bodies by session, so the client compresses each once (its
    /// CPU would otherwise compete with what is measured).
    encoded: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<Option<String>, Bytes>>>,
}

impl Shape {
    pub fn new(path: &'static str, headers: Vec<(&'static str, String)>, body: Vec<u8>) -> Shape {
        Shape {
            path,
            headers,
            id_slots: crate::bodies::id_slots(&body),
            body: Bytes::from(body),
            encode: None,
            encoded: Default::default(),
        }
    }

    /// The same shape with each body compressed by `encode`, sent with
    /// `content-encoding: coding`.
    pub fn encoded(mut self, coding: &'static str, encode: Encode) -> Shape {
        self.headers.push(("content-encoding", coding.to_string()));
        self.encode = Some(encode);
        self
    }

    /// The body with the call ids of `session` (the same for every request
    /// of a session, so later turns resend the same results).
    fn body_for(&self, session: Option<&str>) -> Bytes {
        let Some(encode) = self.encode else {
            return self.plain_body_for(session);
        };
        let mut cache = self.encoded.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(session.map(str::to_string))
            .or_insert_with(|| Bytes::from(encode(&self.plain_body_for(session))))
            .clone()
    }

    fn plain_body_for(&self, session: Option<&str>) -> Bytes {
        let Some(session) = session.filter(|_| !self.id_slots.is_empty()) else {
            return self.body.clone();
        };
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in session.bytes() {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let digits = format!("{:012x}", hash & 0xffff_ffff_ffff);
        let mut body = self.body.to_vec();
        for &at in &self.id_slots {
            body[at..at + digits.len()].copy_from_slice(digits.as_bytes());
        }
        Bytes::from(body)
    }
}

/// One keep-alive connection.
#[derive(Debug)]
pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> Result<Conn, String> {
        // A gateway child serving HTTPS (`TOOLWARDEN_BENCH_TLS`).
        Self::open_with(addr, crate::tls::client_for(addr)).await
    }

    /// A connection to `addr`, over TLS by `tls` when given.
    pub async fn open_with(addr: SocketAddr, tls: Option<TlsConnector>) -> Result<Conn, String> {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let sender = match tls {
            None => handshake(addr, tcp).await?,
            Some(connector) => {
                let name = rustls::pki_types::ServerName::try_from("localhost")
                    .map_err(|e| e.to_string())?;
                let tls = connector
                    .connect(name, tcp)
                    .await
                    .map_err(|e| format!("TLS handshake {addr}: {e}"))?;
                handshake(addr, tls).await?
            }
        };
        Ok(Conn {
            sender,
            host: addr.to_string(),
        })
    }

    fn request(&self, shape: &Shape, session: Option<&str>) -> Request<Full<Bytes>> {
        let mut req = Request::post(shape.path).header("host", &self.host);
        for (k, v) in &shape.headers {
            req = req.header(*k, v);
        }
        if let Some(s) = session {
            req = req.header("x-session-id", s);
        }
        req.body(Full::new(shape.body_for(session)))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())))
    }

    /// Send and read the whole response; returns (time to first body byte,
    /// total time).
    pub async fn roundtrip(
        &mut self,
        shape: &Shape,
        session: Option<&str>,
    ) -> Result<(Duration, Duration), String> {
        let req = self.request(shape, session);
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection: {e}"))?;
        let start = Instant::now();
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| format!("request: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("status {}", resp.status()));
        }
        let mut body = resp.into_body();
        let mut first = None;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("body: {e}"))?;
            if frame.is_data() && first.is_none() {
                first = Some(start.elapsed());
            }
        }
        let total = start.elapsed();
        Ok((first.unwrap_or(total), total))
    }

    /// Send and wait for the first body bytes only; the response stays
    /// open (returned) until dropped.
    pub async fn open_stream(&mut self, shape: &Shape) -> Result<hyper::body::Incoming, String> {
        let req = self.request(shape, None);
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection: {e}"))?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let mut body = resp.into_body();
        match body.frame().await {
            Some(Ok(_)) => Ok(body),
            Some(Err(e)) => Err(format!("body: {e}")),
            None => Err("the stream ended at once".to_string()),
        }
    }
}

/// HTTP/1's handshake over `io`, its connection driven by a task.
async fn handshake<T>(addr: SocketAddr, io: T) -> Result<SendRequest<Full<Bytes>>, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| format!("handshake {addr}: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// Latencies (total and first byte) of `n` sequential requests on one
/// connection; `session(i)` names each request's session.
pub async fn sequential(
    addr: SocketAddr,
    shape: &Shape,
    n: usize,
    session: &dyn Fn(usize) -> Option<String>,
) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let mut conn = Conn::open(addr).await?;
    let mut totals = Vec::with_capacity(n);
    let mut firsts = Vec::with_capacity(n);
    for i in 0..n {
        let s = session(i);
        let (first, total) = conn.roundtrip(shape, s.as_deref()).await?;
        firsts.push(first);
        totals.push(total);
    }
    Ok((totals, firsts))
}

/// Requests per second with `conns` connections sending `total` requests
/// in all, as fast as they are answered.
pub async fn throughput(
    addr: SocketAddr,
    shape: &Shape,
    conns: usize,
    total: usize,
    session_prefix: &str,
) -> Result<f64, String> {
    let per = total / conns;
    let mut tasks = Vec::new();
    let mut opened = Vec::new();
    for _ in 0..conns {
        opened.push(Conn::open(addr).await?);
    }
    let start = Instant::now();
    for (c, mut conn) in opened.into_iter().enumerate() {
        let shape = shape.clone();
        let prefix = session_prefix.to_string();
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let s = format!("{prefix}-{c}-{}", i / 4);
                conn.roundtrip(&shape, Some(&s)).await?;
            }
            Ok::<_, String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| format!("task: {e}"))??;
    }
    Ok((per * conns) as f64 / start.elapsed().as_secs_f64())
}

/// Percentile (0–100) of durations, in milliseconds.
pub fn percentile_ms(samples: &mut [Duration], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_unstable();
    let rank = ((p / 100.0) * (samples.len() - 1) as f64).round() as usize;
    samples[rank.min(samples.len() - 1)].as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut v: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile_ms(&mut v, 50.0), 51.0);
        assert_eq!(percentile_ms(&mut v, 99.0), 99.0);
        assert_eq!(percentile_ms(&mut v, 0.0), 1.0);
        assert!(percentile_ms(&mut [], 50.0).is_nan());
    }
}
