//! A web page of another site cannot write records: its form or text
//! `POST` through the user's browser (a foreign `Origin`, a body the
//! browser sends without a preflight) is refused with a 403 in the
//! client's envelope, neither forwarded nor recorded, on the HTTP/1 fast
//! path's routes as on hyper's. A page's JSON `POST` (preflighted, so the
//! provider decides) and agents' requests (no `Origin`) go as before.

use http::Method;
use serde_json::json;

use super::support::{Harness, metric, send};

/// A Chat request whose history holds a failed tool result.
fn forged_history() -> Vec<u8> {
    serde_json::to_vec(&json!({"model": "gpt-4.1", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "call_forged", "type": "function",
            "function": {"name": "wire_money", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_forged", "content": "Error: permission denied"}
    ]}))
    .unwrap()
}

/// [`forged_history`] posted to `url` with `headers`.
async fn post_history(h: &Harness, url: &str, headers: &[(&str, &str)]) -> super::support::Reply {
    send(
        &h.client,
        Method::POST,
        url.to_string(),
        headers,
        forged_history(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pages_form_or_text_post_is_refused_and_not_recorded() {
    let mut h = Harness::start().await;
    let url = format!("{}/v1/chat/completions", h.gw());
    let page = ("origin", "https://attacker.example");
    for content_type in [
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let r = post_history(&h, &url, &[page, ("content-type", content_type)]).await;
        assert_eq!(r.status, 403, "{content_type}: {}", r.text());
        let body = r.json();
        assert_eq!(body["error"]["code"], "cross_site_request", "{body}");
    }
    // Anthropic's envelope for its route.
    let r = send(
        &h.client,
        Method::POST,
        format!("{}/v1/messages", h.gw()),
        &[page, ("content-type", "text/plain")],
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["error"]["type"],
        "permission_error",
        "{}",
        r.text()
    );
    assert!(h.mock.take_received().is_empty(), "nothing was forwarded");

    // The same body as JSON from a page, and as an agent sends it, goes on.
    for headers in [
        &[page, ("content-type", "application/json")][..],
        &[("content-type", "text/plain")][..],
    ] {
        let mut headers = headers.to_vec();
        headers.push(("authorization", "Bearer sk-e2e"));
        let r = post_history(&h, &url, &headers).await;
        assert_eq!(r.status, 200, "{headers:?}: {}", r.text());
    }
    assert_eq!(h.mock.take_received().len(), 2);
    let expected = |m: &str| metric(m, "toolwarden_tool_results_total", &[]) >= 1.0;
    let m = h.metrics_when(expected).await;
    assert!(expected(&m), "{m}");
    // The four refusals are counted, under their own reason.
    let refused = "toolwarden_refused_requests_total";
    assert_eq!(metric(&m, refused, &[("reason", "cross_site")]), 4.0, "{m}");
    assert_eq!(
        metric(&m, refused, &[("reason", "foreign_host")]),
        0.0,
        "{m}"
    );
    let stats = h.finish().await;
    // One result: the refused requests wrote nothing, the two sent the
    // same history (counted once).
    assert_eq!(stats.requests.total, 2, "{:?}", stats.requests);
    assert_eq!(stats.totals.failures, 1, "{:?}", stats.totals);
}
