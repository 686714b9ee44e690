//! What an executor produced for one call.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ErrorKind;

/// How a failure starts in dialects without an error flag; see
/// [`ToolOutcome::flagless_text`].
pub const FLAGLESS_ERROR_PREFIX: &str = "Tool error (";

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The tool returned output.
    Success,
    /// The tool (or the executor on its behalf) failed.
    Error,
    /// The tool did not finish before its deadline.
    Timeout,
}

/// A failure, with the two texts: one for the model, one for the operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFailure {
    /// What went wrong.
    pub kind: ErrorKind,
    /// A short machine code (`not_available`, `http_404`, …) when known.
    pub code: Option<String>,
    /// Everything the operator needs: the full error chain.
    pub technical_message: String,
    /// What the model is told: short, actionable, no internals.
    pub model_message: String,
    /// Whether trying again later may help.
    pub retryable: bool,
    /// Whether the agent run must stop (the application is told).
    pub fatal: bool,
}

/// The outcome of executing one tool call: always exactly one per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// The call id, kept from the call.
    pub call_id: String,
    /// The tool's name as the model called it.
    pub tool: String,
    /// How the call ended.
    pub status: Status,
    /// The tool's output when it succeeded (or the fallback's).
    pub output: Option<serde_json::Value>,
    /// The failure, when it failed.
    pub error: Option<ToolFailure>,
    /// Wall time spent, retries included.
    #[serde(with = "duration_ms")]
    pub elapsed: Duration,
    /// How many times the tool was invoked (0 when it never ran); its
    /// fallback tool's attempts are in [`Self::fallback_attempts`].
    pub attempts: u32,
    /// The name of the fallback used, if any.
    pub fallback_used: Option<String>,
    /// How many times the fallback tool was invoked (0 without one, and
    /// for a fixed-output fallback).
    #[serde(default)]
    pub fallback_attempts: u32,
}

impl ToolOutcome {
    /// A successful outcome.
    pub fn success(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        output: serde_json::Value,
    ) -> Self {
        ToolOutcome {
            call_id: call_id.into(),
            tool: tool.into(),
            status: Status::Success,
            output: Some(output),
            error: None,
            elapsed: Duration::ZERO,
            attempts: 1,
            fallback_used: None,
            fallback_attempts: 0,
        }
    }

    /// A failed outcome; the status is `Timeout` for [`ErrorKind::Timeout`].
    pub fn failure(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        failure: ToolFailure,
    ) -> Self {
        let status = if matches!(failure.kind, ErrorKind::Timeout) {
            Status::Timeout
        } else {
            Status::Error
        };
        ToolOutcome {
            call_id: call_id.into(),
            tool: tool.into(),
            status,
            output: None,
            error: Some(failure),
            elapsed: Duration::ZERO,
            attempts: 0,
            fallback_used: None,
            fallback_attempts: 0,
        }
    }

    /// `true` unless the status is [`Status::Success`].
    pub fn is_failure(&self) -> bool {
        self.status != Status::Success
    }

    /// `true` when the failure must stop the agent run.
    pub fn is_fatal(&self) -> bool {
        self.error.as_ref().is_some_and(|e| e.fatal)
    }

    /// The text for a dialect without an error flag (Chat, Responses): on
    /// failure it is framed as `Tool error (<kind>): <model message>` so the
    /// model cannot mistake it for output (and the content detector
    /// recognises it); on success, the output as text.
    pub fn flagless_text(&self) -> String {
        match &self.error {
            Some(e) => format!(
                "{FLAGLESS_ERROR_PREFIX}{}): {}",
                e.kind.as_str(),
                e.model_message
            ),
            None => self.model_text(),
        }
    }

    /// The text the model is shown: the output as text on success, the
    /// model-facing message on failure.
    pub fn model_text(&self) -> String {
        match (&self.error, &self.output) {
            (Some(e), _) => e.model_message.clone(),
            (None, Some(serde_json::Value::String(s))) => s.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => String::new(),
        }
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1000.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(d)?;
        Ok(Duration::from_secs_f64((ms / 1000.0).max(0.0)))
    }
}
