//! The recording limit (issue 14): the least CPU a recording that keeps
//! each event as a SQLite row can cost, measured in the benchmark's run so
//! it can be set against recording's budget in the same run.
//!
//! The events of `n` requests (as many per request as the gateway recorded)
//! are appended to one table with no index at all, through sqlx on one
//! connection set up as the store's (WAL, `synchronous = NORMAL`), in
//! transactions of the recorder's default batch (`record_batch_max`) and
//! multi-row `INSERT`s of 256 rows, as the store's largest statements. No
//! pairing, no deduplication, no lookups, no sessions: any store that
//! writes a row per event does at least this much, so a recording budget
//! below it cannot be met by a row per event on this machine.

use std::path::Path;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{Connection, SqliteConnection};

use crate::child::threads_cpu_secs;

/// Rows per transaction: the recorder's default batch (`record_batch_max`).
const BATCH: usize = toolwarden_store::DEFAULT_BATCH_MAX;
/// Rows per `INSERT`: the store's largest statement (`bulk::shaped`).
const ROWS_PER_INSERT: usize = 256;
/// Columns per row: what an event needs for exact per-tool counts.
const COLUMNS: usize = 8;

/// One event as the floor stores it.
struct EventRow {
    kind: i64,
    request_id: String,
    session_id: String,
    call_id: Option<String>,
    tool: Option<&'static str>,
    at_ms: i64,
    failed: i64,
    bytes: i64,
}

/// CPU µs per request (this process's threads: the caller's and sqlx's
/// connection thread) to append `events_per_request` rows for each of
/// `requests` requests, in a fresh database under `dir`. The rows are built
/// before the clock starts.
pub(crate) async fn cpu_us_per_request(
    dir: &Path,
    events_per_request: f64,
    requests: usize,
) -> Result<f64, String> {
    let path = dir.join("append-floor.db");
    let options = writer_options(&path);
    let mut conn = SqliteConnection::connect_with(&options)
        .await
        .map_err(|e| format!("append floor: open {}: {e}", path.display()))?;
    sqlx::query(
        "CREATE TABLE events (kind INTEGER NOT NULL, request_id TEXT NOT NULL, \
         session_id TEXT NOT NULL, call_id TEXT, tool TEXT, at_ms INTEGER NOT NULL, \
         failed INTEGER NOT NULL, bytes INTEGER NOT NULL)",
    )
    .execute(&mut conn)
    .await
    .map_err(|e| format!("append floor: create: {e}"))?;
    let rows = rows(events_per_request, requests);
    let full = insert_sql(ROWS_PER_INSERT);
    let start = threads_cpu_secs("self").ok_or("append floor: no /proc/self/task")?;
    for batch in rows.chunks(BATCH) {
        let mut tx = conn
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| format!("append floor: begin: {e}"))?;
        for chunk in batch.chunks(ROWS_PER_INSERT) {
            let last;
            let sql = if chunk.len() == ROWS_PER_INSERT {
                &full
            } else {
                last = insert_sql(chunk.len());
                &last
            };
            let mut query = sqlx::query(sql);
            for r in chunk {
                query = query
                    .bind(r.kind)
                    .bind(r.request_id.as_str())
                    .bind(r.session_id.as_str())
                    .bind(r.call_id.as_deref())
                    .bind(r.tool)
                    .bind(r.at_ms)
                    .bind(r.failed)
                    .bind(r.bytes);
            }
            query
                .execute(&mut *tx)
                .await
                .map_err(|e| format!("append floor: insert: {e}"))?;
        }
        tx.commit()
            .await
            .map_err(|e| format!("append floor: commit: {e}"))?;
    }
    let used = threads_cpu_secs("self").ok_or("append floor: no /proc/self/task")? - start;
    let _ = conn.close().await;
    Ok(used * 1e6 / requests.max(1) as f64)
}

/// `INSERT INTO events VALUES (?, …), …` for `n` rows.
fn insert_sql(n: usize) -> String {
    format!("INSERT INTO events VALUES {}", placeholders(COLUMNS, n))
}

/// The connection the floors write on (this one and `schema_floor.rs`),
/// set up as the store's: WAL, `synchronous = NORMAL`, the store's page
/// size for a new database, temporary tables in memory.
pub(crate) fn writer_options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .page_size(toolwarden_store::SQLITE_PAGE_SIZE)
        .pragma("temp_store", "memory")
}

/// `(?, …), …`: `rows` rows of `columns` placeholders each.
pub(crate) fn placeholders(columns: usize, rows: usize) -> String {
    let one = format!("({})", vec!["?"; columns].join(", "));
    vec![one; rows].join(", ")
}

/// How many of a kind of row request `r` has when there are `per` a
/// request on average, spread evenly (1.07 gives one each and a second
/// every fourteenth or so).
pub(crate) fn count_at(r: usize, per: f64) -> usize {
    ((r + 1) as f64 * per).round() as usize - (r as f64 * per).round() as usize
}

/// The events of `requests` requests: per request one request row, then
/// tool results and calls in turn, `events_per_request` in all on average,
/// with ids shaped as the gateway's and the clients' (a 32-digit request
/// id, call ids of 30 characters).
fn rows(events_per_request: f64, requests: usize) -> Vec<EventRow> {
    let total = (events_per_request * requests as f64).round() as usize;
    let per = events_per_request.max(1.0);
    let mut out = Vec::with_capacity(total);
    let mut r = 0usize;
    while out.len() < total {
        let at_ms = 1_700_000_000_000 + r as i64;
        let request_id = format!("{at_ms:012x}{:020x}", fastrand::u128(..) >> 48);
        let session_id = format!("lat-Anthropic-{}", r / 4);
        let events = count_at(r, per);
        for k in 0..events.max(1) {
            let tool_event = k > 0;
            out.push(EventRow {
                kind: if !tool_event { 0 } else { 1 + (k % 2) as i64 },
                request_id: request_id.clone(),
                session_id: session_id.clone(),
                call_id: tool_event.then(|| format!("toolu_{}", fastrand_alnum(24))),
                tool: tool_event.then_some("read_file"),
                at_ms,
                failed: i64::from(tool_event && k % 7 == 0),
                bytes: if tool_event { 2048 } else { 20_480 },
            });
        }
        r += 1;
    }
    out.truncate(total);
    out
}

/// `n` random ASCII letters and digits, as in the ids of providers.
pub(crate) fn fastrand_alnum(n: usize) -> String {
    std::iter::repeat_with(fastrand::alphanumeric)
        .take(n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_hold_the_asked_events_per_request() {
        let rows = rows(5.0, 100);
        assert_eq!(rows.len(), 500);
        assert_eq!(rows.iter().filter(|r| r.kind == 0).count(), 100);
        let rows = super::rows(2.5, 100);
        assert_eq!(rows.len(), 250);
        assert_eq!(rows.iter().filter(|r| r.kind == 0).count(), 100);
    }

    #[test]
    fn the_insert_has_a_placeholder_per_column_and_row() {
        let sql = insert_sql(3);
        assert_eq!(sql.matches('?').count(), 3 * COLUMNS);
    }

    #[tokio::test]
    async fn the_floor_writes_every_row() {
        let dir = tempfile::tempdir().unwrap();
        let us = cpu_us_per_request(dir.path(), 3.0, 2_000).await.unwrap();
        assert!(us > 0.0, "{us}");
        let options = SqliteConnectOptions::new().filename(dir.path().join("append-floor.db"));
        let mut conn = SqliteConnection::connect_with(&options).await.unwrap();
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 6_000);
    }
}
