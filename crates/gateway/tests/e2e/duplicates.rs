//! One request body holding the same tool output twice, over HTTP: the
//! Responses route (the pairing and view WebSocket turns use too) and
//! Chat Completions. The API refuses the second output for one call
//! (Responses: "Duplicate item found with id …"; Chat: "Invalid
//! parameter: Duplicate value for 'tool_call_id' …"): `fix` mode takes it
//! out, `report` mode forwards the body as it came and records the defect;
//! either way the call's result counts once. Before, a Responses
//! continuation's second copy went upstream in `fix` mode and was no
//! defect in `report` mode, and a whole history's (Responses or Chat) was
//! counted as a second result, of a call the store made up for it.

use serde_json::{Value, json};
use toolwarden_gateway::RepairMode;

use super::{
    convo::{Convo, Kind},
    support::post,
    twice::{AUTH, Layout, answer, check_counted_once, harness, tools, user},
};

#[tokio::test]
async fn a_responses_body_holding_an_output_twice_counts_it_once() {
    for mode in [RepairMode::Fix, RepairMode::Report] {
        for layout in [Layout::Continued, Layout::Whole] {
            let mut h = harness(mode).await;
            let url = format!("{}/v1/responses", h.gw());
            let headers = [AUTH, ("session_id", "twice")];
            let body = json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")]});
            let reply = post(&h.client, url.clone(), &headers, &body).await;
            assert_eq!(reply.status, 200, "{}", reply.text());
            let v: Value = serde_json::from_slice(&reply.body).unwrap();
            let calls: Vec<(String, String)> = (v["output"].as_array().unwrap().iter())
                .filter(|i| i["type"] == "function_call")
                .map(|i| {
                    let s = |k: &str| i[k].as_str().unwrap().to_string();
                    (s("call_id"), s("name"))
                })
                .collect();
            assert_eq!(calls.len(), 2, "{v}");
            let id = v["id"].as_str().unwrap();
            let reply = post(&h.client, url, &headers, &answer(layout, &calls, id)).await;
            let want = if mode == RepairMode::Fix { 200 } else { 400 };
            assert_eq!(reply.status, want, "{mode:?} {layout:?}: {}", reply.text());
            if mode == RepairMode::Report {
                let text = reply.text();
                let duplicate = format!("Duplicate item found with id {}.", calls[0].0);
                assert!(text.contains(&duplicate), "{text}");
            }
            check_counted_once(&mut h, mode, &format!("{mode:?} {layout:?}")).await;
        }
    }
}

#[tokio::test]
async fn a_chat_body_answering_a_call_twice_counts_it_once() {
    for mode in [RepairMode::Fix, RepairMode::Report] {
        let mut h = harness(mode).await;
        let mut convo = Convo::new(Kind::Chat, false, Some("twice"));
        let reply = convo.send(&h.client, &h.gw()).await;
        let calls = convo.calls(&reply);
        assert_eq!(calls.len(), 2, "{}", reply.text());
        convo.assistant_calls(&calls);
        let book_failed = "Error: seat 12A is no longer available for flight TP123";
        convo.results(
            &calls,
            &[(false, "Flight TP123 found"), (true, book_failed)],
        );
        // The first call answered once more, as a client that ran it again.
        convo.results(
            &calls[..1],
            &[(false, "Flight TP123 found (checked again)")],
        );
        let reply = convo.send(&h.client, &h.gw()).await;
        let want = if mode == RepairMode::Fix { 200 } else { 400 };
        assert_eq!(reply.status, want, "{mode:?}: {}", reply.text());
        if mode == RepairMode::Report {
            let text = reply.text();
            assert!(
                text.contains("Invalid parameter: Duplicate value for 'tool_call_id'"),
                "{text}"
            );
        }
        check_counted_once(&mut h, mode, &format!("chat {mode:?}")).await;
    }
}
