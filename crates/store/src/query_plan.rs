//! Tests' view of SQLite's query plans: what a statement reads, on a
//! freshly migrated database, so a test can say it searches an index and
//! scans no table.

use crate::store::{Pool, Store};

/// A parameter bound to the statement whose plan is asked for.
pub(crate) enum Param<'a> {
    Int(i64),
    Text(&'a str),
}

/// SQLite's plan rows `(id, parent, notused, detail)` for `sql` with
/// `params` bound, on a freshly migrated database.
pub(crate) async fn sqlite_plan(sql: &str, params: &[Param<'_>]) -> Vec<(i64, i64, i64, String)> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("plan.db").display());
    let store = Store::open(&url).await.unwrap();
    let Pool::Sqlite(pool) = store.pool() else {
        unreachable!()
    };
    let text = format!("EXPLAIN QUERY PLAN {sql}");
    let mut query = sqlx::query_as(&text);
    for param in params {
        query = match param {
            Param::Int(n) => query.bind(*n),
            Param::Text(s) => query.bind(*s),
        };
    }
    query.fetch_all(pool).await.unwrap()
}
