//! Who may see the dashboard and `/api/*`.
//!
//! The rule (issue 6 §3), decided in one place by [`AccessPolicy::check`]:
//!
//! - Gateway bound to a loopback address (the default `127.0.0.1:8080`):
//!   loopback clients are served without a token when the request names a
//!   loopback host (`Host: localhost`, `127.0.0.1`, `[::1]`, any port, or
//!   no `Host` at all). Anyone else needs the admin token: a loopback peer
//!   asking for another name is a reverse proxy on the same machine
//!   relaying remote clients under a name of `allowed_hosts` (a browser
//!   tricked by DNS rebinding, a page of `attacker.example` whose name now
//!   resolves to 127.0.0.1, is refused before any route,
//!   `crate::rebinding`; this rule stands for it too).
//! - Gateway bound to any other address (`0.0.0.0`, a LAN address, …): every
//!   client needs the admin token (`TOOLWARDEN_ADMIN_TOKEN`, config `admin_token`),
//!   sent as `Authorization: Bearer <token>` — a loopback peer may be a
//!   reverse proxy relaying remote traffic, so it gets no free pass. Without
//!   a configured token the admin routes are closed (403) and say how to open
//!   them.
//!
//! A client whose address is unknown is treated as remote. The proxy routes
//! never pass through this check.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, header};

use crate::local::{is_loopback, names_loopback};
use crate::state::{AdminState, PeerAddr};

/// The access rule for the admin routes: whether the gateway is bound to a
/// loopback address, and the admin token if one was configured.
#[derive(Clone, Copy)]
pub(crate) struct AccessPolicy<'a> {
    loopback_bind: bool,
    admin_token: Option<&'a str>,
}

/// Why a request to an admin route was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum DeniedKind {
    /// A token is needed and none was sent (401).
    TokenMissing,
    /// A token was sent and it is not the admin token (401).
    TokenInvalid,
    /// Remote access is not possible: no admin token is configured (403).
    RemoteClosed,
    /// A loopback client asked for a host that is not loopback and no
    /// admin token is configured (403).
    ForeignHost,
}

/// A refused admin request; its [`IntoResponse`] gives the JSON answer
/// `{"error":{"type","message"}}` with 401 or 403 ([`crate::admin::AdminError`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccessDenied {
    kind: DeniedKind,
    message: String,
}

/// The page and its assets: they hold no data.
const PAGE_PATHS: [&str; 8] = [
    "/",
    "/dashboard",
    "/dashboard/",
    "/dashboard/app.js",
    "/dashboard/dom.js",
    "/dashboard/chart.js",
    "/dashboard/app.css",
    // The alerts strip's script: a `<script src>` sends no token either.
    "/dashboard/alerts.js",
];

// === impl AccessPolicy ===

impl<'a> AccessPolicy<'a> {
    /// The policy of a gateway bound to a loopback address (`loopback_bind`)
    /// or not; an empty token counts as none.
    pub(crate) fn new(loopback_bind: bool, admin_token: Option<&'a str>) -> Self {
        AccessPolicy {
            loopback_bind,
            admin_token: admin_token.filter(|t| !t.is_empty()),
        }
    }

    /// Decides whether a client at `peer` sending `headers` for `host` (the
    /// `Host` header or HTTP/2's `:authority`; `None` if absent) may use
    /// the admin routes.
    pub(crate) fn check(
        &self,
        peer: Option<SocketAddr>,
        host: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<(), AccessDenied> {
        let peer_is_loopback = peer.is_some_and(|p| is_loopback(p.ip()));
        let local = self.loopback_bind && peer_is_loopback;
        if local && host.is_none_or(names_loopback) {
            return Ok(());
        }
        let Some(expected) = self.admin_token else {
            if local {
                return Err(AccessDenied::new(
                    DeniedKind::ForeignHost,
                    "the request names a host that is not localhost or a loopback address: \
                     without a token the dashboard and /api/* answer only to requests for \
                     localhost (a guard against DNS rebinding and against a reverse proxy \
                     relaying remote clients); open http://127.0.0.1:PORT/, or restart the \
                     gateway with TOOLWARDEN_ADMIN_TOKEN=TOKEN (config admin_token) and send \
                     Authorization: Bearer TOKEN"
                        .to_owned(),
                ));
            }
            return Err(AccessDenied::new(
                DeniedKind::RemoteClosed,
                "the dashboard and /api/* answer only to loopback clients of a gateway bound to \
                 a loopback address; to use them from elsewhere, restart the gateway with \
                 TOOLWARDEN_ADMIN_TOKEN=TOKEN (config admin_token) and send Authorization: Bearer TOKEN"
                    .to_owned(),
            ));
        };
        match bearer(headers) {
            None => Err(AccessDenied::new(
                DeniedKind::TokenMissing,
                "admin token required: send Authorization: Bearer <admin token> \
                 (the dashboard page asks for it once)"
                    .to_owned(),
            )),
            Some(sent) if crate::local::constant_time_eq(sent.as_bytes(), expected.as_bytes()) => {
                Ok(())
            }
            Some(_) => Err(AccessDenied::new(
                DeniedKind::TokenInvalid,
                "the admin token sent is not valid".to_owned(),
            )),
        }
    }
}

impl std::fmt::Debug for AccessPolicy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessPolicy")
            .field("loopback_bind", &self.loopback_bind)
            .field("admin_token", &self.admin_token.map(|_| "<redacted>"))
            .finish()
    }
}

/// The admin router's middleware: applies [`AccessPolicy`] to every admin
/// route. The page and its assets (no data in them) are also served to a
/// client that only lacks the token, so the page can ask for it; a gateway
/// closed to remote clients refuses them too. The peer address comes from
/// [`PeerAddr`] (put there by the server) or axum's `ConnectInfo`.
pub(crate) async fn access(State(state): State<AdminState>, req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<PeerAddr>()
        .map(|PeerAddr(addr)| *addr)
        .or_else(|| {
            req.extensions()
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(addr)| *addr)
        });
    let policy = AccessPolicy::new(state.loopback_only, state.admin_token.as_deref());
    let host = req
        .headers()
        .get(header::HOST)
        .map(|h| h.to_str().unwrap_or("\u{fffd}"))
        .or_else(|| req.uri().authority().map(|a| a.as_str()));
    match policy.check(peer, host, req.headers()) {
        Ok(()) => next.run(req).await,
        Err(denied)
            if !matches!(
                denied.kind,
                DeniedKind::RemoteClosed | DeniedKind::ForeignHost
            ) && PAGE_PATHS.contains(&req.uri().path()) =>
        {
            next.run(req).await
        }
        Err(denied) => denied.into_response(),
    }
}

// === impl AccessDenied ===

impl AccessDenied {
    fn new(kind: DeniedKind, message: String) -> Self {
        AccessDenied { kind, message }
    }

    /// Why access was refused.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> DeniedKind {
        self.kind
    }
}

impl std::fmt::Display for AccessDenied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AccessDenied {}

impl From<AccessDenied> for crate::admin_error::AdminError {
    fn from(denied: AccessDenied) -> Self {
        let kind = match denied.kind {
            DeniedKind::TokenMissing | DeniedKind::TokenInvalid => {
                crate::admin_error::AdminErrorKind::Unauthorized
            }
            DeniedKind::RemoteClosed | DeniedKind::ForeignHost => {
                crate::admin_error::AdminErrorKind::Forbidden
            }
        };
        crate::admin_error::AdminError::new(kind, denied.message)
    }
}

impl IntoResponse for AccessDenied {
    fn into_response(self) -> Response {
        crate::admin_error::AdminError::from(self).into_response()
    }
}

// === helpers ===

/// The token of an `Authorization: Bearer <token>` header (scheme matched
/// case-insensitively).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use http::StatusCode;

    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("test address")
    }

    fn with_auth(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            http::HeaderValue::from_str(value).expect("header"),
        );
        h
    }

    #[test]
    fn loopback_bind_serves_loopback_peers_without_token() {
        let p = AccessPolicy::new(true, None);
        let none = HeaderMap::new();
        assert_eq!(p.check(Some(addr("127.0.0.1:50000")), None, &none), Ok(()));
        assert_eq!(p.check(Some(addr("127.9.8.7:1")), None, &none), Ok(()));
        assert_eq!(p.check(Some(addr("[::1]:50000")), None, &none), Ok(()));
        assert_eq!(
            p.check(Some(addr("[::ffff:127.0.0.1]:5")), None, &none),
            Ok(())
        );
        // A stale token from the page does not lock a local user out.
        let p = AccessPolicy::new(true, Some("tok"));
        assert_eq!(
            p.check(Some(addr("127.0.0.1:1")), None, &with_auth("Bearer old")),
            Ok(())
        );
    }

    #[test]
    fn loopback_bind_refuses_remote_peers_without_configured_token() {
        let p = AccessPolicy::new(true, None);
        let err = p
            .check(Some(addr("192.168.1.20:40000")), None, &HeaderMap::new())
            .expect_err("remote peer");
        assert_eq!(err.kind(), DeniedKind::RemoteClosed);
        assert_eq!(
            crate::admin_error::AdminError::from(err).kind().status(),
            StatusCode::FORBIDDEN
        );
        // A token sent to a gateway that has none configured opens nothing.
        let err = p
            .check(Some(addr("10.1.1.1:1")), None, &with_auth("Bearer guess"))
            .expect_err("remote peer with a token");
        assert_eq!(err.kind(), DeniedKind::RemoteClosed);
    }

    #[test]
    fn unknown_peer_is_treated_as_remote() {
        let p = AccessPolicy::new(true, None);
        let err = p
            .check(None, None, &HeaderMap::new())
            .expect_err("unknown peer");
        assert_eq!(err.kind(), DeniedKind::RemoteClosed);
        let p = AccessPolicy::new(true, Some("s3cret"));
        assert_eq!(p.check(None, None, &with_auth("Bearer s3cret")), Ok(()));
    }

    #[test]
    fn public_bind_requires_token_from_everyone() {
        let p = AccessPolicy::new(false, Some("s3cret"));
        for peer in ["127.0.0.1:1", "203.0.113.9:443", "[2001:db8::1]:9"] {
            let err = p
                .check(Some(addr(peer)), None, &HeaderMap::new())
                .expect_err("no token");
            assert_eq!(err.kind(), DeniedKind::TokenMissing, "{peer}");
            assert_eq!(
                crate::admin_error::AdminError::from(err).kind().status(),
                StatusCode::UNAUTHORIZED
            );
            let err = p
                .check(Some(addr(peer)), None, &with_auth("Bearer s3cre"))
                .expect_err("wrong token");
            assert_eq!(err.kind(), DeniedKind::TokenInvalid, "{peer}");
            assert_eq!(
                p.check(Some(addr(peer)), None, &with_auth("Bearer s3cret")),
                Ok(())
            );
            assert_eq!(
                p.check(Some(addr(peer)), None, &with_auth("bearer  s3cret ")),
                Ok(())
            );
        }
        // Other schemes are not a bearer token.
        let err = p
            .check(
                Some(addr("203.0.113.9:443")),
                None,
                &with_auth("Basic s3cret"),
            )
            .expect_err("basic");
        assert_eq!(err.kind(), DeniedKind::TokenMissing);
    }

    #[test]
    fn public_bind_without_token_is_closed_with_advice() {
        let p = AccessPolicy::new(false, Some(""));
        let err = p
            .check(Some(addr("127.0.0.1:1")), None, &HeaderMap::new())
            .expect_err("closed");
        assert_eq!(err.kind(), DeniedKind::RemoteClosed);
        assert!(err.to_string().contains("TOOLWARDEN_ADMIN_TOKEN"), "{err}");
    }

    #[test]
    fn loopback_bind_accepts_token_from_remote_peer() {
        let p = AccessPolicy::new(true, Some("tok"));
        assert_eq!(
            p.check(Some(addr("198.51.100.2:7")), None, &with_auth("Bearer tok")),
            Ok(())
        );
        let err = p
            .check(Some(addr("198.51.100.2:7")), None, &HeaderMap::new())
            .expect_err("remote without token");
        assert_eq!(err.kind(), DeniedKind::TokenMissing);
    }

    /// DNS rebinding: a browser on this machine sent to `attacker.example`
    /// (now resolving to 127.0.0.1) names that host; it gets nothing
    /// without the token. Loopback names and literals, with any port, pass.
    #[test]
    fn loopback_peers_must_name_a_loopback_host() {
        let p = AccessPolicy::new(true, None);
        let none = HeaderMap::new();
        let local = Some(addr("127.0.0.1:50000"));
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.:8080",
            "app.localhost:1",
            "127.0.0.1:8080",
            "127.1.2.3",
            "[::1]:8080",
            "[::1]",
            "[::ffff:127.0.0.1]:80",
        ] {
            assert_eq!(p.check(local, Some(host), &none), Ok(()), "{host}");
        }
        for host in [
            "attacker.example:8080",
            "attacker.example",
            "localhost.attacker.example",
            "evil-localhost:8080",
            "10.0.0.1:8080",
            "[2001:db8::1]:8080",
            "",
            "\u{fffd}",
        ] {
            let err = p.check(local, Some(host), &none).expect_err(host);
            assert_eq!(err.kind(), DeniedKind::ForeignHost, "{host}");
            // One sentence, not the source's indentation.
            assert!(!err.to_string().contains("  "), "{err}");
            assert_eq!(
                crate::admin_error::AdminError::from(err).kind().status(),
                StatusCode::FORBIDDEN
            );
        }
        // With a token configured, the token opens it, as for a remote peer.
        let p = AccessPolicy::new(true, Some("tok"));
        let foreign = Some("attacker.example:8080");
        let err = p.check(local, foreign, &none).expect_err("no token");
        assert_eq!(err.kind(), DeniedKind::TokenMissing);
        assert_eq!(p.check(local, foreign, &with_auth("Bearer tok")), Ok(()));
    }

    #[test]
    fn debug_redacts_token() {
        let p = AccessPolicy::new(false, Some("hunter2"));
        assert!(!format!("{p:?}").contains("hunter2"));
    }
}
