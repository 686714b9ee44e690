//! [`UnsureCommits`]: what the writer keeps of an attempt whose COMMIT
//! failed with its outcome unknown ([`crate::write::BatchError::Unsure`]:
//! on PostgreSQL, the connection lost between the COMMIT and its answer),
//! so that the observer and the JSONL log hear of each new event exactly
//! once whether or not that attempt landed.
//!
//! Without it, the retry of a batch that did commit finds every event
//! already stored (`Duplicate`), and the batch never reaches the metrics,
//! alerts, spans or the JSONL log; the database would be right and they
//! would count less.
//!
//! A transaction is atomic: after such an attempt either every row it
//! inserted exists or none does. Its statements ran before the COMMIT and
//! said which events were new; the retry of the same events says it again,
//! against what the database holds by then. (Should the server still be
//! finishing the attempt's transaction, the retry waits for its end: its
//! inserts conflict with the attempt's rows and its advisory locks are
//! the attempt's.) The events the attempt found new are its witnesses:
//!
//! - **Requests and calls** decide when there are any: their keys carry
//!   the request id this gateway made (`request_id`, `(request_id,
//!   call_index)`), which no other gateway writes. Found again
//!   (`Duplicate`): the attempt landed. New again: it did not.
//! - **Results** decide only when the attempt found no request or call
//!   new: their key `(session, call_id, message_index)` is the client's,
//!   and another gateway may be given the same result (a client resending
//!   its history there) and write it between the two attempts. So the
//!   retry also asks whose each such key is ([`crate::write::Found::own_keys`]):
//!   stored under the result's own request id, which this gateway made
//!   and no other writes, it is this event's row, so the attempt landed
//!   (atomic: one is enough). Found again under other request ids only, or
//!   new again: it did not land, and the results are the other gateway's
//!   to report. (Two ways to misjudge a landed attempt are left, each
//!   needing another writer to change that very key in the moment between
//!   the attempts: retention deleting it, or another gateway claiming it
//!   for a later call of a reused id, `bulk::claim_keys_of_later_calls`;
//!   those results are then reported by no one, and counted once by the
//!   database.)
//!
//! Landed: the events report the attempt's outcomes (the retry found them
//! `Duplicate`). Not landed: the retry's. An event the attempt found
//! already stored reports the retry's either way.
//!
//! A retry can be unsure too: each kept outcome remembers its attempt, and
//! each attempt is judged by its own witnesses. The writer's retry of a
//! batch normally writes at least its events (its backlog grows while it
//! backs off); after a statement timeout it writes fewer (the first half),
//! and isolating refused events writes them one at a time: the events
//! written are judged by the witnesses among them (the attempt was atomic,
//! so each part tells the same), the rest keep their outcomes for their
//! own write.
//!
//! Not covered: events given up at the shutdown deadline are folded into
//! the dropped counts ([`super::fold`]) with their kept outcomes forgotten,
//! so if an unsure attempt of theirs landed they count twice in the stats
//! (their rows and the dropped counts) — as do the events of a write cut
//! off at the deadline while its COMMIT was on its way.

use std::collections::VecDeque;

use crate::event::Event;
use crate::write::{Found, Outcome};

/// The outcomes that unsure attempts found for the writer's pending events,
/// from the front: the first kept one is the first pending event's.
#[derive(Debug, Default)]
pub(super) struct UnsureCommits {
    kept: VecDeque<Kept>,
    /// Unsure attempts so far (numbers them).
    attempts: u64,
}

/// What an unsure attempt found for one event.
#[derive(Debug, Clone, PartialEq)]
struct Kept {
    outcome: Outcome,
    attempt: u64,
}

/// What the witnesses of one attempt said.
#[derive(Debug)]
struct Verdict {
    attempt: u64,
    /// Requests and calls it found new: whether one was found again.
    exact: Option<bool>,
    /// Whether a result it found new was found again under its own request
    /// id (this gateway's row).
    results_own: bool,
}

// === impl UnsureCommits ===

impl UnsureCommits {
    /// The results among `events` (the first pending ones, about to be
    /// written) whose keys the write is to check
    /// ([`crate::write::Found::own_keys`]): those an unsure attempt found
    /// new. None while no attempt is unsure, so a write costs nothing more.
    pub(super) fn to_ask(&self, events: &[Event]) -> Vec<usize> {
        self.kept
            .iter()
            .zip(events)
            .enumerate()
            .filter(|(_, (k, e))| k.outcome.is_new() && matches!(e, Event::ToolResult(_)))
            .map(|(i, _)| i)
            .collect()
    }

    /// The write of `events` (the first pending ones) committed and found
    /// `found`: what to report for each, the kept outcome of an attempt
    /// that landed, else the new one. Their kept outcomes are forgotten.
    pub(super) fn committed(&mut self, events: &[Event], found: Found) -> Vec<Outcome> {
        if self.kept.is_empty() {
            return found.outcomes;
        }
        let resolved = self.resolve(events, found);
        self.kept.drain(..resolved.len().min(self.kept.len()));
        resolved.into_iter().map(|k| k.outcome).collect()
    }

    /// The write of `events` (the first pending ones) failed at its COMMIT,
    /// its statements having found `found`: kept (as [`Self::committed`]
    /// would report them, with the attempt they depend on) for the next
    /// write of the same events.
    pub(super) fn unsure(&mut self, events: &[Event], found: Found) {
        self.attempts += 1;
        let resolved = self.resolve(events, found);
        for (i, kept) in resolved.into_iter().enumerate() {
            match self.kept.get_mut(i) {
                Some(k) => *k = kept,
                None => self.kept.push_back(kept),
            }
        }
    }

    /// The first `n` pending events are gone unwritten (refused, or given
    /// up at the shutdown deadline).
    pub(super) fn forget(&mut self, n: usize) {
        self.kept.drain(..n.min(self.kept.len()));
    }

    /// Per event written now: the kept outcome of an earlier attempt that
    /// landed (it inserted the event's rows), else the outcome found now,
    /// as the latest attempt's.
    fn resolve(&self, events: &[Event], found: Found) -> Vec<Kept> {
        let Found {
            outcomes: now,
            own_keys,
        } = found;
        debug_assert_eq!(events.len(), now.len());
        let verdicts = self.judge(events, &now, &own_keys);
        let landed = |attempt| {
            verdicts
                .iter()
                .find(|v| v.attempt == attempt)
                .is_some_and(Verdict::landed)
        };
        now.into_iter()
            .enumerate()
            .map(|(i, outcome)| match self.kept.get(i) {
                Some(k) if k.outcome.is_new() && landed(k.attempt) => k.clone(),
                _ => Kept {
                    outcome,
                    attempt: self.attempts,
                },
            })
            .collect()
    }

    /// The witnesses among the events written now: per earlier attempt,
    /// what the events it found new are now (`own`: the results found
    /// under their own request id).
    fn judge(&self, events: &[Event], now: &[Outcome], own: &[usize]) -> Vec<Verdict> {
        let mut verdicts: Vec<Verdict> = Vec::new();
        for (i, ((k, event), now)) in self.kept.iter().zip(events).zip(now).enumerate() {
            if !k.outcome.is_new() {
                continue;
            }
            let again = !now.is_new();
            let v = match verdicts.iter_mut().find(|v| v.attempt == k.attempt) {
                Some(v) => v,
                None => {
                    verdicts.push(Verdict {
                        attempt: k.attempt,
                        exact: None,
                        results_own: false,
                    });
                    verdicts.last_mut().expect("just pushed")
                }
            };
            match event {
                Event::Request(_) | Event::ToolCall(_) => {
                    v.exact = Some(v.exact.unwrap_or(false) || again);
                }
                Event::ToolResult(_) => v.results_own |= again && own.contains(&i),
            }
        }
        verdicts
    }
}

// === impl Verdict ===

impl Verdict {
    /// Whether the attempt landed: its requests and calls found again
    /// (one is enough: atomic, all of them are; only a row deleted in
    /// between, by retention, could be missing), else, with none, one of
    /// its results found again under its own request id.
    fn landed(&self) -> bool {
        self.exact.unwrap_or(self.results_own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{RequestRecord, ToolCallRecord, ToolResultRecord};

    fn request() -> Event {
        Event::Request(RequestRecord {
            request_id: "r".into(),
            session_id: "s".into(),
            session_source: "header".into(),
            at_ms: 0,
            provider: "openai".into(),
            dialect: None,
            path: "/v1/chat/completions".into(),
            model: None,
            status: 200,
            streaming: false,
            upstream_latency_ms: 0.0,
            first_byte_ms: None,
            overhead_us: 0.0,
            input_tokens: None,
            output_tokens: None,
            response_id: None,
            repairs: vec![],
            repair_mode: "fix".into(),
            parse_error: None,
            calls_incomplete: false,
            error: None,
            trace_parent: None,
            trace_state: None,
            server_address: None,
            server_port: None,
        })
    }

    fn call() -> Event {
        Event::ToolCall(ToolCallRecord {
            threaded: false,
            request_id: "r".into(),
            session_id: "s".into(),
            provider: "openai".into(),
            model: None,
            response_id: None,
            dialect: None,
            call_index: 0,
            call_id: "c".into(),
            tool: "t".into(),
            arguments_bytes: 0,
            at_ms: 0,
            turn: None,
        })
    }

    fn result() -> Event {
        Event::ToolResult(ToolResultRecord {
            request_id: "r2".into(),
            session_id: "s".into(),
            provider: "openai".into(),
            model: None,
            call_id: "c".into(),
            message_index: 2,
            tool: None,
            failed: false,
            basis: "none".into(),
            content_bytes: 1,
            excerpt: None,
            at_ms: 1,
            exec_ms: None,
            previous_response_id: None,
            answers: None,
            trace_parent: None,
            trace_state: None,
            latest_of_its_id: false,
            first_turn: None,
        })
    }

    const D: Outcome = Outcome::Duplicate;
    const N: Outcome = Outcome::New;

    /// What a write found: `outcomes`, and the results at `own` stored
    /// under their own request id.
    fn f(outcomes: Vec<Outcome>, own: &[usize]) -> Found {
        Found {
            outcomes,
            own_keys: own.to_vec(),
        }
    }

    fn found(tool: &str) -> Outcome {
        Outcome::NewResult {
            tool: tool.into(),
            exec_ms: Some(1.0),
        }
    }

    #[test]
    fn nothing_kept_reports_what_the_write_found() {
        let mut u = UnsureCommits::default();
        let events = [request(), result()];
        assert_eq!(
            u.committed(&events, f(vec![N, found("t")], &[])),
            vec![N, found("t")]
        );
    }

    #[test]
    fn a_landed_attempt_reports_its_own_outcomes_once() {
        let mut u = UnsureCommits::default();
        let events = [request(), call(), request(), result()];
        u.unsure(&events, f(vec![N, N, D, found("t")], &[]));
        assert_eq!(
            u.committed(&events, f(vec![D, D, D, D], &[3])),
            vec![N, N, D, found("t")]
        );
        assert!(u.kept.is_empty());
        // Nothing kept: the next batch reports what it found.
        assert_eq!(
            u.committed(&events, f(vec![D, D, D, D], &[])),
            vec![D, D, D, D]
        );
    }

    #[test]
    fn an_attempt_that_did_not_land_reports_the_retry() {
        let mut u = UnsureCommits::default();
        let events = [request(), call(), result()];
        u.unsure(&events, f(vec![N, N, found("unknown")], &[]));
        assert_eq!(
            u.committed(&events, f(vec![N, N, found("t")], &[])),
            vec![N, N, found("t")]
        );
    }

    #[test]
    fn requests_and_calls_decide_over_results() {
        // The result came back a duplicate (another gateway wrote it), the
        // request came back new: the attempt did not land.
        let mut u = UnsureCommits::default();
        let events = [request(), result()];
        u.unsure(&events, f(vec![N, found("t")], &[]));
        assert_eq!(u.committed(&events, f(vec![N, D], &[])), vec![N, D]);
    }

    #[test]
    fn results_alone_landed_only_when_found_under_their_own_request() {
        let events = [result(), result()];
        let mut u = UnsureCommits::default();
        u.unsure(&events, f(vec![found("a"), found("b")], &[]));
        assert_eq!(u.to_ask(&events), [0, 1]);
        assert_eq!(
            u.committed(&events, f(vec![D, D], &[0, 1])),
            vec![found("a"), found("b")]
        );
        // One new again: it did not land (the other was written meanwhile
        // by another gateway: that one's).
        let mut u = UnsureCommits::default();
        u.unsure(&events, f(vec![found("a"), found("b")], &[]));
        assert_eq!(
            u.committed(&events, f(vec![D, found("b")], &[1])),
            vec![D, found("b")]
        );
    }

    /// Another gateway, given the same results, wrote them all between the
    /// attempts: every one is found again, but under its request ids, not
    /// this gateway's. The attempt did not land; they are the other
    /// gateway's to report (reported here too, they counted twice).
    #[test]
    fn results_found_again_under_another_gateways_requests_did_not_land() {
        let events = [result(), result()];
        let mut u = UnsureCommits::default();
        u.unsure(&events, f(vec![found("a"), found("b")], &[]));
        assert_eq!(u.committed(&events, f(vec![D, D], &[])), vec![D, D]);
        assert!(u.kept.is_empty());
    }

    #[test]
    fn only_the_results_an_unsure_attempt_found_new_are_asked_about() {
        let mut u = UnsureCommits::default();
        let events = [request(), result(), result(), call()];
        assert!(u.to_ask(&events).is_empty(), "nothing unsure: no question");
        u.unsure(&events[..3], f(vec![N, D, found("t")], &[]));
        assert_eq!(u.to_ask(&events), [2]);
    }

    #[test]
    fn a_retry_that_grew_reports_the_new_events_as_found() {
        let mut u = UnsureCommits::default();
        let first = [request(), call()];
        u.unsure(&first, f(vec![N, N], &[]));
        let grown = [request(), call(), result()];
        assert_eq!(
            u.committed(&grown, f(vec![D, D, found("t")], &[])),
            vec![N, N, found("t")]
        );
        assert!(u.kept.is_empty());
    }

    #[test]
    fn an_unsure_retry_of_a_landed_attempt_keeps_its_outcomes() {
        let mut u = UnsureCommits::default();
        let events = [request(), call()];
        u.unsure(&events, f(vec![N, N], &[]));
        let grown = [request(), call(), request()];
        // The first landed; the retry, itself unsure, found the third new.
        u.unsure(&grown, f(vec![D, D, N], &[]));
        // The retry landed too.
        assert_eq!(u.committed(&grown, f(vec![D, D, D], &[])), vec![N, N, N]);
        // Or it did not: the first attempt's events still count, once.
        let mut u = UnsureCommits::default();
        u.unsure(&events, f(vec![N, N], &[]));
        u.unsure(&grown, f(vec![D, D, N], &[]));
        assert_eq!(u.committed(&grown, f(vec![D, D, N], &[])), vec![N, N, N]);
    }

    #[test]
    fn an_unsure_retry_of_an_attempt_that_did_not_land_is_judged_alone() {
        let mut u = UnsureCommits::default();
        let events = [request(), call()];
        u.unsure(&events, f(vec![N, N], &[]));
        u.unsure(&events, f(vec![N, N], &[]));
        assert_eq!(u.committed(&events, f(vec![N, N], &[])), vec![N, N]);
        let mut u = UnsureCommits::default();
        u.unsure(&events, f(vec![N, N], &[]));
        u.unsure(&events, f(vec![N, N], &[]));
        assert_eq!(u.committed(&events, f(vec![D, D], &[])), vec![N, N]);
    }

    #[test]
    fn events_written_one_by_one_are_judged_each_by_itself() {
        let mut u = UnsureCommits::default();
        let events = [request(), call(), result()];
        u.unsure(&events, f(vec![N, D, found("t")], &[]));
        assert_eq!(u.committed(&events[..1], f(vec![D], &[])), vec![N]);
        // Refused when written alone: gone.
        u.forget(1);
        assert_eq!(
            u.committed(&events[2..], f(vec![D], &[0])),
            vec![found("t")]
        );
        assert!(u.kept.is_empty());
    }
}
