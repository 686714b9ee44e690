//! A batch whose COMMIT's answer is lost (PostgreSQL): the recorder retries
//! it, and whether the first attempt landed or not, the observer and the
//! JSONL log hear of each event exactly once. The connection is really
//! lost, by a proxy between the store and the server ([`PgProxy`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use toolwarden_store::*;

use crate::pg_proxy::{Cut, PgProxy};
use crate::support::*;

/// The batch that loses its COMMIT.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// Two requests, a call and its result.
    Whole,
    /// Two results alone, of calls written before.
    ResultsOnly,
}

/// An observer that remembers every event it was told, in order.
#[derive(Debug, Default)]
struct Heard(Mutex<Vec<String>>);

impl Observer for Heard {
    fn on_request(&self, rec: &RequestRecord) {
        self.0
            .lock()
            .unwrap()
            .push(format!("request {}", rec.request_id));
    }
    fn on_tool_call(&self, rec: &ToolCallRecord) {
        self.0.lock().unwrap().push(format!("call {}", rec.call_id));
    }
    fn on_tool_result(&self, rec: &ToolResultRecord, resolved_tool: &str) {
        self.0
            .lock()
            .unwrap()
            .push(format!("result {} {resolved_tool}", rec.call_id));
    }
}

/// What the JSONL log holds, in the observer's words.
fn jsonl_lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| match serde_json::from_str::<Event>(l).unwrap() {
            Event::Request(r) => format!("request {}", r.request_id),
            Event::ToolCall(c) => format!("call {}", c.call_id),
            Event::ToolResult(r) => format!("result {} {}", r.call_id, r.tool.unwrap()),
        })
        .collect()
}

/// A store opened through a proxy that can lose a COMMIT, and a recorder
/// writing to it (batches gathered for `flush`) with a JSONL log in `dir`
/// and `heard` as its observer.
struct Through {
    proxy: PgProxy,
    store: Store,
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    heard: Arc<Heard>,
    rec: Recorder,
}

/// What the observer and the JSONL log hear of two turns (a request with
/// calls `c1` (Bash) and `c2` (Read), then a request with their results),
/// each event once.
const TWO_TURNS_HEARD: [&str; 6] = [
    "request r1",
    "call c1",
    "call c2",
    "request r2",
    "result c1 Bash",
    "result c2 Read",
];

async fn through_proxy(db: &TestDb, flush: Duration) -> Through {
    through_proxy_with(db, flush, StoreOptions::default()).await
}

async fn through_proxy_with(db: &TestDb, flush: Duration, opts: StoreOptions) -> Through {
    let proxy = PgProxy::start(&db.url).await;
    let store = Store::open_with(&proxy.url, opts)
        .await
        .expect("open through the proxy");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let heard = Arc::new(Heard::default());
    let rec = Recorder::start(
        Some(store.clone()),
        RecorderOptions {
            flush_interval: flush,
            jsonl: Some(JsonlLog::unbounded(&path)),
            ..RecorderOptions::default()
        },
        heard.clone(),
    );
    Through {
        proxy,
        store,
        _dir: dir,
        path,
        heard,
        rec,
    }
}

/// Records a batch whose COMMIT is lost as `cut` says, through a recorder
/// that retries it, and checks that each of its events is told once to
/// the observer and written once to the JSONL log, with the tool its result
/// resolved to, and once to the database.
pub async fn a_batch_whose_commit_is_lost_is_reported_once(db: TestDb, cut: Cut, shape: Shape) {
    // Long enough for each batch below to be one transaction.
    let Through {
        proxy,
        store,
        _dir,
        path,
        heard,
        rec,
    } = through_proxy(&db, Duration::from_millis(200)).await;
    let s = "unsure";
    let first = vec![
        request("r1", s, 100),
        Event::ToolCall(call("r1", s, 0, "c1", "Bash", 200)),
        Event::ToolCall(call("r1", s, 1, "c2", "Read", 200)),
    ];
    let results = vec![
        Event::ToolResult(result("r2", s, "c1", 3, None, false, 300)),
        Event::ToolResult(result("r2", s, "c2", 4, None, true, 300)),
    ];
    let (before, cut_batch): (Vec<Event>, Vec<Event>) = match shape {
        Shape::Whole => (
            vec![],
            first
                .into_iter()
                .chain([request("r2", s, 300)])
                .chain(results)
                .collect(),
        ),
        Shape::ResultsOnly => (
            first.into_iter().chain([request("r2", s, 300)]).collect(),
            results,
        ),
    };
    if !before.is_empty() {
        for e in &before {
            assert!(rec.record(e.clone()));
        }
        wait_until("the first batch", || {
            rec.counters().events_written == before.len() as u64
        })
        .await;
    }
    proxy.cut_next_commit(cut);
    for e in &cut_batch {
        assert!(rec.record(e.clone()));
    }
    let total = (before.len() + cut_batch.len()) as u64;
    wait_until("the retried batch", || {
        let c = rec.counters();
        c.events_written == total && c.backlog == 0
    })
    .await;
    let report = rec.shutdown().await;
    let c = rec.counters();
    assert_eq!(proxy.cuts(), 1, "the COMMIT was lost once");
    assert!(c.write_errors >= 1, "{c:?}");
    assert_eq!((c.events_dropped, report.abandoned), (0, 0), "{c:?}");

    let expected = TWO_TURNS_HEARD;
    assert_eq!(
        *heard.0.lock().unwrap(),
        expected,
        "the observer heard each event once ({cut:?}, {shape:?})"
    );
    assert_eq!(
        jsonl_lines(&path),
        expected,
        "the JSONL log has each event once ({cut:?}, {shape:?})"
    );
    // And the database holds each once, the results paired with their calls.
    assert_eq!(query_i64(&db.url, "SELECT count(*) FROM requests").await, 2);
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE request_id IS NOT NULL AND result_at_ms IS NOT NULL"
        )
        .await,
        2
    );
    assert_eq!(
        query_i64(&db.url, "SELECT count(*) FROM tool_calls").await,
        2
    );
    store.close().await;
}

/// A result alone loses its COMMIT; its call comes while the recorder backs
/// off, so the retry writes both (calls first: the result pairs with it).
/// Landed: the first attempt's result (no call yet: `unknown`) and the call
/// that completes its row. Not landed: what the retry found, the result
/// paired with its call. Either way each event once.
pub async fn a_retry_that_grew_reports_each_event_once(db: TestDb, cut: Cut) {
    let Through {
        proxy,
        store,
        _dir,
        path,
        heard,
        rec,
    } = through_proxy(&db, Duration::from_millis(5)).await;
    let s = "grown";
    proxy.cut_next_commit_held(cut);
    assert!(rec.record(Event::ToolResult(result(
        "r2", s, "c1", 3, None, false, 300
    ))));
    // While the first attempt waits for its COMMIT's answer, the call
    // queues; the writer takes it while it backs off, before the retry.
    wait_until("the lost COMMIT", || proxy.cuts() == 1).await;
    assert!(rec.record(Event::ToolCall(call("r1", s, 0, "c1", "Bash", 200))));
    proxy.release();
    wait_until("the retried batch", || {
        let c = rec.counters();
        c.events_written == 2 && c.backlog == 0
    })
    .await;
    rec.shutdown().await;
    let c = rec.counters();
    assert!(c.write_errors >= 1, "{c:?}");
    assert_eq!(c.events_dropped, 0, "{c:?}");
    let expected = match cut {
        Cut::AnswerLost => ["result c1 unknown", "call c1"],
        Cut::CommitLost => ["result c1 Bash", "call c1"],
    };
    assert_eq!(*heard.0.lock().unwrap(), expected, "{cut:?}");
    assert_eq!(jsonl_lines(&path), expected, "{cut:?}");
    // One row: the call and its result, whichever came first.
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE request_id IS NOT NULL AND result_at_ms IS NOT NULL"
        )
        .await,
        1
    );
    assert_eq!(
        query_i64(&db.url, "SELECT count(*) FROM tool_calls").await,
        1
    );
    store.close().await;
}

/// A batch of results alone loses its COMMIT before the server gets it
/// (it does not land); while it waits, another gateway on the same
/// database is given the same results (the client resent its history
/// there) and writes them once this one's transaction has rolled back. On
/// the retry every result is found again, but under the other gateway's
/// request, so this gateway reports none of them: each is reported once,
/// by the gateway that wrote it. (Taken as landed, both reported them, and
/// their metrics and logs together counted each twice.)
pub async fn results_another_gateway_wrote_meanwhile_are_reported_by_it_alone(db: TestDb) {
    let Through {
        proxy,
        store,
        _dir,
        path,
        heard,
        rec,
    } = through_proxy(&db, Duration::from_millis(5)).await;
    let s = "shared";
    let calls = [
        request("r1", s, 100),
        Event::ToolCall(call("r1", s, 0, "c1", "Bash", 200)),
        Event::ToolCall(call("r1", s, 1, "c2", "Read", 200)),
    ];
    for e in &calls {
        assert!(rec.record(e.clone()));
    }
    wait_until("the calls", || rec.counters().events_written == 3).await;

    // This gateway's batch of the two results holds its COMMIT.
    proxy.cut_next_commit_held(Cut::CommitLost);
    assert!(rec.record(Event::ToolResult(result(
        "r2", s, "c1", 3, None, false, 300
    ))));
    assert!(rec.record(Event::ToolResult(result("r2", s, "c2", 4, None, true, 300))));
    wait_until("the held COMMIT", || proxy.cuts() == 1).await;

    // The other gateway is given the same results under its own request;
    // its batch waits for this one's locks.
    let other_store = Store::open(&db.url).await.expect("open directly");
    let other_heard = Arc::new(Heard::default());
    let other = Recorder::start(
        Some(other_store.clone()),
        RecorderOptions {
            flush_interval: Duration::from_millis(5),
            ..RecorderOptions::default()
        },
        other_heard.clone(),
    );
    assert!(other.record(Event::ToolResult(result(
        "r2-other", s, "c1", 3, None, false, 310
    ))));
    assert!(other.record(Event::ToolResult(result(
        "r2-other", s, "c2", 4, None, true, 310
    ))));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        other.counters().events_written,
        0,
        "the other gateway's batch waits for this one's transaction"
    );
    proxy.release();
    wait_until("the other gateway's batch", || {
        other.counters().events_written == 2
    })
    .await;
    wait_until("the retried batch", || {
        let c = rec.counters();
        c.events_written == 5 && c.backlog == 0
    })
    .await;
    rec.shutdown().await;
    other.shutdown().await;
    let c = rec.counters();
    assert!(c.write_errors >= 1, "{c:?}");
    assert_eq!(c.events_dropped, 0, "{c:?}");
    // The premise: the other gateway wrote the results' keys.
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_results WHERE request_id = 'r2-other'"
        )
        .await,
        2
    );

    let here = ["request r1", "call c1", "call c2"];
    assert_eq!(
        *heard.0.lock().unwrap(),
        here,
        "this gateway reports none of the results"
    );
    assert_eq!(jsonl_lines(&path), here);
    assert_eq!(
        *other_heard.0.lock().unwrap(),
        ["result c1 Bash", "result c2 Read"],
        "the gateway that wrote them reports them"
    );
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE request_id IS NOT NULL AND result_at_ms IS NOT NULL"
        )
        .await,
        2
    );
    assert_eq!(
        query_i64(&db.url, "SELECT count(*) FROM tool_calls").await,
        2
    );
    other_store.close().await;
    store.close().await;
}

/// Lets the pool take back the connection last used: it is pinged as it
/// is returned, in a task of its own, and one that goes half-open during
/// that ping is closed only at the ping's bound (2 s), holding its place
/// in the pool until then.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// The connections the store holds go half-open (a failover behind the
/// same address, a NAT's expired state): what it sends on them is never
/// answered and it is never told. Each write's deadline closes the
/// connection it waited on, the batch is retried on a fresh one, and
/// every event is recorded and reported once. Without the deadline the
/// recorder waited until the kernel gave up on the connection, ~15 minutes.
/// `held_commit`: the half-open connection is the one a batch's COMMIT
/// went out on, and the server did commit it (the answer never came back).
pub async fn a_half_open_connection_is_left_at_the_deadline(db: TestDb, held_commit: bool) {
    let opts = StoreOptions {
        pg_write_timeout: Duration::from_millis(500),
        ..StoreOptions::default()
    };
    let Through {
        proxy,
        store,
        _dir,
        path,
        heard,
        rec,
    } = through_proxy_with(&db, Duration::from_millis(20), opts).await;
    let s = "half-open";
    for e in [
        request("r1", s, 100),
        Event::ToolCall(call("r1", s, 0, "c1", "Bash", 200)),
        Event::ToolCall(call("r1", s, 1, "c2", "Read", 200)),
    ] {
        assert!(rec.record(e));
    }
    wait_until("the calls", || rec.counters().events_written == 3).await;
    settle().await;
    if held_commit {
        proxy.cut_next_commit_held(Cut::AnswerLost);
    } else {
        proxy.hold_open_connections();
    }
    let started = Instant::now();
    for e in [
        request("r2", s, 300),
        Event::ToolResult(result("r2", s, "c1", 3, None, false, 300)),
        Event::ToolResult(result("r2", s, "c2", 4, None, true, 300)),
    ] {
        assert!(rec.record(e));
    }
    wait_until("the batch retried on a fresh connection", || {
        let c = rec.counters();
        c.events_written == 6 && c.backlog == 0
    })
    .await;
    let waited = started.elapsed();
    let report = rec.shutdown().await;
    let c = rec.counters();
    assert!(c.write_errors >= 1, "{c:?}");
    assert!(
        waited >= Duration::from_millis(900),
        "the write waited for its deadline first: {waited:?}"
    );
    assert_eq!((c.events_dropped, report.abandoned), (0, 0), "{c:?}");
    let expected = TWO_TURNS_HEARD;
    assert_eq!(
        *heard.0.lock().unwrap(),
        expected,
        "held_commit: {held_commit}"
    );
    assert_eq!(jsonl_lines(&path), expected, "held_commit: {held_commit}");
    assert_eq!(query_i64(&db.url, "SELECT count(*) FROM requests").await, 2);
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE result_at_ms IS NOT NULL"
        )
        .await,
        2
    );
    store.close().await;
}

/// A connection goes half-open as it is given back to the pool, its ping
/// then unanswered (a network drop without a reset at that moment). With
/// one place in the pool, the next lookup gets a fresh connection once
/// the ping's bound (2 s) has passed. Without it, sqlx's own ping of the
/// connection given back waited until the kernel gave up on it (~15
/// minutes), holding the pool's place, and every user of the pool timed
/// out waiting for one.
pub async fn a_connection_half_open_as_it_is_given_back_frees_its_place(db: TestDb) {
    let proxy = PgProxy::start(&db.url).await;
    let opts = StoreOptions {
        max_connections: 1,
        ..StoreOptions::default()
    };
    let store = Store::open_with(&proxy.url, opts)
        .await
        .expect("open through the proxy");
    assert_eq!(store.session_of_response("resp_1").await.unwrap(), None);
    settle().await;
    proxy.hold_at_next_ping();
    // Answered; the connection goes half-open as it is given back.
    assert_eq!(store.session_of_response("resp_1").await.unwrap(), None);
    let started = Instant::now();
    let found = tokio::time::timeout(Duration::from_secs(12), store.session_of_response("resp_1"))
        .await
        .expect("the lookup waited for the place of a half-open connection");
    assert_eq!(
        found.expect("a place in the pool within the acquire timeout (5 s)"),
        None
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the lookup waited for the ping's bound: {:?}",
        started.elapsed()
    );
    store.close().await;
}

/// The pool's idle connections go half-open while nothing uses them. A
/// lookup that takes one (here a continued response's session, which the
/// gateway asks for on the request path) gets a connection that answers:
/// one idle for a while is pinged first, and closed if it does not answer.
/// Without that, the lookup waited on the dead connection until the kernel
/// gave up on it (~15 minutes), and so did every user of the pool that
/// took one, the recorder's writer included.
pub async fn an_idle_half_open_connection_is_not_handed_out(db: TestDb) {
    let proxy = PgProxy::start(&db.url).await;
    let store = Store::open(&proxy.url)
        .await
        .expect("open through the proxy");
    assert_eq!(store.session_of_response("resp_1").await.unwrap(), None);
    settle().await;
    proxy.hold_open_connections();
    // Past the idle time after which a connection is pinged (5 s).
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    let started = Instant::now();
    let found = tokio::time::timeout(Duration::from_secs(10), store.session_of_response("resp_1"))
        .await
        .expect("the lookup waited on a half-open connection");
    assert_eq!(found.unwrap(), None);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the idle connection was pinged first: {:?}",
        started.elapsed()
    );
    store.close().await;
}

/// Folded counts (events that could not be recorded in detail) written
/// on a connection that goes half-open right after its last use: the
/// write gives up at the writer's deadline instead of holding the
/// recorder's writer until the kernel gives up on the connection, and
/// once written on a fresh connection its counts are added once.
pub async fn folded_counts_on_a_half_open_connection_give_up_at_the_deadline(db: TestDb) {
    let proxy = PgProxy::start(&db.url).await;
    let opts = StoreOptions {
        pg_write_timeout: Duration::from_millis(500),
        ..StoreOptions::default()
    };
    let store = Store::open_with(&proxy.url, opts)
        .await
        .expect("open through the proxy");
    assert_eq!(store.session_of_response("resp_1").await.unwrap(), None);
    settle().await;
    proxy.hold_open_connections();
    let at = 1_700_000_040_000 / 60_000 * 60_000;
    let flush = DroppedFlush::new(vec![DroppedRow {
        at_ms: at,
        provider: "anthropic".into(),
        model: None,
        tool: "Bash".into(),
        counts: DroppedCounts {
            calls: 3,
            results: 3,
            failures: 1,
        },
    }]);
    let started = Instant::now();
    let first = tokio::time::timeout(Duration::from_secs(10), store.write_dropped(&flush))
        .await
        .expect("the write waited on a half-open connection");
    let err = first.expect_err("no answer on a half-open connection");
    assert!(err.to_string().contains("no answer"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Retried as the writer does, until a fresh connection takes it.
    let mut written = false;
    for _ in 0..10 {
        if store.write_dropped(&flush).await.is_ok() {
            written = true;
            break;
        }
    }
    assert!(written, "the counts were written on a fresh connection");
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT CAST(COALESCE(sum(calls), 0) AS BIGINT) FROM dropped_tool_counts"
        )
        .await,
        3
    );
    store.close().await;
}
