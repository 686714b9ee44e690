use proptest::prelude::*;

use super::*;
use crate::routes::Provider;

fn parse(raw: &[u8]) -> RequestParse {
    let up = crate::Upstream::parse("http://127.0.0.1:9100/prefix").unwrap();
    let upstreams = Upstreams {
        openai: up.clone(),
        anthropic: up.clone(),
        gemini: up.clone(),
        chatgpt: up,
    };
    parse_request(raw, &upstreams, None)
}

fn fast(raw: &[u8]) -> RequestHead {
    match parse(raw) {
        RequestParse::Fast(head) => *head,
        other => panic!("expected the fast path, got {other:?}"),
    }
}

/// A gateway bound to a loopback address takes a head naming one of its
/// names on the fast path, and leaves one naming another host (DNS
/// rebinding) to hyper's path, which refuses it (`crate::rebinding`).
#[test]
fn a_head_naming_a_foreign_host_is_left_to_hyper() {
    let up = crate::Upstream::parse("http://127.0.0.1:9100").unwrap();
    let upstreams = Upstreams {
        openai: up.clone(),
        anthropic: up.clone(),
        gemini: up.clone(),
        chatgpt: up,
    };
    let allowed = AllowedHosts::parse(&["gw.example".to_string()]).unwrap();
    let head = |host: &str| {
        format!("POST /v1/messages HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}")
    };
    for host in ["127.0.0.1:8080", "localhost", "[::1]:1", "gw.example:443"] {
        let parsed = parse_request(head(host).as_bytes(), &upstreams, Some(&allowed));
        assert!(
            matches!(parsed, RequestParse::Fast(_)),
            "{host}: {parsed:?}"
        );
    }
    for host in ["attacker.example:8080", "127.0.0.1.nip.io"] {
        let parsed = parse_request(head(host).as_bytes(), &upstreams, Some(&allowed));
        assert!(
            matches!(parsed, RequestParse::Fallback),
            "{host}: {parsed:?}"
        );
        // Bound elsewhere: any host.
        let parsed = parse_request(head(host).as_bytes(), &upstreams, None);
        assert!(
            matches!(parsed, RequestParse::Fast(_)),
            "{host}: {parsed:?}"
        );
    }
    let two = "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nHost: attacker.example\r\n\
               Content-Length: 2\r\n\r\n{}";
    let parsed = parse_request(two.as_bytes(), &upstreams, Some(&allowed));
    assert!(matches!(parsed, RequestParse::Fallback), "{parsed:?}");
    let not_text = b"POST /v1/messages HTTP/1.1\r\nHost: \xff\r\nContent-Length: 2\r\n\r\n{}";
    let parsed = parse_request(not_text, &upstreams, Some(&allowed));
    assert!(matches!(parsed, RequestParse::Fallback), "{parsed:?}");
}

/// A Vertex AI Gemini path without the `/vertex` prefix is hyper's (its
/// upstream is the cloud's), not the fast path's Gemini API upstream.
#[test]
fn a_vertex_gemini_path_is_left_to_hyper() {
    let raw =
        b"POST /v1/projects/p/locations/us-central1/publishers/google/models/m:generateContent \
HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\nContent-Length: 2\r\n\r\n{}";
    assert!(matches!(parse(raw), RequestParse::Fallback));
}

#[test]
fn a_dialect_request_is_rewritten_for_the_upstream() {
    let raw = b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Api-Key: k\r\n\
Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nanthropic-beta: a\r\nanthropic-beta: b\r\n\
Content-Length: 5\r\nProxy-Authorization: p\r\nx-claude-code-session-id: s-1\r\n\r\nhello";
    let mut head = fast(raw);
    assert_eq!(head.len, raw.len() - 5);
    assert_eq!(head.body_len, 5);
    assert_eq!(head.route.provider, Provider::Anthropic);
    assert_eq!(head.path, "/v1/messages");
    assert!(!head.close);
    assert_eq!(head.client.session.as_ref().unwrap().id, "s-1");
    finish_upstream_head(&mut head.upstream_head, 7);
    assert_eq!(
        String::from_utf8(head.upstream_head).unwrap(),
        "POST /prefix/v1/messages?beta=true HTTP/1.1\r\nhost: 127.0.0.1:9100\r\nX-Api-Key: k\r\n\
anthropic-beta: a\r\nanthropic-beta: b\r\nx-claude-code-session-id: s-1\r\n\
content-length: 7\r\n\r\n"
    );
}

/// A fragment is the client's own: never sent upstream.
#[test]
fn a_fragment_is_not_forwarded() {
    let raw =
        b"POST /v1/messages?beta=true#part HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}";
    let head = fast(raw);
    assert_eq!(head.path, "/v1/messages");
    let sent = String::from_utf8(head.upstream_head).unwrap();
    assert!(
        sent.starts_with("POST /prefix/v1/messages?beta=true HTTP/1.1\r\n"),
        "{sent}"
    );
}

#[test]
fn content_encoding_lines_are_found_and_can_be_removed() {
    let raw = b"POST /v1/responses HTTP/1.1\r\nContent-Encoding: gzip\r\nx-a: 1\r\n\
content-encoding: zstd\r\nContent-Length: 0\r\nx-b: 2\r\n\r\n";
    let mut head = fast(raw);
    let ce = head.content_encoding.take().expect("content-encoding");
    assert_eq!(ce.value, b"gzip, zstd");
    let kept = String::from_utf8(head.upstream_head.clone()).unwrap();
    assert!(kept.contains("Content-Encoding: gzip\r\nx-a: 1\r\ncontent-encoding: zstd\r\n"));
    ce.remove_from(&mut head.upstream_head);
    assert_eq!(
        String::from_utf8(head.upstream_head).unwrap(),
        "POST /prefix/v1/responses HTTP/1.1\r\nhost: 127.0.0.1:9100\r\nx-a: 1\r\nx-b: 2\r\n"
    );
    let plain = fast(b"POST /v1/responses HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    assert!(plain.content_encoding.is_none());
}

#[test]
fn other_requests_are_left_to_hyper() {
    for raw in [
        &b"GET /v1/models HTTP/1.1\r\n\r\n"[..],
        b"POST /v1/models HTTP/1.1\r\n\r\n",
        b"POST /v1/messages HTTP/1.0\r\ncontent-length: 0\r\n\r\n",
        b"POST /v1/messages HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n",
        b"POST /v1/messages HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: 1\r\n\r\n",
        b"POST /v1/messages HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
        b"POST /v1/messages HTTP/1.1\r\ncontent-length: -1\r\n\r\n",
        b"POST http://example.com/v1/messages HTTP/1.1\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"\x16\x03\x01garbage",
    ] {
        assert!(
            matches!(parse(raw), RequestParse::Fallback),
            "{}",
            String::from_utf8_lossy(raw)
        );
    }
    assert!(matches!(
        parse(b"POST /v1/messages HTTP/1.1\r\nhost: x"),
        RequestParse::Partial
    ));
    let head = fast(b"POST /v1beta/models/gemini-pro:streamGenerateContent?alt=sse HTTP/1.1\r\nconnection: close\r\n\r\n");
    assert!(head.close);
    assert_eq!(head.body_len, 0);
    assert!(head.route.gemini_stream);
    assert_eq!(head.route.model.as_deref(), Some("gemini-pro"));
}

fn response(raw: &[u8], extras: ClientHeadExtras) -> (ResponseHead, String) {
    match parse_response(raw, extras) {
        ResponseParse::Head(head, client) => (head, String::from_utf8(client).unwrap()),
        other => panic!("expected a head, got {other:?}"),
    }
}

/// `connection` cannot withhold the framing: a listed `content-length`
/// still goes to the client (else it would read to a close that never
/// comes). A byte that is not UTF-8 in `connection` or
/// `transfer-encoding` does not make the head invalid (in
/// `transfer-encoding` it is a coding other than chunked, named).
#[test]
fn the_framing_survives_what_connection_lists() {
    let (head, client) = response(
        b"HTTP/1.1 200 OK\r\nconnection: content-length, x-hop\r\nx-hop: 1\r\ncontent-length: 2\r\n\r\n{}",
        ClientHeadExtras::default(),
    );
    assert_eq!(head.framing, BodyFraming::Length(2));
    assert_eq!(client, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n");
    let (head, client) = response(
        b"HTTP/1.1 200 OK\r\nconnection: \xffclose\r\ncontent-length: 2\r\n\r\n{}",
        ClientHeadExtras::default(),
    );
    assert_eq!(head.framing, BodyFraming::Length(2));
    assert!(client.contains("content-length: 2"), "{client}");
    assert!(matches!(
        parse_response(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: \xff, chunked\r\n\r\n",
            ClientHeadExtras::default(),
        ),
        ResponseParse::Unrelayed(coding) if coding == "\u{fffd}"
    ));
}

#[test]
fn response_heads_keep_their_headers_and_say_their_framing() {
    let (head, client) = response(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\nKeep-Alive: timeout=5\r\nrequest-id: r1\r\n\r\n{\"ok\":true}\n",
        ClientHeadExtras { repaired: 2, close: false },
    );
    assert_eq!(head.status, 200);
    assert_eq!(head.framing, BodyFraming::Length(12));
    assert!(!head.close);
    assert_eq!(head.content_type.as_deref(), Some(&b"application/json"[..]));
    assert_eq!(
        client,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\nrequest-id: r1\r\nx-toolwarden-repaired: 2\r\n\r\n"
    );
    let (head, client) = response(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        ClientHeadExtras { repaired: 0, close: true },
    );
    assert_eq!(head.framing, BodyFraming::Chunked);
    assert!(head.close);
    assert_eq!(
        client,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    );
    let (head, client) = response(
        b"HTTP/1.0 200 OK\r\ncontent-length: 3\r\n\r\n",
        Default::default(),
    );
    assert!(head.close, "HTTP/1.0 without keep-alive closes");
    assert!(client.starts_with("HTTP/1.1 200 OK\r\n"));
    let (head, client) = response(b"HTTP/1.1 529 Overloaded\r\n\r\n", Default::default());
    assert_eq!(head.framing, BodyFraming::Close);
    assert_eq!(
        client,
        "HTTP/1.1 529 Overloaded\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    let (head, _) = response(b"HTTP/1.1 204 No Content\r\n\r\n", Default::default());
    assert_eq!(head.framing, BodyFraming::Empty);
    assert!(matches!(
        parse_response(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n",
            Default::default()
        ),
        ResponseParse::Informational(25)
    ));
    assert!(matches!(
        parse_response(
            b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
            Default::default()
        ),
        ResponseParse::Invalid(_)
    ));
    assert!(matches!(
        parse_response(b"HTTP/1.1 200", Default::default()),
        ResponseParse::Partial
    ));
    assert!(matches!(
        parse_response(b"SSH-2.0\r\n\r\n", Default::default()),
        ResponseParse::Invalid(_)
    ));
}

/// A length given twice, or as a list of the same number (RFC 9110 §8.6;
/// hyper's client reads it), is that length, and the client gets it as one
/// number (Python's h11 and Node's llhttp refuse a list). Different ones
/// are no length.
#[test]
fn a_length_list_of_one_number_is_that_length() {
    let (head, client) = response(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nx-a: 1\r\ncontent-length: 5\r\n\r\nhello",
        Default::default(),
    );
    assert_eq!(head.framing, BodyFraming::Length(5));
    assert_eq!(
        client,
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nx-a: 1\r\n\r\n"
    );
    assert!(matches!(
        parse_response(
            b"HTTP/1.1 200 OK\r\ncontent-length: 5, 6\r\n\r\n",
            Default::default()
        ),
        ResponseParse::Invalid(_)
    ));
}

/// A transfer coding frames the body whatever the `content-length`s say,
/// before or after it (RFC 9112 §6.3; hyper's client reads them so), and
/// the client gets no length; without one, an invalid or conflicting
/// length is an invalid head.
#[test]
fn a_transfer_coding_beats_an_invalid_or_conflicting_length() {
    for raw in [
        &b"HTTP/1.1 200 OK\r\ncontent-length: abc\r\ntransfer-encoding: chunked\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\ncontent-length: 9\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n",
    ] {
        let (head, client) = response(raw, Default::default());
        assert_eq!(head.framing, BodyFraming::Chunked);
        assert_eq!(
            client,
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
            "{}",
            String::from_utf8_lossy(raw)
        );
    }
    for raw in [
        &b"HTTP/1.1 200 OK\r\ncontent-length: abc\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\ncontent-length: abc\r\ncontent-length: 3\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 9\r\n\r\n",
    ] {
        assert!(
            matches!(
                parse_response(raw, Default::default()),
                ResponseParse::Invalid(_)
            ),
            "{}",
            String::from_utf8_lossy(raw)
        );
    }
}

/// A body in a transfer coding other than chunked, chunked over it or
/// not, is not relayed (the exchange answers 502 naming it); one with no
/// body (204) has nothing to relay.
#[test]
fn a_transfer_coding_other_than_chunked_is_not_relayed() {
    for (raw, coding) in [
        (
            &b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n"[..],
            "gzip",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "gzip",
        ),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntransfer-encoding: br\r\n\r\n",
            "br",
        ),
    ] {
        match parse_response(raw, Default::default()) {
            ResponseParse::Unrelayed(named) => assert_eq!(named, coding),
            other => panic!("{other:?}"),
        }
    }
    let (head, _) = response(
        b"HTTP/1.1 204 No Content\r\ntransfer-encoding: gzip\r\n\r\n",
        Default::default(),
    );
    assert_eq!(head.framing, BodyFraming::Empty);
    // HTTP/1.0 has no transfer codings (RFC 9112 §6.1): faulty framing.
    assert!(matches!(
        parse_response(
            b"HTTP/1.0 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
            Default::default()
        ),
        ResponseParse::Invalid(why) if why.contains("HTTP/1.0")
    ));
}

/// A status code below 100 is no HTTP status (RFC 9110 §15: 100 to 599;
/// hyper's client refuses one): a clear error, not a status line of two
/// digits relayed to the client.
#[test]
fn a_status_below_100_is_invalid() {
    for raw in [
        &b"HTTP/1.1 099 Odd\r\ncontent-length: 2\r\n\r\nok"[..],
        b"HTTP/1.1 000 \r\n\r\n",
    ] {
        match parse_response(raw, Default::default()) {
            ResponseParse::Invalid(why) => assert!(why.contains("status"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}

/// A head past [`MAX_HEAD`] is hyper's (a request: 431 there) or too
/// large (a response: 502) also when it arrived whole before its first
/// parse: how many of its bytes one read brings (the read size, the
/// client's writes) does not decide the path.
#[test]
fn a_whole_head_past_the_limit_is_not_taken() {
    let long = "a".repeat(MAX_HEAD);
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Long: {long}\r\n\
         Content-Length: 2\r\n\r\n{{}}"
    );
    assert!(matches!(parse(request.as_bytes()), RequestParse::Fallback));
    let just = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n";
    let pad = "a".repeat(MAX_HEAD - just.len() - "X-Pad: \r\n".len());
    let at_limit = just.replace("Content-Length", &format!("X-Pad: {pad}\r\nContent-Length"));
    assert_eq!(at_limit.len(), MAX_HEAD);
    fast(format!("{at_limit}{{}}").as_bytes());
    let response = format!("HTTP/1.1 200 OK\r\nX-Long: {long}\r\nContent-Length: 2\r\n\r\nok");
    match parse_response(response.as_bytes(), Default::default()) {
        ResponseParse::Invalid(why) => assert!(why.contains("too large"), "{why}"),
        other => panic!("{other:?}"),
    }
}

proptest! {
    /// Any bytes: a clear outcome, never a panic; a head the fast path
    /// takes re-parses, once rewritten, as a request with the same body
    /// length and no hop-by-hop header.
    #[test]
    fn request_heads_never_panic_and_rewrite_cleanly(raw in proptest::collection::vec(any::<u8>(), 0..400)) {
        if let RequestParse::Fast(mut head) = parse(&raw) {
            finish_upstream_head(&mut head.upstream_head, 3);
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut req = httparse::Request::new(&mut headers);
            let parsed = req.parse(&head.upstream_head);
            prop_assert!(matches!(parsed, Ok(httparse::Status::Complete(_))));
            prop_assert!(req.headers.iter().all(|h| !h.name.eq_ignore_ascii_case("connection")));
        }
    }

    /// Generated requests with random headers: the fast path keeps every
    /// end-to-end header, in order.
    #[test]
    fn end_to_end_headers_are_kept_in_order(
        headers in proptest::collection::vec(("[a-z][a-z0-9-]{0,12}", "[ -~]{0,20}"), 0..12),
        body in 0u64..100_000,
    ) {
        let mut raw = b"POST /v1/chat/completions HTTP/1.1\r\n".to_vec();
        for (name, value) in &headers {
            raw.extend_from_slice(format!("x-{name}: {value}\r\n").as_bytes());
        }
        raw.extend_from_slice(format!("content-length: {body}\r\n\r\n").as_bytes());
        let head = fast(&raw);
        prop_assert_eq!(head.body_len, body);
        let text = String::from_utf8(head.upstream_head).unwrap();
        let mut at = 0;
        for (name, value) in &headers {
            let line = format!("x-{name}: {}\r\n", value.trim());
            let found = text[at..].find(&line);
            prop_assert!(found.is_some(), "{} missing", line);
            at += found.unwrap_or(0) + line.len();
        }
    }

    /// Any status and headers: a head relayed to the client is a valid
    /// HTTP/1.1 response head with the upstream's status.
    #[test]
    fn client_heads_are_valid_response_heads(
        status in 0u16..1000,
        reason in "[ -~]{0,12}",
        headers in proptest::collection::vec(("[a-z][a-z0-9-]{0,12}", "[!-~]{0,20}"), 0..6),
    ) {
        let mut raw = format!("HTTP/1.1 {status:03} {reason}\r\n");
        for (name, value) in &headers {
            raw.push_str(&format!("x-{name}: {value}\r\n"));
        }
        raw.push_str("\r\n");
        if let ResponseParse::Head(head, client) = parse_response(raw.as_bytes(), Default::default()) {
            let mut parsed = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut res = httparse::Response::new(&mut parsed);
            prop_assert!(matches!(res.parse(&client), Ok(httparse::Status::Complete(n)) if n == client.len()));
            prop_assert_eq!(res.code, Some(head.status));
            prop_assert!(http::StatusCode::from_u16(head.status).is_ok(), "{}", head.status);
        }
    }

    /// Any response bytes: a clear outcome, never a panic.
    #[test]
    fn response_heads_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_response(&raw, ClientHeadExtras { repaired: 1, close: true });
    }
}

/// A head sent a byte at a time: parsed again only when a line has ended
/// (each read's parse of the whole head was O(n²) in it), and it is found
/// as a parse on every read finds it.
#[test]
fn a_head_read_a_byte_at_a_time_is_parsed_once_a_line() {
    let mut raw = b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n".to_vec();
    for i in 0..90 {
        raw.extend_from_slice(format!("x-pad-{i}: {}\r\n", "p".repeat(600)).as_bytes());
    }
    raw.extend_from_slice(b"content-length: 2\r\n\r\n{}");
    assert!(raw.len() < MAX_HEAD);
    let lines = raw.iter().filter(|&&b| b == b'\n').count();
    let (mut parsed, mut parses) = (0, 0);
    let mut head = None;
    for end in 1..=raw.len() {
        let buf = &raw[..end];
        if !worth_parsing(buf, parsed) {
            continue;
        }
        parses += 1;
        match parse(buf) {
            RequestParse::Partial => parsed = buf.len(),
            RequestParse::Fast(h) => {
                head = Some((end, h.len));
                break;
            }
            RequestParse::Fallback => panic!("a valid head"),
        }
    }
    // Complete at its blank line, as a parse per read finds it.
    let blank = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(head, Some((blank, blank)));
    assert!(parses <= lines + 1, "{parses} parses of {lines} lines");
    // Bytes past the limit, and a first read, are parsed whatever they end with.
    assert!(worth_parsing(&vec![b'a'; MAX_HEAD], MAX_HEAD - 1));
    assert!(worth_parsing(b"GET", 0));
    assert!(!worth_parsing(b"GET /", 3));
    assert!(!worth_parsing(b"", 0));
}
