//! The schema's version against the build's: a build never writes to a
//! schema newer than it knows, and readers never migrate.

use toolwarden_store::{SCHEMA_VERSION, Store, StoreErrorKind};

use crate::support::{TestDb, execute};

fn refused(opened: Result<Store, toolwarden_store::StoreError>, says: &str) {
    let err = opened.expect_err("a schema this build cannot use");
    assert_eq!(err.kind(), StoreErrorKind::Migrate, "{err}");
    assert!(err.to_string().contains(says), "{err}");
}

pub async fn readers_require_the_builds_schema_and_no_build_writes_a_newer_one(db: TestDb) {
    // A reader migrates nothing: a database without the schema stays so.
    refused(
        Store::open_existing(&db.url).await,
        "version 0, this toolwarden needs",
    );
    let store = Store::open(&db.url).await.expect("migrate");
    store.close().await;
    Store::open_existing(&db.url)
        .await
        .expect("the build's schema")
        .close()
        .await;
    // A later build's migration: neither a writer nor a reader uses it.
    let newer = SCHEMA_VERSION + 1;
    execute(
        &db.url,
        &format!(
            "INSERT INTO schema_migrations (version, name, applied_ms) VALUES ({newer}, 'later', 0)"
        ),
    )
    .await;
    let says = format!("version {newer}, newer than this toolwarden knows");
    refused(Store::open(&db.url).await, &says);
    refused(Store::open_existing(&db.url).await, &says);
    // An older schema: the writer migrates it, a reader asks for that.
    execute(
        &db.url,
        &format!("DELETE FROM schema_migrations WHERE version >= {SCHEMA_VERSION}"),
    )
    .await;
    let found = SCHEMA_VERSION - 1;
    refused(
        Store::open_existing(&db.url).await,
        &format!("version {found}, this toolwarden needs {SCHEMA_VERSION}"),
    );
}

/// PostgreSQL: session numbers are unique and indexed (SQLite's are the
/// table's key), as retention's sessions step and every lookup by number
/// need.
pub async fn session_numbers_are_unique_and_indexed(db: TestDb) {
    Store::open(&db.url).await.expect("migrate").close().await;
    let unique = crate::support::query_i64(
        &db.url,
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'sessions' \
         AND schemaname = current_schema() AND indexdef LIKE 'CREATE UNIQUE INDEX % (no)'",
    )
    .await;
    assert_eq!(unique, 1);
}

/// A database that opens with its schema in place but takes no writes
/// (an existing SQLite file made read-only; here a PostgreSQL session
/// whose transactions are read-only, as on a standby, opened without
/// migrating since PostgreSQL's migration step already writes) fails
/// `check_writable`; a writable one passes.
pub async fn a_database_that_takes_no_writes_is_found_at_start(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    store.check_writable().await.unwrap();
    if store.backend() != "postgres" {
        return;
    }
    drop(store);
    let read_only = format!("{}&options[default_transaction_read_only]=on", db.url);
    let store = Store::open_existing(&read_only).await.unwrap();
    let err = store.check_writable().await.unwrap_err().to_string();
    assert!(err.contains("read-only"), "{err}");
}
