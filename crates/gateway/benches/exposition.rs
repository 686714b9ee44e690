//! The gateway's hand-written Prometheus metrics ([`Metrics`]) against the
//! `prometheus-client` crate (issue 15: "consider `prometheus-client` if it
//! costs nothing measurable"), on the metric set the gateway exposes: the
//! same families and label names, 50 tools × 3 providers × 2 models each
//! (300 tool-call and 300 tool-failure series), repairs by dialect and
//! defect, requests by provider and status, the unparsed counters and the
//! latency and overhead histograms.
//!
//! - `increment/*`: one count on the request path, on a series that exists
//!   (the steady state), cycling through the label sets. `tool_call`
//!   starts from the store's record, as the gateway's observer does:
//!   `prometheus-client` needs an owned label set, so the record's strings
//!   are cloned into it (`prometheus_client`), and `prometheus_client_prebuilt`
//!   is its floor with the label sets built beforehand. `upstream_finished`
//!   is one finished request: its status counter and both histograms.
//! - `render/*`: the whole `/metrics` text, ours against
//!   `prometheus_client::encoding::text::encode` of a registry holding the
//!   same series.
//!
//! `cargo bench -p toolwarden-gateway --bench exposition`

use std::{hint::black_box, sync::Arc, time::Duration};

use criterion::{Criterion, criterion_group, criterion_main};
use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};
use toolwarden_gateway::{
    Metrics, Provider,
    metrics::{
        MetricsObserver,
        events::{
            RepairApplied, UnparsedReason, UnparsedRequest, UnparsedResponse, UpstreamFinished,
        },
    },
};
use toolwarden_store::{Observer, RecorderCounters, ToolCallRecord, ToolResultRecord};
use toolwarden_wire::{DefectKind, Dialect};

const TOOLS: usize = 50;
const PROVIDERS: [(&str, [&str; 2]); 3] = [
    ("openai", ["gpt-4o", "gpt-4o-mini"]),
    ("anthropic", ["claude-sonnet-4-5", "claude-haiku-4-5"]),
    ("gemini", ["gemini-2.5-pro", "gemini-2.5-flash"]),
];
const DEFECTS: [DefectKind; 3] = [
    DefectKind::MissingResult,
    DefectKind::OrphanResult,
    DefectKind::DuplicateCallId,
];
const STATUSES: [u16; 4] = [200, 400, 429, 502];
/// The gateway's buckets (`metrics.rs`).
const LATENCY_BUCKETS: [f64; 15] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
const OVERHEAD_BUCKETS: [f64; 9] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.01,
];

fn tool_name(i: usize) -> String {
    format!("mcp__workspace__tool_{i:02}")
}

/// The tool calls of the metric set, as the store's writer hands them to
/// the observer.
fn call_records() -> Vec<ToolCallRecord> {
    let mut out = Vec::new();
    for tool in 0..TOOLS {
        for (provider, models) in PROVIDERS {
            for model in models {
                out.push(ToolCallRecord {
                    threaded: false,
                    request_id: "req_1".into(),
                    session_id: "session_1".into(),
                    provider: provider.into(),
                    model: Some(model.into()),
                    response_id: None,
                    dialect: None,
                    call_index: 0,
                    call_id: "call_1".into(),
                    tool: tool_name(tool),
                    arguments_bytes: 64,
                    at_ms: 0,
                    turn: None,
                });
            }
        }
    }
    out
}

fn failed_result(call: &ToolCallRecord) -> ToolResultRecord {
    ToolResultRecord {
        request_id: call.request_id.clone(),
        session_id: call.session_id.clone(),
        provider: call.provider.clone(),
        model: call.model.clone(),
        call_id: call.call_id.clone(),
        message_index: 1,
        tool: Some(call.tool.clone()),
        failed: true,
        basis: "is_error".into(),
        content_bytes: 100,
        excerpt: None,
        at_ms: 0,
        exec_ms: None,
        previous_response_id: None,
        answers: None,
        trace_parent: None,
        trace_state: None,
        latest_of_its_id: false,
        first_turn: None,
    }
}

fn finished(i: usize) -> UpstreamFinished {
    UpstreamFinished {
        provider: Provider::ALL[i % 3],
        status: STATUSES[i % STATUSES.len()],
        latency: Duration::from_millis(40 + (i % 7) as u64 * 300),
        overhead: Duration::from_micros(20 + (i % 5) as u64 * 30),
    }
}

// === ours ===

fn ours() -> (Arc<Metrics>, MetricsObserver) {
    let metrics = Arc::new(Metrics::new());
    let observer = MetricsObserver(metrics.clone());
    for call in call_records() {
        observer.on_tool_call(&call);
        observer.on_tool_result(&failed_result(&call), &call.tool);
    }
    for dialect in Dialect::ALL {
        for defect in DEFECTS {
            metrics.emit(RepairApplied { dialect, defect });
        }
    }
    for i in 0..Provider::ALL.len() * STATUSES.len() {
        metrics.emit(UpstreamFinished {
            provider: Provider::ALL[i % Provider::ALL.len()],
            ..finished(i)
        });
    }
    for provider in Provider::ALL {
        metrics.emit(UnparsedRequest { provider });
    }
    for reason in [
        UnparsedReason::Compressed,
        UnparsedReason::TooLarge,
        UnparsedReason::Invalid,
    ] {
        metrics.emit(UnparsedResponse { reason });
    }
    (metrics, observer)
}

// === prometheus-client ===

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    provider: String,
    model: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    provider: String,
    model: String,
    tool: String,
    basis: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RepairLabels {
    dialect: &'static str,
    defect: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    provider: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderLabels {
    provider: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AlertLabels {
    rule: String,
    tool: String,
    model: String,
}

/// The same metric set in `prometheus-client`'s types.
struct Theirs {
    registry: Registry,
    tool_calls: Family<ToolLabels, Counter>,
    upstream_requests: Family<RequestLabels, Counter>,
    latency: Family<ProviderLabels, Histogram>,
    overhead: Histogram,
}

fn tool_labels(call: &ToolCallRecord) -> ToolLabels {
    ToolLabels {
        provider: call.provider.clone(),
        model: call.model.clone().unwrap_or_default(),
        tool: call.tool.clone(),
    }
}

fn theirs() -> Theirs {
    let mut registry = Registry::default();
    let tool_calls = Family::<ToolLabels, Counter>::default();
    let tool_failures = Family::<FailureLabels, Counter>::default();
    let repairs = Family::<RepairLabels, Counter>::default();
    let upstream_requests = Family::<RequestLabels, Counter>::default();
    let unparsed_requests = Family::<ProviderLabels, Counter>::default();
    let unparsed_responses = Family::<ReasonLabels, Counter>::default();
    let events_dropped = Counter::<u64>::default();
    let events_written = Counter::<u64>::default();
    let latency = Family::<ProviderLabels, Histogram>::new_with_constructor(
        (|| Histogram::new(LATENCY_BUCKETS)) as fn() -> Histogram,
    );
    let overhead = Histogram::new(OVERHEAD_BUCKETS);
    let alerts_firing = Family::<AlertLabels, Gauge>::default();
    let notifications = Family::<OutcomeLabels, Counter>::default();
    // `prometheus-client` appends `_total` to counters and `_seconds` to
    // nothing: the names are the gateway's without `_total`.
    registry.register(
        "toolwarden_tool_calls",
        "Tool calls made by models.",
        tool_calls.clone(),
    );
    registry.register(
        "toolwarden_tool_failures",
        "Failed tool results, each counted once.",
        tool_failures.clone(),
    );
    registry.register(
        "toolwarden_repairs",
        "Repair changes applied to requests.",
        repairs.clone(),
    );
    registry.register(
        "toolwarden_upstream_requests",
        "Proxied requests by provider and status.",
        upstream_requests.clone(),
    );
    registry.register(
        "toolwarden_unparsed_requests",
        "Request bodies that could not be parsed (forwarded unchanged).",
        unparsed_requests.clone(),
    );
    registry.register(
        "toolwarden_unparsed_responses",
        "Response bodies not parsed for tool calls.",
        unparsed_responses.clone(),
    );
    registry.register(
        "toolwarden_events_dropped",
        "Events dropped because the recorder queue was full.",
        events_dropped,
    );
    registry.register(
        "toolwarden_events_written",
        "Events written by the recorder.",
        events_written,
    );
    registry.register(
        "toolwarden_upstream_latency_seconds",
        "Request sent to response finished.",
        latency.clone(),
    );
    registry.register(
        "toolwarden_gateway_overhead_seconds",
        "Gateway processing time on the request path.",
        overhead.clone(),
    );
    registry.register(
        "toolwarden_alerts_firing",
        "Alerts by rule, tool and model: 1 firing, 0 resolved.",
        alerts_firing,
    );
    registry.register(
        "toolwarden_alert_notifications",
        "Alert webhook notifications by outcome.",
        notifications.clone(),
    );

    for call in call_records() {
        tool_calls.get_or_create(&tool_labels(&call)).inc();
        tool_failures
            .get_or_create(&FailureLabels {
                provider: call.provider.clone(),
                model: call.model.clone().unwrap_or_default(),
                tool: call.tool.clone(),
                basis: "is_error".into(),
            })
            .inc();
    }
    for dialect in Dialect::ALL {
        for defect in DEFECTS {
            repairs
                .get_or_create(&RepairLabels {
                    dialect: dialect.as_str(),
                    defect: defect.as_str(),
                })
                .inc();
        }
    }
    for i in 0..Provider::ALL.len() * STATUSES.len() {
        let provider = Provider::ALL[i % Provider::ALL.len()].as_str();
        let f = finished(i);
        upstream_requests
            .get_or_create(&RequestLabels {
                provider,
                status: f.status,
            })
            .inc();
        latency
            .get_or_create(&ProviderLabels { provider })
            .observe(f.latency.as_secs_f64());
        overhead.observe(f.overhead.as_secs_f64());
    }
    for provider in Provider::ALL {
        unparsed_requests
            .get_or_create(&ProviderLabels {
                provider: provider.as_str(),
            })
            .inc();
    }
    for reason in ["compressed", "too_large", "invalid"] {
        unparsed_responses
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }
    for outcome in ["sent", "failed", "dropped"] {
        notifications
            .get_or_create(&OutcomeLabels { outcome })
            .inc_by(0);
    }
    Theirs {
        registry,
        tool_calls,
        upstream_requests,
        latency,
        overhead,
    }
}

fn increment(c: &mut Criterion) {
    let calls = call_records();
    let prebuilt: Vec<ToolLabels> = calls.iter().map(tool_labels).collect();
    let (metrics, observer) = ours();
    let prom = theirs();
    let mut g = c.benchmark_group("increment");

    let mut i = 0;
    g.bench_function("tool_call/hand_written", |b| {
        b.iter(|| {
            i = (i + 1) % calls.len();
            observer.on_tool_call(black_box(&calls[i]));
        })
    });
    g.bench_function("tool_call/prometheus_client", |b| {
        b.iter(|| {
            i = (i + 1) % calls.len();
            prom.tool_calls
                .get_or_create(&tool_labels(black_box(&calls[i])))
                .inc();
        })
    });
    g.bench_function("tool_call/prometheus_client_prebuilt", |b| {
        b.iter(|| {
            i = (i + 1) % prebuilt.len();
            prom.tool_calls.get_or_create(black_box(&prebuilt[i])).inc();
        })
    });

    g.bench_function("upstream_finished/hand_written", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            metrics.emit(black_box(finished(i)));
        })
    });
    g.bench_function("upstream_finished/prometheus_client", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            let f = black_box(finished(i));
            let provider = f.provider.as_str();
            prom.upstream_requests
                .get_or_create(&RequestLabels {
                    provider,
                    status: f.status,
                })
                .inc();
            prom.latency
                .get_or_create(&ProviderLabels { provider })
                .observe(f.latency.as_secs_f64());
            prom.overhead.observe(f.overhead.as_secs_f64());
        })
    });
    g.finish();
}

fn render(c: &mut Criterion) {
    let (metrics, _observer) = ours();
    let prom = theirs();
    let mut g = c.benchmark_group("render");
    let ours_len = metrics.render(RecorderCounters::default()).len();
    let mut text = String::new();
    encode(&mut text, &prom.registry).expect("encodes");
    eprintln!(
        "render: hand-written {ours_len} bytes, prometheus-client {} bytes",
        text.len()
    );
    g.bench_function("hand_written", |b| {
        b.iter(|| black_box(metrics.render(RecorderCounters::default())))
    });
    g.bench_function("prometheus_client", |b| {
        b.iter(|| {
            let mut out = String::with_capacity(4096);
            encode(&mut out, &prom.registry).expect("encodes");
            black_box(out)
        })
    });
    g.finish();
}

criterion_group!(benches, increment, render);
criterion_main!(benches);
