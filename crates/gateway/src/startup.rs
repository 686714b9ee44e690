//! [`GatewayError`]: why a gateway could not start. A leaf, so the parts
//! that can fail at start (TLS, workers, the store) name it without
//! depending on the server.

use std::fmt;

/// What kind of start-up failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GatewayErrorKind {
    /// The database could not be opened.
    Store,
    /// The listen address could not be bound.
    Bind,
    /// The TLS client could not be set up.
    Tls,
    /// A setting is unusable (e.g. a detector pattern).
    Config,
    /// A worker thread or its runtime could not be started.
    Worker,
}

/// The gateway could not start.
#[derive(Debug)]
pub struct GatewayError {
    pub(crate) kind: GatewayErrorKind,
    pub(crate) message: String,
}

// === impl GatewayError ===

impl GatewayError {
    pub(crate) fn tls(message: String) -> GatewayError {
        GatewayError {
            kind: GatewayErrorKind::Tls,
            message: format!("cannot set up TLS for upstreams: {message}"),
        }
    }

    pub(crate) fn worker(message: String) -> GatewayError {
        GatewayError {
            kind: GatewayErrorKind::Worker,
            message,
        }
    }

    /// What failed.
    pub fn kind(&self) -> GatewayErrorKind {
        self.kind
    }
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GatewayError {}
