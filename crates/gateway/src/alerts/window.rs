//! The window's numbers, read cheaply when rounds are frequent.
//!
//! With rounds [`FULL_EVERY`] apart or more (the default interval), every
//! round reads the whole window from the store, as it always did. With
//! faster rounds, reading the whole window each time would cost the store
//! a scan of every row in it per round (the 1 s rounds of the bench: a
//! scan of ~40 000 rows a second). Instead:
//!
//! - a **full** read every [`FULL_EVERY`] (and on the first round): the
//!   whole window in one query, split at `now −` [`SETTLE_MS`] into a
//!   settled part, kept as a slice, and the newest rows;
//! - in between, an **incremental** read: the rows since the last settled
//!   slice only (results of calls at most [`LOOKBACK_MS`] older than
//!   them), added to the slices kept; slices that left the window are
//!   dropped. The part older than [`SETTLE_MS`] is kept as a new slice
//!   once it spans at least 1/256 of the window (so at most ~257 slices).
//!
//! What an incremental round can miss, the next full read (at most
//! [`FULL_EVERY`] later, the default interval) counts: a row written more
//! than [`SETTLE_MS`] after its time (a database outage), a result whose
//! call is more than [`LOOKBACK_MS`] older than it (a tool that ran that
//! long), another gateway's row late by more than [`SETTLE_MS`]. The
//! oldest slice is kept whole while any of it is in the window, so the
//! window may reach back up to one slice (≤ 1/256 of the window or one
//! interval) further than configured.

use std::{
    collections::{BTreeMap, VecDeque},
    time::Duration,
};

use toolwarden_store::{
    AlertWindow, LONGEST_TOOL_MS, RequestWindowRow, Store, StoreError, ToolWindowRow,
};

/// Rounds at least this far apart read the whole window each time; faster
/// ones read it whole this often.
pub(crate) const FULL_EVERY: Duration = Duration::from_secs(30);
/// Rows older than this are taken as written (by every gateway).
pub(crate) const SETTLE_MS: i64 = 2_000;
/// An incremental read counts results whose call is at most this much
/// older than them.
pub(crate) const LOOKBACK_MS: i64 = 5_000;
/// Slices per window at most (about).
const SLICES: i64 = 256;

/// The settled slices of the window, oldest first, and when the last full
/// read was.
#[derive(Debug, Default)]
pub(crate) struct WindowReader {
    /// (end, numbers of `[previous end, end)`), oldest first.
    slices: VecDeque<(i64, AlertWindow)>,
    /// Where the newest slice ends: the next read starts here.
    frontier_ms: i64,
    full_at_ms: Option<i64>,
}

// === impl WindowReader ===

impl WindowReader {
    /// The numbers of the window `[now − window, now]`, from `store`.
    pub(crate) async fn read(
        &mut self,
        store: &Store,
        now: i64,
        window: Duration,
        interval: Duration,
    ) -> Result<AlertWindow, StoreError> {
        let window_ms = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
        let since = now.saturating_sub(window_ms);
        if interval >= FULL_EVERY {
            return store.alert_window(since).await;
        }
        let settled = now.saturating_sub(SETTLE_MS).max(since);
        let full_every = i64::try_from(FULL_EVERY.as_millis()).unwrap_or(i64::MAX);
        let full = self
            .full_at_ms
            .is_none_or(|t| now < t || now - t >= full_every);
        let (from, split, calls_from) = if full {
            self.slices.clear();
            self.full_at_ms = Some(now);
            (since, settled, since.saturating_sub(LONGEST_TOOL_MS))
        } else {
            let from = self.frontier_ms.max(since);
            let split = if settled - from >= (window_ms / SLICES).max(1) {
                settled
            } else {
                from
            };
            (from, split, from.saturating_sub(LOOKBACK_MS))
        };
        let [older, newest] = store.alert_window_split(from, split, calls_from).await?;
        if split > from {
            self.slices.push_back((split, older));
        }
        self.frontier_ms = split;
        while self.slices.front().is_some_and(|(end, _)| *end <= since) {
            self.slices.pop_front();
        }
        Ok(sum(self.slices.iter().map(|(_, w)| w).chain([&newest])))
    }
}

/// The windows' rows added up per (tool, model) and per model.
fn sum<'a>(windows: impl Iterator<Item = &'a AlertWindow>) -> AlertWindow {
    let mut tools: BTreeMap<(&str, &str), ToolWindowRow> = BTreeMap::new();
    let mut requests: BTreeMap<&str, RequestWindowRow> = BTreeMap::new();
    for w in windows {
        for r in &w.tools {
            tools
                .entry((&r.tool, &r.model))
                .and_modify(|t| {
                    t.results += r.results;
                    t.failures += r.failures;
                    t.exec_ms_sum += r.exec_ms_sum;
                    t.exec_count += r.exec_count;
                })
                .or_insert_with(|| r.clone());
        }
        for r in &w.requests {
            requests
                .entry(&r.model)
                .and_modify(|t| {
                    t.requests += r.requests;
                    t.upstream_errors += r.upstream_errors;
                    t.repairs += r.repairs;
                })
                .or_insert_with(|| r.clone());
        }
    }
    AlertWindow {
        tools: tools.into_values().collect(),
        requests: requests.into_values().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(tool: &str, model: &str, results: u64, failures: u64) -> ToolWindowRow {
        ToolWindowRow {
            tool: tool.into(),
            model: model.into(),
            results,
            failures,
            exec_ms_sum: 10.0 * results as f64,
            exec_count: results,
        }
    }

    #[test]
    fn slices_add_up_per_tool_model_and_per_model() {
        let a = AlertWindow {
            tools: vec![tool("book", "m1", 3, 1), tool("find", "m1", 2, 0)],
            requests: vec![RequestWindowRow {
                model: "m1".into(),
                requests: 5,
                upstream_errors: 1,
                repairs: 0,
            }],
        };
        let b = AlertWindow {
            tools: vec![tool("book", "m1", 4, 2), tool("book", "m2", 1, 1)],
            requests: vec![RequestWindowRow {
                model: "m1".into(),
                requests: 2,
                upstream_errors: 0,
                repairs: 3,
            }],
        };
        let s = sum([&a, &b, &AlertWindow::default()].into_iter());
        assert_eq!(
            s.tools,
            vec![
                tool("book", "m1", 7, 3),
                tool("book", "m2", 1, 1),
                tool("find", "m1", 2, 0)
            ]
        );
        assert_eq!(
            (
                s.requests.len(),
                s.requests[0].requests,
                s.requests[0].upstream_errors,
                s.requests[0].repairs
            ),
            (1, 7, 1, 3)
        );
    }
}
