//! The Messages stream: `message_start`, `content_block_start` /
//! `content_block_delta` (`input_json_delta`) / `content_block_stop`,
//! `message_delta`, `error`.
//!
//! Each event is classified from its `event:` name (or the leading
//! `"type"` of its data) and skipped before any JSON parsing when it cannot
//! matter: text and thinking deltas, pings, deltas while no tool block is
//! open. Only tool-call arguments are kept, so memory is bounded by them.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use toolwarden_core::ToolCall;

use super::{
    model::{BlockClass, classify},
    response::{ApiError, WireUsage},
};
use crate::{ResponseView, Usage, stream::EventSink, text::leading_type};

/// Stream state for Anthropic Messages.
#[derive(Debug, Default)]
pub struct StreamState {
    id: Option<String>,
    model: Option<String>,
    usage: Usage,
    stop_reason: Option<String>,
    error: Option<String>,
    calls: Vec<Pending>,
    /// Positions in `calls` of the tool blocks not yet stopped.
    open: Vec<usize>,
}

#[derive(Debug)]
struct Pending {
    index: u64,
    id: String,
    name: String,
    initial: String,
    args: String,
}

#[derive(Deserialize)]
struct Typed<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Start<'a> {
    index: u64,
    #[serde(borrow)]
    content_block: StartBlock<'a>,
}

#[derive(Deserialize)]
struct StartBlock<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    index: u64,
    #[serde(borrow)]
    delta: JsonDelta<'a>,
}

#[derive(Deserialize)]
struct JsonDelta<'a> {
    #[serde(borrow, default)]
    partial_json: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Stop {
    index: u64,
}

#[derive(Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow)]
    message: StartMessage<'a>,
}

#[derive(Deserialize)]
struct StartMessage<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct MessageDelta<'a> {
    #[serde(borrow, default)]
    delta: Option<StopDelta<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct StopDelta<'a> {
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorEvent<'a> {
    #[serde(borrow)]
    error: ApiError<'a>,
}

impl StreamState {
    fn dispatch(&mut self, kind: &[u8], data: &[u8]) {
        match kind {
            b"content_block_delta" => {
                if self.open.is_empty() || memchr::memmem::find(data, b"input_json_delta").is_none()
                {
                    return;
                }
                let Ok(d) = serde_json::from_slice::<Delta<'_>>(data) else {
                    return;
                };
                if let (Some(at), Some(part)) = (self.pending(d.index), d.delta.partial_json) {
                    self.calls[at].args.push_str(&part);
                }
            }
            b"content_block_start" => {
                if memchr::memmem::find(data, b"tool_use\"").is_none() {
                    return;
                }
                let Ok(s) = serde_json::from_slice::<Start<'_>>(data) else {
                    return;
                };
                let b = s.content_block;
                if matches!(classify(&b.kind), BlockClass::Call | BlockClass::ServerCall) {
                    self.open.push(self.calls.len());
                    self.calls.push(Pending {
                        index: s.index,
                        id: b.id.unwrap_or_default().into_owned(),
                        name: b.name.unwrap_or_default().into_owned(),
                        initial: b.input.map_or_else(|| "{}".into(), |r| r.get().to_string()),
                        args: String::new(),
                    });
                }
            }
            b"content_block_stop" => {
                if self.open.is_empty() {
                    return;
                }
                if let Ok(s) = serde_json::from_slice::<Stop>(data) {
                    self.open.retain(|&at| self.calls[at].index != s.index);
                }
            }
            b"message_start" => {
                if let Ok(m) = serde_json::from_slice::<MessageStart<'_>>(data) {
                    let m = m.message;
                    self.id = m.id.map(Cow::into_owned);
                    self.model = m.model.map(Cow::into_owned);
                    if let Some(u) = m.usage {
                        self.add_usage(u);
                    }
                }
            }
            b"message_delta" => {
                if let Ok(m) = serde_json::from_slice::<MessageDelta<'_>>(data) {
                    if let Some(r) = m.delta.and_then(|d| d.stop_reason) {
                        self.stop_reason = Some(r.into_owned());
                    }
                    if let Some(u) = m.usage {
                        self.add_usage(u);
                    }
                }
            }
            b"error" => {
                let error = serde_json::from_slice::<ErrorEvent<'_>>(data)
                    .map(|e| e.error.describe())
                    .unwrap_or_else(|_| String::from_utf8_lossy(data).into_owned());
                self.error = Some(error);
            }
            _ => {}
        }
    }

    /// The position in `calls` of the open tool block at `index`.
    fn pending(&self, index: u64) -> Option<usize> {
        self.open
            .iter()
            .rev()
            .copied()
            .find(|&at| self.calls[at].index == index)
    }

    /// `message_delta` usage is cumulative: the latest value wins.
    fn add_usage(&mut self, u: WireUsage) {
        if u.input_tokens.is_some() {
            self.usage.input_tokens = u.input_tokens;
        }
        if u.output_tokens.is_some() {
            self.usage.output_tokens = u.output_tokens;
        }
    }
}

impl EventSink for StreamState {
    fn on_event(&mut self, event: &[u8], data: &[u8]) {
        if !event.is_empty() {
            return self.dispatch(event, data);
        }
        if let Some(kind) = leading_type(data) {
            return self.dispatch(kind, data);
        }
        if let Ok(t) = serde_json::from_slice::<Typed<'_>>(data) {
            self.dispatch(t.kind.as_bytes(), data);
        }
    }

    fn finish(self) -> ResponseView {
        let mut calls = self.calls;
        calls.sort_by_key(|p| p.index);
        ResponseView {
            id: self.id,
            model: self.model,
            calls: calls
                .into_iter()
                .map(|p| ToolCall {
                    id: p.id,
                    name: p.name,
                    arguments: if p.args.is_empty() { p.initial } else { p.args },
                })
                .collect(),
            usage: self.usage,
            stop_reason: self.stop_reason,
            error: self.error,
        }
    }
}
