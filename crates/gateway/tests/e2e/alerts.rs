//! Alerts (issue 19): failing tool results through the gateway fire one
//! webhook notification (Alertmanager format) and resolve after recovery,
//! even with two gateways evaluating the same database; nothing fires below
//! the minimum volume; a webhook that never answers does not slow the proxy.
//! The webhook receivers are real HTTP servers on 127.0.0.1.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::{Method, Response};
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use toolwarden_gateway::{AlertsConfig, Config, Gateway, JsonlLog, RawAlerts, RawRule};
use toolwarden_mock_provider::MockOptions;
use toolwarden_store::Store;

use super::{
    convo::{Convo, Kind},
    support::{Harness, metric, send},
};

/// A webhook receiver that keeps every JSON body it is sent.
struct Receiver {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    async fn start() -> Receiver {
        Receiver::answering_after(Duration::ZERO).await
    }

    /// A receiver that keeps a body only after `delay` (then answers).
    async fn answering_after(delay: Duration) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let keep = bodies.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let keep = keep.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req: http::Request<Incoming>| {
                        let keep = keep.clone();
                        async move {
                            tokio::time::sleep(delay).await;
                            let body = req.into_body().collect().await?.to_bytes();
                            let value = serde_json::from_slice(&body)
                                .unwrap_or_else(|e| panic!("webhook body is not JSON ({e})"));
                            keep.lock().unwrap().push(value);
                            Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::new())))
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Receiver { addr, bodies }
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }

    /// Waits (at most `limit`) for a notification with this status.
    async fn wait_for(&self, status: &str, limit: Duration) -> Vec<Value> {
        let deadline = Instant::now() + limit;
        loop {
            let bodies = self.bodies();
            if bodies.iter().any(|b| b["status"] == status) || Instant::now() > deadline {
                return bodies;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Accepts connections and never answers.
async fn black_hole() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    addr
}

/// Short windows for tests: 3 s window, 100 ms rounds, failure rate over
/// `min_results` results.
fn fast_alerts(webhooks: Vec<String>, min_results: u64) -> AlertsConfig {
    let raw = RawAlerts {
        window_ms: Some(3_000),
        interval_ms: Some(100),
        webhooks: Some(webhooks),
        retries: Some(1),
        timeout_ms: Some(2_000),
        failure_rate: Some(RawRule {
            min_volume: Some(min_results),
            ..RawRule::default()
        }),
        ..RawAlerts::default()
    };
    raw.validated().expect("valid alert settings")
}

/// `rounds` tool rounds (Anthropic, one `lookup` call each) whose results
/// fail or not; returns the slowest round.
async fn rounds(h: &Harness, session: &str, rounds: usize, fail: bool) -> Duration {
    let mut convo = Convo::new(Kind::Anthropic, false, Some(session));
    let outcome = if fail {
        (
            true,
            "Exit code 1\nlookup: the flight database is unreachable",
        )
    } else {
        (false, "Flight TP123 found: departs 09:05")
    };
    let mut slowest = Duration::ZERO;
    for i in 0..rounds {
        if i > 0 {
            convo.user("Another one, please.");
        }
        let started = Instant::now();
        convo.tool_round(&h.client, &h.gw(), &[outcome]).await;
        slowest = slowest.max(started.elapsed());
    }
    slowest
}

async fn api_alerts(h: &Harness) -> Value {
    let r = send(
        &h.client,
        Method::GET,
        format!("{}/api/alerts", h.gw()),
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(r.status, 200, "/api/alerts: {}", r.text());
    r.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_tool_fires_once_then_resolves_across_two_gateways() {
    let hook = Receiver::start().await;
    let alerts = fast_alerts(vec![hook.url()], 4);
    let for_gw = alerts.clone();
    let mut h = Harness::with(MockOptions::default(), move |c| c.alerts = for_gw).await;
    // A second gateway on the same database, evaluating the same rules,
    // with a JSONL log of its own (one log cannot be claimed by two).
    let mut other = Config::for_tests(&h.direct());
    other.database = Some(h.db_url.clone());
    let other_jsonl = h.jsonl.with_extension("other.jsonl");
    other.jsonl = Some(JsonlLog::unbounded(&other_jsonl));
    other.alerts = alerts;
    let other = Gateway::start(other).await.expect("second gateway");

    rounds(&h, "alerts-failing", 4, true).await;
    let bodies = hook.wait_for("firing", Duration::from_secs(10)).await;
    assert_eq!(bodies.len(), 1, "one notification: {bodies:#?}");
    let alert = &bodies[0]["alerts"][0];
    assert_eq!(bodies[0]["version"], "4");
    assert_eq!(alert["labels"]["alertname"], "ToolwardenToolFailureRate");
    assert_eq!(alert["labels"]["tool"], "lookup");
    assert_eq!(alert["labels"]["model"], "*");
    assert_eq!(alert["endsAt"], "0001-01-01T00:00:00Z");
    let api = api_alerts(&h).await;
    let firing = api["firing"].as_array().expect("firing list");
    assert_eq!(firing.len(), 1, "{api:#}");
    assert_eq!(firing[0]["rule"], "tool_failure_rate");
    assert_eq!(firing[0]["value"], 1.0);
    let labels = [
        ("rule", "tool_failure_rate"),
        ("tool", "lookup"),
        ("model", "*"),
    ];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_alerts_firing", &labels) == 1.0)
        .await;
    assert_eq!(metric(&m, "toolwarden_alerts_firing", &labels), 1.0, "{m}");

    // Recovery: successes, and the failures leave the 3 s window.
    rounds(&h, "alerts-recovered", 4, false).await;
    hook.wait_for("resolved", Duration::from_secs(15)).await;
    // Time for a duplicate from either gateway to show up (none must).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let bodies = hook.bodies();
    let statuses: Vec<&str> = bodies.iter().filter_map(|b| b["status"].as_str()).collect();
    assert_eq!(statuses, ["firing", "resolved"], "{bodies:#?}");
    let resolved = &bodies[1]["alerts"][0];
    assert_eq!(
        resolved["fingerprint"],
        bodies[0]["alerts"][0]["fingerprint"]
    );
    assert_ne!(resolved["endsAt"], "0001-01-01T00:00:00Z");
    let m = h.metrics().await;
    assert_eq!(metric(&m, "toolwarden_alerts_firing", &labels), 0.0, "{m}");

    other.shutdown().await;
    h.finish().await;
    // Each transition is in the log of the gateway that made it, once.
    let other_lines = std::fs::read_to_string(&other_jsonl).unwrap_or_default();
    let mut lines: Vec<Value> = h
        .events()
        .into_iter()
        .chain(
            other_lines
                .lines()
                .map(|l| serde_json::from_str(l).expect(l)),
        )
        .filter(|e| e["type"] == "alert")
        .collect();
    lines.sort_by_key(|e| e["seq"].as_i64());
    let states: Vec<&str> = lines.iter().filter_map(|e| e["state"].as_str()).collect();
    assert_eq!(states, ["firing", "resolved"], "JSONL: {lines:#?}");
    let store = Store::open(&h.db_url).await.expect("store");
    let history = store.alert_history(10).await.expect("history");
    assert_eq!(history.len(), 2, "{history:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_fires_below_the_minimum_volume() {
    let hook = Receiver::start().await;
    let alerts = fast_alerts(vec![hook.url()], 20);
    let h = Harness::with(MockOptions::default(), move |c| c.alerts = alerts).await;
    rounds(&h, "alerts-few", 3, true).await;
    // Many evaluation rounds with 3 failed results of 3 in the window.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(hook.bodies().is_empty(), "{:#?}", hook.bodies());
    let api = api_alerts(&h).await;
    assert_eq!(api["enabled"], true, "{api:#}");
    assert!(api["evaluated_ms"].is_i64(), "{api:#}");
    assert_eq!(api["firing"].as_array().map(Vec::len), Some(0), "{api:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_never_answers_does_not_slow_the_proxy() {
    let hole = black_hole().await;
    let alerts = fast_alerts(vec![format!("http://{hole}/hook")], 2);
    let h = Harness::with(MockOptions::default(), move |c| c.alerts = alerts).await;
    let before = rounds(&h, "alerts-hole-warmup", 3, false).await;
    rounds(&h, "alerts-hole", 2, true).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while api_alerts(&h).await["firing"]
        .as_array()
        .map_or(0, Vec::len)
        == 0
    {
        assert!(Instant::now() < deadline, "the alert never fired");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The notification is now stuck on the black hole; the proxy is not.
    let after = rounds(&h, "alerts-hole-after", 10, false).await;
    assert!(
        after < Duration::from_millis(500) + 3 * before,
        "slowest round {after:?} with a hanging webhook (before: {before:?})"
    );
    let api = api_alerts(&h).await;
    assert_eq!(api["notifications"]["sent"], 0, "{api:#}");
}

/// A notification on its way when the gateway stops is delivered before
/// the shutdown returns (within its wait for the exporters), not lost with
/// the process: its transition is claimed, so no other gateway would
/// announce it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_on_its_way_is_delivered_before_shutdown_returns() {
    let hook = Receiver::answering_after(Duration::from_millis(800)).await;
    let alerts = fast_alerts(vec![hook.url()], 4);
    let mut h = Harness::with(MockOptions::default(), move |c| c.alerts = alerts).await;
    rounds(&h, "alerts-stopping", 4, true).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while api_alerts(&h).await["firing"]
        .as_array()
        .is_none_or(|f| f.is_empty())
    {
        assert!(Instant::now() < deadline, "no alert fired");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The notification is on its way to the slow webhook now.
    assert!(hook.bodies().is_empty());
    let gateway = h.gateway.take().expect("running");
    gateway.shutdown().await;
    let statuses: Vec<Value> = hook.bodies().iter().map(|b| b["status"].clone()).collect();
    assert_eq!(statuses, ["firing"], "delivered when shutdown returned");
}

/// A receiver that answers every POST with `status` (and `Retry-After: 0`);
/// how many it was sent.
async fn answering(status: u16) -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = hits.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: http::Request<Incoming>| {
                    let count = count.clone();
                    async move {
                        let _ = req.into_body().collect().await?;
                        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let mut answer = Response::new(Full::new(Bytes::from_static(b"no")));
                        *answer.status_mut() = http::StatusCode::from_u16(status).unwrap();
                        answer
                            .headers_mut()
                            .insert("retry-after", http::HeaderValue::from_static("0"));
                        Ok::<_, hyper::Error>(answer)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, hits)
}

/// A receiver that refuses the notification itself (400: a Slack
/// `invalid_payload`, a revoked hook) is not sent it again; one that is
/// unavailable (503) is, as often as `retries` says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_notification_is_not_sent_again_an_unavailable_one_is() {
    let (refusing, refused) = answering(400).await;
    let (busy, retried) = answering(503).await;
    let alerts = fast_alerts(
        vec![
            format!("http://{refusing}/hook"),
            format!("http://{busy}/hook"),
        ],
        2,
    );
    let h = Harness::with(MockOptions::default(), move |c| c.alerts = alerts).await;
    rounds(&h, "alerts-refused", 2, true).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while retried.load(std::sync::atomic::Ordering::SeqCst) < 2 {
        assert!(
            Instant::now() < deadline,
            "the busy receiver was not sent it twice"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // `fast_alerts` allows one retry: the busy receiver gets it twice, then
    // again on later rounds (the alert still fires); the refusing one once.
    while retried.load(std::sync::atomic::Ordering::SeqCst) < 4 {
        assert!(
            Instant::now() < deadline,
            "the busy receiver was not sent it again on a later round"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(refused.load(std::sync::atomic::Ordering::SeqCst), 1);
    let api = api_alerts(&h).await;
    let by_kind = &api["notifications"]["by_kind"];
    assert_eq!(by_kind["transition"]["failed"], 2, "{api:#}");
    assert!(by_kind["resend"]["failed"].as_u64() >= Some(1), "{api:#}");
}

/// A receiver that answers 503 to its first `unavailable` POSTs (a rolling
/// restart, a Slack outage), then takes them; the bodies it took.
async fn back_after(unavailable: usize) -> (SocketAddr, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let keep = bodies.clone();
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (keep, hits) = (keep.clone(), hits.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: http::Request<Incoming>| {
                    let (keep, hits) = (keep.clone(), hits.clone());
                    async move {
                        let body = req.into_body().collect().await?.to_bytes();
                        let mut answer = Response::new(Full::new(Bytes::new()));
                        if hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < unavailable {
                            *answer.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                        } else {
                            let value = serde_json::from_slice(&body).expect("JSON body");
                            keep.lock().unwrap().push(value);
                        }
                        Ok::<_, hyper::Error>(answer)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, bodies)
}

/// Regression: a notification whose retries all failed (the receiver
/// unavailable for longer than the backoff) was never sent again, however
/// long the alert kept firing. It is sent again on later rounds until the
/// receiver takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_firing_alert_reaches_a_receiver_back_after_its_retries() {
    // Two attempts per notification (`fast_alerts`): the first notification
    // and its first re-send both fail.
    let (addr, bodies) = back_after(4).await;
    let alerts = fast_alerts(vec![format!("http://{addr}/hook")], 4);
    let h = Harness::with(MockOptions::default(), move |c| c.alerts = alerts).await;
    rounds(&h, "alerts-back", 4, true).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while bodies.lock().unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the firing alert never reached the receiver"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let first = bodies.lock().unwrap()[0].clone();
    assert_eq!(first["status"], "firing", "{first:#}");
    assert_eq!(first["alerts"][0]["labels"]["tool"], "lookup");
    assert_eq!(first["alerts"][0]["endsAt"], "0001-01-01T00:00:00Z");
    let api = api_alerts(&h).await;
    let by_kind = &api["notifications"]["by_kind"];
    assert_eq!(by_kind["transition"]["failed"], 1, "{api:#}");
    assert!(by_kind["resend"]["sent"].as_u64() >= Some(1), "{api:#}");
    let m = h.metrics().await;
    let sent_again = [("outcome", "sent"), ("kind", "resend")];
    assert!(
        metric(&m, "toolwarden_alert_notifications_total", &sent_again) >= 1.0,
        "{m}"
    );
}

/// A still-firing alert is repeated every `repeat_interval`, as
/// Alertmanager's: the same alert (`startsAt`, fingerprint), once per
/// repeat though two gateways evaluate it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_still_firing_alert_is_repeated_once_per_interval_across_two_gateways() {
    let hook = Receiver::start().await;
    let mut alerts = fast_alerts(vec![hook.url()], 4);
    alerts.repeat_interval = Some(Duration::from_millis(300));
    let for_gw = alerts.clone();
    let mut h = Harness::with(MockOptions::default(), move |c| c.alerts = for_gw).await;
    let mut other = Config::for_tests(&h.direct());
    other.database = Some(h.db_url.clone());
    other.alerts = alerts;
    let other = Gateway::start(other).await.expect("second gateway");
    rounds(&h, "alerts-repeated", 4, true).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while hook.bodies().len() < 3 {
        assert!(Instant::now() < deadline, "{:#?}", hook.bodies());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    other.shutdown().await;
    let gateway = h.gateway.take().expect("running");
    gateway.shutdown().await;
    let bodies = hook.bodies();
    let alert = |b: &Value| b["alerts"][0].clone();
    let first = alert(&bodies[0]);
    for b in &bodies {
        assert_eq!(b["status"], "firing", "{bodies:#?}");
        assert_eq!(alert(b)["startsAt"], first["startsAt"]);
        assert_eq!(alert(b)["fingerprint"], first["fingerprint"]);
    }
    // One body per claimed repeat: none sent by both gateways.
    let store = Store::open(&h.db_url).await.expect("store");
    let repeats = store.alert_repeats().await.expect("repeats");
    assert_eq!(repeats.len(), 1, "{repeats:?}");
    assert_eq!(
        repeats[0].repeat_no as usize + 1,
        bodies.len(),
        "{bodies:#?}"
    );
}
