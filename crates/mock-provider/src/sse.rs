//! Server-sent events read back into their messages: what a WebSocket turn
//! sends, one event's `data` a message (the WebSocket mode, a stream's
//! error, a continuation's remembered reply).

use bytes::Bytes;

/// Each SSE event's `data` (its lines joined), as one message.
pub(crate) fn sse_to_messages(sse: &[u8]) -> Vec<Bytes> {
    let text = String::from_utf8_lossy(sse);
    let mut out = Vec::new();
    for event in text.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if !data.is_empty() && data != ["[DONE]"] {
            out.push(Bytes::from(data.join("\n")));
        }
    }
    out
}
