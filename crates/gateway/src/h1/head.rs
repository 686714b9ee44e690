//! Message heads on the fast path: the client's request head is parsed
//! (httparse, borrowed, no allocation per header) and rewritten into the
//! upstream request head in one go; the upstream's response head into the
//! client's. Header bytes pass as they came — names keep their case, values
//! their bytes, the order is kept — except:
//!
//! - hop-by-hop headers ([`crate::proxy::headers::is_hop_by_hop`], and any
//!   named in `connection`) are dropped in both directions, as on the hyper
//!   path; so is the gateway's own `x-toolwarden-lend-token` (the
//!   upstream request never carries it);
//! - the upstream request gets `host` from the upstream URL and a
//!   `content-length` of the body actually sent (it differs from the
//!   client's after a repair), and loses `content-encoding` when the body
//!   sent is one the gateway decoded from the client's coding and repaired;
//! - the client's response gets `transfer-encoding: chunked` when the
//!   upstream's body has no length (the fast path re-frames such bodies so
//!   that an error event can be appended), `x-toolwarden-repaired` after a
//!   repair, and `connection: close` when the gateway will close; a
//!   `content-length` given as several lines or a list of one number
//!   (`5, 5`) reaches it as one line of that number, and none beside a
//!   `transfer-encoding` (which frames the body whatever the length says,
//!   even one that is no number: RFC 9112 §6.3, as hyper's client reads it).
//!
//! A response in a transfer coding other than chunked is not relayed
//! ([`ResponseParse::Unrelayed`], as on hyper's path).
//!
//! A request head the fast path does not take (see [`parse_request`])
//! is left to hyper, which answers malformed ones with its own errors.

use crate::{
    AllowedHosts, Upstreams, observe::client_headers::ClientHeaders, pipeline::headers,
    routes::ProxyRoute,
};

/// Most headers a head may carry (hyper's default too).
pub(crate) const MAX_HEADERS: usize = 100;

/// Longest head accepted before the request is left to hyper (which
/// answers 431). An upstream's response head longer than this is a 502
/// ("response head too large"), where hyper's client reads up to ~400 KB:
/// left so, as no real upstream comes near it (the providers' heads are
/// 1–3 KB, cookies included; nginx in front of one refuses heads past
/// 4–8 KB, Envoy past 60 KiB) and the clients could not read such a head
/// anyway (Python's h11, under the OpenAI and Anthropic SDKs, and Node's
/// HTTP parser stop at 16 KiB).
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// A request head the fast path takes.
#[derive(Debug)]
pub(crate) struct RequestHead {
    /// Bytes of the head in the buffer (through the blank line).
    pub len: usize,
    /// The route (a dialect route: the fast path takes only those).
    pub route: ProxyRoute,
    /// The path without the query.
    pub path: String,
    /// `content-length` (0 without one).
    pub body_len: u64,
    /// The client asked to close after this exchange.
    pub close: bool,
    /// The session and `traceparent` from the headers.
    pub client: ClientHeaders,
    /// The head for the upstream, all but its `content-length` line and
    /// the final blank line (see [`finish_upstream_head`]).
    pub upstream_head: Vec<u8>,
    /// The client's `content-encoding` (its lines joined as one list), and
    /// where its lines are in `upstream_head`.
    pub content_encoding: Option<ContentEncoding>,
}

/// A request's `content-encoding` on the fast path.
#[derive(Debug, Default)]
pub(crate) struct ContentEncoding {
    /// The value (several lines joined with `, `).
    pub value: Vec<u8>,
    /// The byte ranges of its lines in the upstream head.
    lines: Vec<std::ops::Range<usize>>,
}

impl ContentEncoding {
    /// Take its lines out of `upstream_head` (the gateway forwards a body
    /// it decoded).
    pub(crate) fn remove_from(&self, upstream_head: &mut Vec<u8>) {
        for line in self.lines.iter().rev() {
            upstream_head.drain(line.clone());
        }
    }
}

/// What [`parse_request`] made of the buffer.
#[derive(Debug)]
pub(crate) enum RequestParse {
    /// A complete head the fast path takes.
    Fast(Box<RequestHead>),
    /// The head is not complete yet.
    Partial,
    /// Anything else (another route, another method, chunked or
    /// `Expect`, HTTP/1.0, HTTP/2, malformed): hyper serves it.
    Fallback,
}

/// Whether the request head at the start of `buf` is worth parsing again,
/// when a parse that saw its first `parsed` bytes found it partial (0: not
/// parsed yet). A partial head completes only with a line end, so the head
/// is parsed again when a `\n` has arrived since, or when it reached
/// [`MAX_HEAD`] (and goes to hyper): a client sending its head a byte at a
/// time costs a parse per line, not a parse of the whole head per read
/// (O(n²) in the head: 64 KiB a byte at a time took 2 GB of scanning).
/// A malformed head still goes to hyper, at its next line end.
pub(crate) fn worth_parsing(buf: &[u8], parsed: usize) -> bool {
    !buf.is_empty()
        && (parsed == 0
            || buf.len() >= MAX_HEAD
            || buf
                .get(parsed..)
                .is_none_or(|new| memchr::memchr(b'\n', new).is_some()))
}

/// Parse the client's request head at the start of `buf`. `hosts`: the
/// gateway's host guard ([`crate::config::Config::host_guard`]); a head
/// naming a host it does not answer is hyper's, whose path refuses it
/// (`crate::rebinding`).
pub(crate) fn parse_request(
    buf: &[u8],
    upstreams: &Upstreams,
    hosts: Option<&AllowedHosts>,
) -> RequestParse {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        // A whole head past the limit is hyper's too, however many of its
        // bytes the reads before this parse happened to bring.
        Ok(httparse::Status::Complete(len)) if len <= MAX_HEAD => len,
        Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => return RequestParse::Partial,
        _ => return RequestParse::Fallback,
    };
    if req.version != Some(1) || req.method != Some("POST") {
        return RequestParse::Fallback;
    }
    let Some(target) = req.path.filter(|p| p.starts_with('/')) else {
        return RequestParse::Fallback;
    };
    // A fragment is the client's own (RFC 9110 §4.2.5): never sent.
    let target = target.split('#').next().unwrap_or(target);
    let path = target.split('?').next().unwrap_or(target);
    let Some(route) = ProxyRoute::dialect_post(path) else {
        return RequestParse::Fallback;
    };
    let Some(facts) = Facts::of(req.headers).filter(|f| !f.transfer_encoding && !f.for_hyper)
    else {
        return RequestParse::Fallback;
    };
    if !admitted_hosts(req.headers, hosts) {
        return RequestParse::Fallback;
    }
    // Cloud routes are hyper's (never `dialect_post`'s): no fixed upstream.
    let Some(upstream) = route.provider.upstream(upstreams) else {
        return RequestParse::Fallback;
    };
    let mut upstream_head = Vec::with_capacity(len + 64);
    upstream_head.extend_from_slice(b"POST ");
    upstream_head.extend_from_slice(upstream.prefix().as_bytes());
    upstream_head.extend_from_slice(target.as_bytes());
    upstream_head.extend_from_slice(b" HTTP/1.1\r\nhost: ");
    upstream_head.extend_from_slice(upstream.authority().as_bytes());
    upstream_head.extend_from_slice(b"\r\n");
    let mut content_encoding: Option<ContentEncoding> = None;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("host")
            || h.name.eq_ignore_ascii_case("content-length")
            || h.name.eq_ignore_ascii_case(crate::local::LEND_TOKEN_HEADER)
            || facts.is_hop_by_hop(h.name)
        {
            continue;
        }
        let start = upstream_head.len();
        push_header(&mut upstream_head, h.name.as_bytes(), h.value);
        if h.name.eq_ignore_ascii_case("content-encoding") {
            let ce = content_encoding.get_or_insert_with(ContentEncoding::default);
            if !ce.value.is_empty() {
                ce.value.extend_from_slice(b", ");
            }
            ce.value.extend_from_slice(h.value);
            ce.lines.push(start..upstream_head.len());
        }
    }
    let client = ClientHeaders::from_header_values(|name| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    });
    RequestParse::Fast(Box::new(RequestHead {
        len,
        route,
        path: path.to_string(),
        body_len: facts.content_length.unwrap_or(0),
        close: facts.close,
        client,
        upstream_head,
        content_encoding,
    }))
}

/// Whether every `Host` of a head is one the gateway answers
/// ([`crate::local::answers_host`]).
fn admitted_hosts(headers: &[httparse::Header<'_>], hosts: Option<&AllowedHosts>) -> bool {
    let Some(allowed) = hosts else {
        return true;
    };
    headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"))
        .all(|h| std::str::from_utf8(h.value).is_ok_and(|v| crate::local::answers_host(allowed, v)))
}

/// End the upstream head: its `content-length` and the blank line.
pub(crate) fn finish_upstream_head(head: &mut Vec<u8>, body_len: usize) {
    head.extend_from_slice(b"content-length: ");
    head.extend_from_slice(itoa(body_len as u64).as_bytes());
    head.extend_from_slice(b"\r\n\r\n");
}

/// How a response body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    /// No body (`204`, `304`).
    Empty,
    /// `content-length`.
    Length(u64),
    /// `transfer-encoding: chunked`.
    Chunked,
    /// Until the upstream closes the connection.
    Close,
}

/// A parsed upstream response head.
#[derive(Debug)]
pub(crate) struct ResponseHead {
    /// Bytes of the head in the buffer.
    pub len: usize,
    /// The status code.
    pub status: u16,
    /// How the body is delimited.
    pub framing: BodyFraming,
    /// The upstream will close the connection after this response.
    pub close: bool,
    /// `content-type`, raw.
    pub content_type: Option<Vec<u8>>,
    /// `content-encoding`, raw.
    pub content_encoding: Option<Vec<u8>>,
    /// The idle timeout the upstream announced for the connection
    /// (`keep-alive: timeout=N`: [`crate::upstream::keep_alive_timeout`]).
    pub keep_alive: Option<std::time::Duration>,
}

/// What [`parse_response`] made of the buffer.
#[derive(Debug)]
pub(crate) enum ResponseParse {
    /// A final response head, and the head for the client.
    Head(ResponseHead, Vec<u8>),
    /// An informational (1xx) head of this many bytes: skipped, as hyper's
    /// client does.
    Informational(usize),
    /// Not complete yet.
    Partial,
    /// Not an HTTP/1.x response head the gateway can relay.
    Invalid(String),
    /// A body in this transfer coding, other than chunked, which the
    /// gateway does not relay
    /// ([`headers::unrelayed_transfer_coding`]).
    Unrelayed(String),
}

/// What the client's head must say besides the upstream's headers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientHeadExtras {
    /// `x-toolwarden-repaired: N` when non-zero.
    pub repaired: usize,
    /// Add `connection: close`.
    pub close: bool,
}

/// Parse the upstream's response head at the start of `buf` and write the
/// client's.
pub(crate) fn parse_response(buf: &[u8], extras: ClientHeadExtras) -> ResponseParse {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut res = httparse::Response::new(&mut headers);
    let len = match res.parse(buf) {
        Ok(httparse::Status::Complete(len)) if len <= MAX_HEAD => len,
        Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => return ResponseParse::Partial,
        Ok(httparse::Status::Complete(_) | httparse::Status::Partial) => {
            return ResponseParse::Invalid("response head too large".into());
        }
        Err(e) => return ResponseParse::Invalid(format!("invalid response head: {e}")),
    };
    let status = res.code.unwrap_or(0);
    // Three digits, from 100 (RFC 9110 §15; hyper's client refuses less):
    // `099` is no status to relay.
    if status < 100 {
        return ResponseParse::Invalid(format!("invalid status code {status:03}"));
    }
    if (100..200).contains(&status) {
        if status == 101 {
            return ResponseParse::Invalid("unexpected 101 Switching Protocols".into());
        }
        return ResponseParse::Informational(len);
    }
    let Some(facts) = Facts::of(res.headers) else {
        return ResponseParse::Invalid("invalid content-length".into());
    };
    let http10 = res.version == Some(0);
    // HTTP/1.0 has no transfer codings: its framing is faulty (RFC 9112
    // §6.1), as hyper's client holds.
    if http10 && facts.transfer_encoding && status != 204 && status != 304 {
        return ResponseParse::Invalid("transfer-encoding in an HTTP/1.0 response".into());
    }
    let framing = if status == 204 || status == 304 {
        BodyFraming::Empty
    } else if facts.chunked_last {
        BodyFraming::Chunked
    } else if facts.transfer_encoding {
        // A transfer coding other than chunked last: read to the close.
        BodyFraming::Close
    } else if let Some(n) = facts.content_length {
        BodyFraming::Length(n)
    } else {
        BodyFraming::Close
    };
    if framing != BodyFraming::Empty
        && facts.transfer_encoding
        && let Some(coding) = headers::unrelayed_transfer_coding(
            res.headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case("transfer-encoding"))
                .map(|h| h.value),
        )
    {
        return ResponseParse::Unrelayed(coding);
    }
    let mut client = Vec::with_capacity(len + 64);
    client.extend_from_slice(b"HTTP/1.1 ");
    client.extend_from_slice(itoa(u64::from(status)).as_bytes());
    client.push(b' ');
    client.extend_from_slice(res.reason.unwrap_or("").as_bytes());
    client.extend_from_slice(b"\r\n");
    let mut content_type = None;
    let mut content_encoding = None;
    let mut keep_alive = None;
    let reframed = matches!(framing, BodyFraming::Chunked | BodyFraming::Close);
    // One `content-length` line of one number: the lines and lists of the
    // same number an upstream may send (`Facts` read them) become one, as
    // on hyper's path (`headers::for_client`).
    // None at all beside a transfer coding (as `headers::for_client`).
    let mut length_sent = reframed || facts.transfer_encoding;
    for h in res.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-type") {
            content_type.get_or_insert_with(|| h.value.to_vec());
        } else if h.name.eq_ignore_ascii_case("content-encoding") {
            content_encoding.get_or_insert_with(|| h.value.to_vec());
        } else if h.name.eq_ignore_ascii_case("keep-alive") && keep_alive.is_none() {
            keep_alive = crate::upstream::keep_alive_timeout(h.value);
        }
        if facts.is_hop_by_hop(h.name) {
            continue;
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            if std::mem::replace(&mut length_sent, true) {
                continue;
            }
            if let Some(n) = facts.content_length
                && !h.value.iter().all(u8::is_ascii_digit)
            {
                push_header(&mut client, h.name.as_bytes(), itoa(n).as_bytes());
                continue;
            }
        }
        push_header(&mut client, h.name.as_bytes(), h.value);
    }
    if matches!(framing, BodyFraming::Chunked | BodyFraming::Close) {
        client.extend_from_slice(b"transfer-encoding: chunked\r\n");
    }
    if extras.repaired > 0 {
        push_header(
            &mut client,
            crate::pipeline::REPAIRED_HEADER.as_bytes(),
            itoa(extras.repaired as u64).as_bytes(),
        );
    }
    if extras.close {
        client.extend_from_slice(b"connection: close\r\n");
    }
    client.extend_from_slice(b"\r\n");
    let close = facts.close || (http10 && !facts.keep_alive) || framing == BodyFraming::Close;
    ResponseParse::Head(
        ResponseHead {
            len,
            status,
            framing,
            close,
            content_type,
            content_encoding,
            keep_alive,
        },
        client,
    )
}

/// What the framing and hop-by-hop headers of a head say.
#[derive(Debug, Default)]
struct Facts<'h> {
    content_length: Option<u64>,
    transfer_encoding: bool,
    chunked_last: bool,
    /// `expect`, `upgrade` or `origin` (a browser's request, checked by
    /// `local::is_cross_site_form`): requests with these are hyper's.
    for_hyper: bool,
    close: bool,
    keep_alive: bool,
    /// Names listed in `connection` (other than `close` / `keep-alive`,
    /// and `content-length`: the framing is not the sender's to withhold).
    listed: Vec<&'h [u8]>,
}

impl<'h> Facts<'h> {
    /// `None` for conflicting or invalid `content-length`s (the only
    /// reason) without a `transfer-encoding`, which frames the message
    /// whatever its length says, wherever the two come (RFC 9112 §6.3;
    /// hyper's client reads them so, and a request with a transfer coding
    /// is hyper's).
    fn of(headers: &'h [httparse::Header<'h>]) -> Option<Facts<'h>> {
        let mut facts = Facts::default();
        let mut bad_length = false;
        for h in headers {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-length") {
                match headers::content_length(h.value) {
                    Some(n) if facts.content_length.is_none_or(|m| m == n) => {
                        facts.content_length = Some(n);
                    }
                    _ => bad_length = true,
                }
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                // Bytes, not text: a value with a byte that is not UTF-8
                // is still a list of tokens.
                facts.transfer_encoding = true;
                facts.chunked_last = h
                    .value
                    .rsplit(|&b| b == b',')
                    .next()
                    .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            } else if name.eq_ignore_ascii_case("connection") {
                let tokens = h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii);
                for token in tokens.filter(|t| !t.is_empty()) {
                    if token.eq_ignore_ascii_case(b"close") {
                        facts.close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") {
                        facts.keep_alive = true;
                    } else if !token.eq_ignore_ascii_case(b"content-length") {
                        facts.listed.push(token);
                    }
                }
            } else if name.eq_ignore_ascii_case("expect")
                || name.eq_ignore_ascii_case("upgrade")
                || name.eq_ignore_ascii_case("origin")
            {
                facts.for_hyper = true;
            }
        }
        if facts.transfer_encoding {
            facts.content_length = None;
        } else if bad_length {
            return None;
        }
        Some(facts)
    }

    fn is_hop_by_hop(&self, name: &str) -> bool {
        headers::is_hop_by_hop(name)
            || self
                .listed
                .iter()
                .any(|l| name.as_bytes().eq_ignore_ascii_case(l))
    }
}

fn push_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Decimal digits of `n`, without allocating.
fn itoa(mut n: u64) -> Digits {
    let mut digits = Digits {
        buf: [0; 20],
        start: 20,
    };
    loop {
        digits.start -= 1;
        digits.buf[digits.start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return digits;
        }
    }
}

struct Digits {
    buf: [u8; 20],
    start: usize,
}

impl Digits {
    fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

#[cfg(test)]
mod tests;
