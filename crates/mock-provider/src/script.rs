//! What tests tell the mock to do: scripted responses and faults, and what
//! it records.

use std::time::Duration;

use bytes::Bytes;

use crate::StreamError;

/// A response the mock sends instead of its default reply, taken from the
/// queue ([`crate::MockProvider::push_response`]) in order, one per
/// authenticated and valid model request.
#[derive(Debug, Clone)]
pub enum Scripted {
    /// `200` with this JSON body, byte for byte (`content-type:
    /// application/json`).
    Json(Bytes),
    /// `200 text/event-stream`: these chunks, each written separately, with
    /// `delay` before each chunk after the first. Replays a recording
    /// byte-exact with controlled chunking.
    Sse(Vec<Bytes>, Duration),
    /// Anything else: status, headers and chunks.
    Raw(RawResponse),
}

/// A fully specified scripted response.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// HTTP status.
    pub status: u16,
    /// Response headers (e.g. `content-type`).
    pub headers: Vec<(String, String)>,
    /// Body chunks, each written separately.
    pub chunks: Vec<Bytes>,
    /// Pause before each chunk after the first.
    pub delay: Duration,
}

impl Scripted {
    /// An SSE recording split into chunks of `chunk_size` bytes (at least
    /// 1), replayed with `delay` between chunks.
    pub fn sse_split(recording: &[u8], chunk_size: usize, delay: Duration) -> Scripted {
        let chunks = recording
            .chunks(chunk_size.max(1))
            .map(Bytes::copy_from_slice)
            .collect();
        Scripted::Sse(chunks, delay)
    }

    /// A corpus `.chunks.txt` file (one JSON event per line) as the SSE
    /// bytes a provider sends, one event per chunk: `data: <json>\n\n`,
    /// preceded by `event: <type>\n` when `event_lines` (Anthropic and the
    /// Responses API name their events; Chat and Gemini do not).
    pub fn sse_from_json_lines(lines: &str, event_lines: bool) -> Scripted {
        Scripted::Sse(json_lines_to_sse(lines, event_lines), Duration::ZERO)
    }
}

/// See [`Scripted::sse_from_json_lines`]; lines that are blank are skipped.
pub fn json_lines_to_sse(lines: &str, event_lines: bool) -> Vec<Bytes> {
    lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            let kind = event_lines
                .then(|| {
                    serde_json::from_str::<serde_json::Value>(line)
                        .ok()?
                        .get("type")?
                        .as_str()
                        .map(str::to_string)
                })
                .flatten();
            match kind {
                Some(kind) => Bytes::from(format!("event: {kind}\ndata: {line}\n\n")),
                None => Bytes::from(format!("data: {line}\n\n")),
            }
        })
        .collect()
}

/// A misbehaviour of the upstream, applied to every request until changed
/// ([`crate::MockProvider::set_fault`]); `Fault::None` is normal service.
#[derive(Debug, Clone, Default)]
pub enum Fault {
    /// Normal service.
    #[default]
    None,
    /// Reply with this status and JSON body instead (e.g. 500, 529, 503),
    /// with the headers the API sends with it: the request id, and on a 429
    /// `retry-after` and its rate-limit headers; on Bedrock routes
    /// `x-amzn-errortype` (e.g. 429 `ThrottlingException`).
    Status(u16, Bytes),
    /// Reply with this status, exactly these headers (instead of the API's
    /// for the status; the request id is still added unless given, and a
    /// `content-type` given replaces `application/json`) and this body: a
    /// 529 with `x-should-retry: true`, a 503 with `retry-after-ms`.
    StatusWithHeaders(u16, Vec<(String, String)>, Bytes),
    /// Wait this long before sending the response headers.
    Delay(Duration),
    /// Send this many body chunks (stream events; a JSON body counts as
    /// two halves), then abort the connection.
    ResetMidStream(usize),
    /// A streaming reply whose SSE is broken (truncated JSON in a `data:`
    /// line, a line without a field name, a bad `[DONE`); a non-streaming
    /// reply gets a truncated JSON body.
    MalformedSse,
    /// Accept the request and never answer.
    Hang,
    /// Send this many body chunks, then keep the response open without
    /// sending more until the client goes away (a model "thinking" for a
    /// long time; the benchmark holds its open streams this way).
    StallAfter(usize),
    /// WebSocket mode only (HTTP is served normally): send this many
    /// events of a turn, then close the socket with this code.
    CloseMidStream(usize, u16),
    /// A streamed reply sends this many events (Bedrock: frames; Gemini's
    /// array: elements), then the dialect's own error event, and ends
    /// normally, as the APIs report a failure after a 200 (see
    /// [`StreamError`]); a WebSocket turn likewise, the socket kept open.
    /// Replies that are not streamed are served normally.
    ErrorEventAfter(usize, StreamError),
}

/// A request as the mock received it.
#[derive(Debug, Clone)]
pub struct ReceivedRequest {
    /// The method.
    pub method: http::Method,
    /// The path, without the query.
    pub path: String,
    /// The query string, without `?`.
    pub query: Option<String>,
    /// The headers as received.
    pub headers: http::HeaderMap,
    /// The body bytes as received.
    pub body: Bytes,
}

impl ReceivedRequest {
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_become_named_events() {
        let sse = json_lines_to_sse("{\"type\":\"a\",\"x\":1}\n\n{\"type\":\"b\"}\n", true);
        assert_eq!(sse.len(), 2);
        assert_eq!(sse[0], "event: a\ndata: {\"type\":\"a\",\"x\":1}\n\n");
        let plain = json_lines_to_sse("{\"candidates\":[]}\n", false);
        assert_eq!(plain[0], "data: {\"candidates\":[]}\n\n");
    }

    #[test]
    fn sse_split_keeps_every_byte() {
        let Scripted::Sse(chunks, _) = Scripted::sse_split(b"abcdefg", 3, Duration::ZERO) else {
            panic!("not sse");
        };
        assert_eq!(chunks, ["abc", "def", "g"]);
        let Scripted::Sse(one, _) = Scripted::sse_split(b"ab", 0, Duration::ZERO) else {
            panic!("not sse");
        };
        assert_eq!(one.len(), 2);
    }
}
