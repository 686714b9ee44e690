//! The ConverseStream events, one per event-stream message (framed by
//! [`crate::eventstream`]): `messageStart`, `contentBlockStart`
//! (`start.toolUse{toolUseId,name}`), `contentBlockDelta` (`delta.text`,
//! `delta.toolUse.input` string pieces, `delta.reasoningContent`),
//! `contentBlockStop`, `messageStop` (`stopReason`), `metadata` (`usage`).
//! Exceptions (`:message-type exception`) are read by the framing
//! (`crate::stream`), the same way for every dialect carried in event-stream
//! frames.
//!
//! Text and reasoning deltas — nearly every event of a stream — are skipped
//! without JSON parsing: a delta is parsed only when it has a `toolUse`.
//! Only tool-call arguments are kept, so memory is bounded by them.

use std::borrow::Cow;

use serde::Deserialize;
use toolwarden_core::ToolCall;

use super::response::WireUsage;
use crate::{ResponseView, event_sink::EventSink, seed::Needle, splice::opt_cow};

static TOOL_USE: Needle = Needle::new("\"toolUse\"");

/// The stream's state.
#[derive(Debug, Default)]
pub struct StreamState {
    /// Tool blocks by `contentBlockIndex`, in start order.
    calls: Vec<(u64, ToolCall)>,
    view: ResponseView,
}

#[derive(Deserialize)]
struct Start<'a> {
    #[serde(default, rename = "contentBlockIndex")]
    index: u64,
    #[serde(borrow, default)]
    start: Option<StartBody<'a>>,
}

#[derive(Deserialize)]
struct StartBody<'a> {
    #[serde(borrow, default, rename = "toolUse")]
    tool_use: Option<StartToolUse<'a>>,
}

#[derive(Deserialize)]
struct StartToolUse<'a> {
    #[serde(borrow, default, rename = "toolUseId", deserialize_with = "opt_cow")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    name: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, rename = "contentBlockIndex")]
    index: u64,
    #[serde(borrow, default)]
    delta: Option<DeltaBody<'a>>,
}

#[derive(Deserialize)]
struct DeltaBody<'a> {
    #[serde(borrow, default, rename = "toolUse")]
    tool_use: Option<DeltaToolUse<'a>>,
}

#[derive(Deserialize)]
struct DeltaToolUse<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    input: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Stop<'a> {
    #[serde(borrow, default, rename = "stopReason", deserialize_with = "opt_cow")]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    usage: Option<WireUsage>,
}

impl StreamState {
    fn call(&mut self, index: u64) -> Option<&mut ToolCall> {
        self.calls
            .iter_mut()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, c)| c)
    }
}

impl EventSink for StreamState {
    fn on_event(&mut self, event: &[u8], data: &[u8]) {
        match event {
            b"contentBlockDelta" => {
                if !TOOL_USE.in_(data) {
                    return;
                }
                let Ok(d) = serde_json::from_slice::<Delta<'_>>(data) else {
                    return;
                };
                let piece = d.delta.and_then(|d| d.tool_use).and_then(|t| t.input);
                if let (Some(piece), Some(call)) = (piece, self.call(d.index)) {
                    call.arguments.push_str(&piece);
                }
            }
            b"contentBlockStart" => {
                let Ok(s) = serde_json::from_slice::<Start<'_>>(data) else {
                    return;
                };
                if let Some(t) = s.start.and_then(|s| s.tool_use) {
                    self.calls.push((
                        s.index,
                        ToolCall {
                            id: t.id.unwrap_or_default().into_owned(),
                            name: t.name.unwrap_or_default().into_owned(),
                            arguments: String::new(),
                        },
                    ));
                }
            }
            b"messageStop" => {
                if let Ok(s) = serde_json::from_slice::<Stop<'_>>(data) {
                    self.view.stop_reason = s.stop_reason.map(Cow::into_owned);
                }
            }
            b"metadata" => {
                if let Ok(Metadata { usage: Some(u) }) = serde_json::from_slice(data) {
                    self.view.usage = u.usage();
                }
            }
            b"messageStart" | b"contentBlockStop" => {}
            _ => {}
        }
    }

    fn finish(mut self) -> ResponseView {
        self.view.calls = self
            .calls
            .into_iter()
            .map(|(_, mut c)| {
                if c.arguments.is_empty() {
                    c.arguments.push_str("{}");
                }
                c
            })
            .collect();
        self.view
    }
}
