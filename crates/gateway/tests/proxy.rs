//! The proxy through real sockets: a tiny hyper upstream on 127.0.0.1:0,
//! the gateway in-process, a hyper client.

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
use toolwarden_gateway::{Config, Gateway, RunningGateway, metrics::UPSTREAM_REQUESTS_TOTAL};

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
        .header("host", "gateway.test");
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

#[tokio::test]
async fn sse_events_reach_the_client_before_the_upstream_finishes() {
    let (tx, rx) = mpsc::channel(8);
    let up = upstream(sse_upstream(Arc::new(Mutex::new(Some(rx))))).await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let (response, _conn) = send(
        gw.addr(),
        post(
            "/v1/messages",
            &[("x-api-key", "k")],
            b"{\"model\":\"m\",\"stream\":true,\"messages\":[]}",
        ),
    )
    .await;
    let first = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n";
    tx.send(data(first)).await.unwrap();
    let mut body = response.into_body();
    // The upstream has not finished (tx is alive): the first event must
    // arrive on its own.
    let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("first event not forwarded while the upstream stream is open")
        .unwrap()
        .unwrap();
    assert_eq!(frame.into_data().unwrap(), first.as_bytes());
    let second = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    tx.send(data(second)).await.unwrap();
    drop(tx);
    let rest = body.collect().await.unwrap().to_bytes();
    assert_eq!(rest, second.as_bytes());
    gw.shutdown().await;
}

#[tokio::test]
async fn client_disconnect_mid_stream_cancels_the_upstream() {
    let (tx, rx) = mpsc::channel(8);
    let up = upstream(sse_upstream(Arc::new(Mutex::new(Some(rx))))).await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let (response, conn) = send(
        gw.addr(),
        post(
            "/v1/chat/completions",
            &[],
            b"{\"model\":\"m\",\"stream\":true}",
        ),
    )
    .await;
    tx.send(data("data: {\"choices\":[]}\n\n")).await.unwrap();
    let mut body = response.into_body();
    body.frame().await.unwrap().unwrap();
    // The client goes away.
    drop(body);
    conn.abort();
    tokio::time::timeout(Duration::from_secs(5), tx.closed())
        .await
        .expect("the upstream stream was not cancelled after the client left");
    gw.shutdown().await;
}

#[tokio::test]
async fn client_disconnect_before_the_response_cancels_the_upstream() {
    let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
    let dropped_tx = Arc::new(Mutex::new(Some(dropped_tx)));
    let up = upstream(handler(move |_| {
        // Held by the pending handler: dropped when hyper drops the future.
        let guard = DropSignal(dropped_tx.lock().unwrap().take());
        async move {
            let _guard = guard;
            std::future::pending::<Response<UpBody>>().await
        }
    }))
    .await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let stream = TcpStream::connect(gw.addr()).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let pending = tokio::spawn(async move {
        let _ = sender
            .send_request(post("/v1/responses", &[], b"{\"model\":\"m\"}"))
            .await;
    });
    // Wait until the upstream has the request, then hang up.
    let mut up = up;
    up.received.recv().await.unwrap();
    pending.abort();
    conn.abort();
    tokio::time::timeout(Duration::from_secs(5), dropped_rx)
        .await
        .expect("the upstream request was not cancelled after the client left")
        .ok();
    gw.shutdown().await;
}

struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

async fn json_error(response: Response<Incoming>) -> (StatusCode, serde_json::Value) {
    let status = response.status();
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = body_of(response).await;
    (status, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn upstream_down_gives_502_in_each_dialect() {
    let url = dead_upstream_url();
    let host = "127.0.0.1";
    let gw = gateway(&url, |_| {}).await;

    let (response, _c) = send(gw.addr(), post("/v1/messages", &[], b"{}")).await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 502);
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "api_error");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(host) && message.contains("could not connect"),
        "{message}"
    );

    let (response, _c) = send(gw.addr(), post("/v1/chat/completions", &[], b"{}")).await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 502);
    assert_eq!(v["error"]["type"], "upstream_error");
    assert_eq!(v["error"]["code"], "upstream_connect_error");

    let (response, _c) = send(
        gw.addr(),
        post("/v1beta/models/gemini-2.5-pro:generateContent", &[], b"{}"),
    )
    .await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 502);
    assert_eq!(v["error"]["code"], 502);
    assert_eq!(v["error"]["status"], "UNAVAILABLE");

    // The gateway stays up and counts the failures.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let metrics = gw.metrics();
    assert_eq!(
        metrics.counter(UPSTREAM_REQUESTS_TOTAL, &["anthropic", "502"]),
        1
    );
    assert_eq!(
        metrics.counter(UPSTREAM_REQUESTS_TOTAL, &["openai", "502"]),
        1
    );
    assert_eq!(
        metrics.counter(UPSTREAM_REQUESTS_TOTAL, &["gemini", "502"]),
        1
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn no_first_byte_gives_504() {
    let up = upstream(handler(|_| std::future::pending::<Response<UpBody>>())).await;
    let gw = gateway(&format!("http://{}", up.addr), |c| {
        c.first_byte_timeout = Some(Duration::from_millis(300));
    })
    .await;
    let mut up = up;
    let addr = gw.addr();
    let client = tokio::spawn(async move {
        let (response, _c) = send(addr, post("/v1/messages", &[], b"{}")).await;
        json_error(response).await
    });
    up.received.recv().await.unwrap();
    // The request is at the upstream, which never answers. (The gateway's
    // workers run their own clocks: a test's paused clock does not reach them.)
    let (status, v) = client.await.unwrap();
    assert_eq!(status, 504);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("timed out waiting for upstream"),
        "{message}"
    );
    assert!(message.contains("300 ms"), "{message}");
    gw.shutdown().await;
}

#[tokio::test]
async fn reset_mid_stream_appends_the_dialect_error_event() {
    let (tx, rx) = mpsc::channel(8);
    let up = upstream(sse_upstream(Arc::new(Mutex::new(Some(rx))))).await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let (response, _conn) = send(
        gw.addr(),
        post("/v1/messages", &[], b"{\"model\":\"m\",\"stream\":true}"),
    )
    .await;
    let first = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n";
    tx.send(data(first)).await.unwrap();
    let mut body = response.into_body();
    let frame = body.frame().await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), first.as_bytes());
    // Now the upstream connection breaks.
    tx.send(Err(std::io::Error::other("boom"))).await.unwrap();
    let rest = body.collect().await.unwrap().to_bytes();
    let rest = std::str::from_utf8(&rest).unwrap();
    assert!(
        rest.starts_with(
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\""
        ),
        "{rest}"
    );
    assert!(
        rest.contains("stream from upstream 127.0.0.1 broke"),
        "{rest}"
    );
    assert!(rest.ends_with("\n\n"));
    gw.shutdown().await;
}

#[tokio::test]
async fn oversized_request_gets_413_and_is_not_forwarded() {
    let mut up = upstream(handler(|_| async { full(200, &[], b"{}") })).await;
    let gw = gateway(&format!("http://{}", up.addr), |c| c.max_request_bytes = 16).await;
    let (response, _c) = send(
        gw.addr(),
        post(
            "/v1/chat/completions",
            &[],
            b"{\"model\":\"0123456789abcdef\"}",
        ),
    )
    .await;
    let (status, v) = json_error(response).await;
    assert_eq!(status, 413);
    assert_eq!(v["error"]["code"], "request_too_large");
    assert!(up.received.try_recv().is_err());
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

#[tokio::test]
async fn unpaired_calls_are_repaired_on_the_way() {
    let mut up = upstream(handler(|_| async {
        full(200, &[("content-type", "application/json")], b"{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}")
    }))
    .await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let broken: &'static [u8] = br#"{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"ls"}}]},{"role":"user","content":"never mind"}]}"#;
    let (response, _c) = send(
        gw.addr(),
        post(
            "/v1/messages",
            &[("x-api-key", "k"), ("content-type", "application/json")],
            broken,
        ),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-toolwarden-repaired"], "1");
    let got = up.received.recv().await.unwrap();
    assert_ne!(got.body, Bytes::from_static(broken));
    let sent: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
    let text = sent.to_string();
    assert!(
        text.contains("\"tool_result\"") && text.contains("toolu_01"),
        "{text}"
    );
    assert_eq!(got.headers["content-length"], got.body.len().to_string());
    assert_eq!(
        gw.metrics().counter(
            toolwarden_gateway::metrics::REPAIRS_TOTAL,
            &["anthropic", "missing_result"]
        ),
        1
    );

    // A clean body is forwarded as is, without the header.
    let clean: &'static [u8] =
        br#"{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}"#;
    let (response, _c) = send(gw.addr(), post("/v1/messages", &[], clean)).await;
    assert!(response.headers().get("x-toolwarden-repaired").is_none());
    assert_eq!(
        up.received.recv().await.unwrap().body,
        Bytes::from_static(clean)
    );
    gw.shutdown().await;
}

#[tokio::test]
async fn report_mode_forwards_unchanged_and_off_skips() {
    let mut up = upstream(handler(|_| async { full(200, &[], b"{}") })).await;
    let broken: &'static [u8] = br#"{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"next"}]}"#;
    for mode in [
        toolwarden_gateway::RepairMode::Report,
        toolwarden_gateway::RepairMode::Off,
    ] {
        let gw = gateway(&format!("http://{}", up.addr), |c| c.repair = mode).await;
        let (response, _c) = send(gw.addr(), post("/v1/chat/completions", &[], broken)).await;
        assert!(response.headers().get("x-toolwarden-repaired").is_none());
        assert_eq!(
            up.received.recv().await.unwrap().body,
            Bytes::from_static(broken)
        );
        gw.shutdown().await;
    }
}

#[tokio::test]
async fn calls_results_and_requests_are_recorded_without_credentials() {
    let response_body: &'static [u8] = br#"{"id":"chatcmpl-9","object":"chat.completion","model":"gpt-test-2025","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}"#;
    let up = upstream(handler(move |_| async move {
        full(200, &[("content-type", "application/json")], response_body)
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("events.jsonl");
    let db = format!("sqlite://{}", dir.path().join("tw.db").display());
    let gw = gateway(&format!("http://{}", up.addr), |c| {
        c.jsonl = Some(jsonl.clone());
        c.database = Some(db.clone());
    })
    .await;
    let request: &'static [u8] = br#"{"model":"gpt-test","messages":[{"role":"user","content":"list"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"Exit code 1\nls: cannot access 'x': No such file or directory"}]}"#;
    for _ in 0..2 {
        // The same turn twice (a client retry): the result is counted once.
        let (response, _c) = send(
            gw.addr(),
            post(
                "/v1/chat/completions?key=QUERYSECRET",
                &[
                    ("authorization", "Bearer sk-SECRET"),
                    ("x-session-id", "sess-42"),
                ],
                request,
            ),
        )
        .await;
        assert_eq!(body_of(response).await, Bytes::from_static(response_body));
    }
    let req = Request::get("/api/stats?since=1h")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (response, _c) = send(gw.addr(), req).await;
    assert_eq!(response.status(), 200);
    let metrics = gw.metrics().clone();
    gw.shutdown().await;

    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(!text.contains("SECRET"), "credentials leaked: {text}");
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["type"] == kind).collect()
    };
    let requests = of("request");
    assert_eq!(requests.len(), 2, "{text}");
    let r = requests[0];
    assert_eq!(r["session_id"], "sess-42");
    assert_eq!(r["session_source"], "header");
    assert_eq!(r["provider"], "openai");
    assert_eq!(r["dialect"], "openai-chat");
    assert_eq!(r["path"], "/v1/chat/completions");
    assert_eq!(r["model"], "gpt-test");
    assert_eq!(r["status"], 200);
    assert_eq!(r["streaming"], false);
    assert_eq!(r["input_tokens"], 50);
    assert_eq!(r["output_tokens"], 10);
    assert_eq!(r["response_id"], "chatcmpl-9");
    assert_eq!(r["repair_mode"], "fix");
    assert!(r["overhead_us"].as_f64().unwrap() > 0.0);
    assert_eq!(r["request_id"].as_str().unwrap().len(), 32);

    let calls = of("tool_call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["call_id"], "call_2");
    assert_eq!(calls[0]["tool"], "read_file");
    assert_eq!(calls[0]["arguments_bytes"], 12);
    assert_eq!(calls[0]["session_id"], "sess-42");

    let results = of("tool_result");
    assert_eq!(results.len(), 1, "{text}");
    let res = results[0];
    assert_eq!(res["call_id"], "call_1");
    assert_eq!(res["tool"], "shell");
    assert_eq!(res["failed"], true);
    assert_eq!(res["basis"], "client");
    assert!(res["excerpt"].as_str().unwrap().starts_with("Exit code 1"));
    assert_eq!(res["message_index"], 2);

    assert_eq!(
        metrics.counter(
            toolwarden_gateway::metrics::TOOL_CALLS_TOTAL,
            &["openai", "gpt-test", "read_file"]
        ),
        2
    );
    assert_eq!(
        metrics.counter(
            toolwarden_gateway::metrics::TOOL_FAILURES_TOTAL,
            &["openai", "gpt-test", "shell", "client"]
        ),
        1
    );
    let db_bytes = std::fs::read(dir.path().join("tw.db")).unwrap();
    assert!(!db_bytes.windows(6).any(|w| w == b"SECRET"));
}

#[tokio::test]
async fn shutdown_lets_an_open_stream_finish_within_the_grace_period() {
    let (tx, rx) = mpsc::channel(8);
    let up = upstream(sse_upstream(Arc::new(Mutex::new(Some(rx))))).await;
    let gw = gateway(&format!("http://{}", up.addr), |_| {}).await;
    let addr = gw.addr();
    let (response, _conn) = send(
        addr,
        post(
            "/v1/chat/completions",
            &[],
            b"{\"model\":\"m\",\"stream\":true}",
        ),
    )
    .await;
    let first = "data: {\"choices\":[]}\n\n";
    tx.send(data(first)).await.unwrap();
    let mut body = response.into_body();
    body.frame().await.unwrap().unwrap();
    let shutting_down = tokio::spawn(gw.shutdown());
    // New connections are refused once the listener is closed.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(TcpStream::connect(addr).await.is_err());
    // The open stream still completes.
    tx.send(data("data: [DONE]\n\n")).await.unwrap();
    drop(tx);
    let rest = body.collect().await.unwrap().to_bytes();
    assert_eq!(rest, "data: [DONE]\n\n".as_bytes());
    tokio::time::timeout(Duration::from_secs(5), shutting_down)
        .await
        .expect("shutdown finished after the stream")
        .unwrap();
}
