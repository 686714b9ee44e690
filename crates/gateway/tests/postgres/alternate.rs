//! Two gateways on one PostgreSQL, a client alternating between them: every
//! call and result counted exactly once, failures with their basis, tool
//! names and execution times resolved across instances, the same answers
//! from both gateways' `/api/stats` — and the same answers from SQLite
//! with a single gateway.

use toolwarden_store::{Stats, Store};

use super::cluster::{Cluster, TestDb};
use super::scenario::{self, Expected, ROUNDS, TOOL_MS};

/// Whether `stats` holds exactly what the scenario produced.
fn check(stats: &Stats, e: &Expected, what: &str) {
    let n = ROUNDS * e.conversations;
    let tool = |name: &str| {
        stats
            .tools
            .iter()
            .find(|t| t.tool == name)
            .map(|t| (t.calls, t.failures))
            .unwrap_or_else(|| panic!("{what}: no row for {name} in {:?}", stats.tools))
    };
    assert_eq!(tool("lookup"), (n, 0), "{what}: {:?}", stats.tools);
    assert_eq!(tool("book"), (n, n), "{what}: {:?}", stats.tools);
    assert_eq!(
        stats.tools.len(),
        2,
        "{what}: only lookup and book (no `unknown`): {:?}",
        stats.tools
    );
    assert_eq!(stats.requests.total, e.requests, "{what}");
    assert_eq!(stats.requests.errors, 0, "{what}");
    assert_eq!(stats.requests.streaming, e.streaming, "{what}");
    assert!(stats.repairs.is_empty(), "{what}: {:?}", stats.repairs);
    assert_eq!(
        stats.recent_failures.len() as u64,
        n,
        "{what}: {:?}",
        stats.recent_failures
    );
    assert!(
        stats.recent_failures.iter().all(|f| f.tool == "book"),
        "{what}: {:?}",
        stats.recent_failures
    );
    for (session, basis) in &e.sessions {
        let row = stats
            .sessions
            .iter()
            .find(|s| &s.session_id == session)
            .unwrap_or_else(|| panic!("{what}: no session {session} in {:?}", stats.sessions));
        assert_eq!(
            (row.calls, row.failures),
            (2 * ROUNDS, ROUNDS),
            "{what}: {session}"
        );
        let failures: Vec<_> = stats
            .recent_failures
            .iter()
            .filter(|f| &f.session_id == session)
            .collect();
        assert_eq!(failures.len() as u64, ROUNDS, "{what}: {session}");
        for f in failures {
            assert_eq!(&f.basis, basis, "{what}: {session}: {f:?}");
        }
    }
}

/// Every call of the named sessions has its result and an execution time
/// that saw the client's tool time.
async fn check_calls(store: &Store, e: &Expected, what: &str) {
    for (session, basis) in &e.sessions {
        let calls = store.session_calls(session).await.expect("session calls");
        assert_eq!(
            calls.len() as u64,
            2 * ROUNDS,
            "{what}: {session}: {calls:?}"
        );
        for c in &calls {
            assert!(c.request_id.is_some(), "{what}: call recorded: {c:?}");
            let exec = c
                .exec_ms
                .unwrap_or_else(|| panic!("{what}: no execution time: {c:?}"));
            assert!(
                exec >= (TOOL_MS - 5) as f64 && exec < 10_000.0,
                "{what}: execution time {exec} ms for a {TOOL_MS} ms tool: {c:?}"
            );
            match c.tool.as_str() {
                "lookup" => assert_eq!(c.failed, Some(false), "{what}: {c:?}"),
                "book" => {
                    assert_eq!(c.failed, Some(true), "{what}: {c:?}");
                    assert_eq!(c.basis.as_deref(), Some(*basis), "{what}: {c:?}");
                }
                other => panic!("{what}: tool {other:?}: {c:?}"),
            }
        }
    }
}

/// The stats without wall-clock times, in a stable order.
fn normalized(s: &Stats) -> Stats {
    let mut s = s.clone();
    s.timeline.clear();
    // The conversation without a session header groups by fingerprint and
    // by the responses it continues: behind two alternating gateways a
    // continuation may reach the other one before the response it names is
    // in the database (sent at once, within the flush interval), and then
    // starts a session of its own. Its counts must agree as one.
    const FP: &str = "fingerprinted";
    let mut merged: Option<toolwarden_store::SessionRow> = None;
    s.sessions.retain(|x| {
        if !x.session_id.starts_with("fp-") {
            return true;
        }
        let m = merged.get_or_insert_with(|| toolwarden_store::SessionRow {
            session_id: FP.into(),
            calls: 0,
            failures: 0,
            first_ms: 0,
            last_ms: 0,
        });
        m.calls += x.calls;
        m.failures += x.failures;
        false
    });
    s.sessions.extend(merged);
    for x in &mut s.sessions {
        x.first_ms = 0;
        x.last_ms = 0;
    }
    s.sessions.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    for f in &mut s.recent_failures {
        f.at_ms = 0;
        if f.session_id.starts_with("fp-") {
            f.session_id = FP.into();
        }
    }
    s.recent_failures
        .sort_by(|a, b| (&a.session_id, &a.call_id).cmp(&(&b.session_id, &b.call_id)));
    s
}

/// Run the scenario on `db` through `gateways` gateways; check `/api/stats`
/// on each (the same answer from all), the store after shutdown, and the
/// calls of each named session.
async fn run_on(db: &TestDb, gateways: usize, tag: &str) -> Stats {
    let what = format!("{tag} ({gateways} gateways)");
    let mut cluster = Cluster::start(&db.url, gateways).await;
    let expected = scenario::run(&cluster, tag).await;
    let total = 2 * ROUNDS * expected.conversations;
    let answers = cluster
        .stats_when(|v| {
            // Each part of the answer is its own query: wait until all of
            // them have seen every write.
            let sum = |key: &str| -> u64 {
                v["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t[key].as_u64())
                    .sum()
            };
            let results_in = v["recent_failures"].as_array().map_or(0, Vec::len) as u64;
            sum("calls") == total
                && sum("failures") == total / 2
                && results_in == total / 2
                && v["requests"]["total"] == expected.requests
        })
        .await;
    let first: Stats = serde_json::from_value(answers[0].clone()).expect("/api/stats shape");
    for (i, a) in answers.iter().enumerate() {
        let s: Stats = serde_json::from_value(a.clone()).expect("/api/stats shape");
        check(&s, &expected, &format!("{what}: /api/stats of gateway {i}"));
        assert_eq!(
            normalized(&s),
            normalized(&first),
            "{what}: gateway {i} answers like gateway 0"
        );
        for (session, _) in &expected.sessions {
            let calls = cluster.api_session(i, session).await;
            assert_eq!(calls.len() as u64, 2 * ROUNDS, "{what}: {session}");
        }
    }
    let (stats, store) = cluster.finish().await;
    check(&stats, &expected, &format!("{what}: Store::stats"));
    check_calls(&store, &expected, &what).await;
    assert_eq!(
        store.backend(),
        if db.url.starts_with("sqlite") {
            "sqlite"
        } else {
            "postgres"
        }
    );
    store.close().await;
    stats
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_alternating_count_exactly_and_agree_with_sqlite() {
    let sqlite = TestDb::sqlite();
    let on_sqlite = run_on(&sqlite, 1, "alt").await;
    let Some(mut pg) =
        TestDb::postgres("two_gateways_alternating_count_exactly_and_agree_with_sqlite").await
    else {
        return;
    };
    let on_pg = run_on(&pg, 2, "alt").await;
    pg.drop_schema().await;
    assert_eq!(
        normalized(&on_pg),
        normalized(&on_sqlite),
        "PostgreSQL (two gateways) and SQLite (one) give the same stats"
    );
}
