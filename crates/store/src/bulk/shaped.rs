//! Rows bound as parameters in statements of a few fixed shapes (SQLite).
//!
//! A [`Shaped`] statement reads its rows from `u`, a `VALUES` list of `?`
//! parameters whose first column `n` is the row's index in the slice given:
//!
//! ```sql
//! WITH v(n, k, x) AS (VALUES (?,?,?),(?,?,?),(?,?,?),(?,?,?)),
//!      u AS (SELECT * FROM v WHERE n IS NOT NULL)
//! INSERT OR FAIL INTO t (k, x) SELECT k, x FROM u WHERE true ON CONFLICT (k) DO NOTHING
//! ```
//!
//! `OR FAIL`, not SQLite's default `ABORT`: a statement that writes many
//! rows and may abort makes SQLite copy every page it touches into a
//! statement journal first, so that it can undo the statement alone (a
//! tenth of the SQLite thread's time on the gateway's traffic, measured:
//! BENCHMARKS.md, "Statement journals"). A batch never needs that: it is
//! one transaction, and any failed statement rolls all of it back
//! (`sqlite_writer`), so `FAIL`'s "stop here, keep the rows before" is
//! never seen. A violated constraint is still an error, never a row
//! silently skipped (as `OR IGNORE` would).
//!
//! sqlx keeps a connection's prepared statements by SQL text, so the row
//! counts come from a fixed set, [`SHAPES`]: a batch is cut into as many
//! chunks of the largest shape as it fills, and its remainder goes into the
//! smallest shape that holds it. The padding rows are left unbound, which
//! SQLite reads as NULL (sqlx clears a statement's bindings before each run
//! and binds only the values given), and `u` drops them by their NULL `n`.
//!
//! sqlx sends each result row from its worker thread through a channel (a
//! wake-up each), so lookups answer in one row per statement: the indices
//! of the matching rows ([`Shaped::insert_reporting_stored`]) or one JSON array
//! ([`Shaped::fetch_json`]), and what an insert would answer row by row
//! with `RETURNING` is read back as one JSON array too
//! ([`Shaped::insert_answering_json`]).
//!
//! A round trip ends at its last statement's end ([`round_trip`]), not at
//! the channel's close that follows it: the task would sleep in between
//! and be woken twice.

use std::sync::OnceLock;

use futures_util::TryStreamExt;
use serde::de::DeserializeOwned;
use sqlx::error::BoxDynError;
use sqlx::sqlite::{SqliteArguments, SqliteConnection, SqliteRow};
use sqlx::{Arguments, Either, Executor, Row};

/// Row counts of the statements: powers of 4, so a remainder wastes at most
/// three quarters of its statement's rows on padding and an operation has
/// five statements in sqlx's cache. Up to 256: preparing a statement costs
/// in proportion to its rows, and a run of a statement hashes and copies
/// its SQL text and clears all its parameters, so 1024-row statements cost
/// more than the round trips they save (measured: BENCHMARKS.md, Recording).
pub(crate) const SHAPES: [usize; 5] = [1, 4, 16, 64, 256];

/// SQLite's limit on the parameters of one statement (`SQLITE_MAX_VARIABLE_NUMBER`).
const MAX_PARAMS: usize = 32766;

/// A statement over rows bound as parameters, in each of the [`SHAPES`].
pub(crate) struct Shaped {
    /// The columns of `u` after `n`.
    cols: &'static [&'static str],
    /// What follows the `WITH` clause, reading `u`.
    body: Body,
    /// The SQL text of each shape, rendered on first use.
    sql: [OnceLock<String>; SHAPES.len()],
}

/// The statement after the `WITH` clause.
#[derive(Debug)]
enum Body {
    /// SQL reading `u`; it may begin with more common table expressions
    /// of its own (`, w AS (…) SELECT …`), which follow `u`.
    Sql(&'static str),
    /// `INSERT OR FAIL INTO table (cols) SELECT cols FROM u WHERE true
    /// tail`: `u`'s columns are the table's.
    Insert {
        table: &'static str,
        tail: &'static str,
    },
    /// Two statements in one round trip to the connection's worker thread:
    /// which rows' `keys` (a prefix of the columns) find a match in `join`
    /// (already stored), then the [`Body::Insert`] of the rows. The keys
    /// are bound for the first, padding included (sqlx numbers a second
    /// statement's parameters from where the first's end), then the rows.
    /// Not numbered parameters read by both: SQLite looks a parameter's
    /// name up by a linear search, per parameter, per run.
    MatchThenInsert {
        keys: usize,
        join: &'static str,
        table: &'static str,
        tail: &'static str,
    },
    /// Two statements in one round trip: the [`Body::Insert`] of the rows,
    /// then `answer`, SQL that reads the rows' first `keys` columns from a
    /// `u` of its own and answers one row (a JSON array): what `RETURNING`
    /// would answer row by row, each row a wake-up of the task awaiting it
    /// (see the module's note). The rows are bound for the first statement,
    /// padding included, then the keys.
    InsertThenAnswer {
        keys: usize,
        table: &'static str,
        tail: &'static str,
        answer: &'static str,
    },
}

/// A statement's arguments: per row its index `n`, then what the caller's
/// `bind` appends (the row's values, in `cols` order).
pub(crate) type Args<'q> = SqliteArguments<'q>;

// === impl Shaped ===

impl Shaped {
    /// A statement whose `body` reads rows of `n` and `cols` from `u` (see
    /// [`Body::Sql`]).
    pub(crate) const fn new(cols: &'static [&'static str], body: &'static str) -> Shaped {
        Shaped::with(cols, Body::Sql(body))
    }

    /// Inserts the rows into `table`'s columns `cols`, then `tail` (an
    /// `ON CONFLICT` clause, or nothing).
    pub(crate) const fn insert(
        table: &'static str,
        cols: &'static [&'static str],
        tail: &'static str,
    ) -> Shaped {
        Shaped::with(cols, Body::Insert { table, tail })
    }

    /// Inserts the rows into `table` as [`Shaped::insert`] does, in the same
    /// round trip as finding which of them `join` (`table t ON …`, matching
    /// the first `keys` columns) already holds; see
    /// [`Shaped::insert_reporting_stored`].
    pub(crate) const fn insert_after_match(
        table: &'static str,
        cols: &'static [&'static str],
        keys: usize,
        join: &'static str,
        tail: &'static str,
    ) -> Shaped {
        Shaped::with(
            cols,
            Body::MatchThenInsert {
                keys,
                join,
                table,
                tail,
            },
        )
    }

    /// Inserts the rows into `table` as [`Shaped::insert`] does, then, in
    /// the same round trip, answers `answer` over their first `keys`
    /// columns; see [`Shaped::insert_answering_json`].
    pub(crate) const fn insert_then_answer(
        table: &'static str,
        cols: &'static [&'static str],
        tail: &'static str,
        keys: usize,
        answer: &'static str,
    ) -> Shaped {
        Shaped::with(
            cols,
            Body::InsertThenAnswer {
                keys,
                table,
                tail,
                answer,
            },
        )
    }

    const fn with(cols: &'static [&'static str], body: Body) -> Shaped {
        // Checked as the statics are compiled: a `;` in a piece would add a
        // statement that `statements` does not count.
        let pieces: [&str; 3] = match body {
            Body::Sql(sql) => [sql, "", ""],
            Body::Insert { table, tail } => [table, tail, ""],
            Body::MatchThenInsert {
                join, table, tail, ..
            } => [join, table, tail],
            Body::InsertThenAnswer {
                table,
                tail,
                answer,
                ..
            } => [table, tail, answer],
        };
        assert!(no_semicolon(&pieces), "one statement per piece");
        assert!(no_semicolon(cols), "one statement per piece");
        Shaped {
            cols,
            body,
            sql: [const { OnceLock::new() }; SHAPES.len()],
        }
    }

    /// Runs the statement over `rows`, chunk by chunk, in order; `bind`
    /// appends one row's values in `cols` order (a row of another width is
    /// an error, not a misaligned batch).
    pub(crate) async fn execute<'q, T>(
        &'static self,
        conn: &mut SqliteConnection,
        rows: &'q [T],
        bind: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<(), sqlx::Error> {
        for (offset, chunk) in self.chunks(rows) {
            let (sql, args) = self.bound(offset, chunk, &bind)?;
            round_trip(conn, sql, args, self.statements()).await?;
        }
        Ok(())
    }

    /// Runs a [`Shaped::insert_after_match`] statement over `rows`, chunk
    /// by chunk, in order: the indices in `rows` of the rows whose key was
    /// stored before their chunk's insert, in no particular order (a key
    /// repeated in a later chunk is found there, stored by the earlier one).
    /// `key` appends a row's key values, `bind` all its values (key first).
    pub(crate) async fn insert_reporting_stored<'q, T>(
        &'static self,
        conn: &mut SqliteConnection,
        rows: &'q [T],
        key: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
        bind: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<Vec<usize>, sqlx::Error> {
        let Body::MatchThenInsert { keys, .. } = self.body else {
            return Err(sqlx::Error::Protocol(
                "not a match-then-insert statement".into(),
            ));
        };
        let mut out = Vec::new();
        for (offset, chunk) in self.chunks(rows) {
            let (sql, shape) = self.sql_holding(chunk.len());
            let mut args = Args::default();
            args.reserve(shape * (keys + 1) + chunk.len() * (self.cols.len() + 1), 0);
            // The keys, padded to the shape (the insert's values are
            // numbered after all of them), then the rows.
            self.add_rows(&mut args, offset, chunk, keys, &key)?;
            for _ in 0..(shape - chunk.len()) * (keys + 1) {
                args.add(Option::<i64>::None).map_err(sqlx::Error::Encode)?;
            }
            self.add_rows(&mut args, offset, chunk, self.cols.len(), &bind)?;
            // Not `fetch_one`: it would stop the worker after the first
            // statement's row, before the insert.
            let lists = round_trip(conn, sql, args, self.statements()).await?;
            let lists: Vec<Option<String>> = lists
                .iter()
                .map(|row| row.try_get(0))
                .collect::<Result<_, _>>()?;
            for n in lists.iter().flatten().flat_map(|l| l.split(',')) {
                out.push(row_index(n, rows.len())?);
            }
        }
        Ok(out)
    }

    /// Runs a [`Shaped::insert_then_answer`] statement over `rows`, chunk by
    /// chunk, in order, and returns the elements of all chunks' answers.
    /// `bind` appends a row's values, `key` its first `keys` values.
    pub(crate) async fn insert_answering_json<'q, T, O: DeserializeOwned>(
        &'static self,
        conn: &mut SqliteConnection,
        rows: &'q [T],
        bind: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
        key: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<Vec<O>, sqlx::Error> {
        let Body::InsertThenAnswer { keys, .. } = self.body else {
            return Err(sqlx::Error::Protocol(
                "not an insert-then-answer statement".into(),
            ));
        };
        let mut out = Vec::new();
        for (offset, chunk) in self.chunks(rows) {
            let (sql, shape) = self.sql_holding(chunk.len());
            let width = self.cols.len() + 1;
            let mut args = Args::default();
            args.reserve(shape * width + chunk.len() * (keys + 1), 0);
            // The rows, padded to the shape (the answer's values are
            // numbered after all of them), then their keys.
            self.add_rows(&mut args, offset, chunk, self.cols.len(), &bind)?;
            for _ in 0..(shape - chunk.len()) * width {
                args.add(Option::<i64>::None).map_err(sqlx::Error::Encode)?;
            }
            self.add_rows(&mut args, offset, chunk, keys, &key)?;
            // The insert answers no row; the answer, one.
            let answers = round_trip(conn, sql, args, self.statements()).await?;
            let answers: Vec<String> = answers
                .iter()
                .map(|row| row.try_get(0))
                .collect::<Result<_, _>>()?;
            let [json] = answers.as_slice() else {
                return Err(sqlx::Error::Protocol(format!(
                    "{} answers to one insert-then-answer",
                    answers.len()
                )));
            };
            let items: Vec<O> =
                serde_json::from_str(json).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            out.extend(items);
        }
        Ok(out)
    }

    /// Runs a query that answers one JSON array per statement
    /// (`json_group_array(…)`) over `rows` and returns the elements of all
    /// chunks.
    pub(crate) async fn fetch_json<'q, T, O: DeserializeOwned>(
        &'static self,
        conn: &mut SqliteConnection,
        rows: &'q [T],
        bind: impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<Vec<O>, sqlx::Error> {
        let mut out = Vec::new();
        for (offset, chunk) in self.chunks(rows) {
            let (sql, args) = self.bound(offset, chunk, &bind)?;
            let json: String = sqlx::query_scalar_with(sql, args)
                .fetch_one(&mut *conn)
                .await?;
            let items: Vec<O> =
                serde_json::from_str(&json).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            out.extend(items);
        }
        Ok(out)
    }

    /// How many statements a run holds: the ends [`round_trip`] waits for.
    /// Exact by construction: [`Shaped::render`] joins this many, and the
    /// texts it joins hold no `;` of their own (it checks).
    fn statements(&self) -> usize {
        match self.body {
            Body::Sql(_) | Body::Insert { .. } => 1,
            Body::MatchThenInsert { .. } | Body::InsertThenAnswer { .. } => 2,
        }
    }

    /// Cuts `rows` into chunks of the largest shape whose parameters SQLite
    /// accepts, then the remainder, each with the index of its first row;
    /// nothing for no rows.
    fn chunks<'r, T>(&self, rows: &'r [T]) -> impl Iterator<Item = (usize, &'r [T])> {
        // A row's parameters in all of the round trip's statements.
        let width = match self.body {
            Body::MatchThenInsert { keys, .. } | Body::InsertThenAnswer { keys, .. } => {
                self.cols.len() + 1 + keys + 1
            }
            Body::Sql(_) | Body::Insert { .. } => self.cols.len() + 1,
        };
        let max = SHAPES
            .iter()
            .rev()
            .find(|&&n| n * width <= MAX_PARAMS)
            .copied()
            .unwrap_or(1);
        rows.chunks(max).enumerate().map(move |(k, c)| (k * max, c))
    }

    /// The SQL text for `chunk` (the smallest shape that holds it) and its
    /// values, numbered from `offset`, padding left unbound.
    fn bound<'q, T>(
        &'static self,
        offset: usize,
        chunk: &'q [T],
        bind: &impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<(&'static str, Args<'q>), sqlx::Error> {
        let mut args = Args::default();
        args.reserve(chunk.len() * (self.cols.len() + 1), 0);
        self.add_rows(&mut args, offset, chunk, self.cols.len(), bind)?;
        Ok((self.sql_holding(chunk.len()).0, args))
    }

    /// The SQL text of the smallest shape that holds `rows` rows (the
    /// largest if none does), and that shape's row count.
    fn sql_holding(&'static self, rows: usize) -> (&'static str, usize) {
        let shape = SHAPES
            .iter()
            .position(|&n| n >= rows)
            .unwrap_or(SHAPES.len() - 1);
        let sql = self.sql[shape].get_or_init(|| self.render(SHAPES[shape]));
        (sql.as_str(), SHAPES[shape])
    }

    /// Appends per row its index `n` (from `offset`) and what `bind` adds,
    /// which must be `width` values (else an error, not a misaligned batch).
    fn add_rows<'q, T>(
        &self,
        args: &mut Args<'q>,
        offset: usize,
        chunk: &'q [T],
        width: usize,
        bind: &impl Fn(&mut Args<'q>, &'q T) -> Result<(), BoxDynError>,
    ) -> Result<(), sqlx::Error> {
        for (i, row) in chunk.iter().enumerate() {
            let before = args.len();
            args.add(i64::try_from(offset + i).unwrap_or(i64::MAX))
                .map_err(sqlx::Error::Encode)?;
            bind(args, row).map_err(sqlx::Error::Encode)?;
            if args.len() != before + width + 1 {
                return Err(sqlx::Error::Encode(
                    format!(
                        "a row of {} values for a statement of {} columns",
                        args.len() - before - 1,
                        width
                    )
                    .into(),
                ));
            }
        }
        Ok(())
    }

    /// `WITH v(n, cols) AS (VALUES (?,…),…), u AS (…) body` for `rows` rows.
    fn render(&self, rows: usize) -> String {
        let cols = self.cols.join(", ");
        if let Body::MatchThenInsert {
            keys,
            join,
            table,
            tail,
        } = self.body
        {
            let key_cols = self.cols[..keys.min(self.cols.len())].join(", ");
            return format!(
                "{}SELECT group_concat(u.n) FROM u CROSS JOIN {join}; {}{}",
                Self::with_clause(&key_cols, rows, keys + 1),
                Self::with_clause(&cols, rows, self.cols.len() + 1),
                Self::insert_body(table, &cols, tail),
            );
        }
        let mut sql = Self::with_clause(&cols, rows, self.cols.len() + 1);
        match self.body {
            Body::Sql(body) => sql.push_str(body),
            Body::Insert { table, tail } => sql.push_str(&Self::insert_body(table, &cols, tail)),
            Body::InsertThenAnswer {
                keys,
                table,
                tail,
                answer,
            } => {
                let key_cols = self.cols[..keys.min(self.cols.len())].join(", ");
                sql.push_str(&Self::insert_body(table, &cols, tail));
                sql.push_str("; ");
                sql.push_str(&Self::with_clause(&key_cols, rows, keys + 1));
                sql.push_str(answer);
            }
            Body::MatchThenInsert { .. } => {}
        }
        sql
    }

    /// The `INSERT` of [`Body::Insert`], [`Body::MatchThenInsert`] and
    /// [`Body::InsertThenAnswer`]
    /// (`OR FAIL`: see the module's note on statement journals).
    fn insert_body(table: &str, cols: &str, tail: &str) -> String {
        format!("INSERT OR FAIL INTO {table} ({cols}) SELECT {cols} FROM u WHERE true {tail}")
    }

    /// `WITH v(n, cols) AS (VALUES (?,…),…), u AS (SELECT * FROM v WHERE n
    /// IS NOT NULL) ` for `rows` rows of `width` parameters.
    fn with_clause(cols: &str, rows: usize, width: usize) -> String {
        let row = format!("(?{})", ",?".repeat(width - 1));
        let mut sql = String::with_capacity(256 + rows * (row.len() + 1));
        sql.push_str("WITH v(n, ");
        sql.push_str(cols);
        sql.push_str(") AS (VALUES ");
        for i in 0..rows {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&row);
        }
        sql.push_str("), u AS (SELECT * FROM v WHERE n IS NOT NULL) ");
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

/// Whether no text of `pieces` holds a `;` (for [`Shaped::with`]).
const fn no_semicolon(pieces: &[&str]) -> bool {
    let mut k = 0;
    while k < pieces.len() {
        let bytes = pieces[k].as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b';' {
                return false;
            }
            i += 1;
        }
        k += 1;
    }
    true
}

/// Runs `sql` (`statements` statements) with `args` on `conn` and gives
/// the rows its statements answered, in order.
///
/// It returns at the last statement's end, not at the channel's close
/// that sqlx's worker thread sends after it (once it has reset the
/// statement): the awaiting task would sleep in between and be woken once
/// more each round trip (measured: BENCHMARKS.md, "A round trip's second
/// wake-up"). The worker takes its next command only after this one, so
/// nothing runs out of order. A statement past `statements` would not run
/// (the worker stops at a closed channel): [`Shaped::statements`] is exact
/// by construction.
async fn round_trip<'q>(
    conn: &mut SqliteConnection,
    sql: &'q str,
    args: Args<'q>,
    statements: usize,
) -> Result<Vec<SqliteRow>, sqlx::Error> {
    let mut answers = conn.fetch_many(sqlx::query_with(sql, args));
    let mut rows = Vec::new();
    let mut ended = 0;
    while ended < statements {
        match answers.try_next().await? {
            Some(Either::Left(_)) => ended += 1,
            Some(Either::Right(row)) => rows.push(row),
            None => break,
        }
    }
    Ok(rows)
}

/// A row index the database gave back, checked against the rows bound.
fn row_index(text: &str, rows: usize) -> Result<usize, sqlx::Error> {
    match text.parse::<usize>() {
        Ok(n) if n < rows => Ok(n),
        _ => Err(sqlx::Error::Decode(
            format!("row index {text:?} outside the {rows} rows bound").into(),
        )),
    }
}

#[cfg(test)]
impl Shaped {
    /// The SQL text for `rows` rows.
    pub(crate) fn sql_for(&self, rows: usize) -> String {
        self.render(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static PAIRS: Shaped = Shaped::new(
        &["a", "b"],
        "SELECT group_concat(u.n) FROM u CROSS JOIN t ON t.a = u.a",
    );
    static WIDE: Shaped = Shaped::new(&["c"; 9000], "SELECT 1");

    fn plan(stmt: &Shaped, rows: usize) -> Vec<(usize, usize)> {
        let data = vec![0u8; rows];
        stmt.chunks(&data)
            .map(|(offset, chunk)| {
                let shape = SHAPES.iter().position(|&n| n >= chunk.len()).unwrap();
                (offset, SHAPES[shape])
            })
            .collect()
    }

    #[test]
    fn chunks_fill_the_largest_shape_then_round_the_rest_up() {
        assert_eq!(plan(&PAIRS, 0), vec![]);
        assert_eq!(plan(&PAIRS, 1), vec![(0, 1)]);
        assert_eq!(plan(&PAIRS, 3), vec![(0, 4)]);
        assert_eq!(plan(&PAIRS, 5), vec![(0, 16)]);
        assert_eq!(plan(&PAIRS, 17), vec![(0, 64)]);
        assert_eq!(plan(&PAIRS, 256), vec![(0, 256)]);
        assert_eq!(plan(&PAIRS, 300), vec![(0, 256), (256, 64)]);
        assert_eq!(
            plan(&PAIRS, 1500),
            vec![
                (0, 256),
                (256, 256),
                (512, 256),
                (768, 256),
                (1024, 256),
                (1280, 256)
            ]
        );
    }

    #[test]
    fn a_wide_row_keeps_under_sqlites_parameter_limit() {
        // 9001 parameters a row: 4 rows would pass 32766.
        assert_eq!(plan(&WIDE, 5), vec![(0, 1), (1, 1), (2, 1), (3, 1), (4, 1)]);
        // 127 + 2 parameters a row over two statements: 256 rows would
        // pass 32766, 64 do not (the insert's 127 alone let 256 through).
        static TWO: Shaped = Shaped::insert_then_answer("t", &["c"; 126], "", 1, "SELECT 1");
        assert_eq!(plan(&TWO, 300)[..2], [(0, 64), (64, 64)]);
    }

    #[test]
    fn renders_values_rows_and_the_body() {
        assert_eq!(
            PAIRS.sql_for(2),
            "WITH v(n, a, b) AS (VALUES (?,?,?),(?,?,?)), \
             u AS (SELECT * FROM v WHERE n IS NOT NULL) \
             SELECT group_concat(u.n) FROM u CROSS JOIN t ON t.a = u.a"
        );
        // A body's own common table expressions follow `u`'s.
        static MORE: Shaped = Shaped::new(
            &["a"],
            ", w AS MATERIALIZED (SELECT max(a) AS a FROM u) SELECT a FROM w",
        );
        assert_eq!(
            MORE.sql_for(1),
            "WITH v(n, a) AS (VALUES (?,?)), \
             u AS (SELECT * FROM v WHERE n IS NOT NULL) \
             , w AS MATERIALIZED (SELECT max(a) AS a FROM u) SELECT a FROM w"
        );
        static INS: Shaped = Shaped::insert("t", &["a", "b"], "ON CONFLICT (a) DO NOTHING");
        assert!(
            INS.sql_for(1).ends_with(
                "INSERT OR FAIL INTO t (a, b) SELECT a, b FROM u WHERE true ON CONFLICT (a) DO NOTHING"
            ),
            "{}",
            INS.sql_for(1)
        );
    }

    static BOTH: Shaped = Shaped::insert_after_match(
        "t",
        &["a", "b"],
        1,
        "t ON t.a = u.a",
        "ON CONFLICT (a) DO NOTHING",
    );

    #[test]
    fn match_then_insert_binds_the_keys_then_the_rows() {
        assert_eq!(
            BOTH.sql_for(2),
            "WITH v(n, a) AS (VALUES (?,?),(?,?)), \
             u AS (SELECT * FROM v WHERE n IS NOT NULL) \
             SELECT group_concat(u.n) FROM u CROSS JOIN t ON t.a = u.a; \
             WITH v(n, a, b) AS (VALUES (?,?,?),(?,?,?)), \
             u AS (SELECT * FROM v WHERE n IS NOT NULL) \
             INSERT OR FAIL INTO t (a, b) SELECT a, b FROM u WHERE true ON CONFLICT (a) DO NOTHING"
        );
    }

    static ANSWERING: Shaped = Shaped::insert_then_answer(
        "t",
        &["a", "b"],
        "ON CONFLICT (a) DO NOTHING",
        1,
        "SELECT json_group_array(json_array(u.n, t.b)) FROM u CROSS JOIN t ON t.a = u.a",
    );

    #[test]
    fn insert_then_answer_binds_the_rows_then_the_keys() {
        assert_eq!(
            ANSWERING.sql_for(2),
            "WITH v(n, a, b) AS (VALUES (?,?,?),(?,?,?)), \
             u AS (SELECT * FROM v WHERE n IS NOT NULL) \
             INSERT OR FAIL INTO t (a, b) SELECT a, b FROM u WHERE true ON CONFLICT (a) DO NOTHING; \
             WITH v(n, a) AS (VALUES (?,?),(?,?)), \
             u AS (SELECT * FROM v WHERE n IS NOT NULL) \
             SELECT json_group_array(json_array(u.n, t.b)) FROM u CROSS JOIN t ON t.a = u.a"
        );
    }

    /// A database in memory with the table `t (a, b)` the statements here use.
    async fn table_t() -> SqliteConnection {
        use sqlx::Connection;
        let mut conn = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::raw_sql("CREATE TABLE t (a TEXT PRIMARY KEY, b TEXT NOT NULL)")
            .execute(&mut conn)
            .await
            .unwrap();
        conn
    }

    /// Three rows in the shape of four (the insert's padding bound, so the
    /// keys land on the answer's parameters), one already stored: one
    /// answer, a row for each, the stored row's value kept.
    #[tokio::test]
    async fn insert_then_answer_answers_every_row_once() {
        let mut conn = table_t().await;
        sqlx::raw_sql("INSERT INTO t VALUES ('y', 'old')")
            .execute(&mut conn)
            .await
            .unwrap();
        let rows = [("x", "1"), ("y", "2"), ("z", "3")];
        let mut got: Vec<(usize, String)> = ANSWERING
            .insert_answering_json(
                &mut conn,
                &rows,
                |a, r| {
                    a.add(r.0)?;
                    a.add(r.1)
                },
                |a, r| a.add(r.0),
            )
            .await
            .unwrap();
        got.sort();
        let got: Vec<(usize, &str)> = got.iter().map(|(n, b)| (*n, b.as_str())).collect();
        assert_eq!(got, [(0, "1"), (1, "old"), (2, "3")]);
        let err = PAIRS
            .insert_answering_json::<_, (usize, String)>(
                &mut conn,
                &rows,
                |_, _| Ok(()),
                |_, _| Ok(()),
            )
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("not an insert-then-answer"),
            "{err}"
        );
    }

    /// A round trip returns at its last statement's end: the next command
    /// sees what it wrote, and an error in either statement is the round
    /// trip's.
    #[tokio::test]
    async fn a_round_trip_ends_at_its_last_statement() {
        let mut conn = table_t().await;
        let key = |a: &mut Args<'_>, r: &(String, Option<String>)| a.add(r.0.clone());
        let bind = |a: &mut Args<'_>, r: &(String, Option<String>)| {
            a.add(r.0.clone())?;
            a.add(r.1.clone())
        };
        for k in 0..50 {
            let rows: Vec<(String, Option<String>)> = (0..3)
                .map(|i| (format!("{}", k * 2 + i), Some("v".to_string())))
                .collect();
            let mut stored = BOTH
                .insert_reporting_stored(&mut conn, &rows, key, bind)
                .await
                .unwrap();
            stored.sort_unstable();
            // Each round's first row is the last round's last.
            assert_eq!(stored, if k == 0 { vec![] } else { vec![0] });
            let count: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
                .fetch_one(&mut conn)
                .await
                .unwrap();
            assert_eq!(count, k * 2 + 3);
        }
        // The insert, the second statement, fails: so does the round trip.
        let bad = [("x".to_string(), None)];
        let err = BOTH
            .insert_reporting_stored(&mut conn, &bad, key, bind)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("NOT NULL"), "{err}");
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM t WHERE a = 'x'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(count, 0);
    }

    #[test]
    fn pieces_are_checked_for_a_second_statement() {
        assert!(no_semicolon(&["SELECT 1 FROM u", "t"]));
        assert!(!no_semicolon(&["t", "SELECT 1; SELECT 2"]));
        assert_eq!(
            (
                PAIRS.statements(),
                BOTH.statements(),
                ANSWERING.statements()
            ),
            (1, 2, 2)
        );
    }

    #[test]
    fn a_row_of_the_wrong_width_is_an_error() {
        let rows = [1i64, 2];
        let err = PAIRS
            .bound(0, &rows, &|a: &mut Args<'_>, r: &i64| a.add(*r))
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("a row of 1 values for a statement of 2 columns"),
            "{err}"
        );
        let (sql, args) = PAIRS
            .bound(7, &rows, &|a: &mut Args<'_>, r: &i64| {
                a.add(*r)?;
                a.add(*r)
            })
            .unwrap();
        assert_eq!((sql.matches("(?,?,?)").count(), args.len()), (4, 6));
    }

    #[test]
    fn row_indices_are_checked() {
        assert_eq!(row_index("3", 4).unwrap(), 3);
        assert!(row_index("4", 4).is_err());
        assert!(row_index("-1", 4).is_err());
        assert!(row_index("x", 4).is_err());
    }
}
