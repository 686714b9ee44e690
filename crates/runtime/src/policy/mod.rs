//! Per-tool policies, one small type each: [`TimeoutPolicy`],
//! [`RetryPolicy`], [`BreakerConfig`] (with the [`Breaker`] state
//! machine), [`Fallback`], and the run-level [`LoopGuardConfig`]. A
//! [`ToolPolicy`] bundles them with the per-tool overrides of the default
//! error handling.

mod breaker;
mod fallback;
mod loop_guard;
mod retry;
mod timeout;

use std::{fmt, sync::Arc, time::Duration};

use toolwarden_core::{Disposition, ErrorKind};

pub use breaker::{Admission, Breaker, BreakerConfig, BreakerState, FailureRate, Permit};
pub use fallback::Fallback;
pub(crate) use loop_guard::LoopGuard;
pub use loop_guard::LoopGuardConfig;
pub use retry::RetryPolicy;
pub use timeout::{TimeoutError, TimeoutPolicy};

/// `at + d`, or thirty years from `at` when that does not fit (as tokio's
/// own timers take "never"): a policy may be configured with
/// [`Duration::MAX`] to mean "until reset".
pub(crate) fn later(at: tokio::time::Instant, d: Duration) -> tokio::time::Instant {
    at.checked_add(d).unwrap_or_else(|| at + NEVER)
}

/// Thirty years: a wait this long is "until reset".
pub(crate) const NEVER: Duration = Duration::from_secs(86_400 * 365 * 30);

/// A policy argument out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {setting}: {reason}")]
pub struct PolicyError {
    setting: &'static str,
    reason: &'static str,
}

/// Everything configurable about one tool. The defaults: 30 s timeout, 4
/// attempts, a breaker (5 failures, 60 s), no fallback, calls may overlap,
/// the dispositions and texts of [`ErrorKind`].
#[derive(Debug, Clone)]
pub struct ToolPolicy {
    pub(crate) timeout: TimeoutPolicy,
    pub(crate) retry: RetryPolicy,
    pub(crate) breaker: Option<BreakerConfig>,
    pub(crate) fallback: Option<Fallback>,
    pub(crate) sequential: bool,
    pub(crate) strict: bool,
    dispositions: Vec<(&'static str, Disposition)>,
    messages: Vec<(&'static str, Arc<str>)>,
}

// === impl PolicyError ===

impl PolicyError {
    pub(crate) fn new(setting: &'static str, reason: &'static str) -> Self {
        PolicyError { setting, reason }
    }
}

// === impl ToolPolicy ===

impl ToolPolicy {
    /// The defaults, with a breaker.
    pub fn new() -> Self {
        ToolPolicy {
            timeout: TimeoutPolicy::default(),
            retry: RetryPolicy::default(),
            breaker: Some(BreakerConfig::default()),
            fallback: None,
            sequential: false,
            strict: false,
            dispositions: Vec::new(),
            messages: Vec::new(),
        }
    }

    /// Set the timeout.
    pub fn timeout(mut self, timeout: TimeoutPolicy) -> Self {
        self.timeout = timeout;
        self
    }

    /// Set the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Set the breaker.
    pub fn breaker(mut self, breaker: BreakerConfig) -> Self {
        self.breaker = Some(breaker);
        self
    }

    /// No breaker for this tool.
    pub fn no_breaker(mut self) -> Self {
        self.breaker = None;
        self
    }

    /// Set the fallback.
    pub fn fallback(mut self, fallback: Fallback) -> Self {
        self.fallback = Some(fallback);
        self
    }

    /// Calls of this tool must not overlap: they run one at a time, in
    /// every executor sharing the registry, and across a removal and a new
    /// `sequential` registration under the same name (a call of the removed
    /// tool still running holds back the new one's). A call holds its turn
    /// until it ends, at its timeout at the latest: a blocking tool's thread
    /// ([`blocking_fn`](crate::blocking_fn)) abandoned at its timeout runs
    /// on, and the next call starts beside it.
    pub fn sequential(mut self, sequential: bool) -> Self {
        self.sequential = sequential;
        self
    }

    /// Advertise this tool in OpenAI's strict mode (`"strict": true`,
    /// structured outputs: the model's arguments always match the schema)
    /// in `Registry::definitions` for Chat Completions and Responses; the other dialects get the tool's own
    /// schema. Registration rewrites the schema with
    /// [`strict_schema`](crate::strict_schema) and refuses a tool whose
    /// schema has no strict form (`RegistryErrorKind::NotStrict`, with the
    /// reason and where). At execution, in every dialect, an optional
    /// property sent as `null` (as strict mode has the model send a
    /// property it leaves out) counts as absent: the key is removed before
    /// the arguments are validated against the tool's own schema and handed
    /// to the tool. Off by default.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Handle failures of `kind` with `disposition` instead of the default
    /// (e.g. make permission errors non-fatal for this tool).
    pub fn disposition(mut self, kind: &ErrorKind, disposition: Disposition) -> Self {
        self.dispositions.retain(|(k, _)| *k != kind.as_str());
        self.dispositions.push((kind.as_str(), disposition));
        self
    }

    /// The tool's effect may stand even when a call fails midway (it sends
    /// an email, places an order, charges a card): a call that timed out or
    /// whose connection broke is not retried, as it may have done its work,
    /// and the model is told so (to check before calling it again, not that
    /// retrying will not help). Failures refused before any effect (rate
    /// limits, a circuit open) still are. By default timeouts and network
    /// errors are retried.
    pub fn not_idempotent(self) -> Self {
        [ErrorKind::Timeout, ErrorKind::Network]
            .iter()
            .fold(self, |policy, kind| {
                let once = Disposition {
                    retryable: false,
                    ..policy.disposition_of(kind)
                };
                policy.disposition(kind, once)
            })
    }

    /// Tell the model `text` for failures of `kind` instead of the default
    /// text. For [`ErrorKind::Internal`] this replaces "An unexpected error
    /// occurred while executing this tool".
    pub fn message(mut self, kind: &ErrorKind, text: impl Into<Arc<str>>) -> Self {
        self.messages.retain(|(k, _)| *k != kind.as_str());
        self.messages.push((kind.as_str(), text.into()));
        self
    }

    /// The disposition of `kind` for this tool.
    pub fn disposition_of(&self, kind: &ErrorKind) -> Disposition {
        let name = kind.as_str();
        self.dispositions
            .iter()
            .find(|(k, _)| *k == name)
            .map_or_else(|| kind.disposition(), |(_, d)| *d)
    }

    /// The overriding model text for `kind`, if any.
    pub fn message_of(&self, kind: &ErrorKind) -> Option<&str> {
        let name = kind.as_str();
        self.messages
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, m)| &**m)
    }

    /// The timeout.
    pub fn timeout_policy(&self) -> &TimeoutPolicy {
        &self.timeout
    }
}

impl Default for ToolPolicy {
    fn default() -> Self {
        ToolPolicy::new()
    }
}

/// `1.5 s`, `30 s`, `250 ms`.
pub(crate) fn secs(d: Duration) -> impl fmt::Display {
    struct S(Duration);
    impl fmt::Display for S {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let d = self.0;
            if d < Duration::from_secs(1) {
                write!(f, "{} ms", d.as_millis())
            } else if d.subsec_millis() == 0 {
                write!(f, "{} s", d.as_secs())
            } else {
                write!(f, "{:.1} s", d.as_secs_f64())
            }
        }
    }
    S(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_defaults_per_kind() {
        let p = ToolPolicy::new()
            .disposition(
                &ErrorKind::Permission,
                Disposition {
                    retryable: false,
                    fatal: false,
                    show_details: true,
                },
            )
            .message(&ErrorKind::Internal, "The search index is broken.");
        assert!(!p.disposition_of(&ErrorKind::Permission).fatal);
        assert!(p.disposition_of(&ErrorKind::Authentication).fatal);
        assert_eq!(
            p.message_of(&ErrorKind::Internal),
            Some("The search index is broken.")
        );
        assert_eq!(p.message_of(&ErrorKind::Timeout), None);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(secs(Duration::from_millis(250)).to_string(), "250 ms");
        assert_eq!(secs(Duration::from_secs(30)).to_string(), "30 s");
        assert_eq!(secs(Duration::from_millis(1500)).to_string(), "1.5 s");
    }
}
