//! The wire layer: an exact reading of tool calls and tool results in the
//! five provider dialects (Bedrock Converse streams in AWS event-stream
//! frames: [`eventstream`]).
//!
//! For each [`Dialect`] this crate gives
//! - a [`RequestView`]: every tool call and tool result in a request body,
//!   with which results are new in this request ([`request_view`]); a
//!   result's content stays raw JSON until [`ResultView::read`] decodes it
//!   and decides its verdict, so results a caller skips cost no decoding;
//! - a [`ResponseView`] of a non-streaming response ([`response_view`],
//!   lenient; [`check_response`] says whether a body is one at all) and
//!   an incremental [`StreamParser`] for SSE bytes split anywhere;
//! - failure verdicts: explicit flags first, the content [`detect::Detector`]
//!   where the API has none;
//! - [`validate`]: the pairing defects a strict provider rejects, and
//!   [`repair()`]: a corrected body with nothing else changed;
//! - [`render_results`]: a [`ToolOutcome`] as the dialect's tool-result message(s).
//!
//! Everything here is a pure function over bytes: no I/O, no panics on any
//! input (the parsers are property-tested and fuzzed).
//!
//! ```
//! use toolwarden_wire::{Detector, Dialect, request_view};
//!
//! let body = br#"{"model":"gpt-4o","messages":[
//!     {"role":"assistant","tool_calls":[{"id":"c1","type":"function",
//!         "function":{"name":"ls","arguments":"{}"}}]},
//!     {"role":"tool","tool_call_id":"c1","content":"Error: no such directory"}]}"#;
//! let view = request_view(Dialect::OpenAiChat, body)?;
//! let result = &view.results[0];
//! assert_eq!((result.tool.as_deref(), result.new), (Some("ls"), true));
//! // The content is decoded only now, for the results you read.
//! let read = result.read(&Detector::default())?;
//! assert_eq!(read.text, "Error: no such directory");
//! assert!(read.verdict.failed);
//! # Ok::<(), toolwarden_wire::WireError>(())
//! ```

#![forbid(unsafe_code)]

pub mod anthropic;
mod api_error;
pub mod bedrock_converse;
mod budget;
mod bytemask;
mod call_index;
mod call_kind;
mod choices;
mod content;
mod defect;
pub mod detect;
mod dialect;
mod error;
mod event_sink;
pub mod eventstream;
pub mod gemini;
mod id_set;
mod item_limit;
pub mod openai_chat;
pub mod openai_responses;
mod opening;
mod pairing;
mod prefill;
mod raw_result;
mod repair;
mod response_check;
mod result;
mod scan;
mod seed;
mod splice;
pub mod sse;
mod stop_cut;
mod stream;
mod target;
#[cfg(test)]
mod testutil;
mod text;
mod text_answers;
pub mod turn;
mod view;

pub use call_index::CallIndex;
pub use defect::{Defect, DefectKind};
pub use detect::Detector;
pub use dialect::Dialect;
pub use error::{WireError, WireErrorKind};
pub use item_limit::{ITEM_DEPTH, MAX_REQUEST_ITEMS, check_items};
pub use repair::{Change, ChangeKind, Repaired};
pub use response_check::check_response;
pub use result::ResultContent;
pub use stop_cut::StopCut;
pub use stream::StreamParser;
pub use target::{ModelFamily, Target};
pub use view::{CallView, RequestView, ResponseView, ResultView, Usage};

use toolwarden_core::{ToolCall, ToolOutcome};

/// Read every tool call and tool result of a request body.
///
/// The whole body is checked (JSON syntax, UTF-8, the dialect's shape),
/// but result contents are not decoded: call [`ResultView::read`] on the
/// results you need (text and verdict).
///
/// A body of more than [`MAX_REQUEST_ITEMS`] messages, blocks and other
/// shallow values is not read ([`WireErrorKind::TooLarge`], see
/// [`check_items`]); so for [`inspect`], [`validate`] and [`repair()`].
pub fn request_view(dialect: Dialect, body: &[u8]) -> Result<RequestView<'_>, WireError> {
    check_items(body)?;
    match dialect {
        Dialect::OpenAiChat => openai_chat::request_view(body),
        Dialect::OpenAiResponses => openai_responses::request_view(body),
        Dialect::Anthropic => anthropic::request_view(body),
        Dialect::Gemini => gemini::request_view(body),
        Dialect::BedrockConverse => bedrock_converse::request_view(body),
    }
}

/// For the fuzz targets: whether a dialect's request view's fast path
/// (each dialect has one) answers `body` as the full parser does. `Err`
/// names the difference. Not part of the API.
#[doc(hidden)]
pub fn fast_path_agrees(dialect: Dialect, body: &[u8]) -> Result<(), String> {
    match dialect {
        Dialect::Anthropic => anthropic::fast_path_agrees(body),
        Dialect::OpenAiChat => openai_chat::fast_path_agrees(body),
        Dialect::OpenAiResponses => openai_responses::fast_path_agrees(body),
        Dialect::Gemini => gemini::fast_path_agrees(body),
        Dialect::BedrockConverse => bedrock_converse::fast_path_agrees(body),
    }
}

/// For the fuzz targets: where a dialect's response view has a fast path
/// (Anthropic), whether it answers `body` as the full parser does. `Err`
/// names the difference. Not part of the API.
#[doc(hidden)]
pub fn response_fast_path_agrees(dialect: Dialect, body: &[u8]) -> Result<(), String> {
    match dialect {
        Dialect::Anthropic => anthropic::response_fast_path_agrees(body),
        _ => Ok(()),
    }
}

/// A request body read once for two jobs: its [`RequestView`] and its
/// pairing defects (what [`validate`] finds), from one parse in every
/// dialect.
#[derive(Debug)]
pub struct Inspection<'a> {
    /// What [`request_view`] returns for the body.
    pub view: Result<RequestView<'a>, WireError>,
    /// What [`validate`] returns for the body.
    pub defects: Result<Vec<Defect>, WireError>,
}

/// A dialect reader's one pass: the view and, when asked for, the defects
/// it found on the way.
pub(crate) type Pass<'a> = Result<(RequestView<'a>, Option<Vec<Defect>>), WireError>;

/// For the fast-path checks ([`fast_path_agrees`], the dialects'
/// `fast_agrees_with_serde` tests): `None` when the fast path did not
/// answer; else whether its pass equals the full parser's in every field
/// (compared by their debug text), `Err` naming the difference.
pub(crate) fn same_pass(
    fast: Option<Pass<'_>>,
    full: impl FnOnce() -> String,
) -> Option<Result<(), String>> {
    let fast = format!("{:?}", fast?);
    let full = full();
    Some(if fast == full {
        Ok(())
    } else {
        Err(format!("fast path: {fast}\nfull parser: {full}"))
    })
}

impl<'a> Inspection<'a> {
    /// From one pass. A pass that failed (or found no defects to report)
    /// leaves them to `validate`, which reads the body on its own: the
    /// defects are always what [`validate`] finds.
    pub(crate) fn of(
        pass: Pass<'a>,
        validate: impl FnOnce() -> Result<Vec<Defect>, WireError>,
    ) -> Self {
        match pass {
            Ok((view, Some(defects))) => Inspection {
                view: Ok(view),
                defects: Ok(defects),
            },
            Ok((view, None)) => Inspection {
                view: Ok(view),
                defects: validate(),
            },
            Err(e) => Inspection {
                view: Err(e),
                defects: validate(),
            },
        }
    }
}

/// [`request_view`] and [`validate`] of one body, from one pass (see
/// [`Inspection`]). Either half may fail alone: a body
/// whose pairing reads but whose view does not still gets its defects.
/// `target`: a [`Dialect`], or a [`Target`] naming the model's family too
/// (see [`validate`]).
pub fn inspect(target: impl Into<Target>, body: &[u8]) -> Inspection<'_> {
    if let Err(e) = check_items(body) {
        return Inspection {
            view: Err(e.clone()),
            defects: Err(e),
        };
    }
    let target = target.into();
    match target.dialect {
        Dialect::OpenAiChat => openai_chat::inspect(body),
        Dialect::OpenAiResponses => openai_responses::inspect(body),
        Dialect::Anthropic => anthropic::inspect(body),
        Dialect::Gemini => gemini::inspect(body),
        Dialect::BedrockConverse => bedrock_converse::inspect(body, target.model),
    }
}

/// Read the tool calls, model, usage and stop reason of a non-streaming
/// response body.
pub fn response_view(dialect: Dialect, body: &[u8]) -> Result<ResponseView, WireError> {
    match dialect {
        Dialect::OpenAiChat => openai_chat::response_view(body),
        Dialect::OpenAiResponses => openai_responses::response_view(body),
        Dialect::Anthropic => anthropic::response_view(body),
        Dialect::Gemini => gemini::response_view(body),
        Dialect::BedrockConverse => bedrock_converse::response_view(body),
    }
}

/// The tool calls of a response the client must run and answer: its
/// [`response_view`]'s calls without the provider's own server tools
/// (Anthropic's `server_tool_use` and `mcp_tool_use`, which Anthropic
/// answers in the same message; the Responses API's hosted tools are not
/// calls in its view already): [`ResponseView::client_calls`], which also
/// serves a [`StreamParser`]'s view.
pub fn client_calls(dialect: Dialect, body: &[u8]) -> Result<Vec<ToolCall>, WireError> {
    Ok(response_view(dialect, body)?
        .client_calls()
        .cloned()
        .collect())
}

/// The call/result pairing defects a strict provider would reject, in
/// message order.
///
/// `target`: a [`Dialect`], or a [`Target`] naming the family of the
/// request's model too, where the provider's rules differ by model (a
/// Bedrock Converse request to Claude: a prefill ending in whitespace is
/// refused, as on Anthropic's API). A dialect alone gets the rules every
/// model of it shares.
pub fn validate(target: impl Into<Target>, body: &[u8]) -> Result<Vec<Defect>, WireError> {
    check_items(body)?;
    let target = target.into();
    match target.dialect {
        Dialect::OpenAiChat => openai_chat::validate(body),
        Dialect::OpenAiResponses => openai_responses::validate(body),
        Dialect::Anthropic => anthropic::validate(body),
        Dialect::Gemini => gemini::validate(body),
        Dialect::BedrockConverse => bedrock_converse::validate(body, target.model),
    }
}

/// A body the provider accepts, with a report of each change. A clean body
/// comes back borrowed and unchanged. `target` as for [`validate`].
pub fn repair(target: impl Into<Target>, body: &[u8]) -> Result<Repaired<'_>, WireError> {
    check_items(body)?;
    let target = target.into();
    match target.dialect {
        Dialect::OpenAiChat => openai_chat::repair(body),
        Dialect::OpenAiResponses => openai_responses::repair(body),
        Dialect::Anthropic => anthropic::repair(body),
        Dialect::Gemini => gemini::repair(body),
        Dialect::BedrockConverse => bedrock_converse::repair(body, target.model),
    }
}

/// The message(s) or item(s) to append to the conversation for these
/// outcomes, in the dialect's format: Anthropic one `user` message with a
/// `tool_result` block each; Chat one `tool` message each; Responses one
/// `function_call_output` item each; Gemini one `user` content with a
/// `functionResponse` part each; Bedrock Converse one `user` message with a
/// `toolResult` block each.
pub fn render_results(dialect: Dialect, outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    match dialect {
        Dialect::OpenAiChat => openai_chat::render_results(outcomes),
        Dialect::OpenAiResponses => openai_responses::render_results(outcomes),
        Dialect::Anthropic => anthropic::render_results(outcomes),
        Dialect::Gemini => gemini::render_results(outcomes),
        Dialect::BedrockConverse => bedrock_converse::render_results(outcomes),
    }
}

/// [`render_results`] for the calls of `response`, whose outcomes these
/// are: in Responses each answered by its own kind of output item
/// ([`ResponseView::call_kinds`]: a custom tool's
/// `custom_tool_call_output`, the built-in shell's `shell_call_output`
/// with its exit code, `apply_patch_call_output` with its status, …); in
/// the other dialects the same as [`render_results`].
pub fn render_answers(
    dialect: Dialect,
    response: &ResponseView,
    outcomes: &[ToolOutcome],
) -> Vec<serde_json::Value> {
    if dialect != Dialect::OpenAiResponses || response.call_kinds.is_empty() {
        return render_results(dialect, outcomes);
    }
    let mut kinds = std::collections::HashMap::with_capacity(response.call_kinds.len());
    for (i, kind) in &response.call_kinds {
        if let Some(call) = response.calls.get(*i) {
            kinds.entry(call.id.as_str()).or_insert(*kind);
        }
    }
    let kind_of = |call_id: &str| {
        (kinds.get(call_id).copied()).unwrap_or(openai_responses::CallKind::Function)
    };
    openai_responses::render_answers(outcomes, kind_of)
}

/// This crate's README, whose snippet is compiled (and run) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[derive(Debug)]
pub struct ReadmeDoctest;
