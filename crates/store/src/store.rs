//! [`Store`]: a pool on SQLite (default) or PostgreSQL, opened from a URL,
//! with the schema migrated on open.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::error::{StoreError, StoreErrorKind};
use crate::event::Event;
use crate::migrate;
use crate::parking::ParkingClock;
use crate::pg_writer::{self, DEFAULT_PG_WRITE_TIMEOUT};
use crate::sqlite_writer::SqliteWriter;
use crate::stop::Stop;
use crate::write::{BatchError, Found};

/// Tuning for [`Store::open_with`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// SQLite: how long a writer waits for another writer's lock (default 5 s).
    pub busy_timeout: Duration,
    /// Pool size (default 4).
    pub max_connections: u32,
    /// How long opening a connection may take (default 5 s).
    pub connect_timeout: Duration,
    /// SQLite: page cache of each connection, in KiB
    /// ([`DEFAULT_SQLITE_CACHE_KIB`]). Resident memory grows to it as
    /// pages are read; beyond it pages come from the OS's file cache.
    pub sqlite_cache_kib: u32,
    /// SQLite: page cache of the recorder's own connection, in KiB
    /// ([`DEFAULT_SQLITE_WRITER_CACHE_KIB`]); given back after
    /// `sqlite_writer_idle` without writes.
    pub sqlite_writer_cache_kib: u32,
    /// SQLite: how long the recorder's connection stays open without a
    /// write before it is closed and its memory given back
    /// ([`DEFAULT_SQLITE_WRITER_IDLE`]).
    pub sqlite_writer_idle: Duration,
    /// PostgreSQL: how long a batch's statements, and then its COMMIT,
    /// may take ([`DEFAULT_PG_WRITE_TIMEOUT`]): the server's
    /// `statement_timeout` for the writer, and a few seconds more the most
    /// it waits for an answer before it closes the connection (a half-open
    /// one would hold the recorder ~15 minutes) and retries the batch on a
    /// fresh one.
    pub pg_write_timeout: Duration,
}

/// Default SQLite page cache per pooled connection: 2 MiB, SQLite's own
/// default. The pool serves the dashboard, `/api/*` and alerts; each pooled
/// connection keeps its cache filled, so 32 MiB × 3 connections could hold
/// 96 MiB resident. The recorder's connection has its own size
/// ([`DEFAULT_SQLITE_WRITER_CACHE_KIB`]; BENCHMARKS.md, issue 14).
pub const DEFAULT_SQLITE_CACHE_KIB: u32 = 2048;

/// Default page cache of the recorder's SQLite connection: 16 MiB. Every
/// event inserts into indexes keyed by random ids (call ids, sessions), so
/// each insert reads leaf pages all over them; with the interior pages of
/// those indexes cached the writer wrote 11–30 % more events per second
/// in the soak than with 2 MiB (BENCHMARKS.md, issue 14). It is given back
/// after [`DEFAULT_SQLITE_WRITER_IDLE`] without writes (`sqlite_writer`).
pub const DEFAULT_SQLITE_WRITER_CACHE_KIB: u32 = 16_384;

/// How long the recorder's SQLite connection stays open without a write,
/// by default: 5 s. Closing it gives its page cache and prepared
/// statements back; the next batch opens a fresh connection and reads its
/// pages again, which cost ~5 µs per request when traffic came in bursts a
/// second apart and the writer was closed between them at 1 s
/// (BENCHMARKS.md, "The writer's idle release").
pub const DEFAULT_SQLITE_WRITER_IDLE: Duration = Duration::from_secs(5);

/// The event store. Cheap to clone (a shared pool).
#[derive(Debug, Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    pool: Pool,
    url: String,
    /// SQLite: the recorder's own connection and its checkpointer.
    writer: Option<SqliteWriter>,
    /// When the writer next parks long-open calls ([`crate::parking`]).
    parking: ParkingClock,
    /// PostgreSQL: [`StoreOptions::pg_write_timeout`].
    pg_write_timeout: Duration,
}

pub(crate) use crate::pool::Pool;

/// A database URL, understood.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    Sqlite(String),
    Postgres(String),
}

// === impl StoreOptions ===

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            busy_timeout: Duration::from_secs(5),
            max_connections: 4,
            connect_timeout: Duration::from_secs(5),
            sqlite_cache_kib: DEFAULT_SQLITE_CACHE_KIB,
            sqlite_writer_cache_kib: DEFAULT_SQLITE_WRITER_CACHE_KIB,
            sqlite_writer_idle: DEFAULT_SQLITE_WRITER_IDLE,
            pg_write_timeout: DEFAULT_PG_WRITE_TIMEOUT,
        }
    }
}

// === impl Target ===

impl Target {
    /// `sqlite://PATH`, `sqlite:PATH`, a plain path, or `postgres://…` / `postgresql://…`.
    pub(crate) fn parse(url: &str) -> Result<Target, StoreError> {
        let url = url.trim();
        let bad =
            |why: &str| StoreError::new(StoreErrorKind::InvalidUrl, Some(url), why.to_owned());
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Target::Postgres(url.to_owned()));
        }
        let path = if let Some(p) = url.strip_prefix("sqlite://") {
            p
        } else if let Some(p) = url.strip_prefix("sqlite:") {
            p
        } else if url.contains("://") {
            return Err(bad(
                "unsupported scheme (use sqlite://PATH, a path, or postgres://…)",
            ));
        } else {
            url
        };
        // sqlx's URLs name their options after `?`; the file is opened
        // read-write and created if missing, sqlx's `mode=rwc`. Any other
        // option would be ignored: refused instead, as a file named with
        // the `?` would be made beside the one meant.
        let (path, options) = path.split_once('?').unwrap_or((path, ""));
        if options.split('&').any(|o| !o.is_empty() && o != "mode=rwc") {
            return Err(bad(
                "SQLite URL options are not supported, but for mode=rwc (the file is opened \
                 read-write, created if missing): give sqlite://PATH",
            ));
        }
        if path.is_empty() {
            return Err(bad("no file path"));
        }
        if path == ":memory:" {
            return Err(bad("in-memory SQLite is not supported; use a file path"));
        }
        Ok(Target::Sqlite(path.to_owned()))
    }
}

/// The file of a SQLite database URL as [`Store::open`] reads it
/// (`sqlite://PATH`, `sqlite:PATH` or a plain path; a `?mode=rwc` is not
/// part of the path); `None` for PostgreSQL and for URLs it would refuse.
pub fn sqlite_path(url: &str) -> Option<std::path::PathBuf> {
    match Target::parse(url) {
        Ok(Target::Sqlite(path)) => Some(std::path::PathBuf::from(path)),
        _ => None,
    }
}

// === impl Store ===

impl Store {
    /// Opens (creating a SQLite file if missing) and migrates the store.
    ///
    /// An unreachable database gives an error whose `Display` names the URL
    /// (password redacted) and the cause.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::open_with(url, StoreOptions::default()).await
    }

    /// [`Store::open`] with explicit options.
    pub async fn open_with(url: &str, opts: StoreOptions) -> Result<Store, StoreError> {
        Store::open_as(url, opts, true).await
    }

    /// Open a database for reading without changing its schema: an error
    /// (kind `Migrate`) unless it has exactly the migrations this build
    /// knows. For readers such as `toolwarden stats`, which must not
    /// migrate a database under gateways of an earlier version, and may
    /// read a replica that cannot be written.
    pub async fn open_existing(url: &str) -> Result<Store, StoreError> {
        Store::open_as(url, StoreOptions::default(), false).await
    }

    /// Open, applying the pending migrations when `migrate`, else
    /// requiring none.
    async fn open_as(url: &str, opts: StoreOptions, migrate: bool) -> Result<Store, StoreError> {
        let connect_err = |e: sqlx::Error| StoreError::new(StoreErrorKind::Connect, Some(url), e);
        let mut writer = None;
        let pool = match Target::parse(url)? {
            Target::Sqlite(path) => {
                // Before SQLite's first use in the process: the page cache
                // whose commits skip the walk of every cached page
                // (`toolwarden-sqlite-page-cache`; issue 14).
                let cache = toolwarden_sqlite_page_cache::install();
                if cache != toolwarden_sqlite_page_cache::Installed::Yes {
                    tracing::debug!(?cache, "SQLite keeps its default page cache");
                }
                let options = SqliteConnectOptions::new()
                    .filename(&path)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    // A new database's pages (SQLite's default; an
                    // existing database keeps its own).
                    .page_size(crate::sqlite_writer::SQLITE_PAGE_SIZE)
                    // A bounded page cache (negative: KiB) and in-memory
                    // temp b-trees.
                    .pragma("cache_size", format!("-{}", opts.sqlite_cache_kib.max(64)))
                    .pragma("temp_store", "memory")
                    // Room for every shape of the writer's bulk statements
                    // (`bulk::shaped`: 10 statements × 5 shapes) beside the
                    // single-row ones, the migrations and the stats queries.
                    .statement_cache_capacity(160)
                    .busy_timeout(opts.busy_timeout);
                let probe = sqlx::SqliteConnection::connect_with(&options)
                    .await
                    .map_err(connect_err)?;
                let _ = probe.close().await;
                // No ping before each checkout: it is a round trip to the
                // connection's worker thread per batch, and a local file's
                // connection does not go away like a server's does (a failed
                // batch closes its connection; see `write_batch`).
                let pool = SqlitePoolOptions::new()
                    .test_before_acquire(false)
                    .max_connections(opts.max_connections.saturating_sub(1).max(1))
                    .acquire_timeout(opts.connect_timeout)
                    .connect_with(options.clone())
                    .await
                    .map_err(connect_err)?;
                writer = Some(SqliteWriter::new(
                    &options,
                    opts.sqlite_writer_cache_kib,
                    opts.sqlite_writer_idle,
                ));
                Pool::Sqlite(pool)
            }
            Target::Postgres(url) => {
                let options = PgConnectOptions::from_str(&url)
                    .map_err(|e| StoreError::new(StoreErrorKind::InvalidUrl, Some(&url), e))?;
                // One direct attempt first: an unreachable server fails fast
                // with its real cause, not a pool timeout.
                let probe = tokio::time::timeout(
                    opts.connect_timeout,
                    sqlx::PgConnection::connect_with(&options),
                )
                .await
                .map_err(|_| {
                    StoreError::new(
                        StoreErrorKind::Connect,
                        Some(url.as_str()),
                        "connect timed out",
                    )
                })?
                .map_err(connect_err)?;
                let _ = probe.close().await;
                // No ping before each checkout: a connection that died with
                // the server fails its batch, sqlx drops it, and the
                // recorder's retry gets a fresh one. One idle a while is
                // pinged first, within a bound (`pg_writer::answers_ping`);
                // so is each one given back, before sqlx's own unbounded
                // ping (`pg_writer::answers_ping_on_release`).
                let pool = PgPoolOptions::new()
                    .test_before_acquire(false)
                    .before_acquire(|conn, meta| Box::pin(pg_writer::answers_ping(conn, meta)))
                    .after_release(|conn, meta| {
                        Box::pin(pg_writer::answers_ping_on_release(conn, meta))
                    })
                    .max_connections(opts.max_connections.max(1))
                    .acquire_timeout(opts.connect_timeout)
                    .connect_with(options)
                    .await
                    .map_err(connect_err)?;
                Pool::Postgres(pool)
            }
        };
        let schema = if migrate {
            migrate::run(&pool).await
        } else {
            migrate::check(&pool).await
        };
        schema.map_err(|e| StoreError::new(StoreErrorKind::Migrate, Some(url), e))?;
        Ok(Store {
            inner: Arc::new(Inner {
                pool,
                url: url.to_owned(),
                writer,
                parking: ParkingClock::default(),
                pg_write_timeout: opts.pg_write_timeout,
            }),
        })
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match self.inner.pool {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    /// The URL the store was opened with, password redacted.
    pub fn url(&self) -> String {
        crate::error::redact_url(&self.inner.url)
    }

    /// PostgreSQL: how long the writer waits for an answer
    /// ([`pg_writer::client_deadline`] of `pg_write_timeout`).
    pub(crate) fn pg_answer_deadline(&self) -> Duration {
        pg_writer::client_deadline(self.inner.pg_write_timeout)
    }

    pub(crate) fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// Whether the database takes writes: one row rewritten as it is, in
    /// a transaction rolled back. A database that opens and migrates
    /// without writing (an existing file made read-only, a read-only
    /// role, a standby) fails here, not at the first batch.
    pub async fn check_writable(&self) -> Result<(), StoreError> {
        const PROBE: &str = "UPDATE schema_migrations SET name = name \
            WHERE version = (SELECT max(version) FROM schema_migrations)";
        macro_rules! probe {
            ($pool:expr) => {{
                let mut tx = $pool.begin().await?;
                sqlx::query(PROBE).execute(&mut *tx).await?;
                tx.rollback().await
            }};
        }
        let probed: Result<(), sqlx::Error> = async {
            match self.pool() {
                Pool::Sqlite(p) => probe!(p),
                Pool::Postgres(p) => probe!(p),
            }
        }
        .await;
        probed.map_err(|e| StoreError::new(StoreErrorKind::Connect, Some(&self.inner.url), e))
    }

    /// SQLite: the recorder's connection (`None` on PostgreSQL).
    pub(crate) fn sqlite_writer(&self) -> Option<&SqliteWriter> {
        self.inner.writer.as_ref()
    }

    /// Writes `events` in one transaction, in order, and says what each did.
    /// A parking pass, when one is due, runs last in the same transaction.
    /// On PostgreSQL a NUL in their text is written as U+FFFD
    /// ([`crate::pg_text`]).
    ///
    /// A failed COMMIT on PostgreSQL is [`BatchError::Unsure`], with what
    /// the statements found: the connection lost between the COMMIT and
    /// its answer leaves the transaction committed or not, and even an
    /// error answer can come after the commit (a backend terminated while
    /// it waits for a synchronous standby: "the transaction has already
    /// committed locally"). A failure before it is [`BatchError::Failed`];
    /// so is any failure on SQLite (`SqliteWriter::write_batch`).
    ///
    /// `ask`: results (positions in `events`) whose key is checked, after
    /// the batch's statements, to be stored under their own request id
    /// ([`Found::own_keys`]): the results an unsure attempt of the
    /// same events found new (`recorder::unsure`). Only PostgreSQL's
    /// commits are ever unsure; on SQLite `ask` is empty and nothing is
    /// checked.
    ///
    /// `stop` cuts the write off before its COMMIT, never during it
    /// ([`BatchError::Stopped`]: nothing written; see [`Stop`]).
    pub(crate) async fn write_batch(
        &self,
        events: &[Event],
        ask: &[usize],
        stop: &mut Stop<'_>,
    ) -> Result<Found, BatchError> {
        let pass = self.inner.parking.due(events);
        let (out, parked) = match &self.inner.pool {
            Pool::Sqlite(_) => match &self.inner.writer {
                Some(writer) => {
                    let (outcomes, parked) = writer.write_batch(events, pass, stop).await?;
                    let found = Found {
                        outcomes,
                        own_keys: Vec::new(),
                    };
                    (found, parked)
                }
                None => {
                    return Err(StoreError::query(sqlx::Error::Protocol(
                        "no SQLite writer".into(),
                    ))
                    .into());
                }
            },
            Pool::Postgres(pool) => {
                pg_writer::write_batch(pool, events, ask, pass, self.inner.pg_write_timeout, stop)
                    .await?
            }
        };
        if let Some(pass) = pass {
            self.inner.parking.passed(pass, parked);
            tracing::debug!(
                parked,
                cutoff_ms = pass.cutoff_ms,
                "parked calls open since before the cutoff"
            );
        }
        Ok(out)
    }

    /// Closes the pool (waits for connections to be returned).
    pub async fn close(&self) {
        if let Some(writer) = &self.inner.writer {
            writer.close().await;
        }
        match &self.inner.pool {
            Pool::Sqlite(p) => p.close().await,
            Pool::Postgres(p) => p.close().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_paths_as_open_reads_them() {
        use std::path::PathBuf;
        assert_eq!(
            sqlite_path("sqlite://a/b.db?mode=rwc"),
            Some(PathBuf::from("a/b.db"))
        );
        assert_eq!(sqlite_path("sqlite:x.db"), Some(PathBuf::from("x.db")));
        assert_eq!(sqlite_path(" /abs.db "), Some(PathBuf::from("/abs.db")));
        assert_eq!(sqlite_path("postgres://u@h/db"), None);
        assert_eq!(sqlite_path("mysql://h/db"), None);
        assert_eq!(sqlite_path("sqlite://:memory:"), None);
    }

    #[test]
    fn parses_urls() {
        assert_eq!(
            Target::parse("sqlite://a/b.db").unwrap(),
            Target::Sqlite("a/b.db".into())
        );
        assert_eq!(
            Target::parse("sqlite:///abs.db").unwrap(),
            Target::Sqlite("/abs.db".into())
        );
        assert_eq!(
            Target::parse("x.db").unwrap(),
            Target::Sqlite("x.db".into())
        );
        assert!(matches!(
            Target::parse("postgresql://u@h/d").unwrap(),
            Target::Postgres(_)
        ));
        assert_eq!(
            Target::parse("mysql://x").unwrap_err().kind(),
            StoreErrorKind::InvalidUrl
        );
        assert!(Target::parse("sqlite://").is_err());
        assert_eq!(
            Target::parse("sqlite://a/b.db?mode=rwc").unwrap(),
            Target::Sqlite("a/b.db".into())
        );
        for other in [
            "sqlite://a/b.db?mode=ro",
            "b.db?cache=shared",
            "sqlite://?mode=rwc",
        ] {
            assert_eq!(
                Target::parse(other).unwrap_err().kind(),
                StoreErrorKind::InvalidUrl,
                "{other}"
            );
        }
        assert_eq!(sqlite_path("sqlite://a/b.db?mode=ro"), None);
    }

    /// The file `sqlite_path` names is the one opened: a URL with sqlx's
    /// `?mode=rwc` made a second file named with it, which a reader then
    /// found empty (and a writer recorded into, unseen by the readers).
    #[tokio::test]
    async fn a_sqlite_url_with_mode_rwc_opens_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("tw.db").display());
        Store::open(&url).await.unwrap().close().await;
        Store::open_existing(&url).await.unwrap().close().await;
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with("-wal") && !n.ends_with("-shm"))
            .collect();
        names.sort();
        assert_eq!(names, ["tw.db"]);
        assert_eq!(sqlite_path(&url), Some(dir.path().join("tw.db")));
    }

    #[tokio::test]
    async fn unopenable_sqlite_names_path_and_cause() {
        let err = Store::open("sqlite:///nonexistent-dir-tw/x.db")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), StoreErrorKind::Connect);
        assert!(
            err.to_string().contains("/nonexistent-dir-tw/x.db"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn unreachable_postgres_names_url_without_password() {
        let opts = StoreOptions {
            connect_timeout: Duration::from_secs(2),
            ..StoreOptions::default()
        };
        // Port 1 on loopback: nothing listens there.
        let err = Store::open_with("postgres://me:hunter2@127.0.0.1:1/db", opts)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert_eq!(err.kind(), StoreErrorKind::Connect);
        assert!(text.contains("postgres://me:***@127.0.0.1:1/db"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("refused"), "names the cause: {text}");
    }
}
