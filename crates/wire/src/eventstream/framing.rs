//! Event-stream frames as stream events: what [`crate::StreamParser`] uses
//! for Bedrock's ConverseStream and InvokeModelWithResponseStream.

use std::borrow::Cow;

use super::{Decoder, EventStreamError, Message, invoke_chunk};
use crate::text::leading_type;

/// What the frames carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carried {
    /// One event per frame, named by `:event-type`, its JSON the payload
    /// (ConverseStream).
    Events,
    /// `chunk` frames whose payload is `{"bytes":"<base64 event JSON>"}`
    /// (InvokeModelWithResponseStream): the event is named by its `type`.
    InvokeChunks,
}

/// Decodes frames and hands each event on; remembers the first exception
/// and the first framing error.
#[derive(Debug)]
pub(crate) struct EventStreamFramer {
    decoder: Decoder,
    carried: Carried,
    /// The first exception or error message the stream carried.
    pub exception: Option<String>,
    /// The first framing error (bad CRC, bad length, …).
    pub error: Option<EventStreamError>,
}

impl EventStreamFramer {
    pub(crate) fn new(carried: Carried) -> Self {
        EventStreamFramer {
            decoder: Decoder::new(),
            carried,
            exception: None,
            error: None,
        }
    }

    pub(crate) fn feed(&mut self, chunk: &[u8], on_event: &mut dyn FnMut(&[u8], &[u8])) {
        let EventStreamFramer {
            decoder,
            carried,
            exception,
            error,
        } = self;
        decoder.feed(chunk, &mut |next| match next {
            Ok(m) => Self::message(*carried, exception, m, on_event),
            Err(e) => {
                error.get_or_insert(e);
            }
        });
    }

    /// The bytes its buffer holds (its capacity).
    pub(crate) fn buffered(&self) -> usize {
        self.decoder.capacity()
    }

    /// A message cut in the middle, were the stream to end here.
    pub(crate) fn truncated(&self) -> Option<EventStreamError> {
        self.decoder.finish().err()
    }

    /// The stream ended: a message cut in the middle is a framing error.
    pub(crate) fn finish(&mut self) {
        if let Err(e) = self.decoder.finish() {
            self.error.get_or_insert(e);
        }
    }

    fn message(
        carried: Carried,
        exception: &mut Option<String>,
        m: Message<'_>,
        on_event: &mut dyn FnMut(&[u8], &[u8]),
    ) {
        match m.message_type_bytes() {
            Some(b"exception") => {
                let name = m.exception_type().unwrap_or("exception");
                exception.get_or_insert_with(|| describe(name, message_of(m.payload())));
            }
            Some(b"error") => {
                let name = m.error_code().unwrap_or("error");
                exception
                    .get_or_insert_with(|| describe(name, m.error_message().map(Cow::Borrowed)));
            }
            _ => {
                let event = m.event_type_bytes().unwrap_or_default();
                match carried {
                    Carried::Events => on_event(event, m.payload()),
                    Carried::InvokeChunks if event == b"chunk" => {
                        if let Some(json) = invoke_chunk(m.payload()) {
                            let name = event_name(&json);
                            on_event(name.as_bytes(), &json);
                        }
                    }
                    Carried::InvokeChunks => {}
                }
            }
        }
    }
}

fn describe(name: &str, message: Option<Cow<'_, str>>) -> String {
    match message {
        Some(m) => format!("{name}: {m}"),
        None => name.to_string(),
    }
}

/// `message` (or `Message`) of an exception's JSON payload.
fn message_of(payload: &[u8]) -> Option<Cow<'_, str>> {
    #[derive(serde::Deserialize)]
    struct Exception<'a> {
        #[serde(borrow, default, deserialize_with = "crate::splice::opt_cow")]
        message: Option<Cow<'a, str>>,
        #[serde(
            borrow,
            default,
            rename = "Message",
            deserialize_with = "crate::splice::opt_cow"
        )]
        message_upper: Option<Cow<'a, str>>,
    }
    let e: Exception<'_> = serde_json::from_slice(payload).ok()?;
    e.message.or(e.message_upper)
}

/// The `type` of an event's JSON: read without parsing in the compact form.
fn event_name(json: &[u8]) -> Cow<'_, str> {
    if let Some(t) = leading_type(json).and_then(|t| std::str::from_utf8(t).ok()) {
        return Cow::Borrowed(t);
    }
    #[derive(serde::Deserialize)]
    struct Typed<'a> {
        #[serde(
            borrow,
            default,
            rename = "type",
            deserialize_with = "crate::splice::opt_cow"
        )]
        kind: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Typed<'_>>(json)
        .ok()
        .and_then(|t| t.kind)
        .unwrap_or_default()
}
