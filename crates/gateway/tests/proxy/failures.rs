//! Upstream failures and refused requests, answered in the client's
//! dialect.

use super::*;

async fn json_error(response: Response<Incoming>) -> (StatusCode, serde_json::Value) {
    let status = response.status();
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = body_of(response).await;
    (status, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn upstream_down_gives_502_in_each_dialect() {
    let url = dead_upstream_url();
    let host = "127.0.0.1";
    let gw = gateway(&url, |_| {}).await;

    let (response, _c) = send(gw.addr(), post("/v1/messages", &[], b"{}")).await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 502);
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "api_error");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(host) && message.contains("could not connect"),
        "{message}"
    );

    let (response, _c) = send(gw.addr(), post("/v1/chat/completions", &[], b"{}")).await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 502);
    assert_eq!(v["error"]["type"], "upstream_error");
    assert_eq!(v["error"]["code"], "upstream_connect_error");

    let (response, _c) = send(
        gw.addr(),
        post("/v1beta/models/gemini-2.5-pro:generateContent", &[], b"{}"),
    )
    .await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 502);
    assert_eq!(v["error"]["code"], 502);
    assert_eq!(v["error"]["status"], "UNAVAILABLE");

    // The gateway stays up and counts the failures. Each is counted by a
    // task the request spawns as it ends, which a loaded machine can run
    // after the client has its answer: waited for, not timed.
    let counts = || {
        let metrics = gw.metrics();
        ["anthropic", "openai", "gemini"]
            .map(|p| metrics.counter(UPSTREAM_REQUESTS_TOTAL, &[p, "502"]))
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while counts().contains(&0) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(counts(), [1, 1, 1]);
    gw.shutdown().await;
}

#[tokio::test]
async fn no_first_byte_gives_504() {
    let up = upstream(handler(|_| std::future::pending::<Response<UpBody>>())).await;
    let gw = gateway(&format!("http://{}", up.addr), |c| {
        c.first_byte_timeout = Some(Duration::from_millis(300));
    })
    .await;
    let mut up = up;
    let addr = gw.addr();
    let client = tokio::spawn(async move {
        let (response, _c) = send(addr, post("/v1/messages", &[], b"{}")).await;
        json_error(response).await
    });
    up.received.recv().await.unwrap();
    // The request is at the upstream, which never answers. (The gateway's
    // workers run their own clocks: a test's paused clock does not reach them.)
    let (status, v) = client.await.unwrap();
    assert_eq!(status, 504);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("timed out waiting for upstream"),
        "{message}"
    );
    assert!(message.contains("300 ms"), "{message}");
    gw.shutdown().await;
}

#[tokio::test]
async fn reset_mid_stream_appends_the_dialect_error_event() {
    let (tx, rx) = mpsc::channel(8);
    let up = upstream(sse_upstream(Arc::new(Mutex::new(Some(rx))))).await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let (response, _conn) = send(
        gw.addr(),
        post("/v1/messages", &[], b"{\"model\":\"m\",\"stream\":true}"),
    )
    .await;
    let first = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n";
    tx.send(data(first)).await.unwrap();
    let mut body = response.into_body();
    let frame = body.frame().await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), first.as_bytes());
    // Now the upstream connection breaks.
    tx.send(Err(std::io::Error::other("boom"))).await.unwrap();
    let rest = body.collect().await.unwrap().to_bytes();
    let rest = std::str::from_utf8(&rest).unwrap();
    assert!(
        rest.starts_with(
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\""
        ),
        "{rest}"
    );
    assert!(
        rest.contains("stream from upstream 127.0.0.1 broke"),
        "{rest}"
    );
    assert!(rest.ends_with("\n\n"));
    gw.shutdown().await;
}

#[tokio::test]
async fn oversized_request_gets_413_and_is_not_forwarded() {
    let mut up = upstream(handler(|_| async { full(200, &[], b"{}") })).await;
    let gw = gateway(&format!("http://{}", up.addr), |c| c.max_request_bytes = 16).await;
    let (response, _c) = send(
        gw.addr(),
        post(
            "/v1/chat/completions",
            &[],
            b"{\"model\":\"0123456789abcdef\"}",
        ),
    )
    .await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 413);
    assert_eq!(v["error"]["code"], "request_too_large");
    assert!(up.received.try_recv().is_err());
    gw.shutdown().await;
}

/// On hyper's path (a `GET`, a chunked body, a cloud route) the TLS
/// handshake is under `connect_timeout_ms` too, as on the fast path: an
/// upstream that accepts the connection and never answers the handshake
/// is a connect timeout at once, not a wait for `first_byte_timeout_ms`.
#[tokio::test]
async fn a_stalled_tls_handshake_is_a_connect_timeout_on_hypers_path() {
    // Accepts and never speaks; the accepted sockets are kept open.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            open.push(s);
        }
    });
    let gw = gateway(&format!("https://{addr}"), |c| {
        c.connect_timeout = Duration::from_millis(300);
        c.first_byte_timeout = Some(Duration::from_secs(30));
    })
    .await;
    let started = std::time::Instant::now();
    let get = Request::builder()
        .uri("/v1/models")
        .header("host", "localhost")
        .header("authorization", "Bearer sk-test")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (response, _c) = send(gw.addr(), get).await;
    let (status, v) = json_error(response).await;
    let took = started.elapsed();
    assert_eq!(status, 502, "{v}");
    assert_eq!(v["error"]["code"], "upstream_connect_timeout", "{v}");
    assert!(took < Duration::from_secs(3), "answered after {took:?}");
    held.abort();
}

/// Reads one request head from `s`; `None` at its end.
async fn request_head(s: &mut TcpStream) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// An upstream that answers `answered` requests on each connection
/// (`{"connection":N}`, N counting connections from 1; a `HEAD` gets the
/// head alone), then reads the next request and closes the connection
/// without answering it: its idle timeout crossing, on the wire, a
/// request on the connection it is closing. Counts the connections.
async fn closing_upstream(answered: usize) -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::AsyncWriteExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::spawn(async move {
                for _ in 0..answered {
                    let Some(head) = request_head(&mut s).await else {
                        return;
                    };
                    let body = format!("{{\"connection\":{n}}}");
                    let mut answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\n\r\n",
                        body.len()
                    );
                    if !head.starts_with("HEAD ") {
                        answer.push_str(&body);
                    }
                    if s.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
                // The next request is read, then the connection closed.
                let _ = request_head(&mut s).await;
            });
        }
    });
    (addr, accepted)
}

/// A bodyless GET or HEAD (`GET /v1/models`, Claude Code's `HEAD /`
/// preconnect) on a pooled upstream connection that the upstream closes
/// as the request arrives is sent once more on a new connection and
/// answered, as Go's Transport does; before, the client got a 502. A
/// request on a fresh connection that the upstream closes is not sent
/// again (that close is the upstream's answer to it).
#[tokio::test]
async fn an_idempotent_request_on_a_pooled_connection_closed_under_it_goes_again() {
    use std::sync::atomic::Ordering;
    let (up, accepted) = closing_upstream(1).await;
    let gw = gateway(&format!("http://{up}"), |_| {}).await;
    // One client connection: one worker, one upstream pool.
    let stream = TcpStream::connect(gw.addr()).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let mut expected = 0;
    for method in ["GET", "HEAD"] {
        let path = if method == "GET" { "/v1/models" } else { "/" };
        let request = || {
            Request::builder()
                .method(method)
                .uri(path)
                .header("host", "localhost")
                .header("authorization", "Bearer sk-test")
                .header("anthropic-version", "2023-06-01")
                .body(Full::<Bytes>::default())
                .unwrap()
        };
        // The first opens a connection, which the pool keeps.
        let first = sender.send_request(request()).await.unwrap();
        assert_eq!(first.status(), StatusCode::OK, "{method}");
        expected += 1;
        let body = body_of(first).await;
        if method == "GET" {
            assert_eq!(body, format!("{{\"connection\":{expected}}}"));
        }
        // The second goes on it, and the upstream closes it unanswered:
        // sent again, on a new connection.
        let again = sender.send_request(request()).await.unwrap();
        assert_eq!(again.status(), StatusCode::OK, "{method}: {again:?}");
        expected += 1;
        let body = body_of(again).await;
        if method == "GET" {
            assert_eq!(body, format!("{{\"connection\":{expected}}}"));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), expected, "{method}");
    }
    conn.abort();
    gw.shutdown().await;

    // An upstream that closes a fresh connection: one attempt, a 502.
    let (up, accepted) = closing_upstream(0).await;
    let gw = gateway(&format!("http://{up}"), |_| {}).await;
    let get = Request::get("/v1/models")
        .header("host", "localhost")
        .header("authorization", "Bearer sk-test")
        .body(Full::<Bytes>::default())
        .unwrap();
    let (response, _c) = send(gw.addr(), get).await;
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "sent once");
    gw.shutdown().await;
}
