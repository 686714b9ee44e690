//! [`Awaiting`]: the calls a voice socket's model made and its client has
//! not answered yet, kept so that each result is read beside its call (its
//! tool's name, its arguments for the turn's fingerprint). Bounded in
//! count and bytes: the oldest is forgotten first (its result is then read
//! alone, its name found as over HTTP), and a call larger than the byte
//! bound is not kept.

use std::collections::VecDeque;

use super::message::ToolCall;
use crate::limits::clip_id;

/// Calls remembered until their results come, per socket.
pub(crate) const MAX_AWAITING: usize = 256;
/// Bytes of ids, names and arguments those calls may hold, per socket.
pub(crate) const MAX_AWAITING_BYTES: usize = 4 << 20;

/// The calls of one Realtime response awaited already, from their
/// `response.output_item.done`: its `response.done`, which repeats them,
/// does not await them again (one may have been answered meanwhile). At
/// most [`MAX_AWAITING`] ids, each clipped (`limits::clip_id`).
#[derive(Debug, Default)]
pub(crate) struct AwaitedOnce {
    ids: Vec<Box<str>>,
}

/// Calls not answered yet, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Awaiting {
    calls: VecDeque<ToolCall>,
    /// Their bytes ([`size_of_call`]).
    bytes: usize,
    /// The bounds (the constants, smaller in tests).
    limits: (usize, usize),
}

// === impl Awaiting ===

impl Awaiting {
    /// None yet, bounded by [`MAX_AWAITING`] and [`MAX_AWAITING_BYTES`].
    pub(crate) fn new() -> Awaiting {
        Awaiting::with_limits(MAX_AWAITING, MAX_AWAITING_BYTES)
    }

    /// None yet, at most `count` calls of at most `bytes` in all.
    pub(crate) fn with_limits(count: usize, bytes: usize) -> Awaiting {
        Awaiting {
            calls: VecDeque::new(),
            bytes: 0,
            limits: (count, bytes),
        }
    }

    /// How many are kept.
    pub(crate) fn len(&self) -> usize {
        self.calls.len()
    }

    /// The call `call_id` names, no longer awaited.
    pub(crate) fn take(&mut self, call_id: &str) -> Option<ToolCall> {
        let at = self.calls.iter().position(|c| c.call_id == call_id)?;
        let call = self.calls.remove(at)?;
        self.bytes -= size_of_call(&call);
        Some(call)
    }

    /// Calls to await results for.
    pub(crate) fn push(&mut self, calls: Vec<ToolCall>) {
        let (max_count, max_bytes) = self.limits;
        for call in calls {
            let size = size_of_call(&call);
            if size > max_bytes || max_count == 0 {
                continue;
            }
            while self.calls.len() >= max_count || self.bytes + size > max_bytes {
                match self.calls.pop_front() {
                    Some(old) => self.bytes -= size_of_call(&old),
                    None => break,
                }
            }
            self.bytes += size;
            self.calls.push_back(call);
        }
    }

    /// Calls a cancellation names, no longer awaited.
    pub(crate) fn cancel(&mut self, ids: &[String]) {
        let before = std::mem::take(&mut self.calls);
        self.bytes = 0;
        for call in before {
            if !ids.contains(&call.call_id) {
                self.bytes += size_of_call(&call);
                self.calls.push_back(call);
            }
        }
    }
}

// === impl AwaitedOnce ===

impl AwaitedOnce {
    /// Whether `call_id` is new to the response (then it is noted).
    pub(crate) fn first(&mut self, call_id: &str) -> bool {
        let id = clip_id(call_id);
        if self.ids.iter().any(|c| **c == *id) {
            return false;
        }
        if self.ids.len() < MAX_AWAITING {
            self.ids.push(id.into());
        }
        true
    }

    /// `calls` without those awaited already.
    pub(crate) fn new_ones(&self, mut calls: Vec<ToolCall>) -> Vec<ToolCall> {
        calls.retain(|c| {
            let id = clip_id(&c.call_id);
            !self.ids.iter().any(|c| **c == *id)
        });
        calls
    }
}

/// What a remembered call holds, in bytes.
fn size_of_call(call: &ToolCall) -> usize {
    call.call_id.len() + call.name.len() + call.arguments.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, args: usize) -> ToolCall {
        ToolCall {
            call_id: id.into(),
            name: "f".into(),
            arguments: "x".repeat(args).into(),
        }
    }

    #[test]
    fn the_oldest_goes_first_past_either_bound_and_a_huge_call_is_not_kept() {
        let mut a = Awaiting::with_limits(3, 100);
        a.push(vec![
            call("a", 10),
            call("b", 10),
            call("c", 10),
            call("d", 10),
        ]);
        assert_eq!(a.len(), 3);
        assert!(a.take("a").is_none(), "the oldest, forgotten");
        // 3 × 12 bytes kept; 82 more pass 100 until the two oldest go.
        a.push(vec![call("e", 80)]);
        assert_eq!(a.len(), 2);
        assert!(a.take("b").is_none() && a.take("c").is_none());
        assert!(a.take("d").is_some());
        a.push(vec![call("huge", 200)]);
        assert!(a.take("huge").is_none());
        assert_eq!(a.take("e").map(|c| c.arguments.len()), Some(80));
        assert_eq!((a.len(), a.bytes), (0, 0));
    }

    #[test]
    fn a_call_awaited_from_its_item_is_not_awaited_again_from_its_response() {
        let mut once = AwaitedOnce::default();
        let mut a = Awaiting::new();
        // `response.output_item.done`, twice: awaited once.
        for _ in 0..2 {
            if once.first("a") {
                a.push(vec![call("a", 1)]);
            }
        }
        assert_eq!(a.len(), 1);
        // Answered before `response.done`, which repeats it beside a call
        // it alone holds.
        assert!(a.take("a").is_some());
        a.push(once.new_ones(vec![call("a", 1), call("b", 1)]));
        assert!(a.take("a").is_none(), "not awaited again");
        assert!(a.take("b").is_some());
        // Ids past the bound are clipped as the response's ids are.
        let long = "x".repeat(10_000);
        assert!(once.first(&long));
        assert!(!once.first(&long));
    }

    #[test]
    fn a_cancellation_forgets_the_calls_it_names() {
        let mut a = Awaiting::new();
        a.push(vec![call("a", 1), call("b", 2), call("c", 3)]);
        a.cancel(&["b".to_string(), "z".to_string()]);
        assert_eq!(a.len(), 2);
        assert!(a.take("b").is_none());
        assert_eq!(
            a.bytes,
            size_of_call(&call("a", 1)) + size_of_call(&call("c", 3))
        );
    }
}
