//! Header work: hop-by-hop headers (`connection`, `keep-alive`,
//! `transfer-encoding`, `te`, `trailer`, `upgrade`, `proxy-connection`,
//! `proxy-authorization`, `proxy-authenticate`, and any named in
//! `connection`) are removed in both directions, `host` is set by
//! the client for the upstream, the gateway's own `x-toolwarden-lend-token`
//! never goes upstream, and `content-length` is dropped only when the body
//! was repaired (the client recomputes it from the new body). A response's
//! `content-length` given as several lines or a list of one number reaches
//! the client as one number ([`content_length`] reads it, on both paths).
//! Everything else — credentials and provider headers included — passes
//! through unchanged. Nothing here logs a header.

use http::{HeaderMap, HeaderName, header};

use super::Forwarded;
use crate::errors::{ProxyError, ProxyErrorKind};

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
    single_content_length(headers);
    strip_hop_by_hop(headers);
}

/// A `content-length` field value: ASCII digits (at most 19), or a list of
/// the same number (`5, 5`, what an intermediary that merged two equal
/// lines sends), which RFC 9110 §8.6 lets a recipient read as that number
/// and hyper's client does. `None` for anything else.
pub(crate) fn content_length(value: &[u8]) -> Option<u64> {
    let mut found = None;
    for item in value.split(|&b| b == b',') {
        let item = item.trim_ascii();
        if item.is_empty() || item.len() > 19 || !item.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n = item.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        if found.is_some_and(|m| m != n) {
            return None;
        }
        found = Some(n);
    }
    found
}

/// The first transfer coding other than `chunked` in a response's
/// `transfer-encoding` values (`gzip` in `gzip, chunked`), which the
/// gateway does not relay: it decodes only `chunked`, re-frames bodies for
/// the client, and asks for no other (it forwards no `TE`, hop-by-hop;
/// RFC 9110 §10.1.4). Relayed, the client would get the coded bytes as the
/// body with nothing to say so (its `transfer-encoding` is the hop's);
/// forwarded as it is, most clients cannot read it (Python's h11 takes
/// `chunked` alone). Both HTTP paths answer it with a 502 naming it.
pub(crate) fn unrelayed_transfer_coding<'a>(
    values: impl IntoIterator<Item = &'a [u8]>,
) -> Option<String> {
    values
        .into_iter()
        .flat_map(|v| v.split(|&b| b == b','))
        .map(|coding| {
            // A coding's parameters (`;q=…`) are not its name.
            let name = coding.split(|&b| b == b';').next().unwrap_or(coding);
            name.trim_ascii()
        })
        .find(|name| !name.is_empty() && !name.eq_ignore_ascii_case(b"chunked"))
        .map(|name| String::from_utf8_lossy(name).into_owned())
}

/// The error an answer read by hyper's client is refused with when its
/// body is in a transfer coding the gateway does not relay
/// ([`unrelayed_transfer_coding`]: hyper's client hands such a body on
/// still coded), on every route hyper serves, the pass-through ones and a
/// refused WebSocket upgrade included. `None` when it has no body (the
/// answer to a HEAD, `head_only`; a 204 or 304) or its body is relayed.
/// The fast path refuses the same answers from its own parse of the head
/// (`h1::head::ResponseParse::Unrelayed`).
pub(crate) fn unrelayed_answer(
    host: &str,
    status: http::StatusCode,
    headers: &HeaderMap,
    head_only: bool,
) -> Option<ProxyError> {
    if head_only || matches!(status.as_u16(), 204 | 304) {
        return None;
    }
    let values = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .map(http::HeaderValue::as_bytes);
    let coding = unrelayed_transfer_coding(values)?;
    Some(unrelayed_transfer_coding_error(host, &coding))
}

/// The error a response in a transfer coding the gateway does not relay
/// ([`unrelayed_transfer_coding`]) is answered with.
pub(crate) fn unrelayed_transfer_coding_error(host: &str, coding: &str) -> ProxyError {
    ProxyError::new(
        ProxyErrorKind::BadResponse,
        host,
        format!(
            "its body is in the transfer coding `{coding}`, which the gateway does not \
             relay (it reads chunked alone, and asks for no other)"
        ),
    )
}

/// One `content-length` of one number for the client: the lines and
/// lists of the same number an upstream may send (hyper's client reads
/// them; Python's h11 and Node's llhttp refuse a list) become one.
fn single_content_length(headers: &mut HeaderMap) {
    let mut values = headers.get_all(header::CONTENT_LENGTH).iter();
    let (Some(first), rest) = (values.next(), values.count()) else {
        return;
    };
    if rest == 0 && first.as_bytes().iter().all(u8::is_ascii_digit) {
        return;
    }
    let lengths: Option<Vec<u64>> = headers
        .get_all(header::CONTENT_LENGTH)
        .iter()
        .map(|v| content_length(v.as_bytes()))
        .collect();
    if let Some(&[n, ref others @ ..]) = lengths.as_deref()
        && others.iter().all(|&m| m == n)
    {
        headers.insert(header::CONTENT_LENGTH, http::HeaderValue::from(n));
    }
}

/// Hop-by-hop header names, lower-case: the one list both HTTP paths use.
/// RFC 9110 §7.6.1's, `keep-alive` and `proxy-connection` (legacy ones,
/// which RFC 9110 §7.6.1 names too), and `proxy-authorization` /
/// `proxy-authenticate` (the credentials of the hop to a proxy, RFC 9110
/// §11.7: never the upstream's). Other `proxy-*` headers are end-to-end:
/// an upstream proxy's `Proxy-Status` (RFC 9209) says why it failed, and
/// reaches the client.
pub(crate) const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
];

/// Whether `name` (any case) is hop-by-hop by itself: in [`HOP_BY_HOP`].
/// Names listed in a `connection` header are too.
pub(crate) fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h))
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

    /// The proxy headers RFC 9110 makes hop-by-hop go, in any case; other
    /// `proxy-*` headers (`Proxy-Status`, RFC 9209) are end-to-end.
    #[test]
    fn only_hop_by_hop_proxy_headers_are_stripped() {
        let mut h = map(&[
            ("Proxy-Connection", "keep-alive"),
            ("proxy-authorization", "Basic c2VjcmV0"),
            ("Proxy-Authenticate", "Basic realm=\"x\""),
            ("proxy-status", "edge; error=connection_timeout"),
            ("proxy-trace", "t1"),
        ]);
        for_client(&mut h);
        let mut names: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        names.sort();
        assert_eq!(names, ["proxy-status", "proxy-trace"]);
        for name in [
            "PROXY-CONNECTION",
            "Proxy-Authorization",
            "proxy-authenticate",
        ] {
            assert!(is_hop_by_hop(name), "{name}");
        }
        assert!(!is_hop_by_hop("Proxy-Status"));
        assert!(!is_hop_by_hop("proxy"));
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

    /// A length given twice, or as a list of the same number, reaches the
    /// client as one number; different ones are not read as a length.
    #[test]
    fn a_length_list_of_one_number_becomes_that_number() {
        assert_eq!(content_length(b"42"), Some(42));
        assert_eq!(content_length(b" 5 ,5,  5 "), Some(5));
        for bad in [
            &b""[..],
            b"5, 6",
            b"5,",
            b",5",
            b"+5",
            b"0x5",
            b"5 5",
            b"99999999999999999999",
        ] {
            assert_eq!(
                content_length(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut h = map(&[("content-length", "5, 5"), ("content-length", "5")]);
        for_client(&mut h);
        assert_eq!(
            h.get_all("content-length").iter().collect::<Vec<_>>(),
            ["5"]
        );
        let mut h = map(&[("content-length", "7")]);
        for_client(&mut h);
        assert_eq!(h["content-length"], "7");
    }

    use proptest::prelude::*;

    proptest! {
        /// A number, alone or listed again with any whitespace, is itself;
        /// a list with another number, or any bytes, never a panic.
        #[test]
        fn a_length_list_reads_as_its_number(
            n in any::<u64>().prop_map(|n| n % 10_000_000_000_000_000_000),
            other in any::<u64>(),
            spaces in proptest::collection::vec("[ \t]{0,2}", 1..5),
            bytes in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let list: Vec<String> = spaces.iter().map(|s| format!("{s}{n}{s}")).collect();
            prop_assert_eq!(content_length(list.join(",").as_bytes()), Some(n));
            let other = other % 10_000_000_000_000_000_000;
            if other != n {
                let mixed = format!("{n}, {other}");
                prop_assert_eq!(content_length(mixed.as_bytes()), None);
            }
            let _ = content_length(&bytes);
        }
    }

    /// A transfer coding other than chunked is named, in any line, case
    /// or spacing; chunked alone, or nothing, is none.
    #[test]
    fn a_transfer_coding_other_than_chunked_is_named() {
        let found = |values: &[&[u8]]| unrelayed_transfer_coding(values.iter().copied());
        assert_eq!(found(&[b"chunked"]), None);
        assert_eq!(found(&[b" Chunked ,, "]), None);
        assert_eq!(found(&[]), None);
        assert_eq!(found(&[b"gzip"]).as_deref(), Some("gzip"));
        assert_eq!(found(&[b"GZIP , chunked"]).as_deref(), Some("GZIP"));
        assert_eq!(
            found(&[b"chunked", b"x-custom;q=1"]).as_deref(),
            Some("x-custom")
        );
    }

    proptest! {
        /// Any bytes: a name or none, never a panic.
        #[test]
        fn any_transfer_encoding_reads(bytes in proptest::collection::vec(any::<u8>(), 0..60)) {
            if let Some(name) = unrelayed_transfer_coding([&bytes[..]]) {
                prop_assert!(!name.is_empty());
                prop_assert!(!name.eq_ignore_ascii_case("chunked"));
            }
        }
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
