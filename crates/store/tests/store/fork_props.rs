//! Property: a conversation cut after it sent the results of its last
//! turn (any turn, any number of calls in it), forked under a new session
//! id whose first request resends those results as new, then makes calls
//! of its own; with or without an unrelated run of the same first turn
//! that reuses the parent's call ids with other answers (its own calls, or
//! results alone replaying the same turn). The events reach the store in
//! batches cut anywhere. Each call counts once: the parent's, the fork's
//! own, the unrelated run's.

use proptest::prelude::*;
use toolwarden_store::*;

use crate::support::*;

/// Calls per parent turn, the unrelated run (0: none, 1: with its own
/// calls, 2: results alone), the fork's own calls, where batches end.
type Case = (Vec<u32>, u8, u32, Vec<bool>);

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(1..4u32, 1..4),
        0..3u8,
        0..3u32,
        prop::collection::vec(any::<bool>(), 40),
    )
}

const FIRST: i64 = 0x5eed_f1a7;

fn turn_of(k: usize) -> i64 {
    0x7000 + k as i64
}

fn call_id(turn: usize, k: u32) -> String {
    format!("toolu_01Turn{turn}Call{k}AbCdEfGh")
}

/// A result as the gateway makes it: the turn it replays, the first turn
/// of its conversation; `bytes` its size.
fn answer(req: &str, session: &str, turn: usize, k: u32, bytes: u64, at: i64) -> Event {
    let id = call_id(turn, k);
    let mut r = result(
        req,
        session,
        &id,
        10 * turn as u32 + k,
        Some("Read"),
        false,
        at,
    );
    r.content_bytes = bytes;
    r.answers = Some(TurnRef {
        turn: turn_of(turn),
        call_index: k,
    });
    r.first_turn = Some(FIRST);
    Event::ToolResult(r)
}

fn calls(req: &str, session: &str, turn: usize, n: u32, at: i64) -> Vec<Event> {
    (0..n)
        .map(|k| {
            let mut c = call(req, session, k, &call_id(turn, k), "Read", at);
            c.turn = Some(turn_of(turn));
            Event::ToolCall(c)
        })
        .collect()
}

async fn run((turns, other, own, cuts): Case) {
    let db = TestDb::sqlite();
    let store = Store::open(&db.url).await.unwrap();
    let mut events = Vec::new();
    let mut expected = 0;
    // The parent: each turn's calls, then their results (the next
    // request); the model's answer to the last turn's results never came.
    for (t, &n) in turns.iter().enumerate() {
        let at = 1000 * (t as i64 + 1);
        events.extend(calls(&format!("p{t}"), "parent", t, n, at));
        for k in 0..n {
            events.push(answer(&format!("p{}", t + 1), "parent", t, k, 64, at + 500));
        }
        expected += n as usize;
    }
    let last = turns.len() - 1;
    let n_last = turns[last];
    // An unrelated run of the same first turn, the same ids, other answers.
    match other {
        1 => {
            for (t, &n) in turns.iter().enumerate() {
                let at = 10_000 + 1000 * t as i64;
                events.extend(calls(&format!("o{t}"), "other", t, n, at));
                for k in 0..n {
                    events.push(answer(&format!("o{}", t + 1), "other", t, k, 65, at + 500));
                }
                expected += n as usize;
            }
        }
        2 => {
            for k in 0..n_last {
                events.push(answer("o1", "other", last, k, 65, 10_000));
            }
            expected += n_last as usize;
        }
        _ => {}
    }
    // The fork: its first request resends the last turn's results as new;
    // then its own turns.
    for k in 0..n_last {
        events.push(answer("f0", "fork", last, k, 64, 20_000));
    }
    for j in 0..own as usize {
        let t = 100 + j;
        let at = 20_000 + 1000 * (j as i64 + 1);
        events.extend(calls(&format!("f{}", j + 1), "fork", t, 1, at));
        events.push(answer(&format!("f{}", j + 2), "fork", t, 0, 64, at + 500));
        expected += 1;
    }
    let new_results = new_results_in_batches(&store, events, cuts).await;
    assert_eq!(new_results, expected, "each call's answer once");
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(stats.totals.calls, expected as u64, "one call row each");
    let parent = store.session_calls("parent").await.unwrap();
    assert!(
        parent.iter().all(|c| c.content_bytes == Some(64)),
        "the parent's calls keep their answers: {parent:?}"
    );
    store.close().await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_forks_resent_results_count_once_at_any_cut(c in case()) {
        block_on(run(c));
    }
}
