//! [`Pool`]: the connection pool of either backend, a leaf that `store`
//! (which opens it) and `migrate` (which runs on it) both import; and
//! [`execute_bound!`], the statement loop of a retention step on either
//! backend's transaction.

use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

#[derive(Debug)]
pub(crate) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Executes each of `statements` (an array of SQL texts) on `tx` (a
/// transaction of either backend), bound to `cutoff` and, when `rows` is
/// `Some`, to it as well: the rows each changed, in an array. Retention's
/// steps (`retention`, and on SQLite `SqliteWriter::run_bound`).
macro_rules! execute_bound {
    ($tx:expr, $statements:expr, $cutoff:expr, $rows:expr) => {{
        let statements = $statements;
        let mut n = [0u64; _];
        for (i, sql) in statements.into_iter().enumerate() {
            let q = sqlx::query(sql).bind($cutoff);
            let q = match $rows {
                Some(rows) => q.bind(rows),
                None => q,
            };
            n[i] = q.execute(&mut *$tx).await?.rows_affected();
        }
        n
    }};
}
pub(crate) use execute_bound;
