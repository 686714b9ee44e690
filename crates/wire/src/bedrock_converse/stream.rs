//! The ConverseStream events, one per event-stream message (framed by
//! [`crate::eventstream`]): `messageStart`, `contentBlockStart`
//! (`start.toolUse{toolUseId,name}`), `contentBlockDelta` (`delta.text`,
//! `delta.toolUse.input` string pieces, `delta.reasoningContent`),
//! `contentBlockStop`, `messageStop` (`stopReason`), `metadata` (`usage`).
//! A `toolUse` start of `type: "server_tool_use"` is a system tool Bedrock
//! runs itself (its `toolResult` block follows in the stream): a call
//! marked in [`ResponseView::server_calls`].
//! Exceptions (`:message-type exception`) are read by the framing
//! (`crate::stream`), the same way for every dialect carried in event-stream
//! frames.
//!
//! Text and reasoning deltas — nearly every event of a stream — are skipped
//! without JSON parsing: a delta is parsed only when it has a `toolUse`.
//! Only tool calls and their arguments are kept, within the parser's budget
//! (`crate::budget`).

use std::borrow::Cow;

use ahash::AHashMap;
use serde::Deserialize;
use toolwarden_core::ToolCall;

use super::response::{WireUsage, is_server_tool};
use crate::{
    ResponseView,
    budget::{Budget, ENTRY_COST},
    event_sink::EventSink,
    seed::Needle,
    splice::opt_cow,
};

static TOOL_USE: Needle = Needle::new("\"toolUse\"");

/// The stream's state.
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    /// Tool blocks, in start order.
    calls: Vec<ToolCall>,
    /// The latest tool block at each `contentBlockIndex`: its position in
    /// `calls` (a scan of `calls` per delta made many blocks quadratic).
    latest: AHashMap<u64, usize>,
    view: ResponseView,
    budget: Budget,
    /// The `metadata` event (usage and metrics, after `messageStop`) has
    /// been read.
    metadata: bool,
}

impl StreamState {
    /// Whether the `metadata` event, which follows `messageStop` with
    /// the response's usage, has not been read.
    pub(crate) fn trailer_pending(&self) -> bool {
        !self.metadata
    }
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
    /// `server_tool_use`: a system tool Bedrock runs itself.
    #[serde(borrow, default, rename = "type", deserialize_with = "opt_cow")]
    kind: Option<Cow<'a, str>>,
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
                if let (Some(piece), Some(&at)) = (piece, self.latest.get(&d.index)) {
                    self.budget.append(&mut self.calls[at].arguments, &piece);
                }
            }
            b"contentBlockStart" => {
                let Ok(s) = serde_json::from_slice::<Start<'_>>(data) else {
                    return;
                };
                let Some(t) = s.start.and_then(|s| s.tool_use) else {
                    return;
                };
                let (id, name) = (t.id.unwrap_or_default(), t.name.unwrap_or_default());
                if self.budget.take(ENTRY_COST + id.len() + name.len()) {
                    if is_server_tool(t.kind.as_deref()) {
                        self.view.server_calls.push(self.calls.len());
                    }
                    self.latest.insert(s.index, self.calls.len());
                    self.calls.push(ToolCall {
                        id: id.into_owned(),
                        name: name.into_owned(),
                        arguments: String::new(),
                    });
                }
            }
            b"messageStop" => {
                if let Ok(s) = serde_json::from_slice::<Stop<'_>>(data) {
                    self.view.stop_reason = s.stop_reason.map(Cow::into_owned);
                }
            }
            b"metadata" => {
                self.metadata = true;
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
            .map(|mut c| {
                if c.arguments.is_empty() {
                    c.arguments.push_str("{}");
                }
                c
            })
            .collect();
        self.view.truncated = self.budget.is_cut();
        self.view
    }

    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn kept(&self) -> usize {
        self.budget.kept()
    }
}
