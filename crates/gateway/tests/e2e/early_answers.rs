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
    support::{Harness, metric, tool_counts},
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

/// A Chat completion calling `lookup` as `call_0` (every run's id) for
/// `query`.
fn completion_calling_lookup(query: &str) -> Scripted {
    let call = json!({"id": "call_0", "type": "function",
        "function": {"name": "lookup", "arguments": json!({"query": query}).to_string()}});
    let v = json!({"id": "chatcmpl-run", "object": "chat.completion", "created": 1,
        "model": "gpt-4o", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    Scripted::Json(Bytes::from(v.to_string()))
}

/// A Chat completion that ends the turn.
fn completion_done() -> Scripted {
    let v = json!({"id": "chatcmpl-done", "object": "chat.completion", "created": 1,
        "model": "gpt-4o", "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Done."}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    Scripted::Json(Bytes::from(v.to_string()))
}

/// Two runs of one script interleaved in one fingerprint session, each
/// calling `lookup` as `call_0` with its own arguments: run a answers,
/// run b's call is made, run a sends its answer again (a client's retry)
/// while b's call is open, then b answers, failed. The retry names the
/// turn it replays, a's, not b's: it is not b's answer (it was, and b's
/// own answer was then dropped as a resend: b's call counted a success).
/// Each call counts once with its own verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_resend_is_not_the_answer_of_another_runs_call() {
    let mut h = Harness::with(MockOptions::default(), |_| {}).await;
    let call = |query: &str| Call {
        id: Some("call_0".into()),
        name: "lookup".into(),
        args: json!({"query": query}),
    };
    let send = async |convo: &Convo, reply: Scripted| {
        h.mock.push_response(reply);
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        r
    };
    let mut a = Convo::new(Kind::Chat, false, None);
    let r = send(&a, completion_calling_lookup("LIS")).await;
    assert_eq!(a.calls(&r), [call("LIS")]);
    a.assistant_calls(&[call("LIS")]);
    a.results(&[call("LIS")], &[(false, "Flight TP123 found")]);
    send(&a, completion_done()).await;
    let mut b = Convo::new(Kind::Chat, false, None);
    let r = send(&b, completion_calling_lookup("OPO")).await;
    assert_eq!(b.calls(&r), [call("OPO")]);
    // Run a's retry of its answer, while b's call is open.
    send(&a, completion_done()).await;
    b.assistant_calls(&[call("OPO")]);
    b.results(
        &[call("OPO")],
        &[(true, "Error: the flight search service is unavailable")],
    );
    send(&b, completion_done()).await;
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 2.0)
        .await;
    assert_eq!(
        tool_counts(&m, &[("tool", "lookup")]),
        (2.0, 2.0, 1.0),
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let s = &stats.sessions[0];
    assert_eq!((s.calls, s.failures), (2, 1), "{s:?}");
}

/// A Chat stream of three choices (`n: 3`), interleaved as OpenAI streams
/// them: choice 0 calls `lookup` and `book`, whose arguments are still
/// streaming when choice 1 (calling `book` under choice 0's first id,
/// `call_n0`, as servers that number their calls per choice do) finishes;
/// choice 2 is named only after the other two finished and calls
/// `notify`, again as `call_n0`. Each piece comes in its own write.
fn three_choices_finishing_apart() -> Scripted {
    let chunk = |choice: u64, delta: Value, finish: Value| {
        let v = json!({"id": "chatcmpl-n3", "object": "chat.completion.chunk",
            "model": "gpt-4o", "choices": [{"index": choice, "delta": delta, "finish_reason": finish}]});
        Bytes::from(format!("data: {v}\n\n"))
    };
    let role = |choice: u64| {
        chunk(
            choice,
            json!({"role": "assistant", "content": null}),
            Value::Null,
        )
    };
    let call = |index: u64, id: &str, name: &str, args: &str| {
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": args}}]})
    };
    let more = |index: u64, args: &str| json!({"tool_calls": [{"index": index, "function": {"arguments": args}}]});
    let pieces = vec![
        role(0),
        role(1),
        chunk(
            0,
            call(0, "call_n0", "lookup", r#"{"query":"LIS"}"#),
            Value::Null,
        ),
        chunk(1, call(0, "call_n0", "book", r#"{"flight":"#), Value::Null),
        chunk(0, call(1, "call_n1", "book", r#"{"flight":"#), Value::Null),
        chunk(1, more(0, r#""TP999"}"#), Value::Null),
        chunk(1, json!({}), json!("tool_calls")),
        chunk(0, more(1, r#""TP123","seat":"12A"}"#), Value::Null),
        chunk(0, json!({}), json!("tool_calls")),
        role(2),
        chunk(
            2,
            call(0, "call_n0", "notify", r#"{"to":"me"}"#),
            Value::Null,
        ),
        chunk(2, json!({}), json!("tool_calls")),
        Bytes::from_static(b"data: [DONE]\n\n"),
    ];
    Scripted::Sse(pieces, Duration::from_millis(60))
}

/// A stream of several choices (`n` > 1) gives the calls of its first
/// choice, whole and with one turn fingerprint, as a Gemini stream of
/// several candidates gives candidate 0's: the client continues with one
/// choice (`choices[0]`) and answers its calls; the other choices are
/// alternatives no one answers. Recording every choice's calls counted
/// four calls where two were made, two of them left unanswered for good,
/// and registered the reused id `call_n0` three times over; choice 2,
/// named after the others finished, was recorded apart, with a
/// fingerprint of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_choice_of_a_stream_is_recorded_whole_with_one_turn() {
    let mut h = Harness::start().await;
    h.mock.push_response(three_choices_finishing_apart());
    let mut convo = Convo::new(Kind::Chat, true, Some("n3"));
    convo.body["n"] = json!(3);
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("[DONE]"), "{}", r.text());
    // The client goes on with choice 0 and answers its two calls.
    let whole = [
        ("lookup", r#"{"query":"LIS"}"#),
        ("book", r#"{"flight":"TP123","seat":"12A"}"#),
    ];
    let messages = convo.body["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": null, "tool_calls":
        (whole.iter().enumerate()).map(|(k, (name, args))| json!({"id": format!("call_n{k}"),
            "type": "function", "function": {"name": name, "arguments": args}})).collect::<Vec<_>>()}));
    for k in 0..whole.len() {
        messages
            .push(json!({"role": "tool", "tool_call_id": format!("call_n{k}"), "content": "ok"}));
    }
    convo.body.as_object_mut().unwrap().remove("n");
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    h.metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) == 2.0)
        .await;
    h.finish().await;
    let calls: Vec<Value> = (h.events().into_iter())
        .filter(|e| e["type"] == "tool_call")
        .collect();
    let got: Vec<(String, String, u64, u64)> = (calls.iter())
        .map(|c| {
            (
                c["call_id"].as_str().unwrap_or_default().to_string(),
                c["tool"].as_str().unwrap_or_default().to_string(),
                c["call_index"].as_u64().unwrap_or(u64::MAX),
                c["arguments_bytes"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let want: Vec<(String, String, u64, u64)> = (whole.iter().enumerate())
        .map(|(k, (name, args))| {
            (
                format!("call_n{k}"),
                name.to_string(),
                k as u64,
                args.len() as u64,
            )
        })
        .collect();
    assert_eq!(got, want, "{calls:?}");
    let turn = toolwarden_store::stored_fingerprint(toolwarden_wire::turn::fingerprint(
        whole.iter().copied(),
    ));
    for c in &calls {
        assert_eq!(c["turn"].as_i64(), Some(turn), "one turn: {calls:?}");
    }
    // Each call once, with its result: none left open.
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let rows = store.session_calls("n3").await.unwrap();
    let rows: Vec<(&str, Option<bool>)> = (rows.iter())
        .map(|c| (c.call_id.as_str(), c.failed))
        .collect();
    assert_eq!(
        rows,
        [("call_n0", Some(false)), ("call_n1", Some(false))],
        "{rows:?}"
    );
}

/// A Gemini stream of two candidates (`candidateCount: 2`), as Gemini
/// streams them: each chunk holds every candidate still open (candidate 0
/// without its `index`, as Vertex writes it), a candidate's last piece
/// holds its `finishReason` and a finished one is left out of the chunks
/// after it. Candidate 1 finishes while candidate 0's `book` call is still
/// streaming its arguments (`partialArgs`), and candidate 0 then calls
/// `notify` and finishes later. Each chunk comes in its own write.
fn two_candidates_finishing_apart() -> Scripted {
    let chunk = |candidates: Value| {
        let v = json!({"candidates": candidates, "modelVersion": "gemini-2.0-flash",
            "responseId": "resp-c2"});
        Bytes::from(format!("data: {v}\n\n"))
    };
    let parts = |parts: Value| json!({"role": "model", "parts": parts});
    let partial = |path: &str, value: &str, more: bool| json!({"jsonPath": path, "stringValue": value, "willContinue": more});
    let pieces = vec![
        chunk(json!([
            {"content": parts(json!([{"functionCall": {"name": "lookup", "args": {"query": "LIS"}}}]))},
            {"content": parts(json!([{"text": "Looking it up"}])), "index": 1},
        ])),
        chunk(json!([
            {"content": parts(json!([{"functionCall": {"name": "book", "willContinue": true,
                "partialArgs": [partial("$.flight", "TP", true)]}}]))},
            {"content": parts(json!([{"text": "."}])), "finishReason": "STOP", "index": 1},
        ])),
        chunk(json!([
            {"content": parts(json!([{"functionCall": {"partialArgs": [
                partial("$.flight", "123", false), partial("$.seat", "12A", false)]}}]))},
        ])),
        chunk(json!([
            {"content": parts(json!([{"functionCall": {"name": "notify", "args": {"to": "me"}}}]))},
        ])),
        {
            let v = json!({"candidates": [{"content": parts(json!([])), "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 9},
                "modelVersion": "gemini-2.0-flash", "responseId": "resp-c2"});
            Bytes::from(format!("data: {v}\n\n"))
        },
    ];
    Scripted::Sse(pieces, Duration::from_millis(60))
}

/// Every call of a Gemini stream of several candidates is recorded whole,
/// with one turn fingerprint: candidate 1's `finishReason` was taken for
/// the stream's end, so candidate 0's `book` was recorded from a copy
/// holding part of its arguments, the turn's fingerprint was made of that
/// copy, and `notify`, begun after it, was recorded at the stream's end
/// with a fingerprint of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_candidate_of_a_gemini_stream_is_recorded_whole_with_one_turn() {
    let mut h = Harness::start().await;
    h.mock.push_response(two_candidates_finishing_apart());
    let mut convo = Convo::new(Kind::Gemini, true, None);
    convo.body["generationConfig"] = json!({"candidateCount": 2});
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("notify"), "{}", r.text());
    h.metrics_when(|m| metric(m, "toolwarden_tool_calls_total", &[]) == 3.0)
        .await;
    h.finish().await;
    let calls: Vec<Value> = (h.events().into_iter())
        .filter(|e| e["type"] == "tool_call")
        .collect();
    let got: Vec<(String, u64, u64)> = (calls.iter())
        .map(|c| {
            (
                c["tool"].as_str().unwrap_or_default().to_string(),
                c["call_index"].as_u64().unwrap_or(u64::MAX),
                c["arguments_bytes"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let whole = [
        ("lookup", r#"{"query":"LIS"}"#),
        ("book", r#"{"flight":"TP123","seat":"12A"}"#),
        ("notify", r#"{"to":"me"}"#),
    ];
    let want: Vec<(String, u64, u64)> = (whole.iter().enumerate())
        .map(|(k, (name, args))| (name.to_string(), k as u64, args.len() as u64))
        .collect();
    assert_eq!(got, want, "{calls:?}");
    let turn = toolwarden_store::stored_fingerprint(toolwarden_wire::turn::fingerprint(
        whole.iter().copied(),
    ));
    for c in &calls {
        assert_eq!(c["turn"].as_i64(), Some(turn), "one turn: {calls:?}");
    }
}
