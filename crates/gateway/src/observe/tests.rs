//! An observation's reading of compressed streams.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolwarden_store::{RequestRecord, ToolCallRecord};
use toolwarden_wire::Dialect;

use super::{Observation, ParseBounds, RequestBase, ResponseMeta, Sinks};
use crate::metrics::Metrics;
use crate::recorder::{Observer, Recorder, RecorderOptions};
use crate::routes::Provider;

/// What the recorder was given: each request's `calls_incomplete` and
/// error, and the ids of the calls.
#[derive(Default)]
struct Recorded {
    requests: Mutex<Vec<bool>>,
    errors: Mutex<Vec<Option<String>>>,
    calls: Mutex<Vec<String>>,
}

impl Observer for Recorded {
    fn on_request(&self, rec: &RequestRecord) {
        if let Ok(mut v) = self.requests.lock() {
            v.push(rec.calls_incomplete);
        }
        if let Ok(mut v) = self.errors.lock() {
            v.push(rec.error.clone());
        }
    }

    fn on_tool_call(&self, rec: &ToolCallRecord) {
        if let Ok(mut v) = self.calls.lock() {
            v.push(rec.call_id.clone());
        }
    }
}

/// A recorder without a database whose observer keeps what it is given,
/// and the sinks an observation reports to.
struct Harness {
    recorded: Arc<Recorded>,
    recorder: Recorder,
    metrics: Arc<Metrics>,
    sinks: Arc<Sinks>,
}

impl Harness {
    fn start() -> Harness {
        let recorded = Arc::new(Recorded::default());
        let recorder = Recorder::start(
            None,
            RecorderOptions {
                queue_capacity: 64,
                batch_max: 16,
                flush_interval: Duration::from_millis(1),
                jsonl: None,
            },
            recorded.clone(),
        );
        let metrics = Arc::new(Metrics::new());
        let sinks = Arc::new(Sinks::new(
            recorder.clone(),
            metrics.clone(),
            Default::default(),
        ));
        Harness {
            recorded,
            recorder,
            metrics,
            sinks,
        }
    }
}

pub(crate) fn base() -> RequestBase {
    RequestBase {
        request_id: "r1".into(),
        at_ms: 0,
        provider: Provider::Anthropic,
        dialect: Some(Dialect::Anthropic),
        path: "/v1/messages".into(),
        repair_mode: "off",
        repairs: Vec::new(),
        header_session: None,
        trace_parent: None,
        trace_state: None,
        server_address: None,
        server_port: None,
        path_model: None,
    }
}

/// An Anthropic stream's events for one `tool_use` block with id `id`,
/// at content index `index`.
fn tool_use(id: &str, index: usize) -> String {
    format!(
        "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"read\",\"input\":{{}}}}}}\n\n\
         event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{}}\"}}}}\n\n\
         event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{index}}}\n\n"
    )
}

fn gzip_piece(encoder: &mut flate2::write::GzEncoder<Vec<u8>>, text: &str) -> Vec<u8> {
    encoder.write_all(text.as_bytes()).ok();
    encoder.flush().ok();
    std::mem::take(encoder.get_mut())
}

/// A gzipped stream that decodes past the observation's limit: the call
/// before the limit is recorded, the request is marked `calls_incomplete`
/// (its later calls were not read), and the body counts once as too large
/// to parse.
#[tokio::test]
async fn a_compressed_stream_decoded_past_its_limit_marks_the_calls_incomplete() {
    let Harness {
        recorded,
        recorder,
        metrics,
        sinks,
    } = Harness::start();
    let mut observation = Observation::new(sinks.clone(), base()).with_decode_limit(64 * 1024);
    observation.on_response(
        ResponseMeta {
            status: 200,
            content_type: Some(b"text/event-stream"),
            content_encoding: Some(b"gzip"),
            content_length: None,
        },
        false,
        Some(&ParseBounds::new(1 << 20, usize::MAX)),
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";
    observation.feed(&gzip_piece(&mut gz, start));
    observation.feed(&gzip_piece(&mut gz, &tool_use("toolu_before", 0)));
    // 128 KiB of SSE comments: the stream passes the 64 KiB limit here.
    let pad = ": padding\n".repeat(13_108);
    observation.feed(&gzip_piece(&mut gz, &pad));
    observation.feed(&gzip_piece(&mut gz, &tool_use("toolu_after", 1)));
    let end = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    observation.feed(&gzip_piece(&mut gz, end));
    let tail = gz.finish().unwrap_or_default();
    observation.feed(&tail);
    observation.finish();
    sinks.settle(Duration::from_secs(5)).await;
    recorder.shutdown().await;

    let requests = recorded
        .requests
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    assert_eq!(requests, [true], "one request, marked calls_incomplete");
    let calls = recorded.calls.lock().map(|v| v.clone()).unwrap_or_default();
    assert_eq!(calls, ["toolu_before"], "the call before the limit is kept");
    assert_eq!(
        metrics.counter("toolwarden_unparsed_responses_total", &["too_large"]),
        1
    );
    assert_eq!(
        metrics.counter("toolwarden_unparsed_responses_total", &["invalid"]),
        0
    );
}

/// An Anthropic (non-streaming) answer with one `tool_use` call, padded
/// with `pad` bytes of text.
fn answer_with_call(id: &str, pad: usize) -> String {
    format!(
        "{{\"id\":\"msg_{id}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\
         \"content\":[{{\"type\":\"text\",\"text\":\"{}\"}},\
         {{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"read\",\"input\":{{}}}}],\
         \"stop_reason\":\"tool_use\",\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}",
        "x".repeat(pad)
    )
}

/// A `200` of `content_type`, neither compressed nor of a known length.
fn plain_200(content_type: &'static [u8]) -> ResponseMeta<'static> {
    ResponseMeta {
        status: 200,
        content_type: Some(content_type),
        content_encoding: None,
        content_length: None,
    }
}

/// Two responses were recorded, `toolu_first`'s whole and the other one
/// refused for want of room: marked `calls_incomplete`, its call not
/// recorded, counted once as `no_room` (not `too_large`).
fn one_of_two_refused(recorded: &Recorded, metrics: &Metrics) {
    let mut requests = recorded
        .requests
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    requests.sort_unstable();
    assert_eq!(
        requests,
        [false, true],
        "the refused one marked calls_incomplete"
    );
    let calls = recorded.calls.lock().map(|v| v.clone()).unwrap_or_default();
    assert_eq!(calls, ["toolu_first"]);
    assert_eq!(
        metrics.counter("toolwarden_unparsed_responses_total", &["no_room"]),
        1
    );
    assert_eq!(
        metrics.counter("toolwarden_unparsed_responses_total", &["too_large"]),
        0
    );
}

/// A whole JSON answer copied for parsing holds its copy's capacity of
/// `max_buffered_response_bytes` until it has been read; one whose copy
/// finds no room (another answer's copy holds it) passes unread: counted
/// `no_room`, its request marked `calls_incomplete`, its copy freed at once.
#[tokio::test]
async fn a_copy_with_no_room_is_not_made_and_counted() {
    let Harness {
        recorded,
        recorder,
        metrics,
        sinks,
    } = Harness::start();
    let bounds = ParseBounds::new(1 << 20, 16 * 1024);
    let meta = plain_200(b"application/json");
    let first = answer_with_call("toolu_first", 10_000);
    let second = answer_with_call("toolu_second", 10_000);
    let mut a = Observation::new(sinks.clone(), base());
    a.on_response(meta, false, Some(&bounds));
    a.feed(first.as_bytes());
    let held = bounds.copies.held_bytes();
    assert!((10 << 10..=16 << 10).contains(&held), "{held}");

    let mut b = Observation::new(sinks.clone(), base());
    b.on_response(meta, false, Some(&bounds));
    for piece in second.as_bytes().chunks(4096) {
        b.feed(piece);
    }
    assert_eq!(
        bounds.copies.held_bytes(),
        held,
        "the refused copy holds nothing"
    );
    assert_eq!(bounds.copies.refused(), 1);
    b.finish();
    a.finish();
    sinks.settle(Duration::from_secs(5)).await;
    recorder.shutdown().await;
    assert_eq!(bounds.copies.held_bytes(), 0, "given back once read");

    one_of_two_refused(&recorded, &metrics);
}

/// An Anthropic stream: its start, a text block of `pad` bytes (one
/// event), 6.5 KB of keep-alive comments, one `tool_use` call with id
/// `id`, and its end.
fn stream_with_call(id: &str, pad: usize) -> String {
    let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";
    let text = format!(
        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{}\"}}}}\n\n",
        "x".repeat(pad)
    );
    let end = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let comments = ": keep-alive\n".repeat(500);
    format!("{start}{text}{comments}{}{end}", tool_use(id, 1))
}

/// A stream's parse holds what it buffers and keeps of
/// `max_buffered_response_bytes` until it has been read; one whose parse
/// finds no room to grow (another stream's holds it) is not read further:
/// counted `no_room` (not `too_large`), its request marked
/// `calls_incomplete`, its calls after that point not recorded, what it
/// holds held until it is read; the room comes back once both are read.
#[tokio::test]
async fn a_stream_whose_parse_finds_no_room_is_not_read_further() {
    let Harness {
        recorded,
        recorder,
        metrics,
        sinks,
    } = Harness::start();
    let bounds = ParseBounds::new(1 << 20, 52 * 1024);
    let meta = plain_200(b"text/event-stream");
    // Split across chunks, a 30 KB event takes 32–50 KB of the framing's
    // buffer (the line carried over, and its room): two such parses do
    // not fit, one does.
    let first = stream_with_call("toolu_first", 30_000);
    let second = stream_with_call("toolu_second", 30_000);
    // The first stream stops 25 KB into its text event: the framing holds
    // the event's start.
    let mut a = Observation::new(sinks.clone(), base());
    a.on_response(meta, false, Some(&bounds));
    let (a_start, a_rest) = first
        .as_bytes()
        .split_at(first.find("xxxx").unwrap() + 25_000);
    a.feed(a_start);
    let held = bounds.copies.held_bytes();
    assert!((24 << 10..=32 << 10).contains(&held), "{held}");

    let mut b = Observation::new(sinks.clone(), base());
    b.on_response(meta, false, Some(&bounds));
    for piece in second.as_bytes().chunks(4096) {
        b.feed(piece);
    }
    assert_eq!(bounds.copies.refused(), 1);
    // Refused, the second lets go of the event it was reading at once:
    // only the little it kept stays held, and the first reads on while
    // the second has not ended.
    let after = bounds.copies.held_bytes();
    assert!(after <= held + 2048, "{after} held, against {held} before");
    a.feed(a_rest);
    a.finish();
    assert_eq!(bounds.copies.refused(), 1);
    b.finish();
    sinks.settle(Duration::from_secs(5)).await;
    recorder.shutdown().await;
    assert_eq!(bounds.copies.held_bytes(), 0, "given back once read");

    one_of_two_refused(&recorded, &metrics);
}

/// A Responses stream whose `response.completed` is larger than the SSE
/// event cap (several generated images): its call, read from
/// `response.output_item.done`, is recorded; the request is not an error
/// ("the stream ended before its final event"), but it says its calls may
/// be incomplete, and counts as too large to parse.
#[tokio::test]
async fn a_final_event_over_the_sse_cap_is_no_error() {
    let Harness {
        recorded,
        recorder,
        metrics,
        sinks,
    } = Harness::start();
    let mut observation = Observation::new(
        sinks.clone(),
        RequestBase {
            provider: Provider::OpenAi,
            dialect: Some(Dialect::OpenAiResponses),
            path: "/v1/responses".into(),
            ..base()
        },
    );
    observation.on_response(
        ResponseMeta {
            status: 200,
            content_type: Some(b"text/event-stream"),
            content_encoding: None,
            content_length: None,
        },
        false,
        Some(&ParseBounds::new(32 << 20, usize::MAX)),
    );
    let call = r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"ls","arguments":"{}","status":"completed"}"#;
    observation.feed(
        format!("event: response.created\ndata: {{\"type\":\"response.created\",\"response\":{{\"id\":\"resp_1\",\"model\":\"gpt-5\"}}}}\n\nevent: response.output_item.done\ndata: {{\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{call}}}\n\n")
            .as_bytes(),
    );
    let image = "A".repeat(toolwarden_wire::sse::DEFAULT_MAX_EVENT + 1);
    let completed = format!(
        "event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[{call},{{\"type\":\"image_generation_call\",\"id\":\"ig_1\",\"result\":\"{image}\"}}]}}}}\n\n"
    );
    for piece in completed.as_bytes().chunks(64 << 10) {
        observation.feed(piece);
    }
    observation.finish();
    sinks.settle(Duration::from_secs(5)).await;
    recorder.shutdown().await;

    let errors = recorded
        .errors
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    assert_eq!(errors, [None], "the stream ended whole");
    let requests = recorded
        .requests
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    assert_eq!(requests, [true], "its calls may be incomplete");
    let calls = recorded.calls.lock().map(|v| v.clone()).unwrap_or_default();
    assert_eq!(calls, ["call_1"]);
    assert_eq!(
        metrics.counter("toolwarden_unparsed_responses_total", &["too_large"]),
        1
    );
}

/// Defects added in later messages of a turn (WebSocket injects) stop at
/// `MAX_TURN_REPAIRS`: a client refused in every inject of a long turn
/// does not grow it without bound.
#[tokio::test]
async fn a_turns_added_repairs_are_bounded() {
    let Harness {
        recorder, sinks, ..
    } = Harness::start();
    let mut observation = Observation::new(sinks.clone(), base());
    for _ in 0..3 {
        let defects = vec!["orphan_result".to_string(); super::MAX_TURN_REPAIRS / 2 + 1];
        observation.add_repairs(defects);
    }
    assert_eq!(observation.base.repairs.len(), super::MAX_TURN_REPAIRS);
    drop(observation);
    recorder.shutdown().await;
}
