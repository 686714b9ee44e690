//! Responses continuations, the result's request sent to the other gateway
//! as soon as the call arrives, and the call's gateway slower to write (its
//! database behind a slow relay): every result is written before its call,
//! and the late call must still complete the result's row —
//! one row per call, the tool's name, an execution time — although the
//! result's request fingerprints to another session than the call's.

use serde_json::json;

use crate::convo::{Kind, reply_calls, response_id};
use crate::support::post;

use super::cluster::{Cluster, TestDb};
use super::slow::{Slow, addr_of, with_addr};

const ROUNDS: u64 = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuation_result_written_before_its_call_is_merged() {
    // With `x-session-id` first (the orphan is found in its session), then
    // without: the result's request fingerprints to another session.
    for (stream, session) in [(false, Some("cont-1")), (false, None), (true, None)] {
        let Some(mut db) =
            TestDb::postgres("continuation_result_written_before_its_call_is_merged").await
        else {
            return;
        };
        continuations(&db, stream, session).await;
        db.drop_schema().await;
    }
}

async fn continuations(db: &TestDb, stream: bool, session: Option<&str>) {
    // Gateway A (the calls) reaches PostgreSQL through a slow relay, so its
    // writes land after B's (the results): every result comes first.
    let slow = Slow::start(addr_of(&db.url)).await;
    let urls = [with_addr(&db.url, slow.addr), db.url.clone()];
    let mut cluster = Cluster::start_each(&urls, &db.url).await;
    slow.set_delay(80);
    let mut headers = Kind::Responses.auth();
    headers.push(("content-type", "application/json".to_string()));
    if let Some(s) = session {
        headers.push(("x-session-id", s.to_string()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let tools = json!([{"type": "function", "name": "lookup", "parameters": {"type": "object"}},
        {"type": "function", "name": "book", "parameters": {"type": "object"}}]);
    let mut previous: Option<String> = None;
    for round in 0..ROUNDS {
        // Calls through A…
        let mut body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "input": [{"role": "user", "content": format!("Trip {round}, please.")}]});
        if let Some(p) = &previous {
            body["previous_response_id"] = json!(p);
        }
        if stream {
            body["stream"] = json!(true);
        }
        let r = post(
            &cluster.client,
            format!("{}/v1/responses", cluster.gw(0)),
            &headers,
            &body,
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        let calls = reply_calls(Kind::Responses, stream, &r.body);
        assert_eq!(calls.len(), 2, "{}", r.text());
        let id = response_id(stream, &r);
        // …results through B at once.
        let items: Vec<_> = calls
            .iter()
            .zip(["Found it.", "Error: seat 12A is no longer available"])
            .map(|(c, out)| json!({"type": "function_call_output", "call_id": c.id, "output": out}))
            .collect();
        let mut body = json!({"model": "gpt-4.1", "store": true, "tools": tools,
            "previous_response_id": id, "input": items});
        if stream {
            body["stream"] = json!(true);
        }
        let r = post(
            &cluster.client,
            format!("{}/v1/responses", cluster.gw(1)),
            &headers,
            &body,
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        previous = Some(response_id(stream, &r));
    }
    let (stats, store) = cluster.finish().await;
    let tool = |name: &str| {
        stats
            .tools
            .iter()
            .find(|t| t.tool == name)
            .map(|t| (t.calls, t.failures))
    };
    assert_eq!(
        (tool("lookup"), tool("book"), tool("unknown")),
        (Some((ROUNDS, 0)), Some((ROUNDS, ROUNDS)), None),
        "stream={stream} session={session:?}: one row per call, each with its result and tool name: {:?}",
        stats.tools
    );
    store.close().await;
}
