//! Tool outcomes rendered as Chat Completions messages (see
//! [`crate::render_results`]).

use serde_json::json;
use toolwarden_core::ToolOutcome;

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
