//! A turn the provider stopped for another reason than the token limit
//! (a content filter, Anthropic's refusal, a Bedrock guardrail, a call it
//! could not read, another stop it names): `step` and `step_stream` say
//! why (`StepResult::cut`) and run none of its calls, each answered with
//! an error that says why. Stops that are not cuts run every call.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolwarden_runtime::{Context, Dialect, ErrorKind, Executor, StepResult, StopCut};

#[path = "support/cut_turns.rs"]
mod cut_turns;

use cut_turns::{CALLS, DIALECTS, FILTERED, Stop, WHOLE, body, executor, stream};

/// What `FILTERED` is in each dialect.
fn filtered(dialect: Dialect) -> StopCut {
    match dialect {
        Dialect::Anthropic => StopCut::Refusal,
        Dialect::BedrockConverse => StopCut::Guardrail,
        _ => StopCut::ContentFilter,
    }
}

/// No call ran, the tool saw none, and each is answered, unrun, with
/// `code`, of `kind`.
fn assert_none_ran(
    ex: &Executor,
    step: &StepResult,
    runs: &AtomicUsize,
    (kind, code): (ErrorKind, &str),
    at: &str,
) {
    assert_eq!(runs.load(Ordering::SeqCst), 0, "{at}: no call ran");
    assert!(!step.hit_token_limit(), "{at}");
    assert_eq!(step.calls.len(), 2, "{at}");
    assert_eq!(step.outcomes.len(), 2, "{at}");
    for outcome in &step.outcomes {
        let error = outcome
            .error
            .as_ref()
            .expect("every call is answered with an error");
        assert_eq!(error.code.as_deref(), Some(code), "{at}");
        assert_eq!(error.kind, kind, "{at}");
        assert!(!error.fatal && !error.retryable, "{at}");
        assert_eq!(outcome.attempts, 0, "{at}");
        assert!(
            error.model_message.contains("none of"),
            "{at}: {}",
            error.model_message
        );
    }
    assert!(step.fatal.is_none(), "{at}");
    let stats = ex.registry().stats_of("write").unwrap();
    assert_eq!((stats.calls, stats.failures), (0, 0), "{at}");
    // Both calls are answered in the next request.
    assert!(!step.messages.is_empty(), "{at}");
    let answers = step
        .messages
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    assert_eq!(answers.matches("none of").count(), 2, "{at}: {answers}");
}

/// The code a kind of cut answers its calls with.
fn failure(cut: StopCut) -> (ErrorKind, &'static str) {
    match cut {
        StopCut::ContentFilter => (ErrorKind::Cancelled, "stopped_by_content_filter"),
        StopCut::Refusal => (ErrorKind::Cancelled, "refused"),
        StopCut::Guardrail => (ErrorKind::Cancelled, "stopped_by_guardrail"),
        StopCut::MalformedCall => (ErrorKind::InvalidArguments, "malformed_call"),
        _ => (ErrorKind::Cancelled, "stopped_early"),
    }
}

#[tokio::test]
async fn a_filtered_turn_runs_none_of_its_calls() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step(
                dialect,
                &body(dialect, WHOLE, FILTERED),
                &Context::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        let cut = filtered(dialect);
        assert_eq!(step.cut, Some(cut), "{dialect:?} body");
        assert_none_ran(
            &ex,
            &step,
            &runs,
            failure(cut),
            &format!("{dialect:?} body"),
        );
    }
}

#[tokio::test]
async fn a_filtered_stream_runs_none_of_its_calls() {
    for dialect in DIALECTS {
        let (ex, runs) = executor();
        let step = ex
            .step_stream(stream(dialect, FILTERED), &Context::default())
            .await
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        let cut = filtered(dialect);
        assert_eq!(step.cut, Some(cut), "{dialect:?} stream");
        assert_none_ran(
            &ex,
            &step,
            &runs,
            failure(cut),
            &format!("{dialect:?} stream"),
        );
    }
}

/// Every documented stop of Gemini and Bedrock that is not the token
/// limit runs none of the turn's calls, with its own code.
#[tokio::test]
async fn each_gemini_and_bedrock_stop_runs_as_documented() {
    let gemini = [
        ("RECITATION", StopCut::ContentFilter),
        ("BLOCKLIST", StopCut::ContentFilter),
        ("PROHIBITED_CONTENT", StopCut::ContentFilter),
        ("SPII", StopCut::ContentFilter),
        ("MODEL_ARMOR", StopCut::Guardrail),
        ("MALFORMED_FUNCTION_CALL", StopCut::MalformedCall),
        ("UNEXPECTED_TOOL_CALL", StopCut::MalformedCall),
        ("OTHER", StopCut::Other),
        ("TOO_MANY_TOOL_CALLS", StopCut::Other),
    ];
    let bedrock = [
        ("content_filtered", StopCut::ContentFilter),
        ("malformed_tool_use", StopCut::MalformedCall),
        ("malformed_model_output", StopCut::MalformedCall),
    ];
    let turns = (gemini
        .iter()
        .map(|&(r, cut)| (Dialect::Gemini, Stop { gemini: r, ..CALLS }, cut)))
    .chain(bedrock.iter().map(|&(r, cut)| {
        (
            Dialect::BedrockConverse,
            Stop {
                bedrock: r,
                ..CALLS
            },
            cut,
        )
    }));
    for (dialect, stop, cut) in turns {
        let (ex, runs) = executor();
        let step = ex
            .step(dialect, &body(dialect, WHOLE, stop), &Context::default())
            .await
            .unwrap();
        let at = format!("{dialect:?} {stop:?}");
        assert_eq!(step.cut, Some(cut), "{at}");
        assert_none_ran(&ex, &step, &runs, failure(cut), &at);
    }
}

/// Stops that are not cuts (a stop sequence, a Responses turn steered to a
/// safe boundary) run every call, as before.
#[tokio::test]
async fn stops_that_are_not_cuts_run_every_call() {
    for (dialect, stop) in [
        (
            Dialect::Anthropic,
            Stop {
                anthropic: "stop_sequence",
                ..CALLS
            },
        ),
        (
            Dialect::OpenAiChat,
            Stop {
                chat: "stop",
                ..CALLS
            },
        ),
        (
            Dialect::OpenAiResponses,
            Stop {
                responses: Some("steered"),
                ..CALLS
            },
        ),
        (
            Dialect::BedrockConverse,
            Stop {
                bedrock: "end_turn",
                ..CALLS
            },
        ),
        (
            Dialect::Gemini,
            Stop {
                gemini: "FINISH_REASON_UNSPECIFIED",
                ..CALLS
            },
        ),
    ] {
        let (ex, runs) = executor();
        let step = ex
            .step(dialect, &body(dialect, WHOLE, stop), &Context::default())
            .await
            .unwrap();
        assert_eq!(step.cut, None, "{dialect:?}");
        assert!(
            step.outcomes.iter().all(|o| o.error.is_none()),
            "{dialect:?}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 2, "{dialect:?}");
    }
}

/// A turn without calls that a filter stopped, or whose call Gemini could
/// not read (it leaves the call out), is final, but says it was cut: its
/// text is not the model's answer.
#[tokio::test]
async fn a_cut_turn_without_calls_is_final_and_says_why() {
    let (ex, _) = executor();
    let turns = [
        (
            Dialect::Gemini,
            json!({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL",
                "content": {"role": "model", "parts": []}}]}),
            StopCut::MalformedCall,
        ),
        (
            Dialect::Anthropic,
            json!({"id": "msg_1", "type": "message", "role": "assistant",
                "stop_reason": "refusal", "content": [{"type": "text", "text": "Hello.."}]}),
            StopCut::Refusal,
        ),
        (
            Dialect::OpenAiChat,
            json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0,
                "finish_reason": "content_filter", "message": {"role": "assistant", "content": null}}]}),
            StopCut::ContentFilter,
        ),
    ];
    for (dialect, body, cut) in turns {
        let step = ex
            .step(dialect, body.to_string().as_bytes(), &Context::default())
            .await
            .unwrap();
        assert!(step.is_final(), "{dialect:?}");
        assert_eq!(step.cut, Some(cut), "{dialect:?}");
        assert!(step.messages.is_empty(), "{dialect:?}");
    }
}
