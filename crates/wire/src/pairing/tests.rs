use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

fn call(msg: usize, id: &str) -> CallSite {
    CallSite { msg, id: id.into() }
}
fn result(msg: usize, id: &str) -> ResultSite {
    ResultSite {
        msg,
        pos: 0,
        id: id.into(),
    }
}
/// The Anthropic slot: the message right after the call's.
fn next_message(c: &CallSite) -> Range<usize> {
    c.msg + 1..c.msg + 2
}

#[test]
fn slots_first_then_nearest_then_duplicates_and_orphans() {
    let calls = [call(1, "a"), call(3, "a"), call(3, "b")];
    let results = [
        result(2, "a"), // in the slot of call 0
        result(4, "z"), // orphan
        result(6, "a"), // moved: goes to the latest unanswered "a" before it
        result(7, "a"), // duplicate
    ];
    let plan = assign(&calls, &results, next_message);
    assert_eq!(plan.answer, vec![Some(0), Some(2), None]);
    assert_eq!(
        plan.fate,
        vec![
            Fate::Answers(0),
            Fate::Orphan,
            Fate::Answers(1),
            Fate::Duplicate
        ]
    );
}

#[test]
fn fresh_ids_skip_taken_and_given_names() {
    let mut fresh = FreshIds::new(["a", "a_dup1", "a_dup3", "b"]);
    assert_eq!(fresh.next("a"), "a_dup2");
    assert_eq!(fresh.next("b"), "b_dup1");
    assert_eq!(fresh.next("a"), "a_dup4");
    assert_eq!(fresh.next("a"), "a_dup5");
    // A repeated renamed id probes among its own names.
    assert_eq!(fresh.next("a_dup2"), "a_dup2_dup1");
}

#[test]
fn a_result_before_its_call_goes_forward() {
    let calls = [call(3, "a")];
    let results = [result(0, "a")];
    let plan = assign(&calls, &results, next_message);
    assert_eq!(plan.fate, vec![Fate::Answers(0)]);
}

/// The assignment as it was before the cursors: a search of the id's calls
/// per result (O(n²) when many turns reuse one id). The reference that
/// [`assign`] must agree with.
fn assign_by_search(
    calls: &[CallSite],
    results: &[ResultSite],
    slot: impl Fn(&CallSite) -> Range<usize>,
) -> Plan {
    let in_slot = |c: &CallSite, r: &ResultSite| slot(c).contains(&r.msg);
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, c) in calls.iter().enumerate() {
        by_id.entry(c.id.as_str()).or_default().push(i);
    }
    let mut answer: Vec<Option<usize>> = vec![None; calls.len()];
    let mut fate: Vec<Option<Fate>> = vec![None; results.len()];
    for (ri, r) in results.iter().enumerate() {
        let Some(cands) = by_id.get(r.id.as_str()) else {
            continue;
        };
        if let Some(&ci) = cands
            .iter()
            .find(|&&ci| answer[ci].is_none() && in_slot(&calls[ci], r))
        {
            answer[ci] = Some(ri);
            fate[ri] = Some(Fate::Answers(ci));
        }
    }
    for (ri, r) in results.iter().enumerate() {
        if fate[ri].is_some() {
            continue;
        }
        let Some(cands) = by_id.get(r.id.as_str()) else {
            fate[ri] = Some(Fate::Orphan);
            continue;
        };
        let before = cands
            .iter()
            .rev()
            .find(|&&ci| answer[ci].is_none() && calls[ci].msg < r.msg);
        let after = cands
            .iter()
            .find(|&&ci| answer[ci].is_none() && calls[ci].msg >= r.msg);
        match before.or(after) {
            Some(&ci) => {
                answer[ci] = Some(ri);
                fate[ri] = Some(Fate::Answers(ci));
            }
            None => fate[ri] = Some(Fate::Duplicate),
        }
    }
    Plan {
        answer,
        fate: fate
            .into_iter()
            .map(|f| f.unwrap_or(Fate::Orphan))
            .collect(),
    }
}

/// A conversation's messages, as the repairs see them: an assistant
/// message's call ids, or a user / tool message's result ids (a Chat tool
/// message has one), from a few ids so that they repeat.
#[derive(Debug, Clone)]
enum Message {
    Assistant(Vec<u8>),
    Results(Vec<u8>),
}

fn messages() -> impl Strategy<Value = Vec<Message>> {
    let ids = || prop::collection::vec(0u8..4, 0..4);
    prop::collection::vec(
        prop_oneof![
            ids().prop_map(Message::Assistant),
            ids().prop_map(Message::Results)
        ],
        0..24,
    )
}

/// The calls and results of `messages`, in message order.
fn sites(messages: &[Message]) -> (Vec<CallSite>, Vec<ResultSite>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    for (msg, m) in messages.iter().enumerate() {
        match m {
            Message::Assistant(ids) => {
                calls.extend(ids.iter().map(|id| call(msg, &format!("c{id}"))));
            }
            Message::Results(ids) => {
                for (pos, id) in ids.iter().enumerate() {
                    results.push(ResultSite {
                        msg,
                        pos,
                        id: format!("c{id}"),
                    });
                }
            }
        }
    }
    (calls, results)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The cursors give the plan the search gave, with the slots of both
    /// dialects that repair by it: Anthropic's (the next message, if it
    /// holds results) and Chat's (the run of result messages after the
    /// call's).
    #[test]
    fn cursors_plan_as_the_search_did(messages in messages()) {
        let (calls, results) = sites(&messages);
        let is_results = |i: usize| matches!(messages.get(i), Some(Message::Results(_)));
        let anthropic = |c: &CallSite| {
            let end = if is_results(c.msg + 1) { c.msg + 2 } else { c.msg + 1 };
            c.msg + 1..end
        };
        let run_end = run_ends(&messages);
        let chat = |c: &CallSite| c.msg + 1..run_end[c.msg] + 1;
        for (name, new, old) in [
            ("anthropic", assign(&calls, &results, anthropic), assign_by_search(&calls, &results, anthropic)),
            ("chat", assign(&calls, &results, chat), assign_by_search(&calls, &results, chat)),
        ] {
            prop_assert_eq!(&new.answer, &old.answer, "{}", name);
            prop_assert_eq!(&new.fate, &old.fate, "{}", name);
        }
    }
}

/// Per message, the last index of the run of result messages right after
/// it (itself when none), as Chat's layout computes it.
fn run_ends(messages: &[Message]) -> Vec<usize> {
    let mut ends = vec![0; messages.len()];
    for i in (0..messages.len()).rev() {
        ends[i] = match messages.get(i + 1) {
            Some(Message::Results(_)) => ends[i + 1],
            _ => i,
        };
    }
    ends
}
