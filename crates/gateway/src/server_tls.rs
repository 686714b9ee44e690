//! HTTPS on the gateway's own listener (`tls_cert` and `tls_key`): the
//! certificate chain and its private key, read and checked at start
//! ([`ServerTls::load`]), and the handshake each client connection makes
//! before its first request ([`ServerTls::accept`]), within
//! `client_head_timeout` like the request head it precedes.
//!
//! A gateway runs for weeks and certificates are renewed (Let's Encrypt's
//! every 60 days): the files are looked at every [`RELOAD_CHECK`] and, once
//! they changed, read again ([`ServerTls::reload`]); a new pair that holds
//! together is served to the connections that come after, one that does
//! not is warned of and the old pair kept.
//!
//! Offered by ALPN: `h2` and `http/1.1`. A connection that chose `h2` (or
//! sends HTTP/2's preface) is served by hyper, as plain HTTP/2 is; the
//! rest start on the fast path ([`crate::h1`]). Certificates come from
//! rustls on ring, the provider the upstream side already uses.

use std::{
    fmt, io,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime},
};

use rustls::{
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};
use tokio::{io::AsyncWriteExt, net::TcpStream, sync::watch};
use tokio_rustls::{TlsAcceptor, server::TlsStream};

/// The protocols offered by ALPN, most preferred first.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Why a client's TLS handshake failed (the `reason` label of
/// `toolwarden_tls_handshakes_failed_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeFailure {
    /// Not done within `client_head_timeout_ms`.
    Timeout,
    /// The client spoke plain HTTP (answered with a plain 400).
    PlainHttp,
    /// TLS failed: the client refused the certificate (an unknown CA, a
    /// name it does not cover), no protocol or version in common, a
    /// malformed hello, the connection closed.
    Failed,
}

impl HandshakeFailure {
    /// Every reason, each listed at 0 from the start.
    pub const ALL: [HandshakeFailure; 3] = [
        HandshakeFailure::Timeout,
        HandshakeFailure::PlainHttp,
        HandshakeFailure::Failed,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            HandshakeFailure::Timeout => "timeout",
            HandshakeFailure::PlainHttp => "plain_http",
            HandshakeFailure::Failed => "failed",
        }
    }
}

/// How often the certificate and key files are looked at for a change.
pub(crate) const RELOAD_CHECK: Duration = Duration::from_secs(30);

/// The gateway's TLS server side: its certificate and key, and the
/// acceptor made of them.
#[derive(Clone)]
pub struct ServerTls {
    cert: PathBuf,
    key: PathBuf,
    acceptor: TlsAcceptor,
    served: Arc<Served>,
}

/// The pair served now, swapped when the files change.
#[derive(Debug)]
struct Served {
    pair: RwLock<Arc<CertifiedKey>>,
    /// The files' modification times and sizes when last read.
    seen: Mutex<Option<Stamps>>,
    /// The provider the pairs are read with (the acceptor's).
    provider: Arc<CryptoProvider>,
}

/// Each file's modification time and size.
type Stamps = [(SystemTime, u64); 2];

impl ResolvesServerCert for Served {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.pair.read().unwrap_or_else(|e| e.into_inner()).clone())
    }
}

// === impl ServerTls ===

impl ServerTls {
    /// Read `cert` (a PEM chain, the server's certificate first) and `key`
    /// (a PEM private key: PKCS#8, PKCS#1 or SEC1) and check that the key
    /// is the certificate's. The error says which file and what is wrong.
    pub fn load(cert: &Path, key: &Path) -> Result<ServerTls, String> {
        let provider = Arc::new(provider());
        let seen = stamps(cert, key);
        let pair = read_pair(cert, key, &provider)?;
        let served = Arc::new(Served {
            pair: RwLock::new(Arc::new(pair)),
            seen: Mutex::new(seen),
            provider: provider.clone(),
        });
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_no_client_auth()
            .with_cert_resolver(served.clone());
        config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        // The suite is the gateway's pick, by `provider`'s order.
        config.ignore_client_order = true;
        Ok(ServerTls {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
            served,
        })
    }

    /// Read the files again if either changed (its modification time or
    /// size) since they were last read: `Ok(true)` when the new pair is
    /// served from now on, `Ok(false)` when nothing changed, an error (the
    /// old pair still served) when the new files do not hold together —
    /// once per change: a renewal that writes the certificate, then the
    /// key, is read again when the key comes.
    pub fn reload(&self) -> Result<bool, String> {
        let now = stamps(&self.cert, &self.key);
        {
            let mut seen = self.served.seen.lock().unwrap_or_else(|e| e.into_inner());
            if now.is_none() || *seen == now {
                return Ok(false);
            }
            *seen = now;
        }
        let pair = read_pair(&self.cert, &self.key, &self.served.provider)?;
        *self.served.pair.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(pair);
        Ok(true)
    }

    /// Look at the files every `every` until `stop`, reloading the pair
    /// when they change (a task on the control runtime).
    pub(crate) async fn watch(self, every: Duration, mut stop: watch::Receiver<bool>) {
        loop {
            tokio::select! {
                _ = stop.wait_for(|stop| *stop) => return,
                () = tokio::time::sleep(every) => {}
            }
            let tls = self.clone();
            let reloaded = tokio::task::spawn_blocking(move || tls.reload()).await;
            match reloaded {
                Ok(Ok(true)) => tracing::info!(
                    cert = %self.cert.display(),
                    "TLS certificate reloaded"
                ),
                Ok(Ok(false)) => {}
                Ok(Err(e)) => tracing::warn!(
                    error = %e,
                    "TLS certificate changed but not reloaded; the previous one is still served"
                ),
                Err(_) => return,
            }
        }
    }

    /// The certificate file.
    pub fn cert(&self) -> &Path {
        &self.cert
    }

    /// The handshake of a client connection, within `deadline`: a client
    /// that sends its hello slowly, or never, does not hold the socket. A
    /// client that speaks plain HTTP to the HTTPS port (its first byte is
    /// not a TLS record's) is answered so, in plain HTTP, as nginx's 497
    /// does, instead of with a dropped connection. A failure is handed to
    /// `count` by its reason (the caller's metrics). A connection closed
    /// before its first byte (a load balancer's TCP health check) is none:
    /// neither counted nor logged.
    pub(crate) async fn accept(
        &self,
        mut stream: TcpStream,
        deadline: Duration,
        count: impl FnOnce(HandshakeFailure),
    ) -> io::Result<TlsStream<TcpStream>> {
        let handshake = async {
            let mut first = [0u8; 1];
            let peeked = stream
                .peek(&mut first)
                .await
                .map_err(|e| (Some(HandshakeFailure::Failed), e))?;
            // Closed before its first byte: a load balancer's or a port
            // scanner's TCP check, not a client that tried TLS and failed.
            if peeked == 0 {
                return Err((
                    None,
                    io::Error::new(io::ErrorKind::UnexpectedEof, "closed before a TLS hello"),
                ));
            }
            if first[0] != TLS_HANDSHAKE_RECORD {
                let _ = stream.write_all(PLAIN_HTTP_ANSWER.as_bytes()).await;
                let _ = stream.shutdown().await;
                return Err((
                    Some(HandshakeFailure::PlainHttp),
                    io::Error::new(io::ErrorKind::InvalidData, "plain HTTP on the HTTPS port"),
                ));
            }
            self.acceptor
                .accept(stream)
                .await
                .map_err(|e| (Some(HandshakeFailure::Failed), e))
        };
        let done = match tokio::time::timeout(deadline, handshake).await {
            Ok(done) => done,
            Err(_) => Err((
                Some(HandshakeFailure::Timeout),
                io::Error::new(
                    io::ErrorKind::TimedOut,
                    "TLS handshake not done within client_head_timeout",
                ),
            )),
        };
        done.map_err(|(reason, e)| {
            if let Some(reason) = reason {
                count(reason);
                warn_of(&e, reason);
            }
            e
        })
    }
}

/// rustls on ring, its cipher suites reordered: AES-128-GCM with SHA-256
/// first. Clients (rustls, OpenSSL, Node.js) offer AES-256-GCM with SHA-384
/// first, whose handshake hashes in SHA-384, which few x86 CPUs do in
/// hardware (SHA-NI covers SHA-256 alone), and whose records cost AES's 14 rounds instead of 10. With a
/// new connection per request the gateway spent 25 µs less CPU a full
/// handshake and 40 µs less a resumed one (of 270–290); on kept-alive
/// connections the change stayed within the runs' spread (BENCHMARKS.md,
/// "The cost of a handshake, and the cipher suite"). The others stay
/// offered, in ring's order, for clients without AES-128-GCM.
fn provider() -> CryptoProvider {
    use rustls::CipherSuite::{
        TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        TLS13_AES_128_GCM_SHA256,
    };
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.sort_by_key(|s| {
        !matches!(
            s.suite(),
            TLS13_AES_128_GCM_SHA256
                | TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        )
    });
    provider
}

/// The chain of `cert` and the key of `key`, checked to belong together.
fn read_pair(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<CertifiedKey, String> {
    let pem = std::fs::read(cert).map_err(|e| format!("tls_cert {}: {e}", cert.display()))?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "tls_cert {}: not a PEM certificate file ({e})",
                cert.display()
            )
        })?;
    if chain.is_empty() {
        return Err(format!(
            "tls_cert {}: no certificate in the file",
            cert.display()
        ));
    }
    let pem = std::fs::read(key).map_err(|e| format!("tls_key {}: {e}", key.display()))?;
    let private = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        format!(
            "tls_key {}: no PEM private key in the file ({e})",
            key.display()
        )
    })?;
    CertifiedKey::from_der(chain, private, provider).map_err(|e| {
        format!(
            "tls_cert {} with tls_key {}: {e}",
            cert.display(),
            key.display()
        )
    })
}

/// The files' modification times and sizes (`None`: one cannot be read).
fn stamps(cert: &Path, key: &Path) -> Option<Stamps> {
    let stamp = |path: &Path| {
        let meta = std::fs::metadata(path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    };
    Some([stamp(cert)?, stamp(key)?])
}

/// The first byte of a TLS handshake record (a ClientHello's).
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// What a plain HTTP request to the HTTPS listener is answered.
const PLAIN_HTTP_ANSWER: &str = "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: 57\r\n\r\ntoolwarden: this port serves HTTPS; use an https:// URL.\n";

/// Handshakes failed so far (all workers).
static FAILED: AtomicU64 = AtomicU64::new(0);

/// A failed handshake, warned of at the 1st, 2nd, 4th, 8th … (a client
/// that does not trust the certificate retries).
fn warn_of(e: &io::Error, reason: HandshakeFailure) {
    let n = FAILED.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        tracing::warn!(error = %e, reason = reason.as_str(), failed = n, "client TLS handshake failed");
    }
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_file(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/tls")
            .join(name)
    }

    #[test]
    fn the_plain_http_answer_says_its_length() {
        let (head, body) = PLAIN_HTTP_ANSWER.split_once("\r\n\r\n").unwrap();
        assert!(head.ends_with(&format!("content-length: {}", body.len())));
    }

    #[test]
    fn the_test_certificate_and_its_key_load() {
        let tls = ServerTls::load(&test_file("server.pem"), &test_file("server.key")).unwrap();
        assert_eq!(tls.cert(), test_file("server.pem"));
        assert!(format!("{tls:?}").contains("server.key"));
    }

    /// A new self-signed pair for `localhost`, as PEM (certificate, key),
    /// and the certificate's DER.
    fn new_pair() -> (String, String, Vec<u8>) {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        (
            made.cert.pem(),
            made.key_pair.serialize_pem(),
            made.cert.der().to_vec(),
        )
    }

    fn served_der(tls: &ServerTls) -> Vec<u8> {
        let pair = tls.served.pair.read().unwrap().clone();
        pair.end_entity_cert().unwrap().to_vec()
    }

    /// Renewed files are served once read again; files that do not hold
    /// together leave the pair served before, and are reported once.
    #[test]
    fn a_renewed_pair_is_served_and_a_broken_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::copy(test_file("server.pem"), &cert).unwrap();
        std::fs::copy(test_file("server.key"), &key).unwrap();
        let tls = ServerTls::load(&cert, &key).unwrap();
        let first = served_der(&tls);
        assert_eq!(tls.reload(), Ok(false), "nothing changed");

        let (new_cert, new_key, new_der) = new_pair();
        std::fs::write(&cert, &new_cert).unwrap();
        std::fs::write(&key, &new_key).unwrap();
        assert_eq!(tls.reload(), Ok(true));
        assert_eq!(served_der(&tls), new_der);
        assert_ne!(served_der(&tls), first);

        // The old certificate with the new key: refused, the pair kept.
        std::fs::copy(test_file("server.pem"), &cert).unwrap();
        let err = tls.reload().unwrap_err();
        assert!(err.contains("with tls_key"), "{err}");
        assert_eq!(served_der(&tls), new_der);
        assert_eq!(tls.reload(), Ok(false), "reported once per change");
        // The key follows: the pair holds together again.
        std::fs::copy(test_file("server.key"), &key).unwrap();
        assert_eq!(tls.reload(), Ok(true));
        assert_eq!(served_der(&tls), first);
        // A file gone: nothing read, nothing changed.
        std::fs::remove_file(&key).unwrap();
        assert_eq!(tls.reload(), Ok(false));
        assert_eq!(served_der(&tls), first);
    }

    #[test]
    fn each_wrong_file_is_named_with_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let missing = dir.path().join("missing.pem");
        let (cert, key, ca) = (
            test_file("server.pem"),
            test_file("server.key"),
            test_file("ca.pem"),
        );
        let cases: [(&Path, &Path, &str); 5] = [
            (&missing, &key, "tls_cert"),
            (&empty, &key, "no certificate in the file"),
            (&cert, &missing, "tls_key"),
            (&cert, &cert, "no PEM private key"),
            // The CA's certificate is not the key's.
            (&ca, &key, "with tls_key"),
        ];
        for (c, k, says) in cases {
            let err = ServerTls::load(c, k).unwrap_err();
            assert!(err.contains(says), "{c:?} {k:?}: {err}");
        }
    }
}
