//! A tiny migrator: numbered SQL files per backend (`migrations/sqlite`,
//! `migrations/postgres`, same tables and columns), applied once each and
//! remembered in `schema_migrations`. Safe when several processes open the
//! same database at once: SQLite takes the write lock first
//! (`BEGIN IMMEDIATE`), PostgreSQL a transaction-scoped advisory lock.
//!
//! A build never writes to a schema newer than it knows (a later version
//! may have changed the keys its statements name: 0010 did), and readers
//! that must not change the database ([`check`]: `toolwarden stats`,
//! `alerts`, possibly against a replica) apply nothing: they require the
//! schema this build knows.

use sqlx::Connection;

use crate::pool::Pool;

/// One migration: version, name, SQL for SQLite, SQL for PostgreSQL.
struct Migration {
    version: i64,
    name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "init",
        sqlite: include_str!("../migrations/sqlite/0001_init.sql"),
        postgres: include_str!("../migrations/postgres/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "requests_by_response",
        sqlite: include_str!("../migrations/sqlite/0002_requests_by_response.sql"),
        postgres: include_str!("../migrations/postgres/0002_requests_by_response.sql"),
    },
    Migration {
        version: 3,
        name: "call_turns",
        sqlite: include_str!("../migrations/sqlite/0003_call_turns.sql"),
        postgres: include_str!("../migrations/postgres/0003_call_turns.sql"),
    },
    Migration {
        version: 4,
        name: "bounded_pairing_lookups",
        sqlite: include_str!("../migrations/sqlite/0004_bounded_pairing_lookups.sql"),
        postgres: include_str!("../migrations/postgres/0004_bounded_pairing_lookups.sql"),
    },
    Migration {
        version: 5,
        name: "alert_transitions",
        sqlite: include_str!("../migrations/sqlite/0005_alert_transitions.sql"),
        postgres: include_str!("../migrations/postgres/0005_alert_transitions.sql"),
    },
    Migration {
        version: 6,
        name: "dropped_tool_counts",
        sqlite: include_str!("../migrations/sqlite/0006_dropped_tool_counts.sql"),
        postgres: include_str!("../migrations/postgres/0006_dropped_tool_counts.sql"),
    },
    Migration {
        version: 7,
        name: "calls_only_indexes",
        sqlite: include_str!("../migrations/sqlite/0007_calls_only_indexes.sql"),
        postgres: include_str!("../migrations/postgres/0007_calls_only_indexes.sql"),
    },
    Migration {
        version: 8,
        name: "calls_by_session",
        sqlite: include_str!("../migrations/sqlite/0008_calls_by_session.sql"),
        postgres: include_str!("../migrations/postgres/0008_calls_by_session.sql"),
    },
    Migration {
        version: 9,
        name: "parked_open_calls",
        sqlite: include_str!("../migrations/sqlite/0009_parked_open_calls.sql"),
        postgres: include_str!("../migrations/postgres/0009_parked_open_calls.sql"),
    },
    Migration {
        version: 10,
        name: "session_numbers",
        sqlite: include_str!("../migrations/sqlite/0010_session_numbers.sql"),
        postgres: include_str!("../migrations/postgres/0010_session_numbers.sql"),
    },
    Migration {
        version: 11,
        name: "orphans_in_time_order",
        sqlite: include_str!("../migrations/sqlite/0011_orphans_in_time_order.sql"),
        postgres: include_str!("../migrations/postgres/0011_orphans_in_time_order.sql"),
    },
    Migration {
        version: 12,
        name: "retention_by_time",
        sqlite: include_str!("../migrations/sqlite/0012_retention_by_time.sql"),
        postgres: include_str!("../migrations/postgres/0012_retention_by_time.sql"),
    },
    Migration {
        version: 13,
        name: "alert_heartbeats",
        sqlite: include_str!("../migrations/sqlite/0013_alert_heartbeats.sql"),
        postgres: include_str!("../migrations/postgres/0013_alert_heartbeats.sql"),
    },
    Migration {
        version: 14,
        name: "session_numbers_unique",
        sqlite: include_str!("../migrations/sqlite/0014_session_numbers_unique.sql"),
        postgres: include_str!("../migrations/postgres/0014_session_numbers_unique.sql"),
    },
    Migration {
        version: 15,
        name: "session_calls_newest",
        sqlite: include_str!("../migrations/sqlite/0015_session_calls_newest.sql"),
        postgres: include_str!("../migrations/postgres/0015_session_calls_newest.sql"),
    },
    Migration {
        version: 16,
        name: "call_turns_newest",
        sqlite: include_str!("../migrations/sqlite/0016_call_turns_newest.sql"),
        postgres: include_str!("../migrations/postgres/0016_call_turns_newest.sql"),
    },
    Migration {
        version: 17,
        name: "dropped_counts_once",
        sqlite: include_str!("../migrations/sqlite/0017_dropped_counts_once.sql"),
        postgres: include_str!("../migrations/postgres/0017_dropped_counts_once.sql"),
    },
    Migration {
        version: 18,
        name: "alert_repeats",
        sqlite: include_str!("../migrations/sqlite/0018_alert_repeats.sql"),
        postgres: include_str!("../migrations/postgres/0018_alert_repeats.sql"),
    },
    Migration {
        version: 19,
        name: "calls_incomplete",
        sqlite: include_str!("../migrations/sqlite/0019_calls_incomplete.sql"),
        postgres: include_str!("../migrations/postgres/0019_calls_incomplete.sql"),
    },
    Migration {
        version: 20,
        name: "call_turns_by_hour",
        sqlite: include_str!("../migrations/sqlite/0020_call_turns_by_hour.sql"),
        postgres: include_str!("../migrations/postgres/0020_call_turns_by_hour.sql"),
    },
    Migration {
        version: 21,
        name: "orphan_call_turns",
        sqlite: include_str!("../migrations/sqlite/0021_orphan_call_turns.sql"),
        postgres: include_str!("../migrations/postgres/0021_orphan_call_turns.sql"),
    },
    Migration {
        version: 22,
        name: "sessions_by_first_turn",
        sqlite: include_str!("../migrations/sqlite/0022_sessions_by_first_turn.sql"),
        postgres: include_str!("../migrations/postgres/0022_sessions_by_first_turn.sql"),
    },
    Migration {
        version: 23,
        name: "alert_latest",
        sqlite: include_str!("../migrations/sqlite/0023_alert_latest.sql"),
        postgres: include_str!("../migrations/postgres/0023_alert_latest.sql"),
    },
    Migration {
        version: 24,
        name: "session_calls_only",
        sqlite: include_str!("../migrations/sqlite/0024_session_calls_only.sql"),
        postgres: include_str!("../migrations/postgres/0024_session_calls_only.sql"),
    },
];

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (\
    version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_ms BIGINT NOT NULL)";
const APPLIED: &str = "SELECT version FROM schema_migrations";
const RECORD: &str =
    "INSERT INTO schema_migrations (version, name, applied_ms) VALUES ($1, $2, $3)";
/// An arbitrary constant key for the migration lock.
const PG_LOCK: &str = "SELECT pg_advisory_xact_lock(7395602181)";

/// The newest schema version this build knows.
pub const SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// Why a database's schema cannot be used as it is.
#[derive(Debug)]
pub(crate) enum SchemaError {
    /// The database failed.
    Sql(sqlx::Error),
    /// The database holds a migration this build does not know.
    Newer { found: i64 },
    /// A reader found migrations not yet applied (`found`: the newest
    /// applied, 0 for none).
    Older { found: i64 },
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaError::Sql(e) => e.fmt(f),
            SchemaError::Newer { found } => write!(
                f,
                "the database's schema is version {found}, newer than this toolwarden knows \
                 ({SCHEMA_VERSION}): a later toolwarden migrated it; upgrade this one"
            ),
            SchemaError::Older { found } => write!(
                f,
                "the database's schema is version {found}, this toolwarden needs \
                 {SCHEMA_VERSION}: start `toolwarden serve` of this version once to migrate it"
            ),
        }
    }
}

impl std::error::Error for SchemaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SchemaError::Sql(e) => Some(e),
            _ => None,
        }
    }
}

impl From<sqlx::Error> for SchemaError {
    fn from(e: sqlx::Error) -> Self {
        SchemaError::Sql(e)
    }
}

/// Refuses a schema with a version newer than [`SCHEMA_VERSION`].
fn known(done: &[i64]) -> Result<(), SchemaError> {
    match done.iter().copied().max() {
        Some(found) if found > SCHEMA_VERSION => Err(SchemaError::Newer { found }),
        _ => Ok(()),
    }
}

/// Applies the migrations not yet applied; refuses a newer schema.
pub(crate) async fn run(pool: &Pool) -> Result<(), SchemaError> {
    match pool {
        Pool::Sqlite(p) => {
            let mut conn = p.acquire().await?;
            let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
            sqlx::query(CREATE_TABLE).execute(&mut *tx).await?;
            let done: Vec<i64> = sqlx::query_scalar(APPLIED).fetch_all(&mut *tx).await?;
            known(&done)?;
            for m in MIGRATIONS.iter().filter(|m| !done.contains(&m.version)) {
                sqlx::raw_sql(m.sqlite).execute(&mut *tx).await?;
                sqlx::query(RECORD)
                    .bind(m.version)
                    .bind(m.name)
                    .bind(now_ms())
                    .execute(&mut *tx)
                    .await?;
            }
            Ok(tx.commit().await?)
        }
        Pool::Postgres(p) => {
            let mut tx = p.begin().await?;
            sqlx::query(PG_LOCK).execute(&mut *tx).await?;
            sqlx::query(CREATE_TABLE).execute(&mut *tx).await?;
            let done: Vec<i64> = sqlx::query_scalar(APPLIED).fetch_all(&mut *tx).await?;
            known(&done)?;
            for m in MIGRATIONS.iter().filter(|m| !done.contains(&m.version)) {
                sqlx::raw_sql(m.postgres).execute(&mut *tx).await?;
                sqlx::query(RECORD)
                    .bind(m.version)
                    .bind(m.name)
                    .bind(now_ms())
                    .execute(&mut *tx)
                    .await?;
            }
            Ok(tx.commit().await?)
        }
    }
}

/// Requires every migration this build knows, and none it does not,
/// without writing anything.
pub(crate) async fn check(pool: &Pool) -> Result<(), SchemaError> {
    // A database without the table has no schema yet.
    let table = match pool {
        Pool::Sqlite(p) => sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
        )
        .fetch_one(p)
        .await?,
        Pool::Postgres(p) => {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM pg_tables WHERE tablename = 'schema_migrations' AND schemaname = ANY (current_schemas(false))")
                .fetch_one(p)
                .await?
        }
    };
    let done: Vec<i64> = if table == 0 {
        Vec::new()
    } else {
        match pool {
            Pool::Sqlite(p) => sqlx::query_scalar(APPLIED).fetch_all(p).await?,
            Pool::Postgres(p) => sqlx::query_scalar(APPLIED).fetch_all(p).await?,
        }
    };
    known(&done)?;
    match MIGRATIONS.iter().find(|m| !done.contains(&m.version)) {
        Some(_) => Err(SchemaError::Older {
            found: done.iter().copied().max().unwrap_or(0),
        }),
        None => Ok(()),
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database from before migration 0009 keeps its open calls, parked
    /// (they are as old as its last run), and a call answered then stays
    /// out of both indexes of open calls.
    /// A SQLite database in `dir` migrated to the versions before `version`.
    async fn sqlite_before(dir: &tempfile::TempDir, version: i64) -> sqlx::SqlitePool {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(dir.path().join("old.db"))
            .create_if_missing(true);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        sqlx::query(CREATE_TABLE).execute(&pool).await.unwrap();
        for m in MIGRATIONS.iter().filter(|m| m.version < version) {
            sqlx::raw_sql(m.sqlite).execute(&pool).await.unwrap();
            sqlx::query(RECORD)
                .bind(m.version)
                .bind(m.name)
                .bind(0i64)
                .execute(&pool)
                .await
                .unwrap();
        }
        pool
    }

    /// Applies the rest of the migrations to `pool`.
    async fn upgrade(pool: sqlx::SqlitePool) -> sqlx::SqlitePool {
        let pool = Pool::Sqlite(pool);
        run(&pool).await.unwrap();
        let Pool::Sqlite(pool) = pool else {
            unreachable!()
        };
        pool
    }

    #[tokio::test]
    async fn upgrading_parks_the_calls_left_open() {
        let dir = tempfile::tempdir().unwrap();
        let pool = sqlite_before(&dir, 9).await;
        sqlx::raw_sql(
            "INSERT INTO tool_calls (session_id, call_id, tool, provider, at_ms, request_id, \
             call_index, call_at_ms, result_at_ms) VALUES \
             ('s', 'open', 't', 'p', 1, 'r', 0, 1, NULL), ('s', 'done', 't', 'p', 1, 'r', 1, 1, 2)",
        )
        .execute(&pool)
        .await
        .unwrap();
        let pool = upgrade(pool).await;
        let rows: Vec<(String, i64)> =
            sqlx::query_as("SELECT call_id, parked FROM tool_calls ORDER BY call_id")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(rows, [("done".to_owned(), 0), ("open".to_owned(), 1)]);
        let version: i64 = sqlx::query_scalar("SELECT max(version) FROM schema_migrations")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
    }

    /// A database from before migration 0010 gets its sessions numbered in
    /// the order they began, then the sessions only tool rows name, and
    /// every row carries its session's number.
    #[tokio::test]
    async fn upgrading_numbers_the_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let pool = sqlite_before(&dir, 10).await;
        sqlx::raw_sql(
            "INSERT INTO sessions (session_id, source, first_ms, last_ms, requests) VALUES \
             ('late', 'header', 9, 9, 1), ('early', 'metadata', 5, 6, 1); \
             INSERT INTO requests (request_id, session_id, at_ms, provider, path, status, \
             streaming, upstream_latency_ms, overhead_us, repair_mode, repairs) VALUES \
             ('r1', 'early', 5, 'p', '/', 200, 0, 1.0, 1.0, 'fix', 0), \
             ('r2', 'late', 9, 'p', '/', 200, 0, 1.0, 1.0, 'fix', 0); \
             INSERT INTO tool_calls (session_id, call_id, tool, provider, at_ms, request_id, \
             call_index, call_at_ms) VALUES ('early', 'c1', 't', 'p', 5, 'r1', 0, 5), \
             ('late', 'c2', 't', 'p', 9, 'r2', 0, 9), ('lost', 'c3', 't', 'p', 12, 'r3', 0, 12); \
             INSERT INTO tool_results (session_id, call_id, message_index, request_id, at_ms) \
             VALUES ('early', 'c1', 2, 'r2', 6), ('lost', 'c3', 4, 'r4', 13); \
             INSERT INTO call_turns (request_id, session_id, turn_fp) VALUES ('r2', 'late', 77);",
        )
        .execute(&pool)
        .await
        .unwrap();
        let pool = upgrade(pool).await;
        let sessions: Vec<(i64, String, String, i64)> =
            sqlx::query_as("SELECT no, session_id, source, requests FROM sessions ORDER BY no")
                .fetch_all(&pool)
                .await
                .unwrap();
        let sessions: Vec<(i64, &str, &str, i64)> = sessions
            .iter()
            .map(|(n, s, src, r)| (*n, s.as_str(), src.as_str(), *r))
            .collect();
        assert_eq!(
            sessions,
            [
                (1, "early", "metadata", 1),
                (2, "late", "header", 1),
                (3, "lost", "none", 0)
            ]
        );
        for table in ["requests", "tool_calls", "tool_results", "call_turns"] {
            let wrong: i64 = sqlx::query_scalar(&format!(
                "SELECT count(*) FROM {table} t \
                 WHERE t.session_no IS NOT (SELECT no FROM sessions s WHERE s.session_id = t.session_id)"
            ))
            .fetch_one(&pool)
            .await
            .unwrap();
            assert_eq!(wrong, 0, "{table}");
        }
        let keys: Vec<(i64, String, i64)> = sqlx::query_as(
            "SELECT session_no, call_id, message_index FROM tool_results ORDER BY session_no",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        assert_eq!(keys, [(1, "c1".to_owned(), 2), (3, "c3".to_owned(), 4)]);
    }
}
