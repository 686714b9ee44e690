//! `max_buffered_request_bytes`: the request bodies held at once, over
//! every connection, are bounded; a body with no room is answered 503
//! (`retry-after`), in the provider's envelope, on either HTTP path.

use crate::*;

/// An Anthropic request whose body is [`BODY`] padded with spaces to
/// `len` bytes; its head and its body. `chunked`: sent in one chunk
/// (which the fast path hands to hyper).
fn padded(len: usize, chunked: bool) -> (String, String) {
    let body = format!("{BODY}{}", " ".repeat(len - BODY.len()));
    let framing = if chunked {
        "transfer-encoding: chunked".to_owned()
    } else {
        format!("content-length: {len}")
    };
    let head = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         x-api-key: k\r\nanthropic-version: 2023-06-01\r\nconnection: close\r\n{framing}\r\n\r\n"
    );
    let body = if chunked {
        format!("{len:x}\r\n{body}\r\n0\r\n\r\n")
    } else {
        body
    };
    (head, body)
}

/// Sends a request whole and reads its answer to the end.
async fn answer(addr: std::net::SocketAddr, (head, body): (String, String)) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("answered")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// `request_bodies` of `/healthz`.
async fn bodies(addr: std::net::SocketAddr) -> serde_json::Value {
    let body = get(addr, "/healthz").await;
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    json["request_bodies"].clone()
}

/// While one client's half-sent body holds most of the bound, a body with
/// no room left gets a 503 naming the setting, with `retry-after`, on the
/// fast path and on hyper's; a small one is served; once the first body
/// has gone, the room is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_past_the_buffered_bound_are_refused_until_others_have_gone() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.max_request_bytes = 256 << 10;
    config.max_buffered_request_bytes = 256 << 10;
    let gw = Gateway::start(config).await.unwrap();

    let (head, body) = padded(200 << 10, false);
    let mut holding = TcpStream::connect(gw.addr()).await.unwrap();
    holding.write_all(head.as_bytes()).await.unwrap();
    holding
        .write_all(&body.as_bytes()[..190 << 10])
        .await
        .unwrap();
    let mut held = 0;
    for _ in 0..100 {
        held = bodies(gw.addr()).await["held_bytes"].as_u64().unwrap();
        if held >= 190 << 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!((190 << 10..=256 << 10).contains(&held), "{held}");

    for chunked in [false, true] {
        let text = answer(gw.addr(), padded(100 << 10, chunked)).await;
        assert!(
            text.starts_with("HTTP/1.1 503"),
            "chunked {chunked}: {text}"
        );
        assert!(text.contains("\r\nretry-after: 1\r\n"), "{text}");
        assert!(text.contains("\"overloaded_error\""), "{text}");
        assert!(
            text.contains("max_buffered_request_bytes (262144 bytes)"),
            "{text}"
        );
    }
    // A chunked body refused part-way holds nothing while the rest of it
    // is read and dropped.
    let held_now = || async { bodies(gw.addr()).await["held_bytes"].as_u64().unwrap() };
    let until = |want: u64| async move {
        for _ in 0..100 {
            if held_now().await == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("held {} bytes, not {want}", held_now().await);
    };
    let chunk = |kib: usize| format!("{:x}\r\n{}\r\n", kib << 10, " ".repeat(kib << 10));
    let mut draining = TcpStream::connect(gw.addr()).await.unwrap();
    let (chunked_head, _) = padded(BODY.len(), true);
    draining.write_all(chunked_head.as_bytes()).await.unwrap();
    draining.write_all(chunk(30).as_bytes()).await.unwrap();
    until(held + (30 << 10)).await;
    draining.write_all(chunk(40).as_bytes()).await.unwrap();
    until(held).await;
    drop(draining);

    let small = answer(gw.addr(), padded(BODY.len(), false)).await;
    assert!(small.starts_with("HTTP/1.1 200"), "{small}");

    holding
        .write_all(&body.as_bytes()[190 << 10..])
        .await
        .unwrap();
    let mut out = Vec::new();
    holding.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    for chunked in [false, true] {
        let text = answer(gw.addr(), padded(100 << 10, chunked)).await;
        assert!(
            text.starts_with("HTTP/1.1 200"),
            "chunked {chunked}: {text}"
        );
    }
    let seen = bodies(gw.addr()).await;
    assert_eq!(seen["refused"], 3, "{seen}");
    assert_eq!(seen["held_bytes"], 0, "{seen}");
    assert_eq!(seen["max_bytes"], 256 << 10, "{seen}");
    gw.shutdown().await;
}

/// Regression: a body over `max_request_bytes` sent whole before its
/// answer is read (as Python's `http.client`, and the SDKs on it, send)
/// met a reset: the gateway closed with the body unread. It is read and
/// dropped after the 413, on both paths, and the client reads its 413.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_too_large_sent_whole_gets_its_413_not_a_reset() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.max_request_bytes = 64 << 10;
    config.max_buffered_request_bytes = 64 << 10;
    let gw = Gateway::start(config).await.unwrap();
    for chunked in [false, true] {
        for _ in 0..3 {
            let text = answer(gw.addr(), padded(8 << 20, chunked)).await;
            assert!(
                text.starts_with("HTTP/1.1 413"),
                "chunked {chunked}: {text}"
            );
            assert!(text.contains("\"request_too_large\""), "{text}");
        }
    }
    gw.shutdown().await;
}

/// A client that waits for `100 Continue` before sending a body announced
/// over `max_request_bytes` (curl does for bodies over 1 MiB) is answered
/// 413 at once, not asked for the body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_announced_too_large_with_expect_is_refused_before_it_is_sent() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.max_request_bytes = 64 << 10;
    config.max_buffered_request_bytes = 64 << 10;
    let gw = Gateway::start(config).await.unwrap();
    let (head, _) = padded(8 << 20, false);
    let head = head.replace("\r\n\r\n", "\r\nexpect: 100-continue\r\n\r\n");
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
        .await
        .expect("answered without the body")
        .unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    gw.shutdown().await;
}

/// A refused body the client goes on sending holds no shutdown: its
/// connection, read and dropped after the 413, closes as the gateway
/// stops, not after the grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lingering_refusal_does_not_hold_the_shutdown() {
    let mock = MockProvider::start(MockOptions::default()).await;
    let mut config = Config::for_tests(&mock.base_url());
    config.max_request_bytes = 64 << 10;
    config.max_buffered_request_bytes = 64 << 10;
    config.shutdown_grace = Duration::from_secs(5);
    let gw = Gateway::start(config).await.unwrap();
    let (head, body) = padded(1 << 20, false);
    let mut s = TcpStream::connect(gw.addr()).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&body.as_bytes()[..100 << 10]).await.unwrap();
    // The 413 has come; the rest of the body is not sent.
    let mut answer = [0u8; 12];
    s.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 413");
    let started = Instant::now();
    gw.shutdown().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "{took:?}");
}
