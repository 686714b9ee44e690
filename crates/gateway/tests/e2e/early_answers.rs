//! Answers counted in `/metrics` exactly, with and without a database,
//! when the client's answer comes before the gateway has finished with
//! the response holding its call (the provider keeps the stream open
//! after its final event; a loaded gateway), and when runs of one script
//! reuse a call id (`call_0`, Gemini's `name#0`) with no database to judge
//! them.

use std::time::Duration;

use toolwarden_mock_provider::MockOptions;

use super::{
    convo::{Convo, Kind},
    support::{Harness, metric},
};

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
