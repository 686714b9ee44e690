//! `toolwarden stats`: which tools fail, how often, for which model, in
//! which sessions.

use std::{
    collections::BTreeMap,
    fmt::Write,
    path::PathBuf,
    time::{SystemTime, UNIX_EPOCH},
};

use clap::{Args, ValueEnum, builder::NonEmptyStringValueParser};
use toolwarden_store::{ModelRow, Stats, StatsQuery, Store, failure_rate, parse_since};

use super::{CmdError, Outcome, stats_table::RenderTable};
use crate::{
    config,
    terminal::{cell, column},
};

/// How the text report is grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// Tools that fail most, then the rest of the report.
    Tool,
    /// Failure rate by model, and by model and tool.
    Model,
    /// Sessions with failures.
    Session,
}

/// Flags of `stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// sqlite://PATH, a plain path or postgres://… [default: the configured
    /// database, else sqlite://toolwarden.db].
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub database: Option<String>,
    /// Time window: 30m, 24h, 7d, … or `all`.
    #[arg(long, default_value = "24h")]
    pub since: String,
    /// Grouping of the text report.
    #[arg(long, value_enum, default_value = "tool")]
    pub by: By,
    /// Only this tool.
    #[arg(long)]
    pub tool: Option<String>,
    /// Only this model.
    #[arg(long)]
    pub model: Option<String>,
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Rows of sessions and recent failures (at least 1).
    #[arg(long, default_value_t = 20, value_parser = rows)]
    pub limit: usize,
    /// Print the JSON document (the same as GET /api/stats: as many tools
    /// as the configured `dashboard_tool_rows`).
    #[arg(long)]
    pub json: bool,
    /// A TOML config file to read `database` from.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `--limit`: at least one row. The store reads 0 as its default (20),
/// so `--limit 0` printed 20 rows of each list.
fn rows(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("at least 1 (the rows of sessions and of recent failures)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number of rows, at least 1".into()),
    }
}

/// Print the report.
pub fn run(args: StatsArgs) -> Result<Outcome, CmdError> {
    let raw = config::file_and_env(args.config.as_deref())?;
    // As many tools as `/api/stats` lists for the same settings.
    let tool_rows = config::tool_rows(&raw)?;
    let url = config::existing_database_of(raw, args.database.clone())?;
    let since_ms = parse_since(&args.since)?.map(|window| {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        now.saturating_sub(window).as_millis() as i64
    });
    let query = StatsQuery {
        since_ms,
        // Empty is no filter, as `/api/stats?tool=` reads it (a script's
        // `--tool "$TOOL"` with `TOOL` unset).
        tool: args.tool.filter(|s| !s.is_empty()),
        model: args.model.filter(|s| !s.is_empty()),
        session: args.session.filter(|s| !s.is_empty()),
        limit: args.limit,
        tool_rows,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (stats, others, pairs) = runtime.block_on(async {
        let store = Store::open_existing(&url).await?;
        let stats = store.stats(&query).await;
        // `--by model` sums each model over every (model, tool) pair; the
        // report lists the first `TOOL_ROWS`, so past them, all are read.
        let pairs = match &stats {
            Ok(s) if args.by == By::Model && !args.json && listed_fewer_pairs(s) => {
                let all = StatsQuery {
                    tool_rows: usize::try_from(s.totals.model_tools).unwrap_or(usize::MAX),
                    ..query.clone()
                };
                Some(store.stats(&all).await.map(|s| s.models))
            }
            _ => None,
        };
        // `--tool` that matched nothing: the tools that did record calls
        // in the same window, for the table's hint.
        let others = match (&stats, &query.tool) {
            (Ok(s), Some(_)) if s.tools.is_empty() && !args.json => {
                let all = StatsQuery {
                    tool: None,
                    tool_rows: TOOLS_HINTED,
                    ..query.clone()
                };
                store.stats(&all).await.map(|s| s.tools).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        store.close().await;
        let pairs = pairs.transpose()?;
        stats.map(|s| (s, others, pairs))
    })?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        out!("{}", render(&stats, args.by, pairs.as_deref()));
        if let (Some(tool), false) = (&query.tool, others.is_empty()) {
            outln!("{}", no_such_tool(tool, &others));
        }
    }
    Ok(Outcome::Ok)
}

/// The most tools named when `--tool` matched none.
const TOOLS_HINTED: usize = 10;

/// `--tool NAME` recorded no call where others did: say which did.
fn no_such_tool(tool: &str, others: &[toolwarden_store::ToolRow]) -> String {
    let names: Vec<String> = others.iter().map(|t| cell(&t.tool, 40)).collect();
    let more = if others.len() >= TOOLS_HINTED {
        ", …"
    } else {
        ""
    };
    format!(
        "\nno call of a tool named {:?} here; tools with calls: {}{more}",
        cell(tool, 40),
        names.join(", ")
    )
}

/// The text report; `pairs`, when the report lists only the first
/// (model, tool) pairs, is every pair, for the per-model sums.
fn render(stats: &Stats, by: By, pairs: Option<&[ModelRow]>) -> String {
    match by {
        By::Tool => stats.render_table(),
        By::Model => by_model(stats, pairs.unwrap_or(&stats.models)),
        By::Session => by_session(stats),
    }
}

/// Whether `stats` lists fewer (model, tool) pairs than it counts.
fn listed_fewer_pairs(stats: &Stats) -> bool {
    stats.totals.model_tools > stats.models.len() as u64
}

/// Per model (summed over `pairs`, every pair), then the pairs listed.
fn by_model(stats: &Stats, pairs: &[ModelRow]) -> String {
    let mut per_model: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for row in pairs {
        let entry = per_model.entry(row.model.as_str()).or_default();
        entry.0 += row.calls;
        entry.1 += row.failures;
    }
    let mut out = String::from("By model\n");
    let _ = writeln!(
        out,
        "  {:<40} {:>8} {:>8} {:>7}",
        "MODEL", "CALLS", "FAILURES", "RATE"
    );
    for (model, (calls, failures)) in &per_model {
        let rate = failure_rate(*failures, *calls);
        let _ = writeln!(
            out,
            "  {} {:>8} {:>8} {:>6.1}%",
            column(model, 40),
            calls,
            failures,
            rate * 100.0
        );
    }
    out.push_str("\nBy model and tool\n");
    let _ = writeln!(
        out,
        "  {:<40} {:<24} {:>8} {:>8} {:>7}",
        "MODEL", "TOOL", "CALLS", "FAILURES", "RATE"
    );
    for row in &stats.models {
        let _ = writeln!(
            out,
            "  {} {} {:>8} {:>8} {:>6.1}%",
            column(&row.model, 40),
            column(&row.tool, 24),
            row.calls,
            row.failures,
            row.failure_rate * 100.0
        );
    }
    let more = stats
        .totals
        .model_tools
        .saturating_sub(stats.models.len() as u64);
    if more > 0 {
        let _ = writeln!(out, "  … and {more} more (model, tool) pairs");
    }
    out
}

fn by_session(stats: &Stats) -> String {
    let mut out = String::from("Sessions with failures\n");
    if stats.sessions.is_empty() {
        out.push_str("  none\n");
        return out;
    }
    let _ = writeln!(out, "  {:<48} {:>8} {:>8}", "SESSION", "CALLS", "FAILURES");
    for s in &stats.sessions {
        let _ = writeln!(
            out,
            "  {} {:>8} {:>8}",
            column(&s.session_id, 48),
            s.calls,
            s.failures
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwarden_store::SessionRow;

    /// A model's rate is the report's: failures folded at their own time
    /// and model (`dropped_tool_counts`) can outnumber the model's calls in
    /// the window, which was 0.0 % for none at all and above 100 % for fewer.
    #[test]
    fn a_models_rate_is_the_reports() {
        let row = |model: &str, tool: &str, calls, failures| ModelRow {
            model: model.into(),
            tool: tool.into(),
            calls,
            failures,
            failure_rate: failure_rate(failures, calls),
        };
        let pairs = [
            row("folded-only", "search", 0, 3),
            row("more-failed", "search", 4, 2),
            row("more-failed", "fetch", 0, 3),
            row("plain", "search", 4, 1),
        ];
        let text = by_model(&Stats::default(), &pairs);
        let rate_of = |model: &str| {
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(model))
                .unwrap_or_else(|| panic!("{model}: {text}"));
            line.split_whitespace().last().unwrap().to_owned()
        };
        assert_eq!(rate_of("folded-only"), "100.0%", "{text}");
        assert_eq!(rate_of("more-failed"), "100.0%", "{text}");
        assert_eq!(rate_of("plain"), "25.0%", "{text}");
    }

    /// The model and session views write names out too (see `terminal`).
    #[test]
    fn grouped_views_cannot_drive_the_terminal() {
        let stats = Stats {
            models: vec![ModelRow {
                model: "m\u{1b}]0;TITLE\u{7}x".into(),
                tool: "t\u{1b}[2J".into(),
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
            ..Stats::default()
        };
        for by in [By::Model, By::Session] {
            let text = render(&stats, by, None);
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "{text:?}"
            );
        }
    }
}
