//! The cost of dropping an event (issue 14): `Recorder::record` into a full
//! queue, which counts the drop, folds the event into the per-tool
//! aggregate and tells the observer, against `record` into a queue with
//! room (the ordinary path) in the same run. The writer never runs (a
//! current-thread runtime that is not yielded to), so the first queue
//! stays full. Events are made beforehand; 50 tools × 2 models, half calls,
//! half results (a third failed), over a few minutes of timestamps.
//!
//! ```text
//! cargo bench -p toolwarden-store --bench dropped
//! ```
//! `TW_BENCH_EVENTS` sets the events per run (default 1,000,000).

use std::sync::Arc;
use std::time::Instant;

use toolwarden_store::*;

fn events(n: usize) -> Vec<Event> {
    (0..n)
        .map(|i| {
            let tool = format!("tool_{}", i % 50);
            let model = Some(format!("model-{}", i % 2));
            let at_ms = 1_700_000_000_000 + (i as i64 % 300_000);
            if i % 2 == 0 {
                Event::ToolCall(ToolCallRecord {
                    threaded: false,
                    request_id: format!("{i:032x}"),
                    session_id: format!("s{}", i / 8),
                    provider: "anthropic".into(),
                    model,
                    response_id: None,
                    dialect: None,
                    call_index: 0,
                    call_id: format!("toolu_{i}"),
                    tool,
                    arguments_bytes: 10,
                    at_ms,
                    turn: None,
                })
            } else {
                Event::ToolResult(ToolResultRecord {
                    request_id: format!("{i:032x}"),
                    session_id: format!("s{}", i / 8),
                    provider: "anthropic".into(),
                    model,
                    call_id: format!("toolu_{}", i - 1),
                    message_index: 2,
                    tool: Some(tool),
                    failed: i % 3 == 0,
                    basis: "explicit".into(),
                    content_bytes: 10,
                    excerpt: None,
                    at_ms,
                    exec_ms: None,
                    previous_response_id: None,
                    answers: None,
                    trace_parent: None,
                    trace_state: None,
                    latest_of_its_id: false,
                    first_turn: None,
                })
            }
        })
        .collect()
}

fn main() {
    let n: usize = std::env::var("TW_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let _guard = rt.enter();
    let opts = |queue_capacity| RecorderOptions {
        queue_capacity,
        ..RecorderOptions::default()
    };
    // The ordinary path: a queue with room for every event.
    let roomy = Recorder::start(None, opts(n), Arc::new(NoopObserver));
    let batch = events(n);
    let t = Instant::now();
    for e in batch {
        roomy.record(e);
    }
    let queued = t.elapsed();
    // The drop path: a queue of one, full after the first event.
    let full = Recorder::start(None, opts(1), Arc::new(NoopObserver));
    let batch = events(n);
    let t = Instant::now();
    for e in batch {
        full.record(e);
    }
    let folded = t.elapsed();
    let c = full.counters();
    assert_eq!(c.events_dropped, n as u64 - 1);
    assert_eq!(c.events_aggregated, n as u64 - 1);
    let per = |d: std::time::Duration| d.as_nanos() as f64 / n as f64;
    println!(
        "{n} events: queued {:.0} ns/event (queue with room), dropped and folded {:.0} ns/event \
         (queue full; {} dropped, {} folded)",
        per(queued),
        per(folded),
        c.events_dropped,
        c.events_aggregated
    );
}
