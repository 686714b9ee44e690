//! Test bodies shared by both backends: each takes a fresh [`TestDb`].

use std::collections::BTreeMap;

use toolwarden_store::*;

use crate::support::*;

pub use crate::batches::batch_sizes;

/// Resends, a duplicate request and call, and tau-bench's reused call ids.
pub async fn dedup_and_reused_ids(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let s = "s1";
    let mut c2_failed = result("r2", s, "c2", 3, None, true, 2000);
    c2_failed.excerpt = Some("404 not found".into());
    let mut c1_heuristic = result("r3", s, "c1", 5, None, true, 3000);
    c1_heuristic.basis = "heuristic".into();
    let events = vec![
        request("r1", s, 1000),
        Event::ToolCall(call("r1", s, 0, "c1", "search", 1100)),
        Event::ToolCall(call("r1", s, 1, "c2", "fetch", 1100)),
        Event::ToolCall(call("r1", s, 0, "c1", "search", 1100)), // duplicate call
        request("r2", s, 2000),
        Event::ToolResult(result("r2", s, "c1", 2, Some("search"), false, 2000)),
        Event::ToolResult(c2_failed.clone()),
        Event::ToolCall(call("r2", s, 0, "c1", "search", 2100)), // call id reused
        request("r2", s, 2000),                                  // duplicate request
        request("r3", s, 3000),
        Event::ToolResult(result("r3", s, "c1", 2, Some("search"), false, 3000)), // resent
        Event::ToolResult(c2_failed),                                             // resent
        Event::ToolResult(c1_heuristic),
        Event::ToolCall(call("r3", s, 0, "c3", "write", 3100)),
    ];
    let (counters, seen) = record_all(&store, &events).await;
    assert_eq!(counters.events_written, events.len() as u64);
    assert_eq!(
        (
            counters.events_dropped,
            counters.write_errors,
            counters.backlog
        ),
        (0, 0, 0)
    );
    assert_eq!(
        seen.calls.lock().unwrap().len(),
        4,
        "each call observed once"
    );
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![
            ("c1".to_owned(), "search".to_owned()),
            ("c2".to_owned(), "fetch".to_owned()),
            ("c1".to_owned(), "search".to_owned()),
        ]
    );

    let stats = store.stats(&all()).await.unwrap();
    let tools: Vec<(&str, u64, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls, t.failures))
        .collect();
    assert_eq!(
        tools,
        vec![("search", 2, 1), ("fetch", 1, 1), ("write", 1, 0)]
    );
    assert_eq!(stats.tools[0].failure_rate, 0.5);
    assert_eq!(
        stats.requests,
        RequestTotals {
            total: 3,
            errors: 0,
            streaming: 0,
            calls_incomplete: 0,
        }
    );
    assert_eq!(
        stats.sessions,
        vec![SessionRow {
            session_id: s.into(),
            calls: 4,
            failures: 2,
            first_ms: 1100,
            last_ms: 3100
        }]
    );
    let failures: Vec<(i64, &str, &str, Option<&str>)> = stats
        .recent_failures
        .iter()
        .map(|f| {
            (
                f.at_ms,
                f.call_id.as_str(),
                f.basis.as_str(),
                f.excerpt.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        failures,
        vec![
            (3000, "c1", "heuristic", Some("error in c1")),
            (2000, "c2", "explicit", Some("404 not found")),
        ]
    );
    let models: Vec<(&str, &str, u64)> = stats
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.tool.as_str(), m.failures))
        .collect();
    assert_eq!(
        models,
        vec![
            ("gpt-test", "search", 1),
            ("gpt-test", "fetch", 1),
            ("gpt-test", "write", 0)
        ]
    );

    // Each call row carries its own result: the reused id paired by time.
    let rows = store.session_calls(s).await.unwrap();
    type View<'a> = (&'a str, Option<&'a str>, Option<bool>, Option<f64>);
    let view: Vec<View> = rows
        .iter()
        .map(|r| {
            (
                r.call_id.as_str(),
                r.request_id.as_deref(),
                r.failed,
                r.exec_ms,
            )
        })
        .collect();
    assert_eq!(
        view,
        vec![
            ("c1", Some("r1"), Some(false), Some(900.0)),
            ("c2", Some("r1"), Some(true), Some(900.0)),
            ("c1", Some("r2"), Some(true), Some(900.0)),
            ("c3", Some("r3"), None, None),
        ]
    );

    // Filters.
    let only_search = store
        .stats(&StatsQuery {
            tool: Some("search".into()),
            ..all()
        })
        .await
        .unwrap();
    assert_eq!(only_search.tools.len(), 1);
    assert_eq!(only_search.recent_failures.len(), 1);
    let late = store
        .stats(&StatsQuery {
            since_ms: Some(2050),
            ..all()
        })
        .await
        .unwrap();
    let late_tools: Vec<(&str, u64)> = late
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls))
        .collect();
    assert_eq!(late_tools, vec![("search", 1), ("write", 1)]);
    assert_eq!(late.requests.total, 1);
    let other = store
        .stats(&StatsQuery {
            session: Some("nope".into()),
            ..all()
        })
        .await
        .unwrap();
    assert!(other.tools.is_empty() && other.sessions.is_empty());
    assert_eq!(other.requests.total, 0);
}

/// Responses API continuations (another session, `previous_response_id`),
/// call ids found in other sessions, and results with no call anywhere.
pub async fn cross_session_resolution(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let mut a = call("ra", "s1", 0, "fc_1", "lookup", 1500);
    a.response_id = Some("resp_A".into());
    let mut via_prev = result("rb", "s2", "fc_1", 0, None, false, 2500);
    via_prev.previous_response_id = Some("resp_A".into());
    let events = vec![
        Event::ToolCall(a),
        Event::ToolCall(call("rc", "s5", 0, "call_9zQ2fGh7Kp", "book", 1000)),
        Event::ToolResult(via_prev),
        Event::ToolResult(result("rd", "s4", "call_9zQ2fGh7Kp", 1, None, true, 1300)),
        Event::ToolResult(result("re", "s3", "fc_9", 1, None, true, 1400)),
        // A short id is not matched across sessions: "c1" stays unknown.
        Event::ToolCall(call("rf", "s6", 0, "c1", "other", 1000)),
        Event::ToolResult(result("rg", "s7", "c1", 1, None, false, 1600)),
    ];
    let (_, seen) = record_all(&store, &events).await;
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![
            ("fc_1".to_owned(), "lookup".to_owned()),
            ("call_9zQ2fGh7Kp".to_owned(), "book".to_owned()),
            ("fc_9".to_owned(), "unknown".to_owned()),
            ("c1".to_owned(), "unknown".to_owned()),
        ]
    );
    let stats = store.stats(&all()).await.unwrap();
    let tools = calls_and_failures(&stats);
    let expected: BTreeMap<&str, (u64, u64)> = [
        ("lookup", (1, 0)),
        ("book", (1, 1)),
        ("unknown", (2, 1)),
        ("other", (1, 0)),
    ]
    .into_iter()
    .collect();
    assert_eq!(tools, expected);
    let s1 = store.session_calls("s1").await.unwrap();
    assert_eq!(s1.len(), 1);
    assert_eq!((s1[0].failed, s1[0].exec_ms), (Some(false), Some(1000.0)));
    assert_eq!(store.session_calls("s3").await.unwrap()[0].request_id, None);
}

/// A long call id is paired across sessions only when the result's own
/// session never named it: a session whose earlier result of that id has a
/// row of its own (its call was never seen) does not take another
/// session's open call of the id for its next result (migration 0024: the
/// probe asks the session's calls and its result-only rows apart).
pub async fn a_session_that_named_the_id_keeps_its_results(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let id = "call_8xR4tYu2WqLm";
    let first = result("r1", "s2", id, 1, None, false, 1_000);
    let (_, seen) = record_all(&store, &[Event::ToolResult(first)]).await;
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![(id.to_owned(), "unknown".to_owned())]
    );
    // Two minutes later (past the lead a late call may complete a result
    // recorded before it) another session calls the id and leaves it open.
    let open = call("r2", "s1", 0, id, "deploy", 121_000);
    record_all(&store, &[Event::ToolCall(open)]).await;
    let again = result("r3", "s2", id, 3, None, false, 122_000);
    let (_, seen) = record_all(&store, &[Event::ToolResult(again)]).await;
    // Named after the open call of its id, as a result left unpaired is,
    // but not paired with it: s2 named the id before.
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![(id.to_owned(), "deploy".to_owned())]
    );
    let s1 = store.session_calls("s1").await.unwrap();
    assert_eq!(s1.len(), 1);
    assert_eq!((s1[0].result_at_ms, s1[0].failed), (None, None), "{s1:?}");
    let s2 = store.session_calls("s2").await.unwrap();
    assert_eq!(s2.len(), 2, "{s2:?}");
    assert!(s2.iter().all(|r| r.request_id.is_none()), "{s2:?}");
}

/// A result recorded before its call (another gateway, a slower queue): the
/// late call completes the result's row instead of adding one.
pub async fn late_call_merges(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    record_all(
        &store,
        &[Event::ToolResult(result(
            "r2", "s", "c7", 1, None, true, 5000,
        ))],
    )
    .await;
    let before = store.stats(&all()).await.unwrap();
    assert_eq!(before.tools[0].tool, "unknown");
    let (_, seen) = record_all(
        &store,
        &[Event::ToolCall(call("r1", "s", 0, "c7", "deploy", 4000))],
    )
    .await;
    assert_eq!(seen.calls.lock().unwrap().len(), 1, "the late call is new");
    let rows = store.session_calls("s").await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(
        (
            r.tool.as_str(),
            r.request_id.as_deref(),
            r.failed,
            r.exec_ms,
            r.at_ms
        ),
        ("deploy", Some("r1"), Some(true), Some(1000.0), 4000)
    );
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(stats.tools.len(), 1);
    assert_eq!(
        (
            stats.tools[0].tool.as_str(),
            stats.tools[0].calls,
            stats.tools[0].failures
        ),
        ("deploy", 1, 1)
    );
    // Recording the same call again changes nothing.
    let (_, seen) = record_all(
        &store,
        &[Event::ToolCall(call("r1", "s", 0, "c7", "deploy", 4000))],
    )
    .await;
    assert!(seen.calls.lock().unwrap().is_empty());
    assert_eq!(store.session_calls("s").await.unwrap().len(), 1);
}

/// Late calls whose results were recorded first under other sessions: a
/// long call id completes the one result-only row with its id anywhere;
/// two such rows are ambiguous (the call gets its own row); and within one
/// batch, a row completed by an earlier call is not offered to a later one.
pub async fn late_calls_merge_across_sessions(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    record_all(
        &store,
        &[
            Event::ToolResult(result("o1", "sa", "call_OnlyOne00001", 1, None, true, 5000)),
            Event::ToolResult(result(
                "o2",
                "sc",
                "call_Twice0000001",
                1,
                None,
                false,
                5000,
            )),
            Event::ToolResult(result(
                "o3",
                "sd",
                "call_Twice0000001",
                1,
                None,
                false,
                5000,
            )),
            Event::ToolResult(result("o4", "sh", "call_Same00000001", 1, None, true, 5000)),
            Event::ToolResult(result("o5", "si", "call_Pair00000001", 1, None, true, 5000)),
            Event::ToolResult(result("o6", "sj", "call_Pair00000001", 1, None, true, 5000)),
        ],
    )
    .await;
    let (_, seen) = record_one_batch(
        &store,
        &[
            Event::ToolCall(call("c1", "sb", 0, "call_OnlyOne00001", "grep", 4000)),
            Event::ToolCall(call("c2", "se", 0, "call_Twice0000001", "ls", 4000)),
            Event::ToolCall(call("c3", "sf", 0, "call_Same00000001", "cat", 4000)),
            Event::ToolCall(call("c4", "sg", 0, "call_Same00000001", "cat", 4100)),
            // Completes its own session's row, which leaves one open elsewhere…
            Event::ToolCall(call("c5", "si", 0, "call_Pair00000001", "rm", 4000)),
            // …for this one.
            Event::ToolCall(call("c6", "sk", 0, "call_Pair00000001", "rm", 4100)),
        ],
    )
    .await;
    assert_eq!(seen.calls.lock().unwrap().len(), 6, "every call is new");
    // Merged: the orphan row now carries the call.
    let sa = store.session_calls("sa").await.unwrap();
    assert_eq!(sa.len(), 1);
    assert_eq!(
        (
            sa[0].tool.as_str(),
            sa[0].request_id.as_deref(),
            sa[0].failed
        ),
        ("grep", Some("c1"), Some(true))
    );
    assert!(store.session_calls("sb").await.unwrap().is_empty());
    // Ambiguous: both orphans stay, the call has a row of its own.
    let se = store.session_calls("se").await.unwrap();
    assert_eq!((se.len(), se[0].failed), (1, None));
    for s in ["sc", "sd"] {
        assert_eq!(store.session_calls(s).await.unwrap()[0].request_id, None);
    }
    // One orphan, two calls in one batch: the first completes it.
    let sh = store.session_calls("sh").await.unwrap();
    assert_eq!(sh[0].request_id.as_deref(), Some("c3"));
    assert!(store.session_calls("sf").await.unwrap().is_empty());
    assert_eq!(store.session_calls("sg").await.unwrap().len(), 1);
    let si = store.session_calls("si").await.unwrap();
    let sj = store.session_calls("sj").await.unwrap();
    assert_eq!(si[0].request_id.as_deref(), Some("c5"));
    assert_eq!(sj[0].request_id.as_deref(), Some("c6"));
    assert!(store.session_calls("sk").await.unwrap().is_empty());
    let stats = store.stats(&all()).await.unwrap();
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    // 6 calls + the 2 ambiguous results that stay rows of their own.
    assert_eq!(calls, 8, "{:?}", stats.tools);
}

/// A late call completes a result-only row recorded up to a minute before
/// it (gateways whose clocks differ), and never an older one with the same
/// id: a client that reuses `call_0`, whose earlier result's call was never
/// seen, must not have each new call answered by that old result (the new
/// call's own result would then find no call). Nor does an older row in
/// another session make a recent one there ambiguous.
pub async fn late_calls_skip_old_results(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let minute = 60_000;
    record_all(
        &store,
        &[
            // Session s: one old result of `call_0`, one just before its call.
            Event::ToolResult(result("o1", "s", "call_0", 1, Some("ls"), true, 1_000)),
            Event::ToolResult(result("o2", "s", "call_1", 1, Some("ls"), true, 500_000)),
            // Long ids, other sessions: the only row of its id, but old.
            Event::ToolResult(result(
                "o3",
                "sa",
                "call_Old00000001",
                1,
                Some("ls"),
                true,
                1_000,
            )),
            Event::ToolResult(result(
                "o4",
                "sb",
                "call_New00000001",
                1,
                Some("ls"),
                true,
                500_000,
            )),
            // Two sessions, one id: an old row and a recent one.
            Event::ToolResult(result(
                "o5",
                "sd",
                "call_Both0000001",
                1,
                Some("ls"),
                true,
                1_000,
            )),
            Event::ToolResult(result(
                "o6",
                "se",
                "call_Both0000001",
                1,
                Some("ls"),
                true,
                500_000,
            )),
        ],
    )
    .await;
    let at = 500_000 + minute / 2;
    let (_, seen) = record_one_batch(
        &store,
        &[
            Event::ToolCall(call("c1", "s", 0, "call_0", "grep", at)),
            Event::ToolCall(call("c1", "s", 1, "call_1", "grep", at)),
            Event::ToolCall(call("c2", "sc", 0, "call_Old00000001", "cat", at)),
            Event::ToolCall(call("c2", "sc", 1, "call_New00000001", "cat", at)),
            Event::ToolCall(call("c2", "sc", 2, "call_Both0000001", "cat", at)),
        ],
    )
    .await;
    assert_eq!(seen.calls.lock().unwrap().len(), 5, "every call is new");
    let by_call = |rows: &[toolwarden_store::CallRow], id: &str| {
        rows.iter()
            .filter(|r| r.call_id == id)
            .map(|r| (r.request_id.clone(), r.failed))
            .collect::<Vec<_>>()
    };
    let s = store.session_calls("s").await.unwrap();
    // The old result stays a row of its own; the call gets one, unanswered.
    assert_eq!(
        by_call(&s, "call_0"),
        vec![(None, Some(true)), (Some("c1".into()), None)],
        "{s:?}"
    );
    // Half a minute before its call: completed.
    assert_eq!(by_call(&s, "call_1"), vec![(Some("c1".into()), Some(true))]);
    assert_eq!(store.session_calls("sa").await.unwrap()[0].request_id, None);
    assert_eq!(
        store.session_calls("sb").await.unwrap()[0]
            .request_id
            .as_deref(),
        Some("c2")
    );
    let sc = store.session_calls("sc").await.unwrap();
    assert_eq!(
        by_call(&sc, "call_Old00000001"),
        vec![(Some("c2".into()), None)]
    );
    assert!(by_call(&sc, "call_New00000001").is_empty());
    // The old row cannot be the call's: the recent one is the only
    // candidate, and the call completes it.
    assert!(by_call(&sc, "call_Both0000001").is_empty());
    assert_eq!(store.session_calls("sd").await.unwrap()[0].request_id, None);
    assert_eq!(
        store.session_calls("se").await.unwrap()[0]
            .request_id
            .as_deref(),
        Some("c2")
    );
    // The call's own result, next turn, pairs with it.
    let (_, seen) = record_all(
        &store,
        &[Event::ToolResult(result(
            "r3",
            "s",
            "call_0",
            3,
            None,
            false,
            at + 5_000,
        ))],
    )
    .await;
    assert_eq!(seen.results.lock().unwrap().len(), 1);
    let s = store.session_calls("s").await.unwrap();
    assert_eq!(
        by_call(&s, "call_0"),
        vec![(None, Some(true)), (Some("c1".into()), Some(false))],
        "{s:?}"
    );
}

/// Names resolve from the database after a restart (another process, later).
pub async fn resolves_names_across_restart(db: TestDb) {
    {
        let store = Store::open(&db.url).await.unwrap();
        record_all(
            &store,
            &[Event::ToolCall(call("r1", "s", 0, "c1", "grep", 100))],
        )
        .await;
        store.close().await;
    }
    let store = Store::open(&db.url).await.unwrap();
    let (_, seen) = record_all(
        &store,
        &[Event::ToolResult(result(
            "r2", "s", "c1", 3, None, false, 350,
        ))],
    )
    .await;
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![("c1".to_owned(), "grep".to_owned())]
    );
    let rows = store.session_calls("s").await.unwrap();
    assert_eq!((rows.len(), rows[0].exec_ms), (1, Some(250.0)));
}

/// Repairs and request totals.
pub async fn repairs_and_requests(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let mut events = Vec::new();
    // The third's response passed the parse limit: its calls may be
    // incomplete, which its row keeps and the totals count.
    for (i, (status, streaming, repairs, calls_incomplete)) in [
        (200, true, vec!["orphan_result", "missing_result"], false),
        (502, false, vec![], false),
        (200, false, vec!["orphan_result"], true),
    ]
    .into_iter()
    .enumerate()
    {
        let Event::Request(mut r) = request(&format!("q{i}"), "s", 10 + i as i64) else {
            unreachable!()
        };
        r.status = status;
        r.streaming = streaming;
        r.calls_incomplete = calls_incomplete;
        r.repairs = repairs.into_iter().map(str::to_owned).collect();
        events.push(Event::Request(r));
    }
    events.push(events[0].clone());
    record_all(&store, &events).await;
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(
        stats.requests,
        RequestTotals {
            total: 3,
            errors: 1,
            streaming: 1,
            calls_incomplete: 1,
        }
    );
    let flagged = "SELECT COUNT(*) FROM requests WHERE calls_incomplete = 1 AND request_id = 'q2'";
    assert_eq!(query_i64(&db.url, flagged).await, 1);
    assert_eq!(
        stats.repairs,
        vec![
            RepairRow {
                defect: "orphan_result".into(),
                count: 2
            },
            RepairRow {
                defect: "missing_result".into(),
                count: 1
            },
        ]
    );
}

/// The fixed event sequence used to compare backends.
pub async fn stats_document(db: &TestDb) -> serde_json::Value {
    let store = Store::open(&db.url).await.unwrap();
    let mut events = Vec::new();
    for s in 0..5 {
        let session = format!("sess{s}");
        for turn in 0..4 {
            let at = 1_000_000 + s * 10_000 + turn * 1_000;
            let req = format!("req{s}_{turn}");
            events.push(request(&req, &session, at));
            // Each turn resends the results of all earlier calls.
            for k in 0..turn {
                let failed = (s + k) % 3 == 0;
                let prev = format!("c{k}");
                events.push(Event::ToolResult(result(
                    &req, &session, &prev, k as u32, None, failed, at,
                )));
            }
            let tool = ["search", "fetch", "write"][(s + turn) as usize % 3];
            events.push(Event::ToolCall(call(
                &req,
                &session,
                0,
                &format!("c{turn}"),
                tool,
                at + 500,
            )));
        }
    }
    record_all(&store, &events).await;
    serde_json::to_value(
        store
            .stats(&StatsQuery { limit: 3, ..all() })
            .await
            .unwrap(),
    )
    .unwrap()
}

/// A report whose names tie on their counts (tools, models, sessions,
/// repairs, the timeline's tools in a bucket): each with one call, one
/// failure, one repair, at one time, named so that byte order and a
/// language's order differ (`B` < `_a` < `a_b` < `ab` < `b` in bytes).
pub async fn tied_names_document(db: &TestDb) -> serde_json::Value {
    let store = Store::open(&db.url).await.unwrap();
    let names = ["b", "ab", "B", "a_b", "_a"];
    let mut events = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let (req, session, at) = (format!("r{i}"), format!("s{name}"), 1_000_000);
        let mut r = request(&req, &session, at);
        if let Event::Request(r) = &mut r {
            r.model = Some(format!("m{name}"));
            r.repairs = vec![format!("d{name}")];
        }
        events.push(r);
        let mut c = call(&req, &session, 0, "c0", name, at);
        c.model = Some(format!("m{name}"));
        events.push(Event::ToolCall(c));
        events.push(Event::ToolResult(result(
            &format!("q{i}"),
            &session,
            "c0",
            1,
            None,
            true,
            at,
        )));
    }
    record_all(&store, &events).await;
    serde_json::to_value(store.stats(&all()).await.unwrap()).unwrap()
}

/// A report reads one snapshot: while calls keep arriving, its sections
/// (per tool, per model and tool) still count the same calls.
pub async fn stats_are_one_snapshot(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for round in 0..150 {
                let events: Vec<Event> = (0..8)
                    .flat_map(|i| {
                        let req = format!("r{round}-{i}");
                        let id = format!("c{round}-{i}");
                        let tool = ["grep", "ls", "cat"][i % 3];
                        [
                            Event::ToolCall(call(&req, "s", 0, &id, tool, 1000)),
                            Event::ToolResult(result(&req, "s", &id, 1, None, i % 2 == 0, 1200)),
                        ]
                    })
                    .collect();
                record_one_batch(&store, &events).await;
            }
        })
    };
    let mut reports = 0;
    while !writer.is_finished() {
        let stats = store.stats(&all()).await.unwrap();
        let by_tool: (u64, u64) = stats
            .tools
            .iter()
            .fold((0, 0), |(c, f), t| (c + t.calls, f + t.failures));
        let by_model: (u64, u64) = stats
            .models
            .iter()
            .fold((0, 0), |(c, f), m| (c + m.calls, f + m.failures));
        assert_eq!(by_tool, by_model, "report {reports}");
        reports += 1;
    }
    writer.await.unwrap();
    assert!(reports > 0);
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(stats.tools.iter().map(|t| t.calls).sum::<u64>(), 1200);
}

/// The session of a Responses API response, for a continuation that
/// reaches a gateway which did not see it: found by the response id, for
/// Responses requests only.
pub async fn session_of_a_response(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let responses = |id: &str, session: &str, response: &str, dialect: &str| {
        let Event::Request(mut r) = request(id, session, 1000) else {
            unreachable!()
        };
        r.session_source = "fingerprint".into();
        r.dialect = Some(dialect.into());
        r.response_id = Some(response.into());
        Event::Request(r)
    };
    record_all(
        &store,
        &[
            responses("q1", "fp-1", "resp_1", "openai-responses"),
            responses("q2", "fp-2", "chatcmpl-1", "openai-chat"),
        ],
    )
    .await;
    assert_eq!(
        store.session_of_response("resp_1").await.unwrap(),
        Some(("fp-1".to_string(), "fingerprint".to_string()))
    );
    assert_eq!(store.session_of_response("chatcmpl-1").await.unwrap(), None);
    assert_eq!(
        store.session_of_response("resp_unknown").await.unwrap(),
        None
    );
}

/// Late calls of one batch completing their session's result-only rows:
/// each row completed once, a call sent twice in the batch new once (its
/// second copy completes nothing), and the row left over stays result-only.
pub async fn late_calls_merge_in_one_batch(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let orphans: Vec<Event> = (0..3)
        .map(|k| {
            Event::ToolResult(result(
                &format!("o{k}"),
                "s",
                "c9",
                k,
                None,
                k == 1,
                5000 + i64::from(k),
            ))
        })
        .collect();
    record_all(&store, &orphans).await;
    let first = call("r1", "s", 0, "c9", "deploy", 4000);
    let batch = [
        Event::ToolCall(first.clone()),
        Event::ToolCall(first),
        Event::ToolCall(call("r2", "s", 0, "c9", "deploy", 4100)),
    ];
    let (counters, seen) = record_one_batch(&store, &batch).await;
    assert_eq!((counters.events_written, counters.write_errors), (3, 0));
    assert_eq!(seen.calls.lock().unwrap().len(), 2, "r1 once, r2 once");
    let rows = store.session_calls("s").await.unwrap();
    let mut merged: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r.request_id.clone(),
                r.tool.clone(),
                r.result_at_ms.is_some(),
            )
        })
        .collect();
    merged.sort();
    assert_eq!(
        merged,
        vec![
            (None, "unknown".to_owned(), true),
            (Some("r1".to_owned()), "deploy".to_owned(), true),
            (Some("r2".to_owned()), "deploy".to_owned(), true),
        ],
        "{rows:?}"
    );
    let stats = store.stats(&all()).await.unwrap();
    let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
    assert_eq!(calls, 3, "{:?}", stats.tools);
}

/// Only a Responses API call is found by its response id: a continuation
/// (`previous_response_id`) names a Responses response, and the other
/// dialects' calls are stored without theirs (one index write fewer each).
/// A call of unknown dialect (older records) keeps it.
pub async fn response_ids_only_where_continuations_name_them(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let call_of = |req: &str, id: &str, tool: &str, response: &str, dialect: Option<&str>| {
        let mut c = call(req, "s1", 0, id, tool, 1000);
        c.response_id = Some(response.into());
        c.dialect = dialect.map(str::to_owned);
        Event::ToolCall(c)
    };
    let continuation = |req: &str, id: &str, response: &str| {
        let mut r = result(req, "s2", id, 1, None, false, 2000);
        r.previous_response_id = Some(response.into());
        Event::ToolResult(r)
    };
    let (_, seen) = record_all(
        &store,
        &[
            call_of("r1", "fc_1", "lookup", "resp_1", Some("openai-responses")),
            call_of("r2", "fc_2", "grep", "msg_2", Some("anthropic")),
            call_of("r3", "fc_3", "book", "resp_3", None),
            continuation("r4", "fc_1", "resp_1"),
            continuation("r5", "fc_2", "msg_2"),
            continuation("r6", "fc_3", "resp_3"),
        ],
    )
    .await;
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![
            ("fc_1".to_owned(), "lookup".to_owned()),
            ("fc_2".to_owned(), "unknown".to_owned()),
            ("fc_3".to_owned(), "book".to_owned()),
        ]
    );
}

/// Two results of one reused call id in one batch, one open call and one
/// parked call before them: the first result takes the open call, the
/// second the parked one (the parked calls are read for the second, as
/// the open ones cannot serve both).
pub async fn parked_call_serves_the_second_result(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let t0 = 1_700_000_000_000;
    let later = t0 + 10 * 60_000;
    let id = "toolu_reused_call_0001";
    record_all(
        &store,
        &[
            request("r1", "s", t0),
            Event::ToolCall(call("r1", "s", 0, id, "old", t0)),
        ],
    )
    .await;
    record_all(&store, &[request("r2", "s9", later)]).await;
    let parked = "SELECT count(*) FROM tool_calls WHERE parked = 1 AND result_at_ms IS NULL";
    assert_eq!(query_i64(&db.url, parked).await, 1);
    let (counters, seen) = record_one_batch(
        &store,
        &[
            request("r3", "s", later + 10),
            Event::ToolCall(call("r3", "s", 0, id, "new", later + 10)),
            Event::ToolResult(result("r4", "s", id, 3, None, false, later + 20)),
            Event::ToolResult(result("r4", "s", id, 4, None, true, later + 20)),
        ],
    )
    .await;
    assert_eq!((counters.events_dropped, counters.write_errors), (0, 0));
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![
            (id.to_owned(), "new".to_owned()),
            (id.to_owned(), "old".to_owned())
        ]
    );
    assert_eq!(query_i64(&db.url, parked).await, 0);
    assert_eq!(
        query_i64(&db.url, "SELECT count(*) FROM tool_calls").await,
        2
    );
}

/// Calls open for longer than the parking age leave the open calls' index
/// for the parked one (migration 0009), and every lookup of open calls
/// still finds them: a late result pairs with its call in its session and
/// across sessions, and a nameless result gets its tool's name from one.
/// Counts stay exact.
pub async fn parked_calls_still_pair(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let t0 = 1_700_000_000_000;
    let later = t0 + 10 * 60_000;
    let calls = [
        call("r1", "s1", 0, "toolu_parked_in_session_01", "search", t0),
        call("r1", "s1", 1, "toolu_parked_elsewhere_002", "fetch", t0),
        call("r1", "s1", 2, "toolu_parked_twice_000003", "grep", t0),
        call("r1", "s1", 3, "toolu_never_answered_0004", "write", t0),
        call("r2", "s2", 0, "toolu_parked_twice_000003", "grep", t0 + 1),
    ];
    let mut events = vec![request("r1", "s1", t0), request("r2", "s2", t0 + 1)];
    events.extend(calls.iter().cloned().map(Event::ToolCall));
    record_all(&store, &events).await;
    let parked = "SELECT count(*) FROM tool_calls WHERE parked = 1 AND result_at_ms IS NULL";
    assert_eq!(
        query_i64(&db.url, parked).await,
        0,
        "open for a moment only"
    );

    // Ten minutes later by the events' clock: the next batch parks them.
    record_all(&store, &[request("r3", "s9", later)]).await;
    assert_eq!(query_i64(&db.url, parked).await, 5);

    let (counters, seen) = record_all(
        &store,
        &[
            request("r4", "s1", later + 1),
            Event::ToolResult(result(
                "r4",
                "s1",
                "toolu_parked_in_session_01",
                2,
                None,
                true,
                later + 1,
            )),
            request("r5", "s7", later + 2),
            Event::ToolResult(result(
                "r5",
                "s7",
                "toolu_parked_elsewhere_002",
                1,
                None,
                false,
                later + 2,
            )),
            // Open in two other sessions: not paired, but named.
            Event::ToolResult(result(
                "r5",
                "s7",
                "toolu_parked_twice_000003",
                3,
                None,
                false,
                later + 2,
            )),
        ],
    )
    .await;
    assert_eq!((counters.events_dropped, counters.write_errors), (0, 0));
    assert_eq!(
        *seen.results.lock().unwrap(),
        vec![
            ("toolu_parked_in_session_01".to_owned(), "search".to_owned()),
            ("toolu_parked_elsewhere_002".to_owned(), "fetch".to_owned()),
            ("toolu_parked_twice_000003".to_owned(), "grep".to_owned()),
        ]
    );
    assert_eq!(query_i64(&db.url, parked).await, 3);
    let rows = "SELECT count(*) FROM tool_calls";
    assert_eq!(
        query_i64(&db.url, rows).await,
        6,
        "five calls, one result-only row"
    );
    let stats = store.stats(&all()).await.unwrap();
    let tools = calls_and_failures(&stats);
    let expected: BTreeMap<&str, (u64, u64)> = [
        ("search", (1, 1)),
        ("fetch", (1, 0)),
        ("grep", (3, 0)),
        ("write", (1, 0)),
    ]
    .into_iter()
    .collect();
    assert_eq!(tools, expected);
    let s1 = store.session_calls("s1").await.unwrap();
    let search = s1.iter().find(|c| c.tool == "search").unwrap();
    assert_eq!(
        (search.failed, search.exec_ms),
        (Some(true), Some(600_001.0))
    );
}

/// Sessions are numbered in the order the store first sees them
/// (migration 0010), also when a session's tool events come before its
/// request, and every row carries its session's number; a result resent
/// under its session is still counted once.
pub async fn sessions_are_numbered_at_first_sight(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let t0 = 1_700_000_000_000;
    // The call of `s-tools-first` reaches the store before its request.
    let first = [
        request("r1", "s-first", t0),
        Event::ToolCall(call("r1", "s-first", 0, "c1", "search", t0 + 1)),
        Event::ToolCall(call("r2", "s-tools-first", 0, "c2", "fetch", t0 + 2)),
    ];
    record_one_batch(&store, &first).await;
    let answer = result("r3", "s-tools-first", "c2", 1, None, true, t0 + 5);
    let second = [
        request("r2", "s-tools-first", t0 + 2),
        request("r3", "s-tools-first", t0 + 5),
        Event::ToolResult(answer.clone()),
        request("r4", "s-second", t0 + 6),
    ];
    record_one_batch(&store, &second).await;
    let (counters, _) = record_one_batch(&store, &[Event::ToolResult(answer)]).await;
    assert_eq!(counters.write_errors, 0);

    let no = |s: &str| format!("(SELECT no FROM sessions WHERE session_id = '{s}')");
    let url = &db.url;
    assert!(
        query_i64(
            url,
            &format!("SELECT {} - {}", no("s-tools-first"), no("s-first"))
        )
        .await
            != 0
    );
    assert!(
        query_i64(
            url,
            &format!("SELECT {} - {}", no("s-second"), no("s-first"))
        )
        .await
            > 0
    );
    assert!(
        query_i64(
            url,
            &format!("SELECT {} - {}", no("s-second"), no("s-tools-first"))
        )
        .await
            > 0
    );
    // The session its tool events opened takes its request's source.
    assert_eq!(
        query_i64(
            url,
            "SELECT requests FROM sessions WHERE session_id = 's-tools-first' AND source = 'header'"
        )
        .await,
        2
    );
    assert_eq!(query_i64(url, "SELECT count(*) FROM sessions").await, 3);
    for table in ["requests", "tool_calls", "tool_results", "call_turns"] {
        let wrong = format!(
            "SELECT count(*) FROM {table} t WHERE t.session_no <> \
             (SELECT no FROM sessions s WHERE s.session_id = t.session_id)"
        );
        assert_eq!(query_i64(url, &wrong).await, 0, "{table}");
    }
    let stats = store.stats(&all()).await.unwrap();
    let per_tool = calls_and_failures(&stats);
    assert_eq!(per_tool.get("fetch"), Some(&(1, 1)), "{per_tool:?}");
    assert_eq!(per_tool.get("search"), Some(&(1, 0)), "{per_tool:?}");
}

/// The newest calls of a session are the tail of all its calls, in the same
/// order (ties in time and results without a call, whose `call_index` is
/// NULL, included), and say when older ones were left out.
pub async fn newest_calls_of_a_long_session(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let (s, t0) = ("long", 1_700_000_000_000);
    let mut events = Vec::new();
    for i in 0..12u32 {
        // Three calls per response, at one time.
        let (req, at) = (format!("r{}", i / 3), t0 + i64::from(i / 3));
        if i % 3 == 0 {
            events.push(request(&req, s, at));
        }
        let id = format!("c{i}");
        events.push(Event::ToolCall(call(&req, s, i % 3, &id, "t", at)));
        if i % 4 == 0 {
            let orphan = format!("o{i}");
            events.push(Event::ToolResult(result(
                "rx",
                s,
                &orphan,
                i,
                Some("t"),
                true,
                at,
            )));
        }
    }
    record_all(&store, &events).await;
    let all = store.session_calls(s).await.unwrap();
    assert_eq!(all.len(), 15);
    assert!(all.iter().any(|c| c.call_index.is_none()));
    for limit in [0, 1, 2, 5, 14, 15, 16, 500] {
        let newest = store.session_calls_newest(s, limit).await.unwrap();
        let tail = &all[all.len().saturating_sub(limit)..];
        assert_eq!(newest.calls, tail, "limit {limit}");
        assert_eq!(newest.truncated, limit < all.len(), "limit {limit}");
    }
    let none = store.session_calls_newest("no-such", 10).await.unwrap();
    assert_eq!(none, SessionCalls::default());
}

/// One answer resent at another position (a Responses turn sent as a
/// continuation, then again as the whole history; or the other way round;
/// any dialect's turn retried with its oldest turns cut) counts once: the
/// continuation names the response of the call it answers, the whole
/// history replays its turn. What still counts: a short
/// id answered again (`call_0` names a new call each turn), a gateway-made
/// `name#n` id, another answer to a long id, a result with nothing naming
/// the answered call (no `previous_response_id`, no replayed turn: its own
/// call may not have reached the store yet), and a long id answered again
/// where the store never saw its call.
pub async fn a_result_resent_at_another_position_counts_once(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let long = "call_Qm4x8ZtR2pLw9Vb1";
    let other = "call_Hs7c2NkY5aDe3Fu8";
    const TURN: i64 = 4242;
    let answering = |mut r: ToolResultRecord, k: u32| {
        r.answers = Some(TurnRef {
            turn: TURN,
            call_index: k,
        });
        Event::ToolResult(r)
    };
    let mut a = call("r1", "s", 0, long, "lookup", 1000);
    a.response_id = Some("resp_1".into());
    a.turn = Some(TURN);
    let mut b = call("r1", "s", 1, other, "book", 1000);
    b.response_id = Some("resp_1".into());
    b.turn = Some(TURN);
    let continued = |id: &str, failed| {
        let mut r = result("r2", "s", id, u32::from(failed), None, failed, 2000);
        r.previous_response_id = Some("resp_1".into());
        Event::ToolResult(r)
    };
    // Calls recorded; the continuation's results; then the whole history
    // (results at positions 3 and 4); then the same whole history again.
    record_all(
        &store,
        &[
            Event::ToolCall(a),
            Event::ToolCall(b),
            continued(long, false),
            continued(other, true),
        ],
    )
    .await;
    let whole = |req: &str, at| {
        vec![
            answering(result(req, "s", long, 3, None, false, at), 0),
            answering(result(req, "s", other, 4, None, true, at), 1),
        ]
    };
    let (counters, seen) = record_all(&store, &whole("r3", 3000)).await;
    assert_eq!(counters.events_written, 2, "applied, as duplicates");
    assert!(seen.results.lock().unwrap().is_empty(), "nothing new");
    record_all(&store, &whole("r4", 4000)).await;
    // The other way round, in one batch with the call: the whole history's
    // answer first, then the continuation's.
    let c = "call_Zx3v5Bn7Mq9Lk2Jh";
    let mut search = call("r5", "s", 0, c, "search", 5000);
    search.response_id = Some("resp_5".into());
    search.turn = Some(TURN + 1);
    let mut late = result("r7", "s", c, 0, None, false, 5200);
    late.previous_response_id = Some("resp_5".into());
    let mut first = result("r6", "s", c, 7, None, false, 5100);
    first.answers = Some(TurnRef {
        turn: TURN + 1,
        call_index: 0,
    });
    let batch = [
        Event::ToolCall(search),
        Event::ToolResult(first),
        Event::ToolResult(late),
    ];
    record_one_batch(&store, &batch).await;
    // Still counted.
    let answering_turn = |mut r: ToolResultRecord, turn: i64| {
        r.answers = Some(TurnRef {
            turn,
            call_index: 0,
        });
        Event::ToolResult(r)
    };
    let mut anthropic = call("r14", "s", 0, "toolu_01ABCDEFGHIJKLMN", "edit", 9000);
    anthropic.turn = Some(78);
    let mut gemini = call("r8", "s", 0, "get_order_status#0", "get_order_status", 6000);
    gemini.turn = Some(77);
    let gemini_again = {
        let mut r = result(
            "r10",
            "s",
            "get_order_status#0",
            9,
            Some("get_order_status"),
            false,
            6200,
        );
        r.answers = Some(TurnRef {
            turn: 77,
            call_index: 0,
        });
        Event::ToolResult(r)
    };
    let more = [
        Event::ToolCall(call("r7", "s", 0, "call_0", "read", 6000)),
        Event::ToolResult(result("r8", "s", "call_0", 1, Some("read"), false, 6100)),
        Event::ToolResult(result("r9", "s", "call_0", 5, Some("read"), false, 6200)),
        Event::ToolCall(gemini),
        Event::ToolResult(result(
            "r9",
            "s",
            "get_order_status#0",
            3,
            Some("get_order_status"),
            false,
            6100,
        )),
        gemini_again,
        answering(result("r9", "s", long, 9, None, true, 6200), 0),
        Event::ToolResult(result("r9", "s", other, 11, None, true, 6200)),
        Event::ToolResult(result(
            "r10",
            "s",
            "call_NeverSeen12345",
            1,
            Some("fetch"),
            false,
            7000,
        )),
        Event::ToolResult(result(
            "r11",
            "s",
            "call_NeverSeen12345",
            6,
            Some("fetch"),
            false,
            7100,
        )),
        // The same id and answer, but naming another turn or response.
        answering_turn(result("r12", "s", long, 20, None, false, 8000), TURN + 9),
        {
            let mut r = result("r13", "s", long, 21, None, false, 8100);
            r.previous_response_id = Some("resp_other".into());
            Event::ToolResult(r)
        },
        // A call of a dialect without continuations (no response id),
        // answered, then the same turn's answer again at another position
        // (a retry with the oldest turns cut, a failover to another
        // dialect): counted once.
        Event::ToolCall(anthropic),
        answering_turn(
            result("r15", "s", "toolu_01ABCDEFGHIJKLMN", 3, None, false, 9100),
            78,
        ),
        answering_turn(
            result("r16", "s", "toolu_01ABCDEFGHIJKLMN", 7, None, false, 9200),
            78,
        ),
    ];
    record_all(&store, &more).await;
    let stats = store.stats(&all()).await.unwrap();
    let expected: BTreeMap<&str, (u64, u64)> = [
        ("lookup", (4, 1)),
        ("book", (2, 2)),
        ("edit", (1, 0)),
        ("search", (1, 0)),
        ("read", (2, 0)),
        ("get_order_status", (2, 0)),
        ("fetch", (2, 0)),
    ]
    .into_iter()
    .collect();
    assert_eq!(calls_and_failures(&stats), expected);
}

/// Two runs of one conversation in one session (automated runs sharing a
/// first turn, so a fingerprinted session; a branch from an edited
/// message) answer a call of the same reused id at the same position: a
/// Gemini call without an id (`name#0`), a client's `call_0`. The second
/// run's answer is a new result, for its own call; each run's resends are
/// duplicates; in one batch as across batches.
pub async fn another_run_answering_a_reused_id_at_the_same_position_counts(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let weather = "get_weather#0";
    // As the gateway reads them: no call of the id follows the result.
    let result =
        |req: &str, s: &str, id: &str, i: u32, tool: Option<&str>, failed: bool, at: i64| {
            let mut r = result(req, s, id, i, tool, failed, at);
            r.latest_of_its_id = true;
            r
        };
    let run = |req: &str, at, failed| {
        [
            Event::ToolCall(call(
                &format!("{req}-call"),
                "s",
                0,
                weather,
                "get_weather",
                at,
            )),
            Event::ToolResult(result(
                req,
                "s",
                weather,
                2,
                Some("get_weather"),
                failed,
                at + 100,
            )),
            // The run's next turn resends its answer.
            Event::ToolResult(result(
                &format!("{req}-next"),
                "s",
                weather,
                2,
                Some("get_weather"),
                failed,
                at + 200,
            )),
        ]
    };
    record_all(&store, &run("a", 1000, false)).await;
    let (counters, seen) = record_all(&store, &run("b", 2000, true)).await;
    assert_eq!(seen.results.lock().unwrap().len(), 1, "{counters:?}");
    // A resend of run a's answer after run b: nothing open, a duplicate.
    record_all(
        &store,
        &[Event::ToolResult(result(
            "a-late",
            "s",
            weather,
            2,
            Some("get_weather"),
            false,
            3000,
        ))],
    )
    .await;
    // `call_0`, both runs in one batch.
    let batch: Vec<Event> = [(3100, false), (3400, true)]
        .into_iter()
        .enumerate()
        .flat_map(|(n, (at, failed))| {
            let req = format!("r{n}");
            [
                Event::ToolCall(call(&format!("{req}-call"), "s", 0, "call_0", "bash", at)),
                Event::ToolResult(result(
                    &req,
                    "s",
                    "call_0",
                    3,
                    Some("bash"),
                    failed,
                    at + 100,
                )),
                Event::ToolResult(result(
                    &format!("{req}-next"),
                    "s",
                    "call_0",
                    3,
                    Some("bash"),
                    failed,
                    at + 150,
                )),
            ]
        })
        .collect();
    record_one_batch(&store, &batch).await;
    // A unique id is never answered again at its position.
    let long = "call_Qm4x8ZtR2pLw9Vb1";
    record_all(
        &store,
        &[
            Event::ToolCall(call("l1", "s", 0, long, "book", 5000)),
            Event::ToolResult(result("l2", "s", long, 5, Some("book"), false, 5100)),
            Event::ToolCall(call("l3", "s", 0, long, "book", 5200)),
            Event::ToolResult(result("l4", "s", long, 5, Some("book"), false, 5300)),
        ],
    )
    .await;
    let stats = store.stats(&all()).await.unwrap();
    let expected: BTreeMap<&str, (u64, u64)> =
        [("get_weather", (2, 1)), ("bash", (2, 1)), ("book", (2, 0))]
            .into_iter()
            .collect();
    assert_eq!(calls_and_failures(&stats), expected);
    let calls = store.session_calls("s").await.unwrap();
    let open: Vec<_> = calls
        .iter()
        .filter(|c| c.result_at_ms.is_none())
        .map(|c| (c.call_id.as_str(), c.at_ms))
        .collect();
    assert_eq!(
        open,
        [(long, 5200)],
        "every run's call answered but the unique id's second"
    );
}

/// Two runs of one conversation interleaved in one session, both calling
/// `call_0` at the same position: run a answers its call, run b's call
/// (other arguments: another turn fingerprint) is made, then run a resends
/// its answer (a retry) while b's call is open, then b answers. The resend
/// names the turn it replays (a's), and b's call is of another turn: it is
/// a duplicate, and b's own answer counts for b's call, with its verdict.
/// Runs whose turns are alike cannot be told apart: a resend while such a
/// call is open is taken for its answer (the documented limit).
pub async fn interleaved_runs_of_a_reused_id_are_told_apart_by_their_turns(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let (turn_a, turn_b) = (0x0a0a, 0x0b0b);
    let run_call = |req: &str, turn: i64, at: i64| {
        let mut c = call(req, "s", 0, "call_0", "lookup", at);
        c.turn = Some(turn);
        Event::ToolCall(c)
    };
    let answer = |req: &str, turn: i64, failed: bool, at: i64| {
        let mut r = result(req, "s", "call_0", 2, Some("lookup"), failed, at);
        r.latest_of_its_id = true;
        r.answers = Some(TurnRef {
            turn,
            call_index: 0,
        });
        Event::ToolResult(r)
    };
    record_all(
        &store,
        &[
            run_call("a-call", turn_a, 1000),
            answer("a-answer", turn_a, false, 1100),
        ],
    )
    .await;
    record_all(&store, &[run_call("b-call", turn_b, 2000)]).await;
    let (_, seen) = record_all(&store, &[answer("a-retry", turn_a, false, 2100)]).await;
    assert!(
        seen.results.lock().unwrap().is_empty(),
        "run a's resend is not run b's answer"
    );
    let (_, seen) = record_all(&store, &[answer("b-answer", turn_b, true, 2200)]).await;
    assert_eq!(
        seen.results.lock().unwrap().len(),
        1,
        "run b's answer counts"
    );
    let verdicts = |calls: Vec<toolwarden_store::CallRow>| -> Vec<(Option<String>, Option<bool>)> {
        calls
            .into_iter()
            .map(|c| (c.request_id, c.failed))
            .collect()
    };
    assert_eq!(
        verdicts(store.session_calls("s").await.unwrap()),
        [
            (Some("a-call".into()), Some(false)),
            (Some("b-call".into()), Some(true))
        ]
    );
    // A third run with run a's very turn: its call open, run a's resend is
    // taken for its answer.
    record_all(&store, &[run_call("c-call", turn_a, 3000)]).await;
    let (_, seen) = record_all(&store, &[answer("a-again", turn_a, false, 3100)]).await;
    assert_eq!(
        seen.results.lock().unwrap().len(),
        1,
        "alike turns: one answer"
    );
    let stats = store.stats(&all()).await.unwrap();
    let expected: BTreeMap<&str, (u64, u64)> = [("lookup", (3, 1))].into_iter().collect();
    assert_eq!(calls_and_failures(&stats), expected);
}

/// The reports name rows without a model `unknown`, and a model filter of
/// `unknown` finds them, in a window and without one.
pub async fn a_model_filter_of_unknown_finds_rows_without_a_model(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let mut anonymous = call("r1", "s", 0, "call_1", "read", 1000);
    anonymous.model = None;
    let Event::Request(mut req) = request("r1", "s", 1000) else {
        unreachable!()
    };
    req.model = None;
    record_all(
        &store,
        &[
            Event::Request(req),
            Event::ToolCall(anonymous),
            Event::ToolCall(call("r2", "s", 0, "call_2", "write", 2000)),
        ],
    )
    .await;
    for since_ms in [None, Some(500), Some(1500)] {
        let stats = store
            .stats(&StatsQuery {
                model: Some("unknown".into()),
                since_ms,
                ..all()
            })
            .await
            .unwrap();
        let want = u64::from(since_ms.is_none_or(|s| s <= 1000));
        let calls: u64 = stats.tools.iter().map(|t| t.calls).sum();
        assert_eq!((calls, stats.requests.total), (want, want), "{since_ms:?}");
        assert!(
            stats.tools.iter().all(|t| t.tool == "read"),
            "{:?}",
            stats.tools
        );
    }
}

/// Tool names are chosen by clients and models: a report lists at most
/// [`TOOL_ROWS`] tools and (model, tool) pairs, the failing ones first,
/// its timeline only for those, and its totals still count every call.
pub async fn tool_lists_are_bounded(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    let (s, t0) = ("many-tools", 1_700_000_000_000);
    let n = TOOL_ROWS + 5;
    let mut events = vec![request("r1", s, t0)];
    for i in 0..n {
        let (id, tool) = (format!("c{i}"), format!("mcp__gen__tool{i:04}"));
        events.push(Event::ToolCall(call("r1", s, i as u32, &id, &tool, t0)));
    }
    // The last tool is the only one that fails: listed first all the same.
    let last = format!("mcp__gen__tool{:04}", n - 1);
    let id = format!("c{}", n - 1);
    events.push(request("r2", s, t0 + 1));
    events.push(Event::ToolResult(result(
        "r2",
        s,
        &id,
        1,
        Some(&last),
        true,
        t0 + 1,
    )));
    record_all(&store, &events).await;

    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(stats.tools.len(), TOOL_ROWS);
    assert_eq!(stats.models.len(), TOOL_ROWS);
    assert_eq!(stats.tools[0].tool, last);
    assert_eq!(stats.models[0].tool, last);
    assert_eq!(
        stats.totals,
        CallTotals {
            calls: n as u64,
            failures: 1,
            tools: n as u64,
            model_tools: n as u64,
        }
    );
    let listed: std::collections::BTreeSet<&str> =
        stats.tools.iter().map(|t| t.tool.as_str()).collect();
    let charted: std::collections::BTreeSet<&str> =
        stats.timeline.iter().map(|p| p.tool.as_str()).collect();
    assert_eq!(charted, listed);

    // A tool filter still finds a tool beyond the first TOOL_ROWS.
    let first = "mcp__gen__tool0000".to_owned();
    let one = store
        .stats(&StatsQuery {
            tool: Some(first.clone()),
            ..all()
        })
        .await
        .unwrap();
    assert_eq!(one.tools.len(), 1);
    assert_eq!(one.totals.tools, 1);
    assert_eq!(one.timeline.len(), 1);

    // `tool_rows` sets the bound (the gateway's `dashboard_tool_rows`),
    // above the default as below it; the totals count every tool.
    for rows in [3, n] {
        let some = store
            .stats(&StatsQuery {
                tool_rows: rows,
                ..all()
            })
            .await
            .unwrap();
        assert_eq!((some.tools.len(), some.models.len()), (rows, rows));
        assert_eq!(some.tools[0].tool, last);
        assert_eq!(some.totals.tools, n as u64);
    }
}

/// A session that repeats one call turn, its client rewriting the call
/// ids (so each result finds its call through the turn it replays): each
/// result takes the newest turn's call, however many identical turns came
/// before (`turns::FIND_CALL_BY_TURN` reads the newest few only).
pub async fn a_repeated_call_turn_pairs_each_result_with_its_own_call(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    const TURN: i64 = 9191;
    const TURNS: i64 = 40;
    for k in 0..TURNS {
        let at = 10_000 * (k + 1);
        let mut list = call(
            &format!("t{k}"),
            "g",
            0,
            "list_directory#0",
            "list_directory",
            at,
        );
        list.turn = Some(TURN);
        let mut answer = result(
            &format!("t{}", k + 1),
            "g",
            &format!("rewritten-{k}"),
            u32::try_from(2 * k + 2).unwrap(),
            None,
            k % 4 == 0,
            at + 5_000,
        );
        answer.answers = Some(TurnRef {
            turn: TURN,
            call_index: 0,
        });
        record_all(&store, &[Event::ToolCall(list), Event::ToolResult(answer)]).await;
    }
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(
        calls_and_failures(&stats),
        BTreeMap::from([("list_directory", (40, 10))])
    );
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE result_at_ms IS NULL"
        )
        .await,
        0
    );
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE result_at_ms - call_at_ms = 5000"
        )
        .await,
        TURNS,
        "each result paired with the call of its own turn"
    );
}

/// A result under a rewritten id (its call holds another), paired through
/// the turn it replays, then resent at another position: a duplicate, the
/// call at its place in the turn holding the same answer and the session a
/// result of its id (`turns::ANSWERED_IN_TURN`). Not so the first answer
/// of a repeated turn, its call not written yet, whose earlier twin holds
/// the same answer: no result of its id came before; its late call
/// completes its row.
pub async fn a_rewritten_answer_resent_counts_once_and_a_twins_first_answer_counts(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    const TURN: i64 = 7171;
    const POLL: i64 = 7272;
    let turn = TurnRef {
        turn: TURN,
        call_index: 0,
    };
    let mut read = call("q1", "g", 0, "read_file#0", "read_file", 10_000);
    read.turn = Some(TURN);
    let id = "read_file_1795610246552_0";
    let mut answer = result("q2", "g", id, 2, None, true, 15_000);
    answer.answers = Some(turn);
    let mut resent = result("q3", "g", id, 0, None, true, 16_000);
    resent.answers = Some(turn);
    record_all(&store, &[Event::ToolCall(read), Event::ToolResult(answer)]).await;
    record_all(&store, &[Event::ToolResult(resent)]).await;
    // The same poll every turn, answered alike; the second answer comes
    // before its call is written.
    let poll = TurnRef {
        turn: POLL,
        call_index: 0,
    };
    let mut first = call("p1", "g", 0, "call_poll_000001", "poll", 20_000);
    first.turn = Some(POLL);
    let mut first_answer = result("p2", "g", "call_poll_000001", 4, None, false, 21_000);
    first_answer.answers = Some(poll);
    record_all(
        &store,
        &[Event::ToolCall(first), Event::ToolResult(first_answer)],
    )
    .await;
    let mut twin_answer = result(
        "p4",
        "g",
        "call_poll_000002",
        6,
        Some("poll"),
        false,
        31_000,
    );
    twin_answer.answers = Some(poll);
    record_all(&store, &[Event::ToolResult(twin_answer)]).await;
    let mut twin = call("p3", "g", 0, "call_poll_000002", "poll", 30_000);
    twin.turn = Some(POLL);
    record_all(&store, &[Event::ToolCall(twin)]).await;
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(
        calls_and_failures(&stats),
        BTreeMap::from([("poll", (2, 0)), ("read_file", (1, 1))])
    );
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE result_at_ms IS NULL OR request_id IS NULL"
        )
        .await,
        0,
        "each call has its one result"
    );
}

/// A client that compressed its history (the Gemini CLI's chat
/// compression) answers in a new fingerprint session the calls its old
/// session made, under ids it invented: each result takes the open call at
/// its place in the newest turn with its fingerprint in another session
/// (`turns::FIND_CALL_BY_TURN_ELSEWHERE`) — here across an hour's edge.
/// Not so a result whose session recorded something before it, nor one
/// whose call is more than an hour old: those stay results of their own.
/// Two runs of one script at once: each answer takes the newest open call,
/// so each call is answered once (a run may get the other's verdict).
pub async fn a_compressed_history_answers_the_old_sessions_calls(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    const TURN: i64 = 6161;
    const HOUR: i64 = 3_600_000;
    let at = |k: usize| TurnRef {
        turn: TURN,
        call_index: u32::try_from(k).unwrap(),
    };
    // The old session's last turn: two calls, an hour's edge before the answers.
    let mut calls = Vec::new();
    for (k, tool) in ["read_file", "run_shell_command"].iter().enumerate() {
        let mut c = call(
            "old-3",
            "old",
            u32::try_from(k).unwrap(),
            &format!("{tool}#0"),
            tool,
            2 * HOUR - 1_000,
        );
        c.turn = Some(TURN);
        calls.push(Event::ToolCall(c));
    }
    record_all(&store, &calls).await;
    // The compressed history's first request, in a session of its own.
    let answers: Vec<Event> = ["read_file", "run_shell_command"]
        .iter()
        .enumerate()
        .map(|(k, tool)| {
            let id = format!("{tool}_1795610246552_{k}");
            let mut r = result(
                "new-1",
                "fp-new",
                &id,
                4,
                Some(tool),
                k == 1,
                2 * HOUR + 2_000,
            );
            r.answers = Some(at(k));
            Event::ToolResult(r)
        })
        .collect();
    record_all(&store, &answers).await;
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(
        calls_and_failures(&stats),
        BTreeMap::from([("read_file", (1, 0)), ("run_shell_command", (1, 1))])
    );
    let unanswered =
        "SELECT count(*) FROM tool_calls WHERE result_at_ms IS NULL OR request_id IS NULL";
    assert_eq!(
        query_i64(&db.url, unanswered).await,
        0,
        "each call has its one result"
    );
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM tool_calls WHERE exec_ms = 3000"
        )
        .await,
        2
    );

    // Not a session's first: a session that recorded a row before.
    let mut open = call("o-1", "open", 0, "list#0", "list", 10 * HOUR);
    open.turn = Some(TURN + 1);
    let before = result(
        "b-1",
        "fp-busy",
        "list_x_000000001",
        2,
        Some("list"),
        false,
        10 * HOUR - 9,
    );
    record_all(&store, &[Event::ToolCall(open), Event::ToolResult(before)]).await;
    let mut late = result(
        "b-2",
        "fp-busy",
        "list_1795610246999_0",
        4,
        Some("list"),
        false,
        10 * HOUR + 5,
    );
    late.answers = Some(TurnRef {
        turn: TURN + 1,
        call_index: 0,
    });
    // A first answer whose call is more than an hour old.
    let mut stale = call("s-1", "stale", 0, "grep#0", "grep", 20 * HOUR);
    stale.turn = Some(TURN + 2);
    let mut old_answer = result(
        "f-1",
        "fp-fresh",
        "grep_1795610246999_0",
        4,
        Some("grep"),
        false,
        21 * HOUR + 1,
    );
    old_answer.answers = Some(TurnRef {
        turn: TURN + 2,
        call_index: 0,
    });
    record_all(&store, &[Event::ToolResult(late), Event::ToolCall(stale)]).await;
    record_all(&store, &[Event::ToolResult(old_answer)]).await;
    // A named session (its name does not change when its client compresses),
    // and a call with the provider's id (another id than the result's: its
    // own call may not be written yet), both of a turn with an open call.
    let mut named_turn = call("n-1", "named-old", 0, "ls#0", "ls", 40 * HOUR);
    named_turn.turn = Some(TURN + 4);
    let mut named = result(
        "n-2",
        "named-new",
        "ls_1795610246999_0",
        4,
        Some("ls"),
        false,
        40 * HOUR + 9,
    );
    named.answers = Some(TurnRef {
        turn: TURN + 4,
        call_index: 0,
    });
    let mut provider_turn = call("p-1", "fp-other", 0, "call_8Yk2provider", "cat", 50 * HOUR);
    provider_turn.turn = Some(TURN + 5);
    let mut provider = result(
        "p-2",
        "fp-mine",
        "call_Zq9mprovider",
        4,
        Some("cat"),
        false,
        50 * HOUR + 9,
    );
    provider.answers = Some(TurnRef {
        turn: TURN + 5,
        call_index: 0,
    });
    record_all(
        &store,
        &[Event::ToolCall(named_turn), Event::ToolCall(provider_turn)],
    )
    .await;
    record_all(
        &store,
        &[Event::ToolResult(named), Event::ToolResult(provider)],
    )
    .await;
    let orphans = "SELECT count(*) FROM tool_calls WHERE request_id IS NULL";
    assert_eq!(
        query_i64(&db.url, orphans).await,
        5,
        "the five results are rows of their own"
    );
    let open = "SELECT count(*) FROM tool_calls WHERE result_at_ms IS NULL";
    assert_eq!(
        query_i64(&db.url, open).await,
        4,
        "the four calls stay open"
    );

    // Two runs of one script, both compressing: each call answered once.
    let mut runs = Vec::new();
    for (n, session) in ["run-a", "run-b"].iter().enumerate() {
        let mut c = call(
            &format!("{session}-1"),
            session,
            0,
            "echo#0",
            "echo",
            30 * HOUR + i64::try_from(n).unwrap(),
        );
        c.turn = Some(TURN + 3);
        runs.push(Event::ToolCall(c));
    }
    record_all(&store, &runs).await;
    for (n, session) in ["fp-run-a2", "fp-run-b2"].iter().enumerate() {
        let mut r = result(
            &format!("{session}-1"),
            session,
            &format!("echo_179561024700{n}_0"),
            4,
            Some("echo"),
            false,
            30 * HOUR + 500,
        );
        r.answers = Some(TurnRef {
            turn: TURN + 3,
            call_index: 0,
        });
        record_all(&store, &[Event::ToolResult(r)]).await;
    }
    let echo = "SELECT count(*) FROM tool_calls WHERE tool = 'echo'";
    assert_eq!(query_i64(&db.url, echo).await, 2);
    assert_eq!(
        query_i64(&db.url, "SELECT count(*) FROM tool_calls WHERE tool = 'echo' AND result_at_ms IS NOT NULL AND request_id IS NOT NULL").await,
        2,
        "each run's call answered once"
    );
}

/// A fork of a conversation cut after it sent its results (the model's
/// answer to them never came): the fork (Claude Code's `--fork-session`,
/// `codex exec fork`) replays the transcript under a new session id, its
/// first request carrying those results as new. Each is counted once, in
/// the parent, where its call was answered; the fork's own results count
/// in the fork; a fork's result of the same id with another answer, and
/// a result of the same first turn that replays another turn, count too.
pub async fn a_forks_resent_answer_counts_once_in_its_parent(db: TestDb) {
    let store = Store::open(&db.url).await.unwrap();
    const FIRST: i64 = -7_311_942_155_036_113_201;
    const TURN: i64 = 4343;
    let id = "toolu_01ParentCallAbCdEf";
    let forked = |req: &str, session: &str, call_id: &str, failed, at, turn| {
        let mut r = result(req, session, call_id, 3, Some("Read"), failed, at);
        r.answers = Some(TurnRef {
            turn,
            call_index: 0,
        });
        r.first_turn = Some(FIRST);
        Event::ToolResult(r)
    };
    // The parent: a request and its call (its session numbered by them,
    // with no first turn yet), then the result, then the cut.
    let mut parent_call = call("p1", "parent", 0, id, "Read", 1_000);
    parent_call.turn = Some(TURN);
    record_all(
        &store,
        &[request("p1", "parent", 900), Event::ToolCall(parent_call)],
    )
    .await;
    let (_, seen) = record_all(&store, &[forked("p2", "parent", id, false, 2_000, TURN)]).await;
    assert_eq!(seen.results.lock().unwrap().len(), 1, "the parent's answer");

    // The fork's first request: the parent's result as new, then its own
    // call and that call's answer.
    let mut own = call("f1", "fork", 0, "toolu_01ForkOwnCallGhIjKl", "Edit", 3_100);
    own.turn = Some(TURN + 1);
    let (_, seen) = record_all(
        &store,
        &[
            forked("f1", "fork", id, false, 3_000, TURN),
            Event::ToolCall(own),
            forked(
                "f2",
                "fork",
                "toolu_01ForkOwnCallGhIjKl",
                true,
                4_000,
                TURN + 1,
            ),
        ],
    )
    .await;
    assert_eq!(
        *seen.results.lock().unwrap(),
        [("toolu_01ForkOwnCallGhIjKl".to_owned(), "Edit".to_owned())],
        "the resend is no new result; the fork's own is"
    );
    // A second fork whose copy of the result differs (another answer),
    // and a third whose result replays another turn: both count.
    let (_, seen) = record_all(
        &store,
        &[
            forked("g1", "fork2", id, true, 5_000, TURN),
            forked("h1", "fork3", id, false, 5_000, TURN + 9),
        ],
    )
    .await;
    assert_eq!(
        seen.results.lock().unwrap().len(),
        2,
        "not the parent's answer"
    );

    let view = |rows: &[CallRow]| -> Vec<(Option<String>, Option<bool>)> {
        rows.iter()
            .map(|c| (c.request_id.clone(), c.failed))
            .collect()
    };
    let parent = store.session_calls("parent").await.unwrap();
    assert_eq!(view(&parent), [(Some("p1".into()), Some(false))]);
    let fork = store.session_calls("fork").await.unwrap();
    assert_eq!(
        view(&fork),
        [(Some("f1".into()), Some(true))],
        "its own call only"
    );
    let stats = store.stats(&all()).await.unwrap();
    assert_eq!(
        (stats.totals.calls, stats.totals.failures),
        (4, 2),
        "the parent's, the fork's own, the two other answers"
    );
    store.close().await;
}

/// A database made before sessions had a first turn (migration 0022 not
/// applied, its column and index not there) is migrated as it opens: its
/// sessions keep no first turn and are not probed, so a fork's resend of
/// one's answer counts again; a session that goes on after the upgrade
/// takes its first turn from its next result, and a fork of it then
/// counts that result once.
pub async fn sessions_recorded_before_first_turns_are_not_probed(db: TestDb) {
    const FIRST: i64 = 77_001;
    let fork_result = |req: &str, session: &str, id: &str, turn: i64, at, first| {
        let mut r = result(req, session, id, 3, Some("Read"), false, at);
        r.answers = Some(TurnRef {
            turn,
            call_index: 0,
        });
        r.first_turn = first;
        Event::ToolResult(r)
    };
    let turn_call = |req: &str, id: &str, turn: i64, at| {
        let mut c = call(req, "old", 0, id, "Read", at);
        c.turn = Some(turn);
        Event::ToolCall(c)
    };
    let store = Store::open(&db.url).await.unwrap();
    // An older gateway's events: no first turn.
    let (a, b) = ("toolu_01OldParentCallAbCd", "toolu_01OldParentCallEfGh");
    record_all(
        &store,
        &[
            turn_call("o1", a, 11, 1_000),
            fork_result("o2", "old", a, 11, 2_000, None),
        ],
    )
    .await;
    store.close().await;
    execute(&db.url, "DROP INDEX sessions_by_first_turn").await;
    execute(&db.url, "ALTER TABLE sessions DROP COLUMN first_turn").await;
    execute(&db.url, "DELETE FROM schema_migrations WHERE version = 22").await;

    let store = Store::open(&db.url).await.unwrap();
    assert_eq!(
        query_i64(
            &db.url,
            "SELECT count(*) FROM sessions WHERE first_turn IS NULL"
        )
        .await,
        1
    );
    let (_, seen) = record_all(
        &store,
        &[fork_result("f1", "fork", a, 11, 3_000, Some(FIRST))],
    )
    .await;
    assert_eq!(
        seen.results.lock().unwrap().len(),
        1,
        "the old session is not probed"
    );
    // The old session goes on under this version; then a fork of it.
    record_all(
        &store,
        &[
            turn_call("o3", b, 12, 4_000),
            fork_result("o4", "old", b, 12, 5_000, Some(FIRST)),
        ],
    )
    .await;
    let (_, seen) = record_all(
        &store,
        &[fork_result("g1", "fork2", b, 12, 6_000, Some(FIRST))],
    )
    .await;
    assert!(
        seen.results.lock().unwrap().is_empty(),
        "counted in the parent"
    );
    store.close().await;
}
