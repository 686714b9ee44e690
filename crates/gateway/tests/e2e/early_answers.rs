//! Answers counted in `/metrics` exactly, with and without a database,
//! when the client's answer comes before the gateway has finished with
//! the response holding its call (the provider keeps the stream open
//! after its final event; a loaded gateway), and when runs of one script
//! reuse a call id (`call_0`, Gemini's `name#0`) with no database to judge
//! them.

use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use toolwarden_mock_provider::{MockOptions, Scripted};

use super::{
    convo::{Call, Convo, Kind},
    support::{Harness, metric},
};

/// A Chat stream calling `lookup` as `call_0` (as a client's or a small
/// provider's ids are, every run), whose body stays open `tail` after its
/// final event.
fn stream_calling_lookup(tail: Duration) -> Scripted {
    let chunk = |delta: Value, finish: Value| {
        let v = json!({"id": "chatcmpl-early", "object": "chat.completion.chunk",
            "model": "gpt-4o", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    };
    let events = [
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_0",
                "type": "function", "function": {"name": "lookup", "arguments": "{\"query\":\"LIS\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    Scripted::Sse(
        vec![Bytes::from(events), Bytes::from_static(b": done\n\n")],
        tail,
    )
}

/// Two runs of one script (no session header: one fingerprint session),
/// each answering `call_0` at the same place: the first once its stream
/// has ended, the second as soon as the stream's final event has arrived,
/// while the provider still holds the stream open (the gateway had not
/// recorded the call yet, and took the answer for the first run's resent;
/// the store, which had no second call, too); the second run fails. Each
/// answer counts once, under its tool, with its verdict, and its resend
/// (the run's next turn) does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_sent_before_their_stream_ended_count_under_their_tool() {
    for database in [false, true] {
        let mut h = Harness::with(MockOptions::default(), |c| {
            if !database {
                c.database = None;
                c.jsonl = None;
            }
        })
        .await;
        for (run, outcome) in [
            (0, (false, "Flight TP123 found")),
            (1, (true, "Error: the flight search service is unavailable")),
        ] {
            h.mock
                .push_response(stream_calling_lookup(Duration::from_secs(2)));
            let mut convo = Convo::new(Kind::Chat, true, None);
            // Read the stream up to its final event, and keep it open.
            let mut req = Request::post(convo.url(&h.gw()));
            for (k, v) in convo.headers() {
                req = req.header(k, v);
            }
            let req = req
                .body(Full::new(Bytes::from(convo.body.to_string())))
                .expect("request");
            let resp = h.client.request(req).await.expect("response");
            assert_eq!(resp.status(), 200);
            let mut body = resp.into_body();
            let mut seen = Vec::new();
            while !String::from_utf8_lossy(&seen).contains("[DONE]") {
                let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
                    .await
                    .expect("the stream's events")
                    .expect("a frame")
                    .expect("a good frame");
                if let Ok(d) = frame.into_data() {
                    seen.extend_from_slice(&d);
                }
            }
            if run == 0 {
                // The first run answers once the stream has ended.
                while let Some(frame) = body.frame().await {
                    frame.expect("the stream ends whole");
                }
            }
            let calls = [Call {
                id: Some("call_0".into()),
                name: "lookup".into(),
                args: json!({"query": "LIS"}),
            }];
            convo.assistant_calls(&calls);
            convo.results(&calls, &[outcome]);
            // Another connection (the first is busy with the open stream).
            let r = convo.send(&h.client, &h.gw()).await;
            assert_eq!(r.status, 200, "run {run}: {}", r.text());
            convo.assistant_text("Done.");
            convo.user("And tomorrow?");
            let r = convo.send(&h.client, &h.gw()).await;
            assert_eq!(r.status, 200, "run {run}: {}", r.text());
            // The stream's end.
            while let Some(frame) = body.frame().await {
                frame.expect("the stream ends whole");
            }
        }
        // Each run's next turn makes a call of the mock's own too (of the
        // first tool offered, `lookup`), which nothing answers.
        let m = h
            .metrics_when(|m| metric(m, "toolwarden_tool_calls_total", &[]) == 4.0)
            .await;
        let calls = metric(&m, "toolwarden_tool_calls_total", &[("tool", "lookup")]);
        assert_eq!(calls, 4.0, "database {database}: {m}");
        let results = |tool: &str| metric(&m, "toolwarden_tool_results_total", &[("tool", tool)]);
        let failures = |tool: &str| metric(&m, "toolwarden_tool_failures_total", &[("tool", tool)]);
        assert_eq!(
            (results("lookup"), failures("lookup")),
            (2.0, 1.0),
            "database {database}: {m}"
        );
        assert_eq!(
            metric(&m, "toolwarden_tool_results_total", &[]),
            2.0,
            "database {database}: no result without its tool: {m}"
        );
        if database {
            let stats = h.finish().await;
            assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
            let s = &stats.sessions[0];
            assert_eq!((s.calls, s.failures), (4, 1), "{s:?}");
        }
    }
}

/// Two runs of one Gemini script (one fingerprint session, `name#0` in
/// both) on a gateway with no database whose recent calls were forgotten
/// before each answer came (`recent_calls_capacity`: other conversations'
/// calls filled it, as on a busy gateway): the second run's answer was
/// taken for the first's resend and never counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_runs_answer_counts_without_a_database() {
    let h = Harness::with(MockOptions::default(), |c| {
        c.database = None;
        c.jsonl = None;
        c.memory.recent_calls = 2;
    })
    .await;
    for (run, outcome) in [
        (0, (false, "sunny, 21C")),
        (1, (true, "weather service unavailable")),
    ] {
        let mut convo = Convo::new(Kind::Gemini, false, None);
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = convo.calls(&r);
        assert_eq!(calls.len(), 1, "{}", r.text());
        // Other conversations' calls meanwhile: the run's call is forgotten.
        for k in 0..3 {
            let other = Convo::new(Kind::Gemini, false, Some(&format!("other-{run}-{k}")));
            let r = other.send(&h.client, &h.gw()).await;
            assert_eq!(r.status, 200, "{}", r.text());
        }
        convo.assistant_calls(&calls);
        convo.results(&calls, &[outcome]);
        for _ in 0..2 {
            // Sent twice: a client's retry of the same request.
            let r = convo.send(&h.client, &h.gw()).await;
            assert_eq!(r.status, 200, "{}", r.text());
        }
        convo.assistant_text("Done.");
        // The run's next turn resends its answer.
        convo.user("And tomorrow?");
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // The script's two answers, one failed; the other conversations
    // answered nothing.
    h.metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 2.0)
        .await;
    // A resend counted by mistake would have come by now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let m2 = h.metrics().await;
    assert_eq!(
        (
            metric(&m2, "toolwarden_tool_results_total", &[]),
            metric(&m2, "toolwarden_tool_failures_total", &[])
        ),
        (2.0, 1.0),
        "{m2}"
    );
}
