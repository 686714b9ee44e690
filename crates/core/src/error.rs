//! Kinds of tool failure and what each means by default.

use std::{error::Error as StdError, fmt, time::Duration};

use serde::{Deserialize, Serialize};

/// What went wrong with a tool call. Shared by the runtime (which produces
/// it) and the gateway (which reports it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The tool does not exist, is disabled or paused.
    NotAvailable,
    /// The arguments do not match the tool's schema or are not JSON.
    InvalidArguments,
    /// A file, URL or record the tool needed does not exist.
    ResourceNotFound {
        /// The missing resource (path, URL, id) when known.
        resource: Option<String>,
    },
    /// The tool did not finish in time.
    Timeout,
    /// The tool's backend asked us to slow down.
    RateLimited {
        /// How long to wait, from `Retry-After` when it was given.
        #[serde(default, with = "opt_secs")]
        retry_after: Option<Duration>,
    },
    /// A connection failed, was refused or reset.
    Network,
    /// Credentials are missing, invalid or expired.
    Authentication,
    /// The credentials are fine but not allowed to do this.
    Permission,
    /// The tool's circuit breaker is open.
    CircuitOpen {
        /// When the breaker will let a probe through.
        #[serde(default, with = "opt_secs")]
        retry_after: Option<Duration>,
    },
    /// The call was cancelled before it finished.
    Cancelled,
    /// Anything else: a bug, a panic, an unexpected error.
    Internal,
}

/// The default handling of an [`ErrorKind`]; every field can be overridden
/// per tool by the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disposition {
    /// Whether retrying the same call may succeed.
    pub retryable: bool,
    /// Whether the agent run must stop (the application is told); when
    /// `false` the model is told and can adapt.
    pub fatal: bool,
    /// Whether the error's details may be shown to the model; when `false`
    /// a generic text replaces them.
    pub show_details: bool,
}

impl ErrorKind {
    /// A stable snake_case name, used as a code, a metric label and in logs.
    pub fn as_str(&self) -> &'static str {
        match self {
            ErrorKind::NotAvailable => "not_available",
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::ResourceNotFound { .. } => "resource_not_found",
            ErrorKind::Timeout => "timeout",
            ErrorKind::RateLimited { .. } => "rate_limited",
            ErrorKind::Network => "network",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Permission => "permission",
            ErrorKind::CircuitOpen { .. } => "circuit_open",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Internal => "internal",
        }
    }

    /// The name used in the runtime's error summary (`"tool:Kind"`).
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::NotAvailable => "NotAvailable",
            ErrorKind::InvalidArguments => "InvalidArguments",
            ErrorKind::ResourceNotFound { .. } => "ResourceNotFound",
            ErrorKind::Timeout => "Timeout",
            ErrorKind::RateLimited { .. } => "RateLimited",
            ErrorKind::Network => "Network",
            ErrorKind::Authentication => "Authentication",
            ErrorKind::Permission => "Permission",
            ErrorKind::CircuitOpen { .. } => "CircuitOpen",
            ErrorKind::Cancelled => "Cancelled",
            ErrorKind::Internal => "Internal",
        }
    }

    /// The default disposition of this kind.
    pub fn disposition(&self) -> Disposition {
        let (retryable, fatal, show_details) = match self {
            ErrorKind::NotAvailable => (false, false, false),
            ErrorKind::InvalidArguments => (false, false, true),
            ErrorKind::ResourceNotFound { .. } => (false, false, true),
            ErrorKind::Timeout => (true, false, true),
            ErrorKind::RateLimited { .. } => (true, false, true),
            ErrorKind::Network => (true, false, true),
            ErrorKind::Authentication => (false, true, true),
            ErrorKind::Permission => (false, true, true),
            ErrorKind::CircuitOpen { .. } => (false, false, true),
            ErrorKind::Cancelled => (false, false, true),
            ErrorKind::Internal => (false, false, false),
        };
        Disposition {
            retryable,
            fatal,
            show_details,
        }
    }

    /// How long to wait before retrying, when the kind carries it.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ErrorKind::RateLimited { retry_after } | ErrorKind::CircuitOpen { retry_after } => {
                *retry_after
            }
            _ => None,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::ResourceNotFound { resource: Some(r) } => {
                write!(f, "resource not found: {r}")
            }
            ErrorKind::RateLimited {
                retry_after: Some(d),
            } => write!(f, "rate limited (retry after {} s)", d.as_secs_f64()),
            other => f.write_str(&other.as_str().replace('_', " ")),
        }
    }
}

/// An error a tool returns: a kind, a message and an optional source.
///
/// Tools should return this when they know what went wrong; the runtime
/// classifies any other error by type first and by message only as a
/// fallback (see [`crate::classify`]).
#[derive(Debug)]
pub struct ToolError {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl ToolError {
    /// A new error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Attach the underlying cause.
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// A missing resource.
    pub fn not_found(resource: impl Into<String>) -> Self {
        let resource = resource.into();
        ToolError::new(
            ErrorKind::ResourceNotFound {
                resource: Some(resource.clone()),
            },
            format!("not found: {resource}"),
        )
    }

    /// Bad arguments, with the exact text the model should act on.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(ErrorKind::InvalidArguments, message)
    }

    /// Rate limited, with an optional Retry-After.
    pub fn rate_limited(retry_after: Option<Duration>, message: impl Into<String>) -> Self {
        ToolError::new(ErrorKind::RateLimited { retry_after }, message)
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The message, without the source chain.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for ToolError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

mod opt_secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let secs = Option::<f64>::deserialize(d)?;
        Ok(secs.map(|s| Duration::from_secs_f64(s.max(0.0))))
    }
}
