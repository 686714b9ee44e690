//! Whose requests go upstream with the gateway's own cloud credentials
//! (its SigV4 signature for Bedrock, its Google token for Vertex):
//! [`lends_credentials`]. Not a web page elsewhere that the user's browser
//! sent; and, when the operator sets a [`LendToken`], only a client that
//! presents it in [`LEND_TOKEN_HEADER`]. A gateway listening beyond
//! loopback can be reached by anyone on its network, and would otherwise
//! lend its cloud account to all of them.

use std::fmt;

use http::HeaderMap;

/// The header a client presents the lend token in. It is the gateway's:
/// it never goes upstream (`proxy::headers::is_gateway_own`).
pub const LEND_TOKEN_HEADER: &str = "x-toolwarden-lend-token";

/// The token a client must present to be lent the gateway's cloud
/// credentials (`lend_token`). Its `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct LendToken(String);

/// Why a request that would be lent the gateway's credentials is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Withheld {
    /// An `Origin` of another site (`null` included): a web page sent it
    /// through the user's browser.
    ForeignOrigin,
    /// `lend_token` is set and the request does not present it.
    NoLendToken,
}

// === impl LendToken ===

impl LendToken {
    /// The `lend_token` setting: `None` when empty (credentials are lent
    /// to any client that is not a web page elsewhere). A token must be
    /// something a client can send as a header value: visible ASCII, no
    /// spaces, at least 16 characters (a guessable token guards nothing).
    pub fn parse(text: &str) -> Result<Option<LendToken>, String> {
        const MIN_LEN: usize = 16;
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(
                "lend_token: only visible ASCII characters without spaces (it is sent as a header value)"
                    .into(),
            );
        }
        if text.len() < MIN_LEN {
            return Err(format!(
                "lend_token: at least {MIN_LEN} characters (it is {}); `openssl rand -hex 24` makes one",
                text.len()
            ));
        }
        Ok(Some(LendToken(text.to_string())))
    }

    /// Whether `headers` present this token (compared without an early
    /// exit on the first differing byte). Any one of several values may.
    fn presented_in(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(LEND_TOKEN_HEADER)
            .iter()
            .any(|sent| constant_time_eq(sent.as_bytes().trim_ascii(), self.0.as_bytes()))
    }
}

impl fmt::Debug for LendToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LendToken(<redacted>)")
    }
}

// === impl Withheld ===

impl Withheld {
    /// Why, for the log line of a request that goes without them.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Withheld::ForeignOrigin => {
                "a request from a web page elsewhere (another site's Origin) goes upstream \
                 without the gateway's credentials"
            }
            Withheld::NoLendToken => {
                "a request without the lend token (x-toolwarden-lend-token; lend_token is set) \
                 goes upstream without the gateway's credentials"
            }
        }
    }
}

/// Whether a request may go upstream with the gateway's own cloud
/// credentials: not when a web page elsewhere sent it (agent programs send
/// no `Origin`; a browser sends one with every cross-origin request and
/// every `POST`, so an `Origin` that is not this machine's is a page of
/// another site), and, with a `token`, only when the request presents it.
/// (A page that rebinds its own name to 127.0.0.1, whose requests are then
/// same-origin, names its own host: a gateway bound to a loopback address
/// refuses it before it gets here, [`super::foreign_host`].)
pub(crate) fn lends_credentials(
    headers: &HeaderMap,
    token: Option<&LendToken>,
) -> Result<(), Withheld> {
    if super::foreign_origin(headers) {
        return Err(Withheld::ForeignOrigin);
    }
    match token {
        Some(token) if !token.presented_in(headers) => Err(Withheld::NoLendToken),
        _ => Ok(()),
    }
}

/// Compares without an early exit on the first differing byte.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    const TOKEN: &str = "0123456789abcdef-lend";

    #[test]
    fn credentials_are_lent_to_this_machines_programs_only() {
        // Agent programs: no Origin; a page of this machine.
        for h in [
            &[][..],
            &[("host", "127.0.0.1:8080")],
            &[("host", "[::1]:8080"), ("origin", "http://localhost:3000")],
        ] {
            assert_eq!(lends_credentials(&headers(h), None), Ok(()), "{h:?}");
        }
        // No page of another site.
        for origin in [
            "https://attacker.example",
            "http://attacker.example:8080",
            "null",
            "http://127.0.0.1.nip.io",
        ] {
            let h = headers(&[("host", "127.0.0.1:8080"), ("origin", origin)]);
            assert_eq!(
                lends_credentials(&h, None),
                Err(Withheld::ForeignOrigin),
                "{origin}"
            );
        }
    }

    #[test]
    fn with_a_lend_token_only_a_client_presenting_it_is_lent() {
        let token = LendToken::parse(TOKEN).unwrap().unwrap();
        let lend = |h: &[(&'static str, &str)]| lends_credentials(&headers(h), Some(&token));
        assert_eq!(lend(&[(LEND_TOKEN_HEADER, TOKEN)]), Ok(()));
        assert_eq!(lend(&[(LEND_TOKEN_HEADER, &format!(" {TOKEN} "))]), Ok(()));
        assert_eq!(
            lend(&[(LEND_TOKEN_HEADER, "wrong"), (LEND_TOKEN_HEADER, TOKEN)]),
            Ok(())
        );
        assert_eq!(lend(&[]), Err(Withheld::NoLendToken));
        assert_eq!(
            lend(&[(LEND_TOKEN_HEADER, &TOKEN[1..])]),
            Err(Withheld::NoLendToken)
        );
        assert_eq!(
            lend(&[(LEND_TOKEN_HEADER, &format!("{TOKEN}x"))]),
            Err(Withheld::NoLendToken)
        );
        assert_eq!(
            lend(&[("authorization", &format!("Bearer {TOKEN}"))]),
            Err(Withheld::NoLendToken)
        );
        // The token does not lend to a page elsewhere.
        assert_eq!(
            lend(&[(LEND_TOKEN_HEADER, TOKEN), ("origin", "https://a.example")]),
            Err(Withheld::ForeignOrigin)
        );
    }

    #[test]
    fn a_lend_token_is_checked_once_and_never_shown() {
        assert_eq!(LendToken::parse(""), Ok(None));
        assert_eq!(LendToken::parse("  "), Ok(None));
        assert!(LendToken::parse("short").unwrap_err().contains("16"));
        assert!(
            LendToken::parse("has a space in it ok")
                .unwrap_err()
                .contains("visible ASCII")
        );
        assert!(LendToken::parse("caf\u{e9}0123456789abcdef").is_err());
        let token = LendToken::parse(TOKEN).unwrap().unwrap();
        assert!(!format!("{token:?}").contains("0123"));
    }

    #[test]
    fn constant_time_eq_compares_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(constant_time_eq(b"", b""));
    }
}
