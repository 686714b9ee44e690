//! The circuit breaker: a gate the hot path only reads, and a state
//! machine that changes it in one place.
//!
//! Closed → (N consecutive failures, or the failure rate over a window of
//! calls above a threshold) → Open for a while → Half-open, letting a
//! bounded number of probe calls through → a probe success closes it, a
//! probe failure opens it again. [`Breaker::reset`] closes it by hand.
//! What counts as a success or a failure is the executor's call: a
//! backend's answer (a missing file) is as good as a success, and a
//! failure that says nothing of the backend (arguments the tool refused)
//! is not reported at all (`executor::attempt::breaker_evidence`).
//!
//! Each half-open period is numbered, and a probe's permit carries the
//! number: a probe still out when its period ended (it outlived `open_for`,
//! or the breaker was reset) neither frees a probe slot of a later period
//! nor decides it. Closed periods are numbered too: the result of a call
//! let through before the breaker opened (or was reset), reported after,
//! counts in no later closed period.

use std::{
    collections::VecDeque,
    sync::{
        Mutex,
        atomic::{AtomicU8, AtomicU64, Ordering},
    },
    time::Duration,
};

use serde::Serialize;
use tokio::time::Instant;

use super::PolicyError;

/// The breaker's settings. Default: opens after 5 consecutive failures,
/// stays open 60 s, then lets 1 probe through; no failure-rate window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerConfig {
    consecutive_failures: u32,
    open_for: Duration,
    half_open_probes: u32,
    rate: Option<FailureRate>,
}

/// Open when the failure rate over the last `window` calls exceeds
/// `threshold`, once at least `min_calls` have been seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FailureRate {
    window: u32,
    min_calls: u32,
    threshold: f64,
}

/// Where the breaker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// Calls go through.
    Closed,
    /// Calls are rejected until the open period ends.
    Open,
    /// A bounded number of probe calls go through.
    HalfOpen,
}

/// A breaker for one tool.
#[derive(Debug)]
pub struct Breaker {
    config: BreakerConfig,
    gate: AtomicU8,
    /// The current closed period's number (high 32 bits, wrapping) and
    /// its consecutive failures (low 32 bits), in one word so that a
    /// failure is counted only in the period its call was let through in.
    closed: AtomicU64,
    trips: AtomicU64,
    recoveries: AtomicU64,
    /// The longest one probe may run ([`Breaker::with_probe_timeout`]).
    probe_timeout: Option<Duration>,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    open_until: Option<Instant>,
    /// The number of the current (or last) half-open period.
    half_open_period: u64,
    /// Probes of the current half-open period still out.
    probes_in_flight: u32,
    /// When the last probe let through in the current half-open period
    /// is over at the latest (its timeout), if the breaker knows.
    probes_done_by: Option<Instant>,
    window: VecDeque<bool>,
    window_failures: u32,
}

/// Whether a call may go through.
#[derive(Debug)]
pub enum Admission<'a> {
    /// Go ahead; report the result with [`Permit::record`].
    Allowed(Permit<'a>),
    /// The breaker is open: try again after this long.
    Rejected {
        /// Open: the time until a probe will be let through. Half-open,
        /// its probes all out: the time until they are over at the latest
        /// (the last one's [`Breaker::with_probe_timeout`]), when a probe
        /// has closed the breaker, opened it again or freed its slot; 1 s
        /// for a breaker that does not know how long a probe may run, or
        /// whose probes ran past it.
        retry_after: Duration,
    },
}

/// Leave to make one call; a probe permit dropped without a result frees
/// its probe slot (if its half-open period is still the current one). Its
/// result counts only in the period it was let through in.
#[derive(Debug)]
pub struct Permit<'a> {
    breaker: &'a Breaker,
    period: Period,
    done: bool,
}

/// The period a permit was let through in.
#[derive(Debug, Clone, Copy)]
enum Period {
    /// A closed period's number.
    Closed(u32),
    /// A half-open period's number: the permit is a probe.
    Probe(u64),
}

/// The low half of `Breaker::closed`: the consecutive failures.
const COUNT: u64 = u32::MAX as u64;

/// The period's number in a `Breaker::closed` word.
fn period_of(word: u64) -> u32 {
    (word >> 32) as u32
}

const CLOSED: u8 = 0;
const OPEN: u8 = 1;
const HALF_OPEN: u8 = 2;

// === impl BreakerConfig ===

impl BreakerConfig {
    /// Open after `consecutive_failures` (≥ 1), stay open `open_for`
    /// (> 0), then allow `half_open_probes` (≥ 1) probes.
    pub fn try_new(
        consecutive_failures: u32,
        open_for: Duration,
        half_open_probes: u32,
    ) -> Result<Self, PolicyError> {
        if consecutive_failures == 0 {
            return Err(PolicyError::new(
                "breaker.consecutive_failures",
                "must be at least 1",
            ));
        }
        if open_for.is_zero() {
            return Err(PolicyError::new(
                "breaker.open_for",
                "must be greater than zero",
            ));
        }
        if half_open_probes == 0 {
            return Err(PolicyError::new(
                "breaker.half_open_probes",
                "must be at least 1",
            ));
        }
        Ok(BreakerConfig {
            consecutive_failures,
            open_for,
            half_open_probes,
            rate: None,
        })
    }

    /// Also open on the failure rate over a window of calls.
    pub fn with_failure_rate(mut self, rate: FailureRate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// How long the breaker stays open.
    pub fn open_for(&self) -> Duration {
        self.open_for
    }

    /// Whether the breaker, once open, stays open until
    /// [`Breaker::reset`]: `open_for` is [`Duration::MAX`] (or any wait
    /// of thirty years or more).
    pub fn open_until_reset(&self) -> bool {
        self.open_for >= super::NEVER
    }
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            consecutive_failures: 5,
            open_for: Duration::from_secs(60),
            half_open_probes: 1,
            rate: None,
        }
    }
}

// === impl FailureRate ===

impl FailureRate {
    /// `window` ≥ 1 calls, `min_calls` in `1..=window`, `threshold` in `(0, 1]`.
    pub fn try_new(window: u32, min_calls: u32, threshold: f64) -> Result<Self, PolicyError> {
        if window == 0 || window > 100_000 {
            return Err(PolicyError::new(
                "breaker.rate.window",
                "must be between 1 and 100000",
            ));
        }
        if min_calls == 0 || min_calls > window {
            return Err(PolicyError::new(
                "breaker.rate.min_calls",
                "must be between 1 and the window",
            ));
        }
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(PolicyError::new(
                "breaker.rate.threshold",
                "must be in (0, 1]",
            ));
        }
        Ok(FailureRate {
            window,
            min_calls,
            threshold,
        })
    }
}

// === impl BreakerState ===

impl BreakerState {
    /// The lower-case name used in logs and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

// === impl Breaker ===

impl Breaker {
    /// A closed breaker.
    pub fn new(config: BreakerConfig) -> Self {
        Breaker {
            config,
            gate: AtomicU8::new(CLOSED),
            closed: AtomicU64::new(0),
            trips: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            probe_timeout: None,
            inner: Mutex::new(Inner {
                open_until: None,
                half_open_period: 0,
                probes_in_flight: 0,
                probes_done_by: None,
                window: VecDeque::new(),
                window_failures: 0,
            }),
        }
    }

    /// A probe runs at most `limit` (the tool's timeout): a call rejected
    /// while the probes are out is told to wait until then, not 1 s.
    pub fn with_probe_timeout(mut self, limit: Duration) -> Self {
        self.probe_timeout = Some(limit);
        self
    }

    /// The current state (an open breaker whose time is up still reads
    /// `Open` until the next call moves it to half-open).
    pub fn state(&self) -> BreakerState {
        match self.gate.load(Ordering::Acquire) {
            CLOSED => BreakerState::Closed,
            OPEN => BreakerState::Open,
            _ => BreakerState::HalfOpen,
        }
    }

    /// How many times the breaker has opened (a failed probe re-opening
    /// it included).
    pub fn trips(&self) -> u64 {
        self.trips.load(Ordering::Relaxed)
    }

    /// How many times the breaker has closed again after opening: a probe
    /// succeeded, or it was reset while not closed.
    pub fn recoveries(&self) -> u64 {
        self.recoveries.load(Ordering::Relaxed)
    }

    /// May a call go through now? Reads the clock only when the breaker
    /// is not closed.
    pub fn admit_now(&self) -> Admission<'_> {
        if self.gate.load(Ordering::Acquire) == CLOSED {
            return Admission::Allowed(self.closed_permit());
        }
        self.admit(Instant::now())
    }

    /// May a call go through at `now`?
    pub fn admit(&self, now: Instant) -> Admission<'_> {
        if self.gate.load(Ordering::Acquire) == CLOSED {
            return Admission::Allowed(self.closed_permit());
        }
        let mut inner = self.lock();
        match self.gate.load(Ordering::Acquire) {
            CLOSED => Admission::Allowed(self.closed_permit()),
            OPEN => {
                let until = inner.open_until.unwrap_or(now);
                if now < until {
                    return Admission::Rejected {
                        retry_after: until - now,
                    };
                }
                self.gate.store(HALF_OPEN, Ordering::Release);
                inner.half_open_period += 1;
                inner.probes_in_flight = 1;
                inner.probes_done_by = None;
                self.probe_starts(&mut inner, now);
                tracing::info!(target: "toolwarden::breaker", "circuit half-open: letting a probe through");
                Admission::Allowed(Permit {
                    breaker: self,
                    period: Period::Probe(inner.half_open_period),
                    done: false,
                })
            }
            _ => {
                if inner.probes_in_flight < self.config.half_open_probes {
                    inner.probes_in_flight += 1;
                    self.probe_starts(&mut inner, now);
                    Admission::Allowed(Permit {
                        breaker: self,
                        period: Period::Probe(inner.half_open_period),
                        done: false,
                    })
                } else {
                    let retry_after = inner
                        .probes_done_by
                        .map(|by| by.saturating_duration_since(now))
                        .filter(|d| !d.is_zero())
                        .unwrap_or(Duration::from_secs(1));
                    Admission::Rejected { retry_after }
                }
            }
        }
    }

    /// A probe let through at `now`: the probes are over by its timeout.
    fn probe_starts(&self, inner: &mut Inner, now: Instant) {
        if let Some(limit) = self.probe_timeout {
            let by = super::later(now, limit);
            inner.probes_done_by = Some(inner.probes_done_by.map_or(by, |b| b.max(by)));
        }
    }

    /// A permit of the current closed period (the breaker may have opened
    /// since the gate was read: its result then counts in no period).
    fn closed_permit(&self) -> Permit<'_> {
        Permit {
            breaker: self,
            period: Period::Closed(period_of(self.closed.load(Ordering::Acquire))),
            done: false,
        }
    }

    /// Start a new closed period, its count at zero: the results of calls
    /// let through before no longer count.
    fn next_closed_period(&self) {
        let period = period_of(self.closed.load(Ordering::Acquire)).wrapping_add(1);
        self.closed
            .store(u64::from(period) << 32, Ordering::Release);
    }

    /// Close the breaker by hand and forget past failures (those of calls
    /// still running included).
    pub fn reset(&self) {
        let mut inner = self.lock();
        self.close(&mut inner);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked while holding
        // it; the state is still consistent (every update is a single step).
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close(&self, inner: &mut Inner) {
        if self.gate.load(Ordering::Acquire) != CLOSED {
            self.recoveries.fetch_add(1, Ordering::Relaxed);
        }
        inner.open_until = None;
        inner.probes_in_flight = 0;
        inner.window.clear();
        inner.window_failures = 0;
        self.next_closed_period();
        self.gate.store(CLOSED, Ordering::Release);
    }

    fn open(&self, inner: &mut Inner, now: Instant) {
        inner.open_until = Some(super::later(now, self.config.open_for));
        inner.probes_in_flight = 0;
        inner.window.clear();
        inner.window_failures = 0;
        self.next_closed_period();
        self.trips.fetch_add(1, Ordering::Relaxed);
        self.gate.store(OPEN, Ordering::Release);
    }

    /// Whether a probe of half-open period `period` belongs to the current
    /// one (called with the lock held).
    fn is_current_probe(&self, inner: &Inner, period: u64) -> bool {
        self.gate.load(Ordering::Acquire) == HALF_OPEN && inner.half_open_period == period
    }

    fn on_result(&self, period: Period, success: bool, now: Instant) {
        let period = match period {
            Period::Probe(period) => {
                let mut inner = self.lock();
                if !self.is_current_probe(&inner, period) {
                    return;
                }
                if success {
                    self.close(&mut inner);
                    tracing::info!(target: "toolwarden::breaker", "circuit closed: probe succeeded");
                } else {
                    self.open(&mut inner, now);
                    tracing::warn!(target: "toolwarden::breaker", "circuit re-opened: probe failed");
                }
                return;
            }
            Period::Closed(period) => period,
        };
        if self.config.rate.is_none() {
            if success {
                self.forget_failures(period);
                return;
            }
            // Counted only in the period the call was let through in.
            let Ok(word) = self
                .closed
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                    (period_of(w) == period && w & COUNT != COUNT).then_some(w + 1)
                })
            else {
                return;
            };
            let n = (word & COUNT) as u32 + 1;
            if n >= self.config.consecutive_failures {
                let mut inner = self.lock();
                if self.gate.load(Ordering::Acquire) == CLOSED
                    && period_of(self.closed.load(Ordering::Acquire)) == period
                {
                    self.open(&mut inner, now);
                    tracing::warn!(target: "toolwarden::breaker", failures = n, "circuit opened");
                }
            }
            return;
        }
        let mut inner = self.lock();
        let word = self.closed.load(Ordering::Acquire);
        if self.gate.load(Ordering::Acquire) != CLOSED || period_of(word) != period {
            return;
        }
        let n = if success {
            self.closed.store(word & !COUNT, Ordering::Release);
            0
        } else {
            let n = (word & COUNT).saturating_add(1).min(COUNT);
            self.closed.store((word & !COUNT) | n, Ordering::Release);
            n as u32
        };
        let mut trip = n >= self.config.consecutive_failures;
        if let Some(rate) = self.config.rate {
            inner.window.push_back(!success);
            inner.window_failures += u32::from(!success);
            if inner.window.len() > rate.window as usize && inner.window.pop_front() == Some(true) {
                inner.window_failures -= 1;
            }
            let seen = inner.window.len() as u32;
            if seen >= rate.min_calls
                && f64::from(inner.window_failures) / f64::from(seen) > rate.threshold
            {
                trip = true;
            }
        }
        if trip {
            self.open(&mut inner, now);
            tracing::warn!(target: "toolwarden::breaker", "circuit opened");
        }
    }

    /// A success in closed period `period`: its count of consecutive
    /// failures back to zero, if it is still the current period.
    fn forget_failures(&self, period: u32) {
        let word = self.closed.load(Ordering::Acquire);
        if period_of(word) == period && word & COUNT != 0 {
            // A failure or a new period meanwhile wins.
            let _ = self.closed.compare_exchange(
                word,
                word & !COUNT,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
    }
}

// === impl Permit ===

impl Permit<'_> {
    /// Report how the call went, at `now`.
    pub fn record(mut self, success: bool, now: Instant) {
        self.done = true;
        self.breaker.on_result(self.period, success, now);
    }

    /// Report how the call went; the clock is read only if the state can
    /// change (a success on a closed breaker without a rate window
    /// cannot).
    pub fn record_now(mut self, success: bool) {
        let b = self.breaker;
        if let (true, Period::Closed(period), None) = (success, self.period, b.config.rate) {
            self.done = true;
            b.forget_failures(period);
            return;
        }
        self.record(success, Instant::now());
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let (Period::Probe(period), false) = (self.period, self.done) {
            let mut inner = self.breaker.lock();
            if self.breaker.is_current_probe(&inner, period) {
                inner.probes_in_flight = inner.probes_in_flight.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod model;
#[cfg(test)]
mod tests;
