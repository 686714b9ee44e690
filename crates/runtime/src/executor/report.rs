//! Turning a failure into its outcome, its log line (at the level the
//! operator table prescribes), its metrics and its loop-guard count.

use std::sync::atomic::Ordering::Relaxed;

use tokio::time::Instant;
use toolwarden_core::{ErrorKind, Status, ToolCall, ToolFailure, ToolOutcome};

use super::{Executor, Failed, Progress, guard_key_of};
use crate::{
    errors::{TextContext, model_message, name_the_resource},
    health,
    registry::Entry,
    text::for_log,
};

const REPEATED: &str = "repeated_failure";

/// `success`, `error` or `timeout`.
pub(super) fn status_str(outcome: &ToolOutcome) -> &'static str {
    match outcome.status {
        Status::Success => "success",
        Status::Error => "error",
        Status::Timeout => "timeout",
    }
}

/// The failure for a call the loop guard blocks.
pub(super) fn blocked(entry: &Entry, n: u32) -> Failed {
    Failed {
        kind: ErrorKind::Cancelled,
        code: Some(REPEATED.into()),
        technical: format!(
            "not run: this call to '{}' already failed {n} times with the same arguments in this run",
            entry.name
        ),
        summary: String::new(),
    }
}

impl Executor {
    /// The outcome of a call still running when the run's
    /// [`crate::Deadline`] passed: stopped, not failed (the loop guard and
    /// the breaker do not count it), but counted in the metrics of the
    /// tool it had reached (a tool that always hangs must not look
    /// healthy; a call still queued behind others says nothing of it): its
    /// fallback tool once it went on to it (the tool's own failure was
    /// counted then), else the tool. The attempts it made are reported:
    /// the tool's in `attempts`, the fallback's in `fallback_attempts`.
    pub(super) fn past_the_deadline(
        &self,
        entry: Option<&Entry>,
        call: &ToolCall,
        start: Instant,
        progress: &Progress,
    ) -> ToolOutcome {
        let elapsed = start.elapsed();
        let failure = ToolFailure {
            kind: ErrorKind::Cancelled,
            code: Some("run_deadline".into()),
            technical_message: format!(
                "the run's deadline passed after {} ms, before the call finished",
                elapsed.as_millis()
            ),
            model_message: "The tool call was stopped: the run's time is up.".into(),
            retryable: false,
            fatal: false,
        };
        tracing::warn!(tool = %for_log(&call.name), call_id = %for_log(&call.id), "tool call stopped at the run's deadline");
        let fallback = progress.fallback.get();
        let attempts = progress.tool.attempts.load(Relaxed);
        let fallback_attempts = progress.at_fallback.attempts.load(Relaxed);
        if let Some((entry, attempts)) = progress.reached(entry) {
            entry.metrics.record_failure(
                &failure.kind,
                elapsed,
                attempts.saturating_sub(1),
                &call.id,
                &failure.technical_message,
                true,
            );
        }
        let mut outcome = ToolOutcome::failure(call.id.as_str(), call.name.as_str(), failure);
        outcome.elapsed = elapsed;
        outcome.attempts = attempts;
        outcome.fallback_attempts = fallback_attempts;
        outcome.fallback_used = fallback
            .and(entry.and_then(|e| e.policy.fallback.as_ref()))
            .map(|f| f.label().to_string());
        outcome
    }

    /// A call whose future the application dropped before it ended (its
    /// own timeout, a `select!` that won elsewhere, a dropped batch or
    /// `step`): no outcome, nothing the model is told. Counted once, as
    /// cancelled, in the tool it had reached ([`Progress::reached`]): a
    /// tool that always hangs must not look healthy. Not a failure: the
    /// loop guard does not count it, and the breaker's permit, dropped
    /// with the attempt, tells it nothing (a probe's slot is freed).
    pub(super) fn cancelled(&self, entry: Option<&Entry>, start: Instant, progress: &Progress) {
        if let Some((entry, _)) = progress.reached(entry) {
            let elapsed = start.elapsed();
            entry.metrics.record_cancelled(elapsed);
            tracing::debug!(
                tool = %entry.name,
                elapsed_ms = elapsed.as_millis() as u64,
                "tool call cancelled: the application dropped it before it ended"
            );
        }
    }

    /// The outcome of a call whose panic escaped the attempt's guard (its
    /// future panicked when dropped at the run's deadline): an internal
    /// failure of the tool, reported like any other, with the `attempts`
    /// the tool made.
    pub(super) fn panicked(
        &self,
        entry: Option<&Entry>,
        call: &ToolCall,
        start: Instant,
        attempts: u32,
        failed: Failed,
    ) -> ToolOutcome {
        match entry {
            Some(entry) => self.failure(entry, call, start, attempts, failed, None).0,
            None => {
                // Only registered tools run code that can panic; kept for
                // the one-outcome promise.
                let failure = ToolFailure {
                    kind: failed.kind,
                    code: failed.code,
                    technical_message: failed.technical,
                    model_message: self.unexpected.to_string(),
                    retryable: false,
                    fatal: false,
                };
                tracing::error!(call_id = %call.id, error = %toolwarden_core::redact::without_secrets(&failure.technical_message), "unexpected tool error");
                let mut outcome =
                    ToolOutcome::failure(call.id.as_str(), call.name.as_str(), failure);
                outcome.elapsed = start.elapsed();
                outcome
            }
        }
    }

    /// The outcome of a call whose fallback tool's future panicked when
    /// the run's deadline dropped it: the fallback's failure, counted in
    /// its metrics and loop guard as a failure of the fallback run to its
    /// end would be (the tool's own failure was counted when the call went
    /// on to it), under the call's id and name, naming the fallback.
    pub(super) fn fallback_panicked(
        &self,
        entry: Option<&Entry>,
        fallback: &Entry,
        call: &ToolCall,
        start: Instant,
        progress: &Progress,
        mut failed: Failed,
    ) -> ToolOutcome {
        let label = entry
            .and_then(|e| e.policy.fallback.as_ref())
            .map_or(&*fallback.name, |f| f.label())
            .to_string();
        failed.technical = format!(
            "fallback '{label}' failed: {}; the tool itself had failed",
            failed.technical
        );
        let fallback_attempts = progress.at_fallback.attempts.load(Relaxed);
        let (mut outcome, _) = self.failure(fallback, call, start, fallback_attempts, failed, None);
        outcome.attempts = progress.tool.attempts.load(Relaxed);
        outcome.fallback_attempts = fallback_attempts;
        outcome.fallback_used = Some(label);
        outcome
    }

    /// The outcome for a name no tool or alias has.
    pub(super) fn unknown_tool(&self, call: &ToolCall, start: Instant) -> ToolOutcome {
        let failure = ToolFailure {
            kind: ErrorKind::NotAvailable,
            code: Some("unknown_tool".into()),
            technical_message: format!(
                "no tool named '{}' is registered",
                super::clip(&call.name, 200)
            ),
            model_message: self.registry.not_available_message(&call.name),
            retryable: false,
            fatal: false,
        };
        tracing::warn!(
            tool = %for_log(&call.name),
            call_id = %for_log(&call.id),
            reason = "unknown tool",
            "tool not available"
        );
        let mut outcome = ToolOutcome::failure(call.id.as_str(), call.name.as_str(), failure);
        outcome.elapsed = start.elapsed();
        outcome
    }

    /// The outcome of a failed call of a registered tool.
    pub(super) fn failure(
        &self,
        entry: &Entry,
        call: &ToolCall,
        start: Instant,
        attempts: u32,
        failed: Failed,
        guard_key: Option<u64>,
    ) -> (ToolOutcome, Option<ErrorKind>) {
        let policy = &entry.policy;
        let Failed {
            mut kind,
            code,
            mut technical,
            summary,
        } = failed;
        let resource = name_the_resource(&mut kind, &mut technical, &call.arguments);
        let disposition = policy.disposition_of(&kind);
        let unexpected = policy
            .message_of(&ErrorKind::Internal)
            .unwrap_or(&self.unexpected);
        let mut model = match (policy.message_of(&kind), &kind) {
            (Some(text), _) => text.to_string(),
            // Refused before any attempt (disabled, paused): the tools the
            // model may call instead. A tool that ran and answered "not
            // available" itself gets no list, which would name it.
            (None, ErrorKind::NotAvailable) if attempts == 0 => {
                self.registry.not_available_message(&call.name)
            }
            (None, ErrorKind::Cancelled) if code.as_deref() == Some(REPEATED) => format!(
                "This exact call has already failed {} times with the same arguments. Do not repeat it: change the arguments or take a different approach.",
                self.loop_guard.limit()
            ),
            (None, _) => model_message(
                &kind,
                &summary,
                TextContext {
                    tool: &call.name,
                    attempts,
                    retryable: disposition.retryable,
                    show_details: disposition.show_details,
                    unexpected,
                    resource: resource.as_deref(),
                },
            ),
        };
        let counts = !disposition.fatal
            && !matches!(
                kind,
                ErrorKind::NotAvailable | ErrorKind::CircuitOpen { .. }
            )
            && code.as_deref() != Some(REPEATED);
        if counts {
            let key = guard_key.unwrap_or_else(|| guard_key_of(entry, &call.arguments));
            let n = self.loop_guard.record_failure(key);
            if n >= self.loop_guard.limit() {
                // The texts the model sees may lack a final stop (the
                // default unexpected-error text, an application's own).
                if !model.trim_end().ends_with(['.', '!', '?']) {
                    model.truncate(model.trim_end().len());
                    model.push('.');
                }
                model.push_str(&format!(
                    " This call has now failed {n} times with the same arguments; change your approach instead of repeating it."
                ));
            }
        }
        let elapsed = start.elapsed();
        let failure = ToolFailure {
            kind: kind.clone(),
            code,
            technical_message: technical,
            model_message: model,
            retryable: disposition.retryable,
            fatal: disposition.fatal,
        };
        log_failure(entry, &failure, attempts);
        // A call refused before the tool did any work (the loop guard's
        // block among them) says nothing of the tool's health.
        let judged = health::judges_the_tool(&kind) && failure.code.as_deref() != Some(REPEATED);
        entry.metrics.record_failure(
            &kind,
            elapsed,
            attempts.saturating_sub(1),
            &call.id,
            &failure.technical_message,
            judged,
        );
        let mut outcome = ToolOutcome::failure(call.id.as_str(), call.name.as_str(), failure);
        outcome.elapsed = elapsed;
        outcome.attempts = attempts;
        (outcome, Some(kind))
    }
}

/// One log line per failed call, at the level of the operator table. The
/// technical text is logged without credentials (an HTTP client's error
/// names the URL it fetched, `?key=…` included).
fn log_failure(entry: &Entry, f: &ToolFailure, attempts: u32) {
    let kind = f.kind.name();
    let code = f.code.as_deref().unwrap_or("");
    let error = toolwarden_core::redact::without_secrets(&f.technical_message);
    match &f.kind {
        ErrorKind::NotAvailable => {
            tracing::warn!(kind, code, reason = %error, "tool not available")
        }
        ErrorKind::CircuitOpen { .. } => {
            let breaker = entry
                .breaker
                .as_ref()
                .map_or("none", |b| b.state().as_str());
            let trips = entry.breaker.as_ref().map_or(0, |b| b.trips());
            tracing::warn!(kind, code, breaker, trips, reason = %error, "circuit open: call rejected")
        }
        ErrorKind::InvalidArguments => {
            tracing::debug!(kind, code, error = %error, "invalid tool arguments")
        }
        ErrorKind::ResourceNotFound { resource } => tracing::info!(
            kind,
            code,
            resource = %toolwarden_core::redact::without_secrets(resource.as_deref().unwrap_or("")),
            error = %error,
            "tool resource not found"
        ),
        ErrorKind::Timeout | ErrorKind::RateLimited { .. } | ErrorKind::Network => {
            tracing::error!(kind, code, attempts, retryable = f.retryable, error = %error, "tool failed after retries")
        }
        ErrorKind::Authentication | ErrorKind::Permission => {
            tracing::error!(kind, code, attempts, fatal = f.fatal, error = %error, "tool denied access")
        }
        ErrorKind::Cancelled => {
            tracing::info!(kind, code, error = %error, "tool call cancelled")
        }
        _ => {
            tracing::error!(kind, code, attempts, fatal = f.fatal, error = %error, "unexpected tool error")
        }
    }
}
