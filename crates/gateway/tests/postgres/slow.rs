//! A TCP relay that can hold back what a client sends to a server: put in
//! front of one gateway's PostgreSQL, it makes that gateway's writes land
//! later than another's, deterministically.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running relay; [`Slow::set_delay`] applies to every later chunk.
pub struct Slow {
    pub addr: SocketAddr,
    delay_ms: Arc<AtomicU64>,
}

impl Slow {
    /// Relay 127.0.0.1:PORT → `target`, without delay at first.
    pub async fn start(target: SocketAddr) -> Slow {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind relay");
        let addr = listener.local_addr().expect("relay addr");
        let delay_ms = Arc::new(AtomicU64::new(0));
        let delay = delay_ms.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(target).await else {
                    continue;
                };
                let (mut cr, cw) = client.into_split();
                let (sr, mut sw) = server.into_split();
                let delay = delay.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let d = delay.load(Ordering::Relaxed);
                        if d > 0 {
                            tokio::time::sleep(Duration::from_millis(d)).await;
                        }
                        if sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = sw.shutdown().await;
                });
                tokio::spawn(async move {
                    let (mut sr, mut cw) = (sr, cw);
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                    let _ = cw.shutdown().await;
                });
            }
        });
        Slow { addr, delay_ms }
    }

    /// Hold each chunk the client sends for `ms` before passing it on.
    pub fn set_delay(&self, ms: u64) {
        self.delay_ms.store(ms, Ordering::Relaxed);
    }
}

/// `url` with its host and port replaced by `addr`
/// (`postgres://user@host:port/db?…`).
pub fn with_addr(url: &str, addr: SocketAddr) -> String {
    let (scheme, rest) = url.split_once("://").expect("URL with a scheme");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let user = authority.rfind('@').map_or("", |i| &authority[..=i]);
    format!("{scheme}://{user}{addr}{tail}")
}

/// The socket address a `postgres://` URL names (IPv4 literal or `localhost`).
pub fn addr_of(url: &str) -> SocketAddr {
    let rest = url.split_once("://").expect("URL with a scheme").1;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    let hostport = hostport.replace("localhost", "127.0.0.1");
    let hostport = if hostport.contains(':') {
        hostport
    } else {
        format!("{hostport}:5432")
    };
    hostport
        .parse()
        .unwrap_or_else(|e| panic!("{url}: host must be an IP literal for the relay: {e}"))
}

#[test]
fn urls_are_rewritten() {
    let a: SocketAddr = "127.0.0.1:9".parse().unwrap();
    assert_eq!(
        with_addr("postgres://u:p@127.0.0.1:55432/db?options[x]=y", a),
        "postgres://u:p@127.0.0.1:9/db?options[x]=y"
    );
    assert_eq!(with_addr("postgres://h/db", a), "postgres://127.0.0.1:9/db");
    assert_eq!(
        addr_of("postgres://u@127.0.0.1:55432/db"),
        "127.0.0.1:55432".parse().unwrap()
    );
    assert_eq!(
        addr_of("postgres://localhost/db"),
        "127.0.0.1:5432".parse().unwrap()
    );
}
