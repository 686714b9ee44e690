//! The gateway stopping with WebSockets open: each is closed with 1001
//! (going away) to its client and a close handshake with the upstream; an
//! idle one at once, one with a turn open when the grace period ends; the
//! open turn is recorded with what was seen.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::json;
use toolwarden_mock_provider::{Fault, MockOptions, Scripted};

use super::client::{Raw, connect, next, send_text, turn};
use crate::e2e::support::Harness;

const AUTH: (&str, &str) = ("authorization", "Bearer sk-test");
/// Long enough that "at once" and "after the grace period" stay apart
/// under the whole suite's load.
const GRACE: Duration = Duration::from_secs(3);

#[tokio::test]
async fn open_sockets_are_closed_going_away_on_shutdown() {
    let mut h = Harness::with(MockOptions::default(), |c| c.shutdown_grace = GRACE).await;
    let create = json!({"model": "gpt-5", "input": [{"role": "user", "content": "Book TP123"}]});
    // An idle socket, one whole turn behind it.
    let mut idle = connect(&h.gw(), &[AUTH], false).await;
    let events = turn(&mut idle, &create).await;
    assert!(String::from_utf8_lossy(events.last().unwrap()).contains("response.completed"));
    // A socket whose turn is still open: the model stalls after the
    // function call's item is done (gpt-5 reasons first: two events of its
    // reasoning item before the call's).
    h.mock.set_fault(Fault::StallAfter(9));
    let mut busy = connect(&h.gw(), &[AUTH], true).await;
    let mut message = create.clone();
    message["type"] = json!("response.create");
    send_text(&mut busy, message.to_string()).await;
    let mut seen = Vec::new();
    for _ in 0..9 {
        seen.push(next(&mut busy).await.expect("an event"));
    }
    assert!(
        String::from_utf8_lossy(seen.last().unwrap()).contains("response.output_item.done"),
        "{seen:?}"
    );

    let started = Instant::now();
    let gateway = h.gateway.take().expect("running");
    let (report, idle_end, busy_end) = tokio::join!(
        gateway.shutdown(),
        async {
            let end = next(&mut idle).await;
            (end, started.elapsed())
        },
        async {
            let end = next(&mut busy).await;
            (end, started.elapsed())
        },
    );
    let stopped = started.elapsed();
    assert_eq!(report.abandoned, 0);
    assert_eq!(idle_end.0, Err(Some(1001)), "the idle socket: going away");
    assert!(idle_end.1 < GRACE, "at once: {:?}", idle_end.1);
    assert_eq!(busy_end.0, Err(Some(1001)), "the busy socket: going away");
    assert!(
        busy_end.1 >= GRACE - Duration::from_millis(100),
        "its turn had the grace period: {:?}",
        busy_end.1
    );
    assert!(
        stopped < GRACE + Duration::from_secs(6),
        "within the shutdown deadline: {stopped:?}"
    );
    // The upstream got a close from each socket, and answered it.
    assert_eq!(h.mock.websocket_ends(), vec![Some(1001), Some(1001)]);

    // The record: both turns, the open one with its tool call and the error.
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (2, 1));
    let events = h.events();
    let count = |ty: &str| events.iter().filter(|e| e["type"] == ty).count();
    assert_eq!(count("tool_call"), 2, "{events:#?}");
    assert!(
        events.iter().any(|e| e
            .to_string()
            .contains("the gateway shut down before the response finished")),
        "{events:#?}"
    );
}

/// A socket whose client reads nothing while its turn streams does not
/// hold the shutdown: the write waiting for the client is given up when
/// the grace period ends, the turn is recorded as cut short, and the
/// gateway stops within its deadline (`client_body_timeout` is far off).
#[tokio::test]
async fn a_client_that_reads_nothing_does_not_hold_the_shutdown() {
    let mut h = Harness::with(MockOptions::default(), |c| c.shutdown_grace = GRACE).await;
    let delta = json!({"type": "response.output_text.delta", "delta": "x".repeat(16 << 10)});
    let mut sse = vec![Bytes::from(
        "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_big\"}}\n\n",
    )];
    sse.extend((0..2000).map(|_| Bytes::from(format!("data: {delta}\n\n"))));
    h.mock.push_response(Scripted::Sse(sse, Duration::ZERO));
    let mut raw = Raw::connect(&h.gw(), &[("authorization: Bearer sk-test")]).await;
    let message =
        json!({"type": "response.create", "model": "gpt-5", "input": "Write a long story"});
    raw.frame(0x81, message.to_string().as_bytes()).await;
    // The sockets' buffers fill.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let started = Instant::now();
    let gateway = h.gateway.take().expect("running");
    let report = gateway.shutdown().await;
    let stopped = started.elapsed();
    assert_eq!(report.abandoned, 0);
    assert!(
        stopped < GRACE + Duration::from_secs(6),
        "within the shutdown deadline: {stopped:?}"
    );
    let stats = h.finish().await;
    assert_eq!((stats.requests.total, stats.requests.errors), (1, 1));
    assert!(
        h.events().iter().any(|e| e
            .to_string()
            .contains("the gateway shut down before the response finished")),
        "{:#?}",
        h.events()
    );
}

/// A turn whose message is still being written to an upstream that reads
/// nothing when the grace period ends: recorded as cut by the shutdown,
/// with its result; before, as a 499 "client disconnected" without it.
#[tokio::test]
async fn a_turn_cut_while_sent_at_shutdown_is_recorded_as_the_shutdowns() {
    let (upstream, began) = super::faults::deaf_upstream_after_a_start().await;
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.upstreams.openai = toolwarden_gateway::Upstream::parse(&upstream).unwrap();
        c.shutdown_grace = GRACE;
    })
    .await;
    let mut ws = connect(&h.gw(), &[AUTH], false).await;
    send_text(&mut ws, super::faults::large_turn().to_string()).await;
    // The gateway has read the message and begun its write upstream once
    // the upstream has the message's first bytes (it reads no more).
    tokio::time::timeout(Duration::from_secs(60), began)
        .await
        .expect("the write upstream began")
        .expect("the upstream saw it");
    let gateway = h.gateway.take().expect("running");
    let (report, end) = tokio::join!(gateway.shutdown(), next(&mut ws));
    assert_eq!(report.abandoned, 0);
    assert_eq!(end, Err(Some(1001)));
    let stats = h.finish().await;
    super::faults::assert_cut_turn_recorded(
        &h,
        &stats,
        "the gateway shut down before the response finished",
    );
}

/// Once the grace period is over, a socket still open is closed with 1001
/// and its client given `ws_forced_close_wait_ms` to answer the close
/// before its connection is dropped (a client that never answers: the end
/// of the connection comes no sooner). Before, that wait was a fixed
/// 500 ms, whatever was set.
#[tokio::test]
async fn the_forced_close_waits_as_long_as_set() {
    const FORCED: Duration = Duration::from_secs(3);
    let grace = Duration::from_millis(300);
    let mut h = Harness::with(MockOptions::default(), |c| {
        c.shutdown_grace = grace;
        c.ws_close_wait = Duration::from_secs(30);
        c.ws_forced_close_wait = FORCED;
    })
    .await;
    // A turn still open: the model stalls after its call (as above).
    h.mock.set_fault(Fault::StallAfter(9));
    let mut raw = Raw::connect(&h.gw(), &[]).await;
    let create = json!({"type": "response.create", "model": "gpt-5", "input": [{"role": "user", "content": "Book TP123"}]});
    raw.frame(0x81, create.to_string().as_bytes()).await;
    for _ in 0..9 {
        let (op, _) = raw.read_frame().await.expect("an event");
        assert_eq!(op & 0x0f, 0x1, "a text event");
    }
    let started = Instant::now();
    let gateway = h.gateway.take().expect("running");
    let (report, (code, ended)) = tokio::join!(gateway.shutdown(), async {
        // The close is read and never answered; then the connection ends.
        let code = raw.close_code().await;
        let mut rest = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut raw.tcp, &mut rest).await;
        (code, started.elapsed())
    });
    assert_eq!(report.abandoned, 0);
    assert_eq!(code, Some(1001));
    assert!(
        ended >= grace + FORCED,
        "the connection ended after {ended:?}, before the grace period and the forced close's wait"
    );
}
