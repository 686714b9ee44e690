//! What reading a request body allocates at its peak, against the body's
//! size: the bound on items (`toolwarden_wire::MAX_REQUEST_ITEMS`).
//!
//! ```text
//! cargo bench -p toolwarden-wire --bench request_memory
//! ```
//!
//! For each dialect, bodies made of the smallest items a reader builds a
//! struct for (tool results, messages, text blocks or parts), read by
//! `request_view` and by `inspect` (the view and the pairing check, as the
//! gateway reads a body in `fix` mode):
//! - `64 MiB`: a body of `max_request_bytes`, the gateway's default cap,
//!   made of such items: refused by the count before any reader runs;
//! - `at bound`: as many items as the bound lets through (their values
//!   just under `MAX_REQUEST_ITEMS`): read, and this is the most a reader
//!   builds from any body.
//!
//! Peaks are counted by a global allocator that tracks the bytes live
//! (`peak_alloc`).

use std::{hint::black_box, time::Instant};

use peak_alloc::PeakAlloc;
use toolwarden_wire::{Dialect, MAX_REQUEST_ITEMS};

/// The system allocator, counting the bytes live and their peak.
#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// (dialect, what, head, item, tail): a body is `head`, items joined by
/// commas, `tail`.
const SHAPES: &[(Dialect, &str, &str, &str, &str)] = &[
    (
        Dialect::Anthropic,
        "results",
        r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":["#,
        r#"{"type":"tool_result","tool_use_id":"a","content":""}"#,
        "]}]}",
    ),
    (
        Dialect::Anthropic,
        "messages",
        r#"{"model":"m","max_tokens":1,"messages":["#,
        r#"{"role":"user","content":""}"#,
        "]}",
    ),
    (
        Dialect::OpenAiChat,
        "results",
        r#"{"model":"m","messages":["#,
        r#"{"role":"tool","tool_call_id":"a","content":""}"#,
        "]}",
    ),
    (
        Dialect::OpenAiChat,
        "messages",
        r#"{"model":"m","messages":["#,
        r#"{"role":"user","content":""}"#,
        "]}",
    ),
    (
        Dialect::OpenAiResponses,
        "results",
        r#"{"model":"m","input":["#,
        r#"{"type":"function_call_output","call_id":"a","output":""}"#,
        "]}",
    ),
    (
        Dialect::OpenAiResponses,
        "messages",
        r#"{"model":"m","input":["#,
        r#"{"role":"user","content":""}"#,
        "]}",
    ),
    (
        Dialect::Gemini,
        "results",
        r#"{"contents":[{"role":"user","parts":["#,
        r#"{"functionResponse":{"name":"a","response":{}}}"#,
        "]}]}",
    ),
    (
        Dialect::Gemini,
        "text parts",
        r#"{"contents":[{"role":"user","parts":["#,
        r#"{"text":""}"#,
        "]}]}",
    ),
    (
        Dialect::BedrockConverse,
        "results",
        r#"{"messages":[{"role":"user","content":["#,
        r#"{"toolResult":{"toolUseId":"a","content":[]}}"#,
        "]}]}",
    ),
    (
        Dialect::BedrockConverse,
        "messages",
        r#"{"messages":["#,
        r#"{"role":"user","content":[]}"#,
        "]}",
    ),
];

/// `head`, `n` items, `tail`.
fn body(head: &str, item: &str, n: usize, tail: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + n * (item.len() + 1) + tail.len());
    out.extend_from_slice(head.as_bytes());
    for i in 0..n {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_bytes());
    }
    out.extend_from_slice(tail.as_bytes());
    out
}

/// The peak bytes allocated while `f` runs, above what was live before,
/// and how long it took.
fn peak(f: impl FnOnce() -> bool) -> (usize, f64, bool) {
    ALLOCATOR.reset_peak_usage();
    let before = ALLOCATOR.current_usage();
    let t = Instant::now();
    let read = f();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    (ALLOCATOR.peak_usage() - before, ms, read)
}

fn main() {
    const MIB: f64 = (1 << 20) as f64;
    println!(
        "{:<16} {:<10} {:<9} {:>9} {:<8} {:>10} {:>7} {:>9}  read",
        "dialect", "items", "body", "MiB", "reader", "peak MiB", "x body", "ms"
    );
    for &(dialect, what, head, item, tail) in SHAPES {
        // Values a body of `n` items holds: each item's, and the outer ones.
        let per = item.bytes().filter(|b| matches!(b, b'{' | b'[')).count();
        let outer = head.bytes().filter(|b| matches!(b, b'{' | b'[')).count();
        let at_bound = (MAX_REQUEST_ITEMS - outer) / per;
        let filling = (64 << 20) / (item.len() + 1);
        for (size, n) in [("64 MiB", filling), ("at bound", at_bound)] {
            let b = body(head, item, n, tail);
            let view = peak(|| toolwarden_wire::request_view(dialect, black_box(&b)).is_ok());
            let inspect = peak(|| {
                toolwarden_wire::inspect(dialect, black_box(&b))
                    .view
                    .is_ok()
            });
            for (reader, (bytes, ms, read)) in [("view", view), ("inspect", inspect)] {
                println!(
                    "{:<16} {what:<10} {size:<9} {:>9.1} {reader:<8} {:>10.1} {:>7.1} {ms:>9.1}  {}",
                    format!("{dialect:?}"),
                    b.len() as f64 / MIB,
                    bytes as f64 / MIB,
                    bytes as f64 / b.len() as f64,
                    if read { "read" } else { "refused" },
                );
            }
        }
    }
}
