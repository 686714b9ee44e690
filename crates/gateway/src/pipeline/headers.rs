//! Header work: hop-by-hop headers (`connection`, `keep-alive`,
//! `transfer-encoding`, `te`, `trailer`, `upgrade`, `proxy-*`, and any
//! named in `connection`) are removed in both directions, `host` is set by
//! the client for the upstream, the gateway's own `x-toolwarden-lend-token`
//! never goes upstream, and `content-length` is dropped only when the body
//! was repaired (the client recomputes it from the new body).
//! Everything else — credentials and provider headers included — passes
//! through unchanged. Nothing here logs a header.

use http::{HeaderMap, HeaderName, header};

use super::Forwarded;

/// Prepare the client's headers for the upstream request, in place: a
/// body the gateway changed gets a new length, and a body it decoded from
/// the client's content coding goes without `content-encoding`.
pub(crate) fn for_upstream(headers: &mut HeaderMap, forwarded: Forwarded) {
    strip_hop_by_hop(headers);
    headers.remove(header::HOST);
    headers.remove(crate::local::LEND_TOKEN_HEADER);
    if forwarded != Forwarded::AsSent {
        headers.remove(header::CONTENT_LENGTH);
    }
    if forwarded == Forwarded::RepairedDecoded {
        headers.remove(header::CONTENT_ENCODING);
    }
}

/// The request's `content-encoding`, its lines joined as one list (`None`
/// without one).
pub(crate) fn content_encoding(headers: &HeaderMap) -> Option<Vec<u8>> {
    let mut joined: Option<Vec<u8>> = None;
    for value in headers.get_all(header::CONTENT_ENCODING) {
        match &mut joined {
            None => joined = Some(value.as_bytes().to_vec()),
            Some(list) => {
                list.extend_from_slice(b", ");
                list.extend_from_slice(value.as_bytes());
            }
        }
    }
    joined
}

/// Whether a body with this `content-encoding` value is in a content
/// coding (anything but none or `identity`): the gateway cannot append
/// plain bytes (a stream's error event) to it.
pub(crate) fn is_encoded(content_encoding: Option<&[u8]>) -> bool {
    content_encoding
        .is_some_and(|v| toolwarden_coding::Codings::parse(v).map_or(true, |c| !c.is_identity()))
}

/// Whether a stream that breaks midway can be ended with the dialect's
/// error event (`errors::stream_error_event`): an SSE stream in no
/// content coding. A streamed JSON array (Gemini without `alt=sse`) or any
/// other chunked body cannot take an SSE event — the client's JSON parser
/// would fail on it — so the client sees it cut instead.
pub(crate) fn takes_error_event(
    content_type: Option<&[u8]>,
    content_encoding: Option<&[u8]>,
) -> bool {
    content_type.is_some_and(toolwarden_wire::sse::is_sse_content_type)
        && !is_encoded(content_encoding)
}

/// Prepare the upstream's response headers for the client, in place.
pub(crate) fn for_client(headers: &mut HeaderMap) {
    // Both framings: the transfer coding frames the body (RFC 9112 §6.3)
    // and the length is wrong; hyper would cut the body at it.
    if headers.contains_key(header::TRANSFER_ENCODING) {
        headers.remove(header::CONTENT_LENGTH);
    }
    strip_hop_by_hop(headers);
}

/// Hop-by-hop header names (RFC 9110 §7.6.1, plus the `proxy-*` family
/// and `keep-alive`), lower-case: the one list both HTTP paths use.
pub(crate) const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-authorization",
    "proxy-authenticate",
];

/// Whether `name` (any case) is hop-by-hop by itself: in [`HOP_BY_HOP`]
/// or `proxy-*`. Names listed in a `connection` header are too.
pub(crate) fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h))
        || name
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case("proxy-"))
}

/// The header names `connection` lists: hop-by-hop too (RFC 9110
/// §7.6.1). Read as bytes: a value with a byte that is not UTF-8 still
/// names the headers it lists.
pub(crate) fn named_in_connection(headers: &HeaderMap) -> Vec<HeaderName> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .filter_map(|name| HeaderName::from_bytes(name.trim_ascii()).ok())
        .collect()
}

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let mut drop = named_in_connection(headers);
    drop.extend(
        headers
            .keys()
            .filter(|k| is_hop_by_hop(k.as_str()))
            .cloned(),
    );
    for name in drop {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        m
    }

    #[test]
    fn strips_hop_by_hop_keeps_the_rest() {
        let mut h = map(&[
            ("host", "127.0.0.1:8080"),
            ("connection", "keep-alive, x-hop"),
            ("keep-alive", "timeout=5"),
            ("x-hop", "1"),
            ("transfer-encoding", "chunked"),
            ("te", "trailers"),
            ("upgrade", "h2c"),
            ("proxy-connection", "keep-alive"),
            ("authorization", "Bearer sk-secret"),
            ("x-api-key", "k"),
            ("anthropic-version", "2023-06-01"),
            ("anthropic-beta", "a"),
            ("anthropic-beta", "b"),
            ("content-length", "12"),
            ("content-encoding", "zstd"),
        ]);
        for_upstream(&mut h, Forwarded::AsSent);
        let mut names: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "anthropic-beta",
                "anthropic-version",
                "authorization",
                "content-encoding",
                "content-length",
                "x-api-key",
            ]
        );
        assert_eq!(h.get_all("anthropic-beta").iter().count(), 2);
        for_upstream(&mut h, Forwarded::Repaired);
        assert!(h.get("content-length").is_none());
        assert_eq!(h["content-encoding"], "zstd");
        for_upstream(&mut h, Forwarded::RepairedDecoded);
        assert!(h.get("content-encoding").is_none());
    }

    /// A `connection` value with a byte that is not UTF-8 still names its
    /// headers; a response framed both ways loses the wrong length.
    #[test]
    fn connection_lists_are_bytes_and_a_transfer_coding_beats_a_length() {
        let mut h = HeaderMap::new();
        h.insert(
            "connection",
            http::HeaderValue::from_bytes(b"X-Hop, \xe9").unwrap(),
        );
        h.insert("x-hop", "must-not-forward".parse().unwrap());
        h.insert("x-keep", "1".parse().unwrap());
        for_upstream(&mut h, Forwarded::AsSent);
        assert!(h.get("x-hop").is_none(), "{h:?}");
        assert_eq!(h["x-keep"], "1");

        let mut h = map(&[("content-length", "3"), ("transfer-encoding", "chunked")]);
        for_client(&mut h);
        assert!(h.get("content-length").is_none(), "{h:?}");
    }

    #[test]
    fn content_encoding_lines_join_into_one_list() {
        let mut h = HeaderMap::new();
        assert_eq!(content_encoding(&h), None);
        h.append("content-encoding", "gzip".parse().unwrap());
        assert_eq!(content_encoding(&h).as_deref(), Some(&b"gzip"[..]));
        h.append("content-encoding", "br".parse().unwrap());
        assert_eq!(content_encoding(&h).as_deref(), Some(&b"gzip, br"[..]));
    }
}
