//! Recently seen tool calls: `(session, call id) → (tool, finished_at_ms)`,
//! bounded (oldest evicted first), so a result whose call isn't in its
//! request's history still gets its tool name and execution time when the
//! call passed through this gateway (and, for the verdict, the program its
//! command runs, a file reader or a Go tool: a Responses continuation's
//! results come without their calls). Otherwise the store resolves the name and time
//! from the database (across instances and restarts).

use toolwarden_wire::detect::Program;

use super::recent::Recent;

/// What is kept of a call: its tool, when its response finished (unix
/// ms), whether it was folded into the recorder's aggregate instead of
/// queued (issue 14: its result is then folded too, so that it does not
/// make a `tool_calls` row of its own), and the program its command runs,
/// if the verdict reads its output so (a file reader, a Go tool: one
/// byte, in the tuple's padding).
pub(crate) type Call = (String, i64, bool, Option<Program>);

/// The bounded map.
#[derive(Debug)]
pub(crate) struct Names(Recent<(String, String), Call>);

impl Names {
    /// An empty map holding at most `capacity` calls.
    pub(crate) fn new(capacity: usize) -> Names {
        Names(Recent::new(capacity))
    }

    /// Remember a call whose response finished at `finished_at_ms`.
    #[cfg(test)]
    pub(crate) fn insert(&self, session: &str, call_id: &str, tool: &str, finished_at_ms: i64) {
        self.insert_call(
            session,
            call_id,
            (tool.to_string(), finished_at_ms, false, None),
        );
    }

    /// Remember `call` (see [`Call`]).
    pub(crate) fn insert_call(&self, session: &str, call_id: &str, call: Call) {
        self.0
            .insert((session.to_string(), call_id.to_string()), call);
    }

    /// The tool and finish time of a call seen recently.
    #[cfg(test)]
    pub(crate) fn get(&self, session: &str, call_id: &str) -> Option<(String, i64)> {
        self.get_call(session, call_id).map(|(t, at, _, _)| (t, at))
    }

    /// What is kept of a call seen recently.
    pub(crate) fn get_call(&self, session: &str, call_id: &str) -> Option<Call> {
        self.0.get(&(session.to_string(), call_id.to_string()))
    }

    /// How many calls are held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_evicts_oldest() {
        let names = Names::new(4);
        names.insert("s", "a", "Bash", 1);
        names.insert("s", "b", "Read", 2);
        names.insert("s", "a", "Bash", 3); // update, not a new entry
        assert_eq!(names.get("s", "a"), Some(("Bash".into(), 3)));
        assert_eq!(names.len(), 2);
        names.insert("s", "c", "Edit", 4);
        names.insert("s", "d", "Grep", 5);
        names.insert("s", "e", "Glob", 6); // the oldest half (a, b) forgotten
        assert!(names.len() <= 4);
        assert_eq!(names.get("s", "a"), None);
        assert_eq!(names.get("s", "c"), Some(("Edit".into(), 4)));
        assert_eq!(names.get("other", "c"), None);
    }
}
