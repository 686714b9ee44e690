use super::*;

fn allowed(b: &Breaker, now: Instant) -> Permit<'_> {
    match b.admit(now) {
        Admission::Allowed(p) => p,
        Admission::Rejected { retry_after } => panic!("rejected, retry after {retry_after:?}"),
    }
}

fn rejected(b: &Breaker, now: Instant) -> Duration {
    match b.admit(now) {
        Admission::Allowed(_) => panic!("allowed"),
        Admission::Rejected { retry_after } => retry_after,
    }
}

fn fail(b: &Breaker, now: Instant, n: u32) {
    for _ in 0..n {
        allowed(b, now).record(false, now);
    }
}

#[test]
fn closed_open_half_open_closed() {
    let b = Breaker::new(BreakerConfig::default());
    let t0 = Instant::now();
    fail(&b, t0, 4);
    assert_eq!(b.state(), BreakerState::Closed);
    fail(&b, t0, 1);
    assert_eq!(b.state(), BreakerState::Open);
    assert_eq!(b.trips(), 1);
    assert_eq!(
        rejected(&b, t0 + Duration::from_secs(10)),
        Duration::from_secs(50)
    );
    // After 60 s one probe goes through, a second is held back.
    let probe = allowed(&b, t0 + Duration::from_secs(60));
    assert_eq!(b.state(), BreakerState::HalfOpen);
    assert_eq!(
        rejected(&b, t0 + Duration::from_secs(60)),
        Duration::from_secs(1)
    );
    probe.record(true, t0 + Duration::from_secs(61));
    assert_eq!(b.state(), BreakerState::Closed);
    assert_eq!(b.trips(), 1);
    assert_eq!(b.recoveries(), 1);
}

#[test]
fn a_failed_probe_reopens() {
    let b = Breaker::new(BreakerConfig::default());
    let t0 = Instant::now();
    fail(&b, t0, 5);
    let t1 = t0 + Duration::from_secs(60);
    allowed(&b, t1).record(false, t1);
    assert_eq!(b.state(), BreakerState::Open);
    assert_eq!(b.trips(), 2);
    assert_eq!(
        rejected(&b, t1 + Duration::from_secs(1)),
        Duration::from_secs(59)
    );
}

#[test]
fn a_success_resets_the_consecutive_count() {
    let b = Breaker::new(BreakerConfig::default());
    let t0 = Instant::now();
    fail(&b, t0, 4);
    allowed(&b, t0).record(true, t0);
    fail(&b, t0, 4);
    assert_eq!(b.state(), BreakerState::Closed);
}

#[test]
fn a_dropped_probe_frees_its_slot() {
    let b = Breaker::new(BreakerConfig::try_new(1, Duration::from_secs(5), 1).unwrap());
    let t0 = Instant::now();
    fail(&b, t0, 1);
    let t1 = t0 + Duration::from_secs(5);
    drop(allowed(&b, t1));
    allowed(&b, t1).record(true, t1);
    assert_eq!(b.state(), BreakerState::Closed);
}

#[test]
fn failure_rate_window_with_minimum_calls() {
    let config = BreakerConfig::try_new(100, Duration::from_secs(30), 2)
        .unwrap()
        .with_failure_rate(FailureRate::try_new(10, 6, 0.5).unwrap());
    let b = Breaker::new(config);
    let t0 = Instant::now();
    // 3 failures out of 5 calls: over 50 % but under the minimum of 6 calls.
    for ok in [false, true, false, true, false] {
        allowed(&b, t0).record(ok, t0);
    }
    assert_eq!(b.state(), BreakerState::Closed);
    allowed(&b, t0).record(false, t0);
    assert_eq!(b.state(), BreakerState::Open);
    // Two probes allowed in half-open.
    let t1 = t0 + Duration::from_secs(30);
    let _p1 = allowed(&b, t1);
    let _p2 = allowed(&b, t1);
    rejected(&b, t1);
}

#[test]
fn manual_reset_closes() {
    let b = Breaker::new(BreakerConfig::default());
    let t0 = Instant::now();
    fail(&b, t0, 5);
    b.reset();
    assert_eq!(b.state(), BreakerState::Closed);
    assert_eq!(b.recoveries(), 1);
    fail(&b, t0, 4);
    assert_eq!(b.state(), BreakerState::Closed);
    b.reset();
    assert_eq!(b.recoveries(), 1, "it was not open");
}

#[test]
fn bad_configs_are_rejected() {
    assert!(BreakerConfig::try_new(0, Duration::from_secs(1), 1).is_err());
    assert!(BreakerConfig::try_new(1, Duration::ZERO, 1).is_err());
    assert!(BreakerConfig::try_new(1, Duration::from_secs(1), 0).is_err());
    assert!(FailureRate::try_new(10, 11, 0.5).is_err());
    assert!(FailureRate::try_new(10, 5, 0.0).is_err());
}

/// Open "until reset" (`Duration::MAX`): opening does not overflow the
/// clock, and the breaker stays open.
#[test]
fn the_longest_open_for_stays_open() {
    let b = Breaker::new(BreakerConfig::try_new(1, Duration::MAX, 1).unwrap());
    let t0 = Instant::now();
    fail(&b, t0, 1);
    assert_eq!(b.state(), BreakerState::Open);
    assert!(rejected(&b, t0 + Duration::from_secs(86_400 * 365)) > Duration::from_secs(86_400));
}

/// Regression: a probe permit from an earlier half-open period, dropped
/// later, freed a slot of the current one (3 probes against a limit of 2).
#[test]
fn a_stale_probe_frees_no_slot_of_a_later_half_open() {
    let b = Breaker::new(BreakerConfig::try_new(1, Duration::from_secs(5), 2).unwrap());
    let t0 = Instant::now();
    fail(&b, t0, 1);
    let t1 = t0 + Duration::from_secs(5);
    let p1 = allowed(&b, t1);
    let p2 = allowed(&b, t1);
    p1.record(false, t1);
    assert_eq!(b.state(), BreakerState::Open);
    let t2 = t1 + Duration::from_secs(5);
    let _p3 = allowed(&b, t2);
    drop(p2);
    let _p4 = allowed(&b, t2);
    rejected(&b, t2);
}

/// Regression: a stale probe's result decided the current half-open
/// period.
#[test]
fn a_stale_probe_result_does_not_close_a_later_half_open() {
    let b = Breaker::new(BreakerConfig::try_new(1, Duration::from_secs(5), 2).unwrap());
    let t0 = Instant::now();
    fail(&b, t0, 1);
    let t1 = t0 + Duration::from_secs(5);
    let p1 = allowed(&b, t1);
    let p2 = allowed(&b, t1);
    p1.record(false, t1);
    let t2 = t1 + Duration::from_secs(5);
    let p3 = allowed(&b, t2);
    p2.record(true, t2);
    assert_eq!(
        b.state(),
        BreakerState::HalfOpen,
        "p2 belongs to the last period"
    );
    p3.record(true, t2);
    assert_eq!(b.state(), BreakerState::Closed);
}

/// Regression: after a manual reset, a probe from before it freed a slot
/// of the next half-open period (even with a single probe allowed).
#[test]
fn a_probe_from_before_a_reset_is_stale() {
    let b = Breaker::new(BreakerConfig::try_new(1, Duration::from_secs(5), 1).unwrap());
    let t0 = Instant::now();
    fail(&b, t0, 1);
    let t1 = t0 + Duration::from_secs(5);
    let p1 = allowed(&b, t1);
    b.reset();
    fail(&b, t1, 1);
    let t2 = t1 + Duration::from_secs(5);
    let p2 = allowed(&b, t2);
    drop(p1);
    rejected(&b, t2);
    p2.record(false, t2);
    assert_eq!(b.state(), BreakerState::Open);
}

/// Regression: the failure of a call admitted before the breaker opened,
/// reported once it had closed again, counted in the new closed period
/// and opened it early (here after one failure of the new period's two).
#[test]
fn a_failure_from_before_the_breaker_opened_does_not_count_after_it_closed() {
    let b = Breaker::new(BreakerConfig::try_new(2, Duration::from_secs(5), 1).unwrap());
    let t0 = Instant::now();
    let stale = allowed(&b, t0);
    fail(&b, t0, 2);
    assert_eq!(b.state(), BreakerState::Open);
    let t1 = t0 + Duration::from_secs(5);
    allowed(&b, t1).record(true, t1);
    assert_eq!(b.state(), BreakerState::Closed);
    stale.record(false, t1);
    fail(&b, t1, 1);
    assert_eq!(
        b.state(),
        BreakerState::Closed,
        "one failure of this period"
    );
    // Nor does a stale success reset the new period's count.
    let stale = allowed(&b, t1);
    b.reset();
    fail(&b, t1, 1);
    stale.record(true, t1);
    fail(&b, t1, 1);
    assert_eq!(b.state(), BreakerState::Open, "two failures of this period");
}

/// The same with a failure-rate window: a stale failure is not in the new
/// period's window.
#[test]
fn a_stale_failure_is_not_in_the_next_periods_window() {
    let config = BreakerConfig::try_new(100, Duration::from_secs(5), 1)
        .unwrap()
        .with_failure_rate(FailureRate::try_new(4, 2, 0.5).unwrap());
    let b = Breaker::new(config);
    let t0 = Instant::now();
    let stale = allowed(&b, t0);
    fail(&b, t0, 2);
    assert_eq!(b.state(), BreakerState::Open);
    let t1 = t0 + Duration::from_secs(5);
    allowed(&b, t1).record(true, t1);
    allowed(&b, t1).record(true, t1);
    stale.record(false, t1);
    allowed(&b, t1).record(false, t1);
    // The probe closed it; 1 failure in 2 calls of this period: not
    // over 50 %.
    assert_eq!(b.state(), BreakerState::Closed);
}

/// Half-open with its probes out, a call is told to wait until the last
/// probe's timeout (the probes are over by then), not 1 s; past it (a
/// probe that cannot be interrupted), or not knowing it, 1 s.
#[test]
fn a_half_open_rejection_waits_until_the_probes_are_over() {
    let config = BreakerConfig::try_new(1, Duration::from_secs(5), 2).unwrap();
    let b = Breaker::new(config).with_probe_timeout(Duration::from_secs(30));
    let t0 = Instant::now();
    fail(&b, t0, 1);
    let t1 = t0 + Duration::from_secs(5);
    let p1 = allowed(&b, t1);
    let _p2 = allowed(&b, t1 + Duration::from_secs(4));
    assert_eq!(
        rejected(&b, t1 + Duration::from_secs(10)),
        Duration::from_secs(24)
    );
    assert_eq!(
        rejected(&b, t1 + Duration::from_secs(60)),
        Duration::from_secs(1)
    );
    // A new half-open period forgets the last one's probes.
    p1.record(false, t1 + Duration::from_secs(60));
    let t2 = t1 + Duration::from_secs(65);
    let _p3 = allowed(&b, t2);
    let _p4 = allowed(&b, t2);
    assert_eq!(rejected(&b, t2), Duration::from_secs(30));

    let b = Breaker::new(config);
    fail(&b, t0, 1);
    let _p1 = allowed(&b, t1);
    let _p2 = allowed(&b, t1);
    assert_eq!(rejected(&b, t1), Duration::from_secs(1));
}
