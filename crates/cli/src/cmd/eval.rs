//! `toolwarden eval-detector`: precision, recall and F1 of the failure
//! detector on a labelled JSONL file (the corpus format), beside the naive
//! rule other gateways use.

use std::path::PathBuf;

use serde_json::json;
use toolwarden_wire::detect::{Detector, DetectorConfig, eval, holdout};

use super::{CmdError, Outcome};
use crate::input;

/// Read every file, each ending with a newline so they concatenate as
/// JSONL.
fn read_all(files: &[PathBuf]) -> Result<Vec<Vec<u8>>, CmdError> {
    files
        .iter()
        .map(|f| {
            let mut body = input::read(f).map_err(CmdError)?;
            if body.last().is_some_and(|b| *b != b'\n') {
                body.push(b'\n');
            }
            Ok(body)
        })
        .collect()
}

fn label(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    names.join(", ")
}

/// Run the evaluation on the files taken together.
pub fn run(
    files: &[PathBuf],
    config: &DetectorConfig,
    as_json: bool,
    show_mistakes: bool,
) -> Result<Outcome, CmdError> {
    let body = read_all(files)?.concat();
    let detector = Detector::new(config)?;
    let ours =
        eval::evaluate(&body, &detector).map_err(|e| CmdError(format!("{}: {e}", label(files))))?;
    let naive = eval::evaluate(&body, &Detector::naive())
        .map_err(|e| CmdError(format!("{}: {e}", label(files))))?;
    if as_json {
        outln!("{}", json!({ "detector": ours, "naive": naive }));
        return Ok(Outcome::Ok);
    }
    outln!(
        "{:<28} {:>6} {:>5} | {:>9} {:>7} {:>6} | {:>9} {:>7} {:>6}",
        "group",
        "rows",
        "fail",
        "precision",
        "recall",
        "F1",
        "naive P",
        "naive R",
        "F1"
    );
    let groups = std::iter::once(&ours.overall)
        .chain(&ours.by_provider)
        .chain(&ours.by_source);
    for g in groups {
        let n = std::iter::once(&naive.overall)
            .chain(&naive.by_provider)
            .chain(&naive.by_source)
            .find(|s| s.group == g.group);
        outln!(
            "{:<28} {:>6} {:>5} | {:>9} {:>7} {:>6} | {:>9} {:>7} {:>6}",
            g.group,
            g.rows,
            g.tp + g.fn_,
            pct(g.precision),
            pct(g.recall),
            pct(g.f1),
            pct(n.and_then(|n| n.precision)),
            pct(n.and_then(|n| n.recall)),
            pct(n.and_then(|n| n.f1)),
        );
    }
    if show_mistakes {
        outln!("\nmisclassified rows:");
        for m in &ours.mistakes {
            outln!(
                "  line {:>5} {:<9} {} {:<22} {}",
                m.line,
                m.provider,
                if m.is_error { "missed" } else { "false+" },
                m.rule.as_deref().unwrap_or(""),
                m.excerpt
            );
        }
    }
    Ok(Outcome::Ok)
}

/// Leave-one-source-out: every source repository held out in turn. The
/// built-in rules and the configured patterns are fixed (nothing is fitted
/// to the other sources), so the detector is the same for each; the
/// held-out scores are what a source the rules were never tuned on gets.
pub fn run_leave_one_out(
    files: &[PathBuf],
    config: &DetectorConfig,
    as_json: bool,
) -> Result<Outcome, CmdError> {
    let bodies = read_all(files)?;
    let detector = Detector::new(config)?;
    let held = holdout::leave_one_source_out(&bodies, &|_others| detector.clone())
        .map_err(|e| CmdError(format!("{}: {e}", label(files))))?;
    if as_json {
        outln!("{}", json!({ "leave_one_source_out": held }));
        return Ok(Outcome::Ok);
    }
    outln!(
        "{:<44} {:>6} {:>5} | {:>9} {:>7} | {:>9} {:>7}",
        "held-out source",
        "rows",
        "fail",
        "precision",
        "recall",
        "naive P",
        "naive R"
    );
    for h in &held {
        let d = &h.detector;
        outln!(
            "{:<44} {:>6} {:>5} | {:>9} {:>7} | {:>9} {:>7}",
            h.source,
            d.rows,
            d.tp + d.fn_,
            pct(d.precision),
            pct(d.recall),
            pct(h.naive.precision),
            pct(h.naive.recall),
        );
    }
    Ok(Outcome::Ok)
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}
