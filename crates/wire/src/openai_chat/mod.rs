//! OpenAI Chat Completions (`/v1/chat/completions`): `tool_calls` on
//! assistant messages (`function` and `custom` tools), `role: tool`
//! results with string or text-part content, and the legacy
//! `function_call` / `role: function` pair.
//!
//! - request view (`view`): typed borrowed parsing, result contents kept
//!   raw until read; Chat has no error flag, so verdicts come from the
//!   content detector;
//! - `validate` / `repair`: OpenAI's pairing rules, byte-exact splicing;
//! - [`StreamState`]: index-based `tool_calls` deltas, parallel calls;
//! - `render_results`: one `tool` message per outcome, failures framed by
//!   [`ToolOutcome::flagless_text`].

mod layout;
mod model;
mod repair;
mod response;
mod stream;
mod validate;
mod view;

use serde_json::json;
use toolwarden_core::ToolOutcome;

pub use stream::StreamState;

pub(crate) use repair::repair;
pub(crate) use response::response_view;
pub(crate) use validate::validate;
pub(crate) use view::{inspect, read_result, request_view};

pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    outcomes
        .iter()
        .map(|o| {
            // A legacy call (synthetic id `function:<name>#<n>`) is
            // answered by a `function` message.
            if o.call_id.starts_with("function:") {
                json!({"role": "function", "name": o.tool, "content": o.flagless_text()})
            } else {
                json!({"role": "tool", "tool_call_id": o.call_id, "content": o.flagless_text()})
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
