//! The registry: tools by name and alias, each with its policy, breaker,
//! metrics and state (enabled / disabled / paused).
//!
//! Registration and aliases take `&mut self` (build the registry, then
//! share it in an `Arc`); state changes, breaker resets and reads take
//! `&self` and are safe while calls run.

use std::{
    collections::{BTreeMap, HashMap},
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU8, AtomicU64, Ordering},
    },
};

use serde_json::Value;
use toolwarden_wire::Dialect;

use crate::{
    Breaker, Fallback, HealthReport, HealthThresholds, Tool, ToolPolicy,
    metrics::ToolMetrics,
    metrics::ToolStats,
    render,
    strict::{StrictSchemaError, strict_schema},
    validate::ArgValidator,
};

/// Whether a tool can be called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// Called normally and advertised.
    Enabled,
    /// Not callable and not advertised.
    Disabled,
    /// Temporarily not callable; still advertised.
    Paused,
}

/// A registration or lookup that could not be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: '{name}'{}", detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
pub struct RegistryError {
    kind: RegistryErrorKind,
    name: String,
    detail: Option<String>,
    strict: Option<StrictSchemaError>,
}

/// What kind of registry error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryErrorKind {
    /// The name or alias is taken.
    Duplicate,
    /// The tool's schema cannot be compiled.
    InvalidSchema,
    /// The name is empty, too long or has characters providers reject.
    InvalidName,
    /// No tool has this name.
    UnknownTool,
    /// The tool's [`crate::Fallback::Tool`] names no
    /// registered tool, or the tool itself.
    InvalidFallback,
    /// The tool is registered [`strict`](ToolPolicy::strict) and its
    /// schema has no strict-mode form:
    /// [`RegistryError::strict_schema_error`] says why and where.
    NotStrict,
}

/// The tools an executor can run.
pub struct Registry {
    entries: Vec<Entry>,
    names: HashMap<Arc<str>, usize>,
    unknown_calls: AtomicU64,
}

/// One registered tool and everything the executor keeps for it.
pub(crate) struct Entry {
    pub(crate) name: Arc<str>,
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) validator: ArgValidator,
    pub(crate) policy: ToolPolicy,
    pub(crate) breaker: Option<Breaker>,
    pub(crate) metrics: ToolMetrics,
    pub(crate) sequential: tokio::sync::Mutex<()>,
    /// The strict-mode schema, for a tool registered strict.
    pub(crate) strict: Option<Value>,
    state: AtomicU8,
}

// === impl ToolState ===

impl ToolState {
    /// `enabled`, `disabled` or `paused`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolState::Enabled => "enabled",
            ToolState::Disabled => "disabled",
            ToolState::Paused => "paused",
        }
    }

    fn from_u8(v: u8) -> Self {
        match v {
            0 => ToolState::Enabled,
            1 => ToolState::Disabled,
            _ => ToolState::Paused,
        }
    }
}

impl fmt::Display for RegistryErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RegistryErrorKind::Duplicate => "name already registered",
            RegistryErrorKind::InvalidSchema => "invalid argument schema for tool",
            RegistryErrorKind::InvalidName => "invalid tool name",
            RegistryErrorKind::UnknownTool => "no such tool",
            RegistryErrorKind::InvalidFallback => "invalid fallback for tool",
            RegistryErrorKind::NotStrict => "no strict-mode schema for tool",
        })
    }
}

// === impl RegistryError ===

impl RegistryError {
    fn new(kind: RegistryErrorKind, name: &str, detail: Option<String>) -> Self {
        RegistryError {
            kind,
            name: name.to_string(),
            detail,
            strict: None,
        }
    }

    fn not_strict(name: &str, error: StrictSchemaError) -> Self {
        RegistryError {
            kind: RegistryErrorKind::NotStrict,
            name: name.to_string(),
            detail: Some(error.to_string()),
            strict: Some(error),
        }
    }

    /// What kind of error.
    pub fn kind(&self) -> RegistryErrorKind {
        self.kind
    }

    /// The tool's (or alias's) name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why the schema has no strict-mode form
    /// ([`RegistryErrorKind::NotStrict`]).
    pub fn strict_schema_error(&self) -> Option<&StrictSchemaError> {
        self.strict.as_ref()
    }
}

// === impl Entry ===

impl Entry {
    pub(crate) fn state(&self) -> ToolState {
        ToolState::from_u8(self.state.load(Ordering::Relaxed))
    }

    /// The parsed arguments as validation and the tool take them: for a
    /// strict tool, optional properties sent as `null` removed; `5.0`
    /// written `5` where the schema says `integer`.
    pub(crate) fn prepare_arguments(&self, args: &mut Value) {
        if self.strict.is_some() {
            self.validator.absent_nulls(args);
        }
        self.validator.write_integers(args);
    }
}

// === impl Registry ===

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry {
            entries: Vec::new(),
            names: HashMap::new(),
            unknown_calls: AtomicU64::new(0),
        }
    }

    /// Register `tool` with the default policy.
    pub fn register(&mut self, tool: impl Tool) -> Result<(), RegistryError> {
        self.register_with(tool, ToolPolicy::default())
    }

    /// Register `tool` with `policy`. The schema is compiled here, once
    /// (and rewritten for strict mode when the policy is
    /// [`strict`](ToolPolicy::strict)); a [`Fallback::Tool`] must name a
    /// tool registered before this one (or its alias), not this tool
    /// itself.
    pub fn register_with(
        &mut self,
        tool: impl Tool,
        policy: ToolPolicy,
    ) -> Result<(), RegistryError> {
        let name: Arc<str> = Arc::from(tool.name());
        check_name(&name, false)?;
        if self.names.contains_key(&name) {
            return Err(RegistryError::new(
                RegistryErrorKind::Duplicate,
                &name,
                None,
            ));
        }
        self.check_fallback(&name, &policy)?;
        let validator = ArgValidator::compile(tool.parameters())
            .map_err(|e| RegistryError::new(RegistryErrorKind::InvalidSchema, &name, Some(e)))?;
        let strict = if policy.strict {
            Some(
                strict_schema(tool.parameters())
                    .map_err(|e| RegistryError::not_strict(&name, e))?,
            )
        } else {
            None
        };
        let breaker = policy.breaker.map(Breaker::new);
        self.names.insert(name.clone(), self.entries.len());
        self.entries.push(Entry {
            name,
            tool: Arc::new(tool),
            validator,
            policy,
            breaker,
            metrics: ToolMetrics::new(),
            sequential: tokio::sync::Mutex::new(()),
            strict,
            state: AtomicU8::new(0),
        });
        Ok(())
    }

    /// Let calls to `alias` run the tool `target` (logs show both names).
    pub fn alias(&mut self, alias: &str, target: &str) -> Result<(), RegistryError> {
        check_name(alias, true)?;
        if self.names.contains_key(alias) {
            return Err(RegistryError::new(
                RegistryErrorKind::Duplicate,
                alias,
                None,
            ));
        }
        let index = self.index_of(target)?;
        self.names.insert(Arc::from(alias), index);
        Ok(())
    }

    /// Set a tool's state (by name or alias).
    pub fn set_state(&self, name: &str, state: ToolState) -> Result<(), RegistryError> {
        let entry = &self.entries[self.index_of(name)?];
        let v = match state {
            ToolState::Enabled => 0,
            ToolState::Disabled => 1,
            ToolState::Paused => 2,
        };
        entry.state.store(v, Ordering::Relaxed);
        tracing::info!(tool = %entry.name, state = state.as_str(), "tool state changed");
        Ok(())
    }

    /// Enable a tool.
    pub fn enable(&self, name: &str) -> Result<(), RegistryError> {
        self.set_state(name, ToolState::Enabled)
    }

    /// Disable a tool: not callable, not advertised.
    pub fn disable(&self, name: &str) -> Result<(), RegistryError> {
        self.set_state(name, ToolState::Disabled)
    }

    /// Pause a tool: not callable for now, still advertised.
    pub fn pause(&self, name: &str) -> Result<(), RegistryError> {
        self.set_state(name, ToolState::Paused)
    }

    /// A tool's state, if it exists.
    pub fn state(&self, name: &str) -> Option<ToolState> {
        self.resolve(name).map(Entry::state)
    }

    /// Close a tool's circuit breaker by hand.
    pub fn reset_breaker(&self, name: &str) -> Result<(), RegistryError> {
        if let Some(b) = &self.entries[self.index_of(name)?].breaker {
            b.reset();
        }
        Ok(())
    }

    /// The canonical names of the enabled tools, in registration order.
    pub fn available(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| e.state() == ToolState::Enabled)
            .map(|e| &*e.name)
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` without tools.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `tools` field for `dialect`: every tool that is not disabled. A
    /// tool registered [`strict`](ToolPolicy::strict) has its strict
    /// schema and `"strict": true` for OpenAI's Chat Completions and
    /// Responses, its own schema for the other dialects.
    pub fn definitions(&self, dialect: Dialect) -> Value {
        let openai = matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses);
        let defs = self
            .entries
            .iter()
            .filter(|e| e.state() != ToolState::Disabled)
            .map(|e| match &e.strict {
                Some(schema) if openai => {
                    render::strict_definition(dialect, &e.name, e.tool.description(), schema)
                }
                _ => {
                    render::definition(dialect, &e.name, e.tool.description(), e.tool.parameters())
                }
            })
            .collect();
        render::tools_field(dialect, defs)
    }

    /// Metrics of every tool, in registration order.
    pub fn stats(&self) -> Vec<ToolStats> {
        self.entries.iter().map(Self::stats_of_entry).collect()
    }

    /// Metrics of one tool.
    pub fn stats_of(&self, name: &str) -> Option<ToolStats> {
        self.resolve(name).map(Self::stats_of_entry)
    }

    fn stats_of_entry(e: &Entry) -> ToolStats {
        let mut s = e.metrics.snapshot(&e.name, e.state().as_str());
        if let Some(b) = &e.breaker {
            s.breaker = Some(b.state());
            s.breaker_trips = b.trips();
            s.breaker_recoveries = b.recoveries();
        }
        s
    }

    /// The error registry's summary: `"tool:Kind" → count`. Calls to
    /// names that are not registered count as `"<unknown>:NotAvailable"`
    /// (so invented names cannot grow it).
    pub fn error_summary(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for e in &self.entries {
            for (kind, n) in e.metrics.errors_by_kind() {
                out.insert(format!("{}:{kind}", e.name), n);
            }
        }
        let unknown = self.unknown_calls.load(Ordering::Relaxed);
        if unknown > 0 {
            out.insert("<unknown>:NotAvailable".to_string(), unknown);
        }
        out
    }

    /// Which tools are over the thresholds.
    pub fn health(&self, thresholds: &HealthThresholds) -> HealthReport {
        HealthReport::from_stats(&self.stats(), thresholds)
    }

    /// The most heap memory one tool's metrics can hold, in bytes.
    pub fn max_metrics_bytes_per_tool(&self) -> usize {
        self.entries
            .first()
            .map_or(0, |e| e.metrics.max_heap_bytes())
    }

    pub(crate) fn resolve(&self, name: &str) -> Option<&Entry> {
        self.names.get(name).map(|&i| &self.entries[i])
    }

    pub(crate) fn count_unknown(&self) {
        self.unknown_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// `Tool 'x' is not available. Available tools: a, b.`
    pub(crate) fn not_available_message(&self, called: &str) -> String {
        let mut shown: String = called.chars().take(64).collect();
        if shown.len() < called.len() {
            shown.push('…');
        }
        let names: Vec<&str> = self.available().collect();
        if names.is_empty() {
            format!("Tool '{shown}' is not available. No tools are available.")
        } else {
            format!(
                "Tool '{shown}' is not available. Available tools: {}.",
                names.join(", ")
            )
        }
    }

    /// A [`Fallback::Tool`] must name a tool (or alias) registered
    /// before `name`, and not `name` itself.
    fn check_fallback(&self, name: &str, policy: &ToolPolicy) -> Result<(), RegistryError> {
        let Some(Fallback::Tool(target)) = &policy.fallback else {
            return Ok(());
        };
        let why = if **target == *name {
            "a tool cannot be its own fallback".to_string()
        } else if self.resolve(target).is_none() {
            format!("fallback tool '{target}' is not registered; register it first")
        } else {
            return Ok(());
        };
        Err(RegistryError::new(
            RegistryErrorKind::InvalidFallback,
            name,
            Some(why),
        ))
    }

    fn index_of(&self, name: &str) -> Result<usize, RegistryError> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| RegistryError::new(RegistryErrorKind::UnknownTool, name, None))
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field(
                "tools",
                &self.entries.iter().map(|e| &*e.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Tool names: 1–64 of `A-Z a-z 0-9 _ -` (what every provider accepts);
/// aliases may also hold `.`, since they are never advertised.
fn check_name(name: &str, alias: bool) -> Result<(), RegistryError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (alias && b == b'.'));
    if ok {
        Ok(())
    } else {
        Err(RegistryError::new(
            RegistryErrorKind::InvalidName,
            name,
            Some("use 1-64 characters from A-Z a-z 0-9 _ -".into()),
        ))
    }
}

#[cfg(test)]
mod tests;
