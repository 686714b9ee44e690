//! The answers the mock builds whole: a status with its content type, the
//! API's headers set on it, and a fault's reply ([`fault_reply`]), shared by
//! the HTTP server and WebSocket upgrades.

use bytes::Bytes;
use http::{Response, StatusCode, header};

use crate::{
    api_headers::Api,
    body::{Body, full},
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
