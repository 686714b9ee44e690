//! Recording's cost and its budget under issue 14's CPU targets, from one
//! run's numbers: the gateway, the same gateway without recording, and
//! floor 0, at one connection and at many; beside them the least a SQLite
//! row per event costs (`append_floor.rs`).

use crate::Row;

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
/// connection, ≤ 1.5 × at `conns`), and the append floor's cost of
/// `events_per_request` events (`append_us`).
pub(crate) fn rows(
    one: CpuAt,
    many: CpuAt,
    conns: usize,
    events_per_request: f64,
    append_us: f64,
) -> Vec<Row> {
    let row = |what: String, gateway: String, target: &'static str| Row {
        what,
        direct: "–".into(),
        gateway,
        delta: String::new(),
        target,
    };
    vec![
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
    ]
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
        let rows = rows(one, many, 32, 2.0, 1.6);
        assert_eq!(rows[0].gateway, "17.0 / 14.0 µs CPU");
        assert_eq!(rows[1].gateway, "15.0 / 2.0 µs CPU");
        assert!(rows[1].what.ends_with("at 32"), "{}", rows[1].what);
        assert_eq!(rows[2].gateway, "1.6 µs CPU");
    }
}
