//! Pairing defects: what a strict provider rejects with a 400.

use serde::Serialize;

use crate::id_set::IdSet;

/// The kind of pairing defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DefectKind {
    /// A tool call with no result right after it.
    MissingResult,
    /// A result whose call is not in the preceding assistant turn.
    OrphanResult,
    /// Two calls (or two results) share an id.
    DuplicateCallId,
    /// Anthropic: `tool_result` blocks not at the start of the user message
    /// that follows the calls.
    ResultsNotFirst,
    /// Gemini: the number of `functionResponse` parts differs from the
    /// number of `functionCall` parts of the preceding model turn.
    CountMismatch,
    /// Gemini: a function call turn that does not come right after a user
    /// turn or a function response turn (e.g. the history starts with it).
    MisplacedCallTurn,
    /// Anthropic: a `tool_result` flagged `is_error: true` with nothing in
    /// it (`content` empty, `null` or absent): "content cannot be empty if
    /// `is_error` is true". Bedrock Converse: a `toolResult` of `status:
    /// "error"` whose `content` is `[]`: "The content field at
    /// messages.N.content.J.toolResult cannot be empty when status value is
    /// error."
    EmptyErrorResult,
    /// Bedrock Converse: a `text` content block that is empty or only
    /// whitespace: "The text field in the ContentBlock object at
    /// messages.N.content.J is blank. Add text to the text field, and try
    /// again."
    BlankText,
    /// Bedrock Converse: a message whose `content` holds no block: "The
    /// content field in the Message object at messages.N is empty. Add a
    /// ContentBlock object to the content field and try again."
    EmptyMessage,
    /// Bedrock Converse: a `toolUse`'s `input`, or a `json` block of a
    /// `toolResult`'s `content`, that is not a JSON object: "The format of
    /// the value at messages.N.content.J.toolUse.input is invalid. Provide
    /// a json object for the field and try again."
    NonObjectJson,
    /// Anthropic: a last message of role `assistant` (a prefill) whose
    /// content is a string, or ends with a `text` block, ending in
    /// whitespace: "messages: final assistant content cannot end with
    /// trailing whitespace".
    TrailingWhitespace,
}

impl DefectKind {
    /// The snake_case name used in JSON and metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            DefectKind::MissingResult => "missing_result",
            DefectKind::OrphanResult => "orphan_result",
            DefectKind::DuplicateCallId => "duplicate_call_id",
            DefectKind::ResultsNotFirst => "results_not_first",
            DefectKind::CountMismatch => "count_mismatch",
            DefectKind::MisplacedCallTurn => "misplaced_call_turn",
            DefectKind::EmptyErrorResult => "empty_error_result",
            DefectKind::BlankText => "blank_text",
            DefectKind::EmptyMessage => "empty_message",
            DefectKind::NonObjectJson => "non_object_json",
            DefectKind::TrailingWhitespace => "trailing_whitespace",
        }
    }
}

/// One pairing defect, located and worded as the provider words it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Defect {
    /// What is wrong.
    pub kind: DefectKind,
    /// Index of the message (item, content) the provider would name.
    pub message_index: usize,
    /// The call ids concerned.
    pub call_ids: Vec<String>,
    /// The provider's own error text for this defect.
    pub message: String,
}

/// The results of message `i` (`(block index, call id)`) against the calls
/// of the turn before it: an orphan for a result that answers none, a
/// duplicate for a second answer to the same call. The wording is the
/// dialect's: `orphan` and `duplicate` get the block index and the id.
/// Sets ([`IdSet`]: lists while short), not lists: a client controls how
/// many calls and results a turn holds, and the check runs on every request.
pub(crate) fn check_answers<'a>(
    i: usize,
    results: impl IntoIterator<Item = (usize, &'a str)>,
    calls: &IdSet<'_>,
    orphan: impl Fn(usize, &str) -> String,
    duplicate: impl Fn(usize, &str) -> String,
    out: &mut Vec<Defect>,
) {
    let mut answered = IdSet::default();
    for (j, id) in results {
        let (kind, message) = if !calls.contains(id) {
            (DefectKind::OrphanResult, orphan(j, id))
        } else if !answered.insert(id) {
            (DefectKind::DuplicateCallId, duplicate(j, id))
        } else {
            continue;
        };
        out.push(Defect {
            kind,
            message_index: i,
            call_ids: vec![id.to_string()],
            message,
        });
    }
}
