//! Vertex AI Live sockets without `vertex_upstream`: each goes to the
//! endpoint of the location its first message (`setup.model`) names, the
//! host HTTP Vertex requests of that location go to, reached under that
//! name (the `Host` header and the TLS server name the scripted upstream
//! saw; the gateway's connections to those names lead to it, `resolve`).
//! A first message naming none, or none in time, goes to the `global`
//! endpoint unchanged, counted; an upstream refusing the socket after the
//! client's upgrade was accepted closes the client with a code and reason
//! saying so, recorded as a refused upgrade is.

use std::{net::SocketAddr, time::Duration};

use futures_util::SinkExt;
use yawc::OpCode;

use super::*;

const GLOBAL: &str = "aiplatform.googleapis.com";

/// The host of a location's endpoint (what the tests expect of the
/// gateway's rule).
fn host(location: &str) -> String {
    format!("{location}-aiplatform.googleapis.com")
}

/// google-genai's `setup.model` in Vertex AI mode.
fn model(location: &str) -> String {
    format!("projects/p1/locations/{location}/publishers/google/models/gemini-live-2.5-flash")
}

fn setup(location: &str) -> Message {
    text(json!({"setup": {"model": model(location)}}))
}

fn set_up(v: &Value) -> bool {
    v.get("setupComplete").is_some()
}

/// Where the gateway's connections to the Vertex AI hosts the tests use
/// lead: `upstream` (and one location's to a closed port).
fn resolve_to(c: &mut Config, upstream: SocketAddr, closed: SocketAddr) {
    for name in [GLOBAL.to_string()]
        .into_iter()
        .chain(["us-central1", "europe-west4", "asia-northeast1"].map(host))
    {
        c.resolve.insert(&name, 443, upstream);
    }
    c.resolve.insert(&host("me-central2"), 443, closed);
}

/// A TLS upstream speaking `script` with a certificate for
/// `*.googleapis.com` (from a CA the gateway trusts), and a gateway
/// without `vertex_upstream`, with Google credentials, whose connections
/// to the Vertex AI hosts reach that upstream; then `tweak`ed.
async fn located(
    script: Script,
    tweak: impl FnOnce(&mut Config),
) -> (Harness, Arc<Mutex<Wire>>, tempfile::TempDir) {
    let tls = MockTls::generate_for(&["*.googleapis.com"]).expect("a test certificate");
    let (addr, wire) = scripted_on(Some(&tls), Vec::new(), script).await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let h = google_gateway(dir.path(), |c| {
        assert!(c.cloud.vertex.is_none(), "no vertex_upstream by default");
        c.upstream_roots.push(tls.ca_der());
        resolve_to(c, addr, closed);
        tweak(c);
    })
    .await;
    (h, wire, dir)
}

fn fallbacks(m: &str, reason: &str) -> f64 {
    metric(
        m,
        "toolwarden_vertex_live_fallbacks_total",
        &[("reason", reason)],
    )
}

#[tokio::test]
async fn a_vertex_live_socket_goes_to_the_location_its_setup_names() {
    let (mut h, wire, _dir) = located(live_script(), |_| {}).await;
    // google-genai with `vertexai=True`, `location="us-central1"` and no
    // credential of its own, under the `/vertex` prefix.
    let path = format!("/vertex{VERTEX_LIVE}");
    let mut ws = connect_path(&h.gw(), &path, &[("session_id", "vertex-live-1")], false)
        .await
        .unwrap();
    let (sent, got) = drive_live(&mut ws, &model("us-central1")).await;
    drop(ws);
    {
        // Byte for byte both ways, the first message included.
        let wire = wire.lock().unwrap();
        assert_eq!(wire.received, sent);
        assert_eq!(wire.sent, got);
    }
    // `global`, with the client's own token (passed unchanged); a
    // region, from a web page elsewhere (not lent the gateway's).
    for (location, headers) in [
        (
            "global",
            &[("authorization", "Bearer ya29.the-clients-own")][..],
        ),
        ("europe-west4", &[("origin", "https://evil.example")][..]),
    ] {
        let mut ws = connect_path(&h.gw(), VERTEX_LIVE, headers, false)
            .await
            .unwrap();
        let answer = exchange(&mut ws, setup(location), set_up).await;
        assert_eq!(answer, [binary(json!({"setupComplete": {}}))]);
    }
    {
        let wire = wire.lock().unwrap();
        let named = |h: &str| (h.to_string(), Some(h.to_string()));
        assert_eq!(
            wire.hosts,
            [
                named(&host("us-central1")),
                named(GLOBAL),
                named(&host("europe-west4"))
            ]
        );
        let path = VERTEX_LIVE.to_string();
        assert_eq!(
            wire.upgrades,
            [
                (path.clone(), Some(format!("Bearer {GATEWAY_TOKEN}"))),
                (path.clone(), Some("Bearer ya29.the-clients-own".into())),
                (path, None),
            ]
        );
        assert_eq!(
            &wire.received[sent.len()..],
            [setup("global"), setup("europe-west4")]
        );
    }

    let m = h.metrics_when(live_recorded).await;
    live_metrics(&m, "vertex");
    assert_eq!(
        (fallbacks(&m, "no_location"), fallbacks(&m, "timeout")),
        (0.0, 0.0),
        "{m}"
    );
    let stats = h.finish().await;
    // Three upgrades and the first socket's three turns.
    assert_eq!(stats.requests.total, 6, "{:?}", stats.requests);
    let recorded = format!("{:?}", h.events());
    assert!(!recorded.contains(GATEWAY_TOKEN), "{recorded}");
}

#[tokio::test]
async fn a_first_message_naming_no_location_goes_to_global_unchanged_and_is_counted() {
    // A `setup` is answered; anything else comes back as it came.
    let script: Script = Arc::new(|m: &Message| {
        let v: Value = serde_json::from_slice(&m.1).unwrap_or(Value::Null);
        if v.get("setup").is_some() {
            vec![binary(json!({"setupComplete": {}}))]
        } else {
            vec![m.clone()]
        }
    });
    let (h, wire, _dir) = located(script, |c| {
        c.client_head_timeout = Duration::from_millis(300);
    })
    .await;
    // A setup whose model names no project and location.
    let bare = text(json!({"setup": {"model": "publishers/google/models/gemini-live-2.5-flash"}}));
    let mut first = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
        .await
        .unwrap();
    exchange(&mut first, bare.clone(), set_up).await;
    // Binary garbage first: the first message decides, a setup after it
    // does not move the socket; both pass unchanged.
    let garbage: Message = (true, Bytes::from_static(b"\x00\xff\x10{not json"));
    let mut second = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
        .await
        .unwrap();
    let echoed = exchange(&mut second, garbage.clone(), |_| true).await;
    assert_eq!(echoed, std::slice::from_ref(&garbage));
    exchange(&mut second, setup("us-central1"), set_up).await;
    // Nothing within `client_head_timeout`: what comes later passes.
    let mut third = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    exchange(&mut third, setup("europe-west4"), set_up).await;
    {
        let wire = wire.lock().unwrap();
        let global = (GLOBAL.to_string(), Some(GLOBAL.to_string()));
        assert_eq!(wire.hosts, [global.clone(), global.clone(), global]);
        assert_eq!(
            wire.received,
            [bare, garbage, setup("us-central1"), setup("europe-west4")]
        );
    }
    let m = h.metrics_when(|m| fallbacks(m, "timeout") == 1.0).await;
    assert_eq!(fallbacks(&m, "no_location"), 2.0, "{m}");
}

/// The next frame, which must be a close: its code and reason.
async fn closed_with(ws: &mut Socket) -> (Option<u16>, String) {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next_frame())
            .await
            .expect("a frame in time")
            .expect("a close frame, not a broken socket");
        if frame.opcode() == OpCode::Close {
            let reason = frame
                .close_reason()
                .ok()
                .flatten()
                .unwrap_or("")
                .to_string();
            return (frame.close_code().map(u16::from), reason);
        }
        assert!(
            !matches!(frame.opcode(), OpCode::Text | OpCode::Binary),
            "no message before the close"
        );
    }
}

#[tokio::test]
async fn an_upstream_refusing_after_the_upgrade_closes_the_client_with_a_code_and_reason() {
    let (h, wire, _dir) = located(live_script(), |_| {}).await;
    {
        let mut wire = wire.lock().unwrap();
        let denied = json!({"error": {"code": 403, "status": "PERMISSION_DENIED",
            "message": "Permission 'aiplatform.endpoints.predict' denied on resource."}});
        wire.refuse
            .insert(host("europe-west4"), (403, denied.to_string()));
        wire.refuse
            .insert(host("asia-northeast1"), (503, "unavailable".into()));
    }
    for (location, code, reason) in [
        (
            "europe-west4",
            1008,
            "the upstream refused the socket: 403 Forbidden: Permission 'aiplatform.endpoints.predict' denied on resource.",
        ),
        (
            "asia-northeast1",
            1013,
            "the upstream refused the socket: 503 Service Unavailable",
        ),
        // Nothing listens where this location's host leads.
        ("me-central2", 1011, "upstream_connect_error: "),
    ] {
        // The client's upgrade is accepted before the upstream is asked.
        let mut ws = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
            .await
            .unwrap();
        let (_, first) = setup(location);
        ws.send(Frame::text(first)).await.unwrap();
        let (got, said) = closed_with(&mut ws).await;
        assert_eq!(got, Some(code), "{location}: {said}");
        assert!(said.starts_with(reason), "{location}: {said}");
        assert!(said.len() <= 123, "{said}");
    }
    assert!(wire.lock().unwrap().received.is_empty());
    let status = |m: &str, s: &str| {
        metric(
            m,
            "toolwarden_upstream_requests_total",
            &[("provider", "vertex"), ("status", s)],
        )
    };
    // Each socket's record is written after its client is closed: wait for
    // all three (a loaded machine may run them in any order).
    let m = h
        .metrics_when(|m| ["403", "503", "502"].iter().all(|s| status(m, s) == 1.0))
        .await;
    assert_eq!((status(&m, "403"), status(&m, "503")), (1.0, 1.0), "{m}");
    assert_eq!(status(&m, "101"), 0.0, "{m}");
}

/// A refusal whose body is in a transfer coding the gateway does not
/// relay (gzip) is not read for the close's reason: the client is closed
/// with the error that names the coding (1011; its reason the error's
/// code and the coding's name first, within the 123 bytes a close frame
/// holds), as an HTTP route or a refused Responses socket answers it, and
/// it is recorded so (502).
/// Before, the coded body was read as if plain.
#[tokio::test]
async fn a_refusal_in_an_unrelayed_transfer_coding_is_not_read() {
    let (h, wire, _dir) = located(live_script(), |_| {}).await;
    {
        let mut wire = wire.lock().unwrap();
        let denied = json!({"error": {"code": 403, "status": "PERMISSION_DENIED",
            "message": "Permission denied."}});
        wire.refuse
            .insert(host("europe-west4"), (403, denied.to_string()));
        wire.refusal_coding.insert(host("europe-west4"), "gzip");
    }
    let mut ws = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
        .await
        .unwrap();
    let (_, first) = setup("europe-west4");
    ws.send(Frame::text(first)).await.unwrap();
    let (got, said) = closed_with(&mut ws).await;
    assert_eq!(got, Some(1011), "{said}");
    // The coding's name, first: the reason's 123 bytes cut it off when
    // the host and the error's kind came before it.
    assert!(
        said.starts_with("upstream_bad_response: its body is in the transfer coding `gzip`"),
        "{said}"
    );
    assert!(!said.contains("Permission denied"), "{said}");
    let status = |m: &str, s: &str| {
        metric(
            m,
            "toolwarden_upstream_requests_total",
            &[("provider", "vertex"), ("status", s)],
        )
    };
    let m = h.metrics_when(|m| status(m, "502") == 1.0).await;
    assert_eq!(status(&m, "403"), 0.0, "{m}");
}

/// A first message with no room under `max_buffered_request_bytes` (a
/// socket's half-sent first message holds it) closes its client with 1013
/// naming the setting, at once (not when the first message's wait ends),
/// and opens no upstream.
#[tokio::test]
async fn a_first_message_with_no_room_is_refused_before_any_upstream() {
    let (h, wire, _dir) = located(live_script(), |c| {
        c.ws_max_message_bytes = 64 << 10;
        c.max_buffered_request_bytes = 64 << 10;
    })
    .await;
    let mut holding = crate::ws::client::Raw::connect_path(&h.gw(), VERTEX_LIVE, &[]).await;
    assert!(holding.head.starts_with("HTTP/1.1 101"), "{}", holding.head);
    let whole = crate::ws::client::Raw::encode(0x81, &vec![b' '; 60 << 10]);
    tokio::io::AsyncWriteExt::write_all(&mut holding.tcp, &whole[..50 << 10])
        .await
        .expect("write");
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut ws = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    ws.send(Frame::text(vec![b'{'; 30 << 10]))
        .await
        .expect("send");
    let (code, reason) = closed_with(&mut ws).await;
    assert_eq!(code, Some(1013), "{reason}");
    assert!(reason.contains("max_buffered_request_bytes"), "{reason}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(wire.lock().unwrap().hosts.is_empty(), "no upstream opened");
    drop(holding);
}

#[tokio::test]
async fn a_socket_waiting_for_its_first_message_is_closed_going_away_on_shutdown() {
    let (mut h, wire, _dir) = located(live_script(), |_| {}).await;
    let mut ws = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let gateway = h.gateway.take().expect("running");
    let (report, (code, reason)) = tokio::join!(gateway.shutdown(), closed_with(&mut ws));
    assert_eq!(report.abandoned, 0);
    assert_eq!(code, Some(1001), "{reason}");
    // At once, not when the first message's wait (30 s) ends.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(wire.lock().unwrap().hosts.is_empty(), "no upstream opened");
}

/// An upstream that has not answered the upgrade when the shutdown's grace
/// period ends: the client is closed going away (1001), promptly, not left
/// with a socket the shutdown breaks.
#[tokio::test]
async fn a_socket_whose_upstream_has_not_answered_is_closed_when_the_grace_ends() {
    // Connections are taken (the kernel's backlog) and never answered.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let (mut h, wire, _dir) = located(live_script(), |c| {
        c.resolve.insert(&host("us-east5"), 443, silent_addr);
        c.connect_timeout = Duration::from_secs(120);
        c.shutdown_grace = Duration::from_millis(300);
    })
    .await;
    let mut ws = connect_path(&h.gw(), VERTEX_LIVE, &[], false)
        .await
        .unwrap();
    let (_, first) = setup("us-east5");
    ws.send(Frame::text(first)).await.unwrap();
    // The gateway is asking the silent upstream now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let gateway = h.gateway.take().expect("running");
    let (_, (code, reason)) = tokio::join!(gateway.shutdown(), closed_with(&mut ws));
    assert_eq!(code, Some(1001), "{reason}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        wire.lock().unwrap().hosts.is_empty(),
        "no upstream answered"
    );
    drop(silent);
}
