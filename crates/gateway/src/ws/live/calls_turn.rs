//! [`CallsTurn`]: a Gemini Live `toolCall` turn, kept until the
//! `usageMetadata` of its generation comes, with the results its client
//! sends meanwhile held back (bounded) so that they are read once its calls
//! are recorded, as an HTTP request's results come after the response
//! whose calls they answer.
//!
//! The server sends a generation's usage in a message of its own after its
//! `toolCall`; a client that answers at once sends its results before that
//! message arrives. The model's next generation begins only once the server
//! has the results, so the first server message after them tells whose the
//! usage is: a `usageMetadata` is the `toolCall` generation's; anything
//! else (the next generation's audio or text, another `toolCall`) means it
//! sent none, and the turn is recorded without.

use bytes::Bytes;

use super::message::{self, LiveUsage, ToolResult};
use crate::observe::Observation;

/// Bytes of results (ids, names, outputs) one socket holds back while its
/// `toolCall` turn waits for its usage: past it, the turn is recorded
/// without its usage, and its results read at once.
pub(crate) const MAX_HELD_BYTES: usize = 1 << 20;

/// A Gemini `toolCall` turn waiting for its usage: at most one per socket.
pub(super) struct CallsTurn {
    observation: Observation,
    /// Its `functionCall` parts.
    parts: Bytes,
    /// Results sent since.
    held: HeldResults,
}

/// Results held back, each message's with when it came; bounded by
/// [`MAX_HELD_BYTES`].
#[derive(Default)]
struct HeldResults {
    held: Vec<Held>,
    /// Their bytes ([`size_of`]).
    bytes: usize,
}

/// One client message's results, held back.
pub(super) struct Held {
    pub(super) results: Vec<ToolResult>,
    /// When they were sent (unix ms): their request's time.
    pub(super) at_ms: i64,
}

// === impl CallsTurn ===

impl CallsTurn {
    /// The turn `observation` follows, whose calls were whole at
    /// `called_at_ms` (their time, from which their results' execution
    /// time counts, however late its usage comes).
    pub(super) fn new(mut observation: Observation, parts: Bytes, called_at_ms: i64) -> CallsTurn {
        observation.calls_whole_at(called_at_ms);
        CallsTurn {
            observation,
            parts,
            held: HeldResults::default(),
        }
    }

    /// A generation without calls (text, audio), `usage` its tokens.
    pub(super) fn without_calls(observation: Observation, usage: LiveUsage) {
        let turn = CallsTurn {
            observation,
            parts: Bytes::new(),
            held: HeldResults::default(),
        };
        turn.finish(Some(usage));
    }

    /// Hold `results` (sent at `at_ms`) until the turn is recorded; given
    /// back when they would pass [`MAX_HELD_BYTES`].
    pub(super) fn hold(
        &mut self,
        results: Vec<ToolResult>,
        at_ms: i64,
    ) -> Result<(), Vec<ToolResult>> {
        self.held.hold(results, at_ms)
    }

    /// Whether its client has answered: the next server message ends the
    /// wait for its usage.
    pub(super) fn answered(&self) -> bool {
        !self.held.held.is_empty()
    }

    /// Recorded as a `generateContent` response with `usage`; the results
    /// held back, to be read now, in the order sent.
    pub(super) fn finish(mut self, usage: Option<LiveUsage>) -> Vec<Held> {
        self.observation
            .feed(&message::generate_content(&self.parts, usage));
        self.observation.finish();
        self.held.held
    }
}

// === impl HeldResults ===

impl HeldResults {
    fn hold(&mut self, results: Vec<ToolResult>, at_ms: i64) -> Result<(), Vec<ToolResult>> {
        let size: usize = results.iter().map(size_of).sum();
        if self.bytes + size > MAX_HELD_BYTES {
            return Err(results);
        }
        self.bytes += size;
        self.held.push(Held { results, at_ms });
        Ok(())
    }
}

/// What a held result holds, in bytes: the result itself and its strings,
/// each with the least an allocation takes ([`MIN_ALLOCATION`]), so that a
/// message of many empty results (`{}` with no id) counts what it keeps,
/// not the few bytes of its text.
fn size_of(r: &ToolResult) -> usize {
    let string = |len: usize| len.max(MIN_ALLOCATION);
    std::mem::size_of::<ToolResult>()
        + string(r.call_id.len())
        + r.name.as_deref().map_or(0, |n| string(n.len()))
        + string(r.output.len())
}

/// The least a string's allocation takes (jemalloc's smallest size
/// class; an empty string allocates nothing, so this overcounts it).
const MIN_ALLOCATION: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_past_the_bound_are_given_back_and_the_rest_kept_in_order() {
        let mut held = HeldResults::default();
        let result = |n: usize| ToolResult {
            call_id: "c".into(),
            name: Some("f".into()),
            output: "x".repeat(n).into(),
        };
        // A result of n output bytes (n ≥ 8) counts the struct, 8 + 8 for
        // its one-byte id and name, and n.
        let fixed = std::mem::size_of::<ToolResult>() + 16;
        assert!(
            held.hold(vec![result(MAX_HELD_BYTES - 2 * fixed - 8)], 2)
                .is_ok()
        );
        let back = held.hold(vec![result(9)], 3).expect_err("past the bound");
        assert_eq!(back.len(), 1);
        assert!(held.hold(vec![result(8)], 4).is_ok());
        assert_eq!(held.bytes, MAX_HELD_BYTES);
        let at: Vec<_> = held.held.iter().map(|h| h.at_ms).collect();
        assert_eq!(at, [2, 4]);
    }

    /// Empty results count what they keep: a megabyte of `{}` holds a few
    /// thousand of them, not a hundred thousand.
    #[test]
    fn empty_results_count_their_allocations() {
        let mut held = HeldResults::default();
        let empty = || ToolResult {
            call_id: String::new(),
            name: None,
            output: "{}".into(),
        };
        let mut kept = 0;
        while held.hold(vec![empty()], 0).is_ok() {
            kept += 1;
        }
        let each = std::mem::size_of::<ToolResult>() + 2 * MIN_ALLOCATION;
        assert_eq!(kept, MAX_HELD_BYTES / each);
    }
}
