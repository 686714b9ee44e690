//! The registry: tools by name and alias, each with its policy, breaker,
//! metrics and state (enabled / disabled / paused).
//!
//! Everything takes `&self` and is safe while calls run: registration,
//! aliases and removal build a new snapshot of the tool set and swap it
//! in; a call looks its tool up in the current snapshot and keeps that
//! tool (an `Arc`) until it ends.

use std::{
    collections::{BTreeMap, HashMap},
    fmt,
    sync::{
        Arc, Mutex, PoisonError, RwLock,
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

mod name_locks;
mod suggest;

pub(crate) use name_locks::NameLock;
use name_locks::NameLocks;
use suggest::LISTED_TOOLS;

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
    /// No tool has this name (for [`Registry::remove`]: no tool has this
    /// canonical name; an alias is not removed on its own).
    UnknownTool,
    /// The tool's [`crate::Fallback::Tool`] names no
    /// registered tool, or the tool itself.
    InvalidFallback,
    /// The tool is registered [`strict`](ToolPolicy::strict) and its
    /// schema has no strict-mode form:
    /// [`RegistryError::strict_schema_error`] says why and where.
    NotStrict,
    /// [`Registry::remove`]: the tool is another tool's
    /// [`Fallback::Tool`]; remove that tool first.
    InUse,
}

/// The tools an executor can run.
///
/// Every method takes `&self`, so the registry can change while
/// executors share it (an MCP server connected after start, a per-user
/// tool set): [`register`](Self::register),
/// [`register_with`](Self::register_with), [`alias`](Self::alias) and
/// [`remove`](Self::remove) can be called through
/// [`Executor::registry`](crate::Executor::registry) at any time.
///
/// # Concurrency
///
/// The tool set is an immutable snapshot behind an `RwLock<Arc<_>>`.
/// A call's lookup takes the read lock for one hash lookup and an `Arc`
/// clone of its tool's entry: writers never hold that lock longer than a
/// pointer swap, so on the hot path it is an uncontended read lock, not
/// lock-free. A change copies the snapshot (one `Arc` per tool, so
/// O(tools)), applies itself and swaps the copy in; changes are serialised
/// by a separate mutex (a schema is compiled before it is taken).
///
/// - A call in flight keeps the tool it started with, even if that tool
///   is removed (or removed and registered again) before it ends; its
///   fallback tool is looked up by name when it is needed.
/// - A call that starts after [`remove`](Self::remove) returns gets the
///   same outcome as a call to a name never registered (`unknown_tool`,
///   `Tool 'x' is not available. Available tools: …`).
/// - A removed tool's breaker, metrics and recent errors go with it: they
///   leave [`stats`](Self::stats), [`error_summary`](Self::error_summary),
///   [`health`](Self::health) and [`definitions`](Self::definitions) at
///   once, and are dropped when its last call ends (a call still running
///   records into them, unseen). A tool registered again under the same
///   name starts afresh: breaker closed, no metrics.
/// - [`ToolPolicy::sequential`] holds per name, across registrations: a
///   call of a removed tool still running holds back the calls of a
///   `sequential` tool registered again in its place, so they never
///   overlap. (The registry keeps one lock per name some registration,
///   or a call of a removed one, still holds: no more.)
pub struct Registry {
    tools: RwLock<Arc<Tools>>,
    /// Serialises the changes (copy, change, swap), and holds the
    /// `sequential` lock of each live name.
    writer: Mutex<NameLocks>,
    unknown_calls: AtomicU64,
}

/// One snapshot of the tool set; never changed once shared.
#[derive(Clone, Default)]
struct Tools {
    /// In registration order.
    entries: Vec<Arc<Entry>>,
    /// Names and aliases.
    names: HashMap<Arc<str>, Arc<Entry>>,
}

/// One registered tool and everything the executor keeps for it.
pub(crate) struct Entry {
    pub(crate) name: Arc<str>,
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) validator: ArgValidator,
    pub(crate) policy: ToolPolicy,
    pub(crate) breaker: Option<Breaker>,
    pub(crate) metrics: ToolMetrics,
    /// Its name's `sequential` lock, shared with the other registrations
    /// of the name still alive.
    pub(crate) sequential: NameLock,
    /// The strict-mode schema, for a tool registered strict.
    pub(crate) strict: Option<Value>,
    /// Which registration this is: unique in the process, so a tool
    /// registered again under a name is told from the removed one.
    pub(crate) registration: u64,
    state: AtomicU8,
}

/// The next [`Entry::registration`].
static NEXT_REGISTRATION: AtomicU64 = AtomicU64::new(0);

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
            RegistryErrorKind::InUse => "tool in use as a fallback",
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

// === impl Tools ===

impl Tools {
    fn entry(&self, name: &str) -> Result<&Arc<Entry>, RegistryError> {
        self.names
            .get(name)
            .ok_or_else(|| RegistryError::new(RegistryErrorKind::UnknownTool, name, None))
    }

    /// A [`Fallback::Tool`] must name a tool (or alias) registered
    /// before `name`, and not `name` itself.
    fn check_fallback(&self, name: &str, policy: &ToolPolicy) -> Result<(), RegistryError> {
        let Some(Fallback::Tool(target)) = &policy.fallback else {
            return Ok(());
        };
        let why = if **target == *name {
            "a tool cannot be its own fallback".to_string()
        } else if !self.names.contains_key(&**target) {
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

    /// The checks of a new name that depend on the tool set.
    fn check_new(&self, name: &str, policy: &ToolPolicy) -> Result<(), RegistryError> {
        if self.names.contains_key(name) {
            return Err(RegistryError::new(RegistryErrorKind::Duplicate, name, None));
        }
        self.check_fallback(name, policy)
    }
}

// === impl Registry ===

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry {
            tools: RwLock::new(Arc::default()),
            writer: Mutex::new(NameLocks::default()),
            unknown_calls: AtomicU64::new(0),
        }
    }

    /// Register `tool` with the default policy.
    pub fn register(&self, tool: impl Tool) -> Result<(), RegistryError> {
        self.register_with(tool, ToolPolicy::default())
    }

    /// Register `tool` with `policy`. The schema is compiled here, once
    /// (and rewritten for strict mode when the policy is
    /// [`strict`](ToolPolicy::strict)); a [`Fallback::Tool`] must name a
    /// tool registered before this one (or its alias), not this tool
    /// itself.
    ///
    /// Executors that share the registry see the tool from the next call
    /// that looks it up; [`definitions`](Self::definitions) has it at once.
    pub fn register_with(&self, tool: impl Tool, policy: ToolPolicy) -> Result<(), RegistryError> {
        let name: Arc<str> = Arc::from(tool.name());
        check_name(&name, false)?;
        // Checked again when the change is made; here first, so a taken
        // name is reported before the schema's errors.
        self.current().check_new(&name, &policy)?;
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
        let probe_timeout = policy.timeout.duration();
        let breaker = policy
            .breaker
            .map(|c| Breaker::new(c).with_probe_timeout(probe_timeout));
        self.change(|tools, locks| {
            tools.check_new(&name, &policy)?;
            let entry = Arc::new(Entry {
                name: name.clone(),
                tool: Arc::new(tool),
                validator,
                policy,
                breaker,
                metrics: ToolMetrics::new(),
                sequential: locks.lock_for(&name),
                strict,
                registration: NEXT_REGISTRATION.fetch_add(1, Ordering::Relaxed),
                state: AtomicU8::new(0),
            });
            tools.names.insert(name.clone(), entry.clone());
            tools.entries.push(entry);
            Ok(())
        })
    }

    /// Let calls to `alias` run the tool `target` (logs show both names).
    pub fn alias(&self, alias: &str, target: &str) -> Result<(), RegistryError> {
        check_name(alias, true)?;
        self.change(|tools, _| {
            if tools.names.contains_key(alias) {
                return Err(RegistryError::new(
                    RegistryErrorKind::Duplicate,
                    alias,
                    None,
                ));
            }
            let entry = tools.entry(target)?.clone();
            tools.names.insert(Arc::from(alias), entry);
            Ok(())
        })
    }

    /// Remove the tool named `name` (its canonical name, not an alias),
    /// with its aliases. Calls already running finish with it; later
    /// calls to it (or its aliases) are calls to an unknown tool. Its
    /// breaker, metrics and recent errors go with it (see
    /// [Concurrency](Self#concurrency)).
    ///
    /// Errors: [`RegistryErrorKind::UnknownTool`] when no tool has this
    /// name (an alias says which tool it stands for),
    /// [`RegistryErrorKind::InUse`] when the tool is another tool's
    /// [`Fallback::Tool`] (remove that tool first).
    pub fn remove(&self, name: &str) -> Result<(), RegistryError> {
        self.change(|tools, _| {
            let entry = tools.entry(name)?.clone();
            if *entry.name != *name {
                return Err(RegistryError::new(
                    RegistryErrorKind::UnknownTool,
                    name,
                    Some(format!(
                        "an alias of '{}'; remove that tool to remove its aliases",
                        entry.name
                    )),
                ));
            }
            let user = tools.entries.iter().find(|e| {
                matches!(&e.policy.fallback, Some(Fallback::Tool(target))
                    if !Arc::ptr_eq(e, &entry)
                        && tools.names.get(&**target).is_some_and(|t| Arc::ptr_eq(t, &entry)))
            });
            if let Some(user) = user {
                return Err(RegistryError::new(
                    RegistryErrorKind::InUse,
                    name,
                    Some(format!(
                        "the fallback of '{}'; remove that tool first",
                        user.name
                    )),
                ));
            }
            tools.entries.retain(|e| !Arc::ptr_eq(e, &entry));
            tools.names.retain(|_, e| !Arc::ptr_eq(e, &entry));
            Ok(())
        })?;
        tracing::info!(tool = %name, "tool removed");
        Ok(())
    }

    /// Set a tool's state (by name or alias).
    pub fn set_state(&self, name: &str, state: ToolState) -> Result<(), RegistryError> {
        let entry = self.entry(name)?;
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
        self.resolve(name).map(|e| e.state())
    }

    /// Close a tool's circuit breaker by hand.
    pub fn reset_breaker(&self, name: &str) -> Result<(), RegistryError> {
        if let Some(b) = &self.entry(name)?.breaker {
            b.reset();
        }
        Ok(())
    }

    /// The canonical names of the enabled tools, in registration order.
    pub fn available(&self) -> Vec<String> {
        self.current()
            .entries
            .iter()
            .filter(|e| e.state() == ToolState::Enabled)
            .map(|e| e.name.to_string())
            .collect()
    }

    /// Whether a tool or alias has this name.
    pub fn contains(&self, name: &str) -> bool {
        self.resolve(name).is_some()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.current().entries.len()
    }

    /// `true` without tools.
    pub fn is_empty(&self) -> bool {
        self.current().entries.is_empty()
    }

    /// The `tools` field for `dialect`: every tool registered now that is
    /// not disabled. A tool registered [`strict`](ToolPolicy::strict) has
    /// its strict schema and `"strict": true` for OpenAI's Chat
    /// Completions and Responses, its own schema for the other dialects.
    pub fn definitions(&self, dialect: Dialect) -> Value {
        let openai = matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses);
        let defs = self
            .current()
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
        self.current()
            .entries
            .iter()
            .map(|e| Self::stats_of_entry(e))
            .collect()
    }

    /// [`stats`](Self::stats), each with its registration
    /// ([`Entry::registration`]).
    pub(crate) fn stats_by_registration(&self) -> Vec<(u64, ToolStats)> {
        self.current()
            .entries
            .iter()
            .map(|e| (e.registration, Self::stats_of_entry(e)))
            .collect()
    }

    /// Metrics of one tool.
    pub fn stats_of(&self, name: &str) -> Option<ToolStats> {
        self.resolve(name).map(|e| Self::stats_of_entry(&e))
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
        for e in &self.current().entries {
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
        self.current()
            .entries
            .first()
            .map_or(0, |e| e.metrics.max_heap_bytes())
    }

    /// The tool a name or alias stands for now. The read lock is held for
    /// the lookup and the `Arc` clone only.
    pub(crate) fn resolve(&self, name: &str) -> Option<Arc<Entry>> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .names
            .get(name)
            .cloned()
    }

    pub(crate) fn count_unknown(&self) {
        self.unknown_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// `Tool 'x' is not available. Available tools: a, b.`; past
    /// [`LISTED_TOOLS`] enabled tools, `The closest of the N available
    /// tools: a, b, …` (by edit distance to the name called).
    pub(crate) fn not_available_message(&self, called: &str) -> String {
        let mut shown: String = called.chars().take(64).collect();
        if shown.len() < called.len() {
            shown.push('…');
        }
        let names = self.available();
        let offered = suggest::offered(called, &names).join(", ");
        match names.len() {
            0 => format!("Tool '{shown}' is not available. No tools are available."),
            n if n <= LISTED_TOOLS => {
                format!("Tool '{shown}' is not available. Available tools: {offered}.")
            }
            n => format!(
                "Tool '{shown}' is not available. The closest of the {n} available tools: {offered}."
            ),
        }
    }

    /// The current snapshot.
    fn current(&self) -> Arc<Tools> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn entry(&self, name: &str) -> Result<Arc<Entry>, RegistryError> {
        self.resolve(name)
            .ok_or_else(|| RegistryError::new(RegistryErrorKind::UnknownTool, name, None))
    }

    /// Copy the snapshot, `apply` the change to the copy and, when it
    /// succeeds, swap the copy in (the write lock is held for the swap
    /// only). One change at a time; each sheds the `sequential` locks of
    /// names no entry holds any more.
    fn change(
        &self,
        apply: impl FnOnce(&mut Tools, &mut NameLocks) -> Result<(), RegistryError>,
    ) -> Result<(), RegistryError> {
        let mut locks = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = Tools::clone(&self.current());
        let applied = apply(&mut next, &mut locks);
        if applied.is_ok() {
            let old = std::mem::replace(
                &mut *self.tools.write().unwrap_or_else(PoisonError::into_inner),
                Arc::new(next),
            );
            // The old snapshot (and a removed tool no call holds) is
            // dropped here, outside the lock, before the shedding.
            drop(old);
        }
        locks.shed_unused();
        applied
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
                &self
                    .current()
                    .entries
                    .iter()
                    .map(|e| e.name.to_string())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Tool names: 1–64 of `A-Z a-z 0-9 _ -`, the first a letter or `_`
/// (what every provider accepts: Gemini refuses a function name that
/// starts otherwise, `21st_builder` or `-x`, with a 400 for the whole
/// request); aliases may also hold `.` and start with any of these, since
/// they are never advertised.
fn check_name(name: &str, alias: bool) -> Result<(), RegistryError> {
    let first_ok = alias
        || name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let ok = first_ok
        && !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (alias && b == b'.'));
    if ok {
        Ok(())
    } else {
        let rule = if alias {
            "use 1-64 characters from A-Z a-z 0-9 _ - ."
        } else {
            "use 1-64 characters from A-Z a-z 0-9 _ -, starting with a letter or '_'"
        };
        Err(RegistryError::new(
            RegistryErrorKind::InvalidName,
            name,
            Some(rule.into()),
        ))
    }
}

#[cfg(test)]
mod tests;
