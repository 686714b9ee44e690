//! A database that cannot be reached at start: `Gateway::start` fails with
//! an error naming the database, its password redacted.

use toolwarden_gateway::{Config, Gateway};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_database_stops_the_start_naming_it() {
    // Port 1 on loopback: nothing listens there, the connection is refused.
    let url = "postgres://warden:hunter2-SECRET@127.0.0.1:1/toolwarden";
    let mut config = Config::for_tests("http://127.0.0.1:9");
    config.database = Some(url.to_string());
    let started = std::time::Instant::now();
    let err = match Gateway::start(config).await {
        Ok(gw) => {
            gw.shutdown().await;
            panic!("the gateway started without its database");
        }
        Err(e) => e.to_string(),
    };
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "fails promptly"
    );
    assert!(err.contains("127.0.0.1:1"), "names the database: {err}");
    assert!(err.contains("toolwarden"), "names the database: {err}");
    assert!(!err.contains("hunter2"), "password redacted: {err}");
}
