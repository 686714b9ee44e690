//! The gateway serving HTTPS (`tls_cert`, `tls_key`; the test certificate
//! for `localhost` and 127.0.0.1): tool rounds in every dialect, streaming
//! and not, counted exactly over TLS on the fast path; HTTP/2 chosen by
//! ALPN served by hyper; plain HTTP sent to the HTTPS port told so; a
//! handshake that never comes cut off at `client_head_timeout`; a
//! connection beyond `max_client_connections` refused over TLS; a renewed
//! certificate served; failed handshakes counted by reason.

use std::{sync::Arc, time::Duration};

use http::Method;
use rustls::pki_types::ServerName;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};
use toolwarden_gateway::{Config, ServerTls};
use toolwarden_mock_provider::MockOptions;

use super::{
    convo::{Convo, Kind},
    support::{
        Harness, HttpClient, client_config_trusting, h2_client, metric, read_to_close, send,
        test_ca_client_config, test_ca_client_config_with,
    },
};
use crate::tls_support::tls_file;

const HANDSHAKES_FAILED: &str = "toolwarden_tls_handshakes_failed_total";

fn serve_https(config: &mut Config) {
    config.tls = Some(ServerTls::load(&tls_file("server.pem"), &tls_file("server.key")).unwrap());
}

async fn https_gateway(tweak: impl FnOnce(&mut Config)) -> Harness {
    let opts = MockOptions {
        calls_per_reply: 2,
        ..MockOptions::default()
    };
    Harness::with(opts, |c| {
        serve_https(c);
        tweak(c);
    })
    .await
}

/// `GET /healthz` by `client` answers 200.
async fn assert_healthy(h: &Harness, client: &HttpClient) {
    let url = format!("{}/healthz", h.gw());
    let r = send(client, Method::GET, url, &[], Vec::new()).await;
    assert_eq!(r.status, 200);
}

/// A TLS connection to the gateway, trusting the test CA, offering `alpn`.
async fn tls_connect(
    h: &Harness,
    alpn: &[u8],
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let addr = h.gateway.as_ref().unwrap().addr();
    let mut config = test_ca_client_config();
    config.alpn_protocols = vec![alpn.to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await?;
    connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_rounds_over_https_count_exactly_in_every_dialect() {
    let mut h = https_gateway(|_| {}).await;
    assert!(h.gw().starts_with("https://127.0.0.1:"), "{}", h.gw());
    let outcomes = [
        (false, "Flight TP123 found: departs 09:05"),
        (true, "Error: seat 12A is no longer available"),
    ];
    let kinds = [Kind::Anthropic, Kind::Chat, Kind::Responses, Kind::Gemini];
    for kind in kinds {
        for stream in [false, true] {
            let session = format!("https-{}-{stream}", kind.dialect());
            let mut convo = Convo::new(kind, stream, Some(&session));
            let calls = convo.tool_round(&h.client, &h.gw(), &outcomes).await;
            let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["lookup", "book"], "{kind:?} stream={stream}");
        }
    }
    // Chat and Responses are both OpenAI's.
    let rounds = 2.0;
    let counted = |m: &str| {
        [("anthropic", 1.0), ("openai", 2.0), ("gemini", 1.0)]
            .iter()
            .all(|(provider, dialects)| {
                ["lookup", "book"].iter().all(|tool| {
                    metric(
                        m,
                        "toolwarden_tool_calls_total",
                        &[("provider", provider), ("tool", tool)],
                    ) == rounds * dialects
                })
            })
    };
    let m = h.metrics_when(counted).await;
    assert!(counted(&m), "{m}");
    assert_eq!(
        metric(&m, "toolwarden_tool_failures_total", &[("tool", "book")]),
        rounds * kinds.len() as f64,
        "{m}"
    );
    assert_eq!(
        metric(&m, "toolwarden_tool_failures_total", &[("tool", "lookup")]),
        0.0
    );
    let stats = h.finish().await;
    assert_eq!(stats.requests.total, 2 * 2 * kinds.len() as u64);
    assert_eq!(stats.requests.errors, 0);
    assert_eq!(stats.sessions.len(), 2 * kinds.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_chosen_by_alpn_is_served() {
    let mut h = https_gateway(|_| {}).await;
    let client = h2_client();
    let mut convo = Convo::new(Kind::Anthropic, true, Some("https-h2"));
    let outcomes = [(false, "found"), (true, "Error: sold out")];
    let calls = convo.tool_round(&client, &h.gw(), &outcomes).await;
    assert_eq!(calls.len(), 2);
    assert_healthy(&h, &client).await;
    let stats = h.finish().await;
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    let failures: u64 = stats.tools.iter().map(|t| t.failures).sum();
    assert_eq!((calls, failures), (2, 1), "{:?}", stats.tools);
}

/// A TLS connection to the gateway offering only `suites` (in the
/// client's order of preference): the suite the gateway chose.
async fn negotiated(h: &Harness, suites: &[rustls::CipherSuite]) -> rustls::CipherSuite {
    let addr = h.gateway.as_ref().unwrap().addr();
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites = suites
        .iter()
        .map(|want| {
            *rustls::crypto::ring::ALL_CIPHER_SUITES
                .iter()
                .find(|s| s.suite() == *want)
                .unwrap()
        })
        .collect();
    let config = test_ca_client_config_with(provider);
    let tcp = TcpStream::connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    tls.get_ref().1.negotiated_cipher_suite().unwrap().suite()
}

/// The gateway picks AES-128-GCM with SHA-256 when the client offers it,
/// whatever the client's order (rustls, OpenSSL and Node.js put
/// AES-256-GCM first), and still serves a client that offers only another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_picks_aes_128_gcm_and_serves_the_other_suites() {
    use rustls::CipherSuite::{
        TLS13_AES_128_GCM_SHA256, TLS13_AES_256_GCM_SHA384, TLS13_CHACHA20_POLY1305_SHA256,
    };
    let h = https_gateway(|_| {}).await;
    let openssl_order = [
        TLS13_AES_256_GCM_SHA384,
        TLS13_CHACHA20_POLY1305_SHA256,
        TLS13_AES_128_GCM_SHA256,
    ];
    assert_eq!(
        negotiated(&h, &openssl_order).await,
        TLS13_AES_128_GCM_SHA256
    );
    for only in [TLS13_AES_256_GCM_SHA384, TLS13_CHACHA20_POLY1305_SHA256] {
        assert_eq!(negotiated(&h, &[only]).await, only);
    }
}

/// `GET /healthz` over TLS to `h`'s gateway by a client trusting `roots`
/// alone: the answer's status line.
async fn healthz_trusting(h: &Harness, roots: rustls::RootCertStore) -> String {
    let config = client_config_trusting(rustls::crypto::ring::default_provider(), roots);
    let tcp = TcpStream::connect(h.gateway.as_ref().unwrap().addr())
        .await
        .unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .expect("the handshake, trusting the issuer's root");
    tls.write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut seen)).await;
    let answer = String::from_utf8_lossy(&seen);
    answer.lines().next().unwrap_or_default().to_string()
}

/// The roots of the PEM certificates in `pem`.
fn roots_of(pem: &[u8]) -> rustls::RootCertStore {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(pem) {
        roots.add(ca.unwrap()).unwrap();
    }
    roots
}

/// An RSA key in PKCS#1 (`BEGIN RSA PRIVATE KEY`, what `openssl genrsa`
/// and older tools write) with its certificate from another CA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rsa_key_in_pkcs1_is_served() {
    let h = https_gateway(|c| {
        let tls = ServerTls::load(&tls_file("rsa-server.pem"), &tls_file("rsa-server.key"));
        c.tls = Some(tls.unwrap());
    })
    .await;
    let roots = roots_of(&std::fs::read(tls_file("rsa-ca.pem")).unwrap());
    assert_eq!(healthz_trusting(&h, roots).await, "HTTP/1.1 200 OK");
}

/// A full chain, as Let's Encrypt's `fullchain.pem` is (the certificate,
/// then the intermediate that signed it), is sent whole: a client that
/// trusts the root alone completes the handshake. The leaf's key is
/// Ed25519, in PKCS#8.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_chain_through_an_intermediate_is_served() {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_params = |name: &str| {
        let mut p = CertificateParams::new(Vec::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        p
    };
    let root_key = KeyPair::generate().unwrap();
    let root = ca_params("test root").self_signed(&root_key).unwrap();
    let mid_key = KeyPair::generate().unwrap();
    let mid = ca_params("test intermediate")
        .signed_by(&mid_key, &root, &root_key)
        .unwrap();
    let leaf_key = KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &mid, &mid_key)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (chain, key) = (
        dir.path().join("fullchain.pem"),
        dir.path().join("privkey.pem"),
    );
    std::fs::write(&chain, format!("{}{}", leaf.pem(), mid.pem())).unwrap();
    std::fs::write(&key, leaf_key.serialize_pem()).unwrap();
    let h = https_gateway(|c| c.tls = Some(ServerTls::load(&chain, &key).unwrap())).await;
    let roots = roots_of(root.pem().as_bytes());
    assert_eq!(healthz_trusting(&h, roots).await, "HTTP/1.1 200 OK");
}

/// `request` sent in plain HTTP to `h`'s HTTPS port: all it was answered.
async fn plain_http(h: &Harness, request: &[u8]) -> String {
    let mut s = TcpStream::connect(h.gateway.as_ref().unwrap().addr())
        .await
        .unwrap();
    s.write_all(request).await.unwrap();
    read_to_close(&mut s).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_to_the_https_port_is_told_to_use_https() {
    let h = https_gateway(|_| {}).await;
    let answer = plain_http(
        &h,
        b"POST /v1/messages HTTP/1.1\r\nhost: localhost\r\ncontent-length: 2\r\n\r\n{}",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert!(answer.contains("https://"), "{answer}");
    // The listener goes on serving TLS.
    assert_healthy(&h, &h.client).await;
    h.assert_metric(HANDSHAKES_FAILED, &[("reason", "plain_http")], 1.0)
        .await;
}

/// A client that connects and never sends its hello, or sends a part of
/// it, is closed at `client_head_timeout`, as a half-sent head is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_that_never_comes_is_cut_off() {
    let h = https_gateway(|c| c.client_head_timeout = Duration::from_millis(300)).await;
    let addr = h.gateway.as_ref().unwrap().addr();
    for sent in [&b""[..], &[0x16, 0x03, 0x01][..]] {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(sent).await.unwrap();
        let started = std::time::Instant::now();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut rest)).await;
        assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{sent:?}: {read:?}");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(250) && took < Duration::from_secs(3),
            "{sent:?}: closed after {took:?}"
        );
    }
    h.assert_metric(HANDSHAKES_FAILED, &[("reason", "timeout")], 2.0)
        .await;
}

/// A connection closed before its first byte, as a load balancer's TCP
/// health check or a port scan closes it, is not a failed handshake: no
/// reason counts it (the plain-HTTP request after them is counted, so the
/// gateway has seen them by then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_before_its_hello_is_no_failure() {
    let h = https_gateway(|_| {}).await;
    let addr = h.gateway.as_ref().unwrap().addr();
    for _ in 0..3 {
        drop(TcpStream::connect(addr).await.unwrap());
    }
    let answer = plain_http(&h, b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    h.assert_metric(HANDSHAKES_FAILED, &[("reason", "plain_http")], 1.0)
        .await;
    // Time for a worker that took one of them later than the request.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for reason in ["failed", "timeout"] {
        h.assert_metric(HANDSHAKES_FAILED, &[("reason", reason)], 0.0)
            .await;
    }
}

/// Beyond `max_client_connections` an HTTPS client gets the 503 too, over
/// TLS, where it can read it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_over_the_cap_is_refused_over_tls() {
    let h = https_gateway(|c| {
        c.max_client_connections = 1;
        c.workers = 1;
    })
    .await;
    let mut first = tls_connect(&h, b"http/1.1").await.unwrap();
    first
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 512];
    let n = first.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &buf[..n]);
    let mut second = tls_connect(&h, b"http/1.1").await.unwrap();
    second
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), second.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(answer.contains("max_client_connections"), "{answer}");
    drop(first);
}

/// The certificate files renewed under a running gateway: once read again
/// (what the gateway does every 30 s; here at once) new connections get
/// the new certificate, and a request over one is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_certificate_is_served_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::copy(tls_file("server.pem"), &cert).unwrap();
    std::fs::copy(tls_file("server.key"), &key).unwrap();
    let tls = ServerTls::load(&cert, &key).unwrap();
    let served = tls.clone();
    let h = https_gateway(move |c| c.tls = Some(tls)).await;
    assert!(tls_connect(&h, b"http/1.1").await.is_ok());

    let renewed = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    std::fs::write(&cert, renewed.cert.pem()).unwrap();
    std::fs::write(&key, renewed.key_pair.serialize_pem()).unwrap();
    assert_eq!(served.reload(), Ok(true));

    // The old CA no longer verifies what is served (the client refuses it,
    // counted as a failed handshake); the new certificate does.
    assert!(tls_connect(&h, b"http/1.1").await.is_err());
    // Read in-process: the harness's client trusts the old CA alone.
    let metrics = h.gateway.as_ref().unwrap().metrics().clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while metrics.counter(HANDSHAKES_FAILED, &["failed"]) == 0
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(metrics.counter(HANDSHAKES_FAILED, &["failed"]), 1);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(renewed.cert.der().clone()).unwrap();
    assert_eq!(healthz_trusting(&h, roots).await, "HTTP/1.1 200 OK");
}
