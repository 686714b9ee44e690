//! A conversation continued as a session of its own: Claude Code's
//! `--resume`/`--continue` with `--fork-session` (a new
//! `x-claude-code-session-id`, the parent's history with its `toolu_`
//! ids replayed as it was), the Codex CLI's `codex exec fork ID PROMPT`
//! (0.171.0: a new conversation id in `session_id`, the history with its
//! `call_` ids replayed as it was). Both observed through the gateway, the
//! parent cut by a 502 after its tool ran. The replayed
//! results count once, in the parent's session; the fork's own results
//! count in the fork's. A parent cut after it sent its results (the
//! model's answer to them never came) leaves them after its last model
//! turn, so the fork's first request sends them as new: the store finds
//! them answered in the parent, by the conversation's first turn, and
//! they count once (README, "Another run of the same conversation").

use toolwarden_mock_provider::{Fault, MockOptions};

use super::{
    convo::{Convo, Kind},
    support::{Harness, metric, tool_counts},
};

/// A parent of one tool round and a fork of it answering one more call,
/// failed, in each dialect with the header its client names sessions by.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forks_replayed_results_count_once_and_its_own_count_in_the_fork() {
    for (kind, header) in [
        (Kind::Anthropic, "x-claude-code-session-id"),
        (Kind::Responses, "session_id"),
    ] {
        let mut h = Harness::with(MockOptions::default(), |_| {}).await;
        let mut parent = Convo::new(kind, true, None);
        parent.extra_headers = vec![(header, "parent-0001".to_string())];
        parent
            .tool_round(&h.client, &h.gw(), &[(false, "Flight TP123 found")])
            .await;
        let mut fork = parent.clone();
        fork.extra_headers = vec![(header, "fork-0002".to_string())];
        fork.user("Book the second flight instead.");
        fork.tool_round(
            &h.client,
            &h.gw(),
            &[(true, "Error: the booking service is unavailable")],
        )
        .await;
        let m = h
            .metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 2.0)
            .await;
        assert_eq!(tool_counts(&m, &[]), (2.0, 2.0, 1.0), "{kind:?}: {m}");
        h.finish().await;
        assert_eq!(
            calls_of(&h, "parent-0001").await,
            [(true, Some(false))],
            "{kind:?}: the parent's call, answered"
        );
        assert_eq!(
            calls_of(&h, "fork-0002").await,
            [(true, Some(true))],
            "{kind:?}: the fork's own call, answered, failed"
        );
    }
}

/// A parent run sent its results and the model's answer failed (Claude
/// Code: an overloaded API, the run ends there, the transcript holding the
/// results after the last model turn, which `claude -c --fork-session`
/// sends as it is; `codex exec fork` does the same with its rollout after
/// a 5xx); the fork's first request carries those results as new, in a
/// session that never saw their calls. They count once, in the parent
/// where their calls were answered (the store finds them there by the
/// conversation's first turn): in the database, in `/metrics` and in the
/// JSONL log. The fork's own call counts in the fork.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_of_a_run_cut_after_its_results_counts_them_once() {
    for (kind, header, fault) in [
        (
            Kind::Anthropic,
            "x-claude-code-session-id",
            Fault::Status(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                    .into(),
            ),
        ),
        (
            Kind::Responses,
            "session_id",
            Fault::Status(
                500,
                r#"{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}"#
                    .into(),
            ),
        ),
    ] {
        let mut h = Harness::with(MockOptions::default(), |_| {}).await;
        let mut parent = Convo::new(kind, true, None);
        parent.extra_headers = vec![(header, "parent-0001".to_string())];
        let r = parent.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{kind:?}: {}", r.text());
        let calls = parent.calls(&r);
        parent.assistant_calls(&calls);
        parent.results(&calls, &[(false, "Flight TP123 found")]);
        h.mock.set_fault(fault);
        let r = parent.send(&h.client, &h.gw()).await;
        assert_ne!(r.status, 200, "{kind:?}: {}", r.text());
        h.mock.set_fault(Fault::None);
        h.metrics_when(|m| metric(m, "toolwarden_tool_results_total", &[]) >= 1.0)
            .await;
        let mut fork = parent.clone();
        fork.extra_headers = vec![(header, "fork-0002".to_string())];
        fork.user("Go on.");
        let r = fork.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{kind:?}: {}", r.text());
        // The fork's results are queued before its response's calls.
        let m = h
            .metrics_when(|m| metric(m, "toolwarden_tool_calls_total", &[]) >= 2.0)
            .await;
        assert_eq!(
            (
                metric(&m, "toolwarden_tool_calls_total", &[]),
                metric(&m, "toolwarden_tool_results_total", &[]),
            ),
            (2.0, 1.0),
            "{kind:?}: the parent's call and the fork's, the parent's result once: {m}"
        );
        let stats = h.finish().await;
        assert_eq!(stats.totals.calls, 2, "{kind:?}: {:?}", stats.totals);
        let logged = h
            .events()
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .count();
        assert_eq!(logged, 1, "{kind:?}: one result in the JSONL log");
        assert_eq!(
            calls_of(&h, "parent-0001").await,
            [(true, Some(false))],
            "{kind:?}"
        );
        assert_eq!(
            calls_of(&h, "fork-0002").await,
            [(true, None)],
            "{kind:?}: the fork's own call, open; no row for the resend"
        );
    }
}

/// A session's calls as (made in a response the gateway saw, failed).
async fn calls_of(h: &Harness, session: &str) -> Vec<(bool, Option<bool>)> {
    let store = toolwarden_store::Store::open(&h.db_url).await.unwrap();
    let rows = store.session_calls(session).await.unwrap();
    rows.iter()
        .map(|c| (c.request_id.is_some(), c.failed))
        .collect()
}
