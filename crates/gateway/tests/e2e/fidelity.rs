//! What the client gets through the gateway is what it would get directly,
//! byte for byte, and what the provider gets is what the client sent.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use toolwarden_mock_provider::{ReceivedRequest, Scripted};

use super::{
    convo::{Convo, Kind},
    support::{Harness, Reply, send},
};

/// Headers a client sends that must reach the provider unchanged.
const FORWARDED: &[&str] = &[
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "anthropic-version",
    "anthropic-beta",
    "x-session-id",
    "x-custom-trace",
    "content-type",
];

/// Response headers that must come back unchanged.
const RETURNED: &[&str] = &[
    "content-type",
    "request-id",
    "x-request-id",
    "x-mock-request-id",
];

fn same_response(what: &str, direct: &Reply, proxied: &Reply) {
    assert_eq!(proxied.status, direct.status, "{what}: status");
    assert!(
        proxied.body == direct.body,
        "{what}: body differs\n direct: {}\nproxied: {}",
        direct.text(),
        proxied.text()
    );
    for h in RETURNED {
        assert_eq!(proxied.header(h), direct.header(h), "{what}: header {h}");
    }
}

fn same_request(what: &str, direct: &ReceivedRequest, proxied: &ReceivedRequest) {
    assert_eq!(proxied.method, direct.method, "{what}");
    assert_eq!(proxied.path, direct.path, "{what}");
    assert_eq!(proxied.query, direct.query, "{what}: query");
    assert!(
        proxied.body == direct.body,
        "{what}: request body changed on the way"
    );
    for h in FORWARDED {
        assert_eq!(
            proxied.header(h),
            direct.header(h),
            "{what}: request header {h}"
        );
    }
}

async fn compare(h: &Harness, what: &str, convo: &Convo, extra: &[(&'static str, String)]) {
    let mut headers = convo.headers();
    headers.extend(extra.iter().cloned());
    let hs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = serde_json::to_vec(&convo.body).unwrap();
    h.mock.take_received();
    let direct = send(
        &h.client,
        http::Method::POST,
        convo.url(&h.direct()),
        &hs,
        body.clone(),
    )
    .await;
    let proxied = send(&h.client, http::Method::POST, convo.url(&h.gw()), &hs, body).await;
    same_response(what, &direct, &proxied);
    let got = h.mock.take_received();
    assert_eq!(got.len(), 2, "{what}");
    same_request(what, &got[0], &got[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_and_requests_are_byte_identical() {
    let h = Harness::start().await;
    let extra = [
        ("x-custom-trace", "trace-123".to_string()),
        ("anthropic-beta", "tools-2024-04-04".to_string()),
    ];
    for kind in Kind::ALL {
        for stream in [false, true] {
            let what = format!("{kind:?} stream={stream}");
            // First turn (tool calls), then the turn with results (text).
            let mut convo = Convo::new(kind, stream, Some("fidelity"));
            compare(&h, &format!("{what} calls"), &convo, &extra).await;
            let r = convo.send(&h.client, &h.direct()).await;
            let calls = convo.calls(&r);
            convo.assistant_calls(&calls);
            let outcomes: Vec<(bool, &str)> = calls.iter().map(|_| (false, "ok")).collect();
            convo.results(&calls, &outcomes);
            compare(&h, &format!("{what} results"), &convo, &extra).await;
        }
    }
}

/// Gemini's other stream form (a JSON array without `?alt=sse`) and the
/// key in the query string.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_array_stream_and_query_key() {
    let h = Harness::start().await;
    let convo = Convo::new(Kind::Gemini, false, None);
    let body = serde_json::to_vec(&convo.body).unwrap();
    let path = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?key=AIzaQueryKey";
    let direct = send(
        &h.client,
        http::Method::POST,
        format!("{}{path}", h.direct()),
        &[],
        body.clone(),
    )
    .await;
    let proxied = send(
        &h.client,
        http::Method::POST,
        format!("{}{path}", h.gw()),
        &[],
        body,
    )
    .await;
    assert_eq!(direct.status, 200, "{}", direct.text());
    assert!(direct.body.starts_with(b"["));
    same_response("gemini array", &direct, &proxied);
    let got = h.mock.received();
    same_request("gemini array", &got[0], &got[1]);
}

/// Errors from the provider (here: no key → 401, Gemini 403) come back unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_errors_come_back_unchanged() {
    let h = Harness::start().await;
    for kind in Kind::ALL {
        let convo = Convo::new(kind, false, None);
        let body = serde_json::to_vec(&convo.body).unwrap();
        let direct = send(
            &h.client,
            http::Method::POST,
            convo.url(&h.direct()),
            &[],
            body.clone(),
        )
        .await;
        let proxied = send(&h.client, http::Method::POST, convo.url(&h.gw()), &[], body).await;
        assert!(
            matches!(direct.status.as_u16(), 401 | 403),
            "{kind:?}: {}",
            direct.status
        );
        same_response(&format!("{kind:?} {}", direct.status), &direct, &proxied);
    }
}

/// SSE is forwarded as it arrives: the first event reaches the client long
/// before the last one was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_are_not_buffered() {
    let h = Harness::start().await;
    let recording = toolwarden_testkit::fixture("sse/anthropic-sdk-python__tool_use_response.sse");
    let step = Duration::from_millis(60);
    let chunks: Vec<Bytes> = recording
        .chunks(recording.len() / 4 + 1)
        .map(Bytes::copy_from_slice)
        .collect();
    let n = chunks.len();
    h.mock.push_response(Scripted::Sse(chunks, step));
    let convo = Convo::new(Kind::Anthropic, true, None);
    let mut req = Request::post(convo.url(&h.gw()));
    for (k, v) in convo.headers() {
        req = req.header(k, v);
    }
    let req = req
        .body(Full::new(Bytes::from(
            serde_json::to_vec(&convo.body).unwrap(),
        )))
        .unwrap();
    let start = Instant::now();
    let resp = h.client.request(req).await.unwrap();
    let mut body = resp.into_body();
    let mut arrivals = Vec::new();
    let mut got = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(d) = frame.unwrap().into_data() {
            arrivals.push(start.elapsed());
            got.extend_from_slice(&d);
        }
    }
    assert_eq!(got, recording, "byte-exact");
    let total = step * (n as u32 - 1);
    assert!(
        arrivals[0] < total / 2,
        "first bytes after {:?}, the upstream took {total:?} for all: buffered?",
        arrivals[0]
    );
}
