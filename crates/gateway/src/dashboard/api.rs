//! The JSON endpoints the dashboard adds beside the gateway's `/api/stats`:
//! `GET /api/sessions/{id}` or `?id=` (the store's `session_calls_newest`: a
//! session's newest tool calls in order with verdicts, basis and excerpts)
//! and `GET /api/health` (recorder counters, upstream errors, database
//! backend).

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use crate::admin_error::{AdminError, AdminErrorKind, AdminPath, AdminQuery, no_store};
use crate::metrics::UPSTREAM_REQUESTS_TOTAL;
use crate::routes::Provider;
use crate::state::AdminState;

/// Calls `GET /api/sessions/{id}` answers without `limit`.
pub(crate) const SESSION_CALLS_DEFAULT: usize = 500;
/// The most calls it answers whatever `limit` asks.
pub(crate) const SESSION_CALLS_MAX: usize = 5000;

/// `GET /api/sessions/{id}` query parameters.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SessionParams {
    /// The newest this many calls (default 500, at most 5000).
    pub limit: Option<usize>,
}

/// `GET /api/sessions?id=…` query parameters: the session's id in the
/// query, where any id can go. A session a client named `.` or `..` has
/// no path of its own: every browser (and most HTTP clients) resolves
/// `/api/sessions/..` (`%2E%2E` too) to `/api/`, so the page asks this way.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SessionQuery {
    /// The session's id.
    pub id: String,
    /// The newest this many calls (default 500, at most 5000).
    pub limit: Option<usize>,
}

/// `GET /api/sessions/{id}`: `{calls, truncated, limit}`, the session's
/// newest `limit` tool calls in order, `truncated` when it has older ones;
/// 404 when nothing is recorded for it, 503 without a database.
pub(crate) async fn session(
    State(state): State<AdminState>,
    AdminPath(id): AdminPath<String>,
    AdminQuery(params): AdminQuery<SessionParams>,
) -> Response {
    session_page(&state, &id, params.limit).await
}

/// `GET /api/sessions?id=…`: [`session`] with the id in the query.
pub(crate) async fn session_by_query(
    State(state): State<AdminState>,
    AdminQuery(params): AdminQuery<SessionQuery>,
) -> Response {
    session_page(&state, &params.id, params.limit).await
}

async fn session_page(state: &AdminState, id: &str, limit: Option<usize>) -> Response {
    let Some(store) = state.store.as_ref() else {
        return no_database();
    };
    let limit = limit
        .unwrap_or(SESSION_CALLS_DEFAULT)
        .clamp(1, SESSION_CALLS_MAX);
    match store.session_calls_newest(id, limit).await {
        Ok(page) if page.calls.is_empty() => AdminError::new(
            AdminErrorKind::NotFound,
            format!("no tool calls recorded for session {id:?}"),
        )
        .into_response(),
        Ok(page) => {
            let body = json!({"calls": page.calls, "truncated": page.truncated, "limit": limit});
            no_store(Json(body).into_response())
        }
        Err(e) => AdminError::new(
            AdminErrorKind::Store,
            format!("reading the store failed: {e}"),
        )
        .into_response(),
    }
}

/// `GET /api/health`: `{events_written, events_dropped, write_errors,
/// backlog, upstream_errors, database, version}`.
pub(crate) async fn health(State(state): State<AdminState>) -> Response {
    let c = state.sinks.recorder.counters();
    let body = json!({
        "events_written": c.events_written,
        "events_dropped": c.events_dropped,
        "write_errors": c.write_errors,
        "backlog": c.backlog,
        "upstream_errors": upstream_errors(&state),
        "database": state.store.as_ref().map(|s| s.backend()),
        "version": env!("CARGO_PKG_VERSION"),
    });
    no_store(Json(body).into_response())
}

/// Proxied requests answered with a 429 or a 5xx, by the provider or by
/// the gateway itself (502/504 when the upstream failed), since the
/// gateway started: what the `upstream_error_rate` alert (and the
/// Prometheus rule) counts. A provider's other 4xx refuse the request
/// itself (an unpaired tool call's 400): those are the page's request
/// errors (`/api/stats`' `requests.errors`), not the upstream failing.
fn upstream_errors(state: &AdminState) -> u64 {
    let metrics = &state.sinks.metrics;
    let mut total = 0;
    for provider in Provider::ALL {
        for status in std::iter::once(429u16).chain(500..600) {
            let status = status.to_string();
            total += metrics.counter(UPSTREAM_REQUESTS_TOTAL, &[provider.as_str(), &status]);
        }
    }
    total
}

fn no_database() -> Response {
    AdminError::new(
        AdminErrorKind::NoDatabase,
        "this gateway runs without a database (--database): nothing is recorded to show",
    )
    .into_response()
}
