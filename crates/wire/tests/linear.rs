//! The stream parsers take time linear in the number of tool calls (review
//! finding 4: each looked its call up by a scan of every call so far, so a
//! 2.6 MB Chat event of 160,000 call fragments took 22 s).
//!
//! Each case is timed at `n` and `4n` calls: linear work takes about 4
//! times as long, quadratic work 16 times. The bound is 8. Each size is run
//! three times, interleaved, and the fastest run counts, so a burst of load
//! on a shared machine neither inflates one size alone nor fails the test.
//! The time is the thread's CPU time where the system tells it (Linux), not
//! the wall clock's: on a loaded machine a short run fits in one time slice
//! while a long one also waits out the other processes' slices, which made
//! 4 times the calls take 14 to 21 times as long by the wall clock (load
//! 12 on 2 cores) although the CPU time grew 4 times.
//!
//! That CPU time moves in scheduler ticks on some machines (4 ms here), so
//! each measurement repeats a run until it spans a dozen ticks and takes
//! the mean. The sizes are the smallest that show a search per call (at
//! 32,000 calls that is half a billion comparisons against a few
//! milliseconds of parsing), and the allocator is the gateway's. One test runs the
//! cases one after another, alone in its binary.

use std::time::Duration;

/// The gateway's allocator (`crates/cli`). Under glibc's malloc a Chat
/// event of 32,000 fragments took 6.3–7.4 times one of 8,000 in a release
/// build: its large blocks went back to the system after each run and were
/// faulted in again, zeroed, the next time; with glibc's mmap and trim
/// thresholds raised (`GLIBC_TUNABLES`) it took 4.0 times.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod common;
use common::timed_per_run;

use toolwarden_wire::{Dialect, StreamParser, eventstream::encode_event, response_view};

fn sse(events: impl IntoIterator<Item = String>) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(e.as_bytes());
        out.extend_from_slice(b"\n\n");
    }
    out
}

/// Calls in the view of `bytes` streamed in 64 KiB chunks.
fn stream_calls(dialect: Dialect, bytes: &[u8]) -> usize {
    let mut p = StreamParser::new(dialect);
    for c in bytes.chunks(1 << 16) {
        p.feed(c);
    }
    p.finish().calls.len()
}

/// Chat: one event whose `tool_calls` hold `n` fragments, each a new index.
fn chat_indices(n: usize) -> usize {
    let calls: Vec<String> = (0..n).map(|i| format!(r#"{{"index":{i}}}"#)).collect();
    let event = format!(
        r#"{{"id":"x","model":"m","choices":[{{"index":0,"delta":{{"tool_calls":[{}]}}}}]}}"#,
        calls.join(",")
    );
    stream_calls(Dialect::OpenAiChat, &sse([event]))
}

/// Anthropic: `n` tool blocks started and never stopped, then `n` deltas
/// for an index none has.
fn anthropic_open_blocks(n: usize) -> usize {
    let starts = (0..n).map(|i| format!(r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"t{i}","name":"f","input":{{}}}}}}"#));
    let deltas = (0..n).map(|_| r#"{"type":"content_block_delta","index":999999999,"delta":{"type":"input_json_delta","partial_json":"x"}}"#.to_string());
    stream_calls(Dialect::Anthropic, &sse(starts.chain(deltas)))
}

/// Responses: `n` call items, then `n` deltas naming an unknown item.
fn responses_unknown_items(n: usize) -> usize {
    let items = (0..n).map(|i| format!(r#"{{"type":"response.output_item.added","output_index":{i},"item":{{"type":"function_call","id":"fc{i}","call_id":"c{i}","name":"f","arguments":""}}}}"#));
    let deltas = (0..n).map(|_| {
        r#"{"type":"response.function_call_arguments.delta","item_id":"nope","delta":"x"}"#
            .to_string()
    });
    stream_calls(Dialect::OpenAiResponses, &sse(items.chain(deltas)))
}

/// Bedrock ConverseStream: `n` tool blocks, then `n` deltas for an
/// unknown block index.
fn bedrock_unknown_blocks(n: usize) -> usize {
    let mut bytes = Vec::new();
    for i in 0..n {
        let start = format!(
            r#"{{"contentBlockIndex":{i},"start":{{"toolUse":{{"toolUseId":"t{i}","name":"f"}}}}}}"#
        );
        bytes.extend(encode_event("contentBlockStart", start.as_bytes()));
    }
    for _ in 0..n {
        let delta = br#"{"contentBlockIndex":999999999,"delta":{"toolUse":{"input":"x"}}}"#;
        bytes.extend(encode_event("contentBlockDelta", delta));
    }
    stream_calls(Dialect::BedrockConverse, &bytes)
}

/// Gemini: `n` calls without ids, each with its own name (their
/// synthetic ids count calls per name).
fn gemini_idless_names(n: usize) -> usize {
    let parts: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"functionCall":{{"name":"f{i}","args":{{}}}}}}"#))
        .collect();
    let body = format!(
        r#"{{"candidates":[{{"content":{{"parts":[{}]}}}}]}}"#,
        parts.join(",")
    );
    response_view(Dialect::Gemini, body.as_bytes())
        .unwrap()
        .calls
        .len()
}

/// Gemini: one call whose `partialArgs` set `n` distinct keys.
fn gemini_partial_keys(n: usize) -> usize {
    let updates: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"jsonPath":"$.k{i}","numberValue":1}}"#))
        .collect();
    let body = format!(
        r#"{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"f","partialArgs":[{}]}}}}]}}}}]}}"#,
        updates.join(",")
    );
    let view = response_view(Dialect::Gemini, body.as_bytes()).unwrap();
    let args: serde_json::Value = serde_json::from_str(&view.calls[0].arguments).unwrap();
    args.as_object().unwrap().len()
}

/// A case: builds an input with `n` calls, parses it, returns how many it saw.
type Case = fn(usize) -> usize;

/// The CPU time each measurement spans at least, in runs of one size: a
/// dozen of this VM's 4 ms scheduler ticks, so the clock's step is under a
/// tenth of what it measures.
const SPAN: Duration = Duration::from_millis(50);

/// The fastest of three measurements of `case(n)` and of `case(4n)`,
/// interleaved, each the time a run takes over at least [`SPAN`]; checks
/// each run saw everything it was given.
fn time(case: Case, n: usize) -> (Duration, Duration) {
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        for (size, slot) in [(n, &mut best.0), (4 * n, &mut best.1)] {
            let took = timed_per_run(SPAN, || assert_eq!(case(size), size));
            *slot = (*slot).min(took);
        }
    }
    best
}

#[test]
fn stream_parsers_are_linear_in_tool_calls() {
    let cases: [(&str, Case, usize); 6] = [
        ("chat: one event, many indices", chat_indices, 8_000),
        ("anthropic: many open blocks", anthropic_open_blocks, 4_000),
        ("responses: many items", responses_unknown_items, 4_000),
        ("bedrock: many blocks", bedrock_unknown_blocks, 4_000),
        ("gemini: many id-less names", gemini_idless_names, 4_000),
        ("gemini: many partialArgs keys", gemini_partial_keys, 8_000),
    ];
    eprintln!("timed by the {}", common::clock());
    for (name, case, n) in cases {
        let (small, large) = time(case, n);
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
        eprintln!("{name}: n={n} {small:?}, 4n {large:?}, ratio {ratio:.1}");
        assert!(
            ratio < 8.0,
            "{name}: 4x the calls took {ratio:.1}x the time ({small:?} -> {large:?}): not linear"
        );
    }
}
