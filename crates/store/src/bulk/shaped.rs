//! Rows bound as parameters in statements of a few fixed shapes (SQLite).
//!
//! A [`Shaped`] statement reads its rows from `u`, a `VALUES` list of `?`
//! parameters:
//!
//! ```sql
//! WITH v(k, n) AS (VALUES (?,?),(?,?),(?,?),(?,?)),
//!      u AS (SELECT * FROM v WHERE k IS NOT NULL)
//! INSERT INTO t (k, n) SELECT k, n FROM u WHERE true ON CONFLICT (k) DO NOTHING
//! ```
//!
//! sqlx keeps a connection's prepared statements by SQL text, so the row
//! counts come from a fixed set, [`SHAPES`]: a batch is cut into as many
//! chunks of the largest shape as it fills, and its remainder goes into the
//! smallest shape that holds it. The padding rows are left unbound, which
//! SQLite reads as NULL (sqlx clears a statement's bindings before each run
//! and binds only the values given), and `u` drops them: the first column of
//! every row must therefore be a key that is never NULL.

use std::sync::OnceLock;

use sqlx::error::BoxDynError;
use sqlx::sqlite::{SqliteArguments, SqliteConnection, SqliteRow};
use sqlx::{Arguments, FromRow};

/// Row counts of the statements: powers of 4, so a remainder wastes at most
/// three quarters of its statement's rows on padding and an operation has
/// six statements in sqlx's cache.
pub(crate) const SHAPES: [usize; 6] = [1, 4, 16, 64, 256, 1024];

/// SQLite's limit on the parameters of one statement (`SQLITE_MAX_VARIABLE_NUMBER`).
const MAX_PARAMS: usize = 32766;

/// A statement over rows bound as parameters, in each of the [`SHAPES`].
pub(crate) struct Shaped {
    /// The columns of `u`; the first is never NULL in a real row.
    cols: &'static [&'static str],
    /// What follows the `WITH` clause, reading `u`.
    body: Body,
    /// The SQL text of each shape, rendered on first use.
    sql: [OnceLock<String>; SHAPES.len()],
}

/// The statement after the `WITH` clause.
#[derive(Debug)]
enum Body {
    /// SQL reading `u`.
    Sql(&'static str),
    /// `INSERT INTO table (cols) SELECT cols FROM u WHERE true tail`: `u`'s
    /// columns are the table's.
    Insert {
        table: &'static str,
        tail: &'static str,
    },
}

/// A row's values, appended to a statement's arguments in column order.
pub(crate) type Args<'q> = SqliteArguments<'q>;

// === impl Shaped ===

impl Shaped {
    /// A statement whose `body` reads rows of `cols` from `u`.
    pub(crate) const fn new(cols: &'static [&'static str], body: &'static str) -> Shaped {
        Shaped {
            cols,
            body: Body::Sql(body),
            sql: [const { OnceLock::new() }; SHAPES.len()],
        }
    }

    /// Inserts the rows into `table`'s columns `cols`, then `tail` (an
    /// `ON CONFLICT` clause, or nothing).
    pub(crate) const fn insert(
        table: &'static str,
        cols: &'static [&'static str],
        tail: &'static str,
    ) -> Shaped {
        Shaped {
            cols,
            body: Body::Insert { table, tail },
            sql: [const { OnceLock::new() }; SHAPES.len()],
        }
    }

    /// Runs the statement over `rows`, chunk by chunk, in order.
    pub(crate) async fn execute<'q, T>(
        &'static self,
        conn: &mut SqliteConnection,
        rows: &'q [T],
        bind: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<(), sqlx::Error> {
        for chunk in self.chunks(rows) {
            let (sql, args) = self.bound(chunk, &bind)?;
            sqlx::query_with(sql, args).execute(&mut *conn).await?;
        }
        Ok(())
    }

    /// Runs the query over `rows`, chunk by chunk, and returns the rows of
    /// all chunks.
    pub(crate) async fn fetch<'q, T, O>(
        &'static self,
        conn: &mut SqliteConnection,
        rows: &'q [T],
        bind: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<Vec<O>, sqlx::Error>
    where
        O: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
    {
        let mut out = Vec::new();
        for chunk in self.chunks(rows) {
            let (sql, args) = self.bound(chunk, &bind)?;
            out.extend(
                sqlx::query_as_with::<_, O, _>(sql, args)
                    .fetch_all(&mut *conn)
                    .await?,
            );
        }
        Ok(out)
    }

    /// The most rows one statement takes: the largest shape whose
    /// parameters SQLite accepts.
    fn max_shape(&self) -> usize {
        let fits = SHAPES
            .iter()
            .rposition(|&n| n * self.cols.len() <= MAX_PARAMS);
        fits.unwrap_or(0)
    }

    /// Cuts `rows` into chunks of the largest shape, then the remainder;
    /// nothing for no rows.
    fn chunks<'r, T>(&self, rows: &'r [T]) -> impl Iterator<Item = &'r [T]> {
        rows.chunks(SHAPES[self.max_shape()])
    }

    /// The SQL text for `chunk` (the smallest shape that holds it) and its
    /// values, padding left unbound.
    fn bound<'q, T>(
        &'static self,
        chunk: &'q [T],
        bind: &impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<(&'static str, Args<'q>), sqlx::Error> {
        let shape = SHAPES
            .iter()
            .position(|&n| n >= chunk.len())
            .unwrap_or(SHAPES.len() - 1);
        let width = self.cols.len();
        let mut args = Args::default();
        args.reserve(chunk.len() * width, 0);
        for row in chunk {
            let before = args.len();
            bind(&mut args, row).map_err(sqlx::Error::Encode)?;
            if args.len() != before + width {
                return Err(sqlx::Error::Encode(
                    format!(
                        "a row of {} values for a statement of {width} columns",
                        args.len() - before
                    )
                    .into(),
                ));
            }
        }
        let sql = self.sql[shape].get_or_init(|| self.render(SHAPES[shape]));
        Ok((sql.as_str(), args))
    }

    /// `WITH v(cols) AS (VALUES (?,…),…), u AS (…) body` for `rows` rows.
    fn render(&self, rows: usize) -> String {
        let width = self.cols.len();
        let cols = self.cols.join(", ");
        let row = format!("({})", vec!["?"; width].join(","));
        let mut sql = String::with_capacity(256 + rows * (row.len() + 1));
        sql.push_str("WITH v(");
        sql.push_str(&cols);
        sql.push_str(") AS (VALUES ");
        for i in 0..rows {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&row);
        }
        sql.push_str("), u AS (SELECT * FROM v WHERE ");
        sql.push_str(self.cols.first().copied().unwrap_or("NULL"));
        sql.push_str(" IS NOT NULL) ");
        match self.body {
            Body::Sql(body) => sql.push_str(body),
            Body::Insert { table, tail } => {
                sql.push_str(&format!(
                    "INSERT INTO {table} ({cols}) SELECT {cols} FROM u WHERE true {tail}"
                ));
            }
        }
        sql
    }
}

impl std::fmt::Debug for Shaped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shaped")
            .field("cols", &self.cols)
            .field("body", &self.body)
            .finish()
    }
}
