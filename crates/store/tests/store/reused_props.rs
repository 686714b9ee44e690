//! Property: two runs of one conversation in one session, both calling
//! `call_0` at the same position with other arguments (another turn
//! fingerprint), run b's call made after run a's answer; each run resends
//! its answer any number of times after giving it (retries), and the
//! events reach the store in batches cut anywhere. Each call counts once,
//! with its own run's answer and verdict.

use std::collections::BTreeMap;

use proptest::prelude::*;
use toolwarden_store::*;

use crate::support::*;

/// The events: times after the first answer for run a's resends, b's
/// answer's delay after its call, times after b's answer for its resends,
/// and where batches end (one flag per event).
type Case = (Vec<u16>, u16, Vec<u16>, Vec<bool>);

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(1..6000u16, 0..4),
        1..3000u16,
        prop::collection::vec(1..3000u16, 0..3),
        prop::collection::vec(any::<bool>(), 12),
    )
}

async fn run((a_resends, b_delay, b_resends, cuts): Case) {
    let db = TestDb::sqlite();
    let store = Store::open(&db.url).await.unwrap();
    let call = |req: &str, turn: i64, at: i64| {
        let mut c = call(req, "s", 0, "call_0", "lookup", at);
        c.turn = Some(turn);
        Event::ToolCall(c)
    };
    let answer = |req: String, turn: i64, failed: bool, at: i64| {
        let mut r = result(&req, "s", "call_0", 2, Some("lookup"), failed, at);
        r.latest_of_its_id = true;
        r.answers = Some(TurnRef {
            turn,
            call_index: 0,
        });
        Event::ToolResult(r)
    };
    let (turn_a, turn_b) = (0x0a0a, 0x0b0b);
    let b_answer = 2000 + i64::from(b_delay);
    let mut events = vec![
        call("a-call", turn_a, 1000),
        answer("a-answer".into(), turn_a, false, 1100),
        call("b-call", turn_b, 2000),
        answer("b-answer".into(), turn_b, true, b_answer),
    ];
    for (k, t) in a_resends.iter().enumerate() {
        events.push(answer(
            format!("a-retry-{k}"),
            turn_a,
            false,
            1100 + i64::from(*t),
        ));
    }
    for (k, t) in b_resends.iter().enumerate() {
        events.push(answer(
            format!("b-retry-{k}"),
            turn_b,
            true,
            b_answer + i64::from(*t),
        ));
    }
    // In time order; a resend at the very time of a call comes after it.
    events.sort_by_key(|e| (e.at_ms(), matches!(e, Event::ToolResult(_))));
    let new_results = new_results_in_batches(&store, events, cuts).await;
    assert_eq!(new_results, 2, "one answer per run");
    let rows = store.session_calls("s").await.unwrap();
    let verdicts: Vec<_> = rows
        .iter()
        .map(|c| (c.request_id.as_deref(), c.failed))
        .collect();
    assert_eq!(
        verdicts,
        [(Some("a-call"), Some(false)), (Some("b-call"), Some(true))],
        "each run's call with its own answer"
    );
    let stats = store.stats(&all()).await.unwrap();
    let expected: BTreeMap<&str, (u64, u64)> = [("lookup", (2, 1))].into_iter().collect();
    assert_eq!(calls_and_failures(&stats), expected);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn interleaved_runs_of_a_reused_id_count_each_answer_once(c in case()) {
        block_on(run(c));
    }
}
