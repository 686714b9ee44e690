//! Content detector throughput on the corpus's 2,300 tool results, against
//! the naive baseline rule measured in the same run.
//!
//! `cargo bench -p toolwarden-wire --bench detect`

use std::path::PathBuf;
use std::time::Instant;

use toolwarden_wire::detect::Detector;

const BENCH: &str = "bench detect";

/// A file of the recorded corpus (`TOOLWARDEN_CORPUS`, see
/// `toolwarden_testkit`); `main` has checked that the corpus is there.
fn corpus(rel: &str) -> PathBuf {
    toolwarden_testkit::corpus_dir()
        .expect("checked in main")
        .join(rel)
}

/// Best (least disturbed) ns per result over `runs` passes of `rounds`.
fn time(detector: &Detector, contents: &[String], rounds: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..rounds {
        for c in contents {
            std::hint::black_box(detector.is_failure(std::hint::black_box(c)));
        }
    }
    t.elapsed().as_nanos() as f64 / (rounds * contents.len()) as f64
}

fn main() {
    let Some(_) = toolwarden_testkit::corpus_for(BENCH) else {
        return;
    };
    let path = corpus("tool_results.jsonl");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let contents: Vec<String> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_slice(l).ok()?;
            Some(v.get("content")?.as_str()?.to_owned())
        })
        .collect();
    let ours = Detector::default();
    let naive = Detector::naive();
    // Warm up (regex caches, LazyLock), then interleave so that load on a
    // shared machine hits both alike; keep the best of each.
    time(&ours, &contents, 2);
    time(&naive, &contents, 2);
    let (mut best_ours, mut best_naive) = (f64::MAX, f64::MAX);
    for _ in 0..7 {
        best_ours = best_ours.min(time(&ours, &contents, 20));
        best_naive = best_naive.min(time(&naive, &contents, 20));
    }
    println!(
        "detect: {} results; detector {best_ours:.0} ns/result, naive baseline {best_naive:.0} ns/result; ratio detector/naive {:.2}",
        contents.len(),
        best_ours / best_naive
    );
}
