//! A client that hangs up as soon as it has the final event, as the Codex
//! CLI does after `response.completed`, while the upstream has not ended
//! the body yet: every turn is recorded complete — no error, its usage,
//! its response id and its tool call, whose result the next turn brings —
//! on both HTTP paths (the fast path takes `content-length` bodies, a
//! chunked request body goes through hyper). A client that hangs up before
//! the final event gets the turn recorded with what was seen of it and the
//! ending named; so does an HTTP/2 client whose stream the gateway reset
//! because it stopped reading it, an HTTP/1 client whose connection it
//! closed for that, and each turn on an HTTP/2 connection it closed for
//! that (the stall named, not a client gone).

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};
use toolwarden_mock_provider::{RawResponse, Scripted};

use super::{
    convo::OPENAI_KEY,
    support::{Harness, metric, read_to_close},
};

const TURNS: usize = 20;

/// How long the upstream holds a stream open after its final event.
const LINGER: Duration = Duration::from_millis(1000);

/// A Responses stream with one `read_file` call, whose body the upstream
/// ends only `linger` after `response.completed` (with a keep-alive comment).
fn reply(turn: usize, linger: Duration) -> Scripted {
    let call = json!({"type": "function_call", "id": format!("fc_{turn}"),
        "call_id": format!("call_{turn}_abcdefgh"), "name": "read_file",
        "arguments": format!("{{\"path\":\"f{turn}.txt\"}}"), "status": "completed"});
    let response = |status: &str, output: Value| {
        json!({"id": format!("resp_{turn}"), "object": "response", "status": status,
            "model": "gpt-test", "output": output,
            "usage": {"input_tokens": 100 + turn, "output_tokens": 7}})
    };
    let events = [
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": call}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
        json!({"type": "response.completed", "response": response("completed", json!([call]))}),
    ];
    let sse: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Scripted::Raw(RawResponse {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        chunks: vec![Bytes::from(sse), Bytes::from_static(b": still here\n\n")],
        delay: linger,
    })
}

/// The request of `turn`: the history with the previous calls and results.
fn request(turn: usize) -> Vec<u8> {
    let mut input = vec![json!({"role": "user", "content": "Read the files one by one."})];
    for t in 0..turn {
        input.push(
            json!({"type": "function_call", "call_id": format!("call_{t}_abcdefgh"),
            "name": "read_file", "arguments": format!("{{\"path\":\"f{t}.txt\"}}")}),
        );
        input.push(json!({"type": "function_call_output",
            "call_id": format!("call_{t}_abcdefgh"), "output": "contents"}));
    }
    serde_json::to_vec(&json!({"model": "gpt-test", "stream": true, "input": input})).unwrap()
}

/// Opens a connection and sends one streamed Responses request on it,
/// with `extra` header lines (each ending in `\r\n`).
pub(super) async fn send_request(
    addr: &str,
    session: &str,
    body: &[u8],
    chunked: bool,
    extra: &str,
) -> TcpStream {
    let head = format!(
        "authorization: Bearer {OPENAI_KEY}\r\ncontent-type: application/json\r\n\
         x-session-id: {session}\r\n{extra}"
    );
    post(addr, "/v1/responses", &head, body, chunked).await
}

/// Opens a connection and sends a POST of `body` to `path` on it, with
/// the header lines `head` (each ending in `\r\n`), in a body of
/// `content-length` or, `chunked`, in one chunk (which hyper's path
/// serves).
pub(super) async fn post(
    addr: &str,
    path: &str,
    head: &str,
    body: &[u8],
    chunked: bool,
) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let framing = if chunked {
        "transfer-encoding: chunked".to_string()
    } else {
        format!("content-length: {}", body.len())
    };
    let head = format!("POST {path} HTTP/1.1\r\nhost: {addr}\r\n{head}{framing}\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    if chunked {
        s.write_all(format!("{:x}\r\n", body.len()).as_bytes())
            .await
            .unwrap();
        s.write_all(body).await.unwrap();
        s.write_all(b"\r\n0\r\n\r\n").await.unwrap();
    } else {
        s.write_all(body).await.unwrap();
    }
    s
}

/// Sends one streamed request over a fresh connection and hangs up as soon
/// as `until` has arrived (or the stream ended).
async fn send_and_hang_up(
    addr: &str,
    session: &str,
    body: &[u8],
    chunked: bool,
    until: &str,
) -> String {
    let mut s = send_request(addr, session, body, chunked, "").await;
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let read_all = async {
        loop {
            let n = s.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen);
            if let Some(at) = text.find(until)
                && text[at..].contains("\n\n")
            {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read_all)
        .await
        .expect("the event arrives");
    // Dropping the socket closes it: the client is gone.
    String::from_utf8_lossy(&seen).into_owned()
}

/// The request records of the JSONL log, in order.
pub(super) fn requests(h: &Harness) -> Vec<Value> {
    h.events()
        .into_iter()
        .filter(|e| e["type"] == "request")
        .collect()
}

async fn hangs_up_after_completed(chunked: bool) {
    let what = if chunked { "hyper path" } else { "fast path" };
    let mut h = Harness::start().await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    for turn in 0..TURNS {
        // The whole `LINGER`: the client must have left before the
        // keep-alive comment comes, also when a loaded machine holds it a
        // while between two reads.
        h.mock.push_response(reply(turn, LINGER));
        let seen = send_and_hang_up(
            &addr,
            "codex-like",
            &request(turn),
            chunked,
            "event: response.completed",
        )
        .await;
        assert!(seen.starts_with("HTTP/1.1 200"), "{what}: {seen}");
        assert!(
            !seen.contains(": still here"),
            "{what}: turn {turn}: the client left before the body ended: {seen}"
        );
    }
    // The upstream streams end after the clients left; let them.
    tokio::time::sleep(LINGER + Duration::from_millis(300)).await;
    let stats = h.finish().await;
    // In the order of the turns: each record is written when its upstream
    // stream ends, after its client left, and under load a later turn's
    // can end first.
    let mut recs = requests(&h);
    recs.sort_by_key(|r| r["input_tokens"].as_u64());
    assert_eq!(recs.len(), TURNS, "{what}: {recs:#?}");
    for (turn, r) in recs.iter().enumerate() {
        assert_eq!(r["error"], Value::Null, "{what}: turn {turn}: {r}");
        assert_eq!(r["status"], 200, "{what}: {r}");
        assert_eq!(r["response_id"], format!("resp_{turn}"), "{what}: {r}");
        assert_eq!(r["input_tokens"], 100 + turn, "{what}: {r}");
        assert_eq!(r["output_tokens"], 7, "{what}: {r}");
    }
    assert_eq!(stats.requests.total, TURNS as u64, "{what}");
    assert_eq!(stats.requests.errors, 0, "{what}");
    let tools: Vec<(&str, u64, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls, t.failures))
        .collect();
    assert_eq!(tools, [("read_file", TURNS as u64, 0)], "{what}");
    // Every call recorded from its own response, every result (all but
    // the last turn's) with it.
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let calls = store.session_calls("codex-like").await.unwrap();
    assert_eq!(calls.len(), TURNS, "{what}: {calls:#?}");
    for (turn, c) in calls.iter().enumerate() {
        assert!(c.request_id.is_some(), "{what}: turn {turn}: {c:?}");
        assert_eq!(
            c.failed.is_some(),
            turn + 1 < TURNS,
            "{what}: turn {turn}: {c:?}"
        );
    }
}

#[tokio::test]
async fn a_client_gone_after_response_completed_gets_complete_turns_fast_path() {
    hangs_up_after_completed(false).await;
}

#[tokio::test]
async fn a_client_gone_after_response_completed_gets_complete_turns_hyper_path() {
    hangs_up_after_completed(true).await;
}

#[tokio::test]
async fn a_client_gone_midway_leaves_what_was_seen_and_the_ending() {
    for chunked in [false, true] {
        let mut h = Harness::start().await;
        let addr = h.gw().trim_start_matches("http://").to_string();
        // The stream stops after the call's item for a while: the client
        // leaves before `response.completed`.
        let Scripted::Raw(mut raw) = reply(0, Duration::from_millis(400)) else {
            unreachable!()
        };
        let sse = String::from_utf8(raw.chunks[0].to_vec()).unwrap();
        let cut = sse.find("event: response.completed").unwrap();
        raw.chunks = vec![
            Bytes::from(sse[..cut].to_string()),
            Bytes::from(sse[cut..].to_string()),
        ];
        h.mock.push_response(Scripted::Raw(raw));
        send_and_hang_up(
            &addr,
            "gone",
            &request(0),
            chunked,
            "event: response.output_item.done",
        )
        .await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let stats = h.finish().await;
        let recs = requests(&h);
        assert_eq!(recs.len(), 1, "chunked={chunked}: {recs:#?}");
        let error = recs[0]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("client disconnected"),
            "chunked={chunked}: {}",
            recs[0]
        );
        assert_eq!(
            recs[0]["response_id"], "resp_0",
            "chunked={chunked}: {}",
            recs[0]
        );
        assert_eq!(stats.requests.errors, 1, "chunked={chunked}");
        // The call it saw is recorded from its response.
        let tools: Vec<(&str, u64)> = stats
            .tools
            .iter()
            .map(|t| (t.tool.as_str(), t.calls))
            .collect();
        assert_eq!(tools, [("read_file", 1)], "chunked={chunked}");
    }
}

/// Sends one streamed request with `connection: close` and reads the
/// answer to its end.
async fn send_and_read_to_end(addr: &str, session: &str, body: &[u8], chunked: bool) -> String {
    let mut s = send_request(addr, session, body, chunked, "connection: close\r\n").await;
    read_to_close(&mut s).await
}

/// An upstream (or a proxy before it) that ends a stream cleanly before
/// its final event: the turn is recorded with what was seen and the error
/// saying so, on both HTTP paths. A final event whose blank line never
/// came (the body ended right after its data) is a complete stream.
#[tokio::test]
async fn a_stream_ended_cleanly_before_its_final_event_is_an_error() {
    for chunked in [false, true] {
        let mut h = Harness::start().await;
        let addr = h.gw().trim_start_matches("http://").to_string();
        let Scripted::Raw(mut early) = reply(0, Duration::ZERO) else {
            unreachable!()
        };
        let sse = String::from_utf8(early.chunks[0].to_vec()).unwrap();
        let cut = sse.find("event: response.completed").unwrap();
        early.chunks = vec![Bytes::from(sse[..cut].to_string())];
        let Scripted::Raw(mut whole) = reply(1, Duration::ZERO) else {
            unreachable!()
        };
        let sse = String::from_utf8(whole.chunks[0].to_vec()).unwrap();
        whole.chunks = vec![Bytes::from(sse.trim_end().to_string())];
        h.mock.push_response(Scripted::Raw(early));
        h.mock.push_response(Scripted::Raw(whole));
        for turn in 0..2 {
            let seen = send_and_read_to_end(&addr, "cut", &request(turn), chunked).await;
            assert!(
                seen.starts_with("HTTP/1.1 200"),
                "chunked={chunked}: {seen}"
            );
        }
        let stats = h.finish().await;
        let mut recs = requests(&h);
        recs.sort_by_key(|r| r["input_tokens"].as_u64());
        assert_eq!(recs.len(), 2, "chunked={chunked}: {recs:#?}");
        assert_eq!(
            recs[0]["error"], "the stream ended before its final event",
            "chunked={chunked}: {}",
            recs[0]
        );
        assert_eq!(recs[0]["response_id"], "resp_0", "chunked={chunked}");
        assert_eq!(
            recs[1]["error"],
            Value::Null,
            "chunked={chunked}: {}",
            recs[1]
        );
        assert_eq!(
            recs[1]["output_tokens"], 7,
            "chunked={chunked}: {}",
            recs[1]
        );
        assert_eq!(stats.requests.errors, 1, "chunked={chunked}");
    }
}

/// An HTTP/2 client that stops reading one stream (its window stays shut)
/// midway through a turn: the gateway resets the stream after
/// `client_body_timeout_ms`, and the turn is recorded with what was seen
/// (its call, its response id) and the stall as its error, not as a
/// client gone. Before, it read "client disconnected before the response
/// finished", though the client had not left and the gateway had cut it.
#[tokio::test]
async fn an_http2_stream_reset_for_stalling_is_recorded_as_the_stall() {
    let mut h = Harness::with(Default::default(), |c| {
        c.client_body_timeout = Duration::from_secs(1);
    })
    .await;
    let Scripted::Raw(mut raw) = reply(0, Duration::from_secs(60)) else {
        unreachable!()
    };
    // The call's items, then far more than the stream's window (SSE
    // comments), then `response.completed` a minute later.
    let sse = String::from_utf8(raw.chunks[0].to_vec()).unwrap();
    let cut = sse.find("event: response.completed").unwrap();
    let pad = format!(": {}\n\n", "x".repeat(16 << 10)).repeat(64);
    raw.chunks = vec![
        Bytes::from(format!("{}{pad}", &sse[..cut])),
        Bytes::from(sse[cut..].to_string()),
    ];
    h.mock.push_response(Scripted::Raw(raw));
    let addr = h.gw().trim_start_matches("http://").to_string();
    let stream = TcpStream::connect(&addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
            .initial_stream_window_size(65_535)
            .handshake::<_, http_body_util::Full<Bytes>>(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    let conn = tokio::spawn(conn);
    let request = http::Request::post(format!("http://{addr}/v1/responses"))
        .header("authorization", format!("Bearer {OPENAI_KEY}"))
        .header("content-type", "application/json")
        .header("x-session-id", "stalled")
        .body(http_body_util::Full::new(Bytes::from(request(0))))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    // Nothing of the body is read: the stream is reset, and its request
    // finished (reading it now would open the window again).
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_upstream_requests_total", &[]) == 1.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_upstream_requests_total", &[]),
        1.0,
        "{m}"
    );
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        http_body_util::BodyExt::collect(response.into_body()),
    )
    .await
    .expect("the stalled stream ends");
    let err = read.expect_err("the stalled stream is reset");
    assert!(format!("{err:?}").contains("CANCEL"), "{err:?}");
    drop(sender);
    conn.abort();
    let stats = h.finish().await;
    let recs = requests(&h);
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(
        recs[0]["error"],
        "the client read nothing of the response for 1000 ms (client_body_timeout_ms): \
         its HTTP/2 stream was reset",
        "{}",
        recs[0]
    );
    assert_eq!(recs[0]["status"], 200, "{}", recs[0]);
    assert_eq!(recs[0]["response_id"], "resp_0", "{}", recs[0]);
    let tools: Vec<(&str, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls))
        .collect();
    assert_eq!(tools, [("read_file", 1)]);
}

/// An HTTP/2 client that reads nothing at all, with windows wide open:
/// one turn's stream floods the connection until a write to it waits
/// `client_body_timeout_ms`, and the gateway closes the connection. The
/// other turn on it, still waiting for its upstream (its own stream
/// never stalled), is recorded with what was seen and that cut as its
/// error; so is the flooding one (its stream may have been reset for the
/// stall first). Before, the waiting turn read "client disconnected before
/// the response finished": h2 fails a connection's streams in their own
/// tasks, after the connection.
#[tokio::test]
async fn an_http2_connection_cut_for_reading_nothing_records_its_streams_as_the_cut() {
    let mut h = Harness::with(Default::default(), |c| {
        c.client_body_timeout = Duration::from_secs(1);
    })
    .await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    // Each turn's call items; the flood's then 8 MiB of SSE comments
    // (far more than the sockets' buffers hold); `response.completed` a
    // minute later.
    let script = |pad: usize| {
        let Scripted::Raw(mut raw) = reply(0, Duration::from_secs(60)) else {
            unreachable!()
        };
        let sse = String::from_utf8(raw.chunks[0].to_vec()).unwrap();
        let cut = sse.find("event: response.completed").unwrap();
        let pad = format!(": {}\n\n", "x".repeat(16 << 10)).repeat(pad);
        raw.chunks = vec![
            Bytes::from(format!("{}{pad}", &sse[..cut])),
            Bytes::from(sse[cut..].to_string()),
        ];
        Scripted::Raw(raw)
    };
    h.mock.push_response(script(0));
    h.mock.push_response(script(512));
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(addr.parse().unwrap()).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
            .initial_stream_window_size(64 << 20)
            .initial_connection_window_size(64 << 20)
            .handshake::<_, http_body_util::Full<Bytes>>(hyper_util::rt::TokioIo::new(
                ReadsNothing(stream),
            ))
            .await
            .unwrap();
    let conn = tokio::spawn(conn);
    let request = |session: &str| {
        http::Request::post(format!("http://{addr}/v1/responses"))
            .header("authorization", format!("Bearer {OPENAI_KEY}"))
            .header("content-type", "application/json")
            .header("x-session-id", session)
            .body(http_body_util::Full::new(Bytes::from(request(0))))
            .unwrap()
    };
    // The waiting turn reaches the mock first (it takes the first script).
    let waiting = sender.send_request(request("waiting"));
    let waiting = tokio::spawn(waiting);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while h.mock.request_count() < 1 {
        assert!(std::time::Instant::now() < deadline, "no request upstream");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let flooding = tokio::spawn(sender.send_request(request("flooding")));
    // Both requests finish once the gateway has cut the connection (the
    // bound only stops a gateway that never does).
    loop {
        let m = h.metrics().await;
        if metric(&m, "toolwarden_upstream_requests_total", &[]) == 2.0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{m}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    waiting.abort();
    flooding.abort();
    drop(sender);
    conn.abort();
    let stats = h.finish().await;
    let recs = requests(&h);
    assert_eq!(recs.len(), 2, "{recs:#?}");
    let cut = "the client read nothing of the response for 1000 ms (client_body_timeout_ms): \
               its connection was closed";
    let reset = "the client read nothing of the response for 1000 ms (client_body_timeout_ms): \
                 its HTTP/2 stream was reset";
    for rec in &recs {
        match rec["session_id"].as_str() {
            Some("waiting") => assert_eq!(rec["error"], cut, "{rec}"),
            Some("flooding") => assert!(rec["error"] == cut || rec["error"] == reset, "{rec}"),
            _ => panic!("{rec}"),
        }
        assert_eq!(rec["status"], 200, "{rec}");
        assert_eq!(rec["response_id"], "resp_0", "{rec}");
    }
    let tools: Vec<(&str, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls))
        .collect();
    assert_eq!(tools, [("read_file", 2)]);
}

/// A client socket that never reads: what the gateway sends stays in the
/// sockets' buffers. Writes go through.
struct ReadsNothing(TcpStream);

impl tokio::io::AsyncRead for ReadsNothing {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Pending
    }
}

impl tokio::io::AsyncWrite for ReadsNothing {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

/// An HTTP/1 client that stops reading its response midway through a
/// turn, on the fast path (a `content-length` request) and on hyper's (a
/// chunked one): the gateway closes the connection once a write to it has
/// waited `client_body_timeout_ms`, and the turn is recorded with what was
/// seen (its call, its response id) and that cut as its error. Before, it
/// read "client disconnected before the response finished", though the
/// client had not left and the gateway had cut it.
#[tokio::test]
async fn an_http1_client_cut_for_reading_nothing_is_recorded_as_the_cut() {
    let mut h = Harness::with(Default::default(), |c| {
        c.client_body_timeout = Duration::from_secs(1);
    })
    .await;
    let addr = h.gw().trim_start_matches("http://").to_string();
    for (done, chunked) in [(1.0, false), (2.0, true)] {
        let Scripted::Raw(mut raw) = reply(0, Duration::from_secs(60)) else {
            unreachable!()
        };
        // The call's items, then far more than the sockets' buffers hold
        // (SSE comments: 8 MiB), then `response.completed` a minute later.
        let sse = String::from_utf8(raw.chunks[0].to_vec()).unwrap();
        let cut = sse.find("event: response.completed").unwrap();
        let pad = format!(": {}\n\n", "x".repeat(16 << 10)).repeat(512);
        raw.chunks = vec![
            Bytes::from(format!("{}{pad}", &sse[..cut])),
            Bytes::from(sse[cut..].to_string()),
        ];
        h.mock.push_response(Scripted::Raw(raw));
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut s = socket.connect(addr.parse().unwrap()).await.unwrap();
        let body = request(0);
        let framing = if chunked {
            "transfer-encoding: chunked".to_string()
        } else {
            format!("content-length: {}", body.len())
        };
        let head = format!(
            "POST /v1/responses HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {OPENAI_KEY}\r\n\
             content-type: application/json\r\nx-session-id: stalled-{chunked}\r\n{framing}\r\n\r\n"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        if chunked {
            let chunk = format!(
                "{:x}\r\n{}\r\n0\r\n\r\n",
                body.len(),
                String::from_utf8_lossy(&body)
            );
            s.write_all(chunk.as_bytes()).await.unwrap();
        } else {
            s.write_all(&body).await.unwrap();
        }
        // Nothing of the answer is read until its request has finished
        // (the gateway has cut the connection; the bound only stops a
        // gateway that never does).
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let m = h.metrics().await;
            if metric(&m, "toolwarden_upstream_requests_total", &[]) == done {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "chunked={chunked}: {m}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // What the sockets held, then the end.
        let mut seen = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let closed = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(n @ 1..) = s.read(&mut buf).await {
                seen.extend_from_slice(&buf[..n]);
            }
        })
        .await;
        assert!(closed.is_ok(), "chunked={chunked}: the connection is open");
        assert!(seen.starts_with(b"HTTP/1.1 200"), "chunked={chunked}");
    }
    let stats = h.finish().await;
    let recs = requests(&h);
    assert_eq!(recs.len(), 2, "{recs:#?}");
    for rec in &recs {
        assert_eq!(
            rec["error"],
            "the client read nothing of the response for 1000 ms (client_body_timeout_ms): \
             its connection was closed",
            "{rec}"
        );
        assert_eq!(rec["status"], 200, "{rec}");
        assert_eq!(rec["response_id"], "resp_0", "{rec}");
    }
    let tools: Vec<(&str, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls))
        .collect();
    assert_eq!(tools, [("read_file", 2)]);
}
