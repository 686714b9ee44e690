//! The incremental stream parser: SSE bytes in, a [`ResponseView`] out.

use crate::{
    Dialect, ResponseView, anthropic, gemini, openai_chat, openai_responses, sse::SseFramer,
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

/// Reassembles tool calls, model, usage and stop reason from a streamed
/// response fed in chunks split at arbitrary points. Memory is bounded by
/// the tool calls' arguments, not by the stream's length.
#[derive(Debug)]
pub struct StreamParser {
    framer: SseFramer,
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
        StreamParser {
            framer: SseFramer::default(),
            state,
        }
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
