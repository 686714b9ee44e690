//! Whether a request's headers name this machine: the `Host` a loopback
//! client asked for (the admin routes' guard against DNS rebinding,
//! `dashboard::access`), and whether a request may carry the gateway's own
//! cloud credentials ([`lends_credentials`], `proxy::cloud`).

use std::net::IpAddr;

use http::{HeaderMap, header};

/// Whether `ip` is a loopback address (an IPv4-mapped one too).
pub(crate) fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Whether a `Host` value (`name[:port]`, `[v6][:port]`) names this machine
/// in a way no one else's DNS can: `localhost` or a name under it (RFC
/// 6761), or a loopback address literal.
pub(crate) fn names_loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(rest, |(v6, _)| v6),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let name = name.trim_end_matches('.');
    if name.eq_ignore_ascii_case("localhost")
        || name
            .get(name.len().saturating_sub(".localhost".len())..)
            .is_some_and(|tail| tail.eq_ignore_ascii_case(".localhost"))
    {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(is_loopback)
}

/// Whether a request may go upstream with the gateway's own cloud
/// credentials (its Vertex token, its SigV4 signature): not when a web
/// page elsewhere sent it through the user's browser. Agent programs send
/// no `Origin`; a browser sends one with every cross-origin request and
/// every `POST`, so an `Origin` that is not this machine's (`null`
/// included) is a page of another site. A page can also rebind its own
/// name to 127.0.0.1 (DNS rebinding), after which its requests are
/// same-origin (a `GET` carries no `Origin`) and their answers readable to
/// it; they name the page's host, so a gateway bound to a loopback address
/// lends its credentials only to requests for a loopback host (`host`: the
/// `Host` header, else HTTP/2's `:authority`; none counts as loopback), as
/// its admin routes answer only those. A gateway bound to another address
/// cannot tell its names from others' and takes any host.
pub(crate) fn lends_credentials(
    loopback_bind: bool,
    headers: &HeaderMap,
    authority: Option<&str>,
) -> bool {
    if foreign_origin(headers) {
        return false;
    }
    if !loopback_bind {
        return true;
    }
    match headers.get(header::HOST) {
        Some(value) => value.to_str().is_ok_and(names_loopback),
        None => authority.is_none_or(names_loopback),
    }
}

/// Whether a request carries the `Origin` of a page that is not this
/// machine's (`null` included): a browser sends one with every
/// cross-origin request and every `POST`; agent programs send none.
fn foreign_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return false;
    };
    let host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, host)| host);
    !host.is_some_and(names_loopback)
}

/// Whether a request is a form or text `POST` that a web page of another
/// site sent through the user's browser: a foreign `Origin`, and a body
/// the browser sends without asking the server first (no `content-type`,
/// or `text/plain`, `application/x-www-form-urlencoded`,
/// `multipart/form-data`: a "simple" request, the cross-site request
/// forgery's shape). No LLM client sends one (their bodies are JSON, and a
/// page's JSON `POST` to another site is preflighted, which the provider
/// answers); the gateway refuses it rather than forward it and record the
/// tool calls and failures it makes up.
pub(crate) fn is_cross_site_form(method: &http::Method, headers: &HeaderMap) -> bool {
    if method != http::Method::POST || !foreign_origin(headers) {
        return false;
    }
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return true;
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ]
    .iter()
    .any(|simple| essence.eq_ignore_ascii_case(simple))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn loopback_names() {
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "a.localhost",
            "127.0.0.1:1",
            "127.9.9.9",
            "[::1]:8080",
            "[::ffff:127.0.0.1]",
            "localhost.",
        ] {
            assert!(names_loopback(host), "{host}");
        }
        for host in [
            "attacker.example",
            "localhost.attacker.example",
            "127.0.0.1.nip.io",
            "10.0.0.1:8080",
            "[::2]",
            "",
        ] {
            assert!(!names_loopback(host), "{host}");
        }
    }

    #[test]
    fn credentials_are_lent_to_this_machines_programs_only() {
        // Agent programs: no Origin, a loopback Host (or none).
        for h in [
            &[][..],
            &[("host", "127.0.0.1:8080")],
            &[("host", "localhost")],
            &[("host", "[::1]:8080"), ("origin", "http://localhost:3000")],
        ] {
            assert!(lends_credentials(true, &headers(h), None), "{h:?}");
            assert!(lends_credentials(false, &headers(h), None), "{h:?}");
        }
        // DNS rebinding: the page's own name.
        let rebound = headers(&[("host", "attacker.example:8080")]);
        assert!(!lends_credentials(true, &rebound, None));
        // HTTP/2: the `:authority`.
        assert!(!lends_credentials(
            true,
            &headers(&[]),
            Some("attacker.example")
        ));
        assert!(lends_credentials(
            true,
            &headers(&[]),
            Some("127.0.0.1:8080")
        ));
        // A gateway bound elsewhere takes any host...
        assert!(lends_credentials(false, &rebound, None));
        // ... but no page of another site, bound anywhere.
        for origin in [
            "https://attacker.example",
            "http://attacker.example:8080",
            "null",
            "http://127.0.0.1.nip.io",
        ] {
            let h = headers(&[("host", "127.0.0.1:8080"), ("origin", origin)]);
            assert!(!lends_credentials(true, &h, None), "{origin}");
            assert!(!lends_credentials(false, &h, None), "{origin}");
        }
        // A Host that is not text is no loopback name.
        let mut h = HeaderMap::new();
        h.insert(
            header::HOST,
            http::HeaderValue::from_bytes(b"\xffx").unwrap(),
        );
        assert!(!lends_credentials(true, &h, None));
    }

    #[test]
    fn a_pages_form_or_text_post_is_cross_site() {
        let post = http::Method::POST;
        let page = "https://attacker.example";
        for ct in [
            None,
            Some("text/plain"),
            Some("text/plain;charset=UTF-8"),
            Some("Application/X-WWW-Form-Urlencoded"),
            Some("multipart/form-data; boundary=x"),
        ] {
            let mut pairs = vec![("origin", page)];
            pairs.extend(ct.map(|ct| ("content-type", ct)));
            assert!(is_cross_site_form(&post, &headers(&pairs)), "{ct:?}");
        }
        // JSON from a page is preflighted; agents send no Origin; a page of
        // this machine is the user's own; a GET makes no records.
        let json = headers(&[("origin", page), ("content-type", "application/json")]);
        assert!(!is_cross_site_form(&post, &json));
        let agent = headers(&[("content-type", "text/plain")]);
        assert!(!is_cross_site_form(&post, &agent));
        let own = headers(&[
            ("origin", "http://localhost:3000"),
            ("content-type", "text/plain"),
        ]);
        assert!(!is_cross_site_form(&post, &own));
        let get = headers(&[("origin", page)]);
        assert!(!is_cross_site_form(&http::Method::GET, &get));
        assert!(is_cross_site_form(&post, &headers(&[("origin", "null")])));
    }
}
