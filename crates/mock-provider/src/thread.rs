//! Anthropic message threads (beta `message-threads-2026-08-12`), kept as
//! the API keeps them: the conversation is held on the server's side, so
//! each turn sends only its new messages.
//!
//! - `"thread": {"type": "create"}` (with the beta in `anthropic-beta`; else
//!   400 `thread: Extra inputs are not permitted`) is an ordinary request,
//!   whose conversation — `system`, `tools`, its messages and the reply — is
//!   held under the reply's `id` ([`Threads`]: at most [`CAPACITY`], the
//!   oldest go first);
//! - `"thread": {"type": "continue", "previous_message_id": ID}` is read as
//!   the conversation held under `ID` followed by the request's own
//!   messages, with the held `system` and `tools` (which the request must
//!   not repeat: 400). The pairing rules judge that whole conversation, so
//!   the first new message must answer the held reply's `tool_use` blocks.
//!   Its reply is held under its own `id` in turn; `ID` is then spent.
//! - The refusals carry `error.details.error_code`, which the official
//!   SDKs act on: `thread_not_found` (404 `not_found_error`: an id never
//!   held, or dropped), `thread_already_continued` (400: a reply continued
//!   twice).
//!
//! The reply's message is read back from what the mock sent: a JSON body's
//! `content`, or a stream's blocks (`content_block_start`, its deltas).

use std::{
    collections::{HashMap, HashSet, VecDeque},
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

/// How many held conversations the mock keeps.
pub(crate) const CAPACITY: usize = 4096;

/// The beta a `thread` needs.
pub(crate) const BETA: &str = "message-threads-2026-08-12";

/// One held conversation: what a `continue` of its reply reads.
#[derive(Debug)]
pub(crate) struct Held {
    system: Option<Value>,
    tools: Option<Value>,
    messages: Vec<Value>,
}

/// The held conversations, by the id of their last reply.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_id: HashMap<String, Arc<Held>>,
    /// Ids in the order held, to drop the oldest.
    order: VecDeque<String>,
    /// Ids a `continue` named already.
    continued: HashSet<String>,
}

/// What a request asks of the threads.
#[derive(Debug)]
pub(crate) enum Thread {
    /// No `thread`.
    None,
    /// `create`: hold this conversation.
    Create,
    /// `continue`: the request as the API reads it (the held conversation,
    /// then its own messages).
    Continue { whole: Bytes },
}

/// A refusal: status and the error body.
pub(crate) type Refusal = (StatusCode, String);

impl Threads {
    /// What `body` (an Anthropic Messages request) asks; a `continue` is
    /// resolved here, and its id spent.
    pub(crate) fn read(&self, headers: &HeaderMap, body: &[u8]) -> Result<Thread, Refusal> {
        // Most bodies have no thread: not parsed into a tree for nothing.
        if memchr::memmem::find(body, b"\"thread\"").is_none() {
            return Ok(Thread::None);
        }
        let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(body) else {
            return Ok(Thread::None);
        };
        let Some(thread) = obj.remove("thread") else {
            return Ok(Thread::None);
        };
        if thread.is_null() {
            return Ok(Thread::None);
        }
        if !has_beta(headers) {
            return Err(invalid("thread: Extra inputs are not permitted", None));
        }
        match thread.get("type").and_then(Value::as_str) {
            Some("create") => Ok(Thread::Create),
            Some("continue") => {
                let Some(id) = thread.get("previous_message_id").and_then(Value::as_str) else {
                    return Err(invalid("thread.previous_message_id: Field required", None));
                };
                for field in ["system", "tools"] {
                    if obj.contains_key(field) {
                        return Err(invalid(
                            &format!(
                                "{field}: a `continue` takes `system` and `tools` from the thread; \
                                 do not send them"
                            ),
                            None,
                        ));
                    }
                }
                let held = self.spend(id)?;
                let mut messages = held.messages.clone();
                if let Some(Value::Array(own)) = obj.remove("messages") {
                    messages.extend(own);
                }
                obj.insert("messages".into(), Value::Array(messages));
                for (field, value) in [("system", &held.system), ("tools", &held.tools)] {
                    if let Some(v) = value {
                        obj.insert(field.into(), v.clone());
                    }
                }
                let whole = serde_json::to_vec(&Value::Object(obj)).unwrap_or_default();
                Ok(Thread::Continue {
                    whole: Bytes::from(whole),
                })
            }
            _ => Err(invalid(
                "thread.type: Input should be 'create' or 'continue'",
                None,
            )),
        }
    }

    /// The conversation held under `id`, which no other `continue` may name.
    fn spend(&self, id: &str) -> Result<Arc<Held>, Refusal> {
        let mut inner = crate::lock(&self.inner);
        if inner.continued.contains(id) {
            return Err(invalid(
                &format!("The message '{id}' was continued already: continue from its reply"),
                Some("thread_already_continued"),
            ));
        }
        let Some(held) = inner.by_id.get(id).cloned() else {
            let body = error(
                "not_found_error",
                &format!("No thread holds a message with id '{id}'."),
                Some("thread_not_found"),
            );
            return Err((StatusCode::NOT_FOUND, body));
        };
        inner.continued.insert(id.to_string());
        Ok(held)
    }

    /// Hold `request` (as the API read it: the whole conversation) with its
    /// reply, carried by `events` (a JSON body, or a stream's events), under
    /// the reply's id.
    pub(crate) fn hold<'a>(&self, request: &[u8], events: impl IntoIterator<Item = &'a [u8]>) {
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(request) else {
            return;
        };
        let Some((id, reply)) = reply_in(events) else {
            return;
        };
        let mut messages = match obj.get("messages") {
            Some(Value::Array(m)) => m.clone(),
            _ => Vec::new(),
        };
        messages.push(json!({"role": "assistant", "content": reply}));
        let held = Arc::new(Held {
            system: obj.get("system").cloned(),
            tools: obj.get("tools").cloned(),
            messages,
        });
        let mut inner = crate::lock(&self.inner);
        if inner.by_id.insert(id.clone(), held).is_none() {
            inner.order.push_back(id);
        }
        while inner.order.len() > CAPACITY {
            if let Some(old) = inner.order.pop_front() {
                inner.by_id.remove(&old);
                inner.continued.remove(&old);
            }
        }
    }
}

/// Whether `anthropic-beta` names [`BETA`] (comma-separated, any header line).
fn has_beta(headers: &HeaderMap) -> bool {
    headers
        .get_all("anthropic-beta")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|b| b.trim() == BETA)
}

fn invalid(message: &str, code: Option<&str>) -> Refusal {
    (
        StatusCode::BAD_REQUEST,
        error("invalid_request_error", message, code),
    )
}

/// Anthropic's error envelope, with `details.error_code` when given.
fn error(kind: &str, message: &str, code: Option<&str>) -> String {
    let mut inner = Map::new();
    inner.insert("type".into(), json!(kind));
    inner.insert("message".into(), json!(message));
    if let Some(code) = code {
        inner.insert("details".into(), json!({ "error_code": code }));
    }
    json!({"type": "error", "error": inner}).to_string()
}

/// The reply's id and content blocks: a message object's, or those a
/// stream's events build.
fn reply_in<'a>(events: impl IntoIterator<Item = &'a [u8]>) -> Option<(String, Vec<Value>)> {
    let mut id = None;
    let mut blocks: Vec<Value> = Vec::new();
    // Per streamed block: its `input` JSON text, pieced together.
    let mut inputs: Vec<String> = Vec::new();
    for event in events {
        let Ok(v) = serde_json::from_slice::<Value>(event) else {
            continue;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("message") => {
                id = v.get("id").and_then(Value::as_str).map(str::to_string);
                blocks = v
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                inputs.clear();
            }
            Some("message_start") => {
                id = v
                    .pointer("/message/id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            Some("content_block_start") => {
                if let Some(b) = v.get("content_block") {
                    blocks.push(b.clone());
                    inputs.push(String::new());
                }
            }
            Some("content_block_delta") => {
                let (Some(b), Some(d)) = (blocks.last_mut(), v.get("delta")) else {
                    continue;
                };
                match d.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let more = d.get("text").and_then(Value::as_str).unwrap_or("");
                        let text = b.get("text").and_then(Value::as_str).unwrap_or("");
                        b["text"] = json!(format!("{text}{more}"));
                    }
                    Some("input_json_delta") => {
                        let more = d.get("partial_json").and_then(Value::as_str);
                        if let (Some(more), Some(input)) = (more, inputs.last_mut()) {
                            input.push_str(more);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    // A streamed tool_use's `input` is the JSON its deltas spelled.
    for (b, input) in blocks.iter_mut().zip(&inputs) {
        if !input.is_empty()
            && let Ok(v) = serde_json::from_str::<Value>(input)
        {
            b["input"] = v;
        }
    }
    Some((id?, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beta() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            "anthropic-beta",
            format!("other-beta, {BETA}").parse().unwrap(),
        );
        h
    }

    fn reply(id: &str, content: Value) -> Vec<u8> {
        json!({"type": "message", "id": id, "role": "assistant", "content": content})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn a_continue_reads_the_held_conversation_then_its_own_messages() {
        let threads = Threads::default();
        let first = json!({"model": "m", "system": "S", "tools": [{"name": "t"}],
            "messages": [{"role": "user", "content": "go"}], "thread": {"type": "create"}})
        .to_string();
        assert!(matches!(
            threads.read(&beta(), first.as_bytes()),
            Ok(Thread::Create)
        ));
        let call = json!([{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]);
        threads.hold(first.as_bytes(), [reply("msg_1", call.clone()).as_slice()]);
        let next = json!({"model": "m", "thread": {"type": "continue", "previous_message_id": "msg_1"},
            "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}]})
        .to_string();
        let Ok(Thread::Continue { whole }) = threads.read(&beta(), next.as_bytes()) else {
            panic!("not a continue");
        };
        let whole: Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(whole["system"], "S");
        assert_eq!(whole["tools"], json!([{"name": "t"}]));
        assert!(whole.get("thread").is_none());
        let roles: Vec<&str> = whole["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(whole["messages"][1]["content"], call);
        // Spent: a second continue of the same reply is refused.
        let (status, body) = threads.read(&beta(), next.as_bytes()).unwrap_err();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.contains("thread_already_continued"), "{body}");
    }

    #[test]
    fn refusals_carry_their_codes() {
        let threads = Threads::default();
        let cont = |extra: &str| {
            format!(
                r#"{{"model":"m","messages":[],{extra}"thread":{{"type":"continue","previous_message_id":"msg_x"}}}}"#
            )
        };
        let (status, body) = threads.read(&beta(), cont("").as_bytes()).unwrap_err();
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(
            body.contains(r#""error_code":"thread_not_found""#),
            "{body}"
        );
        let (status, body) = threads
            .read(&beta(), cont(r#""tools":[],"#).as_bytes())
            .unwrap_err();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.contains("tools: a `continue`"), "{body}");
        let (status, body) = threads
            .read(&HeaderMap::new(), cont("").as_bytes())
            .unwrap_err();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.contains("Extra inputs are not permitted"), "{body}");
        assert!(matches!(
            threads.read(&HeaderMap::new(), br#"{"model":"m","messages":[]}"#),
            Ok(Thread::None)
        ));
    }

    #[test]
    fn a_streamed_reply_is_held_as_its_blocks() {
        let events = [
            r#"{"type":"message_start","message":{"id":"msg_s","content":[]}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi "}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"there"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"t","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let (id, blocks) = reply_in(events.iter().map(|e| e.as_bytes())).unwrap();
        assert_eq!(id, "msg_s");
        assert_eq!(
            Value::Array(blocks),
            json!([{"type": "text", "text": "Hi there"},
                   {"type": "tool_use", "id": "toolu_2", "name": "t", "input": {"a": 1}}])
        );
    }
}
