//! OTLP over gRPC (`otlp_protocol = "grpc"`): the spans reach an HTTP/2
//! collector in cleartext (prior knowledge) and over TLS (ALPN `h2`, the
//! test CA trusted through `upstream_roots`), as gRPC messages of the
//! `TraceService/Export` call, decoded here with the `opentelemetry-proto`
//! types. A Trailers-Only `UNAVAILABLE`, and a `RESOURCE_EXHAUSTED` that
//! says when in a `RetryInfo`, are sent again; `INVALID_ARGUMENT` is not.
//! (`.ci/sdk_e2e.sh` runs the same export against grpcio's own server.)

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response};
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::rt::{TokioExecutor, TokioIo};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;
use tokio::net::TcpListener;
use toolwarden_gateway::{EndpointKind, OtlpConfig, OtlpProtocol};
use toolwarden_mock_provider::MockOptions;

use crate::tls_support::{acceptor, tls_file};

use super::{
    otel::{six_exported_none_dropped, two_rounds},
    support::{Harness, metric},
};

const EXPORT: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// How the collector answers a call.
#[derive(Clone, Copy)]
enum Answer {
    /// `OK` in the trailers, after an empty response message.
    Ok,
    /// Only a head carrying this `grpc-status` ("Trailers-Only").
    Status(u32),
    /// `RESOURCE_EXHAUSTED` with a `RetryInfo` of one second.
    Exhausted,
    /// `OK`, after a response message whose `partial_success` rejects
    /// this many spans.
    Partial(i64),
}

/// What the collector saw: the spans of the calls it accepted, and the
/// calls whose message it had had before (sent again).
#[derive(Default)]
struct Seen {
    spans: usize,
    repeats: usize,
    messages: std::collections::HashSet<Bytes>,
}

/// `google.rpc.Status { code: 8, details: [Any(RetryInfo { retry_delay:
/// 1 s })] }`, written field by field.
fn retry_info_one_second() -> Vec<u8> {
    let retry_info = [0x0a, 0x02, 0x08, 0x01]; // retry_delay { seconds: 1 }
    let url = b"type.googleapis.com/google.rpc.RetryInfo";
    let mut any = vec![0x0a, url.len() as u8];
    any.extend_from_slice(url);
    any.extend_from_slice(&[0x12, retry_info.len() as u8]);
    any.extend_from_slice(&retry_info);
    let mut status = vec![0x08, 0x08, 0x1a, any.len() as u8];
    status.extend_from_slice(&any);
    status
}

/// An `ExportTraceServiceResponse` whose `partial_success` rejects
/// `rejected` spans, in its gRPC frame.
fn partial_success(rejected: i64) -> Bytes {
    let message = ExportTraceServiceResponse {
        partial_success: Some(ExportTracePartialSuccess {
            rejected_spans: rejected,
            error_message: "span too old".into(),
        }),
    }
    .encode_to_vec();
    let mut framed = vec![0];
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(&message);
    Bytes::from(framed)
}

/// A gRPC collector on 127.0.0.1 answering its calls by `script`, then
/// `Ok`; over TLS with the test certificate when `tls`.
async fn collector(script: Vec<Answer>, tls: bool) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    let acceptor = tls.then(|| acceptor(b"h2"));
    let keep = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (seen, script, acceptor) = (keep.clone(), script.clone(), acceptor.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: http::Request<Incoming>| {
                    let (seen, script) = (seen.clone(), script.clone());
                    async move {
                        assert_eq!(req.version(), http::Version::HTTP_2);
                        assert_eq!(req.uri().path(), EXPORT);
                        assert_eq!(req.headers()["content-type"], "application/grpc");
                        assert_eq!(req.headers()["te"], "trailers");
                        let body = req.into_body().collect().await?.to_bytes();
                        assert_eq!(body[0], 0, "not compressed");
                        let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
                        assert_eq!(body.len(), 5 + len, "one whole message");
                        let message = ExportTraceServiceRequest::decode(&body[5..])
                            .unwrap_or_else(|e| panic!("not an OTLP export request: {e}"));
                        let answer = script.lock().unwrap().pop_front().unwrap_or(Answer::Ok);
                        let mut seen = seen.lock().unwrap();
                        if !seen.messages.insert(body.clone()) {
                            seen.repeats += 1;
                        }
                        let mut response = match answer {
                            Answer::Ok | Answer::Partial(_) => {
                                seen.spans += message
                                    .resource_spans
                                    .iter()
                                    .flat_map(|r| &r.scope_spans)
                                    .map(|s| s.spans.len())
                                    .sum::<usize>();
                                let mut trailers = HeaderMap::new();
                                trailers.insert("grpc-status", HeaderValue::from_static("0"));
                                let reply = match answer {
                                    Answer::Partial(rejected) => partial_success(rejected),
                                    _ => Bytes::new(),
                                };
                                Response::new(
                                    Full::new(reply)
                                        .with_trailers(async move { Some(Ok(trailers)) })
                                        .boxed(),
                                )
                            }
                            Answer::Status(code) => {
                                let mut r = Response::new(Full::new(Bytes::new()).boxed());
                                r.headers_mut().insert("grpc-status", code.into());
                                r.headers_mut()
                                    .insert("grpc-message", HeaderValue::from_static("not%20now"));
                                r
                            }
                            Answer::Exhausted => {
                                use base64::Engine as _;
                                let details = base64::engine::general_purpose::STANDARD_NO_PAD
                                    .encode(retry_info_one_second());
                                let mut r = Response::new(Full::new(Bytes::new()).boxed());
                                r.headers_mut().insert("grpc-status", 8.into());
                                r.headers_mut().insert(
                                    "grpc-status-details-bin",
                                    HeaderValue::from_str(&details).unwrap(),
                                );
                                r
                            }
                        };
                        response
                            .headers_mut()
                            .insert("content-type", HeaderValue::from_static("application/grpc"));
                        Ok::<_, hyper::Error>(response)
                    }
                });
                let h2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
                match acceptor {
                    Some(acceptor) => {
                        let Ok(stream) = acceptor.accept(tcp).await else {
                            return;
                        };
                        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
                        let _ = h2.serve_connection(TokioIo::new(stream), service).await;
                    }
                    None => {
                        let _ = h2.serve_connection(TokioIo::new(tcp), service).await;
                    }
                }
            });
        }
    });
    (addr, seen)
}

fn grpc(url: &str) -> OtlpConfig {
    let mut c = OtlpConfig::parse_with(OtlpProtocol::Grpc, url, EndpointKind::Base, None)
        .expect("otlp config");
    c.flush = std::time::Duration::from_millis(100);
    c
}

async fn gateway(url: String, tls: bool) -> Harness {
    Harness::with(MockOptions::default(), move |c| {
        c.otlp = Some(grpc(&url));
        if tls {
            use rustls::pki_types::{CertificateDer, pem::PemObject};
            c.upstream_roots = CertificateDer::pem_file_iter(tls_file("ca.pem"))
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
        }
    })
    .await
}

/// Two rounds' six spans, all exported and none dropped; how many calls
/// were sent again.
async fn all_six_exported(h: &Harness, seen: &Mutex<Seen>) -> usize {
    two_rounds(h, "otel-grpc").await;
    six_exported_none_dropped(h).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.spans, 6, "every span arrived once");
    seen.repeats
}

/// Cleartext HTTP/2 with prior knowledge; a Trailers-Only `UNAVAILABLE`
/// (a collector restarting) costs a second, not the batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_a_grpc_collector_and_unavailable_is_sent_again() {
    let (addr, seen) = collector(vec![Answer::Status(14)], false).await;
    let h = gateway(format!("http://{addr}"), false).await;
    assert_eq!(
        all_six_exported(&h, &seen).await,
        1,
        "the refused call, again"
    );
}

/// TLS with ALPN `h2`; `RESOURCE_EXHAUSTED` with a `RetryInfo` (a
/// throttling backend that says when) is sent again after its delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_a_grpc_collector_over_tls_and_a_throttle_with_retry_info_waits() {
    let (addr, seen) = collector(vec![Answer::Exhausted], true).await;
    let h = gateway(format!("https://localhost:{}", addr.port()), true).await;
    assert_eq!(
        all_six_exported(&h, &seen).await,
        1,
        "the throttled call, again"
    );
}

/// `INVALID_ARGUMENT` is final: the batch is dropped and counted, not sent
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_argument_is_not_sent_again() {
    let (addr, seen) = collector(vec![Answer::Status(3); 64], false).await;
    let h = gateway(format!("http://{addr}"), false).await;
    two_rounds(&h, "otel-grpc-invalid").await;
    let dropped = [("outcome", "dropped")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_otlp_spans_total", &dropped) >= 6.0)
        .await;
    assert_eq!(
        metric(&m, "toolwarden_otlp_spans_total", &dropped),
        6.0,
        "{m}"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(
        (seen.spans, seen.repeats),
        (0, 0),
        "none accepted, none sent again"
    );
}

/// A collector that keeps only part of a call answers `OK` with a
/// `partial_success`: the spans it rejected are counted dropped, not
/// exported, and the call is not sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_a_partial_success_rejects_are_dropped() {
    let (addr, seen) = collector(vec![Answer::Partial(1)], false).await;
    let h = gateway(format!("http://{addr}"), false).await;
    two_rounds(&h, "otel-grpc-partial").await;
    let m = h
        .metrics_when(|m| {
            metric(m, "toolwarden_otlp_spans_total", &[("outcome", "exported")])
                + metric(m, "toolwarden_otlp_spans_total", &[("outcome", "dropped")])
                >= 6.0
        })
        .await;
    for (outcome, n) in [("exported", 5.0), ("dropped", 1.0)] {
        let counted = metric(&m, "toolwarden_otlp_spans_total", &[("outcome", outcome)]);
        assert_eq!(counted, n, "{outcome}: {m}");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(
        (seen.spans, seen.repeats),
        (6, 0),
        "every span once, none sent again"
    );
}
