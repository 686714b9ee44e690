//! The harness: a mock provider and a gateway in-process, an HTTP client,
//! the corpus, and readers for `/metrics`.

use std::{path::PathBuf, time::Duration};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::TokioExecutor,
};
use serde_json::Value;
use toolwarden_gateway::{Config, Gateway, JsonlLog, RunningGateway};
use toolwarden_mock_provider::{MockOptions, MockProvider};
use toolwarden_store::{Stats, StatsQuery, Store};

/// The HTTP client used for both direct and proxied requests: plain
/// HTTP, or HTTPS to a server whose certificate the test CA
/// (`tests/tls/ca.pem`) signed (a gateway serving HTTPS).
pub type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A response, read to the end.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The body ended with a transport error instead of its proper end.
    pub broken: bool,
}

impl Reply {
    /// The body as JSON; panics with the body text when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}), status {}: {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as (lossy) text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A mock provider, a gateway in front of it (recording to a temporary
/// SQLite database and JSONL file), and a client.
pub struct Harness {
    pub mock: MockProvider,
    pub gateway: Option<RunningGateway>,
    pub client: HttpClient,
    pub db_url: String,
    pub db_path: PathBuf,
    pub jsonl: PathBuf,
    _dir: tempfile::TempDir,
}

/// A keep-alive HTTP/1 client (`http/1.1` by ALPN over TLS).
pub fn client() -> HttpClient {
    let https = HttpsConnectorBuilder::new()
        .with_tls_config(test_ca_client_config())
        .https_or_http()
        .enable_http1()
        .build();
    Client::builder(TokioExecutor::new()).build(https)
}

/// A client that offers only `h2` by ALPN: HTTP/2 over TLS.
pub fn h2_client() -> HttpClient {
    let https = HttpsConnectorBuilder::new()
        .with_tls_config(test_ca_client_config())
        .https_only()
        .enable_http2()
        .build();
    Client::builder(TokioExecutor::new()).build(https)
}

/// The test CA alone, as rustls' roots.
pub fn test_ca_roots() -> rustls::RootCertStore {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    for ca in
        CertificateDer::pem_file_iter(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tls/ca.pem"))
            .unwrap()
    {
        roots.add(ca.unwrap()).unwrap();
    }
    roots
}

/// rustls on ring, with `provider`'s suites, trusting `roots` alone.
pub fn client_config_trusting(
    provider: rustls::crypto::CryptoProvider,
    roots: rustls::RootCertStore,
) -> rustls::ClientConfig {
    rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

/// rustls on ring, with `provider`'s suites, trusting the test CA alone.
pub fn test_ca_client_config_with(
    provider: rustls::crypto::CryptoProvider,
) -> rustls::ClientConfig {
    client_config_trusting(provider, test_ca_roots())
}

/// rustls trusting the test CA alone.
pub fn test_ca_client_config() -> rustls::ClientConfig {
    test_ca_client_config_with(rustls::crypto::ring::default_provider())
}

impl Harness {
    /// Default mock options and gateway config.
    pub async fn start() -> Harness {
        Harness::with(MockOptions::default(), |_| {}).await
    }

    /// A harness with these mock options and a config adjusted by `tweak`.
    pub async fn with(mock_opts: MockOptions, tweak: impl FnOnce(&mut Config)) -> Harness {
        let mock = MockProvider::start(mock_opts).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let db_path = dir.path().join("toolwarden.db");
        let jsonl = dir.path().join("events.jsonl");
        let db_url = format!("sqlite://{}", db_path.display());
        let mut config = Config::for_tests(&mock.base_url());
        config.database = Some(db_url.clone());
        config.jsonl = Some(JsonlLog::unbounded(&jsonl));
        tweak(&mut config);
        let gateway = Gateway::start(config).await.expect("gateway starts");
        Harness {
            mock,
            gateway: Some(gateway),
            client: client(),
            db_url,
            db_path,
            jsonl,
            _dir: dir,
        }
    }

    /// Stop the gateway (draining its recorder) and start a new one on the
    /// same database, JSONL log and mock: a restart, or another instance
    /// sharing the database. Its address changes.
    pub async fn restart(&mut self) {
        if let Some(gw) = self.gateway.take() {
            gw.shutdown().await;
        }
        let mut config = Config::for_tests(&self.mock.base_url());
        config.database = Some(self.db_url.clone());
        config.jsonl = Some(JsonlLog::unbounded(&self.jsonl));
        self.gateway = Some(Gateway::start(config).await.expect("gateway restarts"));
        self.client = client();
    }

    /// `http://ADDR` of the gateway (`https://` when it serves HTTPS).
    pub fn gw(&self) -> String {
        let gw = self.gateway.as_ref().expect("gateway running");
        gw.base_url()
    }

    /// `http://ADDR` of the mock provider.
    pub fn direct(&self) -> String {
        self.mock.base_url()
    }

    /// Shut the gateway down gracefully (draining the recorder) and read
    /// the store.
    pub async fn finish(&mut self) -> Stats {
        if let Some(gw) = self.gateway.take() {
            gw.shutdown().await;
        }
        let store = Store::open(&self.db_url).await.expect("store opens");
        store
            .stats(&StatsQuery {
                limit: 10_000,
                ..StatsQuery::default()
            })
            .await
            .expect("stats")
    }

    /// The JSONL event log as parsed lines.
    pub fn events(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.jsonl).unwrap_or_default();
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("JSONL line {e}: {l}")))
            .collect()
    }

    /// `GET /metrics` of the running gateway.
    pub async fn metrics(&self) -> String {
        let r = send(
            &self.client,
            Method::GET,
            format!("{}/metrics", self.gw()),
            &[],
            Vec::new(),
        )
        .await;
        assert_eq!(r.status, 200, "/metrics: {}", r.text());
        r.text()
    }

    /// Poll `/metrics` until `ok` holds (the recorder writes off the request
    /// path), for at most 5 s; returns the last text either way.
    pub async fn metrics_when(&self, ok: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let m = self.metrics().await;
            if ok(&m) || std::time::Instant::now() > deadline {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits (as [`Self::metrics_when`]) for the sample `name{labels}` to
    /// read `want`, and asserts that it does.
    pub async fn assert_metric(&self, name: &str, labels: &[(&str, &str)], want: f64) {
        let m = self.metrics_when(|m| metric(m, name, labels) == want).await;
        assert_eq!(metric(&m, name, labels), want, "{name} {labels:?}: {m}");
    }
}

/// Send a request and read the whole response (a broken body is noted,
/// not an error).
pub async fn send(
    c: &HttpClient,
    method: Method,
    url: String,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Reply {
    let mut req = Request::builder().method(method).uri(&url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body))).expect("request");
    let resp = tokio::time::timeout(Duration::from_secs(20), c.request(req))
        .await
        .unwrap_or_else(|_| panic!("no response headers from {url} within 20 s"))
        .unwrap_or_else(|e| panic!("request to {url} failed: {e:?}"));
    let (parts, mut body) = resp.into_parts();
    let mut out = Vec::new();
    let mut broken = false;
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), body.frame())
            .await
            .unwrap_or_else(|_| panic!("body from {url} stalled for 20 s"));
        match frame {
            None => break,
            Some(Ok(f)) => {
                if let Ok(d) = f.into_data() {
                    out.extend_from_slice(&d);
                }
            }
            Some(Err(_)) => {
                broken = true;
                break;
            }
        }
    }
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: out.into(),
        broken,
    }
}

/// POST a JSON body.
pub async fn post(c: &HttpClient, url: String, headers: &[(&str, &str)], body: &Value) -> Reply {
    send(
        c,
        Method::POST,
        url,
        headers,
        serde_json::to_vec(body).expect("json"),
    )
    .await
}

/// A recorded conversation body without its `_source` / `_notes` keys:
/// the repository's fixture when there is one, else the file of the
/// recorded corpus; `None` (after the visible skip line, an error under
/// `CI=true`) when only the corpus has it and the corpus is not there.
pub fn corpus_conversation(name: &str) -> Option<Value> {
    let rel = format!("conversations/{name}");
    let text = if toolwarden_testkit::fixture_path(&rel).is_file() {
        toolwarden_testkit::fixture(&rel)
    } else {
        toolwarden_testkit::corpus_file(
            &format!(
                "{} ({name})",
                toolwarden_testkit::current_test(module_path!())
            ),
            &rel,
        )?
    };
    let mut v: Value = serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    if let Some(obj) = v.as_object_mut() {
        obj.remove("_source");
        obj.remove("_notes");
    }
    Some(v)
}

/// Sum of the samples of `name` whose labels include every `(key, value)`.
pub fn metric(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (n, rest) = match series.find('{') {
                Some(i) => (&series[..i], &series[i..]),
                None => (series, ""),
            };
            if n != name {
                return None;
            }
            let all = labels
                .iter()
                .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")));
            all.then(|| value.parse::<f64>().ok()).flatten()
        })
        .sum()
}

/// `(calls, failures)` of `tool`'s row in `stats`; panics naming `what`
/// (the test's case) when there is none.
pub fn calls_and_failures(stats: &Stats, tool: &str, what: &str) -> (u64, u64) {
    stats
        .tools
        .iter()
        .find(|t| t.tool == tool)
        .map(|t| (t.calls, t.failures))
        .unwrap_or_else(|| panic!("{what}: no row for {tool} in {:?}", stats.tools))
}

/// The tool counters `(calls, results, failures)`, each summed over the
/// series whose labels include every `(key, value)`.
pub fn tool_counts(text: &str, labels: &[(&str, &str)]) -> (f64, f64, f64) {
    (
        metric(text, "toolwarden_tool_calls_total", labels),
        metric(text, "toolwarden_tool_results_total", labels),
        metric(text, "toolwarden_tool_failures_total", labels),
    )
}

#[test]
fn metric_sums_matching_series() {
    let text = "# HELP x\nx_total{a=\"1\",b=\"2\"} 3\nx_total{a=\"1\",b=\"3\"} 4\nx_total{a=\"2\"} 5\ny 1\n";
    assert_eq!(metric(text, "x_total", &[("a", "1")]), 7.0);
    assert_eq!(metric(text, "x_total", &[]), 12.0);
    assert_eq!(metric(text, "y", &[]), 1.0);
    assert_eq!(metric(text, "x", &[]), 0.0);
}

/// Everything a raw connection receives until the gateway closes it (the
/// request said `connection: close`), as text; panics after 10 s.
pub async fn read_to_close(s: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut seen))
        .await
        .expect("the answer ends")
        .expect("read");
    String::from_utf8_lossy(&seen).into_owned()
}
