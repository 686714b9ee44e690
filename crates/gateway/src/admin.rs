//! The admin router: `/api/stats` here, the dashboard at `/` and
//! `/dashboard*` with `/api/sessions/{id}` and `/api/health`
//! ([`crate::dashboard`]), an axum [`Router`] mounted by the server for
//! those paths.
//!
//! Access (issue 6 §3), decided by [`crate::dashboard::access`]: a gateway
//! bound to a loopback address answers loopback clients; otherwise every
//! admin request needs `Authorization: Bearer <admin_token>` (the page
//! itself is served so it can ask for the token), and without a configured
//! token remote use is refused. The proxy routes, `/healthz` and `/metrics`
//! are not affected.
//!
//! To add routes: extend [`routes`]; the access check is applied to
//! everything in it.

use axum::{
    Json, Router,
    extract::State,
    middleware,
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Deserialize;

use crate::{observe::now_ms, recorder::StatsQuery};

pub(crate) use crate::admin_error::{AdminError, AdminErrorKind, AdminQuery, no_store};
pub(crate) use crate::state::AdminState;

/// The window `GET /api/stats` reports without `since`: the default of
/// `toolwarden stats --since`, so that both give the same document.
pub(crate) const DEFAULT_SINCE: &str = "24h";

/// `GET /api/stats` query parameters.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct StatsParams {
    /// `30s`, `30m`, `24h`, `7d`, `2w`, `all`, or unix milliseconds
    /// (default [`DEFAULT_SINCE`]).
    pub since: Option<String>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this model.
    pub model: Option<String>,
    /// Only this session.
    pub session: Option<String>,
    /// Rows per list (default 20, at most 1000).
    pub limit: Option<usize>,
}

/// The admin router with its access check.
pub(crate) fn admin_router(state: AdminState) -> Router {
    routes()
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::dashboard::access,
        ))
        .with_state(state)
}

/// The admin routes, without the access check.
pub(crate) fn routes() -> Router<AdminState> {
    Router::new()
        .route("/api/stats", get(stats))
        .route("/api/alerts", get(crate::alerts::api))
        .route("/dashboard/alerts.js", get(crate::alerts::strip_js))
        .merge(crate::dashboard::routes())
        .fallback(not_found)
        // After every route: it applies to the routes added before it.
        .method_not_allowed_fallback(method_not_allowed)
}

async fn stats(
    State(state): State<AdminState>,
    AdminQuery(params): AdminQuery<StatsParams>,
) -> Response {
    let Some(store) = state.store.as_ref() else {
        return AdminError::new(
            AdminErrorKind::NoDatabase,
            "no database: start the gateway with --database to enable /api/stats",
        )
        .into_response();
    };
    let since_ms = match parse_since(params.since.as_deref().unwrap_or(DEFAULT_SINCE)) {
        Ok(since) => since,
        Err(e) => return AdminError::new(AdminErrorKind::BadRequest, e).into_response(),
    };
    let query = StatsQuery {
        since_ms,
        tool: params.tool.filter(|s| !s.is_empty()),
        model: params.model.filter(|s| !s.is_empty()),
        session: params.session.filter(|s| !s.is_empty()),
        limit: params.limit.unwrap_or(20).clamp(1, 1000),
        tool_rows: state.tool_rows,
    };
    match store.stats(&query).await {
        Ok(stats) => no_store(Json(stats).into_response()),
        Err(e) => AdminError::new(AdminErrorKind::Store, e.to_string()).into_response(),
    }
}

async fn not_found() -> AdminError {
    AdminError::new(AdminErrorKind::NotFound, "no such admin route")
}

async fn method_not_allowed(method: http::Method) -> AdminError {
    AdminError::new(
        AdminErrorKind::MethodNotAllowed,
        format!("{method} is not allowed here: the admin API answers GET and HEAD only"),
    )
}

/// `since` → the unix ms to count from: a window as `toolwarden stats
/// --since` reads it (`30s`, `30m`, `24h`, `7d`, `2w`; `all` → no bound), or
/// a bare number taken as unix milliseconds.
pub(crate) fn parse_since(text: &str) -> Result<Option<i64>, String> {
    parse_since_at(text, now_ms())
}

/// The least bare number taken as unix milliseconds (2001-09-09): a
/// smaller one is hours (`since=24`) or unix seconds, which would
/// otherwise mean "all time" without a word.
const MIN_UNIX_MS: i64 = 1_000_000_000_000;

fn parse_since_at(text: &str, now: i64) -> Result<Option<i64>, String> {
    if let Ok(ms) = text.trim().parse::<i64>() {
        if ms < MIN_UNIX_MS {
            return Err(format!(
                "since: {ms} is not unix milliseconds (too small: seconds, or hours?); \
                 give a window such as 24h or 7d, or unix ms"
            ));
        }
        return Ok(Some(ms));
    }
    match toolwarden_store::parse_since(text) {
        Ok(None) => Ok(None),
        Ok(Some(window)) => {
            let ago = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
            Ok(Some(now.saturating_sub(ago)))
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_durations_and_timestamps() {
        assert_eq!(
            parse_since_at("24h", 100_000_000),
            Ok(Some(100_000_000 - 86_400_000))
        );
        assert_eq!(
            parse_since_at("30m", 10_000_000),
            Ok(Some(10_000_000 - 1_800_000))
        );
        assert_eq!(
            parse_since_at("1700000000000", 5),
            Ok(Some(1_700_000_000_000))
        );
        assert_eq!(parse_since_at("all", 5), Ok(None));
        // Hours or unix seconds by mistake: an error, not all time.
        for small in ["24", "1700000000", "0", "-5"] {
            let e = parse_since_at(small, 5).unwrap_err();
            assert!(e.contains("unix milliseconds"), "{small}: {e}");
        }
        // The API's parameter has no `--`: the CLI's flag is not named.
        let e = parse_since_at("soon", 5).unwrap_err();
        assert!(e.starts_with("invalid since value \"soon\""), "{e}");
        assert!(parse_since_at("", 5).is_err());
        assert!(parse_since_at("5y", 5).is_err());
    }
}
