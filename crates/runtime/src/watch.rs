//! Health transitions for the application (issue 19): a [`HealthWatch`]
//! compares the registry's stats with the previous look and tells every
//! registered hook (a callback, or a channel) what changed: a breaker
//! opening or closing, a tool turning unhealthy or healthy again (by the
//! [`HealthThresholds`] of the health report).
//!
//! ```no_run
//! # async fn demo(registry: std::sync::Arc<toolwarden_runtime::Registry>) {
//! use std::time::Duration;
//! use toolwarden_runtime::{HealthEvent, HealthThresholds, HealthWatch};
//!
//! let mut watch = HealthWatch::new(registry, HealthThresholds::default())
//!     .on_event(|e| eprintln!("tool health: {e}"));
//! let mut events = watch.channel(64);
//! let _task = watch.spawn(Duration::from_secs(5));
//! while let Some(event) = events.recv().await {
//!     if let HealthEvent::BreakerOpened { tool } = event {
//!         eprintln!("{tool} is failing fast; page someone");
//!     }
//! }
//! # }
//! ```
//!
//! It looks only when asked ([`HealthWatch::check`]) or every period
//! ([`HealthWatch::spawn`]): nothing is added to the call path. A breaker
//! that opened and closed again between two looks is still reported, as an
//! opening followed by a closing; one that closed and opened again, as a
//! closing followed by an opening (by its trip and recovery counts; a
//! failed probe re-opening it is no change). Health is judged on recent
//! state ([`HealthThresholds`]): a tool that recovers is reported
//! `Healthy` again. A tool registered again under a name is watched
//! afresh (its new breaker's openings are reported from its first), and
//! a removed tool is forgotten at the next look.

use std::{collections::HashMap, fmt, sync::Arc, time::Duration};

use tokio::sync::mpsc;

use crate::{BreakerState, HealthReport, HealthThresholds, Registry};

/// One change in a tool's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthEvent {
    /// The tool's circuit breaker opened: calls fail fast.
    BreakerOpened {
        /// The tool.
        tool: String,
    },
    /// The breaker closed again.
    BreakerClosed {
        /// The tool.
        tool: String,
    },
    /// The tool crossed a health threshold.
    Unhealthy {
        /// The tool.
        tool: String,
        /// Which thresholds, in words.
        reasons: Vec<String>,
    },
    /// The tool is back under every threshold.
    Healthy {
        /// The tool.
        tool: String,
    },
}

type Hook = Box<dyn Fn(&HealthEvent) + Send + Sync>;

/// Watches a registry's tools and tells hooks about health transitions.
pub struct HealthWatch {
    registry: Arc<Registry>,
    thresholds: HealthThresholds,
    hooks: Vec<Hook>,
    /// Per tool: what the previous look saw.
    last: std::sync::Mutex<HashMap<String, Seen>>,
}

/// One tool at the previous look.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// Which registration of the name it was (`Entry::registration`).
    registration: u64,
    /// The breaker was open or half-open.
    open: bool,
    trips: u64,
    recoveries: u64,
    healthy: bool,
}

// === impl HealthEvent ===

impl HealthEvent {
    /// The tool concerned.
    pub fn tool(&self) -> &str {
        match self {
            HealthEvent::BreakerOpened { tool }
            | HealthEvent::BreakerClosed { tool }
            | HealthEvent::Unhealthy { tool, .. }
            | HealthEvent::Healthy { tool } => tool,
        }
    }
}

impl fmt::Display for HealthEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HealthEvent::BreakerOpened { tool } => write!(f, "{tool}: breaker opened"),
            HealthEvent::BreakerClosed { tool } => write!(f, "{tool}: breaker closed"),
            HealthEvent::Unhealthy { tool, reasons } => {
                write!(f, "{tool}: unhealthy ({})", reasons.join("; "))
            }
            HealthEvent::Healthy { tool } => write!(f, "{tool}: healthy again"),
        }
    }
}

// === impl HealthWatch ===

impl HealthWatch {
    /// The shortest period [`HealthWatch::spawn`] looks at: 1 ms, the
    /// timer's resolution.
    pub const MIN_PERIOD: Duration = Duration::from_millis(1);

    /// A watch over `registry`'s tools, judged by `thresholds`. Every tool
    /// starts as closed and healthy: the first look reports what is not.
    pub fn new(registry: Arc<Registry>, thresholds: HealthThresholds) -> Self {
        HealthWatch {
            registry,
            thresholds,
            hooks: Vec::new(),
            last: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Call `hook` with every transition (on the thread that looks; keep it short).
    pub fn on_event(mut self, hook: impl Fn(&HealthEvent) + Send + Sync + 'static) -> Self {
        self.hooks.push(Box::new(hook));
        self
    }

    /// A channel that receives every transition; when it is full, the
    /// event is dropped for it (the watch never waits).
    pub fn channel(&mut self, capacity: usize) -> mpsc::Receiver<HealthEvent> {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        self.hooks.push(Box::new(move |e| {
            let _ = tx.try_send(e.clone());
        }));
        rx
    }

    /// Look now: the transitions since the previous look, each also given
    /// to the hooks.
    pub fn check(&self) -> Vec<HealthEvent> {
        let (registrations, stats): (Vec<u64>, Vec<_>) =
            self.registry.stats_by_registration().into_iter().unzip();
        let report = HealthReport::from_stats(&stats, &self.thresholds);
        let mut events = Vec::new();
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            // Only the tools registered now are remembered: a removed
            // tool's name goes at this look (the map stays as small as
            // the registry).
            let mut now = HashMap::with_capacity(stats.len());
            for ((s, health), &registration) in stats.iter().zip(&report.tools).zip(&registrations)
            {
                let open = matches!(s.breaker, Some(BreakerState::Open | BreakerState::HalfOpen));
                let before = match last.get(&s.name) {
                    Some(seen) if seen.registration == registration => *seen,
                    // Registered again since the last look: a new breaker,
                    // whose counts start at zero, compared with what was
                    // last reported of the name.
                    Some(seen) => Seen {
                        registration,
                        trips: 0,
                        recoveries: 0,
                        ..*seen
                    },
                    None => Seen {
                        registration,
                        healthy: true,
                        ..Seen::default()
                    },
                };
                let tool = || s.name.clone();
                let opened = HealthEvent::BreakerOpened { tool: tool() };
                let closed = HealthEvent::BreakerClosed { tool: tool() };
                match (before.open, open) {
                    (false, true) => events.push(opened),
                    (true, false) => events.push(closed),
                    // Closed at both looks, but it opened in between.
                    (false, false) if s.breaker_trips > before.trips => {
                        events.extend([opened, closed])
                    }
                    // Open at both looks, but it closed in between.
                    (true, true) if s.breaker_recoveries > before.recoveries => {
                        events.extend([closed, opened])
                    }
                    _ => {}
                }
                if before.healthy && !health.healthy {
                    events.push(HealthEvent::Unhealthy {
                        tool: tool(),
                        reasons: health.reasons.clone(),
                    });
                } else if !before.healthy && health.healthy {
                    events.push(HealthEvent::Healthy { tool: tool() });
                }
                now.insert(
                    s.name.clone(),
                    Seen {
                        registration,
                        open,
                        trips: s.breaker_trips,
                        recoveries: s.breaker_recoveries,
                        healthy: health.healthy,
                    },
                );
            }
            *last = now;
        }
        for event in &events {
            tracing::info!(target: "toolwarden::health", tool = event.tool(), "{event}");
            for hook in &self.hooks {
                hook(event);
            }
        }
        events
    }

    /// Look every `period` on the current Tokio runtime until the task is
    /// aborted (or dropped with its runtime). A period under
    /// [`HealthWatch::MIN_PERIOD`] (zero, say) is taken as that.
    pub fn spawn(self, period: Duration) -> tokio::task::JoinHandle<()> {
        let period = period.max(Self::MIN_PERIOD);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                self.check();
            }
        })
    }
}

impl fmt::Debug for HealthWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HealthWatch")
            .field("thresholds", &self.thresholds)
            .field("hooks", &self.hooks.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{BoxError, tool_fn};

    /// Regression: the watch kept what it saw of every name ever
    /// registered, so a registry whose tools come and go (a per-user tool
    /// set, MCP servers reconnecting) grew it without end.
    #[test]
    fn what_the_watch_remembers_is_bounded_by_the_registry() {
        let registry = Arc::new(Registry::new());
        let watch = HealthWatch::new(registry.clone(), HealthThresholds::default());
        for i in 0..50 {
            let name = format!("tool_{i}");
            let tool = tool_fn(
                name.clone(),
                "A tool.",
                json!({"type": "object"}),
                |_a, _c| async { Ok::<_, BoxError>(json!(null)) },
            );
            registry.register(tool).unwrap();
            watch.check();
            registry.remove(&name).unwrap();
        }
        watch.check();
        assert_eq!(watch.last.lock().unwrap().len(), registry.len());
    }
}
