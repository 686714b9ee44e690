//! Google Gemini `generateContent` / `streamGenerateContent`.
//!
//! Calls are `functionCall` {name, args, id?} parts of `model` turns;
//! results are `functionResponse` {name, response, id?} parts of the next
//! turn. Ids are optional, so calls and responses pair by id when both have
//! one, else by order and name within the two adjacent turns; a call
//! without an id is given `<name>#<n>` (see `turns`). A response whose
//! `response` object has an `error` key is an explicit failure. The
//! `response` object is kept raw by the request view (checked to be an
//! object) and read when asked for (`view::read_result`). The model
//! is named in the URL, not the body.
//!
//! Streams come as SSE (`?alt=sse`) or as a streamed JSON array (see
//! `array`); streamed calls may carry `partialArgs` (see `partial`).

pub(crate) mod array;
mod call;
mod model;
mod partial;
mod repair;
mod response;
mod scan;
mod stream;
mod turns;
mod validate;
mod view;

#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod tests;

pub use stream::StreamState;

use toolwarden_core::ToolOutcome;

pub(crate) use repair::repair;
pub(crate) use response::response_view;
pub(crate) use validate::validate;
pub(crate) use view::{inspect, read_result, request_view};

/// One `user` content with a `functionResponse` part per outcome:
/// `{"output": …}` on success, `{"error": {"kind", "message"}}` on failure.
/// The `id` is sent back only when the call had a real one (not
/// `<name>#<n>`).
pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let parts: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let response = match &o.error {
                Some(e) => serde_json::json!({
                    "error": { "kind": e.kind.as_str(), "message": e.model_message }
                }),
                None => serde_json::json!({
                    "output": o.output.clone().unwrap_or(serde_json::Value::String(String::new()))
                }),
            };
            let mut call = serde_json::Map::new();
            call.insert("name".into(), o.tool.clone().into());
            if !o.call_id.is_empty() && !turns::is_synthetic(&o.call_id, &o.tool) {
                call.insert("id".into(), o.call_id.clone().into());
            }
            call.insert("response".into(), response);
            serde_json::json!({ "functionResponse": call })
        })
        .collect();
    vec![serde_json::json!({ "role": "user", "parts": parts })]
}
