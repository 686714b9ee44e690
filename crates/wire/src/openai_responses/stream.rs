//! The Responses stream: `response.*` events reassembled into calls.
//!
//! Each event is first recognised by its name (the `event:` line, or the
//! leading `"type"` of its data) and only the few that carry calls, usage
//! or errors are parsed, into small borrowed structs.

use std::borrow::Cow;

use ahash::AHashMap;
use serde::Deserialize;
use toolwarden_core::ToolCall;

use super::model::CallKind;
use super::response::{CallItem, ResponseObject};
use crate::{
    ResponseView, Usage,
    budget::{Budget, ENTRY_COST},
    event_sink::EventSink,
    text::event_type,
};

/// Stream state for the Responses API.
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    id: Option<String>,
    model: Option<String>,
    calls: Vec<Pending>,
    /// The latest call with each item id, and at each output index: its
    /// position in `calls` (a scan of `calls` per event made a stream of
    /// many calls quadratic).
    by_item: AHashMap<String, usize>,
    by_index: AHashMap<u64, usize>,
    usage: Usage,
    status: Option<String>,
    /// The terminal event's `incomplete_details.reason`.
    incomplete_reason: Option<String>,
    error: Option<String>,
    /// The status a wrapped (WebSocket) `error` event names.
    error_status: Option<u16>,
    budget: Budget,
}

#[derive(Debug, Clone)]
struct Pending {
    output_index: Option<u64>,
    item_id: Option<String>,
    call_id: String,
    name: String,
    args: String,
    /// The final arguments were seen (`.done` or `output_item.done`).
    done: bool,
    /// An `output_item.done` said the item was written whole (`status:
    /// "completed"`): a cut after it did not touch it. (`.done` events
    /// carry no status, and come for a cut call too.)
    completed: bool,
    kind: CallKind,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    item_id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    delta: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    arguments: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    input: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ItemEvent<'a> {
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(borrow)]
    item: CallItem<'a>,
}

#[derive(Deserialize)]
struct ResponseEvent<'a> {
    #[serde(borrow)]
    response: ResponseObject<'a>,
}

/// An `error` event: over HTTP its `code` and `message` at the top level;
/// over a WebSocket wrapped, with the status the HTTP answer would have
/// had (`{"type":"error","status":429,"error":{"type","code","message"}}`,
/// as the Codex CLI reads it).
#[derive(Deserialize)]
struct ErrorEvent<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    code: Option<Cow<'a, str>>,
    #[serde(default)]
    status: Option<serde_json::Value>,
    #[serde(borrow, default)]
    error: Option<Wrapped<'a>>,
}

/// What an `error` event's `error` holds: the WebSocket form's object, or
/// (some OpenAI-compatible servers) a plain message, or anything else.
#[derive(Deserialize)]
#[serde(untagged)]
enum Wrapped<'a> {
    Object(#[serde(borrow)] WrappedError<'a>),
    Text(#[serde(borrow)] Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct WrappedError<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    code: Option<Cow<'a, str>>,
    #[serde(
        borrow,
        rename = "type",
        deserialize_with = "crate::splice::opt_cow",
        default
    )]
    kind: Option<Cow<'a, str>>,
}

impl StreamState {
    /// How many calls, from the first, have their final arguments
    /// (`StreamParser::whole_calls`).
    pub(crate) fn whole_calls(&self) -> usize {
        self.calls.iter().take_while(|p| p.done).count()
    }

    /// The `call_id` of every call begun so far, whole or not; `None`
    /// once the budget cut something off (a call may be missing).
    pub(crate) fn call_ids(&self) -> Option<impl Iterator<Item = &str>> {
        (!self.budget.is_cut()).then(|| self.calls.iter().map(|p| p.call_id.as_str()))
    }

    /// The response's id, once an event named it.
    pub(crate) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The position in `calls` of the latest call with item id `item_id`;
    /// when the event names no item id the stream has begun, of the latest
    /// call at `output_index`. An item id names one item, an index may not:
    /// the multi-agent beta's events name the agent that owns them
    /// (`agent.agent_name`) and nothing says one agent's indexes are not
    /// another's, so a call found by its index could be another agent's.
    fn find(&self, output_index: Option<u64>, item_id: Option<&str>) -> Option<usize> {
        let by_item = item_id.and_then(|id| self.by_item.get(id));
        by_item
            .or_else(|| output_index.and_then(|i| self.by_index.get(&i)))
            .copied()
    }

    /// Keep a new call, if it fits the budget.
    fn push(&mut self, p: Pending) {
        let item_id = p.item_id.as_deref().map_or(0, str::len);
        let cost = ENTRY_COST + 2 * item_id + p.call_id.len() + p.name.len() + p.args.len();
        if !self.budget.take(cost) {
            return;
        }
        let at = self.calls.len();
        if let Some(id) = &p.item_id {
            self.by_item.insert(id.clone(), at);
        }
        if let Some(i) = p.output_index {
            self.by_index.insert(i, at);
        }
        self.calls.push(p);
    }

    fn on_item(&mut self, data: &[u8], done: bool) {
        let Ok(ev) = serde_json::from_slice::<ItemEvent<'_>>(data) else {
            return;
        };
        let mut item = ev.item;
        let Some(kind) = item.call_kind() else {
            return;
        };
        let completed = done && item.is_completed();
        let args = item.take_arguments();
        let name = item.take_name();
        let existing = if done {
            self.find(ev.output_index, item.id.as_deref())
        } else {
            None
        };
        match existing {
            Some(at) => {
                let p = &mut self.calls[at];
                let budget = &mut self.budget;
                if let Some(a) = args {
                    budget.replace(&mut p.args, &a);
                }
                if let Some(n) = name {
                    budget.replace(&mut p.name, &n);
                }
                if let Some(c) = item.call_id {
                    budget.replace(&mut p.call_id, &c);
                }
                p.done = true;
                p.completed = completed;
            }
            None => self.push(Pending {
                output_index: ev.output_index,
                item_id: item.id.map(Cow::into_owned),
                call_id: item.call_id.map(Cow::into_owned).unwrap_or_default(),
                name: name.map(Cow::into_owned).unwrap_or_default(),
                args: args.map(Cow::into_owned).unwrap_or_default(),
                done,
                completed,
                kind,
            }),
        }
    }

    fn on_delta(&mut self, data: &[u8], done: bool) {
        let Ok(d) = serde_json::from_slice::<Delta<'_>>(data) else {
            return;
        };
        let Some(at) = self.find(d.output_index, d.item_id.as_deref()) else {
            return;
        };
        let p = &mut self.calls[at];
        if done {
            if let Some(full) = d.arguments.or(d.input) {
                self.budget.replace(&mut p.args, &full);
                p.done = true;
            }
        } else if let Some(delta) = d.delta
            && !p.done
        {
            self.budget.append(&mut p.args, &delta);
        }
    }

    fn on_response(&mut self, data: &[u8], terminal: bool) {
        let Ok(ev) = serde_json::from_slice::<ResponseEvent<'_>>(data) else {
            return;
        };
        let r = ev.response;
        if let Some(id) = r.id {
            self.id = Some(id.into_owned());
        }
        if let Some(m) = r.model {
            self.model = Some(m.into_owned());
        }
        if let Some(s) = r.status.filter(|_| terminal) {
            self.status = Some(s.into_owned());
        }
        if let Some(reason) = r.incomplete_details.and_then(|d| d.reason)
            && terminal
        {
            self.incomplete_reason = Some(reason.into_owned());
        }
        if let Some(u) = r.usage {
            self.usage = u.into();
        }
        if let Some(e) = r.error.and_then(|e| e.text()) {
            self.error = Some(e);
        }
    }
}

impl EventSink for StreamState {
    fn on_event(&mut self, event: &[u8], data: &[u8]) {
        let kind = if event.is_empty() {
            event_type(data)
        } else {
            Some(event)
        };
        let Some(kind) = kind else { return };
        match kind {
            b"response.function_call_arguments.delta"
            | b"response.custom_tool_call_input.delta" => self.on_delta(data, false),
            b"response.function_call_arguments.done" | b"response.custom_tool_call_input.done" => {
                self.on_delta(data, true)
            }
            b"response.output_item.added" | b"response.output_item.done"
                if memchr::memmem::find(data, b"_call\"").is_some() =>
            {
                self.on_item(data, kind == b"response.output_item.done")
            }
            b"response.created" | b"response.in_progress" | b"response.queued"
                if self.id.is_none() || self.model.is_none() =>
            {
                self.on_response(data, false)
            }
            b"response.completed" | b"response.failed" | b"response.incomplete" => {
                self.on_response(data, true)
            }
            b"error" => {
                if let Ok(e) = serde_json::from_slice::<ErrorEvent<'_>>(data) {
                    self.error_status = e
                        .status
                        .as_ref()
                        .and_then(serde_json::Value::as_u64)
                        .and_then(|s| u16::try_from(s).ok())
                        .filter(|s| (400..600).contains(s));
                    let (code, message) = match e.error {
                        Some(Wrapped::Object(w)) => {
                            (e.code.or(w.code).or(w.kind), e.message.or(w.message))
                        }
                        Some(Wrapped::Text(text)) => (e.code, e.message.or(Some(text))),
                        Some(Wrapped::Other(_)) | None => (e.code, e.message),
                    };
                    self.error = Some(match (code, message) {
                        (Some(c), Some(m)) => format!("{c}: {m}"),
                        (None, Some(m)) => m.into_owned(),
                        (Some(c), None) => c.into_owned(),
                        (None, None) => String::from("error"),
                    });
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> ResponseView {
        let call_kinds = (self.calls.iter().enumerate())
            .filter(|(_, p)| p.kind != CallKind::Function)
            .map(|(i, p)| (i, p.kind))
            .collect();
        let last_call_completed = self.calls.last().is_some_and(|p| p.completed);
        ResponseView {
            id: self.id,
            model: self.model,
            call_kinds,
            last_call_completed,
            calls: self
                .calls
                .into_iter()
                .map(|p| ToolCall {
                    id: p.call_id,
                    name: p.name,
                    arguments: p.args,
                })
                .collect(),
            usage: self.usage,
            stop_reason: self.status,
            incomplete_reason: self.incomplete_reason,
            error: self.error,
            error_status: self.error_status,
            truncated: self.budget.is_cut(),
            ended_early: false,
            server_calls: Vec::new(),
        }
    }

    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }

    fn kept(&self) -> usize {
        self.budget.kept()
    }
}
