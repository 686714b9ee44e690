//! [`StopCut`]: why a model's turn stopped before the model ended it, read
//! from each dialect's own stop reason. A leaf, so that
//! [`crate::ResponseView`] can name it.
//!
//! Only the reasons the providers document are cuts. A stop reason not
//! listed here (a natural end, a tool call, a stop sequence, Anthropic's
//! `pause_turn`, a reason an OpenAI-compatible server made up) is not one:
//! the turn is taken as the model wrote it, as before.

use serde::Serialize;

use crate::Dialect;

/// Why the provider stopped the model's output before the model ended its
/// turn ([`ResponseView::stop_cut`](crate::ResponseView::stop_cut)). What a
/// cut means for the turn's calls:
///
/// - [`TokenLimit`](Self::TokenLimit): the output stopped where the limit
///   fell. The calls before the last were written whole; the last may have
///   only part of its arguments.
/// - every other kind: a filter, a refusal, a guardrail or the provider's
///   own check stopped the turn, or the provider could not read the model's
///   calls. It judged the turn as a whole, and may have withheld some of
///   it: no call of such a turn should run
///   ([`runs_whole_calls`](Self::runs_whole_calls) is `false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopCut {
    /// The output token limit (or the context window): Anthropic and
    /// Bedrock `max_tokens` and `model_context_window_exceeded`, Chat
    /// `length`, Responses `incomplete` for `max_output_tokens`, Gemini
    /// `MAX_TOKENS` and `CONTINUATION`.
    TokenLimit,
    /// The provider's content or safety filter stopped the output, and
    /// may have left part of it out ("content was omitted due to a flag
    /// from our content filters"): Chat `content_filter`, Responses
    /// `incomplete` for `content_filter`, Bedrock `content_filtered`,
    /// Gemini `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`,
    /// `SPII`, `IMAGE_SAFETY`, `IMAGE_PROHIBITED_CONTENT`,
    /// `IMAGE_RECITATION`, `ESCALATION`, `PUP_LIMITED_DISABLED` (and a
    /// blocked prompt's `blockReason` of those names: no turn at all).
    ContentFilter,
    /// The model's safety classifiers stopped it: Anthropic `refusal`.
    /// Anthropic asks that the turn be removed or rephrased before the
    /// conversation goes on.
    Refusal,
    /// A guardrail the operator set up intervened: Bedrock
    /// `guardrail_intervened` (the guardrail may have replaced the
    /// output), Vertex AI `MODEL_ARMOR`.
    Guardrail,
    /// The provider could not take the model's call(s) as written: Gemini
    /// `MALFORMED_FUNCTION_CALL` (not parseable), `UNEXPECTED_TOOL_CALL`
    /// (a tool that was not offered), `MALFORMED_RESPONSE`; Bedrock
    /// `malformed_tool_use`, `malformed_model_output`.
    MalformedCall,
    /// The provider stopped the output for another reason it names:
    /// Gemini `OTHER`, `LANGUAGE`, `TOO_MANY_TOOL_CALLS`,
    /// `MISSING_THOUGHT_SIGNATURE`, `IMAGE_OTHER`, `NO_IMAGE`.
    Other,
}

// === impl StopCut ===

impl StopCut {
    /// Read a turn's cut from its stop as `dialect` gives it: `stop` is
    /// [`ResponseView::stop_reason`](crate::ResponseView::stop_reason)
    /// (Responses: its `status`) and `incomplete` Responses'
    /// `incomplete_details.reason`. `None` for a turn the model ended.
    pub fn of(dialect: Dialect, stop: Option<&str>, incomplete: Option<&str>) -> Option<StopCut> {
        let stop = stop?;
        match dialect {
            Dialect::Anthropic => match stop {
                "max_tokens" | "model_context_window_exceeded" => Some(StopCut::TokenLimit),
                "refusal" => Some(StopCut::Refusal),
                _ => None,
            },
            Dialect::BedrockConverse => match stop {
                "max_tokens" | "model_context_window_exceeded" => Some(StopCut::TokenLimit),
                "content_filtered" => Some(StopCut::ContentFilter),
                "guardrail_intervened" => Some(StopCut::Guardrail),
                "malformed_tool_use" | "malformed_model_output" => Some(StopCut::MalformedCall),
                _ => None,
            },
            Dialect::OpenAiChat => match stop {
                "length" => Some(StopCut::TokenLimit),
                "content_filter" => Some(StopCut::ContentFilter),
                _ => None,
            },
            // `steered` stops "at a safe output boundary" (the SDK's
            // words), and `max_messages` at a count of messages: between
            // items, so neither is taken as a cut.
            Dialect::OpenAiResponses if stop == "incomplete" => match incomplete? {
                "max_output_tokens" => Some(StopCut::TokenLimit),
                "content_filter" => Some(StopCut::ContentFilter),
                _ => None,
            },
            Dialect::OpenAiResponses => None,
            Dialect::Gemini => gemini(stop),
        }
    }

    /// Whether the calls written before the cut may run: only for
    /// [`TokenLimit`](Self::TokenLimit), whose cut falls in the last call
    /// at most. A turn a filter, refusal or guardrail stopped was judged
    /// whole by the provider, and one whose calls it could not read is not
    /// the turn the model meant: none of their calls should run.
    pub fn runs_whole_calls(self) -> bool {
        self == StopCut::TokenLimit
    }

    /// A stable snake_case name (`token_limit`, `content_filter`, …), as
    /// the kind serialises.
    pub fn as_str(self) -> &'static str {
        match self {
            StopCut::TokenLimit => "token_limit",
            StopCut::ContentFilter => "content_filter",
            StopCut::Refusal => "refusal",
            StopCut::Guardrail => "guardrail",
            StopCut::MalformedCall => "malformed_call",
            StopCut::Other => "other",
        }
    }
}

/// Gemini's `finishReason` (and a blocked prompt's `blockReason`), as the
/// google-genai SDK's `FinishReason` lists them.
fn gemini(stop: &str) -> Option<StopCut> {
    Some(match stop {
        "MAX_TOKENS" | "CONTINUATION" => StopCut::TokenLimit,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "ESCALATION"
        | "PUP_LIMITED_DISABLED" => StopCut::ContentFilter,
        "MODEL_ARMOR" => StopCut::Guardrail,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "MALFORMED_RESPONSE" => {
            StopCut::MalformedCall
        }
        "OTHER"
        | "LANGUAGE"
        | "TOO_MANY_TOOL_CALLS"
        | "MISSING_THOUGHT_SIGNATURE"
        | "IMAGE_OTHER"
        | "NO_IMAGE" => StopCut::Other,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each dialect's documented stops map to their cut; the normal ends
    /// are none, and a reason is read in its own dialect only.
    #[test]
    fn each_dialect_names_its_cuts() {
        let of = |d, stop| StopCut::of(d, Some(stop), None);
        for (d, stop, cut) in [
            (Dialect::Anthropic, "max_tokens", StopCut::TokenLimit),
            (Dialect::Anthropic, "refusal", StopCut::Refusal),
            (Dialect::OpenAiChat, "length", StopCut::TokenLimit),
            (
                Dialect::OpenAiChat,
                "content_filter",
                StopCut::ContentFilter,
            ),
            (Dialect::Gemini, "SAFETY", StopCut::ContentFilter),
            (Dialect::Gemini, "RECITATION", StopCut::ContentFilter),
            (Dialect::Gemini, "SPII", StopCut::ContentFilter),
            (Dialect::Gemini, "MODEL_ARMOR", StopCut::Guardrail),
            (
                Dialect::Gemini,
                "MALFORMED_FUNCTION_CALL",
                StopCut::MalformedCall,
            ),
            (
                Dialect::Gemini,
                "UNEXPECTED_TOOL_CALL",
                StopCut::MalformedCall,
            ),
            (Dialect::Gemini, "OTHER", StopCut::Other),
            (Dialect::Gemini, "CONTINUATION", StopCut::TokenLimit),
            (
                Dialect::BedrockConverse,
                "content_filtered",
                StopCut::ContentFilter,
            ),
            (
                Dialect::BedrockConverse,
                "guardrail_intervened",
                StopCut::Guardrail,
            ),
            (
                Dialect::BedrockConverse,
                "malformed_tool_use",
                StopCut::MalformedCall,
            ),
        ] {
            assert_eq!(of(d, stop), Some(cut), "{d:?} {stop}");
        }
        for (d, stop) in [
            (Dialect::Anthropic, "end_turn"),
            (Dialect::Anthropic, "tool_use"),
            (Dialect::Anthropic, "pause_turn"),
            (Dialect::Anthropic, "stop_sequence"),
            (Dialect::OpenAiChat, "tool_calls"),
            (Dialect::OpenAiChat, "stop"),
            (Dialect::Gemini, "STOP"),
            (Dialect::Gemini, "FINISH_REASON_UNSPECIFIED"),
            (Dialect::BedrockConverse, "tool_use"),
            (Dialect::OpenAiResponses, "completed"),
            // Another dialect's word.
            (Dialect::Anthropic, "content_filter"),
            (Dialect::OpenAiChat, "refusal"),
            (Dialect::Gemini, "max_tokens"),
        ] {
            assert_eq!(of(d, stop), None, "{d:?} {stop}");
        }
        assert_eq!(StopCut::of(Dialect::Gemini, None, None), None);
    }

    /// A Responses turn is cut by its `incomplete_details.reason`, not by
    /// its status alone: `steered` and `max_messages` stop between items.
    #[test]
    fn a_responses_cut_is_its_incomplete_reason() {
        let of = |reason| StopCut::of(Dialect::OpenAiResponses, Some("incomplete"), reason);
        assert_eq!(of(Some("max_output_tokens")), Some(StopCut::TokenLimit));
        assert_eq!(of(Some("content_filter")), Some(StopCut::ContentFilter));
        assert_eq!(of(Some("steered")), None);
        assert_eq!(of(Some("max_messages")), None);
        assert_eq!(of(None), None);
        assert_eq!(
            StopCut::of(
                Dialect::OpenAiResponses,
                Some("completed"),
                Some("content_filter")
            ),
            None
        );
    }

    #[test]
    fn only_the_token_limit_runs_whole_calls() {
        for cut in [
            StopCut::ContentFilter,
            StopCut::Refusal,
            StopCut::Guardrail,
            StopCut::MalformedCall,
            StopCut::Other,
        ] {
            assert!(!cut.runs_whole_calls(), "{cut:?}");
            assert_eq!(
                serde_json::to_value(cut).unwrap(),
                serde_json::json!(cut.as_str())
            );
        }
        assert!(StopCut::TokenLimit.runs_whole_calls());
    }
}
