//! One step of an agent loop: a provider response in, the tool-result
//! messages to append out, in the response's dialect.

use serde_json::Value;
use toolwarden_core::{ToolCall, ToolOutcome};
use toolwarden_wire::{Dialect, WireError};

use super::Executor;
use crate::{Context, FatalError};

/// What one step produced. Read it; only [`Executor::step`] makes one (new
/// fields may come):
///
/// ```compile_fail
/// let _ = toolwarden_runtime::StepResult {
///     calls: vec![], outcomes: vec![], messages: vec![], fatal: None,
/// };
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StepResult {
    /// The tool calls the response made, in order.
    pub calls: Vec<ToolCall>,
    /// One outcome per call, in order.
    pub outcomes: Vec<ToolOutcome>,
    /// The message(s) or item(s) to append after the assistant's turn, in
    /// the dialect's format (`toolwarden_wire::render_results`).
    pub messages: Vec<Value>,
    /// Set when a call failed fatally: the run must stop, and this says
    /// why. The messages still hold one result per call.
    pub fatal: Option<FatalError>,
}

/// The response body could not be read, or is not a whole response of the
/// dialect `step` was given (another dialect's body, an API error body, a
/// stream): the error's kind and message say which, and what was expected.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the model's response: {0}")]
pub struct StepError(#[from] pub WireError);

// === impl StepResult ===

impl StepResult {
    /// `true` when the model made no tool call: its turn is final.
    pub fn is_final(&self) -> bool {
        self.calls.is_empty()
    }
}

impl Executor {
    /// Run the tool calls of a non-streaming response `body` in `dialect`
    /// and render their results for the next request.
    ///
    /// `body` is the whole response body, not a stream (for streams,
    /// [`toolwarden_wire::StreamParser`] gives the calls, and
    /// [`execute_batch`](Self::execute_batch) and
    /// [`toolwarden_wire::render_results`] do the rest). A body that is
    /// not a response of `dialect` at all
    /// ([`toolwarden_wire::check_response`]: another dialect's response,
    /// the provider's error body, an SSE stream) is a [`StepError`], never
    /// a final step without calls.
    pub async fn step(
        &self,
        dialect: Dialect,
        body: &[u8],
        ctx: &Context,
    ) -> Result<StepResult, StepError> {
        toolwarden_wire::check_response(dialect, body)?;
        // Only the calls the client answers: a result for one of the
        // provider's server tools would get the next request refused.
        let calls = toolwarden_wire::client_calls(dialect, body)?;
        if calls.is_empty() {
            return Ok(StepResult {
                calls,
                outcomes: Vec::new(),
                messages: Vec::new(),
                fatal: None,
            });
        }
        let outcomes = self.execute_batch(&calls, ctx).await;
        let messages = toolwarden_wire::render_results(dialect, &outcomes);
        let fatal = outcomes.iter().find_map(FatalError::from_outcome);
        if let Some(f) = &fatal {
            tracing::error!(tool = %f.tool, call_id = %f.call_id, kind = f.kind.name(), "fatal tool failure: the run must stop: {}", f.message);
        }
        Ok(StepResult {
            calls,
            outcomes,
            messages,
            fatal,
        })
    }
}
