//! Which result answers which call: the plan a repair follows.
//!
//! Dialect-neutral: calls and results are given by message index and id;
//! the dialect says which positions are a call's *slot* (where its result
//! belongs). A result in its call's slot stays; any other result goes to the
//! latest unanswered call with its id before it (else the earliest after
//! it); a second result for an answered call is a duplicate; a result whose
//! id no call has is an orphan.

use std::collections::HashMap;

use ahash::{AHashMap, AHashSet};

/// What an inserted result says (the dialect adds its error flag or framing).
pub(crate) const MISSING_RESULT_TEXT: &str = "No result was recorded for this tool call: the tool did not run or its output was lost. Do not assume it succeeded.";

/// A tool call, located.
#[derive(Debug, Clone)]
pub(crate) struct CallSite {
    /// Message index.
    pub msg: usize,
    /// The call id (after any renaming of duplicates).
    pub id: String,
}

/// A tool result, located.
#[derive(Debug, Clone)]
pub(crate) struct ResultSite {
    /// Message index.
    pub msg: usize,
    /// Position inside the message (block index; 0 for whole messages).
    pub pos: usize,
    /// The id of the call it answers (after any renaming).
    pub id: String,
}

/// What becomes of a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// It answers this call (index into the calls).
    Answers(usize),
    /// Its call is already answered: drop it.
    Duplicate,
    /// No call has its id.
    Orphan,
}

/// The assignment: per call, the index of its result (if any); per result,
/// its fate.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub answer: Vec<Option<usize>>,
    pub fate: Vec<Fate>,
}

/// Fresh names for repeated call ids: the first free `{id}_dup{n}`, n from
/// 1, free meaning neither an id of the body (`taken`) nor a name given
/// before.
///
/// A client controls how many repeats a body holds, so nothing here is a
/// search: names are kept in sets, and each id remembers where its probing
/// stopped. Resuming there gives the same names as probing from 1 again,
/// as the names it skipped stay taken.
pub(crate) struct FreshIds<'a> {
    taken: AHashSet<&'a str>,
    given: AHashSet<String>,
    /// Per id, the next `n` to try.
    next: AHashMap<&'a str, usize>,
}

/// Pair results with calls; `in_slot(call, result)` says whether the result
/// sits where the call's result belongs.
pub(crate) fn assign(
    calls: &[CallSite],
    results: &[ResultSite],
    in_slot: impl Fn(&CallSite, &ResultSite) -> bool,
) -> Plan {
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, c) in calls.iter().enumerate() {
        by_id.entry(c.id.as_str()).or_default().push(i);
    }
    let mut answer: Vec<Option<usize>> = vec![None; calls.len()];
    let mut fate: Vec<Option<Fate>> = vec![None; results.len()];
    // Results already in their call's slot stay there.
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
    // The others go to the nearest unanswered call with their id.
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

// === impl FreshIds ===

impl<'a> FreshIds<'a> {
    /// Names to avoid: every id of the body.
    pub fn new(taken: impl IntoIterator<Item = &'a str>) -> Self {
        FreshIds {
            taken: taken.into_iter().collect(),
            given: AHashSet::new(),
            next: AHashMap::new(),
        }
    }

    /// The first free `{id}_dup{n}`, now no longer free.
    pub fn next(&mut self, id: &'a str) -> String {
        let n = self.next.entry(id).or_insert(1);
        loop {
            let candidate = format!("{id}_dup{n}");
            *n += 1;
            if !self.taken.contains(candidate.as_str()) && !self.given.contains(&candidate) {
                self.given.insert(candidate.clone());
                return candidate;
            }
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn slots_first_then_nearest_then_duplicates_and_orphans() {
        let calls = [call(1, "a"), call(3, "a"), call(3, "b")];
        let results = [
            result(6, "a"), // moved: goes to the latest unanswered "a" before it
            result(2, "a"), // in the slot of call 0
            result(2, "a"), // duplicate
            result(4, "z"), // orphan
        ];
        let plan = assign(&calls, &results, |c, r| r.msg == c.msg + 1);
        assert_eq!(plan.answer, vec![Some(1), Some(0), None]);
        assert_eq!(
            plan.fate,
            vec![
                Fate::Answers(1),
                Fate::Answers(0),
                Fate::Duplicate,
                Fate::Orphan
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
        let plan = assign(&calls, &results, |c, r| r.msg == c.msg + 1);
        assert_eq!(plan.fate, vec![Fate::Answers(0)]);
    }
}
