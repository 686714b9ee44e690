//! Batches: every call runs concurrently (up to the executor's limit and
//! each tool's `sequential` flag), and the outcomes come back in the calls'
//! order, one each, whatever happens to the others.

use futures_util::{FutureExt, StreamExt, stream};
use toolwarden_core::{ToolCall, ToolOutcome};
use tracing::Instrument;

use super::Executor;
use crate::Context;

impl Executor {
    /// Run `calls` concurrently; the outcomes have the same count, order
    /// and ids as the calls. A call that fails, times out or panics never
    /// cancels or loses another.
    ///
    /// The calls run concurrently within the calling task (no spawning, so
    /// tools may borrow): a tool that blocks the thread blocks the whole
    /// batch, and the calls then run one after another. Make blocking or
    /// CPU-heavy tools with [`blocking_fn`](crate::blocking_fn) or
    /// [`typed_blocking_fn`](crate::typed_blocking_fn), which run on
    /// tokio's blocking pool, in parallel.
    pub async fn execute_batch(&self, calls: &[ToolCall], ctx: &Context) -> Vec<ToolOutcome> {
        let total = calls.len();
        let span = tracing::debug_span!("tool_batch", calls = total);
        async move {
            // Per batch: debug, not info, so an agent's own log is not
            // two lines per model turn (a failed call has its own line).
            tracing::debug!("Processing {total} tool call(s)");
            // At most `concurrency` calls are in flight (the executor's
            // semaphore also bounds calls across batches), so a batch of
            // any size holds a bounded number of call futures. Unordered:
            // a finished call frees its place at once, even behind a slow
            // one (`buffered` would hold it until the calls before it end);
            // the outcomes are put back in the calls' order after.
            let mut numbered: Vec<(usize, ToolOutcome)> = stream::iter(calls.iter().enumerate())
                .map(|(i, c)| self.execute(c, ctx).map(move |o| (i, o)))
                .buffer_unordered(self.limit)
                .collect()
                .await;
            numbered.sort_unstable_by_key(|(i, _)| *i);
            let outcomes: Vec<ToolOutcome> = numbered.into_iter().map(|(_, o)| o).collect();
            let successful = outcomes.iter().filter(|o| !o.is_failure()).count();
            tracing::debug!(
                successful,
                total,
                "Batch complete: {successful}/{total} successful"
            );
            outcomes
        }
        .instrument(span)
        .await
    }
}
