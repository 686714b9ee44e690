//! What the parsers return: borrowed views of requests, owned views of responses.

use std::borrow::Cow;

use serde::Serialize;
use toolwarden_core::ToolCall;

use crate::{Dialect, raw_result::RawResult, stop_cut::StopCut};

/// Every tool call and tool result of one request body, in order.
#[derive(Debug, Clone, Default)]
pub struct RequestView<'a> {
    /// The `model` field (Gemini: from the URL, so `None` here).
    pub model: Option<Cow<'a, str>>,
    /// `"stream": true` in the body.
    pub stream: bool,
    /// Tool calls made by the model in the history, in order.
    pub calls: Vec<CallView<'a>>,
    /// Tool results sent back, in order.
    pub results: Vec<ResultView<'a>>,
    /// How many messages (Responses: input items; Gemini: contents).
    pub message_count: usize,
    /// Responses `previous_response_id`, or the response an Anthropic
    /// message thread continues (`thread.previous_message_id`): part of the
    /// history is on the provider's side, so results may answer calls not
    /// in this body.
    pub previous_response_id: Option<Cow<'a, str>>,
    /// An Anthropic message thread (`thread`, `create` or `continue`): the
    /// API holds the conversation under the response's `id`, which a later
    /// request continues ([`previous_response_id`](Self::previous_response_id)).
    /// (A Responses response is kept by id unless `store` is false.)
    pub threaded: bool,
    /// Responses `conversation`: the stored conversation the request adds
    /// to (the OpenAI Agents SDK's `conversation_id`); like
    /// [`previous_response_id`](Self::previous_response_id), its history is
    /// on the provider's side, and the request carries only its new items.
    pub conversation: Option<Cow<'a, str>>,
    /// Anthropic `metadata.user_id` (Claude Code puts its session id in it).
    pub metadata_user_id: Option<Cow<'a, str>>,
    /// A stable hash of the conversation's first turn (system prompt and
    /// first user message, as raw bytes): groups the turns of one
    /// conversation when the client sends no session id.
    pub first_turn_hash: Option<u64>,
    /// How many alternative answers the request asks for: Chat's `n`,
    /// Gemini's `generationConfig.candidateCount` (`None` when not given
    /// as a count). A stream of several is read with
    /// [`StreamParser::choices`](crate::StreamParser::choices).
    pub choices: Option<u64>,
}

/// One tool call in a request's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallView<'a> {
    /// The call id.
    pub id: Cow<'a, str>,
    /// The tool's name.
    pub name: Cow<'a, str>,
    /// The arguments as JSON text.
    pub arguments: Cow<'a, str>,
    /// Index of the message (item, content) that holds it.
    pub message_index: usize,
}

/// One tool result in a request. Its content is not decoded until asked
/// for: [`ResultView::read`] gives the text and the failure verdict,
/// [`ResultView::content`] the text alone (see the `result` module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultView<'a> {
    /// The id of the call it answers.
    pub call_id: Cow<'a, str>,
    /// The tool's name, resolved from this request's history (or carried
    /// by the result itself, as in Gemini); `None` when not in the body.
    pub tool: Option<Cow<'a, str>>,
    /// Index of the message (item, content) that holds it.
    pub message_index: usize,
    /// `true` when the result comes after the last assistant/model turn
    /// (`new_after`: a prefill does not end it): new in this request
    /// rather than resent history.
    pub new: bool,
    /// The content's raw JSON and the flags its verdict needs.
    pub(crate) raw: RawResult<'a>,
}

/// Token usage as the provider reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Prompt / input tokens.
    pub input_tokens: Option<u64>,
    /// Completion / output tokens.
    pub output_tokens: Option<u64>,
}

/// The tool calls and metadata of one response (whole body or stream).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResponseView {
    /// The response id (`msg_…`, `chatcmpl-…`, `resp_…`), when given.
    pub id: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// Tool calls, in order, with complete arguments: the provider's own
    /// server tool calls included (see [`server_calls`](Self::server_calls)).
    pub calls: Vec<ToolCall>,
    /// Which of [`calls`](Self::calls) (their indexes, ascending) are the
    /// provider's own server tools, which it runs and answers itself in
    /// the same turn (Anthropic's `server_tool_use` and `mcp_tool_use`,
    /// Bedrock Converse's `toolUse` of `type: "server_tool_use"`): a
    /// client that answered one would get its next request refused.
    /// [`client_calls`](Self::client_calls) gives the others. (The
    /// Responses API's hosted tools are not calls in its view at all.)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_calls: Vec<usize>,
    /// Responses only: which of [`calls`](Self::calls) (their indexes,
    /// ascending) are not function calls, and what they are: custom tools'
    /// and the built-in tools the client runs (`shell`, `apply_patch`, …),
    /// each answered by its own kind of output item
    /// ([`CallKind::output_type`](crate::call_kind::CallKind::output_type);
    /// [`crate::render_answers`] writes them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub call_kinds: Vec<(usize, crate::call_kind::CallKind)>,
    /// The provider itself says the last of [`calls`](Self::calls) was
    /// written whole, so that a cut after it did not touch it: a Responses
    /// item with `status: "completed"` (in the body, or a stream's
    /// `response.output_item.done`). Always `false` in the other dialects,
    /// whose responses do not say it: Anthropic's `content_block_stop` and
    /// ConverseStream's `contentBlockStop` close a block the token limit
    /// cut as well, a whole body's `input` or `args` is what the provider
    /// parsed from what was left, and Chat arguments that parse may be a
    /// cut text an OpenAI-compatible server closed. See
    /// [`Self::stop_cut`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub last_call_completed: bool,
    /// Token usage.
    pub usage: Usage,
    /// `stop_reason` / `finish_reason` / `status`.
    pub stop_reason: Option<String>,
    /// Responses only: why a response's `status` is `incomplete`, its
    /// `incomplete_details.reason` (`max_output_tokens`,
    /// `content_filter`). See [`hit_token_limit`](Self::hit_token_limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    /// An error the provider reported in the body or stream, if any.
    pub error: Option<String>,
    /// The HTTP status an error event names for a response that has none
    /// of its own: a Responses turn over a WebSocket, whose failures come
    /// as `{"type":"error","status":429,"error":{…}}`.
    pub error_status: Option<u16>,
    /// A stream parser's byte budget ran out ([`StreamParser::limit`]):
    /// calls that started after the cut are missing, and the call being
    /// read when it came has only the arguments kept before it.
    ///
    /// [`StreamParser::limit`]: crate::StreamParser::limit
    pub truncated: bool,
    /// A stream that ended without its dialect's final event (Anthropic
    /// `message_stop`, Chat `[DONE]` or the last open choice's
    /// `finish_reason`, Responses `response.completed` / `failed` /
    /// `incomplete`, Gemini the last open candidate's `finishReason` or a
    /// blocked prompt's `blockReason`, ConverseStream `messageStop`): the
    /// response may lack
    /// calls or arguments, however cleanly its transport ended. Always
    /// `false` for a whole body.
    pub ended_early: bool,
}

// === impl ResponseView ===

impl ResponseView {
    /// The calls the client must run and answer: [`calls`](Self::calls)
    /// without the provider's [`server_calls`](Self::server_calls), in
    /// order. What [`crate::client_calls`] gives for a whole body.
    pub fn client_calls(&self) -> impl Iterator<Item = &ToolCall> + '_ {
        self.calls
            .iter()
            .enumerate()
            .filter(|(i, _)| self.server_calls.binary_search(i).is_err())
            .map(|(_, call)| call)
    }

    /// Why the provider stopped the model's output before the model ended
    /// its turn, read as `dialect` says it ([`StopCut::of`] lists each
    /// dialect's reasons); `None` for a turn the model ended (a natural
    /// end, a tool call, a stop sequence) or a stop reason not documented
    /// as a cut.
    pub fn stop_cut(&self, dialect: Dialect) -> Option<StopCut> {
        StopCut::of(
            dialect,
            self.stop_reason.as_deref(),
            self.incomplete_reason.as_deref(),
        )
    }

    /// Whether the model's output stopped because it reached its token
    /// limit: [`stop_cut`](Self::stop_cut) is [`StopCut::TokenLimit`]
    /// (Anthropic `stop_reason` `max_tokens` or
    /// `model_context_window_exceeded`, Chat `finish_reason` `length`,
    /// Responses `status` `incomplete` with `incomplete_details.reason`
    /// `max_output_tokens`, Gemini `finishReason` `MAX_TOKENS` or
    /// `CONTINUATION`, Bedrock Converse `stopReason` `max_tokens` or
    /// `model_context_window_exceeded`). The output was cut where the
    /// limit fell: its last call may have only part of its arguments,
    /// unless the provider says otherwise
    /// ([`last_call_completed`](Self::last_call_completed)).
    pub fn hit_token_limit(&self, dialect: Dialect) -> bool {
        self.stop_cut(dialect) == Some(StopCut::TokenLimit)
    }
}

/// The message after which a request's results are new: the last assistant
/// message (`last`), unless that message ends the body (`count` messages):
/// then it is a prefill (Anthropic's partial assistant turn, the `prefix`
/// completion of DeepSeek and Mistral), written after the results it
/// follows, and the results after the assistant message before it
/// (`before_last`) are new.
pub(crate) fn new_after(
    last: Option<usize>,
    before_last: Option<usize>,
    count: usize,
) -> Option<usize> {
    match last {
        Some(a) if a + 1 == count => before_last,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Dialect, StopCut, StreamParser, request_view, response_view};

    fn new_results(dialect: Dialect, body: serde_json::Value) -> Vec<(String, bool)> {
        let bytes = serde_json::to_vec(&body).unwrap();
        let view = request_view(dialect, &bytes).unwrap();
        view.results
            .iter()
            .map(|r| (r.call_id.to_string(), r.new))
            .collect()
    }

    /// A prefill (a last assistant message the model is to continue) does
    /// not hide the results before it: they are new.
    #[test]
    fn results_before_a_prefill_are_new() {
        let anthropic = json!({"model": "m", "max_tokens": 9, "messages": [
            {"role": "user", "content": "read it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_old", "name": "read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_old", "content": "ok"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "is_error": true, "content": "ENOENT"}]},
            {"role": "assistant", "content": "{"}]});
        assert_eq!(
            new_results(Dialect::Anthropic, anthropic),
            [("toolu_old".into(), false), ("toolu_01".into(), true)]
        );
        let chat = json!({"model": "m", "messages": [
            {"role": "user", "content": "run it"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Error: 3 failed"},
            {"role": "assistant", "content": "```json", "prefix": true}]});
        assert_eq!(
            new_results(Dialect::OpenAiChat, chat),
            [("call_1".into(), true)]
        );
        let converse = json!({"messages": [
            {"role": "user", "content": [{"text": "run it"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "bash", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "ok"}]}}]},
            {"role": "assistant", "content": [{"text": "{"}]}]});
        assert_eq!(
            new_results(Dialect::BedrockConverse, converse),
            [("t1".into(), true)]
        );
        // An assistant message that does not end the body still ends the
        // new results.
        let answered = json!({"model": "m", "messages": [
            {"role": "user", "content": "run it"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "thanks"}]});
        assert_eq!(
            new_results(Dialect::OpenAiChat, answered),
            [("call_1".into(), false)]
        );
    }

    /// A Responses history with each output right after its call (`call,
    /// output, call, output`): every output of the last turn is new.
    #[test]
    fn interleaved_responses_outputs_are_all_new() {
        let body = json!({"model": "m", "input": [
            {"role": "user", "content": "look"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "call_A", "name": "ls", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_A", "output": "Exit code: 2"},
            {"type": "function_call", "call_id": "call_B", "name": "cat", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_B", "output": "hello"}]});
        assert_eq!(
            new_results(Dialect::OpenAiResponses, body),
            [("call_A".into(), true), ("call_B".into(), true)]
        );
        // Outputs before the model's last reasoning or message are resent.
        let body = json!({"model": "m", "input": [
            {"role": "user", "content": "look"},
            {"type": "function_call", "call_id": "call_A", "name": "ls", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_A", "output": "a"},
            {"type": "reasoning", "id": "rs_2", "summary": []},
            {"type": "function_call", "call_id": "call_B", "name": "cat", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_B", "output": "b"}]});
        assert_eq!(
            new_results(Dialect::OpenAiResponses, body),
            [("call_A".into(), false), ("call_B".into(), true)]
        );
    }

    /// Each dialect's token-limit stop, in a whole body and (Responses,
    /// where the reason is a field of its own) in a stream; other stops,
    /// and a Responses turn cut by its content filter, are not one.
    #[test]
    fn a_token_limit_stop_is_read_in_every_dialect() {
        let hit = |dialect: Dialect, body: serde_json::Value| {
            let bytes = serde_json::to_vec(&body).unwrap();
            response_view(dialect, &bytes)
                .unwrap()
                .hit_token_limit(dialect)
        };
        let anthropic = |stop: &str| json!({"type": "message", "role": "assistant", "content": [], "stop_reason": stop});
        assert!(hit(Dialect::Anthropic, anthropic("max_tokens")));
        assert!(hit(
            Dialect::Anthropic,
            anthropic("model_context_window_exceeded")
        ));
        assert!(!hit(Dialect::Anthropic, anthropic("tool_use")));
        let chat = |finish: &str| {
            json!({"object": "chat.completion", "choices": [
            {"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": "x"}}]})
        };
        assert!(hit(Dialect::OpenAiChat, chat("length")));
        assert!(!hit(Dialect::OpenAiChat, chat("tool_calls")));
        let responses = |reason: &str| {
            json!({"object": "response", "status": "incomplete",
            "incomplete_details": {"reason": reason}, "output": []})
        };
        assert!(hit(
            Dialect::OpenAiResponses,
            responses("max_output_tokens")
        ));
        assert!(!hit(Dialect::OpenAiResponses, responses("content_filter")));
        let gemini = |finish: &str| {
            json!({"candidates": [{"finishReason": finish,
            "content": {"role": "model", "parts": [{"text": "x"}]}}]})
        };
        assert!(hit(Dialect::Gemini, gemini("MAX_TOKENS")));
        assert!(!hit(Dialect::Gemini, gemini("STOP")));
        let converse = |stop: &str| json!({"output": {"message": {"role": "assistant", "content": []}}, "stopReason": stop});
        assert!(hit(Dialect::BedrockConverse, converse("max_tokens")));
        assert!(!hit(Dialect::BedrockConverse, converse("end_turn")));
        // The stop reasons are the dialect's own: Chat's `length` is not
        // Anthropic's.
        assert!(!hit(Dialect::Anthropic, anthropic("length")));

        let mut parser = StreamParser::new(Dialect::OpenAiResponses);
        parser.feed(b"event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"id\":\"resp_1\",\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[]}}\n\n");
        let view = parser.finish();
        assert_eq!(view.incomplete_reason.as_deref(), Some("max_output_tokens"));
        assert!(view.hit_token_limit(Dialect::OpenAiResponses));
    }

    /// Each dialect's other stops are read as their cut, in a whole body
    /// and in a stream (Responses: its incomplete reason, from the
    /// terminal event).
    #[test]
    fn other_cuts_are_read_in_bodies_and_streams() {
        let cut = |dialect: Dialect, body: serde_json::Value| {
            let bytes = serde_json::to_vec(&body).unwrap();
            response_view(dialect, &bytes).unwrap().stop_cut(dialect)
        };
        let anthropic = json!({"type": "message", "role": "assistant", "content": [], "stop_reason": "refusal"});
        assert_eq!(cut(Dialect::Anthropic, anthropic), Some(StopCut::Refusal));
        let chat = json!({"object": "chat.completion", "choices": [
            {"index": 0, "finish_reason": "content_filter", "message": {"role": "assistant", "content": null}}]});
        assert_eq!(cut(Dialect::OpenAiChat, chat), Some(StopCut::ContentFilter));
        let responses = json!({"object": "response", "status": "incomplete",
            "incomplete_details": {"reason": "content_filter"}, "output": []});
        assert_eq!(
            cut(Dialect::OpenAiResponses, responses),
            Some(StopCut::ContentFilter)
        );
        let gemini = json!({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL",
            "content": {"role": "model", "parts": []}}]});
        assert_eq!(cut(Dialect::Gemini, gemini), Some(StopCut::MalformedCall));
        // A blocked prompt: no candidate, its block reason.
        let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}});
        assert_eq!(cut(Dialect::Gemini, blocked), Some(StopCut::ContentFilter));
        let converse = json!({"output": {"message": {"role": "assistant", "content": []}},
            "stopReason": "guardrail_intervened"});
        assert_eq!(
            cut(Dialect::BedrockConverse, converse),
            Some(StopCut::Guardrail)
        );

        let mut parser = StreamParser::new(Dialect::OpenAiResponses);
        parser.feed(b"event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"id\":\"resp_1\",\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"content_filter\"},\"output\":[]}}\n\n");
        let view = parser.finish();
        assert_eq!(
            view.stop_cut(Dialect::OpenAiResponses),
            Some(StopCut::ContentFilter)
        );
        let mut parser = StreamParser::new(Dialect::Anthropic);
        parser.feed(b"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        assert_eq!(
            parser.finish().stop_cut(Dialect::Anthropic),
            Some(StopCut::Refusal)
        );
    }

    /// Only a Responses item's `completed` status marks the last call as
    /// written whole: in the body, and from a stream's `output_item.done`
    /// (not from its arguments' `.done`, which a cut call gets too).
    /// Anthropic's `content_block_stop`, which closes a cut block as well,
    /// marks nothing.
    #[test]
    fn the_last_call_is_completed_when_the_provider_marks_it() {
        let item = |i: usize, status: &str| {
            json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"),
                "name": "write", "arguments": "{}", "status": status})
        };
        let body = |output: serde_json::Value| {
            let body = json!({"object": "response", "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"}, "output": output});
            response_view(
                Dialect::OpenAiResponses,
                &serde_json::to_vec(&body).unwrap(),
            )
            .unwrap()
            .last_call_completed
        };
        let message = json!({"type": "message", "id": "m", "status": "incomplete", "content": []});
        assert!(body(json!([
            item(0, "incomplete"),
            item(1, "completed"),
            message
        ])));
        assert!(!body(json!([item(0, "completed"), item(1, "incomplete")])));
        assert!(!body(json!([item(0, "completed"), item(1, "in_progress")])));
        assert!(!body(
            json!([item(0, "completed"), {"type": "function_call",
            "call_id": "call_1", "name": "write", "arguments": "{}"}])
        ));

        let mut stream = Vec::new();
        let event = |stream: &mut Vec<u8>, name: &str, data: serde_json::Value| {
            stream.extend(format!("event: {name}\ndata: {data}\n\n").into_bytes());
        };
        let mut completed = Vec::new();
        for (i, done) in [(0, "completed"), (1, "incomplete")] {
            event(
                &mut stream,
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": i, "item": item(i, "in_progress")}),
            );
            event(
                &mut stream,
                "response.function_call_arguments.done",
                json!({"type": "response.function_call_arguments.done", "output_index": i,
                    "item_id": format!("fc_{i}"), "arguments": "{}"}),
            );
            event(
                &mut stream,
                "response.output_item.done",
                json!({"type": "response.output_item.done", "output_index": i, "item": item(i, done)}),
            );
            let mut parser = StreamParser::new(Dialect::OpenAiResponses);
            parser.feed(&stream);
            completed.push(parser.finish().last_call_completed);
        }
        assert_eq!(completed, [true, false]);

        let mut parser = StreamParser::new(Dialect::Anthropic);
        parser.feed(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write\",\"input\":{}}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
        let view = parser.finish();
        assert_eq!(view.calls.len(), 1);
        assert!(!view.last_call_completed);
    }
}
