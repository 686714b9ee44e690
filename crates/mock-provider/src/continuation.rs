//! Responses continuations (`previous_response_id`), kept as the API keeps
//! them:
//!
//! - a response made with `store` true (the default) is kept by the API and
//!   can be continued from any request, over HTTP or WebSocket ([`Store`]:
//!   at most [`CAPACITY`] ids, the oldest go first; each kept response
//!   holds its ancestors, as the API keeps a conversation's whole context,
//!   so the memory held is bounded by the ids times the longest chain, not
//!   by the ids alone — a mock for tests, not for an endless chain);
//! - in WebSocket mode each connection also keeps its most recent response
//!   in a cache of its own, `store: false` ones included, and only there:
//!   such a response is continued on that socket, as the next turn, and
//!   nowhere else ([`Connection`]; OpenAI's "WebSocket mode" guide:
//!   "compatible with … `store=false`", the state held in memory on the
//!   open socket);
//! - any other id gets 400 `invalid_request_error`, `code:
//!   previous_response_not_found`, `param: previous_response_id`, "Previous
//!   response with id '…' not found." (router-for-me/CLIProxyAPI#2954 over
//!   HTTP; maximhq/bifrost#2441, the same as a WebSocket `error` event, for
//!   the Codex CLI's `store: false` turns).
//!
//! A continuation is the previous response's whole context (each
//! response's input, then its output, back to the first) followed by its
//! own input, as the API reads it: the mock's pairing rules judge that
//! whole list ([`with_context`]), so a continuation must answer every call
//! the previous response made ("No tool output found for function call …")
//! and can answer no other.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use serde_json::Value;

/// How many stored responses the mock keeps.
pub(crate) const CAPACITY: usize = 4096;

/// One response as a continuation sees it: the response it continued,
/// then its own input and output items.
#[derive(Debug)]
pub(crate) struct Stored {
    parent: Option<Arc<Stored>>,
    items: Vec<Value>,
}

/// The responses made with `store` on, shared by HTTP and WebSocket.
#[derive(Debug, Default)]
pub(crate) struct Store {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_id: HashMap<String, Arc<Stored>>,
    /// Ids in the order stored, to drop the oldest.
    order: VecDeque<String>,
}

/// A WebSocket connection's own cache: its most recent response.
#[derive(Debug, Default)]
pub(crate) struct Connection {
    last: Option<(String, Arc<Stored>)>,
}

/// What a request continues.
#[derive(Debug)]
pub(crate) enum Previous {
    /// No `previous_response_id`.
    None,
    /// The response it names.
    Found(Arc<Stored>),
    /// An id the API does not have (for this request).
    NotFound(String),
}

// === impl Stored ===

impl Stored {
    /// Every item of the context, oldest first.
    fn context(&self) -> Vec<&Value> {
        let mut chain = vec![self];
        while let Some(parent) = &chain[chain.len() - 1].parent {
            chain.push(parent);
        }
        chain.iter().rev().flat_map(|s| s.items.iter()).collect()
    }
}

// === impl Store ===

impl Store {
    fn get(&self, id: &str) -> Option<Arc<Stored>> {
        crate::lock(&self.inner).by_id.get(id).cloned()
    }

    /// Whether it made the response `id` (with `store` on).
    pub(crate) fn has(&self, id: &str) -> bool {
        crate::lock(&self.inner).by_id.contains_key(id)
    }

    fn insert(&self, id: String, stored: Arc<Stored>) {
        let mut inner = crate::lock(&self.inner);
        if inner.by_id.insert(id.clone(), stored).is_none() {
            inner.order.push_back(id);
        }
        while inner.order.len() > CAPACITY {
            if let Some(old) = inner.order.pop_front() {
                inner.by_id.remove(&old);
            }
        }
    }
}

// === continuations ===

/// The response `body` continues: from the connection's cache (WebSocket),
/// else from the store.
pub(crate) fn previous(store: &Store, connection: Option<&Connection>, body: &Value) -> Previous {
    let Some(id) = body.get("previous_response_id").and_then(Value::as_str) else {
        return Previous::None;
    };
    let cached = connection
        .and_then(|c| c.last.as_ref())
        .filter(|(last, _)| last == id)
        .map(|(_, stored)| stored.clone());
    match cached.or_else(|| store.get(id)) {
        Some(stored) => Previous::Found(stored),
        None => Previous::NotFound(id.to_string()),
    }
}

/// The message of the API's 400 for an unknown previous response.
pub(crate) fn not_found_message(id: &str) -> String {
    format!("Previous response with id '{id}' not found.")
}

/// `body` as the API reads it: `previous`'s context, then its own input,
/// with no `previous_response_id`.
pub(crate) fn with_context(body: &Value, previous: &Stored) -> Value {
    let mut items: Vec<Value> = previous.context().into_iter().cloned().collect();
    items.extend(input_items(body));
    let mut whole = body.clone();
    if let Some(obj) = whole.as_object_mut() {
        obj.remove("previous_response_id");
        obj.insert("input".into(), Value::Array(items));
    }
    whole
}

/// Keep the response `events` carry (a JSON response body, or its stream's
/// events, one JSON event each) as the answer to `body`: in the store
/// unless `store` is false, and in the connection's cache.
pub(crate) fn remember<'a>(
    store: &Store,
    connection: Option<&mut Connection>,
    body: &Value,
    previous: Option<Arc<Stored>>,
    events: impl IntoIterator<Item = &'a [u8]>,
) {
    let Some((id, output)) = response_in(events) else {
        return;
    };
    let mut items = input_items(body);
    items.extend(output);
    let stored = Arc::new(Stored {
        parent: previous,
        items,
    });
    if body.get("store") != Some(&Value::Bool(false)) {
        store.insert(id.clone(), stored.clone());
    }
    if let Some(connection) = connection {
        connection.last = Some((id, stored));
    }
}

/// The request's `input` as items (a string is one user message).
pub(crate) fn input_items(body: &Value) -> Vec<Value> {
    match body.get("input") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(text)) => {
            vec![serde_json::json!({"role": "user", "content": text})]
        }
        _ => Vec::new(),
    }
}

/// The id and output items of the response in `events`: a response
/// object, or the last one a stream event carries (`response.completed`
/// and the like), its output, else the items of `response.output_item.done`.
pub(crate) fn response_in<'a>(
    events: impl IntoIterator<Item = &'a [u8]>,
) -> Option<(String, Vec<Value>)> {
    let mut id = None;
    let mut output: Vec<Value> = Vec::new();
    let mut done: Vec<Value> = Vec::new();
    for event in events {
        let Ok(v) = serde_json::from_slice::<Value>(event) else {
            continue;
        };
        let response = if v.get("object").and_then(Value::as_str) == Some("response") {
            Some(&v)
        } else {
            v.get("response")
        };
        if let Some(r) = response
            && let Some(rid) = r.get("id").and_then(Value::as_str)
        {
            id = Some(rid.to_string());
            if let Some(out) = r.get("output").and_then(Value::as_array)
                && !out.is_empty()
            {
                output = out.clone();
            }
        }
        if v.get("type").and_then(Value::as_str) == Some("response.output_item.done")
            && let Some(item) = v.get("item")
        {
            done.push(item.clone());
        }
    }
    let output = if output.is_empty() { done } else { output };
    Some((id?, output))
}

/// A reply's events as JSON texts: its SSE events' data, or the body.
pub(crate) fn reply_events(chunks: &[Bytes], sse: bool) -> Vec<Bytes> {
    let whole: Vec<u8> = chunks.concat();
    if sse {
        crate::sse::sse_to_messages(&whole)
    } else {
        vec![Bytes::from(whole)]
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn completed(id: &str, output: Value) -> Vec<u8> {
        json!({"type": "response.completed", "sequence_number": 9,
            "response": {"id": id, "object": "response", "output": output}})
        .to_string()
        .into_bytes()
    }

    fn call(call_id: &str) -> Value {
        json!({"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"})
    }

    #[test]
    fn a_chain_reads_back_as_one_context() {
        let store = Store::default();
        let first = json!({"model": "m", "input": "hi"});
        let event = completed("resp_1", json!([call("c1")]));
        remember(&store, None, &first, None, [event.as_slice()]);
        let second = json!({"model": "m", "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "c1", "output": "ok"}]});
        let Previous::Found(prev) = previous(&store, None, &second) else {
            panic!("resp_1 kept");
        };
        let body = json!({"object": "response", "id": "resp_2", "output": [
            {"type": "message", "role": "assistant", "content": []}]});
        remember(
            &store,
            None,
            &second,
            Some(prev.clone()),
            [body.to_string().as_bytes()],
        );
        let third = json!({"previous_response_id": "resp_2", "input": "more"});
        let Previous::Found(prev) = previous(&store, None, &third) else {
            panic!("resp_2 kept");
        };
        let whole = with_context(&third, &prev);
        let kinds: Vec<&str> = whole["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["type"].as_str().or(i["role"].as_str()).unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user",
                "function_call",
                "function_call_output",
                "message",
                "user"
            ]
        );
        assert!(whole.get("previous_response_id").is_none());
        assert!(matches!(
            previous(&store, None, &json!({"previous_response_id": "resp_x"})),
            Previous::NotFound(id) if id == "resp_x"
        ));
    }

    #[test]
    fn store_false_lives_only_in_its_connections_cache() {
        let store = Store::default();
        let mut socket = Connection::default();
        let unstored = json!({"model": "m", "store": false, "input": "hi"});
        let event = completed("resp_a", json!([]));
        remember(
            &store,
            Some(&mut socket),
            &unstored,
            None,
            [event.as_slice()],
        );
        let next = json!({"previous_response_id": "resp_a", "input": "more"});
        assert!(matches!(
            previous(&store, Some(&socket), &next),
            Previous::Found(_)
        ));
        // Another socket, or HTTP: not found.
        let other = Connection::default();
        assert!(matches!(
            previous(&store, Some(&other), &next),
            Previous::NotFound(_)
        ));
        assert!(matches!(
            previous(&store, None, &next),
            Previous::NotFound(_)
        ));
        // Only the most recent one is cached.
        let event = completed("resp_b", json!([]));
        remember(
            &store,
            Some(&mut socket),
            &unstored,
            None,
            [event.as_slice()],
        );
        assert!(matches!(
            previous(&store, Some(&socket), &next),
            Previous::NotFound(_)
        ));
    }

    #[test]
    fn the_store_is_bounded() {
        let store = Store::default();
        let body = json!({"input": "hi"});
        for i in 0..=CAPACITY {
            let event = completed(&format!("resp_{i}"), json!([]));
            remember(&store, None, &body, None, [event.as_slice()]);
        }
        assert!(store.get("resp_0").is_none());
        assert!(store.get("resp_1").is_some());
        assert!(store.get(&format!("resp_{CAPACITY}")).is_some());
    }

    #[test]
    fn a_streams_output_is_read_from_its_items_when_completed_has_none() {
        let created =
            json!({"type": "response.created", "response": {"id": "resp_s", "output": []}});
        let item = json!({"type": "response.output_item.done", "item": call("c9")});
        let (id, output) =
            response_in([created.to_string().as_bytes(), item.to_string().as_bytes()]).unwrap();
        assert_eq!((id.as_str(), output), ("resp_s", vec![call("c9")]));
        assert!(response_in([b"not json".as_slice()]).is_none());
    }
}
