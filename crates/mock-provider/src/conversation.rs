//! The Conversations API (`/v1/conversations`), kept as the API keeps it: a
//! conversation holds items on the server's side, and a Responses request
//! naming it (`"conversation": "conv_…"` or `{"id": "conv_…"}`) sends only
//! its new items.
//!
//! - `POST /v1/conversations` (`items`, at most 20; `metadata`) makes one;
//!   `GET`, `POST` (metadata) and `DELETE /v1/conversations/{id}`;
//!   `GET /v1/conversations/{id}/items` (`order` `asc` / `desc`, the
//!   default; `limit` 1–100, default 20; `after`), `POST` (`items`, 1–20),
//!   `GET` and `DELETE /v1/conversations/{id}/items/{item_id}`. Each item is
//!   given an id and a `status` when stored, and a message's text becomes
//!   `input_text` / `output_text` parts, as the API lists them. At most
//!   [`CAPACITY`] conversations, the oldest go first.
//! - A Responses request over HTTP naming a conversation is read as the
//!   conversation's items followed by its own input (the WebSocket mode's
//!   turns do not read conversations here): the pairing rules judge
//!   that whole, so its `function_call_output`s must answer the calls the
//!   conversation holds. After a successful reply its input and output
//!   items are added to the conversation. It cannot also name a
//!   `previous_response_id` (400, as the API documents the two as mutually
//!   exclusive).
//! - An unknown conversation is 404 `invalid_request_error`, "Conversation
//!   with id '…' not found." (the message as the mock words it: the API's
//!   exact text is not on record here).

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
};

use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::envelope::{self, Provider};

/// How many conversations the mock keeps.
pub(crate) const CAPACITY: usize = 4096;

/// How many items one request may add (the API's limit).
const MAX_ADDED: usize = 20;

/// The conversations, by id.
#[derive(Debug, Default)]
pub(crate) struct Conversations {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_id: HashMap<String, Conversation>,
    /// Ids in the order made, to drop the oldest.
    order: VecDeque<String>,
    /// The last number given to a conversation or an item.
    serial: u64,
}

#[derive(Debug)]
struct Conversation {
    created_at: u64,
    metadata: Value,
    items: Vec<Value>,
}

/// An answer: status and JSON body.
pub(crate) type Reply = (StatusCode, String);

impl Conversations {
    /// The answer to a Conversations API request, or `None` when `path` is
    /// not one of its paths.
    pub(crate) fn serve(
        &self,
        method: &Method,
        path: &str,
        query: &str,
        body: &[u8],
    ) -> Option<Reply> {
        let rest = path.strip_prefix("/v1/conversations")?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        let parts: Vec<&str> = rest.split('/').skip(1).collect();
        let reply = match (method.as_str(), parts.as_slice()) {
            ("POST", []) => self.create(body),
            ("GET", [id]) => self.with(id, |_, c| Ok(c.object(id))),
            ("POST", [id]) => self.update(id, body),
            ("DELETE", [id]) => self.delete(id),
            ("GET", [id, "items"]) => self.with(id, |_, c| c.list(query)),
            ("POST", [id, "items"]) => self.add_items(id, body),
            ("GET", [id, "items", item]) => self.with(id, |_, c| {
                c.item(item)
                    .map(|i| i.to_string())
                    .ok_or_else(|| item_not_found(item))
            }),
            ("DELETE", [id, "items", item]) => self.with(id, |_, c| {
                let before = c.items.len();
                c.items
                    .retain(|i| i.get("id").and_then(Value::as_str) != Some(item));
                if c.items.len() == before {
                    return Err(item_not_found(item));
                }
                Ok(c.object(id))
            }),
            _ => return None,
        };
        Some(match reply {
            Ok(body) => (StatusCode::OK, body),
            Err(refusal) => refusal,
        })
    }

    fn create(&self, body: &[u8]) -> Result<String, Reply> {
        let obj = if body.iter().all(u8::is_ascii_whitespace) {
            serde_json::Map::new()
        } else {
            object_of(body).map_err(invalid)?
        };
        let items = items_of(body, true).map_err(invalid)?;
        let mut inner = crate::lock(&self.inner);
        inner.serial += 1;
        let id = format!("conv_{:048x}", inner.serial);
        let mut c = Conversation {
            created_at: now(),
            metadata: obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
            items: Vec::new(),
        };
        c.add(&mut inner.serial, items);
        let object = c.object(&id);
        inner.by_id.insert(id.clone(), c);
        inner.order.push_back(id);
        while inner.order.len() > CAPACITY {
            if let Some(old) = inner.order.pop_front() {
                inner.by_id.remove(&old);
            }
        }
        Ok(object)
    }

    fn update(&self, id: &str, body: &[u8]) -> Result<String, Reply> {
        let metadata = object_of(body).map_err(invalid)?.get("metadata").cloned();
        self.with(id, |_, c| {
            if let Some(m) = metadata {
                c.metadata = m;
            }
            Ok(c.object(id))
        })
    }

    fn add_items(&self, id: &str, body: &[u8]) -> Result<String, Reply> {
        let items = items_of(body, false).map_err(invalid)?;
        self.with(id, |serial, c| Ok(list(&c.add(serial, items), false)))
    }

    fn delete(&self, id: &str) -> Result<String, Reply> {
        let mut inner = crate::lock(&self.inner);
        if inner.by_id.remove(id).is_none() {
            return Err(not_found(id));
        }
        inner.order.retain(|o| o != id);
        Ok(json!({"id": id, "object": "conversation.deleted", "deleted": true}).to_string())
    }

    /// Run `f` on the conversation `id` (with the id counter, for new items).
    fn with<T>(
        &self,
        id: &str,
        f: impl FnOnce(&mut u64, &mut Conversation) -> Result<T, Reply>,
    ) -> Result<T, Reply> {
        let mut inner = crate::lock(&self.inner);
        let Inner { by_id, serial, .. } = &mut *inner;
        let c = by_id.get_mut(id).ok_or_else(|| not_found(id))?;
        f(serial, c)
    }

    /// The conversation a Responses request names, and its items: `None`
    /// when it names none.
    pub(crate) fn context(&self, body: &Value) -> Result<Option<(String, Vec<Value>)>, Reply> {
        let Some(id) = named(body) else {
            return Ok(None);
        };
        if body
            .get("previous_response_id")
            .is_some_and(|p| !p.is_null())
        {
            return Err((
                StatusCode::BAD_REQUEST,
                envelope::error_body(
                    Provider::OpenAi,
                    StatusCode::BAD_REQUEST,
                    "invalid_request_error",
                    Some("previous_response_id"),
                    Some("mutually_exclusive_parameters"),
                    "Mutually exclusive parameters: Ensure you are only providing one of: \
                     'previous_response_id' or 'conversation'.",
                ),
            ));
        }
        self.with(&id, |_, c| Ok(c.items.clone()))
            .map(|items| Some((id, items)))
    }

    /// Add a reply's exchange to the conversation `id`: the request's input
    /// items, then the reply's `output`.
    pub(crate) fn append(&self, id: &str, body: &Value, output: Vec<Value>) {
        let mut items = crate::continuation::input_items(body);
        items.extend(output);
        let _ = self.with(id, |serial, c| {
            c.add(serial, items);
            Ok(())
        });
    }
}

// === impl Conversation ===

impl Conversation {
    fn object(&self, id: &str) -> String {
        json!({"id": id, "object": "conversation", "created_at": self.created_at,
            "metadata": self.metadata})
        .to_string()
    }

    /// Store `items` as the API lists them; the stored forms.
    fn add(&mut self, serial: &mut u64, items: Vec<Value>) -> Vec<Value> {
        let start = self.items.len();
        for item in items {
            *serial += 1;
            self.items.push(stored(item, *serial));
        }
        self.items[start..].to_vec()
    }

    fn item(&self, id: &str) -> Option<&Value> {
        self.items
            .iter()
            .find(|i| i.get("id").and_then(Value::as_str) == Some(id))
    }

    /// One page of items, as `query` asks.
    fn list(&self, query: &str) -> Result<String, Reply> {
        let mut order = "desc";
        let mut limit = 20usize;
        let mut after = None;
        for (k, v) in query.split('&').filter_map(|kv| kv.split_once('=')) {
            match k {
                "order" if v == "asc" || v == "desc" => order = v,
                "order" => return Err(invalid(format!("Invalid value for 'order': '{v}'."))),
                "limit" => match v.parse::<usize>() {
                    Ok(n) if (1..=100).contains(&n) => limit = n,
                    _ => {
                        return Err(invalid(format!(
                            "Invalid 'limit': integer below minimum value or above maximum \
                             value (1 to 100), got '{v}'."
                        )));
                    }
                },
                "after" => after = Some(v),
                _ => {}
            }
        }
        let mut items: Vec<&Value> = self.items.iter().collect();
        if order == "desc" {
            items.reverse();
        }
        if let Some(after) = after {
            let at = items
                .iter()
                .position(|i| i.get("id").and_then(Value::as_str) == Some(after));
            items = at.map_or_else(Vec::new, |at| items.split_off(at + 1));
        }
        let more = items.len() > limit;
        items.truncate(limit);
        let items: Vec<Value> = items.into_iter().cloned().collect();
        Ok(list(&items, more))
    }
}

/// `item` as stored: an id (kept when it has one), a `status`, a
/// message's type and text parts.
fn stored(mut item: Value, serial: u64) -> Value {
    let Some(obj) = item.as_object_mut() else {
        return item;
    };
    if !obj.contains_key("type") && obj.contains_key("role") {
        obj.insert("type".into(), json!("message"));
    }
    let kind = obj
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("item")
        .to_string();
    let prefix = match kind.as_str() {
        "message" => "msg",
        "function_call" => "fc",
        "function_call_output" => "fco",
        "reasoning" => "rs",
        _ => "item",
    };
    if kind == "message"
        && let Some(Value::String(text)) = obj.get("content")
    {
        let part = if obj.get("role").and_then(Value::as_str) == Some("assistant") {
            "output_text"
        } else {
            "input_text"
        };
        let content = json!([{"type": part, "text": text}]);
        obj.insert("content".into(), content);
    }
    if !obj.get("id").is_some_and(Value::is_string) {
        obj.insert("id".into(), json!(format!("{prefix}_{serial:048x}")));
    }
    if kind != "reasoning" {
        obj.entry("status").or_insert_with(|| json!("completed"));
    }
    item
}

/// `body` as the API reads it: the conversation's `items`, then its own
/// input, with no `conversation`.
pub(crate) fn with_items(body: &Value, mut items: Vec<Value>) -> Value {
    items.extend(crate::continuation::input_items(body));
    let mut whole = body.clone();
    if let Some(obj) = whole.as_object_mut() {
        obj.remove("conversation");
        obj.insert("input".into(), Value::Array(items));
    }
    whole
}

/// The conversation's id a Responses body names: a string, or `{"id": …}`.
fn named(body: &Value) -> Option<String> {
    match body.get("conversation")? {
        Value::String(id) => Some(id.clone()),
        Value::Object(o) => o.get("id").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

fn list(items: &[Value], more: bool) -> String {
    let id = |i: Option<&Value>| i.and_then(|v| v.get("id")).cloned().unwrap_or(Value::Null);
    json!({"object": "list", "data": items, "first_id": id(items.first()),
        "last_id": id(items.last()), "has_more": more})
    .to_string()
}

fn object_of(body: &[u8]) -> Result<serde_json::Map<String, Value>, String> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(obj)) => Ok(obj),
        Ok(_) => Err("The request body must be a JSON object.".to_string()),
        Err(e) => Err(format!(
            "We could not parse the JSON body of your request. ({e})"
        )),
    }
}

/// The `items` of a request adding them: required unless `optional`, at
/// most [`MAX_ADDED`], each an object.
fn items_of(body: &[u8], optional: bool) -> Result<Vec<Value>, String> {
    if optional && body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let obj = object_of(body)?;
    let items = match obj.get("items") {
        Some(Value::Array(items)) => items.clone(),
        None | Some(Value::Null) if optional => Vec::new(),
        None | Some(Value::Null) => return Err("Missing required parameter: 'items'.".to_string()),
        Some(_) => return Err("Invalid type for 'items': expected an array.".to_string()),
    };
    if items.len() > MAX_ADDED || (!optional && items.is_empty()) {
        return Err(format!(
            "Invalid 'items': array size must be between {} and {MAX_ADDED}, got {}.",
            usize::from(!optional),
            items.len()
        ));
    }
    if let Some(at) = items.iter().position(|i| !i.is_object()) {
        return Err(format!(
            "Invalid type for 'items[{at}]': expected an object."
        ));
    }
    Ok(items)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn invalid(message: impl AsRef<str>) -> Reply {
    (
        StatusCode::BAD_REQUEST,
        envelope::error_body(
            Provider::OpenAi,
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            None,
            None,
            message.as_ref(),
        ),
    )
}

fn not_found(id: &str) -> Reply {
    missing("Conversation", id)
}

fn item_not_found(id: &str) -> Reply {
    missing("Item", id)
}

/// 404 for the `what` named `id`.
fn missing(what: &str, id: &str) -> Reply {
    (
        StatusCode::NOT_FOUND,
        envelope::error_body(
            Provider::OpenAi,
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            None,
            None,
            &format!("{what} with id '{id}' not found."),
        ),
    )
}

#[cfg(test)]
mod tests;
