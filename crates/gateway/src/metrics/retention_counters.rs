//! [`RetentionCounters`]: what the retention task ([`crate::retention`])
//! deleted, as `/metrics` shows it. It lives with the metrics so that the
//! metrics depend on no feature module.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use toolwarden_store::Pruned;

/// Rows deleted by retention, by table.
pub(crate) const RETENTION_ROWS_TOTAL: &str = "toolwarden_retention_deleted_rows_total";
/// Retention passes, by outcome (`completed`, `yielded`, `failed`).
pub(crate) const RETENTION_PASSES_TOTAL: &str = "toolwarden_retention_passes_total";

/// Retention counters, rendered in `/metrics` once retention runs.
#[derive(Debug, Default)]
pub(crate) struct RetentionCounters {
    enabled: AtomicBool,
    /// In the order of [`Pruned::by_table`].
    rows: [AtomicU64; Pruned::TABLES],
    completed: AtomicU64,
    yielded: AtomicU64,
    failed: AtomicU64,
}

/// How a retention pass ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PassOutcome {
    /// It deleted everything before its cutoff.
    Completed,
    /// It ended early: another gateway sharing the PostgreSQL database was
    /// running a step (its pass deletes the rest).
    Yielded,
    /// A step failed; the next pass tries again.
    Failed,
}

// === impl RetentionCounters ===

impl RetentionCounters {
    pub(crate) fn enable(&self) {
        self.enabled.store(true, Ordering::Relaxed);
    }

    /// Counts what a pass deleted between `before` and `now` (its totals).
    pub(crate) fn count(&self, before: &Pruned, now: &Pruned) {
        let pairs = before.by_table().into_iter().zip(now.by_table());
        for (slot, ((_, was), (_, is))) in self.rows.iter().zip(pairs) {
            slot.fetch_add(is.saturating_sub(was), Ordering::Relaxed);
        }
    }

    /// A pass ended.
    pub(crate) fn passed(&self, outcome: PassOutcome) {
        let slot = match outcome {
            PassOutcome::Completed => &self.completed,
            PassOutcome::Yielded => &self.yielded,
            PassOutcome::Failed => &self.failed,
        };
        slot.fetch_add(1, Ordering::Relaxed);
    }

    /// Both families, when retention runs.
    pub(crate) fn render(&self, out: &mut String) {
        if !self.enabled.load(Ordering::Relaxed) {
            return;
        }
        let _ = writeln!(
            out,
            "# HELP {RETENTION_ROWS_TOTAL} Rows deleted by retention, by table.\n# TYPE {RETENTION_ROWS_TOTAL} counter"
        );
        for ((table, _), n) in Pruned::default().by_table().iter().zip(&self.rows) {
            let _ = writeln!(
                out,
                "{RETENTION_ROWS_TOTAL}{{table=\"{table}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP {RETENTION_PASSES_TOTAL} Retention passes, by outcome.\n# TYPE {RETENTION_PASSES_TOTAL} counter"
        );
        for (outcome, n) in [
            ("completed", &self.completed),
            ("yielded", &self.yielded),
            ("failed", &self.failed),
        ] {
            let _ = writeln!(
                out,
                "{RETENTION_PASSES_TOTAL}{{outcome=\"{outcome}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_difference_and_renders_once_enabled() {
        let c = RetentionCounters::default();
        let mut out = String::new();
        c.render(&mut out);
        assert!(out.is_empty(), "nothing while retention is off");
        c.enable();
        let first = Pruned {
            requests: 3,
            tool_calls: 5,
            ..Pruned::default()
        };
        let second = Pruned {
            requests: 4,
            tool_calls: 5,
            sessions: 1,
            ..Pruned::default()
        };
        c.count(&Pruned::default(), &first);
        c.count(&first, &second);
        c.passed(PassOutcome::Completed);
        c.passed(PassOutcome::Yielded);
        c.passed(PassOutcome::Yielded);
        c.render(&mut out);
        for line in [
            "toolwarden_retention_deleted_rows_total{table=\"requests\"} 4",
            "toolwarden_retention_deleted_rows_total{table=\"tool_calls\"} 5",
            "toolwarden_retention_deleted_rows_total{table=\"sessions\"} 1",
            "toolwarden_retention_deleted_rows_total{table=\"tool_results\"} 0",
            "toolwarden_retention_passes_total{outcome=\"completed\"} 1",
            "toolwarden_retention_passes_total{outcome=\"yielded\"} 2",
            "toolwarden_retention_passes_total{outcome=\"failed\"} 0",
        ] {
            assert!(out.contains(line), "{line} in\n{out}");
        }
    }
}
