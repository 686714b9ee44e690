//! The Bedrock event-stream rows of the wire bench (issue 18): synthetic
//! streams shaped like Bedrock's (the `p` padding field included), so no
//! corpus is needed.

use std::{hint::black_box, time::Duration};

use toolwarden_wire::{
    Dialect, StreamParser,
    eventstream::{Decoder, encode_event, encode_invoke_chunk, invoke_chunk},
};

use super::{FEED_CHUNK, STREAM_BYTES, row, time_pair};

/// One ConverseStream turn: 60 text deltas, then a tool call whose input
/// arrives in 12 pieces.
fn converse_turn(n: usize) -> Vec<u8> {
    let mut out = encode_event(
        "messageStart",
        br#"{"p":"abcdefghijkl","role":"assistant"}"#,
    );
    for i in 0..60 {
        let payload = format!(
            r#"{{"contentBlockIndex":0,"delta":{{"text":"word{i} of the answer, "}},"p":"abcdefghijklmnopqrstuvwxyzABCDEFGH"}}"#
        );
        out.extend(encode_event("contentBlockDelta", payload.as_bytes()));
    }
    out.extend(encode_event(
        "contentBlockStop",
        br#"{"contentBlockIndex":0,"p":"abcdefg"}"#,
    ));
    let start = format!(
        r#"{{"contentBlockIndex":1,"p":"abcd","start":{{"toolUse":{{"name":"read_file","toolUseId":"tooluse_{n:020}"}}}}}}"#
    );
    out.extend(encode_event("contentBlockStart", start.as_bytes()));
    let input = r#"{"path":"/home/user/project/src/main.rs","offset":120,"limit":400}"#;
    for piece in input.as_bytes().chunks(input.len().div_ceil(12)) {
        let piece = serde_json::to_string(std::str::from_utf8(piece).expect("ASCII")).expect("str");
        let payload = format!(
            r#"{{"contentBlockIndex":1,"delta":{{"toolUse":{{"input":{piece}}}}},"p":"abcdefghijklmn"}}"#
        );
        out.extend(encode_event("contentBlockDelta", payload.as_bytes()));
    }
    out.extend(encode_event(
        "contentBlockStop",
        br#"{"contentBlockIndex":1,"p":"abcdefghij"}"#,
    ));
    out.extend(encode_event(
        "messageStop",
        br#"{"p":"abcdefgh","stopReason":"tool_use"}"#,
    ));
    out.extend(encode_event(
        "metadata",
        br#"{"metrics":{"latencyMs":812},"p":"abc","usage":{"inputTokens":1520,"outputTokens":96,"totalTokens":1616}}"#,
    ));
    out
}

/// One Anthropic Messages turn on Bedrock: the same shape, each event
/// base64 in a `chunk` frame.
fn invoke_turn(n: usize) -> Vec<u8> {
    let mut events = vec![format!(
        r#"{{"type":"message_start","message":{{"id":"msg_bdrk_{n:020}","type":"message","role":"assistant","model":"claude-sonnet-4","content":[],"usage":{{"input_tokens":1520,"output_tokens":1}}}}}}"#
    )];
    events.push(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .into(),
    );
    for i in 0..60 {
        events.push(format!(
            r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"word{i} of the answer, "}}}}"#
        ));
    }
    events.push(r#"{"type":"content_block_stop","index":0}"#.into());
    events.push(format!(
        r#"{{"type":"content_block_start","index":1,"content_block":{{"type":"tool_use","id":"toolu_{n:020}","name":"read_file","input":{{}}}}}}"#
    ));
    for piece in [
        "{\\\"path\\\":",
        "\\\"/home/user/src/main.rs\\\"",
        ",\\\"limit\\\":400}",
    ] {
        events.push(format!(
            r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{piece}"}}}}"#
        ));
    }
    events.push(r#"{"type":"content_block_stop","index":1}"#.into());
    events.push(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":96}}"#.into());
    events.push(r#"{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":1520,"outputTokenCount":96}}"#.into());
    events
        .iter()
        .flat_map(|e| encode_invoke_chunk(e.as_bytes()))
        .collect()
}

fn repeat(turn: impl Fn(usize) -> Vec<u8>) -> Vec<u8> {
    let mut stream = Vec::with_capacity(STREAM_BYTES + 64 * 1024);
    let mut n = 0;
    while stream.len() < STREAM_BYTES {
        stream.extend(turn(n));
        n += 1;
    }
    stream
}

/// Every frame of `stream` decoded, `on` called with each payload: the
/// decoder's fastest way (`feed`, frames read where they are in the
/// chunk), as the stream parser uses it.
fn frames(stream: &[u8], mut on: impl FnMut(&[u8])) {
    let mut d = Decoder::new();
    for c in stream.chunks(FEED_CHUNK) {
        d.feed(black_box(c), &mut |m| on(m.expect("well-formed").payload()));
    }
}

pub(super) fn run(budget: Duration) {
    let converse = repeat(converse_turn);
    let parse = || {
        let mut p = StreamParser::new(Dialect::BedrockConverse);
        for c in converse.chunks(FEED_CHUNK) {
            p.feed(black_box(c));
        }
        black_box(p.finish());
    };
    let base = || {
        let mut n = 0usize;
        frames(&converse, |payload| {
            let v: serde_json::Value = serde_json::from_slice(payload).expect("JSON");
            n += v.is_object() as usize;
            black_box(v);
        });
        black_box(n);
    };
    // BENCH_ONE=ours|base|none: one pass of the ConverseStream parser, of
    // its baseline, or of neither (the stream's construction alone), then
    // exit — for instruction counts under `valgrind --tool=callgrind`,
    // robust on a loaded machine: ratio = (base - none) / (ours - none).
    if let Ok(one) = std::env::var("BENCH_ONE") {
        match one.as_str() {
            "ours" => parse(),
            "base" => base(),
            _ => {}
        }
        std::process::exit(0);
    }
    row(
        "bedrock converse-stream",
        "stream",
        time_pair(budget, parse, base),
        converse.len(),
        3.0,
    );
    // The frame decoder alone (CRCs checked), against the same baseline.
    let decode = || {
        let mut n = 0usize;
        frames(&converse, |payload| n += payload.len());
        black_box(n);
    };
    row(
        "bedrock event-stream frames",
        "decode",
        time_pair(budget, decode, base),
        converse.len(),
        0.0,
    );
    let invoke = repeat(invoke_turn);
    let parse = || {
        let mut p = StreamParser::bedrock_invoke(Dialect::Anthropic);
        for c in invoke.chunks(FEED_CHUNK) {
            p.feed(black_box(c));
        }
        black_box(p.finish());
    };
    let base = || {
        let mut n = 0usize;
        frames(&invoke, |payload| {
            let json = invoke_chunk(payload).expect("chunk");
            let v: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
            n += v.is_object() as usize;
            black_box(v);
        });
        black_box(n);
    };
    row(
        "bedrock invoke (anthropic)",
        "stream",
        time_pair(budget, parse, base),
        invoke.len(),
        0.0,
    );
}
