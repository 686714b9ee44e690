//! Router tests: content types, API JSON passed through from the source,
//! the access check on every route.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::ConnectInfo;
use futures_util::future::BoxFuture;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::*;

/// A source returning canned JSON and remembering the filters it got.
#[derive(Default)]
struct Fake {
    filters: Mutex<Vec<StatsFilter>>,
    no_database: bool,
}

impl Source for Fake {
    fn stats<'a>(&'a self, q: &'a StatsFilter) -> BoxFuture<'a, Result<Value, SourceError>> {
        Box::pin(async move {
            if self.no_database {
                return Err(SourceError::new(
                    SourceErrorKind::NoDatabase,
                    "no database configured",
                ));
            }
            if let Ok(mut f) = self.filters.lock() {
                f.push(q.clone());
            }
            Ok(json!({"tools":[{"tool":"search","calls":4,"failures":1,"failure_rate":0.25}]}))
        })
    }

    fn session_calls<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Value, SourceError>> {
        Box::pin(async move {
            Ok(match session {
                "s/1 x" => json!([{"call_id":"c1","tool":"search","failed":true}]),
                _ => json!([]),
            })
        })
    }

    fn health(&self) -> Value {
        json!({"events_written": 7, "events_dropped": 0})
    }
}

fn dashboard(listen: &str, token: Option<&str>, source: Arc<Fake>) -> Router {
    let listen = listen.parse().expect("listen");
    router(Dashboard::new(
        source,
        AccessPolicy::new(listen, token.map(str::to_owned)),
    ))
}

async fn get(
    app: &Router,
    path: &str,
    peer: &str,
    auth: Option<&str>,
) -> (StatusCode, http::HeaderMap, Vec<u8>) {
    let mut req = Request::get(path);
    if let Some(a) = auth {
        req = req.header(header::AUTHORIZATION, a);
    }
    let mut req = req.body(Body::empty()).expect("request");
    let peer: SocketAddr = peer.parse().expect("peer");
    req.extensions_mut().insert(ConnectInfo(peer));
    let resp = app.clone().oneshot(req).await.expect("infallible");
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

fn content_type(h: &http::HeaderMap) -> &str {
    h.get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn serves_embedded_assets_with_content_types() {
    let app = dashboard("127.0.0.1:8080", None, Arc::default());
    for (path, ctype, body) in [
        ("/", "text/html; charset=utf-8", INDEX_HTML),
        ("/dashboard", "text/html; charset=utf-8", INDEX_HTML),
        (
            "/dashboard/app.js",
            "text/javascript; charset=utf-8",
            APP_JS,
        ),
        ("/dashboard/app.css", "text/css; charset=utf-8", APP_CSS),
    ] {
        let (status, h, got) = get(&app, path, "127.0.0.1:4000", None).await;
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
}

#[test]
fn page_references_only_its_own_assets() {
    assert!(INDEX_HTML.contains("src=\"/dashboard/app.js\""));
    assert!(INDEX_HTML.contains("href=\"/dashboard/app.css\""));
    for (name, asset) in [
        ("index.html", INDEX_HTML),
        ("app.js", APP_JS),
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
async fn stats_returns_source_json_and_passes_filters() {
    let fake = Arc::new(Fake::default());
    let app = dashboard("127.0.0.1:8080", None, fake.clone());
    let (status, h, body) = get(
        &app,
        "/api/stats?since=1h&tool=search&model=&session=s1&limit=5",
        "127.0.0.1:1",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type(&h), "application/json");
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["tools"][0]["failure_rate"], json!(0.25));
    let filters = fake.filters.lock().expect("lock").clone();
    assert_eq!(filters.len(), 1);
    let f = &filters[0];
    assert_eq!(f.tool.as_deref(), Some("search"));
    assert_eq!(f.model, None);
    assert_eq!(f.session.as_deref(), Some("s1"));
    assert_eq!(f.limit, 5);
    assert!(f.since_ms.is_some());
}

#[tokio::test]
async fn stats_errors_are_json() {
    let app = dashboard("127.0.0.1:8080", None, Arc::default());
    let (status, _, body) = get(&app, "/api/stats?since=forever", "127.0.0.1:1", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("since")),
        "{v}"
    );

    let app = dashboard(
        "127.0.0.1:8080",
        None,
        Arc::new(Fake {
            no_database: true,
            ..Fake::default()
        }),
    );
    let (status, _, body) = get(&app, "/api/stats", "127.0.0.1:1", None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["error"]["type"], "no_database");
}

#[tokio::test]
async fn session_endpoint_decodes_id_and_404s_unknown() {
    let app = dashboard("127.0.0.1:8080", None, Arc::default());
    let (status, _, body) = get(&app, "/api/sessions/s%2F1%20x", "127.0.0.1:1", None).await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v[0]["call_id"], "c1");
    let (status, _, body) = get(&app, "/api/sessions/nope", "127.0.0.1:1", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["error"]["type"], "not_found");
}

#[tokio::test]
async fn health_returns_source_health() {
    let app = dashboard("127.0.0.1:8080", None, Arc::default());
    let (status, _, body) = get(&app, "/api/health", "[::1]:9", None).await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["events_written"], 7);
}

#[tokio::test]
async fn remote_peer_is_refused_on_loopback_bind() {
    let app = dashboard("127.0.0.1:8080", None, Arc::default());
    for path in [
        "/api/stats",
        "/api/health",
        "/api/sessions/x",
        "/",
        "/dashboard/app.js",
    ] {
        let (status, h, body) = get(&app, path, "192.0.2.7:5555", None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
        assert_eq!(content_type(&h), "application/json", "{path}");
        let v: Value = serde_json::from_slice(&body).expect("json");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("--admin-token")),
            "{v}"
        );
    }
}

#[tokio::test]
async fn public_bind_needs_token_for_api_but_serves_page_to_ask_for_it() {
    let app = dashboard("0.0.0.0:8080", Some("tok-123"), Arc::default());
    for peer in ["203.0.113.5:1000", "127.0.0.1:1000"] {
        let (status, h, _) = get(&app, "/api/stats", peer, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{peer}");
        assert!(h.get(header::WWW_AUTHENTICATE).is_some());
        let (status, _, _) = get(&app, "/api/stats", peer, Some("Bearer wrong")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{peer}");
        let (status, _, _) = get(&app, "/api/stats", peer, Some("Bearer tok-123")).await;
        assert_eq!(status, StatusCode::OK, "{peer}");
        let (status, _, body) = get(&app, "/dashboard", peer, None).await;
        assert_eq!(status, StatusCode::OK, "{peer}");
        assert_eq!(body, INDEX_HTML.as_bytes());
    }
}

#[tokio::test]
async fn missing_peer_address_fails_closed() {
    let app = dashboard("127.0.0.1:8080", None, Arc::default());
    let req = Request::get("/api/health")
        .body(Body::empty())
        .expect("request");
    let resp = app.oneshot(req).await.expect("infallible");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
}
