//! The soak's end check: what the database holds, read with the store's
//! own stats query (as `toolwarden stats --json` shows it).

use toolwarden_store::{Stats, StatsQuery, Store};

/// Totals the soak compares with what it sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Request rows.
    pub requests: u64,
    /// Streaming request rows.
    pub streaming: u64,
    /// `tool_calls` rows of every tool (results and calls).
    pub tool_rows: u64,
    /// Failed ones.
    pub failed: u64,
}

/// The counts of the SQLite database at `url`.
pub async fn counts(url: &str) -> Result<Counts, String> {
    let store = Store::open(url)
        .await
        .map_err(|e| format!("soak check: {e}"))?;
    let stats: Stats = store
        .stats(&StatsQuery::default())
        .await
        .map_err(|e| format!("soak check: {e}"))?;
    Ok(Counts {
        requests: stats.requests.total,
        streaming: stats.requests.streaming,
        tool_rows: stats.tools.iter().map(|t| t.calls).sum(),
        failed: stats.tools.iter().map(|t| t.failures).sum(),
    })
}
