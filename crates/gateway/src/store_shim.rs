//! TEMPORARY stand-in for `toolwarden-store` (being written in parallel),
//! with the contract's signatures, so the gateway compiles and its proxy
//! tests run. Replaced by `pub use toolwarden_store::…` in `recorder.rs`
//! when the store reaches main; nothing outside `recorder.rs` names this module.
#![allow(missing_docs, dead_code)]

use std::{
    collections::HashSet,
    fmt,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Request(RequestRecord),
    ToolCall(ToolCallRecord),
    ToolResult(ToolResultRecord),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RequestRecord {
    pub request_id: String,
    pub session_id: String,
    pub session_source: String,
    pub at_ms: i64,
    pub provider: String,
    pub dialect: Option<String>,
    pub path: String,
    pub model: Option<String>,
    pub status: u16,
    pub streaming: bool,
    pub upstream_latency_ms: f64,
    pub first_byte_ms: Option<f64>,
    pub overhead_us: f64,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub response_id: Option<String>,
    pub repairs: Vec<String>,
    pub repair_mode: String,
    pub parse_error: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolCallRecord {
    pub request_id: String,
    pub session_id: String,
    pub provider: String,
    pub model: Option<String>,
    pub response_id: Option<String>,
    pub call_index: u32,
    pub call_id: String,
    pub tool: String,
    pub arguments_bytes: u64,
    pub at_ms: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolResultRecord {
    pub request_id: String,
    pub session_id: String,
    pub provider: String,
    pub model: Option<String>,
    pub call_id: String,
    pub message_index: u32,
    pub tool: Option<String>,
    pub failed: bool,
    pub basis: String,
    pub content_bytes: u64,
    pub excerpt: Option<String>,
    pub at_ms: i64,
    pub exec_ms: Option<f64>,
    pub previous_response_id: Option<String>,
}

#[derive(Debug)]
pub struct StoreError(String);
impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for StoreError {}

#[derive(Debug, Clone)]
pub struct Store;
impl Store {
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Err(StoreError(format!(
            "cannot open {url}: toolwarden-store is not built into this gateway yet"
        )))
    }
    pub async fn stats(&self, _q: &StatsQuery) -> Result<Stats, StoreError> {
        Err(StoreError("toolwarden-store is not built in yet".into()))
    }
    pub fn backend(&self) -> &'static str {
        "none"
    }
}

#[derive(Debug, Clone, Default)]
pub struct StatsQuery {
    pub since_ms: Option<i64>,
    pub tool: Option<String>,
    pub model: Option<String>,
    pub session: Option<String>,
    pub limit: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {}

#[derive(Debug, Clone)]
pub struct RecorderOptions {
    pub queue_capacity: usize,
    pub batch_max: usize,
    pub flush_interval: Duration,
    pub jsonl: Option<PathBuf>,
}
impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            queue_capacity: 65536,
            batch_max: 1024,
            flush_interval: Duration::from_millis(50),
            jsonl: None,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct RecorderCounters {
    pub events_written: u64,
    pub events_dropped: u64,
    pub write_errors: u64,
    pub backlog: u64,
}

pub trait Observer: Send + Sync + 'static {
    fn on_tool_call(&self, _rec: &ToolCallRecord) {}
    fn on_tool_result(&self, _rec: &ToolResultRecord, _resolved_tool: &str) {}
}

enum Msg {
    Event(Box<Event>),
    Shutdown(oneshot::Sender<()>),
}

#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::Sender<Msg>,
    counters: Arc<[AtomicU64; 2]>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    pub fn start(
        _store: Option<Store>,
        opts: RecorderOptions,
        observer: Arc<dyn Observer>,
    ) -> Recorder {
        let (tx, mut rx) = mpsc::channel(opts.queue_capacity.max(1));
        let counters: Arc<[AtomicU64; 2]> = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let written = counters.clone();
        tokio::spawn(async move {
            let mut seen = HashSet::new();
            while let Some(msg) = rx.recv().await {
                match msg {
                    Msg::Event(event) => {
                        match &*event {
                            Event::ToolCall(c) => observer.on_tool_call(c),
                            Event::ToolResult(r) => {
                                if seen.insert((
                                    r.session_id.clone(),
                                    r.call_id.clone(),
                                    r.message_index,
                                )) {
                                    observer
                                        .on_tool_result(r, r.tool.as_deref().unwrap_or("unknown"));
                                }
                            }
                            Event::Request(_) => {}
                        }
                        written[0].fetch_add(1, Ordering::Relaxed);
                    }
                    Msg::Shutdown(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        Recorder { tx, counters }
    }

    pub fn record(&self, event: Event) {
        if self.tx.try_send(Msg::Event(Box::new(event))).is_err() {
            self.counters[1].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn counters(&self) -> RecorderCounters {
        RecorderCounters {
            events_written: self.counters[0].load(Ordering::Relaxed),
            events_dropped: self.counters[1].load(Ordering::Relaxed),
            write_errors: 0,
            backlog: (self.tx.max_capacity() - self.tx.capacity()) as u64,
        }
    }

    pub async fn shutdown(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Shutdown(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}
