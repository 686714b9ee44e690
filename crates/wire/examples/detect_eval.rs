//! Evaluate the content detector (and the naive baseline) on a JSONL file in
//! the corpus format, and time it.
//!
//! `cargo run --release -p toolwarden-wire --example detect_eval -- FILE`

use std::time::Instant;

use toolwarden_wire::detect::{Detector, eval};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: detect_eval FILE.jsonl")?;
    let bytes = std::fs::read(&path)?;
    for (name, detector) in [
        ("detector", Detector::default()),
        ("naive", Detector::naive()),
    ] {
        let report = eval::evaluate(&bytes, &detector)?;
        println!("== {name}\n{report}");
    }
    // Timing: every row's content, many rounds, rules vs. the naive baseline.
    let contents: Vec<String> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(serde_json::from_slice::<serde_json::Value>)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter_map(|v| v.get("content")?.as_str().map(str::to_owned))
        .collect();
    let rounds = 200;
    for (name, detector) in [
        ("detector", Detector::default()),
        ("naive", Detector::naive()),
    ] {
        let mut hits = 0usize;
        let t = Instant::now();
        for _ in 0..rounds {
            for c in &contents {
                hits += usize::from(detector.is_failure(std::hint::black_box(c)));
            }
        }
        let ns = t.elapsed().as_nanos() as f64 / (rounds * contents.len()) as f64;
        println!("{name}: {ns:.0} ns/result ({hits} hits)");
    }
    Ok(())
}
