//! A Bedrock event stream the upstream cuts midway (issue 18): the client
//! gets every whole frame that arrived, then an exception frame
//! (`internalServerException`, as Bedrock sends) in place of the frame cut
//! in two, and the request is counted as an error.

use bytes::Bytes;
use toolwarden_mock_provider::{Fault, RawResponse, Scripted};
use toolwarden_wire::eventstream::{Decoder, encode_invoke_chunk};

use super::{
    cloud::{bedrock, invoke_convo},
    support::post,
};

fn frames() -> Vec<Vec<u8>> {
    [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
    ]
    .iter()
    .map(|e| encode_invoke_chunk(e.as_bytes()))
    .collect()
}

/// (message type, exception type) of each frame in `body`; all must decode.
fn decoded(body: &[u8]) -> Vec<(String, Option<String>, String)> {
    let mut d = Decoder::new();
    d.push(body);
    let mut out = Vec::new();
    while let Some(m) = d.next_message() {
        let m = m.expect("a whole, valid frame");
        out.push((
            m.message_type().unwrap_or_default().to_string(),
            m.exception_type().map(String::from),
            String::from_utf8_lossy(m.payload()).to_string(),
        ));
    }
    d.finish().expect("no trailing partial frame");
    out
}

#[tokio::test]
async fn a_cut_bedrock_stream_ends_with_an_exception_frame() {
    let mut h = bedrock(Some(super::cloud::SECRET)).await;
    let url = format!(
        "{}/model/anthropic.claude-x-v1%3A0/invoke-with-response-stream",
        h.gw()
    );
    let headers = [("content-type", "application/json")];
    let f = frames();
    // Cut inside the third frame, then at a frame boundary.
    for (case, chunks) in [
        (
            "mid-frame",
            vec![
                Bytes::from(f[0].clone()),
                Bytes::from(f[1].clone()),
                Bytes::copy_from_slice(&f[2][..10]),
                Bytes::copy_from_slice(&f[2][10..]),
            ],
        ),
        (
            "boundary",
            vec![
                Bytes::from([f[0].clone(), f[1].clone()].concat()),
                Bytes::new(),
                Bytes::new(),
                Bytes::from(f[2].clone()),
            ],
        ),
    ] {
        h.mock.push_response(Scripted::Raw(RawResponse {
            status: 200,
            headers: vec![(
                "content-type".into(),
                "application/vnd.amazon.eventstream".into(),
            )],
            chunks,
            delay: std::time::Duration::ZERO,
        }));
        h.mock.set_fault(Fault::ResetMidStream(3));
        let r = post(&h.client, url.clone(), &headers, &invoke_convo().body).await;
        h.mock.set_fault(Fault::None);
        assert_eq!(r.status, 200, "{case}");
        let whole = [f[0].clone(), f[1].clone()].concat();
        assert!(
            r.body.starts_with(&whole),
            "{case}: the whole frames relayed as they came"
        );
        let got = decoded(&r.body);
        assert_eq!(got.len(), 3, "{case}: {got:?}");
        assert_eq!(got[0].0, "event");
        assert_eq!(got[1].0, "event");
        assert_eq!(got[2].0, "exception", "{case}: {got:?}");
        assert_eq!(got[2].1.as_deref(), Some("internalServerException"));
        let payload: serde_json::Value = serde_json::from_str(&got[2].2).unwrap();
        assert!(
            payload["message"].as_str().unwrap().contains("broke"),
            "{payload}"
        );
    }
    // A whole stream is relayed unchanged, frames and all (and, ending
    // with its final event, is no error).
    let end = [
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#,
        r#"{"type":"message_stop"}"#,
    ]
    .map(|e| encode_invoke_chunk(e.as_bytes()));
    let all = Bytes::from([f.concat(), end.concat()].concat());
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: vec![(
            "content-type".into(),
            "application/vnd.amazon.eventstream".into(),
        )],
        chunks: vec![all.slice(..5), all.slice(5..200), all.slice(200..)],
        delay: std::time::Duration::ZERO,
    }));
    let r = post(&h.client, url.clone(), &headers, &invoke_convo().body).await;
    assert_eq!(r.body, all);
    // The frame the cut left half-read is the cut's, not a malformed frame.
    h.assert_metric(
        "toolwarden_upstream_requests_total",
        &[("provider", "bedrock")],
        3.0,
    )
    .await;
    h.assert_metric(
        "toolwarden_unparsed_responses_total",
        &[("reason", "malformed_frame")],
        0.0,
    )
    .await;
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 3);
    assert_eq!(stats.requests.errors, 2, "both cuts counted");
}
