//! [`Resolve`]: upstream names the gateway reaches at a fixed address
//! (setting `resolve`, as curl's `--resolve HOST:PORT:ADDR`), read and
//! checked once with the rest of the config, and [`FixedAddrs`], the
//! connector layer that applies it to hyper's client. The fast path's
//! pool (and with it every WebSocket's upstream) asks [`Resolve::get`]
//! itself. Only the address changes: the URL's name is still what TLS
//! sends as SNI and checks the certificate against, and the `Host` the
//! request names; the pool keys connections by it too.

use std::{
    net::{IpAddr, SocketAddr},
    task::{Context, Poll},
};

use http::Uri;

/// Upstream `HOST:PORT`s reached at a fixed address instead of looking
/// the name up (setting `resolve`, each entry `HOST:PORT:ADDR` as curl's
/// `--resolve`, where ADDR is an IP address, an IPv6 one in brackets, and
/// may add `:PORT` to connect to another port than the URL's). For
/// private endpoints (Azure Private Link, Google Private Service Connect,
/// AWS VPC endpoints) and for tests that reach a provider's host at a
/// local server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolve {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// Lower case, without a final dot.
    host: String,
    port: u16,
    addr: SocketAddr,
}

/// hyper's connector `C` with [`Resolve`] applied: a connection to a name
/// and port it lists goes to its address (the URI handed on names the
/// address; SNI and the certificate check, above this layer, keep the
/// name).
#[derive(Debug, Clone)]
pub struct FixedAddrs<C> {
    inner: C,
    resolve: Resolve,
}

// === impl Resolve ===

impl Resolve {
    /// Reads the entries of `resolve`; a malformed one is a problem naming
    /// it, as is a second entry for the same `HOST:PORT`.
    pub(crate) fn parse(entries: &[String]) -> Result<Resolve, String> {
        let mut resolve = Resolve::default();
        for entry in entries {
            let (host, port, addr) =
                parse_entry(entry.trim()).map_err(|why| format!("resolve {entry:?}: {why}"))?;
            if resolve.get(&host, port).is_some() {
                return Err(format!(
                    "resolve {entry:?}: {host}:{port} is given more than once"
                ));
            }
            resolve.insert(&host, port, addr);
        }
        Ok(resolve)
    }

    /// Connections to `host` (a name, as in a URL) on `port` go to `addr`
    /// from now on; an earlier entry for them is replaced.
    pub fn insert(&mut self, host: &str, port: u16, addr: SocketAddr) {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.entries.retain(|e| !(e.host == host && e.port == port));
        self.entries.push(Entry { host, port, addr });
    }

    /// The address connections to `host` on `port` go to, if fixed.
    pub fn get(&self, host: &str, port: u16) -> Option<SocketAddr> {
        let host = host.strip_suffix('.').unwrap_or(host);
        self.entries
            .iter()
            .find(|e| e.port == port && e.host.eq_ignore_ascii_case(host))
            .map(|e| e.addr)
    }

    /// The names and ports entries are given for, in the order given.
    pub(crate) fn names(&self) -> impl Iterator<Item = (&str, u16)> + '_ {
        self.entries.iter().map(|e| (e.host.as_str(), e.port))
    }

    /// The ports entries are given for, each once, in the order given.
    pub(crate) fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, e)| !self.entries[..*i].iter().any(|f| f.port == e.port))
            .map(|(_, e)| e.port)
    }

    /// Whether no name is fixed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `uri` naming its fixed address instead of its host, if it has one.
    fn rewrite(&self, uri: &Uri) -> Option<Uri> {
        if self.entries.is_empty() {
            return None;
        }
        let host = uri.host()?;
        let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let addr = self.get(host, port)?;
        let mut parts = http::uri::Parts::default();
        parts.scheme = uri.scheme().cloned();
        parts.authority = addr.to_string().parse().ok();
        parts.path_and_query = Some(http::uri::PathAndQuery::from_static("/"));
        Uri::from_parts(parts).ok()
    }
}

/// `HOST:PORT:ADDR[:PORT]`, ADDR an IP address (IPv6 in brackets).
fn parse_entry(entry: &str) -> Result<(String, u16, SocketAddr), &'static str> {
    const FORM: &str = "expected HOST:PORT:ADDR (ADDR an IP address, an IPv6 one in \
                        brackets, optionally with :PORT), as curl's --resolve";
    let mut parts = entry.splitn(3, ':');
    let (Some(host), Some(port), Some(addr)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(FORM);
    };
    let host = host.trim_end_matches('.');
    if host.is_empty()
        || host.starts_with('[')
        || !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
    {
        return Err("HOST must be a host name (an IP address needs no resolving)");
    }
    if host.parse::<IpAddr>().is_ok() {
        return Err("HOST must be a host name (an IP address needs no resolving)");
    }
    let port = port
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or("PORT must be a port number (1-65535)")?;
    let addr = if let Ok(ip) = addr.parse::<std::net::Ipv4Addr>() {
        SocketAddr::new(IpAddr::V4(ip), port)
    } else if let Some(ip) = addr
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .and_then(|a| a.parse::<std::net::Ipv6Addr>().ok())
    {
        SocketAddr::new(IpAddr::V6(ip), port)
    } else {
        match addr.parse::<SocketAddr>() {
            Ok(a) if a.port() != 0 => a,
            _ => return Err(FORM),
        }
    };
    Ok((host.to_ascii_lowercase(), port, addr))
}

// === impl FixedAddrs ===

impl<C> FixedAddrs<C> {
    pub(crate) fn new(inner: C, resolve: Resolve) -> Self {
        FixedAddrs { inner, resolve }
    }
}

impl<C: tower_service::Service<Uri>> tower_service::Service<Uri> for FixedAddrs<C> {
    type Response = C::Response;
    type Error = C::Error;
    type Future = C::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> C::Future {
        // A new connection only (the pool serves the others); with no
        // entry, one check.
        match self.resolve.rewrite(&uri) {
            Some(fixed) => self.inner.call(fixed),
            None => self.inner.call(uri),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(entries: &[&str]) -> Result<Resolve, String> {
        Resolve::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn entries_are_curls_with_an_optional_port() {
        let r = parse(&[
            "us-central1-aiplatform.googleapis.com:443:127.0.0.1:8443",
            "My-Resource.openai.azure.com.:443:10.1.2.3",
            "bedrock-runtime.us-east-1.amazonaws.com:443:[fd00::7]",
            "api.example.test:8080:[::1]:9000",
        ])
        .unwrap();
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(
            r.get("us-central1-aiplatform.googleapis.com", 443),
            Some(at("127.0.0.1:8443"))
        );
        // Names compare without case or a final dot; the port must match.
        assert_eq!(
            r.get("my-resource.openai.azure.com.", 443),
            Some(at("10.1.2.3:443"))
        );
        assert_eq!(r.get("my-resource.openai.azure.com", 80), None);
        assert_eq!(
            r.get("bedrock-runtime.us-east-1.amazonaws.com", 443),
            Some(at("[fd00::7]:443"))
        );
        assert_eq!(r.get("api.example.test", 8080), Some(at("[::1]:9000")));
        assert_eq!(r.ports().collect::<Vec<_>>(), [443, 8080]);
        assert_eq!(
            r.names().nth(1),
            Some(("my-resource.openai.azure.com", 443))
        );
        assert!(parse(&[]).unwrap().is_empty());
    }

    #[test]
    fn a_malformed_entry_is_named() {
        for bad in [
            "",
            "example.com",
            "example.com:443",
            "example.com:443:",
            "example.com:https:127.0.0.1",
            "example.com:0:127.0.0.1",
            "example.com:70000:127.0.0.1",
            "example.com:443:not-an-ip",
            "example.com:443:::1",
            "example.com:443:127.0.0.1:0",
            "example.com:443:127.0.0.1:x",
            "127.0.0.1:443:10.0.0.1",
            "https://example.com:443:10.0.0.1",
            "exa mple.com:443:10.0.0.1",
        ] {
            let err = parse(&[bad]).unwrap_err();
            assert!(err.starts_with(&format!("resolve {bad:?}: ")), "{err}");
        }
        let err = parse(&["a.test:443:10.0.0.1", "A.test:443:10.0.0.2"]).unwrap_err();
        assert!(err.contains("a.test:443 is given more than once"), "{err}");
    }

    /// The URI handed to the connector below names the address; one whose
    /// name and port no entry lists is handed on as it is.
    #[test]
    fn a_listed_name_and_port_is_rewritten_to_its_address() {
        let r = parse(&[
            "llm.internal.test:443:127.0.0.1:8443",
            "plain.test:80:[::1]",
        ])
        .unwrap();
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        let fixed = r.rewrite(&uri("https://LLM.internal.test/v1/x?y")).unwrap();
        assert_eq!(fixed, uri("https://127.0.0.1:8443/"));
        let fixed = r.rewrite(&uri("http://plain.test")).unwrap();
        assert_eq!(fixed, uri("http://[::1]:80/"));
        assert_eq!(r.rewrite(&uri("https://llm.internal.test:8443/")), None);
        assert_eq!(r.rewrite(&uri("https://other.test/")), None);
    }

    proptest! {
        /// Whatever the text, reading it is an answer, never a panic; an
        /// entry read back names what it was read from.
        #[test]
        fn any_text_is_read_or_refused(text in "\\PC{0,40}", host in "[a-z][a-z0-9-]{0,20}(\\.[a-z]{1,8}){0,3}",
                                       port in 1u16.., ip in any::<std::net::Ipv4Addr>()) {
            let _ = parse(&[text.as_str()]);
            let entry = format!("{host}:{port}:{ip}");
            let r = parse(&[entry.as_str()]).unwrap();
            prop_assert_eq!(r.get(&host, port), Some(SocketAddr::new(IpAddr::V4(ip), port)));
        }
    }
}
