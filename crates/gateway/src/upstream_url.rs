//! An upstream base URL: scheme, authority and an optional path prefix. The
//! client's path and query are appended to it unchanged
//! (`http://127.0.0.1:9100/prefix` + `/v1/messages?beta=true`).

use std::fmt;

use http::{
    Uri,
    uri::{Authority, Scheme},
};

/// A validated upstream base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    scheme: Scheme,
    authority: Authority,
    /// Path prefix without a trailing slash (`""` for none).
    prefix: String,
}

impl Upstream {
    /// Parse an `http://` or `https://` URL with a host, no query and no fragment.
    pub fn parse(url: &str) -> Result<Upstream, String> {
        let uri: Uri = url.trim().parse().map_err(|e| format!("not a URL ({e})"))?;
        let scheme = match uri.scheme_str() {
            Some("http") => Scheme::HTTP,
            Some("https") => Scheme::HTTPS,
            Some(other) => return Err(format!("scheme {other:?} is not http or https")),
            None => return Err("missing scheme (http:// or https://)".into()),
        };
        let authority = uri.authority().cloned().ok_or("missing host")?;
        if authority.host().is_empty() {
            return Err("missing host".into());
        }
        if authority.as_str().contains('@') {
            return Err("credentials in the URL are not supported".into());
        }
        if uri.query().is_some() {
            return Err("a base URL cannot have a query string".into());
        }
        let prefix = uri.path().trim_end_matches('/').to_string();
        Ok(Upstream {
            scheme,
            authority,
            prefix,
        })
    }

    /// Parse the URL of the setting `name`. The error names the setting and
    /// shows the URL only as `scheme://host`: a URL refused for its user
    /// info or query holds credentials there.
    pub fn parse_setting(name: &str, url: &str) -> Result<Upstream, String> {
        Upstream::parse(url).map_err(|e| match scheme_and_host(url) {
            Some(shown) => format!("{name} ({shown}): {e}"),
            None => format!("{name}: {e}"),
        })
    }

    /// The host name (for error messages: never includes credentials).
    pub fn host(&self) -> &str {
        self.authority.host()
    }

    /// The path prefix, without a trailing slash (`""` for none).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether connections to it use TLS.
    pub fn is_https(&self) -> bool {
        self.scheme == Scheme::HTTPS
    }

    /// The port, explicit or the scheme's.
    pub fn port(&self) -> u16 {
        self.authority
            .port_u16()
            .unwrap_or(if self.is_https() { 443 } else { 80 })
    }

    /// `host:port` as given.
    pub fn authority(&self) -> &str {
        self.authority.as_str()
    }

    /// The URL for a client's `path?query`.
    pub fn uri_for(&self, path_and_query: &str) -> Result<Uri, http::Error> {
        let mut pq = String::with_capacity(self.prefix.len() + path_and_query.len());
        pq.push_str(&self.prefix);
        pq.push_str(path_and_query);
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(pq)
            .build()
    }
}

/// `scheme://host` of a URL (no user info, port, path or query), or the
/// host alone; `None` when it has no host.
fn scheme_and_host(url: &str) -> Option<String> {
    let uri: Uri = url.trim().parse().ok()?;
    let host = uri.host().filter(|h| !h.is_empty())?;
    Some(match uri.scheme_str() {
        Some(scheme) => format!("{scheme}://{host}"),
        None => host.to_string(),
    })
}

impl fmt::Display for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}{}", self.scheme, self.authority, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_path_and_query_unchanged() {
        let u = Upstream::parse("http://127.0.0.1:9100/prefix/").unwrap();
        assert_eq!(
            u.uri_for("/v1/messages?beta=true&x=%20")
                .unwrap()
                .to_string(),
            "http://127.0.0.1:9100/prefix/v1/messages?beta=true&x=%20"
        );
        let u = Upstream::parse("https://api.anthropic.com").unwrap();
        assert_eq!(
            u.uri_for("/v1/messages").unwrap().to_string(),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(u.host(), "api.anthropic.com");
    }

    #[test]
    fn rejects_what_cannot_be_a_base() {
        for bad in [
            "api.openai.com",
            "ftp://x",
            "http://",
            "http://h/?q=1",
            "http://u:p@h",
        ] {
            assert!(Upstream::parse(bad).is_err(), "{bad} accepted");
        }
    }
}
