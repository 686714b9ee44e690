//! A client retry that reaches both gateways at the same moment: the same
//! request (same session, same results) through A and B concurrently is
//! counted once.

use crate::convo::{Convo, Kind};

use super::cluster::{Cluster, TestDb};
use super::scenario::{OK_TEXT, failure_text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_request_on_both_gateways_counts_once() {
    let Some(mut db) = TestDb::postgres("same_request_on_both_gateways_counts_once").await else {
        return;
    };
    let mut cluster = Cluster::start(&db.url, 2).await;
    const ROUNDS: u64 = 5;
    for kind in Kind::ALL {
        let session = format!("race-{}", kind.dialect());
        let mut convo = Convo::new(kind, false, Some(&session));
        for round in 0..ROUNDS {
            if round > 0 {
                convo.user("Again, please.");
            }
            let r = convo
                .send(&cluster.client, &cluster.gw(round as usize))
                .await;
            assert_eq!(r.status, 200, "{}", r.text());
            let calls = convo.calls(&r);
            convo.assistant_calls(&calls);
            convo.results(&calls, &[(false, OK_TEXT), (true, failure_text(kind))]);
            // The retry: the very same bytes to both gateways at once.
            let (gw_a, gw_b) = (cluster.gw(0), cluster.gw(1));
            let (a, b) = tokio::join!(
                convo.send(&cluster.client, &gw_a),
                convo.send(&cluster.client, &gw_b)
            );
            assert_eq!((a.status.as_u16(), b.status.as_u16()), (200, 200));
            assert_eq!(a.body, b.body, "the mock answers the same bytes");
            convo.assistant_text("Done.");
        }
    }
    let (stats, store) = cluster.finish().await;
    let n = ROUNDS * Kind::ALL.len() as u64;
    let tool = |name: &str| {
        stats
            .tools
            .iter()
            .find(|t| t.tool == name)
            .map(|t| (t.calls, t.failures))
    };
    assert_eq!(tool("lookup"), Some((n, 0)), "{:?}", stats.tools);
    assert_eq!(tool("book"), Some((n, n)), "{:?}", stats.tools);
    assert_eq!(stats.tools.len(), 2, "{:?}", stats.tools);
    // Every request is recorded (they are distinct requests), every result once.
    assert_eq!(stats.requests.total, 3 * n);
    assert_eq!(stats.recent_failures.len() as u64, n);
    for kind in Kind::ALL {
        let calls = store
            .session_calls(&format!("race-{}", kind.dialect()))
            .await
            .expect("session calls");
        assert_eq!(calls.len() as u64, 2 * ROUNDS, "{kind:?}: {calls:?}");
        assert!(
            calls
                .iter()
                .all(|c| c.request_id.is_some() && c.failed.is_some()),
            "{kind:?}: {calls:?}"
        );
    }
    store.close().await;
    db.drop_schema().await;
}

/// A turn sent at once as a continuation to one gateway and as the whole
/// history to the other (a client retrying over another transport before
/// the first attempt's answer): each result is written by one gateway at
/// its own position, and counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_in_two_forms_on_both_gateways_counts_once() {
    use serde_json::{Value, json};
    let Some(mut db) = TestDb::postgres("a_turn_in_two_forms_on_both_gateways_counts_once").await
    else {
        return;
    };
    let mut cluster = Cluster::start(&db.url, 2).await;
    const ROUNDS: u64 = 6;
    let mut convo = Convo::new(Kind::Responses, false, Some("raced-forms"));
    convo.body["store"] = json!(true);
    for round in 0..ROUNDS {
        if round > 0 {
            convo.user("Again, please.");
        }
        let r = convo.send(&cluster.client, &cluster.gw(0)).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = convo.calls(&r);
        let id = crate::convo::response_id(false, &r);
        convo.assistant_calls(&calls);
        convo.results(
            &calls,
            &[(false, OK_TEXT), (true, failure_text(Kind::Responses))],
        );
        let input = convo.body["input"].as_array().cloned().unwrap_or_default();
        let outputs: Vec<Value> = input[input.len() - calls.len()..].to_vec();
        let continuation = json!({"model": convo.body["model"], "store": true,
            "tools": convo.body["tools"], "previous_response_id": id, "input": outputs});
        let whole = convo.body.clone();
        let (first, second) = if round % 2 == 0 {
            (continuation, whole)
        } else {
            (whole, continuation)
        };
        let headers = convo.headers();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let url = |i: usize| format!("{}{}", cluster.gw(i), Kind::Responses.path(false));
        let (a, b) = tokio::join!(
            crate::support::post(&cluster.client, url(0), &headers, &first),
            crate::support::post(&cluster.client, url(1), &headers, &second)
        );
        assert_eq!((a.status.as_u16(), b.status.as_u16()), (200, 200));
        convo.assistant_text("Done.");
    }
    let (stats, store) = cluster.finish().await;
    let failures: u64 = stats.tools.iter().map(|t| t.failures).sum();
    assert_eq!(failures, ROUNDS, "{:?}", stats.tools);
    let calls = store
        .session_calls("raced-forms")
        .await
        .expect("session calls");
    assert_eq!(calls.len() as u64, 2 * ROUNDS, "{calls:?}");
    assert!(calls.iter().all(|c| c.failed.is_some()), "{calls:?}");
    store.close().await;
    db.drop_schema().await;
}
