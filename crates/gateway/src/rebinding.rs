//! The guard against DNS rebinding, on every route. A web page whose name
//! its DNS resolves to 127.0.0.1 reaches a gateway bound to a loopback
//! address through the user's browser, same-origin: it could read
//! `/metrics`, `/api/*` and the dashboard, and post made-up tool results
//! that get recorded (and fire alerts). Its requests name its own host, so
//! such a gateway refuses a request naming a host other than its loopback
//! names and the allowed ones ([`crate::local::foreign_host`], setting
//! `allowed_hosts`) with a 403 that says how to allow the host: the proxy
//! routes (WebSocket upgrades included) in the client's error envelope,
//! the gateway's own routes (`/metrics`, `/healthz`, the admin routes) in
//! the admin error shape. Nothing of it is forwarded or recorded; it is
//! counted ([`crate::metrics::REFUSED_REQUESTS_TOTAL`], reason
//! `foreign_host`). A gateway
//! bound to another address answers any host (the operator chose to
//! expose it). The HTTP/1 fast path (`crate::h1`) leaves such a request to
//! hyper's path, where [`refusal`] answers it.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::response::IntoResponse;
use http::{HeaderMap, Method, Response, Uri};

use crate::{
    admin_error::{AdminError, AdminErrorKind},
    body::{GatewayBody, error_response},
    errors::{ProxyError, ProxyErrorKind},
    metrics::events::{RefusalReason, RequestRefused},
    routes::Route,
    state::Shared,
};

/// The longest part of a refused `Host` the answer and the log repeat.
const SHOWN_HOST_CHARS: usize = 200;

/// The 403 for a request naming a host the gateway does not answer, or
/// `None` when it may be served.
pub(crate) fn refusal(
    shared: &Shared,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Option<Response<GatewayBody>> {
    let guard = shared.config.host_guard();
    let host = crate::local::foreign_host(guard, headers, uri.authority().map(|a| a.as_str()))?;
    let host: String = host.chars().take(SHOWN_HOST_CHARS).collect();
    shared.sinks.metrics.emit(RequestRefused {
        reason: RefusalReason::ForeignHost,
    });
    static REFUSED: AtomicU64 = AtomicU64::new(0);
    let n = REFUSED.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        tracing::warn!(
            host,
            path = uri.path(),
            refused = n,
            "refused a request naming a host that is not this gateway's \
             (set allowed_hosts to allow it)"
        );
    }
    let message = advice(&host, &shared.config.listen.to_string());
    Some(
        match Route::classify(method, uri.path(), uri.query(), headers) {
            Route::Proxy(route) => error_response(
                route.envelope(),
                &ProxyError::new(ProxyErrorKind::ForeignHost, "", message),
            ),
            Route::Healthz | Route::Metrics | Route::Admin => {
                AdminError::new(AdminErrorKind::Forbidden, message)
                    .into_response()
                    .map(GatewayBody::Admin)
            }
        },
    )
}

/// What the refusal says: why, and exactly how to allow the host (whoever
/// put a reverse proxy in front must find the fix from the error alone).
fn advice(host: &str, listen: &str) -> String {
    let name = crate::local::host_name(host);
    format!(
        "the request names the host {host:?}, and this gateway listens on a loopback address \
         ({listen}): it answers only requests for localhost, *.localhost or a loopback \
         address, a guard against DNS rebinding (a web page whose name resolves to 127.0.0.1). \
         If the name is yours (a reverse proxy in front that sends it, such as nginx with \
         proxy_set_header Host $host), allow it: restart the gateway with --allowed-hosts \
         {name} (or TOOLWARDEN_ALLOWED_HOSTS={name}, or allowed_hosts = [\"{name}\"] in the \
         config file; * allows any host), or have the proxy send the gateway's own address as \
         Host (nginx's default, proxy_set_header Host $proxy_host)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_names_the_setting_with_the_hosts_name() {
        let text = advice("gw.example:8443", "127.0.0.1:8080");
        for says in [
            "\"gw.example:8443\"",
            "--allowed-hosts gw.example ",
            "TOOLWARDEN_ALLOWED_HOSTS=gw.example,",
            "allowed_hosts = [\"gw.example\"]",
            "127.0.0.1:8080",
        ] {
            assert!(text.contains(says), "{says}: {text}");
        }
        assert!(!text.contains("  "), "{text}");
    }
}
