//! Upstream faults give the client the right answer in its own dialect, and
//! the gateway stays up.

use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use toolwarden_gateway::{Config, Gateway};
use toolwarden_mock_provider::{Fault, MockOptions};

use super::{
    convo::{Convo, Kind, stream_values},
    support::{Harness, client, send},
};

/// The error envelope of `kind`, with its message.
fn envelope_message(kind: Kind, v: &Value) -> String {
    let msg = match kind {
        Kind::Anthropic => {
            assert_eq!(v["type"], "error", "{v}");
            assert!(v["error"]["type"].is_string(), "{v}");
            &v["error"]["message"]
        }
        Kind::Chat | Kind::Responses => {
            assert!(
                v["error"]["type"].is_string() || v["error"]["code"].is_string(),
                "{v}"
            );
            &v["error"]["message"]
        }
        Kind::Gemini => {
            assert!(v["error"]["code"].is_u64(), "{v}");
            assert!(v["error"]["status"].is_string(), "{v}");
            &v["error"]["message"]
        }
    };
    let msg = msg.as_str().unwrap_or_else(|| panic!("no message in {v}"));
    assert!(!msg.is_empty());
    msg.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_down_is_a_502_in_each_dialect() {
    // A port nobody listens on: below the ephemeral range, so no other
    // test's listener or outgoing connection can be given it meanwhile (a
    // port bound and freed here could be, and once was).
    let port = 1;
    let upstream = format!("http://127.0.0.1:{port}");
    let gw = Gateway::start(Config::for_tests(&upstream))
        .await
        .expect("gateway starts");
    let base = format!("http://{}", gw.addr());
    let c = client();
    for kind in Kind::ALL {
        for stream in [false, true] {
            let r = Convo::new(kind, stream, None).send(&c, &base).await;
            assert_eq!(r.status, 502, "{kind:?}: {}", r.text());
            let msg = envelope_message(kind, &r.json());
            let lower = msg.to_lowercase();
            assert!(
                lower.contains(&port.to_string())
                    || lower.contains("upstream")
                    || lower.contains("refused"),
                "{kind:?}: the message should name the upstream and the failure: {msg}"
            );
        }
    }
    let health = super::support::send(
        &c,
        http::Method::GET,
        format!("{base}/healthz"),
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(health.status, 200, "the gateway stays up");
    gw.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_first_byte_is_a_504() {
    let h = Harness::with(MockOptions::default(), |c| {
        c.first_byte_timeout = Some(Duration::from_millis(150));
    })
    .await;
    h.mock.set_fault(Fault::Delay(Duration::from_secs(3)));
    for kind in [Kind::Anthropic, Kind::Chat, Kind::Gemini] {
        let r = Convo::new(kind, false, None).send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 504, "{kind:?}: {}", r.text());
        // Timed out by the gateway's setting, whatever the load (the
        // mock's delay would have answered 200).
        let msg = envelope_message(kind, &r.json());
        assert!(msg.contains("no response within 150 ms"), "{kind:?}: {msg}");
    }
    h.mock.set_fault(Fault::None);
    let r = Convo::new(Kind::Chat, false, None)
        .send(&h.client, &h.gw())
        .await;
    assert_eq!(r.status, 200);
}

/// The upstream dies after two events: the client gets those two events
/// unchanged, then the dialect's error event, and the stream ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_mid_stream_ends_with_the_dialects_error_event() {
    let h = Harness::start().await;
    for kind in Kind::ALL {
        let convo = Convo::new(kind, true, None);
        let full = convo.send(&h.client, &h.direct()).await;
        assert_eq!(full.status, 200);
        let sep: &[u8] = if kind == Kind::Gemini {
            b"\r\n\r\n"
        } else {
            b"\n\n"
        };
        // The first two events of the complete stream.
        let mut cut = 0;
        for _ in 0..2 {
            let at = full.body[cut..]
                .windows(sep.len())
                .position(|w| w == sep)
                .unwrap();
            cut += at + sep.len();
        }
        h.mock.set_fault(Fault::ResetMidStream(2));
        let r = convo.send(&h.client, &h.gw()).await;
        h.mock.set_fault(Fault::None);
        assert_eq!(r.status, 200, "{kind:?}: headers were already sent");
        assert!(
            r.body.starts_with(&full.body[..cut]),
            "{kind:?}: what arrived is forwarded: {}",
            r.text()
        );
        let tail = String::from_utf8_lossy(&r.body[cut..]).to_string();
        let events = stream_values(tail.as_bytes());
        let last = events
            .last()
            .unwrap_or_else(|| panic!("{kind:?}: no error event after the reset: {tail:?}"));
        match kind {
            Kind::Anthropic => {
                assert!(tail.contains("event: error"), "{tail}");
                assert_eq!(last["type"], "error", "{tail}");
                assert!(last["error"]["message"].is_string(), "{tail}");
            }
            Kind::Chat => assert!(last["error"]["message"].is_string(), "{tail}"),
            Kind::Responses => {
                // The API's own `error` / `response.failed` events, or the
                // `{"error": …}` payload the OpenAI SDKs also raise on.
                let ty = last["type"].as_str().unwrap_or_default();
                let ok = ty == "error"
                    || ty == "response.failed"
                    || last["error"]["message"].is_string();
                assert!(ok, "{tail}");
            }
            Kind::Gemini => assert!(last["error"]["code"].is_u64(), "{tail}"),
        }
    }
    let r = Convo::new(Kind::Chat, false, None)
        .send(&h.client, &h.gw())
        .await;
    assert_eq!(r.status, 200, "the gateway stays up");
}

/// Gemini's streamed JSON array (no `?alt=sse`) breaking midway: an SSE
/// error event would corrupt the array, so the client sees the array cut
/// short (a broken body), with what arrived forwarded unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_json_array_stream_is_cut_not_given_an_sse_event() {
    let h = Harness::start().await;
    let convo = Convo::new(Kind::Gemini, false, None);
    let body = serde_json::to_vec(&convo.body).unwrap();
    let path = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?key=AIzaQueryKey";
    let full = send(
        &h.client,
        http::Method::POST,
        format!("{}{path}", h.direct()),
        &[],
        body.clone(),
    )
    .await;
    assert!(full.body.starts_with(b"["), "{}", full.text());
    h.mock.set_fault(Fault::ResetMidStream(2));
    let r = send(
        &h.client,
        http::Method::POST,
        format!("{}{path}", h.gw()),
        &[],
        body,
    )
    .await;
    h.mock.set_fault(Fault::None);
    assert_eq!(r.status, 200, "headers were already sent");
    assert!(r.broken, "the client sees the body cut: {}", r.text());
    assert!(!r.text().contains("data:"), "{}", r.text());
    assert!(
        full.body.starts_with(&r.body),
        "what arrived is the direct answer's start: {}",
        r.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_pass_through_unchanged() {
    let mut h = Harness::start().await;
    let cases = [
        (
            Kind::Anthropic,
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        (
            Kind::Chat,
            500,
            r#"{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}"#,
        ),
        (
            Kind::Responses,
            503,
            r#"{"error":{"message":"Service unavailable","type":"server_error"}}"#,
        ),
        (
            Kind::Gemini,
            500,
            r#"{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#,
        ),
    ];
    for (kind, status, body) in cases {
        h.mock
            .set_fault(Fault::Status(status, Bytes::from_static(body.as_bytes())));
        for stream in [false, true] {
            let r = Convo::new(kind, stream, None)
                .send(&h.client, &h.gw())
                .await;
            assert_eq!(r.status.as_u16(), status, "{kind:?}");
            assert_eq!(r.text(), body, "{kind:?}");
        }
    }
    h.mock.set_fault(Fault::None);
    let stats = h.finish().await;
    assert_eq!(stats.requests.errors, 8, "{:?}", stats.requests);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_sse_passes_through_and_the_gateway_stays_up() {
    let h = Harness::start().await;
    h.mock.set_fault(Fault::MalformedSse);
    for kind in Kind::ALL {
        let convo = Convo::new(kind, true, None);
        let direct = convo.send(&h.client, &h.direct()).await;
        let proxied = convo.send(&h.client, &h.gw()).await;
        assert_eq!(proxied.status, direct.status, "{kind:?}");
        assert_eq!(
            proxied.body, direct.body,
            "{kind:?}: passed through unchanged"
        );
    }
    h.mock.set_fault(Fault::None);
    for kind in Kind::ALL {
        let r = Convo::new(kind, true, None).send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{kind:?}: the gateway still serves");
        assert!(!r.broken);
    }
}
