//! The test certificate (for `localhost` and 127.0.0.1, signed by
//! `tests/tls/ca.pem`) as a TLS server: what the test binaries that need
//! an HTTPS peer share (`h1.rs`, `e2e`; included with `#[path]`).

use std::{path::PathBuf, sync::Arc};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};

/// A file of `tests/tls`.
pub fn tls_file(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tls")
        .join(name)
}

/// A TLS acceptor with the test certificate, offering `alpn` alone.
pub fn acceptor(alpn: &[u8]) -> tokio_rustls::TlsAcceptor {
    let certs = CertificateDer::pem_file_iter(tls_file("server.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(tls_file("server.key")).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    config.alpn_protocols = vec![alpn.to_vec()];
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}
