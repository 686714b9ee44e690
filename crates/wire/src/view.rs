//! What the parsers return: borrowed views of requests, owned views of responses.

use std::borrow::Cow;

use serde::Serialize;
use toolwarden_core::ToolCall;

use crate::raw_result::RawResult;

/// Every tool call and tool result of one request body, in order.
#[derive(Debug, Clone, Default)]
pub struct RequestView<'a> {
    /// The `model` field (Gemini: from the URL, so `None` here).
    pub model: Option<Cow<'a, str>>,
    /// `"stream": true` in the body.
    pub stream: bool,
    /// Tool calls made by the model in the history, in order.
    pub calls: Vec<CallView<'a>>,
    /// Tool results sent back, in order.
    pub results: Vec<ResultView<'a>>,
    /// How many messages (Responses: input items; Gemini: contents).
    pub message_count: usize,
    /// Responses `previous_response_id`: part of the history is on the
    /// provider's side, so results may answer calls not in this body.
    pub previous_response_id: Option<Cow<'a, str>>,
    /// Anthropic `metadata.user_id` (Claude Code puts its session id in it).
    pub metadata_user_id: Option<Cow<'a, str>>,
    /// A stable hash of the conversation's first turn (system prompt and
    /// first user message, as raw bytes): groups the turns of one
    /// conversation when the client sends no session id.
    pub first_turn_hash: Option<u64>,
}

/// One tool call in a request's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallView<'a> {
    /// The call id.
    pub id: Cow<'a, str>,
    /// The tool's name.
    pub name: Cow<'a, str>,
    /// The arguments as JSON text.
    pub arguments: Cow<'a, str>,
    /// Index of the message (item, content) that holds it.
    pub message_index: usize,
}

/// One tool result in a request. Its content is not decoded until asked
/// for: [`ResultView::read`] gives the text and the failure verdict,
/// [`ResultView::content`] the text alone (see the `result` module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultView<'a> {
    /// The id of the call it answers.
    pub call_id: Cow<'a, str>,
    /// The tool's name, resolved from this request's history (or carried
    /// by the result itself, as in Gemini); `None` when not in the body.
    pub tool: Option<Cow<'a, str>>,
    /// Index of the message (item, content) that holds it.
    pub message_index: usize,
    /// `true` when the result comes after the last assistant/model turn:
    /// new in this request rather than resent history.
    pub new: bool,
    /// The content's raw JSON and the flags its verdict needs.
    pub(crate) raw: RawResult<'a>,
}

/// Token usage as the provider reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Prompt / input tokens.
    pub input_tokens: Option<u64>,
    /// Completion / output tokens.
    pub output_tokens: Option<u64>,
}

/// The tool calls and metadata of one response (whole body or stream).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResponseView {
    /// The response id (`msg_…`, `chatcmpl-…`, `resp_…`), when given.
    pub id: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// Tool calls, in order, with complete arguments.
    pub calls: Vec<ToolCall>,
    /// Token usage.
    pub usage: Usage,
    /// `stop_reason` / `finish_reason` / `status`.
    pub stop_reason: Option<String>,
    /// An error the provider reported in the body or stream, if any.
    pub error: Option<String>,
    /// The HTTP status an error event names for a response that has none
    /// of its own: a Responses turn over a WebSocket, whose failures come
    /// as `{"type":"error","status":429,"error":{…}}`.
    pub error_status: Option<u16>,
}
