//! SSE through the gateway as the upstream sends it; the client leaving
//! cancels the upstream request; shutdown waits for an open stream.

use super::*;

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
    // New connections are refused once the listener is closed, while the
    // stream is still open. Each worker thread closes its copy of the
    // listening socket when it sees the shutdown: waited for, not timed
    // (a loaded machine can leave a thread unscheduled for a while).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the listener is still open 10 s into the shutdown"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
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

/// An HTTP/2 client that stops reading one stream (its window stays shut,
/// while the connection's other streams and pings go on): the stream is
/// reset after `client_body_timeout_ms` and its upstream request
/// cancelled, as an HTTP/1 client that reads nothing is cut; the
/// connection's other streams are served before and after. Before, the
/// stream held the upstream and its response until the client reset it.
#[tokio::test]
async fn an_http2_stream_its_client_stops_reading_is_reset_and_its_upstream_freed() {
    let (tx, rx) = mpsc::channel(8);
    let up = upstream(sse_upstream(Arc::new(Mutex::new(Some(rx))))).await;
    let gw = gateway(&format!("http://{}", up.addr), |c| {
        c.client_body_timeout = Duration::from_secs(1);
    })
    .await;
    let stream = TcpStream::connect(gw.addr()).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
            // The stalled stream's window shuts soon; the connection's
            // stays open for the others.
            .initial_stream_window_size(65_535)
            .initial_connection_window_size(16 << 20)
            .handshake::<_, Full<Bytes>>(TokioIo::new(stream))
            .await
            .unwrap();
    let conn = tokio::spawn(conn);
    let mut request = post(
        "/v1/chat/completions",
        &[],
        b"{\"model\":\"m\",\"stream\":true}",
    );
    *request.uri_mut() = format!("http://{}/v1/chat/completions", gw.addr())
        .parse()
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // The upstream streams far more than the window, the gateway's and
    // the sockets' buffers hold; the client reads none of it.
    let event = format!("data: {{\"pad\":\"{}\"}}\n\n", "x".repeat(16 << 10));
    let event = Bytes::from(event);
    let feeder = tx.clone();
    let feeding = tokio::spawn(async move {
        for _ in 0..1024 {
            if feeder.send(Ok(Frame::data(event.clone()))).await.is_err() {
                return;
            }
        }
    });
    let healthz = || {
        hyper::Request::get(format!("http://{}/healthz", gw.addr()))
            .body(Full::default())
            .unwrap()
    };
    // Another stream on the connection is served while this one stalls.
    let other = sender.send_request(healthz()).await.unwrap();
    assert_eq!(other.status(), StatusCode::OK);
    body_of(other).await;
    tokio::time::timeout(Duration::from_secs(10), tx.closed())
        .await
        .expect("the upstream of the stream its client stopped reading was not cancelled");
    // The stalled stream was reset: what it had before its window shut,
    // then an error.
    let read = tokio::time::timeout(Duration::from_secs(5), response.into_body().collect())
        .await
        .expect("the stalled stream ended");
    assert!(read.is_err(), "the stalled stream was reset");
    // The connection goes on.
    let after = sender.send_request(healthz()).await.unwrap();
    assert_eq!(after.status(), StatusCode::OK);
    feeding.abort();
    conn.abort();
    gw.shutdown().await;
}
