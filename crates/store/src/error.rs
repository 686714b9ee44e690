//! The store's error type: a kind, the (redacted) database URL when it
//! matters, and the underlying cause.

use std::fmt;

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
    /// invalid value such as a NUL byte in PostgreSQL text): retrying the
    /// same write cannot help. Connection loss, timeouts, deadlocks,
    /// serialization failures, lack of resources and shutdowns are not.
    pub fn is_rejected(&self) -> bool {
        let Some(sqlx::Error::Database(db)) = self.source.downcast_ref::<sqlx::Error>() else {
            return false;
        };
        match db.code() {
            // SQLSTATE classes 08 (connection), 40 (rollback: deadlock,
            // serialization), 53 (resources), 55 (lock not available),
            // 57 (operator intervention: shutdown), 58 (system error).
            Some(code) if code.len() == 5 && code.chars().all(|c| c.is_ascii_alphanumeric()) => {
                !matches!(&code[..2], "08" | "40" | "53" | "55" | "57" | "58")
            }
            // SQLite's numeric codes: BUSY (5), LOCKED (6), READONLY (8:
            // the file or its file system made read-only, it may become
            // writable again), IOERR (10), FULL (13), CANTOPEN (14),
            // PROTOCOL (15), incl. extended codes.
            Some(code) => match code.parse::<i64>() {
                Ok(n) => !matches!(n & 0xff, 5 | 6 | 8 | 10 | 13 | 14 | 15),
                Err(_) => false,
            },
            None => false,
        }
    }

    /// Whether retrying later can help (the database may come back).
    pub fn is_retryable(&self) -> bool {
        matches!(self.kind, StoreErrorKind::Connect | StoreErrorKind::Query)
    }
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

/// Replaces the password of a `scheme://user:password@host/...` URL with `***`.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    let userinfo = &authority[..at];
    let Some(colon) = userinfo.find(':') else {
        return url.to_owned();
    };
    format!(
        "{}{}:***{}",
        &url[..scheme_end + 3],
        &userinfo[..colon],
        &rest[at..]
    )
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
}
