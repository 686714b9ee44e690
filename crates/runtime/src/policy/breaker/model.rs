//! The breaker against a model of it: random admissions, results, drops,
//! resets and waits, with permits held across periods (calls that
//! outlive the period they were let through in), and after each step the
//! same state, counts and admission as the model's.

use std::time::Duration;

use proptest::prelude::*;
use tokio::time::Instant;

use super::*;

/// The model's period numbers are its own: a permit remembers the period
/// it was let through in, and counts only while that period lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Closed {
        period: u64,
        failures: u32,
    },
    Open {
        until: Instant,
    },
    HalfOpen {
        period: u64,
        out: u32,
        done_by: Instant,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Closed(u64),
    Probe(u64),
}

struct Model {
    threshold: u32,
    open_for: Duration,
    probes: u32,
    probe_timeout: Duration,
    mode: Mode,
    periods: u64,
    trips: u64,
    recoveries: u64,
}

impl Model {
    fn next_period(&mut self) -> u64 {
        self.periods += 1;
        self.periods
    }

    fn close(&mut self) {
        if !matches!(self.mode, Mode::Closed { .. }) {
            self.recoveries += 1;
        }
        let period = self.next_period();
        self.mode = Mode::Closed {
            period,
            failures: 0,
        };
    }

    fn open(&mut self, now: Instant) {
        self.trips += 1;
        self.mode = Mode::Open {
            until: now + self.open_for,
        };
    }

    /// `Ok(kind)` let through, `Err(retry_after)` rejected.
    fn admit(&mut self, now: Instant) -> Result<Kind, Duration> {
        match self.mode {
            Mode::Closed { period, .. } => Ok(Kind::Closed(period)),
            Mode::Open { until } if now < until => Err(until - now),
            Mode::Open { .. } => {
                let period = self.next_period();
                self.mode = Mode::HalfOpen {
                    period,
                    out: 1,
                    done_by: now + self.probe_timeout,
                };
                Ok(Kind::Probe(period))
            }
            Mode::HalfOpen {
                period,
                out,
                done_by,
            } => {
                if out < self.probes {
                    self.mode = Mode::HalfOpen {
                        period,
                        out: out + 1,
                        done_by: done_by.max(now + self.probe_timeout),
                    };
                    Ok(Kind::Probe(period))
                } else if done_by > now {
                    Err(done_by - now)
                } else {
                    Err(Duration::from_secs(1))
                }
            }
        }
    }

    fn record(&mut self, kind: Kind, success: bool, now: Instant) {
        match (kind, self.mode) {
            (Kind::Closed(p), Mode::Closed { period, failures }) if p == period => {
                if success {
                    self.mode = Mode::Closed {
                        period,
                        failures: 0,
                    };
                } else if failures + 1 >= self.threshold {
                    self.open(now);
                } else {
                    self.mode = Mode::Closed {
                        period,
                        failures: failures + 1,
                    };
                }
            }
            (Kind::Probe(p), Mode::HalfOpen { period, .. }) if p == period => {
                if success {
                    self.close();
                } else {
                    self.open(now);
                }
            }
            // A result from a period that is over counts in none.
            _ => {}
        }
    }

    fn drop_unrecorded(&mut self, kind: Kind) {
        if let (
            Kind::Probe(p),
            Mode::HalfOpen {
                period,
                out,
                done_by,
            },
        ) = (kind, self.mode)
            && p == period
        {
            self.mode = Mode::HalfOpen {
                period,
                out: out - 1,
                done_by,
            };
        }
    }

    fn state(&self) -> BreakerState {
        match self.mode {
            Mode::Closed { .. } => BreakerState::Closed,
            Mode::Open { .. } => BreakerState::Open,
            Mode::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Admit,
    Record { which: usize, success: bool },
    Drop { which: usize },
    Wait { ms: u64 },
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Admit),
        4 => (any::<usize>(), any::<bool>())
            .prop_map(|(which, success)| Op::Record { which, success }),
        1 => any::<usize>().prop_map(|which| Op::Drop { which }),
        3 => (0u64..4_000).prop_map(|ms| Op::Wait { ms }),
        1 => Just(Op::Reset),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Regressions it covers: a failure from a closed period that ended
    /// counted in the next one; a half-open rejection said 1 s while its
    /// probes could run their whole timeout; a stale probe freed or
    /// decided a later half-open period.
    #[test]
    fn the_breaker_behaves_as_its_model(
        threshold in 1u32..4,
        open_for_ms in 1u64..3_000,
        probes in 1u32..3,
        timeout_ms in 1u64..5_000,
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        let open_for = Duration::from_millis(open_for_ms);
        let probe_timeout = Duration::from_millis(timeout_ms);
        let config = BreakerConfig::try_new(threshold, open_for, probes).unwrap();
        let breaker = Breaker::new(config).with_probe_timeout(probe_timeout);
        let mut model = Model {
            threshold,
            open_for,
            probes,
            probe_timeout,
            mode: Mode::Closed { period: 0, failures: 0 },
            periods: 0,
            trips: 0,
            recoveries: 0,
        };
        let mut now = Instant::now();
        let mut held: Vec<(Permit<'_>, Kind)> = Vec::new();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Admit => {
                    let got = breaker.admit(now);
                    let want = model.admit(now);
                    match (got, want) {
                        (Admission::Allowed(permit), Ok(kind)) => {
                            held.push((permit, kind));
                        }
                        (Admission::Rejected { retry_after }, Err(want)) => {
                            prop_assert_eq!(retry_after, want, "step {}", step);
                        }
                        (got, want) => {
                            prop_assert!(false, "step {}: {:?}, the model {:?}", step, got, want);
                        }
                    }
                }
                Op::Record { which, success } if !held.is_empty() => {
                    let (permit, kind) = held.swap_remove(which % held.len());
                    permit.record(success, now);
                    model.record(kind, success, now);
                }
                Op::Drop { which } if !held.is_empty() => {
                    let (permit, kind) = held.swap_remove(which % held.len());
                    drop(permit);
                    model.drop_unrecorded(kind);
                }
                Op::Wait { ms } => now += Duration::from_millis(ms),
                Op::Reset => {
                    breaker.reset();
                    model.close();
                }
                Op::Record { .. } | Op::Drop { .. } => {}
            }
            prop_assert_eq!(breaker.state(), model.state(), "step {}", step);
            prop_assert_eq!(breaker.trips(), model.trips, "step {}", step);
            prop_assert_eq!(breaker.recoveries(), model.recoveries, "step {}", step);
        }
    }
}
