//! A URL's user info written raw: the check shared by the URLs the
//! gateway POSTs to with their credentials (`otlp_endpoint`, alert
//! webhooks).

/// What is wrong with a URL whose `@` comes after its authority has ended
/// (at the first `/`, `?` or `#`): a user name or password holding one of
/// those, not percent-encoded (`http://u:pa/ss@collector:4318`, which
/// `http::Uri` reads as host `u`, port `pa` or a number, and a path).
/// Names no part of the URL: what precedes the `@` may be a password,
/// what follows it a secret path's end (a webhook's). `None` for any
/// other URL.
pub(super) fn raw_userinfo(url: &str) -> Option<&'static str> {
    let (_, rest) = url.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest[authority_end..].contains('@').then_some(
        "an `@` after a `/`, `?` or `#`: a user name or password holding one ends the host \
         there, so percent-encode it (`/` as %2F, `?` as %3F, `#` as %23; an `@` in the path \
         as %40)",
    )
}
