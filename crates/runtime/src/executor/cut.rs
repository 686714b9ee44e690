//! A turn the model's output token limit cut: the output stopped where the
//! limit fell, so the calls before the last were written whole, and the
//! last may have only part of its arguments (a provider may even have
//! parsed what was left into valid JSON, or given `{}`). That call is
//! answered with an error, not run.

use toolwarden_core::{ErrorKind, ToolCall, ToolFailure, ToolOutcome};
use toolwarden_wire::{Dialect, ResponseView};

/// The code of a cut call's failure.
pub(crate) const CUT_BY_TOKEN_LIMIT: &str = "cut_by_token_limit";

/// What the model is told about a call its token limit cut.
const MODEL_MESSAGE: &str = "Your output reached its token limit while this call was being written, so its arguments may be incomplete and it was not run. Make the call again with shorter arguments, or split the work into smaller calls.";

/// Whether the last of the client's calls may have been cut by the token
/// limit: the turn stopped at the limit, and the response's last call is
/// one the client answers (a provider's server call after it would mean
/// the output went on past it).
pub(super) fn last_call_is_cut(dialect: Dialect, response: &ResponseView) -> bool {
    let Some(last) = response.calls.len().checked_sub(1) else {
        return false;
    };
    response.hit_token_limit(dialect) && response.server_calls.binary_search(&last).is_err()
}

/// The outcome of a call the token limit cut: an `invalid_arguments`
/// failure (code [`CUT_BY_TOKEN_LIMIT`]), neither retryable as it is nor
/// fatal, with no attempt made.
pub(super) fn cut_outcome(call: &ToolCall) -> ToolOutcome {
    tracing::warn!(
        tool = %call.name,
        call_id = %call.id,
        "the model's output hit its token limit in this call's arguments: answered, not run"
    );
    let failure = ToolFailure {
        kind: ErrorKind::InvalidArguments,
        code: Some(CUT_BY_TOKEN_LIMIT.into()),
        technical_message: format!(
            "the model's output stopped at its token limit while writing this call ({} byte(s) of arguments); not run",
            call.arguments.len()
        ),
        model_message: MODEL_MESSAGE.into(),
        retryable: false,
        fatal: false,
    };
    ToolOutcome::failure(call.id.as_str(), call.name.as_str(), failure)
}
