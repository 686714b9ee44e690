//! `toolwarden alerts`: the alerts firing now and the latest transitions,
//! read from the database (every gateway on it agrees); and the `serve`
//! flags for alerts.

use std::{fmt::Write as _, path::PathBuf};

use clap::{Args, builder::NonEmptyStringValueParser};
use toolwarden_gateway::{RawAlerts, RawRule};
use toolwarden_store::{AlertTransition, Store, utc};

use super::{CmdError, Outcome};
use crate::{config, terminal::column};

/// Flags of `alerts`.
#[derive(Debug, Args)]
pub struct AlertsArgs {
    /// sqlite://PATH, a plain path or postgres://… [default: the configured
    /// database, else sqlite://toolwarden.db].
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub database: Option<String>,
    /// Print JSON: `{"firing": [...], "recent": [...]}`.
    #[arg(long)]
    pub json: bool,
    /// How many recent transitions to show (at least 1).
    #[arg(long, default_value_t = 20, value_parser = transitions)]
    pub limit: usize,
    /// A TOML config file to read `database` from.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `--limit`: at least one transition. 0 read none, and the report said
/// "none" under "Recent transitions" whatever the database held.
fn transitions(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("at least 1 (the recent transitions shown)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number of transitions, at least 1".into()),
    }
}

/// The alert flags of `serve` (the rest is in `[alerts]` of the config file).
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Alerts")]
pub struct AlertFlags {
    /// POST each alert transition to this URL; repeatable. A flag's value
    /// shows in every process list (`ps`): a URL that is a secret
    /// (Slack's) is better in TOOLWARDEN_ALERT_WEBHOOK or the config file's
    /// `[alerts] webhooks`. Never printed (the banner counts webhooks).
    #[arg(long = "alert-webhook", value_name = "URL", value_parser = NonEmptyStringValueParser::new())]
    pub alert_webhook: Vec<String>,
    /// Webhook payload: alertmanager (default) or slack.
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    pub alert_format: Option<String>,
    /// The alerts' sliding window in milliseconds [default: 900000].
    #[arg(long, allow_negative_numbers = true)]
    pub alert_window_ms: Option<u64>,
    /// Tool failure rate above which an alert fires [default: 0.05].
    #[arg(long, allow_negative_numbers = true)]
    pub alert_failure_rate: Option<f64>,
    /// Results needed in the window before the failure rate can fire [default: 20].
    #[arg(long, allow_negative_numbers = true)]
    pub alert_min_results: Option<u64>,
    /// Send a still-firing alert's notification again after this many
    /// milliseconds; 0: never [default: 14400000, 4 h].
    #[arg(long, allow_negative_numbers = true)]
    pub alert_repeat_interval_ms: Option<u64>,
    /// Turn alert evaluation off.
    #[arg(long)]
    pub no_alerts: bool,
}

impl AlertFlags {
    /// The flags as a `[alerts]` layer (`None` when none was given).
    pub fn into_raw(self) -> Option<RawAlerts> {
        let failure_rate = (self.alert_failure_rate.is_some() || self.alert_min_results.is_some())
            .then_some(RawRule {
                enabled: None,
                threshold: self.alert_failure_rate,
                min_volume: self.alert_min_results,
            });
        let raw = RawAlerts {
            enabled: self.no_alerts.then_some(false),
            webhooks: (!self.alert_webhook.is_empty()).then_some(self.alert_webhook),
            format: self.alert_format,
            window_ms: self.alert_window_ms,
            repeat_interval_ms: self.alert_repeat_interval_ms,
            failure_rate,
            ..RawAlerts::default()
        };
        (raw != RawAlerts::default()).then_some(raw)
    }
}

/// Print the alerts.
pub fn run(args: AlertsArgs) -> Result<Outcome, CmdError> {
    let url = config::existing_database(args.config.as_deref(), args.database.clone())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (states, recent) = runtime.block_on(async {
        let store = Store::open_existing(&url).await?;
        // The firing ones only.
        let states = store.alert_states(0).await;
        let recent = store.alert_history(args.limit).await;
        store.close().await;
        Ok::<_, CmdError>((states?, recent?))
    })?;
    let firing: Vec<AlertTransition> = states.into_iter().filter(|s| s.state == "firing").collect();
    if args.json {
        let doc = serde_json::json!({"firing": firing, "recent": recent});
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", render(&firing, &recent));
    }
    Ok(Outcome::Ok)
}

fn render(firing: &[AlertTransition], recent: &[AlertTransition]) -> String {
    let mut out = String::from("Firing\n");
    if firing.is_empty() {
        out.push_str("  none\n");
    }
    for t in firing {
        row(&mut out, t);
    }
    out.push_str("\nRecent transitions\n");
    if recent.is_empty() {
        out.push_str("  none\n");
    }
    for t in recent {
        row(&mut out, t);
    }
    out
}

/// One transition on one line. Names are written out ([`column()`]), times
/// are UTC dates. Only a firing alert's value is over its threshold: a
/// resolved one is at or under `threshold × resolve_ratio`, or had no data
/// left, or its gateway went away, so its line states no comparison.
fn row(out: &mut String, t: &AlertTransition) {
    let (value, threshold) = (fmt_value(&t.rule, t.value), fmt_value(&t.rule, t.threshold));
    let numbers = if t.state == "firing" {
        format!(
            "value {value} > {threshold} (volume {}) since {}",
            t.volume,
            utc::readable(t.started_ms)
        )
    } else {
        format!(
            "value {value}, threshold {threshold} (volume {}) at {}, firing since {}",
            t.volume,
            utc::readable(t.at_ms),
            utc::readable(t.started_ms)
        )
    };
    let _ = writeln!(
        out,
        "  {} {} {} {} {numbers}",
        column(&t.state, 9),
        column(&t.rule, 20),
        column(tool_shown(t), 24),
        column(model_shown(t), 28),
    );
}

/// The alert's model: `(all models)` for an alert over every model, whose
/// `model` is `*` as is that of a model a client named `*` (its key tells
/// them apart: `*` against `%2A`, as `--json` does).
fn model_shown(t: &AlertTransition) -> &str {
    if t.alert_key.split('|').nth(2) == Some("*") {
        "(all models)"
    } else {
        &t.model
    }
}

/// The alert's tool: `(all tools)` for a rule over requests, whose `tool`
/// is `*` as is that of a tool a client named `*` under a tool rule (the
/// rule tells them apart, as the dashboard's strip does).
fn tool_shown(t: &AlertTransition) -> &str {
    if toolwarden_gateway::RuleName::is_per_tool(&t.rule) {
        &t.tool
    } else {
        "(all tools)"
    }
}

fn fmt_value(rule: &str, value: f64) -> String {
    toolwarden_gateway::RuleName::format_value(rule, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transition(state: &str, value: f64) -> AlertTransition {
        AlertTransition {
            alert_key: "tool_failure_rate|Bash|gpt-x|".into(),
            seq: if state == "firing" { 1 } else { 2 },
            state: state.into(),
            rule: "tool_failure_rate".into(),
            tool: "Bash".into(),
            model: "gpt-x".into(),
            instance: String::new(),
            value,
            threshold: 0.05,
            volume: 40,
            started_ms: 1_795_960_000_000,
            at_ms: 1_795_965_739_005,
            gateway: "gw:8080".into(),
        }
    }

    /// A resolved alert's value is under its threshold: its line must not
    /// say `value 2.0% > 5.0%` (review #9). Times are dates.
    #[test]
    fn resolved_alerts_state_no_false_comparison() {
        let text = render(&[], &[transition("resolved", 0.02)]);
        assert!(
            text.contains("value 2.0%, threshold 5.0% (volume 40) at 2026-11-29 15:22:19 UTC"),
            "{text}"
        );
        assert!(!text.contains('>'), "{text}");
        let text = render(&[transition("firing", 0.09)], &[]);
        assert!(
            text.contains("value 9.0% > 5.0% (volume 40) since 2026-11-29 13:46:40 UTC"),
            "{text}"
        );
        assert!(!text.contains("1795960000000"), "{text}");
    }

    /// The all-models alert and the alert of a model a client named `*`
    /// both have the model `*`: the text said `*` for both.
    #[test]
    fn the_all_models_alert_is_told_from_a_model_named_star() {
        let mut all = transition("firing", 0.09);
        all.alert_key = "tool_failure_rate|Bash|*|".into();
        all.model = "*".into();
        let mut star = all.clone();
        star.alert_key = "tool_failure_rate|Bash|%2A|".into();
        let text = render(&[all, star], &[]);
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("Bash")).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("(all models)"), "{text}");
        assert!(!lines[1].contains("(all models)"), "{text}");
        assert!(lines[1].contains(" * "), "{text}");
    }

    /// The rules over requests have the tool `*`, as has a tool a client
    /// named `*` under a tool rule: the text said `*` for both.
    #[test]
    fn request_rules_are_told_from_a_tool_named_star() {
        let mut star = transition("firing", 0.09);
        star.alert_key = "tool_failure_rate|*|*|".into();
        star.tool = "*".into();
        let mut requests = star.clone();
        requests.alert_key = "upstream_error_rate|*|gpt-x|".into();
        requests.rule = "upstream_error_rate".into();
        requests.model = "gpt-x".into();
        let mut repairs = requests.clone();
        repairs.alert_key = "repairs|*|gpt-x|".into();
        repairs.rule = "repairs".into();
        repairs.value = 3.0;
        repairs.threshold = 0.0;
        let text = render(&[star, requests, repairs], &[]);
        let lines: Vec<&str> = text.lines().skip(1).take(3).collect();
        assert!(lines[0].contains(" * "), "{text}");
        assert!(!lines[0].contains("(all tools)"), "{text}");
        for line in &lines[1..] {
            assert!(line.contains("(all tools)"), "{text}");
            assert!(!line.contains(" * "), "{text}");
        }
    }

    /// Tool and model names are chosen by clients: written out.
    #[test]
    fn names_cannot_drive_the_terminal() {
        let mut t = transition("firing", 0.09);
        t.tool = "Ev\u{1b}[2Jil".into();
        t.model = "m\u{1b}]0;TITLE\u{7}x".into();
        let text = render(&[t], &[]);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("Ev\\u{1b}[2Jil"), "{text}");
    }
}
