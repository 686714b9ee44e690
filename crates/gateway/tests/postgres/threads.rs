//! An Anthropic message thread across two gateways sharing PostgreSQL: each
//! round, the reply that makes the calls passes through one, the
//! `continue` carrying their results (its only messages) through the
//! other, which never saw that reply. The other finds the reply's session in the database
//! through the calls it made: one session, each call once with its result.

use serde_json::{Value, json};

use crate::convo::{Kind, message_id, reply_calls};
use crate::support::post;

use super::cluster::{Cluster, TestDb};

const ROUNDS: u64 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_through_another_gateway_joins_the_threads_session() {
    for stream in [false, true] {
        let Some(mut db) =
            TestDb::postgres("a_continue_through_another_gateway_joins_the_threads_session").await
        else {
            return;
        };
        let mut cluster = Cluster::start(&db.url, 2).await;
        let mut headers = Kind::Anthropic.auth();
        headers.push(("content-type", "application/json".to_string()));
        headers.push(("anthropic-beta", "message-threads-2026-08-12".to_string()));
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut previous: Option<String> = None;
        for round in 0..ROUNDS {
            // The question through the gateway that made the last reply
            // (a text reply makes no calls: only its gateway can name its
            // session)…
            let (ask, answer) = (round as usize % 2, (round as usize + 1) % 2);
            let user = json!([{"role": "user", "content": format!("Trip {round}, please.")}]);
            let mut body = json!({"model": "claude-sonnet-4-5", "max_tokens": 256,
                "stream": stream, "messages": user});
            body["thread"] = match &previous {
                None => json!({"type": "create"}),
                Some(id) => json!({"type": "continue", "previous_message_id": id}),
            };
            if previous.is_none() {
                body["tools"] = json!([{"name": "lookup", "input_schema": {"type": "object"}},
                    {"name": "book", "input_schema": {"type": "object"}}]);
            }
            let url = |i: usize| format!("{}/v1/messages", cluster.gw(i));
            let r = post(&cluster.client, url(ask), &headers, &body).await;
            assert_eq!(r.status, 200, "{}", r.text());
            let calls = reply_calls(Kind::Anthropic, stream, &r.body);
            assert_eq!(calls.len(), 2, "{}", r.text());
            let id = message_id(stream, &r.body);
            // …its calls in the database (the other looks them up there)…
            let want = 2 * (round + 1);
            cluster
                .stats_when(|s| {
                    let calls = s["tools"].as_array().map_or(0, |t| {
                        t.iter()
                            .map(|t| t["calls"].as_u64().unwrap_or(0))
                            .sum::<u64>()
                    });
                    calls >= want
                })
                .await;
            // …and the answers, alone, through the other gateway.
            let results: Vec<Value> = calls
                .iter()
                .zip([
                    (false, "Found it."),
                    (true, "seat 12A is no longer available"),
                ])
                .map(|(c, (failed, text))| {
                    json!({"type": "tool_result", "tool_use_id": c.id, "is_error": failed,
                        "content": text})
                })
                .collect();
            let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 256, "stream": stream,
                "thread": {"type": "continue", "previous_message_id": id},
                "messages": [{"role": "user", "content": results}]});
            let r = post(&cluster.client, url(answer), &headers, &body).await;
            assert_eq!(r.status, 200, "{}", r.text());
            previous = Some(message_id(stream, &r.body));
        }
        let (stats, store) = cluster.finish().await;
        let what = format!("stream={stream}");
        assert_eq!(stats.sessions.len(), 1, "{what}: {:?}", stats.sessions);
        let s = &stats.sessions[0];
        assert_eq!((s.calls, s.failures), (2 * ROUNDS, ROUNDS), "{what}");
        assert_eq!(stats.requests.total, 2 * ROUNDS, "{what}");
        assert!(stats.repairs.is_empty(), "{what}: {:?}", stats.repairs);
        store.close().await;
        db.drop_schema().await;
    }
}
