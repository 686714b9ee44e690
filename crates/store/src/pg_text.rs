//! Text bound for PostgreSQL, without U+0000: PostgreSQL refuses a NUL in
//! `text` (SQLSTATE 22021), SQLite stores it, and a client can put one in
//! any name it sends (a model, a tool, a call id, a result's text). Every
//! text value the PostgreSQL write path binds (events, and the rows of the
//! counts of dropped events) goes through [`pg_text`] first, which puts
//! U+FFFD (Unicode's character for what cannot be shown) in place of each
//! NUL: the event is recorded, not refused and dropped, and a count is not
//! kept under a key the database will never take. Cheap when there is no
//! NUL, nearly always: one `memchr` per value and nothing copied.

use std::borrow::Cow;

use crate::event::{Event, RequestRecord, ToolCallRecord, ToolResultRecord};

/// A record whose text values can be checked and cleaned of NULs.
pub(crate) trait Texts: Clone {
    /// Whether any of its text values holds a NUL.
    fn has_nul(&self) -> bool;
    /// Replaces each NUL of its text values by U+FFFD.
    fn replace_nul(&mut self);
}

/// `items` as PostgreSQL can store them: borrowed as they are unless one
/// holds a NUL, else a copy with each NUL replaced by U+FFFD.
pub(crate) fn pg_text<T: Texts>(items: &[T]) -> Cow<'_, [T]> {
    if !items.iter().any(T::has_nul) {
        return Cow::Borrowed(items);
    }
    let mut clean = items.to_vec();
    clean.iter_mut().for_each(T::replace_nul);
    Cow::Owned(clean)
}

/// `<[u8]>::contains` is a `memchr`.
pub(crate) fn has_nul(s: &str) -> bool {
    s.as_bytes().contains(&0)
}

pub(crate) fn replace_nul(s: &mut String) {
    if has_nul(s) {
        *s = s.replace('\0', "\u{FFFD}");
    }
}

/// Implements [`Texts`] for a record from its text fields, each listed
/// once: `String`s, then `Option<String>`s, then `Vec<String>`s. Used here
/// for the events and by `aggregate` for its rows (this module imports
/// nothing above the events).
macro_rules! texts {
    ($ty:ty { $($s:ident),* ; $($o:ident),* ; $($v:ident),* }) => {
        impl $crate::pg_text::Texts for $ty {
            fn has_nul(&self) -> bool {
                use $crate::pg_text::has_nul;
                false
                    $(|| has_nul(&self.$s))*
                    $(|| self.$o.as_deref().is_some_and(has_nul))*
                    $(|| self.$v.iter().any(|s| has_nul(s)))*
            }

            fn replace_nul(&mut self) {
                use $crate::pg_text::replace_nul;
                $(replace_nul(&mut self.$s);)*
                $(self.$o.iter_mut().for_each(replace_nul);)*
                $(self.$v.iter_mut().for_each(replace_nul);)*
            }
        }
    };
}
pub(crate) use texts;

texts!(RequestRecord {
    request_id, session_id, session_source, provider, path, repair_mode;
    dialect, model, response_id, parse_error, error;
    repairs
});
texts!(ToolCallRecord {
    request_id, session_id, provider, call_id, tool;
    model, response_id, dialect;
});
texts!(ToolResultRecord {
    request_id, session_id, provider, call_id, basis;
    model, tool, excerpt, previous_response_id;
});

/// `s` as PostgreSQL can take it (a NUL as U+FFFD): for a value read
/// with, such as a filter from a client, so that it neither fails the query
/// nor misses what was stored with the same replacement.
pub(crate) fn pg_str(s: &str) -> std::borrow::Cow<'_, str> {
    if has_nul(s) {
        std::borrow::Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

impl Texts for Event {
    fn has_nul(&self) -> bool {
        match self {
            Event::Request(r) => r.has_nul(),
            Event::ToolCall(c) => c.has_nul(),
            Event::ToolResult(r) => r.has_nul(),
        }
    }

    fn replace_nul(&mut self) {
        match self {
            Event::Request(r) => r.replace_nul(),
            Event::ToolCall(c) => c.replace_nul(),
            Event::ToolResult(r) => r.replace_nul(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::DroppedRow;
    use crate::event::TurnRef;

    /// Every string of `v`, through `f`.
    fn strings(v: &mut serde_json::Value, f: &mut impl FnMut(&mut String)) {
        match v {
            serde_json::Value::String(s) => f(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|v| strings(v, f)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|v| strings(v, f)),
            _ => {}
        }
    }

    /// Each event with every text field set and holding a NUL (through its
    /// JSON, so that a text field added later is covered without a change
    /// here once the events below set it).
    fn with_nul_everywhere() -> Vec<Event> {
        let mut request = RequestRecord::for_test("r", "s", "header", 1);
        request.dialect = Some("anthropic".into());
        request.model = Some("m".into());
        request.response_id = Some("resp".into());
        request.repairs = vec!["orphan_result".into()];
        request.parse_error = Some("p".into());
        request.error = Some("e".into());
        let call = ToolCallRecord {
            threaded: false,
            request_id: "r".into(),
            session_id: "s".into(),
            provider: "anthropic".into(),
            model: Some("m".into()),
            response_id: Some("resp".into()),
            dialect: Some("anthropic".into()),
            call_index: 0,
            call_id: "c".into(),
            tool: "Bash".into(),
            arguments_bytes: 1,
            at_ms: 1,
            turn: Some(7),
        };
        let result = ToolResultRecord {
            request_id: "r".into(),
            session_id: "s".into(),
            provider: "anthropic".into(),
            model: Some("m".into()),
            call_id: "c".into(),
            message_index: 1,
            tool: Some("Bash".into()),
            failed: true,
            basis: "explicit".into(),
            content_bytes: 1,
            excerpt: Some("x".into()),
            at_ms: 1,
            exec_ms: None,
            previous_response_id: Some("resp".into()),
            answers: Some(TurnRef {
                turn: 7,
                call_index: 0,
            }),
            trace_parent: None,
            trace_state: None,
            latest_of_its_id: false,
            first_turn: None,
        };
        [
            Event::Request(request),
            Event::ToolCall(call),
            Event::ToolResult(result),
        ]
        .into_iter()
        .map(|e| {
            let mut v = serde_json::to_value(&e).unwrap();
            strings(&mut v, &mut |s| {
                if s != e.kind() {
                    s.push('\0');
                }
            });
            serde_json::from_value(v).unwrap()
        })
        .collect()
    }

    #[test]
    fn every_text_value_loses_its_nul() {
        let events = with_nul_everywhere();
        assert!(events.iter().all(Event::has_nul));
        let clean = pg_text(&events);
        assert!(matches!(clean, Cow::Owned(_)));
        for e in clean.iter() {
            assert!(!e.has_nul(), "{e:?}");
            let mut v = serde_json::to_value(e).unwrap();
            strings(&mut v, &mut |s| {
                assert!(!s.contains('\0'), "{s:?} in {e:?}");
                assert!(s == e.kind() || s.ends_with('\u{FFFD}'), "{s:?} in {e:?}");
            });
        }
    }

    #[test]
    fn text_without_nul_is_borrowed() {
        let mut row = DroppedRow {
            at_ms: 0,
            provider: "openai".into(),
            model: Some("m".into()),
            tool: "Bash".into(),
            counts: Default::default(),
        };
        assert!(matches!(
            pg_text(std::slice::from_ref(&row)),
            Cow::Borrowed(_)
        ));
        row.model = Some("m\0".into());
        assert_eq!(
            pg_text(std::slice::from_ref(&row))[0].model.as_deref(),
            Some("m\u{FFFD}")
        );
    }
}
