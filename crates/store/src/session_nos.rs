//! Session numbers (migration 0010): the store numbers sessions in the
//! order it first sees them, and every index keyed by the session is led
//! by that number, so the conversations under way sit together at the end
//! of those indexes whatever the history (issue 14).
//!
//! A batch first numbers its sessions ([`BatchSessions`], one statement:
//! the sessions not seen yet are inserted with no requests), then writes
//! each row with its session's number ([`SessionNos`]) and looks sessions
//! up by it.

use foldhash::HashMap;
use std::collections::BTreeMap;

use crate::event::Event;

/// How long a session may have been quiet before a batch with events for
/// it moves its `last_ms` to them (an hour; retention's cutoff is whole
/// days). A session's requests keep its `last_ms` current; this is for
/// tool events whose request came in another batch, so that retention
/// never deletes a session a batch is writing rows for.
pub(crate) const STALE_SESSION_MS: i64 = 3_600_000;

/// A batch's sessions, in session-id order (so concurrent batches lock
/// rows in one order), each with what a row for it starts with: the
/// source of its first request in the batch (`none` if it has none), its
/// earliest event's time and the first turn its first result carrying one
/// names ([`crate::ToolResultRecord::first_turn`]: `sessions.first_turn`,
/// set once, when the row has none).
#[derive(Debug, Default)]
pub(crate) struct BatchSessions<'a>(BTreeMap<&'a str, BatchSession<'a>>);

/// What a batch knows of one session's row ([`BatchSessions`]).
#[derive(Debug, Clone, Copy)]
struct BatchSession<'a> {
    source: &'a str,
    at: i64,
    first_turn: Option<i64>,
}

/// The numbers of a batch's sessions.
#[derive(Debug, Default)]
pub(crate) struct SessionNos(HashMap<String, i64>);

// === impl BatchSessions ===

impl<'a> BatchSessions<'a> {
    pub(crate) fn of(events: &'a [Event]) -> Self {
        let mut out: BTreeMap<&str, BatchSession<'_>> = BTreeMap::new();
        for e in events {
            let at = e.at_ms();
            let (source, first_turn) = match e {
                Event::Request(r) => (Some(r.session_source.as_str()), None),
                Event::ToolResult(r) => (None, r.first_turn),
                Event::ToolCall(_) => (None, None),
            };
            let slot = out.entry(e.session_id()).or_insert(BatchSession {
                source: "none",
                at,
                first_turn: None,
            });
            slot.at = slot.at.min(at);
            if let (Some(source), "none") = (source, slot.source) {
                slot.source = source;
            }
            slot.first_turn = slot.first_turn.or(first_turn);
        }
        BatchSessions(out)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// (session id, source, earliest time, first turn), in session-id
    /// order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'a str, &'a str, i64, Option<i64>)> + '_ {
        self.0
            .iter()
            .map(|(s, b)| (*s, b.source, b.at, b.first_turn))
    }

    /// The first turn the batch's results name for `session_id`.
    pub(crate) fn first_turn(&self, session_id: &str) -> Option<i64> {
        self.0.get(session_id)?.first_turn
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The earliest time of the batch's events for `session_id`.
    pub(crate) fn earliest(&self, session_id: &str) -> Option<i64> {
        self.0.get(session_id).map(|b| b.at)
    }
}

// === impl SessionNos ===

impl Extend<(String, i64)> for SessionNos {
    fn extend<I: IntoIterator<Item = (String, i64)>>(&mut self, numbered: I) {
        self.0.extend(numbered);
    }
}

impl SessionNos {
    /// The number of `session_id`, which the batch numbered first; an
    /// error (the batch is not written) if it did not.
    pub(crate) fn of(&self, session_id: &str) -> Result<i64, sqlx::Error> {
        self.0.get(session_id).copied().ok_or_else(|| {
            sqlx::Error::Protocol(format!("session {session_id:?} was not numbered"))
        })
    }

    /// The numbers of `ids`, in order (PostgreSQL binds them as one array).
    pub(crate) fn all<'a>(
        &self,
        ids: impl Iterator<Item = &'a str>,
    ) -> Result<Vec<i64>, sqlx::Error> {
        ids.map(|id| self.of(id)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{RequestRecord, ToolCallRecord};

    #[test]
    fn a_batch_numbers_each_session_once_with_its_request_source() {
        let call = |session: &str, at_ms: i64| {
            Event::ToolCall(ToolCallRecord {
                threaded: false,
                request_id: "r".into(),
                session_id: session.into(),
                provider: "anthropic".into(),
                model: None,
                response_id: None,
                dialect: None,
                call_index: 0,
                call_id: "c".into(),
                tool: "Read".into(),
                arguments_bytes: 0,
                at_ms,
                turn: None,
            })
        };
        let request = Event::Request(RequestRecord::for_test("r", "b", "header", 9));
        let events = [call("b", 7), call("a", 5), request, call("a", 3)];
        let got: Vec<_> = BatchSessions::of(&events).iter().collect();
        assert_eq!(got, [("a", "none", 3, None), ("b", "header", 7, None)]);
        let mut nos = SessionNos::default();
        nos.extend([("a".to_owned(), 4)]);
        assert_eq!(nos.of("a").unwrap(), 4);
        assert!(nos.of("b").is_err());
    }
}
