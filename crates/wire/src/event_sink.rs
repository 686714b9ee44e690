//! [`EventSink`]: what each dialect's stream state implements. A leaf: the
//! dialect modules implement it, `stream` drives it, so neither needs the
//! other for the trait.

use crate::{ResponseView, budget::Budget};

/// What each dialect's stream state implements: one call per SSE event.
pub(crate) trait EventSink {
    /// One complete SSE event: its `event:` name (may be empty) and data.
    fn on_event(&mut self, event: &[u8], data: &[u8]);
    /// The stream ended (or broke): what was seen.
    fn finish(self) -> ResponseView
    where
        Self: Sized;
    /// What the state may still keep (see [`Budget`]).
    fn budget(&mut self) -> &mut Budget;
    /// What the state keeps, as its [`Budget`] counts it.
    fn kept(&self) -> usize;
}
