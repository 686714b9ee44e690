//! The fast path's upstream connections: plain TCP or TLS (rustls as
//! [`crate::upstream::tls_config`] sets it up, ALPN `http/1.1`), TCP_NODELAY, a connect
//! timeout, and a per-worker pool of idle keep-alive connections per
//! provider. A pooled connection is handed out only if the upstream has
//! neither closed it nor written to it since (checked without waiting:
//! [`UpstreamIo::is_open`]) and it has been idle less
//! than [`IDLE_TIMEOUT`], or than the upstream's own idle timeout less a
//! margin when it announced one ([`reuse_window`], as on hyper's path);
//! the worker sweeps out the others every few
//! seconds ([`Pool::sweep`]), so that after a burst the connections it
//! left idle do not stay open (half-closed by the upstream) until the next.

use std::{
    collections::VecDeque,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncRead, ReadBuf},
    net::TcpStream,
};
use tokio_rustls::{TlsConnector, client::TlsStream};

use crate::{
    Config,
    errors::{ProxyError, ProxyErrorKind},
    plain_or_tls::PlainOrTls,
    routes::Provider,
    startup::GatewayError,
    upstream::{IDLE_TIMEOUT, reuse_window},
    upstream_url::Upstream,
};

/// An upstream connection: `Plain` for `http://`, `Tls` for `https://`.
pub(crate) type UpstreamIo = PlainOrTls<TlsStream<TcpStream>>;

/// One worker's upstream connections.
pub(crate) struct Pool {
    /// Per provider, oldest first.
    idle: Mutex<[VecDeque<Idle>; Provider::ALL.len()]>,
    tls: TlsConnector,
    connect_timeout: Duration,
    idle_timeout: Duration,
    /// Idle connections kept per provider (`upstream_max_idle`).
    max_idle: usize,
    /// Names reached at a fixed address ([`Config::resolve`]).
    resolve: crate::resolve::Resolve,
}

#[derive(Debug)]
struct Idle {
    io: UpstreamIo,
    since: Instant,
    /// How long it may stay idle ([`reuse_window`]).
    window: Duration,
}

impl Pool {
    /// An empty pool for the gateway's upstreams.
    pub(crate) fn new(config: &Config) -> Result<Pool, GatewayError> {
        let mut tls = crate::upstream::tls_config(config)?;
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Pool {
            idle: Mutex::new(Default::default()),
            tls: TlsConnector::from(Arc::new(tls)),
            connect_timeout: config.connect_timeout,
            idle_timeout: IDLE_TIMEOUT,
            max_idle: config.memory.upstream_max_idle,
            resolve: config.resolve.clone(),
        })
    }

    /// Closes the idle connections that are too old or that the upstream
    /// closed; how many.
    pub(crate) fn sweep(&self) -> usize {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let mut closed = 0;
        for list in idle.iter_mut() {
            let before = list.len();
            list.retain_mut(|c| c.since.elapsed() < c.window && c.io.is_open());
            closed += before - list.len();
        }
        closed
    }

    /// A live idle connection to `provider`'s upstream, newest first.
    pub(crate) fn checkout(&self, provider: Provider) -> Option<UpstreamIo> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = &mut idle[provider.index()];
        while let Some(mut conn) = list.pop_back() {
            if conn.since.elapsed() < conn.window && conn.io.is_open() {
                return Some(conn.io);
            }
        }
        None
    }

    /// Keep a connection whose last response ended cleanly, and said
    /// `keep_alive` of the upstream's idle timeout ([`reuse_window`]).
    pub(crate) fn checkin(&self, provider: Provider, io: UpstreamIo, keep_alive: Option<Duration>) {
        let window = reuse_window(keep_alive, self.idle_timeout);
        if window.is_zero() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = &mut idle[provider.index()];
        if list.len() < self.max_idle {
            list.push_back(Idle {
                io,
                since: Instant::now(),
                window,
            });
        }
    }

    /// A new connection (TCP, then TLS for `https://`), within the connect
    /// timeout.
    pub(crate) async fn connect(&self, upstream: &Upstream) -> Result<UpstreamIo, ProxyError> {
        let host = upstream.host();
        match tokio::time::timeout(self.connect_timeout, self.connect_inner(upstream)).await {
            Ok(result) => result,
            Err(_) => Err(ProxyError::new(
                ProxyErrorKind::ConnectTimeout,
                host,
                format!(
                    "no connection within {} ms",
                    self.connect_timeout.as_millis()
                ),
            )),
        }
    }

    async fn connect_inner(&self, upstream: &Upstream) -> Result<UpstreamIo, ProxyError> {
        let host = upstream.host();
        let name = host.trim_start_matches('[').trim_end_matches(']');
        let port = upstream.port();
        let fixed = self.resolve.get(name, port);
        let addrs: Vec<SocketAddr> = match name.parse::<std::net::IpAddr>() {
            _ if fixed.is_some() => fixed.into_iter().collect(),
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((name, port))
                .await
                .map_err(|e| ProxyError::new(ProxyErrorKind::Dns, host, format!("dns error: {e}")))?
                .collect(),
        };
        let tcp = super::connect::connect_tcp(&addrs, self.connect_timeout)
            .await
            .map_err(|e| {
                let kind = if e.kind() == io::ErrorKind::TimedOut {
                    ProxyErrorKind::ConnectTimeout
                } else {
                    ProxyErrorKind::Connect
                };
                ProxyError::new(kind, host, e.to_string())
            })?;
        crate::sockets::tune(&tcp);
        if !upstream.is_https() {
            return Ok(UpstreamIo::Plain(tcp));
        }
        let server_name = rustls::pki_types::ServerName::try_from(name.to_string())
            .map_err(|e| ProxyError::new(ProxyErrorKind::Tls, host, e.to_string()))?;
        let tls = self
            .tls
            .connect(server_name, tcp)
            .await
            .map_err(|e| ProxyError::new(ProxyErrorKind::Tls, host, e.to_string()))?;
        Ok(UpstreamIo::Tls(Box::new(tls)))
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("connect_timeout", &self.connect_timeout)
            .finish_non_exhaustive()
    }
}

// === impl UpstreamIo ===

impl UpstreamIo {
    /// Whether the connection can carry a new request: the upstream has
    /// neither closed it nor written to it since its last response ended.
    /// A plain connection must have nothing to read. On a TLS connection
    /// the bytes waiting may be records that carry no data (session
    /// tickets, sent after the handshake), so they are read through TLS
    /// without waiting: nothing to hand out is open; the end of the stream
    /// (`close_notify`, an upstream closing an idle connection), data (a
    /// late answer, which would reach the next client as its response) or
    /// an error is not.
    fn is_open(&mut self) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let tls = match self {
            UpstreamIo::Plain(tcp) => return !peek_readable(tcp, &mut cx),
            UpstreamIo::Tls(tls) => tls,
        };
        if !peek_readable(tls.get_ref().0, &mut cx) {
            return true;
        }
        let mut byte = [0u8; 1];
        let mut buf = ReadBuf::new(&mut byte);
        Pin::new(tls.as_mut())
            .poll_read(&mut cx, &mut buf)
            .is_pending()
    }
}

/// Whether `tcp` has bytes or its end waiting (or failed), without
/// reading them.
fn peek_readable(tcp: &TcpStream, cx: &mut Context<'_>) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    !matches!(tcp.poll_peek(cx, &mut buf), Poll::Pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(pool: &Pool) -> usize {
        let idle = pool.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.iter().map(VecDeque::len).sum()
    }

    /// A connection the upstream closed goes at the next sweep, the others
    /// once they are older than the idle timeout.
    #[tokio::test]
    async fn the_sweep_closes_what_the_upstream_closed_and_what_is_too_old() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut pool = Pool::new(&Config::for_tests(&format!("http://{addr}"))).unwrap();
        pool.idle_timeout = Duration::from_millis(300);
        let mut servers = Vec::new();
        for _ in 0..3 {
            let client = TcpStream::connect(addr).await.unwrap();
            servers.push(listener.accept().await.unwrap().0);
            pool.checkin(Provider::Anthropic, UpstreamIo::Plain(client), None);
        }
        assert_eq!(pool.sweep(), 0);
        drop(servers.remove(0));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pool.sweep(), 1, "the one the upstream closed");
        assert_eq!(idle(&pool), 2);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(pool.sweep(), 2, "the ones idle too long");
        assert_eq!(idle(&pool), 0);
        assert!(pool.checkout(Provider::Anthropic).is_none());
    }

    /// At most `upstream_max_idle` idle connections are kept per provider:
    /// the ones checked in past it are closed.
    #[tokio::test]
    async fn the_idle_connections_are_bounded() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        const MAX_IDLE: usize = 5;
        let mut config = Config::for_tests(&format!("http://{addr}"));
        config.memory.upstream_max_idle = MAX_IDLE;
        let pool = Pool::new(&config).unwrap();
        let mut servers = Vec::new();
        for _ in 0..MAX_IDLE + 3 {
            let client = TcpStream::connect(addr).await.unwrap();
            servers.push(listener.accept().await.unwrap().0);
            pool.checkin(Provider::Anthropic, UpstreamIo::Plain(client), None);
        }
        assert_eq!(idle(&pool), MAX_IDLE);
        // The three past the bound were dropped (their upstream reads EOF),
        // the first kept.
        let mut byte = [0u8; 1];
        for server in &servers[MAX_IDLE..] {
            assert_eq!(server.peek(&mut byte).await.unwrap(), 0);
        }
        let first = tokio::time::timeout(Duration::from_millis(50), servers[0].peek(&mut byte));
        assert!(first.await.is_err(), "a kept connection is open");
        let client = TcpStream::connect(addr).await.unwrap();
        let _server = listener.accept().await.unwrap().0;
        pool.checkin(Provider::OpenAi, UpstreamIo::Plain(client), None);
        assert_eq!(idle(&pool), MAX_IDLE + 1, "the bound is per provider");
    }

    /// A connection whose upstream announced a short timeout goes once
    /// idle past its window; one announcing `timeout=0` is not kept.
    #[tokio::test]
    async fn an_announced_timeout_bounds_a_connections_idle_life() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let pool = Pool::new(&Config::for_tests(&format!("http://{addr}"))).unwrap();
        let mut servers = Vec::new();
        for announced in [None, Some(Duration::from_secs(1)), Some(Duration::ZERO)] {
            let client = TcpStream::connect(addr).await.unwrap();
            servers.push(listener.accept().await.unwrap().0);
            pool.checkin(Provider::Anthropic, UpstreamIo::Plain(client), announced);
        }
        assert_eq!(idle(&pool), 2, "timeout=0 is not kept");
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(pool.sweep(), 1, "past the 500 ms of timeout=1");
        assert!(pool.checkout(Provider::Anthropic).is_some());
        assert!(pool.checkout(Provider::Anthropic).is_none());
    }

    /// A TLS upstream sends session tickets after the handshake: that
    /// connection stays. One that sent `close_notify` (an upstream closing
    /// idle connections) or data after its response (which would reach the
    /// next client as its answer) goes.
    #[tokio::test]
    async fn a_tls_connection_the_upstream_closed_or_wrote_to_is_not_reused() {
        use tokio::io::AsyncWriteExt;

        let tls = toolwarden_mock_provider::MockTls::generate().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!(
            "https://localhost:{}",
            listener.local_addr().unwrap().port()
        );
        let mut config = Config::for_tests(&base);
        config.upstream_roots = vec![tls.ca_der()];
        let pool = Pool::new(&config).unwrap();
        let upstream = Upstream::parse(&base).unwrap();
        let acceptor = tls.acceptor();
        let mut servers = Vec::new();
        for _ in 0..3 {
            let (client, server) = tokio::join!(pool.connect(&upstream), async {
                let (tcp, _) = listener.accept().await.unwrap();
                acceptor.accept(tcp).await.unwrap()
            });
            servers.push(server);
            pool.checkin(Provider::OpenAi, client.unwrap(), None);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pool.sweep(), 0, "session tickets leave a connection open");
        servers[0].shutdown().await.unwrap();
        servers[1]
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            .await
            .unwrap();
        servers[1].flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pool.sweep(), 2, "closed, and written to");
        assert!(pool.checkout(Provider::OpenAi).is_some(), "the quiet one");
        assert!(pool.checkout(Provider::OpenAi).is_none());
    }
}
