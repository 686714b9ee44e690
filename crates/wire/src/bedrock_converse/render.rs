//! Tool outcomes rendered as Bedrock Converse messages (see
//! [`crate::render_results`]).

use serde_json::json;
use toolwarden_core::ToolOutcome;

pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let blocks: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            json!({"toolResult": {
                "toolUseId": o.call_id,
                "content": [{"text": o.model_text()}],
                "status": if o.is_failure() { "error" } else { "success" },
            }})
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}
