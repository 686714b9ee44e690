//! Pass-through request bodies (routes with no dialect: `/v1/files` and
//! the like) go upstream as they arrive: an upload larger than
//! `max_request_bytes` passes whole, the upstream sees its first bytes
//! before the client has sent the rest, a client that stalls mid-upload is
//! answered 400 naming `client_body_timeout_ms`, and an upstream that never
//! answers is cut off by `first_byte_timeout_ms` counted from the upload's
//! last byte.

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
};
use toolwarden_gateway::{Config, Gateway, RunningGateway};

use super::support::read_to_close;

/// What the upstream does with a request once its head has arrived.
#[derive(Clone, Copy)]
enum Upstream {
    /// Reads the whole `content-length` body, reporting each read, then
    /// answers 200.
    Answer,
    /// Reads the body and never answers.
    Silent,
}

/// An upstream on loopback; each read of a request body is reported as
/// (bytes so far, head) on the channel.
async fn upstream(
    mode: Upstream,
) -> (
    std::net::SocketAddr,
    mpsc::UnboundedReceiver<(usize, String)>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = vec![0u8; 65536];
                let (head_len, body_len) = loop {
                    let n = s.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..at]).to_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length: "))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        break (at + 4, len);
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_len]).into_owned();
                let mut got = buf.len() - head_len;
                let _ = tx.send((got, head.clone()));
                while got < body_len {
                    let n = s.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    got += n;
                    let _ = tx.send((got, head.clone()));
                }
                match mode {
                    Upstream::Answer => {
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             content-length: 13\r\n\r\n{{\"got\":{:>5}}}",
                            got % 100_000
                        );
                        let _ = s.write_all(answer.as_bytes()).await;
                    }
                    Upstream::Silent => tokio::time::sleep(Duration::from_secs(60)).await,
                }
            });
        }
    });
    (addr, rx)
}

async fn gateway(
    upstream: std::net::SocketAddr,
    tweak: impl FnOnce(&mut Config),
) -> RunningGateway {
    let mut config = Config::for_tests(&format!("http://{upstream}"));
    tweak(&mut config);
    Gateway::start(config).await.unwrap()
}

/// An upload's head: `len` bytes to `/v1/files`.
fn head(len: usize) -> String {
    format!(
        "POST /v1/files HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer sk-test\r\n\
         content-type: application/octet-stream\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n"
    )
}

#[tokio::test]
async fn an_upload_larger_than_max_request_bytes_streams_through() {
    let (addr, mut reads) = upstream(Upstream::Answer).await;
    let gw = gateway(addr, |c| c.max_request_bytes = 1 << 20).await;
    const LEN: usize = 5 << 20;
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head(LEN).as_bytes()).await.unwrap();
    // The first half, then a pause: the upstream has part of the body
    // before the client has sent the rest.
    let piece = vec![b'x'; LEN / 2];
    s.write_all(&piece).await.unwrap();
    let (first, upstream_head) = tokio::time::timeout(Duration::from_secs(10), reads.recv())
        .await
        .expect("the upstream gets the head while the client still sends")
        .unwrap();
    assert!(first < LEN, "{first}");
    assert!(
        upstream_head.starts_with("POST /v1/files "),
        "{upstream_head}"
    );
    assert!(
        upstream_head
            .to_lowercase()
            .contains(&format!("content-length: {LEN}\r\n")),
        "{upstream_head}"
    );
    s.write_all(&piece).await.unwrap();
    let answer = read_to_close(&mut s).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let mut last = first;
    while let Ok((n, _)) = reads.try_recv() {
        last = n;
    }
    assert_eq!(last, LEN, "the whole upload arrived");
    gw.shutdown().await;
}

#[tokio::test]
async fn a_client_that_stalls_mid_upload_is_answered_400() {
    let (addr, _reads) = upstream(Upstream::Answer).await;
    let gw = gateway(addr, |c| c.client_body_timeout = Duration::from_millis(300)).await;
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head(1000).as_bytes()).await.unwrap();
    s.write_all(&[b'x'; 400]).await.unwrap();
    let answer = read_to_close(&mut s).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("client_body_timeout_ms"), "{answer}");
    gw.shutdown().await;
}

/// A pause longer than `first_byte_timeout_ms` but within
/// `client_body_timeout_ms`: the upload goes on and gets its answer (the
/// client's silence is the body's bound to judge, not the upstream's).
#[tokio::test]
async fn a_paused_upload_is_judged_by_the_body_timeout() {
    let (addr, _reads) = upstream(Upstream::Answer).await;
    let gw = gateway(addr, |c| {
        c.first_byte_timeout = Some(Duration::from_millis(200));
        c.client_body_timeout = Duration::from_secs(5);
    })
    .await;
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head(1000).as_bytes()).await.unwrap();
    s.write_all(&[b'x'; 500]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    s.write_all(&[b'x'; 500]).await.unwrap();
    let answer = read_to_close(&mut s).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    gw.shutdown().await;
}

#[tokio::test]
async fn an_upstream_that_never_answers_is_cut_off_after_the_upload() {
    let (addr, _reads) = upstream(Upstream::Silent).await;
    let gw = gateway(addr, |c| {
        c.first_byte_timeout = Some(Duration::from_millis(400))
    })
    .await;
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head(2000).as_bytes()).await.unwrap();
    // A slow upload, longer than the first-byte timeout in all: not cut off
    // while its pieces keep coming.
    for _ in 0..4 {
        s.write_all(&[b'x'; 500]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let sent = std::time::Instant::now();
    let answer = read_to_close(&mut s).await;
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    let waited = sent.elapsed();
    assert!(waited >= Duration::from_millis(150), "{waited:?}");
    gw.shutdown().await;
}
