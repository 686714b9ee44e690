//! The incremental stream parser: SSE bytes in, a [`ResponseView`] out.

use crate::{
    Dialect, ResponseView, anthropic, bedrock_converse,
    budget::Budget,
    eventstream::{
        EventStreamError,
        framing::{Carried, EventStreamFramer},
    },
    gemini,
    gemini::array::JsonArrayFramer,
    openai_chat, openai_responses,
    sse::{Dropped, SseFramer, names_type},
    text::{event_type, leading_type},
};

pub(crate) use crate::event_sink::EventSink;

#[derive(Debug, Clone)]
enum State {
    Chat(openai_chat::StreamState),
    Responses(openai_responses::StreamState),
    Anthropic(anthropic::StreamState),
    Gemini(gemini::StreamState),
    Converse(bedrock_converse::StreamState),
}

/// How the stream's bytes are cut into events.
#[derive(Debug)]
enum Framing {
    /// Server-sent events.
    Sse(SseFramer),
    /// A streamed JSON array of objects (Gemini without `alt=sse`).
    Array(JsonArrayFramer),
    /// Gemini: undecided until the first non-blank byte (`[` → array).
    Sniff,
    /// AWS event-stream frames (Bedrock).
    EventStream(EventStreamFramer),
    /// Not read further ([`StreamParser::stop`]): its buffers let go.
    Stopped,
}

impl Framing {
    fn feed(&mut self, mut chunk: &[u8], on_event: &mut dyn FnMut(&[u8], &[u8])) {
        if let Framing::Sniff = self {
            let Some(at) = chunk.iter().position(|b| !b.is_ascii_whitespace()) else {
                return;
            };
            chunk = &chunk[at..];
            *self = if chunk[0] == b'[' {
                Framing::Array(JsonArrayFramer::default())
            } else {
                Framing::Sse(SseFramer::default())
            };
        }
        match self {
            Framing::Sse(f) => f.feed(chunk, on_event),
            Framing::Array(f) => f.feed(chunk, on_event),
            Framing::EventStream(f) => f.feed(chunk, on_event),
            Framing::Sniff | Framing::Stopped => {}
        }
    }

    fn finish(&mut self, on_event: &mut dyn FnMut(&[u8], &[u8])) {
        match self {
            Framing::Sse(f) => f.finish(on_event),
            Framing::EventStream(f) => f.finish(),
            Framing::Array(_) | Framing::Sniff | Framing::Stopped => {}
        }
    }
}

/// Reassembles tool calls, model, usage and stop reason from a streamed
/// response fed in chunks split at arbitrary points. Memory grows with the
/// tool calls and their arguments, not with the stream's length; with
/// [`StreamParser::limit`] it is bounded too.
///
/// Gemini streams may be SSE (`?alt=sse`) or a streamed JSON array (the
/// default): the first non-blank byte decides (`[` → array).
///
/// [`StreamParser::is_complete`] tells whether the dialect's final event
/// has passed: Responses `response.completed` / `response.failed` /
/// `response.incomplete`, Anthropic `message_stop`, Chat `[DONE]` or the
/// chunk that gives the last open choice its `finish_reason` (with `n` >
/// 1 the choices stream interleaved and finish one by one), Gemini the
/// chunk that gives the last open candidate its `finishReason` (likewise
/// with `candidateCount` > 1) or a blocked prompt's `blockReason`,
/// Bedrock Converse `messageStop`. Told how many choices the request
/// asked for ([`StreamParser::choices`]), Chat and Gemini wait for each
/// of them, also one not named yet.
///
/// Bedrock streams are AWS event-stream frames, not SSE:
/// [`Dialect::BedrockConverse`] reads ConverseStream frames, and
/// [`StreamParser::bedrock_invoke`] reads InvokeModelWithResponseStream
/// frames (each `chunk` carrying one event of another dialect, Anthropic
/// Messages on Bedrock). An exception frame becomes the view's `error`; a
/// malformed frame stops the parse ([`StreamParser::framing_error`]).
#[derive(Debug)]
pub struct StreamParser {
    framer: Framing,
    state: State,
    complete: bool,
    /// The final event has passed, not counting choices or candidates the
    /// request asked for that were never named ([`Self::choices`]): a
    /// stream whose transport ends now ended whole, not early.
    whole: bool,
}

impl StreamParser {
    /// A parser for a stream in `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        let state = match dialect {
            Dialect::OpenAiChat => State::Chat(Default::default()),
            Dialect::OpenAiResponses => State::Responses(Default::default()),
            Dialect::Anthropic => State::Anthropic(Default::default()),
            Dialect::Gemini => State::Gemini(Default::default()),
            Dialect::BedrockConverse => State::Converse(Default::default()),
        };
        let framer = match dialect {
            Dialect::Gemini => Framing::Sniff,
            Dialect::BedrockConverse => {
                Framing::EventStream(EventStreamFramer::new(Carried::Events))
            }
            _ => Framing::Sse(SseFramer::default()),
        };
        StreamParser {
            framer,
            state,
            complete: false,
            whole: false,
        }
    }

    /// A parser for Bedrock's InvokeModelWithResponseStream: event-stream
    /// `chunk` frames whose payload `{"bytes":"<base64>"}` is one stream
    /// event of `dialect` (Anthropic Messages for Claude on Bedrock).
    /// [`Dialect::BedrockConverse`] gives the ConverseStream parser.
    pub fn bedrock_invoke(dialect: Dialect) -> Self {
        let mut parser = StreamParser::new(dialect);
        if dialect != Dialect::BedrockConverse {
            parser.framer = Framing::EventStream(EventStreamFramer::new(Carried::InvokeChunks));
        }
        parser
    }

    /// The dialect of the events it reads ([`Self::bedrock_invoke`]: the
    /// dialect its frames carry), the one a reply to the stream's calls
    /// is written in.
    pub fn dialect(&self) -> Dialect {
        match self.state {
            State::Chat(_) => Dialect::OpenAiChat,
            State::Responses(_) => Dialect::OpenAiResponses,
            State::Anthropic(_) => Dialect::Anthropic,
            State::Gemini(_) => Dialect::Gemini,
            State::Converse(_) => Dialect::BedrockConverse,
        }
    }

    /// Keep at most about `bytes` of calls and arguments (each call costs
    /// a little more than its id and name; see the `budget` module). Past
    /// it, no more argument text is kept and no new call is added; the
    /// events are still read (usage, stop reason, errors, completeness),
    /// and the view is marked [`ResponseView::truncated`]. Without it,
    /// nothing bounds what a stream whose arguments never end keeps.
    /// Where the cut falls depends only on the events, not on how the
    /// bytes were split.
    pub fn limit(mut self, bytes: usize) -> Self {
        *sink(&mut self.state).budget() = Budget::new(bytes);
        self
    }

    /// The request asked for `n` choices (Chat's `n`) or candidates
    /// (Gemini's `generationConfig.candidateCount`,
    /// [`crate::RequestView::choices`]). With more than one, the stream is
    /// complete only once choices `0..n` have all finished (or at Chat's
    /// `[DONE]`), so that a choice named first after the others finished
    /// still holds it open; and the response's calls are the first
    /// choice's, as Gemini's are candidate 0's (the client continues with
    /// one; the others are alternatives it never answers). A stream that
    /// ends with fewer choices than asked, each finished, ended whole.
    /// Other dialects have one answer per response.
    pub fn choices(mut self, n: u64) -> Self {
        match &mut self.state {
            State::Chat(s) => s.expect_choices(n),
            State::Gemini(s) => s.expect_candidates(n),
            State::Responses(_) | State::Anthropic(_) | State::Converse(_) => {}
        }
        self
    }

    /// The first malformed event-stream frame (bad CRC, bad length, bad
    /// header), or a frame cut short by the end of what was fed (asked
    /// once the stream is over: "cut at the end"), for Bedrock streams;
    /// `None` for SSE and well-formed streams.
    pub fn framing_error(&self) -> Option<EventStreamError> {
        match &self.framer {
            Framing::EventStream(f) => f.error.clone().or_else(|| f.truncated()),
            _ => None,
        }
    }

    /// Feed the next bytes of the stream.
    pub fn feed(&mut self, chunk: &[u8]) {
        let StreamParser {
            framer,
            state,
            complete,
            whole,
        } = self;
        framer.feed(chunk, &mut |event, data| {
            dispatch(state, event, data);
            if !*complete {
                *complete = is_final(state, event, data);
            }
            if !*whole {
                *whole = *complete || ended_whole(state);
            }
        });
        if let Framing::Sse(f) = framer {
            while let Some(dropped) = f.take_dropped() {
                if !*complete {
                    *complete = dropped_is_final(state, &dropped);
                }
                if !*whole {
                    *whole = *complete || (dropped_ends_a_choice(&dropped) && ended_whole(state));
                }
            }
        }
    }

    /// About how many bytes the parse holds: the event its framing is
    /// reading (its buffers' capacity) and the calls and arguments it has
    /// kept (as [`Self::limit`] counts them). It grows as the stream is
    /// fed, up to the framing's cap on one event and the limit, so a
    /// caller bounding the parses held at once can check it after each
    /// feed.
    pub fn footprint(&self) -> usize {
        let buffered = match &self.framer {
            Framing::Sse(f) => f.buffered(),
            Framing::Array(f) => f.buffered(),
            Framing::Sniff | Framing::Stopped => 0,
            Framing::EventStream(f) => f.buffered(),
        };
        buffered.saturating_add(sink_ref(&self.state).kept())
    }

    /// Stops reading the stream: the event its framing was reading is let
    /// go with its buffers, and later feeds are ignored; what it kept stays
    /// ([`Self::view_so_far`], [`Self::finish`], which read it as ended
    /// early unless its final event had passed). For a caller that will not
    /// read the rest (the parses held at once have no room left): the
    /// parse then holds only what it kept, [`Self::footprint`] says how
    /// much.
    pub fn stop(&mut self) {
        self.framer = Framing::Stopped;
    }

    /// Whether the dialect's final event has been fed: the response is
    /// complete even if its transport has not ended yet.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// How many of the calls so far, from the first, are whole before the
    /// stream ends: a Responses call once its arguments are final (its
    /// `response.function_call_arguments.done` or `output_item.done`),
    /// which a client may answer while the response goes on (the
    /// WebSocket beta's `response.inject`). The calls of
    /// [`Self::view_so_far`] up to that count keep their place and
    /// content whatever follows. 0 for the other dialects, whose calls are
    /// answered once their response has ended.
    pub fn whole_calls(&self) -> usize {
        match &self.state {
            State::Responses(s) => s.whole_calls(),
            _ => 0,
        }
    }

    /// The id of every call the stream has begun so far, whole or not
    /// (Responses: a client may answer them before the response ends, the
    /// WebSocket beta's `response.inject`); `None` for the other dialects,
    /// and when the parse may have missed one: its [`Self::limit`] cut
    /// something off, an event was dropped for its size, or it was
    /// [stopped](Self::stop).
    pub fn begun_calls(&self) -> Option<impl Iterator<Item = &str>> {
        let State::Responses(s) = &self.state else {
            return None;
        };
        let dropped = match &self.framer {
            Framing::Sse(f) => f.oversized() > 0,
            Framing::Stopped => true,
            Framing::Array(_) | Framing::Sniff | Framing::EventStream(_) => false,
        };
        if dropped {
            return None;
        }
        s.call_ids()
    }

    /// The response's id, once an event has named it (Responses:
    /// `response.created`); `None` for the other dialects before the end.
    pub fn response_id(&self) -> Option<&str> {
        match &self.state {
            State::Responses(s) => s.id(),
            _ => None,
        }
    }

    /// Whether the final event has passed ([`Self::is_complete`]) while
    /// the dialect still sends what follows it: a Chat stream's chunk with
    /// the usage (`stream_options.include_usage`: a chunk after the last
    /// `finish_reason`) until `data: [DONE]`, a Bedrock ConverseStream's
    /// `metadata` event (its usage, after `messageStop`). Anthropic's usage
    /// comes before `message_stop` (`message_delta`), the Responses API's
    /// in its final event, Gemini's with each chunk: none of them has a
    /// trailer. A client that leaves in between would take the usage with
    /// it unless the stream is read on.
    pub fn trailer_pending(&self) -> bool {
        self.complete
            && match &self.state {
                State::Chat(s) => s.trailer_pending(),
                State::Converse(s) => s.trailer_pending(),
                State::Responses(_) | State::Anthropic(_) | State::Gemini(_) => false,
            }
    }

    /// What the stream has held so far, as [`Self::finish`] would give
    /// it if the stream ended now (without the framing's own notes: an
    /// event cut at the end, an oversized one), the parse going on: the
    /// calls of a stream whose final event has passed
    /// ([`Self::is_complete`]) while its transport has not ended. Costs a
    /// copy of the state (its calls and their arguments, bounded by
    /// [`Self::limit`]).
    pub fn view_so_far(&self) -> ResponseView {
        let mut view = match self.state.clone() {
            State::Chat(s) => s.finish(),
            State::Responses(s) => s.finish(),
            State::Anthropic(s) => s.finish(),
            State::Gemini(s) => s.finish(),
            State::Converse(s) => s.finish(),
        };
        view.ended_early = !self.whole;
        view
    }

    /// The stream ended: what it held.
    pub fn finish(mut self) -> ResponseView {
        let StreamParser {
            framer,
            state,
            complete,
            whole,
        } = &mut self;
        // The last event may end without its blank line: the transport's
        // end ends it, but only a whole one (its data whole JSON) can end
        // the response; `event: response.completed` with its data cut is
        // a stream cut short.
        framer.finish(&mut |event, data| {
            dispatch(state, event, data);
            let last = is_final(state, event, data);
            let named = ended_whole(state);
            if (last || named) && is_whole(data) {
                *complete |= last;
                *whole = true;
            }
        });
        // Fewer choices than the request asked for, each finished: the
        // server gave no more, and the stream ended whole.
        let ended_early = !self.whole;
        // An event dropped for its size may have held calls or arguments.
        let dropped = matches!(&self.framer, Framing::Sse(f) if f.oversized() > 0);
        let mut view = match self.state {
            State::Chat(s) => s.finish(),
            State::Responses(s) => s.finish(),
            State::Anthropic(s) => s.finish(),
            State::Gemini(s) => s.finish(),
            State::Converse(s) => s.finish(),
        };
        if let (None, Framing::EventStream(f)) = (&view.error, &mut self.framer) {
            view.error = f
                .exception
                .take()
                .or_else(|| f.error.as_ref().map(ToString::to_string));
        }
        view.ended_early = ended_early;
        view.truncated |= dropped;
        view
    }
}

/// The events that end a Responses stream.
const RESPONSES_FINALS: &[&[u8]] = &[
    b"response.completed",
    b"response.failed",
    b"response.incomplete",
];

/// The event that ends an Anthropic stream.
const ANTHROPIC_FINALS: &[&[u8]] = &[b"message_stop"];

/// Whether this event, just read, ends the response in its dialect (see
/// [`StreamParser`]).
fn is_final(state: &State, event: &[u8], data: &[u8]) -> bool {
    let find = |needle: &[u8]| memchr::memmem::find(data, needle).is_some();
    // Named by the `event:` line, else by the data's `type` wherever it
    // sits, as the dialect's state reads it (parsed only when a final
    // name is in the data at all).
    let named = |finals: &[&[u8]]| {
        let kind = if !event.is_empty() {
            Some(event)
        } else if let Some(kind) = leading_type(data) {
            Some(kind)
        } else if finals.iter().any(|f| find(f)) {
            event_type(data)
        } else {
            None
        };
        kind.is_some_and(|k| finals.contains(&k))
    };
    match state {
        State::Responses(_) => named(RESPONSES_FINALS),
        State::Anthropic(_) => named(ANTHROPIC_FINALS),
        State::Chat(s) => data == b"[DONE]" || s.all_choices_finished(),
        // Every candidate begun has finished (with `candidateCount` > 1
        // they finish one by one), or the prompt was blocked.
        State::Gemini(s) => s.is_whole(),
        State::Converse(_) => event == b"messageStop",
    }
}

/// Whether every choice (Chat) or candidate (Gemini) named has finished,
/// however many the request asked for ([`StreamParser::choices`]): a
/// stream whose transport ends then gave fewer than asked and ended
/// whole.
fn ended_whole(state: &State) -> bool {
    match state {
        State::Chat(s) => s.all_named_choices_finished(),
        State::Gemini(s) => s.is_whole_at_end(),
        State::Responses(_) | State::Anthropic(_) | State::Converse(_) => false,
    }
}

/// Whether an event dropped for its size ([`Dropped`]) was the dialect's
/// final event, as far as what it left tells: its `event:` name, else a
/// `type` key in the start or the end of its data (OpenAI's own models
/// write `type` last); Gemini's `finishReason` and Chat's `finish_reason`
/// come after the parts that made the chunk large (one ends the response
/// only if it can have been the last open choice's or candidate's). A Responses
/// stream whose generated images make `response.completed` larger than
/// the cap ended whole.
fn dropped_is_final(state: &mut State, dropped: &Dropped) -> bool {
    let named = |finals: &[&[u8]]| {
        if dropped.event.is_empty() {
            names_type(&dropped.head, finals) || names_type(&dropped.tail, finals)
        } else {
            finals.contains(&dropped.event.as_slice())
        }
    };
    let find = |needle: &[u8]| memchr::memmem::find(&dropped.tail, needle).is_some();
    match state {
        State::Responses(_) => named(RESPONSES_FINALS),
        State::Anthropic(_) => named(ANTHROPIC_FINALS),
        State::Chat(s) => names_a_finish_reason(&dropped.tail) && s.finished_unread(),
        State::Gemini(s) => {
            find(b"\"blockReason\"") || (find(b"\"finishReason\"") && s.finished_unread())
        }
        State::Converse(_) => false,
    }
}

/// Whether an event dropped for its size named a choice's or a
/// candidate's finish (or a blocked prompt).
fn dropped_ends_a_choice(dropped: &Dropped) -> bool {
    let find = |needle: &[u8]| memchr::memmem::find(&dropped.tail, needle).is_some();
    names_a_finish_reason(&dropped.tail) || find(b"\"finishReason\"") || find(b"\"blockReason\"")
}

/// Whether a Chat chunk names a `finish_reason`: a non-empty string.
/// Some OpenAI-compatible servers (older Ollama, SGLang, some GLM routes)
/// send `"finish_reason": ""` in every chunk, which ends nothing.
fn names_a_finish_reason(data: &[u8]) -> bool {
    const KEY: &[u8] = b"\"finish_reason\"";
    memchr::memmem::find_iter(data, KEY).any(|at| {
        let mut rest = &data[at + KEY.len()..];
        while let [b' ' | b'\t' | b'\r' | b'\n' | b':', tail @ ..] = rest {
            rest = tail;
        }
        matches!(rest, [b'"', next, ..] if *next != b'"')
    })
}

/// Whether an event's data is whole: `[DONE]` or one JSON value.
fn is_whole(data: &[u8]) -> bool {
    data == b"[DONE]" || serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok()
}

/// The dialect's state, for what every state has.
fn sink(state: &mut State) -> &mut dyn EventSink {
    match state {
        State::Chat(s) => s,
        State::Responses(s) => s,
        State::Anthropic(s) => s,
        State::Gemini(s) => s,
        State::Converse(s) => s,
    }
}

fn sink_ref(state: &State) -> &dyn EventSink {
    match state {
        State::Chat(s) => s,
        State::Responses(s) => s,
        State::Anthropic(s) => s,
        State::Gemini(s) => s,
        State::Converse(s) => s,
    }
}

fn dispatch(state: &mut State, event: &[u8], data: &[u8]) {
    match state {
        State::Chat(s) => s.on_event(event, data),
        State::Responses(s) => s.on_event(event, data),
        State::Anthropic(s) => s.on_event(event, data),
        State::Gemini(s) => s.on_event(event, data),
        State::Converse(s) => s.on_event(event, data),
    }
}

#[cfg(test)]
#[path = "stream_budget_tests.rs"]
mod budget_tests;

#[cfg(test)]
#[path = "stream_trailer_tests.rs"]
mod trailer_tests;

#[cfg(test)]
mod completeness_tests {
    use super::*;

    fn complete_after(dialect: Dialect, stream: &[u8]) -> Vec<bool> {
        let mut parser = StreamParser::new(dialect);
        stream
            .split_inclusive(|&b| b == b'\n')
            .map(|line| {
                parser.feed(line);
                parser.is_complete()
            })
            .collect()
    }

    #[test]
    fn a_parser_names_the_dialect_its_events_are_in() {
        for dialect in [
            Dialect::Anthropic,
            Dialect::OpenAiChat,
            Dialect::OpenAiResponses,
            Dialect::Gemini,
            Dialect::BedrockConverse,
        ] {
            assert_eq!(StreamParser::new(dialect).dialect(), dialect);
            assert_eq!(StreamParser::bedrock_invoke(dialect).dialect(), dialect);
        }
    }

    /// A final event larger than the SSE event cap (a `response.completed`
    /// holding several generated images, a Gemini chunk with a large
    /// image) is dropped, but the stream ended whole: it is known by its
    /// name, or by the `type` or `finishReason` in its start or end. The
    /// calls read before it stand, marked as possibly incomplete. An
    /// oversized event the transport cut off ends nothing.
    #[test]
    fn a_final_event_over_the_cap_still_ends_the_stream() {
        let image = "A".repeat(crate::sse::DEFAULT_MAX_EVENT + 1);
        let call = r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"ls","arguments":"{}","status":"completed"}"#;
        let done = format!(
            "data: {{\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{call}}}\n\n"
        );
        let output = format!(
            r#"[{call},{{"type":"image_generation_call","id":"ig_1","status":"completed","result":"{image}"}}]"#
        );
        let response = format!(r#"{{"id":"resp_1","status":"completed","output":{output}}}"#);
        let gemini_chunk = format!(
            r#"{{"candidates": [{{"content": {{"parts": [{{"functionCall": {{"name": "ls", "args": {{}}}}}}, {{"inlineData": {{"mimeType": "image/png", "data": "{image}"}}}}], "role": "model"}}, "finishReason": "STOP", "index": 0}}], "usageMetadata": {{"promptTokenCount": 8, "candidatesTokenCount": 1290, "totalTokenCount": 1298, "promptTokensDetails": [{{"modality": "TEXT", "tokenCount": 8}}], "candidatesTokensDetails": [{{"modality": "IMAGE", "tokenCount": 1290}}]}}, "modelVersion": "gemini-2.5-flash-image", "responseId": "abc"}}"#
        );
        let cases = [
            (
                "named by its event line",
                Dialect::OpenAiResponses,
                format!(
                    "{done}event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{response}}}\n\n"
                ),
                1,
            ),
            (
                "type first",
                Dialect::OpenAiResponses,
                format!(
                    "{done}data: {{\"type\":\"response.completed\",\"sequence_number\":3,\"response\":{response}}}\n\n"
                ),
                1,
            ),
            (
                "type last",
                Dialect::OpenAiResponses,
                format!(
                    "{done}data: {{\"response\":{response},\"sequence_number\":3,\"type\":\"response.completed\"}}\n\n"
                ),
                1,
            ),
            (
                "a Gemini chunk",
                Dialect::Gemini,
                format!("data: {gemini_chunk}\r\n\r\n"),
                0,
            ),
        ];
        for (what, dialect, stream, calls) in cases {
            for piece in [1 << 16, 7 << 20] {
                let mut parser = StreamParser::new(dialect);
                for chunk in stream.as_bytes().chunks(piece) {
                    parser.feed(chunk);
                }
                assert!(parser.is_complete(), "{what}, pieces of {piece}");
                let view = parser.finish();
                assert!(!view.ended_early, "{what}");
                assert!(view.truncated, "{what}: the calls may be incomplete");
                assert_eq!(view.calls.len(), calls, "{what}");
            }
            // The same stream cut inside the oversized event.
            let cut = &stream.as_bytes()[..stream.len() - 40];
            let mut parser = StreamParser::new(dialect);
            parser.feed(cut);
            let view = parser.finish();
            assert!(view.ended_early, "{what}, cut");
        }
        // A large event that is not a final one ends nothing.
        let delta = format!(
            "{done}data: {{\"type\":\"response.image_generation_call.partial_image\",\"partial_image_b64\":\"{image}\"}}\n\n"
        );
        let mut parser = StreamParser::new(Dialect::OpenAiResponses);
        parser.feed(delta.as_bytes());
        assert!(!parser.is_complete());
        assert!(parser.finish().ended_early);
    }

    /// A Gemini chunk larger than the event cap that names a
    /// `finishReason` (a candidate's last piece carrying a generated
    /// image) is not read: it ends the stream when it can only have
    /// finished the one open candidate; with two candidates open
    /// (`candidateCount` > 1), which one it finished is unknown, and the
    /// stream is complete only once the other's finish is read, then never
    /// (it ends early).
    #[test]
    fn an_unread_gemini_finish_ends_only_a_lone_open_candidate() {
        let big = "A".repeat(crate::sse::DEFAULT_MAX_EVENT + 1);
        let first = |index: &str| {
            format!(
                "data: {{\"candidates\":[{{\"content\":{{\"role\":\"model\",\"parts\":[{{\"text\":\"a\"}}]}}{index}}}]}}\n\n"
            )
        };
        let huge = format!(
            "data: {{\"candidates\":[{{\"content\":{{\"parts\":[{{\"inlineData\":{{\"mimeType\":\"image/png\",\"data\":\"{big}\"}}}}]}},\"finishReason\":\"STOP\"}}]}}\n\n"
        );
        let finish1 = "data: {\"candidates\":[{\"content\":{\"parts\":[]},\"finishReason\":\"STOP\",\"index\":1}]}\n\n";
        let mut one = StreamParser::new(Dialect::Gemini);
        one.feed(first("").as_bytes());
        one.feed(huge.as_bytes());
        assert!(one.is_complete(), "the one candidate's unread finish");
        let mut two = StreamParser::new(Dialect::Gemini);
        two.feed(first("").as_bytes());
        two.feed(first(",\"index\":1").as_bytes());
        two.feed(huge.as_bytes());
        assert!(!two.is_complete(), "either candidate may have finished");
        two.feed(finish1.as_bytes());
        assert!(!two.is_complete(), "candidate 0's finish was not read");
        assert!(two.finish().ended_early);
    }

    /// A Chat chunk larger than the event cap that names a `finish_reason`
    /// (a final delta carrying a huge argument piece) is not read: it ends
    /// the stream when it can only have finished the one open choice;
    /// with two choices open, which one it finished is unknown, and the
    /// stream ends at `[DONE]`.
    #[test]
    fn an_unread_chat_finish_ends_only_a_lone_open_choice() {
        let big = "A".repeat(crate::sse::DEFAULT_MAX_EVENT + 1);
        let role = |choice: u64| {
            format!(
                "data: {{\"id\":\"c\",\"model\":\"m\",\"choices\":[{{\"index\":{choice},\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n"
            )
        };
        let huge = format!(
            "data: {{\"id\":\"c\",\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{big}\"}},\"finish_reason\":\"stop\"}}]}}\n\n"
        );
        let finish1 = "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
        let mut one = StreamParser::new(Dialect::OpenAiChat);
        one.feed(role(0).as_bytes());
        one.feed(huge.as_bytes());
        assert!(one.is_complete(), "the one choice's unread finish");
        let mut two = StreamParser::new(Dialect::OpenAiChat);
        two.feed(role(0).as_bytes());
        two.feed(role(1).as_bytes());
        two.feed(huge.as_bytes());
        assert!(!two.is_complete(), "either choice may have finished");
        two.feed(finish1.as_bytes());
        assert!(!two.is_complete(), "choice 0's finish was not read");
        two.feed(b"data: [DONE]\n\n");
        assert!(two.is_complete());
    }

    /// An empty `finish_reason` (sent in every chunk by some
    /// OpenAI-compatible servers) ends nothing: such a stream cut short was
    /// taken as complete from its first chunk. A real one ends it, however
    /// the server spaces its JSON.
    #[test]
    fn an_empty_chat_finish_reason_ends_nothing() {
        let cut = b"data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"pa\"}}]},\"finish_reason\":\"\"}]}\n\n";
        let mut parser = StreamParser::new(Dialect::OpenAiChat);
        parser.feed(cut);
        assert!(!parser.is_complete());
        let view = parser.finish();
        assert!(view.ended_early);
        assert_eq!(view.stop_reason, None);
        assert_eq!(view.calls.len(), 1);
        for last in [
            &b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\" : \"tool_calls\"}]}\n\n"[..],
            b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        ] {
            let mut parser = StreamParser::new(Dialect::OpenAiChat);
            parser.feed(cut);
            parser.feed(last);
            assert!(parser.is_complete());
            assert!(parser.finish().stop_reason.is_some_and(|r| !r.is_empty()));
        }
    }

    /// Without `event:` lines, a final event is known by its data's
    /// `type` wherever the server put it (pydantic models, as OpenAI's own
    /// SDK types dump them, write `type` last): the state read such
    /// events, but the stream was taken to have ended before its final
    /// event, and every such response was recorded as cut short.
    #[test]
    fn a_final_event_is_known_by_its_type_in_any_key_order() {
        let cases: [(Dialect, &[u8]); 3] = [
            (
                Dialect::OpenAiResponses,
                b"data: {\"response\":{\"id\":\"r\",\"status\":\"completed\"},\"sequence_number\":9,\"type\":\"response.completed\"}\n\n",
            ),
            (
                Dialect::OpenAiResponses,
                b"data: { \"type\": \"response.incomplete\", \"response\": {\"id\": \"r\"} }\n\n",
            ),
            (Dialect::Anthropic, b"data: {\"type\" : \"message_stop\"}\n\n"),
        ];
        for (dialect, stream) in cases {
            let mut parser = StreamParser::new(dialect);
            parser.feed(stream);
            assert!(parser.is_complete(), "{dialect:?}");
            assert!(!parser.finish().ended_early, "{dialect:?}");
        }
        // A final name elsewhere in the data (a call's arguments, an
        // event's own text) does not end the response.
        let mut parser = StreamParser::new(Dialect::OpenAiResponses);
        parser.feed(
            b"data: {\"delta\":\"response.completed\",\"type\":\"response.output_text.delta\"}\n\n",
        );
        assert!(!parser.is_complete());
    }

    #[test]
    fn each_dialect_is_complete_after_its_final_event_only() {
        let cases: [(Dialect, &[u8]); 7] = [
            (
                Dialect::OpenAiResponses,
                b"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\"}}\n\n",
            ),
            (
                Dialect::Anthropic,
                b"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            ),
            (
                Dialect::OpenAiChat,
                b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            ),
            (Dialect::OpenAiChat, b"data: {\"choices\":[]}\n\ndata: [DONE]\n\n"),
            (
                Dialect::Gemini,
                b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[]},\"finishReason\":\"STOP\"}]}\n\n",
            ),
            (
                Dialect::Gemini,
                b"data: {\"usageMetadata\":{\"promptTokenCount\":3}}\n\ndata: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\n",
            ),
            // A call's argument named `finishReason` ends nothing.
            (
                Dialect::Gemini,
                b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{\"finishReason\":\"STOP\",\"blockReason\":\"x\"}}}]}}]}\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[]},\"finishReason\":\"STOP\"}]}\n\n",
            ),
        ];
        for (dialect, stream) in cases {
            let seen = complete_after(dialect, stream);
            // Complete exactly from the blank line that ends the final event.
            let first = seen.iter().position(|&c| c);
            assert_eq!(first, Some(seen.len() - 1), "{dialect:?}: {seen:?}");
            // The whole stream: not ended early. Without its final event,
            // or with it but no blank line after it (the transport's end
            // ends the event): ended early, then not.
            let ended_early = |bytes: &[u8]| {
                let mut parser = StreamParser::new(dialect);
                parser.feed(bytes);
                parser.finish().ended_early
            };
            assert!(!ended_early(stream), "{dialect:?}");
            let last = stream[..stream.len() - 2]
                .windows(2)
                .rposition(|w| w == b"\n\n")
                .unwrap()
                + 2;
            assert!(ended_early(&stream[..last]), "{dialect:?}");
            assert!(
                !ended_early(&stream[..stream.len() - 2]),
                "{dialect:?}: a final event without its blank line"
            );
            // The final event with its data cut: ended early, even where
            // the event's name alone says final.
            assert!(
                ended_early(&stream[..stream.len() - 4]),
                "{dialect:?}: a final event cut short"
            );
        }
    }
}
