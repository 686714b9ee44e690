//! `max_buffered_response_bytes`: the whole response bodies copied for
//! parsing, and what streams' parses hold, over every connection, are
//! bounded; an answer whose copy (or a stream whose parse) finds no room
//! still reaches its client whole, unread (past that point), counted and
//! recorded as such.

use crate::*;

/// An Anthropic answer with one `tool_use` call `id`, padded with text
/// to about `len` bytes.
fn answer(id: &str, len: usize) -> String {
    let head = format!(
        r#"{{"id":"msg_{id}","type":"message","role":"assistant","model":"claude-test","content":[{{"type":"tool_use","id":"{id}","name":"shell","input":{{}}}},{{"type":"text","text":""#
    );
    let tail = r#""}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}"#;
    let pad = len.saturating_sub(head.len() + tail.len());
    format!("{head}{}{tail}", "x".repeat(pad))
}

/// An Anthropic stream: its start, a text event of `pad` bytes, keep-alive
/// comments, one `tool_use` call `id`, and its end.
fn stream(id: &str, pad: usize) -> String {
    let start = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}

"#;
    let text = format!(
        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{}\"}}}}\n\n",
        "x".repeat(pad)
    );
    let call = format!(
        "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"shell\",\"input\":{{}}}}}}\n\n\
         event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":1}}\n\n"
    );
    let end = r#"event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

"#;
    format!("{start}{text}{}{call}{end}", ": keep-alive\n".repeat(1000))
}

/// An upstream whose first connection answers half of its body, then the
/// rest once `release` fires; every other connection answers at once. The
/// answers (`first`, `others`) are given in order, as `content_type`.
async fn stalling_upstream(
    (first, others): (String, String),
    content_type: &'static str,
    release: tokio::sync::oneshot::Receiver<()>,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut release = Some(release);
        while let Ok((mut s, _)) = listener.accept().await {
            let stall = release.take();
            let body = if stall.is_some() {
                first.clone()
            } else {
                others.clone()
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = s.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let (start, rest) = body.as_bytes().split_at(body.len() / 2);
                let _ = s.write_all(start).await;
                if let Some(stall) = stall {
                    let _ = stall.await;
                }
                let _ = s.write_all(rest).await;
                let _ = s.flush().await;
            });
        }
    });
    base
}

/// One request on a connection of its own: its status and body.
async fn exchange(addr: std::net::SocketAddr, session: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = request(session, "connection: close\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("answered")
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text[text.find("\r\n\r\n").map_or(text.len(), |i| i + 4)..].to_string();
    (status, body)
}

/// `response_copies` of `/healthz`.
async fn copies(addr: std::net::SocketAddr) -> serde_json::Value {
    let json: serde_json::Value = serde_json::from_str(&get(addr, "/healthz").await).unwrap();
    json["response_copies"].clone()
}

/// A gateway to `upstream` recording to SQLite (its URL, in the returned
/// directory), each parse and the parses at once bounded by `bound`.
async fn bounded_gateway(
    upstream: &str,
    bound: usize,
) -> (
    toolwarden_gateway::RunningGateway,
    String,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tw.db").display());
    let mut config = Config::for_tests(upstream);
    config.database = Some(url.clone());
    config.response_parse_limit = bound;
    config.max_buffered_response_bytes = bound;
    let gw = Gateway::start(config).await.unwrap();
    (gw, url, dir)
}

/// Waits until `/healthz`'s `held_bytes` of the response copies is in
/// `range`; the last value.
async fn held_within(addr: std::net::SocketAddr, range: std::ops::RangeInclusive<u64>) -> u64 {
    let mut held = 0;
    for _ in 0..200 {
        held = copies(addr).await["held_bytes"].as_u64().unwrap();
        if range.contains(&held) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    held
}

/// The next exchange (session `other`) gets `expected` whole and
/// unchanged, and is the one response refused room (`/healthz`,
/// `no_room` in `/metrics`); the response copies' part of `/healthz`.
async fn passes_refused(addr: std::net::SocketAddr, expected: &str) -> serde_json::Value {
    let (status, body) = exchange(addr, "other").await;
    assert_eq!(status, 200);
    assert_eq!(body, expected, "passed whole and unchanged");
    let c = copies(addr).await;
    assert_eq!(c["refused"], 1, "{c}");
    let metrics = get(addr, "/metrics").await;
    assert!(
        metrics.contains(r#"toolwarden_unparsed_responses_total{reason="no_room"} 1"#),
        "{metrics}"
    );
    c
}

/// Stops the gateway (nothing dropped) and checks its records:
/// `toolu_held`'s call read once, whole; `toolu_other`'s not read, its
/// request the one marked `calls_incomplete`.
async fn stopped_with_one_refused(gw: toolwarden_gateway::RunningGateway, url: &str) {
    let report = gw.shutdown().await;
    assert_eq!(report.events_dropped, 0, "{report:?}");
    let calls = |id: &str| {
        format!("SELECT COUNT(*) FROM tool_calls WHERE call_id = '{id}' AND call_index IS NOT NULL")
    };
    assert_eq!(count(url, &calls("toolu_held")).await, 1, "read whole");
    assert_eq!(count(url, &calls("toolu_other")).await, 0, "not read");
    let incomplete = "SELECT COUNT(*) FROM requests WHERE calls_incomplete = 1";
    assert_eq!(count(url, incomplete).await, 1);
}

/// While one answer's copy (half arrived) holds most of the bound, another
/// answer finds no room for its copy: it reaches its client whole and
/// unchanged, unread (`no_room` in `/metrics`, its request recorded with
/// `calls_incomplete`, its call not recorded); the first, once whole, is
/// read and its call recorded; the room is given back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_past_the_copies_bound_pass_unread_and_counted() {
    let (release, stalled) = tokio::sync::oneshot::channel();
    let held_answer = answer("toolu_held", 40 << 10);
    let other_answer = answer("toolu_other", 40 << 10);
    let answers = (held_answer.clone(), other_answer.clone());
    let upstream = stalling_upstream(answers, "application/json", stalled).await;
    let (gw, url, _dir) = bounded_gateway(&upstream, 64 << 10).await;
    let addr = gw.addr();

    let first = tokio::spawn(async move { exchange(addr, "held").await });
    let held = held_within(addr, 1..=u64::MAX).await;
    assert!((40 << 10..=64 << 10).contains(&held), "{held}");

    let c = passes_refused(addr, &other_answer).await;
    assert_eq!(c["held_bytes"].as_u64(), Some(held), "{c}");

    release.send(()).unwrap();
    let (status, body) = first.await.unwrap();
    assert_eq!((status, body), (200, held_answer));
    assert_eq!(held_within(addr, 0..=0).await, 0, "given back once read");

    stopped_with_one_refused(gw, &url).await;
}

/// While one stream's parse (half its 60 KB event arrived) holds half the
/// bound, another stream's parse finds no room to grow through its own
/// large event: it reaches its client whole and unchanged, but is not read
/// past that point (`no_room` in `/metrics`, its request recorded with
/// `calls_incomplete`, its later call not recorded); the first, once
/// whole, is read and its call recorded; the room is given back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_past_the_bound_are_not_read_further_and_counted() {
    let (release, stalled) = tokio::sync::oneshot::channel();
    let held_stream = stream("toolu_held", 60_000);
    let other_stream = stream("toolu_other", 60_000);
    let streams = (held_stream.clone(), other_stream.clone());
    let upstream = stalling_upstream(streams, "text/event-stream", stalled).await;
    let (gw, url, _dir) = bounded_gateway(&upstream, 128 << 10).await;
    let addr = gw.addr();

    let first = tokio::spawn(async move { exchange(addr, "held").await });
    let held = held_within(addr, (28 << 10)..=u64::MAX).await;
    assert!((28 << 10..=64 << 10).contains(&held), "{held}");

    passes_refused(addr, &other_stream).await;

    release.send(()).unwrap();
    let (status, body) = first.await.unwrap();
    assert_eq!((status, body), (200, held_stream));
    assert_eq!(held_within(addr, 0..=0).await, 0, "given back once read");
    assert_eq!(copies(addr).await["refused"], 1, "the first read whole");

    stopped_with_one_refused(gw, &url).await;
}
