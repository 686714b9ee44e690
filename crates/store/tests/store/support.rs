//! Test databases (a temp SQLite file, or a fresh schema in the PostgreSQL
//! named by `TOOLWARDEN_TEST_POSTGRES_URL`) and event builders.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::Connection;
use toolwarden_store::*;

pub const PG_ENV: &str = "TOOLWARDEN_TEST_POSTGRES_URL";

/// A database for one test.
pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("tw.db").display());
        TestDb {
            url,
            _dir: Some(dir),
        }
    }

    /// A fresh schema in the test PostgreSQL, or `None` (with a loud line
    /// on stderr, past the test harness's capture) when the URL is not set.
    pub async fn postgres(test: &str) -> Option<TestDb> {
        let Ok(base) = std::env::var(PG_ENV) else {
            skip(test);
            return None;
        };
        static N: AtomicU64 = AtomicU64::new(0);
        let schema = format!(
            "tw_{}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            fastrand_suffix()
        );
        let mut conn = sqlx::PgConnection::connect(&base)
            .await
            .unwrap_or_else(|e| panic!("{PG_ENV}={base} is set but unreachable: {e}"));
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut conn)
            .await
            .expect("create schema");
        let sep = if base.contains('?') { '&' } else { '?' };
        Some(TestDb {
            url: format!("{base}{sep}options[search_path]={schema}"),
            _dir: None,
        })
    }
}

impl TestDb {
    /// A fresh database in the test PostgreSQL whose text sorts by the
    /// rules of the ICU locale `icu`, as on a cluster made with a
    /// language's locale (the official image's `en_US.utf8`), or `None`
    /// (with a loud line) when the URL is not set or the server cannot.
    pub async fn postgres_collated(test: &str, icu: &str) -> Option<TestDb> {
        let Ok(base) = std::env::var(PG_ENV) else {
            skip(test);
            return None;
        };
        let name = format!("tw_icu_{}_{}", std::process::id(), fastrand_suffix());
        let mut conn = sqlx::PgConnection::connect(&base)
            .await
            .unwrap_or_else(|e| panic!("{PG_ENV}={base} is set but unreachable: {e}"));
        let made = sqlx::query(&format!(
            "CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '{icu}'"
        ))
        .execute(&mut conn)
        .await;
        if let Err(e) = made {
            skip(&format!("{test} (no database with ICU locale {icu}: {e})"));
            return None;
        }
        // The URL's database is its path's last segment, before any `?`.
        let (url, query) = base.split_once('?').unwrap_or((&base, ""));
        let at = url.rfind('/').expect("a database in the URL");
        let sep = if query.is_empty() { "" } else { "?" };
        Some(TestDb {
            url: format!("{}/{name}{sep}{query}", &url[..at]),
            _dir: None,
        })
    }

    /// Drops a database [`TestDb::postgres_collated`] made.
    pub async fn drop_collated(self) {
        let base = std::env::var(PG_ENV).expect("made from it");
        let name = self
            .url
            .split('?')
            .next()
            .and_then(|u| u.rsplit('/').next());
        let name = name.expect("a database in the URL");
        let mut conn = sqlx::PgConnection::connect(&base).await.expect("connect");
        sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
            .execute(&mut conn)
            .await
            .expect("drop the database");
    }
}

pub fn skip(test: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED PostgreSQL test `{test}`: set {PG_ENV} (e.g. URL=$(.ci/pg.sh start)) to run it ***\n"
    );
}

/// Runs a property test's case on a two-worker runtime of its own.
pub fn block_on<F: std::future::Future>(case: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(case)
}

fn fastrand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0)
}

pub fn opts() -> RecorderOptions {
    RecorderOptions {
        flush_interval: Duration::from_millis(5),
        ..RecorderOptions::default()
    }
}

/// Records `events` through a fresh Recorder on `store` and waits for them.
pub async fn record_all(store: &Store, events: &[Event]) -> (RecorderCounters, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let rec = Recorder::start(Some(store.clone()), opts(), seen.clone());
    for e in events {
        rec.record(e.clone());
    }
    rec.shutdown().await;
    (rec.counters(), seen)
}

/// Records `events` through a fresh Recorder on `store` as one batch (one
/// transaction): the writer waits for shutdown before it writes.
pub async fn record_one_batch(store: &Store, events: &[Event]) -> (RecorderCounters, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let opts = RecorderOptions {
        batch_max: events.len().max(1),
        queue_capacity: events.len().max(1),
        flush_interval: Duration::from_secs(600),
        ..RecorderOptions::default()
    };
    let rec = Recorder::start(Some(store.clone()), opts, seen.clone());
    for e in events {
        assert!(rec.record(e.clone()), "queued");
    }
    rec.shutdown().await;
    (rec.counters(), seen)
}

/// Records `events` in batches, each ending at an event whose `cuts` entry
/// is true (past the end of `cuts`, every event ends one; the last event
/// ends the last), each through [`record_one_batch`]; how many results the
/// observer was told of as new.
pub async fn new_results_in_batches(store: &Store, events: Vec<Event>, cuts: Vec<bool>) -> usize {
    let mut batch = Vec::new();
    let mut new_results = 0;
    let ends = cuts.into_iter().chain(std::iter::repeat(true));
    for (e, cut) in events.into_iter().zip(ends) {
        batch.push(e);
        if cut {
            let (_, seen) = record_one_batch(store, &batch).await;
            new_results += seen.results.lock().unwrap().len();
            batch.clear();
        }
    }
    if !batch.is_empty() {
        let (_, seen) = record_one_batch(store, &batch).await;
        new_results += seen.results.lock().unwrap().len();
    }
    new_results
}

/// An observer that remembers what it was told.
#[derive(Debug, Default)]
pub struct Seen {
    pub calls: Mutex<Vec<String>>,
    pub results: Mutex<Vec<(String, String)>>,
}

impl Observer for Seen {
    fn on_tool_call(&self, rec: &ToolCallRecord) {
        self.calls.lock().unwrap().push(rec.call_id.clone());
    }
    fn on_tool_result(&self, rec: &ToolResultRecord, resolved_tool: &str) {
        self.results
            .lock()
            .unwrap()
            .push((rec.call_id.clone(), resolved_tool.to_owned()));
    }
}

pub fn request(id: &str, session: &str, at_ms: i64) -> Event {
    Event::Request(RequestRecord {
        request_id: id.into(),
        session_id: session.into(),
        session_source: "header".into(),
        at_ms,
        provider: "openai".into(),
        dialect: Some("openai-chat".into()),
        path: "/v1/chat/completions".into(),
        model: Some("gpt-test".into()),
        status: 200,
        streaming: false,
        upstream_latency_ms: 12.5,
        first_byte_ms: Some(3.0),
        overhead_us: 20.0,
        input_tokens: Some(100),
        output_tokens: Some(10),
        response_id: None,
        repairs: vec![],
        repair_mode: "fix".into(),
        parse_error: None,
        calls_incomplete: false,
        error: None,
        trace_parent: None,
        trace_state: None,
        server_address: None,
        server_port: None,
    })
}

pub fn call(
    req: &str,
    session: &str,
    index: u32,
    call_id: &str,
    tool: &str,
    at_ms: i64,
) -> ToolCallRecord {
    ToolCallRecord {
        threaded: false,
        request_id: req.into(),
        session_id: session.into(),
        provider: "openai".into(),
        model: Some("gpt-test".into()),
        response_id: None,
        dialect: None,
        call_index: index,
        call_id: call_id.into(),
        tool: tool.into(),
        arguments_bytes: 42,
        at_ms,
        turn: None,
    }
}

pub fn result(
    req: &str,
    session: &str,
    call_id: &str,
    message_index: u32,
    tool: Option<&str>,
    failed: bool,
    at_ms: i64,
) -> ToolResultRecord {
    ToolResultRecord {
        request_id: req.into(),
        session_id: session.into(),
        provider: "openai".into(),
        model: Some("gpt-test".into()),
        call_id: call_id.into(),
        message_index,
        tool: tool.map(str::to_owned),
        failed,
        basis: if failed { "explicit" } else { "none" }.into(),
        content_bytes: 64,
        excerpt: failed.then(|| format!("error in {call_id}")),
        at_ms,
        exec_ms: None,
        previous_response_id: None,
        answers: None,
        trace_parent: None,
        trace_state: None,
        latest_of_its_id: false,
        first_turn: None,
    }
}

pub fn all() -> StatsQuery {
    StatsQuery::default()
}

/// Runs `sql` on the database at `url` (either backend).
pub async fn execute(url: &str, sql: &str) {
    if url.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
        sqlx::query(sql).execute(&mut conn).await.expect(sql);
    } else {
        let mut conn = sqlx::SqliteConnection::connect(url).await.expect("connect");
        sqlx::query(sql).execute(&mut conn).await.expect(sql);
    }
}

/// One integer from `sql` on the database at `url` (either backend).
pub async fn query_i64(url: &str, sql: &str) -> i64 {
    if url.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
        sqlx::query_scalar(sql)
            .fetch_one(&mut conn)
            .await
            .expect(sql)
    } else {
        let mut conn = sqlx::SqliteConnection::connect(url).await.expect("connect");
        sqlx::query_scalar(sql)
            .fetch_one(&mut conn)
            .await
            .expect(sql)
    }
}

/// Per tool: (calls, failures), by tool name.
pub fn calls_and_failures(stats: &Stats) -> BTreeMap<&str, (u64, u64)> {
    stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), (t.calls, t.failures)))
        .collect()
}

/// Makes the database at `url` refuse, as a constraint violation, a row of
/// `table` whose `column` is `value` (inserted or updated to it): a CHECK
/// constraint on PostgreSQL, triggers on SQLite (which cannot add a
/// constraint to a table).
pub async fn refuse(url: &str, table: &str, column: &str, value: &str) {
    if url.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
        let sql = format!(
            "ALTER TABLE {table} ADD CONSTRAINT refuse_{column} CHECK ({column} <> '{value}')"
        );
        sqlx::query(&sql).execute(&mut conn).await.expect(&sql);
    } else {
        let mut conn = sqlx::SqliteConnection::connect(url).await.expect("connect");
        for op in ["INSERT", "UPDATE"] {
            let sql = format!(
                "CREATE TRIGGER refuse_{column}_{op} BEFORE {op} ON {table} \
                 WHEN NEW.{column} = '{value}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
            );
            sqlx::query(&sql).execute(&mut conn).await.expect(&sql);
        }
    }
}

/// A SQLite store whose database another connection holds locked (`BEGIN
/// EXCLUSIVE`, on the returned connection) while the store waits
/// `busy_timeout` for it (60 s: every write hangs like a statement that runs
/// for minutes), until the blocker rolls back.
pub async fn locked_sqlite(busy_timeout: Duration) -> (TestDb, Store, sqlx::SqliteConnection) {
    let db = TestDb::sqlite();
    let store = Store::open_with(
        &db.url,
        StoreOptions {
            busy_timeout,
            ..StoreOptions::default()
        },
    )
    .await
    .unwrap();
    let mut blocker = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut blocker)
        .await
        .unwrap();
    (db, store, blocker)
}

/// Waits until `done` holds, polling every 10 ms; fails the test after
/// 20 s, naming `what`.
pub async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
