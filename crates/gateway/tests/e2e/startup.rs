//! `Gateway::start`'s order: the port is bound before the database is
//! opened, so a port in use stops the start with a clear error and leaves
//! no database behind.

use toolwarden_gateway::{Config, Gateway};

#[tokio::test]
async fn a_port_in_use_leaves_no_database_behind() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tw.db");
    let mut config = Config::for_tests("http://127.0.0.1:9");
    config.listen = taken.local_addr().unwrap();
    config.database = Some(format!("sqlite://{}", db.display()));
    let err = match Gateway::start(config).await {
        Ok(gw) => {
            gw.shutdown().await;
            panic!("started on a port in use");
        }
        Err(e) => e.to_string(),
    };
    assert!(err.contains("cannot listen on"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}
