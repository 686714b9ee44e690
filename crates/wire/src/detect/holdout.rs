//! Leave-one-source-out evaluation: each source (a repository of real
//! transcripts) is held out in turn, the detector is built from the other
//! sources only, and scored on the held-out one.
//!
//! The built-in rules learn nothing from data, so the detector built
//! without a source is the same for every source; the procedure still
//! goes through [`leave_one_source_out`]'s `build` hook so that anything
//! fitted to data (extra patterns chosen from mistakes, a learned model)
//! is measured honestly: it never sees the source it is scored on.

use serde::{Deserialize, Serialize};

use super::Detector;
use super::eval::{EvalError, EvalReport, Scores, evaluate};

/// One source's scores when it was held out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldOut {
    /// The held-out source repository (`github:owner/repo`).
    pub source: String,
    /// The detector's scores on it.
    pub detector: Scores,
    /// The naive baseline's scores on it, for comparison.
    pub naive: Scores,
}

#[derive(Deserialize)]
struct SourceOnly {
    source: String,
}

/// Split labelled JSONL files into per-source JSONL, hold each source out
/// in turn, build the detector with `build` from the *other* sources'
/// rows, and score it on the held-out rows. Sources are listed by name.
pub fn leave_one_source_out(
    files: &[Vec<u8>],
    build: &dyn Fn(&[&[u8]]) -> Detector,
) -> Result<Vec<HeldOut>, EvalError> {
    let mut by_source: Vec<(String, Vec<u8>)> = Vec::new();
    for file in files {
        for (i, raw) in file.split(|b| *b == b'\n').enumerate() {
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let row: SourceOnly =
                serde_json::from_slice(raw).map_err(|source| EvalError::BadLine {
                    line: i + 1,
                    source,
                })?;
            let repo = super::eval::repository(&row.source).to_owned();
            let slot = match by_source.iter().position(|(s, _)| *s == repo) {
                Some(k) => k,
                None => {
                    by_source.push((repo, Vec::new()));
                    by_source.len() - 1
                }
            };
            let rows = &mut by_source[slot].1;
            rows.extend_from_slice(raw);
            rows.push(b'\n');
        }
    }
    if by_source.is_empty() {
        return Err(EvalError::Empty);
    }
    by_source.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(by_source.len());
    for (k, (source, rows)) in by_source.iter().enumerate() {
        let others: Vec<&[u8]> = by_source
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != k)
            .map(|(_, (_, r))| r.as_slice())
            .collect();
        let detector = build(&others);
        let ours: EvalReport = evaluate(rows, &detector)?;
        let naive = evaluate(rows, &Detector::naive())?;
        out.push(HeldOut {
            source: source.clone(),
            detector: named(ours.overall, source),
            naive: named(naive.overall, source),
        });
    }
    Ok(out)
}

fn named(mut s: Scores, source: &str) -> Scores {
    s.group = source.to_owned();
    s
}
