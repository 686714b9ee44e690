//! The retry policy: how many attempts, exponential backoff with jitter,
//! and `Retry-After` honoured up to a cap.

use std::time::Duration;

use toolwarden_core::ErrorKind;

use super::PolicyError;

/// Retries for retryable failures. Default: up to 4 attempts, delays of
/// 100 / 200 / 400 ms each jittered by ±10 %, `Retry-After` honoured up to
/// 60 s (a longer one ends the retries: the model is told to try later).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    jitter: f64,
    max_retry_after: Duration,
}

// === impl RetryPolicy ===

impl RetryPolicy {
    /// `max_attempts` (≥ 1, counting the first), the first delay (doubled
    /// before each further retry) and the jitter, a fraction in `[0, 1]`.
    pub fn try_new(
        max_attempts: u32,
        base_delay: Duration,
        jitter: f64,
    ) -> Result<Self, PolicyError> {
        if max_attempts == 0 {
            return Err(PolicyError::new("retry.max_attempts", "must be at least 1"));
        }
        if !(0.0..=1.0).contains(&jitter) {
            return Err(PolicyError::new("retry.jitter", "must be between 0 and 1"));
        }
        Ok(RetryPolicy {
            max_attempts,
            base_delay,
            max_delay: Duration::from_secs(10),
            jitter,
            max_retry_after: Duration::from_secs(60),
        })
    }

    /// A single attempt: no retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// Cap every backoff delay at `max` (default 10 s).
    pub fn with_max_delay(mut self, max: Duration) -> Self {
        self.max_delay = max;
        self
    }

    /// The longest `Retry-After` that is waited for (default 60 s).
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// Attempts in all, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The delay before retry number `retry` (1 for the second attempt),
    /// before jitter.
    pub fn base_backoff(&self, retry: u32) -> Duration {
        let factor = 1u32
            .checked_shl(retry.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// The jittered delay before retry number `retry`, in whole
    /// milliseconds (the timer's resolution), never above the cap.
    pub fn backoff(&self, retry: u32, rng: &mut fastrand::Rng) -> Duration {
        let base = self.base_backoff(retry);
        if self.jitter == 0.0 {
            return base;
        }
        let factor = 1.0 + self.jitter * (2.0 * rng.f64() - 1.0);
        Duration::from_millis((base.as_secs_f64() * factor * 1000.0).round() as u64)
            .min(self.max_delay)
    }

    /// How long to wait before retry number `retry` after a failure of
    /// `kind`: the backoff, or the `Retry-After` when it is longer. `None`
    /// when the `Retry-After` exceeds the cap (waiting is not worth it).
    pub fn delay_for(
        &self,
        retry: u32,
        kind: &ErrorKind,
        rng: &mut fastrand::Rng,
    ) -> Option<Duration> {
        let backoff = self.backoff(retry, rng);
        match kind.retry_after() {
            Some(after) if after > self.max_retry_after => None,
            Some(after) => Some(backoff.max(after)),
            None => Some(backoff),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(10),
            jitter: 0.1,
            max_retry_after: Duration::from_secs(60),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_delays_double() {
        let p = RetryPolicy::default();
        let ms: Vec<u128> = (1..=3).map(|r| p.base_backoff(r).as_millis()).collect();
        assert_eq!(ms, vec![100, 200, 400]);
        assert_eq!(p.base_backoff(40), Duration::from_secs(10));
    }

    #[test]
    fn jitter_is_bounded_and_seeded() {
        let p = RetryPolicy::default();
        let mut a = fastrand::Rng::with_seed(7);
        let mut b = fastrand::Rng::with_seed(7);
        for r in 1..=3 {
            let d = p.backoff(r, &mut a);
            assert_eq!(d, p.backoff(r, &mut b));
            let base = p.base_backoff(r);
            assert!(d >= base.mul_f64(0.9) && d <= base.mul_f64(1.1), "{d:?}");
        }
    }

    /// Regression: jitter was applied after the cap, so delays reached
    /// `max_delay` plus 10 %.
    #[test]
    fn jitter_stays_under_the_cap() {
        let p = RetryPolicy::default().with_max_delay(Duration::from_secs(1));
        for seed in 0..100 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let d = p.backoff(20, &mut rng);
            assert!(d <= Duration::from_secs(1), "seed {seed}: {d:?}");
        }
    }

    #[test]
    fn retry_after_wins_when_longer_and_is_capped() {
        let p = RetryPolicy::try_new(4, Duration::from_millis(100), 0.0).unwrap();
        let mut rng = fastrand::Rng::with_seed(1);
        let kind = ErrorKind::RateLimited {
            retry_after: Some(Duration::from_secs(2)),
        };
        assert_eq!(
            p.delay_for(1, &kind, &mut rng),
            Some(Duration::from_secs(2))
        );
        let long = ErrorKind::RateLimited {
            retry_after: Some(Duration::from_secs(600)),
        };
        assert_eq!(p.delay_for(1, &long, &mut rng), None);
    }

    #[test]
    fn bad_arguments_are_rejected() {
        assert!(RetryPolicy::try_new(0, Duration::ZERO, 0.0).is_err());
        assert!(RetryPolicy::try_new(2, Duration::ZERO, 1.5).is_err());
        assert_eq!(RetryPolicy::none().max_attempts(), 1);
    }
}
