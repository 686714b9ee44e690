//! Retention (issue 14): a task on the control runtime that deletes what
//! was recorded more than `retention_days` ago, so that a gateway running
//! for months keeps a database of bounded size. A pass runs
//! [`FIRST_PASS_AFTER`] after start, then every [`PASS_EVERY`]; it deletes
//! in steps of at most [`ROWS_PER_STEP`] rows of one table
//! ([`toolwarden_store::Prune`]), each one short transaction, and rests
//! between two steps as long as the step took (at least [`REST_MIN`]), so
//! the recorder's batches are never kept waiting for more than one step.
//! Each pass is logged with what it deleted and counted in `/metrics`
//! (`toolwarden_retention_deleted_rows_total{table}`,
//! `toolwarden_retention_passes_total{outcome}`). Gateways sharing a
//! PostgreSQL database take turns: a pass that finds another gateway's
//! step under way ends there, `yielded` ([`toolwarden_store::Prune::yielded`]).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use toolwarden_store::{Pruned, Store};

use crate::metrics::retention_counters::{PassOutcome, RetentionCounters};

/// The first pass, after start.
const FIRST_PASS_AFTER: Duration = Duration::from_secs(2);
/// Between two passes.
const PASS_EVERY: Duration = Duration::from_secs(3600);
/// Rows of one table one step deletes at most.
const ROWS_PER_STEP: usize = 2000;
/// The shortest rest between two steps.
const REST_MIN: Duration = Duration::from_millis(10);

/// Starts the task when there is a database and a retention period.
pub(crate) fn start(
    store: Option<&Store>,
    retention: Option<Duration>,
    counters: Arc<RetentionCounters>,
    shutdown: watch::Receiver<bool>,
) {
    let (Some(store), Some(keep)) = (store, retention) else {
        return;
    };
    counters.enable();
    let store = store.clone();
    tokio::spawn(run(store, keep, counters, shutdown));
}

async fn run(
    store: Store,
    keep: Duration,
    counters: Arc<RetentionCounters>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut wait = FIRST_PASS_AFTER;
    loop {
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            _ = tokio::time::sleep(wait) => {}
        }
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            () = pass(&store, keep, &counters) => {}
        }
        wait = PASS_EVERY;
    }
}

/// One pass; what it deleted is counted as it goes, so a pass cut short
/// by shutdown or an error still counts its steps.
async fn pass(store: &Store, keep: Duration, counters: &RetentionCounters) {
    let started = Instant::now();
    let cutoff_ms = cutoff(SystemTime::now(), keep);
    let mut prune = store.prune(cutoff_ms, ROWS_PER_STEP);
    let mut counted = Pruned::default();
    let outcome = loop {
        let step = Instant::now();
        let more = prune.step().await;
        counters.count(&counted, &prune.deleted());
        counted = prune.deleted();
        match more {
            Ok(true) => tokio::time::sleep(step.elapsed().max(REST_MIN)).await,
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let d = prune.deleted();
    match outcome {
        Ok(()) if prune.yielded() => {
            counters.passed(PassOutcome::Yielded);
            tracing::debug!(
                cutoff_ms,
                deleted = d.total(),
                "retention: another gateway is running a pass on this database; this one ends"
            );
        }
        Ok(()) => {
            counters.passed(PassOutcome::Completed);
            if d.total() > 0 {
                tracing::info!(
                    cutoff_ms,
                    requests = d.requests,
                    tool_calls = d.tool_calls,
                    tool_results = d.tool_results,
                    sessions = d.sessions,
                    other = d.request_repairs
                        + d.call_turns
                        + d.dropped_tool_counts
                        + d.alert_transitions
                        + d.alert_repeats,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "retention: deleted what was recorded before the cutoff"
                );
            }
        }
        Err(e) => {
            counters.passed(PassOutcome::Failed);
            tracing::warn!(
                cutoff_ms,
                error = %e,
                deleted = d.total(),
                "retention pass failed; the next pass tries again"
            );
        }
    }
}

/// Unix ms `keep` before `now`.
fn cutoff(now: SystemTime, keep: Duration) -> i64 {
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    i64::try_from(now_ms.saturating_sub(keep.as_millis())).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cutoff_is_the_retention_before_now() {
        let now = UNIX_EPOCH + Duration::from_millis(10 * 86_400_000 + 5);
        assert_eq!(
            cutoff(now, Duration::from_secs(3 * 86_400)),
            7 * 86_400_000 + 5
        );
        assert_eq!(
            cutoff(now, Duration::from_secs(365 * 86_400)),
            0,
            "never before 1970"
        );
    }
}
