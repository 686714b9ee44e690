//! [`ClientHeaders`]: what a request's headers tell the records: its
//! session ([`session`], steps 1–2) and the client's W3C
//! `traceparent` and `tracestate`, under which its exported spans go
//! ([`crate::otel`]).

use http::HeaderMap;
use toolwarden_core::TraceParent;

use super::session::{self, Session};

/// The header naming the client's span (W3C Trace Context).
const TRACEPARENT: &str = "traceparent";
/// The vendors' data that goes with it.
const TRACESTATE: &str = "tracestate";
/// The longest `tracestate` kept: W3C Trace Context asks that at least 512
/// characters be propagated, and allows cutting beyond.
const MAX_TRACE_STATE: usize = 512;
/// A list-member longer than this is the first to go when a `tracestate`
/// is cut (the spec's order: long members first, then from the end).
const LONG_MEMBER: usize = 128;

/// What the records take from a request's headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ClientHeaders {
    /// The session the headers name.
    pub session: Option<Session>,
    /// The client's span; `None` when absent or malformed (the spec's
    /// rule: an invalid `traceparent` is ignored and a new trace begins).
    pub trace_parent: Option<TraceParent>,
    /// The client's `tracestate` as it came, cut to [`MAX_TRACE_STATE`]
    /// bytes as the spec says; `None` without a valid `traceparent` (the
    /// spec: then it is ignored), or when absent, empty, or not text.
    pub trace_state: Option<String>,
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
        let trace_parent = get(TRACEPARENT).and_then(|v| TraceParent::parse(v).ok());
        ClientHeaders {
            session: session::from_header_values(&get),
            trace_state: trace_parent.and(get(TRACESTATE)).and_then(trace_state),
            trace_parent,
        }
    }
}

/// A `tracestate` value kept as it came when it is at most
/// [`MAX_TRACE_STATE`] bytes; a longer one loses its members longer than
/// [`LONG_MEMBER`], then members from its end, until it fits (W3C Trace
/// Context, "tracestate limits"). `None` when empty or not printable ASCII.
fn trace_state(value: &[u8]) -> Option<String> {
    let value = value.trim_ascii();
    let printable = value
        .iter()
        .all(|&b| b == b'\t' || (b' '..=b'~').contains(&b));
    if value.is_empty() || !printable {
        return None;
    }
    let text = std::str::from_utf8(value).ok()?;
    if text.len() <= MAX_TRACE_STATE {
        return Some(text.to_string());
    }
    let mut kept = String::new();
    let members = text
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty() && m.len() <= LONG_MEMBER);
    for member in members {
        let sep = usize::from(!kept.is_empty());
        if kept.len() + sep + member.len() > MAX_TRACE_STATE {
            break;
        }
        if sep == 1 {
            kept.push(',');
        }
        kept.push_str(member);
    }
    (!kept.is_empty()).then_some(kept)
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

    /// `tracestate` goes with a valid `traceparent`, as it came; without
    /// one it is ignored (the spec's rule).
    #[test]
    fn tracestate_is_kept_with_a_valid_traceparent() {
        let mut h = HeaderMap::new();
        h.insert(
            "tracestate",
            " congo=t61rcWkgMzE, rojo=00f067aa0ba902b7 "
                .parse()
                .unwrap(),
        );
        assert_eq!(ClientHeaders::from_headers(&h).trace_state, None);
        h.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                .parse()
                .unwrap(),
        );
        assert_eq!(
            ClientHeaders::from_headers(&h).trace_state.as_deref(),
            Some("congo=t61rcWkgMzE, rojo=00f067aa0ba902b7")
        );
        h.insert("tracestate", "".parse().unwrap());
        assert_eq!(ClientHeaders::from_headers(&h).trace_state, None);
    }

    /// Over 512 bytes: long members go first, then members from the end.
    #[test]
    fn a_long_tracestate_is_cut_as_the_spec_says() {
        let long = format!("big={}", "x".repeat(200));
        let members: Vec<String> = (0..40).map(|i| format!("v{i:02}=0123456789")).collect();
        let value = format!("{},{long},{}", members[0], members[1..].join(","));
        let cut = trace_state(value.as_bytes()).unwrap();
        assert!(cut.len() <= MAX_TRACE_STATE, "{}", cut.len());
        assert!(!cut.contains("big="), "{cut}");
        let n = cut.split(',').count();
        assert_eq!(cut, members[..n].join(","));
        assert_eq!(n, (MAX_TRACE_STATE + 1) / (members[0].len() + 1));
    }

    proptest::proptest! {
        /// Any value: what is kept fits, is the value itself when it fits,
        /// and else holds whole members of it, in its order.
        #[test]
        fn a_kept_tracestate_fits_and_is_the_clients(
            members in proptest::collection::vec("[a-z0-9]{1,8}=[ -+\\--~]{0,150}", 0..60),
        ) {
            let value = members.join(",");
            let kept = trace_state(value.as_bytes());
            match kept {
                None => proptest::prop_assert!(value.trim().is_empty() || value.trim().len() > MAX_TRACE_STATE),
                Some(kept) => {
                    proptest::prop_assert!(kept.len() <= MAX_TRACE_STATE);
                    // The header's value is read trimmed: a value over the
                    // limit by its outer spaces alone is kept whole.
                    if value.trim().len() <= MAX_TRACE_STATE {
                        proptest::prop_assert_eq!(kept, value.trim());
                    } else {
                        let mut from = value.split(',').map(str::trim);
                        for member in kept.split(',') {
                            proptest::prop_assert!(member.len() <= LONG_MEMBER);
                            proptest::prop_assert!(from.any(|m| m == member), "{}", member);
                        }
                    }
                }
            }
        }
    }
}
