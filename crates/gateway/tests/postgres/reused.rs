//! Two runs of one Gemini script (no session header: one fingerprint
//! session; id-less calls: `lookup#0` in both) on two gateways sharing
//! PostgreSQL. The first run's call and answer pass gateway B; the second
//! run's call passes A and its answer B, whose newest call of that id is
//! the first run's (the first run's next turn, whose calls are newer, went
//! through A): B took the second answer for the first one resent and kept
//! it from the store. Each answer counts, each run's resend does not.

use crate::convo::{Convo, Kind};

use super::cluster::{Cluster, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_id_answered_in_another_run_through_another_gateway_counts() {
    let Some(mut db) =
        TestDb::postgres("a_reused_id_answered_in_another_run_through_another_gateway_counts")
            .await
    else {
        return;
    };
    let mut cluster = Cluster::start(&db.url, 2).await;
    // (gateway of the call, outcome): the answers all go through B.
    for (call_via, outcome) in [
        (1, (false, "sunny, 21C")),
        (0, (true, "weather service unavailable")),
    ] {
        let mut convo = Convo::new(Kind::Gemini, false, None);
        let r = convo.send(&cluster.client, &cluster.gw(call_via)).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = convo.calls(&r);
        assert!(!calls.is_empty(), "{}", r.text());
        // The call is in the database before its answer comes.
        let want = calls.len() as u64;
        cluster
            .stats_when(|s| {
                s["tools"].as_array().is_some_and(|tools| {
                    tools
                        .iter()
                        .map(|t| t["calls"].as_u64().unwrap_or(0))
                        .sum::<u64>()
                        >= want
                })
            })
            .await;
        let outcomes = vec![outcome; calls.len()];
        convo.assistant_calls(&calls);
        convo.results(&calls, &outcomes);
        let r = convo.send(&cluster.client, &cluster.gw(1)).await;
        assert_eq!(r.status, 200, "{}", r.text());
        convo.assistant_text("Done.");
        // The run's next turn resends its answers (through A: its calls are
        // not B's newest of their ids).
        convo.user("And tomorrow?");
        let r = convo.send(&cluster.client, &cluster.gw(0)).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let (stats, store) = cluster.finish().await;
    // The second run's two answers failed.
    let failures: u64 = stats.tools.iter().map(|t| t.failures).sum();
    assert_eq!(failures, 2, "{:?}", stats.tools);
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let rows = store
        .session_calls(&stats.sessions[0].session_id)
        .await
        .expect("session calls");
    let answered: Vec<Option<bool>> = rows.iter().map(|r| r.failed).collect();
    // Two answered calls per run (the mock calls two tools a reply), the
    // first run's succeeded, the second's failed; the calls of each run's
    // last turn are open.
    let count = |v: Option<bool>| answered.iter().filter(|a| **a == v).count();
    assert_eq!((count(Some(false)), count(Some(true))), (2, 2), "{rows:#?}");
    assert_eq!(stats.sessions[0].failures, 2, "{:?}", stats.sessions);
    store.close().await;
    db.drop_schema().await;
}
