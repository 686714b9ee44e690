//! SQLite: the connection the recorder's batches are written on (and
//! retention's steps, between two batches: [`SqliteWriter::run_bound`]),
//! and the checkpointer that copies its write-ahead log into the database
//! file from a connection of its own (issue 14).
//!
//! Why a checkpointer of its own: with SQLite's automatic checkpoints (every
//! 1,000 WAL pages) the committing connection copies the log into the
//! database file itself, inside the writer's commit: random `pwrite`s of
//! every page the log holds and two `fsync`s, on the writer's thread, while
//! the recorder's queue fills. Under sustained load (the soak) that was the
//! writer's largest single cost after the writes themselves. Here the
//! writer only appends to the log; a task on another connection (another
//! sqlx worker thread) runs `PASSIVE` checkpoints after commits, at most
//! every [`CHECKPOINT_EVERY`], which never block the writer. The writer's
//! own automatic checkpoint stays as a bound ([`WAL_BOUND_BYTES`]): if the
//! checkpointer falls behind or fails, the log still cannot grow past it.
//!
//! The writer's page cache has its own size (`sqlite_writer_cache_kib`):
//! each insert into an index keyed by random ids (call ids, sessions) reads
//! a leaf page, and the interior pages of every index it touches should
//! stay cached. After `sqlite_writer_idle` without a commit
//! ([`crate::DEFAULT_SQLITE_WRITER_IDLE`]) the checkpointer gives that
//! memory back (it closes the writer's connection; the next batch opens a
//! fresh one), so an idle gateway does not keep a busy hour's cache
//! resident.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use tokio::sync::Notify;

use crate::error::{StoreError, StoreErrorKind};
use crate::event::Event;
use crate::parking::{self, Pass};
use crate::stop::Stop;
use crate::write::{self, BatchError, Outcome};

/// Shortest time between two checkpoints.
pub(crate) const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);
/// Events committed since the last checkpoint that make the next one due
/// at once (after [`CHECKPOINT_EVERY`]): under load the log is copied every
/// 250 ms as it grows.
pub(crate) const CHECKPOINT_EVENTS: usize = 1024;
/// The longest a commit waits for its checkpoint when fewer events follow
/// it. At low traffic each checkpoint costs about the same whatever it
/// copies (the pages it writes, two `fsync`s, and at the next commit the
/// log's restart, which syncs it again), so the log is copied every 2 s,
/// not at every commit (BENCHMARKS.md, "Checkpoints at low traffic"). It
/// is also how much a power cut (not a killed process) may take back with
/// `synchronous = NORMAL`: the commits since the log's last sync.
pub const CHECKPOINT_WAIT: Duration = Duration::from_secs(2);
/// The page size of a database the store creates: SQLite's default, set
/// here so that the choice is made in one place. Pages of 16 KiB cost
/// SQLite's threads ~9 % less a request under the soak's load and a
/// recorded event 5–25 % less CPU with 10 M rows of history, but with
/// random ids a database that starts empty and grows recorded 7–12 %
/// fewer events a second (BENCHMARKS.md, "Pages of 16 KiB: measured, not
/// kept" and "Pages of 16 KiB over a longer measurement"). A database
/// keeps the page size it was created with.
pub const SQLITE_PAGE_SIZE: u32 = 4096;
/// The writer's own automatic checkpoint, in bytes of log (set in pages of
/// the database's size when the writer opens): a bound on the log should
/// the checkpointer fall behind, not the usual path. Also the size the log
/// file is truncated back to after it was reset (`journal_size_limit`).
pub(crate) const WAL_BOUND_BYTES: u64 = 64 << 20;
/// How long [`SqliteWriter::close`] waits for a checkpoint under way.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The recorder's connection, outside the pool and kept open. A pooled one
/// costs each batch two extra round trips to its worker thread (sqlx pings
/// a connection when it is returned to the pool, from a task spawned for
/// that) and starts each batch on whichever connection's statement cache
/// comes up; batches of one store are serialized on it, as SQLite
/// serializes writers anyway. It is one of `max_connections`: the pool gets
/// one fewer (at least one). A batch that fails closes it; the next opens a
/// fresh one.
#[derive(Debug)]
pub(crate) struct SqliteWriter {
    options: SqliteConnectOptions,
    shared: Arc<Shared>,
    checkpointer: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// What the writer and its checkpointer share.
#[derive(Debug)]
struct Shared {
    conn: tokio::sync::Mutex<Option<SqliteConnection>>,
    /// A commit happened: a checkpoint will be due.
    due: Notify,
    /// Events (or retention's rows) committed since the last checkpoint began.
    pending: AtomicUsize,
    closed: AtomicBool,
    /// The checkpointer's connection's options (a small cache: a
    /// checkpoint reads the log's frames, not the cache).
    checkpoint_options: SqliteConnectOptions,
    /// Without a commit for this long the writer's connection is closed.
    idle: Duration,
}

// === impl SqliteWriter ===

impl SqliteWriter {
    /// `options` are the pool's; the writer's connection gets a page cache
    /// of `cache_kib` and the log bound, and is closed after `idle`
    /// without a commit.
    pub(crate) fn new(
        options: &SqliteConnectOptions,
        cache_kib: u32,
        idle: Duration,
    ) -> SqliteWriter {
        let writer = options
            .clone()
            .pragma("cache_size", format!("-{}", cache_kib.max(64)))
            .pragma("journal_size_limit", WAL_BOUND_BYTES.to_string());
        let checkpoint_options = options.clone().pragma("cache_size", "-64");
        SqliteWriter {
            options: writer,
            shared: Arc::new(Shared {
                conn: tokio::sync::Mutex::new(None),
                due: Notify::new(),
                pending: AtomicUsize::new(0),
                closed: AtomicBool::new(false),
                checkpoint_options,
                idle,
            }),
            checkpointer: std::sync::Mutex::new(None),
        }
    }

    /// Writes `events` in one transaction, in order, and says what each
    /// did; then runs the parking `pass`, if any, in the same transaction
    /// and says how many calls it parked. `stop` cuts it off before its
    /// COMMIT, never during it ([`Stop`]).
    pub(crate) async fn write_batch(
        &self,
        events: &[Event],
        pass: Option<Pass>,
        stop: &mut Stop<'_>,
    ) -> Result<(Vec<Outcome>, u64), BatchError> {
        let Some(mut slot) = stop.before(self.shared.conn.lock()).await else {
            return Err(BatchError::Stopped);
        };
        let Some(conn) = stop.before(self.open(&mut slot)).await else {
            return Err(BatchError::Stopped);
        };
        let conn = conn?;
        let statements = async {
            // IMMEDIATE: take the write lock up front, so several writers
            // (processes) queue on the busy timeout instead of failing.
            let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
            let out = write::write_batch_sqlite(&mut tx, events).await?;
            let parked = match pass {
                Some(pass) => parking::park_sqlite(&mut tx, pass).await?,
                None => 0,
            };
            Ok::<_, sqlx::Error>((tx, out, parked))
        };
        let result = match stop.before(statements).await {
            // Unlike PostgreSQL's (`Store::write_batch`), this COMMIT's
            // outcome is never unknown: SQLite answers in this process
            // (sqlx's worker thread for the connection), so no answer is
            // lost on the way, and a COMMIT that fails has not committed:
            // SQLite rolls back what it could not append to the log (a full
            // disk, an I/O error), or the transaction stays open (busy) and
            // dropping the connection below rolls it back. A failed batch
            // here is `BatchError::Failed`, never `Unsure`.
            Some(Ok((tx, out, parked))) => Some(tx.commit().await.map(|()| (out, parked))),
            Some(Err(e)) => Some(Err(e)),
            None => None,
        };
        match result {
            Some(Ok(out)) => {
                drop(slot);
                self.checkpoint_soon(events.len());
                Ok(out)
            }
            Some(Err(e)) => {
                // On a full disk or an I/O error SQLite rolls the
                // transaction back by itself; sqlx's own rollback then
                // fails and the connection would believe it is still in
                // one, refusing every later batch. Dropped (its worker
                // closes it): the next batch opens a fresh one.
                slot.take();
                Err(StoreError::query(e).into())
            }
            None => {
                // Cut off in a statement, or in the BEGIN before sqlx
                // handed over its transaction (then nothing would roll it
                // back): the connection is dropped, and its worker runs what
                // it was sent, then closes it, which rolls back whatever
                // it has open.
                slot.take();
                Err(BatchError::Stopped)
            }
        }
    }

    /// Runs `statements`, each bound to `cutoff` and (when given) `rows`,
    /// in one transaction on the writer's connection, between two batches
    /// (retention, [`crate::retention`]): neither waits on SQLite's busy
    /// handler for the other, which under sustained writes left a step
    /// waiting for seconds. The rows each statement changed.
    pub(crate) async fn run_bound<const N: usize>(
        &self,
        statements: [&'static str; N],
        cutoff: i64,
        rows: Option<i64>,
    ) -> Result<[u64; N], StoreError> {
        let mut slot = self.shared.conn.lock().await;
        let conn = self.open(&mut slot).await?;
        let result = async {
            let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
            let n: [u64; N] = crate::pool::execute_bound!(tx, statements, cutoff, rows);
            tx.commit().await?;
            Ok::<_, sqlx::Error>(n)
        }
        .await;
        match result {
            Ok(n) => {
                drop(slot);
                let rows = n.iter().fold(0u64, |all, &k| all.saturating_add(k));
                self.checkpoint_soon(usize::try_from(rows).unwrap_or(usize::MAX));
                Ok(n)
            }
            Err(e) => {
                // As after a failed batch: a fresh connection next time.
                slot.take();
                Err(StoreError::query(e))
            }
        }
    }

    /// The writer's connection, opened when it is not. A failure to open is
    /// never the batch's fault (not `is_rejected`): the recorder keeps the
    /// batch and retries.
    async fn open<'a>(
        &self,
        slot: &'a mut Option<SqliteConnection>,
    ) -> Result<&'a mut SqliteConnection, StoreError> {
        match slot {
            Some(conn) => Ok(conn),
            None => {
                let connect =
                    |e: sqlx::Error| StoreError::new(StoreErrorKind::Connect, None, e.to_string());
                let mut conn = SqliteConnection::connect_with(&self.options)
                    .await
                    .map_err(connect)?;
                bound_the_log(&mut conn).await.map_err(connect)?;
                Ok(slot.insert(conn))
            }
        }
    }

    /// Tells the checkpointer a commit of `weight` events (or rows) happened,
    /// starting it on the first.
    fn checkpoint_soon(&self, weight: usize) {
        let mut handle = self
            .checkpointer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if handle.is_none() {
            *handle = Some(tokio::spawn(checkpointer(self.shared.clone())));
        }
        self.shared.pending.fetch_add(weight, Ordering::AcqRel);
        self.shared.due.notify_one();
    }

    /// Stops the checkpointer (waiting a little for a checkpoint under
    /// way) and closes the writer's connection.
    pub(crate) async fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.due.notify_one();
        let handle = self
            .checkpointer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(mut handle) = handle
            && tokio::time::timeout(CLOSE_WAIT, &mut handle).await.is_err()
        {
            handle.abort();
        }
        if let Some(conn) = self.shared.conn.lock().await.take() {
            let _ = conn.close().await;
        }
    }
}

impl Drop for SqliteWriter {
    fn drop(&mut self) {
        // A store dropped without `close`: the checkpointer ends too.
        self.shared.closed.store(true, Ordering::Release);
        self.shared.due.notify_one();
    }
}

/// The checkpointer's task: after commits, a `PASSIVE` checkpoint on its
/// own connection, at most every [`CHECKPOINT_EVERY`]: as soon as
/// [`CHECKPOINT_EVENTS`] have been committed since the last, else
/// [`CHECKPOINT_WAIT`] after it saw the first commit since (at most
/// `idle`); after `idle` without a commit, the writer's cache given back.
/// A failed checkpoint (a full disk, an I/O error) drops its connection
/// and is tried again after the next commit: the log is bounded by the
/// writer's own automatic checkpoint meanwhile.
async fn checkpointer(shared: Arc<Shared>) {
    use tokio::time::{Instant, timeout_at};
    let mut conn: Option<SqliteConnection> = None;
    let closed = || shared.closed.load(Ordering::Acquire);
    // When it last saw a commit: `idle` counts from there.
    let mut seen = Instant::now();
    loop {
        let idle = timeout_at(seen + shared.idle, shared.due.notified())
            .await
            .is_err();
        if idle && !closed() {
            release_memory(&shared).await;
            shared.due.notified().await;
        }
        seen = Instant::now();
        // Not past the idle release either (an `idle` shorter than the wait).
        let due = seen + CHECKPOINT_WAIT.min(shared.idle);
        while shared.pending.load(Ordering::Acquire) < CHECKPOINT_EVENTS && !closed() {
            if timeout_at(due, shared.due.notified()).await.is_err() {
                break;
            }
            seen = Instant::now();
        }
        if closed() {
            break;
        }
        shared.pending.store(0, Ordering::Release);
        if let Err(e) = checkpoint(&shared, &mut conn).await {
            tracing::debug!(error = %e, "WAL checkpoint failed; retried after the next commit");
            conn = None;
        }
        tokio::time::sleep(CHECKPOINT_EVERY).await;
    }
    if let Some(conn) = conn {
        let _ = conn.close().await;
    }
}

async fn checkpoint(
    shared: &Shared,
    conn: &mut Option<SqliteConnection>,
) -> Result<(), sqlx::Error> {
    let c = match conn {
        Some(c) => c,
        None => conn.insert(SqliteConnection::connect_with(&shared.checkpoint_options).await?),
    };
    // (busy, log pages, pages checkpointed): a busy or partial checkpoint
    // is finished by a later one.
    let _: (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut *c)
        .await?;
    Ok(())
}

/// Sets the writer's automatic checkpoint to [`WAL_BOUND_BYTES`] of log in
/// the database's own pages (a database created elsewhere, or moved with
/// a `VACUUM`, may have pages of another size than [`SQLITE_PAGE_SIZE`]).
async fn bound_the_log(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let page: i64 = sqlx::query_scalar("PRAGMA page_size")
        .fetch_one(&mut *conn)
        .await?;
    let pages = WAL_BOUND_BYTES / page.clamp(512, 65_536) as u64;
    // A pragma takes no bound parameter; `pages` is a number.
    let _: i64 = sqlx::query_scalar(&format!("PRAGMA wal_autocheckpoint = {pages}"))
        .fetch_one(&mut *conn)
        .await?;
    Ok(())
}

/// Gives back the writer's memory while it is idle: its connection is
/// closed (page cache, prepared statements and all), and the next batch
/// opens a fresh one. (`PRAGMA shrink_memory` on the open connection left
/// the gateway's RSS after the bench's load at 37–38 MB against 28.5 MB
/// with a 2 MiB cache: BENCHMARKS.md, issue 14.)
async fn release_memory(shared: &Shared) {
    let conn = shared.conn.lock().await.take();
    if let Some(conn) = conn {
        let _ = conn.close().await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sqlx::Connection;
    use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode};

    use super::{SQLITE_PAGE_SIZE, SqliteWriter, WAL_BOUND_BYTES};

    async fn pragma(conn: &mut SqliteConnection, name: &str) -> i64 {
        sqlx::query_scalar(&format!("PRAGMA {name}"))
            .fetch_one(conn)
            .await
            .unwrap()
    }

    /// A database the store creates has pages of [`SQLITE_PAGE_SIZE`]; one
    /// created with pages of another size keeps them. Either way the writer
    /// bounds its log at [`WAL_BOUND_BYTES`] in the database's own pages.
    #[tokio::test]
    async fn the_logs_bound_is_in_the_databases_own_pages() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.db");
        let other_page = 4 * SQLITE_PAGE_SIZE;
        let wal = |path: &std::path::Path| {
            SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
        };
        // A database made elsewhere, with pages of another size, and a table.
        let mut conn = SqliteConnection::connect_with(&wal(&other).page_size(other_page))
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t (x)")
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
        let url = format!("sqlite://{}", dir.path().join("new.db").display());
        crate::Store::open(&url).await.unwrap().close().await;

        for (file, page) in [("new.db", SQLITE_PAGE_SIZE), ("other.db", other_page)] {
            let page = i64::from(page);
            let options = wal(&dir.path().join(file)).page_size(SQLITE_PAGE_SIZE);
            let writer = SqliteWriter::new(&options, 1024, Duration::from_secs(60));
            let mut slot = None;
            let conn = writer.open(&mut slot).await.unwrap();
            assert_eq!(pragma(conn, "page_size").await, page, "{file}");
            let bound = pragma(conn, "wal_autocheckpoint").await;
            assert_eq!(bound * page, WAL_BOUND_BYTES as i64, "{file}");
            let limit = pragma(conn, "journal_size_limit").await;
            assert_eq!(limit, WAL_BOUND_BYTES as i64, "{file}");
            writer.close().await;
        }
    }

    /// The bundled SQLite is compiled as `.cargo/config.toml` asks
    /// (`LIBSQLITE3_FLAGS`): no memory statistics, and page caches of their
    /// own, without the global mutex that memory management puts on every
    /// page fetched (BENCHMARKS.md, issue 14). A build that lost the flags
    /// (a `LIBSQLITE3_FLAGS` of its own in the environment) fails here.
    #[tokio::test]
    async fn sqlite_is_compiled_without_memory_statistics_or_management() {
        let mut conn = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        let options: Vec<String> = sqlx::query_scalar("PRAGMA compile_options")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "memory statistics off: {options:?}"
        );
        assert!(
            !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
            "memory management off: {options:?}"
        );
        // What the build keeps: the threading mode sqlx relies on.
        assert!(options.iter().any(|o| o == "THREADSAFE=1"), "{options:?}");
        conn.close().await.unwrap();
    }
}
