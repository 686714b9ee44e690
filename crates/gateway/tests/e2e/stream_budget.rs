//! A stream past `response_parse_limit` (review finding 5: nothing bounded
//! what a stream's parse kept). The client gets every byte as it came; the
//! gateway keeps at most the limit of the stream's calls and arguments,
//! records the calls it kept, and counts the response as too large to parse,
//! as it does a whole body over the limit.

use bytes::Bytes;
use toolwarden_mock_provider::{MockOptions, RawResponse, Scripted};

use super::{
    convo::{Convo, Kind},
    support::{Harness, metric},
};

/// A Chat stream with one call whose arguments come in `pieces` deltas of
/// 1 KiB.
fn endless_arguments(pieces: usize) -> Vec<u8> {
    let piece = "x".repeat(1024);
    let mut events = vec![
        r#"{"id":"chatcmpl-b","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#.to_string(),
    ];
    events.extend(std::iter::repeat_n(
        format!(
            r#"{{"id":"chatcmpl-b","model":"m","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":"{piece}"}}}}]}}}}]}}"#
        ),
        pieces,
    ));
    events.push(
        r#"{"id":"chatcmpl-b","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#
            .to_string(),
    );
    events.push("[DONE]".to_string());
    events
        .iter()
        .flat_map(|e| [b"data: ", e.as_bytes(), b"\n\n"].concat())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_past_the_parse_limit_is_relayed_whole_and_counted_too_large() {
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.response_parse_limit = 64 * 1024;
    })
    .await;
    let body = endless_arguments(256);
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        chunks: body.chunks(8192).map(Bytes::copy_from_slice).collect(),
        delay: std::time::Duration::from_millis(1),
    }));
    let convo = Convo::new(Kind::Chat, true, Some("stream-budget"));
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 200);
    assert!(!r.broken);
    assert_eq!(r.body, body, "the client gets the stream as sent");
    let too_large = [("reason", "too_large")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_unparsed_responses_total", &too_large) >= 1.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_unparsed_responses_total", &too_large),
        1.0
    );
    let stats = h.finish().await;
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    assert_eq!(calls, 1, "the call kept before the cut is recorded");
    assert_calls_incomplete(&h, &stats);
}

/// The request's record says its calls may be incomplete: its row (the
/// totals count it) and its JSONL line; before, only the metric did.
fn assert_calls_incomplete(h: &Harness, stats: &toolwarden_store::Stats) {
    assert_eq!(stats.requests.calls_incomplete, 1, "{:?}", stats.requests);
    let requests: Vec<_> = h
        .events()
        .into_iter()
        .filter(|e| e["type"] == "request")
        .collect();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert_eq!(requests[0]["calls_incomplete"], true, "{:#?}", requests[0]);
}

/// A whole JSON body past the limit is not read at all: its record says
/// so too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_the_parse_limit_is_recorded_as_calls_incomplete() {
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.response_parse_limit = 64 * 1024;
    })
    .await;
    let arguments = serde_json::json!({"path": "x".repeat(128 * 1024)}).to_string();
    let body = serde_json::json!({"id": "chatcmpl-big", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "call_big", "type": "function",
                "function": {"name": "read_file", "arguments": arguments}}]}}]})
    .to_string();
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        chunks: vec![Bytes::from(body.clone())],
        delay: std::time::Duration::ZERO,
    }));
    let convo = Convo::new(Kind::Chat, false, Some("body-budget"));
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, body.as_bytes(), "the client gets the body as sent");
    let stats = h.finish().await;
    assert_calls_incomplete(&h, &stats);
}
