//! The rules, as pure functions: [`observe`] turns a window's numbers into
//! [`Observation`]s (one per rule × tool × model), [`decide`] says whether
//! an alert fires, resolves (with hysteresis) or stays as it is.
//!
//! Per tool, rules look at all models together (`model = "*"`), and per
//! tool × model as well when the tool was called by more than one model in
//! the window (with one model the two would be the same alert twice), or
//! when that tool × model alert is firing: it resolves on its own model's
//! numbers, not because another model's calls left the window.

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashSet},
};

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
    /// The model, `*` for all (then `all_models`).
    pub model: String,
    /// Over every model: `model` is the `*` of all models, not a model
    /// so named.
    pub all_models: bool,
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

    /// Whether the rule is per tool (`tool_…`): its alerts' `tool` names
    /// one, a tool a client named `*` too. The rules over requests have
    /// the tool `*`, which names none.
    pub fn is_per_tool(rule: &str) -> bool {
        rule.starts_with("tool_")
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
    /// `rule|tool|model|instance`: the alert's identity ([`alert_key`]).
    pub(crate) fn key(&self) -> String {
        let models = if self.all_models {
            Models::All
        } else {
            Models::One(&self.model)
        };
        alert_key(self.rule.as_str(), &self.tool, models, &self.instance)
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

/// The models an alert is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Models<'a> {
    /// Every model (`*` in the key).
    All,
    /// One model, whatever its name (one named `*` too).
    One(&'a str),
}

/// The identity of an alert: `rule|tool|model|instance`, one per alert.
/// In a name, `%` and `|` (the separator) are percent-encoded, and a
/// model named `*` is `%2A`, so that no two alerts share a key: not a
/// model named `*` and all models, not tool `a|b` of model `c` and tool
/// `a` of model `b|c`. Other names are as they are (the keys of alerts
/// recorded before are unchanged).
pub(crate) fn alert_key(rule: &str, tool: &str, models: Models<'_>, instance: &str) -> String {
    let model = match models {
        Models::All => Cow::Borrowed("*"),
        Models::One("*") => Cow::Borrowed("%2A"),
        Models::One(model) => key_part(model),
    };
    format!("{rule}|{}|{model}|{}", key_part(tool), key_part(instance))
}

/// A name in an alert key: `%` and `|` percent-encoded.
fn key_part(name: &str) -> Cow<'_, str> {
    if !name.contains(['%', '|']) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(name.replace('%', "%25").replace('|', "%7C"))
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
    /// The row over all models (`model` is `*`).
    all: bool,
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
            all: false,
            sum,
            alone,
        }));
        out.push(ModelRow {
            key,
            model: "*".to_string(),
            all: true,
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
    let mut push =
        |rule: RuleName, tool: String, model: (String, bool), value, volume, limit, alone| {
            let (model, all_models) = model;
            let o = Observation {
                rule,
                tool,
                model,
                all_models,
                instance: String::new(),
                value,
                volume,
                limit,
            };
            if alone && !firing.contains(o.key().as_str()) {
                return;
            }
            out.push(o)
        };
    let tools = per_model(
        w.tools.iter().map(|r| {
            let v = (r.results, r.failures, r.exec_ms_sum, r.exec_count);
            (r.tool.clone(), r.model.clone(), v)
        }),
        |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3),
    );
    for row in tools {
        let (tool, model, alone) = (row.key, (row.model, row.all), row.alone);
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
        let (model, alone) = ((row.model, row.all), row.alone);
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
            all_models: true,
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

    /// A model named `*` (a client may name any model) is an alert of its
    /// own, not a second observation of the all-models alert: every
    /// observation of a round has its own key.
    #[test]
    fn a_model_named_star_is_not_all_models() {
        let rules = AlertsConfig::default().rules;
        let w = AlertWindow {
            tools: vec![row("book", "*", 20, 20), row("book", "m2", 20, 0)],
            requests: vec![
                RequestWindowRow {
                    model: "*".into(),
                    requests: 20,
                    upstream_errors: 20,
                    repairs: 0,
                },
                RequestWindowRow {
                    model: "m2".into(),
                    requests: 20,
                    upstream_errors: 0,
                    repairs: 0,
                },
            ],
        };
        let obs = observe(&rules, &w, 0, "gw", &HashSet::new());
        let keys: HashSet<String> = obs.iter().map(Observation::key).collect();
        assert_eq!(keys.len(), obs.len(), "{obs:#?}");
        let rate = |rule, all: bool| {
            let o = obs.iter().find(|o| {
                o.rule == rule && o.tool != "lookup" && o.model == "*" && o.all_models == all
            });
            o.map(|o| o.value)
        };
        assert_eq!(rate(RuleName::ToolFailureRate, true), Some(0.5));
        assert_eq!(rate(RuleName::ToolFailureRate, false), Some(1.0));
        assert_eq!(rate(RuleName::UpstreamErrorRate, true), Some(0.5));
        assert_eq!(rate(RuleName::UpstreamErrorRate, false), Some(1.0));
    }

    /// A tool a client named `*` is a tool of its own: its alerts' keys
    /// are not those of the rules over requests (whose tool is `*`), nor
    /// of any other alert of the round; the tool keeps its name.
    #[test]
    fn a_tool_named_star_has_keys_of_its_own() {
        let rules = AlertsConfig::default().rules;
        let w = AlertWindow {
            tools: vec![row("*", "m1", 20, 20), row("*", "m2", 20, 20)],
            requests: vec![RequestWindowRow {
                model: "m1".into(),
                requests: 20,
                upstream_errors: 20,
                repairs: 1,
            }],
        };
        let obs = observe(&rules, &w, 1, "gw", &HashSet::new());
        let keys: HashSet<String> = obs.iter().map(Observation::key).collect();
        assert_eq!(keys.len(), obs.len(), "{obs:#?}");
        let tool = find(&obs, RuleName::ToolFailureRate, "*", "*").unwrap();
        assert_eq!(tool.key(), "tool_failure_rate|*|*|");
        let up = find(&obs, RuleName::UpstreamErrorRate, "*", "*").unwrap();
        assert_eq!(up.key(), "upstream_error_rate|*|*|");
    }

    /// An alert key's name read back: `%XX` decoded.
    fn unescape(part: &str) -> String {
        let mut out = String::new();
        let mut rest = part;
        while let Some(at) = rest.find('%') {
            out.push_str(&rest[..at]);
            let code = u8::from_str_radix(&rest[at + 1..at + 3], 16).expect("two hex digits");
            out.push(char::from(code));
            rest = &rest[at + 3..];
        }
        out + rest
    }

    /// The keys `/metrics`' `model` label is read from (its test builds
    /// them by hand): all models, a model named `*`, one named `%2A`.
    #[test]
    fn the_model_parts_of_keys() {
        let model = |models| alert_key("tool_failure_rate", "book", models, "");
        assert_eq!(model(Models::All), "tool_failure_rate|book|*|");
        assert_eq!(model(Models::One("*")), "tool_failure_rate|book|%2A|");
        assert_eq!(model(Models::One("%2A")), "tool_failure_rate|book|%252A|");
    }

    #[test]
    fn names_holding_the_separator_make_keys_of_their_own() {
        assert_ne!(
            alert_key("repairs", "a|b", Models::One("c"), ""),
            alert_key("repairs", "a", Models::One("b|c"), "")
        );
        assert_ne!(
            alert_key("repairs", "*", Models::One("*"), ""),
            alert_key("repairs", "*", Models::All, "")
        );
    }

    proptest::proptest! {
        /// A key reads back as the alert it names (so two alerts share a
        /// key only when they are the same), whatever the names hold
        /// (`|`, `%`, `*`); plain names keep the keys alerts were recorded
        /// under.
        #[test]
        fn alert_keys_are_one_per_alert(
            tool in "[a-c|%*]{0,4}",
            model in proptest::option::of("[a-c|%*2A]{0,4}"),
            instance in "[a-c|%]{0,3}",
        ) {
            let models = model.as_deref().map_or(Models::All, Models::One);
            let key = alert_key("repairs", &tool, models, &instance);
            let parts: Vec<&str> = key.split('|').collect();
            proptest::prop_assert_eq!(parts.len(), 4, "{}", key);
            let read_model = match parts[2] {
                "*" => None,
                other => Some(unescape(other)),
            };
            proptest::prop_assert_eq!(
                (parts[0], unescape(parts[1]), read_model, unescape(parts[3])),
                ("repairs", tool.clone(), model.clone(), instance.clone())
            );
            let plain = |s: &str| !s.contains(['|', '%']);
            if plain(&tool) && plain(&instance) && model.as_deref().is_none_or(|m| plain(m) && m != "*") {
                let model = model.as_deref().unwrap_or("*");
                proptest::prop_assert_eq!(key, format!("repairs|{tool}|{model}|{instance}"));
            }
        }
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
            all_models: true,
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
