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
    let mut fresh = FreshIds::new(40, ["a", "a_dup1", "a_dup3", "b"]);
    assert_eq!(fresh.next("a"), "a_dup2");
    assert_eq!(fresh.next("b"), "b_dup1");
    assert_eq!(fresh.next("a"), "a_dup4");
    assert_eq!(fresh.next("a"), "a_dup5");
    // A repeated renamed id probes among its own names.
    assert_eq!(fresh.next("a_dup2"), "a_dup2_dup1");
}

proptest::proptest! {
    /// A fresh name is never longer than the API takes, even for an id
    /// already at (or past) the limit, and never an id of the body or a
    /// name given before; an id with room keeps its whole self.
    #[test]
    fn fresh_ids_stay_within_the_limit(
        ids in proptest::collection::vec("[a-zé_]{0,50}", 1..8),
        max_len in 8usize..70,
        draws in 1usize..12,
    ) {
        let taken: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut fresh = FreshIds::new(max_len, taken.iter().copied());
        let mut given = std::collections::HashSet::new();
        for k in 0..draws {
            let id = taken[k % taken.len()];
            let name = fresh.next(id);
            proptest::prop_assert!(name.len() <= max_len, "{name} over {max_len}");
            proptest::prop_assert!(!taken.contains(&name.as_str()), "{name} taken");
            proptest::prop_assert!(given.insert(name.clone()), "{name} given twice");
            let (stem, n) = name.rsplit_once("_dup").unwrap();
            proptest::prop_assert!(id.starts_with(stem));
            if id.len() + "_dup".len() + n.len() <= max_len {
                proptest::prop_assert_eq!(stem, id);
            }
        }
    }
}

/// OpenAI's Chat Completions refuses a `tool_calls[].id` over 40
/// characters: a long id repeated is renamed within them.
#[test]
fn a_long_id_is_cut_before_its_suffix() {
    let id = "call_0123456789abcdefghijklmnopqrstuvwxyz";
    assert_eq!(id.len(), 41);
    let mut fresh = FreshIds::new(40, [id]);
    assert_eq!(fresh.next(id), "call_0123456789abcdefghijklmnopqrst_dup1");
    assert_eq!(fresh.next(id), "call_0123456789abcdefghijklmnopqrst_dup2");
    let mut fresh = FreshIds::new(12, ["éééé"]);
    // Cut at a character's boundary: 12 - 5 = 7 bytes keep 3 of them.
    assert_eq!(fresh.next("éééé"), "ééé_dup1");
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
