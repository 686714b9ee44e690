//! The outcome of a repair: a body and what was changed.

use std::borrow::Cow;

use serde::Serialize;

use crate::DefectKind;

/// What a repair did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// An error result was inserted for an unanswered call.
    InsertedResult,
    /// A result was moved to right after its call.
    MovedResult,
    /// A result without a call was removed.
    RemovedResult,
    /// A result without a call was turned into plain text.
    ConvertedResultToText,
    /// A duplicate id was given a new, unique id.
    RenamedDuplicateId,
    /// A duplicate call or result was dropped.
    RemovedDuplicate,
    /// A placeholder turn was inserted (Gemini: a user turn before a
    /// function call turn that had none).
    InsertedTurn,
    /// An error result with nothing in it was given a text saying so.
    FilledErrorResult,
    /// A blank text block was removed from a message holding other blocks.
    RemovedBlankText,
    /// A blank text block, all its message held, was given a text.
    FilledBlankText,
    /// A message without blocks was given a text block.
    FilledEmptyMessage,
    /// A last assistant message without blocks (a prefill of nothing) was
    /// removed.
    RemovedEmptyMessage,
    /// A call's input that was not a JSON object was made one: the object
    /// a string held, else `{"rawInvalidInput": …}`.
    MadeInputObject,
    /// A result's `json` block that was not an object became a text block.
    ConvertedJsonToText,
    /// A prefill's text (a last assistant message's) lost the whitespace
    /// it ended with.
    TrimmedPrefill,
}

/// One change a repair made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// What was done.
    pub kind: ChangeKind,
    /// The defect it mends.
    pub defect: DefectKind,
    /// Index of the message in the *input* body.
    pub message_index: usize,
    /// The call id concerned.
    pub call_id: Option<String>,
    /// A sentence for the report.
    pub description: String,
}

/// A repaired body: borrowed and identical to the input when nothing
/// needed changing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired<'a> {
    /// The body to send.
    pub body: Cow<'a, [u8]>,
    /// What was changed, in order; empty for a clean body.
    pub changes: Vec<Change>,
}

impl Repaired<'_> {
    /// `true` when the body was changed.
    pub fn is_changed(&self) -> bool {
        !self.changes.is_empty()
    }
}
