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
