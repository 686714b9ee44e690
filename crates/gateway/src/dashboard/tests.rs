//! The admin router with the dashboard merged in, over a real SQLite store:
//! content types, the store's JSON, the access check on every route (with
//! fake peer addresses).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower_service::Service;

use super::assets::{APP_CSS, APP_JS, CHART_JS, DOM_JS, INDEX_HTML};
use crate::metrics::Metrics;
use crate::observe::Sinks;
use crate::recorder::{Event, Recorder, RecorderOptions, Store, ToolResultRecord};
use crate::{
    admin::{AdminState, admin_router},
    state::PeerAddr,
};
use toolwarden_store::TOOL_ROWS;

const NOW: i64 = 1_700_000_000_000;
const XSS: &str = "<img src=x onerror=\"window.__pwned=1\"> failed";

fn result(
    session: &str,
    call_id: &str,
    index: u32,
    tool: &str,
    failed: bool,
    excerpt: Option<&str>,
) -> Event {
    Event::ToolResult(ToolResultRecord {
        request_id: format!("req-{call_id}"),
        session_id: session.to_owned(),
        provider: "anthropic".to_owned(),
        model: Some("claude-test".to_owned()),
        call_id: call_id.to_owned(),
        message_index: index,
        tool: Some(tool.to_owned()),
        failed,
        basis: if failed { "explicit" } else { "none" }.to_owned(),
        content_bytes: 10,
        excerpt: excerpt.map(str::to_owned),
        at_ms: NOW + i64::from(index),
        exec_ms: None,
        previous_response_id: None,
        answers: None,
        trace_parent: None,
        trace_state: None,
        latest_of_its_id: false,
        first_turn: None,
    })
}

/// An admin router over a fresh SQLite store holding a few results.
struct Fixture {
    app: Router,
    _dir: tempfile::TempDir,
}

async fn fixture(loopback_only: bool, admin_token: Option<&str>, with_store: bool) -> Fixture {
    fixture_with(loopback_only, admin_token, with_store, Vec::new()).await
}

/// [`fixture`] with `more` events recorded after its own.
async fn fixture_with(
    loopback_only: bool,
    admin_token: Option<&str>,
    with_store: bool,
    more: Vec<Event>,
) -> Fixture {
    fixture_rows(loopback_only, admin_token, with_store, more, TOOL_ROWS).await
}

/// [`fixture_with`] listing at most `tool_rows` tools (`dashboard_tool_rows`).
async fn fixture_rows(
    loopback_only: bool,
    admin_token: Option<&str>,
    with_store: bool,
    more: Vec<Event>,
    tool_rows: usize,
) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = if with_store {
        let url = format!("sqlite://{}", dir.path().join("dash.db").display());
        Some(Store::open(&url).await.expect("open store"))
    } else {
        None
    };
    let recorder = Recorder::start(
        store.clone(),
        RecorderOptions {
            queue_capacity: 1024,
            batch_max: 64,
            flush_interval: Duration::from_millis(5),
            jsonl: None,
        },
        Arc::new(toolwarden_store::NoopObserver),
    );
    for ev in [
        result("s-1", "c1", 1, "read_file", true, Some(XSS)),
        result("s-1", "c2", 3, "grep", false, None),
        result("s-1", "c3", 5, "read_file", false, None),
        // A resend of c1 in a later turn: the same identity, counted once.
        result("s-1", "c1", 1, "read_file", true, Some(XSS)),
        result("s-2", "d1", 1, "grep", false, None),
    ]
    .into_iter()
    .chain(more)
    {
        recorder.record(ev);
    }
    recorder.shutdown().await;
    let sinks = Arc::new(Sinks::new(
        recorder,
        Arc::new(Metrics::new()),
        Default::default(),
    ));
    let app = admin_router(AdminState {
        store,
        sinks,
        loopback_only,
        admin_token: admin_token.map(str::to_owned),
        tool_rows,
    });
    Fixture { app, _dir: dir }
}

async fn get(
    app: &Router,
    path: &str,
    peer: Option<&str>,
    auth: Option<&str>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    send(app, Method::GET, path, peer, auth).await
}

/// [`get`] with another method.
async fn send(
    app: &Router,
    method: Method,
    path: &str,
    peer: Option<&str>,
    auth: Option<&str>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(a) = auth {
        req = req.header(header::AUTHORIZATION, a);
    }
    let mut req = req.body(Body::empty()).expect("request");
    if let Some(peer) = peer {
        let peer: SocketAddr = peer.parse().expect("peer");
        req.extensions_mut().insert(PeerAddr(peer));
    }
    let resp = app.clone().call(req).await.expect("infallible");
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, headers, body)
}

fn content_type(h: &HeaderMap) -> &str {
    h.get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

fn json_of(body: &[u8]) -> Value {
    serde_json::from_slice(body).expect("JSON body")
}

const LOCAL: Option<&str> = Some("127.0.0.1:40000");

#[tokio::test]
async fn serves_embedded_assets_with_content_types() {
    let f = fixture(true, None, false).await;
    for (path, ctype, body) in [
        ("/", "text/html; charset=utf-8", INDEX_HTML),
        ("/dashboard", "text/html; charset=utf-8", INDEX_HTML),
        ("/dashboard/", "text/html; charset=utf-8", INDEX_HTML),
        (
            "/dashboard/app.js",
            "text/javascript; charset=utf-8",
            APP_JS,
        ),
        ("/dashboard/app.css", "text/css; charset=utf-8", APP_CSS),
    ] {
        let (status, h, got) = get(&f.app, path, LOCAL, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(content_type(&h), ctype, "{path}");
        assert_eq!(got, body.as_bytes(), "{path}");
        let csp = h
            .get(header::CONTENT_SECURITY_POLICY)
            .and_then(|v| v.to_str().ok());
        assert!(
            csp.is_some_and(|c| c.contains("script-src 'self'")),
            "{path}: {csp:?}"
        );
        assert_eq!(
            h.get(header::X_CONTENT_TYPE_OPTIONS).map(|v| v.as_bytes()),
            Some(&b"nosniff"[..])
        );
    }
    let (status, _, _) = get(&f.app, "/dashboard/nope.js", LOCAL, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn page_references_only_its_own_assets() {
    assert!(INDEX_HTML.contains("src=\"/dashboard/app.js\""));
    assert!(INDEX_HTML.contains("href=\"/dashboard/app.css\""));
    // app.js is a module importing its siblings, served beside it.
    assert!(APP_JS.contains("from './dom.js'") && APP_JS.contains("from './chart.js'"));
    for (name, asset) in [
        ("index.html", INDEX_HTML),
        ("app.js", APP_JS),
        ("dom.js", DOM_JS),
        ("chart.js", CHART_JS),
        ("app.css", APP_CSS),
    ] {
        // The SVG namespace is a name, not a download.
        let text = asset.replace("http://www.w3.org/2000/svg", "");
        for outside in ["http://", "https://", "//fonts", "@import", "url("] {
            assert!(
                !text.contains(outside),
                "{name} loads something from outside: {outside}"
            );
        }
        for markup in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(
                !text.contains(markup),
                "{name} parses strings as markup or code: {markup}"
            );
        }
    }
}

#[tokio::test]
async fn session_endpoint_returns_the_stores_calls_in_order() {
    let f = fixture(true, None, true).await;
    let (status, h, body) = get(&f.app, "/api/sessions/s-1", LOCAL, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type(&h), "application/json");
    let page = json_of(&body);
    assert_eq!(
        (&page["truncated"], &page["limit"]),
        (&json!(false), &json!(500))
    );
    let calls = page["calls"].as_array().expect("array");
    let summary: Vec<(String, String, Value)> = calls
        .iter()
        .map(|c| {
            (
                c["call_id"].as_str().unwrap_or("").to_owned(),
                c["tool"].as_str().unwrap_or("").to_owned(),
                c["failed"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("c1".into(), "read_file".into(), json!(true)),
            ("c2".into(), "grep".into(), json!(false)),
            ("c3".into(), "read_file".into(), json!(false)),
        ],
        "one row per call, resend counted once, in order"
    );
    assert_eq!(calls[0]["basis"], "explicit");
    assert_eq!(
        calls[0]["excerpt"], XSS,
        "excerpt stored and served verbatim (the page escapes it)"
    );

    let (status, _, body) = get(&f.app, "/api/sessions/no-such-session", LOCAL, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(json_of(&body)["error"]["type"], "not_found");
}

/// A session a client named `.` or `..` (or `a/b`, `?x`): the page asked
/// for `/api/sessions/..`, which the browser resolves to `/api/`, so its
/// calls never showed. The page asks with the id in the query.
#[tokio::test]
async fn a_session_named_dot_dot_is_answered_by_its_id_in_the_query() {
    let names = ["..", ".", "a/b", "?x&y=1#z"];
    let more = names
        .iter()
        .enumerate()
        .map(|(n, name)| result(name, &format!("dd{n}"), 1, "grep", true, None))
        .collect();
    let f = fixture_with(true, None, true, more).await;
    for (n, name) in names.iter().enumerate() {
        let encoded: String = url_encode(name);
        let (status, _, body) = get(
            &f.app,
            &format!("/api/sessions?id={encoded}&limit=5"),
            LOCAL,
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{name}: {body:?}");
        let page = json_of(&body);
        assert_eq!(page["calls"][0]["call_id"], format!("dd{n}"), "{name}");
        assert_eq!(page["limit"], 5);
    }
    assert!(APP_JS.contains("'/api/sessions?id=' + encodeURIComponent(id)"));
    let (status, _, _) = get(&f.app, "/api/sessions", LOCAL, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no id");
}

/// `s` percent-encoded as `encodeURIComponent` does.
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'!'
            | b'~'
            | b'*'
            | b'\''
            | b'('
            | b')' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A session of more calls than the limit (a batch job's weeks of calls
/// under one fingerprint session): the newest `limit` calls, in order,
/// and `truncated` says older ones were left out.
#[tokio::test]
async fn session_endpoint_answers_the_newest_calls_and_says_it_cut() {
    let long = (0..501u32)
        .map(|i| result("long", &format!("l{i}"), i, "bash", false, None))
        .collect();
    let f = fixture_with(true, None, true, long).await;
    let page = |path: &'static str| {
        let app = f.app.clone();
        async move {
            let (status, _, body) = get(&app, path, LOCAL, None).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            let page = json_of(&body);
            let ids: Vec<String> = page["calls"]
                .as_array()
                .expect("calls")
                .iter()
                .map(|c| c["call_id"].as_str().unwrap_or("").to_owned())
                .collect();
            (ids, page["truncated"].clone(), page["limit"].clone())
        }
    };
    let (ids, truncated, limit) = page("/api/sessions/long").await;
    assert_eq!(
        (ids.len(), truncated, limit),
        (500, json!(true), json!(500))
    );
    assert_eq!((ids[0].as_str(), ids[499].as_str()), ("l1", "l500"));
    let (ids, truncated, _) = page("/api/sessions/long?limit=2").await;
    assert_eq!(
        (ids, truncated),
        (vec!["l499".into(), "l500".into()], json!(true))
    );
    let (ids, truncated, limit) = page("/api/sessions/long?limit=100000").await;
    assert_eq!(
        (ids.len(), truncated, limit),
        (501, json!(false), json!(5000))
    );
    let (ids, _, limit) = page("/api/sessions/long?limit=0").await;
    assert_eq!((ids, limit), (vec!["l500".to_owned()], json!(1)));
}

#[tokio::test]
async fn stats_and_session_agree_with_the_store() {
    let f = fixture(true, None, true).await;
    let (status, _, body) = get(
        &f.app,
        "/api/stats?since=1000000000d&session=s-1",
        LOCAL,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let stats = json_of(&body);
    let tools = stats["tools"].as_array().expect("tools");
    let read = tools
        .iter()
        .find(|t| t["tool"] == "read_file")
        .expect("read_file row");
    assert_eq!(
        (read["calls"].clone(), read["failures"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(stats["recent_failures"][0]["excerpt"], XSS);
}

/// `/api/stats` lists the `dashboard_tool_rows` tools with the most
/// failures (read_file's one, over grep's none); the totals count both.
#[tokio::test]
async fn stats_list_the_configured_number_of_tools() {
    let f = fixture_rows(true, None, true, Vec::new(), 1).await;
    let (status, _, body) = get(&f.app, "/api/stats?since=all", LOCAL, None).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let stats = json_of(&body);
    let tools: Vec<&str> = stats["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["tool"].as_str())
        .collect();
    assert_eq!(tools, ["read_file"]);
    assert_eq!(stats["totals"]["tools"], 2);
}

#[tokio::test]
async fn session_endpoint_without_database_is_503() {
    let f = fixture(true, None, false).await;
    let (status, _, body) = get(&f.app, "/api/sessions/s-1", LOCAL, None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(json_of(&body)["error"]["type"], "no_database");
}

/// `/api/stats`, `/api/alerts`, the dashboard's endpoints and the access
/// check answer errors in one shape: `{"error": {"type", "message"}}`,
/// malformed query and path parameters too (named in the message).
#[tokio::test]
async fn every_admin_error_has_the_same_shape() {
    let without_db = fixture(true, None, false).await;
    let with_db = fixture(true, None, true).await;
    let (unavailable, bad, not_found) = (
        StatusCode::SERVICE_UNAVAILABLE,
        StatusCode::BAD_REQUEST,
        StatusCode::NOT_FOUND,
    );
    // (fixture, path, status, type, a word the message must hold)
    let cases = [
        (&without_db, "/api/stats", unavailable, "no_database", ""),
        (
            &without_db,
            "/api/sessions/s-1",
            unavailable,
            "no_database",
            "",
        ),
        (
            &with_db,
            "/api/stats?since=soon",
            bad,
            "bad_request",
            "since",
        ),
        (&with_db, "/api/stats?limit=-1", bad, "bad_request", "limit"),
        (
            &with_db,
            "/api/stats?limit=99999999999999999999",
            bad,
            "bad_request",
            "limit",
        ),
        (&with_db, "/api/stats?limit=", bad, "bad_request", "limit"),
        (&with_db, "/api/sessions/%FF", bad, "bad_request", "`id`"),
        (
            &with_db,
            "/api/sessions/s-1?limit=x",
            bad,
            "bad_request",
            "limit",
        ),
        (&with_db, "/api/sessions/none", not_found, "not_found", ""),
        (&with_db, "/api/no-such-route", not_found, "not_found", ""),
    ];
    for (f, path, status, kind, names) in cases {
        let (got, headers, body) = get(&f.app, path, LOCAL, None).await;
        assert_eq!(got, status, "{path}: {}", String::from_utf8_lossy(&body));
        assert_eq!(headers["cache-control"], "no-store", "{path}");
        let v = json_of(&body);
        assert_eq!(v["error"]["type"], kind, "{path}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty() && m.contains(names)),
            "{path}: {v}"
        );
    }
}

/// A method the admin API does not answer gets the same JSON shape (405,
/// `method_not_allowed`, with `Allow`), not an empty body.
#[tokio::test]
async fn a_wrong_method_answers_json_405() {
    let f = fixture(true, None, true).await;
    for (method, path) in [
        (Method::POST, "/api/stats"),
        (Method::DELETE, "/api/sessions/s-1"),
        (Method::PUT, "/api/alerts"),
        (Method::POST, "/api/health"),
        (Method::POST, "/dashboard"),
    ] {
        let (status, h, body) = send(&f.app, method.clone(), path, LOCAL, None).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert_eq!(content_type(&h), "application/json", "{method} {path}");
        assert_eq!(h["cache-control"], "no-store", "{method} {path}");
        assert_eq!(h[header::ALLOW], "GET,HEAD", "{method} {path}");
        let v = json_of(&body);
        assert_eq!(v["error"]["type"], "method_not_allowed", "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(method.as_str()))
        );
    }
    // The access check still comes first.
    let (status, _, _) = send(
        &f.app,
        Method::POST,
        "/api/stats",
        Some("192.0.2.7:1"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// Every JSON answer of the admin API carries tool output or live
/// numbers: none may be kept by a cache.
#[tokio::test]
async fn every_admin_answer_is_no_store() {
    let f = fixture(true, None, true).await;
    for path in [
        "/api/stats?since=all",
        "/api/alerts",
        "/api/health",
        "/api/sessions/s-1",
    ] {
        let (status, h, _) = get(&f.app, path, LOCAL, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(h["cache-control"], "no-store", "{path}");
    }
}

/// `/api/stats` without `since` is the last 24 hours, as `toolwarden stats
/// --json` (the same document); `since=all` is all history. The fixture's
/// calls are from 2023.
#[tokio::test]
async fn stats_without_since_is_the_last_day_as_in_the_cli() {
    let f = fixture(true, None, true).await;
    let tools_of = |body: &[u8]| json_of(body)["tools"].as_array().expect("tools").len();
    let (status, _, body) = get(&f.app, "/api/stats", LOCAL, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(tools_of(&body), 0, "{}", String::from_utf8_lossy(&body));
    let (_, _, body) = get(&f.app, "/api/stats?since=24h", LOCAL, None).await;
    assert_eq!(tools_of(&body), 0);
    let (_, _, body) = get(&f.app, "/api/stats?since=all", LOCAL, None).await;
    assert_eq!(tools_of(&body), 2, "{}", String::from_utf8_lossy(&body));
}

#[tokio::test]
async fn health_reports_recorder_counters_and_backend() {
    let f = fixture(true, None, true).await;
    let (status, _, body) = get(&f.app, "/api/health", Some("[::1]:9"), None).await;
    assert_eq!(status, StatusCode::OK);
    let h = json_of(&body);
    assert_eq!(h["events_written"], 5, "{h}");
    assert_eq!(h["events_dropped"], 0);
    assert_eq!(h["upstream_errors"], 0);
    assert_eq!(h["database"], "sqlite");
}

/// `upstream_errors` counts what the `upstream_error_rate` alert and the
/// Prometheus rule count: 429s and 5xx (the gateway's own 502/504 among
/// them), not a provider's other 4xx (a request it refused, such as an
/// unpaired tool call's 400: that is in the page's request errors). 429s
/// were left out, so a rate-limited gateway showed none while its alert
/// fired.
#[tokio::test]
async fn health_counts_upstream_errors_as_the_alert_does() {
    use crate::metrics::events::UpstreamFinished;
    use crate::routes::Provider;
    let recorder = Recorder::start(
        None,
        RecorderOptions {
            queue_capacity: 16,
            batch_max: 16,
            flush_interval: Duration::from_millis(5),
            jsonl: None,
        },
        Arc::new(toolwarden_store::NoopObserver),
    );
    let metrics = Arc::new(Metrics::new());
    for (provider, status) in [
        (Provider::OpenAi, 200),
        (Provider::OpenAi, 400),
        (Provider::OpenAi, 404),
        (Provider::OpenAi, 429),
        (Provider::Anthropic, 429),
        (Provider::Anthropic, 500),
        (Provider::OpenAi, 502),
        (Provider::OpenAi, 504),
    ] {
        metrics.emit(UpstreamFinished {
            provider,
            status,
            latency: Duration::from_millis(1),
            overhead: Duration::from_micros(1),
        });
    }
    let app = admin_router(AdminState {
        store: None,
        sinks: Arc::new(Sinks::new(recorder, metrics, Default::default())),
        loopback_only: true,
        admin_token: None,
        tool_rows: TOOL_ROWS,
    });
    let (status, _, body) = get(&app, "/api/health", LOCAL, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json_of(&body)["upstream_errors"], 5);
}

#[tokio::test]
async fn remote_peer_is_refused_on_loopback_bind() {
    let f = fixture(true, None, false).await;
    for path in [
        "/api/stats",
        "/api/health",
        "/api/sessions/x",
        "/",
        "/dashboard/app.js",
    ] {
        let (status, h, body) = get(&f.app, path, Some("192.0.2.7:5555"), None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
        assert_eq!(content_type(&h), "application/json", "{path}");
        let v = json_of(&body);
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("TOOLWARDEN_ADMIN_TOKEN")),
            "{v}"
        );
    }
}

#[tokio::test]
async fn public_bind_needs_token_for_api_but_serves_page_to_ask_for_it() {
    let f = fixture(false, Some("tok-123"), true).await;
    for peer in ["203.0.113.5:1000", "127.0.0.1:1000"] {
        for api in ["/api/stats", "/api/health", "/api/sessions/s-1"] {
            let (status, h, _) = get(&f.app, api, Some(peer), None).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{peer} {api}");
            assert!(h.get(header::WWW_AUTHENTICATE).is_some());
            let (status, _, _) = get(&f.app, api, Some(peer), Some("Bearer wrong")).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{peer} {api}");
            let (status, _, _) = get(&f.app, api, Some(peer), Some("Bearer tok-123")).await;
            assert_eq!(status, StatusCode::OK, "{peer} {api}");
        }
        let (status, _, body) = get(&f.app, "/dashboard", Some(peer), None).await;
        assert_eq!(status, StatusCode::OK, "{peer}");
        assert_eq!(body, INDEX_HTML.as_bytes());
    }
}

/// A browser sends no token with `<script src>` or `<link href>`: every
/// asset the page names is served without one, with the page's headers.
#[tokio::test]
async fn every_asset_the_page_names_is_served_without_a_token() {
    let f = fixture(false, Some("tok-123"), true).await;
    let assets: Vec<&str> = INDEX_HTML
        .split('"')
        .filter(|s| s.starts_with("/dashboard/"))
        .collect();
    assert!(assets.len() >= 3, "{assets:?}");
    for path in assets {
        let (status, h, _) = get(&f.app, path, Some("203.0.113.5:1000"), None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let csp = h
            .get(header::CONTENT_SECURITY_POLICY)
            .and_then(|v| v.to_str().ok());
        assert!(
            csp.is_some_and(|c| c.contains("script-src 'self'")),
            "{path}: {csp:?}"
        );
    }
}

#[tokio::test]
async fn public_bind_without_token_refuses_everything() {
    let f = fixture(false, None, false).await;
    for path in ["/", "/api/stats", "/api/health"] {
        let (status, _, _) = get(&f.app, path, LOCAL, Some("Bearer anything")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
    }
}

#[tokio::test]
async fn missing_peer_address_fails_closed() {
    let f = fixture(true, None, false).await;
    let (status, _, _) = get(&f.app, "/api/health", None, None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// One HTTP/1.1 GET over a real socket: status line, headers, body.
async fn socket_get(addr: SocketAddr, path: &str) -> (String, String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (
        status.to_owned(),
        headers.to_ascii_lowercase(),
        body.to_owned(),
    )
}

#[tokio::test]
async fn gateway_serves_the_dashboard_over_a_socket() {
    // No upstream is contacted: only admin routes are requested.
    let config = crate::Config::for_tests("http://127.0.0.1:9");
    let gateway = crate::Gateway::start(config).await.expect("gateway starts");
    let addr = gateway.addr();
    for (path, ctype) in [
        ("/", "content-type: text/html; charset=utf-8"),
        ("/dashboard", "content-type: text/html; charset=utf-8"),
        (
            "/dashboard/app.js",
            "content-type: text/javascript; charset=utf-8",
        ),
        (
            "/dashboard/app.css",
            "content-type: text/css; charset=utf-8",
        ),
        ("/api/health", "content-type: application/json"),
    ] {
        let (status, headers, _) = socket_get(addr, path).await;
        assert!(status.contains(" 200 "), "{path}: {status}");
        assert!(headers.contains(ctype), "{path}: {headers}");
    }
    let (_, _, page) = socket_get(addr, "/dashboard").await;
    assert!(page.contains("/dashboard/app.js"), "the page itself");
    // Config::for_tests records to no database: the session API says so.
    let (status, _, body) = socket_get(addr, "/api/sessions/s-1").await;
    assert!(status.contains(" 503 "), "{status}");
    assert!(body.contains("no_database"), "{body}");
    gateway.shutdown().await;
}

/// DNS rebinding: a browser on this machine sent to a page whose name now
/// resolves to 127.0.0.1 names that page's host; without a token it gets
/// a 403, while `localhost` and loopback literals are served.
#[tokio::test]
async fn a_loopback_client_naming_a_foreign_host_is_refused() {
    let f = fixture(true, None, true).await;
    for (host, expected) in [
        ("attacker.example:8080", StatusCode::FORBIDDEN),
        ("localhost:8080", StatusCode::OK),
        ("127.0.0.1:8080", StatusCode::OK),
        ("[::1]:8080", StatusCode::OK),
    ] {
        for path in ["/api/stats", "/api/sessions/s-1", "/"] {
            let mut req = Request::get(path)
                .header(header::HOST, host)
                .body(Body::empty())
                .expect("request");
            req.extensions_mut()
                .insert(PeerAddr(LOCAL.unwrap().parse().expect("peer")));
            let resp = f.app.clone().call(req).await.expect("infallible");
            assert_eq!(resp.status(), expected, "{host} {path}");
        }
    }
}
