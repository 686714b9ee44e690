//! SQLite: the recorder's write-ahead log is copied into the database file
//! by the store's checkpointer, not by the writer's commits (issue 14).

use std::time::{Duration, Instant};

use toolwarden_store::*;

use crate::support::{TestDb, record_all, request};

/// `(mxFrame, nBackfill)` of the WAL index (`-shm`): the log's last frame
/// and how many frames are already in the database file.
fn wal_state(db: &std::path::Path) -> (u32, u32) {
    let shm = std::fs::read(db.with_extension("db-shm")).expect("read the -shm file");
    let word = |at: usize| u32::from_ne_bytes(shm[at..at + 4].try_into().expect("4 bytes"));
    (word(16), word(96))
}

/// [`wal_state`] once the log is all in the database file, or when `limit`
/// has passed.
async fn backfilled_within(db: &std::path::Path, limit: Duration) -> (u32, u32) {
    let deadline = Instant::now() + limit;
    loop {
        let (frames, backfilled) = wal_state(db);
        if (frames > 0 && backfilled == frames) || Instant::now() > deadline {
            return (frames, backfilled);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checkpointer_copies_the_log_after_commits() {
    let db = TestDb::sqlite();
    let path = sqlite_path(&db.url).expect("a SQLite path");
    let store = Store::open(&db.url).await.expect("open");
    let events: Vec<Event> = (0..3000)
        .map(|i| request(&format!("r{i:05}"), &format!("s{}", i % 97), 1_000 + i))
        .collect();
    record_all(&store, &events).await;
    // The writer's own automatic checkpoint is at 16,384 pages: far above
    // what 3,000 requests take. Only the checkpointer backfills this log.
    let (frames, backfilled) = backfilled_within(&path, Duration::from_secs(5)).await;
    assert!(frames > 0, "the batches went to the log");
    assert_eq!(
        backfilled, frames,
        "every frame of the log is in the database file"
    );
    let stats = store.stats(&crate::support::all()).await.expect("stats");
    assert_eq!(stats.requests.total, 3000);
    // Closing waits for the checkpointer and ends it.
    tokio::time::timeout(Duration::from_secs(5), store.close())
        .await
        .expect("close within its deadline");
}

/// A commit of a few events waits for more before its checkpoint (about
/// 2 s at most: at low traffic each checkpoint costs about the same
/// whatever it copies), and is checkpointed all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_few_events_are_checkpointed_after_a_wait() {
    let db = TestDb::sqlite();
    let path = sqlite_path(&db.url).expect("a SQLite path");
    let store = Store::open(&db.url).await.expect("open");
    let events: Vec<Event> = (0..10)
        .map(|i| request(&format!("r{i:02}"), "s", 1_000 + i))
        .collect();
    record_all(&store, &events).await;
    let committed = Instant::now();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (frames, backfilled) = wal_state(&path);
    // Not judged if this machine took a second past the commit to get here.
    if committed.elapsed() < Duration::from_millis(1_200) {
        assert!(
            backfilled < frames,
            "not checkpointed yet: {backfilled} of {frames} frames"
        );
    }
    let (frames, backfilled) = backfilled_within(&path, Duration::from_secs(10)).await;
    assert_eq!(backfilled, frames, "checkpointed after the wait");
    tokio::time::timeout(Duration::from_secs(5), store.close())
        .await
        .expect("close within its deadline");
}

/// After `sqlite_writer_idle` without writes the writer gives its memory
/// back (its connection is closed); the next batch opens a fresh one and
/// records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_writer_records_again_after_giving_its_memory_back() {
    let db = TestDb::sqlite();
    let options = StoreOptions {
        sqlite_writer_idle: Duration::from_millis(300),
        ..StoreOptions::default()
    };
    let store = Store::open_with(&db.url, options).await.expect("open");
    let first: Vec<Event> = (0..100)
        .map(|i| request(&format!("a{i:03}"), "s", 1_000 + i))
        .collect();
    record_all(&store, &first).await;
    // Past the idle release and its checkpoint.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let second: Vec<Event> = (0..100)
        .map(|i| request(&format!("b{i:03}"), "s", 2_000 + i))
        .collect();
    let (counters, _) = record_all(&store, &second).await;
    assert_eq!((counters.events_written, counters.write_errors), (100, 0));
    let stats = store.stats(&crate::support::all()).await.expect("stats");
    assert_eq!(stats.requests.total, 200);
    store.close().await;
}
