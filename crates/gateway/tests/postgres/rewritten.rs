//! The Gemini CLI's invented call ids across two gateways on one
//! PostgreSQL: the id-less calls are recorded by gateway A (as `name#n`),
//! the results come to gateway B under ids the client invented, in the
//! replayed model turn and the `functionResponse`s. B pairs each result
//! with its call through the replayed turn's fingerprint stored by A: one
//! row per call, with its verdict and execution time.

use bytes::Bytes;
use serde_json::{Value, json};
use toolwarden_mock_provider::Scripted;

use crate::convo::Kind;
use crate::support::post;

use super::cluster::{Cluster, TestDb};

const ROUNDS: u64 = 3;

fn reply(parts: Value) -> Scripted {
    let body = json!({"candidates": [{"content": {"role": "model", "parts": parts},
        "finishReason": "STOP", "index": 0}], "modelVersion": "gemini-2.0-flash"});
    Scripted::Json(Bytes::from(body.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invented_gemini_ids_meet_their_calls_across_gateways() {
    let Some(mut db) =
        TestDb::postgres("invented_gemini_ids_meet_their_calls_across_gateways").await
    else {
        return;
    };
    let mut cluster = Cluster::start(&db.url, 2).await;
    let auth = Kind::Gemini.auth();
    let headers: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let path = Kind::Gemini.path(false);
    let mut contents = vec![json!({"role": "user", "parts": [{"text": "Check the two files."}]})];
    for round in 0..ROUNDS {
        if round > 0 {
            contents.push(json!({"role": "user", "parts": [{"text": "Again."}]}));
        }
        let calls = [
            ("read_file", json!({"path": "missing.txt"})),
            ("run_shell", json!({"command": "ls", "dir": "."})),
        ];
        let parts: Vec<Value> = calls
            .iter()
            .map(|(name, args)| json!({"functionCall": {"name": name, "args": args}}))
            .collect();
        cluster.mock.push_response(reply(json!(parts)));
        let body = json!({"contents": contents});
        let r = post(
            &cluster.client,
            format!("{}{path}", cluster.gw(0)),
            &headers,
            &body,
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        // The client runs the tools meanwhile: A has recorded the calls.
        let want = 2 * (round + 1);
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
        let id = |k: usize| format!("{}_17956102465{round}2_{k}", calls[k].0);
        let replayed: Vec<Value> = (0..2)
            .map(|k| json!({"functionCall": {"id": id(k), "name": calls[k].0, "args": calls[k].1}}))
            .collect();
        contents.push(json!({"role": "model", "parts": replayed}));
        contents.push(json!({"role": "user", "parts": [
            {"functionResponse": {"id": id(1), "name": "run_shell", "response": {"output": "a.txt"}}},
            {"functionResponse": {"id": id(0), "name": "read_file",
                "response": {"error": "ENOENT: no such file"}}}]}));
        cluster
            .mock
            .push_response(reply(json!([{"text": "Done."}])));
        let body = json!({"contents": contents});
        let r = post(
            &cluster.client,
            format!("{}{path}", cluster.gw(1)),
            &headers,
            &body,
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        contents.push(json!({"role": "model", "parts": [{"text": "Done."}]}));
    }
    let (stats, store) = cluster.finish().await;
    let tools: Vec<(&str, u64, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls, t.failures))
        .collect();
    assert!(tools.contains(&("read_file", ROUNDS, ROUNDS)), "{tools:?}");
    assert!(tools.contains(&("run_shell", ROUNDS, 0)), "{tools:?}");
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert_eq!(stats.sessions.len(), 1, "{:?}", stats.sessions);
    let rows = store
        .session_calls(&stats.sessions[0].session_id)
        .await
        .unwrap();
    assert_eq!(rows.len() as u64, 2 * ROUNDS, "{rows:#?}");
    for row in &rows {
        assert!(row.request_id.is_some() && row.failed.is_some(), "{row:?}");
        assert!(row.exec_ms.is_some(), "{row:?}");
    }
    store.close().await;
    db.drop_schema().await;
}

/// The same results under invented ids, sent first to gateway B and then
/// to gateway A in a retry with the oldest turns cut (every position
/// moves): the call, recorded by A as `name#n`, holds the answer already,
/// so the resend counts nothing, whichever gateway gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invented_gemini_ids_resent_at_other_positions_count_once() {
    let Some(mut db) =
        TestDb::postgres("invented_gemini_ids_resent_at_other_positions_count_once").await
    else {
        return;
    };
    let mut cluster = Cluster::start(&db.url, 2).await;
    let mut auth = Kind::Gemini.auth();
    auth.push(("x-session-id", "invented-then-cut".to_string()));
    let headers: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = |i: usize| format!("{}{}", cluster.gw(i), Kind::Gemini.path(false));
    let mut contents = vec![
        json!({"role": "user", "parts": [{"text": "Hello."}]}),
        json!({"role": "model", "parts": [{"text": "Hello."}]}),
        json!({"role": "user", "parts": [{"text": "Check the file."}]}),
    ];
    let args = json!({"path": "missing.txt"});
    cluster.mock.push_response(reply(
        json!([{"functionCall": {"name": "read_file", "args": args}}]),
    ));
    let r = post(
        &cluster.client,
        url(0),
        &headers,
        &json!({"contents": contents}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    cluster
        .stats_when(|s| s["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .await;
    let id = "read_file_1795610246552_0";
    contents.push(json!({"role": "model", "parts": [
        {"functionCall": {"id": id, "name": "read_file", "args": args}}]}));
    contents.push(
        json!({"role": "user", "parts": [{"functionResponse": {"id": id,
        "name": "read_file", "response": {"error": "ENOENT: no such file"}}}]}),
    );
    for (gateway, from) in [(1, 0), (0, 2)] {
        cluster
            .mock
            .push_response(reply(json!([{"text": "Done."}])));
        let body = json!({"contents": contents[from..]});
        let r = post(&cluster.client, url(gateway), &headers, &body).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let (stats, store) = cluster.finish().await;
    let tools: Vec<(&str, u64, u64)> = stats
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.calls, t.failures))
        .collect();
    assert_eq!(tools, [("read_file", 1, 1)], "{:?}", stats.tools);
    let rows = store.session_calls("invented-then-cut").await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    store.close().await;
    db.drop_schema().await;
}
