//! The beta's `response.inject` (openai-python
//! `client.beta.responses.connect()`, `connection.response.inject(…)`; the
//! API's `ResponseInjectEvent`): a response that calls client-owned tools
//! waits for their outputs, which the client commits to it without a
//! `response.create`; the server answers `response.inject.created` and the
//! response goes on, or `response.inject.failed` when the response it
//! names is not under way. The outputs are the turn's results, each
//! judged beside its call, recorded after it. Before, the message passed
//! unread: its results were never counted, their failures never seen.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use toolwarden_gateway::RepairMode;
use toolwarden_mock_provider::{MockOptions, RawResponse, Scripted};

use super::client::{Socket, connect, next, send_text};
use crate::e2e::support::{Harness, metric};

/// A gateway whose mock records what it is sent, in `mode` (else the
/// tests' default).
async fn recording(mode: Option<RepairMode>) -> Harness {
    let mock = MockOptions {
        record: true,
        ..MockOptions::default()
    };
    Harness::with(mock, |c| {
        if let Some(mode) = mode {
            c.repair = mode;
        }
    })
    .await
}

/// The recorded repairs' counts by defect, in the defects' order.
fn repairs_by_defect(stats: &toolwarden_store::Stats) -> Vec<(&str, u64)> {
    let mut repairs: Vec<(&str, u64)> = (stats.repairs.iter())
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    repairs.sort_unstable();
    repairs
}

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
        "arguments": arguments.to_string(), "status": "completed"})
}

fn calls() -> Vec<Value> {
    vec![
        call("call_1", "lookup", json!({"q": "TP123"})),
        call("call_2", "book", json!({"q": "TP123"})),
        // A command that only prints a file: its output is the file's
        // text, judged so only beside the call.
        call(
            "call_3",
            "exec_command",
            json!({"cmd": "tail -3 build.log"}),
        ),
    ]
}

/// One response: its calls, then (once the client injects their outputs)
/// `response.inject.created` and its end.
fn waiting_response() -> Vec<Value> {
    let response = |status: &str| json!({"id": "resp_1", "object": "response", "model": "gpt-5", "status": status, "output": []});
    let mut events = vec![json!({"type": "response.created", "sequence_number": 0,
        "response": response("in_progress")})];
    for (i, call) in calls().into_iter().enumerate() {
        events.push(
            json!({"type": "response.output_item.done", "sequence_number": i + 1,
            "output_index": i, "item": call}),
        );
    }
    let mut completed = response("completed");
    completed["output"] = Value::Array(calls());
    completed["usage"] = json!({"input_tokens": 30, "output_tokens": 9, "total_tokens": 39});
    events.push(
        json!({"type": "response.inject.created", "response_id": "resp_1",
        "sequence_number": 4}),
    );
    events.push(json!({"type": "response.completed", "sequence_number": 5,
        "response": completed}));
    events
}

/// A socket under `session` through `h`'s gateway, its response (the
/// mock answering with [`waiting_response`]) waiting after its calls: the
/// events up to there read, each as the mock sent it; the socket and
/// the `response.create` sent.
async fn waiting_socket(h: &Harness, session: &str) -> (Socket, Value) {
    waiting_socket_with(h, session, waiting_response()).await
}

/// [`waiting_socket`] with the mock answering with `events`.
async fn waiting_socket_with(h: &Harness, session: &str, events: Vec<Value>) -> (Socket, Value) {
    h.mock.push_response(Scripted::Raw(RawResponse {
        status: 200,
        headers: Vec::new(),
        chunks: events.iter().map(|e| Bytes::from(e.to_string())).collect(),
        delay: Duration::ZERO,
    }));
    let mut ws = connect(&h.gw(), &[AUTH, ("session_id", session)], false).await;
    let create = json!({"type": "response.create", "model": "gpt-5",
        "input": [{"role": "user", "content": "Book TP123"}]});
    send_text(&mut ws, create.to_string()).await;
    for event in &events[..4] {
        let got = next(&mut ws).await.expect("an event");
        assert_eq!(got.as_ref(), event.to_string().as_bytes());
    }
    (ws, create)
}

/// [`waiting_response`] that waits twice: after the first inject's
/// `response.inject.created`, a text delta, then it waits for another
/// inject.
fn waiting_twice() -> Vec<Value> {
    let mut events = waiting_response();
    let completed = events.pop().expect("its end");
    events.push(
        json!({"type": "response.output_text.delta", "sequence_number": 5,
        "item_id": "msg_1", "output_index": 3, "content_index": 0, "delta": "Booking"}),
    );
    events.push(
        json!({"type": "response.inject.created", "response_id": "resp_1",
        "sequence_number": 6}),
    );
    events.push(completed);
    events
}

/// The next event, read as JSON.
async fn next_json(ws: &mut Socket) -> Value {
    serde_json::from_slice(&next(ws).await.expect("an event")).expect("JSON")
}

fn outputs() -> Vec<Value> {
    let out = |id: &str, output: &str| json!({"type": "function_call_output", "call_id": id, "output": output});
    vec![
        out("call_1", "Flight TP123 found: departs 09:05, 189 EUR"),
        out(
            "call_2",
            "Error: seat 12A is no longer available for flight TP123",
        ),
        out("call_3", "cc -o app main.o\nmake: *** [all] Error 1\n"),
    ]
}

#[tokio::test]
async fn outputs_injected_into_a_response_are_its_results() {
    let mut h = recording(None).await;
    let (mut ws, create) = waiting_socket(&h, "injected").await;
    // Into a response that is not under way: refused, nothing committed.
    let stray = json!({"type": "response.inject", "response_id": "resp_0",
        "input": [outputs()[1].clone()]});
    send_text(&mut ws, stray.to_string()).await;
    let failed: Value = serde_json::from_slice(&next(&mut ws).await.unwrap()).unwrap();
    assert_eq!(
        (&failed["type"], &failed["error"]["code"]),
        (
            &json!("response.inject.failed"),
            &json!("response_not_found")
        )
    );
    let inject = json!({"type": "response.inject", "response_id": "resp_1", "input": outputs()});
    send_text(&mut ws, inject.to_string()).await;
    // The rest of the mock's events, once the outputs are in.
    for event in &waiting_response()[4..] {
        let got = next(&mut ws).await.expect("an event");
        assert_eq!(got.as_ref(), event.to_string().as_bytes());
    }
    drop(ws);
    let expected = |m: &str| metric(m, "toolwarden_tool_results_total", &[]) == 3.0;
    let m = h.metrics_when(expected).await;
    let count = |name: &str, labels: &[(&str, &str)]| metric(&m, name, labels);
    assert_eq!(count("toolwarden_tool_results_total", &[]), 3.0, "{m}");
    assert_eq!(
        count("toolwarden_tool_results_total", &[("tool", "unknown")]),
        0.0,
        "{m}"
    );
    // `book` failed; the log `tail` printed is the file's text.
    assert_eq!(count("toolwarden_tool_failures_total", &[]), 1.0, "{m}");
    assert_eq!(
        count("toolwarden_tool_failures_total", &[("tool", "book")]),
        1.0,
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(
        (
            stats.requests.total,
            stats.totals.calls,
            stats.totals.failures
        ),
        (1, 3, 1),
        "{:?} {:?}",
        stats.requests,
        stats.totals
    );
    // Each call recorded before its result, both with the turn's request
    // and session; the stray inject read by no one.
    let events = h.events();
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "tool_call" || e["type"] == "tool_result")
        .map(|e| (e["type"].as_str().unwrap(), e["call_id"].as_str().unwrap()))
        .collect();
    for id in ["call_1", "call_2", "call_3"] {
        let at = |ty| kinds.iter().position(|k| *k == (ty, id));
        let (called, answered) = (at("tool_call"), at("tool_result"));
        assert!(called.is_some() && called < answered, "{id}: {kinds:?}");
    }
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    let request = events
        .iter()
        .find(|e| e["type"] == "request")
        .expect("the turn");
    for e in events.iter().filter(|e| e["type"] == "tool_result") {
        assert_eq!(
            (&e["request_id"], &e["session_id"]),
            (&request["request_id"], &json!("injected")),
            "{e}"
        );
    }
    // Every message reached the upstream as it was sent.
    let received: Vec<Value> = (h.mock.received().iter())
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(received, [create, stray, inject]);
}

/// `fix` mode: an inject's outputs are judged against the calls its
/// response has made, by the rules of a `response.create`'s input (the API
/// documents only that an inject's items "are validated and committed
/// atomically"). An output for a call the response never made and a
/// second output for one call are taken out, so the others commit; the
/// mock refuses either as the API refuses them in a `response.create`
/// ("No tool call found for function call output with call_id …",
/// "Duplicate item found with id …"), and then commits nothing, leaving
/// the response waiting. Before, the inject went as it came.
#[tokio::test]
async fn fix_mode_takes_out_the_outputs_an_inject_cannot_commit() {
    let mut h = recording(Some(RepairMode::Fix)).await;
    let (mut ws, _) = waiting_socket(&h, "fixed").await;
    let [first, second, third] = <[Value; 3]>::try_from(outputs()).unwrap();
    let stray =
        json!({"type": "function_call_output", "call_id": "call_9", "output": "from elsewhere"});
    let again = json!({"type": "function_call_output", "call_id": "call_2", "output": "retried"});
    // Written as a client writes it: its spacing kept where nothing changed.
    let items = [&first, &stray, &second, &again, &third].map(Value::to_string);
    let inject = format!(
        r#"{{"type": "response.inject", "response_id": "resp_1", "input": [{}]}}"#,
        items.join(", ")
    );
    send_text(&mut ws, inject.clone()).await;
    // The response goes on.
    // The rest of the mock's events, once the outputs are in.
    for event in &waiting_response()[4..] {
        let got = next(&mut ws).await.expect("an event");
        assert_eq!(
            String::from_utf8_lossy(&got),
            event.to_string(),
            "the inject was refused"
        );
    }
    drop(ws);
    let received = h.mock.received();
    assert_eq!(received.len(), 2);
    let kept = [&first, &second, &third].map(Value::to_string);
    let want = format!(
        r#"{{"type": "response.inject", "response_id": "resp_1", "input": [{}]}}"#,
        kept.join(", ")
    );
    assert_eq!(String::from_utf8_lossy(&received[1].body), want);
    let m = h
        .metrics_when(|m| {
            metric(m, "toolwarden_repairs_total", &[]) == 2.0
                && metric(m, "toolwarden_tool_results_total", &[]) >= 3.0
        })
        .await;
    let repairs = |defect: &str| {
        metric(
            &m,
            "toolwarden_repairs_total",
            &[("dialect", "openai-responses"), ("defect", defect)],
        )
    };
    assert_eq!(
        (repairs("orphan_result"), repairs("duplicate_call_id")),
        (1.0, 1.0),
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(
        repairs_by_defect(&stats),
        [("duplicate_call_id", 1), ("orphan_result", 1)]
    );
    // The client's outputs are what is recorded, as over HTTP: `book`'s
    // failure among them.
    assert_eq!(
        (stats.requests.total, stats.totals.failures),
        (1, 1),
        "{:?} {:?}",
        stats.requests,
        stats.totals
    );
}

/// `report` mode: an inject the API refuses (an output for a call the
/// response never made, a second output for one call) goes as it came and
/// is recorded as the defects it has, as a `response.create`'s unpaired
/// input is (the request's repairs, not `toolwarden_repairs_total`, which
/// counts what was changed). Before, nothing was recorded.
#[tokio::test]
async fn report_mode_records_what_an_inject_is_refused_for() {
    let mut h = recording(Some(RepairMode::Report)).await;
    let (mut ws, _) = waiting_socket(&h, "reported").await;
    let [first, second, third] = <[Value; 3]>::try_from(outputs()).unwrap();
    let stray =
        json!({"type": "function_call_output", "call_id": "call_9", "output": "from elsewhere"});
    let inject = json!({"type": "response.inject", "response_id": "resp_1",
        "input": [&first, &stray, &second, &second]})
    .to_string();
    send_text(&mut ws, inject.clone()).await;
    // The mock refuses it as the API refuses such an input.
    let refused = next_json(&mut ws).await;
    assert_eq!(
        (&refused["type"], &refused["error"]["message"]),
        (
            &json!("error"),
            &json!("No tool call found for function call output with call_id call_9.")
        ),
        "{refused}"
    );
    // The client sends them again, as the API takes them.
    let clean = json!({"type": "response.inject", "response_id": "resp_1",
        "input": [&first, &second, &third]});
    send_text(&mut ws, clean.to_string()).await;
    for event in &waiting_response()[4..] {
        assert_eq!(&next_json(&mut ws).await, event);
    }
    drop(ws);
    let received = h.mock.received();
    assert_eq!(String::from_utf8_lossy(&received[1].body), inject);
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 3.0)
        .await;
    assert_eq!(metric(&m, "toolwarden_repairs_total", &[]), 0.0, "{m}");
    let stats = h.finish().await;
    assert_eq!(
        repairs_by_defect(&stats),
        [("duplicate_call_id", 1), ("orphan_result", 1)]
    );
    // The refused inject committed nothing: each output read once, with
    // the inject that committed it.
    assert_eq!(
        (stats.totals.calls, stats.totals.failures),
        (3, 1),
        "{:?}",
        stats.totals
    );
    let request = (h.events().into_iter())
        .find(|e| e["type"] == "request")
        .expect("the turn");
    assert_eq!(request["repair_mode"], "report", "{request}");
}

/// An output an earlier inject committed, injected again into the same
/// response: the API refuses it as a second output for the call
/// ("Duplicate item found with id …"), keeping the inject's other outputs
/// out. In `fix` mode it is taken out (the gateway saw the earlier inject
/// and its `response.inject.created`), in `report` mode recorded. Before,
/// the repeat went on and the inject was refused in `fix` mode, and
/// nothing was recorded in `report` mode.
#[tokio::test]
async fn an_output_repeated_in_a_later_inject() {
    for mode in [RepairMode::Fix, RepairMode::Report] {
        let mut h = recording(Some(mode)).await;
        let (mut ws, _) = waiting_socket_with(&h, "repeated", waiting_twice()).await;
        let [first, second, third] = <[Value; 3]>::try_from(outputs()).unwrap();
        let one = json!({"type": "response.inject", "response_id": "resp_1", "input": [&first]});
        send_text(&mut ws, one.to_string()).await;
        for event in &waiting_twice()[4..6] {
            assert_eq!(&next_json(&mut ws).await, event, "{mode:?}");
        }
        let again = json!({"type": "response.inject", "response_id": "resp_1",
            "input": [&first, &second, &third]});
        send_text(&mut ws, again.to_string()).await;
        if mode == RepairMode::Report {
            let refused = next_json(&mut ws).await;
            assert_eq!(
                refused["error"]["message"],
                "Duplicate item found with id call_1. Remove duplicate items from your input and try again.",
                "{refused}"
            );
            let rest = json!({"type": "response.inject", "response_id": "resp_1",
                "input": [&second, &third]});
            send_text(&mut ws, rest.to_string()).await;
        }
        for event in &waiting_twice()[6..] {
            assert_eq!(
                &next_json(&mut ws).await,
                event,
                "{mode:?}: the inject was refused"
            );
        }
        drop(ws);
        let received = h.mock.received();
        let sent: Value = serde_json::from_slice(&received[2].body).unwrap();
        let want = match mode {
            RepairMode::Fix => json!([&second, &third]),
            _ => json!([&first, &second, &third]),
        };
        assert_eq!(sent["input"], want, "{mode:?}");
        let m = h
            .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 3.0)
            .await;
        let fixed = f64::from(u8::from(mode == RepairMode::Fix));
        assert_eq!(
            metric(
                &m,
                "toolwarden_repairs_total",
                &[("defect", "duplicate_call_id")]
            ),
            fixed,
            "{mode:?} {m}"
        );
        let stats = h.finish().await;
        assert_eq!(
            repairs_by_defect(&stats),
            [("duplicate_call_id", 1)],
            "{mode:?}"
        );
        // Each output counted once.
        assert_eq!(
            (stats.totals.calls, stats.totals.failures),
            (3, 1),
            "{mode:?} {:?}",
            stats.totals
        );
    }
}

/// Two injects in flight into one response, both committed: the server's
/// `response.inject.created` names the response, not the inject, and no
/// document gives the order of its answers (openai-python
/// `BetaResponseInjectCreatedEvent`), but once both are answered and both
/// committed their outputs are committed, whichever answer was whose. An
/// output injected again after is a second output for its call: in `fix`
/// mode taken out. (The mock answers the two together, so both are in
/// flight for certain.) Before, nothing was learned while two injects
/// were in flight: the repeat went on and the mock, as the API, refused
/// the inject ("Duplicate item found with id call_1. …").
#[tokio::test]
async fn what_two_injects_in_flight_committed_is_learned() {
    let mut h = recording(Some(RepairMode::Fix)).await;
    let mut events = waiting_twice();
    events.insert(
        5,
        json!({"type": "response.inject.created", "response_id": "resp_1",
            "sequence_number": 5}),
    );
    let (mut ws, _) = waiting_socket_with(&h, "two-in-flight", events.clone()).await;
    let [first, second, third] = <[Value; 3]>::try_from(outputs()).unwrap();
    let inject = |input: &[&Value]| {
        json!({"type": "response.inject", "response_id": "resp_1", "input": input}).to_string()
    };
    send_text(&mut ws, inject(&[&first])).await;
    send_text(&mut ws, inject(&[&second])).await;
    for event in &events[4..7] {
        assert_eq!(&next_json(&mut ws).await, event);
    }
    send_text(&mut ws, inject(&[&first, &third])).await;
    for event in &events[7..] {
        assert_eq!(&next_json(&mut ws).await, event, "the inject was refused");
    }
    drop(ws);
    let received = h.mock.received();
    let sent: Value = serde_json::from_slice(&received[3].body).unwrap();
    assert_eq!(sent["input"], json!([&third]));
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 3.0)
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_repairs_total",
            &[("defect", "duplicate_call_id")]
        ),
        1.0,
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(repairs_by_defect(&stats), [("duplicate_call_id", 1)]);
    assert_eq!(
        (stats.totals.calls, stats.totals.failures),
        (3, 1),
        "{:?}",
        stats.totals
    );
}
