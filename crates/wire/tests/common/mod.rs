//! What the wire crate's timing tests share.

use std::time::{Duration, Instant};

/// The CPU time this thread has had, in nanoseconds since it started
/// (`/proc/thread-self/schedstat`'s first field); `None` where the system
/// does not say.
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// What `work` gave and how long it took: in the thread's CPU time when
/// known, else by the wall clock. CPU time, since under load (CI's two
/// cores, other builds) a short run fits in one time slice while a longer
/// one also waits for other processes, and wall-clock ratios went 3–5
/// times past what the code costs.
pub fn timed<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let (cpu, wall) = (thread_cpu_time(), Instant::now());
    let out = work();
    let took = match (cpu, thread_cpu_time()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => wall.elapsed(),
    };
    (out, took)
}

/// How long one run of `work` takes, averaged over as many runs as fill
/// at least `span`: this VM's thread CPU time advances in scheduler ticks
/// (4 ms at `CONFIG_HZ=250`), so a single run of a few milliseconds read
/// as 4 or 8 ms, and a ratio of two such runs was off by up to 2x.
pub fn timed_per_run(span: Duration, mut work: impl FnMut()) -> Duration {
    let (mut total, mut runs) = (Duration::ZERO, 0u32);
    while total < span {
        total += timed(&mut work).1;
        runs += 1;
    }
    total / runs
}

/// The clock [`timed`] reads here, for the tests' output.
pub fn clock() -> &'static str {
    if thread_cpu_time().is_some() {
        "CPU time"
    } else {
        "wall clock"
    }
}
