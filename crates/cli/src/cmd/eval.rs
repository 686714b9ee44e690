//! `toolwarden eval-detector`: precision, recall and F1 of the failure
//! detector on a labelled JSONL file (the corpus format), beside the naive
//! rule other gateways use.

use std::path::Path;

use serde_json::json;
use toolwarden_wire::detect::{Detector, DetectorConfig, eval};

use super::{CmdError, Outcome};
use crate::input;

/// Run the evaluation.
pub fn run(
    file: &Path,
    config: &DetectorConfig,
    as_json: bool,
    show_mistakes: bool,
) -> Result<Outcome, CmdError> {
    let body = input::read(file).map_err(CmdError)?;
    let detector = Detector::new(config)?;
    let ours = eval::evaluate(&body, &detector)
        .map_err(|e| CmdError(format!("{}: {e}", file.display())))?;
    let naive = eval::evaluate(&body, &Detector::naive())
        .map_err(|e| CmdError(format!("{}: {e}", file.display())))?;
    if as_json {
        println!("{}", json!({ "detector": ours, "naive": naive }));
        return Ok(Outcome::Ok);
    }
    println!(
        "{:<28} {:>6} {:>5} | {:>9} {:>7} {:>6} | {:>9} {:>7} {:>6}",
        "group", "rows", "fail", "precision", "recall", "F1", "naive P", "naive R", "F1"
    );
    let groups = std::iter::once(&ours.overall)
        .chain(&ours.by_provider)
        .chain(&ours.by_source);
    for g in groups {
        let n = std::iter::once(&naive.overall)
            .chain(&naive.by_provider)
            .chain(&naive.by_source)
            .find(|s| s.group == g.group);
        println!(
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
        println!("\nmisclassified rows:");
        for m in &ours.mistakes {
            println!(
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

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}
