//! The Chat Completions stream: `chat.completion.chunk` events whose
//! `delta.tool_calls` carry index-based fragments (the first with id and
//! name, the rest with argument text), parallel calls interleaved by index;
//! a `finish_reason`; a last chunk with `usage`; `data: [DONE]`.
//!
//! Once the id and model are known, a chunk without a non-null
//! `tool_calls`, `function_call`, `finish_reason`, `usage` or `error` key
//! (a content delta) is skipped before any JSON parsing.

use std::borrow::Cow;

use toolwarden_core::ToolCall;

use super::model::{Completion, legacy_id};
use crate::{ResponseView, Usage, stream::EventSink, text::has_non_null};

/// Stream state for OpenAI Chat Completions.
#[derive(Debug, Default)]
pub struct StreamState {
    id: Option<String>,
    model: Option<String>,
    usage: Usage,
    stop_reason: Option<String>,
    error: Option<String>,
    calls: Vec<Pending>,
}

#[derive(Debug)]
struct Pending {
    choice: u64,
    index: u64,
    id: String,
    name: String,
    args: String,
}

/// Where legacy `function_call` deltas collect.
const LEGACY: u64 = u64::MAX;

fn relevant(data: &[u8]) -> bool {
    has_non_null(data, b"\"tool_calls\"")
        || has_non_null(data, b"\"function_call\"")
        || has_non_null(data, b"\"finish_reason\"")
        || has_non_null(data, b"\"usage\"")
        || has_non_null(data, b"\"error\"")
}

impl StreamState {
    fn slot(&mut self, choice: u64, index: u64, id: Option<&str>) -> &mut Pending {
        let found = self
            .calls
            .iter()
            .rposition(|p| p.choice == choice && p.index == index);
        // Some servers send every parallel call at index 0, each with its
        // own id: a new id at a used index starts a new call.
        let fresh = match (found, id) {
            (None, _) => true,
            (Some(at), Some(id)) => {
                !id.is_empty() && !self.calls[at].id.is_empty() && self.calls[at].id != id
            }
            (Some(_), None) => false,
        };
        if fresh {
            self.calls.push(Pending {
                choice,
                index,
                id: String::new(),
                name: String::new(),
                args: String::new(),
            });
        }
        let at = if fresh {
            self.calls.len() - 1
        } else {
            found.unwrap_or(0)
        };
        &mut self.calls[at]
    }
}

impl EventSink for StreamState {
    fn on_event(&mut self, _event: &[u8], data: &[u8]) {
        if data == b"[DONE]" || (self.model.is_some() && !relevant(data)) {
            return;
        }
        let Ok(chunk) = serde_json::from_slice::<Completion<'_>>(data) else {
            return;
        };
        if let Some(e) = chunk.error {
            self.error = Some(e.describe());
        }
        if self.id.is_none() {
            self.id = chunk.id.map(Cow::into_owned);
        }
        if self.model.is_none() {
            self.model = chunk.model.map(Cow::into_owned);
        }
        if let Some(u) = chunk.usage {
            self.usage = Usage {
                input_tokens: u.prompt_tokens,
                output_tokens: u.completion_tokens,
            };
        }
        for choice in chunk.choices.into_iter().flatten() {
            if let Some(r) = choice.finish_reason {
                self.stop_reason = Some(r.into_owned());
            }
            let Some(delta) = choice.delta.or(choice.message) else {
                continue;
            };
            for tc in delta.tool_calls.into_iter().flatten() {
                let index = tc.index.unwrap_or(0);
                let id = tc.id.clone();
                let p = self.slot(choice.index, index, id.as_deref());
                if let Some(id) = id {
                    if p.id.is_empty() {
                        p.id = id.into_owned();
                    }
                }
                let (name, args) = tc.parts();
                if p.name.is_empty() {
                    p.name = name.into_owned();
                }
                p.args.push_str(&args);
            }
            if let Some(f) = delta.function_call {
                let p = self.slot(choice.index, LEGACY, None);
                if let Some(n) = f.name {
                    if p.name.is_empty() {
                        p.id = legacy_id(&n, 0);
                        p.name = n.into_owned();
                    }
                }
                p.args.push_str(&f.arguments.unwrap_or_default());
            }
        }
    }

    fn finish(self) -> ResponseView {
        let mut calls = self.calls;
        calls.sort_by_key(|p| (p.choice, p.index));
        ResponseView {
            id: self.id,
            model: self.model,
            calls: calls
                .into_iter()
                .map(|p| ToolCall {
                    id: p.id,
                    name: p.name,
                    arguments: p.args,
                })
                .collect(),
            usage: self.usage,
            stop_reason: self.stop_reason,
            error: self.error,
        }
    }
}
