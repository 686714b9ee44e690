//! How settings that can carry credentials show in `Debug`: the settings'
//! types ([`crate::Config`], [`crate::RawConfig`], the alerts' and OTLP's)
//! write their `Debug` by hand through these, so a `debug!("{config:?}")`
//! never prints a token, a password, a webhook's path or a header's value.

use std::fmt;

use http::Uri;

/// A value that is set but not shown: `<redacted>`.
pub(crate) struct Hidden;

/// A URL shown with its password and secret-named query values hidden
/// ([`toolwarden_store::redact_url`]).
pub(crate) struct RedactedUrl<'a>(pub(crate) &'a str);

/// A URL shown as `scheme://host:port` only: a webhook's path and query are
/// often the secret (a Slack webhook's).
pub(crate) struct Origin<'a>(pub(crate) &'a Uri);

/// A text URL shown as `scheme://host:port` only, as read (not yet checked).
pub(crate) struct TextOrigin<'a>(pub(crate) &'a str);

// === impl Hidden ===

impl Hidden {
    /// `Some(<redacted>)` when `value` is set.
    pub(crate) fn option<T>(value: &Option<T>) -> Option<Hidden> {
        value.as_ref().map(|_| Hidden)
    }
}

impl fmt::Debug for Hidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

// === impl RedactedUrl ===

impl fmt::Debug for RedactedUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&toolwarden_store::redact_url(self.0), f)
    }
}

// === impl Origin ===

impl fmt::Debug for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = self.0.scheme_str().unwrap_or("");
        let host = self.0.host().unwrap_or("");
        match self.0.port_u16() {
            Some(port) => write!(f, "\"{scheme}://{host}:{port}/<redacted>\""),
            None => write!(f, "\"{scheme}://{host}/<redacted>\""),
        }
    }
}

// === impl TextOrigin ===

impl fmt::Debug for TextOrigin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.trim().parse::<Uri>() {
            Ok(uri)
                if uri.host().is_some()
                    && !uri.authority().is_some_and(|a| a.as_str().contains('@')) =>
            {
                Origin(&uri).fmt(f)
            }
            _ => Hidden.fmt(f),
        }
    }
}
