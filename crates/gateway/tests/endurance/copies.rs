//! `max_buffered_response_bytes`: the whole response bodies copied for
//! parsing, over every connection, are bounded; an answer whose copy finds
//! no room still reaches its client whole, unread, counted and recorded
//! as such.

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

/// An upstream whose first connection answers half of its body, then the
/// rest once `release` fires; every other connection answers at once. The
/// answers (`first`, `others`) are given in order.
async fn stalling_upstream(
    first: String,
    others: String,
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
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
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
    let upstream = stalling_upstream(held_answer.clone(), other_answer.clone(), stalled).await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tw.db").display());
    let mut config = Config::for_tests(&upstream);
    config.database = Some(url.clone());
    config.response_parse_limit = 64 << 10;
    config.max_buffered_response_bytes = 64 << 10;
    let gw = Gateway::start(config).await.unwrap();
    let addr = gw.addr();

    let first = tokio::spawn(async move { exchange(addr, "held").await });
    let mut held = 0;
    for _ in 0..200 {
        held = copies(addr).await["held_bytes"].as_u64().unwrap();
        if held > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!((40 << 10..=64 << 10).contains(&held), "{held}");

    let (status, body) = exchange(addr, "other").await;
    assert_eq!(status, 200);
    assert_eq!(body, other_answer, "passed whole and unchanged");
    let c = copies(addr).await;
    assert_eq!(c["refused"], 1, "{c}");
    assert_eq!(c["held_bytes"].as_u64(), Some(held), "{c}");
    let metrics = get(addr, "/metrics").await;
    assert!(
        metrics.contains(r#"toolwarden_unparsed_responses_total{reason="no_room"} 1"#),
        "{metrics}"
    );

    release.send(()).unwrap();
    let (status, body) = first.await.unwrap();
    assert_eq!((status, body), (200, held_answer));
    let mut left = u64::MAX;
    for _ in 0..200 {
        left = copies(addr).await["held_bytes"].as_u64().unwrap();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(left, 0, "given back once read");

    let report = gw.shutdown().await;
    assert_eq!(report.events_dropped, 0, "{report:?}");
    let calls = |id: &str| {
        format!("SELECT COUNT(*) FROM tool_calls WHERE call_id = '{id}' AND call_index IS NOT NULL")
    };
    assert_eq!(
        count(&url, &calls("toolu_held")).await,
        1,
        "read once whole"
    );
    assert_eq!(count(&url, &calls("toolu_other")).await, 0, "not read");
    let incomplete = "SELECT COUNT(*) FROM requests WHERE calls_incomplete = 1";
    assert_eq!(count(&url, incomplete).await, 1);
}
