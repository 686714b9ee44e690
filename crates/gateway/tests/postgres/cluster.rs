//! Databases for one test (a fresh schema in the PostgreSQL named by
//! `TOOLWARDEN_TEST_POSTGRES_URL`, or a temporary SQLite file) and a
//! cluster: one mock provider and N gateways on that database.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http::Method;
use serde_json::Value;
use sqlx::Connection;
use toolwarden_gateway::{Config, Gateway, RunningGateway};
use toolwarden_mock_provider::{MockOptions, MockProvider};
use toolwarden_store::{CallRow, SessionCalls, Stats, StatsQuery, Store};

use crate::support::{HttpClient, client, send};

/// The environment variable naming the test PostgreSQL.
pub const PG_ENV: &str = "TOOLWARDEN_TEST_POSTGRES_URL";

/// A database for one test; its PostgreSQL schema is dropped with it
/// (kept, and named on stderr, when the test fails).
pub struct TestDb {
    pub url: String,
    /// PostgreSQL: (maintenance URL, schema).
    pg: Option<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// A temporary SQLite file.
    pub fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("tw.db").display());
        TestDb {
            url,
            pg: None,
            _dir: Some(dir),
        }
    }

    /// A fresh schema in the test PostgreSQL, or `None` after a loud
    /// `SKIPPED` line when the variable is not set.
    pub async fn postgres(test: &str) -> Option<TestDb> {
        let Ok(base) = std::env::var(PG_ENV) else {
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: set {PG_ENV} (e.g. {PG_ENV}=$(bash .ci/pg.sh start)) to run the \
                 PostgreSQL test `{test}` ***\n"
            );
            return None;
        };
        static N: AtomicU64 = AtomicU64::new(0);
        let schema = format!(
            "tw_gw_{}_{}_{:08x}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            fastrand::u32(..)
        );
        let mut conn = sqlx::PgConnection::connect(&base)
            .await
            .unwrap_or_else(|e| panic!("{PG_ENV}={base} is set but unreachable: {e}"));
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut conn)
            .await
            .expect("create schema");
        let _ = conn.close().await;
        let sep = if base.contains('?') { '&' } else { '?' };
        Some(TestDb {
            url: format!("{base}{sep}options[search_path]={schema}"),
            pg: Some((base, schema)),
            _dir: None,
        })
    }

    /// Drop the PostgreSQL schema now (a no-op for SQLite); dropping the
    /// [`TestDb`] does it too, also when the test failed.
    pub async fn drop_schema(&mut self) {
        if let Some((base, schema)) = self.pg.take() {
            drop_schema(&base, &schema).await;
        }
    }
}

async fn drop_schema(base: &str, schema: &str) {
    let Ok(mut conn) = sqlx::PgConnection::connect(base).await else {
        return;
    };
    let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .execute(&mut conn)
        .await;
    let _ = conn.close().await;
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((base, schema)) = self.pg.take() else {
            return;
        };
        if std::thread::panicking() {
            // Kept for a post-mortem; the next run's schemas have other names.
            let _ = writeln!(
                std::io::stderr(),
                "test failed: PostgreSQL schema {schema} kept for inspection"
            );
            return;
        }
        // On a thread of its own: Drop cannot await, and may run inside the
        // test's runtime.
        let cleanup = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                rt.block_on(drop_schema(&base, &schema));
            }
        });
        let _ = cleanup.join();
    }
}

/// One mock provider and `n` gateways recording to one database.
pub struct Cluster {
    pub mock: MockProvider,
    pub gateways: Vec<RunningGateway>,
    pub client: HttpClient,
    pub db_url: String,
}

/// Every row the scenario can produce, whatever the limit default.
pub fn all() -> StatsQuery {
    StatsQuery {
        limit: 10_000,
        ..StatsQuery::default()
    }
}

impl Cluster {
    /// Start the mock (two calls per reply) and `n` gateways on `db_url`.
    pub async fn start(db_url: &str, n: usize) -> Cluster {
        let urls = vec![db_url.to_string(); n];
        Cluster::start_each(&urls, db_url).await
    }

    /// One gateway per URL (each reaching the same database `db_url`,
    /// possibly through a relay).
    pub async fn start_each(urls: &[String], db_url: &str) -> Cluster {
        let mock = MockProvider::start(MockOptions {
            calls_per_reply: 2,
            ..MockOptions::default()
        })
        .await;
        let mut gateways = Vec::new();
        for url in urls {
            let mut config = Config::for_tests(&mock.base_url());
            config.database = Some(url.clone());
            gateways.push(Gateway::start(config).await.expect("gateway starts"));
        }
        Cluster {
            mock,
            gateways,
            client: client(),
            db_url: db_url.to_string(),
        }
    }

    /// `http://ADDR` of gateway `i` (modulo the number of gateways).
    pub fn gw(&self, i: usize) -> String {
        format!("http://{}", self.gateways[i % self.gateways.len()].addr())
    }

    /// `GET /api/stats?since=all&limit=1000` of gateway `i`.
    pub async fn api_stats(&self, i: usize) -> Value {
        let url = format!("{}/api/stats?since=all&limit=1000", self.gw(i));
        let r = send(&self.client, Method::GET, url, &[], Vec::new()).await;
        assert_eq!(r.status, 200, "/api/stats: {}", r.text());
        r.json()
    }

    /// `GET /api/sessions/{id}` of gateway `i`: all its calls (under the limit).
    pub async fn api_session(&self, i: usize, session: &str) -> Vec<CallRow> {
        let url = format!("{}/api/sessions/{session}", self.gw(i));
        let r = send(&self.client, Method::GET, url, &[], Vec::new()).await;
        assert_eq!(r.status, 200, "/api/sessions/{session}: {}", r.text());
        let page: SessionCalls = serde_json::from_slice(&r.body).expect("session calls");
        assert!(!page.truncated, "/api/sessions/{session}: cut at the limit");
        page.calls
    }

    /// Poll `/api/stats` of every gateway until `ok` holds for all of them
    /// (the recorders write off the request path), for at most 10 s;
    /// returns each gateway's last answer.
    pub async fn stats_when(&self, ok: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut answers = Vec::new();
            for i in 0..self.gateways.len() {
                answers.push(self.api_stats(i).await);
            }
            if answers.iter().all(&ok) || Instant::now() > deadline {
                return answers;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Shut every gateway down (draining its recorder), then read the store.
    pub async fn finish(&mut self) -> (Stats, Store) {
        for gw in self.gateways.drain(..) {
            gw.shutdown().await;
        }
        let store = Store::open(&self.db_url).await.expect("store opens");
        let stats = store.stats(&all()).await.expect("stats");
        (stats, store)
    }
}
