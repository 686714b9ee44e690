//! The proxy through real sockets: a tiny hyper upstream on 127.0.0.1:0,
//! the gateway in-process, a hyper client. The helpers and the
//! pass-through tests are here; by topic:
//!
//! - `streaming`: SSE relayed as it comes, client disconnects cancel the
//!   upstream, shutdown lets an open stream finish;
//! - `failures`: upstream down (502), no first byte (504), reset mid-stream,
//!   oversized request (413), each in the client's dialect;
//! - `recording`: repairs on the way, report and off modes, calls, results
//!   and requests recorded without credentials.

use std::{
    convert::Infallible,
    future::Future,
    net::SocketAddr,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::{
    net::{TcpListener, TcpStream},
    sync::{mpsc, oneshot},
};
use toolwarden_gateway::{
    Config, Gateway, JsonlLog, RunningGateway, metrics::UPSTREAM_REQUESTS_TOTAL,
};

#[path = "proxy/failures.rs"]
mod failures;
#[path = "proxy/recording.rs"]
mod recording;
#[path = "proxy/streaming.rs"]
mod streaming;

// ---------------------------------------------------------------- helpers

type Frames = mpsc::Receiver<Result<Frame<Bytes>, std::io::Error>>;

/// A body fed by a channel: the test decides when each frame (or an error) goes out.
struct ChannelBody(Frames);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.0.poll_recv(cx)
    }
}

enum UpBody {
    Full(Full<Bytes>),
    Channel(ChannelBody),
}

impl Body for UpBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            UpBody::Full(b) => Pin::new(b).poll_frame(cx).map_err(|never| match never {}),
            UpBody::Channel(b) => Pin::new(b).poll_frame(cx),
        }
    }
}

/// What the upstream received.
#[derive(Debug, Clone)]
struct Received {
    path_and_query: String,
    headers: HeaderMap,
    body: Bytes,
}

type Handler =
    Arc<dyn Fn(Received) -> Pin<Box<dyn Future<Output = Response<UpBody>> + Send>> + Send + Sync>;

struct Upstream {
    addr: SocketAddr,
    received: mpsc::UnboundedReceiver<Received>,
}

async fn upstream(handler: Handler) -> Upstream {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, received) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let handler = handler.clone();
                    let tx = tx.clone();
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body.collect().await.unwrap().to_bytes();
                        let received = Received {
                            path_and_query: parts.uri.path_and_query().unwrap().to_string(),
                            headers: parts.headers,
                            body,
                        };
                        let _ = tx.send(received.clone());
                        Ok::<_, Infallible>(handler(received).await)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Upstream { addr, received }
}

fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Received) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<UpBody>> + Send + 'static,
{
    Arc::new(move |r| Box::pin(f(r)))
}

fn full(status: u16, headers: &[(&str, &str)], body: &'static [u8]) -> Response<UpBody> {
    let mut builder = Response::builder().status(status);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder
        .body(UpBody::Full(Full::new(Bytes::from_static(body))))
        .unwrap()
}

async fn gateway(upstream: &str, tweak: impl FnOnce(&mut Config)) -> RunningGateway {
    let mut config = Config::for_tests(upstream);
    tweak(&mut config);
    Gateway::start(config).await.unwrap()
}

/// A client connection to the gateway (one HTTP/1.1 connection per call).
async fn send(
    addr: SocketAddr,
    req: Request<Full<Bytes>>,
) -> (Response<Incoming>, tokio::task::JoinHandle<()>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let conn = tokio::spawn(async move {
        let _ = conn.await;
    });
    let response = sender.send_request(req).await.unwrap();
    (response, conn)
}

fn post(path: &str, headers: &[(&str, &str)], body: &'static [u8]) -> Request<Full<Bytes>> {
    let mut builder = Request::builder()
        .method("POST")
        .uri(path)
        .header("host", "localhost");
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Full::new(Bytes::from_static(body))).unwrap()
}

async fn body_of(response: Response<Incoming>) -> Bytes {
    response.into_body().collect().await.unwrap().to_bytes()
}

fn dead_upstream_url() -> String {
    // Bind, note the port, close: connections are refused.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

/// The upstream's SSE body, fed by the test.
fn sse_upstream(frames: Arc<Mutex<Option<Frames>>>) -> Handler {
    handler(move |_| {
        let frames = frames.lock().unwrap().take().expect("one request only");
        async move {
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(UpBody::Channel(ChannelBody(frames)))
                .unwrap()
        }
    })
}

fn data(text: &'static str) -> Result<Frame<Bytes>, std::io::Error> {
    Ok(Frame::data(Bytes::from_static(text.as_bytes())))
}

// ---------------------------------------------------------------- tests

#[tokio::test]
async fn request_and_response_pass_through_byte_identical() {
    let response_body: &'static [u8] = b"{ \"id\":\"chatcmpl-1\" ,\n  \"choices\":[] }\n";
    let mut up = upstream(handler(move |_| async move {
        full(
            200,
            &[
                ("content-type", "application/json"),
                ("x-request-id", "req_123"),
                ("set-cookie", "a=1"),
                ("openai-processing-ms", "42"),
            ],
            response_body,
        )
    }))
    .await;
    let gw = gateway(&format!("http://{}/prefix/", up.addr), |_| {}).await;

    // Unusual but valid JSON spacing and key order must survive untouched.
    let request_body: &'static [u8] =
        b"{\"model\" : \"gpt-x\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\\u0021\"}] , \"zzz\":1}";
    let (response, _conn) = send(
        gw.addr(),
        post(
            "/v1/chat/completions?api-version=2&x=%2F",
            &[
                ("authorization", "Bearer sk-test-secret"),
                ("content-type", "application/json"),
                ("openai-organization", "org-1"),
                ("x-custom", "a"),
                ("connection", "keep-alive"),
            ],
            request_body,
        ),
    )
    .await;
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["x-request-id"], "req_123");
    assert_eq!(headers["set-cookie"], "a=1");
    assert_eq!(headers["openai-processing-ms"], "42");
    assert_eq!(headers["content-type"], "application/json");
    assert!(headers.get("x-toolwarden-repaired").is_none());
    assert_eq!(body_of(response).await, Bytes::from_static(response_body));

    let got = up.received.recv().await.unwrap();
    assert_eq!(
        got.path_and_query,
        "/prefix/v1/chat/completions?api-version=2&x=%2F"
    );
    assert_eq!(got.body, Bytes::from_static(request_body));
    assert_eq!(got.headers["authorization"], "Bearer sk-test-secret");
    assert_eq!(got.headers["openai-organization"], "org-1");
    assert_eq!(got.headers["x-custom"], "a");
    assert_eq!(
        got.headers["content-length"],
        request_body.len().to_string()
    );
    assert_eq!(got.headers["host"], up.addr.to_string());
    assert!(got.headers.get("connection").is_none());
    gw.shutdown().await;
}

#[tokio::test]
async fn pass_through_paths_go_to_the_provider_named_by_headers() {
    let mut up = upstream(handler(|r| async move {
        let _ = r;
        full(
            200,
            &[("content-type", "application/json")],
            b"{\"data\":[]}",
        )
    }))
    .await;
    let other = upstream(handler(
        |_| async move { full(500, &[], b"wrong upstream") },
    ))
    .await;
    let gw = gateway(&format!("http://{}", other.addr), |c| {
        c.upstreams.anthropic =
            toolwarden_gateway::Upstream::parse(&format!("http://{}", up.addr)).unwrap();
    })
    .await;
    let req = Request::builder()
        .uri("/v1/models?limit=5")
        .header("x-api-key", "sk-ant-secret")
        .header("anthropic-version", "2023-06-01")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (response, _conn) = send(gw.addr(), req).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        body_of(response).await,
        Bytes::from_static(b"{\"data\":[]}")
    );
    let got = up.received.recv().await.unwrap();
    assert_eq!(got.path_and_query, "/v1/models?limit=5");
    assert_eq!(got.headers["x-api-key"], "sk-ant-secret");
    gw.shutdown().await;
}

#[tokio::test]
async fn healthz_and_metrics_answer() {
    let gw = gateway(&dead_upstream_url(), |_| {}).await;
    let req = Request::get("/healthz")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (response, _c) = send(gw.addr(), req).await;
    assert_eq!(response.status(), 200);
    let v: serde_json::Value = serde_json::from_slice(&body_of(response).await).unwrap();
    assert_eq!(v["ok"], true);
    assert!(v["recorder"]["events_dropped"].is_u64());
    let req = Request::get("/metrics")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (response, _c) = send(gw.addr(), req).await;
    let text = String::from_utf8(body_of(response).await.to_vec()).unwrap();
    assert!(text.contains("# TYPE toolwarden_tool_calls_total counter"));
    assert!(text.contains("toolwarden_events_dropped_total 0"));
    let req = Request::get("/api/stats")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (response, _c) = send(gw.addr(), req).await;
    assert_eq!(response.status(), 503);
    gw.shutdown().await;
}
