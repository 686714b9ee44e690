//! The executor: exactly one [`ToolOutcome`] per call, whatever the tool
//! does.
//!
//! For one call: resolve the name (aliases included) → check the state →
//! parse the arguments → the run's loop guard → validate them → the breaker →
//! the `sequential` lock and the concurrency limit → attempts, each under
//! the timeout with panics caught, retried with backoff when the failure is
//! retryable → the outcome, its log line and metrics → the fallback when
//! the tool is down.

mod attempt;
mod batch;
mod cut;
mod report;
mod slot;
mod step;

use std::{
    panic::AssertUnwindSafe,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, AtomicU32, Ordering::Relaxed},
    },
};

use futures_util::{FutureExt, future::BoxFuture};
use tokio::{sync::Semaphore, time::Instant};
use toolwarden_core::{ErrorKind, ToolCall, ToolFailure, ToolOutcome};
use tracing::{Instrument, field::Empty};

use crate::{
    Context, Registry,
    errors::{self, UNEXPECTED_MESSAGE},
    policy::{Fallback, LoopGuard, LoopGuardConfig, PolicyError},
    registry::{Entry, ToolState},
    validate::parse_arguments,
};

pub use step::{StepError, StepErrorKind, StepResult};

/// Executor settings. Defaults: 16 calls at a time, the default loop
/// guard, the default unexpected-error text, a randomly seeded jitter.
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    concurrency: usize,
    loop_guard: LoopGuardConfig,
    unexpected_message: Arc<str>,
    seed: Option<u64>,
}

/// Runs tool calls against a shared [`Registry`]. Create one per agent
/// run: the loop guard's memory is the run's; breakers and metrics live in
/// the registry and are shared by all runs. The registry may change while
/// executors run ([`Registry::register`], [`Registry::remove`] through
/// [`Executor::registry`]): each call looks its tool up when it starts.
#[derive(Debug)]
pub struct Executor {
    registry: Arc<Registry>,
    /// Tells this executor's nested calls apart (`slot`).
    id: u64,
    concurrency: Semaphore,
    limit: usize,
    loop_guard: LoopGuard,
    unexpected: Arc<str>,
    rng: Mutex<fastrand::Rng>,
}

/// How far a call got: what the run's deadline cuts, should it cut the
/// call, and so which tool's metrics count the cut and how many attempts
/// its outcome reports.
#[derive(Default)]
struct Progress {
    /// The call at its tool.
    tool: Turn,
    /// The fallback tool the call went on to, the tool's own failure
    /// counted already: a cut now is the fallback's.
    fallback: OnceLock<Arc<Entry>>,
    /// The call at the fallback tool.
    at_fallback: Turn,
}

/// How far a call got at one tool.
#[derive(Default)]
struct Turn {
    /// The call holds its turn at the tool (the `sequential` lock and a
    /// concurrency slot): a cut before that never reached the tool and
    /// says nothing of its health.
    reached: AtomicBool,
    /// The attempts that ran the tool so far.
    attempts: AtomicU32,
}

/// Counts a call whose `execute` future the application dropped before
/// it ended ([`Executor::cancelled`]); disarmed once it has its outcome.
struct Dropped<'a> {
    executor: &'a Executor,
    entry: Option<&'a Entry>,
    start: Instant,
    progress: &'a Progress,
    armed: bool,
}

/// Ends an `execute_tool` span whose call was dropped before its outcome
/// (the application's timeout or `select!`, the run's deadline) as a
/// cancelled one: `outcome = "cancelled"`, `error.type = "Cancelled"`
/// (the kind's name, as a failure's), `otel.status_code = "ERROR"`, the
/// fields the other outcomes set; the span closes after this, with its
/// last handle.
struct SpanCut<'a> {
    span: &'a tracing::Span,
    armed: bool,
}

/// A failure before it becomes a [`toolwarden_core::ToolFailure`].
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) kind: ErrorKind,
    pub(crate) code: Option<String>,
    pub(crate) technical: String,
    pub(crate) summary: String,
}

// === impl Failed ===

impl Failed {
    /// A panic of the tool's code, with its message for the operator.
    pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> Self {
        Failed {
            kind: ErrorKind::Internal,
            code: Some("panic".into()),
            technical: errors::panic_message(payload),
            summary: String::new(),
        }
    }
}

// === impl Progress ===

impl Progress {
    /// The tool a cut now is counted in, with the attempts it made there:
    /// the fallback tool once the call went on to it (the tool's own
    /// failure counted then), else the tool; none if the call had not
    /// reached it (still queued: that says nothing of the tool).
    fn reached<'a>(&'a self, entry: Option<&'a Entry>) -> Option<(&'a Entry, u32)> {
        match self.fallback.get() {
            Some(other) => Some((&**other, self.at_fallback.attempts.load(Relaxed)))
                .filter(|_| self.at_fallback.reached.load(Relaxed)),
            None => entry
                .map(|e| (e, self.tool.attempts.load(Relaxed)))
                .filter(|_| self.tool.reached.load(Relaxed)),
        }
    }
}

// === impl Dropped ===

impl Drop for Dropped<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.executor
                .cancelled(self.entry, self.start, self.progress);
        }
    }
}

// === impl SpanCut ===

impl Drop for SpanCut<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.span.record("outcome", "cancelled");
            self.span.record("error.type", ErrorKind::Cancelled.name());
            self.span.record("otel.status_code", "ERROR");
        }
    }
}

// === impl ExecutorConfig ===

impl ExecutorConfig {
    /// At most `concurrency` (≥ 1) calls run at once. A call a tool makes
    /// on the same executor while it runs (a nested call) never waits for
    /// a slot only its parent could free: it takes a free slot, else runs
    /// in its parent's, lent to one nested call at a time.
    pub fn with_concurrency(mut self, concurrency: usize) -> Result<Self, PolicyError> {
        if concurrency == 0 || concurrency > Semaphore::MAX_PERMITS {
            return Err(PolicyError::new(
                "executor.concurrency",
                "must be between 1 and tokio's Semaphore::MAX_PERMITS",
            ));
        }
        self.concurrency = concurrency;
        Ok(self)
    }

    /// The run's loop guard.
    pub fn with_loop_guard(mut self, loop_guard: LoopGuardConfig) -> Self {
        self.loop_guard = loop_guard;
        self
    }

    /// What the model is told about unexpected errors (per tool:
    /// [`crate::ToolPolicy::message`] with [`ErrorKind::Internal`]).
    pub fn with_unexpected_message(mut self, text: impl Into<Arc<str>>) -> Self {
        self.unexpected_message = text.into();
        self
    }

    /// Seed the retry jitter (for reproducible tests).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            concurrency: 16,
            loop_guard: LoopGuardConfig::default(),
            unexpected_message: Arc::from(UNEXPECTED_MESSAGE),
            seed: None,
        }
    }
}

// === impl Executor ===

impl Executor {
    /// An executor with the default settings.
    pub fn new(registry: Arc<Registry>) -> Self {
        Executor::with_config(registry, ExecutorConfig::default())
    }

    /// An executor with `config`.
    pub fn with_config(registry: Arc<Registry>, config: ExecutorConfig) -> Self {
        let rng = match config.seed {
            Some(seed) => fastrand::Rng::with_seed(seed),
            None => fastrand::Rng::new(),
        };
        Executor {
            registry,
            id: slot::next_executor_id(),
            concurrency: Semaphore::new(config.concurrency),
            limit: config.concurrency,
            loop_guard: LoopGuard::new(config.loop_guard),
            unexpected: config.unexpected_message,
            rng: Mutex::new(rng),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Run one call. Never panics; always returns its outcome (a failure
    /// outcome carries what the model should be told). With a
    /// [`crate::Deadline`] in `ctx`, a call still running then is stopped
    /// and its outcome is a `cancelled` failure.
    pub async fn execute(&self, call: &ToolCall, ctx: &Context) -> ToolOutcome {
        let start = Instant::now();
        let deadline = ctx.get::<crate::Deadline>().map(|d| d.0);
        // What a cut at the deadline counts, and in which tool.
        let progress = Progress::default();
        // Looked up once: the call keeps this entry (an `Arc`) to its end,
        // its deadline or panic outcome included, even if the tool is
        // removed (or removed and registered again) meanwhile.
        let entry = self.registry.resolve(&call.name);
        // The application may drop this future before the call ends (its
        // own timeout around it, a `select!` won elsewhere): then the
        // guard counts the call as cancelled in the tool it had reached.
        let mut dropped = Dropped {
            executor: self,
            entry: entry.as_deref(),
            start,
            progress: &progress,
            armed: true,
        };
        // Each attempt catches the tool's panics; this guard is the last
        // one, around the whole call: the drop of its future at the run's
        // deadline (the tool's future may panic when dropped) included.
        let guarded = AssertUnwindSafe(async {
            match deadline {
                None => Some(
                    self.execute_now(entry.as_deref(), call, ctx, &progress)
                        .await,
                ),
                Some(at) => tokio::time::timeout_at(
                    at,
                    self.execute_now(entry.as_deref(), call, ctx, &progress),
                )
                .await
                .ok(),
            }
        })
        .catch_unwind();
        let outcome = match guarded.await {
            Ok(Some(outcome)) => outcome,
            Ok(None) => self.past_the_deadline(entry.as_deref(), call, start, &progress),
            Err(panic) => {
                let failed = Failed::panicked(&*panic);
                match progress.fallback.get() {
                    // The call had gone on to its fallback tool (the
                    // tool's failure counted): the panic is the fallback's.
                    Some(other) => self.fallback_panicked(
                        entry.as_deref(),
                        other,
                        call,
                        start,
                        &progress,
                        failed,
                    ),
                    None => {
                        let attempts = progress.tool.attempts.load(Relaxed);
                        self.panicked(entry.as_deref(), call, start, attempts, failed)
                    }
                }
            }
        };
        dropped.armed = false;
        outcome
    }

    async fn execute_now(
        &self,
        entry: Option<&Entry>,
        call: &ToolCall,
        ctx: &Context,
        progress: &Progress,
    ) -> ToolOutcome {
        let start = Instant::now();
        let Some(entry) = entry else {
            self.registry.count_unknown();
            return self.unknown_tool(call, start);
        };
        // Named and attributed as the OpenTelemetry GenAI conventions'
        // `execute_tool` span (the gateway exports the same), so
        // `tracing-opentelemetry` gives the same picture.
        let span = tracing::info_span!(
            "execute_tool",
            "otel.name" = %format_args!("execute_tool {}", entry.name),
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = %entry.name,
            "gen_ai.tool.call.id" = %call.id,
            "gen_ai.tool.type" = "function",
            called_as = %call.name,
            attempts = Empty,
            outcome = Empty,
            "error.type" = Empty,
            "otel.status_code" = Empty,
        );
        if span.is_disabled() {
            // No subscriber wants it: skip the wrapper (and a copy of the
            // call's future).
            return self.run(entry, call, ctx, start, progress).await;
        }
        // Dropped before the outcome (the application's own timeout, the
        // run's deadline), the span still says how the call ended.
        let mut cut = SpanCut {
            span: &span,
            armed: true,
        };
        let outcome = self
            .run(entry, call, ctx, start, progress)
            .instrument(span.clone())
            .await;
        cut.armed = false;
        span.record("attempts", outcome.attempts);
        span.record("outcome", report::status_str(&outcome));
        let status = report::status_str(&outcome);
        if status != "success" {
            let kind = outcome.error.as_ref().map_or(status, |f| f.kind.name());
            span.record("error.type", kind);
            span.record("otel.status_code", "ERROR");
        }
        outcome
    }

    /// Run a registered tool, then its fallback if it is down.
    async fn run(
        &self,
        entry: &Entry,
        call: &ToolCall,
        ctx: &Context,
        start: Instant,
        progress: &Progress,
    ) -> ToolOutcome {
        let (outcome, failed_kind) = self
            .run_primary(entry, call, ctx, start, &progress.tool)
            .await;
        match (&entry.policy.fallback, failed_kind) {
            (Some(_), Some(kind)) if !outcome.is_fatal() && Fallback::applies_to(&kind) => {
                let outcome = self
                    .fall_back_boxed(entry, call, ctx, outcome, start, progress)
                    .await;
                // The model got an answer: to the loop guard the call did
                // not fail (else the fourth identical call would be
                // refused, with no fallback for a refusal).
                if outcome.error.is_none() && !self.loop_guard.is_empty() {
                    self.loop_guard
                        .record_success(guard_key_of(entry, &call.arguments));
                }
                outcome
            }
            _ => outcome,
        }
    }

    /// The outcome, and the failure's kind when it failed.
    async fn run_primary(
        &self,
        entry: &Entry,
        call: &ToolCall,
        ctx: &Context,
        start: Instant,
        turn: &Turn,
    ) -> (ToolOutcome, Option<ErrorKind>) {
        let state = entry.state();
        if state != ToolState::Enabled {
            let failed = Failed {
                kind: ErrorKind::NotAvailable,
                code: Some(format!("tool_{}", state.as_str())),
                technical: format!("tool '{}' is {}", entry.name, state.as_str()),
                summary: String::new(),
            };
            return self.failure(entry, call, start, 0, failed, None);
        }
        let parsed = parse_arguments(&call.arguments).map(|mut args| {
            entry.prepare_arguments(&mut args);
            args
        });
        // The loop guard before the arguments are checked: a call whose
        // arguments were refused the limit's number of times is refused
        // as repeated too, like any other failing call.
        let guard_key = (!self.loop_guard.is_empty()).then(|| match &parsed {
            Ok(args) => guard_key(entry, args),
            Err(_) => LoopGuard::key_of_text(&entry.name, &call.arguments),
        });
        if let Some(n) = guard_key.and_then(|k| self.loop_guard.blocked(k)) {
            return self.failure(entry, call, start, 0, report::blocked(entry, n), guard_key);
        }
        let args = match parsed {
            Ok(args) => args,
            Err(msg) => {
                let failed = Failed {
                    kind: ErrorKind::InvalidArguments,
                    code: Some("invalid_json".into()),
                    technical: format!("{msg} Raw arguments: {}", clip(&call.arguments, 300)),
                    summary: msg,
                };
                return self.failure(entry, call, start, 0, failed, guard_key);
            }
        };
        if let Err(msg) = entry.validator.check(&args) {
            let failed = Failed {
                kind: ErrorKind::InvalidArguments,
                code: Some("schema_violation".into()),
                technical: msg.clone(),
                summary: msg,
            };
            return self.failure(entry, call, start, 0, failed, guard_key);
        }
        match self.attempts(entry, call, ctx, args, start, turn).await {
            (Ok(output), attempts) => {
                if let Some(k) = guard_key {
                    self.loop_guard.record_success(k);
                }
                let elapsed = start.elapsed();
                entry
                    .metrics
                    .record_success(elapsed, attempts.saturating_sub(1), false);
                tracing::debug!(
                    attempts,
                    elapsed_ms = elapsed.as_millis() as u64,
                    "tool call succeeded"
                );
                let mut outcome =
                    ToolOutcome::success(call.id.as_str(), call.name.as_str(), output);
                outcome.elapsed = elapsed;
                outcome.attempts = attempts;
                (outcome, None)
            }
            (Err(failed), attempts) => {
                self.failure(entry, call, start, attempts, failed, guard_key)
            }
        }
    }

    /// [`Self::fall_back`], boxed by a plain function: the rare path then
    /// adds a pointer, not its whole state, to every call's future.
    fn fall_back_boxed<'a>(
        &'a self,
        entry: &'a Entry,
        call: &'a ToolCall,
        ctx: &'a Context,
        primary: ToolOutcome,
        start: Instant,
        progress: &'a Progress,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(self.fall_back(entry, call, ctx, primary, start, progress))
    }

    /// Answer with the tool's fallback; the outcome records it either way.
    async fn fall_back(
        &self,
        entry: &Entry,
        call: &ToolCall,
        ctx: &Context,
        primary: ToolOutcome,
        start: Instant,
        progress: &Progress,
    ) -> ToolOutcome {
        let Some(fallback) = &entry.policy.fallback else {
            return primary;
        };
        let label = fallback.label().to_string();
        let output = match fallback {
            Fallback::Output(value) => Ok((value.clone(), 0)),
            Fallback::Tool(name) => match self.registry.resolve(name) {
                // Checked at registration, and a tool that is a fallback
                // cannot be removed; but this call's own tool may have
                // been removed, and then its fallback.
                None => Err((format!("fallback tool '{name}' is not registered"), 0)),
                Some(other) => {
                    // From here a cut at the run's deadline is the
                    // fallback's: the tool's failure is counted.
                    let other = progress.fallback.get_or_init(|| other);
                    // The fallback's own fallback is not followed.
                    let span = tracing::info_span!("fallback", tool = %other.name);
                    let (o, _) = self
                        .run_primary(other, call, ctx, Instant::now(), &progress.at_fallback)
                        .instrument(span)
                        .await;
                    match (o.output, o.error) {
                        (Some(v), None) => Ok((v, o.attempts)),
                        (_, Some(e)) if e.fatal => {
                            return fatal_fallback(primary, e, o.attempts, &label, start);
                        }
                        (_, Some(e)) => Err((
                            format!("fallback '{name}' failed too: {}", e.technical_message),
                            o.attempts,
                        )),
                        (None, None) => Ok((serde_json::Value::Null, o.attempts)),
                    }
                }
            },
        };
        let mut outcome = primary;
        outcome.fallback_used = Some(label.clone());
        match output {
            Ok((value, fallback_attempts)) => {
                entry.metrics.count_fallback();
                tracing::warn!(fallback = %label, "tool failed; answered by its fallback");
                outcome.status = toolwarden_core::Status::Success;
                outcome.output = Some(value);
                outcome.error = None;
                outcome.fallback_attempts = fallback_attempts;
            }
            Err((why, fallback_attempts)) => {
                outcome.fallback_attempts = fallback_attempts;
                tracing::error!(fallback = %label, error = %toolwarden_core::redact::without_secrets(&why), "tool failed and so did its fallback");
                if let Some(e) = &mut outcome.error {
                    e.technical_message.push_str("; ");
                    e.technical_message.push_str(&why);
                }
            }
        }
        outcome.elapsed = start.elapsed();
        outcome
    }
}

/// The outcome when the fallback tool failed fatally (its credentials were
/// rejected, say): that failure, so the run stops as it would have had the
/// tool itself failed so, under the call's id and name.
fn fatal_fallback(
    primary: ToolOutcome,
    failure: ToolFailure,
    fallback_attempts: u32,
    label: &str,
    start: Instant,
) -> ToolOutcome {
    let first = primary
        .error
        .as_ref()
        .map_or("", |e| e.technical_message.as_str());
    let failure = ToolFailure {
        technical_message: format!(
            "fallback '{label}' failed: {}; the tool itself had failed: {first}",
            failure.technical_message
        ),
        ..failure
    };
    tracing::error!(fallback = %label, kind = failure.kind.name(), error = %toolwarden_core::redact::without_secrets(&failure.technical_message), "tool failed and its fallback failed fatally");
    let mut outcome = ToolOutcome::failure(primary.call_id, primary.tool, failure);
    outcome.attempts = primary.attempts;
    outcome.fallback_attempts = fallback_attempts;
    outcome.fallback_used = Some(label.to_string());
    outcome.elapsed = start.elapsed();
    outcome
}

/// The loop guard's key: canonical name and canonical arguments (parsed
/// and prepared as the tool takes them, keys in sorted order).
fn guard_key(entry: &Entry, args: &serde_json::Value) -> u64 {
    LoopGuard::key(&entry.name, args)
}

/// [`guard_key`] of a call's argument text, parsed and prepared as
/// `run_primary` does (`2.0` written `2`, a strict tool's optional nulls
/// removed), so that a failure and a later success of the same call meet
/// under one key; arguments that are not JSON, by their text.
pub(super) fn guard_key_of(entry: &Entry, raw: &str) -> u64 {
    match parse_arguments(raw) {
        Ok(mut args) => {
            entry.prepare_arguments(&mut args);
            guard_key(entry, &args)
        }
        Err(_) => LoopGuard::key_of_text(&entry.name, raw),
    }
}

pub(crate) use crate::text::clip;

#[cfg(test)]
mod tests;
