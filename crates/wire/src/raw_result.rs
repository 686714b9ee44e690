//! [`RawResult`]: a tool result as a dialect's view finds it, before it is
//! read. A leaf: the dialect modules build it, `result` reads it (through
//! the dialect modules), so neither needs the other for the type.

/// What a result is read from: the content's raw JSON text (`None` when
/// absent or `null`) and the dialect's flags beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawResult<'a> {
    /// Anthropic `tool_result` / `*_tool_result`: `content`, `is_error`,
    /// and whether it is a server tool's result.
    Anthropic {
        content: Option<&'a str>,
        is_error: Option<bool>,
        server: bool,
        /// Some result of the same conversation is flagged `is_error: false`.
        client_flags_successes: bool,
    },
    /// Chat `tool` / `function` message: `content`.
    Chat { content: Option<&'a str> },
    /// A user message answering calls in text ([`crate::text_answers`]):
    /// its `content`, the answer's place among the text's answers, and the
    /// fingerprint of the model turn it names itself (a call read from
    /// its error).
    TextAnswer {
        content: Option<&'a str>,
        segment: u32,
        turn: Option<u64>,
    },
    /// Responses `*_call_output`: `output`, and what its `status` says:
    /// failed (`incomplete`, `failed`), succeeded (an `apply_patch` output's
    /// `completed`, which its client sets as a flag), or nothing.
    Responses {
        output: Option<&'a str>,
        status_flag: Option<bool>,
    },
    /// Gemini `functionResponse`: the `response` object.
    Gemini { response: Option<&'a str> },
    /// Bedrock Converse `toolResult`: `content` blocks, `status` read as
    /// failed (`"error"`) or not.
    Converse {
        content: Option<&'a str>,
        failed: Option<bool>,
        /// Some result of the same conversation is flagged `status: "success"`.
        client_flags_successes: bool,
    },
}

impl RawResult<'_> {
    /// A result its client flagged as a success (Anthropic `is_error:
    /// false`, Bedrock `status: "success"`; not a server tool's result).
    pub(crate) fn flagged_success(&self) -> bool {
        match *self {
            RawResult::Anthropic {
                is_error, server, ..
            } => is_error == Some(false) && !server,
            RawResult::Converse { failed, .. } => failed == Some(false),
            RawResult::Chat { .. }
            | RawResult::TextAnswer { .. }
            | RawResult::Responses { .. }
            | RawResult::Gemini { .. } => false,
        }
    }

    /// A result without its own flag in a conversation whose client flags
    /// other results as successes (and not a server tool's result, which
    /// the provider ran).
    pub(crate) fn unflagged_where_client_flags_successes(&self) -> bool {
        match *self {
            RawResult::Anthropic {
                is_error,
                server,
                client_flags_successes,
                ..
            } => client_flags_successes && is_error.is_none() && !server,
            RawResult::Converse {
                failed,
                client_flags_successes,
                ..
            } => client_flags_successes && failed.is_none(),
            RawResult::Chat { .. }
            | RawResult::TextAnswer { .. }
            | RawResult::Responses { .. }
            | RawResult::Gemini { .. } => false,
        }
    }
}
