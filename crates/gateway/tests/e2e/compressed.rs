//! Compressed bodies. The Codex CLI sends its Responses API requests as
//! `content-encoding: zstd`, and providers may compress their answers. The
//! gateway reads a decoded copy and forwards the client's bytes as they
//! came, unless it must repair the conversation. A body it cannot decode
//! goes as it came and counts as unparsed.

use std::io::Write;

use bytes::Bytes;
use http::Method;
use toolwarden_mock_provider::{MockOptions, RawResponse, Scripted};

use super::{
    convo::{Convo, Kind},
    support::{Harness, Reply, metric, send},
};

/// An encoder of one content coding.
type Encode = fn(&[u8]) -> Vec<u8>;

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn br(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let params = brotli::enc::BrotliEncoderParams::default();
    brotli::BrotliCompress(&mut &data[..], &mut out, &params).unwrap();
    out
}

/// `convo` as it stands, its body encoded with `coding` (`encode`).
async fn send_encoded(
    h: &Harness,
    convo: &Convo,
    base: &str,
    coding: &str,
    encode: Encode,
) -> (Reply, Vec<u8>) {
    let body = encode(&serde_json::to_vec(&convo.body).unwrap());
    let mut headers = convo.headers();
    headers.push(("content-encoding", coding.to_string()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let reply = send(
        &h.client,
        Method::POST,
        convo.url(base),
        &headers,
        body.clone(),
    )
    .await;
    (reply, body)
}

/// As the Codex CLI talks: every turn zstd-compressed. The results are
/// read and counted (once, though the next turn resends them), and the
/// mock gets the very bytes the client sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_conversations_are_counted_and_forwarded_as_sent() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let mut convo = Convo::new(Kind::Responses, false, Some("codex-zstd"));
    for round in 0..2 {
        if round > 0 {
            convo.user("And the return flight?");
        }
        let (r, _) = send_encoded(&h, &convo, &h.gw(), "zstd", zstd).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = convo.calls(&r);
        assert_eq!(calls.len(), 2, "{}", r.text());
        convo.assistant_calls(&calls);
        convo.results(
            &calls,
            &[
                (false, "Flight TP123 found: departs 09:05, 189 EUR"),
                (
                    true,
                    "Error: seat 12A is no longer available for flight TP123",
                ),
            ],
        );
        h.mock.take_received();
        let (r, sent) = send_encoded(&h, &convo, &h.gw(), "zstd", zstd).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert!(r.header("x-toolwarden-repaired").is_none());
        let got = h.mock.take_received();
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].body, sent,
            "the client's compressed bytes go upstream"
        );
        assert_eq!(got[0].headers["content-encoding"], "zstd");
        convo.assistant_text("Done.");
    }
    let m = h.metrics().await;
    assert_eq!(metric(&m, "toolwarden_unparsed_requests_total", &[]), 0.0);
    let stats = h.finish().await;
    let book = stats.tools.iter().find(|t| t.tool == "book").expect("book");
    let lookup = stats
        .tools
        .iter()
        .find(|t| t.tool == "lookup")
        .expect("lookup");
    assert_eq!((book.calls, book.failures), (2, 2), "{:?}", stats.tools);
    assert_eq!((lookup.calls, lookup.failures), (2, 0), "{:?}", stats.tools);
    assert_eq!(stats.requests.total, 4);
}

/// A compressed conversation with a call left unanswered: the provider
/// rejects it; through the gateway it is repaired and sent as plain JSON
/// (without `content-encoding`), and accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_conversations_are_repaired_as_plain_json() {
    let codings: [(Kind, &str, Encode); 4] = [
        (Kind::Anthropic, "gzip", gzip),
        (Kind::Chat, "br", br),
        (Kind::Responses, "zstd", zstd),
        (Kind::Gemini, "deflate", zlib),
    ];
    for (kind, coding, encode) in codings {
        let h = Harness::start().await;
        let mut convo = Convo::new(kind, false, Some(&format!("repair-{coding}")));
        let r = convo.send(&h.client, &h.direct()).await;
        let calls = convo.calls(&r);
        assert_eq!(calls.len(), 1, "{kind:?}: {}", r.text());
        convo.assistant_calls(&calls);
        convo.user("Never mind that, what is the weather in Lisbon?");

        let (direct, _) = send_encoded(&h, &convo, &h.direct(), coding, encode).await;
        assert_eq!(direct.status, 400, "{kind:?}: {}", direct.text());

        h.mock.take_received();
        let (r, _) = send_encoded(&h, &convo, &h.gw(), coding, encode).await;
        assert_eq!(r.status, 200, "{kind:?} {coding}: {}", r.text());
        let changes: u64 = r
            .header("x-toolwarden-repaired")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{kind:?}: no x-toolwarden-repaired"));
        assert!(changes >= 1);
        let got = h.mock.take_received();
        assert_eq!(got.len(), 1);
        assert!(
            !got[0].headers.contains_key("content-encoding"),
            "{kind:?}: the repaired body is plain JSON"
        );
        let defects = toolwarden_wire::validate(kind.wire(), &got[0].body)
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert!(defects.is_empty(), "{kind:?}: {defects:?}");
        assert_eq!(
            got[0].headers["content-length"],
            got[0].body.len().to_string()
        );
    }
}

/// A body the gateway cannot decode (a coding it does not know, a corrupt
/// one) goes upstream as it came, the provider's answer comes back as it
/// is, and the request counts as unparsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_bodies_go_as_they_came() {
    let h = Harness::start().await;
    let convo = Convo::new(Kind::Responses, false, Some("bad-coding"));
    let corrupt = |data: &[u8]| {
        let mut z = zstd(data);
        let n = z.len();
        z.truncate(n / 2);
        z
    };
    let cases: [(&str, Encode); 2] = [("compress", gzip), ("zstd", corrupt)];
    for (i, (coding, encode)) in cases.into_iter().enumerate() {
        let (direct, _) = send_encoded(&h, &convo, &h.direct(), coding, encode).await;
        h.mock.take_received();
        let (r, sent) = send_encoded(&h, &convo, &h.gw(), coding, encode).await;
        assert_eq!(r.status, 400, "{coding}: {}", r.text());
        assert_eq!(r.body, direct.body, "{coding}: the provider's answer");
        let got = h.mock.take_received();
        assert_eq!(got[0].body, sent, "{coding}: forwarded as it came");
        assert_eq!(got[0].headers["content-encoding"], coding);
        let unparsed = (i + 1) as f64;
        let m = h
            .metrics_when(|m| metric(m, "toolwarden_unparsed_requests_total", &[]) >= unparsed)
            .await;
        assert_eq!(
            metric(&m, "toolwarden_unparsed_requests_total", &[]),
            unparsed
        );
    }
}

/// A JSON response in zstd or br reaches the client as it came, and its
/// tool calls are read from a decoded copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_responses_are_read() {
    let mut h = Harness::start().await;
    let convo = Convo::new(Kind::Chat, false, Some("compressed-replies"));
    let plain = convo.send(&h.client, &h.direct()).await;
    assert_eq!(convo.calls(&plain).len(), 1, "{}", plain.text());
    let codings: [(&str, Encode); 2] = [("zstd", zstd), ("br", br)];
    for (coding, encode) in codings {
        let body = Bytes::from(encode(&plain.body));
        h.mock.push_response(Scripted::Raw(RawResponse {
            status: 200,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("content-encoding".into(), coding.into()),
            ],
            chunks: vec![body.clone()],
            delay: std::time::Duration::ZERO,
        }));
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-encoding"), Some(coding));
        assert_eq!(r.body, body, "{coding}: the client gets the bytes as sent");
    }
    let stats = h.finish().await;
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    assert_eq!(calls, 2, "{:?}", stats.tools);
}

/// `body` as a scripted streamed reply in `coding`, in five pieces.
fn script_stream(h: &Harness, coding: &str, body: &[u8]) {
    let step = body.len().div_ceil(5).max(1);
    let chunks = body.chunks(step).map(Bytes::copy_from_slice).collect();
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: vec![
            (
                "content-type".into(),
                "text/event-stream; charset=utf-8".into(),
            ),
            ("content-encoding".into(), coding.into()),
        ],
        chunks,
        delay: std::time::Duration::from_millis(1),
    }));
}

/// A streamed answer in gzip (Anthropic's API gzips SSE for clients that
/// accept it), br, deflate or zstd: the client gets the compressed bytes as
/// they came, and the gateway reads the tool calls as the pieces pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_streams_are_read_as_they_pass() {
    let mut h = Harness::start().await;
    let cases: [(Kind, &str, Encode); 5] = [
        (Kind::Anthropic, "gzip", gzip),
        (Kind::Chat, "br", br),
        (Kind::Responses, "deflate", zlib),
        (Kind::Gemini, "gzip", gzip),
        (Kind::Responses, "zstd", zstd),
    ];
    for (kind, coding, encode) in cases {
        let convo = Convo::new(kind, true, Some(&format!("stream-{coding}-{kind:?}")));
        let plain = convo.send(&h.client, &h.direct()).await;
        assert_eq!(convo.calls(&plain).len(), 1, "{kind:?}: {}", plain.text());
        let body = encode(&plain.body);
        script_stream(&h, coding, &body);
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200);
        assert!(!r.broken, "{kind:?}");
        assert_eq!(r.header("content-encoding"), Some(coding));
        assert_eq!(r.body, body, "{kind:?}: the client gets the bytes as sent");
    }
    let m = h.metrics().await;
    assert_eq!(metric(&m, "toolwarden_unparsed_responses_total", &[]), 0.0);
    let stats = h.finish().await;
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    assert_eq!(calls, 5, "{:?}", stats.tools);
    assert_eq!(stats.requests.streaming, 5);
}

/// A stream in a coding the gateway does not know is relayed as it came
/// and counted unparsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_in_unknown_codings_pass_unread() {
    let h = Harness::start().await;
    let convo = Convo::new(Kind::Anthropic, true, Some("stream-unknown"));
    let plain = convo.send(&h.client, &h.direct()).await;
    let body = gzip(&plain.body);
    script_stream(&h, "compress", &body);
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.body, body);
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_unparsed_responses_total", &[]) >= 1.0)
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_unparsed_responses_total",
            &[("reason", "compressed")]
        ),
        1.0
    );
}

/// A compressed stream that breaks midway is cut off as it broke: plain
/// error-event bytes after gzip ones would corrupt what the client decodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_compressed_stream_is_cut_off_without_an_appended_event() {
    let h = Harness::start().await;
    let convo = Convo::new(Kind::Anthropic, true, Some("stream-broken"));
    let plain = convo.send(&h.client, &h.direct()).await;
    let body = gzip(&plain.body);
    script_stream(&h, "gzip", &body);
    h.mock
        .set_fault(toolwarden_mock_provider::Fault::ResetMidStream(2));
    let r = convo.send(&h.client, &h.gw()).await;
    assert!(r.broken, "the client sees the stream break");
    let step = body.len().div_ceil(5);
    assert_eq!(
        r.body,
        body[..2 * step],
        "the two pieces sent, nothing after"
    );
}

/// `repair = report`: a compressed conversation with a call left
/// unanswered goes as it came (the provider's 400 comes back), and its
/// defect is read from the decoded copy once the body is on its way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_mode_reads_a_compressed_body_after_forwarding_it() {
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.repair = toolwarden_gateway::RepairMode::Report
    })
    .await;
    let mut convo = Convo::new(Kind::Anthropic, false, Some("report-gzip"));
    let r = convo.send(&h.client, &h.direct()).await;
    let calls = convo.calls(&r);
    convo.assistant_calls(&calls);
    convo.user("Never mind that.");
    h.mock.take_received();
    let (r, sent) = send_encoded(&h, &convo, &h.gw(), "gzip", gzip).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.header("x-toolwarden-repaired").is_none());
    assert_eq!(h.mock.take_received()[0].body, sent);
    let stats = h.finish().await;
    let defects: u64 = stats.repairs.iter().map(|r| r.count).sum();
    assert_eq!(defects, 1, "{:?}", stats.repairs);
}

/// A client that accepts gzip (the Python SDKs do) gets the provider's
/// gzipped replies, streamed and not, exactly as it would directly, and the
/// gateway reads every call in them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzipped_replies_to_clients_that_accept_them() {
    let mut h = Harness::start().await;
    let mut expected = 0;
    for kind in Kind::ALL {
        for stream in [false, true] {
            let convo = Convo::new(kind, stream, Some(&format!("accepts-{kind:?}-{stream}")));
            let mut headers = convo.headers();
            headers.push(("accept-encoding", "gzip, deflate".to_string()));
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let body = serde_json::to_vec(&convo.body).unwrap();
            let url = |base: &str| convo.url(base);
            let direct = send(
                &h.client,
                Method::POST,
                url(&h.direct()),
                &headers,
                body.clone(),
            )
            .await;
            let r = send(&h.client, Method::POST, url(&h.gw()), &headers, body).await;
            assert_eq!(r.status, 200, "{kind:?} {stream}: {}", r.text());
            assert_eq!(
                r.header("content-encoding"),
                Some("gzip"),
                "{kind:?} {stream}"
            );
            assert!(!r.broken);
            // Same bytes as direct (the mock's gzip is deterministic).
            assert_eq!(r.body, direct.body, "{kind:?} {stream}");
            let mut plain = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&r.body[..]), &mut plain)
                .unwrap();
            let calls = super::convo::reply_calls(kind, stream, &plain);
            assert_eq!(calls.len(), 1, "{kind:?} {stream}");
            expected += 1;
        }
    }
    let m = h.metrics().await;
    assert_eq!(metric(&m, "toolwarden_unparsed_responses_total", &[]), 0.0);
    let stats = h.finish().await;
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    assert_eq!(calls, expected, "{:?}", stats.tools);
}
