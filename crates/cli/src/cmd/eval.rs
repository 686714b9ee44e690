//! `toolwarden eval-detector`: precision, recall and F1 of the failure
//! detector on a labelled JSONL file (the corpus format), beside the naive
//! rule other gateways use.

use std::path::PathBuf;

use serde_json::json;
use toolwarden_wire::detect::{
    Detector, DetectorConfig,
    eval::{self, EvalError},
    holdout,
};

use super::{CmdError, Outcome};
use crate::{input, terminal::shown};

/// The files of one evaluation taken together: their concatenation (one
/// JSONL body, as the evaluation reads it) and where each file starts in
/// it, so that a line of the concatenation is named by its own file.
#[derive(Debug)]
struct Inputs {
    body: Vec<u8>,
    /// Each file's name and the line of `body` its first line is.
    starts: Vec<(String, usize)>,
}

/// The most `eval-detector` reads of its files together (256 MiB, as of
/// one file, [`input::MAX_INPUT`]): they are evaluated as one body, and
/// each was bounded while their total was not (`eval-detector *.jsonl`
/// over a folder of large files held them all in memory, twice).
pub const MAX_EVAL_INPUT: u64 = input::MAX_INPUT;

/// Read every file, each ending with a newline so they concatenate as
/// JSONL: at most `limit` bytes together, else an error saying so (before
/// anything is read when the files' sizes say it; standard input is
/// counted as it is read).
fn read_all(files: &[PathBuf], limit: u64) -> Result<Vec<Vec<u8>>, CmdError> {
    let over = |what: String| {
        CmdError(format!(
            "{what}: eval-detector reads at most {limit} bytes of its files together; \
             evaluate fewer at a time"
        ))
    };
    let sizes = files
        .iter()
        .filter(|f| f.as_os_str() != "-")
        .filter_map(|f| std::fs::metadata(f).ok())
        .filter(|m| m.is_file())
        .fold(0u64, |sum, m| sum.saturating_add(m.len()));
    // One file alone over the limit is named as `check` names it.
    if files.len() > 1 && sizes > limit {
        return Err(over(format!("{} hold {sizes} bytes", label(files))));
    }
    let mut left = limit;
    let mut bodies = Vec::with_capacity(files.len());
    for f in files {
        let mut body = match input::read_within(f, left) {
            Ok(body) => body,
            Err(e) if e.kind() == input::InputErrorKind::TooLarge && left < limit => {
                return Err(over(format!("{} and the files before it", f.display())));
            }
            Err(e) => return Err(e.into()),
        };
        left -= body.len() as u64;
        if body.last().is_some_and(|b| *b != b'\n') {
            body.push(b'\n');
        }
        bodies.push(body);
    }
    Ok(bodies)
}

fn label(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    names.join(", ")
}

// === impl Inputs ===

impl Inputs {
    fn read(files: &[PathBuf]) -> Result<Inputs, CmdError> {
        let mut body = Vec::new();
        let mut starts = Vec::with_capacity(files.len());
        let mut line = 1;
        for (file, text) in files.iter().zip(read_all(files, MAX_EVAL_INPUT)?) {
            starts.push((file.display().to_string(), line));
            line += text.iter().filter(|b| **b == b'\n').count();
            body.extend_from_slice(&text);
        }
        Ok(Inputs { body, starts })
    }

    /// Line `line` of the concatenation as the file holding it and the
    /// line in that file.
    fn locate(&self, line: usize) -> (&str, usize) {
        let k = self.starts.partition_point(|(_, start)| *start <= line);
        match self.starts.get(k.saturating_sub(1)) {
            Some((name, start)) => (name, line - start + 1),
            None => ("", line),
        }
    }

    /// `e` naming the file and line it is about.
    fn error(&self, e: EvalError) -> CmdError {
        match e {
            EvalError::BadLine { line, source } => {
                let (file, line) = self.locate(line);
                CmdError(format!("{file}: line {line}: {source}"))
            }
            e => {
                let names: Vec<&str> = self.starts.iter().map(|(n, _)| n.as_str()).collect();
                CmdError(format!("{}: {e}", names.join(", ")))
            }
        }
    }
}

/// Run the evaluation on the files taken together.
pub fn run(
    files: &[PathBuf],
    config: &DetectorConfig,
    as_json: bool,
    show_mistakes: bool,
) -> Result<Outcome, CmdError> {
    let inputs = Inputs::read(files)?;
    let detector = Detector::new(config)?;
    let ours = eval::evaluate(&inputs.body, &detector).map_err(|e| inputs.error(e))?;
    let naive = eval::evaluate(&inputs.body, &Detector::naive()).map_err(|e| inputs.error(e))?;
    if as_json {
        // Each mistake's line in its own file, and the file: the
        // detector's and the naive rule's alike.
        let located = |report: &eval::EvalReport| -> Result<serde_json::Value, CmdError> {
            let mut value = serde_json::to_value(report)?;
            if let Some(mistakes) = value["mistakes"].as_array_mut() {
                for (m, mistake) in mistakes.iter_mut().zip(&report.mistakes) {
                    let (file, line) = inputs.locate(mistake.line);
                    m["file"] = json!(file);
                    m["line"] = json!(line);
                }
            }
            Ok(value)
        };
        outln!(
            "{}",
            json!({ "detector": located(&ours)?, "naive": located(&naive)? })
        );
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
            let (file, line) = inputs.locate(m.line);
            outln!(
                "  {} line {:>5} {:<9} {} {:<22} {}",
                shown(file),
                line,
                shown(&m.provider),
                if m.is_error { "missed" } else { "false+" },
                m.rule.as_deref().unwrap_or(""),
                shown(&m.excerpt)
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
    let bodies = read_all(files, MAX_EVAL_INPUT)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The files together are bounded, not each alone: refused by their
    /// sizes before any is read, or as they are read (a pipe has no size).
    #[test]
    fn the_files_together_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: usize| {
            let path = dir.path().join(name);
            std::fs::write(&path, vec![b'x'; bytes]).unwrap();
            path
        };
        let (a, b) = (file("a.jsonl", 60), file("b.jsonl", 50));
        let read = read_all(&[a.clone(), b.clone()], 110).unwrap();
        assert_eq!(
            read.iter().map(Vec::len).sum::<usize>(),
            112,
            "each ends a line"
        );
        let e = read_all(&[a.clone(), b.clone()], 100).unwrap_err().0;
        assert!(e.contains("hold 110 bytes"), "{e}");
        assert!(e.contains("at most 100 bytes of its files together"), "{e}");
        // One file alone over the limit is named as before.
        let e = read_all(std::slice::from_ref(&a), 50).unwrap_err().0;
        assert!(e.contains("a.jsonl: input too large"), "{e}");
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo.jsonl");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if !made.is_ok_and(|s| s.success()) {
                return; // no mkfifo here
            }
            let writer = {
                let fifo = fifo.clone();
                std::thread::spawn(move || {
                    // Fails once the reader has stopped: that is the point.
                    let _ = std::fs::write(fifo, vec![b'y'; 50]);
                })
            };
            let e = read_all(&[a, fifo], 100).unwrap_err().0;
            assert!(e.contains("fifo.jsonl and the files before it"), "{e}");
            assert!(e.contains("at most 100 bytes"), "{e}");
            writer.join().unwrap();
        }
    }
}
