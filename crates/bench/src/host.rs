//! What the host did to a run's numbers, printed under the table: the CPU
//! time the hypervisor took from this machine while the bench ran (steal,
//! from `/proc/stat`), and how an idle CPU waits for work. On a KVM guest
//! whose idle driver is `haltpoll` with `guest_halt_poll_ns` at 0, an idle
//! CPU halts at once and its next wake-up goes through the host, which
//! about doubled every child's CPU per request at one connection on the
//! machine BENCHMARKS.md measures ("The one-connection gap and the
//! CPU's idle"). Linux only; elsewhere, or where a file is missing, the
//! line says so instead.

use std::fs;

/// The whole machine's CPU time since boot, in ticks (`/proc/stat`'s `cpu`
/// line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuTimes {
    /// Every state's ticks (the guest columns are already in `user`).
    pub total: u64,
    /// Ticks the hypervisor ran something else while this machine wanted
    /// to run.
    pub steal: u64,
}

impl CpuTimes {
    /// Now, or `None` where `/proc/stat` cannot be read.
    pub(crate) fn now() -> Option<Self> {
        let stat = fs::read_to_string("/proc/stat").ok()?;
        parse_cpu_line(stat.lines().next()?)
    }

    /// The share of the CPU time between `self` and `later` the host took,
    /// in percent.
    pub(crate) fn steal_percent(self, later: Self) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        let steal = later.steal.checked_sub(self.steal)?;
        (total > 0).then(|| 100.0 * steal as f64 / total as f64)
    }
}

/// `/proc/stat`'s aggregate line: `cpu  user nice system idle iowait irq
/// softirq steal guest guest_nice` (kernels before 2.6.11 stop before
/// `steal`: none is counted then).
fn parse_cpu_line(line: &str) -> Option<CpuTimes> {
    let mut fields = line.split_ascii_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let ticks: Vec<u64> = fields.map(|f| f.parse().ok()).collect::<Option<_>>()?;
    if ticks.len() < 4 {
        return None;
    }
    // `guest` and `guest_nice` are counted in `user` and `nice` already.
    let states = &ticks[..ticks.len().min(8)];
    let total = states.iter().try_fold(0u64, |sum, t| sum.checked_add(*t))?;
    Some(CpuTimes {
        total,
        steal: states.get(7).copied().unwrap_or(0),
    })
}

/// How an idle CPU waits: the idle driver, and with `haltpoll` how long it
/// polls before it halts.
fn idle_wait() -> String {
    let driver = fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver");
    let Ok(driver) = driver else {
        return "idle driver unknown".into();
    };
    let driver = driver.trim();
    if driver != "haltpoll" {
        return format!("idle driver {driver}");
    }
    let Ok(ns) = fs::read_to_string("/sys/module/haltpoll/parameters/guest_halt_poll_ns") else {
        return "idle driver haltpoll".into();
    };
    let ns = ns.trim();
    let meaning = if ns == "0" {
        "an idle CPU halts at once; its wake-up goes through the host"
    } else {
        "an idle CPU polls that long before it halts"
    };
    format!("idle driver haltpoll, guest_halt_poll_ns {ns} ({meaning})")
}

/// The line under the table: steal over the run and the idle wait.
pub(crate) fn describe(before: Option<CpuTimes>, after: Option<CpuTimes>) -> String {
    let steal = match before.zip(after).and_then(|(b, a)| b.steal_percent(a)) {
        Some(p) => format!("steal {p:.1} % of the CPU time over the run"),
        None => "steal unknown".into(),
    };
    format!("Host: {steal}; {}.", idle_wait())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_aggregate_line() {
        let t = parse_cpu_line("cpu  952724 2940 136678 3381651 7176 0 15184 25088 0 0").unwrap();
        assert_eq!(t.steal, 25088);
        assert_eq!(
            t.total,
            952724 + 2940 + 136678 + 3381651 + 7176 + 15184 + 25088
        );
        // An old kernel's line, without steal.
        let old = parse_cpu_line("cpu 10 0 5 100").unwrap();
        assert_eq!((old.total, old.steal), (115, 0));
    }

    #[test]
    fn refuses_what_is_not_the_aggregate_line() {
        for line in [
            "",
            "cpu0 1 2 3 4 5 6 7 8",
            "cpu 1 2 x 4",
            "cpu 1 2",
            "intr 5 6 7 8",
        ] {
            assert_eq!(parse_cpu_line(line), None, "{line:?}");
        }
    }

    #[test]
    fn steal_is_a_share_of_the_interval() {
        let a = CpuTimes {
            total: 1_000,
            steal: 10,
        };
        let b = CpuTimes {
            total: 1_200,
            steal: 15,
        };
        assert_eq!(a.steal_percent(b), Some(2.5));
        assert_eq!(a.steal_percent(a), None);
        assert_eq!(b.steal_percent(a), None);
    }

    proptest::proptest! {
        /// Any line: a value or `None`, never a panic; a well-formed line
        /// reads back what was written.
        #[test]
        fn any_line_is_read_or_refused(line in "\\PC{0,80}",
                                      ticks in proptest::collection::vec(0u64..1 << 40, 4..11)) {
            let _ = parse_cpu_line(&line);
            let text = format!("cpu  {}", ticks.iter().map(u64::to_string).collect::<Vec<_>>().join(" "));
            let t = parse_cpu_line(&text).unwrap();
            proptest::prop_assert_eq!(t.total, ticks.iter().take(8).sum::<u64>());
            proptest::prop_assert_eq!(t.steal, ticks.get(7).copied().unwrap_or(0));
        }
    }
}
