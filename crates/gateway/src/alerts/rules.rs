//! The rules, as pure functions: [`observe`] turns a window's numbers into
//! [`Observation`]s (one per rule × tool × model), [`decide`] says whether
//! an alert fires, resolves (with hysteresis) or stays as it is.
//!
//! Per tool, rules look at all models together (`model = "*"`), and per
//! tool × model as well when the tool was called by more than one model in
//! the window (with one model the two would be the same alert twice), or
//! when that tool × model alert is firing: it resolves on its own model's
//! numbers, not because another model's calls left the window.

use std::collections::{BTreeMap, HashSet};

use toolwarden_store::{AlertTransition, AlertWindow};

use super::config::{Rules, Threshold};

/// The rules' names (the `rule` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleName {
    /// Failed results / results.
    ToolFailureRate,
    /// Mean estimated client-side execution time (ms).
    ToolExecTime,
    /// Pairing defects repaired.
    Repairs,
    /// Upstream errors / requests.
    UpstreamErrorRate,
    /// Events this gateway's recorder dropped.
    EventsDropped,
}

/// A rule's value for one tool × model in the window.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Observation {
    /// The rule.
    pub rule: RuleName,
    /// The tool, `*` for rules over requests.
    pub tool: String,
    /// The model, `*` for all.
    pub model: String,
    /// The gateway, for rules over its own counters; empty otherwise.
    pub instance: String,
    /// The value compared with the threshold.
    pub value: f64,
    /// The volume behind it (min-volume check).
    pub volume: u64,
    /// The rule's settings.
    pub limit: Threshold,
}

/// What to do with an alert this round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Start firing.
    Fire,
    /// Stop firing.
    Resolve,
    /// No change.
    Keep,
}

// === impl RuleName ===

impl RuleName {
    /// The `rule` label.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleName::ToolFailureRate => "tool_failure_rate",
            RuleName::ToolExecTime => "tool_exec_time",
            RuleName::Repairs => "repairs",
            RuleName::UpstreamErrorRate => "upstream_error_rate",
            RuleName::EventsDropped => "events_dropped",
        }
    }

    /// The Alertmanager `alertname`.
    pub fn alertname(rule: &str) -> &'static str {
        match rule {
            "tool_failure_rate" => "ToolwardenToolFailureRate",
            "tool_exec_time" => "ToolwardenToolSlow",
            "repairs" => "ToolwardenRepairs",
            "upstream_error_rate" => "ToolwardenUpstreamErrors",
            "events_dropped" => "ToolwardenEventsDropped",
            _ => "Toolwarden",
        }
    }

    /// How a value of this rule reads (`12.5%`, `6.2 s`, `3`).
    pub fn format_value(rule: &str, value: f64) -> String {
        match rule {
            "tool_failure_rate" | "upstream_error_rate" => format!("{:.1}%", value * 100.0),
            "tool_exec_time" => format!("{:.1} s", value / 1000.0),
            _ => format!("{value}"),
        }
    }
}

// === impl Observation ===

impl Observation {
    /// `rule|tool|model|instance`: the alert's identity.
    pub(crate) fn key(&self) -> String {
        alert_key(self.rule.as_str(), &self.tool, &self.model, &self.instance)
    }

    /// The transition to `state` (step `seq`) this observation makes at
    /// `at_ms`, announced by `gateway`, for an alert firing since
    /// `started_ms`.
    pub(crate) fn transition(
        &self,
        seq: i64,
        state: &str,
        started_ms: i64,
        at_ms: i64,
        gateway: &str,
    ) -> toolwarden_store::AlertTransition {
        toolwarden_store::AlertTransition {
            alert_key: self.key(),
            seq,
            state: state.into(),
            rule: self.rule.as_str().into(),
            tool: self.tool.clone(),
            model: self.model.clone(),
            instance: self.instance.clone(),
            value: self.value,
            threshold: self.limit.threshold,
            volume: i64::try_from(self.volume).unwrap_or(i64::MAX),
            started_ms,
            at_ms,
            gateway: gateway.into(),
        }
    }
}

/// The identity of an alert.
pub(crate) fn alert_key(rule: &str, tool: &str, model: &str, instance: &str) -> String {
    format!("{rule}|{tool}|{model}|{instance}")
}

/// Why a resolved per-gateway alert was resolved by another gateway than
/// the one it is about: that instance stopped evaluating (`None` for every
/// other transition).
pub(crate) fn resolved_for_gone_instance(t: &AlertTransition) -> Option<String> {
    (t.state == "resolved" && !t.instance.is_empty() && t.gateway != t.instance).then(|| {
        format!(
            "gateway {} stopped evaluating alerts (stopped, or restarted under another name); \
             resolved by gateway {}",
            t.instance, t.gateway
        )
    })
}

/// One row of [`per_model`]: a key, a model (`*` for all) and the sum.
struct ModelRow<K, V> {
    key: K,
    model: String,
    sum: V,
    /// A per-model row of a key with a single model (the same numbers as
    /// its `*` row): observed only for an alert already firing.
    alone: bool,
}

/// Sums per key: a `*` row over all models, and one row per model.
fn per_model<K: Ord + Clone, V: Copy>(
    rows: impl Iterator<Item = (K, String, V)>,
    add: impl Fn(V, V) -> V,
) -> Vec<ModelRow<K, V>> {
    let mut groups: BTreeMap<K, Vec<(String, V)>> = BTreeMap::new();
    for (key, model, v) in rows {
        groups.entry(key).or_default().push((model, v));
    }
    let mut out = Vec::new();
    for (key, models) in groups {
        let total = models
            .iter()
            .map(|(_, v)| *v)
            .reduce(&add)
            .expect("a group has a row");
        let alone = models.len() == 1;
        out.extend(models.into_iter().map(|(model, sum)| ModelRow {
            key: key.clone(),
            model,
            sum,
            alone,
        }));
        out.push(ModelRow {
            key,
            model: "*".to_string(),
            sum: total,
            alone: false,
        });
    }
    out
}

/// Every enabled rule's observations for this window; `dropped` is the
/// number of events this gateway (`instance`) dropped within it. `firing`
/// holds the keys of the alerts firing now: a tool × model row of a tool
/// with one model is observed for those only.
pub(crate) fn observe(
    rules: &Rules,
    w: &AlertWindow,
    dropped: u64,
    instance: &str,
    firing: &HashSet<&str>,
) -> Vec<Observation> {
    let mut out = Vec::new();
    let mut push = |rule: RuleName, tool: String, model: String, value, volume, limit, alone| {
        let key = alert_key(rule.as_str(), &tool, &model, "");
        if alone && !firing.contains(key.as_str()) {
            return;
        }
        out.push(Observation {
            rule,
            tool,
            model,
            instance: String::new(),
            value,
            volume,
            limit,
        })
    };
    let tools = per_model(
        w.tools.iter().map(|r| {
            let v = (r.results, r.failures, r.exec_ms_sum, r.exec_count);
            (r.tool.clone(), r.model.clone(), v)
        }),
        |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3),
    );
    for row in tools {
        let (tool, model, alone) = (row.key, row.model, row.alone);
        let (results, failures, exec_sum, timed) = row.sum;
        if let Some(limit) = rules.failure_rate
            && results > 0
        {
            let rate = failures as f64 / results as f64;
            let rule = RuleName::ToolFailureRate;
            push(
                rule,
                tool.clone(),
                model.clone(),
                rate,
                results,
                limit,
                alone,
            );
        }
        if let Some(limit) = rules.exec_time
            && timed > 0
        {
            let mean = exec_sum / timed as f64;
            let rule = RuleName::ToolExecTime;
            push(rule, tool, model, mean, timed, limit, alone);
        }
    }
    let requests = per_model(
        w.requests.iter().map(|r| {
            let v = (r.requests, r.upstream_errors, r.repairs);
            ((), r.model.clone(), v)
        }),
        |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2),
    );
    for row in requests {
        let (model, alone) = (row.model, row.alone);
        let (n, errors, repairs) = row.sum;
        if let Some(limit) = rules.upstream_errors
            && n > 0
        {
            let rate = errors as f64 / n as f64;
            let rule = RuleName::UpstreamErrorRate;
            push(rule, "*".into(), model.clone(), rate, n, limit, alone);
        }
        if let Some(limit) = rules.repairs {
            let rule = RuleName::Repairs;
            push(
                rule,
                "*".into(),
                model,
                repairs as f64,
                repairs,
                limit,
                alone,
            );
        }
    }
    if let Some(limit) = rules.events_dropped {
        out.push(Observation {
            rule: RuleName::EventsDropped,
            tool: "*".into(),
            model: "*".into(),
            instance: instance.to_string(),
            value: dropped as f64,
            volume: dropped,
            limit,
        });
    }
    out
}

/// This gateway's settings of the rule named `rule`; `None` when it does
/// not evaluate it (turned off, or a rule of another version).
pub(crate) fn limit_of(rules: &Rules, rule: &str) -> Option<Threshold> {
    match rule {
        "tool_failure_rate" => rules.failure_rate,
        "tool_exec_time" => rules.exec_time,
        "repairs" => rules.repairs,
        "upstream_error_rate" => rules.upstream_errors,
        "events_dropped" => rules.events_dropped,
        _ => None,
    }
}

/// Fire above the threshold with enough volume; once firing, resolve only
/// at or below `threshold × resolve_ratio` or when the window has no data.
pub(crate) fn decide(firing: bool, obs: Option<&Observation>, resolve_ratio: f64) -> Decision {
    match (firing, obs) {
        (true, None) => Decision::Resolve,
        (true, Some(o)) if o.volume == 0 || o.value <= o.limit.threshold * resolve_ratio => {
            Decision::Resolve
        }
        (false, Some(o)) if o.volume >= o.limit.min_volume && o.value > o.limit.threshold => {
            Decision::Fire
        }
        _ => Decision::Keep,
    }
}

#[cfg(test)]
mod tests {
    use toolwarden_store::{RequestWindowRow, ToolWindowRow};

    use super::*;
    use crate::alerts::config::AlertsConfig;

    fn row(tool: &str, model: &str, results: u64, failures: u64) -> ToolWindowRow {
        ToolWindowRow {
            tool: tool.into(),
            model: model.into(),
            results,
            failures,
            exec_ms_sum: 100.0 * results as f64,
            exec_count: results,
        }
    }

    fn find<'a>(
        obs: &'a [Observation],
        rule: RuleName,
        tool: &str,
        model: &str,
    ) -> Option<&'a Observation> {
        obs.iter()
            .find(|o| o.rule == rule && o.tool == tool && o.model == model)
    }

    #[test]
    fn per_tool_always_per_model_only_with_several_models() {
        let rules = AlertsConfig::default().rules;
        let w = AlertWindow {
            tools: vec![
                row("book", "m1", 10, 5),
                row("book", "m2", 30, 0),
                row("lookup", "m1", 40, 1),
            ],
            requests: vec![RequestWindowRow {
                model: "m1".into(),
                requests: 40,
                upstream_errors: 4,
                repairs: 2,
            }],
        };
        let obs = observe(&rules, &w, 0, "gw", &HashSet::new());
        let book = find(&obs, RuleName::ToolFailureRate, "book", "*").unwrap();
        assert_eq!((book.value, book.volume), (5.0 / 40.0, 40));
        assert_eq!(decide(false, Some(book), 0.8), Decision::Fire);
        let m1 = find(&obs, RuleName::ToolFailureRate, "book", "m1").unwrap();
        assert_eq!(
            decide(false, Some(m1), 0.8),
            Decision::Keep,
            "10 < 20 results"
        );
        assert!(find(&obs, RuleName::ToolFailureRate, "lookup", "m1").is_none());
        let up = find(&obs, RuleName::UpstreamErrorRate, "*", "*").unwrap();
        assert_eq!(decide(false, Some(up), 0.8), Decision::Fire);
        let rep = find(&obs, RuleName::Repairs, "*", "*").unwrap();
        assert_eq!(decide(false, Some(rep), 0.8), Decision::Fire);
        let dropped = find(&obs, RuleName::EventsDropped, "*", "*").unwrap();
        assert_eq!(dropped.instance, "gw");
        assert_eq!(decide(false, Some(dropped), 0.8), Decision::Keep);
        let slow = find(&obs, RuleName::ToolExecTime, "lookup", "*").unwrap();
        assert_eq!(slow.value, 100.0);
    }

    /// `book|m1` fired while m2 also called `book`; once m2's calls have
    /// left the window, m1's own numbers (still all failures) keep it
    /// firing: it must not resolve for want of a row, to fire again when
    /// m2 comes back.
    #[test]
    fn a_firing_tool_model_alert_is_observed_when_its_model_is_alone() {
        let rules = AlertsConfig::default().rules;
        let both = AlertWindow {
            tools: vec![row("book", "m1", 20, 20), row("book", "m2", 20, 0)],
            requests: Vec::new(),
        };
        let obs = observe(&rules, &both, 0, "gw", &HashSet::new());
        let m1 = find(&obs, RuleName::ToolFailureRate, "book", "m1").expect("m1's row");
        assert_eq!(decide(false, Some(m1), 0.8), Decision::Fire);
        let key = m1.key();

        let alone = AlertWindow {
            tools: vec![row("book", "m1", 20, 20)],
            requests: Vec::new(),
        };
        let firing = HashSet::from([key.as_str()]);
        let obs = observe(&rules, &alone, 0, "gw", &firing);
        let m1 = find(&obs, RuleName::ToolFailureRate, "book", "m1");
        assert_eq!(decide(true, m1, 0.8), Decision::Keep, "{obs:?}");
        // Not firing: one model's row would be the `*` alert twice.
        let obs = observe(&rules, &alone, 0, "gw", &HashSet::new());
        assert!(find(&obs, RuleName::ToolFailureRate, "book", "m1").is_none());
        // Only the firing rule's row: m1's exec time is not observed.
        let obs = observe(&rules, &alone, 0, "gw", &firing);
        assert!(find(&obs, RuleName::ToolExecTime, "book", "m1").is_none());
    }

    #[test]
    fn hysteresis_keeps_firing_between_the_thresholds() {
        let limit = Threshold {
            threshold: 0.05,
            min_volume: 20,
        };
        let at = |value: f64, volume: u64| Observation {
            rule: RuleName::ToolFailureRate,
            tool: "t".into(),
            model: "*".into(),
            instance: String::new(),
            value,
            volume,
            limit,
        };
        assert_eq!(decide(false, Some(&at(0.06, 19)), 0.8), Decision::Keep);
        assert_eq!(decide(false, Some(&at(0.05, 100)), 0.8), Decision::Keep);
        assert_eq!(decide(false, Some(&at(0.06, 20)), 0.8), Decision::Fire);
        assert_eq!(decide(true, Some(&at(0.045, 100)), 0.8), Decision::Keep);
        assert_eq!(decide(true, Some(&at(0.04, 100)), 0.8), Decision::Resolve);
        assert_eq!(decide(true, Some(&at(0.5, 3)), 0.8), Decision::Keep);
        assert_eq!(decide(true, None, 0.8), Decision::Resolve);
    }
}
