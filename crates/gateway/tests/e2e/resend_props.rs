//! Property: whatever a client does to resend a conversation's results —
//! the same request again (a retry), the history with everything before
//! the model's last turn replaced by one summary message (Claude Code's
//! compaction, a retry with the oldest turns cut: every position moves),
//! or, in the Responses API, the turn as a continuation
//! (`previous_response_id` and the outputs alone) and as the whole
//! history, in either order — each call is counted once, each result once,
//! each failure once, in the store and in `/metrics`.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolwarden_mock_provider::MockOptions;

use super::{
    convo::{Call, Convo, Kind, response_id},
    support::{Harness, Reply, metric, post, tool_counts},
};

/// How a client sends a turn's results again.
#[derive(Debug, Clone, Copy)]
enum Resend {
    /// The same request.
    Same,
    /// The history before the model's last turn summarised in one user
    /// message.
    Summarised,
    /// Responses: the outputs alone after `previous_response_id`.
    Continuation,
}

fn resend() -> impl Strategy<Value = Resend> {
    prop_oneof![
        Just(Resend::Same),
        Just(Resend::Summarised),
        Just(Resend::Continuation)
    ]
}

/// One round: the outcome of each of the model's two calls (failed or
/// not), whether the results go first as a continuation (Responses), and
/// the resends after them.
type Round = ([bool; 2], bool, Vec<Resend>);

fn round() -> impl Strategy<Value = Round> {
    (
        any::<[bool; 2]>(),
        any::<bool>(),
        prop::collection::vec(resend(), 0..4),
    )
}

/// The conversation's list (`messages` or `input`).
fn list(kind: Kind, body: &mut Value) -> &mut Vec<Value> {
    let key = if kind == Kind::Responses {
        "input"
    } else {
        "messages"
    };
    body[key].as_array_mut().expect("conversation list")
}

/// `body` with everything before the model's last turn (the `calls`)
/// replaced by one user message (a Chat system message kept).
fn summarised(kind: Kind, body: &Value, calls: usize) -> Value {
    let mut body = body.clone();
    let items = list(kind, &mut body);
    // The model's turn and the results: one message each (Anthropic), or
    // one assistant message and a result per call (Chat), or an item per
    // call and per result (Responses).
    let tail = match kind {
        Kind::Anthropic => 2,
        Kind::Chat => 1 + calls,
        _ => 2 * calls,
    };
    let keep = items.split_off(items.len() - tail);
    let system = (kind == Kind::Chat).then(|| items[0].clone());
    items.clear();
    items.extend(system);
    items.push(
        json!({"role": "user", "content": "Summary: the user wants a flight to Lisbon booked."}),
    );
    items.extend(keep);
    body
}

async fn send(h: &Harness, convo: &Convo, body: &Value) -> Reply {
    let headers = convo.headers();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = post(&h.client, convo.url(&h.gw()), &headers, body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r
}

async fn run(kind: Kind, rounds: Vec<Round>) {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    let mut h = Harness::with(opts, |_| {}).await;
    let mut convo = Convo::new(kind, false, Some("resent-1"));
    if kind == Kind::Responses {
        // Kept by the API, so that a continuation can name it.
        convo.body["store"] = json!(true);
    }
    let mut failures = 0;
    for (outcomes, continued_first, resends) in &rounds {
        let r = send(&h, &convo, &convo.body).await;
        let calls: Vec<Call> = convo.calls(&r);
        assert_eq!(calls.len(), 2, "{}", r.text());
        let previous = (kind == Kind::Responses).then(|| response_id(false, &r));
        convo.assistant_calls(&calls);
        let texts: Vec<(bool, &str)> = outcomes
            .iter()
            .map(|&failed| {
                if failed {
                    (
                        true,
                        "Error: seat 12A is no longer available for flight TP123",
                    )
                } else {
                    (false, "Found TP123 at 09:40.")
                }
            })
            .collect();
        failures += outcomes.iter().filter(|f| **f).count() as u64;
        convo.results(&calls, &texts);
        let continuation = previous.as_ref().map(|id| {
            let mut body = convo.body.clone();
            let items = list(kind, &mut body);
            let outputs = items.split_off(items.len() - calls.len());
            json!({"model": convo.body["model"], "store": true, "tools": convo.body["tools"],
                "previous_response_id": id, "input": outputs})
        });
        let first = match (&continuation, continued_first) {
            (Some(c), true) => c.clone(),
            _ => convo.body.clone(),
        };
        let mut last = send(&h, &convo, &first).await;
        for how in resends {
            let body = match (how, &continuation) {
                (Resend::Same, _) => first.clone(),
                (Resend::Summarised, _) => summarised(kind, &convo.body, calls.len()),
                (Resend::Continuation, Some(c)) => c.clone(),
                (Resend::Continuation, None) => convo.body.clone(),
            };
            last = send(&h, &convo, &body).await;
        }
        assert!(convo.calls(&last).is_empty(), "{}", last.text());
        convo.assistant_text("Done.");
        convo.user("And the next one?");
    }
    let n = 2 * rounds.len() as u64;
    // A response's calls are counted once its body has ended, which can
    // come after the next request's results on a loaded machine.
    let m = h
        .metrics_when(|m| {
            metric(m, "toolwarden_tool_results_total", &[]) >= n as f64
                && metric(m, "toolwarden_tool_calls_total", &[]) >= n as f64
        })
        .await;
    assert_eq!(
        tool_counts(&m, &[]),
        (n as f64, n as f64, failures as f64),
        "{kind:?} {rounds:?}"
    );
    let stats = h.finish().await;
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let rows = store.session_calls("resent-1").await.unwrap();
    let answered = rows.iter().filter(|r| r.failed.is_some()).count() as u64;
    let failed = rows.iter().filter(|r| r.failed == Some(true)).count() as u64;
    assert_eq!(
        (rows.len() as u64, answered, failed),
        (n, n, failures),
        "{kind:?} {rounds:?}: {rows:#?}"
    );
    let by_tool: u64 = stats.tools.iter().map(|t| t.failures).sum();
    assert_eq!(by_tool, failures, "{:?}", stats.tools);
    store.close().await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn every_result_counts_once_however_it_is_resent(
        kind in prop_oneof![Just(Kind::Anthropic), Just(Kind::Chat), Just(Kind::Responses)],
        rounds in prop::collection::vec(round(), 1..4),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(run(kind, rounds));
    }
}

/// The same turn sent at once as a continuation and as the whole history
/// (a client that retries over another transport before the first
/// attempt's answer): the two copies of each result reach the recorder
/// together, and each counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_sent_twice_at_once_in_two_forms_counts_once() {
    for round in 0..6 {
        let opts = MockOptions {
            calls_per_reply: 2,
            ..MockOptions::default()
        };
        let mut h = Harness::with(opts, |_| {}).await;
        let mut convo = Convo::new(Kind::Responses, false, Some("raced-1"));
        convo.body["store"] = json!(true);
        let r = send(&h, &convo, &convo.body).await;
        let calls = convo.calls(&r);
        let id = response_id(false, &r);
        convo.assistant_calls(&calls);
        convo.results(
            &calls,
            &[
                (false, "Found TP123 at 09:40."),
                (
                    true,
                    "Error: seat 12A is no longer available for flight TP123",
                ),
            ],
        );
        let mut body = convo.body.clone();
        let items = list(Kind::Responses, &mut body);
        let outputs = items.split_off(items.len() - calls.len());
        let continuation = json!({"model": convo.body["model"], "store": true,
            "tools": convo.body["tools"], "previous_response_id": id, "input": outputs});
        let (a, b) = if round % 2 == 0 {
            (continuation, convo.body.clone())
        } else {
            (convo.body.clone(), continuation)
        };
        tokio::join!(send(&h, &convo, &a), send(&h, &convo, &b));
        let m = h
            .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 2.0)
            .await;
        // A late second copy would show within the recorder's flush.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let m2 = h.metrics().await;
        for m in [&m, &m2] {
            assert_eq!(
                (
                    metric(m, "toolwarden_tool_results_total", &[]),
                    metric(m, "toolwarden_tool_failures_total", &[])
                ),
                (2.0, 1.0),
                "round {round}: {m}"
            );
        }
        h.finish().await;
    }
}
