//! The JSON endpoints the page reads: `/api/stats`, `/api/sessions/{id}`
//! and `/api/health`.
//!
//! The handlers read through a [`Source`], so the same code serves the
//! gateway's store (SQLite or PostgreSQL, via the queries `toolwarden stats`
//! uses) and a fake in tests.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use serde_json::Value;

/// Largest `limit` a client may ask for.
pub const MAX_LIMIT: usize = 1000;
/// `limit` when the client gives none.
pub const DEFAULT_LIMIT: usize = 50;

/// Where the dashboard's data comes from.
pub trait Source: Send + Sync + 'static {
    /// The store's `Stats` for the filters, serialized.
    fn stats<'a>(&'a self, q: &'a StatsFilter) -> BoxFuture<'a, Result<Value, SourceError>>;
    /// The store's `session_calls(session)`, serialized (a JSON array).
    fn session_calls<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Value, SourceError>>;
    /// Gateway health: recorder counters, upstream errors, backend.
    fn health(&self) -> Value;
}

/// The filters of `/api/stats`, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatsFilter {
    /// Only events at or after this unix time in ms (None: all time).
    pub since_ms: Option<i64>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this model.
    pub model: Option<String>,
    /// Only this session.
    pub session: Option<String>,
    /// Most rows in the lists (recent failures, sessions).
    pub limit: usize,
}

/// A failure to read the data.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SourceError {
    kind: SourceErrorKind,
    message: String,
}

/// What kind of failure a [`SourceError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceErrorKind {
    /// Nothing is recorded: the gateway runs without a database (503).
    NoDatabase,
    /// The database query failed (500).
    Query,
}

/// Raw query string of `/api/stats`.
#[derive(Debug, Deserialize)]
pub(crate) struct RawStatsQuery {
    since: Option<String>,
    tool: Option<String>,
    model: Option<String>,
    session: Option<String>,
    limit: Option<String>,
}

/// A bad request to the API: 400 with a JSON message.
#[derive(Debug)]
struct BadRequest(String);

/// Shared state of the API handlers.
pub(crate) type SharedSource = Arc<dyn Source>;

// === impl SourceError ===

impl SourceError {
    /// A new error of `kind`; `message` is shown to the API client.
    pub fn new(kind: SourceErrorKind, message: impl Into<String>) -> Self {
        SourceError {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> SourceErrorKind {
        self.kind
    }
}

impl IntoResponse for SourceError {
    fn into_response(self) -> Response {
        let (status, kind) = match self.kind {
            SourceErrorKind::NoDatabase => (StatusCode::SERVICE_UNAVAILABLE, "no_database"),
            SourceErrorKind::Query => (StatusCode::INTERNAL_SERVER_ERROR, "store_error"),
        };
        error_json(status, kind, &self.message)
    }
}

impl IntoResponse for BadRequest {
    fn into_response(self) -> Response {
        error_json(StatusCode::BAD_REQUEST, "bad_request", &self.0)
    }
}

// === impl StatsFilter ===

impl StatsFilter {
    /// Parses the query parameters `since` (`30s`, `15m`, `1h`, `24h`, `7d`,
    /// `all`, or empty for all time), `tool`, `model`, `session` (empty means
    /// no filter) and `limit` (1..=1000, default 50), relative to `now_ms`.
    fn parse(raw: RawStatsQuery, now_ms: i64) -> Result<StatsFilter, BadRequest> {
        let since_ms = match raw.since.as_deref().map(str::trim) {
            None | Some("") | Some("all") => None,
            Some(s) => Some(now_ms.saturating_sub(parse_duration_ms(s)?)),
        };
        let limit = match raw.limit.as_deref().map(str::trim) {
            None | Some("") => DEFAULT_LIMIT,
            Some(s) => match s.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    return Err(BadRequest(format!(
                        "limit must be a whole number from 1 to {MAX_LIMIT}, got {s:?}"
                    )));
                }
            },
        };
        let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        Ok(StatsFilter {
            since_ms,
            tool: nonempty(raw.tool),
            model: nonempty(raw.model),
            session: nonempty(raw.session),
            limit,
        })
    }
}

/// `15m` → 900000. Units: s, m, h, d.
fn parse_duration_ms(s: &str) -> Result<i64, BadRequest> {
    let bad = || {
        BadRequest(format!(
            "since must be a duration like 15m, 1h, 24h, 7d or \"all\", got {s:?}"
        ))
    };
    let split = s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (num, unit) = s.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let unit_ms: i64 = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    n.checked_mul(unit_ms).ok_or_else(bad)
}

// === handlers ===

pub(crate) async fn stats(
    State(source): State<SharedSource>,
    Query(raw): Query<RawStatsQuery>,
) -> Response {
    let filter = match StatsFilter::parse(raw, now_ms()) {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    match source.stats(&filter).await {
        Ok(v) => json_ok(v),
        Err(e) => e.into_response(),
    }
}

pub(crate) async fn session(
    State(source): State<SharedSource>,
    Path(id): Path<String>,
) -> Response {
    match source.session_calls(&id).await {
        Ok(Value::Array(calls)) if calls.is_empty() => error_json(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no tool calls recorded for session {id:?}"),
        ),
        Ok(v) => json_ok(v),
        Err(e) => e.into_response(),
    }
}

pub(crate) async fn health(State(source): State<SharedSource>) -> Response {
    json_ok(source.health())
}

// === helpers ===

fn json_ok(v: Value) -> Response {
    let mut resp = Json(v).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn error_json(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = serde_json::json!({ "error": { "type": kind, "message": message } });
    let mut resp = (status, Json(body)).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(since: Option<&str>, limit: Option<&str>) -> RawStatsQuery {
        RawStatsQuery {
            since: since.map(str::to_owned),
            tool: Some("search".into()),
            model: Some("  ".into()),
            session: None,
            limit: limit.map(str::to_owned),
        }
    }

    #[test]
    fn parses_since_and_limit() {
        let f = StatsFilter::parse(raw(Some("15m"), Some("10")), 1_000_000_000).expect("ok");
        assert_eq!(f.since_ms, Some(1_000_000_000 - 900_000));
        assert_eq!(f.limit, 10);
        assert_eq!(f.tool.as_deref(), Some("search"));
        assert_eq!(f.model, None, "blank filter means none");
        let f = StatsFilter::parse(raw(Some("7d"), None), 1_000_000_000).expect("ok");
        assert_eq!(f.since_ms, Some(1_000_000_000 - 7 * 86_400_000));
        assert_eq!(f.limit, DEFAULT_LIMIT);
        for all in [None, Some(""), Some("all")] {
            assert_eq!(
                StatsFilter::parse(raw(all, None), 5).expect("ok").since_ms,
                None
            );
        }
    }

    #[test]
    fn rejects_bad_since_and_limit() {
        for s in ["1w", "h", "-1h", "1.5h", "99999999999999999999d", "1h "] {
            let trimmed_ok = s == "1h ";
            let r = StatsFilter::parse(raw(Some(s), None), 0);
            assert_eq!(r.is_ok(), trimmed_ok, "{s:?}");
        }
        for l in ["0", "1001", "ten", "-3"] {
            let err = StatsFilter::parse(raw(None, Some(l)), 0).expect_err(l);
            assert!(err.0.contains("limit"), "{}", err.0);
        }
    }
}
