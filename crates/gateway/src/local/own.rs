//! Whether a connection the gateway makes itself reaches its own listening
//! socket: the one judgement behind the start-time refusals of
//! `config::sanity` (an upstream, the telemetry or a credential endpoint
//! at the gateway's own address) and the run-time guard of its credential
//! clients (the AWS chain's, `cloud::aws::client`; Google's exchanges,
//! `cloud::fetch`), which know the address it was bound to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

use crate::resolve::Resolve;

/// An address no connection reaches (port 0): for tests of code that is
/// not started as a gateway.
#[cfg(test)]
pub(crate) const UNBOUND: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// How a connection leads to the gateway's own listening socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Here {
    /// By the URL's own host and port.
    Url,
    /// By the `resolve` entry for its name and port, to this address.
    Resolve(SocketAddr),
    /// By the address its name is looked up to (at run time only).
    Lookup(IpAddr),
}

/// Whether a connection to `host` (as a URL writes it) on `port` reaches
/// the socket listening on `listen`, by the address `resolve` leads the
/// name and port to, or else by the URL itself ([`reaches`]). A name
/// `resolve` leads elsewhere is not this gateway, whatever its name; a
/// name other than `localhost` is not judged here (see [`leads_here_now`]).
pub(crate) fn leads_here(
    host: &str,
    port: u16,
    listen: SocketAddr,
    resolve: &Resolve,
) -> Option<Here> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match resolve.get(host, port) {
        Some(addr) => reaches(listen, Ok(addr.ip()), addr.port()).then_some(Here::Resolve(addr)),
        None => {
            reaches(listen, host.parse::<IpAddr>().map_err(|_| host), port).then_some(Here::Url)
        }
    }
}

/// [`leads_here`], and for a name no entry fixes on the listening port,
/// the addresses it is looked up to now: what a connection about to be
/// made judges (a lookup only then, so a credential call elsewhere costs
/// nothing more). A name that is not found is not here (the connection
/// fails on its own).
pub(crate) async fn leads_here_now(
    host: &str,
    port: u16,
    listen: SocketAddr,
    resolve: &Resolve,
) -> Option<Here> {
    if let Some(here) = leads_here(host, port, listen, resolve) {
        return Some(here);
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = bare.parse::<IpAddr>().is_err() && resolve.get(bare, port).is_none();
    if !name || port != listen.port() || listen.port() == 0 {
        return None;
    }
    let found = tokio::net::lookup_host((bare, port)).await.ok()?;
    found
        .map(|addr| addr.ip())
        .find(|ip| reaches(listen, Ok(*ip), port))
        .map(Here::Lookup)
}

/// The problem when a request of the gateway's own credential client
/// (`who`: "the AWS credential chain's") to `uri` would reach the gateway
/// listening on `listen` ([`leads_here_now`]), with `fix` for a URL that
/// names it: the origin and how it leads there, never the path, query or
/// user info. `None` for any other URI (and one without a host, which the
/// client reports).
pub(crate) async fn refusal(
    uri: &str,
    listen: SocketAddr,
    resolve: &Resolve,
    who: &str,
    fix: &str,
) -> Option<String> {
    let uri = uri.parse::<http::Uri>().ok()?;
    let host = uri.host()?;
    let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let here = leads_here_now(host, port, listen, resolve).await?;
    let scheme = if https { "https" } else { "http" };
    let fix = match here {
        Here::Url => fix,
        Here::Resolve(_) | Here::Lookup(_) => "correct the resolve entry or the name",
    };
    Some(format!(
        "not sent: {who} request to {scheme}://{host}:{port} {}, which would take it for a \
         client's request and pass it, with the credentials it carries, to a provider; {fix}",
        here_text(&here, listen)
    ))
}

/// `is this gateway's own address (LISTEN)`, or how it leads there.
pub(crate) fn here_text(here: &Here, listen: SocketAddr) -> String {
    match here {
        Here::Url => format!("is this gateway's own address ({listen})"),
        Here::Resolve(addr) => {
            format!("is led by resolve to {addr}, this gateway's own address ({listen})")
        }
        Here::Lookup(ip) => {
            format!("is looked up to {ip}, this gateway's own address ({listen})")
        }
    }
}

/// Whether a connection to `target` (an address, or a name) on `port`
/// reaches the socket listening on `listen`: the same port (never known
/// for port 0 before the bind), and an address a connection to which
/// reaches it: the listening address itself, `0.0.0.0` or `[::]` for the
/// loopback address of their family (Linux connects there), `localhost`
/// when it listens on loopback; when it listens on every address, any
/// loopback or unspecified address and any address of this machine
/// ([`is_local`]) of its family, or of both on `[::]` (dual stack). An
/// IPv4-mapped address is its IPv4 one. Another loopback address
/// (`127.0.0.2` beside `127.0.0.1`) is another socket.
pub(crate) fn reaches(listen: SocketAddr, target: Result<IpAddr, &str>, port: u16) -> bool {
    if listen.port() == 0 || port != listen.port() {
        return false;
    }
    let listen_ip = listen.ip().to_canonical();
    let ip = match target {
        Ok(ip) => ip.to_canonical(),
        Err(host) => {
            return host.eq_ignore_ascii_case("localhost")
                && (listen_ip.is_loopback() || listen_ip.is_unspecified());
        }
    };
    let ip = match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    if listen_ip.is_unspecified() {
        // On Linux `[::]` takes IPv4 connections too (dual stack).
        let family = ip.is_ipv4() == listen_ip.is_ipv4() || listen_ip.is_ipv6();
        family && (ip.is_loopback() || is_local(ip))
    } else {
        ip == listen_ip
    }
}

/// Whether `ip` is one of this machine's addresses: a socket can be bound
/// to it (the kernel refuses any other, `EADDRNOTAVAIL`). Multicast and
/// broadcast addresses, which a socket may bind but a connection does not
/// reach, are not.
fn is_local(ip: IpAddr) -> bool {
    let special = match ip {
        IpAddr::V4(v4) => v4.is_multicast() || v4.is_broadcast(),
        IpAddr::V6(v6) => v6.is_multicast(),
    };
    !special && UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(entries: &[&str]) -> Resolve {
        Resolve::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn at(listen: &str, target: &str, port: u16) -> bool {
        let listen: SocketAddr = listen.parse().unwrap();
        reaches(listen, target.parse::<IpAddr>().map_err(|_| target), port)
    }

    /// Checked against real sockets: what a connection reaches is what
    /// the judgement says, for each listening address and target.
    #[test]
    fn the_judgement_agrees_with_real_connections() {
        let local = local_non_loopback();
        let mut listens = vec!["127.0.0.1", "0.0.0.0", "::1", "::"];
        listens.extend(local.iter().map(String::as_str));
        let mut targets = vec![
            "127.0.0.1",
            "127.0.0.2",
            "0.0.0.0",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "192.0.2.200",
        ];
        targets.extend(local.iter().map(String::as_str));
        for listen in listens {
            let Ok(listener) = std::net::TcpListener::bind((listen, 0)) else {
                continue;
            };
            let bound = listener.local_addr().unwrap();
            for target in &targets {
                let ip: IpAddr = target.parse().unwrap();
                let connected = std::net::TcpStream::connect_timeout(
                    &SocketAddr::new(ip, bound.port()),
                    std::time::Duration::from_millis(300),
                )
                .is_ok();
                assert_eq!(
                    reaches(bound, Ok(ip), bound.port()),
                    connected,
                    "listening on {bound}, a connection to {target}"
                );
            }
        }
    }

    /// This machine's addresses other than loopback (from the route a
    /// datagram socket takes to a documentation address).
    fn local_non_loopback() -> Vec<String> {
        let mut found = Vec::new();
        for (bind, to) in [
            ("0.0.0.0:0", "192.0.2.200:9"),
            ("[::]:0", "[2001:db8::1]:9"),
        ] {
            if let Ok(socket) = UdpSocket::bind(bind)
                && socket.connect(to).is_ok()
                && let Ok(addr) = socket.local_addr()
                && !addr.ip().is_loopback()
            {
                found.push(addr.ip().to_string());
            }
        }
        found
    }

    #[test]
    fn the_port_and_the_name_decide_before_the_address() {
        assert!(!at("127.0.0.1:0", "127.0.0.1", 0));
        assert!(!at("127.0.0.1:8080", "127.0.0.1", 8081));
        assert!(at("127.0.0.1:8080", "localhost", 8080));
        assert!(at("0.0.0.0:8080", "LOCALHOST", 8080));
        assert!(!at("192.0.2.9:8080", "localhost", 8080));
        assert!(!at("127.0.0.1:8080", "gw.internal.test", 8080));
        assert!(!at("0.0.0.0:8080", "224.0.0.1", 8080));
    }

    /// An entry decides for its name and port; without one, the URL.
    #[test]
    fn an_entry_leads_its_name_and_port() {
        let listen: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let r = resolve(&[
            "sts.vpce.test:443:127.0.0.1:8080",
            "localhost:8080:10.0.0.9",
        ]);
        assert_eq!(
            leads_here("sts.vpce.test", 443, listen, &r),
            Some(Here::Resolve("127.0.0.1:8080".parse().unwrap()))
        );
        assert_eq!(leads_here("localhost", 8080, listen, &r), None);
        assert_eq!(leads_here("[::1]", 8080, listen, &r), None);
        assert_eq!(leads_here("127.0.0.1", 8080, listen, &r), Some(Here::Url));
    }

    /// At run time a name on the listening port is judged by what it is
    /// looked up to (this machine's own name, where it is found, as a
    /// real connection to it finds the gateway or not); an entry still
    /// decides for its own name, and a name on another port is not looked
    /// up.
    #[tokio::test]
    async fn a_name_is_judged_by_its_lookup_on_the_listening_port() {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
        let listen = listener.local_addr().unwrap();
        let port = listen.port();
        let none = Resolve::default();
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let name = name.trim();
        let connects = match tokio::net::lookup_host((name, port)).await {
            Ok(mut addrs) => addrs.next().is_some_and(|a| {
                std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_millis(300))
                    .is_ok()
            }),
            Err(_) => false,
        };
        let here = leads_here_now(name, port, listen, &none).await;
        assert_eq!(
            matches!(here, Some(Here::Lookup(_))),
            connects,
            "{name}: {here:?}"
        );
        assert_eq!(leads_here_now(name, port + 1, listen, &none).await, None);
        assert_eq!(
            leads_here_now("nowhere.invalid", port, listen, &none).await,
            None
        );
        assert_eq!(
            leads_here_now("localhost", port, listen, &none).await,
            Some(Here::Url)
        );
        let named = resolve(&[&format!("{name}:{port}:10.0.0.9")]);
        assert_eq!(leads_here_now(name, port, listen, &named).await, None);
        drop(listener);
    }
}
