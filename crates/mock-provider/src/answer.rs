//! The answers the mock builds whole: a status with its content type, the
//! API's headers set on it, and a fault's reply ([`fault_reply`]), shared by
//! the HTTP server and WebSocket upgrades.

use bytes::Bytes;
use http::{Response, StatusCode, header};

use crate::{
    Shared,
    api_headers::Api,
    body::{Body, full},
    envelope::{self, Provider},
};

/// A [`crate::Fault::Status`] (`headers: None`: the API's own for the status) or
/// [`crate::Fault::StatusWithHeaders`] answer.
pub(crate) fn fault_reply(
    api: Option<Api>,
    code: u16,
    headers: Option<&[(String, String)]>,
    body: &Bytes,
) -> Response<Body> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = response(status, "application/json", full(body.clone()));
    let headers = match headers {
        Some(headers) => headers.to_vec(),
        None => api.map(|a| a.error_headers(status)).unwrap_or_default(),
    };
    set_headers(&mut resp, headers);
    resp
}

/// Set these headers: each name's first value replaces what the response
/// has, the next ones are added.
pub(crate) fn set_headers(resp: &mut Response<Body>, headers: Vec<(String, String)>) {
    let mut set: Vec<header::HeaderName> = Vec::new();
    for (k, v) in headers {
        let (Ok(k), Ok(v)) = (
            header::HeaderName::from_bytes(k.as_bytes()),
            header::HeaderValue::from_str(&v),
        ) else {
            continue;
        };
        if set.contains(&k) {
            resp.headers_mut().append(k, v);
        } else {
            resp.headers_mut().insert(k.clone(), v);
            set.push(k);
        }
    }
}

pub(crate) fn response(status: StatusCode, content_type: &str, body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    resp
}

/// An error in JSON with the API's headers for its status.
pub(crate) fn error_response(api: Option<Api>, status: StatusCode, body: String) -> Response<Body> {
    let mut resp = json_response(status, body);
    if let Some(api) = api {
        set_headers(&mut resp, api.error_headers(status));
    }
    resp
}

pub(crate) fn json_response(status: StatusCode, body: String) -> Response<Body> {
    response(status, "application/json", full(body))
}

/// The provider's refusal of a request without its key, if it is one.
pub(crate) fn denied(
    shared: &Shared,
    provider: Provider,
    parts: &http::request::Parts,
    query: Option<&str>,
) -> Option<Response<Body>> {
    let (status, body) = envelope::check_auth(
        provider,
        &parts.headers,
        query,
        shared.opts.api_key.as_deref(),
    )?;
    Some(json_response(status, body))
}
