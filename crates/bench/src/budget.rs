//! Recording's cost and its budget under issue 14's CPU targets, from one
//! run's numbers: the gateway, the same gateway without recording, and
//! floor 0, at one connection and at many; beside them the least a SQLite
//! row per event costs (`append_floor.rs`) and the least the store's own
//! rows for the run's traffic cost (`schema_floor.rs`).

use crate::Row;
use crate::schema_floor::RowMix;

/// How the bench names the gateway child that records nothing.
pub(crate) const UNRECORDED: &str = "the same gateway without recording (no database, no JSONL)";

/// CPU µs per request of the three processes, at one load.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuAt {
    pub(crate) floor0: f64,
    pub(crate) gateway: f64,
    pub(crate) unrecorded: f64,
}

impl CpuAt {
    /// What recording adds per request.
    fn recording(self) -> f64 {
        self.gateway - self.unrecorded
    }

    /// What `ratio` × floor 0 leaves recording once the proxy alone is paid.
    fn budget(self, ratio: f64) -> f64 {
        ratio * self.floor0 - self.unrecorded
    }
}

/// The rows: recording's cost, its budget (≤ 2 × floor 0 at one
/// connection, ≤ 1.5 × at `conns`), the append floor's cost of
/// `events_per_request` events (`append_us`), and the schema floor's cost
/// of the store's rows (`schema`: their mix and µs per request), when the
/// run recorded to SQLite.
pub(crate) fn rows(
    one: CpuAt,
    many: CpuAt,
    conns: usize,
    events_per_request: f64,
    append_us: f64,
    schema: Option<(RowMix, f64)>,
) -> Vec<Row> {
    let row = |what: String, gateway: String, target: &'static str| Row {
        what,
        direct: "–".into(),
        gateway,
        delta: String::new(),
        target,
    };
    let mut out = vec![
        row(
            format!(
                "recording's cost per request: the gateway minus the same gateway without recording, 1 / {conns} connections"
            ),
            format!("{:.1} / {:.1} µs CPU", one.recording(), many.recording()),
            "",
        ),
        row(
            format!(
                "recording's budget under the CPU targets: 2 × floor 0 − without recording at 1 connection; 1.5 × floor 0 − without recording at {conns}"
            ),
            format!("{:.1} / {:.1} µs CPU", one.budget(2.0), many.budget(1.5)),
            "",
        ),
        row(
            format!(
                "the least a row per event costs: {events_per_request:.2} events per request appended to one SQLite table with no index (sqlx, WAL, {} rows per transaction)",
                toolwarden_store::DEFAULT_BATCH_MAX
            ),
            format!("{append_us:.1} µs CPU"),
            "reference",
        ),
    ];
    if let Some((mix, us)) = schema {
        out.push(row(
            format!(
                "the least the store's rows cost: per request a request row, {:.2} result-only rows, {:.2} call rows, {:.2} ledger keys and {:.2} sessions (as this run's database holds) inserted into the store's schema with all its indexes (no lookups; sqlx, WAL, {} events per transaction)",
                mix.orphans,
                mix.calls,
                mix.ledger,
                mix.sessions,
                toolwarden_store::DEFAULT_BATCH_MAX
            ),
            format!("{us:.1} µs CPU"),
            "reference",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_and_budget_come_from_the_same_run() {
        let one = CpuAt {
            floor0: 30.0,
            gateway: 62.0,
            unrecorded: 45.0,
        };
        let many = CpuAt {
            floor0: 24.0,
            gateway: 48.0,
            unrecorded: 34.0,
        };
        let rows = super::rows(one, many, 32, 2.0, 1.6, None);
        assert_eq!(rows[0].gateway, "17.0 / 14.0 µs CPU");
        assert_eq!(rows[1].gateway, "15.0 / 2.0 µs CPU");
        assert!(rows[1].what.ends_with("at 32"), "{}", rows[1].what);
        assert_eq!(rows[2].gateway, "1.6 µs CPU");
        assert_eq!(rows.len(), 3, "no schema floor without a SQLite store");
        let mix = RowMix {
            orphans: 1.07,
            calls: 0.0,
            ledger: 1.07,
            sessions: 0.26,
            excerpt_len: 300,
        };
        let rows = super::rows(one, many, 32, 2.0, 1.6, Some((mix, 9.31)));
        assert_eq!(rows[3].gateway, "9.3 µs CPU");
        assert!(
            rows[3].what.contains("1.07 result-only rows"),
            "{}",
            rows[3].what
        );
        assert!(rows[3].what.contains("0.26 sessions"), "{}", rows[3].what);
    }
}
