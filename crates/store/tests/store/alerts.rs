//! The alert queries (issue 19): a window's numbers per tool × model and
//! per model, and transitions claimed exactly once.

use toolwarden_store::*;

use crate::support::*;

async fn alert_window_and_claims(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let mut events = Vec::new();
    for (i, (status, repairs)) in [(200, 2), (502, 0), (429, 0), (200, 0)]
        .into_iter()
        .enumerate()
    {
        let Event::Request(mut r) = request(&format!("q{i}"), "s", 1_000 + i as i64) else {
            unreachable!()
        };
        r.status = status;
        r.repairs = vec!["orphan_result".to_owned(); repairs];
        events.push(Event::Request(r));
    }
    // An old request, outside the window.
    events.push(request("old", "s", 10));
    for (k, failed) in [true, true, false].into_iter().enumerate() {
        let id = format!("call_alerts_{k:02}");
        events.push(Event::ToolCall(call(
            "q0", "s", k as u32, &id, "book", 1_000,
        )));
        events.push(Event::ToolResult(result(
            "q1",
            "s",
            &id,
            3,
            Some("book"),
            failed,
            1_500,
        )));
    }
    record_all(&store, &events).await;

    let w = store.alert_window(500, DEFAULT_WINDOW_ROWS).await.unwrap();
    assert_eq!(w.tools.len(), 1, "{w:?}");
    let book = &w.tools[0];
    assert_eq!(
        (book.tool.as_str(), book.model.as_str()),
        ("book", "gpt-test")
    );
    assert_eq!((book.results, book.failures), (3, 2));
    assert_eq!(book.exec_count, 3, "{book:?}");
    assert!((book.exec_ms_sum - 1_500.0).abs() < 1e-6, "{book:?}");
    assert_eq!(w.requests.len(), 1, "{w:?}");
    let r = &w.requests[0];
    assert_eq!(
        (r.requests, r.upstream_errors, r.repairs),
        (4, 2, 2),
        "{r:?}"
    );
    assert!(
        store
            .alert_window(2_000, DEFAULT_WINDOW_ROWS)
            .await
            .unwrap()
            .tools
            .is_empty()
    );

    // Results the recorder could not write in detail (folded into the
    // per-minute counts) count in the window too: an overloaded gateway's
    // alerts see them. By the minute: those of the minutes that end in the
    // window, the one it starts in too.
    let folding = Recorder::start(
        Some(store.clone()),
        opts(),
        std::sync::Arc::new(NoopObserver),
    );
    for (k, failed) in [true, true, false, true].into_iter().enumerate() {
        folding.fold(
            &Event::ToolResult(result(
                "q9",
                "s",
                &format!("call_folded_{k:02}"),
                4,
                Some("book"),
                failed,
                60_000 + k as i64,
            )),
            true,
        );
    }
    // A folded call alone: no results, no row in the window.
    folding.fold(
        &Event::ToolCall(call("q9", "s", 9, "call_folded_09", "lookup", 60_000)),
        true,
    );
    let report = folding.shutdown().await;
    assert!(report.unwritten.is_empty(), "{report:?}");
    let w = store.alert_window(500, DEFAULT_WINDOW_ROWS).await.unwrap();
    assert_eq!(w.tools.len(), 1, "{w:?}");
    let book = &w.tools[0];
    assert_eq!((book.results, book.failures), (3 + 4, 2 + 3), "{book:?}");
    assert_eq!(
        book.exec_count, 3,
        "no execution time of their own: {book:?}"
    );
    // A window that starts within their minute (after them, or not: a
    // minute's counts have no time of their own) holds them: a failure
    // counted in it was missed.
    let w = store
        .alert_window(60_001, DEFAULT_WINDOW_ROWS)
        .await
        .unwrap();
    assert_eq!(w.tools.len(), 1, "{w:?}");
    let book = &w.tools[0];
    assert_eq!((book.results, book.failures), (4, 3), "{book:?}");
    let w = store
        .alert_window(119_999, DEFAULT_WINDOW_ROWS)
        .await
        .unwrap();
    assert_eq!(w.tools.len(), 1, "their minute's last ms: {w:?}");
    let w = store
        .alert_window(120_000, DEFAULT_WINDOW_ROWS)
        .await
        .unwrap();
    assert!(
        w.tools.is_empty(),
        "their minute ended before the window: {w:?}"
    );

    let firing = AlertTransition {
        alert_key: "tool_failure_rate|book|*|".into(),
        seq: 1,
        state: "firing".into(),
        rule: "tool_failure_rate".into(),
        tool: "book".into(),
        model: "*".into(),
        instance: String::new(),
        value: 2.0 / 3.0,
        threshold: 0.05,
        volume: 3,
        started_ms: 2_000,
        at_ms: 2_000,
        gateway: "gw-a".into(),
    };
    assert!(store.claim_alert_transition(&firing).await.unwrap());
    let again = AlertTransition {
        gateway: "gw-b".into(),
        ..firing.clone()
    };
    assert!(
        !store.claim_alert_transition(&again).await.unwrap(),
        "claimed twice"
    );
    assert_eq!(
        store.alert_states(DEFAULT_RESOLVED_STATES).await.unwrap(),
        vec![firing.clone()]
    );
    let resolved = AlertTransition {
        seq: 2,
        state: "resolved".into(),
        value: 0.0,
        at_ms: 3_000,
        ..firing.clone()
    };
    assert!(store.claim_alert_transition(&resolved).await.unwrap());
    assert_eq!(
        store.alert_states(DEFAULT_RESOLVED_STATES).await.unwrap(),
        vec![resolved.clone()]
    );
    assert_eq!(
        store.alert_history(10).await.unwrap(),
        vec![resolved, firing]
    );
}

/// Alerts of tools named so that byte order and a language's order differ
/// (`B` < `_a` < `a_b` < `ab` < `b` in bytes), all at one time: the
/// latest states and the history as the store lists them.
pub async fn tied_alerts(db: &TestDb) -> (Vec<AlertTransition>, Vec<AlertTransition>) {
    let store = Store::open(&db.url).await.unwrap();
    for tool in ["b", "ab", "B", "a_b", "_a"] {
        let t = step(tool, 1, 2_000);
        assert!(store.claim_alert_transition(&t).await.unwrap());
    }
    let listed = (
        store.alert_states(DEFAULT_RESOLVED_STATES).await.unwrap(),
        store.alert_history(10).await.unwrap(),
    );
    store.close().await;
    listed
}

/// Each gateway's heartbeat is one row, moved on by the next; rows older
/// than the cutoff are forgotten.
async fn alert_heartbeats(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let seen = store.alert_heartbeat("gw-a", 1_000, 0).await.unwrap();
    assert_eq!(seen, vec![("gw-a".to_owned(), 1_000)]);
    store.alert_heartbeat("gw-b", 1_500, 0).await.unwrap();
    let mut seen = store.alert_heartbeat("gw-a", 2_000, 0).await.unwrap();
    seen.sort();
    assert_eq!(
        seen,
        vec![("gw-a".to_owned(), 2_000), ("gw-b".to_owned(), 1_500)]
    );
    let seen = store.alert_heartbeat("gw-a", 3_000, 2_000).await.unwrap();
    assert_eq!(seen, vec![("gw-a".to_owned(), 3_000)], "gw-b forgotten");
}

/// A window of more (tool, model) pairs than `DEFAULT_WINDOW_ROWS` holds the
/// busiest of them, busiest first.
pub async fn a_window_holds_its_busiest_pairs(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let n = DEFAULT_WINDOW_ROWS as usize;
    let mut events = Vec::new();
    for i in 0..=n {
        let id = format!("call_window_{i:06}");
        let tool = format!("t{i:06}");
        events.push(Event::ToolResult(result(
            "q",
            "s",
            &id,
            3,
            Some(&tool),
            true,
            1_000,
        )));
    }
    for k in 0..3 {
        let id = format!("call_busy_{k}");
        events.push(Event::ToolResult(result(
            "q",
            "s",
            &id,
            3,
            Some("busy"),
            k == 0,
            1_000,
        )));
    }
    events.push(request("q", "s", 1_000));
    record_all(&store, &events).await;
    let w = store.alert_window(500, DEFAULT_WINDOW_ROWS).await.unwrap();
    assert_eq!(w.tools.len(), n, "two pairs left out");
    assert!(w.is_cut(DEFAULT_WINDOW_ROWS));
    assert_eq!((w.tools[0].tool.as_str(), w.tools[0].results), ("busy", 3));
    assert!(w.tools[1..].iter().all(|r| r.results == 1));
    let last = format!("t{n:06}");
    assert!(
        !w.tools.iter().any(|r| r.tool == last),
        "the quietest, last"
    );
    // A window of fewer rows a half holds the busiest of those.
    let small = store.alert_window(500, 3).await.unwrap();
    assert_eq!((small.tools.len(), small.requests.len()), (3, 1));
    assert!(small.tools_cut(3) && !small.requests_cut(3));
    assert_eq!(small.tools[0].tool, "busy");

    // The rows of named tools and models, however quiet: in statements
    // of 500 names.
    let mut tools: Vec<String> = (0..600).map(|i| format!("t{i:06}")).collect();
    tools.extend([last.clone(), "busy".into(), "never".into()]);
    let models = ["gpt-test".to_owned(), "other".to_owned()];
    let of = store
        .alert_window_of(500, (&tools, &models), DEFAULT_WINDOW_ROWS)
        .await
        .unwrap();
    assert_eq!(of.tools.len(), 602, "{:?}", &of.tools[..3]);
    assert!(!of.is_cut(DEFAULT_WINDOW_ROWS));
    let quiet = of
        .tools
        .iter()
        .find(|r| r.tool == last)
        .expect("the quietest");
    assert_eq!(
        (quiet.model.as_str(), quiet.results, quiet.failures),
        ("gpt-test", 1, 1)
    );
    let busy = of.tools.iter().find(|r| r.tool == "busy").expect("busy");
    assert_eq!((busy.results, busy.failures), (3, 1));
    assert_eq!(of.requests.len(), 1, "{:?}", of.requests);
    assert_eq!(
        (of.requests[0].model.as_str(), of.requests[0].requests),
        ("gpt-test", 1)
    );
    // Nothing named, nothing read; none of them in the window, no rows.
    let none = store
        .alert_window_of(500, (&[], &[]), DEFAULT_WINDOW_ROWS)
        .await
        .unwrap();
    assert_eq!(none, AlertWindow::default());
    let later = store
        .alert_window_of(5_000, (&tools, &models), DEFAULT_WINDOW_ROWS)
        .await
        .unwrap();
    assert_eq!(later, AlertWindow::default());
}

/// A transition of `tool`'s alert.
fn step(tool: &str, seq: i64, at_ms: i64) -> AlertTransition {
    AlertTransition {
        alert_key: format!("tool_failure_rate|{tool}|*|"),
        seq,
        state: if seq % 2 == 1 { "firing" } else { "resolved" }.into(),
        rule: "tool_failure_rate".into(),
        tool: tool.into(),
        model: "*".into(),
        instance: String::new(),
        value: 1.0,
        threshold: 0.05,
        volume: 20,
        started_ms: at_ms,
        at_ms,
        gateway: "gw-a".into(),
    }
}

/// The states a round reads are every firing alert and the latest
/// `DEFAULT_RESOLVED_STATES` resolved ones, however many alerts the history
/// holds; an older one is found by its key. Claims that commit out of
/// order leave the later step as the alert's latest.
pub async fn alert_states_are_bounded(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    // The oldest: resolved first, then as many resolved after it as the
    // states hold, then one firing the longest.
    let old = step("old", 2, 1_000);
    assert!(
        store
            .claim_alert_transition(&step("old", 1, 500))
            .await
            .unwrap()
    );
    assert!(store.claim_alert_transition(&old).await.unwrap());
    assert!(
        store
            .claim_alert_transition(&step("long", 1, 900))
            .await
            .unwrap()
    );
    let n = DEFAULT_RESOLVED_STATES as usize;
    for i in 0..n {
        let t = step(&format!("t{i:04}"), 2, 2_000 + i as i64);
        assert!(store.claim_alert_transition(&t).await.unwrap());
    }
    let states = store.alert_states(DEFAULT_RESOLVED_STATES).await.unwrap();
    assert_eq!(states.len(), n + 1, "every firing alert and {n} resolved");
    assert_eq!(states.iter().filter(|s| s.state == "firing").count(), 1);
    assert!(
        states.iter().any(|s| s.tool == "long"),
        "firing, however old"
    );
    assert!(
        !states.iter().any(|s| s.tool == "old"),
        "resolved before the rest"
    );
    assert_eq!(states[0].tool, format!("t{:04}", n - 1), "newest first");
    let fewer = store.alert_states(2).await.unwrap();
    let tools: Vec<&str> = fewer.iter().map(|s| s.tool.as_str()).collect();
    let newest = [format!("t{:04}", n - 1), format!("t{:04}", n - 2)];
    assert_eq!(tools, [newest[0].as_str(), newest[1].as_str(), "long"]);
    assert_eq!(
        store.alert_latest(&old.alert_key).await.unwrap(),
        Some(old.clone())
    );
    assert_eq!(
        store
            .alert_latest("tool_failure_rate|none|*|")
            .await
            .unwrap(),
        None
    );

    // Step 4 of an alert claimed before its step 3 (two gateways, the
    // later commit first): step 4 stays the latest.
    let late = step("old", 4, 5_000);
    assert!(store.claim_alert_transition(&late).await.unwrap());
    assert!(
        store
            .claim_alert_transition(&step("old", 3, 4_000))
            .await
            .unwrap()
    );
    assert_eq!(
        store.alert_latest(&old.alert_key).await.unwrap(),
        Some(late)
    );
    assert_eq!(
        store.alert_history(3).await.unwrap().len(),
        3,
        "both recorded"
    );
}

/// A database of the schema before `alert_latest` (version 22) with alert
/// history: the migration fills the table with each alert's latest step.
pub async fn alert_latest_is_filled_from_the_history(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    for t in [
        step("a", 1, 1_000),
        step("a", 2, 2_000),
        step("b", 1, 1_500),
    ] {
        assert!(store.claim_alert_transition(&t).await.unwrap());
    }
    store.close().await;
    execute(&db.url, "DROP TABLE alert_latest").await;
    execute(&db.url, "DELETE FROM schema_migrations WHERE version = 23").await;
    let store = Store::open(&db.url).await.unwrap();
    let states = store.alert_states(DEFAULT_RESOLVED_STATES).await.unwrap();
    assert_eq!(states, vec![step("a", 2, 2_000), step("b", 1, 1_500)]);
}

/// A repeat is claimed once: a second claim of the same repeat (another
/// gateway) or of an earlier one loses; the next repeat, or a repeat of a
/// later firing transition, wins.
async fn alert_repeats(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let first = AlertRepeat {
        alert_key: "tool_failure_rate|book|*|".into(),
        seq: 1,
        repeat_no: 1,
        at_ms: 1_000,
        gateway: "gw-a".into(),
    };
    assert!(store.claim_alert_repeat(&first).await.unwrap());
    let same = AlertRepeat {
        gateway: "gw-b".into(),
        at_ms: 1_001,
        ..first.clone()
    };
    assert!(
        !store.claim_alert_repeat(&same).await.unwrap(),
        "claimed twice"
    );
    let next = AlertRepeat {
        repeat_no: 2,
        at_ms: 2_000,
        ..same.clone()
    };
    assert!(store.claim_alert_repeat(&next).await.unwrap());
    assert!(
        !store.claim_alert_repeat(&first).await.unwrap(),
        "went back"
    );
    assert_eq!(store.alert_repeats().await.unwrap(), vec![next]);
    let refired = AlertRepeat {
        seq: 3,
        repeat_no: 1,
        at_ms: 3_000,
        ..first
    };
    assert!(store.claim_alert_repeat(&refired).await.unwrap());
    assert_eq!(store.alert_repeats().await.unwrap(), vec![refired]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeats_sqlite() {
    alert_repeats(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeats_postgres() {
    if let Some(db) = TestDb::postgres("alerts::repeats_postgres").await {
        alert_repeats(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    alert_window_and_claims(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_sqlite() {
    alert_heartbeats(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_postgres() {
    if let Some(db) = TestDb::postgres("alerts::heartbeats_postgres").await {
        alert_heartbeats(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    if let Some(db) = TestDb::postgres("alerts::postgres").await {
        alert_window_and_claims(db).await;
    }
}
