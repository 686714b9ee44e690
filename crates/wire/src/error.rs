//! Errors reading a body: always say where.

use std::fmt;

/// What kind of input problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireErrorKind {
    /// Not JSON (or not UTF-8).
    InvalidJson,
    /// JSON, but not of the dialect's shape (wrong type for a known field).
    Shape,
    /// The input ends in the middle of a value.
    Truncated,
    /// Larger than the configured limit.
    TooLarge,
}

/// A body this crate cannot read, with the position when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    kind: WireErrorKind,
    message: String,
    line: Option<usize>,
    column: Option<usize>,
}

impl WireError {
    /// A new error.
    pub fn new(kind: WireErrorKind, message: impl Into<String>) -> Self {
        WireError {
            kind,
            message: message.into(),
            line: None,
            column: None,
        }
    }

    /// What kind of problem.
    pub fn kind(&self) -> WireErrorKind {
        self.kind
    }

    /// Line (1-based) of the problem, when known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// Column (1-based) of the problem, when known.
    pub fn column(&self) -> Option<usize> {
        self.column
    }
}

impl From<serde_json::Error> for WireError {
    fn from(e: serde_json::Error) -> Self {
        use serde_json::error::Category;
        let kind = match e.classify() {
            Category::Eof => WireErrorKind::Truncated,
            Category::Data => WireErrorKind::Shape,
            Category::Syntax | Category::Io => WireErrorKind::InvalidJson,
        };
        let mut message = e.to_string();
        // serde_json appends " at line L column C"; we report it separately.
        if let Some(i) = message.rfind(" at line ") {
            message.truncate(i);
        }
        WireError {
            kind,
            message,
            line: (e.line() > 0).then_some(e.line()),
            column: (e.line() > 0).then_some(e.column()),
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            WireErrorKind::InvalidJson => "invalid JSON",
            WireErrorKind::Shape => "unexpected shape",
            WireErrorKind::Truncated => "truncated input",
            WireErrorKind::TooLarge => "input too large",
        };
        write!(f, "{what}: {}", self.message)?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, " (line {l}, column {c})")?;
        }
        Ok(())
    }
}

impl std::error::Error for WireError {}
