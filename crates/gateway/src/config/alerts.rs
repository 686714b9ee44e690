//! The `[alerts]` settings: [`RawAlerts`] as read (TOML table, `TOOLWARDEN_ALERT_*`
//! variables, `serve` flags), validated once into [`AlertsConfig`].
//!
//! ```toml
//! [alerts]
//! window_ms = 900000          # the sliding window (15 min)
//! interval_ms = 30000         # how often the rules are evaluated
//! resolve_ratio = 0.8         # hysteresis: resolve at ≤ 80 % of the threshold
//! webhooks = ["https://receiver.example/alertmanager"]  # takes Alertmanager's webhook body
//! format = "alertmanager"     # or "slack"
//! repeat_interval_ms = 14400000  # re-send a still-firing alert every 4 h (0: never)
//! max_firing = 1000           # no new alert fires while this many are firing
//! resolved_states = 1000      # the alerts resolved last, read each round
//! window_rows = 10000         # a round's busiest (tool, model) pairs and models
//! kept_per_webhook = 2000     # notifications a webhook did not take, kept to send again
//!
//! [alerts.failure_rate]
//! threshold = 0.05
//! min_volume = 20
//!
//! [alerts.repairs]
//! enabled = false
//! ```

use std::time::Duration;

use serde::Deserialize;

use http::Uri;

use super::redact::{Origin, TextOrigin};

const DEFAULT_WINDOW_MS: u64 = 15 * 60 * 1000;
const DEFAULT_INTERVAL_MS: u64 = 30_000;
const DEFAULT_RESOLVE_RATIO: f64 = 0.8;
const DEFAULT_QUEUE: u64 = 256;
const DEFAULT_RETRIES: u64 = 5;
const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Alertmanager's default `repeat_interval`: 4 h.
const DEFAULT_REPEAT_INTERVAL_MS: u64 = 4 * 60 * 60 * 1000;
/// As many as `/metrics` shows (`metrics::alerts_board::MAX_GAUGES`).
const DEFAULT_MAX_FIRING: u64 = 1000;
/// As many as `/metrics` shows.
const DEFAULT_RESOLVED_STATES: u64 = toolwarden_store::DEFAULT_RESOLVED_STATES.unsigned_abs();
const DEFAULT_WINDOW_ROWS: u64 = toolwarden_store::DEFAULT_WINDOW_ROWS.unsigned_abs();
/// One per alert of a round's states by default: the firing and the
/// resolved last.
const DEFAULT_KEPT_PER_WEBHOOK: u64 = DEFAULT_MAX_FIRING + DEFAULT_RESOLVED_STATES;

/// One rule's settings as read.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    /// `false` turns the rule off.
    pub enabled: Option<bool>,
    /// Fires when the value is above this.
    pub threshold: Option<f64>,
    /// No firing below this volume (results, requests, events).
    pub min_volume: Option<u64>,
}

/// `[alerts]` as read; every field optional. Its `Debug` shows each
/// webhook as its origin only.
#[derive(Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawAlerts {
    /// `false`: no evaluation at all.
    pub enabled: Option<bool>,
    /// The sliding window, ms.
    pub window_ms: Option<u64>,
    /// Evaluation period, ms.
    pub interval_ms: Option<u64>,
    /// A firing alert resolves when its value is ≤ threshold × this (0..=1).
    pub resolve_ratio: Option<f64>,
    /// Webhook URLs, one POST per transition each.
    pub webhooks: Option<Vec<String>>,
    /// `alertmanager` (default) or `slack`.
    pub format: Option<String>,
    /// Notifications waiting per webhook; beyond it they are dropped and counted.
    pub queue: Option<u64>,
    /// Retries per notification after the first attempt.
    pub retries: Option<u64>,
    /// Time allowed per webhook attempt, ms.
    pub timeout_ms: Option<u64>,
    /// A firing alert's notification is sent again when this long (ms)
    /// has passed since it was last sent; 0: never.
    pub repeat_interval_ms: Option<u64>,
    /// Most alerts firing at once: past it, no new alert fires (tools and
    /// models are named by clients), and the round counts those it held
    /// back.
    pub max_firing: Option<u64>,
    /// The alerts resolved last that a round reads besides the firing
    /// ones (to re-send their notifications, and for `/metrics`).
    pub resolved_states: Option<u64>,
    /// Most rows of each half of a round's window: its busiest (tool,
    /// model) pairs, and its busiest models.
    pub window_rows: Option<u64>,
    /// Notifications a webhook did not take, kept to send again (one per
    /// alert); past it the oldest is forgotten.
    pub kept_per_webhook: Option<u64>,
    /// This gateway's name in alerts about its own counters (default: host:port).
    pub instance: Option<String>,
    /// Tool failure rate (per tool, per tool × model).
    pub failure_rate: Option<RawRule>,
    /// Mean estimated client-side execution time, ms.
    pub exec_time: Option<RawRule>,
    /// Pairing defects repaired.
    pub repairs: Option<RawRule>,
    /// Upstream error rate (429, 5xx, gateway errors).
    pub upstream_errors: Option<RawRule>,
    /// Events the recorder dropped (this gateway).
    pub events_dropped: Option<RawRule>,
}

/// The payload shape of webhook notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlertFormat {
    /// Prometheus Alertmanager's webhook payload (version 4).
    #[default]
    Alertmanager,
    /// Slack incoming webhook: `{"text": …}`.
    Slack,
}

/// A rule that is on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    /// Fires above this.
    pub threshold: f64,
    /// Not below this volume.
    pub min_volume: u64,
}

/// The rules; `None` = off.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// Failures / results > threshold (default 0.05, ≥ 20 results).
    pub failure_rate: Option<Threshold>,
    /// Mean execution ms > threshold (default 5000, ≥ 5 timed results).
    pub exec_time: Option<Threshold>,
    /// Repairs > threshold (default 0).
    pub repairs: Option<Threshold>,
    /// Upstream errors / requests > threshold (default 0.05, ≥ 20 requests).
    pub upstream_errors: Option<Threshold>,
    /// Dropped events > threshold (default 0).
    pub events_dropped: Option<Threshold>,
}

/// Validated alert settings. Its `Debug` shows each webhook as its origin
/// only.
#[derive(Clone, PartialEq)]
pub struct AlertsConfig {
    /// Evaluate at all (needs a database).
    pub enabled: bool,
    /// The sliding window.
    pub window: Duration,
    /// Evaluation period.
    pub interval: Duration,
    /// Hysteresis factor in `0..=1`.
    pub resolve_ratio: f64,
    /// The rules.
    pub rules: Rules,
    /// Webhook URLs (http or https; their paths may hold secrets: never logged).
    pub webhooks: Vec<Uri>,
    /// Payload shape.
    pub format: AlertFormat,
    /// Per-webhook queue bound.
    pub queue: usize,
    /// Retries after the first attempt.
    pub retries: u32,
    /// Per-attempt timeout.
    pub timeout: Duration,
    /// How often a still-firing alert's notification is sent again
    /// (`None`: never).
    pub repeat_interval: Option<Duration>,
    /// Most alerts firing at once (see [`RawAlerts::max_firing`]).
    pub max_firing: usize,
    /// The alerts resolved last read each round ([`RawAlerts::resolved_states`]).
    pub resolved_states: i64,
    /// Most rows of each half of a round's window ([`RawAlerts::window_rows`]).
    pub window_rows: i64,
    /// Notifications kept per webhook ([`RawAlerts::kept_per_webhook`]).
    pub kept_per_webhook: usize,
    /// This gateway's name, when set.
    pub instance: Option<String>,
}

/// The `TOOLWARDEN_ALERT_*` variables read (lower-cased, without the
/// prefix); the rest of `[alerts]` is set in the file or by flags.
pub(crate) const ALERT_VARIABLES: [&str; 4] = [
    "alert_webhook",
    "alert_webhooks",
    "alert_format",
    "alert_window_ms",
];

// === impl RawAlerts ===

impl RawAlerts {
    /// `TOOLWARDEN_ALERT_WEBHOOK` (comma-separated or a JSON array),
    /// `TOOLWARDEN_ALERT_FORMAT`, `TOOLWARDEN_ALERT_WINDOW_MS` (`key` is the
    /// lower-cased name without the prefix, one of [`ALERT_VARIABLES`]);
    /// other names are left alone (the caller warns of them). A value that
    /// cannot be read is returned as the problem (reported unless a flag
    /// sets the same setting).
    pub(crate) fn env(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "alert_webhook" | "alert_webhooks" => self.webhooks = Some(env_list(value)),
            "alert_format" => self.format = Some(value.to_string()),
            "alert_window_ms" => match value.trim().parse() {
                Ok(n) => self.window_ms = Some(n),
                Err(_) => {
                    return Err(format!(
                        "TOOLWARDEN_ALERT_WINDOW_MS={value:?}: expected a whole number"
                    ));
                }
            },
            _ => {}
        }
        Ok(())
    }

    /// Field by field, `over` wins where it has a value.
    pub fn merge(self, over: RawAlerts) -> RawAlerts {
        RawAlerts {
            enabled: over.enabled.or(self.enabled),
            window_ms: over.window_ms.or(self.window_ms),
            interval_ms: over.interval_ms.or(self.interval_ms),
            resolve_ratio: over.resolve_ratio.or(self.resolve_ratio),
            webhooks: over.webhooks.or(self.webhooks),
            format: over.format.or(self.format),
            queue: over.queue.or(self.queue),
            retries: over.retries.or(self.retries),
            timeout_ms: over.timeout_ms.or(self.timeout_ms),
            repeat_interval_ms: over.repeat_interval_ms.or(self.repeat_interval_ms),
            max_firing: over.max_firing.or(self.max_firing),
            resolved_states: over.resolved_states.or(self.resolved_states),
            window_rows: over.window_rows.or(self.window_rows),
            kept_per_webhook: over.kept_per_webhook.or(self.kept_per_webhook),
            instance: over.instance.or(self.instance),
            failure_rate: merge_rule(self.failure_rate, over.failure_rate),
            exec_time: merge_rule(self.exec_time, over.exec_time),
            repairs: merge_rule(self.repairs, over.repairs),
            upstream_errors: merge_rule(self.upstream_errors, over.upstream_errors),
            events_dropped: merge_rule(self.events_dropped, over.events_dropped),
        }
    }

    /// Defaults applied; every problem, joined, as the error.
    pub fn validated(self) -> Result<AlertsConfig, String> {
        let mut problems = Vec::new();
        let config = self.validate(&mut problems);
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(problems.join("; "))
        }
    }

    /// Defaults applied, every problem pushed to `problems`.
    pub(crate) fn validate(self, problems: &mut Vec<String>) -> AlertsConfig {
        let mut positive = |name: &str, value: Option<u64>, default: u64| {
            let v = value.unwrap_or(default);
            if v == 0 {
                problems.push(format!("alerts.{name} must be greater than 0"));
                default
            } else {
                v
            }
        };
        let window_ms = positive("window_ms", self.window_ms, DEFAULT_WINDOW_MS);
        let interval_ms = positive("interval_ms", self.interval_ms, DEFAULT_INTERVAL_MS);
        let queue = positive("queue", self.queue, DEFAULT_QUEUE);
        let timeout_ms = positive("timeout_ms", self.timeout_ms, DEFAULT_TIMEOUT_MS);
        let max_firing = positive("max_firing", self.max_firing, DEFAULT_MAX_FIRING);
        let resolved_states = positive(
            "resolved_states",
            self.resolved_states,
            DEFAULT_RESOLVED_STATES,
        );
        let window_rows = positive("window_rows", self.window_rows, DEFAULT_WINDOW_ROWS);
        let kept_per_webhook = positive(
            "kept_per_webhook",
            self.kept_per_webhook,
            DEFAULT_KEPT_PER_WEBHOOK,
        );
        let repeat_ms = self
            .repeat_interval_ms
            .unwrap_or(DEFAULT_REPEAT_INTERVAL_MS);
        if repeat_ms != 0 && repeat_ms < interval_ms {
            problems.push(format!(
                "alerts.repeat_interval_ms {repeat_ms}: expected 0 (never) or at least \
                 interval_ms ({interval_ms}): a repeat is decided once per evaluation"
            ));
        }
        let resolve_ratio = self.resolve_ratio.unwrap_or(DEFAULT_RESOLVE_RATIO);
        if !(0.0..=1.0).contains(&resolve_ratio) {
            problems.push(format!(
                "alerts.resolve_ratio {resolve_ratio}: expected 0 to 1"
            ));
        }
        let format = match self.format.as_deref().map(str::trim) {
            None | Some("alertmanager") => AlertFormat::Alertmanager,
            Some("slack") => AlertFormat::Slack,
            Some(other) => {
                problems.push(format!(
                    "alerts.format {other:?}: expected alertmanager or slack"
                ));
                AlertFormat::Alertmanager
            }
        };
        let webhooks = self
            .webhooks
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .filter_map(|(n, url)| {
                // Not the value: a webhook's URL is often a secret (Slack's).
                webhook_uri(&url)
                    .map_err(|e| {
                        problems.push(format!(
                            "alert webhook #{} (alerts.webhooks, --alert-webhook or \
                             TOOLWARDEN_ALERT_WEBHOOK): {e}",
                            n + 1
                        ))
                    })
                    .ok()
            })
            .collect();
        // `rate`: a share of results or requests, which fires above its
        // threshold, so one of 1 or more never could.
        let mut rule = |name: &str, raw: Option<RawRule>, threshold: f64, min_volume: u64| {
            let raw = raw.unwrap_or_default();
            let t = raw.threshold.unwrap_or(threshold);
            let rate = matches!(name, "failure_rate" | "upstream_errors");
            if !t.is_finite() || t < 0.0 {
                problems.push(format!(
                    "alerts.{name}.threshold {t}: expected a finite number ≥ 0"
                ));
            } else if rate && t >= 1.0 {
                problems.push(format!(
                    "alerts.{name}.threshold {t}: expected a share from 0 to below 1 \
                     (0.05: above 5 %); a share is never above {t}, so the alert could not fire"
                ));
            }
            (raw.enabled != Some(false)).then_some(Threshold {
                threshold: t,
                min_volume: raw.min_volume.unwrap_or(min_volume),
            })
        };
        let rules = Rules {
            failure_rate: rule("failure_rate", self.failure_rate, 0.05, 20),
            exec_time: rule("exec_time", self.exec_time, 5_000.0, 5),
            repairs: rule("repairs", self.repairs, 0.0, 1),
            upstream_errors: rule("upstream_errors", self.upstream_errors, 0.05, 20),
            events_dropped: rule("events_dropped", self.events_dropped, 0.0, 1),
        };
        AlertsConfig {
            enabled: self.enabled != Some(false),
            window: Duration::from_millis(window_ms),
            interval: Duration::from_millis(interval_ms),
            resolve_ratio,
            rules,
            webhooks,
            format,
            queue: usize::try_from(queue).unwrap_or(usize::MAX),
            retries: u32::try_from(self.retries.unwrap_or(DEFAULT_RETRIES)).unwrap_or(u32::MAX),
            timeout: Duration::from_millis(timeout_ms),
            repeat_interval: (repeat_ms != 0).then(|| Duration::from_millis(repeat_ms)),
            max_firing: usize::try_from(max_firing).unwrap_or(usize::MAX),
            resolved_states: i64::try_from(resolved_states).unwrap_or(i64::MAX),
            window_rows: i64::try_from(window_rows).unwrap_or(i64::MAX),
            kept_per_webhook: usize::try_from(kept_per_webhook).unwrap_or(usize::MAX),
            instance: self.instance.filter(|s| !s.is_empty()),
        }
    }
}

/// An http(s) URL with a host (the error names neither path nor query).
fn webhook_uri(url: &str) -> Result<Uri, String> {
    if let Some(problem) = super::userinfo::raw_userinfo(url.trim()) {
        return Err(problem.into());
    }
    let uri: Uri = url
        .trim()
        .parse()
        .map_err(|_| "not a URL; expected http://… or https://…".to_string())?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(host)) if !host.is_empty() => Ok(uri),
        (Some("http" | "https"), _) => Err("missing host".into()),
        _ => Err(format!(
            "{}: expected an http:// or https:// URL",
            uri.scheme_str().unwrap_or("no scheme")
        )),
    }
}

/// A JSON array or a comma-separated list.
fn env_list(value: &str) -> Vec<String> {
    if let Ok(list) = serde_json::from_str::<Vec<String>>(value.trim()) {
        return list;
    }
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn merge_rule(base: Option<RawRule>, over: Option<RawRule>) -> Option<RawRule> {
    match (base, over) {
        (Some(b), Some(o)) => Some(RawRule {
            enabled: o.enabled.or(b.enabled),
            threshold: o.threshold.or(b.threshold),
            min_volume: o.min_volume.or(b.min_volume),
        }),
        (b, o) => o.or(b),
    }
}

impl std::fmt::Debug for RawAlerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let webhooks: Option<Vec<TextOrigin<'_>>> = self
            .webhooks
            .as_ref()
            .map(|urls| urls.iter().map(|u| TextOrigin(u)).collect());
        f.debug_struct("RawAlerts")
            .field("enabled", &self.enabled)
            .field("window_ms", &self.window_ms)
            .field("interval_ms", &self.interval_ms)
            .field("resolve_ratio", &self.resolve_ratio)
            .field("webhooks", &webhooks)
            .field("format", &self.format)
            .field("queue", &self.queue)
            .field("retries", &self.retries)
            .field("timeout_ms", &self.timeout_ms)
            .field("repeat_interval_ms", &self.repeat_interval_ms)
            .field("max_firing", &self.max_firing)
            .field("resolved_states", &self.resolved_states)
            .field("window_rows", &self.window_rows)
            .field("kept_per_webhook", &self.kept_per_webhook)
            .field("instance", &self.instance)
            .field("failure_rate", &self.failure_rate)
            .field("exec_time", &self.exec_time)
            .field("repairs", &self.repairs)
            .field("upstream_errors", &self.upstream_errors)
            .field("events_dropped", &self.events_dropped)
            .finish()
    }
}

// === impl AlertsConfig ===

impl std::fmt::Debug for AlertsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let webhooks: Vec<Origin<'_>> = self.webhooks.iter().map(Origin).collect();
        f.debug_struct("AlertsConfig")
            .field("enabled", &self.enabled)
            .field("window", &self.window)
            .field("interval", &self.interval)
            .field("resolve_ratio", &self.resolve_ratio)
            .field("rules", &self.rules)
            .field("webhooks", &webhooks)
            .field("format", &self.format)
            .field("queue", &self.queue)
            .field("retries", &self.retries)
            .field("timeout", &self.timeout)
            .field("repeat_interval", &self.repeat_interval)
            .field("max_firing", &self.max_firing)
            .field("resolved_states", &self.resolved_states)
            .field("window_rows", &self.window_rows)
            .field("kept_per_webhook", &self.kept_per_webhook)
            .field("instance", &self.instance)
            .finish()
    }
}

impl Default for AlertsConfig {
    /// The defaults of the issue: 15-minute window, every rule on.
    fn default() -> Self {
        RawAlerts::default().validate(&mut Vec::new())
    }
}

impl AlertFormat {
    /// `alertmanager` or `slack`.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertFormat::Alertmanager => "alertmanager",
            AlertFormat::Slack => "slack",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A webhook's password holding a raw `/` (`?`, `#`) ended its host
    /// there: `https://hook:98/76@receiver/x` was posted to host `hook`,
    /// port 98. Refused by number, saying to percent-encode, without the
    /// URL; encoded, the receiver's.
    #[test]
    fn a_webhook_password_holding_a_slash_is_refused() {
        for url in [
            "https://hook:98/76@receiver.example/x",
            "https://hook:pw/zq@receiver.example/x",
            "https://tok/zq@receiver.example",
            // A secret path's own `@`: nothing after it is shown either.
            "https://hooks.example/services/T0/pw@zq",
        ] {
            let raw = RawAlerts {
                webhooks: Some(vec![url.into()]),
                ..RawAlerts::default()
            };
            let e = raw.validated().unwrap_err();
            assert!(e.contains("alert webhook #1"), "{url}: {e}");
            assert!(e.contains("percent-encode"), "{url}: {e}");
            for secret in ["76", "pw", "zq", "tok"] {
                assert!(!e.contains(secret), "{url}: {e}");
            }
        }
        let uri = webhook_uri("https://hook:pw%2Fzq@receiver.example/x").unwrap();
        assert_eq!(uri.host(), Some("receiver.example"));
    }

    #[test]
    fn defaults_are_the_issues() {
        let c = AlertsConfig::default();
        assert!(c.enabled);
        assert_eq!(c.window, Duration::from_secs(900));
        let fr = c.rules.failure_rate.unwrap();
        assert_eq!((fr.threshold, fr.min_volume), (0.05, 20));
        assert_eq!(c.rules.exec_time.unwrap().threshold, 5_000.0);
        assert_eq!(c.format, AlertFormat::Alertmanager);
        assert_eq!(c.repeat_interval, Some(Duration::from_secs(4 * 3600)));
    }

    /// What a round reads and a webhook keeps is bounded by settings:
    /// the defaults, values set, and 0 refused by name.
    #[test]
    fn the_bounds_of_a_round_are_settings() {
        let c = AlertsConfig::default();
        assert_eq!(
            (
                c.max_firing,
                c.resolved_states,
                c.window_rows,
                c.kept_per_webhook
            ),
            (1000, 1000, 10_000, 2000)
        );
        let set: RawAlerts = toml::from_str(
            "resolved_states = 5
window_rows = 7
kept_per_webhook = 9",
        )
        .unwrap();
        let c = set.validated().unwrap();
        assert_eq!(
            (c.resolved_states, c.window_rows, c.kept_per_webhook),
            (5, 7, 9)
        );
        let zero: RawAlerts = toml::from_str(
            "resolved_states = 0
window_rows = 0
kept_per_webhook = 0",
        )
        .unwrap();
        let e = zero.validated().unwrap_err();
        for name in ["resolved_states", "window_rows", "kept_per_webhook"] {
            assert!(
                e.contains(&format!("alerts.{name} must be greater than 0")),
                "{e}"
            );
        }
    }

    #[test]
    fn repeat_interval_is_off_at_zero_and_not_shorter_than_a_round() {
        let off: RawAlerts = toml::from_str("repeat_interval_ms = 0").unwrap();
        assert_eq!(off.validated().unwrap().repeat_interval, None);
        let hourly: RawAlerts = toml::from_str("repeat_interval_ms = 3600000").unwrap();
        let c = hourly.validated().unwrap();
        assert_eq!(c.repeat_interval, Some(Duration::from_secs(3600)));
        let nonsense: RawAlerts =
            toml::from_str("interval_ms = 30000\nrepeat_interval_ms = 10").unwrap();
        let e = nonsense.validated().unwrap_err();
        assert!(e.contains("alerts.repeat_interval_ms 10"), "{e}");
    }

    #[test]
    fn rules_turn_off_and_bad_values_are_reported() {
        let raw: RawAlerts = toml::from_str(
            "format = \"pager\"\nwindow_ms = 0\nwebhooks = [\"ftp://x\"]\n[repairs]\nenabled = false\n[failure_rate]\nthreshold = -1.0",
        )
        .unwrap();
        let mut problems = Vec::new();
        let c = raw.validate(&mut problems);
        assert!(c.rules.repairs.is_none());
        assert_eq!(problems.len(), 4, "{problems:?}");
    }

    /// A share's threshold of 1 or more could never fire: refused. Counts
    /// and times have no such bound.
    #[test]
    fn a_share_that_could_never_fire_is_refused() {
        for (rule, threshold, refused) in [
            ("failure_rate", 2.0, true),
            ("failure_rate", 1.0, true),
            ("failure_rate", 0.99, false),
            ("upstream_errors", 5.0, true),
            ("exec_time", 30_000.0, false),
            ("repairs", 3.0, false),
        ] {
            let raw: RawAlerts =
                toml::from_str(&format!("[{rule}]\nthreshold = {threshold:?}")).unwrap();
            let mut problems = Vec::new();
            raw.validate(&mut problems);
            assert_eq!(
                !problems.is_empty(),
                refused,
                "{rule} {threshold}: {problems:?}"
            );
            if refused {
                assert!(problems[0].contains("could not fire"), "{problems:?}");
            }
        }
    }

    /// An infinite threshold is refused as not finite, a negative one as
    /// below 0 (both were told "expected ≥ 0", wrong for `inf`).
    #[test]
    fn a_threshold_must_be_finite_and_not_negative() {
        for threshold in ["inf", "-inf", "nan", "-1.0"] {
            let raw: RawAlerts =
                toml::from_str(&format!("[exec_time]\nthreshold = {threshold}")).unwrap();
            let mut problems = Vec::new();
            raw.validate(&mut problems);
            assert_eq!(problems.len(), 1, "{threshold}: {problems:?}");
            assert!(
                problems[0].ends_with("expected a finite number ≥ 0"),
                "{problems:?}"
            );
        }
    }

    #[test]
    fn flags_override_the_file_rule_by_rule() {
        let file: RawAlerts = toml::from_str("[failure_rate]\nmin_volume = 50").unwrap();
        let flags = RawAlerts {
            failure_rate: Some(RawRule {
                threshold: Some(0.1),
                ..RawRule::default()
            }),
            format: Some("slack".into()),
            ..RawAlerts::default()
        };
        let c = file.merge(flags).validate(&mut Vec::new());
        let fr = c.rules.failure_rate.unwrap();
        assert_eq!((fr.threshold, fr.min_volume), (0.1, 50));
        assert_eq!(c.format, AlertFormat::Slack);
    }
}
