//! Which result answers which call: the plan a repair follows.
//!
//! Dialect-neutral: calls and results are given by message index and id;
//! the dialect says which positions are a call's *slot* (where its result
//! belongs). A result in its call's slot stays; any other result goes to the
//! latest unanswered call with its id before it (else the earliest after
//! it); a second result for an answered call is a duplicate; a result whose
//! id no call has is an orphan.

use std::ops::Range;

use ahash::{AHashMap, AHashSet};

/// What an inserted result says (the dialect adds its error flag or framing).
pub(crate) const MISSING_RESULT_TEXT: &str = "No result was recorded for this tool call: the tool did not run or its output was lost. Do not assume it succeeded.";

/// What an error result with nothing in it is given (Anthropic refuses it
/// empty: "content cannot be empty if `is_error` is true"; Bedrock Converse
/// too: "… cannot be empty when status value is error.").
pub(crate) const EMPTY_ERROR_TEXT: &str = "The tool reported an error and gave no message.";

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
/// before, and no longer than the dialect's API takes (the id cut short
/// before `_dup{n}` when it would be).
///
/// A client controls how many repeats a body holds, so nothing here is a
/// search: names are kept in sets, and each id remembers where its probing
/// stopped. Resuming there gives the same names as probing from 1 again,
/// as the names it skipped stay taken.
pub(crate) struct FreshIds<'a> {
    taken: AHashSet<&'a str>,
    given: AHashSet<String>,
    /// The longest id the dialect's API takes, bytes.
    max_len: usize,
    /// Per id, the next `n` to try.
    next: AHashMap<&'a str, usize>,
}

/// The calls of one id, in order, and where [`assign`] stands in them.
#[derive(Default)]
struct SameId {
    calls: Vec<usize>,
    /// Before it, every call is answered or its slot is behind the
    /// results to come (results kept in their slots).
    in_slot: usize,
    /// How many of the calls are in messages before the current result.
    passed: usize,
    /// The unanswered calls among the passed ones, latest last.
    before: Vec<usize>,
    /// Between `passed` and it, every call is answered.
    after: usize,
}

/// Pair results with calls; `slot(call)` is the range of messages whose
/// results sit where the call's result belongs.
///
/// The callers' bodies give calls and results in message order, and slots
/// that never move back (a later call's slot starts and ends no earlier):
/// so each id keeps cursors into its calls, and nothing is a search. A
/// client controls how many turns reuse one id (searching a result's
/// calls was O(n²) in them).
pub(crate) fn assign(
    calls: &[CallSite],
    results: &[ResultSite],
    slot: impl Fn(&CallSite) -> Range<usize>,
) -> Plan {
    debug_assert!(calls.windows(2).all(|w| w[0].msg <= w[1].msg));
    debug_assert!(results.windows(2).all(|w| w[0].msg <= w[1].msg));
    let mut index: AHashMap<&str, usize> = AHashMap::new();
    let mut ids: Vec<SameId> = Vec::new();
    let mut slots = Vec::with_capacity(calls.len());
    for (ci, c) in calls.iter().enumerate() {
        let at = *index.entry(c.id.as_str()).or_insert_with(|| {
            ids.push(SameId::default());
            ids.len() - 1
        });
        ids[at].calls.push(ci);
        slots.push(slot(c));
    }
    let id_of: Vec<Option<usize>> = results
        .iter()
        .map(|r| index.get(r.id.as_str()).copied())
        .collect();
    let mut answer: Vec<Option<usize>> = vec![None; calls.len()];
    let mut fate: Vec<Option<Fate>> = vec![None; results.len()];
    // Results already in their call's slot stay there: the first
    // unanswered call of their id whose slot holds them.
    for (ri, r) in results.iter().enumerate() {
        let Some(same) = id_of[ri].map(|at| &mut ids[at]) else {
            continue;
        };
        while let Some(&ci) = same.calls.get(same.in_slot) {
            let s = &slots[ci];
            if answer[ci].is_some() || s.end <= r.msg {
                // Answered, or its slot is behind this result and so
                // behind every later one.
                same.in_slot += 1;
            } else {
                if s.start <= r.msg {
                    answer[ci] = Some(ri);
                    fate[ri] = Some(Fate::Answers(ci));
                    same.in_slot += 1;
                }
                break;
            }
        }
    }
    // The others go to the nearest unanswered call with their id: the
    // latest before them, else the earliest after.
    for (ri, r) in results.iter().enumerate() {
        if fate[ri].is_some() {
            continue;
        }
        let Some(same) = id_of[ri].map(|at| &mut ids[at]) else {
            fate[ri] = Some(Fate::Orphan);
            continue;
        };
        while let Some(&ci) = same.calls.get(same.passed)
            && calls[ci].msg < r.msg
        {
            if answer[ci].is_none() {
                same.before.push(ci);
            }
            same.passed += 1;
        }
        same.after = same.after.max(same.passed);
        while same
            .calls
            .get(same.after)
            .is_some_and(|&ci| answer[ci].is_some())
        {
            same.after += 1;
        }
        let chosen = same.before.pop().or_else(|| {
            let ci = same.calls.get(same.after).copied()?;
            same.after += 1;
            Some(ci)
        });
        match chosen {
            Some(ci) => {
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
    /// Names to avoid: every id of the body; `max_len`: the longest id
    /// the dialect's API takes (OpenAI's Chat Completions refuses a
    /// `tool_calls[].id` over 40 characters: "string too long").
    pub fn new(max_len: usize, taken: impl IntoIterator<Item = &'a str>) -> Self {
        FreshIds {
            taken: taken.into_iter().collect(),
            given: AHashSet::new(),
            max_len,
            next: AHashMap::new(),
        }
    }

    /// The first free `{id}_dup{n}`, now no longer free; `id` cut at its
    /// end (at a character's boundary) when the name would be longer than
    /// the API takes.
    pub fn next(&mut self, id: &'a str) -> String {
        let n = self.next.entry(id).or_insert(1);
        loop {
            let candidate = suffixed(id, &format!("_dup{n}"), self.max_len);
            *n += 1;
            if !self.taken.contains(candidate.as_str()) && !self.given.contains(&candidate) {
                self.given.insert(candidate.clone());
                return candidate;
            }
        }
    }
}

/// `{id}{suffix}`, the id cut at its end (at a character's boundary) when
/// the name would be longer than `max_len` bytes (the API's limit).
pub(crate) fn suffixed(id: &str, suffix: &str, max_len: usize) -> String {
    let mut keep = id.len().min(max_len.saturating_sub(suffix.len()));
    while !id.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}{suffix}", &id[..keep])
}

#[cfg(test)]
mod tests;
