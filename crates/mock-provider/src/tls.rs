//! HTTPS (and so `wss://`) for the mock provider: [`MockTls::generate`]
//! makes a certificate authority and a server certificate for `localhost`
//! and `127.0.0.1` signed by it, at run time (nothing on disk to expire);
//! a client trusts [`MockTls::ca_der`] / [`MockTls::ca_pem`]. Set
//! [`crate::MockOptions::tls`] and the mock serves TLS only (HTTP/1.1 by
//! ALPN, as WebSocket upgrades need), with [`crate::MockProvider::base_url`]
//! `https://localhost:PORT`.

use std::{fmt, io, sync::Arc};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

/// A made-up certificate authority and the mock's certificate signed by it.
#[derive(Clone)]
pub struct MockTls {
    ca_der: CertificateDer<'static>,
    ca_pem: String,
    pub(crate) acceptor: TlsAcceptor,
}

// === impl MockTls ===

impl MockTls {
    /// A fresh CA and a server certificate for `localhost` and `127.0.0.1`.
    pub fn generate() -> io::Result<MockTls> {
        MockTls::generate_for(&["localhost", "127.0.0.1"])
    }

    /// A fresh CA and a server certificate for `names` (host names, `*.`
    /// wildcards, IP addresses; the first is its common name): a test
    /// server that stands for a real host the client reaches at a local
    /// address.
    pub fn generate_for(names: &[&str]) -> io::Result<MockTls> {
        let ca_key = KeyPair::generate().map_err(io::Error::other)?;
        let mut ca_params =
            CertificateParams::new(Vec::<String>::new()).map_err(io::Error::other)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "toolwarden mock provider CA");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = ca_params.self_signed(&ca_key).map_err(io::Error::other)?;

        let key = KeyPair::generate().map_err(io::Error::other)?;
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let common = names.first().cloned().unwrap_or_default();
        let mut params = CertificateParams::new(names).map_err(io::Error::other)?;
        params.distinguished_name.push(DnType::CommonName, common);
        let cert = params
            .signed_by(&key, &ca, &ca_key)
            .map_err(io::Error::other)?;

        let chain = vec![cert.der().clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(io::Error::other)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(MockTls {
            ca_der: ca.der().clone(),
            ca_pem: ca.pem(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// A TLS acceptor with the mock's certificate, for a test's own server.
    pub fn acceptor(&self) -> TlsAcceptor {
        self.acceptor.clone()
    }

    /// The CA certificate (DER), for a client's root store.
    pub fn ca_der(&self) -> CertificateDer<'static> {
        self.ca_der.clone()
    }

    /// The CA certificate (PEM), for a file such as the gateway's
    /// `upstream_ca`.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }
}

impl fmt::Debug for MockTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockTls").finish_non_exhaustive()
    }
}
