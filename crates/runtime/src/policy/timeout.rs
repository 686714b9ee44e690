//! The timeout policy: a deadline per attempt, at which the tool's future
//! is dropped (cancelled).

use std::{fmt, future::Future, task::Poll, time::Duration};

use super::PolicyError;

/// How long one attempt of a tool may run. Default 30 s.
///
/// A timeout can only interrupt a tool at an `.await`: the deadline drops
/// the tool's future, which only happens between polls. A tool that blocks
/// the thread (`std::fs`, `std::thread::sleep`, a blocking HTTP client or
/// database driver, a long computation without `.await`) is not
/// interrupted: it runs to its end, and the call reports what it returned,
/// late. Make such a tool with [`blocking_fn`](crate::blocking_fn) or
/// [`typed_blocking_fn`](crate::typed_blocking_fn) (or run its blocking
/// part with `tokio::task::spawn_blocking`): the timeout then answers on
/// time, abandoning the thread, which runs on until the closure returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeoutPolicy {
    duration: Duration,
}

/// An attempt ran past its deadline; its future has been dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeoutError(pub Duration);

// === impl TimeoutPolicy ===

impl TimeoutPolicy {
    /// The default deadline.
    pub const DEFAULT: Duration = Duration::from_secs(30);

    /// A deadline of `duration`; zero is rejected.
    pub fn try_new(duration: Duration) -> Result<Self, PolicyError> {
        if duration.is_zero() {
            return Err(PolicyError::new("timeout", "must be greater than zero"));
        }
        Ok(TimeoutPolicy { duration })
    }

    /// The deadline.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// Run `fut` until the deadline; past it, `fut` is dropped.
    pub async fn run<F: Future>(&self, fut: F) -> Result<F::Output, TimeoutError> {
        self.run_from(tokio::time::Instant::now(), fut).await
    }

    /// Run `fut` until `start` plus the timeout; past it, `fut` is dropped.
    ///
    /// The timer is only armed if the first poll does not finish the
    /// future: a tool that answers at once never touches the timer wheel.
    pub async fn run_from<F: Future>(
        &self,
        start: tokio::time::Instant,
        fut: F,
    ) -> Result<F::Output, TimeoutError> {
        let mut fut = std::pin::pin!(fut);
        if let Poll::Ready(output) = futures_util::poll!(fut.as_mut()) {
            return Ok(output);
        }
        // Boxed: the timer only lives in the futures of tools that wait.
        Box::pin(tokio::time::timeout_at(
            super::later(start, self.duration),
            fut,
        ))
        .await
        .map_err(|_| TimeoutError(self.duration))
    }
}

impl Default for TimeoutPolicy {
    fn default() -> Self {
        TimeoutPolicy {
            duration: Self::DEFAULT,
        }
    }
}

// === impl TimeoutError ===

impl fmt::Display for TimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "timed out after {}", super::secs(self.0))
    }
}

impl std::error::Error for TimeoutError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    };

    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// `Duration::MAX` means "never": the timer does not overflow.
    #[tokio::test]
    async fn the_longest_timeout_is_no_deadline() {
        let policy = TimeoutPolicy::try_new(Duration::MAX).unwrap();
        let out = policy
            .run(async {
                tokio::task::yield_now().await;
                7
            })
            .await;
        assert_eq!(out, Ok(7));
    }

    #[test]
    fn zero_is_rejected() {
        assert!(TimeoutPolicy::try_new(Duration::ZERO).is_err());
        assert_eq!(TimeoutPolicy::default().duration(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn the_future_is_dropped_at_the_deadline() {
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        let policy = TimeoutPolicy::try_new(Duration::from_secs(2)).unwrap();
        let start = tokio::time::Instant::now();
        let r = policy
            .run(async move {
                let _flag = flag;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            })
            .await;
        assert_eq!(r, Err(TimeoutError(Duration::from_secs(2))));
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        assert!(dropped.load(Ordering::SeqCst));
    }
}
