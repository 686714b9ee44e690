//! A turn the provider stopped before the model ended it
//! ([`StopCut`], `ResponseView::stop_cut`): which of its calls still run,
//! and what the others are answered with.
//!
//! - The token limit cut the output where it fell: the calls before the
//!   last were written whole and run. The last may have only part of its
//!   arguments (a provider may even have parsed what was left into valid
//!   JSON, or given `{}`): it is answered with an error, not run, unless
//!   the provider says it was written whole
//!   (`ResponseView::last_call_completed`: a Responses item `completed`).
//! - A content filter, a refusal, a guardrail, a malformed call or another
//!   stop the provider names: the provider judged, or could not read, the
//!   turn as a whole, and may have withheld part of it. None of its calls
//!   runs; each is answered with an error that says why.
//!
//! The tool never sees such a call: its metrics, breaker and loop guard do
//! not count it.

use toolwarden_core::{ErrorKind, ToolCall, ToolFailure, ToolOutcome};
use toolwarden_wire::{Dialect, ResponseView, StopCut};

use crate::text::for_log;

/// The code of a call the token limit cut.
pub(crate) const CUT_BY_TOKEN_LIMIT: &str = "cut_by_token_limit";

/// Where the client's calls stop running: the position (among the client
/// calls, `client_calls` of them) from which each is answered rather than
/// run, and why; `None` when every call runs.
pub(super) fn unrun_from(
    dialect: Dialect,
    response: &ResponseView,
    client_calls: usize,
) -> Option<(usize, StopCut)> {
    let cut = response.stop_cut(dialect)?;
    if cut.runs_whole_calls() {
        let last = client_calls.checked_sub(1)?;
        return last_call_is_cut(response).then_some((last, cut));
    }
    (client_calls > 0).then_some((0, cut))
}

/// Whether the token limit may have cut the last of the client's calls:
/// the response's last call is one the client answers (a provider's
/// server call after it would mean the output went on past it), and the
/// provider does not say it was written whole.
fn last_call_is_cut(response: &ResponseView) -> bool {
    let Some(last) = response.calls.len().checked_sub(1) else {
        return false;
    };
    response.server_calls.binary_search(&last).is_err() && !response.last_call_completed
}

/// The provider's stop as it said it, for the log: the stop reason, and
/// Responses' `incomplete_details.reason` after it.
pub(super) fn stop_text(response: &ResponseView) -> String {
    let stop = response.stop_reason.as_deref().unwrap_or("none");
    match &response.incomplete_reason {
        Some(reason) => format!("{stop} ({reason})"),
        None => stop.to_string(),
    }
}

/// The outcome of a call the `cut` left unrun: a failure with no attempt
/// made, neither retryable as it is nor fatal, whose text says why.
/// `stop` is the provider's own stop reason, for the log.
pub(super) fn unrun_outcome(cut: StopCut, stop: &str, call: &ToolCall) -> ToolOutcome {
    let (kind, code, model_message, technical) = texts(cut);
    tracing::warn!(
        tool = %for_log(&call.name),
        call_id = %for_log(&call.id),
        stop = %for_log(stop),
        cut = cut.as_str(),
        "{technical}: answered, not run"
    );
    let failure = ToolFailure {
        kind,
        code: Some(code.into()),
        technical_message: format!(
            "{technical} (stop reason {stop}, {} byte(s) of arguments); not run",
            call.arguments.len()
        ),
        model_message: model_message.into(),
        retryable: false,
        fatal: false,
    };
    ToolOutcome::failure(call.id.as_str(), call.name.as_str(), failure)
}

/// Each cut's failure kind, code, text for the model, and what happened
/// for the operator.
fn texts(cut: StopCut) -> (ErrorKind, &'static str, &'static str, &'static str) {
    match cut {
        StopCut::TokenLimit => (
            ErrorKind::InvalidArguments,
            CUT_BY_TOKEN_LIMIT,
            "Your output reached its token limit while this call was being written, so its arguments may be incomplete and it was not run. Make the call again with shorter arguments, or split the work into smaller calls.",
            "the model's output stopped at its token limit while writing this call",
        ),
        StopCut::ContentFilter => (
            ErrorKind::Cancelled,
            "stopped_by_content_filter",
            "The provider's content filter stopped your turn, so none of its tool calls was run.",
            "the provider's content filter stopped the turn",
        ),
        StopCut::Refusal => (
            ErrorKind::Cancelled,
            "refused",
            "The provider's safety system stopped your turn (a refusal), so none of its tool calls was run.",
            "the provider's safety classifiers stopped the turn (refusal)",
        ),
        StopCut::Guardrail => (
            ErrorKind::Cancelled,
            "stopped_by_guardrail",
            "A guardrail stopped your turn, so none of its tool calls was run.",
            "a guardrail intervened in the turn",
        ),
        StopCut::MalformedCall => (
            ErrorKind::InvalidArguments,
            "malformed_call",
            "The provider could not read the tool calls of your turn (malformed, or a tool you were not given), so none of them was run. Make the calls again, with arguments that match each tool's schema.",
            "the provider could not read the turn's tool calls",
        ),
        // `StopCut` is non-exhaustive: a kind added later is a stop the
        // provider names, and runs nothing until it is described here.
        _ => (
            ErrorKind::Cancelled,
            "stopped_early",
            "The provider stopped your turn before you finished it, so none of its tool calls was run.",
            "the provider stopped the turn early",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::tests::Capture;

    /// Regression: the warning of a call a cut left unrun logged the tool
    /// name and call id as the model wrote them, whole: a name of
    /// megabytes was a log line of megabytes, and a newline in it forged
    /// a line of its own. They are clipped and escaped as the executor's
    /// other log lines are.
    #[test]
    fn the_cut_warning_clips_and_escapes_the_callers_text() {
        let (cap, _g) = Capture::install();
        let name = format!("w\nINFO forged\u{1b}[2J{}", "x".repeat(100_000));
        let call = ToolCall {
            id: format!("id\r{}", "7".repeat(100_000)),
            name,
            arguments: "{}".into(),
        };
        let outcome = unrun_outcome(StopCut::TokenLimit, "length\n", &call);
        assert_eq!(outcome.tool, call.name, "the outcome keeps the name");
        let ev = cap.find(
            "the model's output stopped at its token limit while writing this call: answered, not run",
        );
        let tool = &ev.fields["tool"];
        assert!(tool.starts_with("w\\nINFO forged\\u{1b}[2Jxxx"), "{tool}");
        for (field, text) in &ev.fields {
            assert!(text.len() < 300, "{field}: {} bytes", text.len());
            assert!(!text.chars().any(char::is_control), "{field}: {text:?}");
        }
    }
}
