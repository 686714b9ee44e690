//! [`ClientHeaders`]: what a request's headers tell the records: its
//! session ([`session`], steps 1–2) and the client's W3C
//! `traceparent`, under which its exported spans go ([`crate::otel`]).

use http::HeaderMap;
use toolwarden_core::TraceParent;

use super::session::{self, Session};

/// The header naming the client's span (W3C Trace Context).
const TRACEPARENT: &str = "traceparent";

/// What the records take from a request's headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ClientHeaders {
    /// The session the headers name.
    pub session: Option<Session>,
    /// The client's span; `None` when absent or malformed (the spec's
    /// rule: an invalid `traceparent` is ignored and a new trace begins).
    pub trace_parent: Option<TraceParent>,
}

// === impl ClientHeaders ===

impl ClientHeaders {
    /// From hyper's header map.
    pub(crate) fn from_headers(headers: &HeaderMap) -> ClientHeaders {
        ClientHeaders::from_header_values(|name| headers.get(name).map(|v| v.as_bytes()))
    }

    /// From any header store: `get` returns the first value of a header
    /// (names are given lower-case).
    pub(crate) fn from_header_values<'a>(get: impl Fn(&str) -> Option<&'a [u8]>) -> ClientHeaders {
        ClientHeaders {
            session: session::from_header_values(&get),
            trace_parent: get(TRACEPARENT).and_then(|v| TraceParent::parse(v).ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_traceparent_is_read_and_a_malformed_one_ignored() {
        let mut h = HeaderMap::new();
        h.insert("x-session-id", "s1".parse().unwrap());
        h.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                .parse()
                .unwrap(),
        );
        let read = ClientHeaders::from_headers(&h);
        assert_eq!(read.session.unwrap().id, "s1");
        assert_eq!(read.trace_parent.unwrap().parent_id[0], 0x00);
        h.insert("traceparent", "00-zz".parse().unwrap());
        assert_eq!(ClientHeaders::from_headers(&h).trace_parent, None);
    }
}
