//! `HEAD /` (Claude Code preconnects with it; so does `curl -I`) and other
//! requests without a body on a route without a dialect: proxied, the
//! client gets the whole answer, they count in the metrics, and they make
//! no request row and no session — and no error.

use http::Method;

use super::support::{Harness, metric, send};

#[tokio::test]
async fn head_and_bodyless_pass_through_requests_make_no_session_and_no_error() {
    let mut h = Harness::start().await;
    let direct = send(
        &h.client,
        Method::HEAD,
        format!("{}/", h.direct()),
        &[],
        Vec::new(),
    )
    .await;
    let cases = [
        (Method::HEAD, "/"),
        (Method::HEAD, "/v1/models"),
        (Method::GET, "/v1/models"),
    ];
    for (method, path) in &cases {
        let r = send(
            &h.client,
            method.clone(),
            format!("{}{path}", h.gw()),
            &[("authorization", "Bearer sk-test")],
            Vec::new(),
        )
        .await;
        assert!(!r.broken, "{method} {path}: the answer is complete");
        if *method == Method::HEAD {
            assert!(r.body.is_empty(), "{method} {path}");
        }
        if *path == "/" {
            assert_eq!(
                r.status, direct.status,
                "{method} {path}: the upstream's own answer"
            );
        }
    }
    // Counted as proxied requests, once each.
    let m = h
        .metrics_when(|m| {
            metric(m, "toolwarden_upstream_requests_total", &[]) >= cases.len() as f64
        })
        .await;
    assert_eq!(
        metric(&m, "toolwarden_upstream_requests_total", &[]),
        cases.len() as f64,
        "{m}"
    );
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 0, "{:?}", stats.requests);
    assert_eq!(stats.requests.errors, 0);
    assert!(stats.sessions.is_empty(), "{:?}", stats.sessions);
    assert!(
        h.events().iter().all(|e| e["type"] != "request"),
        "{:?}",
        h.events()
    );
}
