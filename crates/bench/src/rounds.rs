//! `--rounds N`: issue 14's ratios to floor 0, taken N times in alternated
//! rounds, with their median and range.
//!
//! The main phases measure each process once, one after the other, so a
//! host that slows down between two of them moves a ratio by itself (on
//! the 2-CPU VM, rounds of the same 32-connection load read 1.17× to
//! 2.60× floor 0). Here every round measures the recording gateway, floor 0 and
//! the gateway without recording back to back, in an order that rotates
//! from round to round, on the same requests (and, at many connections,
//! the direct connection for the throughput's ratio); CPU from the scheduler's
//! accounting (ns, [`GatewayChild::cpu_secs_fine`]), not clock ticks, so
//! a round of a few thousand requests is not rounded to 10 ms.

use std::net::SocketAddr;

use crate::{
    Row,
    child::{GatewayChild, ThreadsCpu},
    load::{Shape, percentile_ms, sequential, throughput},
    settle,
};

/// The processes a round measures.
pub(crate) struct Sides<'a> {
    pub(crate) direct: SocketAddr,
    pub(crate) gateway: &'a GatewayChild,
    /// Whether `gateway` records (`--record on|sqlite`): its CPU is then
    /// read after its checkpoint too ([`settle`]).
    pub(crate) gateway_records: bool,
    pub(crate) floor0: &'a GatewayChild,
    pub(crate) unrecorded: Option<&'a GatewayChild>,
}

/// How much load a round puts on each process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Load {
    /// Sequential requests at one connection.
    pub(crate) sequential: usize,
    /// Requests at `conns` connections.
    pub(crate) concurrent: usize,
    pub(crate) conns: usize,
}

/// One round's figures.
#[derive(Debug, Clone, Copy)]
struct Round {
    /// The gateway's CPU per request over floor 0's, at one connection.
    cpu_one: f64,
    /// The same at `conns` connections.
    cpu_many: f64,
    /// The gateway without recording over floor 0, at one connection and
    /// at `conns`.
    unrecorded: Option<(f64, f64)>,
    /// The gateway's p50 minus floor 0's at one connection (ms): its added
    /// p50 minus floor 0's added p50, both against the same direct block.
    added_over_floor0_ms: f64,
    /// The gateway's requests per second at `conns` connections over the
    /// direct connection's.
    throughput: f64,
    /// The recording gateway's CPU µs per request at `conns` connections
    /// by thread role (`None` without `/proc/PID/task`).
    by_thread: Option<ThreadsCpu>,
    /// The same for the gateway without recording (`None` when it is not
    /// in the rounds).
    unrecorded_by_thread: Option<ThreadsCpu>,
}

/// Median, least and greatest of a round's figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

/// The spread of `values`, `None` when there are none (or any is NaN: a
/// figure that could not be measured is not averaged away). An even count's
/// median is the mean of the middle two.
pub(crate) fn spread(values: &[f64]) -> Option<Spread> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    let median = if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    };
    Some(Spread {
        median,
        min: v[0],
        max: v[v.len() - 1],
    })
}

/// Runs `rounds` rounds of `load` with `shape` and returns their rows.
pub(crate) async fn run(
    sides: &Sides<'_>,
    shape: &Shape,
    load: Load,
    rounds: usize,
) -> Result<Vec<Row>, String> {
    let mut done = Vec::with_capacity(rounds);
    for r in 0..rounds {
        done.push(round(sides, shape, load, r).await?);
    }
    Ok(rows(&done, load, rounds))
}

/// The processes in round `r`'s order: each goes first in turn.
fn order(r: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (r + k) % n)
}

async fn round(sides: &Sides<'_>, shape: &Shape, load: Load, r: usize) -> Result<Round, String> {
    let mut procs = vec![sides.gateway, sides.floor0];
    procs.extend(sides.unrecorded);
    let mut cpu_one = vec![0.0; procs.len()];
    let mut cpu_many = vec![0.0; procs.len()];
    let mut p50 = vec![0.0; procs.len()];
    let session = |i: usize| Some(format!("round{r}-{}", i / 4));
    // The direct block first: the mock warm for all three.
    sequential(sides.direct, shape, load.sequential.min(200), &session).await?;
    for k in order(r, procs.len()) {
        let child = procs[k];
        let start = child.cpu_secs_fine();
        let (mut totals, _) = sequential(child.addr, shape, load.sequential, &session).await?;
        settle(k == 0 && sides.gateway_records).await;
        cpu_one[k] = per_request_us(child.cpu_secs_fine() - start, totals.len());
        p50[k] = percentile_ms(&mut totals, 50.0);
    }
    // At `conns` connections the direct connection takes its turn too, for
    // the throughput's ratio.
    let mut tp = vec![0.0; procs.len() + 1];
    let mut by_thread = vec![None; procs.len()];
    for k in order(r, procs.len() + 1) {
        let prefix = format!("round{r}-tp");
        let Some(&child) = procs.get(k) else {
            tp[k] = throughput(sides.direct, shape, load.conns, load.concurrent, &prefix).await?;
            continue;
        };
        let start = child.cpu_secs_fine();
        let threads = ThreadsCpu::of(child.pid());
        tp[k] = throughput(child.addr, shape, load.conns, load.concurrent, &prefix).await?;
        settle(k == 0 && sides.gateway_records).await;
        // `throughput` sends `concurrent / conns` requests on each connection.
        let sent = load.concurrent / load.conns * load.conns;
        cpu_many[k] = per_request_us(child.cpu_secs_fine() - start, sent);
        by_thread[k] = threads
            .zip(ThreadsCpu::of(child.pid()))
            .map(|(before, after)| after.per_request_us(before, sent));
    }
    Ok(Round {
        cpu_one: cpu_one[0] / cpu_one[1],
        cpu_many: cpu_many[0] / cpu_many[1],
        unrecorded: (procs.len() > 2).then(|| (cpu_one[2] / cpu_one[1], cpu_many[2] / cpu_many[1])),
        added_over_floor0_ms: p50[0] - p50[1],
        throughput: tp[0] / tp[procs.len()],
        by_thread: by_thread[0],
        unrecorded_by_thread: by_thread.get(2).copied().flatten(),
    })
}

/// The medians over the rounds of the proxy workers', the control
/// runtime's and SQLite's threads' CPU per request.
fn thread_medians(by: &[ThreadsCpu]) -> [f64; 3] {
    let median = |f: fn(&ThreadsCpu) -> f64| {
        spread(&by.iter().map(f).collect::<Vec<_>>()).map_or(f64::NAN, |s| s.median)
    };
    [
        median(|t| t.proxy),
        median(|t| t.control),
        median(|t| t.sqlite),
    ]
}

fn per_request_us(cpu_secs: f64, requests: usize) -> f64 {
    cpu_secs * 1e6 / requests.max(1) as f64
}

fn rows(done: &[Round], load: Load, rounds: usize) -> Vec<Row> {
    let ratio = |v: f64| format!("{v:.2}×");
    let added = |v: f64| format!("{:+.3} ms", v);
    let row = |what: String, values: Vec<f64>, show: &dyn Fn(f64) -> String, target| {
        let (gateway, delta) = match spread(&values) {
            Some(s) => (
                show(s.median),
                format!(
                    "median; range {} – {} (rounds: {})",
                    show(s.min),
                    show(s.max),
                    values
                        .iter()
                        .map(|&v| show(v))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            None => ("–".into(), "not measured".into()),
        };
        Row {
            what,
            direct: "–".into(),
            gateway,
            delta,
            target,
        }
    };
    let of = |f: fn(&Round) -> f64| done.iter().map(f).collect::<Vec<_>>();
    let mut out = vec![
        row(
            format!(
                "CPU per request ÷ floor 0's, 1 connection, {rounds} alternated rounds of {} requests",
                load.sequential
            ),
            of(|r| r.cpu_one),
            &ratio,
            "≤ 2×",
        ),
        row(
            format!(
                "CPU per request ÷ floor 0's, {} connections, {rounds} alternated rounds of {} requests",
                load.conns, load.concurrent
            ),
            of(|r| r.cpu_many),
            &ratio,
            "≤ 1.5×",
        ),
        row(
            format!(
                "added p50 over floor 0's, 1 connection (the gateway's p50 − floor 0's), {rounds} rounds"
            ),
            of(|r| r.added_over_floor0_ms),
            &added,
            "≤ +0.030 ms",
        ),
        row(
            format!(
                "throughput at {} connections ÷ direct's, the same rounds",
                load.conns
            ),
            of(|r| r.throughput),
            &ratio,
            "≥ 0.6×",
        ),
    ];
    let by_thread: Option<Vec<ThreadsCpu>> = done.iter().map(|r| r.by_thread).collect();
    if let Some(by) = by_thread {
        let [proxy, control, sqlite] = thread_medians(&by);
        out.push(Row {
            what: format!(
                "the recording gateway's CPU per request by thread at {} connections, median of the rounds: proxy workers / the control runtime (the recorder's task) / SQLite's connection threads",
                load.conns
            ),
            direct: "–".into(),
            gateway: format!("{proxy:.1} / {control:.1} / {sqlite:.1} µs"),
            delta: "live threads' time (`/proc/PID/task/*/sched`)".into(),
            target: "reference",
        });
    }
    let unrecorded_by_thread: Option<Vec<ThreadsCpu>> =
        done.iter().map(|r| r.unrecorded_by_thread).collect();
    if let Some(by) = unrecorded_by_thread {
        let [proxy, control, _] = thread_medians(&by);
        out.push(Row {
            what: format!(
                "the gateway without recording: CPU per request by thread at {} connections, median of the rounds: proxy workers / the control runtime",
                load.conns
            ),
            direct: "–".into(),
            gateway: format!("{proxy:.1} / {control:.1} µs"),
            delta: "live threads' time; the same traffic as the row above".into(),
            target: "reference",
        });
    }
    let unrecorded: Option<Vec<(f64, f64)>> = done.iter().map(|r| r.unrecorded).collect();
    if let Some(values) = unrecorded {
        let (one, many): (Vec<f64>, Vec<f64>) = values.into_iter().unzip();
        for (at, values) in [
            ("1 connection".to_string(), one),
            (format!("{} connections", load.conns), many),
        ] {
            out.push(row(
                format!("the gateway without recording: CPU per request ÷ floor 0's, {at}, the same rounds"),
                values,
                &ratio,
                "reference",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_spread_of_odd_and_even_counts() {
        let s = spread(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        let s = spread(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn every_process_goes_first_in_turn() {
        let firsts: Vec<usize> = (0..3).map(|r| order(r, 3).next().unwrap()).collect();
        assert_eq!(firsts, [0, 1, 2]);
        for r in 0..5 {
            let mut o: Vec<usize> = order(r, 3).collect();
            o.sort();
            assert_eq!(o, [0, 1, 2]);
        }
    }

    #[test]
    fn rows_show_the_median_and_each_round() {
        let round = |c: f64| Round {
            cpu_one: c,
            cpu_many: c / 2.0,
            unrecorded: None,
            added_over_floor0_ms: 0.01 * c,
            throughput: c / 8.0,
            by_thread: Some(ThreadsCpu {
                proxy: 10.0 * c,
                sqlite: c,
                control: c / 4.0,
            }),
            unrecorded_by_thread: None,
        };
        let load = Load {
            sequential: 100,
            concurrent: 320,
            conns: 32,
        };
        let out = rows(&[round(4.0), round(3.0), round(5.0)], load, 3);
        assert_eq!(out.len(), 5);
        assert_eq!(out[0].gateway, "4.00×");
        assert_eq!(
            out[0].delta,
            "median; range 3.00× – 5.00× (rounds: 4.00×, 3.00×, 5.00×)"
        );
        assert_eq!(out[1].gateway, "2.00×");
        assert_eq!(out[2].gateway, "+0.040 ms");
        assert_eq!(out[3].gateway, "0.50×");
        assert_eq!(out[4].gateway, "40.0 / 1.0 / 4.0 µs");
    }

    #[test]
    fn the_unrecorded_gateway_by_thread_shows_only_when_every_round_has_it() {
        let round = |c: f64, unrecorded: Option<ThreadsCpu>| Round {
            cpu_one: c,
            cpu_many: c,
            unrecorded: None,
            added_over_floor0_ms: 0.0,
            throughput: 1.0,
            by_thread: None,
            unrecorded_by_thread: unrecorded,
        };
        let threads = |proxy: f64| {
            Some(ThreadsCpu {
                proxy,
                sqlite: 0.0,
                control: proxy / 10.0,
            })
        };
        let load = Load {
            sequential: 100,
            concurrent: 320,
            conns: 32,
        };
        let all = [
            round(1.0, threads(40.0)),
            round(1.0, threads(44.0)),
            round(1.0, threads(42.0)),
        ];
        let out = rows(&all, load, 3);
        assert_eq!(out.len(), 5);
        assert!(out[4].what.contains("without recording"), "{}", out[4].what);
        assert_eq!(out[4].gateway, "42.0 / 4.2 µs");
        let one_missing = [round(1.0, threads(40.0)), round(1.0, None)];
        assert_eq!(rows(&one_missing, load, 2).len(), 4);
    }

    proptest! {
        #[test]
        fn the_median_lies_between_the_extremes(v in proptest::collection::vec(-1e6f64..1e6, 1..40)) {
            let s = spread(&v).unwrap();
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert_eq!(s.min, v.iter().copied().fold(f64::INFINITY, f64::min));
            prop_assert_eq!(s.max, v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
            let below = v.iter().filter(|&&x| x < s.median).count();
            let above = v.iter().filter(|&&x| x > s.median).count();
            prop_assert!(below <= v.len() / 2 && above <= v.len() / 2);
        }
    }
}
