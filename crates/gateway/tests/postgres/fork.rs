//! A fork of a conversation cut after it sent its results (the model's
//! answer never came), through the other gateway: Claude Code's `-c
//! --fork-session` (a new `x-claude-code-session-id`) and `codex exec
//! fork` (a new `session_id`) replay the transcript, whose results after
//! the last model turn are new in the fork. Each is counted once, in the
//! parent where its call was answered (`e2e/forks.rs` on SQLite).

use toolwarden_mock_provider::Fault;

use crate::convo::{Convo, Kind};

use super::cluster::{Cluster, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_through_another_gateway_counts_the_parents_results_once() {
    for (kind, header) in [
        (Kind::Anthropic, "x-claude-code-session-id"),
        (Kind::Responses, "session_id"),
    ] {
        let Some(mut db) =
            TestDb::postgres("a_fork_through_another_gateway_counts_the_parents_results_once")
                .await
        else {
            return;
        };
        let mut cluster = Cluster::start(&db.url, 2).await;
        let mut parent = Convo::new(kind, true, None);
        parent.extra_headers = vec![(header, "parent-0001".to_string())];
        let r = parent.send(&cluster.client, &cluster.gw(0)).await;
        assert_eq!(r.status, 200, "{kind:?}: {}", r.text());
        let calls = parent.calls(&r);
        assert_eq!(calls.len(), 2, "{kind:?}: {}", r.text());
        parent.assistant_calls(&calls);
        parent.results(
            &calls,
            &[(false, "Flight TP123 found"), (true, "Error: timeout")],
        );
        cluster.mock.set_fault(Fault::Status(
            500,
            r#"{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}"#
                .into(),
        ));
        let r = parent.send(&cluster.client, &cluster.gw(0)).await;
        assert_ne!(r.status, 200, "{kind:?}: {}", r.text());
        cluster.mock.set_fault(Fault::None);
        cluster
            .stats_when(|s| s["totals"]["failures"].as_u64() == Some(1))
            .await;
        let mut fork = parent.clone();
        fork.extra_headers = vec![(header, "fork-0002".to_string())];
        fork.user("Go on.");
        let r = fork.send(&cluster.client, &cluster.gw(1)).await;
        assert_eq!(r.status, 200, "{kind:?}: {}", r.text());
        let (stats, store) = cluster.finish().await;
        assert_eq!(
            (stats.totals.calls, stats.totals.failures),
            (4, 1),
            "{kind:?}: the parent's two calls, answered once; the fork's two"
        );
        let parent = store.session_calls("parent-0001").await.unwrap();
        let fork = store.session_calls("fork-0002").await.unwrap();
        let view = |rows: &[toolwarden_store::CallRow]| -> Vec<(bool, Option<bool>)> {
            rows.iter()
                .map(|c| (c.request_id.is_some(), c.failed))
                .collect()
        };
        assert_eq!(
            view(&parent),
            [(true, Some(false)), (true, Some(true))],
            "{kind:?}"
        );
        assert_eq!(
            view(&fork),
            [(true, None), (true, None)],
            "{kind:?}: its own calls, open"
        );
        store.close().await;
        db.drop_schema().await;
    }
}
