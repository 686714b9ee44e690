//! The incremental stream parser: SSE bytes in, a [`ResponseView`] out.

use crate::{
    Dialect, ResponseView, anthropic, gemini, gemini::array::JsonArrayFramer, openai_chat,
    openai_responses, sse::SseFramer,
};

/// What each dialect's stream state implements: one call per SSE event.
pub(crate) trait EventSink {
    /// One complete SSE event: its `event:` name (may be empty) and data.
    fn on_event(&mut self, event: &[u8], data: &[u8]);
    /// The stream ended (or broke): what was seen.
    fn finish(self) -> ResponseView;
}

#[derive(Debug)]
enum State {
    Chat(openai_chat::StreamState),
    Responses(openai_responses::StreamState),
    Anthropic(anthropic::StreamState),
    Gemini(gemini::StreamState),
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
            Framing::Sniff => {}
        }
    }

    fn finish(&mut self, on_event: &mut dyn FnMut(&[u8], &[u8])) {
        if let Framing::Sse(f) = self {
            f.finish(on_event)
        }
    }
}

/// Reassembles tool calls, model, usage and stop reason from a streamed
/// response fed in chunks split at arbitrary points. Memory is bounded by
/// the tool calls' arguments, not by the stream's length.
///
/// Gemini streams may be SSE (`?alt=sse`) or a streamed JSON array (the
/// default): the first non-blank byte decides (`[` → array).
#[derive(Debug)]
pub struct StreamParser {
    framer: Framing,
    state: State,
}

impl StreamParser {
    /// A parser for a stream in `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        let state = match dialect {
            Dialect::OpenAiChat => State::Chat(Default::default()),
            Dialect::OpenAiResponses => State::Responses(Default::default()),
            Dialect::Anthropic => State::Anthropic(Default::default()),
            Dialect::Gemini => State::Gemini(Default::default()),
        };
        let framer = match dialect {
            Dialect::Gemini => Framing::Sniff,
            _ => Framing::Sse(SseFramer::default()),
        };
        StreamParser { framer, state }
    }

    /// Feed the next bytes of the stream.
    pub fn feed(&mut self, chunk: &[u8]) {
        let StreamParser { framer, state } = self;
        framer.feed(chunk, &mut |event, data| dispatch(state, event, data));
    }

    /// The stream ended: what it held.
    pub fn finish(mut self) -> ResponseView {
        let StreamParser { framer, state } = &mut self;
        framer.finish(&mut |event, data| dispatch(state, event, data));
        match self.state {
            State::Chat(s) => s.finish(),
            State::Responses(s) => s.finish(),
            State::Anthropic(s) => s.finish(),
            State::Gemini(s) => s.finish(),
        }
    }
}

fn dispatch(state: &mut State, event: &[u8], data: &[u8]) {
    match state {
        State::Chat(s) => s.on_event(event, data),
        State::Responses(s) => s.on_event(event, data),
        State::Anthropic(s) => s.on_event(event, data),
        State::Gemini(s) => s.on_event(event, data),
    }
}
