//! Wire-layer benchmarks against a `serde_json::Value` baseline measured in
//! the same run, printed as a table of ratios.
//!
//! ```text
//! cargo bench -p toolwarden-wire --bench wire
//! ```
//!
//! - request view of a corpus body (and of one agent turn as the gateway
//!   bench sends it) vs `serde_json::from_slice::<Value>`:
//!   the view alone (`view`, result contents left raw), the view with every
//!   result read (`read all`: contents decoded and verdicts decided, the
//!   cost of the old eager view) and with the new results read (`read
//!   new`, what the gateway does on a turn it has not seen);
//! - the count of items every reader runs first (`items`, part of `view`;
//!   only bodies over 400 kB are scanned);
//! - the pairing check (`validate`) of the same body vs the same baseline;
//! - the same body compressed (zstd as the Codex CLI sends it, gzip):
//!   decoded alone (`dec`) and decoded then inspected (`+insp`);
//! - stream parser on a recorded stream repeated to 10 MB vs the same SSE
//!   framing with every `data:` line parsed into a `Value`.
//!
//! - Bedrock event-stream (issue 18, no corpus needed): a ConverseStream of
//!   text and tool-call frames repeated to 10 MB, parsed by the stream
//!   parser vs the same frames decoded with every payload parsed into a
//!   `Value`; the frame decoder alone; InvokeModelWithResponseStream
//!   (base64 Anthropic events) vs decoding each into a `Value`.
//!
//! To add a dialect, add rows to [`REQUEST_CASES`] / [`STREAM_CASES`].

use std::{
    hint::black_box,
    time::{Duration, Instant},
};

use toolwarden_coding::Codings;
use toolwarden_wire::{Detector, Dialect, StreamParser, request_view, sse::SseFramer};

#[path = "wire/bedrock.rs"]
mod bedrock;

/// Where a request body comes from.
#[derive(Clone, Copy)]
enum Body {
    /// A file of the corpus.
    Corpus(&'static str),
    /// One agent turn as the gateway bench sends it ([`agent_turn`]).
    AgentTurn,
}

/// (name, dialect, body): request bodies.
const REQUEST_CASES: &[(&str, Dialect, Body)] = &[
    (
        "anthropic claudecode 578KB",
        Dialect::Anthropic,
        Body::Corpus("conversations/conv_anthropic_messages_claudecode_spotter_258c7280.json"),
    ),
    ("anthropic turn 22KB", Dialect::Anthropic, Body::AgentTurn),
    (
        "chat taubench task13",
        Dialect::OpenAiChat,
        Body::Corpus("conversations/conv_openai_chat_taubench_airline_task13_trial0.json"),
    ),
    ("chat turn 22KB", Dialect::OpenAiChat, Body::AgentTurn),
    ("gemini turn 22KB", Dialect::Gemini, Body::AgentTurn),
    (
        "converse turn 22KB",
        Dialect::BedrockConverse,
        Body::AgentTurn,
    ),
];

/// The shape of `toolwarden-bench`'s requests: four tool calls and their
/// four results (~5 KB of real tool output each, from the corpus's
/// `tool_results.jsonl`; the last one a failure). Anthropic: `tool_use`
/// blocks and `tool_result` blocks (the last flagged `is_error`); Chat:
/// `tool_calls` and `role: tool` messages; Gemini: `functionCall` and
/// `functionResponse` parts; Bedrock Converse: `toolUse` and `toolResult`
/// blocks (the last with `status: "error"`).
fn agent_turn(dialect: Dialect) -> Vec<u8> {
    let texts: Vec<String> = String::from_utf8(corpus("tool_results.jsonl"))
        .expect("UTF-8")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["content"].as_str().map(str::to_string))
        .filter(|s| s.len() > 200)
        .take(64)
        .collect();
    let content = |i: usize| {
        let mut s = String::new();
        let mut k = i;
        while s.len() < 5_000 {
            s.push_str(&texts[k % texts.len()]);
            s.push('\n');
            k += 1;
        }
        s.chars().take(5_000).collect::<String>()
    };
    let ask = "Read the modules and summarise them.";
    if dialect == Dialect::Gemini {
        let calls: Vec<serde_json::Value> = (0..4)
            .map(|i| serde_json::json!({"functionCall":{"name":"read_file","args":{"path":format!("src/mod{i}.rs")}}}))
            .collect();
        let responses: Vec<serde_json::Value> = (0..4)
            .map(|i| serde_json::json!({"functionResponse":{"name":"read_file","response":{"content":content(i)}}}))
            .collect();
        return serde_json::to_vec(&serde_json::json!({
            "systemInstruction": {"parts":[{"text":"You are a coding agent."}]},
            "tools": [{"functionDeclarations":[{"name":"read_file","parameters":{"type":"object"}}]}],
            "contents": [
                {"role":"user","parts":[{"text":ask}]},
                {"role":"model","parts":calls},
                {"role":"user","parts":responses}]}))
        .expect("JSON");
    }
    if dialect == Dialect::BedrockConverse {
        let uses: Vec<serde_json::Value> = (0..4)
            .map(|i| serde_json::json!({"toolUse":{"toolUseId":format!("tooluse_bench{i}"),"name":"read_file","input":{"path":format!("src/mod{i}.rs")}}}))
            .collect();
        let results: Vec<serde_json::Value> = (0..4)
            .map(|i| serde_json::json!({"toolResult":{"toolUseId":format!("tooluse_bench{i}"),"content":[{"text":content(i)}],"status":if i == 3 {"error"} else {"success"}}}))
            .collect();
        return serde_json::to_vec(&serde_json::json!({
            "system": [{"text":"You are a coding agent."}],
            "toolConfig": {"tools":[{"toolSpec":{"name":"read_file","inputSchema":{"json":{"type":"object"}}}}]},
            "messages": [
                {"role":"user","content":[{"text":ask}]},
                {"role":"assistant","content":uses},
                {"role":"user","content":results}]}))
        .expect("JSON");
    }
    if dialect == Dialect::OpenAiChat {
        let calls: Vec<serde_json::Value> = (0..4)
            .map(|i| serde_json::json!({"id":format!("call_bench{i}"),"type":"function","function":{"name":"read_file","arguments":format!("{{\"path\":\"src/mod{i}.rs\"}}")}}))
            .collect();
        let mut messages = vec![
            serde_json::json!({"role":"system","content":"You are a coding agent."}),
            serde_json::json!({"role":"user","content":"Read the modules and summarise them."}),
            serde_json::json!({"role":"assistant","content":null,"tool_calls":calls}),
        ];
        messages.extend((0..4).map(|i| serde_json::json!({"role":"tool","tool_call_id":format!("call_bench{i}"),"content":content(i)})));
        return serde_json::to_vec(&serde_json::json!({"model":"gpt-4o","messages":messages,
            "tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]}))
        .expect("JSON");
    }
    let uses: Vec<serde_json::Value> = (0..4)
        .map(|i| serde_json::json!({"type":"tool_use","id":format!("toolu_01bench{i}"),"name":"read_file","input":{"path":format!("src/mod{i}.rs")}}))
        .collect();
    let results: Vec<serde_json::Value> = (0..4)
        .map(|i| serde_json::json!({"type":"tool_result","tool_use_id":format!("toolu_01bench{i}"),"content":content(i),"is_error":i == 3}))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "model": "claude-sonnet-4-20250514", "max_tokens": 1024,
        "system": "You are a coding agent.",
        "tools": [{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],
        "messages": [
            {"role":"user","content":"Read the modules and summarise them."},
            {"role":"assistant","content":uses},
            {"role":"user","content":results}]}))
    .expect("JSON")
}

/// How a stream recording is stored.
#[derive(Clone, Copy)]
enum Recording {
    /// SSE bytes as sent.
    Sse,
    /// One JSON event per line: wrapped as `event: <type>` + `data: <json>`.
    ChunksWithEvents,
}

/// (name, dialect, corpus file, format): stream recordings.
const STREAM_CASES: &[(&str, Dialect, &str, Recording)] = &[
    (
        "chat parallel tool calls",
        Dialect::OpenAiChat,
        "sse/openai-python__chat_parallel_tool_calls_f82268f2.sse",
        Recording::Sse,
    ),
    (
        "anthropic tool_use",
        Dialect::Anthropic,
        "sse/anthropic-sdk-python__tool_use_response.sse",
        Recording::Sse,
    ),
    (
        "anthropic web search",
        Dialect::Anthropic,
        "sse/vercel-ai__anthropic-web-search-tool.1.chunks.txt",
        Recording::ChunksWithEvents,
    ),
    (
        "responses function_call",
        Dialect::OpenAiResponses,
        "sse/vercel-ai__azure-tool-call.1.chunks.txt",
        Recording::ChunksWithEvents,
    ),
    (
        "responses custom tool",
        Dialect::OpenAiResponses,
        "sse/vercel-ai__openai-custom-tool.1.chunks.txt",
        Recording::ChunksWithEvents,
    ),
    // Gemini chunks have no `type`: wrapped as bare `data:` lines. The
    // streamed-JSON-array form is measured in `benches/responses_gemini.rs`.
    (
        "gemini partialArgs",
        Dialect::Gemini,
        "sse/vercel-ai__google-stream-tool-call-arguments.chunks.txt",
        Recording::ChunksWithEvents,
    ),
];

const STREAM_BYTES: usize = 10 << 20;
const FEED_CHUNK: usize = 16 << 10;

const BENCH: &str = "bench wire";

/// A file of the recorded corpus (`TOOLWARDEN_CORPUS`, see
/// `toolwarden_testkit`); `main` has checked that the corpus is there.
fn corpus(rel: &str) -> Vec<u8> {
    let p = toolwarden_testkit::corpus_dir()
        .expect("checked in main")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn wrap(chunks: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in chunks.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        #[derive(serde::Deserialize)]
        struct T {
            #[serde(rename = "type")]
            kind: String,
        }
        if let Ok(t) = serde_json::from_slice::<T>(line) {
            out.extend_from_slice(format!("event: {}\n", t.kind).as_bytes());
        }
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.extend_from_slice(b"\n\n");
    }
    out
}

/// Times `ours` and `base` in alternating batches filling about `budget`
/// (so load changes on a shared machine hit both alike): the median time
/// per iteration of each, and the median of the per-pair ratios.
fn time_pair(
    budget: Duration,
    mut ours: impl FnMut(),
    mut base: impl FnMut(),
) -> (Duration, Duration, f64) {
    let once = |f: &mut dyn FnMut()| {
        f(); // warm up
        let t = Instant::now();
        f();
        t.elapsed().max(Duration::from_nanos(1))
    };
    let (o1, b1) = (once(&mut ours), once(&mut base));
    const PAIRS: usize = 11;
    let per = |one: Duration| {
        ((budget.as_nanos() / (2 * PAIRS as u128)) / one.as_nanos()).clamp(1, 100_000) as u32
    };
    let (no, nb) = (per(o1), per(b1));
    let batch = |f: &mut dyn FnMut(), n: u32| {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        t.elapsed() / n
    };
    let mut samples: Vec<(Duration, Duration)> = (0..PAIRS)
        .map(|_| (batch(&mut ours, no), batch(&mut base, nb)))
        .collect();
    let mut ratios: Vec<f64> = samples
        .iter()
        .map(|(o, b)| b.as_secs_f64() / o.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    samples.sort_by_key(|s| s.0);
    let o = samples[PAIRS / 2].0;
    samples.sort_by_key(|s| s.1);
    (o, samples[PAIRS / 2].1, ratios[PAIRS / 2])
}

fn row(
    name: &str,
    what: &str,
    (ours, base, ratio): (Duration, Duration, f64),
    bytes: usize,
    target: f64,
) {
    let mbps = bytes as f64 / ours.as_secs_f64() / 1e6;
    let ok = if ratio >= target { "ok" } else { "BELOW" };
    println!(
        "{name:<30} {what:<8} {:>11.3?} {:>11.3?} {ratio:>7.2}x {mbps:>9.0} MB/s  target {target}x {ok}",
        ours, base
    );
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("BENCH_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1500),
    );
    let detector = Detector::default();
    // BENCH_ONLY=<substring>: run only the cases whose name contains it.
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    // BENCH_PROFILE_OURS=1: skip the baselines (for profiling ours alone).
    let profile = std::env::var("BENCH_PROFILE_OURS").is_ok();
    println!(
        "{:<30} {:<8} {:>11} {:>11} {:>8} {:>14}",
        "case", "what", "ours", "Value", "ratio", "ours"
    );
    if "bedrock event-stream".contains(&only) || only.is_empty() {
        bedrock::run(budget);
    }
    let Some(_) = toolwarden_testkit::corpus_for(BENCH) else {
        return;
    };
    for &(name, dialect, source) in REQUEST_CASES {
        if !name.contains(&only) {
            continue;
        }
        let body = match source {
            Body::Corpus(file) => corpus(file),
            Body::AgentTurn => agent_turn(dialect),
        };
        let base = || {
            let v: serde_json::Value = serde_json::from_slice(black_box(&body)).expect("JSON");
            black_box(v);
        };
        let pair = |ours: &dyn Fn()| {
            if profile {
                time_pair(budget, ours, || {})
            } else {
                time_pair(budget, ours, base)
            }
        };
        // The view alone: result contents stay raw (a resend whose results
        // the gateway has all recorded already).
        let t = pair(&|| {
            let v = request_view(dialect, black_box(&body)).expect("corpus parses");
            black_box(v.results.len());
        });
        row(name, "view", t, body.len(), 2.0);
        // The count of items every reader runs first (`check_items`; a
        // body of up to 400 kB is not scanned at all): part of `view`.
        let t = pair(&|| {
            black_box(toolwarden_wire::check_items(black_box(&body))).expect("within the bound");
        });
        row(name, "items", t, body.len(), 10.0);
        // The view plus every result read (content decoded, verdict with
        // the default detector): what the eager view used to cost.
        let t = pair(&|| {
            let v = request_view(dialect, black_box(&body)).expect("corpus parses");
            for r in &v.results {
                black_box(r.read(&detector).expect("corpus reads"));
            }
        });
        row(name, "read all", t, body.len(), 1.0);
        // The view plus the results after the last assistant turn read:
        // the gateway on a turn it has not seen.
        let t = pair(&|| {
            let v = request_view(dialect, black_box(&body)).expect("corpus parses");
            for r in v.results.iter().filter(|r| r.new) {
                black_box(r.read(&detector).expect("corpus reads"));
            }
        });
        row(name, "read new", t, body.len(), 2.0);
        // The pairing check the gateway runs before forwarding (`fix` mode).
        let t = pair(&|| {
            let d = toolwarden_wire::validate(dialect, black_box(&body)).expect("corpus parses");
            black_box(d.len());
        });
        row(name, "validate", t, body.len(), 1.0);
        // Both from one pass: what the gateway runs before forwarding in
        // `fix` mode.
        let t = pair(&|| {
            let i = toolwarden_wire::inspect(dialect, black_box(&body));
            black_box((i.view.is_ok(), i.defects.map(|d| d.len()).ok()));
        });
        row(name, "inspect", t, body.len(), 1.0);
        // A compressed body (the Codex CLI sends zstd; others gzip):
        // decoded, then inspected — what the gateway runs before
        // forwarding it in `fix` mode. Same baseline: a `Value` parse of
        // the plain bytes.
        let encoded = [
            // Level 3, as the Codex CLI compresses.
            ("zstd", zstd::encode_all(&body[..], 3).expect("zstd")),
            ("gzip", {
                use std::io::Write;
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(&body).expect("gzip");
                e.finish().expect("gzip")
            }),
        ];
        for (coding, bytes) in &encoded {
            let codings = Codings::parse(coding.as_bytes()).expect("known coding");
            let t = pair(&|| {
                let plain = codings
                    .decode(black_box(bytes), usize::MAX)
                    .expect("decodes");
                black_box(plain.len());
            });
            row(name, &format!("{coding} dec"), t, body.len(), 0.0);
            let t = pair(&|| {
                let plain = codings
                    .decode(black_box(bytes), usize::MAX)
                    .expect("decodes");
                let i = toolwarden_wire::inspect(dialect, &plain);
                black_box((i.view.is_ok(), i.defects.map(|d| d.len()).ok()));
            });
            row(name, &format!("{coding}+insp"), t, body.len(), 0.0);
        }
    }
    for &(name, dialect, file, recording) in STREAM_CASES {
        if !name.contains(&only) {
            continue;
        }
        let one = match recording {
            Recording::Sse => corpus(file),
            Recording::ChunksWithEvents => wrap(&corpus(file)),
        };
        let mut stream = Vec::with_capacity(STREAM_BYTES + one.len());
        while stream.len() < STREAM_BYTES {
            stream.extend_from_slice(&one);
        }
        let ours = || {
            let mut p = StreamParser::new(dialect);
            for c in stream.chunks(FEED_CHUNK) {
                p.feed(black_box(c));
            }
            black_box(p.finish());
        };
        let base = || {
            let mut f = SseFramer::default();
            let mut n = 0usize;
            let mut on = |_: &[u8], data: &[u8]| {
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
                    n += v.is_object() as usize;
                    black_box(v);
                }
            };
            for c in stream.chunks(FEED_CHUNK) {
                f.feed(black_box(c), &mut on);
            }
            f.finish(&mut on);
            black_box(n);
        };
        let t = if profile {
            time_pair(budget, ours, || {})
        } else {
            time_pair(budget, ours, base)
        };
        row(name, "stream", t, stream.len(), 3.0);
    }
}
