//! Endurance (issue 14), through real sockets: shutdown never waits longer
//! than its bounds for the database.

use std::time::{Duration, Instant};

use sqlx::Connection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwarden_gateway::{Config, Gateway, GatewayErrorKind, JsonlLog};
use toolwarden_mock_provider::{MockOptions, MockProvider};

mod endurance {
    pub mod bodies;
    pub mod copies;
}

const BODY: &str = r#"{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"list the files"}],"tools":[{"name":"shell","input_schema":{"type":"object"}}]}"#;

/// An Anthropic request for `session`, with `extra` header lines (each
/// ending in CRLF) after its own.
fn request(session: &str, extra: &str) -> String {
    format!(
        "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         x-api-key: k\r\nanthropic-version: 2023-06-01\r\nx-session-id: {session}\r\n\
         content-length: {}\r\n{extra}\r\n{BODY}",
        BODY.len()
    )
}

/// One request on a connection of its own; the status code.
async fn post(addr: std::net::SocketAddr, session: &str) -> u16 {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = request(session, "connection: close\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    text.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// The database is locked by another connection for the whole shutdown (a
/// statement that runs for minutes looks the same to the writer): the
/// gateway still stops within its grace period plus `record_drain`, and
/// reports the events it could not write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_returns_within_the_drain_deadline_when_the_database_hangs() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tw.db");
    let mut config = Config::for_tests(&mock.base_url());
    config.database = Some(format!("sqlite://{}", path.display()));
    config.record_drain = Duration::from_millis(400);
    // Far off: a shutdown that waited it out would show at any load.
    config.shutdown_grace = Duration::from_secs(30);
    let gw = Gateway::start(config).await.unwrap();

    let mut blocker = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut blocker)
        .await
        .unwrap();
    for i in 0..20 {
        assert_eq!(post(gw.addr(), &format!("s{i}")).await, 200);
    }
    let started = Instant::now();
    let report = gw.shutdown().await;
    let took = started.elapsed();
    // No request in flight: the grace period (30 s) is not used; the
    // drain is 400 ms, plus the workers' own exit.
    assert!(took < Duration::from_secs(15), "shutdown took {took:?}");
    assert!(report.abandoned > 0, "{report:?}");
    assert_eq!(report.events_written, 0, "{report:?}");
    assert!(report.finished, "{report:?}");
    // Issue 14: the per-tool counts of what was not written are reported.
    assert_eq!(report.unwritten.calls, 20, "{report:?}");
    sqlx::query("ROLLBACK").execute(&mut blocker).await.unwrap();
}

/// With a healthy database everything is written and nothing reported lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_writes_everything_when_the_database_keeps_up() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::for_tests(&mock.base_url());
    config.database = Some(format!("sqlite://{}", dir.path().join("tw.db").display()));
    let gw = Gateway::start(config).await.unwrap();
    for i in 0..20 {
        assert_eq!(post(gw.addr(), &format!("s{i}")).await, 200);
    }
    let report = gw.shutdown().await;
    assert_eq!(
        (report.abandoned, report.events_dropped),
        (0, 0),
        "{report:?}"
    );
    assert!(report.events_written >= 40, "{report:?}");
}

/// Reads until the gateway closes the connection (EOF or reset); whether
/// it did within `within`.
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// Clients that send half a head, or a head and half a body, and then
/// nothing: each is cut off by its timeout (the half bodies answered 400
/// naming `client_body_timeout_ms`), and meanwhile a whole request is
/// answered at once: before the last stalled connection's timeout, which
/// a gateway serving connections in turn would have waited out first.
/// The timeouts are 2 s so that one request's time at any load fits
/// before them; the test's other bounds only stop a hung gateway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_are_cut_off_and_do_not_hold_up_others() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.client_head_timeout = Duration::from_secs(2);
    config.client_body_timeout = Duration::from_secs(2);
    let gw = Gateway::start(config).await.unwrap();

    let mut stalled = Vec::new();
    for i in 0..200 {
        let mut s = TcpStream::connect(gw.addr()).await.unwrap();
        let part = if i % 2 == 0 {
            "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-".to_owned()
        } else {
            format!(
                "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\n\r\n{}",
                BODY.len(),
                &BODY[..20]
            )
        };
        s.write_all(part.as_bytes()).await.unwrap();
        stalled.push(s);
    }
    assert_eq!(post(gw.addr(), "whole").await, 200);
    let last = stalled.last().expect("stalled connections");
    let mut probe = [0u8; 1];
    assert!(
        matches!(last.try_read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the whole request was answered only once the stalled ones were cut off"
    );

    let started = Instant::now();
    for (i, s) in stalled.iter_mut().enumerate() {
        let reply = read_until_closed(s, Duration::from_secs(20)).await;
        let reply = reply.unwrap_or_else(|| {
            panic!(
                "stalled connection {i} still open after {:?}",
                started.elapsed()
            )
        });
        let text = String::from_utf8_lossy(&reply);
        if i % 2 == 1 {
            assert!(text.starts_with("HTTP/1.1 400"), "{i}: {text}");
            assert!(
                text.contains("within client_body_timeout_ms (2000 ms)"),
                "{i}: {text}"
            );
        }
    }
    gw.shutdown().await;
}

/// What the gateway writes until it closes the connection (EOF or reset);
/// `None` if it is still open after `within`.
async fn read_until_closed(s: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .ok()
    .map(|()| got)
}

/// HTTP/2 is hyper's, and nothing of hyper's times its preface or its
/// first request: a connection that sends half the preface, or the preface
/// and its settings, and then nothing is closed after
/// `client_head_timeout` like a half-sent HTTP/1 head, and a whole HTTP/2
/// request meanwhile is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_http2_connections_are_cut_off() {
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    const SETTINGS: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0];
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.client_head_timeout = Duration::from_millis(500);
    let gw = Gateway::start(config).await.unwrap();

    let mut stalled = Vec::new();
    for part in [&PREFACE[..16], PREFACE, &[PREFACE, SETTINGS].concat()] {
        let mut s = TcpStream::connect(gw.addr()).await.unwrap();
        s.write_all(part).await.unwrap();
        stalled.push(s);
    }
    // Nothing else closes them: the bound only stops a gateway that never
    // does.
    let started = Instant::now();
    for (i, s) in stalled.iter_mut().enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(10)).await,
            "stalled HTTP/2 connection {i} still open after {:?}",
            started.elapsed()
        );
    }

    // An HTTP/2 client with prior knowledge is still served.
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let uri: hyper::Uri = format!("http://{}/healthz", gw.addr()).parse().unwrap();
    let reply = client.get(uri).await.expect("an HTTP/2 request is served");
    assert_eq!(reply.status(), 200);
    gw.shutdown().await;
}

/// An HTTP/2 client that answers the gateway's pings but sends no request
/// for `client_head_timeout` is sent GOAWAY and its connection closes, as
/// an idle kept-alive HTTP/1 connection would; one that keeps sending
/// requests keeps its connection, and a stream still open when the GOAWAY
/// goes finishes whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_http2_connections_are_closed() {
    // A streamed reply takes ~2.4 s: longer than two idle timeouts.
    let mock = MockProvider::start(MockOptions {
        chunk_delay: Duration::from_millis(200),
        ..MockOptions::default()
    })
    .await;
    let mut config = Config::for_tests(&mock.base_url());
    // Long enough that a busy client's next request, 200 ms after its
    // last answer, starts within it at any load.
    config.client_head_timeout = Duration::from_secs(1);
    let gw = Gateway::start(config).await.unwrap();

    let open = |addr| async move {
        let io = hyper_util::rt::TokioIo::new(TcpStream::connect(addr).await.unwrap());
        let (send, conn) = hyper::client::conn::http2::handshake::<
            _,
            _,
            http_body_util::Full<bytes::Bytes>,
        >(hyper_util::rt::TokioExecutor::new(), io)
        .await
        .unwrap();
        // The client's half answers pings while it is polled.
        (send, tokio::spawn(conn))
    };
    let healthz = |send: &mut hyper::client::conn::http2::SendRequest<_>| {
        let req = hyper::Request::get(format!("http://{}/healthz", gw.addr()))
            .body(http_body_util::Full::default())
            .unwrap();
        send.send_request(req)
    };

    // Busy: a request every 200 ms for 2 s, two timeouts' worth.
    let (mut send, mut conn) = open(gw.addr()).await;
    for _ in 0..10 {
        let reply = healthz(&mut send).await.expect("a busy connection is kept");
        assert_eq!(reply.status(), 200);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!conn.is_finished(), "a busy HTTP/2 connection was closed");

    // Then idle: closed, not held (the bound only stops a gateway that
    // never closes it).
    let started = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(10), &mut conn).await;
    assert!(
        ended.is_ok(),
        "an idle HTTP/2 connection still open after {:?}",
        started.elapsed()
    );

    // A stream open across the idle timeout is not cut.
    let (mut send, conn) = open(gw.addr()).await;
    let body = BODY.replace("\"max_tokens\"", "\"stream\":true,\"max_tokens\"");
    let req = hyper::Request::post(format!("http://{}/v1/messages", gw.addr()))
        .header("content-type", "application/json")
        .header("x-api-key", "k")
        .header("anthropic-version", "2023-06-01")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap();
    let started = Instant::now();
    let reply = send.send_request(req).await.unwrap();
    assert_eq!(reply.status(), 200);
    let text = http_body_util::BodyExt::collect(reply.into_body())
        .await
        .expect("the stream finishes")
        .to_bytes();
    let text = String::from_utf8_lossy(&text);
    assert!(
        started.elapsed() > Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(text.contains("message_stop"), "{text}");
    let ended = tokio::time::timeout(Duration::from_secs(10), conn).await;
    assert!(ended.is_ok(), "idle after its stream, still open");

    // A connection that never sends a request is closed too.
    let (_send, conn) = open(gw.addr()).await;
    let ended = tokio::time::timeout(Duration::from_secs(10), conn).await;
    assert!(
        ended.is_ok(),
        "an HTTP/2 connection without a request still open"
    );
    gw.shutdown().await;
}

/// The gateway's side of a client connection has TCP keepalive on (a peer
/// gone without a word is found): in `/proc/net/tcp`, an idle connection
/// with keepalive shows the keepalive timer (`tr` 2), one without none.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_connections_have_tcp_keepalive() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let gw = Gateway::start(Config::for_tests(&mock.base_url()))
        .await
        .unwrap();
    let client = TcpStream::connect(gw.addr()).await.unwrap();
    let ours = client.local_addr().unwrap().port();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // `sl local rem st tx:rx tr:when …`, ports in hex.
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let port = |field: &str| u16::from_str_radix(field.rsplit(':').next().unwrap_or(""), 16).ok();
    let timer = table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.len() > 5 && port(f[1]) == Some(gw.addr().port()) && port(f[2]) == Some(ours))
            .then(|| f[5].split(':').next().unwrap_or("").to_string())
    });
    assert_eq!(
        timer.as_deref(),
        Some("02"),
        "the gateway's side: {timer:?}"
    );
    drop(client);
    gw.shutdown().await;
}

/// Beyond `max_client_connections`, a new connection gets a 503 naming the
/// limit and is closed; once a connection closes, new ones are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_are_refused_clearly() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.max_client_connections = 4;
    let gw = Gateway::start(config).await.unwrap();

    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(gw.addr()).await.unwrap());
    }
    // The accept loop counts them as they are taken.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = TcpStream::connect(gw.addr()).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), extra.read_to_end(&mut reply))
        .await
        .expect("the refusal comes at once")
        .unwrap();
    let text = String::from_utf8_lossy(&reply);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("max_client_connections = 4"), "{text}");

    drop(idle.pop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(post(gw.addr(), "after").await, 200);
    gw.shutdown().await;
}

/// On the hyper path too (a chunked body, which the fast path hands to
/// hyper): a body that stops half-way is answered and the connection let go
/// after `client_body_timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_chunked_body_is_cut_off_on_the_hyper_path() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.client_body_timeout = Duration::from_millis(500);
    let gw = Gateway::start(config).await.unwrap();
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(
        b"POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
          transfer-encoding: chunked\r\n\r\n13\r\n{\"model\":\"claude-te\r\n",
    )
    .await
    .unwrap();
    let reply = read_until_closed(&mut s, Duration::from_secs(10))
        .await
        .expect("closed");
    let text = String::from_utf8_lossy(&reply);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    // Answered by the timeout (not at once by a malformed chunk).
    assert!(
        text.contains("within client_body_timeout_ms (500 ms)"),
        "{text}"
    );
    gw.shutdown().await;
}

/// An upstream that answers every request with a body of `len` bytes;
/// its base URL.
async fn big_answers(len: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = s.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n"
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(&vec![b' '; len]).await;
            });
        }
    });
    base
}

/// Clients that send a request and never read its answer, on the fast
/// path (`content-length`) and on hyper's (chunked): each is cut off once
/// a write to it has waited `client_body_timeout`, with the answer cut
/// short, instead of holding its connection (and an upstream one) for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_read_nothing_are_cut_off() {
    const LEN: usize = 16 << 20;
    let mut config = Config::for_tests(&big_answers(LEN).await);
    config.client_body_timeout = Duration::from_millis(500);
    let gw = Gateway::start(config).await.unwrap();
    let chunked = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         x-api-key: k\r\nanthropic-version: 2023-06-01\r\ntransfer-encoding: chunked\r\n\r\n\
         {:x}\r\n{BODY}\r\n0\r\n\r\n",
        BODY.len()
    );
    for (path, head) in [("fast", request("stuck", "")), ("hyper", chunked)] {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut s = socket.connect(gw.addr()).await.unwrap();
        s.write_all(head.as_bytes()).await.unwrap();
        // Reads nothing for a while.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let mut got = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        let closed = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got += n,
                }
            }
        })
        .await
        .is_ok();
        assert!(closed, "{path}: still open after {got} bytes");
        assert!(got < LEN, "{path}: the whole answer came ({got} bytes)");
    }
    assert_eq!(post(gw.addr(), "after").await, 200, "others are served");
    gw.shutdown().await;
}

/// An Anthropic request (`connection: close`) whose one message holds
/// `len` bytes of text: its head and its body.
fn large_request(len: usize) -> (String, String) {
    let text = format!(
        "{{\"model\":\"claude-test\",\"max_tokens\":1,\"messages\":[{{\"role\":\"user\",\"content\":\"{}\"}}]}}",
        "x".repeat(len)
    );
    let head = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         x-api-key: k\r\nanthropic-version: 2023-06-01\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n",
        text.len()
    );
    (head, text)
}

/// An upstream that stops reading a large request: the first-byte timeout
/// covers sending it, on the fast path as on hyper's (a `504` naming the
/// configured timeout, not a wait until the upstream gives up, which this
/// one never does). The test's own bound only stops a hung gateway: the
/// answer's words say which timeout cut the request, however loaded the
/// machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_reads_nothing_gets_the_first_byte_timeout() {
    // A small receive buffer (the accepted sockets inherit it): what the
    // upstream holds unread is known, so a request of 8 MB (past it and
    // the gateway's send buffer, at most 4 MiB by Linux's default
    // `tcp_wmem`) leaves the gateway's write waiting.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(16).unwrap();
    let mut config = Config::for_tests(&format!("http://{}", listener.local_addr().unwrap()));
    let held = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    config.first_byte_timeout = Some(Duration::from_secs(1));
    let gw = Gateway::start(config).await.unwrap();
    let (head, text) = large_request(8 << 20);
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(text.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut reply))
        .await
        .expect("answered")
        .unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 504"), "{reply}");
    assert!(
        reply.contains("timed out waiting for upstream 127.0.0.1: no response within 1000 ms"),
        "{reply}"
    );
    gw.shutdown().await;
    held.abort();
}

/// An upstream that refuses a large body as soon as it has the head (as
/// Anthropic answers 413 past 32 MB) and closes, resetting the connection
/// under the body still on its way: the client gets that answer, not a 502
/// for the write it cut short, and the upstream sees the request once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_refusing_a_large_body_early_is_answered_with_its_refusal() {
    let (head, text) = large_request(20 << 20);
    early_refusal_is_relayed(head, text).await;
}

/// The same on hyper's path (a chunked request body is not the fast
/// path's): hyper's client, whose write fails under the reset, reads the
/// answer that came before it; before, the client got a 502.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_refusing_a_large_body_early_is_answered_with_its_refusal_on_hypers_path() {
    let (head, body) = chunked(large_request(20 << 20));
    early_refusal_is_relayed(head, body).await;
}

/// An upstream that refuses early *without* `connection: close` leaves
/// hyper's client a keep-alive answer on a connection it reset. The
/// requests sent while that answer is relayed must not be handed the dead
/// connection from the pool (a 502): each is answered by the upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_reset_under_an_early_answer_is_not_reused() {
    early_answers_do_not_leave_their_connection_in_the_pool(Duration::ZERO).await;
}

/// The same when the reset comes well after the answer (the upstream
/// lingers before it closes): the answer has been relayed whole, and said
/// keep-alive, long before the write under it fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_reset_long_after_an_early_answer_is_not_reused() {
    early_answers_do_not_leave_their_connection_in_the_pool(Duration::from_millis(100)).await;
}

/// Five rounds of a large request refused early by an upstream that
/// closes `linger` after its keep-alive answer, each with three small
/// requests sent while the answer is relayed: all are answered 413, and
/// the upstream read each request's head once.
async fn early_answers_do_not_leave_their_connection_in_the_pool(linger: Duration) {
    let (upstream, heads) = refusing_upstream(false, linger).await;
    let gw = Gateway::start(Config::for_tests(&format!("http://{upstream}")))
        .await
        .unwrap();
    for round in 0..5 {
        let (head, body) = chunked(large_request(20 << 20));
        let mut s = TcpStream::connect(gw.addr()).await.unwrap();
        s.write_all(head.as_bytes()).await.unwrap();
        let _ = s.write_all(body.as_bytes()).await;
        // The answer has begun: its connection is about to go back to the
        // pool, or not.
        let mut first = [0u8; 1];
        s.read_exact(&mut first).await.unwrap();
        let others: Vec<_> = (0..3)
            .map(|_| {
                let addr = gw.addr();
                tokio::spawn(async move {
                    let (head, body) = chunked(large_request(10));
                    let mut s = TcpStream::connect(addr).await.unwrap();
                    s.write_all(format!("{head}{body}").as_bytes())
                        .await
                        .unwrap();
                    let mut reply = Vec::new();
                    let _ =
                        tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut reply))
                            .await;
                    String::from_utf8_lossy(&reply).into_owned()
                })
            })
            .collect();
        let mut reply = vec![first[0]];
        let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut reply)).await;
        let reply = String::from_utf8_lossy(&reply);
        assert!(reply.starts_with("HTTP/1.1 413"), "round {round}: {reply}");
        for other in others {
            let other = other.await.unwrap();
            assert!(other.starts_with("HTTP/1.1 413"), "round {round}: {other}");
        }
    }
    assert_eq!(
        heads.load(std::sync::atomic::Ordering::SeqCst),
        20,
        "each sent once"
    );
    gw.shutdown().await;
}

/// A request of [`large_request`] with its body chunked (hyper's path).
fn chunked((head, text): (String, String)) -> (String, String) {
    let head = head.replace(
        &format!("content-length: {}\r\n", text.len()),
        "transfer-encoding: chunked\r\n",
    );
    assert!(head.contains("chunked"), "{head}");
    (head, format!("{:x}\r\n{text}\r\n0\r\n\r\n", text.len()))
}

/// An upstream that answers 413 to each request: a small one once read
/// whole, keeping the connection for the next (unless `close`); a large
/// one from its head and 64 KiB of its body, closing `linger` later with
/// the rest unread (with `connection: close` if `close`). Its address,
/// and how many heads it has read.
async fn refusing_upstream(
    close: bool,
    linger: Duration,
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    // A head, then its body whole (a small one) or
                    // 64 KiB of it (a large one, refused unread).
                    let whole = |buf: &[u8]| {
                        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                            return false;
                        };
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        match head.lines().find_map(|l| l.strip_prefix("content-length:")) {
                            Some(n) => buf.len() - end - 4 >= n.trim().parse::<usize>().unwrap(),
                            None => buf[end + 4..].ends_with(b"0\r\n\r\n"),
                        }
                    };
                    while !whole(&buf) && buf.len() < 64 * 1024 {
                        match s.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let body = r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#;
                    let answer = format!(
                        "HTTP/1.1 413 Request Entity Too Large\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\n{}\r\n{body}",
                        body.len(),
                        if close { "connection: close\r\n" } else { "" },
                    );
                    let _ = s.write_all(answer.as_bytes()).await;
                    if close || !whole(&buf) {
                        // Closed `linger` later with the rest of the
                        // request unread: a reset follows the answer.
                        tokio::time::sleep(linger).await;
                        return;
                    }
                    // Kept alive, as the answer said.
                    buf.clear();
                }
            });
        }
    });
    (addr, heads)
}

/// `head` and `body` sent to a gateway whose upstream answers 413 once it
/// has a request's head and closes with the body unread.
async fn early_refusal_is_relayed(head: String, body: String) {
    let (upstream, heads) = refusing_upstream(true, Duration::ZERO).await;
    let config = Config::for_tests(&format!("http://{upstream}"));
    let gw = Gateway::start(config).await.unwrap();
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    // The gateway may stop reading once it is answered.
    let _ = s.write_all(body.as_bytes()).await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut reply)).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("request_too_large"), "{reply}");
    assert_eq!(
        heads.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "sent once"
    );
    gw.shutdown().await;
}

/// One request on an open keep-alive connection; the status code (the
/// response read whole, by its `content-length` or its last chunk).
async fn post_on(s: &mut TcpStream, session: &str) -> u16 {
    s.write_all(request(session, "").as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = s.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "closed mid-response: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
        let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
        let whole = match head.lines().find_map(|l| l.strip_prefix("content-length:")) {
            Some(length) => got.len() >= end + 4 + length.trim().parse::<usize>().unwrap(),
            None => {
                assert!(head.contains("transfer-encoding: chunked"), "{head}");
                got.ends_with(b"\r\n0\r\n\r\n")
            }
        };
        if whole {
            return head.split(' ').nth(1).unwrap().parse().unwrap();
        }
    }
}

/// The body of `GET path`, asked on a connection of its own.
async fn get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    text[text.find("\r\n\r\n").unwrap() + 4..].to_string()
}

/// `worker_connections` from `/healthz` (asked on a connection of its own,
/// which counts itself).
async fn worker_connections(addr: std::net::SocketAddr) -> Vec<u64> {
    let body = get(addr, "/healthz").await;
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    json["worker_connections"]
        .as_array()
        .unwrap_or_else(|| panic!("{json}"))
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect()
}

/// Keep-alive connections are spread over the workers, whichever worker
/// wins the race to accept them (the busy one, mostly): a worker serving
/// more than the least loaded one hands a new connection over, and the
/// connection is served there, request after request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_spread_evenly_over_the_workers() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.workers = 3;
    let gw = Gateway::start(config).await.unwrap();

    let mut open = Vec::new();
    for i in 0..16 {
        let mut s = TcpStream::connect(gw.addr()).await.unwrap();
        assert_eq!(post_on(&mut s, &format!("spread{i}")).await, 200);
        open.push(s);
    }
    let counts = worker_connections(gw.addr()).await;
    assert_eq!(counts.len(), 3, "{counts:?}");
    assert_eq!(counts.iter().sum::<u64>(), 17, "{counts:?}");
    let (least, most) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
    assert!(most - least <= 1, "{counts:?}");
    // Each connection, wherever it went, goes on being served.
    for (i, s) in open.iter_mut().enumerate() {
        assert_eq!(post_on(s, &format!("spread{i}")).await, 200);
    }
    drop(open);
    // Generous: a bound only for counts that never fall.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let counts = worker_connections(gw.addr()).await;
        if counts.iter().sum::<u64>() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "still counted: {counts:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    gw.shutdown().await;
}

/// One integer from `sql` on the SQLite database at `url`.
async fn count(url: &str, sql: &str) -> i64 {
    let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
    sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap()
}

/// Retention: a gateway started on a database holding records older than
/// `retention_days` deletes them in the pass it runs soon after start;
/// newer ones stay, and `/metrics` counts what went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_older_than_the_retention_are_deleted_soon_after_start() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tw.db").display());
    // Ten sessions recorded by a gateway without retention...
    let mut config = Config::for_tests(&mock.base_url());
    config.database = Some(url.clone());
    config.retention = None;
    let gw = Gateway::start(config).await.unwrap();
    for i in 0..10 {
        assert_eq!(post(gw.addr(), &format!("keep{i}")).await, 200);
    }
    let report = gw.shutdown().await;
    assert_eq!(report.events_dropped, 0, "{report:?}");
    let calls = count(&url, "SELECT COUNT(*) FROM tool_calls").await;
    assert!(calls >= 10, "each answer has a tool call ({calls})");
    // ... six of them 40 days ago.
    let old = "('keep0', 'keep1', 'keep2', 'keep3', 'keep4', 'keep5')";
    let forty_days = 40 * 86_400_000_i64;
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    for sql in [
        format!("UPDATE requests SET at_ms = at_ms - {forty_days} WHERE session_id IN {old}"),
        format!("UPDATE tool_calls SET at_ms = at_ms - {forty_days} WHERE session_id IN {old}"),
        format!(
            "UPDATE sessions SET first_ms = first_ms - {forty_days}, \
             last_ms = last_ms - {forty_days} WHERE session_id IN {old}"
        ),
    ] {
        sqlx::query(&sql).execute(&mut conn).await.unwrap();
    }
    conn.close().await.unwrap();
    let old_calls = count(
        &url,
        &format!("SELECT COUNT(*) FROM tool_calls WHERE session_id IN {old}"),
    )
    .await;

    let mut config = Config::for_tests(&mock.base_url());
    config.database = Some(url.clone());
    assert_eq!(
        config.retention,
        Some(Duration::from_secs(30 * 86_400)),
        "the default"
    );
    let gw = Gateway::start(config).await.unwrap();
    let passed = "toolwarden_retention_passes_total{outcome=\"completed\"} 1";
    let started = Instant::now();
    let metrics = loop {
        let metrics = get(gw.addr(), "/metrics").await;
        if metrics.contains(passed) {
            break metrics;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no pass yet:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    for line in [
        "toolwarden_retention_deleted_rows_total{table=\"requests\"} 6".to_string(),
        "toolwarden_retention_deleted_rows_total{table=\"sessions\"} 6".to_string(),
        format!("toolwarden_retention_deleted_rows_total{{table=\"tool_calls\"}} {old_calls}"),
    ] {
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }
    assert_eq!(count(&url, "SELECT COUNT(*) FROM requests").await, 4);
    assert_eq!(
        count(
            &url,
            &format!("SELECT COUNT(*) FROM requests WHERE session_id IN {old}")
        )
        .await,
        0
    );
    assert_eq!(count(&url, "SELECT COUNT(*) FROM sessions").await, 4);
    assert_eq!(
        count(&url, "SELECT COUNT(*) FROM tool_calls").await,
        calls - old_calls
    );
    // The gateway goes on recording.
    assert_eq!(post(gw.addr(), "after").await, 200);
    gw.shutdown().await;
    assert_eq!(count(&url, "SELECT COUNT(*) FROM requests").await, 5);
}

/// The JSONL log stays within its bound: rotated at `rotate_bytes` into
/// `PATH.1`, `PATH.2`, with only `keep` rotated files kept; no line is
/// split or lost within what is kept (the kept files hold the last
/// requests, in order), and `/metrics` counts the rotations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jsonl_log_is_rotated_at_its_bound_and_keeps_the_newest_files() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let log = JsonlLog {
        path: dir.path().join("events.jsonl"),
        rotate_bytes: 8 * 1024,
        keep: 2,
    };
    let mut config = Config::for_tests(&mock.base_url());
    config.database = Some(format!("sqlite://{}", dir.path().join("tw.db").display()));
    config.jsonl = Some(log.clone());
    let gw = Gateway::start(config).await.unwrap();
    // Ten rounds of 30 requests, each round written before the next is
    // sent: at least one batch (more than 8 KiB of lines) per round.
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    let (rounds, per_round) = (10, 30);
    let sent = rounds * per_round;
    let mut rotations = 0;
    for round in 0..rounds {
        for i in round * per_round..(round + 1) * per_round {
            assert_eq!(post_on(&mut s, &format!("s{i}")).await, 200);
        }
        let started = Instant::now();
        rotations = loop {
            let metrics = get(gw.addr(), "/metrics").await;
            let value = |name: &str| -> u64 {
                let line = metrics.lines().find(|l| l.starts_with(name));
                line.and_then(|l| l.rsplit(' ').next()?.parse().ok())
                    .unwrap_or_else(|| panic!("{name} in\n{metrics}"))
            };
            if value("toolwarden_events_written_total ") >= 2 * (round + 1) * per_round {
                break value("toolwarden_jsonl_rotations_total ");
            }
            assert!(started.elapsed() < Duration::from_secs(20), "{metrics}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
    }
    drop(s);
    gw.shutdown().await;
    // A round writes more than the bound: each one after the first
    // rotates (a round written in two batches may rotate twice), and the
    // files of the first rounds have been deleted.
    assert!(rotations >= rounds - 1, "{rotations} rotations");
    assert!(!log.rotated(3).exists(), "only two rotated files are kept");

    // The kept files, oldest first: their requests are the last ones sent,
    // in order, every line whole.
    let mut sessions = Vec::new();
    for path in [log.rotated(2), log.rotated(1), log.path.clone()] {
        let text = std::fs::read_to_string(&path).unwrap();
        if path != log.path {
            assert!(text.len() as u64 >= log.rotate_bytes, "{}", path.display());
        }
        for line in text.lines() {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            if event["type"] == "request" {
                let session = event["session_id"].as_str().unwrap();
                sessions.push(session[1..].parse::<u64>().unwrap());
            }
        }
    }
    let first = sent - sessions.len() as u64;
    assert!(first > 0, "the oldest files were deleted");
    assert_eq!(sessions, (first..sent).collect::<Vec<_>>());
}

/// A JSONL path that cannot be written stops the gateway at start with a
/// message naming it, rather than failing every batch for weeks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jsonl_log_that_cannot_be_written_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-dir").join("events.jsonl");
    let mut config = Config::for_tests("http://127.0.0.1:1");
    config.jsonl = Some(JsonlLog::unbounded(&path));
    let err = Gateway::start(config)
        .await
        .expect_err("started with an unwritable JSONL log");
    assert_eq!(err.kind(), GatewayErrorKind::Config);
    let text = err.to_string();
    assert!(text.contains("cannot write the JSONL log"), "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
}

/// Two gateways given one JSONL log would each rotate it: the second is
/// refused at start, naming the lock; once the first has shut down the
/// log can be claimed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jsonl_log_another_gateway_writes_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let log = JsonlLog::unbounded(dir.path().join("events.jsonl"));
    let mut config = Config::for_tests("http://127.0.0.1:1");
    config.jsonl = Some(log.clone());
    let first = Gateway::start(config.clone()).await.unwrap();
    let err = Gateway::start(config.clone())
        .await
        .expect_err("a second gateway started on the same JSONL log");
    assert_eq!(err.kind(), GatewayErrorKind::Config);
    let text = err.to_string();
    assert!(
        text.contains(&log.lock_path().display().to_string()),
        "{text}"
    );
    assert!(text.contains("another gateway"), "{text}");
    first.shutdown().await;
    let again = Gateway::start(config).await.unwrap();
    again.shutdown().await;
}
