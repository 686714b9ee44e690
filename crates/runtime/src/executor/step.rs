//! One step of an agent loop: a provider response in (a whole body, or a
//! stream its [`StreamParser`] read), the tool-result messages to append
//! out, in the response's dialect.

use std::fmt;

use serde_json::Value;
use toolwarden_core::{ToolCall, ToolOutcome};
use toolwarden_wire::{
    Dialect, ResponseView, StopCut, StreamParser, WireError, eventstream::EventStreamErrorKind,
};

use super::{Executor, cut};
use crate::{Context, FatalError};

/// What one step produced. Read it; only [`Executor::step`] and
/// [`Executor::step_stream`] make one (new fields may come):
///
/// ```compile_fail
/// let _ = toolwarden_runtime::StepResult {
///     calls: vec![], outcomes: vec![], messages: vec![], fatal: None,
///     cut: None,
/// };
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StepResult {
    /// The tool calls the client must answer, in order (the provider's
    /// own server tools left out: [`ResponseView::server_calls`]).
    pub calls: Vec<ToolCall>,
    /// One outcome per call, in order.
    pub outcomes: Vec<ToolOutcome>,
    /// The message(s) or item(s) to append after the assistant's turn, in
    /// the dialect's format (`toolwarden_wire::render_answers`: in
    /// Responses each call is answered by its own kind of output item).
    pub messages: Vec<Value>,
    /// Set when a call failed fatally: the run must stop, and this says
    /// why. The messages still hold one result per call.
    pub fatal: Option<FatalError>,
    /// Why the provider stopped the model's output before the model ended
    /// its turn, if it did ([`ResponseView::stop_cut`]); the calls that
    /// did not run are answered in [`outcomes`](Self::outcomes) and
    /// [`messages`](Self::messages) like the others, with an error that
    /// says why, and no attempt made:
    ///
    /// - [`StopCut::TokenLimit`] (Anthropic and Bedrock `max_tokens`, Chat
    ///   `length`, Responses `incomplete` for `max_output_tokens`, Gemini
    ///   `MAX_TOKENS`): the calls before the last were written whole and
    ///   ran. The last call, whose arguments may be cut (even when what is
    ///   left parses), was not run, unless the provider said it was
    ///   written whole ([`ResponseView::last_call_completed`]: a Responses item
    ///   `completed`): its outcome is an `invalid_arguments` failure with
    ///   code `cut_by_token_limit` that tells the model to make the call
    ///   again, shorter. At worst the model repeats a whole call.
    /// - [`StopCut::ContentFilter`], [`StopCut::Refusal`],
    ///   [`StopCut::Guardrail`], [`StopCut::Other`]: no call of the turn
    ///   ran. Each is a `cancelled` failure, code
    ///   `stopped_by_content_filter`, `refused`, `stopped_by_guardrail` or
    ///   `stopped_early`. (Anthropic asks that a refused turn be removed or
    ///   rephrased before the conversation goes on: the answers keep a
    ///   history that keeps it well-formed.)
    /// - [`StopCut::MalformedCall`]: the provider could not read the
    ///   turn's calls; none ran, each an `invalid_arguments` failure, code
    ///   `malformed_call`.
    ///
    /// The assistant's turn goes into the history as it came, its unrun
    /// calls with it, as for any call. Their texts are the runtime's own (a
    /// [`ToolPolicy::message`](crate::ToolPolicy::message) does not replace
    /// them), and their tools' metrics, breakers and loop guard do not
    /// count them: the tools never saw them. A cut turn without calls (a
    /// text the limit cut; a Gemini `MALFORMED_FUNCTION_CALL`, whose call
    /// is left out) is [`final`](Self::is_final), but the model did not
    /// end it: read this field before taking its text as the answer.
    pub cut: Option<StopCut>,
    /// The response as the wire layer read it: id, model, token usage,
    /// stop reason, and every call, server tools included. For
    /// [`Executor::step_stream`] the one place these are left, since the
    /// parser is consumed.
    pub response: ResponseView,
}

/// A response `step` or `step_stream` will not take for a turn of the
/// model: its [`kind`](Self::kind) says why, its message says what was
/// expected and what came. No call of it was run.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct StepError {
    kind: StepErrorKind,
    message: String,
    #[source]
    wire: Option<WireError>,
    response: Option<Box<ResponseView>>,
}

/// What kind of [`StepError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepErrorKind {
    /// The body could not be read, or is not a whole response of the
    /// dialect ([`StepError::wire_error`] has the wire layer's error:
    /// another dialect's body, the provider's error body, a stream given
    /// to [`Executor::step`]); or a Bedrock stream had a malformed
    /// event-stream frame.
    Unreadable,
    /// The stream carried the provider's error (an `error` event, a
    /// Responses `response.failed`, a Bedrock exception frame): the turn
    /// failed, even if calls came before the error.
    ProviderError,
    /// The stream ended before its dialect's final event (Anthropic
    /// `message_stop`, Chat `[DONE]` or a `finish_reason`, Responses
    /// `response.completed` / `failed` / `incomplete`, Gemini a
    /// `finishReason`, ConverseStream `messageStop`): a connection cut,
    /// or a stream of another dialect. Its calls may lack arguments, or
    /// be missing.
    EndedEarly,
    /// The parser's byte budget ([`StreamParser::limit`]) ran out: calls
    /// after the cut are missing and the one being read is cut short.
    Truncated,
}

// === impl StepResult ===

impl StepResult {
    /// Whether the model's output stopped at its token limit:
    /// [`cut`](Self::cut) is [`StopCut::TokenLimit`].
    pub fn hit_token_limit(&self) -> bool {
        self.cut == Some(StopCut::TokenLimit)
    }

    /// `true` when the model's turn is over: it made no tool call the
    /// client must answer, and did not pause. A turn Anthropic paused
    /// (`stop_reason: "pause_turn"`: its own server tools ran long) is not
    /// final, though it has no call to answer ([`messages`](Self::messages)
    /// is empty): send the assistant's turn back as it is and the model
    /// goes on.
    pub fn is_final(&self) -> bool {
        self.calls.is_empty() && self.response.stop_reason.as_deref() != Some("pause_turn")
    }
}

// === impl StepError ===

impl StepError {
    /// What kind of error.
    pub fn kind(&self) -> StepErrorKind {
        self.kind
    }

    /// The wire layer's error, for [`StepErrorKind::Unreadable`] bodies.
    pub fn wire_error(&self) -> Option<&WireError> {
        self.wire.as_ref()
    }

    /// What the stream held up to the error (its calls, usage, the
    /// provider's error text), for the stream kinds.
    pub fn response(&self) -> Option<&ResponseView> {
        self.response.as_deref()
    }

    fn stream(kind: StepErrorKind, message: String, view: ResponseView) -> Self {
        StepError {
            kind,
            message,
            wire: None,
            response: Some(Box::new(view)),
        }
    }
}

impl From<WireError> for StepError {
    fn from(e: WireError) -> Self {
        StepError {
            kind: StepErrorKind::Unreadable,
            message: format!("cannot read the model's response: {e}"),
            wire: Some(e),
            response: None,
        }
    }
}

impl fmt::Display for StepErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StepErrorKind::Unreadable => "unreadable",
            StepErrorKind::ProviderError => "provider error",
            StepErrorKind::EndedEarly => "ended early",
            StepErrorKind::Truncated => "truncated",
        })
    }
}

// === impl Executor ===

impl Executor {
    /// Run the tool calls of a non-streaming response `body` in `dialect`
    /// and render their results for the next request.
    ///
    /// `body` is the whole response body, not a stream (for streams,
    /// [`step_stream`](Self::step_stream)). A body that is not a response
    /// of `dialect` at all ([`toolwarden_wire::check_response`]: another
    /// dialect's response, the provider's error body, an SSE stream) is a
    /// [`StepError`] ([`StepErrorKind::Unreadable`]), never a final step
    /// without calls.
    ///
    /// A turn the provider stopped before the model ended it is a step,
    /// with [`StepResult::cut`] set: the token limit's last call, whose
    /// arguments may be cut, is answered with an error instead of being
    /// run; a turn a filter, refusal or guardrail stopped, or whose calls
    /// the provider could not read, runs none of its calls.
    pub async fn step(
        &self,
        dialect: Dialect,
        body: &[u8],
        ctx: &Context,
    ) -> Result<StepResult, StepError> {
        toolwarden_wire::check_response(dialect, body).map_err(|e| {
            let mut error = StepError::from(e);
            if is_sse(body) {
                error
                    .message
                    .push_str(" (for a stream: Executor::step_stream)");
            }
            error
        })?;
        let view = toolwarden_wire::response_view(dialect, body)?;
        Ok(self.run_step(dialect, view, ctx).await)
    }

    /// [`step`](Self::step) for a streamed response: `parser` is the
    /// [`StreamParser`] the application fed the stream's chunks to (while
    /// it showed the text); the results are rendered in the parser's
    /// [`dialect`](StreamParser::dialect). The same calls run as for the
    /// whole body: the provider's server tools left out, one outcome per
    /// call, [`StepResult::fatal`] when the run must stop.
    ///
    /// A stream that did not end as a whole turn is a [`StepError`], and
    /// none of its calls is run: the provider's error in it
    /// ([`StepErrorKind::ProviderError`]), a malformed Bedrock frame
    /// ([`StepErrorKind::Unreadable`]), the budget of
    /// [`StreamParser::limit`] spent ([`StepErrorKind::Truncated`]), no
    /// final event ([`StepErrorKind::EndedEarly`]: a cut connection, or
    /// another dialect's stream). [`StepError::response`] has what it held.
    /// A stream that ended as a turn the provider cut is a step, as in
    /// [`step`](Self::step): [`StepResult::cut`] set, and the calls the cut
    /// may have touched answered with an error, not run.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwarden_runtime::{tool_fn, BoxError, Context, Dialect, Executor, Registry};
    /// use toolwarden_runtime::toolwarden_wire::StreamParser;
    ///
    /// # tokio_test_block_on(async {
    /// let registry = Registry::new();
    /// registry.register(tool_fn("ls", "List files.", serde_json::json!({"type": "object"}),
    ///     |_args, _ctx| async { Ok::<_, BoxError>(serde_json::json!(["a.txt"])) })).unwrap();
    /// let executor = Executor::new(Arc::new(registry));
    ///
    /// let mut parser = StreamParser::new(Dialect::OpenAiChat);
    /// let chunks: [&[u8]; 4] = [
    ///     b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",",
    ///     b"\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\"}}]}}]}\n\n",
    ///     b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"}\"}}]}}]}\n\n",
    ///     b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
    /// ];
    /// for chunk in chunks {
    ///     parser.feed(chunk); // as the chunks arrive
    /// }
    /// let step = executor.step_stream(parser, &Context::default()).await?;
    /// assert_eq!(step.calls[0].name, "ls");
    /// assert_eq!(step.messages[0]["tool_call_id"], "call_1");
    /// assert_eq!(step.response.stop_reason.as_deref(), Some("tool_calls"));
    /// # Ok::<(), toolwarden_runtime::StepError>(())
    /// # }).unwrap();
    /// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    /// # }
    /// ```
    pub async fn step_stream(
        &self,
        parser: StreamParser,
        ctx: &Context,
    ) -> Result<StepResult, StepError> {
        let dialect = parser.dialect();
        let framing = parser.framing_error();
        let view = parser.finish();
        // Bedrock: a frame cut by the end of the stream is a stream that
        // ended early (the parser also gives it as the view's error); any
        // other framing error, a stream that could not be read.
        let cut = match framing {
            Some(e) if e.kind() != EventStreamErrorKind::Truncated => {
                let message = format!("cannot read the model's stream: {e}; no call was run");
                return Err(StepError::stream(StepErrorKind::Unreadable, message, view));
            }
            cut => cut.map(|e| e.to_string()),
        };
        if let Some(error) = view.error.as_ref().filter(|e| Some(*e) != cut.as_ref()) {
            let message = format!("the model's stream carried an error: {error}; no call was run");
            return Err(StepError::stream(
                StepErrorKind::ProviderError,
                message,
                view,
            ));
        }
        if view.truncated {
            let message = format!(
                "the model's stream outgrew the parser's limit: {} call(s) kept, the last may be cut short; no call was run",
                view.calls.len()
            );
            return Err(StepError::stream(StepErrorKind::Truncated, message, view));
        }
        if view.ended_early {
            let message = format!(
                "the model's stream ended before its final event ({}): {} call(s) seen, their arguments may be cut short; no call was run",
                final_event(dialect),
                view.calls.len()
            );
            return Err(StepError::stream(StepErrorKind::EndedEarly, message, view));
        }
        Ok(self.run_step(dialect, view, ctx).await)
    }

    /// Run the calls the client answers (the provider's server tools left
    /// out) and render their results.
    async fn run_step(
        &self,
        dialect: Dialect,
        response: ResponseView,
        ctx: &Context,
    ) -> StepResult {
        // Only the calls the client answers: a result for one of the
        // provider's server tools would get the next request refused.
        let mut calls: Vec<ToolCall> = response.client_calls().cloned().collect();
        let cut = response.stop_cut(dialect);
        if calls.is_empty() {
            return StepResult {
                calls,
                outcomes: Vec::new(),
                messages: Vec::new(),
                fatal: None,
                cut,
                response,
            };
        }
        // The calls a cut may have touched are answered, not run; the
        // ones before them run.
        let unrun = cut::unrun_from(dialect, &response, calls.len())
            .map(|(from, why)| (calls.split_off(from), why));
        let mut outcomes = if calls.is_empty() {
            Vec::new()
        } else {
            self.execute_batch(&calls, ctx).await
        };
        if let Some((unrun, why)) = unrun {
            let stop = cut::stop_text(&response);
            outcomes.extend(unrun.iter().map(|c| cut::unrun_outcome(why, &stop, c)));
            calls.extend(unrun);
        }
        let messages = toolwarden_wire::render_answers(dialect, &response, &outcomes);
        let fatal = outcomes.iter().find_map(FatalError::from_outcome);
        if let Some(f) = &fatal {
            tracing::error!(tool = %crate::text::for_log(&f.tool), call_id = %crate::text::for_log(&f.call_id), kind = f.kind.name(), "fatal tool failure: the run must stop: {}", f.message);
        }
        StepResult {
            calls,
            outcomes,
            messages,
            fatal,
            cut,
            response,
        }
    }
}

/// Whether `body` starts as server-sent events do.
fn is_sse(body: &[u8]) -> bool {
    let body = body.trim_ascii_start();
    [&b"data:"[..], b"event:", b"id:", b"retry:", b":"]
        .iter()
        .any(|field| body.starts_with(field))
}

/// The event that ends a stream of `dialect`, for the error's message.
fn final_event(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic => "`message_stop`",
        Dialect::OpenAiChat => "`[DONE]` or a `finish_reason`",
        Dialect::OpenAiResponses => "`response.completed`, `failed` or `incomplete`",
        Dialect::Gemini => "a chunk with a `finishReason`",
        Dialect::BedrockConverse => "`messageStop`",
    }
}
