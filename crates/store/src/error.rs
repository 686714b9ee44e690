//! The store's error type: a kind, the (redacted) database URL when it
//! matters, and the underlying cause.

use std::fmt;
use std::time::Duration;

/// What went wrong, broadly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The database URL could not be understood.
    InvalidUrl,
    /// The database could not be reached or opened.
    Connect,
    /// Applying the schema migrations failed.
    Migrate,
    /// A query or write failed.
    Query,
    /// A file (JSONL sink) could not be written.
    Io,
}

/// An error from the store.
#[derive(Debug)]
pub struct StoreError {
    kind: StoreErrorKind,
    url: Option<String>,
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

/// The database did not answer within the writer's deadline.
#[derive(Debug)]
struct NoAnswer(Duration);

impl fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no answer from the database within {} s: the connection is closed as lost",
            self.0.as_secs()
        )
    }
}

impl std::error::Error for NoAnswer {}

// === impl StoreErrorKind ===

impl StoreErrorKind {
    /// A short name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreErrorKind::InvalidUrl => "invalid database url",
            StoreErrorKind::Connect => "cannot open database",
            StoreErrorKind::Migrate => "cannot migrate database",
            StoreErrorKind::Query => "database query failed",
            StoreErrorKind::Io => "i/o error",
        }
    }
}

// === impl StoreError ===

impl StoreError {
    pub(crate) fn new(
        kind: StoreErrorKind,
        url: Option<&str>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        StoreError {
            kind,
            url: url.map(redact_url),
            source: source.into(),
        }
    }

    pub(crate) fn query(source: sqlx::Error) -> Self {
        StoreError::new(StoreErrorKind::Query, None, source)
    }

    /// The kind of failure.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// The database URL involved (password redacted), when known.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The database answered and refused the data itself (a constraint, an
    /// invalid value, a value beyond one of its limits): retrying the same
    /// write cannot help, writing its events one by one finds the one to
    /// drop. Anything else is the database's own trouble, however lasting
    /// (connection loss, deadlocks, lack of resources, a read-only
    /// database after a failover, revoked privileges, a missing table):
    /// the events are kept and retried, never dropped for it.
    pub fn is_rejected(&self) -> bool {
        let Some(sqlx::Error::Database(db)) = self.source.downcast_ref::<sqlx::Error>() else {
            return false;
        };
        match db.code() {
            Some(code) if code.len() == 5 && code.chars().all(|c| c.is_ascii_alphanumeric()) => {
                pg_refuses_data(&code)
            }
            Some(code) => code.parse::<i64>().is_ok_and(sqlite_refuses_data),
            None => false,
        }
    }

    /// The write took too long: PostgreSQL stopped one of its statements
    /// at the writer's `statement_timeout` (SQLSTATE 57014, also a cancel
    /// request), or no answer came within the writer's deadline
    /// ([`StoreError::no_answer`]). Not the data's fault, but the same
    /// batch may take as long again, so the recorder retries its events in
    /// smaller batches.
    pub(crate) fn is_too_slow(&self) -> bool {
        if self.source.is::<NoAnswer>() {
            return true;
        }
        matches!(
            self.source.downcast_ref::<sqlx::Error>(),
            Some(sqlx::Error::Database(db)) if db.code().as_deref() == Some("57014")
        )
    }

    /// No answer from the database within `waited`: its connection is
    /// taken for lost (half-open) and closed (`pg_writer`).
    pub(crate) fn no_answer(waited: Duration) -> Self {
        StoreError::new(StoreErrorKind::Query, None, NoAnswer(waited))
    }

    /// Whether retrying later can help (the database may come back).
    pub fn is_retryable(&self) -> bool {
        matches!(self.kind, StoreErrorKind::Connect | StoreErrorKind::Query)
    }
}

/// Whether a PostgreSQL SQLSTATE says the data was refused: classes 22
/// (data exception, e.g. 22021 for a NUL in text), 23 (integrity
/// constraint violation) and 54 (program limit exceeded, e.g. 54000 for a
/// call id too long for an index row). Not 25006 (read-only transaction:
/// a standby, `default_transaction_read_only`) nor 42501 (insufficient
/// privilege): those refuse every write until someone fixes the database.
fn pg_refuses_data(sqlstate: &str) -> bool {
    matches!(sqlstate.get(..2), Some("22" | "23" | "54"))
}

/// Whether a SQLite (extended) result code says the data was refused:
/// TOOBIG (18), CONSTRAINT (19: NOT NULL, CHECK, UNIQUE, a trigger's
/// `RAISE`), MISMATCH (20). Not READONLY (8: the file or its file system
/// made read-only, it may become writable again), BUSY, FULL, IOERR, PERM
/// and the others: the database's trouble, not the events'.
fn sqlite_refuses_data(code: i64) -> bool {
    matches!(code & 0xff, 18..=20)
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.url {
            Some(url) => write!(f, "{} {url}: {}", self.kind.as_str(), self.source),
            None => write!(f, "{}: {}", self.kind.as_str(), self.source),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// Replaces the password of a `scheme://user:password@host/...` URL, and
/// the value of every query parameter named for a credential
/// (`?password=…` and `sslpassword=…`, which PostgreSQL URLs take as well
/// as the user info; `api-key=`, `…token=`, `…secret=`: the excerpts'
/// rule, [`toolwarden_core::redact::is_secret_name`]), with `***`.
///
/// The password is everything from the user's `:` to the last `@`: one
/// that was not percent-encoded (`u:pa/ss@host`, `u:p?w@host`,
/// `u:p#w@host`) ends the URL's authority early, so the URL does not
/// parse and its error names it; and a URL without its scheme
/// (`u:pw@collector:4318`) is named with the fix. Both are hidden as well.
/// The cost: an `@` in a path or query after a port (`h:5432/db?x=a@b`)
/// hides what stands before it too.
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = url.split_at(scheme_len(url));
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    let rest = match password(rest) {
        Some((user, host)) => {
            out.push_str(user);
            out.push_str(":***");
            host
        }
        None => rest,
    };
    if scheme.is_empty() {
        out.push_str(rest);
        return out;
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    out.push_str(&rest[..authority_end]);
    let after = &rest[authority_end..];
    let (before_fragment, fragment) = after.split_at(after.find('#').unwrap_or(after.len()));
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            for (i, pair) in query.split('&').enumerate() {
                if i > 0 {
                    out.push('&');
                }
                match pair.split_once('=') {
                    Some((name, _)) if toolwarden_core::redact::is_secret_name(name) => {
                        out.push_str(name);
                        out.push_str("=***");
                    }
                    _ => out.push_str(pair),
                }
            }
        }
        None => out.push_str(before_fragment),
    }
    out.push_str(fragment);
    out
}

/// The length of `url`'s `scheme://`, or 0 when it has none. What comes
/// before the first `://` is a scheme only when it is one by RFC 3986
/// (a letter, then letters, digits, `+`, `-`, `.`): in `u:pa://ss@host`
/// the `://` is the password's.
fn scheme_len(url: &str) -> usize {
    let Some(end) = url.find("://") else {
        return 0;
    };
    let mut chars = url[..end].chars();
    let is_scheme = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if is_scheme { end + 3 } else { 0 }
}

/// `user:password@host…` (after the scheme): the user, and the rest from
/// the last `@` on. `None` when no `user:` comes before an `@`, or the
/// "user" is a path (holds `/`, `?` or `#`: `/var/a:b@c.db`).
fn password(rest: &str) -> Option<(&str, &str)> {
    let at = rest.rfind('@')?;
    let (user, _) = rest[..at].split_once(':')?;
    (!user.contains(['/', '?', '#'])).then_some((user, &rest[at..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_password_only() {
        assert_eq!(
            redact_url("postgres://bob:s3cr@t@db:5432/x?sslmode=disable"),
            "postgres://bob:***@db:5432/x?sslmode=disable"
        );
        assert_eq!(redact_url("postgres://bob@db/x"), "postgres://bob@db/x");
        assert_eq!(redact_url("sqlite://a/b.db"), "sqlite://a/b.db");
        assert_eq!(redact_url("plain.db"), "plain.db");
    }

    /// PostgreSQL URLs take the password as a query parameter too
    /// (`sqlx`'s `PgConnectOptions` reads `password` and `sslpassword`):
    /// it was shown as it is on the banner and in every store error.
    #[test]
    fn redacts_a_password_in_the_query() {
        assert_eq!(
            redact_url("postgres://bob@db:5432/x?password=s3cr&sslmode=disable"),
            "postgres://bob@db:5432/x?password=***&sslmode=disable"
        );
        assert_eq!(
            redact_url("postgres://db/x?sslmode=require&sslpassword=p&PASSWORD=q#f"),
            "postgres://db/x?sslmode=require&sslpassword=***&PASSWORD=***#f"
        );
        assert_eq!(
            redact_url("https://u:p@collector/otlp?api-key=k&x=1"),
            "https://u:***@collector/otlp?api-key=***&x=1"
        );
        assert_eq!(
            redact_url("postgres://db/x?sslmode=disable&monkey"),
            "postgres://db/x?sslmode=disable&monkey"
        );
        // A presigned URL's SigV4 signature and credential.
        assert_eq!(
            redact_url(
                "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2Fx&X-Amz-Signature=ab12"
            ),
            "https://b.s3.amazonaws.com/k?X-Amz-Credential=***&X-Amz-Signature=***"
        );
        let e = StoreError::new(
            StoreErrorKind::Connect,
            Some("postgres://u@127.0.0.1:1/db?password=pw"),
            "connection refused",
        );
        assert!(!e.to_string().contains("pw"), "{e}");
    }

    /// A password that was not percent-encoded ends the authority
    /// early (`/`, `?`, `#` in it): the URL does not parse, and the error
    /// that names it showed the password whole. Without a scheme too.
    #[test]
    fn redacts_a_password_that_was_not_encoded() {
        for (url, shown) in [
            (
                "postgres://u:pa/ss@127.0.0.1:1/db",
                "postgres://u:***@127.0.0.1:1/db",
            ),
            ("postgres://u:p?w@h/db", "postgres://u:***@h/db"),
            ("postgres://u:p#w@h/db", "postgres://u:***@h/db"),
            ("postgres://u:a@b/c@h/db", "postgres://u:***@h/db"),
            (
                "postgres://u:a/b@h/db?password=x",
                "postgres://u:***@h/db?password=***",
            ),
            ("u:pw@collector:4318", "u:***@collector:4318"),
            ("a:P://W@host", "a:***@host"),
            ("a:b://c://d@host/x", "a:***@host/x"),
            ("postgres://u:P://W@host", "postgres://u:***@host"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
        // Paths are not user info.
        for url in ["/var/a:b@c.db", "sqlite:///var/a:b@c.db", "data/t.db"] {
            assert_eq!(redact_url(url), url);
        }
    }

    proptest::proptest! {
        /// Whatever characters a password holds, encoded or not, and
        /// whatever follows the host, it is not shown.
        #[test]
        fn a_password_is_never_shown(
            scheme in proptest::sample::select(vec!["postgres://", "postgresql://", "https://", ""]),
            user in "[a-z]{1,8}",
            password in "[A-Z0-9:/?#@&=%+!$]{0,12}",
            tail in "(:[0-9]{1,5})?(/[a-z@]{0,6})?(\\?[a-z]{1,4}=[a-z@]{0,4})?",
        ) {
            let password = format!("P{password}W");
            let url = format!("{scheme}{user}:{password}@host{tail}");
            let shown = redact_url(&url);
            proptest::prop_assert!(!shown.contains(&password), "{url} -> {shown}");
        }
    }

    #[test]
    fn display_names_url_and_cause() {
        let e = StoreError::new(
            StoreErrorKind::Connect,
            Some("postgresql://u:pw@127.0.0.1:1/db"),
            "connection refused",
        );
        assert_eq!(
            e.to_string(),
            "cannot open database postgresql://u:***@127.0.0.1:1/db: connection refused"
        );
    }

    /// A database error with only a code, as either backend reports it.
    #[derive(Debug)]
    struct Coded(&'static str);

    impl fmt::Display for Coded {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "error {}", self.0)
        }
    }

    impl std::error::Error for Coded {}

    impl sqlx::error::DatabaseError for Coded {
        fn message(&self) -> &str {
            self.0
        }
        fn code(&self) -> Option<std::borrow::Cow<'_, str>> {
            Some(self.0.into())
        }
        fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
            self
        }
        fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
            self
        }
        fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
            self
        }
        fn kind(&self) -> sqlx::error::ErrorKind {
            sqlx::error::ErrorKind::Other
        }
    }

    fn rejected(code: &'static str) -> bool {
        StoreError::query(sqlx::Error::Database(Box::new(Coded(code)))).is_rejected()
    }

    #[test]
    fn only_data_errors_refuse_the_data() {
        // PostgreSQL: NUL in text, bad value, unique/check violation, an
        // index row too big.
        for code in ["22021", "22P02", "23505", "23514", "54000"] {
            assert!(rejected(code), "{code}");
        }
        // Read-only (standby, default_transaction_read_only), revoked
        // privileges, missing table, connection, deadlock, disk full,
        // shutdown, internal error.
        for code in [
            "25006", "42501", "42P01", "08006", "40P01", "53100", "57P01", "XX000",
        ] {
            assert!(!rejected(code), "{code}");
        }
        // SQLite: UNIQUE, NOT NULL, trigger RAISE, TOOBIG, MISMATCH.
        for code in ["2067", "1299", "1811", "18", "20"] {
            assert!(rejected(code), "{code}");
        }
        // READONLY (and READONLY_DBMOVED), BUSY, NOMEM, PERM, IOERR, FULL,
        // CORRUPT, generic ERROR.
        for code in ["8", "1032", "5", "7", "3", "10", "13", "11", "1"] {
            assert!(!rejected(code), "{code}");
        }
        assert!(!StoreError::query(sqlx::Error::PoolTimedOut).is_rejected());
    }

    #[test]
    fn a_write_too_slow_is_told_apart() {
        let coded = |code| StoreError::query(sqlx::Error::Database(Box::new(Coded(code))));
        assert!(coded("57014").is_too_slow());
        assert!(!coded("57014").is_rejected());
        for code in ["55P03", "57P01", "08006", "23505", "5"] {
            assert!(!coded(code).is_too_slow(), "{code}");
        }
        assert!(!StoreError::query(sqlx::Error::PoolTimedOut).is_too_slow());
        let lost = StoreError::no_answer(Duration::from_secs(35));
        assert!(lost.is_too_slow() && lost.is_retryable() && !lost.is_rejected());
        assert_eq!(
            lost.to_string(),
            "database query failed: no answer from the database within 35 s: \
             the connection is closed as lost"
        );
    }
}
