//! One error shape for the whole admin API (`/api/*`, the dashboard's
//! endpoints, the access check): an [`AdminError`] with a kind, answered as
//! `{"error": {"type": "<kind>", "message": "<what went wrong>"}}` with the
//! kind's status and `cache-control: no-store` (as every admin answer:
//! [`no_store`]). The admin handlers read
//! their parameters with [`AdminQuery`] and [`AdminPath`], which refuse
//! malformed ones in that shape too (axum's `Query` and `Path` answer
//! plain text).

use std::fmt;

use axum::{
    Json,
    extract::{
        FromRequestParts, Path, Query,
        rejection::{PathRejection, QueryRejection},
    },
    response::{IntoResponse, Response},
};
use http::{HeaderValue, StatusCode, header, request::Parts};
use serde::de::DeserializeOwned;
use serde_json::json;

/// What went wrong answering an admin request; each kind has its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum AdminErrorKind {
    /// No such route or record (404, `not_found`).
    NotFound,
    /// A malformed parameter (400, `bad_request`).
    BadRequest,
    /// The gateway runs without a database (503, `no_database`).
    NoDatabase,
    /// Reading the store failed (500, `store_error`).
    Store,
    /// No token, or the wrong one (401, `unauthorized`).
    Unauthorized,
    /// Remote access is closed: no admin token is configured (403, `forbidden`).
    Forbidden,
    /// The route answers `GET` (and `HEAD`) only (405, `method_not_allowed`).
    MethodNotAllowed,
}

/// An admin API error: its kind and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AdminError {
    kind: AdminErrorKind,
    message: String,
}

/// axum's [`Query`], refusing a malformed query string with a
/// `bad_request` [`AdminError`] naming the parameter.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AdminQuery<T>(pub T);

/// axum's [`Path`], refusing a malformed path parameter (e.g. not UTF-8
/// once percent-decoded) with a `bad_request` [`AdminError`] naming it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AdminPath<T>(pub T);

/// `resp` marked `cache-control: no-store`: admin answers carry tool
/// output (excerpts), which no shared cache or browser disk cache should
/// keep, and the page polls for fresh numbers anyway.
pub(crate) fn no_store(mut resp: Response) -> Response {
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

// === impl AdminErrorKind ===

impl AdminErrorKind {
    /// The `type` field of the JSON answer.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AdminErrorKind::NotFound => "not_found",
            AdminErrorKind::BadRequest => "bad_request",
            AdminErrorKind::NoDatabase => "no_database",
            AdminErrorKind::Store => "store_error",
            AdminErrorKind::Unauthorized => "unauthorized",
            AdminErrorKind::Forbidden => "forbidden",
            AdminErrorKind::MethodNotAllowed => "method_not_allowed",
        }
    }

    /// The HTTP status answered.
    pub(crate) fn status(self) -> StatusCode {
        match self {
            AdminErrorKind::NotFound => StatusCode::NOT_FOUND,
            AdminErrorKind::BadRequest => StatusCode::BAD_REQUEST,
            AdminErrorKind::NoDatabase => StatusCode::SERVICE_UNAVAILABLE,
            AdminErrorKind::Store => StatusCode::INTERNAL_SERVER_ERROR,
            AdminErrorKind::Unauthorized => StatusCode::UNAUTHORIZED,
            AdminErrorKind::Forbidden => StatusCode::FORBIDDEN,
            AdminErrorKind::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        }
    }
}

// === impl AdminError ===

impl AdminError {
    /// An error of `kind` saying `message`.
    pub(crate) fn new(kind: AdminErrorKind, message: impl Into<String>) -> AdminError {
        AdminError {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> AdminErrorKind {
        self.kind
    }
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AdminError {}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "type": self.kind.as_str(), "message": self.message } });
        let mut resp = no_store((self.kind.status(), Json(body)).into_response());
        match self.kind {
            AdminErrorKind::Unauthorized => {
                resp.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"toolwarden\""),
                );
            }
            AdminErrorKind::MethodNotAllowed => {
                // Every admin route is a `get` route (which answers HEAD too).
                resp.headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
            }
            _ => {}
        }
        resp
    }
}

impl From<QueryRejection> for AdminError {
    fn from(e: QueryRejection) -> AdminError {
        // "Failed to deserialize query string: limit: invalid digit …"
        AdminError::new(AdminErrorKind::BadRequest, e.body_text())
    }
}

impl From<PathRejection> for AdminError {
    fn from(e: PathRejection) -> AdminError {
        // "Invalid URL: Invalid UTF-8 in `id`". Its other cases (a route
        // without the parameter) are the router's mistakes, not reachable
        // through the admin routes.
        AdminError::new(AdminErrorKind::BadRequest, e.body_text())
    }
}

// === impl AdminQuery ===

impl<T, S> FromRequestParts<S> for AdminQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = AdminError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AdminError> {
        let Query(value) = Query::<T>::from_request_parts(parts, state).await?;
        Ok(AdminQuery(value))
    }
}

// === impl AdminPath ===

impl<T, S> FromRequestParts<S> for AdminPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = AdminError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AdminError> {
        let Path(value) = Path::<T>::from_request_parts(parts, state).await?;
        Ok(AdminPath(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_kind_answers_the_same_shape() {
        use http_body_util::BodyExt;
        for kind in [
            AdminErrorKind::NotFound,
            AdminErrorKind::BadRequest,
            AdminErrorKind::NoDatabase,
            AdminErrorKind::Store,
            AdminErrorKind::Unauthorized,
            AdminErrorKind::Forbidden,
            AdminErrorKind::MethodNotAllowed,
        ] {
            let resp = AdminError::new(kind, "what happened").into_response();
            assert_eq!(resp.status(), kind.status());
            assert_eq!(resp.headers()[header::CACHE_CONTROL], "no-store");
            assert_eq!(
                resp.headers().contains_key(header::WWW_AUTHENTICATE),
                kind == AdminErrorKind::Unauthorized
            );
            assert_eq!(
                resp.headers().contains_key(header::ALLOW),
                kind == AdminErrorKind::MethodNotAllowed
            );
            let body = resp.into_body().collect().await.unwrap().to_bytes();
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(
                v,
                json!({"error": {"type": kind.as_str(), "message": "what happened"}})
            );
        }
    }
}
