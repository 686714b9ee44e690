//! OpenTelemetry export (issue 19): traffic through the gateway reaches a
//! real OTLP/HTTP receiver on 127.0.0.1 as protobuf, decoded here with the
//! `opentelemetry-proto` types (prost): GenAI span names and attributes,
//! one trace per session; a collector that refuses or never answers costs
//! dropped spans, not proxy time.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::Response;
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest,
    common::v1::{KeyValue, any_value::Value},
    trace::v1::Span,
};
use prost::Message;
use tokio::net::TcpListener;
use toolwarden_gateway::OtlpConfig;
use toolwarden_mock_provider::MockOptions;

use super::{
    convo::{Convo, Kind},
    support::{Harness, metric},
};

/// Decoded export requests, and the `x-team` header of each.
type Received = Arc<Mutex<Vec<(ExportTraceServiceRequest, Option<String>)>>>;

/// Export requests that came gzipped (only the gzip test sends them).
static GZIPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

async fn collector() -> (SocketAddr, Received) {
    collector_refusing(0).await
}

/// A collector that answers its first `refused` exports `503` with
/// `Retry-After: 1` (as one restarting or throttling does), keeping none.
async fn collector_refusing(refused: usize) -> (SocketAddr, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let got: Received = Arc::default();
    let keep = got.clone();
    let refusals = Arc::new(std::sync::atomic::AtomicUsize::new(refused));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let keep = keep.clone();
            let refusals = refusals.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: http::Request<Incoming>| {
                    let keep = keep.clone();
                    let refusals = refusals.clone();
                    async move {
                        let refuse = refusals
                            .fetch_update(
                                std::sync::atomic::Ordering::SeqCst,
                                std::sync::atomic::Ordering::SeqCst,
                                |n| n.checked_sub(1),
                            )
                            .is_ok();
                        if refuse {
                            let _ = req.into_body().collect().await?;
                            let mut busy = Response::new(Full::new(Bytes::from_static(b"busy")));
                            *busy.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                            busy.headers_mut()
                                .insert("retry-after", http::HeaderValue::from_static("1"));
                            return Ok::<_, hyper::Error>(busy);
                        }
                        assert_eq!(req.uri().path(), "/v1/traces");
                        assert_eq!(req.headers()["content-type"], "application/x-protobuf");
                        let team = req
                            .headers()
                            .get("x-team")
                            .and_then(|v| v.to_str().ok())
                            .map(String::from);
                        let gzip = req
                            .headers()
                            .get("content-encoding")
                            .is_some_and(|v| v == "gzip");
                        let mut body = req.into_body().collect().await?.to_bytes();
                        if gzip {
                            let mut plain = Vec::new();
                            std::io::Read::read_to_end(
                                &mut flate2::read::GzDecoder::new(&body[..]),
                                &mut plain,
                            )
                            .expect("a gzip body");
                            body = Bytes::from(plain);
                            GZIPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        let message = ExportTraceServiceRequest::decode(body)
                            .unwrap_or_else(|e| panic!("not an OTLP export request: {e}"));
                        keep.lock().unwrap().push((message, team));
                        Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::new())))
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, got)
}

fn spans(got: &Received) -> Vec<Span> {
    got.lock()
        .unwrap()
        .iter()
        .flat_map(|(m, _)| m.resource_spans.iter())
        .flat_map(|r| r.scope_spans.iter())
        .flat_map(|s| s.spans.iter().cloned())
        .collect()
}

fn attr<'a>(span: &'a Span, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv: &&KeyValue| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn text<'a>(span: &'a Span, key: &str) -> &'a str {
    match attr(span, key) {
        Some(Value::StringValue(s)) => s,
        other => panic!("{}: {key} = {other:?}", span.name),
    }
}

/// A collector that accepts connections and never answers.
async fn hanging_collector() -> SocketAddr {
    let hole = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = hole.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = hole.accept().await {
            held.push(s);
        }
    });
    addr
}

fn otlp(url: &str) -> OtlpConfig {
    let mut c = OtlpConfig::parse(url, Some("x-team=agents%20ml")).expect("otlp config");
    c.flush = Duration::from_millis(100);
    c
}

/// One round with a failed result, one with a successful one.
/// How long each round's tools take between the call and its result.
const EXEC_TIME: Duration = Duration::from_millis(30);

pub(super) async fn two_rounds(h: &Harness, session: &str) -> Duration {
    let mut convo = Convo::new(Kind::Anthropic, false, Some(session));
    convo.exec_time = EXEC_TIME;
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let failed = convo
        .tool_round(
            &h.client,
            &h.gw(),
            &[(true, "Exit code 1\nlookup: timeout")],
        )
        .await;
    assert_eq!(failed.len(), 1);
    slowest = slowest.max(started.elapsed());
    convo.user("Try again.");
    let started = Instant::now();
    convo
        .tool_round(&h.client, &h.gw(), &[(false, "Flight TP123 found")])
        .await;
    slowest.max(started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_follow_the_genai_conventions() {
    let (addr, got) = collector().await;
    let url = format!("http://{addr}");
    let h = Harness::with(MockOptions::default(), move |c| c.otlp = Some(otlp(&url))).await;
    two_rounds(&h, "otel-session").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while spans(&got).len() < 6 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let all = spans(&got);
    let chats: Vec<&Span> = all.iter().filter(|s| s.name.starts_with("chat ")).collect();
    let tools: Vec<&Span> = all
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert_eq!(
        (chats.len(), tools.len()),
        (4, 2),
        "{:#?}",
        all.iter().map(|s| &s.name).collect::<Vec<_>>()
    );

    let chat = chats[0];
    assert_eq!(chat.name, "chat claude-sonnet-4-20250514");
    assert_eq!(text(chat, "gen_ai.operation.name"), "chat");
    assert_eq!(text(chat, "gen_ai.provider.name"), "anthropic");
    assert_eq!(
        text(chat, "gen_ai.request.model"),
        "claude-sonnet-4-20250514"
    );
    assert_eq!(text(chat, "gen_ai.conversation.id"), "otel-session");
    // The upstream it went to (the mock provider).
    let upstream = h.mock.addr();
    assert_eq!(text(chat, "server.address"), upstream.ip().to_string());
    assert!(
        matches!(attr(chat, "server.port"), Some(Value::IntValue(p)) if *p == i64::from(upstream.port())),
        "{chat:#?}"
    );
    assert!(matches!(
        attr(chat, "gen_ai.request.stream"),
        Some(Value::BoolValue(false))
    ));
    assert!(
        matches!(attr(chat, "gen_ai.usage.input_tokens"), Some(Value::IntValue(n)) if *n > 0),
        "{chat:#?}"
    );
    assert!(chat.end_time_unix_nano >= chat.start_time_unix_nano && chat.start_time_unix_nano > 0);
    assert_eq!(chat.kind, 3, "SPAN_KIND_CLIENT");

    for tool in &tools {
        assert_eq!(tool.name, "execute_tool lookup");
        assert_eq!(text(tool, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(text(tool, "gen_ai.tool.name"), "lookup");
        assert!(!text(tool, "gen_ai.tool.call.id").is_empty());
        assert_eq!(text(tool, "gen_ai.conversation.id"), "otel-session");
        // The gateway times execution from the end of the response with the
        // call to the arrival of the request with its result (ms clock).
        let took = tool.end_time_unix_nano - tool.start_time_unix_nano;
        assert!(
            took >= (EXEC_TIME.as_nanos() as u64).saturating_sub(1_000_000),
            "duration = execution time: {took} ns"
        );
    }
    let failed: Vec<&&Span> = tools
        .iter()
        .filter(|s| s.status.as_ref().is_some_and(|st| st.code == 2))
        .collect();
    assert_eq!(failed.len(), 1, "{tools:#?}");
    assert_eq!(text(failed[0], "error.type"), "tool_error");
    assert_eq!(text(failed[0], "toolwarden.verdict.basis"), "explicit");
    // One conversation, one trace.
    assert!(
        all.iter()
            .all(|s| s.trace_id == chat.trace_id && s.trace_id.len() == 16)
    );
    let ids: std::collections::HashSet<&Vec<u8>> = all.iter().map(|s| &s.span_id).collect();
    assert_eq!(ids.len(), all.len(), "span ids are unique");

    let received = got.lock().unwrap();
    let (first, team) = &received[0];
    assert_eq!(team.as_deref(), Some("agents ml"));
    let resource = first.resource_spans[0].resource.as_ref().expect("resource");
    assert!(resource.attributes.iter().any(|kv| kv.key == "service.name"
        && matches!(kv.value.as_ref().and_then(|v| v.value.as_ref()), Some(Value::StringValue(s)) if s == "toolwarden-gateway")));
}

/// A request carrying a W3C `traceparent` (an instrumented agent: the
/// OpenAI Agents SDK, the Vercel AI SDK with its telemetry on) gets its
/// spans in the client's trace, under the client's span, with the
/// client's `tracestate`; one whose client did not sample it gets none
/// (counted). The resource names the
/// configured service and this process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_join_the_clients_trace() {
    let (addr, got) = collector().await;
    let url = format!("http://{addr}");
    let h = Harness::with(MockOptions::default(), move |c| {
        let mut otlp = otlp(&url);
        otlp.resource = vec![
            ("service.name".into(), "gw-eu".into()),
            ("deployment.environment.name".into(), "prod".into()),
        ];
        c.otlp = Some(otlp);
    })
    .await;
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const PARENT: &str = "00f067aa0ba902b7";
    const STATE: &str = "dd=s:1;t.dm:-4,congo=t61rcWkgMzE";
    let round = |session: &'static str, flags: &'static str| {
        let mut convo = Convo::new(Kind::Chat, true, Some(session));
        convo
            .extra_headers
            .push(("traceparent", format!("00-{TRACE}-{PARENT}-{flags}")));
        convo.extra_headers.push(("tracestate", STATE.to_string()));
        convo
    };
    let mut sampled = round("otel-traced", "01");
    sampled
        .tool_round(&h.client, &h.gw(), &[(true, "Exit code 1: timeout")])
        .await;
    let mut unsampled = round("otel-unsampled", "00");
    unsampled
        .tool_round(&h.client, &h.gw(), &[(false, "found")])
        .await;
    // The session-derived trace is still there for a client without one.
    two_rounds(&h, "otel-untraced").await;
    let m = h
        .metrics_when(|m| {
            metric(m, "toolwarden_otlp_spans_total", &[("outcome", "exported")]) >= 9.0
                && metric(
                    m,
                    "toolwarden_otlp_spans_total",
                    &[("outcome", "unsampled")],
                ) >= 3.0
        })
        .await;
    assert_eq!(
        metric(
            &m,
            "toolwarden_otlp_spans_total",
            &[("outcome", "unsampled")]
        ),
        3.0,
        "two chats and one tool of the unsampled client: {m}"
    );
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let all = spans(&got);
    let joined: Vec<&Span> = all
        .iter()
        .filter(|s| text(s, "gen_ai.conversation.id") == "otel-traced")
        .collect();
    assert_eq!(joined.len(), 3, "two chats and one tool: {joined:#?}");
    for span in &joined {
        assert_eq!(hex(&span.trace_id), TRACE, "{}", span.name);
        assert_eq!(hex(&span.parent_span_id), PARENT, "{}", span.name);
        assert_eq!(span.trace_state, STATE, "{}", span.name);
    }
    assert!(
        all.iter()
            .all(|s| text(s, "gen_ai.conversation.id") != "otel-unsampled")
    );
    let own: Vec<&Span> = all
        .iter()
        .filter(|s| text(s, "gen_ai.conversation.id") == "otel-untraced")
        .collect();
    assert_eq!(own.len(), 6);
    assert!(own.iter().all(|s| s.parent_span_id.is_empty()
        && hex(&s.trace_id) != TRACE
        && s.trace_state.is_empty()));

    let received = got.lock().unwrap();
    let resource = received[0].0.resource_spans[0]
        .resource
        .as_ref()
        .expect("resource");
    let value = |key: &str| {
        resource
            .attributes
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| kv.value.as_ref().and_then(|v| v.value.clone()))
    };
    assert_eq!(
        value("service.name"),
        Some(Value::StringValue("gw-eu".into()))
    );
    assert_eq!(
        value("deployment.environment.name"),
        Some(Value::StringValue("prod".into()))
    );
    match value("service.instance.id") {
        Some(Value::StringValue(id)) => assert_eq!(id.len(), 36, "a UUID: {id}"),
        other => panic!("service.instance.id: {other:?}"),
    }
}

/// A collector that refuses an export with 503 and `Retry-After` (a
/// restart, a throttling backend) gets the batch again: no span dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_export_is_sent_again() {
    let (addr, got) = collector_refusing(1).await;
    let url = format!("http://{addr}");
    let h = Harness::with(MockOptions::default(), move |c| c.otlp = Some(otlp(&url))).await;
    two_rounds(&h, "otel-retry").await;
    six_exported_none_dropped(&h).await;
    assert_eq!(spans(&got).len(), 6, "every span arrived once");
}

/// Waits for [`two_rounds`]' six spans to be exported, and asserts that
/// six were and none was dropped.
pub(super) async fn six_exported_none_dropped(h: &Harness) {
    let exported = [("outcome", "exported")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_otlp_spans_total", &exported) >= 6.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_otlp_spans_total", &exported),
        6.0,
        "{m}"
    );
    assert_eq!(
        metric(&m, "toolwarden_otlp_spans_total", &[("outcome", "dropped")]),
        0.0,
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_or_hanging_collector_costs_spans_not_time() {
    // Refusing: nothing listens on the port any more.
    let closed = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind")
        .local_addr()
        .expect("addr");
    let url = format!("http://{closed}");
    let h = Harness::with(MockOptions::default(), move |c| c.otlp = Some(otlp(&url))).await;
    let baseline = two_rounds(&h, "otel-dead-warm").await;
    let slowest = two_rounds(&h, "otel-dead").await;
    assert!(
        slowest < Duration::from_millis(500) + 3 * baseline,
        "{slowest:?} vs {baseline:?}"
    );
    let dropped = [("outcome", "dropped")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_otlp_spans_total", &dropped) >= 12.0)
        .await;
    assert!(
        metric(&m, "toolwarden_otlp_spans_total", &dropped) >= 12.0,
        "{m}"
    );
    assert_eq!(
        metric(
            &m,
            "toolwarden_otlp_spans_total",
            &[("outcome", "exported")]
        ),
        0.0
    );

    // Hanging: accepts and never answers.
    let hole_addr = hanging_collector().await;
    let url = format!("http://{hole_addr}");
    let h = Harness::with(MockOptions::default(), move |c| c.otlp = Some(otlp(&url))).await;
    let baseline = two_rounds(&h, "otel-hang-warm").await;
    for i in 0..5 {
        let slowest = two_rounds(&h, &format!("otel-hang-{i}")).await;
        assert!(
            slowest < Duration::from_millis(500) + 3 * baseline,
            "{slowest:?} vs {baseline:?}"
        );
    }
}

/// The spans of the last records are exported before a shutdown returns
/// (within its wait for the exporters), not left in the queue for the
/// next flush, which a process that exits never reaches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_spans_are_exported_before_shutdown_returns() {
    let (addr, got) = collector().await;
    let url = format!("http://{addr}");
    let mut h = Harness::with(MockOptions::default(), move |c| {
        let mut otlp = otlp(&url);
        // As by default: a second between flushes.
        otlp.flush = Duration::from_secs(1);
        c.otlp = Some(otlp);
    })
    .await;
    two_rounds(&h, "otel-shutdown").await;
    let gateway = h.gateway.take().expect("running");
    gateway.shutdown().await;
    assert_eq!(spans(&got).len(), 6, "exported when shutdown returned");
}

/// At shutdown the last spans go at once, not at the next flush: with a
/// flush interval longer than the shutdown's wait for the exporters, they
/// were lost ("spans not delivered when the shutdown ended"), as they are
/// whenever a collector throttles the last batch after the flush.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_sends_the_last_spans_without_waiting_for_the_flush() {
    let (addr, got) = collector().await;
    let url = format!("http://{addr}");
    let mut h = Harness::with(MockOptions::default(), move |c| {
        let mut otlp = otlp(&url);
        otlp.flush = Duration::from_secs(60);
        c.otlp = Some(otlp);
    })
    .await;
    two_rounds(&h, "otel-shutdown-now").await;
    let gateway = h.gateway.take().expect("running");
    let started = Instant::now();
    gateway.shutdown().await;
    assert_eq!(spans(&got).len(), 6, "exported when shutdown returned");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// Spans being sent count against the queue's bound: a collector that
/// hangs holds at most `queue` spans in the gateway (queued or in flight),
/// and the rest are dropped and counted. The queue's depth is
/// `toolwarden_otlp_spans_queued`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_collector_holds_at_most_the_queue() {
    let hole_addr = hanging_collector().await;
    let url = format!("http://{hole_addr}");
    let h = Harness::with(MockOptions::default(), move |c| {
        let mut otlp = otlp(&url);
        otlp.queue = 4;
        otlp.batch = 2;
        c.otlp = Some(otlp);
    })
    .await;
    let mut most = 0.0_f64;
    for i in 0..6 {
        two_rounds(&h, &format!("otel-queue-{i}")).await;
        let m = h.metrics().await;
        most = most.max(metric(&m, "toolwarden_otlp_spans_queued", &[]));
    }
    let dropped = [("outcome", "dropped")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_otlp_spans_total", &dropped) >= 8.0)
        .await;
    most = most.max(metric(&m, "toolwarden_otlp_spans_queued", &[]));
    assert!(most <= 4.0, "{most} spans held: {m}");
    assert!(most >= 1.0, "the hanging batch is held: {m}");
}

/// `OTEL_TRACES_SAMPLER=traceidratio` with ratio 0: no span is exported,
/// each is counted `unsampled`, and the collector hears nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sampler_that_keeps_nothing_exports_nothing() {
    let (addr, got) = collector().await;
    let url = format!("http://{addr}");
    let h = Harness::with(MockOptions::default(), move |c| {
        let mut config = otlp(&url);
        config.sampler = toolwarden_gateway::Sampler::from_env(&toolwarden_gateway::SamplerEnv {
            sampler: Some("traceidratio".into()),
            arg: Some("0".into()),
        })
        .unwrap();
        c.otlp = Some(config);
    })
    .await;
    two_rounds(&h, "otel-unsampled").await;
    let unsampled = [("outcome", "unsampled")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_otlp_spans_total", &unsampled) >= 6.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_otlp_spans_total", &unsampled),
        6.0,
        "{m}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(spans(&got).is_empty(), "{:?}", spans(&got));
}

/// `OTEL_EXPORTER_OTLP_COMPRESSION=gzip`: the bodies come gzipped, named
/// so, and every span arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_bodies_arrive_whole() {
    let (addr, got) = collector().await;
    let url = format!("http://{addr}");
    let h = Harness::with(MockOptions::default(), move |c| {
        let mut config = otlp(&url);
        config.compression = toolwarden_gateway::OtlpCompression::Gzip;
        c.otlp = Some(config);
    })
    .await;
    two_rounds(&h, "otel-gzip").await;
    six_exported_none_dropped(&h).await;
    assert_eq!(spans(&got).len(), 6);
    assert!(GZIPPED.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}
