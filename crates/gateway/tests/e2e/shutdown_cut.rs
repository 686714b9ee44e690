//! A request still under way when the shutdown's grace period ends is cut
//! by the gateway, and recorded as such — with the error "the gateway shut
//! down before the response finished" (as a WebSocket turn is), `503` when
//! no response head had come, the upstream's status when one had — not as
//! a client's `499` "client disconnected"; the results it carried are
//! counted. On both HTTP paths: the fast path takes a `content-length`
//! body, a chunked one goes through hyper. The client stays connected
//! throughout: only the gateway cuts.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::{
    io::AsyncReadExt,
    net::{TcpListener, TcpStream},
};
use toolwarden_mock_provider::{Fault, MockOptions, RawResponse, Scripted};
use toolwarden_store::Stats;

use super::support::Harness;

/// Short, so that the tests do not wait for the default's 2 s.
const GRACE: Duration = Duration::from_millis(300);

/// What the records say of a request the shutdown cut.
const CUT: &str = "the gateway shut down before the response finished";

/// A Responses request answering one call, `call_cut`, with `filler`
/// bytes of user text before it.
fn request(filler: usize) -> Vec<u8> {
    let body = json!({"model": "gpt-test", "stream": true, "input": [
        {"role": "user", "content": "x".repeat(filler.max(1))},
        {"type": "function_call", "call_id": "call_cut", "name": "read_file",
         "arguments": "{\"path\":\"a.txt\"}"},
        {"type": "function_call_output", "call_id": "call_cut", "output": "contents"},
    ]});
    serde_json::to_vec(&body).unwrap()
}

/// Opens a connection and sends `body` to `POST /v1/responses` on it, with
/// a `content-length` (the fast path) or chunked (hyper's path).
async fn send_request(addr: &str, body: &[u8], chunked: bool) -> TcpStream {
    super::early_close::send_request(addr, "cut", body, chunked, "").await
}

/// Reads until `until` has arrived.
async fn read_until(s: &mut TcpStream, until: &str) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let read = async {
        while !String::from_utf8_lossy(&seen).contains(until) {
            let n = s.read(&mut buf).await.unwrap_or(0);
            assert!(
                n > 0,
                "closed before {until:?}: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("it arrives");
    String::from_utf8_lossy(&seen).into_owned()
}

/// Shuts the gateway down (the request still under way outlives the grace
/// period) while the client waits, and returns what the client read then.
async fn shut_down_under(h: &mut Harness, client: &mut TcpStream) -> String {
    let gateway = h.gateway.take().expect("running");
    let mut rest = Vec::new();
    let (report, _) = tokio::join!(gateway.shutdown(), async {
        let read = client.read_to_end(&mut rest);
        let _ = tokio::time::timeout(Duration::from_secs(10), read).await;
    });
    assert_eq!(report.abandoned, 0);
    String::from_utf8_lossy(&rest).into_owned()
}

/// The one request record: cut by the shutdown with `status`, not the
/// client's 499; its result counted once.
fn assert_cut_by_the_shutdown(h: &Harness, stats: &Stats, status: u16, what: &str) {
    let events = h.events();
    let requests: Vec<&Value> = events.iter().filter(|e| e["type"] == "request").collect();
    assert_eq!(requests.len(), 1, "{what}: {requests:#?}");
    let request = requests[0];
    assert_ne!(request["status"], 499, "{what}: {request:#}");
    assert_eq!(request["status"], status, "{what}: {request:#}");
    assert_eq!(request["error"], CUT, "{what}: {request:#}");
    assert_eq!(request["session_id"], "cut", "{what}: {request:#}");
    let results: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["call_id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(results, ["call_cut"], "{what}: its result is counted once");
    assert_eq!(
        (stats.requests.total, stats.requests.errors),
        (1, 1),
        "{what}"
    );
}

fn path(chunked: bool) -> &'static str {
    if chunked { "hyper path" } else { "fast path" }
}

/// An upstream that has the request and does not answer when the grace
/// period ends: recorded as the shutdown's 503. Before, as a 499 "client
/// disconnected" although the client was still waiting.
#[tokio::test]
async fn a_request_unanswered_at_the_end_of_the_grace_period_is_the_shutdowns() {
    for chunked in [false, true] {
        let what = path(chunked);
        let mut h = Harness::with(MockOptions::default(), |c| c.shutdown_grace = GRACE).await;
        h.mock.set_fault(Fault::Hang);
        let addr = h.gw().trim_start_matches("http://").to_string();
        let mut client = send_request(&addr, &request(0), chunked).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while h.mock.request_count() == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: the upstream has it"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let answer = shut_down_under(&mut h, &mut client).await;
        assert_eq!(
            answer, "",
            "{what}: the connection closed without an answer"
        );
        let stats = h.finish().await;
        assert_cut_by_the_shutdown(&h, &stats, 503, what);
    }
}

/// A stream under way when the grace period ends: recorded with the
/// upstream's 200, what was seen of it (its call) and the shutdown's cut.
#[tokio::test]
async fn a_stream_under_way_at_the_end_of_the_grace_period_is_the_shutdowns() {
    for chunked in [false, true] {
        let what = path(chunked);
        let mut h = Harness::with(MockOptions::default(), |c| c.shutdown_grace = GRACE).await;
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_next",
            "name": "read_file", "arguments": "{\"path\":\"b.txt\"}", "status": "completed"});
        let response = |status: &str, output: Value| {
            json!({"id": "resp_1", "object": "response", "status": status,
                "model": "gpt-test", "output": output})
        };
        let event = |e: Value| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap());
        let seen = [
            json!({"type": "response.created", "response": response("in_progress", json!([]))}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": call}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
        ];
        let last = json!({"type": "response.completed",
            "response": response("completed", json!([call]))});
        h.mock.push_response(Scripted::Raw(RawResponse {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: vec![
                Bytes::from(seen.into_iter().map(event).collect::<String>()),
                Bytes::from(event(last)),
            ],
            // The final event comes long after the grace period.
            delay: Duration::from_secs(30),
        }));
        let addr = h.gw().trim_start_matches("http://").to_string();
        let mut client = send_request(&addr, &request(0), chunked).await;
        let head = read_until(&mut client, "response.output_item.done").await;
        assert!(head.starts_with("HTTP/1.1 200"), "{what}: {head}");
        let rest = shut_down_under(&mut h, &mut client).await;
        assert!(!rest.contains("response.completed"), "{what}: {rest}");
        let stats = h.finish().await;
        assert_cut_by_the_shutdown(&h, &stats, 200, what);
        let tools: Vec<(&str, u64)> = stats
            .tools
            .iter()
            .map(|t| (t.tool.as_str(), t.calls))
            .collect();
        assert_eq!(
            tools,
            [("read_file", 2)],
            "{what}: the call answered and the call seen"
        );
    }
}

/// An upstream that accepts the connection and reads nothing: a request
/// larger than the sockets' buffers is still being written when the grace
/// period ends. It was read for the records all the same — its result is
/// counted — and it is recorded as the shutdown's 503. Before, on the fast
/// path, a request was read only once its write had finished: cut during
/// the write, it was recorded without its result (and as a 499).
#[tokio::test]
async fn a_request_still_being_written_at_the_end_of_the_grace_period_keeps_its_result() {
    for chunked in [false, true] {
        let what = path(chunked);
        let deaf = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream = format!("http://{}", deaf.local_addr().unwrap());
        let holding = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = deaf.accept().await {
                held.push(socket);
            }
        });
        let mut h = Harness::with(MockOptions::default(), |c| {
            c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
            c.shutdown_grace = GRACE;
        })
        .await;
        let addr = h.gw().trim_start_matches("http://").to_string();
        // ~24 MB: more than the sockets' buffers hold.
        let mut client = send_request(&addr, &request(24 << 20), chunked).await;
        // The result is recorded while the write waits (the JSONL log
        // follows each written batch). Waited for, not timed: reading and
        // analysing 24 MB takes seconds on a loaded machine, and a shutdown
        // before the gateway has the whole request cuts it before it is a
        // request (nothing to record). Before the fix, the result never
        // came while the write waited.
        let started = tokio::time::Instant::now();
        while !h.events().iter().any(|e| e["type"] == "tool_result") {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{what}: the result is recorded while the upstream write waits"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let answer = shut_down_under(&mut h, &mut client).await;
        assert_eq!(
            answer, "",
            "{what}: the connection closed without an answer"
        );
        let stats = h.finish().await;
        assert_cut_by_the_shutdown(&h, &stats, 503, what);
        holding.abort();
    }
}
