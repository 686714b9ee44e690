//! Measuring a [`Detector`] on labeled tool results.
//!
//! The input is JSONL in the corpus format (`shared/corpus/tool_results.jsonl`):
//! one object per line with at least `source`, `provider`, `content` and
//! `is_error`, and optionally the `command` that printed `content`. The
//! label is hidden from the detector: it sees `content` (and `command`).
//! [`evaluate`] counts true/false positives/negatives overall, per
//! provider and per source repository, and keeps the misclassified rows.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Detector;

/// How many misclassified rows [`EvalReport`]'s `Display` lists.
const SHOWN_MISTAKES: usize = 40;

/// One labeled row, as read from the JSONL.
#[derive(Deserialize)]
struct Row {
    source: String,
    provider: String,
    content: String,
    is_error: bool,
    /// The shell command that printed `content`, where the row has it
    /// (`scripts/detect-data/raw_commands.py`'s rows): the verdict reads
    /// it as the gateway reads the call's (`Detector::explain_for_command`).
    #[serde(default)]
    command: Option<String>,
}

/// Confusion counts and the scores derived from them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scores {
    /// What the counts are for: `overall`, a provider or a source repository.
    pub group: String,
    /// Rows in the group.
    pub rows: u64,
    /// Failures detected.
    pub tp: u64,
    /// Successes reported as failures.
    pub fp: u64,
    /// Failures missed.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Successes left alone.
    pub tn: u64,
    /// tp / (tp + fp); `None` when nothing was reported as a failure.
    pub precision: Option<f64>,
    /// tp / (tp + fn); `None` when the group has no failures.
    pub recall: Option<f64>,
    /// The harmonic mean of precision and recall, when both exist.
    pub f1: Option<f64>,
}

/// A row the detector got wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mistake {
    /// 1-based line number in the input.
    pub line: usize,
    /// The source repository (see [`EvalReport::by_source`]).
    pub source: String,
    /// The row's provider.
    pub provider: String,
    /// The label: did the tool fail?
    pub is_error: bool,
    /// The rule that fired (false positives only).
    pub rule: Option<String>,
    /// The first 100 characters of the content, newlines escaped.
    pub excerpt: String,
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// All rows.
    pub overall: Scores,
    /// Per `provider`, sorted by name.
    pub by_provider: Vec<Scores>,
    /// Per source repository (`source` up to the `@commit`), sorted by name.
    pub by_source: Vec<Scores>,
    /// Every misclassified row, in input order.
    pub mistakes: Vec<Mistake>,
}

/// A JSONL input that cannot be evaluated.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A line is not a JSON object with the required fields.
    #[error("line {line}: {source}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What serde_json found wrong.
        source: serde_json::Error,
    },
    /// The input holds no rows.
    #[error("no labeled rows in the input")]
    Empty,
}

/// Run `detector` over every row of `jsonl` (label hidden) and score it.
pub fn evaluate(jsonl: &[u8], detector: &Detector) -> Result<EvalReport, EvalError> {
    let mut overall = Tally::default();
    let mut by_provider: Vec<(String, Tally)> = Vec::new();
    let mut by_source: Vec<(String, Tally)> = Vec::new();
    let mut mistakes = Vec::new();
    for (i, raw) in jsonl.split(|b| *b == b'\n').enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = i + 1;
        let row: Row =
            serde_json::from_slice(raw).map_err(|source| EvalError::BadLine { line, source })?;
        let rule = detector.explain_for_command(&row.content, row.command.as_deref());
        let predicted = rule.is_some();
        let repo = repository(&row.source);
        overall.add(row.is_error, predicted);
        group(&mut by_provider, &row.provider).add(row.is_error, predicted);
        group(&mut by_source, repo).add(row.is_error, predicted);
        if predicted != row.is_error {
            mistakes.push(Mistake {
                line,
                source: repo.to_owned(),
                provider: row.provider.clone(),
                is_error: row.is_error,
                rule: rule.map(str::to_owned),
                excerpt: excerpt(&row.content, 100),
            });
        }
    }
    if overall.rows() == 0 {
        return Err(EvalError::Empty);
    }
    let finish = |mut v: Vec<(String, Tally)>| {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().map(|(g, t)| t.scores(g)).collect()
    };
    Ok(EvalReport {
        overall: overall.scores("overall".into()),
        by_provider: finish(by_provider),
        by_source: finish(by_source),
        mistakes,
    })
}

/// `github:owner/repo@commit:path` → `github:owner/repo`.
pub(super) fn repository(source: &str) -> &str {
    match source.find('@') {
        Some(i) => &source[..i],
        None => source,
    }
}

fn group<'v>(groups: &'v mut Vec<(String, Tally)>, name: &str) -> &'v mut Tally {
    let i = match groups.iter().position(|(g, _)| g == name) {
        Some(i) => i,
        None => {
            groups.push((name.to_owned(), Tally::default()));
            groups.len() - 1
        }
    };
    &mut groups[i].1
}

fn excerpt(content: &str, chars: usize) -> String {
    content
        .chars()
        .take(chars)
        .flat_map(char::escape_debug)
        .collect()
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    tp: u64,
    fp: u64,
    fn_: u64,
    tn: u64,
}

// === impl Tally ===

impl Tally {
    fn add(&mut self, actual: bool, predicted: bool) {
        match (actual, predicted) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }

    fn rows(&self) -> u64 {
        self.tp + self.fp + self.fn_ + self.tn
    }

    fn scores(self, group: String) -> Scores {
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        let precision = ratio(self.tp, self.tp + self.fp);
        let recall = ratio(self.tp, self.tp + self.fn_);
        let f1 = match (precision, recall) {
            (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        Scores {
            group,
            rows: self.rows(),
            tp: self.tp,
            fp: self.fp,
            fn_: self.fn_,
            tn: self.tn,
            precision,
            recall,
            f1,
        }
    }
}

// === impl EvalReport ===

impl EvalReport {
    /// The scores of one provider, if it occurs in the input.
    pub fn provider(&self, name: &str) -> Option<&Scores> {
        self.by_provider.iter().find(|s| s.group == name)
    }
}

impl fmt::Display for EvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .by_source
            .iter()
            .chain(&self.by_provider)
            .map(|s| s.group.len())
            .max()
            .unwrap_or(0)
            .max("overall".len());
        writeln!(
            f,
            "{:<width$}  {:>6}  {:>5}  {:>5}  {:>5}  {:>6}  {:>9}  {:>6}  {:>5}",
            "group", "rows", "tp", "fp", "fn", "tn", "precision", "recall", "f1"
        )?;
        let sections = [
            ("by source", &self.by_source[..]),
            ("by provider", &self.by_provider[..]),
            ("", std::slice::from_ref(&self.overall)),
        ];
        for (title, rows) in sections {
            if !title.is_empty() {
                writeln!(f, "-- {title}")?;
            }
            for s in rows {
                writeln!(
                    f,
                    "{:<width$}  {:>6}  {:>5}  {:>5}  {:>5}  {:>6}  {:>9}  {:>6}  {:>5}",
                    s.group,
                    s.rows,
                    s.tp,
                    s.fp,
                    s.fn_,
                    s.tn,
                    score(s.precision),
                    score(s.recall),
                    score(s.f1)
                )?;
            }
        }
        if !self.mistakes.is_empty() {
            writeln!(f, "-- mistakes ({})", self.mistakes.len())?;
            for m in self.mistakes.iter().take(SHOWN_MISTAKES) {
                let what = match &m.rule {
                    Some(rule) => format!("FP {rule}"),
                    None => "FN".to_owned(),
                };
                writeln!(f, "line {:>5} {:<24} {}", m.line, what, m.excerpt)?;
            }
            if self.mistakes.len() > SHOWN_MISTAKES {
                writeln!(f, "… {} more", self.mistakes.len() - SHOWN_MISTAKES)?;
            }
        }
        Ok(())
    }
}

fn score(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"))
}
