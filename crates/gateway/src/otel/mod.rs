//! OpenTelemetry export (issue 19): OTLP over HTTP/protobuf, or over gRPC
//! ([`grpc`]), to `--otlp-endpoint` (or the `OTEL_EXPORTER_OTLP_*`
//! variables), spans by the GenAI semantic conventions ([`spans`]).
//!
//! Driven by the recorder's [`Observer`] after each database write (so
//! every request and result is exported once, after dedup), never from
//! the request path: the observer encodes the span straight from the
//! record ([`encode`]: protobuf bytes, no message built, nothing cloned)
//! and appends it to the batch being filled, under a mutex held for that
//! only (at most `queue` spans wait; more are dropped and counted). The
//! export task, on the control runtime, is woken when a batch is full
//! (512 spans) or every second (the flush interval), not per span, and
//! POSTs each batch framed as one `ExportTraceServiceRequest` with a
//! timeout, and again after a retryable refusal ([`RETRY_WAITS`]). A
//! collector that is down or hangs costs dropped spans
//! (`toolwarden_otlp_spans_total{outcome="dropped"}`), never proxy time.

mod accepted;
pub(crate) mod encode;
mod grpc;
pub(crate) mod spans;
mod throttle;

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, atomic::Ordering},
    time::Duration,
};

use bytes::Bytes;
use http::{Request, header};
use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest,
    common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value::Value},
    resource::v1::Resource,
    trace::v1::{ResourceSpans, ScopeSpans, Span},
};
use tokio::sync::Notify;

use crate::{
    metrics::MetricsObserver,
    recorder::{Observer, RequestRecord, ToolCallRecord, ToolResultRecord},
    upstream::HttpClient,
};

pub use crate::config::otlp::{
    EndpointKind, OtlpCompression, OtlpConfig, OtlpProtocol, RootSampler, Sampler, SamplerEnv,
};
pub(crate) use crate::metrics::otlp_counters::OtlpCounters;

/// Bytes a span usually takes.
const SPAN_BYTES: usize = 400;

/// Spans waiting for export, encoded and framed ([`encode::frame_span`]).
#[derive(Default)]
struct Pending {
    /// Full batches, oldest first, then the one being filled.
    batches: VecDeque<Batch>,
    /// Spans in `batches`.
    spans: usize,
    /// Where a span is encoded before it is framed.
    scratch: Vec<u8>,
    /// The observer is gone, or the recorder drained at shutdown: export
    /// what is left and stop (a span that comes later is dropped).
    closed: bool,
}

#[derive(Default)]
struct Batch {
    framed: Vec<u8>,
    spans: usize,
}

/// What the observer and the export task share.
#[derive(Default)]
struct Queue {
    pending: Mutex<Pending>,
    /// A batch is full, or the observer is gone.
    ready: Notify,
}

/// The recorder's observer: metrics, then the export queue.
pub(crate) struct ExportingObserver {
    metrics: MetricsObserver,
    queue: Arc<Queue>,
    capacity: usize,
    batch: usize,
    sampler: Sampler,
    counters: Arc<OtlpCounters>,
}

/// The recorder's observer: [`MetricsObserver`] alone, or with export to
/// `config` (its task started on the current runtime) through the client
/// `client` builds for its protocol.
pub(crate) fn observer(
    config: Option<&OtlpConfig>,
    metrics: MetricsObserver,
    client: impl FnOnce(OtlpProtocol) -> Result<HttpClient, crate::GatewayError>,
) -> Result<Arc<dyn Observer>, crate::GatewayError> {
    let Some(config) = config else {
        return Ok(Arc::new(metrics));
    };
    let counters = metrics.0.otlp.clone();
    counters.enabled.store(true, Ordering::Relaxed);
    let queue = Arc::new(Queue::default());
    let client = client(config.protocol)?;
    tokio::spawn(export_loop(
        queue.clone(),
        config.clone(),
        client,
        counters.clone(),
    ));
    Ok(Arc::new(ExportingObserver {
        metrics,
        queue,
        capacity: config.queue.max(1),
        batch: config.batch.max(1),
        sampler: config.sampler,
        counters,
    }))
}

// === impl ExportingObserver ===

impl ExportingObserver {
    /// Whether a record's span is exported (the configured sampler, on
    /// its trace and its client's `traceparent`); one that is not is
    /// counted.
    fn sampled(
        &self,
        session_id: &str,
        request_id: &str,
        parent: Option<&toolwarden_core::TraceParent>,
    ) -> bool {
        let (trace, _) = spans::placement(session_id, request_id, parent);
        let sampled = self
            .sampler
            .samples(&trace, parent.map(toolwarden_core::TraceParent::sampled));
        if !sampled {
            self.counters.unsampled.fetch_add(1, Ordering::Relaxed);
        }
        sampled
    }

    /// Encodes a span with `encode` into the batch being filled, unless
    /// `capacity` spans are waiting already (then it is dropped, counted).
    fn queue(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut pending = self.queue.lock();
        // Full, or closed: the export task has stopped, nothing would send it.
        if pending.spans >= self.capacity || pending.closed {
            drop(pending);
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let Pending {
            batches,
            spans,
            scratch,
            ..
        } = &mut *pending;
        scratch.clear();
        encode(scratch);
        if batches.back().is_none_or(|b| b.spans >= self.batch) {
            batches.push_back(Batch {
                framed: Vec::with_capacity(SPAN_BYTES * self.batch.min(64)),
                spans: 0,
            });
        }
        let Some(batch) = batches.back_mut() else {
            return;
        };
        encode::frame_span(&mut batch.framed, scratch);
        batch.spans += 1;
        *spans += 1;
        self.counters.pending.fetch_add(1, Ordering::Relaxed);
        let full = batch.spans >= self.batch;
        drop(pending);
        if full {
            self.queue.ready.notify_one();
        }
    }
}

impl Drop for ExportingObserver {
    fn drop(&mut self) {
        self.close();
    }
}

impl ExportingObserver {
    /// No more records will come: the export task sends what is queued now,
    /// without retries, and stops.
    fn close(&self) {
        self.queue.lock().closed = true;
        self.queue.ready.notify_one();
    }
}

// === impl Queue ===

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Observer for ExportingObserver {
    fn on_request(&self, rec: &RequestRecord) {
        self.metrics.on_request(rec);
        // A pass-through (`count_tokens`, embeddings, a model list) is no
        // `chat`: no span.
        if rec.dialect.is_some()
            && self.sampled(&rec.session_id, &rec.request_id, rec.trace_parent.as_ref())
        {
            self.queue(|out| encode::chat(rec, out));
        }
    }

    fn on_tool_call(&self, rec: &ToolCallRecord) {
        self.metrics.on_tool_call(rec);
    }

    fn on_tool_result(&self, rec: &ToolResultRecord, resolved_tool: &str) {
        self.on_tool_result_timed(rec, resolved_tool, rec.exec_ms);
    }

    fn on_tool_result_timed(&self, rec: &ToolResultRecord, tool: &str, exec_ms: Option<f64>) {
        self.metrics.on_tool_result(rec, tool);
        if self.sampled(&rec.session_id, &rec.request_id, rec.trace_parent.as_ref()) {
            self.queue(|out| encode::execute_tool(rec, tool, exec_ms, out));
        }
    }

    /// The recorder drained at shutdown: the last spans go now, not at
    /// the next flush, which a process that exits may never reach.
    fn on_close(&self) {
        self.close();
    }
}

fn attr(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue {
            value: Some(Value::StringValue(value.to_string())),
        }),
    }
}

/// The resource this gateway exports under: the configured attributes
/// (`service.name` first), then `service.version` and
/// `service.instance.id` (`instance`, one per process) unless configured.
pub(crate) fn resource(configured: &[(String, String)], instance: &str) -> Resource {
    let mut attributes: Vec<KeyValue> = configured.iter().map(|(k, v)| attr(k, v)).collect();
    for (key, value) in [
        ("service.version", env!("CARGO_PKG_VERSION")),
        ("service.instance.id", instance),
    ] {
        if !configured.iter().any(|(k, _)| k == key) {
            attributes.push(attr(key, value));
        }
    }
    Resource {
        attributes,
        ..Resource::default()
    }
}

/// A `service.instance.id`: a random UUID (version 4), as the semantic
/// conventions advise, new at each start.
pub(crate) fn instance_id() -> String {
    let mut b = fastrand::u128(..).to_be_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The export request for `spans` under `resource` (what
/// [`encode::request_body`] writes).
pub(crate) fn export_request(resource: Resource, spans: Vec<Span>) -> ExportTraceServiceRequest {
    let version = env!("CARGO_PKG_VERSION");
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "toolwarden".into(),
                    version: version.into(),
                    ..InstrumentationScope::default()
                }),
                spans,
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

async fn export_loop(
    queue: Arc<Queue>,
    config: OtlpConfig,
    client: HttpClient,
    counters: Arc<OtlpCounters>,
) {
    let mut warned = Warned::default();
    let framing = encode::Framing::new(resource(&config.resource, &instance_id()));
    loop {
        tokio::select! {
            _ = queue.ready.notified() => {}
            _ = tokio::time::sleep(config.flush) => {}
        }
        // Taken batches still count against the queue's bound until they
        // are sent or dropped: a hanging collector holds them, not more.
        let (batches, closed) = {
            let mut pending = queue.lock();
            (std::mem::take(&mut pending.batches), pending.closed)
        };
        let mut failed_this_round = false;
        for batch in batches {
            let n = batch.spans as u64;
            if failed_this_round {
                // The collector failed this round's last batch: the rest
                // is dropped rather than waited on, batch after batch.
                counters.pending.fetch_sub(n, Ordering::Relaxed);
                counters.dropped.fetch_add(n, Ordering::Relaxed);
            } else {
                let body = Bytes::from(match config.compression {
                    OtlpCompression::Gzip => encode::gzipped(
                        &encode::request_body(&framing, &batch.framed, OtlpProtocol::HttpProtobuf),
                        config.protocol,
                    ),
                    _ => encode::request_body(&framing, &batch.framed, config.protocol),
                });
                failed_this_round =
                    export(&client, &config, &counters, body, n, &mut warned, closed).await;
            }
            let mut pending = queue.lock();
            pending.spans = pending.spans.saturating_sub(batch.spans);
        }
        if closed {
            break;
        }
    }
    if let Some(held) = warned.rejections.take_held() {
        let host = config.traces_url.host().unwrap_or("?");
        tracing::warn!(
            host,
            batches = held.times,
            rejected = held.count,
            "OTLP collector rejected spans of more batches since the last warning; they are dropped"
        );
    }
}

/// What the export task remembers between batches to warn once, not per
/// batch: whether export is failing (warned once per outage), and the
/// collector's rejections of part of a batch (warned at most once per
/// [`throttle::REJECTIONS_EVERY`]: a collector that rejects part of every
/// batch, spans too old or over a limit, logged a line per second).
struct Warned {
    failing: bool,
    rejections: throttle::Throttle,
}

impl Default for Warned {
    fn default() -> Self {
        Warned {
            failing: false,
            rejections: throttle::Throttle::new(throttle::REJECTIONS_EVERY),
        }
    }
}

/// The waits before a batch is sent again after a failure the OTLP spec
/// calls retryable (the connection, a timeout, 429, 502, 503, 504): a
/// collector restarting or a backend throttling (Honeycomb, Grafana Cloud
/// answer 429) costs a few seconds, not the batch. Not while an outage
/// goes on (the first failed batch found it) nor at shutdown.
const RETRY_WAITS: [Duration; 2] = [Duration::from_secs(1), Duration::from_secs(2)];

/// The longest `Retry-After` honoured; longer, the wait is this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

/// POSTs one batch of `n` spans (again after [`RETRY_WAITS`] when the
/// failure is retryable, unless export is failing already or the gateway
/// is `closing`: its exports have 2 s) and counts it; says whether export
/// is failing now (warned once per outage). The one place OTLP export
/// warns, through `warned`.
async fn export(
    client: &HttpClient,
    config: &OtlpConfig,
    counters: &OtlpCounters,
    body: Bytes,
    n: u64,
    warned: &mut Warned,
    closing: bool,
) -> bool {
    let failing = warned.failing;
    let mut waits: &[Duration] = if failing || closing {
        &[]
    } else {
        &RETRY_WAITS
    };
    let posted = loop {
        match post(client, config, body.clone()).await {
            Ok(accepted) => break Ok(accepted),
            Err(refused) => match (refused.retry_after, waits.split_first()) {
                (Some(after), Some((wait, rest))) => {
                    tokio::time::sleep(after.unwrap_or(*wait).min(MAX_RETRY_AFTER)).await;
                    waits = rest;
                }
                _ => break Err(refused.why),
            },
        }
    };
    counters.pending.fetch_sub(n, Ordering::Relaxed);
    warned.failing = match posted {
        Ok(accepted) => {
            // Spans the collector took and then rejected (`partial_success`)
            // are lost, not exported; the batch is not sent again.
            let rejected = accepted.rejected.min(n);
            counters.exported.fetch_add(n - rejected, Ordering::Relaxed);
            counters.dropped.fetch_add(rejected, Ordering::Relaxed);
            let host = config.traces_url.host().unwrap_or("?");
            let why = &accepted.message;
            if rejected > 0 {
                match warned.rejections.note(std::time::Instant::now(), rejected) {
                    Some(held) => tracing::warn!(
                        host,
                        rejected,
                        spans = n,
                        %why,
                        held_back_batches = held.times,
                        held_back_rejected = held.count,
                        "OTLP collector rejected spans of a batch; they are dropped (warned at \
                         most once a minute: held_back_* count those since the last warning)"
                    ),
                    None => tracing::debug!(
                        host,
                        rejected,
                        spans = n,
                        %why,
                        "OTLP collector rejected spans of a batch; they are dropped"
                    ),
                }
            } else if !why.is_empty() {
                tracing::debug!(host, %why, "OTLP collector accepted a batch with a warning");
            }
            if failing {
                tracing::info!("OTLP export works again");
            }
            false
        }
        Err(why) => {
            counters.dropped.fetch_add(n, Ordering::Relaxed);
            let host = config.traces_url.host().unwrap_or("?");
            if failing {
                tracing::debug!(host, %why, spans = n, "OTLP export failed; spans dropped");
            } else {
                tracing::warn!(host, %why, spans = n, "OTLP export failed; spans dropped");
            }
            true
        }
    };
    warned.failing
}

/// Why a POST failed, and whether (and after how long, if the collector
/// said) it may be sent again.
struct Refused {
    why: String,
    /// `None`: not retryable; `Some(after)`: retryable, after the
    /// collector's `Retry-After` if it gave one.
    retry_after: Option<Option<Duration>>,
}

/// POSTs one export request; answers what the collector said it kept.
async fn post(
    client: &HttpClient,
    config: &OtlpConfig,
    body: Bytes,
) -> Result<accepted::Accepted, Refused> {
    // The endpoint's credentials go as `Authorization` (below), not in
    // the URI: over HTTP/2 (gRPC, or `https://` negotiated to h2) its
    // authority is sent as `:authority`.
    let url = crate::http_client::without_userinfo(&config.traces_url);
    let head = match config.protocol {
        OtlpProtocol::HttpProtobuf => {
            Request::post(url).header(header::CONTENT_TYPE, "application/x-protobuf")
        }
        OtlpProtocol::Grpc => grpc::request(&url, config.timeout),
    };
    let head = match (config.compression, config.protocol) {
        (OtlpCompression::Gzip, OtlpProtocol::Grpc) => head
            .header("grpc-encoding", "gzip")
            .header("grpc-accept-encoding", "gzip"),
        (OtlpCompression::Gzip, _) => head.header(header::CONTENT_ENCODING, "gzip"),
        _ => head,
    };
    let mut request = head
        .body(crate::http_client::whole(body))
        .map_err(|e| Refused {
            why: e.to_string(),
            retry_after: None,
        })?;
    for (name, value) in &config.headers {
        // The protocol's own headers (content type, gRPC's) are not
        // the user's to replace.
        if !request.headers().contains_key(name) {
            request.headers_mut().insert(name.clone(), value.clone());
        }
    }
    // The endpoint's credentials, unless a configured header says otherwise.
    if !request.headers().contains_key(header::AUTHORIZATION)
        && let Some(auth) = crate::http_client::basic_auth(&config.traces_url)
    {
        request.headers_mut().insert(header::AUTHORIZATION, auth);
    }
    let response = tokio::time::timeout(config.timeout, client.request(request))
        .await
        .map_err(|_| Refused {
            why: format!("no answer within {:?}", config.timeout),
            retry_after: Some(None),
        })?
        .map_err(|e| Refused {
            why: e.to_string(),
            retry_after: Some(None),
        })?;
    if config.protocol == OtlpProtocol::Grpc {
        return grpc::outcome(response, config.timeout).await;
    }
    if response.status().is_success() {
        return Ok(accepted::Accepted::from_http(
            &read_answer(response, config.timeout).await,
        ));
    }
    let (status, retry_after) = crate::http_client::answered(response, config.timeout).await;
    let retryable = matches!(status.as_u16(), 429 | 502 | 503 | 504);
    Err(Refused {
        why: format!("status {status}"),
        retry_after: retryable.then_some(retry_after),
    })
}

/// The body of a collector's answer (at most 64 KiB, read within
/// `within`; empty if it is not read whole).
async fn read_answer(response: http::Response<hyper::body::Incoming>, within: Duration) -> Bytes {
    use http_body_util::BodyExt as _;
    let body = http_body_util::Limited::new(response.into_body(), 64 * 1024);
    match tokio::time::timeout(within, body.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        _ => Bytes::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_gets_the_traces_path_and_headers_are_decoded() {
        let c =
            OtlpConfig::parse("http://127.0.0.1:4318/", Some("x-api-key=a%20b, team=ml")).unwrap();
        assert_eq!(c.traces_url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(c.headers[0].1, "a b");
        assert_eq!(c.headers[1].0, "team");
        let c = OtlpConfig::parse("https://otlp.example/v1/traces", None).unwrap();
        assert_eq!(c.traces_url, "https://otlp.example/v1/traces");
        assert!(OtlpConfig::parse("collector:4318", None).is_err());
        let e = OtlpConfig::parse("http://c:4318", Some("bad header=secret\u{1}")).unwrap_err();
        assert!(!e.contains("secret"), "{e}");
    }

    /// An endpoint's credentials (`https://user:password@collector`) are
    /// sent as `Authorization: Basic`, as the SDKs' HTTP clients send them,
    /// unless a configured header sets `Authorization`; they were dropped.
    #[tokio::test]
    async fn an_endpoints_credentials_are_sent_as_basic_auth() {
        let (addr, seen) = crate::http_client::auth_receiver::start(false).await;
        let client =
            crate::upstream::build_client(&crate::Config::for_tests("http://127.0.0.1:9")).unwrap();
        for (endpoint, headers, expected) in [
            (
                format!("http://otel%40team:s%3Acret@{addr}"),
                None,
                Some("Basic b3RlbEB0ZWFtOnM6Y3JldA=="), // otel@team:s:cret
            ),
            (
                format!("http://u:p@{addr}"),
                Some("Authorization=Bearer%20tok"),
                Some("Bearer tok"),
            ),
            (format!("http://{addr}"), None, None),
        ] {
            let config = OtlpConfig::parse(&endpoint, headers).unwrap();
            assert!(
                post(&client, &config, Bytes::new()).await.is_ok(),
                "{endpoint}"
            );
            let sent = seen.lock().unwrap().pop().expect("a request");
            assert_eq!(
                sent.as_ref().map(|v| v.to_str().unwrap()),
                expected,
                "{endpoint}"
            );
        }
    }

    /// A collector that answers 200 with `answer` as its body.
    async fn answering(answer: Vec<u8>) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let answer = Bytes::from(answer);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let answer = answer.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<_>| {
                        let answer = answer.clone();
                        async move {
                            let body: hyper::body::Incoming = req.into_body();
                            let _ = http_body_util::BodyExt::collect(body).await;
                            let body = http_body_util::Full::new(answer);
                            Ok::<_, hyper::Error>(http::Response::new(body))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        addr
    }

    /// A collector that keeps part of a batch answers 200 with a
    /// `partial_success`: the spans it rejected are dropped, not exported
    /// (they were all counted exported), and the batch is not sent again.
    #[tokio::test]
    async fn spans_a_collector_rejects_are_counted_dropped() {
        use opentelemetry_proto::tonic::collector::trace::v1::{
            ExportTracePartialSuccess, ExportTraceServiceResponse,
        };
        use prost::Message as _;
        let client =
            crate::upstream::build_client(&crate::Config::for_tests("http://127.0.0.1:9")).unwrap();
        for (rejected, exported, dropped) in [(2, 3, 2), (0, 5, 0), (9, 0, 5)] {
            let answer = ExportTraceServiceResponse {
                partial_success: Some(ExportTracePartialSuccess {
                    rejected_spans: rejected,
                    error_message: "spans too old".into(),
                }),
            };
            let addr = answering(answer.encode_to_vec()).await;
            let config = OtlpConfig::parse(&format!("http://{addr}"), None).unwrap();
            let counters = OtlpCounters::default();
            counters.pending.store(10, Ordering::Relaxed);
            let mut warned = Warned::default();
            for _ in 0..2 {
                let failing = export(
                    &client,
                    &config,
                    &counters,
                    Bytes::new(),
                    5,
                    &mut warned,
                    false,
                )
                .await;
                assert!(!failing, "a partial success is no outage");
            }
            // The second batch's rejections are held back from the log,
            // and counted there.
            let held = warned.rejections.take_held();
            let want = (rejected > 0).then_some(throttle::Held {
                times: 1,
                count: dropped,
            });
            assert_eq!(held, want, "{rejected}");
            assert_eq!(counters.exported.load(Ordering::Relaxed), 2 * exported);
            assert_eq!(counters.dropped.load(Ordering::Relaxed), 2 * dropped);
            assert_eq!(counters.pending.load(Ordering::Relaxed), 0);
        }
    }

    /// Over gRPC (HTTP/2) the endpoint's credentials go as `Authorization`
    /// only: the URI's authority is sent as `:authority`, and it carried
    /// `user:password@` (which HTTP/2 forbids there, and which servers and
    /// proxies log).
    #[tokio::test]
    async fn grpc_credentials_are_not_sent_in_the_authority() {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        /// Each call's authority and `Authorization` header.
        type Seen = Arc<Mutex<Vec<(String, Option<http::HeaderValue>)>>>;
        let seen: Seen = Arc::default();
        let keep = seen.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let keep = keep.clone();
                let service = hyper::service::service_fn(move |req: Request<_>| {
                    let authority = req.uri().authority().map(|a| a.to_string());
                    let auth = req.headers().get(header::AUTHORIZATION).cloned();
                    keep.lock()
                        .unwrap()
                        .push((authority.unwrap_or_default(), auth));
                    let body: hyper::body::Incoming = req.into_body();
                    async move {
                        let _ = http_body_util::BodyExt::collect(body).await;
                        let mut response =
                            http::Response::new(http_body_util::Full::new(Bytes::new()));
                        response.headers_mut().insert("grpc-status", 0.into());
                        Ok::<_, hyper::Error>(response)
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tcp), service),
                );
            }
        });
        let client =
            crate::upstream::build_http2_client(&crate::Config::for_tests("http://127.0.0.1:9"))
                .unwrap();
        let endpoint = format!("http://otel:s%3Acret@{addr}");
        let config =
            OtlpConfig::parse_with(OtlpProtocol::Grpc, &endpoint, EndpointKind::Base, None)
                .unwrap();
        assert!(post(&client, &config, Bytes::new()).await.is_ok());
        let (authority, auth) = seen.lock().unwrap().pop().expect("a call");
        assert_eq!(authority, addr.to_string());
        assert_eq!(
            auth.as_ref().map(|v| v.to_str().unwrap()),
            Some("Basic b3RlbDpzOmNyZXQ=") // otel:s:cret
        );
    }
}
