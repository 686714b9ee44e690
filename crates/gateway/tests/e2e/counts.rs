//! A three-round tool conversation in every dialect, streaming and not:
//! each round the model calls `lookup` (succeeds) and `book` (fails); every
//! later request resends the whole history, yet the store, the JSONL log
//! and `/metrics` count each call and each result exactly once, with the
//! failure's basis (explicit where the dialect has a flag, heuristic where
//! the content detector decides).

use toolwarden_mock_provider::MockOptions;

use http::Method;
use serde_json::{Value, json};

use super::{
    convo::{Convo, Kind, reply_calls, response_id},
    support::{Harness, calls_and_failures, metric, post, send},
};

const ROUNDS: u64 = 3;

fn failure_text(kind: Kind) -> &'static str {
    match kind {
        // With `is_error: true`: the flag decides.
        Kind::Anthropic => "Exit code 1\nbook: seat 12A is no longer available",
        // No flag on the wire: the content detector must see it.
        Kind::Chat | Kind::Responses => "Error: seat 12A is no longer available for flight TP123",
        // Sent as `{"error": …}`.
        Kind::Gemini => "seat 12A is no longer available",
    }
}

async fn three_rounds(kind: Kind, stream: bool) {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let session = format!("e2e-{}-{stream}", kind.dialect());
    let mut convo = Convo::new(kind, stream, Some(&session));
    let outcomes = [
        (
            false,
            "Flight TP123 found: departs 09:05, 189 EUR, seats available",
        ),
        (true, failure_text(kind)),
    ];
    for round in 0..ROUNDS {
        if round > 0 {
            convo.user("And another one for next week, please.");
        }
        let calls = convo.tool_round(&h.client, &h.gw(), &outcomes).await;
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lookup", "book"]);
    }
    let requests = 2 * ROUNDS;
    let what = format!("{kind:?} stream={stream}");

    // /metrics, once the recorder has caught up.
    let provider = kind.provider();
    let basis = kind.failure_basis();
    let expected = |m: &str| {
        metric(
            m,
            "toolwarden_tool_calls_total",
            &[("provider", provider), ("tool", "book")],
        ) == ROUNDS as f64
            && metric(
                m,
                "toolwarden_tool_calls_total",
                &[("provider", provider), ("tool", "lookup")],
            ) == ROUNDS as f64
            && metric(
                m,
                "toolwarden_tool_failures_total",
                &[("tool", "book"), ("basis", basis)],
            ) == ROUNDS as f64
    };
    let m = h.metrics_when(expected).await;
    let calls_total = metric(&m, "toolwarden_tool_calls_total", &[]);
    let failures_total = metric(&m, "toolwarden_tool_failures_total", &[]);
    assert!(expected(&m), "{what}: metrics\n{m}");
    assert_eq!(calls_total, (2 * ROUNDS) as f64, "{what}: all calls\n{m}");
    assert_eq!(failures_total, ROUNDS as f64, "{what}: all failures\n{m}");
    assert_eq!(
        metric(&m, "toolwarden_tool_failures_total", &[("tool", "lookup")]),
        0.0,
        "{what}"
    );
    assert_eq!(
        metric(
            &m,
            "toolwarden_upstream_requests_total",
            &[("provider", provider), ("status", "200")]
        ),
        requests as f64,
        "{what}\n{m}"
    );
    assert_eq!(
        metric(&m, "toolwarden_events_dropped_total", &[]),
        0.0,
        "{what}"
    );

    // The store, after a graceful shutdown drained the recorder.
    let stats = h.finish().await;
    let tool = |name: &str| calls_and_failures(&stats, name, &what);
    assert_eq!(tool("lookup"), (ROUNDS, 0), "{what}");
    assert_eq!(tool("book"), (ROUNDS, ROUNDS), "{what}");
    assert_eq!(stats.tools.len(), 2, "{what}: {:?}", stats.tools);
    assert_eq!(stats.requests.total, requests, "{what}");
    assert_eq!(stats.requests.errors, 0, "{what}");
    assert_eq!(
        stats.requests.streaming,
        if stream { requests } else { 0 },
        "{what}"
    );
    assert_eq!(
        stats.recent_failures.len() as u64,
        ROUNDS,
        "{what}: {:?}",
        stats.recent_failures
    );
    for f in &stats.recent_failures {
        assert_eq!(
            (f.tool.as_str(), f.basis.as_str()),
            ("book", basis),
            "{what}: {f:?}"
        );
        assert_eq!(f.session_id, session, "{what}");
    }
    assert_eq!(stats.sessions.len(), 1, "{what}: {:?}", stats.sessions);
    assert_eq!(
        (stats.sessions[0].calls, stats.sessions[0].failures),
        (2 * ROUNDS, ROUNDS),
        "{what}"
    );
    assert!(
        stats.repairs.is_empty(),
        "{what}: nothing to repair: {:?}",
        stats.repairs
    );

    // The JSONL log holds each event once.
    let events = h.events();
    let count = |ty: &str| events.iter().filter(|e| e["type"] == ty).count() as u64;
    assert_eq!(count("request"), requests, "{what}");
    assert_eq!(count("tool_call"), 2 * ROUNDS, "{what}");
    assert_eq!(count("tool_result"), 2 * ROUNDS, "{what}");
    let failed: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "tool_result" && e["failed"] == true)
        .collect();
    assert_eq!(failed.len() as u64, ROUNDS, "{what}");
    assert!(
        failed.iter().all(|e| e["basis"] == basis),
        "{what}: {failed:?}"
    );
    for e in events.iter().filter(|e| e["type"] == "request") {
        assert_eq!(e["dialect"], kind.dialect(), "{what}");
        assert_eq!(e["streaming"], stream, "{what}");
        assert_eq!(e["session_id"], session.as_str(), "{what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_three_rounds_exact_counts() {
    three_rounds(Kind::Anthropic, false).await;
    three_rounds(Kind::Anthropic, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_three_rounds_exact_counts() {
    three_rounds(Kind::Chat, false).await;
    three_rounds(Kind::Chat, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_three_rounds_exact_counts() {
    three_rounds(Kind::Responses, false).await;
    three_rounds(Kind::Responses, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_three_rounds_exact_counts() {
    three_rounds(Kind::Gemini, false).await;
    three_rounds(Kind::Gemini, true).await;
}

/// Without any session header the turns still group into one session (the
/// fingerprint of the first turn), so resent results are still counted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fingerprinted_session_counts_once() {
    let mut h = Harness::start().await;
    let mut convo = Convo::new(Kind::Chat, false, None);
    for round in 0..ROUNDS {
        if round > 0 {
            convo.user("Again, please.");
        }
        convo
            .tool_round(&h.client, &h.gw(), &[(true, "Error: flight not found")])
            .await;
    }
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    assert_eq!(
        (stats.sessions[0].calls, stats.sessions[0].failures),
        (ROUNDS, ROUNDS)
    );
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    assert_eq!(calls, ROUNDS);
}

/// Responses continuations without a session header: each request carries
/// only its new input (`previous_response_id` holds the rest), so no two
/// share a first turn, yet they join the session of the response they
/// continue, and its calls and results count once, in one session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_continuations_join_one_session() {
    for stream in [false, true] {
        let opts = MockOptions {
            calls_per_reply: 2,
            ..MockOptions::default()
        };
        let mut h = Harness::with(opts, |_| {}).await;
        let (headers, tools) = responses_setup();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let url = format!("{}/v1/responses", h.gw());
        let mut previous: Option<String> = None;
        for round in 0..ROUNDS {
            let mut body = json!({"model": "gpt-4.1", "store": true, "stream": stream,
                "tools": tools, "input": [{"role": "user", "content": format!("Trip {round}, please.")}]});
            if let Some(p) = &previous {
                body["previous_response_id"] = json!(p);
            }
            let r = post(&h.client, url.clone(), &headers, &body).await;
            assert_eq!(r.status, 200, "{}", r.text());
            let calls = reply_calls(Kind::Responses, stream, &r.body);
            assert_eq!(calls.len(), 2, "{}", r.text());
            let items: Vec<Value> = calls
                .iter()
                .zip(["Found it.", "Error: seat 12A is no longer available"])
                .map(|(c, out)| json!({"type": "function_call_output", "call_id": c.id, "output": out}))
                .collect();
            let body = json!({"model": "gpt-4.1", "store": true, "stream": stream, "tools": tools,
                "previous_response_id": response_id(stream, &r), "input": items});
            let r = post(&h.client, url.clone(), &headers, &body).await;
            assert_eq!(r.status, 200, "{}", r.text());
            previous = Some(response_id(stream, &r));
        }
        let stats = h.finish().await;
        let what = format!("stream={stream}");
        assert_eq!(stats.sessions.len(), 1, "{what}: {:?}", stats.sessions);
        let s = &stats.sessions[0];
        assert_eq!((s.calls, s.failures), (2 * ROUNDS, ROUNDS), "{what}");
        assert_eq!(stats.requests.total, 2 * ROUNDS, "{what}");
    }
}

/// A continuation that reaches a gateway which did not see the response it
/// continues (here: the same database after a restart) asks the store for
/// that response's session: the conversation stays one session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_after_a_restart_finds_its_session_in_the_store() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let (headers, tools) = responses_setup();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
        "input": [{"role": "user", "content": "A trip to Porto, please."}]});
    let r = post(
        &h.client,
        format!("{}/v1/responses", h.gw()),
        &headers,
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = reply_calls(Kind::Responses, false, &r.body);
    assert_eq!(calls.len(), 2, "{}", r.text());
    h.restart().await;
    let items: Vec<Value> = calls
        .iter()
        .zip(["Found it.", "Error: seat 3C is no longer available"])
        .map(|(c, out)| json!({"type": "function_call_output", "call_id": c.id, "output": out}))
        .collect();
    let body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
        "previous_response_id": response_id(false, &r), "input": items});
    let r = post(
        &h.client,
        format!("{}/v1/responses", h.gw()),
        &headers,
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let s = &stats.sessions[0];
    assert_eq!((s.calls, s.failures), (2, 1));
    // Both requests in that session (the result alone would pair with its
    // call across sessions anyway: the request's own session is the test).
    let sessions = request_sessions(&h);
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0], sessions[1], "{sessions:?}");
    assert_eq!(sessions[0], s.session_id.as_str());
}

/// Response ids of ~430 bytes alike in all but their last characters, as
/// a proxy that encodes its own state in them makes (LiteLLM): stored in
/// their bounded form, each continuation after a restart still finds its
/// own conversation's session in the store, not another's and not none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuations_of_long_response_ids_find_their_own_sessions() {
    let opts = MockOptions {
        calls_per_reply: 2,
        response_id_pad: 400,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let (headers, tools) = responses_setup();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = format!("{}/v1/responses", h.gw());
    let mut firsts = Vec::new();
    for trip in ["Porto", "Oslo"] {
        let body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "input": [{"role": "user", "content": format!("A trip to {trip}, please.")}]});
        let r = post(&h.client, url.clone(), &headers, &body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = reply_calls(Kind::Responses, false, &r.body);
        assert_eq!(calls.len(), 2, "{}", r.text());
        let id = response_id(false, &r);
        assert!(id.len() > 400, "{id}");
        firsts.push((id, calls));
    }
    h.restart().await;
    let url = format!("{}/v1/responses", h.gw());
    for (id, calls) in &firsts {
        let items: Vec<Value> = calls
            .iter()
            .zip(["Found it.", "Error: no seats left"])
            .map(|(c, out)| json!({"type": "function_call_output", "call_id": c.id, "output": out}))
            .collect();
        let body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "previous_response_id": id, "input": items});
        let r = post(&h.client, url.clone(), &headers, &body).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 2, "{:?}", stats.sessions);
    for s in &stats.sessions {
        assert_eq!((s.calls, s.failures), (2, 1), "{s:?}");
    }
    let sessions = request_sessions(&h);
    assert_eq!(sessions.len(), 4);
    assert_ne!(sessions[0], sessions[1], "{sessions:?}");
    assert_eq!(sessions[2], sessions[0], "{sessions:?}");
    assert_eq!(sessions[3], sessions[1], "{sessions:?}");
}

/// A turn sent first as a continuation (its results alone, after
/// `previous_response_id`) and then again as the whole history (as the
/// OpenAI SDKs and the Codex CLI resend it after `previous_response_not_found`
/// or over HTTP once a WebSocket broke): the same results at other
/// positions. Each counts once; a later turn's results still count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_resent_as_the_whole_history_counts_once() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let (headers, tools) = responses_setup();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = format!("{}/v1/responses", h.gw());
    let Continued {
        user,
        calls,
        outputs,
    } = a_turn_and_its_continuation(&h, &url, &headers, &tools).await;
    // The same turn again, as the whole history.
    let mut history = vec![user];
    history.extend(calls.iter().map(
        |c| json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.args.to_string()}),
    ));
    history.extend(outputs.iter().cloned());
    let body = json!({"model": "gpt-4.1", "store": false, "tools": tools, "input": history});
    let r3 = post(&h.client, url.clone(), &headers, &body).await;
    assert_eq!(r3.status, 200, "{}", r3.text());
    // And the next turn after it, as the whole history: new results count.
    history.push(json!({"role": "user", "content": "And a hotel?"}));
    let body = json!({"model": "gpt-4.1", "store": false, "tools": tools, "input": history});
    let r4 = post(&h.client, url.clone(), &headers, &body).await;
    assert_eq!(r4.status, 200, "{}", r4.text());
    let next = reply_calls(Kind::Responses, false, &r4.body);
    assert_eq!(next.len(), 2, "{}", r4.text());
    history.extend(next.iter().map(
        |c| json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.args.to_string()}),
    ));
    history.extend(next.iter().map(
        |c| json!({"type": "function_call_output", "call_id": c.id, "output": "Error: sold out"}),
    ));
    let body = json!({"model": "gpt-4.1", "store": false, "tools": tools, "input": history});
    let r5 = post(&h.client, url, &headers, &body).await;
    assert_eq!(r5.status, 200, "{}", r5.text());
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let s = &stats.sessions[0];
    assert_eq!((s.calls, s.failures), (4, 3), "{s:?}");
}

/// The first turn of the Responses conversations above and its
/// continuation (its results alone, after `previous_response_id`): two
/// calls, one of whose results fails.
struct Continued {
    user: Value,
    calls: Vec<super::convo::Call>,
    outputs: Vec<Value>,
}

async fn a_turn_and_its_continuation(
    h: &Harness,
    url: &str,
    headers: &[(&str, &str)],
    tools: &Value,
) -> Continued {
    let user = json!({"role": "user", "content": "A trip to Lisbon, please."});
    let body = json!({"model": "gpt-4.1", "store": true, "tools": tools, "input": [user]});
    let r = post(&h.client, url.to_string(), headers, &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = reply_calls(Kind::Responses, false, &r.body);
    assert_eq!(calls.len(), 2, "{}", r.text());
    let outputs: Vec<Value> = calls
        .iter()
        .zip(["Found it.", "Error: seat 7F is no longer available"])
        .map(|(c, out)| json!({"type": "function_call_output", "call_id": c.id, "output": out}))
        .collect();
    let body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
        "previous_response_id": response_id(false, &r), "input": outputs});
    let r2 = post(&h.client, url.to_string(), headers, &body).await;
    assert_eq!(r2.status, 200, "{}", r2.text());
    Continued {
        user,
        calls,
        outputs,
    }
}

/// The session of each request in the JSONL log, in order.
fn request_sessions(h: &Harness) -> Vec<Value> {
    h.events()
        .iter()
        .filter(|e| e["type"] == "request")
        .map(|e| e["session_id"].clone())
        .collect()
}

/// The headers and tools of the Responses conversations above.
fn responses_setup() -> (Vec<(&'static str, String)>, Value) {
    let mut headers = Kind::Responses.auth();
    headers.push(("content-type", "application/json".to_string()));
    let tools = json!([{"type": "function", "name": "lookup", "parameters": {"type": "object"}},
        {"type": "function", "name": "book", "parameters": {"type": "object"}}]);
    (headers, tools)
}

/// A turn whose request failed (a context-length 400) retried with its
/// oldest turns cut: the same results at other positions, each counted
/// once, in Chat Completions and Anthropic Messages alike (not only the
/// Responses API's continuations).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_retried_with_its_oldest_turns_cut_counts_once() {
    for kind in [Kind::Chat, Kind::Anthropic] {
        let mut h = Harness::with(MockOptions::default(), |_| {}).await;
        let session = format!("trimmed-{}", kind.dialect());
        let mut convo = Convo::new(kind, false, Some(&session));
        convo.assistant_text("Where from?");
        convo.user("From Porto. Search now.");
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = convo.calls(&r);
        assert_eq!(calls.len(), 1, "{}", r.text());
        convo.assistant_calls(&calls);
        convo.results(&calls, &[(true, failure_text(kind))]);
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        // Retried without the first exchange: every position moves by two.
        let list = convo.body["messages"].as_array_mut().expect("messages");
        let first = usize::from(kind == Kind::Chat);
        list.drain(first..first + 2);
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let stats = h.finish().await;
        assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
        let s = &stats.sessions[0];
        assert_eq!((s.calls, s.failures), (1, 1), "{kind:?}: {s:?}");
    }
}

/// Two runs of one script against Gemini (no session header, so one
/// fingerprint session; calls without ids, so `name#0` in both): the same
/// position answered in each run, each answer counted, each run's resend
/// not, and the gateway restarted between the runs or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_of_one_gemini_script_count_each_answer() {
    for restart in [false, true] {
        let mut h = Harness::with(MockOptions::default(), |_| {}).await;
        for (run, outcome) in [
            (0, (false, "sunny, 21C")),
            (1, (true, "weather service unavailable")),
        ] {
            if restart && run == 1 {
                h.restart().await;
            }
            let mut convo = Convo::new(Kind::Gemini, false, None);
            convo.tool_round(&h.client, &h.gw(), &[outcome]).await;
            // The run's next turn resends its answer.
            convo.user("And tomorrow?");
            let r = convo.send(&h.client, &h.gw()).await;
            assert_eq!(r.status, 200, "{}", r.text());
        }
        let stats = h.finish().await;
        let calls: u64 = stats.sessions.iter().map(|s| s.calls).sum();
        let failures: u64 = stats.sessions.iter().map(|s| s.failures).sum();
        assert_eq!(
            (calls, failures),
            (4, 1),
            "restart {restart}: {:?}",
            stats.sessions
        );
    }
}

/// Responses turns that name a stored conversation (`conversation`, as the
/// OpenAI Agents SDK sends with `conversation_id`): each request carries
/// only its new items, the outputs without their calls (the conversation
/// holds them). They are one session, the conversation's, whatever their
/// first items; the outputs are not orphans, so `repair = "fix"` leaves
/// the bodies as they came, and the mock, which holds the conversation as
/// the API does, takes them as answering its calls; each call and result
/// counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_turns_of_a_stored_conversation_are_one_session() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |c| c.repair = toolwarden_gateway::RepairMode::Fix).await;
    let (headers, tools) = responses_setup();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = format!("{}/v1/responses", h.gw());
    // Made at the provider, as `conversations.create` makes it.
    let made = format!("{}/v1/conversations", h.mock.base_url());
    let r = post(&h.client, made, &headers, &json!({"items": []})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let made: Value = serde_json::from_slice(&r.body).unwrap();
    let conversation = made["id"].as_str().unwrap();
    for (round, (text, form)) in [
        ("A trip to Lisbon, please.", json!(conversation)),
        ("And a hotel?", json!({"id": conversation})),
    ]
    .into_iter()
    .enumerate()
    {
        let user = json!({"role": "user", "content": text});
        let body = json!({"model": "gpt-4.1", "tools": tools, "conversation": form,
            "input": [user]});
        let r = post(&h.client, url.clone(), &headers, &body).await;
        assert_eq!(r.status, 200, "round {round}: {}", r.text());
        let calls = reply_calls(Kind::Responses, false, &r.body);
        assert_eq!(calls.len(), 2, "{}", r.text());
        let outputs: Vec<Value> = calls
            .iter()
            .zip(["Found it.", "Error: seat 7F is no longer available"])
            .map(|(c, out)| json!({"type": "function_call_output", "call_id": c.id, "output": out}))
            .collect();
        let body = json!({"model": "gpt-4.1", "tools": tools, "conversation": form,
            "input": outputs});
        let r = post(&h.client, url.clone(), &headers, &body).await;
        assert_eq!(r.status, 200, "round {round}: {}", r.text());
        let sent = h.mock.received().pop().expect("the outputs went upstream");
        assert_eq!(
            serde_json::from_slice::<Value>(&sent.body).unwrap(),
            body,
            "round {round}: sent as they came"
        );
    }
    // The Conversations API through the gateway (forwarded unread): an
    // item added (a request row, the conversation's), the items listed (a
    // GET, forwarded and not recorded).
    let items = format!("{}/v1/conversations/{conversation}/items", h.gw());
    let note = json!({"items": [{"type": "message", "role": "user", "content": "Noted."}]});
    let r = post(&h.client, items.clone(), &headers, &note).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = send(
        &h.client,
        Method::GET,
        format!("{items}?order=asc"),
        &headers,
        Vec::new(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let stats = h.finish().await;
    assert!(stats.repairs.is_empty(), "{:?}", stats.repairs);
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let s = &stats.sessions[0];
    assert_eq!(s.session_id, conversation, "{s:?}");
    let events = h.events();
    let passed = events.iter().filter(|e| {
        e["type"] == "request"
            && e["path"]
                .as_str()
                .is_some_and(|p| p.contains("/conversations/"))
    });
    let sessions: Vec<_> = passed.map(|e| e["session_id"].clone()).collect();
    assert_eq!(sessions, [json!(conversation)], "{events:#?}");
    assert_eq!((s.calls, s.failures), (4, 2), "{s:?}");
    let events = h.events();
    let results = events.iter().filter(|e| e["type"] == "tool_result");
    assert!(
        results
            .clone()
            .all(|e| e["tool"].is_string() && e["exec_ms"].is_number()),
        "each output met its call: {events:#?}"
    );
    assert_eq!(results.count(), 4);
}

/// As above, with the whole history written `call, output, call, output`
/// (each output right after its call, as the Codex CLI once wrote a turn
/// of several calls): the replayed turn is both calls, and each result
/// still counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interleaved_turn_resent_as_the_whole_history_counts_once() {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let (headers, tools) = responses_setup();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = format!("{}/v1/responses", h.gw());
    let Continued {
        user,
        calls,
        outputs,
    } = a_turn_and_its_continuation(&h, &url, &headers, &tools).await;
    // The same turn again, as the whole history, each output after its call.
    let mut history = vec![user];
    for (c, output) in calls.iter().zip(&outputs) {
        history.push(
            json!({"type": "function_call", "call_id": c.id, "name": c.name,
            "arguments": c.args.to_string()}),
        );
        history.push(output.clone());
    }
    let body = json!({"model": "gpt-4.1", "store": false, "tools": tools, "input": history});
    let r3 = post(&h.client, url, &headers, &body).await;
    assert_eq!(r3.status, 200, "{}", r3.text());
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let s = &stats.sessions[0];
    assert_eq!((s.calls, s.failures), (2, 1), "{s:?}");
    let events = h.events();
    let results = events.iter().filter(|e| e["type"] == "tool_result").count();
    assert_eq!(results, 2, "{events:#?}");
}

/// A Responses history whose model items are stored and sent as
/// `item_reference`s (the AI SDK with `store: true` references its
/// reasoning and text, and sends the calls and outputs whole), retried
/// with its oldest item cut: a reference ends the model's turn as the item
/// would, so only the last turn's outputs are new, and each counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referenced_history_retried_with_its_oldest_item_cut_counts_once() {
    let opts = MockOptions {
        calls_per_reply: 2,
        // The mock keeps no items to reference.
        validate: false,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let (mut headers, tools) = responses_setup();
    headers.push(("x-session-id", "referenced".to_string()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = format!("{}/v1/responses", h.gw());
    let body = |input: &[Value]| json!({"model": "gpt-4.1", "store": true, "tools": tools, "input": input});
    let mut history = vec![json!({"role": "user", "content": "A trip to Lisbon, please."})];
    for round in 0..2 {
        let r = post(&h.client, url.clone(), &headers, &body(&history)).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = reply_calls(Kind::Responses, false, &r.body);
        assert_eq!(calls.len(), 2, "{}", r.text());
        history.push(json!({"type": "item_reference", "id": format!("rs_{round}")}));
        for c in &calls {
            history.push(
                json!({"type": "function_call", "call_id": c.id, "name": c.name,
                "arguments": c.args.to_string()}),
            );
        }
        for (c, out) in calls
            .iter()
            .zip(["Found it.", "Error: seat 7F is no longer available"])
        {
            history.push(json!({"type": "function_call_output", "call_id": c.id, "output": out}));
        }
        let r = post(&h.client, url.clone(), &headers, &body(&history)).await;
        assert_eq!(r.status, 200, "{}", r.text());
        if round == 0 {
            history.push(json!({"type": "item_reference", "id": "msg_0"}));
            history.push(json!({"role": "user", "content": "And a hotel?"}));
        }
    }
    // The last request again, without its first item.
    let r = post(&h.client, url.clone(), &headers, &body(&history[1..])).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let stats = h.finish().await;
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let s = &stats.sessions[0];
    assert_eq!((s.calls, s.failures), (4, 2), "{s:?}");
    let events = h.events();
    let results = events.iter().filter(|e| e["type"] == "tool_result").count();
    assert_eq!(results, 4, "{events:#?}");
}

/// Two runs of one Gemini script (one fingerprint session, `name#0` in
/// both) on a gateway whose recent calls were forgotten before each answer
/// came (`recent_calls_capacity`: other conversations' calls filled it, as
/// on a busy gateway; or the calls went through another gateway): the
/// gateway knows neither run's call, and its check of resent results took
/// the second run's answer for the first's resend, so it never reached the
/// store, which counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_runs_answer_counts_when_the_gateway_forgot_its_call() {
    let mut h = Harness::with(MockOptions::default(), |c| c.memory.recent_calls = 2).await;
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
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        convo.assistant_text("Done.");
        // The run's next turn resends its answer.
        convo.user("And tomorrow?");
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // Two answers of the script; the other conversations answered nothing.
    h.assert_metric("toolwarden_tool_results_total", &[], 2.0)
        .await;
    let stats = h.finish().await;
    let script: Vec<_> = stats
        .sessions
        .iter()
        .filter(|s| s.session_id.starts_with("fp-"))
        .collect();
    assert_eq!(script.len(), 1, "{:?}", stats.sessions);
    assert_eq!(
        (script[0].calls, script[0].failures),
        (4, 1),
        "{:?}",
        stats.sessions
    );
}
