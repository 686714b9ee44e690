//! The dashboard: a web page on the gateway that shows tool failures at a
//! glance (issue 6), and the JSON API it reads.
//!
//! Routes (mounted by the gateway next to the proxy routes):
//!
//! | route | what |
//! | --- | --- |
//! | `GET /`, `GET /dashboard` | the page (`assets/index.html`) |
//! | `GET /dashboard/app.js`, `GET /dashboard/app.css` | its script and style |
//! | `GET /api/stats?since=24h&tool=&model=&session=&limit=` | the store's `Stats` JSON |
//! | `GET /api/sessions/{id}` | the store's `session_calls(id)` JSON: the session's tool calls in order |
//! | `GET /api/health` | recorder counters and upstream errors |
//!
//! Every route passes the [`AccessPolicy`] (loopback only, or the admin
//! token); the page itself is also served to a remote client that still has
//! to enter the token, so it can ask for it. The page polls `/api/stats`
//! every 2 s and renders everything with `textContent` and SVG DOM calls:
//! tool output is never parsed as markup.
//!
//! ```ignore
//! let dash = Dashboard::new(Arc::new(my_source), AccessPolicy::new(listen, token));
//! let app: axum::Router = dashboard::router(dash).merge(proxy_routes);
//! // serve with `into_make_service_with_connect_info::<SocketAddr>()` so the
//! // access check sees the peer address.
//! ```

use std::sync::Arc;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::get;

mod access;
mod api;
mod assets;
#[cfg(test)]
mod tests;

pub use access::{AccessDenied, AccessPolicy, DeniedKind};
pub use api::{DEFAULT_LIMIT, MAX_LIMIT, Source, SourceError, SourceErrorKind, StatsFilter};
pub use assets::{APP_CSS, APP_JS, INDEX_HTML};

/// What the dashboard routes need: a data source and the access rule.
#[derive(Clone)]
pub struct Dashboard {
    source: Arc<dyn Source>,
    policy: AccessPolicy,
}

// === impl Dashboard ===

impl Dashboard {
    /// A dashboard reading from `source`, guarded by `policy`.
    pub fn new(source: Arc<dyn Source>, policy: AccessPolicy) -> Self {
        Dashboard { source, policy }
    }

    /// The access rule, for other admin routes (`/metrics`, …) to share.
    pub fn policy(&self) -> &AccessPolicy {
        &self.policy
    }
}

impl std::fmt::Debug for Dashboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dashboard")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// The dashboard's routes (page, assets, `/api/*`), each behind the access
/// check, ready to merge into the gateway's router.
pub fn router<S>(dashboard: Dashboard) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let Dashboard { source, policy } = dashboard;
    let api = Router::new()
        .route("/api/stats", get(api::stats))
        .route("/api/sessions/{id}", get(api::session))
        .route("/api/health", get(api::health))
        .with_state(source)
        .layer(from_fn_with_state(policy.clone(), access::require_access));
    let pages = Router::new()
        .route("/", get(assets::index))
        .route("/dashboard", get(assets::index))
        .route("/dashboard/", get(assets::index))
        .route("/dashboard/app.js", get(assets::app_js))
        .route("/dashboard/app.css", get(assets::app_css))
        .layer(from_fn_with_state(policy, access::page_access));
    api.merge(pages)
}
