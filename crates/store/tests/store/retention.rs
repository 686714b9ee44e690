//! Retention (`Store::prune`): what is older than the cutoff goes, in
//! steps of at most the given rows per table; what is newer stays, and
//! recording goes on as before.

use toolwarden_store::*;

use crate::support::*;

const CUTOFF: i64 = 10_000;

/// Rows of `table` (optionally `WHERE …`).
async fn rows(db: &TestDb, table: &str, filter: &str) -> i64 {
    let sql = if filter.is_empty() {
        format!("SELECT COUNT(*) FROM {table}")
    } else {
        format!("SELECT COUNT(*) FROM {table} WHERE {filter}")
    };
    query_i64(&db.url, &sql).await
}

/// A turn of session `s` at `at`: its request, two calls (one with a
/// turn fingerprint) and, when `answered`, the previous turn's results.
fn turn(s: &str, n: u32, at: i64) -> Vec<Event> {
    let req = format!("{s}-r{n}");
    let mut repaired = request(&req, s, at);
    if let Event::Request(r) = &mut repaired {
        r.repairs = vec!["orphan_result".into()];
    }
    let mut fingerprinted = call(&req, s, 0, &format!("{s}-c{n}a"), "search", at + 1);
    fingerprinted.turn = Some(7 + i64::from(n));
    let mut events = vec![
        repaired,
        Event::ToolCall(fingerprinted),
        Event::ToolCall(call(&req, s, 1, &format!("{s}-c{n}b"), "fetch", at + 1)),
    ];
    if n > 0 {
        for (k, id) in ["a", "b"].iter().enumerate() {
            events.push(Event::ToolResult(result(
                &req,
                s,
                &format!("{s}-c{}{id}", n - 1),
                2 * n + k as u32,
                None,
                k == 1,
                at,
            )));
        }
    }
    events
}

fn transition(key: &str, seq: i64, at_ms: i64) -> AlertTransition {
    AlertTransition {
        alert_key: key.into(),
        seq,
        state: if seq % 2 == 1 { "firing" } else { "resolved" }.into(),
        rule: "tool_failure_rate".into(),
        tool: "search".into(),
        model: "*".into(),
        instance: String::new(),
        value: 0.5,
        threshold: 0.2,
        volume: 10,
        started_ms: at_ms,
        at_ms,
        gateway: "gw".into(),
    }
}

pub async fn retention_deletes_only_what_is_older(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    // "old": quiet since before the cutoff. "long": before and after.
    // "new": after only.
    let mut events = Vec::new();
    for n in 0..5 {
        events.extend(turn("old", n, 1_000 + 1_000 * i64::from(n)));
        events.extend(turn("long", n, 6_000 + 2_000 * i64::from(n)));
    }
    for n in 0..3 {
        events.extend(turn("new", n, 20_000 + 1_000 * i64::from(n)));
    }
    let (counters, _) = record_all(&store, &events).await;
    assert_eq!(counters.events_written, events.len() as u64);
    // "a" resolved before the cutoff, "b" after it; "c" fires since
    // before it. "a" and "c" were repeated.
    for (key, seq, at) in [
        ("a", 1, 2_000),
        ("a", 2, 3_000),
        ("b", 1, 4_000),
        ("b", 2, 12_000),
        ("c", 1, 5_000),
    ] {
        assert!(
            store
                .claim_alert_transition(&transition(key, seq, at))
                .await
                .unwrap()
        );
    }
    for key in ["a", "c"] {
        let repeat = AlertRepeat {
            alert_key: key.into(),
            seq: 1,
            repeat_no: 1,
            at_ms: 2_500,
            gateway: "gw".into(),
        };
        assert!(store.claim_alert_repeat(&repeat).await.unwrap());
    }
    let before_total = store.stats(&all()).await.unwrap();

    let older = |col: &str| format!("{col} < {CUTOFF}");
    let mut expect = Pruned {
        requests: rows(&db, "requests", &older("at_ms")).await as u64,
        request_repairs: 0,
        call_turns: 0,
        tool_calls: rows(&db, "tool_calls", &older("at_ms")).await as u64,
        tool_results: rows(&db, "tool_results", &older("at_ms")).await as u64,
        sessions: 1,
        dropped_tool_counts: 0,
        // "a" resolved before the cutoff: forgotten, its repeat too; "b"'s
        // first is older, its latest newer; "c" still fires.
        alert_transitions: 3,
        alert_repeats: 1,
    };
    expect.request_repairs = expect.requests;
    // The turns of old requests, "old"'s among them.
    expect.call_turns = rows(
        &db,
        "call_turns",
        &format!("request_id IN (SELECT request_id FROM requests WHERE at_ms < {CUTOFF})"),
    )
    .await as u64;
    assert_eq!(
        (expect.requests, expect.tool_results),
        (7, 10),
        "the scenario's shape"
    );
    let kept_requests = rows(&db, "requests", &format!("at_ms >= {CUTOFF}")).await;
    let kept_calls = rows(&db, "tool_calls", &format!("at_ms >= {CUTOFF}")).await;
    let kept_results = rows(&db, "tool_results", &format!("at_ms >= {CUTOFF}")).await;

    // Two rows per step: every stage takes several steps.
    let mut prune = store.prune(CUTOFF, 2);
    let mut steps = 0;
    while prune.step().await.unwrap() {
        steps += 1;
        assert!(steps < 100, "a pass ends");
    }
    assert!(
        !prune.step().await.unwrap(),
        "a finished pass stays finished"
    );
    assert_eq!(prune.deleted(), expect);
    assert!(
        steps >= 4 + 4 + 5,
        "at most two rows per step ({steps} steps)"
    );

    assert_eq!(rows(&db, "requests", &older("at_ms")).await, 0);
    assert_eq!(rows(&db, "tool_calls", &older("at_ms")).await, 0);
    assert_eq!(rows(&db, "tool_results", &older("at_ms")).await, 0);
    assert_eq!(rows(&db, "requests", "").await, kept_requests);
    assert_eq!(rows(&db, "tool_calls", "").await, kept_calls);
    assert_eq!(rows(&db, "tool_results", "").await, kept_results);
    assert_eq!(rows(&db, "request_repairs", "").await, kept_requests);
    assert_eq!(
        rows(&db, "call_turns", "").await,
        kept_requests,
        "one turn per kept request"
    );
    assert_eq!(rows(&db, "sessions", "session_id = 'old'").await, 0);
    assert_eq!(
        rows(&db, "sessions", "session_id IN ('long', 'new')").await,
        2
    );
    assert_eq!(rows(&db, "alert_transitions", "").await, 2);
    let states = store.alert_states(DEFAULT_RESOLVED_STATES).await.unwrap();
    assert_eq!(
        states
            .iter()
            .map(|t| (t.alert_key.as_str(), t.seq))
            .collect::<Vec<_>>(),
        vec![("b", 2), ("c", 1)],
        "an alert resolved before the cutoff is forgotten; the others keep their state"
    );
    assert_eq!(rows(&db, "alert_latest", "").await, 2, "its latest row too");
    let repeats = store.alert_repeats().await.unwrap();
    assert_eq!(
        repeats
            .iter()
            .map(|r| r.alert_key.as_str())
            .collect::<Vec<_>>(),
        vec!["c"]
    );
    // A forgotten alert that fires again starts anew.
    assert!(
        store
            .claim_alert_transition(&transition("a", 1, 20_000))
            .await
            .unwrap()
    );
    let a = store.alert_latest("a").await.unwrap().expect("fired again");
    assert_eq!((a.seq, a.state.as_str()), (1, "firing"));
    let after_total = store.stats(&all()).await.unwrap();
    assert_eq!(after_total.requests.total, kept_requests as u64);
    assert!(after_total.requests.total < before_total.requests.total);

    // A second pass finds nothing.
    let mut again = store.prune(CUTOFF, 2);
    while again.step().await.unwrap() {}
    assert_eq!(again.deleted(), Pruned::default());

    // Recording goes on: "long"'s next turn pairs with its kept calls, a
    // kept result resent counts once, and "old" comes back as a new session.
    let mut next = turn("long", 5, 30_000);
    next.push(Event::ToolResult(result(
        "long-r5", "long", "long-c3a", 8, None, false, 30_000,
    )));
    next.extend(turn("old", 0, 31_000));
    let (counters, seen) = record_all(&store, &next).await;
    assert_eq!(counters.events_written, next.len() as u64);
    let results = seen.results.lock().unwrap().clone();
    assert_eq!(
        results,
        vec![
            ("long-c4a".to_string(), "search".to_string()),
            ("long-c4b".into(), "fetch".into())
        ],
        "the new results are named by their kept calls; the resent one is not new"
    );
    assert_eq!(rows(&db, "sessions", "session_id = 'old'").await, 1);
    assert_eq!(rows(&db, "requests", "").await, kept_requests + 2);
}

/// Under overload the recorder may drop a request's own event (its queue
/// full) while the calls of its response, and so their turn's
/// fingerprint, were written: a `call_turns` row without a request row.
/// Deleting turns by their request never finds it, and by their session
/// only once the session is quiet: in a session that goes on, it stayed
/// for good. It goes with its calls, a step's rows at a time.
pub async fn retention_deletes_the_turn_of_a_request_dropped_under_overload(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    // "busy"'s first turn without its request, then turns after the
    // cutoff: the session is never quiet.
    let mut events: Vec<Event> = turn("busy", 0, 1_000)
        .into_iter()
        .filter(|e| !matches!(e, Event::Request(_)))
        .collect();
    for n in 1..3 {
        events.extend(turn("busy", n, 20_000 + 1_000 * i64::from(n)));
    }
    record_all(&store, &events).await;
    assert_eq!(rows(&db, "requests", "request_id = 'busy-r0'").await, 0);
    assert_eq!(
        rows(&db, "call_turns", "request_id = 'busy-r0'").await,
        1,
        "the turn of the dropped request was written"
    );

    let mut prune = store.prune(CUTOFF, 1);
    let mut steps = 0;
    while prune.step().await.unwrap() {
        steps += 1;
        assert!(steps < 100, "a pass ends");
    }
    let deleted = prune.deleted();
    assert_eq!(
        rows(&db, "call_turns", "request_id = 'busy-r0'").await,
        0,
        "{deleted:?}"
    );
    assert_eq!(
        (deleted.tool_calls, deleted.call_turns),
        (2, 1),
        "{deleted:?}"
    );
    assert_eq!((deleted.requests, deleted.sessions), (0, 0), "{deleted:?}");
    assert_eq!(rows(&db, "call_turns", "").await, 2, "the newer turns stay");
    assert_eq!(rows(&db, "sessions", "session_id = 'busy'").await, 1);
}

/// Retention before this version deleted the calls of a request whose
/// own event was dropped and left their turn, which no pass found again
/// in a session that never goes quiet. Opening such a database (here: this
/// version's, with the rows that version left, and the migration that
/// deletes them not applied yet) deletes those turns, and only those: a
/// turn whose request or calls are still there stays.
pub async fn upgrading_deletes_the_turns_an_earlier_retention_left(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    // busy-r0: its request dropped, then its calls deleted by an earlier
    // retention. busy-r1: its calls gone, its request kept. busy-r2: its
    // request dropped, its calls kept. busy-r3: whole.
    let mut events = Vec::new();
    for n in 0..4 {
        let dropped = n % 2 == 0;
        events.extend(
            turn("busy", n, 1_000 * i64::from(n + 1))
                .into_iter()
                .filter(|e| !(dropped && matches!(e, Event::Request(_)))),
        );
    }
    record_all(&store, &events).await;
    store.close().await;
    assert_eq!(rows(&db, "call_turns", "").await, 4);
    execute(
        &db.url,
        "DELETE FROM tool_calls WHERE request_id IN ('busy-r0', 'busy-r1')",
    )
    .await;
    execute(&db.url, "DELETE FROM schema_migrations WHERE version = 21").await;

    let store = Store::open(&db.url).await.unwrap();
    let mut left = Vec::new();
    for n in 0..4 {
        left.push(rows(&db, "call_turns", &format!("request_id = 'busy-r{n}'")).await);
    }
    assert_eq!(left, [0, 1, 1, 1], "only the turn nothing names is deleted");
    // Recording goes on.
    let next = turn("busy", 4, 9_000);
    let (counters, _) = record_all(&store, &next).await;
    assert_eq!(counters.events_written, next.len() as u64);
    assert_eq!(rows(&db, "call_turns", "").await, 4);
    store.close().await;
}

/// Nothing older than the cutoff: a pass deletes nothing and ends.
pub async fn retention_on_an_empty_history(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let events = turn("s", 0, 50_000);
    record_all(&store, &events).await;
    let mut prune = store.prune(CUTOFF, 1000);
    let mut steps = 0;
    while prune.step().await.unwrap() {
        steps += 1;
    }
    assert_eq!(prune.deleted(), Pruned::default());
    assert_eq!(prune.deleted().total(), 0);
    assert_eq!(steps, 6, "one step per stage");
    assert_eq!(rows(&db, "requests", "").await, 1);
}

/// A session quiet since before the cutoff, then tool events for it in a
/// batch without their request (the request came in another batch): the
/// batch moves the session's `last_ms`, so retention keeps the session and
/// the new rows stay under its number.
pub async fn retention_keeps_a_session_revived_by_tool_events_alone(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &turn("quiet", 0, 1_000)).await;
    // Over an hour later (PostgreSQL moves `last_ms` of sessions quiet that long).
    let at = 5_000_000;
    let late = [
        Event::ToolCall(call("quiet-r9", "quiet", 0, "quiet-c9", "search", at)),
        Event::ToolResult(result("quiet-r9", "quiet", "quiet-cx", 2, None, false, at)),
    ];
    let (counters, _) = record_all(&store, &late).await;
    assert_eq!(counters.events_written, 2);

    let mut prune = store.prune(4_000_000, 1_000);
    while prune.step().await.unwrap() {}
    assert_eq!(prune.deleted().requests, 1, "the old request goes");
    assert_eq!(prune.deleted().sessions, 0, "{:?}", prune.deleted());
    assert_eq!(rows(&db, "sessions", "session_id = 'quiet'").await, 1);
    let under = "JOIN sessions s ON s.no = t.session_no AND s.session_id = 'quiet'";
    assert_eq!(
        rows(&db, "tool_calls", "").await,
        2,
        "the late call and result"
    );
    assert_eq!(rows(&db, &format!("tool_calls t {under}"), "").await, 2);
    assert_eq!(rows(&db, &format!("tool_results t {under}"), "").await, 1);
}

/// A session's `last_ms` moves only once it is an hour old, so it can lag
/// the session's newest rows: a cutoff between the two leaves the session,
/// whose rows newer than the cutoff stay (its calls stay readable by its
/// number, and new events keep that number).
pub async fn retention_keeps_a_session_with_rows_newer_than_its_last_time(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &turn("busy", 0, 1_000)).await;
    // The calls of a response that ended half an hour later (its request
    // recorded at its start): `last_ms` stays.
    let at = 1_800_000;
    record_all(
        &store,
        &[Event::ToolCall(call(
            "busy-r0", "busy", 2, "busy-c0z", "search", at,
        ))],
    )
    .await;
    let mut prune = store.prune(1_000_000, 1_000);
    while prune.step().await.unwrap() {}
    assert_eq!(prune.deleted().sessions, 0, "{:?}", prune.deleted());
    assert_eq!(rows(&db, "sessions", "session_id = 'busy'").await, 1);
    let calls = store.session_calls("busy").await.unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
}

/// PostgreSQL, where another gateway's batch can run during a pass: the
/// pass finds a quiet session while a batch that moves its `last_ms` holds
/// the row; the delete waits for that batch, sees the row anew and leaves it.
pub async fn retention_leaves_a_session_a_concurrent_batch_revives(db: TestDb) {
    use sqlx::Connection;

    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &turn("quiet", 0, 1_000)).await;
    // What a batch's numbering statement does to a session quiet that long.
    let mut batch = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut batch).await.unwrap();
    sqlx::query("UPDATE sessions SET last_ms = 5000000 WHERE session_id = 'quiet'")
        .execute(&mut batch)
        .await
        .unwrap();

    let pass = tokio::spawn({
        let store = store.clone();
        async move {
            let mut prune = store.prune(4_000_000, 1_000);
            while prune.step().await.unwrap() {}
            prune.deleted()
        }
    });
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert!(!pass.is_finished(), "the pass waits for the batch's row");
    sqlx::query("COMMIT").execute(&mut batch).await.unwrap();
    let deleted = pass.await.unwrap();
    assert_eq!(deleted.requests, 1, "{deleted:?}");
    assert_eq!(deleted.sessions, 0, "{deleted:?}");
    assert_eq!(rows(&db, "sessions", "session_id = 'quiet'").await, 1);
}

/// PostgreSQL: retention deletes a quiet session while a batch of that
/// session waits to number it; the batch inserts the session anew and
/// writes its rows under the new number, not the deleted one its statement's
/// snapshot still holds.
pub async fn a_batch_numbers_a_session_retention_deleted_meanwhile_anew(db: TestDb) {
    use sqlx::Connection;

    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &turn("quiet", 0, 1_000)).await;
    let old_no = query_i64(
        &db.url,
        "SELECT no FROM sessions WHERE session_id = 'quiet'",
    )
    .await;
    // Retention's delete of the session, not yet committed.
    let mut pass = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut pass).await.unwrap();
    sqlx::query("DELETE FROM sessions WHERE session_id = 'quiet'")
        .execute(&mut pass)
        .await
        .unwrap();
    let batch = tokio::spawn({
        let store = store.clone();
        async move {
            let late = call("quiet-r9", "quiet", 0, "quiet-c9", "search", 9_000);
            record_one_batch(&store, &[Event::ToolCall(late)]).await;
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!batch.is_finished(), "the batch waits for the delete");
    sqlx::query("COMMIT").execute(&mut pass).await.unwrap();
    batch.await.unwrap();
    let new_no = query_i64(
        &db.url,
        "SELECT no FROM sessions WHERE session_id = 'quiet'",
    )
    .await;
    assert_ne!(new_no, old_no, "the session is inserted anew");
    let written = query_i64(
        &db.url,
        "SELECT session_no FROM tool_calls WHERE call_id = 'quiet-c9'",
    )
    .await;
    assert_eq!(
        written, new_no,
        "the call is written under the session's number"
    );
    let calls = store.session_calls("quiet").await.unwrap();
    assert!(calls.iter().any(|c| c.call_id == "quiet-c9"), "{calls:?}");
}

/// Gateways sharing a PostgreSQL database take turns: while another
/// session holds the step lock of this schema a pass deletes nothing and
/// ends `yielded`; a lock held for another schema does not stop it; once
/// the lock is free the pass deletes what is old.
pub async fn retention_yields_to_another_gateways_step(db: TestDb, other: TestDb) {
    use sqlx::Connection;

    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &turn("old", 0, 1_000)).await;
    let requests = rows(&db, "requests", "").await;
    assert_eq!(requests, 1);

    // Another gateway's step, under way in this schema.
    let mut step = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut step).await.unwrap();
    let locked: bool = sqlx::query_scalar(PG_STEP_LOCK)
        .fetch_one(&mut step)
        .await
        .unwrap();
    assert!(locked, "the other session takes the lock");
    let mut prune = store.prune(CUTOFF, 1_000);
    assert!(!prune.step().await.unwrap(), "the pass ends at once");
    assert!(prune.yielded());
    assert_eq!(prune.deleted().total(), 0);
    assert_eq!(rows(&db, "requests", "").await, requests);

    // The same lock taken in another schema leaves this one free.
    let mut elsewhere = sqlx::PgConnection::connect(&other.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut elsewhere).await.unwrap();
    sqlx::query("COMMIT").execute(&mut step).await.unwrap();
    let locked: bool = sqlx::query_scalar(PG_STEP_LOCK)
        .fetch_one(&mut elsewhere)
        .await
        .unwrap();
    assert!(locked, "another schema's lock is another key");
    let mut prune = store.prune(CUTOFF, 1_000);
    while prune.step().await.unwrap() {}
    assert!(!prune.yielded());
    assert_eq!(prune.deleted().requests, 1, "{:?}", prune.deleted());
    assert_eq!(rows(&db, "requests", "").await, 0);
    sqlx::query("COMMIT").execute(&mut elsewhere).await.unwrap();
}

/// SQLite has one writer per file (the steps run on the recorder's own
/// connection): a pass never yields.
pub async fn retention_on_sqlite_never_yields(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    record_all(&store, &turn("old", 0, 1_000)).await;
    let mut prune = store.prune(CUTOFF, 1_000);
    while prune.step().await.unwrap() {}
    assert!(!prune.yielded());
    assert_eq!(prune.deleted().requests, 1, "{:?}", prune.deleted());
}

/// The counts of dropped events go in steps of at most the given rows too,
/// oldest first, and only those older than the cutoff.
pub async fn retention_deletes_dropped_counts_in_steps(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let row = |n: i64, at_ms: i64| DroppedRow {
        at_ms,
        provider: "openai".into(),
        model: None,
        tool: format!("t{n}"),
        counts: DroppedCounts {
            calls: 1,
            ..DroppedCounts::default()
        },
    };
    // Seven rows older than the cutoff, four of them in one minute; two newer.
    let cutoff = 300_000;
    let at = [0, 0, 0, 0, 60_000, 120_000, 180_000, 300_000, 360_000];
    let rows_in: Vec<DroppedRow> = (0..).zip(at).map(|(n, at_ms)| row(n, at_ms)).collect();
    store
        .write_dropped(&DroppedFlush::new(rows_in.clone()))
        .await
        .unwrap();

    let mut prune = store.prune(cutoff, 2);
    let mut before = 0;
    let mut steps = 0;
    while prune.step().await.unwrap() {
        let now = prune.deleted().dropped_tool_counts;
        assert!(now - before <= 2, "{} rows in one step", now - before);
        before = now;
        steps += 1;
        assert!(steps < 100, "a pass ends");
    }
    assert!(prune.deleted().dropped_tool_counts - before <= 2);
    assert_eq!(prune.deleted().dropped_tool_counts, 7);
    assert_eq!(rows(&db, "dropped_tool_counts", "").await, 2);
}

/// A flapping alert's old transitions go a step's rows at a time, oldest
/// first, and each alert keeps its latest.
pub async fn retention_deletes_alert_transitions_in_steps(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let cutoff = 300_000;
    // Alert a: nine old transitions and a newer one; b: two old ones.
    for seq in 1..=9 {
        store
            .claim_alert_transition(&transition("a", seq, seq * 1_000))
            .await
            .unwrap();
    }
    store
        .claim_alert_transition(&transition("a", 10, 400_000))
        .await
        .unwrap();
    for seq in 1..=2 {
        store
            .claim_alert_transition(&transition("b", seq, seq * 2_000))
            .await
            .unwrap();
    }
    let mut prune = store.prune(cutoff, 2);
    let mut before = 0;
    let mut steps = 0;
    while prune.step().await.unwrap() {
        let now = prune.deleted().alert_transitions;
        assert!(now - before <= 2, "{} rows in one step", now - before);
        before = now;
        steps += 1;
        assert!(steps < 100, "a pass ends");
    }
    assert!(prune.deleted().alert_transitions - before <= 2);
    // a: 1..=9 go (10 is newer); b: 1 goes, then 2, its latest, which
    // resolved before the cutoff.
    assert_eq!(prune.deleted().alert_transitions, 11);
    assert_eq!(rows(&db, "alert_transitions", "").await, 1);
}

/// Index scans of `requests_at` and `tool_calls_at` in the test's schema,
/// once both exceed `before` (a closed connection's counts are flushed as
/// its server process exits, a moment later, and each backend's on its
/// own) and have stopped moving; what they read after 10 s otherwise.
async fn index_scans(db: &TestDb, before: (i64, i64)) -> (i64, i64) {
    let read = |index: &str| {
        let sql = format!(
            "SELECT COALESCE(max(idx_scan), 0) FROM pg_stat_user_indexes \
             WHERE schemaname = current_schema() AND indexrelname = '{index}'"
        );
        let url = db.url.clone();
        async move { query_i64(&url, &sql).await }
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (mut last, mut same) = (before, 0);
    // Statistics arrive late, each backend's when it flushes them (at
    // most once a second, or as it exits): wait until both have moved,
    // then until they hold still.
    while std::time::Instant::now() < deadline
        && (last.0 <= before.0 || last.1 <= before.1 || same < 3)
    {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let now = (read("requests_at").await, read("tool_calls_at").await);
        same = if now == last { same + 1 } else { 0 };
        last = now;
    }
    last
}

/// A PostgreSQL step of several deletes selects its chunk once: its
/// requests step scans `requests_at` once, its calls step `tool_calls_at`
/// once. Each delete ran the chunk's subquery again (three scans, two),
/// the repairs' delete with a plan of its own that read all of
/// `request_repairs` (BENCHMARKS.md: a step took twice as long on a
/// table of 1.2 M requests); and in READ COMMITTED each saw rows another
/// gateway committed in between.
pub async fn a_postgres_step_selects_its_chunk_once(db: TestDb) {
    let opts = || StoreOptions {
        max_connections: 1,
        ..StoreOptions::default()
    };
    let store = Store::open_with(&db.url, opts()).await.unwrap();
    let mut events = turn("s", 0, 1_000);
    events.extend(turn("s", 1, 2_000));
    record_all(&store, &events).await;
    store.close().await;
    // The recording's own scans, if any, counted.
    let before = index_scans(&db, (-1, -1)).await;
    // The chunks' index, as on a large table (on these few rows the
    // planner would read the table).
    let indexed = format!("{}&options[enable_seqscan]=off", db.url);
    let store = Store::open_with(&indexed, opts()).await.unwrap();
    let mut prune = store.prune(CUTOFF, 1000);
    assert!(prune.step().await.unwrap(), "the requests step");
    assert!(prune.step().await.unwrap(), "the calls step");
    let deleted = prune.deleted();
    assert_eq!(
        (deleted.requests, deleted.tool_calls),
        (2, 4),
        "{deleted:?}"
    );
    assert_eq!(deleted.request_repairs, 2, "{deleted:?}");
    store.close().await;
    let after = index_scans(&db, before).await;
    // At most one scan of each, and at least one counted: a backend's
    // statistics can arrive after the 10 s `index_scans` waits (a CI run
    // on a loaded machine read `tool_calls_at`'s scan but never
    // `requests_at`'s), while the chunk selected again per delete shows
    // as two or three scans of one index.
    let scans = (after.0 - before.0, after.1 - before.1);
    assert!(
        scans.0 <= 1 && scans.1 <= 1 && scans.0 + scans.1 >= 1,
        "scans of requests_at, tool_calls_at: before {before:?}, after {after:?}"
    );
}
