//! The HTTP client of the AWS credential chain ([`super::chain`]), on
//! rustls with ring, with the `resolve` setting applied
//! ([`crate::resolve::Resolve`]): the chain's STS calls (web identity,
//! `AssumeRole`), SSO's (the portal, and the OIDC token refresh), the
//! container credentials endpoint's and IMDS's go through it.
//!
//! The SDK's client reaches another address only through a resolver of
//! names to IP addresses (`ResolveDns`), which is told neither the port
//! nor can change it, where an entry is for a `HOST:PORT` and may lead it
//! to another port. So each request is sent by its URL's name and port
//! ([`Route`]): one an entry leads to an address on the same port goes
//! through a client whose resolver answers the entries for that port (a
//! client per port that entries name); one an entry leads to another port
//! fails, naming the entry, rather than reach the name's public address;
//! any other goes through the plain client, which looks its name up. As on
//! the gateway's other connections only the address changes: TLS sends and
//! checks the URL's name, and the request names it as `Host`.
//!
//! Nothing goes to the gateway's own listening socket: a request whose
//! URL leads there, by its address, a `resolve` entry or (on the
//! listening port) what its name is looked up to — judged by
//! `local::own`, as the start-time check is, with the address the gateway
//! was bound to — fails before a connection is opened, naming the origin
//! only. The shared `AWS_ENDPOINT_URL` and a profile's `endpoint_url` are
//! only warned about at start (they may be meant for the clients beside
//! the gateway), and a port 0 or a wildcard bind is known only once bound.
//!
//! Not through it: the container endpoint's check that a plain-HTTP
//! `AWS_CONTAINER_CREDENTIALS_FULL_URI` names a loopback or container
//! address looks the name up itself (aws-config's `ecs` module, with a
//! resolver the default chain offers no way to give: its builder keeps the
//! `ecs::Builder` private, and a chain of the gateway's own could not be
//! handed the gateway's environment, `ProviderConfig::with_env` being
//! private too). So when `resolve` fixes that URL's name and port, the
//! chain is handed the URL with the entry's address in place of the name
//! ([`container_full_uri`]): the check judges the address the request
//! goes to (without it, the name's DNS answer was judged while the
//! request went to the entry's address, loopback or not, with the
//! container's authorization token), and the request names that address
//! as `Host`.

use std::{net::SocketAddr, sync::Arc};

use aws_smithy_http_client::{Builder, tls};
use aws_smithy_runtime_api::client::{
    connector_metadata::ConnectorMetadata,
    dns::{DnsFuture, ResolveDns, ResolveDnsError},
    http::{
        HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
        SharedHttpConnector,
    },
    orchestrator::HttpRequest,
    result::ConnectorError,
    runtime_components::RuntimeComponents,
};

use crate::{local::own, resolve::Resolve};

/// Where a request of the chain goes, by its URL's name and port.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    /// No entry names them: the name is looked up.
    Plain,
    /// An entry leads them to an address on the same port: the client of
    /// that port's entries.
    Fixed(u16),
    /// An entry leads them to another port, which the SDK's client cannot
    /// connect to (the problem, naming the entry).
    OtherPort(String),
}

/// The chain's client ([`http_client`]): a request goes to the connector its
/// [`Route`] names.
#[derive(Debug)]
struct FixedNames {
    resolve: Arc<Resolve>,
    listen: SocketAddr,
    plain: SharedHttpClient,
    fixed: Vec<(u16, SharedHttpClient)>,
}

/// [`FixedNames`]'s connectors for one set of connector settings.
#[derive(Debug)]
struct ByName {
    resolve: Arc<Resolve>,
    listen: SocketAddr,
    plain: SharedHttpConnector,
    fixed: Vec<(u16, SharedHttpConnector)>,
}

/// The resolver of the client for `port`: a name an entry for `port` leads
/// to an address on `port` is that address; any other is looked up.
#[derive(Debug, Clone)]
struct OnPort {
    resolve: Arc<Resolve>,
    port: u16,
}

/// The chain's HTTP client (see the module docs): the SDK's own over
/// rustls with ring, with `resolve` applied, refusing to reach the gateway
/// listening on `listen` (the bound address).
pub(super) fn http_client(resolve: &Resolve, listen: SocketAddr) -> SharedHttpClient {
    let builder = || {
        Builder::new().tls_provider(tls::Provider::Rustls(
            tls::rustls_provider::CryptoMode::Ring,
        ))
    };
    let plain = builder().build_https();
    let resolve = Arc::new(resolve.clone());
    let fixed = resolve
        .ports()
        .map(|port| {
            let resolver = OnPort {
                resolve: Arc::clone(&resolve),
                port,
            };
            (port, builder().build_with_resolver(resolver))
        })
        .collect();
    SharedHttpClient::new(FixedNames {
        resolve,
        listen,
        plain,
        fixed,
    })
}

/// What to do about an endpoint URL that names the gateway itself.
const FIX: &str = "point the setting that names it (AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, \
                   a profile's endpoint_url or [services] section, the container or metadata \
                   endpoint) at the credential service";

/// `AWS_CONTAINER_CREDENTIALS_FULL_URI` (`uri`) as the chain is handed it
/// when `resolve` fixes its name and port and it is plain HTTP: the
/// entry's address (and port) in place of the name, the rest as it is.
/// `None` when it is to be handed on as it is (HTTPS, whose name TLS
/// checks and whose address is not checked, goes through [`Route`]).
pub(super) fn container_full_uri(uri: &str, resolve: &Resolve) -> Option<String> {
    let parsed = uri.parse::<http::Uri>().ok()?;
    if parsed.scheme() != Some(&http::uri::Scheme::HTTP) {
        return None;
    }
    let authority = parsed.authority()?;
    let addr = resolve.get(authority.host(), parsed.port_u16().unwrap_or(80))?;
    let user = match authority.as_str().rsplit_once('@') {
        Some((user, _)) => format!("{user}@"),
        None => String::new(),
    };
    let rest = parsed.path_and_query().map_or("/", |pq| pq.as_str());
    Some(format!("http://{user}{addr}{rest}"))
}

/// Where a request to `uri` goes (an unreadable URI: [`Route::Plain`],
/// whose client reports it).
fn route(resolve: &Resolve, uri: &str) -> Route {
    let Ok(uri) = uri.parse::<http::Uri>() else {
        return Route::Plain;
    };
    let Some(host) = uri.host() else {
        return Route::Plain;
    };
    let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    match resolve.get(host, port) {
        None => Route::Plain,
        Some(addr) if addr.port() == port => Route::Fixed(port),
        Some(addr) => Route::OtherPort(other_port(host, port, addr)),
    }
}

fn other_port(host: &str, port: u16, addr: SocketAddr) -> String {
    format!(
        "resolve leads {host}:{port} to {addr}, another port, which the AWS credential \
         chain's HTTP client cannot connect to (it takes another address for a name, on the \
         URL's port): give the entry as {host}:{port}:{} or set the endpoint's URL to port {}",
        match addr {
            SocketAddr::V4(a) => a.ip().to_string(),
            SocketAddr::V6(a) => format!("[{}]", a.ip()),
        },
        addr.port()
    )
}

// === impl FixedNames ===

impl HttpClient for FixedNames {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        // Each client keeps its connectors by settings (and with them its
        // pool): asked once per request of the chain.
        SharedHttpConnector::new(ByName {
            resolve: Arc::clone(&self.resolve),
            listen: self.listen,
            plain: self.plain.http_connector(settings, components),
            fixed: self
                .fixed
                .iter()
                .map(|(port, c)| (*port, c.http_connector(settings, components)))
                .collect(),
        })
    }

    fn connector_metadata(&self) -> Option<ConnectorMetadata> {
        self.plain.connector_metadata()
    }
}

// === impl ByName ===

impl HttpConnector for ByName {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let (resolve, listen) = (Arc::clone(&self.resolve), self.listen);
        let connector = self.connector(request.uri());
        HttpConnectorFuture::new(async move {
            let who = "the AWS credential chain's";
            if let Some(problem) = own::refusal(request.uri(), listen, &resolve, who, FIX).await {
                return Err(ConnectorError::user(problem.into()));
            }
            match connector {
                Ok(connector) => connector.call(request).await,
                Err(problem) => Err(ConnectorError::user(problem.into())),
            }
        })
    }
}

impl ByName {
    /// The connector a request to `uri` goes through ([`Route`]), or why
    /// it cannot go.
    fn connector(&self, uri: &str) -> Result<SharedHttpConnector, String> {
        match route(&self.resolve, uri) {
            Route::Plain => Ok(self.plain.clone()),
            Route::Fixed(port) => match self.fixed.iter().find(|(p, _)| *p == port) {
                Some((_, fixed)) => Ok(fixed.clone()),
                // Every port an entry names has its client.
                None => Ok(self.plain.clone()),
            },
            Route::OtherPort(problem) => Err(problem),
        }
    }
}

// === impl OnPort ===

impl ResolveDns for OnPort {
    fn resolve_dns<'a>(&'a self, name: &'a str) -> DnsFuture<'a> {
        if let Some(addr) = self.resolve.get(name, self.port)
            && addr.port() == self.port
        {
            return DnsFuture::ready(Ok(vec![addr.ip()]));
        }
        DnsFuture::new(async move {
            let addrs = tokio::net::lookup_host((name, 0))
                .await
                .map_err(ResolveDnsError::new)?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(entries: &[&str]) -> Resolve {
        Resolve::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>()).unwrap()
    }

    /// A request goes by its URL's name and port: to the client of its
    /// entry's port when the entry keeps the port, refused when it does
    /// not, looked up when no entry names both.
    #[test]
    fn a_request_goes_by_its_names_entry_for_its_port() {
        let r = resolve(&[
            "sts.us-east-1.amazonaws.com:443:10.0.0.5",
            "sts.vpce.test:8080:127.0.0.1",
            "portal.sso.us-east-1.amazonaws.com:443:10.0.0.6:8443",
        ]);
        let at = |uri: &str| route(&r, uri);
        assert_eq!(
            at("https://sts.us-east-1.amazonaws.com/"),
            Route::Fixed(443)
        );
        assert_eq!(
            at("https://STS.us-east-1.amazonaws.com:443/x"),
            Route::Fixed(443)
        );
        assert_eq!(at("http://sts.vpce.test:8080/"), Route::Fixed(8080));
        // The same name on another port, another name, an address.
        assert_eq!(at("http://sts.us-east-1.amazonaws.com/"), Route::Plain);
        assert_eq!(at("https://sts.us-west-2.amazonaws.com/"), Route::Plain);
        assert_eq!(at("http://169.254.169.254/latest/api/token"), Route::Plain);
        assert_eq!(at("not a uri"), Route::Plain);
        let Route::OtherPort(problem) =
            at("https://portal.sso.us-east-1.amazonaws.com/federation/credentials")
        else {
            panic!("an entry to another port is not a route");
        };
        assert!(
            problem.starts_with(
                "resolve leads portal.sso.us-east-1.amazonaws.com:443 to 10.0.0.6:8443, \
                 another port"
            ),
            "{problem}"
        );
    }

    /// A plain-HTTP container URL whose name and port an entry fixes names
    /// the entry's address (and port); any other is handed on as it is.
    #[test]
    fn a_container_url_names_its_entrys_address() {
        let r = resolve(&[
            "creds.internal.test:80:127.0.0.1",
            "creds.internal.test:9000:10.0.0.9:9100",
            "v6.internal.test:8080:[::1]",
            "secure.internal.test:443:127.0.0.1",
        ]);
        let at = |uri: &str| container_full_uri(uri, &r);
        assert_eq!(
            at("http://CREDS.internal.test/v2/credentials/t?x=1").as_deref(),
            Some("http://127.0.0.1:80/v2/credentials/t?x=1")
        );
        assert_eq!(
            at("http://creds.internal.test:9000").as_deref(),
            Some("http://10.0.0.9:9100/")
        );
        assert_eq!(
            at("http://v6.internal.test:8080/creds").as_deref(),
            Some("http://[::1]:8080/creds")
        );
        assert_eq!(
            at("http://u:p@creds.internal.test/c").as_deref(),
            Some("http://u:p@127.0.0.1:80/c")
        );
        for same in [
            "https://secure.internal.test/creds",
            "http://creds.internal.test:8080/creds",
            "http://127.0.0.1:80/creds",
            "http://localhost/creds",
            "not a url",
        ] {
            assert_eq!(at(same), None, "{same}");
        }
    }

    /// The client for a port answers the names its entries lead to an
    /// address on that port, and looks others up.
    #[tokio::test]
    async fn a_ports_resolver_answers_its_entries() {
        let r = Arc::new(resolve(&[
            "sts.vpce.test:443:10.0.0.5",
            "moved.vpce.test:443:10.0.0.6:8443",
            "other.vpce.test:8080:10.0.0.7",
        ]));
        let on = OnPort {
            resolve: r,
            port: 443,
        };
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert_eq!(
            on.resolve_dns("sts.vpce.test").await.unwrap(),
            [ip("10.0.0.5")]
        );
        assert_eq!(
            on.resolve_dns("localhost")
                .await
                .unwrap()
                .first()
                .map(|a| a.is_loopback()),
            Some(true)
        );
        // Entries for another port, or leading to another port: looked
        // up (a .test name resolves nowhere, RFC 6761).
        for name in ["other.vpce.test", "moved.vpce.test"] {
            let found = on.resolve_dns(name).await.unwrap_or_default();
            assert!(
                !found.contains(&ip("10.0.0.6")) && !found.contains(&ip("10.0.0.7")),
                "{name}: {found:?}"
            );
        }
    }
}
