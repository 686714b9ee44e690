//! Set-based statements: one round trip per step of a batch, whatever its
//! size. The same operations, with the same Rust signatures, for each
//! backend: PostgreSQL binds one array per column and reads them with
//! `UNNEST`; SQLite binds each value as a parameter of a `VALUES` list, in
//! statements of a few fixed row counts ([`shaped`]). The batch planner in
//! [`crate::write`] calls them.
//!
//! Lookups drive the loop from the batch's rows into the
//! `(call_id, session_id)` index (`CROSS JOIN` fixes SQLite's join order,
//! `LATERAL` PostgreSQL's), so a batch never scans `tool_calls`.

use std::collections::HashSet;

use crate::event::{RequestRecord, ToolCallRecord, ToolResultRecord};
use crate::write::{SessionDeltas, int};

/// A `tool_calls` row that a call or a result may complete: `at_ms` is the
/// call's time for an unpaired call, the result's time for an orphan result.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub id: i64,
    pub session_id: String,
    pub call_id: String,
    pub tool: String,
    pub at_ms: Option<i64>,
}

/// A result to store in its call's row.
#[derive(Debug)]
pub(crate) struct Pairing<'a> {
    pub id: i64,
    pub rec: &'a ToolResultRecord,
    pub exec_ms: Option<f64>,
}

pub(crate) type CallKey = (String, i64);
pub(crate) type ResultKey = (String, String, i64);

type CandidateRow = (i64, String, String, String, Option<i64>);

fn candidates(rows: Vec<CandidateRow>) -> Vec<Candidate> {
    rows.into_iter()
        .map(|(id, session_id, call_id, tool, at_ms)| Candidate {
            id,
            session_id,
            call_id,
            tool,
            at_ms,
        })
        .collect()
}

/// Finite or zero: a NaN must not poison a batch (SQLite stores a bound NaN
/// as NULL, which a `NOT NULL` column refuses).
fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

pub(crate) mod postgres;
mod shaped;
pub(crate) mod sqlite;
