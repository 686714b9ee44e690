//! `TOOLWARDEN_BENCH_TLS=1`: the gateway children serve HTTPS with the
//! gateway's test certificate (`crates/gateway/tests/tls`, for `localhost`)
//! and the load connects to them over TLS (HTTP/1.1 by ALPN, as the
//! agents' SDKs do); the floors and the direct rows stay plain, so a run
//! with it beside one without gives what HTTPS adds to the gateway.

use std::{
    collections::HashSet,
    net::SocketAddr,
    path::Path,
    sync::{Arc, Mutex, OnceLock},
};

use rustls::pki_types::{CertificateDer, pem::PemObject};
use tokio_rustls::TlsConnector;
use toolwarden_gateway::ServerTls;

/// The test certificate's folder, in the source tree the bench was built from.
const TLS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../gateway/tests/tls");

/// The variable that makes the gateway children serve HTTPS.
pub const VAR: &str = "TOOLWARDEN_BENCH_TLS";

/// Whether the gateway children serve HTTPS.
pub fn on() -> bool {
    std::env::var(VAR).is_ok_and(|v| v == "1")
}

/// The gateway child's TLS side, when [`on`].
pub fn server() -> Result<Option<ServerTls>, String> {
    if !on() {
        return Ok(None);
    }
    let dir = Path::new(TLS_DIR);
    ServerTls::load(&dir.join("server.pem"), &dir.join("server.key")).map(Some)
}

/// The addresses served over HTTPS.
fn served() -> &'static Mutex<HashSet<SocketAddr>> {
    static SERVED: OnceLock<Mutex<HashSet<SocketAddr>>> = OnceLock::new();
    SERVED.get_or_init(Default::default)
}

/// A gateway child at `addr` serves HTTPS.
pub fn served_at(addr: SocketAddr) {
    served()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(addr);
}

/// The connector for `addr` when it serves HTTPS (trusting the test CA).
pub fn client_for(addr: SocketAddr) -> Option<TlsConnector> {
    let tls = served()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&addr);
    tls.then(connector)
}

/// The connector for HTTPS children: it resumes sessions (rustls' default
/// in-memory cache).
pub fn connector() -> TlsConnector {
    static CONNECTOR: OnceLock<TlsConnector> = OnceLock::new();
    CONNECTOR.get_or_init(|| build(true)).clone()
}

/// A connector that never resumes a session: each connection a full
/// handshake.
pub fn connector_without_resumption() -> TlsConnector {
    static CONNECTOR: OnceLock<TlsConnector> = OnceLock::new();
    CONNECTOR.get_or_init(|| build(false)).clone()
}

/// A connector trusting the test CA, offering HTTP/1.1 by ALPN, resuming
/// sessions from rustls' default in-memory cache when `resume`.
fn build(resume: bool) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    let ca = Path::new(TLS_DIR).join("ca.pem");
    for cert in CertificateDer::pem_file_iter(&ca).expect("the test CA") {
        roots.add(cert.expect("the test CA")).expect("the test CA");
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    if !resume {
        config.resumption = rustls::client::Resumption::disabled();
    }
    TlsConnector::from(Arc::new(config))
}
