//! The dashboard: a web page on the gateway that shows tool failures at a
//! glance (issue 6), and the JSON it reads beside `/api/stats`.
//!
//! Routes, merged into the admin router ([`crate::admin`]):
//!
//! | route | what |
//! | --- | --- |
//! | `GET /`, `GET /dashboard` | the page (`assets/index.html`) |
//! | `GET /dashboard/{app,dom,chart}.js`, `GET /dashboard/app.css` | its script (ES modules) and style |
//! | `GET /api/sessions/{id}`, `GET /api/sessions?id=` | the store's `session_calls_newest(id, limit)`: the session's newest tool calls (`?limit=`, 500, at most 5000) in order, and whether older ones were left out |
//! | `GET /api/health` | recorder counters, upstream errors, database backend |
//!
//! The page polls `/api/stats` (served by [`crate::admin`], with the page's
//! filters as query parameters) and `/api/health` every 2 s, and renders
//! everything with `textContent` and SVG DOM calls: tool output is never
//! parsed as markup. The assets are embedded with `include_str!` and load
//! nothing from elsewhere; a strict Content-Security-Policy backs that up.
//!
//! Access: [`access()`] is the admin router's middleware, deciding with
//! [`AccessPolicy`](access::AccessPolicy) (loopback clients of a loopback-bound gateway, else the
//! admin token as `Authorization: Bearer`; the page sends the token it was
//! given once, kept in `sessionStorage`).

use axum::Router;
use axum::routing::get;

use crate::state::AdminState;

mod access;
mod api;
pub(crate) mod assets;
#[cfg(test)]
mod tests;

pub(crate) use access::access;

/// The dashboard's routes (page, assets, `/api/sessions/{id}`,
/// `/api/health`), without the access check: the admin router applies
/// [`access()`] to everything it serves.
pub(crate) fn routes() -> Router<AdminState> {
    Router::new()
        .route("/", get(assets::index))
        .route("/dashboard", get(assets::index))
        .route("/dashboard/", get(assets::index))
        .route("/dashboard/app.js", get(assets::app_js))
        .route("/dashboard/dom.js", get(assets::dom_js))
        .route("/dashboard/chart.js", get(assets::chart_js))
        .route("/dashboard/app.css", get(assets::app_css))
        .route("/api/sessions/{id}", get(api::session))
        .route("/api/sessions", get(api::session_by_query))
        .route("/api/health", get(api::health))
}
