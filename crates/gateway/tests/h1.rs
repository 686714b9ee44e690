//! The fast path (`toolwarden_gateway::h1`) through real sockets, against a
//! raw upstream that writes scripted bytes — chunked bodies split at odd
//! places, informational heads, close-delimited HTTP/1.0 bodies, idle
//! connections closed under the gateway — and counts its connections.

#[path = "tls/acceptor.rs"]
mod tls_support;
use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
};
use toolwarden_gateway::{Config, Gateway, RunningGateway};

/// What the upstream answers to the n-th request (0-based, whole run):
/// pieces written with a short pause between them, then whether to close.
type Script = Arc<dyn Fn(usize) -> (Vec<&'static [u8]>, bool) + Send + Sync>;

struct RawUpstream {
    addr: std::net::SocketAddr,
    connections: Arc<AtomicUsize>,
    bodies: mpsc::UnboundedReceiver<(String, Vec<u8>)>,
}

/// An upstream that reads `content-length` requests and answers by script.
async fn raw_upstream(script: Script) -> RawUpstream {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let served = Arc::new(AtomicUsize::new(0));
    let (tx, bodies) = mpsc::unbounded_channel();
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let (script, served, tx) = (script.clone(), served.clone(), tx.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let Some((head, body)) = read_request(&mut stream, &mut buf).await else {
                        return;
                    };
                    let _ = tx.send((head, body));
                    let (pieces, close) = script(served.fetch_add(1, Ordering::SeqCst));
                    for piece in pieces {
                        if stream.write_all(piece).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                    if close {
                        return;
                    }
                }
            });
        }
    });
    RawUpstream {
        addr,
        connections,
        bodies,
    }
}

async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
) -> Option<(String, Vec<u8>)> {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        if let Ok(httparse::Status::Complete(len)) = req.parse(buf) {
            let body_len: usize = req
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
                .unwrap_or(0);
            if buf.len() >= len + body_len {
                let head = String::from_utf8(buf[..len].to_vec()).unwrap();
                let body = buf[len..len + body_len].to_vec();
                buf.drain(..len + body_len);
                return Some((head, body));
            }
        }
        let mut chunk = [0u8; 16384];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

async fn gateway(upstream: std::net::SocketAddr) -> RunningGateway {
    let config = Config::for_tests(&format!("http://{upstream}"));
    Gateway::start(config).await.unwrap()
}

/// One client connection to the gateway, for several requests.
async fn client(
    gw: &RunningGateway,
) -> hyper::client::conn::http1::SendRequest<
    http_body_util::combinators::BoxBody<Bytes, std::io::Error>,
> {
    let stream = TcpStream::connect(gw.addr()).await.unwrap();
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    send
}

fn post(
    path: &str,
    body: &'static str,
) -> Request<http_body_util::combinators::BoxBody<Bytes, std::io::Error>> {
    Request::post(path)
        .header("content-type", "application/json")
        .body(
            Full::new(Bytes::from_static(body.as_bytes()))
                .map_err(|never| match never {})
                .boxed(),
        )
        .unwrap()
}

/// The whole body of a response.
async fn body_of(response: http::Response<hyper::body::Incoming>) -> Bytes {
    response.into_body().collect().await.unwrap().to_bytes()
}

const CHAT: &str = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
const MESSAGES: &str =
    r#"{"model":"m","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;

#[tokio::test]
async fn keep_alive_reuses_connections_and_hyper_takes_over_mid_connection() {
    let mut up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":true}"[..]],
            false,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let mut send = client(&gw).await;
    for _ in 0..3 {
        let response = send
            .send_request(post("/v1/chat/completions", CHAT))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = body_of(response).await;
        assert_eq!(body, "{\"ok\":true}");
    }
    assert_eq!(
        up.connections.load(Ordering::SeqCst),
        1,
        "the fast path reused its upstream connection"
    );
    // The same connection, a route the fast path leaves to hyper.
    let health = Request::get("/healthz")
        .body(
            Full::new(Bytes::new())
                .map_err(|never| match never {})
                .boxed(),
        )
        .unwrap();
    let response = send.send_request(health).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // And a dialect route again, now served by hyper on this connection.
    let response = send
        .send_request(post("/v1/chat/completions", CHAT))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let (head, body) = up.bodies.recv().await.unwrap();
    assert!(head.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"));
    assert!(head.contains(&format!("host: {}\r\n", up.addr)));
    assert_eq!(body, CHAT.as_bytes());
    // hyper's client has its own pool.
    assert_eq!(up.connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn chunked_informational_and_close_delimited_responses_arrive_whole() {
    let up = raw_upstream(Arc::new(|n| match n {
        // Chunked, split inside sizes, data and trailers.
        0 => (
            vec![
                &b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n1"[..],
                b"6\r\ndata: {\"choices\":[]}\n\n\r",
                b"\n6;ext=1\r\ndata: ",
                b"\r\n9\r\n[DONE]\n\n\n\r\n0\r\ntrailer: x\r",
                b"\n\r\n",
            ],
            false,
        ),
        // An informational head before the final one.
        1 => (
            vec![
                &b"HTTP/1.1 100 Continue\r\n\r\n"[..],
                b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok",
            ],
            false,
        ),
        // HTTP/1.0, delimited by the close.
        _ => (
            vec![&b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{\"a\":"[..], b"1}"],
            true,
        ),
    }))
    .await;
    let gw = gateway(up.addr).await;
    let mut send = client(&gw).await;
    let response = send
        .send_request(post("/v1/chat/completions", CHAT))
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let body = body_of(response).await;
    assert_eq!(body, "data: {\"choices\":[]}\n\ndata: [DONE]\n\n\n");
    let response = send
        .send_request(post("/v1/chat/completions", CHAT))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(body_of(response).await, "ok");
    let response = send
        .send_request(post("/v1/chat/completions", CHAT))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(body_of(response).await, "{\"a\":1}");
    // The client's connection survived the upstream's close.
    let response = send
        .send_request(post("/v1/chat/completions", CHAT))
        .await
        .unwrap();
    assert_eq!(body_of(response).await, "{\"a\":1}");
    assert_eq!(up.connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_idle_connection_the_upstream_closed_is_not_reused() {
    let up = raw_upstream(Arc::new(|_| {
        // Closes after every answer without saying so.
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"[..]],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let mut send = client(&gw).await;
    for _ in 0..3 {
        let response = send.send_request(post("/v1/messages", "{}")).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(body_of(response).await, "ok");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert_eq!(up.connections.load(Ordering::SeqCst), 3);
}

/// An upstream that announces `Keep-Alive: timeout=1` and closes a
/// connection idle for 1 s, with 200 ms between a request's sending and
/// its reading (a network's latency): a request that reaches it after its
/// timer fired (sent within 200 ms of it) is dropped with the connection,
/// unanswered. Counts its connections.
async fn keep_alive_upstream() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    keep_alive_upstream_with(Arc::new(|_| {
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
            Keep-Alive: timeout=1\r\ncontent-length: 2\r\n\r\n{}"
            .to_vec()
    }))
    .await
}

/// [`keep_alive_upstream`] answering the n-th request it takes (0-based,
/// whole run) with `answer(n)`.
async fn keep_alive_upstream_with(
    answer: Arc<dyn Fn(usize) -> Vec<u8> + Send + Sync>,
) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    const IDLE: Duration = Duration::from_secs(1);
    const LATENCY: Duration = Duration::from_millis(200);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let served = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let (answer, served) = (answer.clone(), served.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut idle_until = tokio::time::Instant::now() + IDLE;
                loop {
                    let read =
                        tokio::time::timeout_at(idle_until, read_request(&mut stream, &mut buf));
                    let Ok(Some(_)) = read.await else { return };
                    if tokio::time::Instant::now() + LATENCY > idle_until {
                        // Closed before this request reached it.
                        return;
                    }
                    let answer = answer(served.fetch_add(1, Ordering::SeqCst));
                    if stream.write_all(&answer).await.is_err() {
                        return;
                    }
                    idle_until = tokio::time::Instant::now() + IDLE;
                }
            });
        }
    });
    (addr, connections)
}

/// The upstream's `Keep-Alive: timeout=1` is read: a connection idle for
/// longer than the timeout less a margin (half of it, at most 1 s) is not
/// reused, so a request does not race the upstream's close of it; one idle
/// for less is. Before, the gateway reused it for up to 90 s, and a
/// request sent as the upstream closed it got a 502.
#[tokio::test]
async fn an_upstreams_keep_alive_timeout_is_kept_on_the_fast_path() {
    let (addr, connections) = keep_alive_upstream().await;
    let gw = gateway(addr).await;
    let mut send = client(&gw).await;
    for pause in [0, 100, 900] {
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let response = send
            .send_request(post("/v1/chat/completions", CHAT))
            .await
            .unwrap();
        let status = response.status();
        let body = body_of(response).await;
        assert_eq!(status, StatusCode::OK, "after {pause} ms: {body:?}");
        assert_eq!(body, "{}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 2, "reused once");
}

/// The same on hyper's path (a pass-through route: a model listing).
#[tokio::test]
async fn an_upstreams_keep_alive_timeout_is_kept_on_hypers_path() {
    let (addr, connections) = keep_alive_upstream().await;
    let gw = gateway(addr).await;
    let mut send = client(&gw).await;
    for pause in [0, 100, 900] {
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let request = Request::get("/v1/models")
            .body(
                Full::new(Bytes::new())
                    .map_err(|never| match never {})
                    .boxed(),
            )
            .unwrap();
        let response = send.send_request(request).await.unwrap();
        let status = response.status();
        let body = body_of(response).await;
        assert_eq!(status, StatusCode::OK, "after {pause} ms: {body:?}");
        assert_eq!(body, "{}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 2, "reused once");
}

/// A Bedrock request the gateway signed and AWS refused for the clock
/// (`InvalidSignatureException`, its `Date` 15 minutes ahead, closing its
/// connection) is signed again and sent once more, on another connection,
/// which keeps the upstream's `Keep-Alive: timeout=1` as any other does.
/// Before, the request sent again was not followed, so its connection was
/// reused after 900 ms, as the upstream closed it, and the next request
/// got a 502.
#[tokio::test]
async fn a_request_signed_again_keeps_its_upstreams_keep_alive_timeout() {
    let (addr, connections) = keep_alive_upstream_with(Arc::new(|n| {
        if n > 0 {
            return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                Keep-Alive: timeout=1\r\ncontent-length: 2\r\n\r\n{}"
                .to_vec();
        }
        let ahead = std::time::SystemTime::now() + Duration::from_secs(900);
        let body = r#"{"message":"Signature expired"}"#;
        format!(
            "HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\n\
             x-amzn-errortype: InvalidSignatureException:http://internal.amazon.com/\r\n\
             date: {}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            httpdate::fmt_http_date(ahead),
            body.len()
        )
        .into_bytes()
    }))
    .await;
    let mut config = Config::for_tests(&format!("http://{addr}"));
    config.cloud.bedrock =
        Some(toolwarden_gateway::Upstream::parse(&format!("http://{addr}/")).unwrap());
    config.cloud.bedrock_region = Some("us-east-1".into());
    config.cloud.aws_credentials = Some(toolwarden_gateway::cloud::aws::AwsCredentials::new(
        "AKIDTEST", "secret", None, "test",
    ));
    let gw = Gateway::start(config).await.unwrap();
    let mut send = client(&gw).await;
    for pause in [0, 900] {
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let body = r#"{"anthropic_version":"bedrock-2023-05-31","max_tokens":8,"messages":[]}"#;
        let response = send
            .send_request(post("/model/anthropic.claude-x-v1:0/invoke", body))
            .await
            .unwrap();
        let status = response.status();
        let body = body_of(response).await;
        assert_eq!(status, StatusCode::OK, "after {pause} ms: {body:?}");
        assert_eq!(body, "{}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 3, "none reused late");
}

#[tokio::test]
async fn chunked_request_bodies_are_served_by_hyper_unchanged() {
    let mut up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"[..]],
            false,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let mut send = client(&gw).await;
    let frames = futures_util::stream::iter(
        [&CHAT[..10], &CHAT[10..]].map(|s| Ok::<_, std::io::Error>(Frame::data(Bytes::from(s)))),
    );
    let request = Request::post("/v1/chat/completions")
        .body(StreamBody::new(frames).boxed())
        .unwrap();
    let response = send.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(body_of(response).await, "ok");
    let (_, body) = up.bodies.recv().await.unwrap();
    assert_eq!(body, CHAT.as_bytes());
}

/// On hyper's path too (a chunked request body), a compressed conversation
/// that needs a repair goes upstream as plain JSON without
/// `content-encoding`, with its new length.
#[tokio::test]
async fn a_compressed_chunked_body_is_repaired_as_plain_json() {
    use std::io::Write;

    let mut up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"[..]],
            false,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let mut send = client(&gw).await;
    // The model called `lookup`; the client moved on without a result.
    let unanswered = br#"{"model":"gpt-4o","messages":[{"role":"user","content":"Find a flight"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},{"role":"user","content":"Never mind."}]}"#;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(unanswered).unwrap();
    let gz = Bytes::from(gz.finish().unwrap());
    let frames = futures_util::stream::iter(
        [gz.slice(..10), gz.slice(10..)].map(|b| Ok::<_, std::io::Error>(Frame::data(b))),
    );
    let request = Request::post("/v1/chat/completions")
        .header("content-encoding", "gzip")
        .body(StreamBody::new(frames).boxed())
        .unwrap();
    let response = send.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["x-toolwarden-repaired"], "1");
    let (head, body) = up.bodies.recv().await.unwrap();
    let head = head.to_ascii_lowercase();
    assert!(!head.contains("content-encoding"), "{head}");
    assert!(
        head.contains(&format!("content-length: {}", body.len())),
        "{head}"
    );
    let defects = toolwarden_wire::validate(toolwarden_wire::Dialect::OpenAiChat, &body).unwrap();
    assert!(defects.is_empty(), "{defects:?}");
}

/// On hyper's path (a chunked request), a gzip stream that breaks midway
/// reaches the client cut off as it broke, with no plain error event after
/// the compressed bytes; a plain stream still gets its error event.
#[tokio::test]
async fn a_broken_compressed_stream_gets_no_appended_event_on_hypers_path() {
    use std::io::Write;

    let sse = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"content\":[]}}\n\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(sse).unwrap();
    let gz: &'static [u8] = Box::leak(gz.finish().unwrap().into_boxed_slice());
    let half = &gz[..gz.len() / 2];
    let chunk_head: &'static [u8] = Box::leak(
        format!("{:x}\r\n", half.len())
            .into_bytes()
            .into_boxed_slice(),
    );
    let plain_head: &'static [u8] = Box::leak(
        format!("{:x}\r\n", sse.len())
            .into_bytes()
            .into_boxed_slice(),
    );
    let sse: &'static [u8] = Box::leak(sse.to_vec().into_boxed_slice());
    let up = raw_upstream(Arc::new(move |n| {
        let coding: &'static [u8] = if n == 0 {
            b"content-encoding: gzip\r\n"
        } else {
            b""
        };
        let (size, body) = if n == 0 {
            (chunk_head, half)
        } else {
            (plain_head, sse)
        };
        (
            vec![
                &b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"[..],
                coding,
                b"transfer-encoding: chunked\r\n\r\n",
                size,
                body,
                b"\r\n",
            ],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    for (n, expect_event) in [(0, false), (1, true)] {
        let mut send = client(&gw).await;
        let frames = futures_util::stream::iter(
            [&MESSAGES[..10], &MESSAGES[10..]]
                .map(|s| Ok::<_, std::io::Error>(Frame::data(Bytes::from(s)))),
        );
        let request = Request::post("/v1/messages")
            .body(StreamBody::new(frames).boxed())
            .unwrap();
        let response = send.send_request(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let mut body = response.into_body();
        let mut got = Vec::new();
        let mut broken = false;
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(f) => got.extend_from_slice(f.data_ref().map_or(&[][..], |d| &d[..])),
                Err(_) => {
                    broken = true;
                    break;
                }
            }
        }
        if expect_event {
            let text = String::from_utf8_lossy(&got);
            assert!(text.contains("event: error"), "{n}: {text}");
        } else {
            assert!(broken, "the compressed stream is cut off");
            assert_eq!(got, half, "nothing after the compressed bytes");
        }
    }
}

#[tokio::test]
async fn a_truncated_fixed_length_body_closes_the_client_connection() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort"[..]],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let mut stream = TcpStream::connect(gw.addr()).await.unwrap();
    stream
        .write_all(
            format!(
                "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-length: {}\r\n\r\n{CHAT}",
                CHAT.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut got))
        .await
        .expect("the gateway closes the connection")
        .unwrap();
    let text = String::from_utf8(got).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\nshort"), "{text}");
}

/// A head that arrives in small pieces (each read a piece, line ends split
/// between reads) is served as a whole one; a malformed one still goes to
/// hyper, which answers 400 once its line ends.
#[tokio::test]
async fn a_head_sent_in_small_pieces_is_served() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"[..]],
            false,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-length: {}\r\n\r\n{CHAT}",
        CHAT.len()
    );
    for (request, status) in [
        (request.as_str(), "HTTP/1.1 200 OK\r\n"),
        (
            "POST /v1/messages HTTP/1.1\r\nbad header\r\n\r\n",
            "HTTP/1.1 400",
        ),
    ] {
        let mut stream = TcpStream::connect(gw.addr()).await.unwrap();
        stream.set_nodelay(true).unwrap();
        for piece in request.as_bytes().chunks(7) {
            stream.write_all(piece).await.unwrap();
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let mut got = vec![0; 4096];
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut got))
            .await
            .expect("an answer")
            .unwrap();
        let text = String::from_utf8_lossy(&got[..n]);
        assert!(text.starts_with(status), "{text}");
    }
}

// ------------------------------------------------------------------ TLS

/// An HTTPS upstream (certificate for `localhost` and 127.0.0.1, signed by
/// `tests/tls/ca.pem`) answering every request with a chunked SSE body.
async fn tls_upstream() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let acceptor = tls_support::acceptor(b"http/1.1");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let count = count.clone();
            tokio::spawn(async move {
                let Ok(mut stream) = acceptor.accept(tcp).await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let mut buf = Vec::new();
                while read_request(&mut stream, &mut buf).await.is_some() {
                    let answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
transfer-encoding: chunked\r\n\r\n14\r\ndata: {\"choices\":[]}\r\n2\r\n\n\n\r\n0\r\n\r\n";
                    if stream.write_all(answer).await.is_err() || stream.flush().await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, connections)
}

#[tokio::test]
async fn https_upstreams_are_reached_over_tls_on_both_paths() {
    let (addr, connections) = tls_upstream().await;
    let url = format!("https://localhost:{}", addr.port());
    let mut raw = toolwarden_gateway::RawConfig::default();
    raw.listen = Some("127.0.0.1:0".into());
    raw.openai_upstream = Some(url.clone());
    raw.anthropic_upstream = Some(url.clone());
    raw.gemini_upstream = Some(url);
    raw.upstream_ca = Some(tls_support::tls_file("ca.pem"));
    let trusted = raw.validate().unwrap();
    let gw = Gateway::start(trusted.clone()).await.unwrap();
    let mut send = client(&gw).await;
    for _ in 0..2 {
        let response = send
            .send_request(post("/v1/chat/completions", CHAT))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = body_of(response).await;
        assert_eq!(body, "data: {\"choices\":[]}\n\n");
    }
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "one pooled TLS connection"
    );
    // A pass-through path goes through hyper's client, with the same roots.
    let models = Request::get("/v1/models")
        .body(
            Full::new(Bytes::new())
                .map_err(|never| match never {})
                .boxed(),
        )
        .unwrap();
    let response = send.send_request(models).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    gw.shutdown().await;

    // Without the CA the certificate is refused: a 502 naming TLS.
    let mut untrusted = trusted;
    untrusted.upstream_roots.clear();
    let gw = Gateway::start(untrusted).await.unwrap();
    let mut send = client(&gw).await;
    let response = send
        .send_request(post("/v1/chat/completions", CHAT))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    let body = body_of(response).await;
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("upstream_tls_error"), "{text}");
}

#[tokio::test]
async fn an_empty_close_delimited_body_ends_cleanly() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n"[..]],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let mut send = client(&gw).await;
    for _ in 0..2 {
        let response = send.send_request(post("/v1/messages", "{}")).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(body_of(response).await.is_empty());
    }
}

/// Sends raw bytes on a fresh connection and reads the answer to its end
/// (the request says `connection: close`).
async fn raw_exchange(gw: &RunningGateway, request: &[u8]) -> String {
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut seen))
        .await
        .expect("the answer ends")
        .unwrap();
    String::from_utf8_lossy(&seen).into_owned()
}

/// On hyper's path (a chunked request body) header names keep their case
/// both ways, as on the fast path; a head longer than the fast path takes
/// is refused with 431 there too.
#[tokio::test]
async fn hypers_path_keeps_header_case_and_refuses_long_heads() {
    let mut up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Upstream-Case: y\r\n\r\nok"[..]],
            false,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Keep: 1\r\n\
         Anthropic-Version: 2023-06-01\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
         {:x}\r\n{CHAT}\r\n0\r\n\r\n",
        CHAT.len()
    );
    let answer = raw_exchange(&gw, request.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\r\nX-Upstream-Case: y\r\n"), "{answer}");
    let (head, body) = up.bodies.recv().await.unwrap();
    assert_eq!(body, CHAT.as_bytes());
    assert!(head.contains("\r\nX-Keep: 1\r\n"), "{head}");
    assert!(
        head.contains("\r\nAnthropic-Version: 2023-06-01\r\n"),
        "{head}"
    );
    // A 70 KB head: the fast path leaves it to hyper, which refuses it.
    let long = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Long: {}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{CHAT}",
        "a".repeat(70_000),
        CHAT.len()
    );
    let answer = raw_exchange(&gw, long.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(up.bodies.try_recv().is_err(), "nothing went upstream");
}

/// An answer whose exchange was under way when the gateway began to stop
/// says `connection: close`, as hyper's graceful shutdown says on its
/// path: the connection closes after it, and a client told nothing would
/// send its next request on a connection the gateway is closing (that
/// request lost) instead of opening another (to another instance behind
/// a load balancer). Before, the fast path said so only when the stop had
/// begun before the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_given_while_the_gateway_stops_says_connection_close() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = listener.local_addr().unwrap();
    let (asked, mut asked_rx) = mpsc::unbounded_channel();
    let (answer, mut answer_rx) = mpsc::unbounded_channel::<()>();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = Vec::new();
        read_request(&mut stream, &mut buf).await.unwrap();
        asked.send(()).unwrap();
        answer_rx.recv().await.unwrap();
        stream
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
            )
            .await
            .unwrap();
        // The upstream keeps its connection open.
        let _ = stream.read(&mut [0u8; 1]).await;
    });
    let gw = gateway(upstream).await;
    let addr = gw.addr();
    let mut s = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{CHAT}",
        CHAT.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    asked_rx.recv().await.unwrap();
    let stopping = tokio::spawn(gw.shutdown());
    // The workers have seen the stop once they no longer accept.
    while TcpStream::connect(addr).await.is_ok() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    answer.send(()).unwrap();
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut seen))
        .await
        .expect("the answer ends and the connection closes")
        .unwrap();
    let seen = String::from_utf8_lossy(&seen);
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(seen.contains("\r\nconnection: close\r\n"), "{seen}");
    assert!(seen.ends_with("\r\n\r\n{}"), "{seen}");
    stopping.await.unwrap();
}

/// A connection with no request in progress is closed at once by the
/// stop, one with half a head included (on the fast path, and on hyper's
/// after a request it served): the stop waits for requests in flight only.
/// Before, the fast path waited for the rest of a head begun (until
/// `client_head_timeout_ms`, or the end of the grace period, which then
/// cut it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_head_does_not_hold_the_stop() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"[..]],
            false,
        )
    }))
    .await;
    let mut config = Config::for_tests(&format!("http://{}", up.addr));
    config.shutdown_grace = Duration::from_secs(30);
    config.client_head_timeout = Duration::from_secs(60);
    let gw = Gateway::start(config).await.unwrap();
    let half = b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: app";
    // The fast path: half a head first thing.
    let mut fast = TcpStream::connect(gw.addr()).await.unwrap();
    fast.write_all(half).await.unwrap();
    // Hyper's: a chunked request served whole, then half a head.
    let [_, hypers] = on_both_paths();
    let hypers = hypers.replace("Connection: close\r\n", "");
    let mut slow = TcpStream::connect(gw.addr()).await.unwrap();
    slow.write_all(hypers.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).ends_with("\r\n\r\n{}") {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), slow.read(&mut chunk))
            .await
            .expect("the answer")
            .unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&chunk[..n]);
    }
    slow.write_all(half).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    gw.shutdown().await;
    let took = started.elapsed();
    // Not the grace period (30 s), at any load.
    assert!(took < Duration::from_secs(15), "the stop took {took:?}");
    for mut s in [fast, slow] {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut rest)).await;
        assert!(
            matches!(read, Ok(Ok(0))),
            "closed without an answer: {read:?} {rest:?}"
        );
    }
}

/// A body that has not all arrived within `client_body_timeout_ms` is
/// answered 400 in the client's envelope, naming the setting, and the
/// connection closed — on the fast path as on hyper's (a chunked body,
/// which hyper's path reads). Before, the fast path closed the connection
/// without a word: the client saw the server disconnect, with nothing to
/// say which setting cut it off.
#[tokio::test]
async fn a_body_not_sent_in_time_is_answered_400_on_both_paths() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"[..]],
            false,
        )
    }))
    .await;
    let mut config = Config::for_tests(&format!("http://{}", up.addr));
    config.client_body_timeout = Duration::from_millis(300);
    let gw = Gateway::start(config).await.unwrap();
    let fast = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        CHAT.len(),
        &CHAT[..10]
    );
    let hypers = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{}",
        CHAT.len(),
        &CHAT[..10]
    );
    for request in [fast, hypers] {
        // The client sends part of its body, then waits for an answer.
        let answer = raw_exchange(&gw, request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(
            answer.contains("client_body_timeout_ms (300 ms)"),
            "{answer}"
        );
        assert!(
            answer.contains("\"code\":\"request_body_error\""),
            "{answer}"
        );
    }
    assert_eq!(
        up.connections.load(Ordering::SeqCst),
        0,
        "nothing forwarded"
    );
}

/// An upstream that answers with something that is not an HTTP response
/// (a TLS port reached over `http://` answers a plain request with an
/// alert; an SSH server with its banner; a status code that is none) is
/// answered 502 saying so, on both paths, and not as an upstream that
/// "closed the connection before answering", which sent the user looking
/// for a crash instead of at the upstream's URL.
#[tokio::test]
async fn an_answer_that_is_not_http_is_named_so_on_both_paths() {
    for answer in [
        &b"\x15\x03\x01\x00\x02\x02\x46"[..],
        b"SSH-2.0-OpenSSH_9.6\r\n",
        b"HTTP/1.1 099 Odd\r\ncontent-length: 2\r\n\r\nok",
    ] {
        let up = raw_upstream(Arc::new(move |_| (vec![answer], true))).await;
        let gw = gateway(up.addr).await;
        for request in on_both_paths() {
            let got = raw_exchange(&gw, request.as_bytes()).await;
            assert!(got.starts_with("HTTP/1.1 502"), "{got}");
            assert!(got.contains("\"code\":\"upstream_bad_response\""), "{got}");
            assert!(got.contains("sent no HTTP response"), "{got}");
            assert!(!got.contains("closed the connection"), "{got}");
        }
    }
}

/// An upstream that gives its length as a list of one number (an
/// intermediary that merged two equal lines: `content-length: 5, 5`) is
/// relayed with that length as one number on both paths. Before, the fast
/// path answered 502 and hyper's relayed the list, which Python's h11
/// (the OpenAI and Anthropic SDKs) and Node's llhttp refuse.
#[tokio::test]
async fn a_length_list_of_one_number_reaches_the_client_as_one_number() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\ncontent-type: application/json\r\n\r\nhello"[..]],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    for request in on_both_paths() {
        let got = raw_exchange(&gw, request.as_bytes()).await;
        assert!(got.starts_with("HTTP/1.1 200"), "{got}");
        assert!(got.contains("\r\nContent-Length: 5\r\n"), "{got}");
        assert!(!got.contains("5, 5"), "{got}");
        assert!(got.ends_with("\r\n\r\nhello"), "{got}");
    }
}

/// Only the proxy headers RFC 9110 makes hop-by-hop are dropped, both
/// ways and on both paths: `Proxy-Connection`, and the credentials of the
/// hop to a proxy (`Proxy-Authorization`, `Proxy-Authenticate`, §11.7).
/// An upstream proxy's `Proxy-Status` (RFC 9209: why it failed) reaches
/// the client, and a client's other `Proxy-` header the upstream. Before,
/// every `proxy-*` header was dropped.
#[tokio::test]
async fn only_hop_by_hop_proxy_headers_are_dropped_on_both_paths() {
    let mut up =
        raw_upstream(Arc::new(|_| {
            (
            vec![&b"HTTP/1.1 502 Bad Gateway\r\nProxy-Status: edge; error=connection_timeout\r\n\
Proxy-Authenticate: Basic realm=\"edge\"\r\ncontent-type: application/json\r\n\
content-length: 2\r\n\r\n{}"[..]],
            true,
        )
        }))
        .await;
    let gw = gateway(up.addr).await;
    let extra = "Proxy-Authorization: Basic c2VjcmV0OnNlY3JldA==\r\nProxy-Connection: keep-alive\r\n\
                 Proxy-Trace: t1\r\n";
    for request in on_both_paths_with(extra) {
        let got = raw_exchange(&gw, request.as_bytes()).await;
        assert!(got.starts_with("HTTP/1.1 502"), "{got}");
        assert!(
            got.contains("\r\nProxy-Status: edge; error=connection_timeout\r\n"),
            "{got}"
        );
        assert!(
            !got.to_ascii_lowercase().contains("proxy-authenticate"),
            "{got}"
        );
        let (head, _) = up.bodies.recv().await.unwrap();
        let lower = head.to_ascii_lowercase();
        assert!(!lower.contains("proxy-authorization"), "{head}");
        assert!(!head.contains("c2VjcmV0"), "{head}");
        assert!(!lower.contains("proxy-connection"), "{head}");
        assert!(head.contains("\r\nProxy-Trace: t1\r\n"), "{head}");
    }
}

/// A response framed by `transfer-encoding: chunked` whose
/// `content-length` is not a number, or two different ones, is relayed by
/// its transfer coding on both paths (RFC 9112 §6.3: the transfer coding
/// overrides the length, which a proxy removes), as hyper's client reads
/// it whatever the order of the two. Before, the fast path answered 502
/// ("invalid content-length") where hyper's path relayed it.
#[tokio::test]
async fn a_transfer_coding_beats_an_invalid_length_on_both_paths() {
    for answer in [
        &b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: abc\r\n\
transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\
content-length: 3\r\ncontent-length: 9\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    ] {
        let up = raw_upstream(Arc::new(move |_| (vec![answer], true))).await;
        let gw = gateway(up.addr).await;
        for request in on_both_paths() {
            let got = raw_exchange(&gw, request.as_bytes()).await;
            assert!(got.starts_with("HTTP/1.1 200"), "{got}");
            assert!(
                !got.to_ascii_lowercase().contains("content-length"),
                "{got}"
            );
            assert!(got.ends_with("\r\n5\r\nhello\r\n0\r\n\r\n"), "{got}");
        }
    }
    // A request framed so is hyper's (the fast path takes no transfer
    // coding), which reads it by its transfer coding too.
    let mut up = raw_upstream(Arc::new(|_| {
        (
            vec![&b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"[..]],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Transfer-Encoding: chunked\r\nContent-Length: abc\r\n\r\n{:x}\r\n{CHAT}\r\n0\r\n\r\n",
        CHAT.len()
    );
    let got = raw_exchange(&gw, request.as_bytes()).await;
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    let (head, body) = up.bodies.recv().await.unwrap();
    assert_eq!(body, CHAT.as_bytes());
    assert!(!head.contains("abc"), "{head}");
}

/// An answer in a transfer coding other than chunked (`gzip`, delimited
/// by the close or chunked over it), which the gateway never asked for and
/// does not decode, is a 502 naming the coding on both paths (RFC 9112
/// §6.1, §7; RFC 9110 §10.1.4). Before, both relayed the coded bytes as a
/// plain chunked body, and nothing told the client they were gzip. So is
/// it on the pass-through routes, and as the refusal of a WebSocket
/// upgrade (hyper's client reads both).
#[tokio::test]
async fn a_transfer_coding_other_than_chunked_is_named_on_both_paths() {
    use std::io::Write;

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(br#"{"ok":true}"#).unwrap();
    let gz: &'static [u8] = Box::leak(gz.finish().unwrap().into_boxed_slice());
    let size: &'static [u8] = Box::leak(
        format!("{:x}\r\n", gz.len())
            .into_bytes()
            .into_boxed_slice(),
    );
    for coding in ["gzip", "gzip, chunked"] {
        let chunked = coding.ends_with("chunked");
        let head: &'static [u8] = Box::leak(
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                 Transfer-Encoding: {coding}\r\n\r\n"
            )
            .into_bytes()
            .into_boxed_slice(),
        );
        let up = raw_upstream(Arc::new(move |_| {
            if chunked {
                (vec![head, size, gz, b"\r\n0\r\n\r\n"], true)
            } else {
                (vec![head, gz], true)
            }
        }))
        .await;
        let gw = gateway(up.addr).await;
        // A pass-through route too: a listing (no body) and an upload
        // (streamed upstream as it arrives).
        let listing = "GET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
        let upload = "POST /v1/files HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
                      Content-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\nabc";
        let pass_through = [listing.to_string(), upload.to_string()];
        for request in on_both_paths().iter().chain(&pass_through) {
            let got = raw_exchange(&gw, request.as_bytes()).await;
            assert!(got.starts_with("HTTP/1.1 502"), "{coding} {request}: {got}");
            assert!(got.contains("\"code\":\"upstream_bad_response\""), "{got}");
            assert!(got.contains("transfer coding `gzip`"), "{got}");
        }
        // A WebSocket upgrade the upstream refuses with such an answer:
        // before, its gzip bytes reached the client as the refusal's body.
        let mut s = TcpStream::connect(gw.addr()).await.unwrap();
        s.write_all(
            b"GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\n\
              Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        )
        .await
        .unwrap();
        let got = one_answer(&mut s).await;
        assert!(got.starts_with("HTTP/1.1 502"), "{coding} upgrade: {got}");
        assert!(got.contains("transfer coding `gzip`"), "{got}");
    }
}

/// An HTTP/1.0 answer with a `transfer-encoding` has faulty framing (RFC
/// 9112 §6.1: HTTP/1.0 has no transfer codings, and its sender may mean
/// another framing): a 502 on both paths, as hyper's client refuses it.
/// Before, the fast path read it as chunked and relayed it.
#[tokio::test]
async fn an_http10_answer_with_a_transfer_coding_is_refused_on_both_paths() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![
                &b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\
transfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"[..],
            ],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    for request in on_both_paths() {
        let got = raw_exchange(&gw, request.as_bytes()).await;
        assert!(got.starts_with("HTTP/1.1 502"), "{got}");
        assert!(got.contains("\"code\":\"upstream_bad_response\""), "{got}");
    }
}

/// A stream that breaks in the middle of an SSE event ends with the error
/// event as an event of its own, on both paths: the partial event is ended
/// first (a line end and a blank line). Before, the error event's first
/// line continued the partial one, so the client parsed one corrupt event
/// (`data: {"choices":[{"delta":{"content":"heldata: {"error":…`) and
/// never saw the error.
#[tokio::test]
async fn a_break_inside_an_sse_event_ends_it_before_the_error_event_on_both_paths() {
    let up = raw_upstream(Arc::new(|_| {
        (
            vec![
                &b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"[..],
                b"48\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\r\n",
            ],
            true,
        )
    }))
    .await;
    let gw = gateway(up.addr).await;
    for request in on_both_paths() {
        let got = raw_exchange(&gw, request.as_bytes()).await;
        assert!(got.starts_with("HTTP/1.1 200"), "{got}");
        let body = dechunk(got.split_once("\r\n\r\n").unwrap().1);
        let (before, error) = body
            .split_once("{\"choices\":[{\"delta\n\ndata: ")
            .unwrap_or_else(|| panic!("the partial event is ended first: {body}"));
        assert_eq!(
            before,
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: "
        );
        let error = error.strip_suffix("\n\n").unwrap();
        let error: serde_json::Value = serde_json::from_str(error).unwrap();
        assert_eq!(error["error"]["code"], "upstream_stream_error", "{body}");
    }
}

/// One answer with a `content-length` body, read to its end.
async fn one_answer(s: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let read = async {
        loop {
            let text = String::from_utf8_lossy(&seen).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .expect("a content-length");
                if body.len() >= length {
                    return text;
                }
            }
            let mut chunk = [0u8; 4096];
            let n = s.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed: {text}");
            seen.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the answer")
}

/// A chunked body, decoded (the gateway writes no extensions or trailers).
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("a chunk size line");
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap();
    }
}

/// The Chat request [`CHAT`], whole, once as the fast path takes it (a
/// `content-length`) and once as it hands it to hyper (chunked), each on a
/// connection the client closes after the answer.
fn on_both_paths() -> [String; 2] {
    on_both_paths_with("")
}

/// [`on_both_paths`] with `extra` header lines (each ending in CRLF).
fn on_both_paths_with(extra: &str) -> [String; 2] {
    let fast = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{CHAT}",
        CHAT.len()
    );
    let hypers = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{CHAT}\r\n0\r\n\r\n",
        CHAT.len()
    );
    [fast, hypers]
}
