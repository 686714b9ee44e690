//! A turn the model's output token limit cut (Anthropic and Bedrock
//! `max_tokens`, Chat `length`, Responses `incomplete` for
//! `max_output_tokens`, Gemini `MAX_TOKENS`): `step` and `step_stream`
//! say so (`StepResult::hit_token_limit`), run the calls written whole
//! before the cut, and answer the last call, whose arguments the limit
//! may have cut, with an error instead of running it.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolwarden_runtime::{Context, Dialect, Executor, StepResult, StopCut};

#[path = "support/cut_turns.rs"]
mod cut_turns;

use cut_turns::{CALLS, CUT, DIALECTS, TOKEN_LIMIT, WHOLE, body, executor, fed, sse, stream};

/// The step ran the whole call, and answered the last one, unrun, with an
/// error that tells the model why.
fn assert_last_call_answered_not_run(
    ex: &Executor,
    step: &StepResult,
    runs: &AtomicUsize,
    at: &str,
) {
    assert!(step.hit_token_limit(), "{at}");
    assert_eq!(step.cut, Some(StopCut::TokenLimit), "{at}");
    assert_eq!(step.calls.len(), 2, "{at}");
    assert_eq!(step.outcomes.len(), 2, "{at}");
    assert!(!step.messages.is_empty(), "{at}");
    assert!(
        step.outcomes[0].error.is_none(),
        "{at}: {:?}",
        step.outcomes[0]
    );
    let cut = step.outcomes[1]
        .error
        .as_ref()
        .expect("the cut call failed");
    assert_eq!(cut.code.as_deref(), Some("cut_by_token_limit"), "{at}");
    assert!(
        cut.model_message.contains("token limit"),
        "{at}: {}",
        cut.model_message
    );
    assert!(!cut.fatal && !cut.retryable, "{at}");
    assert_eq!(step.outcomes[1].attempts, 0, "{at}");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "{at}: only the whole call ran"
    );
    // The tool never saw the cut call: its metrics do not count it.
    let stats = ex.registry().stats_of("write").unwrap();
    assert_eq!((stats.calls, stats.failures), (1, 0), "{at}");
    assert!(step.fatal.is_none(), "{at}");
    // The cut call is answered in the next request, as every call is.
    let answers = step
        .messages
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    assert!(answers.contains("token limit"), "{at}: {answers}");
}

#[tokio::test]
async fn a_streamed_call_cut_by_the_token_limit_is_answered_not_run() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step_stream(stream(dialect, TOKEN_LIMIT), &Context::default())
            .await
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        assert_last_call_answered_not_run(&ex, &step, &runs, &format!("{dialect:?} stream"));
    }
}

/// A whole body's last call may look whole (the provider parsed what
/// the limit left, or gave `{}`): it is not run either.
#[tokio::test]
async fn a_whole_body_cut_by_the_token_limit_runs_only_its_whole_calls() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step(
                dialect,
                &body(dialect, "{}", TOKEN_LIMIT),
                &Context::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        assert_last_call_answered_not_run(&ex, &step, &runs, &format!("{dialect:?} body"));
    }
}

/// Without the limit the same calls all run, and the step says nothing of
/// a limit.
#[tokio::test]
async fn a_turn_the_limit_did_not_stop_runs_every_call() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step(dialect, &body(dialect, WHOLE, CALLS), &Context::default())
            .await
            .unwrap();
        assert!(!step.hit_token_limit(), "{dialect:?}");
        assert_eq!(step.cut, None, "{dialect:?}");
        assert!(
            step.outcomes.iter().all(|o| o.error.is_none()),
            "{dialect:?}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 2, "{dialect:?}");
    }
}

/// A text-only turn the limit cut is final (no call to answer), and says
/// it was cut: the application may ask the model to go on.
#[tokio::test]
async fn a_text_turn_cut_by_the_limit_is_final_and_flagged() {
    let (ex, _) = executor();
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "stop_reason": "max_tokens", "content": [{"type": "text", "text": "The answer is"}]});
    let step = ex
        .step(
            Dialect::Anthropic,
            body.to_string().as_bytes(),
            &Context::default(),
        )
        .await
        .unwrap();
    assert!(step.is_final());
    assert!(step.hit_token_limit());
}

/// A Responses function call item as the API writes it.
fn responses_item(i: usize, args: &str, status: &str) -> Value {
    json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"),
        "name": "write", "arguments": args, "status": status})
}

/// A Responses turn the limit stopped after its last call was written:
/// the API marks that item `completed`, and the call runs, in a body and
/// in a stream (its `output_item.done`).
#[tokio::test]
async fn a_responses_call_the_provider_marks_completed_runs_despite_the_limit() {
    let body = json!({"id": "resp_1", "object": "response", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [responses_item(0, WHOLE, "completed"), responses_item(1, WHOLE, "completed"),
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete",
             "content": [{"type": "output_text", "text": "Both fil"}]}]});
    let item_event = |kind: &'static str, i: usize, args: &str, status: &str| {
        (
            kind,
            json!({"type": kind, "output_index": i, "item": responses_item(i, args, status)}),
        )
    };
    let events = [
        item_event("response.output_item.added", 0, "", "in_progress"),
        item_event("response.output_item.done", 0, WHOLE, "completed"),
        item_event("response.output_item.added", 1, "", "in_progress"),
        (
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                "output_index": 1, "delta": WHOLE}),
        ),
        (
            "response.function_call_arguments.done",
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
                "output_index": 1, "arguments": WHOLE}),
        ),
        item_event("response.output_item.done", 1, WHOLE, "completed"),
        (
            "response.incomplete",
            json!({"type": "response.incomplete", "response": body}),
        ),
    ];
    let (ex, runs) = executor();
    let whole = ex
        .step(
            Dialect::OpenAiResponses,
            body.to_string().as_bytes(),
            &Context::default(),
        )
        .await
        .unwrap();
    let streamed = ex
        .step_stream(
            fed(Dialect::OpenAiResponses, &sse(&events)),
            &Context::default(),
        )
        .await
        .unwrap();
    for (step, at) in [(whole, "body"), (streamed, "stream")] {
        assert!(step.hit_token_limit(), "{at}");
        assert!(step.response.last_call_completed, "{at}");
        assert!(
            step.outcomes.iter().all(|o| o.error.is_none()),
            "{at}: {:?}",
            step.outcomes
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 4, "both calls ran, twice");
}

/// A Responses call whose arguments were closed (`.done`) but whose item
/// the API marks `incomplete` is not run: only the item's status says the
/// call is whole.
#[tokio::test]
async fn a_responses_call_marked_incomplete_is_not_run_though_its_arguments_closed() {
    let events = [
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0,
                "item": responses_item(0, WHOLE, "completed")}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 1,
                "item": responses_item(1, "", "in_progress")}),
        ),
        (
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                "output_index": 1, "delta": CUT}),
        ),
        (
            "response.function_call_arguments.done",
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
                "output_index": 1, "arguments": CUT}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 1,
                "item": responses_item(1, CUT, "incomplete")}),
        ),
        (
            "response.incomplete",
            json!({"type": "response.incomplete", "response": {"id": "resp_1",
                "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}}),
        ),
    ];
    let (ex, runs) = executor();
    let step = ex
        .step_stream(
            fed(Dialect::OpenAiResponses, &sse(&events)),
            &Context::default(),
        )
        .await
        .unwrap();
    assert_last_call_answered_not_run(&ex, &step, &runs, "Responses stream, item incomplete");
}
