//! The fallback policy: when a tool fails in a way its caller cannot fix,
//! answer with another tool or a fixed output, and say so in the outcome.
//! A fallback tool that fails fatally (its credentials rejected) makes the
//! outcome fatal, as the tool's own fatal failure would.

use std::sync::Arc;

use serde_json::Value;
use toolwarden_core::ErrorKind;

/// What to do instead when a tool fails.
#[derive(Debug, Clone, PartialEq)]
pub enum Fallback {
    /// Call this other tool with the same arguments. It must be registered
    /// before the tool that falls back to it, and not be that tool.
    Tool(Arc<str>),
    /// Answer with this output.
    Output(Value),
}

// === impl Fallback ===

impl Fallback {
    /// Fall back to the tool named `name`.
    pub fn tool(name: impl Into<Arc<str>>) -> Self {
        Fallback::Tool(name.into())
    }

    /// Fall back to a fixed output.
    pub fn output(value: Value) -> Self {
        Fallback::Output(value)
    }

    /// What `fallback_used` records: the tool's name, or `fixed_output`.
    pub fn label(&self) -> &str {
        match self {
            Fallback::Tool(name) => name,
            Fallback::Output(_) => "fixed_output",
        }
    }

    /// Whether a failure of `kind` is answered by the fallback: the tool
    /// being down (not available, circuit open, timeout, rate limit,
    /// network, internal). Not for failures the model must fix (arguments,
    /// missing resources), nor fatal ones (authentication, permission),
    /// nor cancellations.
    pub fn applies_to(kind: &ErrorKind) -> bool {
        matches!(
            kind,
            ErrorKind::NotAvailable
                | ErrorKind::CircuitOpen { .. }
                | ErrorKind::Timeout
                | ErrorKind::RateLimited { .. }
                | ErrorKind::Network
                | ErrorKind::Internal
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_and_kinds() {
        assert_eq!(Fallback::tool("cache").label(), "cache");
        assert_eq!(Fallback::output(json!([])).label(), "fixed_output");
        assert!(Fallback::applies_to(&ErrorKind::Timeout));
        assert!(!Fallback::applies_to(&ErrorKind::InvalidArguments));
        assert!(!Fallback::applies_to(&ErrorKind::Authentication));
    }
}
