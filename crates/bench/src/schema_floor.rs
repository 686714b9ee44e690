//! The recording limit of the store's own schema (issue 14): the least CPU
//! the rows the gateway's store kept for this run's traffic cost, inserted
//! into a fresh database with the store's schema and nothing else.
//!
//! [`RowMix::of`] reads from the recording gateway's database how many rows
//! each table holds per recorded request (the request rows, the result-only
//! rows of results whose call the gateway never saw, their keys in the
//! deduplication ledger, the sessions) and how long the excerpts are. The
//! floor then writes as many rows of those shapes, per request, into a
//! database migrated by [`Store::open`] (every index the store's queries
//! need), on one connection set up as the store's writer (WAL, `synchronous
//! = NORMAL`, its page cache), in transactions of the recorder's default
//! batch and multi-row `INSERT`s of up to 256 rows. No lookups, no
//! pairing, no deduplication, no `ON CONFLICT`: the store does all of this
//! and more for the same rows, so a recording budget below this cannot be
//! met while the store keeps these rows and indexes.

use std::path::Path;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};
use toolwarden_store::Store;

use crate::append_floor::{count_at, fastrand_alnum as alnum, placeholders, writer_options};
use crate::child::threads_cpu_secs;

/// Events per transaction: the recorder's default batch.
const BATCH_EVENTS: usize = toolwarden_store::DEFAULT_BATCH_MAX;
/// Rows per `INSERT`: the store's largest statement (`bulk::shaped`).
const ROWS_PER_INSERT: usize = 256;

/// The rows the store keeps per recorded request, from its database.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RowMix {
    /// Result-only rows in `tool_calls` (`request_id IS NULL`).
    pub(crate) orphans: f64,
    /// Call rows in `tool_calls` (made by a response).
    pub(crate) calls: f64,
    /// Keys in the deduplication ledger (`tool_results`).
    pub(crate) ledger: f64,
    pub(crate) sessions: f64,
    /// Mean length of a stored excerpt, in bytes.
    pub(crate) excerpt_len: usize,
}

impl RowMix {
    /// The mix of the database at `db` (a SQLite file), `None` if it holds
    /// no request yet.
    pub(crate) async fn of(db: &Path) -> Result<Option<RowMix>, String> {
        let options = SqliteConnectOptions::new().filename(db).read_only(true);
        let mut conn = SqliteConnection::connect_with(&options)
            .await
            .map_err(|e| format!("schema floor: open {}: {e}", db.display()))?;
        let counts: (i64, i64, i64, i64, i64, f64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM requests), \
             (SELECT count(*) FROM tool_calls WHERE request_id IS NULL), \
             (SELECT count(*) FROM tool_calls WHERE request_id IS NOT NULL), \
             (SELECT count(*) FROM tool_results), (SELECT count(*) FROM sessions), \
             (SELECT coalesce(avg(length(CAST(excerpt AS BLOB))), 0.0) FROM tool_calls)",
        )
        .fetch_one(&mut conn)
        .await
        .map_err(|e| format!("schema floor: count {}: {e}", db.display()))?;
        let _ = conn.close().await;
        let (requests, orphans, calls, ledger, sessions, excerpt) = counts;
        if requests == 0 {
            return Ok(None);
        }
        let per = |n: i64| n as f64 / requests as f64;
        Ok(Some(RowMix {
            orphans: per(orphans),
            calls: per(calls),
            ledger: per(ledger),
            sessions: per(sessions),
            excerpt_len: excerpt.round() as usize,
        }))
    }

    /// Events per request (a request, its results and calls).
    fn events(self) -> f64 {
        1.0 + self.orphans + self.calls
    }
}

/// A value bound to a placeholder.
#[derive(Debug, Clone)]
enum Value {
    Int(i64),
    Real(f64),
    Text(String),
    Null,
}

/// One table's rows for the floor.
struct Table {
    name: &'static str,
    columns: &'static [&'static str],
    rows: Vec<Vec<Value>>,
}

/// CPU µs per request (this process's threads: the caller's and sqlx's
/// connection thread) to insert `mix`'s rows for each of `requests`
/// requests into a fresh database with the store's schema under `dir`. The
/// rows are built and the schema migrated before the clock starts.
pub(crate) async fn cpu_us_per_request(
    dir: &Path,
    mix: RowMix,
    requests: usize,
    cache_kib: u32,
) -> Result<f64, String> {
    let path = dir.join("schema-floor.db");
    let url = format!("sqlite://{}", path.display());
    Store::open(&url)
        .await
        .map_err(|e| format!("schema floor: migrate: {e}"))?
        .close()
        .await;
    let options = writer_options(&path).pragma("cache_size", format!("-{cache_kib}"));
    let mut conn = SqliteConnection::connect_with(&options)
        .await
        .map_err(|e| format!("schema floor: open {}: {e}", path.display()))?;
    let tables = tables(mix, requests);
    let batches = ((mix.events() * requests as f64) / BATCH_EVENTS as f64).ceil() as usize;
    let batches = batches.clamp(1, requests.max(1));
    let start = threads_cpu_secs("self").ok_or("schema floor: no /proc/self/task")?;
    for b in 0..batches {
        let mut tx = conn
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| format!("schema floor: begin: {e}"))?;
        for table in &tables {
            let part = share(&table.rows, b, batches);
            for chunk in part.chunks(ROWS_PER_INSERT) {
                insert(&mut tx, table, chunk).await?;
            }
        }
        tx.commit()
            .await
            .map_err(|e| format!("schema floor: commit: {e}"))?;
    }
    let used = threads_cpu_secs("self").ok_or("schema floor: no /proc/self/task")? - start;
    let _ = conn.close().await;
    Ok(used * 1e6 / requests.max(1) as f64)
}

/// The `b`th of `n` even shares of `rows`.
fn share<T>(rows: &[T], b: usize, n: usize) -> &[T] {
    let at = |k: usize| rows.len() * k / n;
    &rows[at(b)..at(b + 1)]
}

async fn insert(
    conn: &mut SqliteConnection,
    table: &Table,
    rows: &[Vec<Value>],
) -> Result<(), String> {
    let sql = insert_sql(table, rows.len());
    let mut query = sqlx::query(&sql);
    for value in rows.iter().flatten() {
        query = match value {
            Value::Int(v) => query.bind(*v),
            Value::Real(v) => query.bind(*v),
            Value::Text(v) => query.bind(v.as_str()),
            Value::Null => query.bind(None::<i64>),
        };
    }
    query
        .execute(conn)
        .await
        .map(|_| ())
        .map_err(|e| format!("schema floor: insert into {}: {e}", table.name))
}

/// `INSERT INTO table (columns) VALUES (?, …), …` for `n` rows.
fn insert_sql(table: &Table, n: usize) -> String {
    format!(
        "INSERT INTO {} ({}) VALUES {}",
        table.name,
        table.columns.join(", "),
        placeholders(table.columns.len(), n)
    )
}

/// The rows of `requests` requests of `mix`, shaped as the gateway's: a
/// 32-digit request id, sessions of four requests, provider call ids,
/// times a millisecond apart.
fn tables(mix: RowMix, requests: usize) -> Vec<Table> {
    let excerpt = "x".repeat(mix.excerpt_len);
    let mut reqs = Vec::with_capacity(requests);
    let mut calls = Vec::new();
    let mut ledger = Vec::new();
    let mut sessions = Vec::new();
    for r in 0..requests {
        let at = 1_700_000_000_000 + r as i64;
        let req = Req {
            id: format!("{at:012x}{:020x}", fastrand::u128(..) >> 48),
            session_id: format!("floor-{}", r / 4),
            session_no: (r / 4 + 1) as i64,
            at,
        };
        for k in 0..count_at(r, mix.orphans) {
            calls.push(result_only_row(&req, k, &excerpt));
        }
        for k in 0..count_at(r, mix.calls) {
            calls.push(call_row(&req, k));
        }
        for k in 0..count_at(r, mix.ledger) {
            ledger.push(vec![
                Value::Int(req.session_no),
                Value::Text(format!("toolu_{}", alnum(24))),
                Value::Int(k as i64 + 1),
                Value::Text(req.session_id.clone()),
                Value::Text(req.id.clone()),
                Value::Int(at),
            ]);
        }
        for _ in 0..count_at(r, mix.sessions) {
            sessions.push(vec![
                Value::Text(format!("floor-s{}", sessions.len())),
                Value::Text("header".into()),
                Value::Int(at),
                Value::Int(at),
                Value::Int(4),
                Value::Int(fastrand::i64(..)),
            ]);
        }
        reqs.push(request_row(&req));
    }
    vec![
        Table {
            name: "requests",
            columns: &[
                "request_id",
                "session_id",
                "session_no",
                "at_ms",
                "provider",
                "dialect",
                "path",
                "model",
                "status",
                "streaming",
                "upstream_latency_ms",
                "first_byte_ms",
                "overhead_us",
                "input_tokens",
                "output_tokens",
                "response_id",
                "repair_mode",
                "repairs",
                "parse_error",
                "error",
                "calls_incomplete",
            ],
            rows: reqs,
        },
        Table {
            name: "tool_calls",
            columns: &[
                "session_id",
                "session_no",
                "call_id",
                "tool",
                "provider",
                "model",
                "at_ms",
                "request_id",
                "call_index",
                "call_at_ms",
                "result_request_id",
                "message_index",
                "failed",
                "basis",
                "content_bytes",
                "excerpt",
                "result_at_ms",
            ],
            rows: calls,
        },
        Table {
            name: "tool_results",
            columns: &[
                "session_no",
                "call_id",
                "message_index",
                "session_id",
                "request_id",
                "at_ms",
            ],
            rows: ledger,
        },
        Table {
            name: "sessions",
            columns: &[
                "session_id",
                "source",
                "first_ms",
                "last_ms",
                "requests",
                "first_turn",
            ],
            rows: sessions,
        },
    ]
}

/// A request as the floor's rows name it.
struct Req {
    id: String,
    session_id: String,
    session_no: i64,
    at: i64,
}

fn request_row(req: &Req) -> Vec<Value> {
    use Value::*;
    vec![
        Text(req.id.clone()),
        Text(req.session_id.clone()),
        Int(req.session_no),
        Int(req.at),
        Text("anthropic".into()),
        Text("anthropic".into()),
        Text("/v1/messages".into()),
        Text("claude-sonnet-4-20250514".into()),
        Int(200),
        Int(0),
        Real(0.27),
        Real(0.26),
        Real(17.4),
        Int(5177),
        Int(12),
        Text(format!("msg_{}", alnum(20))),
        Text("fix".into()),
        Int(0),
        Null,
        Null,
        Int(0),
    ]
}

/// The `k`th result of `req` whose call the gateway never saw: no
/// `request_id`.
fn result_only_row(req: &Req, k: usize, excerpt: &str) -> Vec<Value> {
    use Value::*;
    let mut row = call_columns(req);
    row.extend([
        Null,
        Null,
        Null,
        Text(req.id.clone()),
        Int(k as i64 + 1),
        Int(i64::from(k % 7 == 1)),
        Text("explicit".into()),
        Int(4761),
        Text(excerpt.into()),
        Int(req.at),
    ]);
    row
}

/// The `k`th call the response to `req` made, its result not in yet.
fn call_row(req: &Req, k: usize) -> Vec<Value> {
    use Value::*;
    let mut row = call_columns(req);
    row.extend([Text(req.id.clone()), Int(k as i64), Int(req.at)]);
    row.extend(std::iter::repeat_n(Null, 7));
    row
}

/// The first seven columns of a `tool_calls` row, a call's or a result's,
/// with a new provider call id.
fn call_columns(req: &Req) -> Vec<Value> {
    use Value::*;
    vec![
        Text(req.session_id.clone()),
        Int(req.session_no),
        Text(format!("toolu_{}", alnum(24))),
        Text("read_file".into()),
        Text("anthropic".into()),
        Text("claude-sonnet-4-20250514".into()),
        Int(req.at),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIX: RowMix = RowMix {
        orphans: 1.07,
        calls: 0.5,
        ledger: 1.07,
        sessions: 0.25,
        excerpt_len: 300,
    };

    #[test]
    fn rows_per_request_follow_the_mix() {
        let t = tables(MIX, 1_000);
        let len = |name: &str| t.iter().find(|t| t.name == name).unwrap().rows.len();
        assert_eq!(len("requests"), 1_000);
        assert_eq!(len("tool_calls"), 1_070 + 500);
        assert_eq!(len("tool_results"), 1_070);
        assert_eq!(len("sessions"), 250);
        for table in &t {
            assert!(
                table.rows.iter().all(|r| r.len() == table.columns.len()),
                "{}",
                table.name
            );
        }
    }

    #[test]
    fn shares_cover_every_row_once() {
        let rows: Vec<usize> = (0..1_003).collect();
        let joined: Vec<usize> = (0..7).flat_map(|b| share(&rows, b, 7).to_vec()).collect();
        assert_eq!(joined, rows);
    }

    /// The floor's rows fit the store's schema as migrated (their columns,
    /// types and constraints), and its mix reads back from that database.
    #[tokio::test]
    async fn the_floor_writes_the_mix_into_the_stores_schema() {
        let dir = tempfile::tempdir().unwrap();
        let us = cpu_us_per_request(dir.path(), MIX, 2_000, 4_096)
            .await
            .unwrap();
        assert!(us > 0.0, "{us}");
        let back = RowMix::of(&dir.path().join("schema-floor.db"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(back.orphans, 1.07);
        assert_eq!(back.calls, 0.5);
        assert_eq!(back.ledger, 1.07);
        assert_eq!(back.sessions, 0.25);
        // The mean over the rows that have one: the results'.
        assert_eq!(back.excerpt_len, 300);
    }

    #[tokio::test]
    async fn a_database_without_requests_has_no_mix() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("empty.db").display());
        Store::open(&url).await.unwrap().close().await;
        assert_eq!(
            RowMix::of(&dir.path().join("empty.db")).await.unwrap(),
            None
        );
    }
}
