//! A client-side tool conversation in each dialect: builds the request
//! bodies turn by turn, reads the model's calls from JSON or streamed
//! replies (independently of the wire crate), and appends results.

use serde_json::{Value, json};

use super::support::{HttpClient, Reply, post};

/// Credentials the tests send: distinctive, so the secrets test can grep.
pub const ANTHROPIC_KEY: &str = "sk-ant-e2e-SECRET-a1b2c3d4";
pub const OPENAI_KEY: &str = "sk-proj-e2e-SECRET-e5f6a7b8";
pub const GEMINI_KEY: &str = "AIzaE2eSECRETc9d0e1f2";

/// A dialect, as the client sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Anthropic,
    Chat,
    Responses,
    Gemini,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Anthropic, Kind::Chat, Kind::Responses, Kind::Gemini];

    /// The provider label the gateway uses.
    pub fn provider(self) -> &'static str {
        match self {
            Kind::Anthropic => "anthropic",
            Kind::Chat | Kind::Responses => "openai",
            Kind::Gemini => "gemini",
        }
    }

    /// The wire layer's dialect.
    pub fn wire(self) -> toolwarden_wire::Dialect {
        match self {
            Kind::Anthropic => toolwarden_wire::Dialect::Anthropic,
            Kind::Chat => toolwarden_wire::Dialect::OpenAiChat,
            Kind::Responses => toolwarden_wire::Dialect::OpenAiResponses,
            Kind::Gemini => toolwarden_wire::Dialect::Gemini,
        }
    }

    /// The dialect name the gateway uses.
    pub fn dialect(self) -> &'static str {
        self.wire().as_str()
    }

    /// The path and query of a model request.
    pub fn path(self, stream: bool) -> &'static str {
        match (self, stream) {
            (Kind::Anthropic, _) => "/v1/messages",
            (Kind::Chat, _) => "/v1/chat/completions",
            (Kind::Responses, _) => "/v1/responses",
            (Kind::Gemini, false) => "/v1beta/models/gemini-2.0-flash:generateContent",
            (Kind::Gemini, true) => "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
        }
    }

    /// Authentication (and version) headers.
    pub fn auth(self) -> Vec<(&'static str, String)> {
        match self {
            Kind::Anthropic => vec![
                ("x-api-key", ANTHROPIC_KEY.to_string()),
                ("anthropic-version", "2023-06-01".to_string()),
            ],
            Kind::Chat | Kind::Responses => {
                vec![("authorization", format!("Bearer {OPENAI_KEY}"))]
            }
            Kind::Gemini => vec![("x-goog-api-key", GEMINI_KEY.to_string())],
        }
    }

    /// Whether a failed result carries an explicit flag in this dialect
    /// (Anthropic `is_error`, Gemini `error`); else the content detector
    /// decides.
    pub fn failure_basis(self) -> &'static str {
        match self {
            Kind::Anthropic | Kind::Gemini => "explicit",
            Kind::Chat | Kind::Responses => "heuristic",
        }
    }
}

/// One tool call read from a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call id (Gemini: none on the wire).
    pub id: Option<String>,
    pub name: String,
    /// The arguments as a JSON value.
    pub args: Value,
}

/// A conversation in one dialect, streaming or not.
#[derive(Debug, Clone)]
pub struct Convo {
    pub kind: Kind,
    pub stream: bool,
    pub body: Value,
    /// Sent as `x-session-id` when set.
    pub session: Option<String>,
    /// How long the "tools" run: slept between the turn with calls and the
    /// request carrying their results.
    pub exec_time: std::time::Duration,
    /// More headers sent with every request.
    pub extra_headers: Vec<(&'static str, String)>,
}

const SYSTEM: &str = "You are a travel agent. Use the tools.";

impl Convo {
    /// A conversation offering the tools `lookup` and `book`, with a first
    /// user message.
    pub fn new(kind: Kind, stream: bool, session: Option<&str>) -> Convo {
        let params = json!({"type":"object","properties":{"query":{"type":"string"}}});
        let first = "Find me a flight to Lisbon and book it.";
        let mut body = match kind {
            Kind::Anthropic => json!({
                "model": "claude-sonnet-4-20250514", "max_tokens": 1024, "system": SYSTEM,
                "tools": [
                    {"name": "lookup", "description": "Find flights", "input_schema": params},
                    {"name": "book", "description": "Book a flight", "input_schema": params}],
                "messages": [{"role": "user", "content": first}]}),
            Kind::Chat => json!({
                "model": "gpt-4o",
                "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": first}],
                "tools": [
                    {"type": "function", "function": {"name": "lookup", "parameters": params}},
                    {"type": "function", "function": {"name": "book", "parameters": params}}]}),
            Kind::Responses => json!({
                "model": "gpt-4.1", "instructions": SYSTEM, "store": false,
                "input": [{"role": "user", "content": first}],
                "tools": [
                    {"type": "function", "name": "lookup", "parameters": params},
                    {"type": "function", "name": "book", "parameters": params}]}),
            Kind::Gemini => json!({
                "systemInstruction": {"parts": [{"text": SYSTEM}]},
                "contents": [{"role": "user", "parts": [{"text": first}]}],
                "tools": [{"functionDeclarations": [
                    {"name": "lookup", "parameters": params},
                    {"name": "book", "parameters": params}]}]}),
        };
        if stream && kind != Kind::Gemini {
            body["stream"] = json!(true);
        }
        Convo {
            kind,
            stream,
            body,
            session: session.map(str::to_string),
            exec_time: std::time::Duration::ZERO,
            extra_headers: Vec::new(),
        }
    }

    /// The full URL of the next request against `base`.
    pub fn url(&self, base: &str) -> String {
        format!("{base}{}", self.kind.path(self.stream))
    }

    /// Authentication headers plus `x-session-id`.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = self.kind.auth();
        h.push(("content-type", "application/json".to_string()));
        if let Some(s) = &self.session {
            h.push(("x-session-id", s.clone()));
        }
        h.extend(self.extra_headers.iter().cloned());
        h
    }

    fn list(&mut self) -> &mut Vec<Value> {
        let key = match self.kind {
            Kind::Anthropic | Kind::Chat => "messages",
            Kind::Responses => "input",
            Kind::Gemini => "contents",
        };
        self.body[key].as_array_mut().expect("conversation list")
    }

    /// Append a user message.
    pub fn user(&mut self, text: &str) {
        let m = match self.kind {
            Kind::Anthropic | Kind::Chat | Kind::Responses => {
                json!({"role": "user", "content": text})
            }
            Kind::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
        };
        self.list().push(m);
    }

    /// Append the model's text answer.
    pub fn assistant_text(&mut self, text: &str) {
        let m = match self.kind {
            Kind::Anthropic => {
                json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
            }
            Kind::Chat => json!({"role": "assistant", "content": text}),
            Kind::Responses => json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": text}]}),
            Kind::Gemini => json!({"role": "model", "parts": [{"text": text}]}),
        };
        self.list().push(m);
    }

    /// Append the model's turn that made `calls`.
    pub fn assistant_calls(&mut self, calls: &[Call]) {
        let id = |c: &Call| c.id.clone().unwrap_or_default();
        match self.kind {
            Kind::Anthropic => {
                let blocks: Vec<Value> = calls
                    .iter()
                    .map(|c| json!({"type": "tool_use", "id": id(c), "name": c.name, "input": c.args}))
                    .collect();
                self.list()
                    .push(json!({"role": "assistant", "content": blocks}));
            }
            Kind::Chat => {
                let tcs: Vec<Value> = calls
                    .iter()
                    .map(|c| {
                        json!({"id": id(c), "type": "function",
                        "function": {"name": c.name, "arguments": c.args.to_string()}})
                    })
                    .collect();
                self.list()
                    .push(json!({"role": "assistant", "content": null, "tool_calls": tcs}));
            }
            Kind::Responses => {
                for c in calls {
                    let item = json!({"type": "function_call", "call_id": id(c), "name": c.name,
                        "arguments": c.args.to_string()});
                    self.list().push(item);
                }
            }
            Kind::Gemini => {
                let parts: Vec<Value> = calls
                    .iter()
                    .map(|c| json!({"functionCall": {"name": c.name, "args": c.args}}))
                    .collect();
                self.list().push(json!({"role": "model", "parts": parts}));
            }
        }
    }

    /// Append one result per call: `(failed, text)`.
    pub fn results(&mut self, calls: &[Call], outcomes: &[(bool, &str)]) {
        assert_eq!(calls.len(), outcomes.len(), "one outcome per call");
        let pairs = calls.iter().zip(outcomes);
        match self.kind {
            Kind::Anthropic => {
                let blocks: Vec<Value> = pairs
                    .map(|(c, (failed, text))| {
                        let mut b =
                            json!({"type": "tool_result", "tool_use_id": c.id, "content": text});
                        if *failed {
                            b["is_error"] = json!(true);
                        }
                        b
                    })
                    .collect();
                self.list().push(json!({"role": "user", "content": blocks}));
            }
            Kind::Chat => {
                for (c, (_, text)) in pairs {
                    self.list()
                        .push(json!({"role": "tool", "tool_call_id": c.id, "content": text}));
                }
            }
            Kind::Responses => {
                for (c, (_, text)) in pairs {
                    self.list().push(
                        json!({"type": "function_call_output", "call_id": c.id, "output": text}),
                    );
                }
            }
            Kind::Gemini => {
                let parts: Vec<Value> = pairs
                    .map(|(c, (failed, text))| {
                        let response = if *failed {
                            json!({"error": text})
                        } else {
                            json!({"result": text})
                        };
                        json!({"functionResponse": {"name": c.name, "response": response}})
                    })
                    .collect();
                self.list().push(json!({"role": "user", "parts": parts}));
            }
        }
    }

    /// Send the conversation as it stands.
    pub async fn send(&self, c: &HttpClient, base: &str) -> Reply {
        let h = self.headers();
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
        post(c, self.url(base), &h, &self.body).await
    }

    /// The tool calls in a reply to this conversation.
    pub fn calls(&self, reply: &Reply) -> Vec<Call> {
        reply_calls(self.kind, self.stream, &reply.body)
    }

    /// One tool round: send (the model calls tools), append the calls and
    /// `outcomes`, send again (the model answers with text), append the
    /// text. Returns the calls.
    pub async fn tool_round(
        &mut self,
        c: &HttpClient,
        base: &str,
        outcomes: &[(bool, &str)],
    ) -> Vec<Call> {
        let r = self.send(c, base).await;
        assert_eq!(
            r.status,
            200,
            "{:?} turn with calls: {}",
            self.kind,
            r.text()
        );
        let calls = self.calls(&r);
        assert_eq!(
            calls.len(),
            outcomes.len(),
            "{:?}: calls in {}",
            self.kind,
            r.text()
        );
        self.assistant_calls(&calls);
        self.results(&calls, outcomes);
        if !self.exec_time.is_zero() {
            tokio::time::sleep(self.exec_time).await;
        }
        let r = self.send(c, base).await;
        assert_eq!(
            r.status,
            200,
            "{:?} turn with results: {}",
            self.kind,
            r.text()
        );
        assert!(
            self.calls(&r).is_empty(),
            "the model answers results with text: {}",
            r.text()
        );
        self.assistant_text("Done.");
        calls
    }
}

/// The `id` of an Anthropic reply (`message_start`'s message when
/// streamed): what a message thread's `continue` names.
pub fn message_id(stream: bool, body: &[u8]) -> String {
    let v = if stream {
        stream_values(body)
            .into_iter()
            .find(|e| e["type"] == "message_start")
            .map(|e| e["message"].clone())
            .unwrap_or(Value::Null)
    } else {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    };
    v["id"].as_str().expect("a message id").to_string()
}

/// The response id of a Responses reply, JSON or SSE.
pub fn response_id(stream: bool, r: &Reply) -> String {
    let v = if stream {
        stream_values(&r.body)
            .into_iter()
            .find(|e| e["type"] == "response.completed")
            .map(|e| e["response"].clone())
            .unwrap_or(Value::Null)
    } else {
        r.json()
    };
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no response id in {}", r.text()))
        .to_string()
}

/// The JSON payloads of an SSE body (`data:` lines, `[DONE]` skipped), or
/// the elements of a streamed JSON array.
pub fn stream_values(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    if text.trim_start().starts_with('[') {
        return serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default();
    }
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            let data = data.join("\n");
            (data != "[DONE]")
                .then(|| serde_json::from_str(&data).ok())
                .flatten()
        })
        .collect()
}

fn parse_args(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("arguments {s:?}: {e}"))
}

/// The tool calls of a reply body in `kind`.
pub fn reply_calls(kind: Kind, stream: bool, body: &[u8]) -> Vec<Call> {
    let str_of = |v: &Value| v.as_str().map(str::to_string);
    if !stream {
        let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        return match kind {
            Kind::Anthropic => v["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| Call {
                    id: str_of(&b["id"]),
                    name: b["name"].as_str().unwrap_or_default().into(),
                    args: b["input"].clone(),
                })
                .collect(),
            Kind::Chat => v["choices"][0]["message"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| Call {
                    id: str_of(&t["id"]),
                    name: t["function"]["name"].as_str().unwrap_or_default().into(),
                    args: parse_args(t["function"]["arguments"].as_str().unwrap_or("{}")),
                })
                .collect(),
            Kind::Responses => responses_calls(&v["output"]),
            Kind::Gemini => gemini_calls(&[v]),
        };
    }
    let events = stream_values(body);
    match kind {
        Kind::Anthropic => {
            let mut calls: Vec<(u64, Call, String)> = Vec::new();
            for e in &events {
                if e["type"] == "content_block_start" && e["content_block"]["type"] == "tool_use" {
                    let b = &e["content_block"];
                    let call = Call {
                        id: str_of(&b["id"]),
                        name: b["name"].as_str().unwrap_or_default().into(),
                        args: Value::Null,
                    };
                    calls.push((e["index"].as_u64().unwrap_or(0), call, String::new()));
                }
                if e["type"] == "content_block_delta" && e["delta"]["type"] == "input_json_delta" {
                    let i = e["index"].as_u64();
                    if let Some(c) = calls.iter_mut().find(|c| Some(c.0) == i) {
                        c.2.push_str(e["delta"]["partial_json"].as_str().unwrap_or_default());
                    }
                }
            }
            calls
                .into_iter()
                .map(|(_, mut c, json)| {
                    c.args = if json.is_empty() {
                        json!({})
                    } else {
                        parse_args(&json)
                    };
                    c
                })
                .collect()
        }
        Kind::Chat => {
            let mut calls: Vec<(Option<String>, String, String)> = Vec::new();
            for e in &events {
                for t in e["choices"][0]["delta"]["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let i = t["index"].as_u64().unwrap_or(0) as usize;
                    while calls.len() <= i {
                        calls.push((None, String::new(), String::new()));
                    }
                    if let Some(id) = t["id"].as_str() {
                        calls[i].0 = Some(id.into());
                    }
                    if let Some(n) = t["function"]["name"].as_str() {
                        calls[i].1.push_str(n);
                    }
                    calls[i]
                        .2
                        .push_str(t["function"]["arguments"].as_str().unwrap_or_default());
                }
            }
            calls
                .into_iter()
                .map(|(id, name, a)| Call {
                    id,
                    name,
                    args: parse_args(&a),
                })
                .collect()
        }
        Kind::Responses => events
            .iter()
            .find(|e| e["type"] == "response.completed")
            .map(|e| responses_calls(&e["response"]["output"]))
            .unwrap_or_default(),
        Kind::Gemini => gemini_calls(&events),
    }
}

fn responses_calls(output: &Value) -> Vec<Call> {
    output
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call")
        .map(|i| Call {
            id: i["call_id"].as_str().map(str::to_string),
            name: i["name"].as_str().unwrap_or_default().into(),
            args: parse_args(i["arguments"].as_str().unwrap_or("{}")),
        })
        .collect()
}

fn gemini_calls(chunks: &[Value]) -> Vec<Call> {
    chunks
        .iter()
        .flat_map(|c| {
            c["candidates"][0]["content"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|p| {
            let f = p.get("functionCall")?;
            Some(Call {
                id: None,
                name: f["name"].as_str().unwrap_or_default().into(),
                args: f["args"].clone(),
            })
        })
        .collect()
}
