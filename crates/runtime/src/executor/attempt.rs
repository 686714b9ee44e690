//! The attempt loop: timeout, caught panics, retries with backoff, the
//! breaker consulted before and told after each attempt.
//!
//! The first attempt runs inline; everything a successful call does not
//! need (waiting for the `sequential` lock or a concurrency slot, the
//! timer, the retries) is boxed, so the common call's future stays small.

use std::{panic::AssertUnwindSafe, sync::atomic::Ordering::Relaxed};

use futures_util::{FutureExt, future::BoxFuture};
use serde_json::Value;
use tokio::time::Instant;
use toolwarden_core::{ErrorKind, ToolCall};

use super::{
    Executor, Failed, Turn,
    slot::{Lender, Place},
};
use crate::{
    BoxError, Context, Deadline,
    errors::classify,
    policy::{Admission, BreakerState, NEVER, TimeoutError, later, secs},
    registry::Entry,
    validate::parse_arguments,
};

impl Executor {
    /// Run the attempts; the result and how many attempts ran. `start` is
    /// when the call began: the first attempt's deadline counts from it.
    pub(super) async fn attempts(
        &self,
        entry: &Entry,
        call: &ToolCall,
        ctx: &Context,
        args: Value,
        start: Instant,
        turn: &Turn,
    ) -> (Result<Value, Failed>, u32) {
        let mut start = start;
        if entry.policy.sequential && Lender::holds(&entry.sequential) {
            return (Err(sequential_reentry(entry)), 0);
        }
        // The semaphore is never closed, so `acquire` only fails if it were.
        // Time spent waiting for a slot does not count against the timeout.
        // A call nested in one of this executor's calls (its tool called
        // the executor) may run in its parent's slot (`slot`).
        let mut place = Place::new(&self.concurrency, self.id);
        if !place.try_take() {
            boxed(place.wait()).await;
            start = Instant::now();
        }
        // The slot first, then the lock: a call that holds the lock never
        // waits for a slot, so the calls waiting for it (nested calls,
        // whose parents hold slots, among them) cannot keep it waiting.
        let _sequential = if entry.policy.sequential {
            let guard = boxed(entry.sequential.lock()).await;
            start = Instant::now();
            Some(guard)
        } else {
            None
        };
        // Reached before the deadline: a call let through by another's
        // cut at the deadline (its timer is looked at after it), or made
        // after it, has not, and does not start its tool: the run's time
        // is up. Its deadline answers it: `execute` wraps every call of a
        // run with a deadline in a timer for it, which fires at once.
        if ctx.get::<Deadline>().is_some_and(|d| Instant::now() >= d.0) {
            return boxed(std::future::pending()).await;
        }
        turn.reached.store(true, Relaxed);
        match self.attempt(entry, ctx, args, 1, start, turn).await {
            Ok(output) => (Ok(output), 1),
            Err(AttemptError::Rejected(failed)) => (Err(failed), 0),
            Err(AttemptError::Failed(failed)) => {
                self.retry_boxed(entry, call, ctx, failed, place, turn)
                    .await
            }
        }
    }

    /// [`Self::retry`], boxed by a plain function so that the retry state
    /// is not part of every call's future.
    fn retry_boxed<'a>(
        &'a self,
        entry: &'a Entry,
        call: &'a ToolCall,
        ctx: &'a Context,
        failed: Failed,
        place: Place<'a>,
        turn: &'a Turn,
    ) -> BoxFuture<'a, (Result<Value, Failed>, u32)> {
        Box::pin(self.retry(entry, call, ctx, failed, place, turn))
    }

    /// Attempts 2 and later, while the failure is retryable and the retry
    /// can start before the run's [`Deadline`]. The concurrency slot is
    /// given back while waiting between attempts (a nested call may take
    /// its parent's again instead), except by a `sequential` tool's call:
    /// it holds its lock, and waiting for a slot with it held could wait
    /// for the calls that wait for the lock.
    async fn retry<'a>(
        &'a self,
        entry: &'a Entry,
        call: &ToolCall,
        ctx: &Context,
        mut failed: Failed,
        mut place: Place<'a>,
        turn: &Turn,
    ) -> (Result<Value, Failed>, u32) {
        let policy = &entry.policy;
        let max = policy.retry.max_attempts();
        let mut attempts = 1u32;
        loop {
            let retryable = policy.disposition_of(&failed.kind).retryable;
            if !retryable || attempts >= max {
                return (Err(failed), attempts);
            }
            let delay = {
                let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
                policy.retry.delay_for(attempts, &failed.kind, &mut rng)
            };
            let Some(delay) = delay else {
                return (Err(failed), attempts);
            };
            // A retry that could only start once the run's time is up is
            // not waited for: the model is told what stopped the tool.
            if let Some(&Deadline(at)) = ctx.get::<Deadline>()
                && later(Instant::now(), delay) >= at
            {
                tracing::debug!(
                    attempt = attempts,
                    delay_ms = delay.as_millis() as u64,
                    "not retrying: the run's deadline comes first"
                );
                return (Err(failed), attempts);
            }
            tracing::debug!(
                attempt = attempts,
                kind = failed.kind.name(),
                delay_ms = delay.as_millis() as u64,
                error = %crate::errors::without_secrets(&failed.technical),
                "attempt failed; retrying"
            );
            if policy.sequential {
                tokio::time::sleep(delay).await;
            } else {
                place.give_back();
                tokio::time::sleep(delay).await;
                place.wait().await;
            }
            // The slot may come only after the deadline (freed by a call
            // the deadline cut): then the retry does not start either.
            if ctx.get::<Deadline>().is_some_and(|d| Instant::now() >= d.0) {
                return (Err(failed), attempts);
            }
            // The arguments were valid JSON on the first attempt.
            let mut args = parse_arguments(&call.arguments).unwrap_or(Value::Null);
            entry.prepare_arguments(&mut args);
            match self
                .attempt(entry, ctx, args, attempts + 1, Instant::now(), turn)
                .await
            {
                Ok(output) => return (Ok(output), attempts + 1),
                // The breaker opened meanwhile: the last failure stands.
                Err(AttemptError::Rejected(_)) => return (Err(failed), attempts),
                Err(AttemptError::Failed(f)) => {
                    attempts += 1;
                    failed = f;
                }
            }
        }
    }

    /// One attempt: the breaker, the tool under its deadline (counted in
    /// `turn` as it starts), panics caught, the breaker told.
    async fn attempt(
        &self,
        entry: &Entry,
        ctx: &Context,
        args: Value,
        number: u32,
        start: Instant,
        turn: &Turn,
    ) -> Result<Value, AttemptError> {
        let permit = match &entry.breaker {
            None => None,
            Some(b) => match b.admit_now() {
                Admission::Allowed(p) => Some(p),
                Admission::Rejected { retry_after } => {
                    // Open until reset, or half-open while a probe without
                    // a timeout runs: no time to give the model.
                    let until_reset = (entry.policy.breaker.is_some_and(|c| c.open_until_reset())
                        && b.state() == BreakerState::Open)
                        || retry_after >= NEVER / 2;
                    let next_probe = match (until_reset, b.state()) {
                        (false, _) => format!("next probe in {}", secs(retry_after)),
                        (true, BreakerState::Open) => String::from("open until reset"),
                        (true, _) => String::from("its probe runs without a timeout"),
                    };
                    return Err(AttemptError::Rejected(Failed {
                        kind: ErrorKind::CircuitOpen {
                            retry_after: (!until_reset).then_some(retry_after),
                        },
                        code: Some("circuit_open".into()),
                        technical: format!(
                            "circuit breaker {} for tool '{}'; {next_probe}",
                            b.state().as_str(),
                            entry.name,
                        ),
                        summary: String::new(),
                    }));
                }
            },
        };
        turn.attempts.fetch_add(1, Relaxed);
        let policy = &entry.policy;
        // Everything the tool's code can run in is inside the guard: the
        // call that makes its future (a hand-written `Tool` may do work
        // there), every poll, and the drop at the deadline.
        // The tool lends this call's slot to the calls it makes on this
        // executor: they never wait for a slot only its parent frees.
        let guarded = AssertUnwindSafe(async {
            let sequential = policy.sequential.then_some(&entry.sequential);
            let tool = Lender::new(self.id, sequential).lend(entry.tool.call(args, ctx));
            policy.timeout.run_from(start, tool).await
        })
        .catch_unwind();
        let failed = match guarded.await {
            Ok(Ok(Ok(output))) => {
                if let Some(p) = permit {
                    p.record_now(true);
                }
                return Ok(output);
            }
            Ok(Ok(Err(err))) => failed_from(err),
            Err(panic) => Failed::panicked(&*panic),
            Ok(Err(TimeoutError(limit))) => Failed {
                kind: ErrorKind::Timeout,
                code: Some("deadline".into()),
                technical: format!(
                    "no result within {} (attempt {number} of {}); the tool's future was dropped",
                    secs(limit),
                    policy.retry.max_attempts()
                ),
                summary: format!("no result within {}", secs(limit)),
            },
        };
        if let Some(p) = permit {
            match breaker_evidence(&failed.kind) {
                Evidence::Healthy => p.record_now(true),
                Evidence::Unhealthy => p.record_now(false),
                // Dropped unrecorded: a probe's slot is freed and the
                // breaker stays half-open for the next call to probe.
                Evidence::None => drop(p),
            }
        }
        Err(AttemptError::Failed(failed))
    }
}

/// The tool's error as a failure. Reading it (`Display`, `source`) and
/// dropping it run the tool's code too, so they are guarded as well: a
/// panic there is the call's panic.
fn failed_from(err: BoxError) -> Failed {
    let read = std::panic::catch_unwind(AssertUnwindSafe(move || {
        let classified = classify(&err);
        drop(err);
        classified
    }));
    match read {
        Ok(c) => Failed {
            kind: c.kind,
            code: c.code,
            technical: c.technical,
            summary: c.summary,
        },
        Err(panic) => Failed::panicked(&*panic),
    }
}

/// The failure of a call of a `sequential` tool made from within a call
/// of that tool (its own tool, or one it called, called it again): it
/// would wait for its caller's lock, held until it ends, so it is not run.
fn sequential_reentry(entry: &Entry) -> Failed {
    Failed {
        kind: ErrorKind::Internal,
        code: Some("sequential_reentry".into()),
        technical: format!(
            "tool '{}' is sequential and was called from within its own running call; not run (it would wait for that call's lock forever)",
            entry.name
        ),
        summary: String::new(),
    }
}

/// Box a future in a plain function, so that only the box, not the
/// future, is part of the calling `async fn`'s state.
fn boxed<'a, F: Future + Send + 'a>(fut: F) -> BoxFuture<'a, F::Output> {
    Box::pin(fut)
}

/// Why an attempt gave no output.
enum AttemptError {
    /// The breaker did not let it run.
    Rejected(Failed),
    /// It ran and failed.
    Failed(Failed),
}

/// What a failed attempt tells the tool's breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// The backend answered (a missing file, a denied permission, refused
    /// credentials): as good as a success for the breaker, so a probe
    /// that gets one closes it.
    Healthy,
    /// The tool or its backend is unhealthy: counts towards opening, and
    /// a probe that gets one opens the breaker again.
    Unhealthy,
    /// Nothing about the backend: arguments the tool refused (a typed
    /// tool's own decoding fails before any request is made), a call
    /// cancelled, a nested tool unavailable. Not recorded: a probe frees
    /// its slot and the breaker stays half-open; a closed breaker's count
    /// of consecutive failures is neither reset nor raised.
    None,
}

/// What a failure of `kind` tells the breaker.
pub(crate) fn breaker_evidence(kind: &ErrorKind) -> Evidence {
    match kind {
        ErrorKind::Timeout
        | ErrorKind::RateLimited { .. }
        | ErrorKind::Network
        | ErrorKind::Internal => Evidence::Unhealthy,
        ErrorKind::ResourceNotFound { .. } | ErrorKind::Authentication | ErrorKind::Permission => {
            Evidence::Healthy
        }
        _ => Evidence::None,
    }
}
