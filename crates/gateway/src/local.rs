//! Whether a request's headers name this machine: the `Host` a client
//! asked for ([`foreign_host`]: a gateway bound to a loopback address
//! answers only its loopback names and [`AllowedHosts`], the guard against
//! DNS rebinding, `crate::rebinding`), a loopback `Host` for the admin
//! routes' free pass (`dashboard::access`), and whether a request may carry
//! the gateway's own cloud credentials ([`lends_credentials`], with the
//! operator's [`LendToken`]; `proxy::cloud`).

mod allowed;
mod lend;
pub(crate) mod own;

use std::{borrow::Cow, net::IpAddr};

use http::{HeaderMap, header};

pub use self::allowed::AllowedHosts;
pub use self::lend::{LEND_TOKEN_HEADER, LendToken};
pub(crate) use self::lend::{Withheld, constant_time_eq, lends_credentials};

/// Whether `ip` is a loopback address (an IPv4-mapped one too).
pub(crate) fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// The name of a `Host` value (`name[:port]`, `[v6][:port]`): without its
/// port, its brackets or a final dot.
pub(crate) fn host_name(host: &str) -> &str {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(rest, |(v6, _)| v6),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.strip_suffix('.').unwrap_or(name)
}

/// Whether a `Host` value (`name[:port]`, `[v6][:port]`) names this machine
/// in a way no one else's DNS can: `localhost` or a name under it (RFC
/// 6761), or a loopback address literal.
pub(crate) fn names_loopback(host: &str) -> bool {
    let name = host_name(host);
    if name.eq_ignore_ascii_case("localhost")
        || name
            .get(name.len().saturating_sub(".localhost".len())..)
            .is_some_and(|tail| tail.eq_ignore_ascii_case(".localhost"))
    {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(is_loopback)
}

/// The host a request names that the gateway does not answer, if it names
/// one: `guard` is the gateway's [`AllowedHosts`] when it is bound to a
/// loopback address (`None` when bound to another: the operator chose to
/// expose it, and it cannot tell its names from others'). Every `Host`
/// header and the request target's authority (HTTP/2's `:authority`, an
/// absolute-form HTTP/1 target) must be a loopback name
/// ([`names_loopback`]) or allowed; a request that names no host is this
/// machine's (only a program sends one: every browser names the host). A
/// web page whose name its DNS resolves to 127.0.0.1 (DNS rebinding) names
/// its own host, and is refused. A `Host` that is not text comes back
/// replaced character by character.
pub(crate) fn foreign_host<'r>(
    guard: Option<&AllowedHosts>,
    headers: &'r HeaderMap,
    authority: Option<&'r str>,
) -> Option<Cow<'r, str>> {
    let allowed = guard?;
    if allowed.allows_any() {
        return None;
    }
    let admitted = |host: &str| answers_host(allowed, host);
    for value in headers.get_all(header::HOST) {
        match value.to_str() {
            Ok(host) if admitted(host) => {}
            Ok(host) => return Some(Cow::Borrowed(host)),
            Err(_) => return Some(String::from_utf8_lossy(value.as_bytes())),
        }
    }
    authority.filter(|host| !admitted(host)).map(Cow::Borrowed)
}

/// Whether a gateway bound to a loopback address that allows `allowed`
/// answers a request for `host` (a `Host` value): a loopback name
/// ([`names_loopback`]) or an allowed one.
pub(crate) fn answers_host(allowed: &AllowedHosts, host: &str) -> bool {
    allowed.allows_any() || names_loopback(host) || allowed.admits(host_name(host))
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

    /// DNS rebinding: a loopback-bound gateway answers its loopback names
    /// and the allowed ones, by `Host` and by `:authority`; one bound
    /// elsewhere, or allowing `*`, answers any.
    #[test]
    fn a_loopback_bound_gateway_answers_only_its_names() {
        let none = AllowedHosts::default();
        let some = AllowedHosts::parse(&["gw.example".to_string()]).unwrap();
        let any = AllowedHosts::parse(&["*".to_string()]).unwrap();
        for h in [
            &[][..],
            &[("host", "127.0.0.1:8080")],
            &[("host", "localhost")],
            &[("host", "app.localhost:5173")],
            &[("host", "[::1]:8080")],
        ] {
            assert_eq!(foreign_host(Some(&none), &headers(h), None), None, "{h:?}");
        }
        let rebound = headers(&[("host", "attacker.example:8080")]);
        assert_eq!(
            foreign_host(Some(&none), &rebound, None).as_deref(),
            Some("attacker.example:8080")
        );
        assert_eq!(
            foreign_host(Some(&none), &headers(&[]), Some("attacker.example")).as_deref(),
            Some("attacker.example")
        );
        assert_eq!(
            foreign_host(Some(&none), &headers(&[]), Some("127.0.0.1:8080")),
            None
        );
        // A loopback Host does not cover a foreign target, nor one Host another.
        let local = headers(&[("host", "localhost")]);
        assert!(foreign_host(Some(&none), &local, Some("attacker.example")).is_some());
        let both = headers(&[("host", "localhost"), ("host", "attacker.example")]);
        assert!(foreign_host(Some(&none), &both, None).is_some());
        // Allowed names pass, with any port.
        let gw = headers(&[("host", "GW.example:443")]);
        assert_eq!(foreign_host(Some(&some), &gw, None), None);
        assert!(foreign_host(Some(&some), &rebound, None).is_some());
        assert_eq!(foreign_host(Some(&any), &rebound, None), None);
        assert_eq!(foreign_host(None, &rebound, None), None);
        // A Host that is not text is no loopback name.
        let mut h = HeaderMap::new();
        h.insert(
            header::HOST,
            http::HeaderValue::from_bytes(b"\xffx").unwrap(),
        );
        assert_eq!(
            foreign_host(Some(&none), &h, None).as_deref(),
            Some("\u{fffd}x")
        );
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
