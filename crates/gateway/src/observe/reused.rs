//! [`ReusedIds`]: whether an answer under a call id that is not unique
//! (`call_0` every run, Gemini's `name#0`) is a resend or another run's
//! answer, when no store judges it (no database, or a result folded into
//! the recorder's counts).
//!
//! Two kinds of entries, in one bounded [`Generations`] map, each holding
//! a number from one counter (so "after" means registered after, whatever
//! the clock's resolution):
//! - a call of such an id in a session, `(session, id)`: when its newest
//!   call was recorded (at its response's final event or end, before the
//!   client can have it: see `observe::calls`);
//! - an answer, `(session, id, message index)`: when it was counted.
//!
//! An answer is a resend when its key is held and no call of its id came
//! after it; else it is new (another run's call of the id came since),
//! and its key then names it. Each counted answer renews its call's entry,
//! so a call is never forgotten before an answer that names it: past the
//! bound (`recent_results_capacity` entries per generation, two
//! generations), what is forgotten is the oldest answers, whose resends
//! then count again — as any result's key forgotten so.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::generations::{Generations, KeyHasher};

/// Calls and answers under ids that are not unique.
#[derive(Debug)]
pub(crate) struct ReusedIds {
    state: Mutex<State>,
    hasher: KeyHasher,
}

#[derive(Debug)]
struct State {
    entries: Generations<u64>,
    /// The last number given.
    counter: u64,
}

/// What an answer's key is made of; `None` as the index names its call.
type Key<'a> = (&'a str, &'a str, Option<usize>);

impl ReusedIds {
    /// An empty map keeping up to `capacity` entries per generation.
    pub(crate) fn new(capacity: usize) -> ReusedIds {
        ReusedIds {
            state: Mutex::new(State {
                entries: Generations::new(capacity),
                counter: 0,
            }),
            hasher: KeyHasher::new(),
        }
    }

    fn key(&self, key: Key<'_>) -> u128 {
        self.hasher.key(&key)
    }

    /// A call of `call_id` in `session` was recorded now.
    pub(crate) fn call(&self, session: &str, call_id: &str) {
        let key = self.key((session, call_id, None));
        let mut state = self.lock();
        state.counter += 1;
        let at = state.counter;
        state.entries.insert(key, at);
    }

    /// Whether the answer to `call_id` at `message_index` of `session` was
    /// counted already, and no call of its id came since: a resend.
    pub(crate) fn is_resent(&self, session: &str, call_id: &str, message_index: usize) -> bool {
        let answer = self.key((session, call_id, Some(message_index)));
        let call = self.key((session, call_id, None));
        let state = self.lock();
        match state.entries.get(answer) {
            None => false,
            Some(&answered) => state.entries.get(call).is_none_or(|&at| at < answered),
        }
    }

    /// The answer to `call_id` at `message_index` of `session` was counted
    /// now: its key names it, and its call is renewed with it.
    pub(crate) fn answered(&self, session: &str, call_id: &str, message_index: usize) {
        let answer = self.key((session, call_id, Some(message_index)));
        let call = self.key((session, call_id, None));
        let mut state = self.lock();
        state.counter += 1;
        let at = state.counter;
        let called = state.entries.get(call).copied();
        state.entries.insert(answer, at);
        if let Some(called) = called {
            state.entries.insert(call, called);
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_runs_answer_is_new_and_its_resend_is_not() {
        let ids = ReusedIds::new(64);
        ids.call("s", "call_0");
        assert!(!ids.is_resent("s", "call_0", 2));
        ids.answered("s", "call_0", 2);
        assert!(ids.is_resent("s", "call_0", 2), "the same request again");
        assert!(!ids.is_resent("s", "call_0", 4), "another position");
        assert!(!ids.is_resent("t", "call_0", 2), "another session");
        // The next run of the script: its call, then its answer.
        ids.call("s", "call_0");
        assert!(!ids.is_resent("s", "call_0", 2));
        ids.answered("s", "call_0", 2);
        assert!(ids.is_resent("s", "call_0", 2));
    }

    #[test]
    fn an_answer_is_forgotten_before_the_call_it_names() {
        let ids = ReusedIds::new(2);
        ids.call("s", "call_0");
        ids.answered("s", "call_0", 2);
        // Other sessions' calls and answers fill the generations, but the
        // call is renewed with its answer: while the answer is held, so
        // is the call, and a new run's call is told from a resend.
        for k in 0..3 {
            ids.call(&format!("o{k}"), "call_0");
            ids.answered(&format!("o{k}"), "call_0", 2);
            let (held, called) = {
                let state = ids.lock();
                (
                    state
                        .entries
                        .get(ids.key(("s", "call_0", Some(2))))
                        .is_some(),
                    state.entries.get(ids.key(("s", "call_0", None))).is_some(),
                )
            };
            assert!(
                !held || called,
                "round {k}: an answer held without its call"
            );
        }
        // Past the bound the answer is forgotten: its resend counts again.
        assert!(!ids.is_resent("s", "call_0", 2));
    }
}
