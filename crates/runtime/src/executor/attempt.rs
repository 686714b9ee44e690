//! The attempt loop: timeout, caught panics, retries with backoff, the
//! breaker consulted before and told after each attempt.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::time::Instant;
use toolwarden_core::{ErrorKind, ToolCall};

use super::{Executor, Failed};
use crate::{
    Context,
    errors::{self, classify},
    policy::{Admission, TimeoutError, secs},
    registry::Entry,
    validate::parse_arguments,
};

impl Executor {
    /// Run the attempts; the result and how many attempts ran.
    pub(super) async fn attempts(
        &self,
        entry: &Entry,
        call: &ToolCall,
        ctx: &Context,
        args: Value,
    ) -> (Result<Value, Failed>, u32) {
        let policy = &entry.policy;
        let _sequential = if policy.sequential {
            Some(entry.sequential.lock().await)
        } else {
            None
        };
        // The semaphore is never closed, so this only fails if it were.
        let _slot = self.concurrency.acquire().await.ok();
        let max = policy.retry.max_attempts();
        let mut args = Some(args);
        let mut attempts = 0u32;
        let mut last: Option<Failed> = None;
        loop {
            let permit = match &entry.breaker {
                None => None,
                Some(b) => match b.admit(Instant::now()) {
                    Admission::Allowed(p) => Some(p),
                    Admission::Rejected { retry_after } => {
                        let failed = last.unwrap_or_else(|| Failed {
                            kind: ErrorKind::CircuitOpen {
                                retry_after: Some(retry_after),
                            },
                            code: Some("circuit_open".into()),
                            technical: format!(
                                "circuit breaker {} for tool '{}'; next probe in {}",
                                b.state().as_str(),
                                entry.name,
                                secs(retry_after)
                            ),
                            summary: String::new(),
                        });
                        return (Err(failed), attempts);
                    }
                },
            };
            attempts += 1;
            // The first attempt takes the parsed arguments; a retry parses
            // them again (they were valid JSON already) instead of every
            // call paying for a copy.
            let attempt_args = args
                .take()
                .unwrap_or_else(|| parse_arguments(&call.arguments).unwrap_or(Value::Null));
            let fut = AssertUnwindSafe(entry.tool.call(attempt_args, ctx)).catch_unwind();
            let failed = match policy.timeout.run(fut).await {
                Ok(Ok(Ok(output))) => {
                    if let Some(p) = permit {
                        p.record(true, Instant::now());
                    }
                    return (Ok(output), attempts);
                }
                Ok(Ok(Err(err))) => {
                    let c = classify(&err);
                    Failed {
                        kind: c.kind,
                        code: c.code,
                        technical: c.technical,
                        summary: c.summary,
                    }
                }
                Ok(Err(panic)) => Failed {
                    kind: ErrorKind::Internal,
                    code: Some("panic".into()),
                    technical: errors::panic_message(&*panic),
                    summary: String::new(),
                },
                Err(TimeoutError(limit)) => Failed {
                    kind: ErrorKind::Timeout,
                    code: Some("deadline".into()),
                    technical: format!(
                        "no result within {} (attempt {attempts} of {max}); the tool's future was dropped",
                        secs(limit)
                    ),
                    summary: format!("no result within {}", secs(limit)),
                },
            };
            if let Some(p) = permit {
                p.record(!trips_breaker(&failed.kind), Instant::now());
            }
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
            tracing::debug!(
                attempt = attempts,
                kind = failed.kind.name(),
                delay_ms = delay.as_millis() as u64,
                error = %failed.technical,
                "attempt failed; retrying"
            );
            last = Some(failed);
            tokio::time::sleep(delay).await;
        }
    }
}

/// Failures that say the tool (or its backend) is unhealthy; the others
/// (bad arguments, a missing file, a denied permission) mean it answered.
pub(crate) fn trips_breaker(kind: &ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Timeout
            | ErrorKind::RateLimited { .. }
            | ErrorKind::Network
            | ErrorKind::Internal
    )
}
