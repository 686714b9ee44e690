//! PostgreSQL lost while serving: stop the test cluster with `.ci/pg.sh
//! stop`, keep recording, start it again, and check that the backlog is
//! written and nothing was dropped. A test binary of its own, because it
//! stops the server other tests use. Runs only when
//! `TOOLWARDEN_TEST_POSTGRES_URL` is the cluster `.ci/pg.sh` manages.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Connection;
use toolwarden_store::*;

fn pg_sh() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        let script = dir.join(".ci/pg.sh");
        if script.is_file() {
            return script;
        }
        assert!(
            dir.pop(),
            "no .ci/pg.sh above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
}

fn pg(cmd: &str) -> String {
    let out = Command::new("bash")
        .arg(pg_sh())
        .arg(cmd)
        .output()
        .expect("run pg.sh");
    assert!(
        out.status.success(),
        "pg.sh {cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Runs `pg.sh start` on drop.
struct Restart;

impl Drop for Restart {
    fn drop(&mut self) {
        pg("start");
    }
}

fn skip(why: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED PostgreSQL outage test: {why} ***\n"
    );
}

async fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn call(i: u32) -> Event {
    Event::ToolCall(ToolCallRecord {
        threaded: false,
        request_id: "r".into(),
        session_id: "outage".into(),
        provider: "openai".into(),
        model: None,
        response_id: None,
        dialect: None,
        call_index: i,
        call_id: format!("c{i}"),
        tool: "t".into(),
        arguments_bytes: 1,
        at_ms: i64::from(i),
        turn: None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outage_backlog_is_written_after_restart() {
    let Ok(base) = std::env::var("TOOLWARDEN_TEST_POSTGRES_URL") else {
        return skip("set TOOLWARDEN_TEST_POSTGRES_URL=$(.ci/pg.sh start)");
    };
    if base != pg("url") {
        return skip("TOOLWARDEN_TEST_POSTGRES_URL is not the cluster .ci/pg.sh manages");
    }
    let schema = format!("outage_{}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(&base).await.unwrap();
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    let url = format!("{base}?options[search_path]={schema}");

    let store = Store::open(&url).await.unwrap();
    let rec = Recorder::start(
        Some(store.clone()),
        RecorderOptions {
            flush_interval: Duration::from_millis(5),
            ..RecorderOptions::default()
        },
        Arc::new(NoopObserver),
    );
    for i in 0..100 {
        rec.record(call(i));
    }
    wait_until("first writes", Duration::from_secs(10), || {
        rec.counters().events_written == 100
    })
    .await;

    pg("stop");
    // Starts the server again when dropped, even if an assertion fails.
    let restart = Restart;
    for i in 100..300 {
        rec.record(call(i));
    }
    wait_until("a failed write", Duration::from_secs(20), || {
        rec.counters().write_errors >= 1
    })
    .await;
    let c = rec.counters();
    assert_eq!(
        (c.events_written, c.backlog, c.events_dropped),
        (100, 200, 0),
        "{c:?}"
    );
    drop(restart);

    rec.shutdown().await;
    let c = rec.counters();
    assert_eq!(
        (c.events_written, c.events_dropped, c.backlog),
        (300, 0, 0),
        "{c:?}"
    );
    assert!(c.write_errors >= 1);
    let stats = store.stats(&StatsQuery::default()).await.unwrap();
    assert_eq!(stats.tools[0].calls, 300);
}
