//! Retention with several gateways on one PostgreSQL database: a gateway
//! whose pass finds another gateway's step under way (the step lock of its
//! schema held) ends that pass and counts it `yielded`; with the lock free
//! the next gateway's pass completes.

use std::time::{Duration, Instant};

use http::Method;
use sqlx::Connection;
use toolwarden_gateway::{Config, Gateway, RunningGateway};
use toolwarden_mock_provider::{MockOptions, MockProvider};
use toolwarden_store::PG_STEP_LOCK;

use super::cluster::TestDb;
use crate::support::{client, send};

const COMPLETED: &str = "toolwarden_retention_passes_total{outcome=\"completed\"}";
const YIELDED: &str = "toolwarden_retention_passes_total{outcome=\"yielded\"}";

/// `/metrics` once it shows `line` (the first pass runs 2 s after start).
async fn metrics_once(gw: &RunningGateway, line: &str) -> String {
    let c = client();
    let started = Instant::now();
    loop {
        let r = send(
            &c,
            Method::GET,
            format!("http://{}/metrics", gw.addr()),
            &[],
            Vec::new(),
        )
        .await;
        let text = r.text();
        if text.contains(line) {
            return text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no `{line}` yet:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_yields_to_another_gateways_step() {
    let Some(mut db) = TestDb::postgres("a_pass_yields_to_another_gateways_step").await else {
        return;
    };
    let mock = MockProvider::start(MockOptions::default()).await;
    let config = || {
        let mut config = Config::for_tests(&mock.base_url());
        config.database = Some(db.url.clone());
        config
    };
    assert!(config().retention.is_some(), "retention is on by default");

    // Another gateway's step under way in this schema.
    let mut step = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut step).await.unwrap();
    let locked: bool = sqlx::query_scalar(PG_STEP_LOCK)
        .fetch_one(&mut step)
        .await
        .unwrap();
    assert!(locked);
    let gw = Gateway::start(config()).await.unwrap();
    let metrics = metrics_once(&gw, &format!("{YIELDED} 1")).await;
    assert!(metrics.contains(&format!("{COMPLETED} 0")), "{metrics}");
    gw.shutdown().await;

    // That step done, a gateway's pass runs to the end.
    sqlx::query("COMMIT").execute(&mut step).await.unwrap();
    let gw = Gateway::start(config()).await.unwrap();
    let metrics = metrics_once(&gw, &format!("{COMPLETED} 1")).await;
    assert!(metrics.contains(&format!("{YIELDED} 0")), "{metrics}");
    gw.shutdown().await;
    db.drop_schema().await;
}
