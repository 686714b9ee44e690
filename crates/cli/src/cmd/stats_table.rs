//! [`RenderTable::render_table`]: the text `toolwarden stats` prints
//! without `--json` (terminal rendering lives with the command, the store
//! only gives the numbers). Names and ids pass through
//! [`crate::terminal`]; times are UTC dates.

use std::fmt::Write;

use toolwarden_store::{Stats, utc};

use crate::terminal::{cell, columns, padded, shown};

const EXCERPT_CHARS: usize = 100;
/// The widest a name column gets: longer names are cut (`…`).
const NAME_CHARS: usize = 48;

/// The terminal report of [`Stats`].
pub trait RenderTable {
    /// A readable report: tools that fail most, failure rate by model and
    /// tool, sessions with failures, the latest failures with excerpts.
    fn render_table(&self) -> String;
}

// === impl RenderTable ===

impl RenderTable for Stats {
    fn render_table(&self) -> String {
        let mut out = String::new();
        let r = &self.requests;
        let _ = write!(
            out,
            "requests: {} total, {} errors, {} streaming",
            r.total, r.errors, r.streaming
        );
        // Shown only when there are some, as the dashboard shows them.
        if r.calls_incomplete > 0 {
            let _ = write!(
                out,
                ", {} with calls possibly incomplete",
                r.calls_incomplete
            );
        }
        out.push('\n');

        out.push_str("\nTools (most failures first)\n");
        if self.tools.is_empty() {
            out.push_str("  no tool calls recorded\n");
        } else {
            let names = cells(self.tools.iter().map(|t| t.tool.as_str()));
            let w = width(&names, 4);
            let _ = writeln!(
                out,
                "  {:<w$}  {:>8}  {:>8}  {:>7}",
                "TOOL", "CALLS", "FAILURES", "RATE"
            );
            for (t, name) in self.tools.iter().zip(&names) {
                let _ = writeln!(
                    out,
                    "  {}  {:>8}  {:>8}  {:>6.1}%",
                    padded(name, w),
                    t.calls,
                    t.failures,
                    t.failure_rate * 100.0
                );
            }
            let more = self.totals.tools.saturating_sub(self.tools.len() as u64);
            if more > 0 {
                let calls: u64 = self.tools.iter().map(|t| t.calls).sum();
                let failures: u64 = self.tools.iter().map(|t| t.failures).sum();
                let _ = writeln!(
                    out,
                    "  … and {more} more tools: {} calls, {} failures (name one with --tool)",
                    self.totals.calls.saturating_sub(calls),
                    self.totals.failures.saturating_sub(failures)
                );
            }
        }

        if !self.models.is_empty() {
            out.push_str("\nBy model and tool\n");
            let models = cells(self.models.iter().map(|m| m.model.as_str()));
            let tools = cells(self.models.iter().map(|m| m.tool.as_str()));
            let (wm, wt) = (width(&models, 5), width(&tools, 4));
            let _ = writeln!(
                out,
                "  {:<wm$}  {:<wt$}  {:>8}  {:>8}  {:>7}",
                "MODEL", "TOOL", "CALLS", "FAILURES", "RATE"
            );
            for ((m, model), tool) in self.models.iter().zip(&models).zip(&tools) {
                let _ = writeln!(
                    out,
                    "  {}  {}  {:>8}  {:>8}  {:>6.1}%",
                    padded(model, wm),
                    padded(tool, wt),
                    m.calls,
                    m.failures,
                    m.failure_rate * 100.0
                );
            }
            let more = self
                .totals
                .model_tools
                .saturating_sub(self.models.len() as u64);
            if more > 0 {
                let _ = writeln!(out, "  … and {more} more (model, tool) pairs");
            }
        }

        out.push_str("\nSessions with failures\n");
        if self.sessions.is_empty() {
            out.push_str("  none\n");
        } else {
            let ids = cells(self.sessions.iter().map(|s| s.session_id.as_str()));
            let w = width(&ids, 7);
            let _ = writeln!(
                out,
                "  {:<w$}  {:>8}  {:>8}  {:>6}",
                "SESSION", "CALLS", "FAILURES", "SPAN"
            );
            for (s, id) in self.sessions.iter().zip(&ids) {
                let span = human_ms(s.last_ms.saturating_sub(s.first_ms));
                let _ = writeln!(
                    out,
                    "  {}  {:>8}  {:>8}  {:>6}",
                    padded(id, w),
                    s.calls,
                    s.failures,
                    span
                );
            }
        }

        out.push_str("\nLatest failures\n");
        if self.recent_failures.is_empty() {
            out.push_str("  none\n");
        }
        for f in &self.recent_failures {
            let _ = writeln!(
                out,
                "  {}  {}  {} ({})  session {}  call {}",
                utc::readable(f.at_ms),
                shown(&f.tool),
                shown(f.model.as_deref().unwrap_or("unknown")),
                shown(&f.basis),
                shown(&f.session_id),
                shown(&f.call_id)
            );
            if let Some(ex) = &f.excerpt {
                let _ = writeln!(out, "      {}", one_line(ex));
            }
        }

        if !self.repairs.is_empty() {
            out.push_str("\nRepairs\n");
            for r in &self.repairs {
                let _ = writeln!(out, "  {:<32}  {}", shown(&r.defect), r.count);
            }
        }
        out
    }
}

/// Each name as a table shows it: [`cell`] at most [`NAME_CHARS`] wide.
fn cells<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    names.map(|n| cell(n, NAME_CHARS)).collect()
}

/// The width of a column of `cells`, at least `min`.
fn width(cells: &[String], min: usize) -> usize {
    cells
        .iter()
        .map(|s| columns(s))
        .max()
        .unwrap_or(0)
        .clamp(min, NAME_CHARS)
}

/// The excerpt on one line, shortened, and written out where a terminal
/// would act on it ([`shown`]: a tool's output may hold a bidirectional
/// override, which reorders the rest of the line).
fn one_line(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut short: String = flat.chars().take(EXCERPT_CHARS).collect();
    if flat.chars().count() > EXCERPT_CHARS {
        short.push('…');
    }
    shown(&short).into_owned()
}

fn human_ms(ms: i64) -> String {
    match ms {
        ms if ms < 1_000 => format!("{ms}ms"),
        ms if ms < 60_000 => format!("{}s", ms / 1_000),
        ms if ms < 3_600_000 => format!("{}m", ms / 60_000),
        ms if ms < 86_400_000 => format!("{}h", ms / 3_600_000),
        ms => format!("{}d", ms / 86_400_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwarden_store::{
        CallTotals, FailureRow, ModelRow, RepairRow, RequestTotals, SessionRow, ToolRow,
    };

    #[test]
    fn renders_tools_sessions_and_excerpts() {
        let stats = Stats {
            tools: vec![ToolRow {
                tool: "search".into(),
                calls: 4,
                failures: 1,
                failure_rate: 0.25,
            }],
            sessions: vec![SessionRow {
                session_id: "s1".into(),
                calls: 4,
                failures: 1,
                first_ms: 0,
                last_ms: 90_000,
            }],
            recent_failures: vec![FailureRow {
                at_ms: 7,
                session_id: "s1".into(),
                model: None,
                tool: "search".into(),
                call_id: "c9".into(),
                basis: "explicit".into(),
                excerpt: Some("Error:\nnot found".into()),
            }],
            requests: RequestTotals {
                total: 3,
                errors: 1,
                streaming: 2,
                calls_incomplete: 0,
            },
            ..Stats::default()
        };
        let text = stats.render_table();
        assert!(
            text.contains("requests: 3 total, 1 errors, 2 streaming\n"),
            "{text}"
        );
        let incomplete = Stats {
            requests: RequestTotals {
                calls_incomplete: 2,
                ..stats.requests
            },
            ..stats.clone()
        };
        assert!(
            incomplete.render_table().contains(
                "requests: 3 total, 1 errors, 2 streaming, 2 with calls possibly incomplete\n"
            ),
            "{}",
            incomplete.render_table()
        );
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(rows.contains(&vec!["search", "4", "1", "25.0%"]), "{text}");
        assert!(rows.contains(&vec!["s1", "4", "1", "1m"]), "{text}");
        assert!(text.contains("      Error: not found"), "{text}");
    }

    /// Names chosen by clients and models reach the terminal written out,
    /// never as escape sequences (review: `ESC[2J` cleared the screen).
    #[test]
    fn names_cannot_drive_the_terminal() {
        let (tool, model) = ("Ev\u{1b}[2J\u{1b}[31mil", "m\u{1b}]0;TITLE\u{7}x");
        let stats = Stats {
            tools: vec![ToolRow {
                tool: tool.into(),
                calls: 2,
                failures: 1,
                failure_rate: 0.5,
            }],
            models: vec![ModelRow {
                model: model.into(),
                tool: tool.into(),
                calls: 2,
                failures: 1,
                failure_rate: 0.5,
            }],
            sessions: vec![SessionRow {
                session_id: "s\u{1b}[1A".into(),
                calls: 2,
                failures: 1,
                first_ms: 0,
                last_ms: 1,
            }],
            recent_failures: vec![FailureRow {
                at_ms: 1_795_965_739_005,
                session_id: "s\u{1b}[1A".into(),
                model: Some(model.into()),
                tool: tool.into(),
                call_id: "c\u{9b}2K".into(),
                basis: "heuristic".into(),
                excerpt: None,
            }],
            repairs: vec![RepairRow {
                defect: "d\u{1b}[8m".into(),
                count: 1,
            }],
            ..Stats::default()
        };
        let text = stats.render_table();
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("Ev\\u{1b}[2J\\u{1b}[31mil"), "{text}");
        assert!(text.contains("m\\u{1b}]0;TITLE\\u{7}x"), "{text}");
    }

    /// A CJK tool name takes two columns a character: its row's numbers
    /// stood further right than the other rows' (padded by characters).
    #[test]
    fn wide_names_keep_the_columns_in_line() {
        let row = |tool: &str| ToolRow {
            tool: tool.into(),
            calls: 12,
            failures: 3,
            failure_rate: 0.25,
        };
        let pair = |model: &str, tool: &str| ModelRow {
            model: model.into(),
            tool: tool.into(),
            calls: 12,
            failures: 3,
            failure_rate: 0.25,
        };
        let stats = Stats {
            tools: vec![row("ファイル検索"), row("search"), row("🔧fix")],
            models: vec![pair("模型", "ファイル検索"), pair("gpt-x", "search")],
            ..Stats::default()
        };
        let text = stats.render_table();
        let rows: Vec<&str> = text.lines().filter(|l| l.ends_with("25.0%")).collect();
        assert_eq!(rows.len(), 5, "{text}");
        let widths: Vec<usize> = rows.iter().map(|l| columns(l)).collect();
        assert!(widths[..3].iter().all(|w| *w == widths[0]), "{text}");
        assert!(widths[3..].iter().all(|w| *w == widths[3]), "{text}");
    }

    /// An excerpt is a tool's output: its bidirectional overrides are
    /// written out, as a name's are (U+202E reversed the rest of the line).
    #[test]
    fn excerpts_cannot_reorder_the_line() {
        let stats = Stats {
            recent_failures: vec![FailureRow {
                at_ms: 0,
                session_id: "s1".into(),
                model: None,
                tool: "Bash".into(),
                call_id: "c1".into(),
                basis: "explicit".into(),
                excerpt: Some("ok \u{202e}deliaf\u{2066}\nx\u{1b}[2J".into()),
            }],
            ..Stats::default()
        };
        let text = stats.render_table();
        assert!(
            !text.contains(['\u{202e}', '\u{2066}', '\u{1b}']),
            "{text:?}"
        );
        assert!(text.contains("ok \\u{202e}deliaf\\u{2066} x [2J"), "{text}");
    }

    /// Times are dates for people (UTC, named), not unix milliseconds.
    #[test]
    fn failure_times_are_utc_dates() {
        let stats = Stats {
            recent_failures: vec![FailureRow {
                at_ms: 1_795_965_739_005,
                session_id: "s1".into(),
                model: None,
                tool: "Bash".into(),
                call_id: "c1".into(),
                basis: "explicit".into(),
                excerpt: None,
            }],
            ..Stats::default()
        };
        let text = stats.render_table();
        assert!(
            text.contains("  2026-11-29 15:22:19 UTC  Bash  unknown"),
            "{text}"
        );
        assert!(!text.contains("1795965739005"), "{text}");
    }

    /// A report that lists only the first tools says how many more there
    /// are and what they add up to.
    #[test]
    fn tools_left_out_are_counted() {
        let stats = Stats {
            tools: vec![ToolRow {
                tool: "Bash".into(),
                calls: 10,
                failures: 4,
                failure_rate: 0.4,
            }],
            totals: CallTotals {
                calls: 25,
                failures: 5,
                tools: 4,
                model_tools: 4,
            },
            ..Stats::default()
        };
        let text = stats.render_table();
        assert!(
            text.contains("… and 3 more tools: 15 calls, 1 failures"),
            "{text}"
        );
    }
}
