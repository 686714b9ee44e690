//! [`StreamParser::trailer_pending`]: from the final event until the
//! dialect's trailer (Chat's usage chunk and `[DONE]`, ConverseStream's
//! `metadata`) has been read, however the bytes are split.

use proptest::prelude::*;

use super::StreamParser;
use crate::{Dialect, eventstream::encode_event};

/// A Chat stream of `choices` choices, each calling a tool (their events
/// interleaved, as OpenAI streams them), with the usage chunk of
/// `stream_options.include_usage`: the stream, where its final event
/// (the last `finish_reason`) ends and where `[DONE]` ends.
fn chat_stream(choices: u64) -> (Vec<u8>, usize, usize) {
    let mut events = Vec::new();
    for c in 0..choices {
        events.push(format!(
            r#"{{"id":"chatcmpl-1","model":"gpt-4o","choices":[{{"index":{c},"delta":{{"role":"assistant","tool_calls":[{{"index":0,"id":"call_{c}","type":"function","function":{{"name":"ls","arguments":""}}}}]}},"finish_reason":null}}],"usage":null}}"#
        ));
    }
    for c in 0..choices {
        events.push(format!(
            r#"{{"id":"chatcmpl-1","model":"gpt-4o","choices":[{{"index":{c},"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":"{{}}"}}}}]}},"finish_reason":null}}],"usage":null}}"#
        ));
    }
    for c in 0..choices {
        events.push(format!(
            r#"{{"id":"chatcmpl-1","model":"gpt-4o","choices":[{{"index":{c},"delta":{{}},"finish_reason":"tool_calls"}}],"usage":null}}"#
        ));
    }
    let mut stream = Vec::new();
    for e in &events {
        stream.extend_from_slice(format!("data: {e}\n\n").as_bytes());
    }
    let final_end = stream.len();
    stream.extend_from_slice(
        br#"data: {"id":"chatcmpl-1","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}"#,
    );
    stream.extend_from_slice(b"\n\ndata: [DONE]\n\n");
    let len = stream.len();
    (stream, final_end, len)
}

/// A ConverseStream with one call: the frames, where `messageStop` ends
/// and where `metadata` ends.
fn converse_stream() -> (Vec<u8>, usize, usize) {
    let mut stream = Vec::new();
    for (event, payload) in [
        ("messageStart", r#"{"role":"assistant"}"#),
        (
            "contentBlockStart",
            r#"{"contentBlockIndex":0,"start":{"toolUse":{"name":"ls","toolUseId":"tooluse_1"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}}}"#,
        ),
        ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
        ("messageStop", r#"{"stopReason":"tool_use"}"#),
    ] {
        stream.extend(encode_event(event, payload.as_bytes()));
    }
    let final_end = stream.len();
    stream.extend(encode_event(
        "metadata",
        br#"{"usage":{"inputTokens":9,"outputTokens":4,"totalTokens":13},"metrics":{"latencyMs":1}}"#,
    ));
    let len = stream.len();
    (stream, final_end, len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// After each piece fed, the trailer is pending exactly when the
    /// final event is whole and the trailer is not; the usage is read.
    #[test]
    fn the_trailer_is_pending_from_the_final_event_to_its_end(
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        which in 0..3u8,
    ) {
        let (dialect, (stream, final_end, trailer_end)) = match which {
            0 => (Dialect::OpenAiChat, chat_stream(1)),
            1 => (Dialect::OpenAiChat, chat_stream(3)),
            _ => (Dialect::BedrockConverse, converse_stream()),
        };
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
        points.sort_unstable();
        points.push(stream.len());
        let mut p = StreamParser::new(dialect);
        let mut at = 0;
        for q in points {
            p.feed(&stream[at..q]);
            at = q;
            prop_assert_eq!(p.is_complete(), q >= final_end, "at {}", q);
            prop_assert_eq!(
                p.trailer_pending(),
                q >= final_end && q < trailer_end,
                "at {}", q
            );
        }
        let view = p.finish();
        prop_assert_eq!(view.usage.input_tokens, Some(9));
        prop_assert_eq!(view.usage.output_tokens, Some(4));
    }
}

/// The dialects whose usage comes before or with their final event have
/// no trailer.
#[test]
fn usage_before_the_final_event_leaves_no_trailer() {
    let cases: [(Dialect, &[u8]); 3] = [
        (
            Dialect::Anthropic,
            b"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ),
        (
            Dialect::OpenAiResponses,
            b"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":4}}}\n\n",
        ),
        (
            Dialect::Gemini,
            b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":4}}\r\n\r\n",
        ),
    ];
    for (dialect, stream) in cases {
        let mut p = StreamParser::new(dialect);
        p.feed(stream);
        assert!(p.is_complete(), "{dialect:?}");
        assert!(!p.trailer_pending(), "{dialect:?}");
    }
}
