//! Benchmarks for the Responses and Gemini dialects, each against a plain
//! `serde_json::Value` baseline measured in the same run.
//!
//! `cargo bench -p toolwarden-wire --bench responses_gemini`
//!
//! - stream parser vs. SSE framing + `Value` parse of every `data:` line,
//!   on the corpus recordings repeated to 10 MB (target ≥ 3×);
//! - request view with every result read (content and verdict, as the
//!   gateway does for results it has not seen) vs. `Value` parse of the
//!   same body (the 578 KB Claude Code conversation rewritten as a
//!   Responses and a Gemini body).
//!
//! For profiling: `ONLY_GEMINI_SSE=1|baseline|frame` (with `ITERS=n`: a
//! fixed number of runs, for `perf stat`) and `ONLY_VIEW=responses|gemini`
//! run a single case.

use std::{
    hint::black_box,
    path::PathBuf,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use toolwarden_wire::{Detector, Dialect, StreamParser, request_view, sse::SseFramer};

const BENCH: &str = "bench responses_gemini";

/// A file of the recorded corpus (`TOOLWARDEN_CORPUS`, see
/// `toolwarden_testkit`); `main` has checked that the corpus is there.
fn corpus(rel: &str) -> PathBuf {
    toolwarden_testkit::corpus_dir()
        .expect("checked in main")
        .join(rel)
}

fn chunks_file(rel: &str) -> Vec<String> {
    std::fs::read_to_string(corpus(rel))
        .expect("corpus file")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn responses_sse() -> Vec<u8> {
    let mut out = String::new();
    for rel in [
        "sse/vercel-ai__azure-tool-call.1.chunks.txt",
        "sse/vercel-ai__openai-custom-tool.1.chunks.txt",
    ] {
        for line in chunks_file(rel) {
            let v: Value = serde_json::from_str(&line).expect("event");
            out.push_str(&format!(
                "event: {}\ndata: {line}\n\n",
                v["type"].as_str().unwrap_or("")
            ));
        }
    }
    out.into_bytes()
}

fn gemini_lines() -> Vec<String> {
    chunks_file("sse/vercel-ai__google-stream-tool-call-arguments.chunks.txt")
}

fn repeat_to(unit: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + unit.len());
    while out.len() < size {
        out.extend_from_slice(unit);
    }
    out
}

/// Best of several runs: seconds per call.
fn time(mut f: impl FnMut(), min_total: Duration) -> f64 {
    f();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        let mut n = 0u32;
        while start.elapsed() < min_total / 5 || n == 0 {
            f();
            n += 1;
        }
        best = best.min(start.elapsed().as_secs_f64() / f64::from(n));
    }
    best
}

fn baseline_sse(bytes: &[u8]) -> usize {
    let mut framer = SseFramer::default();
    let mut n = 0;
    for chunk in bytes.chunks(16 << 10) {
        framer.feed(chunk, &mut |_, data| {
            if let Ok(v) = serde_json::from_slice::<Value>(data) {
                n += black_box(&v).is_object() as usize;
            }
        });
    }
    n
}

fn parse_stream(dialect: Dialect, bytes: &[u8]) -> usize {
    let mut p = StreamParser::new(dialect);
    for chunk in bytes.chunks(16 << 10) {
        p.feed(chunk);
    }
    p.finish().calls.len()
}

/// Ours and the baseline, measured in alternation (the machine is shared:
/// alternating keeps both under the same load). Best run of each.
fn compare(mut ours: impl FnMut(), mut base: impl FnMut(), budget: Duration) -> (f64, f64) {
    let (mut best_ours, mut best_base) = (f64::MAX, f64::MAX);
    let round = budget / 20;
    for _ in 0..10 {
        best_ours = best_ours.min(time_once(&mut ours, round));
        best_base = best_base.min(time_once(&mut base, round));
    }
    (best_ours, best_base)
}

fn time_once(f: &mut impl FnMut(), at_least: Duration) -> f64 {
    let start = Instant::now();
    let mut n = 0u32;
    while start.elapsed() < at_least || n == 0 {
        f();
        n += 1;
    }
    start.elapsed().as_secs_f64() / f64::from(n)
}

fn row(name: &str, size: usize, ours: f64, base: f64) {
    println!(
        "{name:<44} {:>8.1} MB/s  baseline {:>8.1} MB/s  ratio {:>5.2}x",
        size as f64 / ours / 1e6,
        size as f64 / base / 1e6,
        base / ours
    );
}

/// The Anthropic conversation rewritten as (Responses input, Gemini contents).
fn converted() -> (Vec<u8>, Vec<u8>) {
    let conv: Value = serde_json::from_slice(
        &std::fs::read(corpus(
            "conversations/conv_anthropic_messages_claudecode_spotter_258c7280.json",
        ))
        .expect("conversation"),
    )
    .expect("json");
    let mut items = Vec::new();
    let mut contents = Vec::new();
    let mut names = std::collections::HashMap::new();
    for m in conv["messages"].as_array().expect("messages") {
        let role = m["role"].as_str().unwrap_or("user");
        let blocks = match &m["content"] {
            Value::String(s) => vec![json!({"type":"text","text":s})],
            Value::Array(a) => a.clone(),
            _ => vec![],
        };
        let mut parts = Vec::new();
        for b in blocks {
            match b["type"].as_str().unwrap_or("") {
                "text" => {
                    let t = if role == "user" {
                        "input_text"
                    } else {
                        "output_text"
                    };
                    items.push(json!({"type":"message","role":role,"content":[{"type":t,"text":b["text"]}]}));
                    parts.push(json!({"text": b["text"]}));
                }
                "thinking" => {
                    items.push(json!({"type":"reasoning","id":"rs_x","summary":[],"encrypted_content":b["signature"]}));
                    parts.push(json!({"text": b["thinking"], "thought": true}));
                }
                "tool_use" => {
                    names.insert(b["id"].as_str().unwrap_or("").to_owned(), b["name"].clone());
                    items.push(json!({"type":"function_call","call_id":b["id"],"name":b["name"],"arguments":b["input"].to_string()}));
                    parts.push(json!({"functionCall":{"name":b["name"],"args":b["input"]}}));
                }
                "tool_result" => {
                    let text = match &b["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(a) => a
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                    let id = b["tool_use_id"].as_str().unwrap_or("");
                    items.push(json!({"type":"function_call_output","call_id":id,"output":text}));
                    let name = names.get(id).cloned().unwrap_or(Value::Null);
                    parts
                        .push(json!({"functionResponse":{"name":name,"response":{"output":text}}}));
                }
                _ => {}
            }
        }
        contents
            .push(json!({"role": if role == "assistant" {"model"} else {"user"}, "parts": parts}));
    }
    let responses = json!({"model":"gpt-5","instructions":"You are Claude Code.","input":items});
    let gemini = json!({"systemInstruction":{"parts":[{"text":"You are Claude Code."}]},"contents":contents});
    (
        serde_json::to_vec(&responses).expect("json"),
        serde_json::to_vec(&gemini).expect("json"),
    )
}

fn main() {
    let Some(_) = toolwarden_testkit::corpus_for(BENCH) else {
        return;
    };
    if std::env::var("ONLY_GEMINI_SSE").is_ok() {
        let lines = gemini_lines();
        let sse: String = lines.iter().map(|l| format!("data: {l}\r\n\r\n")).collect();
        let gemini_sse = repeat_to(sse.as_bytes(), 10 << 20);
        let baseline = std::env::var("ONLY_GEMINI_SSE").as_deref() == Ok("baseline");
        if let Some(n) = std::env::var("ITERS")
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
        {
            let frame_only = std::env::var("ONLY_GEMINI_SSE").as_deref() == Ok("frame");
            for _ in 0..n {
                if frame_only {
                    let mut f = SseFramer::default();
                    let mut k = 0usize;
                    for c in gemini_sse.chunks(16 << 10) {
                        f.feed(c, &mut |_, d| k += d.len());
                    }
                    black_box(k);
                } else if baseline {
                    black_box(baseline_sse(&gemini_sse));
                } else {
                    black_box(parse_stream(Dialect::Gemini, &gemini_sse));
                }
            }
            return;
        }
        let t = time(
            || {
                if baseline {
                    black_box(baseline_sse(&gemini_sse));
                } else {
                    black_box(parse_stream(Dialect::Gemini, &gemini_sse));
                }
            },
            Duration::from_secs(3),
        );
        println!(
            "gemini sse only: {:.1} MB/s",
            gemini_sse.len() as f64 / t / 1e6
        );
        return;
    }
    // INSPECT=1: the view, the pairing check, and both from one pass
    // (`inspect`, what the gateway runs in `fix` mode), on the converted
    // conversations.
    if std::env::var("INSPECT").is_ok() {
        let (r, g) = converted();
        for (name, dialect, body) in [
            ("responses", Dialect::OpenAiResponses, r),
            ("gemini", Dialect::Gemini, g),
        ] {
            let budget = Duration::from_secs(2);
            let view = time(|| drop(black_box(request_view(dialect, &body))), budget);
            let check = time(
                || drop(black_box(toolwarden_wire::validate(dialect, &body))),
                budget,
            );
            let both = time(
                || drop(black_box(toolwarden_wire::inspect(dialect, &body))),
                budget,
            );
            println!(
                "{name} {} KB: view {:.0} µs, validate {:.0} µs, inspect {:.0} µs ({:.2} of the two apart)",
                body.len() / 1024,
                view * 1e6,
                check * 1e6,
                both * 1e6,
                both / (view + check)
            );
        }
        return;
    }
    if let Ok(which) = std::env::var("ONLY_VIEW") {
        let (r, g) = converted();
        let (dialect, body) = if which == "gemini" {
            (Dialect::Gemini, g)
        } else {
            (Dialect::OpenAiResponses, r)
        };
        let detector = Detector::default();
        let t = time(
            || {
                black_box(
                    request_view(dialect, &body)
                        .map(|v| read_all(&v, &detector))
                        .ok(),
                );
            },
            Duration::from_secs(3),
        );
        println!("view + read all: {:.1} MB/s", body.len() as f64 / t / 1e6);
        return;
    }
    let budget = Duration::from_millis(
        std::env::var("BENCH_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2000),
    );
    let size = 10 << 20;
    println!(
        "responses_gemini benchmarks (ours and baseline alternated, best of 10 rounds, {budget:?} per row)"
    );

    let responses = repeat_to(&responses_sse(), size);
    let (ours, base) = compare(
        || {
            black_box(parse_stream(Dialect::OpenAiResponses, &responses));
        },
        || {
            black_box(baseline_sse(&responses));
        },
        budget,
    );
    row("stream: Responses SSE (10 MB)", responses.len(), ours, base);

    let lines = gemini_lines();
    let sse: String = lines.iter().map(|l| format!("data: {l}\r\n\r\n")).collect();
    let gemini_sse = repeat_to(sse.as_bytes(), size);
    let (ours, base) = compare(
        || {
            black_box(parse_stream(Dialect::Gemini, &gemini_sse));
        },
        || {
            black_box(baseline_sse(&gemini_sse));
        },
        budget,
    );
    row("stream: Gemini SSE (10 MB)", gemini_sse.len(), ours, base);

    // The streamed JSON array: one array holding the recording's chunks
    // repeated to 10 MB; the baseline parses the whole array into a Value.
    let unit = lines.join(",\r\n");
    let mut array = String::from("[");
    while array.len() < size {
        if array.len() > 1 {
            array.push_str(",\r\n");
        }
        array.push_str(&unit);
    }
    array.push(']');
    let array = array.into_bytes();
    let (ours, base) = compare(
        || {
            black_box(parse_stream(Dialect::Gemini, &array));
        },
        || {
            black_box(
                serde_json::from_slice::<Value>(&array)
                    .map(|v| v.is_array())
                    .ok(),
            );
        },
        budget,
    );
    row("stream: Gemini JSON array (10 MB)", array.len(), ours, base);

    let detector = Detector::default();
    let (responses_body, gemini_body) = converted();
    for (name, dialect, body) in [
        (
            "request view: Responses (converted conv)",
            Dialect::OpenAiResponses,
            &responses_body,
        ),
        (
            "request view: Gemini (converted conv)",
            Dialect::Gemini,
            &gemini_body,
        ),
    ] {
        let (ours, base) = compare(
            || {
                black_box(
                    request_view(dialect, body)
                        .map(|v| read_all(&v, &detector))
                        .ok(),
                );
            },
            || {
                black_box(
                    serde_json::from_slice::<Value>(body)
                        .map(|v| v.is_object())
                        .ok(),
                );
            },
            budget,
        );
        row(name, body.len(), ours, base);
    }
}

/// Reads every result of a view (content and verdict), as the eager view
/// did: the total text length.
fn read_all(view: &toolwarden_wire::RequestView<'_>, detector: &Detector) -> usize {
    view.results
        .iter()
        .filter_map(|r| r.read(detector).ok())
        .map(|r| black_box(r).text.len())
        .sum()
}
