//! [`RenderTable::render_table`]: the text `toolwarden stats` prints
//! without `--json` (terminal rendering lives with the command, the store
//! only gives the numbers).

use std::fmt::Write;

use toolwarden_store::Stats;

const EXCERPT_CHARS: usize = 100;

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
        let _ = writeln!(
            out,
            "requests: {} total, {} errors, {} streaming",
            r.total, r.errors, r.streaming
        );

        out.push_str("\nTools (most failures first)\n");
        if self.tools.is_empty() {
            out.push_str("  no tool calls recorded\n");
        } else {
            let w = width(self.tools.iter().map(|t| t.tool.as_str()), 4);
            let _ = writeln!(
                out,
                "  {:<w$}  {:>8}  {:>8}  {:>7}",
                "TOOL", "CALLS", "FAILURES", "RATE"
            );
            for t in &self.tools {
                let _ = writeln!(
                    out,
                    "  {:<w$}  {:>8}  {:>8}  {:>6.1}%",
                    t.tool,
                    t.calls,
                    t.failures,
                    t.failure_rate * 100.0
                );
            }
        }

        if !self.models.is_empty() {
            out.push_str("\nBy model and tool\n");
            let wm = width(self.models.iter().map(|m| m.model.as_str()), 5);
            let wt = width(self.models.iter().map(|m| m.tool.as_str()), 4);
            let _ = writeln!(
                out,
                "  {:<wm$}  {:<wt$}  {:>8}  {:>8}  {:>7}",
                "MODEL", "TOOL", "CALLS", "FAILURES", "RATE"
            );
            for m in &self.models {
                let _ = writeln!(
                    out,
                    "  {:<wm$}  {:<wt$}  {:>8}  {:>8}  {:>6.1}%",
                    m.model,
                    m.tool,
                    m.calls,
                    m.failures,
                    m.failure_rate * 100.0
                );
            }
        }

        out.push_str("\nSessions with failures\n");
        if self.sessions.is_empty() {
            out.push_str("  none\n");
        } else {
            let w = width(self.sessions.iter().map(|s| s.session_id.as_str()), 7);
            let _ = writeln!(
                out,
                "  {:<w$}  {:>8}  {:>8}  {:>6}",
                "SESSION", "CALLS", "FAILURES", "SPAN"
            );
            for s in &self.sessions {
                let span = human_ms(s.last_ms.saturating_sub(s.first_ms));
                let _ = writeln!(
                    out,
                    "  {:<w$}  {:>8}  {:>8}  {:>6}",
                    s.session_id, s.calls, s.failures, span
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
                f.at_ms,
                f.tool,
                f.model.as_deref().unwrap_or("unknown"),
                f.basis,
                f.session_id,
                f.call_id
            );
            if let Some(ex) = &f.excerpt {
                let _ = writeln!(out, "      {}", one_line(ex));
            }
        }

        if !self.repairs.is_empty() {
            out.push_str("\nRepairs\n");
            for r in &self.repairs {
                let _ = writeln!(out, "  {:<32}  {}", r.defect, r.count);
            }
        }
        out
    }
}

fn width<'a>(items: impl Iterator<Item = &'a str>, min: usize) -> usize {
    items
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(min, 48)
}

/// The excerpt on one line, shortened.
fn one_line(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut short: String = flat.chars().take(EXCERPT_CHARS).collect();
    if flat.chars().count() > EXCERPT_CHARS {
        short.push('…');
    }
    short
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
    use toolwarden_store::{FailureRow, RequestTotals, SessionRow, ToolRow};

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
            },
            ..Stats::default()
        };
        let text = stats.render_table();
        assert!(
            text.contains("requests: 3 total, 1 errors, 2 streaming"),
            "{text}"
        );
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(rows.contains(&vec!["search", "4", "1", "25.0%"]), "{text}");
        assert!(rows.contains(&vec!["s1", "4", "1", "1m"]), "{text}");
        assert!(text.contains("      Error: not found"), "{text}");
    }
}
