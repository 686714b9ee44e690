//! Batches: every call runs concurrently (up to the executor's limit and
//! each tool's `sequential` flag), and the outcomes come back in the calls'
//! order, one each, whatever happens to the others.

use futures_util::{StreamExt, stream};
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
    /// tools may borrow); CPU-heavy tools should offload their work with
    /// `tokio::task::spawn_blocking` to run in parallel.
    pub async fn execute_batch(&self, calls: &[ToolCall], ctx: &Context) -> Vec<ToolOutcome> {
        let total = calls.len();
        let span = tracing::info_span!("tool_batch", calls = total);
        async move {
            tracing::info!("Processing {total} tool call(s)");
            // At most `concurrency` calls are in flight (the executor's
            // semaphore also bounds calls across batches), so a batch of
            // any size holds a bounded number of call futures.
            let outcomes: Vec<ToolOutcome> = stream::iter(calls)
                .map(|c| self.execute(c, ctx))
                .buffered(self.limit)
                .collect()
                .await;
            let successful = outcomes.iter().filter(|o| !o.is_failure()).count();
            tracing::info!(
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
