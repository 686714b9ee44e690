//! [`Pool`]: the connection pool of either backend, a leaf that `store`
//! (which opens it) and `migrate` (which runs on it) both import.

use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

#[derive(Debug)]
pub(crate) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}
