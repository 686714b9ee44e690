//! One message holding the same output twice. The API refuses a second
//! output for one call ("Duplicate item found with id …"): `fix` mode
//! takes it out, `report` mode forwards the message as it came and
//! records the defect; either way the call's result is counted once.
//! Before, a continuation's second copy went on in `fix` mode (the API
//! refused the turn) and no defect was recorded in `report` mode; a whole
//! history's was counted as a second result, and the store made a call
//! of it.

use serde_json::{Value, json};
use toolwarden_gateway::RepairMode;

use super::client::{calls_of, connect, turn};
use crate::e2e::twice::{AUTH, Layout, answer, check_counted_once, harness, tools, user};

/// Over a WebSocket, both layouts: in `fix` mode the second copy is taken
/// out and the mock (as the API) takes the message; in `report` mode it
/// goes as it came and the mock refuses it. Either way two calls, two
/// results, one failure, one `duplicate_call_id` repair recorded.
#[tokio::test]
async fn an_output_sent_twice_in_one_message_counts_once() {
    for mode in [RepairMode::Fix, RepairMode::Report] {
        for layout in [Layout::Continued, Layout::Whole] {
            let mut h = harness(mode).await;
            let mut ws = connect(&h.gw(), &[AUTH, ("session_id", "twice")], false).await;
            let body = json!({"model": "gpt-5", "tools": tools(), "input": [user("Book TP123")]});
            let (calls, id) = calls_of(&turn(&mut ws, &body).await);
            assert_eq!(calls.len(), 2);
            let events = turn(&mut ws, &answer(layout, &calls, &id)).await;
            let last: Value = serde_json::from_slice(events.last().unwrap()).unwrap();
            let refused = last["type"] == "error";
            assert_eq!(
                refused,
                mode == RepairMode::Report,
                "{mode:?} {layout:?}: {last}"
            );
            if refused {
                let message = last["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.starts_with(&format!("Duplicate item found with id {}.", calls[0].0)),
                    "{message}"
                );
            }
            drop(ws);
            check_counted_once(&mut h, mode, &format!("{mode:?} {layout:?}")).await;
        }
    }
}
