//! The page's static files, embedded in the binary (no CDN, no external
//! font, no build step), served with their content types and a strict
//! Content-Security-Policy: the page runs only its own script, so even a
//! failure excerpt that slipped into markup could not execute.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, header};

/// `index.html`.
pub(crate) const INDEX_HTML: &str = include_str!("assets/index.html");
/// `app.js` (an ES module): fetches `/api/*`, renders with `textContent`
/// and SVG DOM only.
pub(crate) const APP_JS: &str = include_str!("assets/app.js");
/// `dom.js`: the DOM helpers `app.js` builds the page with.
pub(crate) const DOM_JS: &str = include_str!("assets/dom.js");
/// `chart.js`: the SVG failures chart and sparklines.
pub(crate) const CHART_JS: &str = include_str!("assets/chart.js");
/// `app.css`.
pub(crate) const APP_CSS: &str = include_str!("assets/app.css");

/// What the page may load: itself only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
                   form-action 'self'; frame-ancestors 'none'";

pub(crate) async fn index() -> Response {
    asset(INDEX_HTML, "text/html; charset=utf-8")
}

pub(crate) async fn app_js() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

pub(crate) async fn dom_js() -> Response {
    asset(DOM_JS, "text/javascript; charset=utf-8")
}

pub(crate) async fn chart_js() -> Response {
    asset(CHART_JS, "text/javascript; charset=utf-8")
}

pub(crate) async fn app_css() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}

/// `body` with its content type and the page's security headers.
pub(crate) fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut resp = body.into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // The binary is the version: a new gateway may ship a new page.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}
